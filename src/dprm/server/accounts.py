"""Analysts and their API tokens: generated once, stored as a salted hash.

A token is ``dprm_<id>_<secret>``: ``<id>`` (12 hex digits) finds the analyst's row,
``<secret>`` (256 random bits, URL-safe base64) is checked against
``SHA-256(salt ‖ secret)`` with :func:`hmac.compare_digest` (constant time). The
token is shown once, when it is made (``dprm admin analyst add`` / ``rotate``); the
database holds only the id, the salt and the hash, so a stolen database yields no
token. A fast hash suffices because the secret is random, not a password: 2²⁵⁶
guesses are out of reach with any hash.

Examples
--------
>>> token, (token_id, salt, digest) = new_token()
>>> token.startswith("dprm_" + token_id + "_"), check_secret(token, token_id, salt, digest)
(True, True)
>>> check_secret(token[:-1] + ("A" if token[-1] != "A" else "B"), token_id, salt, digest)
False
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select, update

from dprm.errors import ParameterError, short_repr
from dprm.server.tables import analysts, web_sessions

__all__ = ["Analyst", "new_token", "check_secret", "parse_token", "add_analyst", "rotate_token",
           "set_disabled", "find_analyst", "authenticate", "token_row", "check_expiry", "end_sessions",
           "NAME_PATTERN", "MAX_EXPIRY_DAYS", "KEEP_EXPIRY"]

#: Names of analysts and datasets: letters, digits, ``.``, ``_``, ``-``; 1 to 64.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # whole names only (fullmatch: '$' passed 'eve\n')

#: The longest a token may be made to last: 36,500 days (about a century). Beyond it a
#: time is not a date the database, the pages and ``dprm admin analyst list`` can show;
#: a token that should never expire is made without an expiry.
MAX_EXPIRY_DAYS = 36_500

_TOKEN = re.compile(r"dprm_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")  # fullmatch, as the names
_DUMMY_SALT = "0" * 32
_DUMMY_HASH = hashlib.sha256(b"dummy").hexdigest()


@dataclass(frozen=True)
class Analyst:
    """An authenticated analyst."""

    id: int
    name: str
    token_id: str


def check_name(name: str, what: str) -> str:
    """``name`` if it is a valid analyst or dataset name, else a ParameterError."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ParameterError(f"{what} name must be 1 to 64 letters, digits, '.', '_' or '-' "
                             f"(starting with a letter or digit), got {short_repr(name)}")
    return name


def check_expiry(expires_at: float | None, now: float | None = None) -> float | None:
    """``expires_at`` (seconds since the epoch) if a token may expire then, else a ParameterError.

    None means never. A time must be finite, positive and at most
    :data:`MAX_EXPIRY_DAYS` days after ``now``; one in the past is allowed (the token
    is expired at once).

    Examples
    --------
    >>> check_expiry(None), check_expiry(1.5e9, now=1.7e9)
    (None, 1500000000.0)
    >>> check_expiry(float("inf"))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: the expiry must be a time within 36,500 days from now, not inf
    """
    if expires_at is None:
        return None
    limit = (time.time() if now is None else now) + MAX_EXPIRY_DAYS * 86400.0
    if isinstance(expires_at, bool) or not isinstance(expires_at, (int, float)) or not (
            math.isfinite(expires_at) and 0 < expires_at <= limit):
        raise ParameterError(f"the expiry must be a time within {MAX_EXPIRY_DAYS:,} days from now, "
                             f"not {expires_at!r}")
    return float(expires_at)


def _digest(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode("ascii")).hexdigest()


def new_token() -> tuple[str, tuple[str, str, str]]:
    """A fresh token and what is stored of it: ``(token, (token_id, salt, hash))``."""
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return f"dprm_{token_id}_{secret}", (token_id, salt, _digest(salt, secret))


def parse_token(token: str) -> tuple[str, str] | None:
    """``(token_id, secret)`` of a well-formed token, else None."""
    match = _TOKEN.fullmatch(token or "")
    return (match.group(1), match.group(2)) if match else None


def check_secret(token: str, token_id: str, salt: str, digest: str) -> bool:
    """Whether ``token`` is the one stored as ``(token_id, salt, digest)`` (constant time)."""
    parsed = parse_token(token)
    if parsed is None:
        hmac.compare_digest(_digest(_DUMMY_SALT, "x"), _DUMMY_HASH)
        return False
    return hmac.compare_digest(_digest(salt, parsed[1]), digest) and parsed[0] == token_id


def add_analyst(connection: Any, name: str, *, expires_at: float | None = None) -> str:
    """Create an analyst; returns the token (the only time it exists in clear).

    ``expires_at`` (seconds since the epoch, or None: never) is checked by
    :func:`check_expiry`.
    """
    check_name(name, "analyst")
    expires_at = check_expiry(expires_at)
    if connection.execute(select(analysts.c.id).where(analysts.c.name == name)).first() is not None:
        raise ParameterError(f"an analyst named {name!r} exists already")
    token, (token_id, salt, digest) = new_token()
    connection.execute(insert(analysts).values(name=name, token_id=token_id, token_salt=salt, token_hash=digest,
                                               disabled=False, expires_at=expires_at, created_at=time.time()))
    return token


def find_analyst(connection: Any, name: str) -> Any:
    """The analyst's row, or a ParameterError naming the problem."""
    row = connection.execute(select(analysts).where(analysts.c.name == name)).first()
    if row is None:
        raise ParameterError(f"no analyst named {name!r}")
    return row


def end_sessions(connection: Any, role: str, principal_id: int) -> None:
    """Delete every browser session of an analyst's or owner's (``role``) id: they end for good.

    Called when the principal is disabled or gets a new token, in the same
    transaction: a session that was only refused while its principal was disabled
    would come back to life when it is enabled again.
    """
    connection.execute(delete(web_sessions).where(web_sessions.c.role == role,
                                                  web_sessions.c.principal_id == principal_id))


#: :func:`rotate_token`'s default: the new token expires when the old one would have.
KEEP_EXPIRY: Any = object()


def rotate_token(connection: Any, name: str, *, expires_at: Any = KEEP_EXPIRY) -> str:
    """Replace an analyst's token (the old one and its sessions stop working at once); the new token.

    The new token keeps the old one's expiry (:data:`KEEP_EXPIRY`) unless ``expires_at``
    is given: a time (checked as by :func:`add_analyst`) or None, never. An expiry
    that has passed is not kept: the new token would be expired at once, so that is a
    ParameterError asking for a new expiry.
    """
    row = find_analyst(connection, name)
    if expires_at is KEEP_EXPIRY:
        expires_at = row.expires_at
        if expires_at is not None and expires_at <= time.time():
            raise ParameterError(f"the token of analyst {name!r} expired on {_date(expires_at)}: a new token "
                                 f"would be expired at once; give it a new expiry (dprm admin analyst rotate "
                                 f"{name} --expires-in-days DAYS, or --never-expires)")
    else:
        expires_at = check_expiry(expires_at)
    token, (token_id, salt, digest) = new_token()
    connection.execute(update(analysts).where(analysts.c.id == row.id).values(
        token_id=token_id, token_salt=salt, token_hash=digest, rotated_at=time.time(), expires_at=expires_at))
    end_sessions(connection, "analyst", int(row.id))
    return token


def _date(seconds: float) -> str:
    """A UTC date and time for messages (a time no calendar holds as a number)."""
    try:
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g}"


def set_disabled(connection: Any, name: str, disabled: bool) -> None:
    """Disable (or enable again) an analyst: every request with its token is refused.

    Disabling ends the analyst's browser sessions for good (enabling again opens none).
    """
    row = find_analyst(connection, name)
    connection.execute(update(analysts).where(analysts.c.id == row.id).values(disabled=bool(disabled)))
    if disabled:
        end_sessions(connection, "analyst", int(row.id))


def token_row(connection: Any, table: Any, token: str | None) -> tuple[Any, str | None]:
    """The row of ``table`` (analysts or owners) whose stored token is ``token``: ``(row, None)``,
    else ``(None, "missing_token" | "invalid_token")``.

    A malformed or unknown token costs one hash and one comparison like a known one.
    The row may still be disabled or expired: the caller checks what applies to it.
    """
    if not token:
        return None, "missing_token"
    parsed = parse_token(token)
    row = None
    if parsed is not None:
        row = connection.execute(select(table).where(table.c.token_id == parsed[0])).first()
    if row is None:
        hmac.compare_digest(_digest(_DUMMY_SALT, parsed[1] if parsed else "x"), _DUMMY_HASH)
        return None, "invalid_token"
    if not hmac.compare_digest(_digest(row.token_salt, parsed[1]), row.token_hash):
        return None, "invalid_token"
    return row, None


def authenticate(connection: Any, token: str | None, now: float | None = None) -> tuple[Analyst | None, str | None]:
    """``(analyst, None)`` for a valid token, else ``(None, error code)``.

    The codes: ``missing_token``, ``invalid_token``, ``token_disabled``,
    ``token_expired``. A malformed or unknown token costs one hash and one
    comparison like a known one.
    """
    row, code = token_row(connection, analysts, token)
    if row is None:
        return None, code
    if row.disabled:
        return None, "token_disabled"
    if row.expires_at is not None and (now or time.time()) >= row.expires_at:
        return None, "token_expired"
    return Analyst(int(row.id), row.name, row.token_id), None
