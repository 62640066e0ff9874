"""``/docs`` and ``/redoc``: the API's documentation pages, off unless ``dprm serve --docs``.

Swagger UI and ReDoc are JavaScript applications that no Python package of this
project ships; FastAPI loads them from a CDN at a floating version, on the same
origin as the web pages (``/ui``) whose session cookie they could then reach. So a
server serves neither page by default (``/openapi.json``, plain JSON, stays). With
``--docs`` (:func:`router`) the pages load the versions pinned below from
:data:`CDN` only, under a Content-Security-Policy that allows scripts from that exact
address and the one inline script by its hash, no framing
(``frame-ancestors 'none'``, ``X-Frame-Options: DENY``), no form posts, no other
connection than this server. Serve them on a development or staging server, not next
to the analysts' pages of a production one.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import APIRouter
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse

__all__ = ["CDN", "SWAGGER_UI", "REDOC", "docs_headers", "router"]

#: Where the pinned scripts come from (the CSP allows this origin's paths below only).
CDN = "https://cdn.jsdelivr.net/npm"
#: The pinned versions (a floating ``@5`` would run whatever is published next).
SWAGGER_UI = "swagger-ui-dist@5.17.14"
REDOC = "redoc@2.1.5"

_INLINE = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def docs_headers(page: str) -> dict[str, str]:
    """The security headers of a documentation page: its inline scripts allowed by hash only.

    Examples
    --------
    >>> headers = docs_headers("<script>go()</script>")
    >>> "frame-ancestors 'none'" in headers["Content-Security-Policy"], headers["X-Frame-Options"]
    (True, 'DENY')
    """
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
                      for s in _INLINE.findall(page))
    scripts = f"{CDN}/{SWAGGER_UI}/ {CDN}/{REDOC}/"
    return {
        "Content-Security-Policy": f"default-src 'none'; script-src {scripts} {hashes}; "
                                   f"style-src {CDN}/{SWAGGER_UI}/ 'unsafe-inline'; img-src 'self' data:; "
                                   "font-src 'self' data:; connect-src 'self'; worker-src blob:; "
                                   "frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


def router(openapi_url: str, title: str) -> APIRouter:
    """The two pages (added by :func:`dprm.server.app.create_app` when asked to serve docs)."""
    pages = APIRouter(include_in_schema=False)
    swagger = get_swagger_ui_html(
        openapi_url=openapi_url, title=f"{title} - Swagger UI",
        swagger_js_url=f"{CDN}/{SWAGGER_UI}/swagger-ui-bundle.js",
        swagger_css_url=f"{CDN}/{SWAGGER_UI}/swagger-ui.css", swagger_favicon_url="data:,").body.decode()
    redoc = get_redoc_html(openapi_url=openapi_url, title=f"{title} - ReDoc",
                           redoc_js_url=f"{CDN}/{REDOC}/bundles/redoc.standalone.js",
                           redoc_favicon_url="data:,", with_google_fonts=False).body.decode()

    @pages.get("/docs")
    async def swagger_ui() -> HTMLResponse:
        return HTMLResponse(swagger, headers=docs_headers(swagger))

    @pages.get("/redoc")
    async def redoc_page() -> HTMLResponse:
        return HTMLResponse(redoc, headers=docs_headers(redoc))

    return pages
