"""What the API's endpoints and the web pages share: submit a job, cancel it, run a primitive.

Each takes the request (its ``app.state``: database, settings, primitive pool; its
``state``: what the audit record says) and the authenticated analyst, so an
analyst on a page goes through the same grant, checks and charge as through the API.
:data:`SERVICE` bundles them for the pages (``app.state.service``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from fastapi import Request

from dprm.server import accounts, budget, jobs
from dprm.server.api.deps import budget_view, granted, note, units_of
from dprm.server.api_models import JobRequest
from dprm.server.errors import ApiError
from dprm.server.units import units_float, units_text
from dprm.server.worker import Unpublished, publish

__all__ = ["SERVICE", "SETTLE_RETRY_SECONDS", "Service", "cancel", "dry_run", "primitive", "submit"]

#: How long a primitive's settlement (its ledger rows, or its refund) is tried again while
#: the database is unavailable: 30 s, well inside the 60 s by which a web form's one-time
#: key outlives the primitive timeout (:mod:`dprm.server.web.resubmission`).
SETTLE_RETRY_SECONDS = 30.0


def dry_run(dataset: str, units: int, total: int, spent: int, dummy: bool, what: dict[str, Any]) -> dict[str, Any]:
    """The answer of a dry run: what the request would cost and whether the budget affords it."""
    cost = 0 if dummy else units
    left = max(total - spent, 0)
    return {"dry_run": True, "dataset": dataset, **what, "dummy": dummy,
            "epsilon": units_float(units), "epsilon_exact": units_text(units),
            "cost": units_float(cost), "cost_exact": units_text(cost),
            "remaining": units_float(left), "remaining_exact": units_text(left),
            "affordable": cost <= left}


def submit(request: Request, who: accounts.Analyst, body: JobRequest) -> tuple[dict[str, Any], int]:
    """A job submission (or dry run) and its HTTP status: the API's and the web pages' one path."""
    from dprm.server.validation import check_job

    db = request.app.state.db
    note(request, "submit-job" if not body.dry_run else "dry-run-job", body.dataset)
    units = units_of(body.epsilon)
    request.state.epsilon_units = units
    with db.read() as connection:
        record, total, spent = granted(connection, who, body.dataset)
    spec = check_job(body.algorithm, dict(body.parameters), units)
    if body.dry_run:
        return dry_run(record.name, units, total, spent, body.dummy,
                       {"algorithm": spec.algorithm, "parameters": spec.parameters}), 200
    parameters = {k: v for k, v in spec.parameters.items() if k != "epsilon"}
    dummy_rows = body.dummy_rows if body.dummy else None
    # the request as checked (epsilon in units, parameters as typed), so 0.1 and "0.1" are one request
    digest = jobs.request_digest({"dataset": record.name, "algorithm": spec.algorithm, "parameters": parameters,
                                  "units": units, "dummy": body.dummy, "dummy_rows": dummy_rows})
    row, created = jobs.submit(db, who.id, record.id, algorithm=spec.algorithm, parameters=parameters,
                               units=units, dummy=body.dummy, dummy_rows=dummy_rows,
                               idempotency_key=body.idempotency_key, digest=digest,
                               max_active=request.app.state.settings.max_active_jobs)
    if not created:
        request.state.outcome = "idempotent_replay"
        request.state.epsilon_units = 0
        return jobs.job_view(row, record.name), 200
    return jobs.job_view(row, record.name), 201


def cancel(request: Request, who: accounts.Analyst, job_id: str) -> dict[str, Any]:
    """Cancel one of the analyst's jobs (API and web pages)."""
    db = request.app.state.db
    note(request, "cancel-job")
    row = jobs.cancel(db, who.id, job_id[:64])
    with db.read() as connection:
        row, name = jobs.find_job(connection, who.id, row.public_id)
    return jobs.job_view(row, name)


def _check_primitive(kind: str, body: Any, schema: dict[str, Any]) -> None:
    """The queries or trees of a primitive, checked against the public schema only."""
    from dprm.server.validation import check_query, check_tree

    if kind == "redescription-statistics":
        check_query(body.left, schema, "left", "left")
        check_query(body.right, schema, "right", "right")
    else:
        check_tree(body.left_tree, schema, "left", "left_tree")
        check_tree(body.right_tree, schema, "right", "right_tree")


def _charge(db: Any, who: accounts.Analyst, dataset_id: int, units: int, kind: str) -> int | None:
    """Reserve a primitive's epsilon before any row is read (``403 over_budget`` when it does not fit)."""
    def take(connection: Any) -> int | None:
        taken = budget.reserve(connection, who.id, dataset_id, units, kind="primitive", action=kind)
        if taken is None:
            raise jobs._over_budget(connection, who.id, dataset_id, units)
        return taken

    return db.transaction(take)


def _settle(db: Any, work: Callable[[Any], Any]) -> Any:
    """``work(connection)`` in one write transaction, tried again while the database is
    unavailable (a PostgreSQL restart, a lost connection) for up to :data:`SETTLE_RETRY_SECONDS`.

    A primitive's charge is settled after its rows were counted and its noise drawn:
    given up at the first failure, the answer was lost and the charge kept anyway (the
    next server keeps a reserved charge), so the analyst paid for nothing. A charge
    settles once (``status = 'reserved'``), so a try whose commit happened before its
    answer was lost is not repeated. Still unavailable after that: the last database
    error (``503 database_unavailable``), the charge reserved until it is kept.
    """
    try:
        return publish(db.transaction, work, within=SETTLE_RETRY_SECONDS)
    except Unpublished as gone:
        raise gone.__cause__ from None  # type: ignore[misc]  # (always the database's error)


def _answer(request: Request, kind: str, task: dict[str, Any], charge_id: int | None) -> dict[str, Any]:
    """Run a primitive in the pool; keep or refund its charge as the run went."""
    db = request.app.state.db
    try:
        answer = request.app.state.pool.run(task)
    except ApiError as error:  # the process died or timed out: rows may have been read
        if charge_id is not None:
            step = f"{kind} failed ({error.code})"
            _settle(db, lambda c: budget.keep(c, charge_id, [], unspent_step=step))
        raise
    if not answer["ok"]:
        request.state.detail = answer.get("owner_error")
        if charge_id is not None:
            if answer["touched"]:
                _settle(db, lambda c: budget.keep(
                    c, charge_id, [], unspent_step=f"{kind} failed after reading the rows: no answer"))
            else:
                _settle(db, lambda c: budget.refund(c, charge_id))
        raise ApiError(answer["code"], answer.get("message"))
    return answer


def primitive(request: Request, who: accounts.Analyst, kind: str, body: Any) -> dict[str, Any]:
    """A primitive (``redescription-statistics`` or ``leaf-pair-counts``), charged, run and answered."""
    db = request.app.state.db
    note(request, kind if not body.dry_run else f"dry-run-{kind}", body.dataset)
    units = units_of(body.epsilon)
    request.state.epsilon_units = units
    with db.read() as connection:
        record, total, spent = granted(connection, who, body.dataset)
    payload = body.model_dump(include={"left", "right", "confidence", "left_tree", "right_tree"})
    _check_primitive(kind, body, record.schema)
    if body.dry_run:
        return dry_run(record.name, units, total, spent, body.dummy, {"primitive": kind})
    charge_id = None
    if not body.dummy:
        charge_id = _charge(db, who, record.id, units, kind)
    else:
        request.state.epsilon_units = 0
    task = {"kind": kind, "dataset": record.to_json(), "epsilon_units": units, "request": payload,
            "dummy": body.dummy, "dummy_rows": body.dummy_rows}
    answer = _answer(request, kind, task, charge_id)
    releases = [budget.Release(step, mechanism, Fraction(eps)) for step, mechanism, eps in answer["releases"]]
    result = answer["result"]
    if charge_id is not None:
        # The ledger rows are committed before the answer leaves the server, and the budget
        # read in the same transaction: once they are, nothing stands between them and the answer.
        def settle(connection: Any) -> tuple[int, int] | None:
            budget.keep(connection, charge_id, releases)
            return budget.remaining(connection, who.id, record.id)

        result["budget"] = budget_view(record.name, *_settle(db, settle))
    result.update({"dataset": record.name, "dummy": body.dummy, "epsilon": units_float(units),
                   "epsilon_exact": units_text(units)})
    return result


@dataclass(frozen=True)
class Service:
    """What the web pages share with the API's endpoints (:mod:`dprm.server.web`).

    ``granted(connection, analyst, name)`` → ``(record, total, spent)`` or
    ``unknown_dataset``; ``submit(request, analyst, JobRequest)`` → ``(answer,
    status)``; ``cancel(request, analyst, job_id)``; ``primitive(request, analyst,
    kind, body)``; ``budget_view(name, total, spent)``; ``note(request, action,
    dataset, units)`` (what the audit record says).
    """

    granted: Callable[..., Any]
    submit: Callable[..., Any]
    cancel: Callable[..., Any]
    primitive: Callable[..., Any]
    budget_view: Callable[..., Any]
    note: Callable[..., Any]


#: The service of every app (``app.state.service``): the functions of this module.
SERVICE = Service(granted=granted, submit=submit, cancel=cancel, primitive=primitive, budget_view=budget_view,
                  note=note)
