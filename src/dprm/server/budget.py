"""Charges against a budget: reserved before any data is touched, then kept or refunded.

The budget that never lies, as three transactions:

**reserve** (before anything reads the rows)::

    UPDATE budgets SET spent_units = spent_units + :e
     WHERE analyst_id = :a AND dataset_id = :d AND total_units - spent_units >= :e

and, in the same transaction, ``INSERT INTO charges (..., status 'reserved')``. The
update's row count says whether it was accepted: 0 rows means no budget or not
enough, and nothing is written. The condition is checked by the database on the row
it updates, so concurrent requests cannot overspend (SQLite: one writer at a time;
PostgreSQL: concurrent updates of the row wait and re-check the condition).

**keep** (the data was, or may have been, touched): ``UPDATE charges SET status =
'spent' WHERE id = :c AND status = 'reserved'`` and the charge's ledger rows, whose ε
add up to the charge exactly; one transaction, so a charge is never spent without
its ledger. The budget keeps the amount.

**refund** (no data was touched: a job cancelled while queued, a dataset file that
changed on disk): ``UPDATE charges SET status = 'refunded' WHERE id = :c AND status =
'reserved'`` and, only when that matched, ``spent_units - :e`` on the budget.

A charge settles once (the ``status = 'reserved'`` condition); a reserved charge that
nobody settles (the server died in between) is kept by :func:`keep_orphans` at the
next start: the budget errs on the side of the rows, never on the analyst's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from sqlalchemy import and_, insert, select, update

from dprm.errors import ParameterError
from dprm.server.accounts import find_analyst
from dprm.server.tables import budgets, charges, datasets, ledger
from dprm.server.units import fraction_text, units_fraction, units_text

__all__ = ["Release", "reserve", "keep", "refund", "remaining", "set_budget", "grant", "grant_notice",
           "keep_orphans", "ledger_sum"]


@dataclass(frozen=True)
class Release:
    """One ledger row: the step, the mechanism and its exact ε."""

    step: str
    mechanism: str
    epsilon: Fraction


def reserve(connection: Any, analyst_id: int, dataset_id: int, units: int, *, kind: str, action: str) -> int | None:
    """Take ``units`` from the budget and record a reserved charge; its id, or None.

    None when the analyst has no budget on the dataset or too little of it; then
    nothing is written. Call inside a write transaction (:meth:`Database.write`).
    """
    if units <= 0:
        raise ValueError("a charge must be positive")
    now = time.time()
    taken = connection.execute(
        update(budgets)
        .where(and_(budgets.c.analyst_id == analyst_id, budgets.c.dataset_id == dataset_id,
                    budgets.c.total_units - budgets.c.spent_units >= units))
        .values(spent_units=budgets.c.spent_units + units, updated_at=now)
    ).rowcount
    if taken != 1:
        return None
    return int(connection.execute(
        insert(charges).values(analyst_id=analyst_id, dataset_id=dataset_id, kind=kind, action=action,
                               epsilon_units=units, status="reserved", created_at=now)
        .returning(charges.c.id)
    ).scalar_one())


def _charge(connection: Any, charge_id: int) -> Any:
    return connection.execute(select(charges).where(charges.c.id == charge_id)).one()


def keep(connection: Any, charge_id: int, releases: Sequence[Release], *, job_id: int | None = None,
         unspent_step: str = "charged, not spent by the algorithm") -> bool:
    """Settle a reserved charge as spent, with its ledger rows; False if already settled.

    ``releases`` are the mechanisms' charges (exact). Their sum must not exceed the
    charge; a rest (an algorithm that stopped early) gets one more row named
    ``unspent_step``, so that the ledger rows of a charge always add up to it.
    Without releases (a job whose worker died) the whole charge is one row.
    """
    now = time.time()
    charge = _settle(connection, charge_id, "spent", now)
    if charge is None:
        return False
    total = units_fraction(charge.epsilon_units)
    rows = list(releases)
    spent = sum((r.epsilon for r in rows), Fraction(0))
    if spent > total:
        raise ValueError(f"releases spend {spent}, more than the charge {total}")
    if spent < total:
        rows.append(Release(unspent_step, "none", total - spent))
    connection.execute(insert(ledger), [
        {"charge_id": charge_id, "analyst_id": charge.analyst_id, "dataset_id": charge.dataset_id, "job_id": job_id,
         "step": r.step[:2000], "mechanism": r.mechanism[:2000], "epsilon_exact": fraction_text(r.epsilon),
         "epsilon": float(r.epsilon), "created_at": now}
        for r in rows
    ])
    return True


def _settle(connection: Any, charge_id: int, status: str, now: float) -> Any:
    """Move a reserved charge to ``status`` once; its row, or None if it was settled already.

    The condition on ``reserved`` makes settling idempotent under races: of a keep and
    a refund arriving together, exactly one changes the row.
    """
    settled = connection.execute(
        update(charges).where(and_(charges.c.id == charge_id, charges.c.status == "reserved"))
        .values(status=status, settled_at=now)
    ).rowcount
    return _charge(connection, charge_id) if settled == 1 else None


def refund(connection: Any, charge_id: int) -> bool:
    """Return a reserved charge to the budget (no data was touched); False if settled."""
    now = time.time()
    charge = _settle(connection, charge_id, "refunded", now)
    if charge is None:
        return False
    connection.execute(
        update(budgets)
        .where(and_(budgets.c.analyst_id == charge.analyst_id, budgets.c.dataset_id == charge.dataset_id))
        .values(spent_units=budgets.c.spent_units - charge.epsilon_units, updated_at=now)
    )
    return True


def remaining(connection: Any, analyst_id: int, dataset_id: int) -> tuple[int, int] | None:
    """``(total_units, spent_units)`` of a budget, or None when none was granted."""
    row = connection.execute(
        select(budgets.c.total_units, budgets.c.spent_units)
        .where(and_(budgets.c.analyst_id == analyst_id, budgets.c.dataset_id == dataset_id))
    ).first()
    return None if row is None else (int(row.total_units), int(row.spent_units))


def set_budget(connection: Any, analyst_id: int, dataset_id: int, total_units: int) -> None:
    """Grant or change a total budget (what was spent stays spent).

    One statement, ``INSERT ... ON CONFLICT (analyst_id, dataset_id) DO UPDATE`` (SQLite
    and PostgreSQL alike): two first grants at once no longer both find no row to
    update and then both insert one (PostgreSQL: the second failed with
    ``IntegrityError`` on ``budgets_pkey``); the later waits for the earlier and sets
    its total over it, as two changes of an existing budget do. The spent ε is never
    touched.
    """
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as upsert
    else:
        from sqlalchemy.dialects.sqlite import insert as upsert

    now = time.time()
    statement = upsert(budgets).values(analyst_id=analyst_id, dataset_id=dataset_id, total_units=total_units,
                                       spent_units=0, updated_at=now)
    connection.execute(statement.on_conflict_do_update(
        index_elements=[budgets.c.analyst_id, budgets.c.dataset_id],
        set_={"total_units": statement.excluded.total_units, "updated_at": statement.excluded.updated_at}))


def grant(connection: Any, analyst: str, dataset: str, total_units: int) -> tuple[int, int]:
    """:func:`set_budget` by names (``dprm admin budget set``, the owner's web page).

    Parameters
    ----------
    connection : Connection
        In a write transaction.
    analyst : str
        The analyst's name.
    dataset : str
        The registered dataset's name.
    total_units : int
        The new total budget, in units of 10⁻⁹ ε.

    Returns
    -------
    (int, int)
        ``(total_units, spent_units)`` afterwards.

    Raises
    ------
    ParameterError
        If there is no analyst or no registered dataset of that name.
    """
    who = find_analyst(connection, analyst)
    row = connection.execute(select(datasets.c.id).where(datasets.c.active_name == dataset)).first()
    if row is None:
        raise ParameterError(f"no dataset named {dataset!r}")
    set_budget(connection, who.id, row.id, total_units)
    total, spent = remaining(connection, who.id, row.id)
    return total, spent


def grant_notice(analyst: str, dataset: str, total_units: int, spent_units: int) -> str:
    """The line that reports a :func:`grant`: the budget's total, spent and remaining ε.

    Examples
    --------
    >>> grant_notice("ann", "survey", 2_000_000_000, 500_000_000)
    'ann on survey: total 2, spent 0.5, remaining 1.5'
    """
    return (f"{analyst} on {dataset}: total {units_text(total_units)}, spent {units_text(spent_units)}, "
            f"remaining {units_text(max(total_units - spent_units, 0))}")


def keep_orphans(connection: Any, *, older_than: float = 0.0) -> int:
    """Keep every primitive charge still reserved (its server died before settling).

    Job charges are settled with their jobs (:mod:`dprm.server.jobs`). Returns the
    number of charges kept.
    """
    rows = connection.execute(
        select(charges.c.id).where(and_(charges.c.status == "reserved", charges.c.kind == "primitive",
                                        charges.c.created_at <= time.time() - older_than))
    ).scalars().all()
    kept = 0
    for charge_id in rows:
        kept += keep(connection, charge_id, [], unspent_step="interrupted: the server stopped before the answer")
    return kept


def ledger_sum(connection: Any, charge_id: int) -> Fraction:
    """The exact sum of a charge's ledger rows."""
    texts = connection.execute(select(ledger.c.epsilon_exact).where(ledger.c.charge_id == charge_id)).scalars()
    return sum((Fraction(t) for t in texts), Fraction(0))
