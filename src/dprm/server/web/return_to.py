"""The page to return to after sign-in: a deep link opened without a session is not lost.

A page's ``GET`` without a session answers ``303`` to ``/ui/signin?next=PAGE``
(:func:`signin_location`), where ``PAGE`` is the path and query the browser asked
for; the sign-in form carries it in a hidden field, and a sign-in that succeeds
answers ``303`` to it (:func:`after_signin`), else to the role's home.

Only a same-site path of the pages is ever a place to go (:func:`safe_next`): it
starts with ``/ui``, holds only URL characters (no space, control character,
backslash or ``#``), no empty, ``.`` or ``..`` segment, also percent-encoded, and no
scheme or host; ``//evil.example``, ``https://...``, ``/\\evil.example`` and
``/ui/../v1/...`` are refused and the sign-in leads home. The sign-in and sign-out
pages are no place to return to, and a page of the other role (``/ui/owner...`` for
an analyst, the analysts' pages for an owner) leads to the role's home instead of a
refusal.

Examples
--------
>>> safe_next("/ui/jobs/job_0a1b?sort=jaccard"), safe_next("//evil.example"), safe_next("/ui/../v1/budget")
('/ui/jobs/job_0a1b?sort=jaccard', None, None)
>>> signin_location("/ui/jobs/job_0a1b")
'/ui/signin?next=%2Fui%2Fjobs%2Fjob_0a1b'
>>> after_signin("analyst", "/ui/jobs/job_0a1b"), after_signin("owner", "/ui/jobs/job_0a1b")
('/ui/jobs/job_0a1b', '/ui/owner')
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote, urlsplit

__all__ = ["MAX_NEXT", "safe_next", "signin_location", "after_signin", "home_of", "asked_page"]

#: The longest place to return to (a longer one leads home).
MAX_NEXT = 2000

# /ui, then segments of URL characters (RFC 3986 pchar, percent-encoded octets), an optional query
_PATH = re.compile(r"/ui(?:/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*/?(?:\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?")
_NOT_PLACES = ("/ui/signin", "/ui/signout")


def safe_next(value: Any) -> str | None:
    """``value`` if it is a same-site path of the pages to return to, else None (the module's rule)."""
    if not isinstance(value, str) or not value or len(value) > MAX_NEXT or not _PATH.fullmatch(value):
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path)
    if "\\" in path or "//" in path or any(segment in (".", "..") for segment in path.split("/")):
        return None
    if path.rstrip("/") in _NOT_PLACES:
        return None
    return value


def home_of(role: str) -> str:
    """Where a role's sign-in leads by default."""
    return "/ui/datasets" if role == "analyst" else "/ui/owner"


def _owners_page(path: str) -> bool:
    return path == "/ui/owner" or path.startswith(("/ui/owner/", "/ui/owner?"))


def after_signin(role: str, value: Any) -> str:
    """Where a successful sign-in of ``role`` leads: ``value`` when it is a safe place
    (:func:`safe_next`) of that role's pages, else the role's home."""
    place = safe_next(value)
    if place is None or _owners_page(place) != (role == "owner"):
        return home_of(role)
    return place


def signin_location(asked: str | None) -> str:
    """The sign-in page's address, carrying ``asked`` (a path and query) when it is a safe place."""
    place = safe_next(asked)
    return "/ui/signin" if place is None else "/ui/signin?next=" + quote(place, safe="")


def asked_page(url: Any, headers: Any, htmx: bool) -> str | None:
    """The path and query of the page the browser shows: the request's own, or for HTMX
    (a part of a page) the page's address in ``HX-Current-URL``."""
    if htmx:
        current = headers.get("hx-current-url")
        if not current:
            return None
        parts = urlsplit(current)
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return url.path + (f"?{url.query}" if url.query else "")
