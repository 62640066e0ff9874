"""Form tokens against cross-site request forgery.

Every form of the web pages carries a hidden field ``csrf`` (and HTMX requests an
``X-CSRF-Token`` header) that must equal the session's random form token
(:mod:`dprm.server.web.sessions`); another site can make a browser post a form but
cannot read the token. Before sign-in there is no session: the sign-in page sets a
short-lived random cookie ``dprm_signin`` and puts the same value in its form
(double submit), so that a foreign page cannot sign a browser in with the
attacker's token. The token carries the time it was drawn (:func:`signin_token`);
a sign-in page reuses the browser's token while it has an hour left, so that two
sign-in pages open at once (tabs that each found their session ended) post one
token, and each of them signs in; the token is refused once it is
:data:`SIGNIN_LIFETIME` old. The ``SameSite=Strict`` cookies are a second line. A page of the
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
>>> token, seconds = signin_token(None, now=1000.0)
>>> signin_token(token, now=1060.0) == (token, SIGNIN_LIFETIME - 60), signin_valid(token, now=1060.0)
(True, True)
>>> later = 1000.0 + SIGNIN_LIFETIME
>>> signin_token(token, now=later - 60)[0] == token, signin_valid(token, now=later)
(False, False)
>>> cross_origin({"sec-fetch-site": "same-site"}), cross_origin({"sec-fetch-site": "same-origin"}), cross_origin({})
(True, False, False)
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Mapping

__all__ = ["FIELD", "HEADER", "SIGNIN_COOKIE", "SIGNIN_LIFETIME", "SIGNIN_REUSE_LEFT", "cross_origin", "matches",
           "new_token", "signin_token", "signin_valid"]

#: The hidden form field.
FIELD = "csrf"

#: The header HTMX sends (``hx-headers`` on the page's body).
HEADER = "x-csrf-token"

#: The sign-in form's double-submit cookie.
SIGNIN_COOKIE = "dprm_signin"


#: Seconds a sign-in form token lives (its cookie's and the server's limit).
SIGNIN_LIFETIME = 7200

#: A sign-in page reuses the browser's token while at least this many seconds are left of it
#: (so every form a page shows can be sent for an hour at least), else it draws a new one.
SIGNIN_REUSE_LEFT = 3600

# the time a sign-in token was drawn (whole seconds, hexadecimal), a dot, 256 random bits
_SIGNIN_TOKEN = re.compile(r"([0-9a-f]{1,12})\.[A-Za-z0-9_-]{43}")


def new_token() -> str:
    """A fresh random form token (256 bits)."""
    return secrets.token_urlsafe(32)


def _drawn_at(token: str | None) -> int | None:
    """When a sign-in token was drawn (seconds), or None when it is not one the server draws."""
    found = _SIGNIN_TOKEN.fullmatch(token) if isinstance(token, str) else None
    return int(found.group(1), 16) if found else None


def signin_valid(token: str | None, now: float) -> bool:
    """Whether ``token`` is a sign-in token drawn by the server less than :data:`SIGNIN_LIFETIME` ago."""
    drawn = _drawn_at(token)
    return drawn is not None and drawn - 60 <= now < drawn + SIGNIN_LIFETIME


def signin_token(existing: str | None, now: float) -> tuple[str, int]:
    """The sign-in form token of a page shown at ``now`` and the seconds its cookie lives.

    The browser's own token (``existing``, its cookie) while it has :data:`SIGNIN_REUSE_LEFT`
    seconds left: a second sign-in page (another tab) posts the same token as the first,
    and each of them signs in (a new token per page refused every page but the newest).
    Else a new one: the time ``now`` and 256 random bits.
    """
    drawn = _drawn_at(existing)
    if existing is not None and drawn is not None and signin_valid(existing, now) \
            and now + SIGNIN_REUSE_LEFT <= drawn + SIGNIN_LIFETIME:
        return existing, int(drawn + SIGNIN_LIFETIME - now)
    return f"{int(now):x}.{new_token()}", SIGNIN_LIFETIME


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
