"""``GET /health``: the server and its database answer, and the database can be written (no token).

``200 {"status": "ok"}`` when a read and a write probe
(:meth:`~dprm.server.database.Database.probe_write`) succeed;
``503 database_unavailable`` when the database does not answer,
``503 database_unwritable`` when it answers but a write does not commit (a read-only
file, mount, role or transaction; a full disk). The write probe runs at most once per
:data:`PROBE_SECONDS` whatever the number of callers (one at a time; the others
take its answer), so ``/health`` without a token cannot load the database.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool

from dprm import __version__
from dprm.server.api.deps import Db, note
from dprm.server.errors import ApiError

__all__ = ["PROBE_SECONDS", "router"]

#: The longest a write probe's answer is reused.
PROBE_SECONDS = 1.0

router = APIRouter()


async def _writable(request: Request) -> str | None:
    """The last write probe's failure (None: it committed), probing again when it is old."""
    state = request.app.state
    if getattr(state, "probe_lock", None) is None:
        state.probe_lock = asyncio.Lock()
        state.probe = (-float("inf"), None)
    async with state.probe_lock:
        at, problem = state.probe
        if time.monotonic() - at > PROBE_SECONDS:
            problem = await run_in_threadpool(state.db.probe_write)
            state.probe = (time.monotonic(), problem)
    return problem


@router.get("/health", tags=["server"], summary="The server and its database answer (no token).")
async def health(request: Request, db: Db) -> dict[str, Any]:
    note(request, "health")
    try:
        await db.aread(lambda connection: connection.exec_driver_sql("SELECT 1").scalar())
    except OperationalError:
        raise ApiError("database_unavailable") from None
    problem = await _writable(request)
    if problem is not None:
        request.state.detail = problem[:2000]
        raise ApiError("database_unwritable")
    return {"status": "ok", "version": __version__}
