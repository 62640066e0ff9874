"""Data owners of the web pages: names and tokens, as analysts' ones but in their own table.

An owner signs in to the owner's side of the web pages (:mod:`dprm.server.web`): it
registers datasets, manages analysts and budgets, and reads the audit log and the
jobs, exactly what ``dprm admin`` does on the database. Owners are made with
``dprm admin owner add NAME`` (on the database, so whoever may administer the
database makes them); the API (``/v1``) does not accept an owner's token, and an
analyst's token never opens the owner's pages.

A token has the analysts' form ``dprm_<id>_<secret>`` (:mod:`dprm.server.accounts`),
stored the same way: token id, salt and ``SHA-256(salt ‖ secret)``; the token is
shown once.

Examples
--------
>>> import tempfile, os
>>> from dprm.server.database import Database
>>> db = Database(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> db.migrate()
>>> with db.write() as connection:
...     token = add_owner(connection, "alice")
>>> with db.read() as connection:
...     found, problem = authenticate_owner(connection, token)
>>> found.name, problem
('alice', None)
>>> with db.read() as connection:
...     authenticate_owner(connection, token[:-1] + ("A" if token[-1] != "A" else "B"))
(None, 'invalid_token')
>>> db.dispose()
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update

from dprm.errors import ParameterError
from dprm.server.accounts import check_name, end_sessions, new_token, token_row
from dprm.server.tables import owners

__all__ = ["Owner", "add_owner", "analyst_of_token", "rotate_owner", "set_owner_disabled", "authenticate_owner"]


@dataclass(frozen=True)
class Owner:
    """An authenticated data owner."""

    id: int
    name: str
    token_id: str


def _find(connection: Any, name: str) -> Any:
    row = connection.execute(select(owners).where(owners.c.name == name)).first()
    if row is None:
        raise ParameterError(f"no owner named {name!r}")
    return row


def add_owner(connection: Any, name: str) -> str:
    """Create an owner; returns the token (the only time it exists in clear)."""
    check_name(name, "owner")
    if connection.execute(select(owners.c.id).where(owners.c.name == name)).first() is not None:
        raise ParameterError(f"an owner named {name!r} exists already")
    token, (token_id, salt, digest) = new_token()
    connection.execute(insert(owners).values(name=name, token_id=token_id, token_salt=salt, token_hash=digest,
                                             disabled=False, created_at=time.time()))
    return token


def rotate_owner(connection: Any, name: str) -> str:
    """Replace an owner's token (the old one and its sessions stop working); the new token."""
    row = _find(connection, name)
    token, (token_id, salt, digest) = new_token()
    connection.execute(update(owners).where(owners.c.id == row.id).values(
        token_id=token_id, token_salt=salt, token_hash=digest, rotated_at=time.time()))
    end_sessions(connection, "owner", int(row.id))
    return token


def set_owner_disabled(connection: Any, name: str, disabled: bool) -> None:
    """Disable (or enable again) an owner; disabling ends its browser sessions for good."""
    row = _find(connection, name)
    connection.execute(update(owners).where(owners.c.id == row.id).values(disabled=bool(disabled)))
    if disabled:
        end_sessions(connection, "owner", int(row.id))


def authenticate_owner(connection: Any, token: str | None) -> tuple[Owner | None, str | None]:
    """``(owner, None)`` for a valid owner token, else ``(None, code)`` as
    :func:`dprm.server.accounts.authenticate` (constant work for unknown tokens)."""
    row, code = token_row(connection, owners, token)
    if row is None:
        return None, code
    if row.disabled:
        return None, "token_disabled"
    return Owner(int(row.id), row.name, row.token_id), None


def analyst_of_token(connection: Any, token: str | None) -> tuple[Any, str | None, bool]:
    """``(analyst, problem, guessed)``: :func:`dprm.server.accounts.authenticate`'s answer, and whether the
    token is a guess, one that matches no analyst and no owner (an owner's token sent to the
    analysts' API is refused, but it is no guess: docs/server.md).
    """
    from dprm.server.accounts import authenticate

    found, problem = authenticate(connection, token)
    if found is not None or token is None or problem not in (None, "invalid_token"):
        return found, problem, False
    owner, owner_problem = authenticate_owner(connection, token)
    return None, problem, owner is None and owner_problem in (None, "invalid_token")
