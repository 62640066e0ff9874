"""What an owner's form did, carried across its redirect in a sealed cookie (post/redirect/get).

Every owner's form that changes something (register a dataset, add an analyst, a
new token, disable, enable, grant a budget) answers ``303 See Other`` to
``/ui/owner`` when it succeeds, so the page the browser shows is the answer to a
``GET``: a reload or the back button asks for that page again and never repeats the
action. What the page then says (the notice, a new token, the form values kept)
travels in a cookie ``dprm_owner_notice`` that the next page of the owner's overview
reads and deletes at once, so a new token is shown once:

* **Sealed.** The cookie's value is encrypted and authenticated (HMAC-SHA256 as a
  pseudo-random function in counter mode, then HMAC-SHA256 over nonce and
  ciphertext: encrypt-then-MAC) with keys derived from the browser's session cookie,
  which the server never stores (the database keeps only its SHA-256). The server
  keeps nothing of it: no table, no memory, so every process of ``dprm serve
  --processes N`` and a restarted server read it alike. Without the session cookie
  it is random bytes; another session (another owner, the same owner signed in
  again) cannot open it, and a changed or forged one is refused.
* **Short-lived and once.** ``Path=/ui/owner``, ``HttpOnly``, ``SameSite=Strict``,
  ``Secure`` behind TLS, at most :data:`LIFETIME` seconds (also inside the sealed
  value); the first overview page that reads it deletes it. Never in a URL, never in
  the audit log (which keeps no header). Whoever holds copies of both cookies holds
  the owner's session already; replayed within the lifetime they would show it again.

Examples
--------
>>> session = "x" * 43
>>> value = seal(session, {"notice": "added analyst carol"}, now=1000.0)
>>> "carol" in value
False
>>> unseal(session, value, now=1010.0)
{'notice': 'added analyst carol'}
>>> unseal("y" * 43, value, now=1010.0) is None        # another session
True
>>> unseal(session, value, now=1000.0 + LIFETIME + 1) is None   # too old
True
>>> unseal(session, value[:-2] + ("AA" if value[-2:] != "AA" else "BB"), now=1010.0) is None   # changed
True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from fastapi import Request
from fastapi.responses import Response

__all__ = ["COOKIE", "LIFETIME", "PATH", "seal", "unseal", "put", "put_sealed", "take", "forget"]

#: The cookie's name.
COOKIE = "dprm_owner_notice"

#: Where the browser sends it: the owner's pages only.
PATH = "/ui/owner"

#: Seconds a notice waits for the page that shows it.
LIFETIME = 300.0

_VERSION = b"\x01"
_NONCE = 16
_TAG = 32
#: The longest cookie value written (browsers keep at least 4096 bytes a cookie, name included).
_MOST = 3800


def _keys(session_cookie: str) -> tuple[bytes, bytes]:
    """The encryption and authentication keys of a session's notices."""
    root = hmac.new(session_cookie.encode("utf-8", "replace"), b"dprm owner notice", hashlib.sha256).digest()
    return (hmac.new(root, b"encrypt", hashlib.sha256).digest(),
            hmac.new(root, b"authenticate", hashlib.sha256).digest())


def _stream(key: bytes, nonce: bytes, size: int) -> bytes:
    """``size`` bytes of HMAC-SHA256(key, nonce ‖ counter) blocks."""
    blocks = (hmac.new(key, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest() for i in range(-(-size // 32)))
    return b"".join(blocks)[:size]


def seal(session_cookie: str, notes: dict[str, Any], *, now: float | None = None) -> str:
    """``notes`` (JSON values) sealed for the session of ``session_cookie``, as cookie text."""
    encrypt, authenticate = _keys(session_cookie)
    plain = json.dumps({"at": time.time() if now is None else now, "notes": notes},
                       separators=(",", ":")).encode("utf-8")
    nonce = secrets.token_bytes(_NONCE)
    cipher = bytes(a ^ b for a, b in zip(plain, _stream(encrypt, nonce, len(plain))))
    tag = hmac.new(authenticate, _VERSION + nonce + cipher, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(_VERSION + nonce + cipher + tag).decode("ascii").rstrip("=")


def unseal(session_cookie: str, value: str, *, now: float | None = None) -> dict[str, Any] | None:
    """The notes sealed in ``value`` for this session, or None (another session's, changed, too old)."""
    if not session_cookie or not value or len(value) > 2 * _MOST:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (ValueError, TypeError):
        return None
    if len(raw) < 1 + _NONCE + _TAG or raw[:1] != _VERSION:
        return None
    nonce, cipher, tag = raw[1:1 + _NONCE], raw[1 + _NONCE:-_TAG], raw[-_TAG:]
    encrypt, authenticate = _keys(session_cookie)
    if not hmac.compare_digest(tag, hmac.new(authenticate, _VERSION + nonce + cipher, hashlib.sha256).digest()):
        return None
    try:
        stored = json.loads(bytes(a ^ b for a, b in zip(cipher, _stream(encrypt, nonce, len(cipher)))))
        at, notes = float(stored["at"]), stored["notes"]
    except (ValueError, KeyError, TypeError):
        return None
    now = time.time() if now is None else now
    if not isinstance(notes, dict) or not (now - LIFETIME <= at <= now + 5.0):
        return None
    return notes


def put(response: Response, request: Request, session_cookie: str, notes: dict[str, Any]) -> None:
    """Set the sealed cookie of ``notes`` on ``response`` (the form values go first when too long)."""
    value = seal(session_cookie, notes)
    if len(value) > _MOST:
        value = seal(session_cookie, {k: v for k, v in notes.items() if k != "form"})
    put_sealed(response, request, value)


def put_sealed(response: Response, request: Request, value: str) -> None:
    """Set the cookie of notes :func:`seal` sealed already (a form's first answer, sent again)."""
    response.set_cookie(COOKIE, value, max_age=int(LIFETIME), httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path=PATH)


def take(request: Request, session_cookie: str) -> tuple[dict[str, Any] | None, bool]:
    """``(notes, present)``: the request's sealed notes (None when absent or unreadable), and
    whether it carried the cookie at all (then the answer must :func:`forget` it)."""
    value = request.cookies.get(COOKIE)
    if value is None:
        return None, False
    return unseal(session_cookie, value), True


def forget(response: Response, request: Request) -> None:
    """Delete the cookie in the browser (after its page was rendered)."""
    response.delete_cookie(COOKIE, path=PATH, httponly=True, samesite="strict",
                           secure=request.url.scheme == "https")
