"""The pages under ``/ui``: sign-in, the analyst's side, the data owner's side.

==========================================  ==========================================
``GET  /ui/signin``, ``POST /ui/signin``    sign in with a token (analyst or owner)
``POST /ui/signout``                        end the session
``GET  /ui/datasets``                       analyst: datasets with schema and budget
``GET  /ui/datasets/{name}``                analyst: job form, statistics form
``POST /ui/datasets/{name}/cost``           analyst: live dry-run cost (HTMX partial)
``POST /ui/datasets/{name}/jobs``           analyst: dry run or submit a job
``POST /ui/datasets/{name}/statistics``     analyst: redescription-statistics primitive
``GET  /ui/jobs``                           analyst: jobs with live progress
``GET  /ui/jobs/{id}``                      analyst: a job, its result and ledger
``GET  /ui/jobs/{id}/result.json``          analyst: the spec's JSON document
``GET  /ui/jobs/{id}/queries.txt``          analyst: the clired queries file
``POST /ui/jobs/{id}/cancel``               analyst: cancel
``GET  /ui/owner``                          owner: datasets, analysts, budgets, jobs
``POST /ui/owner/...``                      owner: add dataset, analyst; disable,
                                            enable, rotate; grant budget
``GET  /ui/owner/audit``                    owner: the audit log with filters
``GET  /ui/owner/jobs``                     owner: every analyst's jobs
``GET  /favicon.ico``                       the pages' icon (:data:`ICON`), which a
                                            browser asks for by itself
``GET`` of a form's address                 ``303`` to the page that holds the form
                                            (:data:`form_addresses`)
==========================================  ==========================================

Every analyst action goes through the API's functions (:class:`dprm.server.api.service.Service`)
with the session's analyst: the same dataset grant (another analyst's job is 404),
the same checks and the same charge before any row is read. Every ``POST`` needs a
live session and its form token (:mod:`~dprm.server.web.csrf`); without a session
it is 401, with a wrong or missing form token 403, and nothing is done. Answers
carry a strict Content-Security-Policy (scripts and styles from this server only).

The pages are grouped by concept, one router a module: :mod:`~dprm.server.web.signin_pages`,
:mod:`~dprm.server.web.analyst_pages` (datasets), :mod:`~dprm.server.web.job_pages`,
:mod:`~dprm.server.web.owner_pages`; this module adds them, in that order, then the
icon of ``/favicon.ico``, the redirects of the forms' addresses, and last the page of any other
address under ``/ui``. Rendering
is :mod:`~dprm.server.web.pages`, the session checks :mod:`~dprm.server.web.access`.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dprm.server.web.access import session_of
from dprm.server.web.pages import SECURITY_HEADERS, STATIC, TEMPLATES, problem, redirect

__all__ = ["ICON", "mount", "build_router", "SECURITY_HEADERS", "STATIC", "TEMPLATES"]


def _icon(rgb: tuple[int, int, int], size: int = 16) -> bytes:
    """An ICO file of one ``size``-pixel square of colour ``rgb`` (a PNG inside, as ICO allows).

    Examples
    --------
    >>> icon = _icon((11, 92, 173))
    >>> icon[:6] == bytes([0, 0, 1, 0, 1, 0]), icon[23:26] == b"PNG", len(icon) < 200
    (True, True, True)
    """
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + bytes(rgb) * size for _ in range(size))  # filter 0, then the row's pixels
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    header = struct.pack("<HHH", 0, 1, 1)  # an icon file of one image
    entry = struct.pack("<BBBBHHII", size, size, 0, 0, 1, 24, len(png), 6 + 16)
    return header + entry + png


#: The icon of ``/favicon.ico``: a square of the pages' accent colour (``--accent`` of dprm.css).
ICON = _icon((0x0B, 0x5C, 0xAD))

#: The address a browser asks for by itself on a site's first page.
icon = APIRouter(include_in_schema=False)


@icon.get("/favicon.ico")
async def favicon(request: Request) -> Response:
    """The pages' icon. Every browser asks for it on its first page of a site; the 404 it got
    wrote an audit record ``request 404 not_found`` per visit, among the refusals. Cached a day."""
    request.state.action = "favicon"
    return Response(ICON, media_type="image/x-icon", headers={"Cache-Control": "public, max-age=86400"})

#: The addresses forms post to, asked with ``GET`` (or ``HEAD``): a page answering a post is shown
#: at its form's address (a refused job or grant, "Check the cost" or the statistics without
#: scripts, a refused cancel), so the address bar, a bookmark, a reload by Enter or the sign-in's
#: way back (``next``, from a part of such a page refreshing itself after its session ended) ask
#: for it with ``GET``. They get ``303 See Other`` to the page that holds the form (before: 404
#: "There is no page at this address"). Nothing is done, nothing is read: the place comes from the
#: address alone, and the page it leads to checks the session as any.
form_addresses = APIRouter(prefix="/ui", include_in_schema=False)


def _form_page(request: Request, place: str) -> Response:
    request.state.action = "ui-form-address"
    return redirect(place)


@form_addresses.get("/datasets/{name}/cost")
@form_addresses.get("/datasets/{name}/jobs")
@form_addresses.get("/datasets/{name}/statistics")
async def dataset_form_address(request: Request, name: str) -> Response:
    """A dataset's forms: to its page."""
    return _form_page(request, "/ui/datasets/" + quote(name, safe=""))


@form_addresses.get("/jobs/{job_id}/cancel")
async def cancel_address(request: Request, job_id: str) -> Response:
    """A job's cancel button: to the job's page."""
    return _form_page(request, "/ui/jobs/" + quote(job_id, safe=""))


@form_addresses.get("/owner/datasets")
@form_addresses.get("/owner/analysts")
@form_addresses.get("/owner/budgets")
@form_addresses.get("/owner/analysts/{name}/{change}")
async def owner_form_address(request: Request) -> Response:
    """The owner's forms: to the overview."""
    return _form_page(request, "/ui/owner")


@form_addresses.get("/signout")
async def signout_address(request: Request) -> Response:
    """The sign-out button: to the start page (a ``GET`` signs nobody out)."""
    return _form_page(request, "/ui/")


#: Any other address under /ui (added after every page's router).
fallback = APIRouter(prefix="/ui", include_in_schema=False)


@fallback.get("/{rest:path}", response_class=HTMLResponse)
async def not_found(request: Request, rest: str) -> Response:
    """Any other address under /ui: a page saying so (the API's answer is JSON)."""
    request.state.action = "ui-not-found"
    found = await session_of(request)
    return problem(request, 404, "No such page", "There is no page at this address.", found, "not_found")


def mount(app: Any) -> None:
    """Add the pages (``/ui``) and their static files (``/ui/static``) to the server's app."""
    from starlette.staticfiles import StaticFiles

    from dprm.server.web.resubmission import OneTimeAnswers
    from dprm.server.web.sessions import LIFETIME

    # the statistics form's first answers, in the database: every API process and a restart see them
    app.state.web_answers = OneTimeAnswers(app.state.db, lifetime=LIFETIME,
                                           stale_after=app.state.settings.primitive_timeout + 60.0)
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    app.include_router(build_router())


def build_router() -> APIRouter:
    """The router of every page (mounted by :func:`mount`), the catch-all last."""
    from dprm.server.web import analyst_pages, job_pages, owner_pages, signin_pages

    router = APIRouter()
    for pages in (signin_pages.router, analyst_pages.router, job_pages.router, owner_pages.router, icon,
                  form_addresses, fallback):
        router.include_router(pages)
    return router
