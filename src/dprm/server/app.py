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
from typing import Any, AsyncIterator

from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from dprm import __version__
from dprm.errors import ParameterError
from dprm.server.api import routers
from dprm.server.api.deps import current_analyst  # noqa: F401 - its home before dprm.server.api
from dprm.server.api.deps import plain_query
from dprm.server.api.service import SERVICE, Service
from dprm.server.api_models import validation_message
from dprm.server.audit import AuditLog
from dprm.server.database import Database
from dprm.server.errors import ERRORS, ApiError, error_body
from dprm.server.guard import Guard, is_page_path
from dprm.server.pool import PrimitivePool
from dprm.server.ratelimit import RateLimiter, SharedRateLimiter
from dprm.server.supervisor import Supervisor

__all__ = ["create_app", "ServerSettings", "Service"]

log = logging.getLogger("dprm.server")


@dataclass(kw_only=True)
class ServerSettings:
    """The settings of one server (see :func:`create_app`)."""

    workers: int = 1
    primitive_processes: int = 1
    rate: float = 20.0
    burst: int = 60
    guess_rate: float = 0.2
    guess_burst: int = 30
    max_body: int = 1_000_000
    body_timeout: float = 30.0
    max_json_depth: int = 64
    job_timeout: float = 3600.0
    stale_after: float = 60.0
    primitive_timeout: float = 300.0
    background: bool = True
    engine: str | None = None
    shards: int = 2
    max_active_jobs: int = 16
    docs: bool = False
    supervise: bool = True

    def __post_init__(self) -> None:
        if self.workers < 0 or self.primitive_processes < 1:
            raise ParameterError("--workers must be at least 0 and primitive processes at least 1")
        if self.max_active_jobs < 1:
            raise ParameterError(f"--max-active-jobs must be at least 1, not {self.max_active_jobs}")
        if self.shards < 1:
            raise ParameterError(f"--shards must be at least 1, not {self.shards}")


# -- errors ----------------------------------------------------------------------------------------


def _error(request: Request, code: str, message: str | None = None,
           headers: dict[str, str] | None = None) -> Response:
    """The answer of an error code: the API's JSON body, or an error page under ``/ui``."""
    request.state.outcome = code
    status, description = ERRORS[code]
    if is_page_path(request.url.path):
        from dprm.server.web.pages import error_page  # a page, not the API's JSON

        return error_page(request, code, message, headers)
    return JSONResponse(error_body(code, message or description), status_code=status, headers=headers)


async def api_error(request: Request, error: ApiError) -> Response:
    return _error(request, error.code, error.message, error.headers)


async def validation_error(request: Request, error: RequestValidationError) -> Response:
    problems = error.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        return _error(request, "invalid_json")
    first = problems[0] if problems else {}
    if tuple(first.get("loc", ())) == ("body",) and first.get("type") == "missing":  # said "Field required"
        return _error(request, "invalid_request", "the request has no body: send a JSON object")
    if tuple(first.get("loc", ()))[:1] == ("body",):  # the body's problems, located in the body as sent
        in_body = [{**p, "loc": tuple(p["loc"])[1:]} for p in problems if tuple(p.get("loc", ()))[:1] == ("body",)]
        message = validation_message(in_body, *([error.body] if error.body is not None else []))
    else:  # a query's or a path's
        message = validation_message(problems)
    return _error(request, "invalid_request", message[:300])


async def http_error(request: Request, error: StarletteHTTPException) -> Response:
    code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large",
            415: "unsupported_media_type"}.get(error.status_code, "invalid_request")
    headers = dict(error.headers or {})
    if error.status_code == 405:  # Allow: every method of the address (its routes are one a method)
        headers["Allow"] = ", ".join(_methods_of(request))
    return _error(request, code, headers=headers or None)


def _methods_of(request: Request) -> list[str]:
    """The methods the routes at the request's address take (``HEAD`` with ``GET``: the
    :class:`~dprm.server.guard.Guard` answers it as one)."""
    methods = {method for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
               if any(route.matches(dict(request.scope, method=method))[0] == Match.FULL
                      for route in request.app.router.routes)}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


async def database_error(request: Request, error: OperationalError) -> Response:
    log.error("database error: %s", error)
    request.state.detail = str(error)[:2000]
    return _error(request, "database_unavailable")


# -- the application --------------------------------------------------------------------------------


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Migrate the database and start the audit thread, the supervisor and the pool; stop them after."""
    state = app.state
    state.db.migrate()
    import dprm.mining  # noqa: F401 - the miners' import (seconds) before the first request
    supervise = state.settings.background and state.settings.supervise
    if state.settings.background:
        state.audit.start()
        if supervise:
            state.supervisor.start()
        state.pool.start()
    try:
        yield
    finally:
        if state.settings.background:
            if supervise:
                state.supervisor.stop()
            state.pool.stop()
            state.audit.stop()
        else:
            state.audit.flush()
        state.db.dispose()


def create_app(db_url: str, settings: ServerSettings | None = None, *,
               limiter: RateLimiter | SharedRateLimiter | None = None,
               guesses: RateLimiter | SharedRateLimiter | None = None, **options: Any) -> FastAPI:
    """The API of a server on the database ``db_url`` (migrated on start).

    Parameters
    ----------
    db_url : str
        SQLite file or URL, or a PostgreSQL URL (:func:`dprm.server.database.normalise_url`).
    settings : ServerSettings, optional
        Or the same as keyword options: ``workers`` (job processes; 0 keeps jobs
        queued), ``primitive_processes``, ``rate``/``burst`` (per-token rate limit),
        ``guess_rate``/``guess_burst`` (invalid tokens an address may send: :mod:`dprm.server.ratelimit`),
        ``max_body`` (bytes), ``max_json_depth``, ``body_timeout`` (seconds a body may take: 408), ``job_timeout``, ``stale_after``,
        ``primitive_timeout`` (seconds), ``background`` (False: no supervisor, pool
        or audit thread is started; for tests of the request layer), ``engine``
        (None: jobs count in their worker process; ``""``: the rows of a job whose
        miner counts through the engine are sharded on a local Ray on loopback;
        ``"ray://HOST:PORT"``: on that Ray cluster), ``shards`` and ``max_active_jobs``
        (an analyst's jobs queued or running at once; more is 429 ``too_many_jobs``),
        ``docs`` (serve ``/docs`` and ``/redoc``: :mod:`dprm.server.api.docs`), ``supervise``
        (False: no supervisor in this process; one of the processes of ``dprm serve
        --processes N`` runs it).
    limiter : RateLimiter or SharedRateLimiter, optional
        The per-token rate limit's buckets (default: this process's own, from
        ``rate``/``burst``); ``dprm serve --processes N`` gives every process one
        :class:`~dprm.server.ratelimit.SharedRateLimiter`.
    guesses : RateLimiter or SharedRateLimiter, optional
        The buckets of invalid tokens by address (default: this process's own, from
        ``guess_rate``/``guess_burst``); shared the same way.
    """
    settings = settings or ServerSettings(**options)
    db = Database(db_url)
    audit = AuditLog(db)
    app = FastAPI(
        title="dprm server", version=__version__, lifespan=lifespan, dependencies=[Depends(plain_query)],
        docs_url=None, redoc_url=None,  # third-party scripts: only when asked (dprm.server.api.docs)
        description="Differentially private redescription mining on datasets the analyst never sees. "
                    "Every answer is differentially private and paid from the analyst's budget "
                    "(docs/server.md).",
    )
    app.state.db = db
    app.state.audit = audit
    app.state.supervisor = Supervisor(db, settings.workers, job_timeout=settings.job_timeout,
                                      stale_after=settings.stale_after, engine=settings.engine,
                                      shards=settings.shards)
    app.state.pool = PrimitivePool(settings.primitive_processes, timeout=settings.primitive_timeout)
    app.state.settings = settings
    app.state.limiter = limiter if limiter is not None else RateLimiter(settings.rate, settings.burst)
    app.state.guesses = guesses if guesses is not None else RateLimiter(settings.guess_rate, settings.guess_burst)
    # The web pages (/ui) act through the same functions as the endpoints.
    app.state.service = SERVICE

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(OperationalError, database_error)
    app.add_middleware(Guard, audit=audit, max_body=settings.max_body, max_depth=settings.max_json_depth,
                       body_timeout=settings.body_timeout)

    for router in routers():
        app.include_router(router)
    if settings.docs:
        from dprm.server.api import docs

        app.include_router(docs.router(app.openapi_url, app.title))
    from dprm.server.web.routes import mount

    mount(app)
    return app
