"""Form tokens against cross-site request forgery.

Every form of the web pages carries a hidden field ``csrf`` (and HTMX requests an
``X-CSRF-Token`` header) that must equal the session's random form token
(:mod:`dprm.server.web.sessions`); another site can make a browser post a form but
cannot read the token. Before sign-in there is no session: the sign-in page sets a
short-lived random cookie ``dprm_signin`` and puts the same value in its form
(double submit), so that a foreign page cannot sign a browser in with the
attacker's token. The ``SameSite=Strict`` cookies are a second line.

Examples
--------
>>> matches("abc", "abc"), matches("abc", "abd"), matches("abc", None), matches("", "")
(True, False, False, False)
"""

from __future__ import annotations

import hmac
import secrets

__all__ = ["FIELD", "HEADER", "SIGNIN_COOKIE", "matches", "new_token"]

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
