"""``GET /health``: the server and its database answer (no token)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy.exc import OperationalError

from dprm import __version__
from dprm.server.api.deps import Db, note
from dprm.server.errors import ApiError

__all__ = ["router"]

router = APIRouter()


@router.get("/health", tags=["server"], summary="The server and its database answer (no token).")
async def health(request: Request, db: Db) -> dict[str, Any]:
    note(request, "health")
    try:
        await db.aread(lambda connection: connection.exec_driver_sql("SELECT 1").scalar())
    except OperationalError:
        raise ApiError("database_unavailable") from None
    return {"status": "ok", "version": __version__}
