"""The pages under ``/ui``: sign-in, the analyst's side, the data owner's side.

==========================================  ==========================================
``GET  /ui/signin``, ``POST /ui/signin``    sign in with a token (analyst or owner)
``POST /ui/signout``                        end the session
``GET  /ui/datasets``                       analyst: datasets with schema and budget
``GET  /ui/datasets/{name}``                analyst: job form, statistics form
``POST /ui/datasets/{name}/cost``           analyst: live dry-run cost (HTMX partial)
``POST /ui/datasets/{name}/jobs``           analyst: dry run or submit a job
``POST /ui/datasets/{name}/statistics``     analyst: redescription-statistics primitive
``GET  /ui/jobs``                           analyst: jobs with live progress
``GET  /ui/jobs/{id}``                      analyst: a job, its result and ledger
``GET  /ui/jobs/{id}/result.json``          analyst: the spec's JSON document
``GET  /ui/jobs/{id}/queries.txt``          analyst: the clired queries file
``POST /ui/jobs/{id}/cancel``               analyst: cancel
``GET  /ui/owner``                          owner: datasets, analysts, budgets, jobs
``POST /ui/owner/...``                      owner: add dataset, analyst; disable,
                                            enable, rotate; grant budget
``GET  /ui/owner/audit``                    owner: the audit log with filters
``GET  /ui/owner/jobs``                     owner: every analyst's jobs
==========================================  ==========================================

Every analyst action goes through the API's functions (:class:`dprm.server.app.Service`)
with the session's analyst: the same dataset grant (another analyst's job is 404),
the same checks and the same charge before any row is read. Every ``POST`` needs a
live session and its form token (:mod:`~dprm.server.web.csrf`); without a session
it is 401, with a wrong or missing form token 403, and nothing is done. Answers
carry a strict Content-Security-Policy (scripts and styles from this server only).
"""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from dprm.errors import DprmError
from dprm.server import accounts, jobs
from dprm.server.errors import ERRORS, ApiError
from dprm.server.units import fraction_text
from dprm.server.web import csrf
from dprm.server.web.forms import FormError, job_fields, job_request, statistics_request
from dprm.server.web.sessions import COOKIE, LIFETIME, Session, close_session, find_session, open_session

__all__ = ["mount", "build_router", "SECURITY_HEADERS", "STATIC", "TEMPLATES"]

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
TEMPLATES = HERE / "templates"

#: Headers of every page: only this server's scripts and styles, no framing, no sniffing.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

#: Result table columns that can be sorted, and how to read them from a redescription.
SORT_KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "rank": lambda r: r["rank"],
    "jaccard": lambda r: r["noisy"].get("jaccard"),
    "support_left": lambda r: r["noisy"].get("support_left"),
    "support_right": lambda r: r["noisy"].get("support_right"),
    "intersection": lambda r: r["noisy"].get("intersection"),
    "p_value": lambda r: r["noisy"].get("p_value"),
    "pruned": lambda r: bool(r.get("pruned")),
}


def _when(seconds: float | None) -> str:
    """A time of the database as UTC text; one no calendar holds (stored by an older dprm) as its number."""
    if seconds is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g}"


@lru_cache(maxsize=1)
def _shared_environment() -> Any:
    return _environment()


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = _when
    env.globals["submission_key"] = lambda: secrets.token_hex(12)  # a job form's one-time key
    env.filters["num"] = _number_text
    env.filters["pct"] = lambda x: f"{100 * max(0.0, min(1.0, float(x or 0))):.1f}"
    return env


def _number_text(value: Any, digits: int = 3) -> str:
    """A figure for a table: integers as they are, others with ``digits`` significant digits."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if number != 0 and (abs(number) < 1e-3 or abs(number) >= 1e6):
        return f"{number:.{digits - 1}e}"
    return f"{number:.{digits}g}" if abs(number) < 1 else f"{number:,.1f}"


def support_bar(noisy: dict[str, Any], interval: dict[str, Any] | None) -> dict[str, Any]:
    """The support bar of a redescription: |L only|, |L ∩ R|, |R only| as shares of the bar.

    The three parts come from the noisy statistics (``support_left − intersection``,
    ``intersection``, ``support_right − intersection``, each clipped at 0), laid out
    left to right on a bar as long as their sum. Intervals, where the result has them,
    are drawn where they belong on that bar: the interval of |L| around the right end
    of L (the end of "both"), the interval of |R| around the left end of R (the start
    of "both"), both clipped to the bar; the interval of |L ∩ R| is the middle part's.
    The parts "left only" and "right only" have no interval of their own (a
    difference of two noisy counts), so none is shown for them.

    Examples
    --------
    >>> bar = support_bar({"support_left": 30, "support_right": 40, "intersection": 20},
    ...                   {"support_left": [25, 35], "support_right": [30, 45], "intersection": [15, 25]})
    >>> [(p["label"], p["value"], round(p["share"], 2), p["interval"]) for p in bar["parts"]]
    [('left only', 10, 0.2, None), ('both', 20, 0.4, [15, 25]), ('right only', 20, 0.4, None)]
    >>> [(w["label"], round(w["start"], 2), round(w["end"], 2)) for w in bar["whiskers"]]
    [('|L|', 0.5, 0.7), ('|R|', 0.1, 0.4)]
    """
    left = float(noisy.get("support_left") or 0)
    right = float(noisy.get("support_right") or 0)
    both = float(noisy.get("intersection") or 0)
    values = [max(left - both, 0.0), max(both, 0.0), max(right - both, 0.0)]
    total = sum(values) or 1.0
    interval = interval or {}
    parts = []
    offset = 0.0
    for label, value, key in zip(("left only", "both", "right only"), values, (None, "intersection", None)):
        share = value / total
        parts.append({"label": label, "value": round(value) if float(value).is_integer() else value,
                      "share": share, "offset": offset, "interval": interval.get(key) if key else None})
        offset += share
    whiskers = []

    def clip(x: float) -> float:
        return min(max(x, 0.0), 1.0)

    if interval.get("support_left"):
        low, high = interval["support_left"]
        whiskers.append({"label": "|L|", "interval": interval["support_left"], "start": clip(low / total),
                         "end": clip(high / total), "row": 1})
    if interval.get("support_right"):
        low, high = interval["support_right"]
        whiskers.append({"label": "|R|", "interval": interval["support_right"], "start": clip(1 - high / total),
                         "end": clip(1 - low / total), "row": 2})
    return {"parts": parts, "whiskers": whiskers, "total": total}


def error_page(request: Request, status: int, title: str, message: str,
               headers: dict[str, str] | None = None) -> HTMLResponse:
    """The pages' error page, for an answer the application gives before any page handler
    (a malformed query string, a wrong method, the rate limit) to an address under ``/ui``."""
    page = _shared_environment().get_template("error.html").render(session=None, request_path=request.url.path,
                                                            csrf_field=csrf.FIELD, title=title, message=message)
    return HTMLResponse(page, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})


def mount(app: Any) -> None:
    """Add the pages (``/ui``) and their static files (``/ui/static``) to the server's app."""
    from starlette.staticfiles import StaticFiles

    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    app.include_router(build_router())


def build_router() -> APIRouter:
    """The router of every page (mounted by :func:`dprm.server.web.mount`)."""
    router = APIRouter(prefix="/ui", include_in_schema=False)
    env = _environment()

    # -- rendering and answers -------------------------------------------------------------------

    def render(request: Request, template: str, status: int = 200, session: Session | None = None,
               **context: Any) -> HTMLResponse:
        page = env.get_template(template).render(session=session, request_path=request.url.path,
                                                 csrf_field=csrf.FIELD, **context)
        return HTMLResponse(page, status_code=status, headers=SECURITY_HEADERS)

    def problem(request: Request, status: int, title: str, message: str, session: Session | None = None,
                outcome: str | None = None) -> HTMLResponse:
        request.state.outcome = outcome or f"http_{status}"
        return render(request, "error.html", status, session, title=title, message=message)

    def api_problem(request: Request, error: ApiError, session: Session | None) -> HTMLResponse:
        status, description = ERRORS[error.code]
        request.state.outcome = error.code
        return render(request, "error.html", status, session, title=description, message=error.message or description)

    def redirect(url: str) -> RedirectResponse:
        return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)

    def is_htmx(request: Request) -> bool:
        return request.headers.get("hx-request") == "true"

    # -- who is asking -------------------------------------------------------------------------------

    async def session_of(request: Request) -> Session | None:
        cookie = request.cookies.get(COOKIE)
        if not cookie:
            return None
        db = request.app.state.db
        found = await db.aread(lambda connection: find_session(connection, cookie))
        if found is not None:
            if found.role == "analyst":
                request.state.analyst_id = found.principal_id
            else:
                request.state.detail = f"owner {found.name}"
            if request.app.state.limiter.allow(found.token_id) > 0:
                raise ApiError("rate_limited")
        return found

    async def for_reading(request: Request, role: str) -> Session | Response:
        """The session of a page's GET: a sign-in redirect without one, 403 for the other role."""
        found = await session_of(request)
        if found is None:
            if is_htmx(request):  # a refresh of part of a page whose session ended: the whole page goes
                return Response(status_code=204, headers={**SECURITY_HEADERS, "HX-Redirect": "/ui/signin"})
            return redirect("/ui/signin")
        if found.role != role:
            return problem(request, 403, "Not for this account",
                           f"This page is for {role}s; you are signed in as {found.role} {found.name}.", found,
                           "wrong_role")
        return found

    async def for_posting(request: Request, role: str) -> tuple[Session | None, dict[str, Any], Response | None]:
        """Session and form of a POST; an answer instead when it is refused (nothing done)."""
        found = await session_of(request)
        form = dict(await request.form())
        if found is None:
            if is_htmx(request):  # a live form part whose session ended: to the sign-in page, not a page in a box
                request.state.outcome = "missing_session"
                return None, form, Response(status_code=204, headers={**SECURITY_HEADERS, "HX-Redirect": "/ui/signin"})
            return None, form, problem(request, 401, "Sign in first",
                                       "This form needs a signed-in session; nothing was done.",
                                       outcome="missing_session")
        given = form.get(csrf.FIELD) or request.headers.get(csrf.HEADER)
        if not csrf.matches(found.csrf, str(given) if given is not None else None):
            return found, form, problem(request, 403, "Form expired",
                                        "The form's security token is missing or wrong; reload the page and try "
                                        "again. Nothing was done.", found, "csrf_refused")
        if found.role != role:
            return found, form, problem(request, 403, "Not for this account",
                                        f"This action is for {role}s; nothing was done.", found, "wrong_role")
        return found, form, None

    # -- sign-in ------------------------------------------------------------------------------------------

    @router.get("", response_class=HTMLResponse)
    @router.get("/", response_class=HTMLResponse)
    async def home(request: Request) -> Response:
        request.state.action = "ui-home"
        found = await session_of(request)
        if found is None:
            return redirect("/ui/signin")
        return redirect("/ui/datasets" if found.role == "analyst" else "/ui/owner")

    def signin_page(request: Request, status: int = 200, message: str | None = None) -> HTMLResponse:
        token = csrf.new_token()
        response = render(request, "signin.html", status, None, signin_token=token, message=message)
        response.set_cookie(csrf.SIGNIN_COOKIE, token, max_age=3600, httponly=True, samesite="strict",
                            secure=request.url.scheme == "https", path="/ui")
        return response

    @router.get("/signin", response_class=HTMLResponse)
    async def signin_form(request: Request) -> Response:
        request.state.action = "ui-signin-page"
        return signin_page(request)

    @router.post("/signin", response_class=HTMLResponse)
    async def signin(request: Request) -> Response:
        from dprm.server.owners import authenticate_owner

        request.state.action = "ui-signin"
        form = await request.form()
        if not csrf.matches(request.cookies.get(csrf.SIGNIN_COOKIE), str(form.get(csrf.FIELD) or "")):
            request.state.outcome = "csrf_refused"
            return signin_page(request, 403, "The sign-in form expired; please try again.")
        token = str(form.get("token") or "").strip()
        db = request.app.state.db

        def check(connection: Any) -> tuple[str, Any, str | None]:
            analyst, problem_code = accounts.authenticate(connection, token)
            if analyst is not None:
                return "analyst", analyst, None
            owner, owner_problem = authenticate_owner(connection, token)
            if owner is not None:
                return "owner", owner, None
            return "", None, problem_code if problem_code != "invalid_token" else owner_problem

        role, who, problem_code = await db.aread(check)
        if who is None:
            request.state.outcome = problem_code or "invalid_token"
            messages = {"token_disabled": "This token is disabled.", "token_expired": "This token has expired.",
                        "missing_token": "Paste your token."}
            return signin_page(request, 401, messages.get(problem_code or "", "This token is not valid."))
        if role == "analyst":
            request.state.analyst_id = who.id
        cookie, _ = await run_in_threadpool(open_session, db, role, who.id, who.token_id)
        response = redirect("/ui/datasets" if role == "analyst" else "/ui/owner")
        response.set_cookie(COOKIE, cookie, max_age=int(LIFETIME), httponly=True, samesite="strict",
                            secure=request.url.scheme == "https", path="/ui")
        response.delete_cookie(csrf.SIGNIN_COOKIE, path="/ui")
        return response

    @router.post("/signout", response_class=HTMLResponse)
    async def signout(request: Request) -> Response:
        request.state.action = "ui-signout"
        found = await session_of(request)
        form = await request.form()
        if found is None:
            return redirect("/ui/signin")
        if not csrf.matches(found.csrf, str(form.get(csrf.FIELD) or request.headers.get(csrf.HEADER) or "")):
            return problem(request, 403, "Form expired", "Reload the page and sign out again.", found, "csrf_refused")
        await run_in_threadpool(close_session, request.app.state.db, request.cookies.get(COOKIE))
        response = redirect("/ui/signin")
        response.delete_cookie(COOKIE, path="/ui")
        return response

    # -- analyst: datasets ------------------------------------------------------------------------------

    def analyst_datasets(request: Request, who: accounts.Analyst) -> list[dict[str, Any]]:
        from sqlalchemy import and_, select

        from dprm.server.datasets import DatasetRecord
        from dprm.server.tables import budgets, datasets

        service = request.app.state.service
        with request.app.state.db.read() as connection:
            rows = connection.execute(
                select(datasets, budgets.c.total_units, budgets.c.spent_units)
                .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
                .where(datasets.c.active_name.is_not(None)).order_by(datasets.c.name)).all()
        out = []
        for row in rows:
            record = DatasetRecord.from_row(row)
            out.append({"name": record.name, "views": record.schema["views"],
                        "id_column": record.schema.get("id_column"),
                        "budget": service.budget_view(record.name, int(row.total_units), int(row.spent_units))})
        return out

    @router.get("/datasets", response_class=HTMLResponse)
    async def datasets_page(request: Request) -> Response:
        request.state.action = "ui-datasets"
        found = await for_reading(request, "analyst")
        if isinstance(found, Response):
            return found
        items = await run_in_threadpool(analyst_datasets, request, found.analyst)
        return render(request, "datasets.html", session=found, datasets=items)

    def dataset_context(request: Request, who: accounts.Analyst, name: str, algorithm: str | None) -> dict[str, Any]:
        from dprm.server.validation import private_algorithms

        service = request.app.state.service
        with request.app.state.db.read() as connection:
            record, total, spent = service.granted(connection, who, name)
        algorithms = list(private_algorithms())
        chosen = algorithm if algorithm in algorithms else algorithms[0]
        return {"dataset": {"name": record.name, "views": record.schema["views"],
                            "id_column": record.schema.get("id_column"),
                            "budget": service.budget_view(record.name, total, spent)},
                "schema": record.schema, "algorithms": algorithms, "algorithm": chosen,
                "fields": job_fields(chosen), "form": {}, "cost": None, "message": None,
                "stats_form": {}, "stats": None, "stats_cost": None, "stats_message": None}

    async def dataset_page(request: Request, found: Session, name: str, algorithm: str | None,
                           status: int = 200, **updates: Any) -> Response:
        try:
            context = await run_in_threadpool(dataset_context, request, found.analyst, name, algorithm)
        except ApiError as error:
            return api_problem(request, error, found)
        context.update(updates)
        if context["form"]:
            context["fields"] = job_fields(context["algorithm"])
        return render(request, "dataset.html", status, found, **context)

    @router.get("/datasets/{name}", response_class=HTMLResponse)
    async def dataset_view(request: Request, name: str, algorithm: str | None = None) -> Response:
        request.state.action = "ui-dataset"
        request.state.dataset = name[:128]
        found = await for_reading(request, "analyst")
        if isinstance(found, Response):
            return found
        return await dataset_page(request, found, name, algorithm)

    def dry_run_job(request: Request, found: Session, form: dict[str, Any], name: str) -> dict[str, Any]:
        body = job_request(form, name, dry_run=True)
        answer, _ = request.app.state.service.submit(request, found.analyst, body)
        return answer

    @router.post("/datasets/{name}/cost", response_class=HTMLResponse)
    async def job_cost(request: Request, name: str) -> Response:
        """The live cost of the job form (an HTMX partial; the API's dry run)."""
        request.state.action = "ui-job-cost"
        found, form, refused = await for_posting(request, "analyst")
        if refused is not None:
            return refused
        try:
            cost = await run_in_threadpool(dry_run_job, request, found, form, name)
            return render(request, "_cost.html", session=found, cost=cost, message=None)
        except FormError as error:
            return render(request, "_cost.html", session=found, cost=None, message=error.message)
        except ApiError as error:
            return render(request, "_cost.html", session=found, cost=None, message=error.message)

    @router.post("/datasets/{name}/jobs", response_class=HTMLResponse)
    async def submit_job(request: Request, name: str) -> Response:
        request.state.action = "ui-job-form"
        found, form, refused = await for_posting(request, "analyst")
        if refused is not None:
            return refused
        dry = form.get("action") != "run"
        algorithm = str(form.get("algorithm", ""))

        def work() -> tuple[dict[str, Any], int]:
            body = job_request(form, name, dry_run=dry)
            return request.app.state.service.submit(request, found.analyst, body)

        try:
            answer, _ = await run_in_threadpool(work)
        except FormError as error:
            request.state.outcome = "invalid_request"
            return await dataset_page(request, found, name, algorithm, error.status, form=form, message=error.message)
        except ApiError as error:
            request.state.outcome = error.code
            status = ERRORS[error.code][0]
            if error.code == "unknown_dataset":
                return api_problem(request, error, found)
            return await dataset_page(request, found, name, algorithm, status, form=form,
                                      message=error.message or ERRORS[error.code][1])
        if dry:
            return await dataset_page(request, found, name, algorithm, form=form, cost=answer)
        return redirect(f"/ui/jobs/{answer['id']}")

    @router.post("/datasets/{name}/statistics", response_class=HTMLResponse)
    async def statistics(request: Request, name: str) -> Response:
        """The redescription-statistics primitive of a query pair typed in clired syntax."""
        request.state.action = "ui-statistics-form"
        found, form, refused = await for_posting(request, "analyst")
        if refused is not None:
            return refused
        dry = form.get("action") != "run"
        service = request.app.state.service

        def work() -> dict[str, Any]:
            with request.app.state.db.read() as connection:
                record, _, _ = service.granted(connection, found.analyst, name)
            body = statistics_request(form, name, record.schema, dry_run=dry)
            return service.primitive(request, found.analyst, "redescription-statistics", body)

        updates: dict[str, Any] = {"stats_form": form}
        status = 200
        try:
            answer = await run_in_threadpool(work)
            updates["stats_cost" if dry else "stats"] = answer
        except FormError as error:
            request.state.outcome = "invalid_query"
            status, updates["stats_message"] = error.status, error.message
        except ApiError as error:
            if error.code == "unknown_dataset":
                return api_problem(request, error, found)
            request.state.outcome = error.code
            status, updates["stats_message"] = ERRORS[error.code][0], error.message or ERRORS[error.code][1]
        if is_htmx(request):
            return render(request, "_statistics.html", status, found, **{  # the page's budget bar too
                "stats": None, "stats_cost": None, "stats_message": None, "budget_out_of_band": True, **updates})
        return await dataset_page(request, found, name, None, status, **updates)

    # -- analyst: jobs --------------------------------------------------------------------------------------

    def analyst_jobs(request: Request, who: accounts.Analyst) -> list[dict[str, Any]]:
        from sqlalchemy import select

        from dprm.server.tables import datasets
        from dprm.server.tables import jobs as jobs_table

        with request.app.state.db.read() as connection:
            rows = connection.execute(
                select(jobs_table, datasets.c.name.label("dataset_name"))
                .join(datasets, datasets.c.id == jobs_table.c.dataset_id)
                .where(jobs_table.c.analyst_id == who.id).order_by(jobs_table.c.id.desc()).limit(200)).all()
        return [jobs.job_view(r, r.dataset_name) for r in rows]

    @router.get("/jobs", response_class=HTMLResponse)
    async def jobs_page(request: Request, partial: int = 0) -> Response:
        request.state.action = "ui-jobs"
        found = await for_reading(request, "analyst")
        if isinstance(found, Response):
            return found
        items = await run_in_threadpool(analyst_jobs, request, found.analyst)
        active = any(j["status"] in ("queued", "running") for j in items)
        return render(request, "_jobs_table.html" if partial else "jobs.html", session=found, jobs=items,
                      active=active)

    def job_context(request: Request, who: accounts.Analyst, job_id: str, sort: str, order: str) -> dict[str, Any]:
        from sqlalchemy import and_, select

        from dprm.server.tables import ledger

        with request.app.state.db.read() as connection:
            row, name = jobs.find_job(connection, who.id, job_id[:64])
            entries = connection.execute(
                select(ledger).where(and_(ledger.c.job_id == row.id, ledger.c.analyst_id == who.id))
                .order_by(ledger.c.id)).all()
        view = jobs.job_view(row, name)
        document = json.loads(row.result) if row.status == "done" and row.result else None
        results = []
        if document is not None:
            for rank, entry in enumerate(document.get("redescriptions", []), start=1):
                item = {**entry, "rank": rank, "noisy": entry.get("noisy") or {}}
                item["bar"] = support_bar(item["noisy"], entry.get("interval"))
                results.append(item)
            key = SORT_KEYS.get(sort, SORT_KEYS["rank"])
            present = [r for r in results if key(r) is not None]
            missing = [r for r in results if key(r) is None]
            results = sorted(present, key=key, reverse=order == "desc") + missing
        return {"job": view, "document": document, "results": results, "sort": sort if sort in SORT_KEYS else "rank",
                "order": "desc" if order == "desc" else "asc",
                "ledger": [{"step": e.step, "mechanism": e.mechanism, "epsilon": e.epsilon,
                            "epsilon_exact": e.epsilon_exact, "at": e.created_at} for e in entries],
                "ledger_total": fraction_text(sum((Fraction(e.epsilon_exact) for e in entries), Fraction(0)))}

    @router.get("/jobs/{job_id}", response_class=HTMLResponse)
    async def job_page(request: Request, job_id: str, sort: str = "rank", order: str = "asc",
                       partial: int = 0) -> Response:
        request.state.action = "ui-job"
        found = await for_reading(request, "analyst")
        if isinstance(found, Response):
            return found
        try:
            context = await run_in_threadpool(job_context, request, found.analyst, job_id, sort, order)
        except ApiError as error:
            return api_problem(request, error, found)
        return render(request, "job.html", session=found, **context)

    def job_document(request: Request, who: accounts.Analyst, job_id: str) -> tuple[Any, str]:
        with request.app.state.db.read() as connection:
            row, name = jobs.find_job(connection, who.id, job_id[:64])
        if row.status != "done" or row.result is None:
            raise ApiError("job_not_done", f"the job is {row.status}; it has no result")
        return row, name

    async def finished_job(request: Request, job_id: str, action: str) -> Response | tuple[Session, Any]:
        """The signed-in analyst's session and done job row, or the page that says why not."""
        request.state.action = action
        found = await for_reading(request, "analyst")
        if isinstance(found, Response):
            return found
        try:
            row, _ = await run_in_threadpool(job_document, request, found.analyst, job_id)
        except ApiError as error:
            return api_problem(request, error, found)
        return found, row

    @router.get("/jobs/{job_id}/result.json")
    async def download_json(request: Request, job_id: str) -> Response:
        answer = await finished_job(request, job_id, "ui-job-result")
        if isinstance(answer, Response):
            return answer
        _, row = answer
        return Response(row.result, media_type="application/json", headers={
            **SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{row.public_id}.json"'})

    @router.get("/jobs/{job_id}/queries.txt")
    async def download_queries(request: Request, job_id: str) -> Response:
        from dprm.queries import document_redescriptions, write_clired_queries

        answer = await finished_job(request, job_id, "ui-job-queries")
        if isinstance(answer, Response):
            return answer
        found, row = answer

        def write() -> str:
            redescriptions = document_redescriptions(json.loads(row.result), source=row.public_id)
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "queries.txt"
                write_clired_queries(redescriptions, path)
                return path.read_text(encoding="utf-8")

        try:
            text = await run_in_threadpool(write)
        except DprmError as error:
            reason = str(error).splitlines()[0].split("; pass columns=")[0].removeprefix("clired export: ")[:300]
            return problem(request, 422, "No clired file", f"This result cannot be written in clired's syntax: "
                           f"{reason}. The JSON download holds every redescription.", found)
        return Response(text, media_type="text/plain; charset=utf-8", headers={
            **SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{row.public_id}.queries"'})

    @router.post("/jobs/{job_id}/cancel", response_class=HTMLResponse)
    async def cancel_job(request: Request, job_id: str) -> Response:
        request.state.action = "ui-cancel-job"
        found, _, refused = await for_posting(request, "analyst")
        if refused is not None:
            return refused
        try:
            await run_in_threadpool(request.app.state.service.cancel, request, found.analyst, job_id)
        except ApiError as error:
            if error.code == "unknown_job":
                return api_problem(request, error, found)
            request.state.outcome = error.code
        if is_htmx(request):
            items = await run_in_threadpool(analyst_jobs, request, found.analyst)
            return render(request, "_jobs_table.html", session=found, jobs=items,
                          active=any(j["status"] in ("queued", "running") for j in items))
        return redirect("/ui/jobs")

    # -- data owner -------------------------------------------------------------------------------------------

    from dprm.server.web import owner_pages

    owner_pages.add_routes(router, render=render, problem=problem, redirect=redirect, for_reading=for_reading,
                           for_posting=for_posting)

    @router.get("/{rest:path}", response_class=HTMLResponse)
    async def not_found(request: Request, rest: str) -> Response:
        """Any other address under /ui: a page saying so (the API's answer is JSON)."""
        request.state.action = "ui-not-found"
        found = await session_of(request)
        return problem(request, 404, "No such page", "There is no page at this address.", found, "not_found")

    return router
