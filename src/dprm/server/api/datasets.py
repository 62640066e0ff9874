"""``/v1/datasets``: the datasets an analyst has a budget on (public schema and budget, never a count).

A budget of 0 (withdrawn) is no grant (:func:`~dprm.server.api.deps.granted`)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from fastapi import APIRouter, Query, Request
from sqlalchemy import and_, select

from dprm.server.api.deps import ERROR_RESPONSES, Analyst, Db, budget_view, granted, note
from dprm.server.datasets import DatasetRecord
from dprm.server.tables import budgets, datasets

__all__ = ["router", "dataset_view"]

router = APIRouter()


def dataset_view(record: DatasetRecord, total: int, spent: int) -> dict[str, Any]:
    """A dataset as the API shows it: name, id column, views of the public schema, budget."""
    return {"name": record.name, "id_column": record.schema.get("id_column"),
            "views": record.schema["views"], "budget": budget_view(record.name, total, spent)}


@router.get("/v1/datasets", tags=["datasets"], responses=ERROR_RESPONSES,
            summary="The datasets this analyst may use: public schema and budget (never a count).")
async def list_datasets(request: Request, who: Analyst, db: Db) -> dict[str, Any]:
    note(request, "list-datasets")
    rows = await db.aread(lambda connection: connection.execute(
        select(datasets, budgets.c.total_units, budgets.c.spent_units)
        .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
        .where(and_(datasets.c.active_name.is_not(None), budgets.c.total_units > 0))
        .order_by(datasets.c.name)).all())
    return {"datasets": [dataset_view(DatasetRecord.from_row(r), int(r.total_units), int(r.spent_units))
                         for r in rows]}


@router.get("/v1/datasets/{name}", tags=["datasets"], responses=ERROR_RESPONSES,
            summary="One dataset's public schema.")
async def get_dataset(request: Request, who: Analyst, db: Db, name: str) -> dict[str, Any]:
    note(request, "get-dataset", name[:128])
    return dataset_view(*await db.aread(lambda connection: granted(connection, who, name)))


@router.get("/v1/datasets/{name}/dummy", tags=["datasets"], responses=ERROR_RESPONSES,
            summary="Rows synthesised from the public schema only (no budget).")
def dummy_rows(request: Request, who: Analyst, db: Db, name: str,
               rows: Annotated[int, Query(ge=1, le=5000)] = 100,
               seed: Annotated[Optional[int], Query(ge=0, le=2**32 - 1)] = None) -> dict[str, Any]:
    from dprm.server.dummy import dummy_rows_json

    note(request, "dummy-rows", name[:128])
    with db.read() as connection:
        record, _, _ = granted(connection, who, name)
    return {"dataset": record.name, **dummy_rows_json(record.schema, rows, seed)}
