"""``/v1/budget`` and ``/v1/ledger``: the analyst's own budgets and ledger rows."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from fastapi import APIRouter, Query, Request
from sqlalchemy import and_, select

from dprm.server.api.deps import ERROR_RESPONSES, Analyst, Db, budget_view, granted, note
from dprm.server.api.paging import newest_page
from dprm.server.registrations import shown_name
from dprm.server.tables import budgets, datasets, ledger

__all__ = ["charge_ordinals", "ledger_page", "ledger_rows", "router"]

router = APIRouter()


@router.get("/v1/budget", tags=["budget"], responses=ERROR_RESPONSES,
            summary="The analyst's budgets (exact and as numbers).")
async def get_budget(request: Request, who: Analyst, db: Db,
                     dataset: Annotated[Optional[str], Query(max_length=64)] = None) -> dict[str, Any]:
    note(request, "budget", dataset)

    def read(connection: Any) -> list[dict[str, Any]]:
        if dataset is not None:
            record, total, spent = granted(connection, who, dataset)
            return [budget_view(record.name, total, spent)]
        rows = connection.execute(
            select(datasets.c.name, budgets.c.total_units, budgets.c.spent_units)
            .join(budgets, budgets.c.dataset_id == datasets.c.id)
            .where(and_(budgets.c.analyst_id == who.id, datasets.c.active_name.is_not(None),
                        budgets.c.total_units > 0))
            .order_by(datasets.c.name)).all()
        return [budget_view(r.name, int(r.total_units), int(r.spent_units)) for r in rows]

    return {"budgets": await db.aread(read)}


@router.get("/v1/ledger", tags=["budget"], responses=ERROR_RESPONSES,
            summary="The analyst's own ledger: one row per release, newest first, a page at a time.")
async def get_ledger(request: Request, who: Analyst, db: Db,
                     dataset: Annotated[Optional[str], Query(max_length=64)] = None,
                     limit: Annotated[int, Query(ge=1, le=10000, description="Rows of a page.")] = 1000,
                     before: Annotated[Optional[int], Query(ge=1, le=2**62, description=(
                         "The cursor of the next page: the answer's 'next' (rows older than it).")
                     )] = None) -> dict[str, Any]:
    note(request, "ledger", dataset)
    rows, following = await db.aread(lambda connection: ledger_page(connection, who, dataset, limit, before))
    return {"ledger": rows, "next": following, "truncated": following is not None}


def ledger_rows(connection: Any, who: Any, dataset: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
    """The analyst's newest ``limit`` ledger rows (the first page of :func:`ledger_page`)."""
    return ledger_page(connection, who, dataset, limit)[0]


def ledger_page(connection: Any, who: Any, dataset: str | None = None, limit: int = 1000,
                before: int | None = None) -> tuple[list[dict[str, Any]], int | None]:
    """A page of the analyst's own ledger rows, newest first, and the next page's cursor
    (``/v1/ledger`` and the analysts' ledger page; :mod:`dprm.server.api.paging`).

    ``dataset``: only that one (granted to ``who``, or withdrawn after ``who`` spent on it;
    else the API's ``unknown_dataset``).
    A row's ``job`` is the job's public id, or None for a statistics request; its
    ``charge`` the charge's place among the analyst's own charges (1 for the oldest; see
    :func:`charge_ordinals`), which groups the rows of one request; its ``dataset`` the
    dataset's name, or ``NAME (removed)`` for a registration the owner
    removed (:func:`~dprm.server.registrations.shown_name`), so that each name's rows add up
    to one registration's spent budget.
    """
    from dprm.server.tables import jobs as jobs_table

    query = (select(ledger, datasets.c.name.label("dataset_name"), datasets.c.active_name, jobs_table.c.public_id)
             .join(datasets, datasets.c.id == ledger.c.dataset_id)
             .outerjoin(jobs_table, jobs_table.c.id == ledger.c.job_id)
             .where(ledger.c.analyst_id == who.id))
    if dataset is not None:  # a budget withdrawn after it was spent on: its rows stay the analyst's history
        record, _, _ = granted(connection, who, dataset, history=True)
        query = query.where(ledger.c.dataset_id == record.id)
    rows, following = newest_page(connection, query, ledger.c.id, limit, before)
    ordinals = charge_ordinals(connection, who, {r.charge_id for r in rows})
    return [{"at": r.created_at, "dataset": shown_name(r.dataset_name, r.active_name), "job": r.public_id,
             "charge": ordinals[r.charge_id], "step": r.step, "mechanism": r.mechanism, "epsilon": r.epsilon,
             "epsilon_exact": r.epsilon_exact}
            for r in rows], following


def charge_ordinals(connection: Any, who: Any, charge_ids: set[int]) -> dict[int, int]:
    """Each charge's place among ``who``'s own charges, 1 for the oldest.

    The charges' ids are shared by all analysts: shown, the gaps between one analyst's
    ids would count the requests of the others. A charge's place in the analyst's own
    list tells only what the analyst did; charges are never deleted and new ones are
    newer, so a charge keeps its place. (Counted per page: a correlated count over the
    ``(analyst_id, dataset_id)`` index for each distinct charge of the page.)
    """
    if not charge_ids:
        return {}
    from sqlalchemy import func

    from dprm.server.tables import charges

    earlier = charges.alias("earlier")
    place = (select(func.count()).select_from(earlier)
             .where(and_(earlier.c.analyst_id == who.id, earlier.c.id <= charges.c.id))
             .scalar_subquery())
    found = connection.execute(select(charges.c.id, place.label("place"))
                               .where(and_(charges.c.analyst_id == who.id, charges.c.id.in_(sorted(charge_ids))))).all()
    return {int(r.id): int(r.place) for r in found}
