"""The analysts' API: :func:`create_app` builds the FastAPI application of ``dprm serve``.

Endpoints (all but ``/health``, ``/docs``, ``/openapi.json`` and the web pages need
``Authorization: Bearer TOKEN``):

======================================  ===============================================
``GET  /health``                        the server and its database answer
``GET  /v1/datasets``                   the datasets the analyst has a budget on: public
                                        schema (names, types, declared domains) and budget
``GET  /v1/datasets/{name}``            one of them
``GET  /v1/datasets/{name}/dummy``      rows synthesised from the public schema
``GET  /v1/algorithms``                 the private algorithms and their parameters
``POST /v1/jobs``                       submit a job (or ``dry_run``, or ``dummy``)
``GET  /v1/jobs``                       the analyst's jobs
``GET  /v1/jobs/{id}``                  status and progress
``GET  /v1/jobs/{id}/result``           the result (``dprm.redescriptions/1``)
``POST /v1/jobs/{id}/cancel``           cancel
``POST /v1/primitives/redescription-statistics``   noisy statistics of a query pair
``POST /v1/primitives/leaf-pair-counts``           noisy counts of a tree pair's cells
``GET  /v1/budget``                     the analyst's budgets
``GET  /v1/ledger``                     the analyst's ledger rows
``/ui/...``                             the web pages for analysts and data owners
                                        (:mod:`dprm.server.web`; session cookie, not a
                                        Bearer token; they act through :class:`Service`)
======================================  ===============================================

What an analyst can reach is only: the public schema, its own budgets, ledger and
jobs, differentially private results and rows synthesised from the schema. Another
analyst's job is ``404 unknown_job``; a dataset without a budget for the analyst is
``404 unknown_dataset``. Errors are ``{"error": {"code", "message"}}``
(:mod:`dprm.server.errors`).

Endpoints that only read the database (and the authentication) are coroutines whose
reads go through :meth:`~dprm.server.database.Database.aread`: on SQLite on the
event loop (a read never waits for the writer in WAL mode and takes a fraction of a
millisecond, less than a hop to the thread pool), on PostgreSQL in the thread pool
(a network round trip that other requests overlap). Endpoints that write (a charge
waits for SQLite's write lock) or compute run in the thread pool.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Optional

from fastapi import Depends, FastAPI, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import and_, select
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from dprm import __version__
from dprm.errors import ParameterError
from dprm.server import accounts, budget, jobs
from dprm.server.api_models import ErrorBody, JobRequest, LeafPairsRequest, StatisticsRequest
from dprm.server.audit import AuditLog
from dprm.server.database import Database
from dprm.server.datasets import DatasetRecord
from dprm.server.errors import ERRORS, ApiError, error_body
from dprm.server.guard import Guard
from dprm.server.pool import PrimitivePool
from dprm.server.ratelimit import RateLimiter
from dprm.server.supervisor import Supervisor
from dprm.server.tables import budgets, datasets, ledger
from dprm.server.units import epsilon_units, units_float, units_text

__all__ = ["create_app", "ServerSettings", "Service"]

log = logging.getLogger("dprm.server")

_bearer = HTTPBearer(auto_error=False, description="The analyst's API token (dprm admin analyst add).")

#: The error answers every authenticated endpoint may give (for the OpenAPI schema).
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in ((400, "Malformed request"), (401, "Missing, wrong, expired or disabled token"),
                                (404, "Unknown dataset or job"), (413, "Request too large"),
                                (422, "Invalid parameters, query or tree"), (429, "Rate limited"),
                                (503, "Database or dataset files unavailable"))
}


class ServerSettings:
    """The settings of one server (see :func:`create_app`)."""

    def __init__(self, *, workers: int = 1, primitive_processes: int = 1, rate: float = 20.0, burst: int = 60,
                 max_body: int = 1_000_000, max_json_depth: int = 64, job_timeout: float = 3600.0,
                 stale_after: float = 60.0, primitive_timeout: float = 300.0, background: bool = True,
                 engine: str | None = None, shards: int = 2, max_active_jobs: int = 16) -> None:
        if workers < 0 or primitive_processes < 1:
            raise ParameterError("--workers must be at least 0 and primitive processes at least 1")
        if max_active_jobs < 1:
            raise ParameterError(f"--max-active-jobs must be at least 1, not {max_active_jobs}")
        if shards < 1:
            raise ParameterError(f"--shards must be at least 1, not {shards}")
        self.workers = workers
        self.primitive_processes = primitive_processes
        self.rate = rate
        self.burst = burst
        self.max_body = max_body
        self.max_json_depth = max_json_depth
        self.job_timeout = job_timeout
        self.stale_after = stale_after
        self.primitive_timeout = primitive_timeout
        self.background = background
        self.engine = engine
        self.shards = shards
        self.max_active_jobs = max_active_jobs


def _budget_view(dataset_name: str, total: int, spent: int) -> dict[str, Any]:
    left = max(total - spent, 0)
    return {"dataset": dataset_name, "total": units_float(total), "spent": units_float(spent),
            "remaining": units_float(left),
            "exact": {"total": units_text(total), "spent": units_text(spent), "remaining": units_text(left)}}


async def current_analyst(request: Request,
                          credentials: Annotated[Optional[HTTPAuthorizationCredentials], Depends(_bearer)]
                          ) -> accounts.Analyst:
    """The analyst of a valid token (a dependency of every endpoint but /health).

    One indexed read (:meth:`~dprm.server.database.Database.aread`).
    """
    token = credentials.credentials if credentials is not None else None
    if token is None and request.headers.get("authorization"):
        raise ApiError("invalid_token", "the Authorization header must be 'Bearer TOKEN'")
    found, problem = await request.app.state.db.aread(lambda connection: accounts.authenticate(connection, token))
    if found is None:
        raise ApiError(problem or "invalid_token")
    request.state.analyst_id = found.id
    wait = request.app.state.limiter.allow(found.token_id)
    if wait > 0:
        raise ApiError("rate_limited", headers={"Retry-After": str(max(1, round(wait + 0.5)))})
    return found


Analyst = Annotated[accounts.Analyst, Depends(current_analyst)]


def _units(value: Any) -> int:
    try:
        return epsilon_units(value)
    except ParameterError as error:
        raise ApiError("invalid_epsilon", str(error)[:300]) from None


def create_app(db_url: str, settings: ServerSettings | None = None, **options: Any) -> FastAPI:
    """The API of a server on the database ``db_url`` (migrated on start).

    Parameters
    ----------
    db_url : str
        SQLite file or URL, or a PostgreSQL URL (:func:`dprm.server.database.normalise_url`).
    settings : ServerSettings, optional
        Or the same as keyword options: ``workers`` (job processes; 0 keeps jobs
        queued), ``primitive_processes``, ``rate``/``burst`` (per-token rate limit),
        ``max_body`` (bytes), ``max_json_depth``, ``job_timeout``, ``stale_after``,
        ``primitive_timeout`` (seconds), ``background`` (False: no supervisor, pool
        or audit thread is started; for tests of the request layer), ``engine``
        (None: jobs count in their worker process; ``""``: the rows of a job whose
        miner counts through the engine are sharded on a local Ray on loopback;
        ``"ray://HOST:PORT"``: on that Ray cluster), ``shards`` and ``max_active_jobs``
        (an analyst's jobs queued or running at once; more is 429 ``too_many_jobs``).
    """
    settings = settings or ServerSettings(**options)
    db = Database(db_url)
    audit = AuditLog(db)
    supervisor = Supervisor(db, settings.workers, job_timeout=settings.job_timeout,
                            stale_after=settings.stale_after, engine=settings.engine, shards=settings.shards)
    pool = PrimitivePool(settings.primitive_processes, timeout=settings.primitive_timeout)
    limiter = RateLimiter(settings.rate, settings.burst)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        db.migrate()
        import dprm.mining  # noqa: F401 - the miners' import (seconds) before the first request
        if settings.background:
            audit.start()
            supervisor.start()
            pool.start()
        try:
            yield
        finally:
            if settings.background:
                supervisor.stop()
                pool.stop()
                audit.stop()
            else:
                audit.flush()
            db.dispose()

    app = FastAPI(
        title="dprm server", version=__version__, lifespan=lifespan,
        description="Differentially private redescription mining on datasets the analyst never sees. "
                    "Every answer is differentially private and paid from the analyst's budget "
                    "(docs/server.md).",
    )
    app.state.db = db
    app.state.audit = audit
    app.state.supervisor = supervisor
    app.state.pool = pool
    app.state.settings = settings
    app.state.limiter = limiter

    # -- errors ------------------------------------------------------------------------

    def _error(request: Request, code: str, message: str | None = None,
               headers: dict[str, str] | None = None) -> Response:
        request.state.outcome = code
        status, description = ERRORS[code]
        if request.url.path.startswith("/ui/") and not request.url.path.startswith("/ui/static/"):
            from dprm.server.web.routes import error_page  # a page, not the API's JSON

            return error_page(request, status, description, message or description, headers)
        return JSONResponse(error_body(code, message or description), status_code=status, headers=headers)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> Response:
        return _error(request, error.code, error.message, error.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError) -> Response:
        problems = error.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return _error(request, "invalid_json")
        first = problems[0] if problems else {}
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
        message = f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid request"))
        return _error(request, "invalid_request", message[:300])

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large",
                415: "unsupported_media_type"}.get(error.status_code, "invalid_request")
        return _error(request, code)

    @app.exception_handler(OperationalError)
    async def database_error(request: Request, error: OperationalError) -> Response:
        log.error("database error: %s", error)
        request.state.detail = str(error)[:2000]
        return _error(request, "database_unavailable")

    app.add_middleware(Guard, audit=audit, max_body=settings.max_body, max_depth=settings.max_json_depth)

    # -- who is asking -------------------------------------------------------------------

    def granted(connection: Any, who: accounts.Analyst, name: str) -> tuple[DatasetRecord, int, int]:
        """The dataset if the analyst has a budget on it: ``(record, total, spent)``."""
        row = connection.execute(
            select(datasets, budgets.c.total_units, budgets.c.spent_units)
            .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
            .where(datasets.c.active_name == name)
        ).first()
        if row is None:
            raise ApiError("unknown_dataset")
        return DatasetRecord.from_row(row), int(row.total_units), int(row.spent_units)

    def note(request: Request, action: str, dataset: str | None = None, units: int | None = None) -> None:
        request.state.action = action
        if dataset is not None:
            request.state.dataset = dataset
        if units is not None:
            request.state.epsilon_units = units

    # -- public ------------------------------------------------------------------------------

    @app.get("/health", tags=["server"], summary="The server and its database answer (no token).")
    async def health(request: Request) -> dict[str, Any]:
        note(request, "health")
        try:
            await db.aread(lambda connection: connection.exec_driver_sql("SELECT 1").scalar())
        except OperationalError:
            raise ApiError("database_unavailable") from None
        return {"status": "ok", "version": __version__}

    # -- datasets --------------------------------------------------------------------------

    def dataset_view(record: DatasetRecord, total: int, spent: int) -> dict[str, Any]:
        return {"name": record.name, "id_column": record.schema.get("id_column"),
                "views": record.schema["views"], "budget": _budget_view(record.name, total, spent)}

    @app.get("/v1/datasets", tags=["datasets"], responses=_ERRORS,
             summary="The datasets this analyst may use: public schema and budget (never a count).")
    async def list_datasets(request: Request, who: Analyst) -> dict[str, Any]:
        note(request, "list-datasets")
        rows = await db.aread(lambda connection: connection.execute(
            select(datasets, budgets.c.total_units, budgets.c.spent_units)
            .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
            .where(datasets.c.active_name.is_not(None)).order_by(datasets.c.name)).all())
        return {"datasets": [dataset_view(DatasetRecord.from_row(r), int(r.total_units), int(r.spent_units))
                             for r in rows]}

    @app.get("/v1/datasets/{name}", tags=["datasets"], responses=_ERRORS, summary="One dataset's public schema.")
    async def get_dataset(request: Request, who: Analyst, name: str) -> dict[str, Any]:
        note(request, "get-dataset", name[:128])
        return dataset_view(*await db.aread(lambda connection: granted(connection, who, name)))

    @app.get("/v1/datasets/{name}/dummy", tags=["datasets"], responses=_ERRORS,
             summary="Rows synthesised from the public schema only (no budget).")
    def dummy_rows(request: Request, who: Analyst, name: str,
                   rows: Annotated[int, Query(ge=1, le=5000)] = 100,
                   seed: Annotated[Optional[int], Query(ge=0, le=2**32 - 1)] = None) -> dict[str, Any]:
        from dprm.server.dummy import dummy_rows_json

        note(request, "dummy-rows", name[:128])
        with db.read() as connection:
            record, _, _ = granted(connection, who, name)
        return {"dataset": record.name, **dummy_rows_json(record.schema, rows, seed)}

    @app.get("/v1/algorithms", tags=["jobs"], responses=_ERRORS,
             summary="The private algorithms and their parameters with defaults.")
    async def algorithms(request: Request, who: Analyst) -> dict[str, Any]:
        from dprm.server.validation import algorithm_parameters, parameter_limits, private_algorithms

        note(request, "algorithms")
        out = {}
        for name in private_algorithms():
            parameters = algorithm_parameters(name)
            out[name] = {"parameters": {k: (v if isinstance(v, (bool, int, float, str, type(None))) else str(v))
                                        for k, v in parameters.items()},
                         "limits": {k: list(b) for k, b in parameter_limits(name).items()}}
        return {"algorithms": out}

    # -- jobs ------------------------------------------------------------------------------

    @app.post("/v1/jobs", tags=["jobs"], status_code=201, responses={**_ERRORS, 200: {
        "description": "A dry run, or the first job of an idempotency key used before"},
        403: {"model": ErrorBody, "description": "Over budget"},
        409: {"model": ErrorBody, "description": "Idempotency key reused for another request"}},
        summary="Submit a miner run; its epsilon is charged before any row is read.")
    def submit_job(request: Request, response: Response, who: Analyst, body: JobRequest) -> dict[str, Any]:
        answer, status = submit(request, who, body)
        response.status_code = status
        return answer

    def submit(request: Request, who: accounts.Analyst, body: JobRequest) -> tuple[dict[str, Any], int]:
        """A job submission (or dry run) and its HTTP status: the API's and the web pages' one path."""
        from dprm.server.validation import check_job

        note(request, "submit-job" if not body.dry_run else "dry-run-job", body.dataset)
        units = _units(body.epsilon)
        request.state.epsilon_units = units
        with db.read() as connection:
            record, total, spent = granted(connection, who, body.dataset)
        spec = check_job(body.algorithm, dict(body.parameters), units)
        if body.dry_run:
            return _dry_run(record.name, units, total, spent, body.dummy,
                            {"algorithm": spec.algorithm, "parameters": spec.parameters}), 200
        parameters = {k: v for k, v in spec.parameters.items() if k != "epsilon"}
        dummy_rows = body.dummy_rows if body.dummy else None
        # the request as checked (epsilon in units, parameters as typed), so 0.1 and "0.1" are one request
        digest = jobs.request_digest({"dataset": record.name, "algorithm": spec.algorithm, "parameters": parameters,
                                      "units": units, "dummy": body.dummy, "dummy_rows": dummy_rows})
        row, created = jobs.submit(db, who.id, record.id, algorithm=spec.algorithm, parameters=parameters,
                                   units=units, dummy=body.dummy, dummy_rows=dummy_rows,
                                   idempotency_key=body.idempotency_key, digest=digest,
                                   max_active=settings.max_active_jobs)
        if not created:
            request.state.outcome = "idempotent_replay"
            request.state.epsilon_units = 0
            return jobs.job_view(row, record.name), 200
        return jobs.job_view(row, record.name), 201

    @app.get("/v1/jobs", tags=["jobs"], responses=_ERRORS, summary="The analyst's jobs, newest first.")
    async def list_jobs(request: Request, who: Analyst,
                  limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict[str, Any]:
        from dprm.server.tables import jobs as jobs_table

        note(request, "list-jobs")
        rows = await db.aread(lambda connection: connection.execute(
            select(jobs_table, datasets.c.name.label("dataset_name"))
            .join(datasets, datasets.c.id == jobs_table.c.dataset_id)
            .where(jobs_table.c.analyst_id == who.id).order_by(jobs_table.c.id.desc()).limit(limit)).all())
        return {"jobs": [jobs.job_view(r, r.dataset_name) for r in rows]}

    @app.get("/v1/jobs/{job_id}", tags=["jobs"], responses=_ERRORS, summary="A job's status and progress.")
    async def job_status(request: Request, who: Analyst, job_id: str) -> dict[str, Any]:
        note(request, "job-status")
        row, name = await db.aread(lambda connection: jobs.find_job(connection, who.id, job_id[:64]))
        return jobs.job_view(row, name)

    @app.get("/v1/jobs/{job_id}/result", tags=["jobs"], responses={**_ERRORS, 409: {
        "model": ErrorBody, "description": "Not done, failed or cancelled"}},
        summary="The result of a done job: a dprm.redescriptions/1 document.")
    async def job_result(request: Request, who: Analyst, job_id: str) -> Response:
        note(request, "job-result")
        row, _ = await db.aread(lambda connection: jobs.find_job(connection, who.id, job_id[:64]))
        if row.status == "failed":
            raise ApiError("job_failed", f"the job failed ({row.error_code}); it has no result")
        if row.status == "cancelled":
            raise ApiError("job_cancelled")
        if row.status != "done" or row.result is None:
            raise ApiError("job_not_done", f"the job is {row.status}; it has no result yet")
        return Response(row.result, media_type="application/json")

    @app.post("/v1/jobs/{job_id}/cancel", tags=["jobs"], responses={**_ERRORS, 409: {
        "model": ErrorBody, "description": "The job has finished"}},
        summary="Cancel a job: queued, its charge is refunded; running, it is kept if rows were read.")
    def cancel_job(request: Request, who: Analyst, job_id: str) -> dict[str, Any]:
        return cancel(request, who, job_id)

    def cancel(request: Request, who: accounts.Analyst, job_id: str) -> dict[str, Any]:
        """Cancel one of the analyst's jobs (API and web pages)."""
        note(request, "cancel-job")
        row = jobs.cancel(db, who.id, job_id[:64])
        with db.read() as connection:
            row, name = jobs.find_job(connection, who.id, row.public_id)
        return jobs.job_view(row, name)

    # -- primitives ---------------------------------------------------------------------------

    def primitive(request: Request, who: accounts.Analyst, kind: str, body: Any) -> dict[str, Any]:
        from dprm.server.validation import check_query, check_tree

        note(request, kind if not body.dry_run else f"dry-run-{kind}", body.dataset)
        units = _units(body.epsilon)
        request.state.epsilon_units = units
        with db.read() as connection:
            record, total, spent = granted(connection, who, body.dataset)
        payload = body.model_dump(include={"left", "right", "confidence", "left_tree", "right_tree"})
        if kind == "redescription-statistics":
            check_query(body.left, record.schema, "left", "left")
            check_query(body.right, record.schema, "right", "right")
        else:
            check_tree(body.left_tree, record.schema, "left", "left_tree")
            check_tree(body.right_tree, record.schema, "right", "right_tree")
        if body.dry_run:
            return _dry_run(record.name, units, total, spent, body.dummy, {"primitive": kind})
        charge_id = None
        if not body.dummy:
            def take(connection: Any) -> int | None:
                taken = budget.reserve(connection, who.id, record.id, units, kind="primitive", action=kind)
                if taken is None:
                    raise jobs._over_budget(connection, who.id, record.id, units)
                return taken

            charge_id = db.transaction(take)
        else:
            request.state.epsilon_units = 0
        task = {"kind": kind, "dataset": record.to_json(), "epsilon_units": units, "request": payload,
                "dummy": body.dummy, "dummy_rows": body.dummy_rows}
        try:
            answer = pool.run(task)
        except ApiError as error:  # the process died or timed out: rows may have been read
            if charge_id is not None:
                db.transaction(lambda c: budget.keep(c, charge_id, [], unspent_step=f"{kind} failed ({error.code})"))
            raise
        if not answer["ok"]:
            request.state.detail = answer.get("owner_error")
            if charge_id is not None:
                if answer["touched"]:
                    db.transaction(lambda c: budget.keep(
                        c, charge_id, [], unspent_step=f"{kind} failed after reading the rows: no answer"))
                else:
                    db.transaction(lambda c: budget.refund(c, charge_id))
            raise ApiError(answer["code"], answer.get("message"))
        releases = [budget.Release(step, mechanism, _fraction(eps)) for step, mechanism, eps in answer["releases"]]
        result = answer["result"]
        if charge_id is not None:
            # The ledger rows are committed before the answer leaves the server.
            db.transaction(lambda c: budget.keep(c, charge_id, releases))
            with db.read() as connection:
                state = budget.remaining(connection, who.id, record.id)
            result["budget"] = _budget_view(record.name, *state)
        result.update({"dataset": record.name, "dummy": body.dummy, "epsilon": units_float(units),
                       "epsilon_exact": units_text(units)})
        return result

    @app.post("/v1/primitives/redescription-statistics", tags=["primitives"], responses={**_ERRORS, 403: {
        "model": ErrorBody, "description": "Over budget"}},
        summary="Noisy supports, intersection, Jaccard index and p-value (with intervals) of a query pair.")
    def redescription_statistics(request: Request, who: Analyst, body: StatisticsRequest) -> dict[str, Any]:
        return primitive(request, who, "redescription-statistics", body)

    @app.post("/v1/primitives/leaf-pair-counts", tags=["primitives"], responses={**_ERRORS, 403: {
        "model": ErrorBody, "description": "Over budget"}},
        summary="Noisy counts of every (left leaf, right leaf) cell of two trees the analyst sends.")
    def leaf_pair_counts(request: Request, who: Analyst, body: LeafPairsRequest) -> dict[str, Any]:
        return primitive(request, who, "leaf-pair-counts", body)

    # -- budget and ledger ---------------------------------------------------------------------

    @app.get("/v1/budget", tags=["budget"], responses=_ERRORS, summary="The analyst's budgets (exact and as numbers).")
    async def get_budget(request: Request, who: Analyst,
                   dataset: Annotated[Optional[str], Query(max_length=64)] = None) -> dict[str, Any]:
        note(request, "budget", dataset)

        def read(connection: Any) -> list[dict[str, Any]]:
            if dataset is not None:
                record, total, spent = granted(connection, who, dataset)
                return [_budget_view(record.name, total, spent)]
            rows = connection.execute(
                select(datasets.c.name, budgets.c.total_units, budgets.c.spent_units)
                .join(budgets, budgets.c.dataset_id == datasets.c.id)
                .where(and_(budgets.c.analyst_id == who.id, datasets.c.active_name.is_not(None)))
                .order_by(datasets.c.name)).all()
            return [_budget_view(r.name, int(r.total_units), int(r.spent_units)) for r in rows]

        return {"budgets": await db.aread(read)}

    @app.get("/v1/ledger", tags=["budget"], responses=_ERRORS, summary="The analyst's own ledger: one row per release.")
    async def get_ledger(request: Request, who: Analyst,
                   dataset: Annotated[Optional[str], Query(max_length=64)] = None,
                   limit: Annotated[int, Query(ge=1, le=10000)] = 1000) -> dict[str, Any]:
        from dprm.server.tables import jobs as jobs_table

        note(request, "ledger", dataset)

        def read(connection: Any) -> list[Any]:
            query = (select(ledger, datasets.c.name.label("dataset_name"), jobs_table.c.public_id)
                     .join(datasets, datasets.c.id == ledger.c.dataset_id)
                     .outerjoin(jobs_table, jobs_table.c.id == ledger.c.job_id)
                     .where(ledger.c.analyst_id == who.id))
            if dataset is not None:
                record, _, _ = granted(connection, who, dataset)
                query = query.where(ledger.c.dataset_id == record.id)
            return connection.execute(query.order_by(ledger.c.id.desc()).limit(limit)).all()

        rows = await db.aread(read)
        return {"ledger": [{"at": r.created_at, "dataset": r.dataset_name, "job": r.public_id, "charge": r.charge_id,
                            "step": r.step, "mechanism": r.mechanism, "epsilon": r.epsilon,
                            "epsilon_exact": r.epsilon_exact} for r in rows]}

    # The web pages (/ui) act through the same functions as the endpoints above.
    app.state.service = Service(granted=granted, submit=submit, cancel=cancel, primitive=primitive,
                                budget_view=_budget_view, note=note)
    from dprm.server.web.routes import mount

    mount(app)
    return app


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


def _fraction(text: str) -> Any:
    from fractions import Fraction

    return Fraction(text)


def _dry_run(dataset: str, units: int, total: int, spent: int, dummy: bool, what: dict[str, Any]) -> dict[str, Any]:
    cost = 0 if dummy else units
    left = max(total - spent, 0)
    return {"dry_run": True, "dataset": dataset, **what, "dummy": dummy,
            "epsilon": units_float(units), "epsilon_exact": units_text(units),
            "cost": units_float(cost), "cost_exact": units_text(cost),
            "remaining": units_float(left), "remaining_exact": units_text(left),
            "affordable": cost <= left}
