"""Browser sessions of the web pages: a random cookie, its hash in the database.

Signing in with a token (an analyst's or an owner's) opens a session: the browser
gets a cookie ``dprm_session`` holding 256 random bits (URL-safe base64), sent back
``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other site's page sends
it) and ``Secure`` behind TLS; the database keeps only its SHA-256
(:data:`dprm.server.tables.web_sessions`), so neither a stolen database nor the
cookie yields the API token. Each session also holds a random form token
(:mod:`dprm.server.web.csrf`).

A session ends when it expires (:data:`LIFETIME`), on sign-out, and at once when
its principal is disabled, expires or gets a new token: every request looks the
session up joined with the analyst's (or owner's) row and compares the token id it
was opened with. Disabling and a new token also delete the principal's sessions
(:func:`dprm.server.accounts.end_sessions`), so enabling again revives none; an
expired token is only ever replaced by a new one (a new token id).

Examples
--------
>>> import tempfile, os
>>> from dprm.server.database import Database
>>> from dprm.server.accounts import add_analyst, rotate_token, authenticate
>>> db = Database(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> db.migrate()
>>> with db.write() as connection:
...     token = add_analyst(connection, "ann")
>>> with db.read() as connection:
...     who, _ = authenticate(connection, token)
>>> cookie, csrf = open_session(db, "analyst", who.id, who.token_id)
>>> cookie != token and token not in cookie
True
>>> with db.read() as connection:
...     find_session(connection, cookie).name
'ann'
>>> with db.write() as connection:
...     _ = rotate_token(connection, "ann")
>>> with db.read() as connection:
...     find_session(connection, cookie) is None
True
>>> db.dispose()
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select

from dprm.server.accounts import Analyst
from dprm.server.tables import analysts, owners, web_sessions

__all__ = ["COOKIE", "LIFETIME", "Session", "open_session", "find_session", "close_session", "cookie_hash"]

#: The session cookie's name.
COOKIE = "dprm_session"

#: Seconds a session lasts after sign-in (a working day).
LIFETIME = 8 * 3600.0


@dataclass(frozen=True)
class Session:
    """A signed-in browser: ``role`` is ``"analyst"`` or ``"owner"``."""

    role: str
    principal_id: int
    name: str
    token_id: str
    csrf: str

    @property
    def analyst(self) -> Analyst:
        """The analyst of an analyst's session (the API's :class:`~dprm.server.accounts.Analyst`)."""
        if self.role != "analyst":
            raise PermissionError("not an analyst's session")
        return Analyst(self.principal_id, self.name, self.token_id)


def cookie_hash(cookie: str) -> str:
    """What the database stores of a cookie."""
    return hashlib.sha256(cookie.encode("utf-8", "replace")).hexdigest()


def open_session(db: Any, role: str, principal_id: int, token_id: str) -> tuple[str, str]:
    """A new session; returns ``(cookie value, form token)``. Expired sessions are removed."""
    if role not in ("analyst", "owner"):
        raise ValueError(f"unknown role {role!r}")
    cookie = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    now = time.time()

    def work(connection: Any) -> None:
        connection.execute(delete(web_sessions).where(web_sessions.c.expires_at < now))
        connection.execute(insert(web_sessions).values(
            cookie_hash=cookie_hash(cookie), role=role, principal_id=principal_id, token_id=token_id,
            csrf_token=csrf, created_at=now, expires_at=now + LIFETIME))

    db.transaction(work)
    return cookie, csrf


def find_session(connection: Any, cookie: str | None, now: float | None = None) -> Session | None:
    """The live session of a cookie, or None (unknown, expired, principal disabled or re-keyed)."""
    if not cookie or len(cookie) > 128:
        return None
    row = connection.execute(select(web_sessions).where(web_sessions.c.cookie_hash == cookie_hash(cookie))).first()
    now = time.time() if now is None else now
    if row is None or row.expires_at <= now:
        return None
    table = analysts if row.role == "analyst" else owners
    who = connection.execute(select(table).where(table.c.id == row.principal_id)).first()
    if who is None or who.disabled or who.token_id != row.token_id:
        return None
    if row.role == "analyst" and who.expires_at is not None and now >= who.expires_at:
        return None
    return Session(row.role, int(row.principal_id), who.name, row.token_id, row.csrf_token)


def close_session(db: Any, cookie: str | None) -> None:
    """End a session (sign-out); an unknown cookie is ignored."""
    if cookie:
        digest = cookie_hash(cookie)
        db.transaction(lambda c: c.execute(delete(web_sessions).where(web_sessions.c.cookie_hash == digest)))
