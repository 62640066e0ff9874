"""Form tokens against cross-site request forgery.

Every form of the web pages carries a hidden field ``csrf`` (and HTMX requests an
``X-CSRF-Token`` header) that must equal the session's random form token
(:mod:`dprm.server.web.sessions`); another site can make a browser post a form but
cannot read the token. Before sign-in there is no session: the sign-in page sets a
short-lived random cookie ``dprm_signin`` and puts the same value in its form
(double submit), so that a foreign page cannot sign a browser in with the
attacker's token. The ``SameSite=Strict`` cookies are a second line. A page of the
same *site* but another origin (another port of the host, a sibling subdomain) can
set a cookie for this host, the sign-in cookie too, so every post of the pages is
also refused when the browser says it comes from another origin
(:func:`cross_origin`: the ``Sec-Fetch-Site`` header, which pages cannot set; a
reverse proxy keeps it right, since the browser sees one origin for the page and
the post).

Examples
--------
>>> matches("abc", "abc"), matches("abc", "abd"), matches("abc", None), matches("", "")
(True, False, False, False)
>>> cross_origin({"sec-fetch-site": "same-site"}), cross_origin({"sec-fetch-site": "same-origin"}), cross_origin({})
(True, False, False)
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping

__all__ = ["FIELD", "HEADER", "SIGNIN_COOKIE", "cross_origin", "matches", "new_token"]

#: The hidden form field.
FIELD = "csrf"

#: The header HTMX sends (``hx-headers`` on the page's body).
HEADER = "x-csrf-token"

#: The sign-in form's double-submit cookie.
SIGNIN_COOKIE = "dprm_signin"


def new_token() -> str:
    """A fresh random form token (256 bits)."""
    return secrets.token_urlsafe(32)


def matches(expected: str | None, given: str | None) -> bool:
    """Whether a form token given with a request is the expected one (constant time)."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode("utf-8", "replace"), given.encode("utf-8", "replace"))


def cross_origin(headers: Mapping[str, str]) -> bool:
    """Whether the browser says a request comes from a page of another origin (``Sec-Fetch-Site``).

    ``same-origin`` (the pages' own posts and HTMX requests) and ``none`` (typed by the
    user) are not; a request without the header (an older browser, a script) is judged
    by its form token alone.
    """
    return headers.get("sec-fetch-site", "same-origin").strip().lower() not in ("same-origin", "none")
