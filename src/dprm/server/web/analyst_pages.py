"""The analyst's dataset pages: the datasets, a dataset's job form and statistics form.

=========================================  ==========================================
``GET  /ui/datasets``                      datasets with schema and budget
``GET  /ui/datasets/{name}``               job form, statistics form
``POST /ui/datasets/{name}/cost``          live dry-run cost (HTMX partial)
``POST /ui/datasets/{name}/jobs``          dry run or submit a job
``POST /ui/datasets/{name}/statistics``    redescription-statistics primitive
=========================================  ==========================================

Every action goes through the API's functions (``app.state.service``,
:class:`dprm.server.api.service.Service`) with the session's analyst.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from dprm.server import accounts
from dprm.server.errors import ERRORS, ApiError
from dprm.server.web.access import for_posting, for_reading
from dprm.server.web.forms import FormError, confidence_help, job_fields, job_request, statistics_request
from dprm.server.web.pages import api_problem, is_htmx, redirect, render
from dprm.server.web.resubmission import form_key
from dprm.server.web.sessions import Session

__all__ = ["router"]

router = APIRouter(prefix="/ui", include_in_schema=False)


def analyst_datasets(request: Request, who: accounts.Analyst) -> list[dict[str, Any]]:
    """The datasets the analyst has a budget on (not one of 0: withdrawn), with schema views and budget."""
    from sqlalchemy import and_, select

    from dprm.server.datasets import DatasetRecord
    from dprm.server.tables import budgets, datasets

    service = request.app.state.service
    with request.app.state.db.read() as connection:
        rows = connection.execute(
            select(datasets, budgets.c.total_units, budgets.c.spent_units)
            .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
            .where(and_(datasets.c.active_name.is_not(None), budgets.c.total_units > 0))
            .order_by(datasets.c.name)).all()
    out = []
    for row in rows:
        record = DatasetRecord.from_row(row)
        out.append({"name": record.name, "views": record.schema["views"],
                    "id_column": record.schema.get("id_column"),
                    "budget": service.budget_view(record.name, int(row.total_units), int(row.spent_units))})
    return out


#: The ledger page's rows at most (the API gives every row, page by page: ``/v1/ledger?before=``).
LEDGER_PAGE_ROWS = 1000


def analyst_ledger(request: Request, who: accounts.Analyst) -> dict[str, Any]:
    """The analyst's charges and releases, newest first, and per dataset the charges' sum beside the budget.

    A charge is what a request took from the budget when it was accepted (a statistics
    request, a job: reserved while it runs, spent, or refunded where a job failed before
    touching the data); a release is one row of the ledger, written by the mechanism.
    The charges not refunded add up to the budget's spent ε; a job's releases add up to
    its charge once it has finished. The sums are of all charges, not only of the
    newest :data:`LEDGER_PAGE_ROWS` shown; a removed registration of a dataset is a
    row of its own, ``NAME (removed)`` (:func:`~dprm.server.registrations.shown_name`);
    a budget withdrawn (0) is a row only where it was spent on, not linked.
    """
    from sqlalchemy import and_, func, select

    from dprm.server.api.budgets import ledger_rows
    from dprm.server.registrations import shown_name
    from dprm.server.tables import budgets, charges, datasets, jobs
    from dprm.server.units import fraction_text, units_fraction

    service = request.app.state.service
    with request.app.state.db.read() as connection:
        rows = ledger_rows(connection, who, limit=LEDGER_PAGE_ROWS)
        charged = connection.execute(
            select(charges, datasets.c.name.label("dataset_name"), datasets.c.active_name, jobs.c.public_id)
            .join(datasets, datasets.c.id == charges.c.dataset_id)
            .outerjoin(jobs, jobs.c.charge_id == charges.c.id)
            .where(charges.c.analyst_id == who.id).order_by(charges.c.id.desc()).limit(LEDGER_PAGE_ROWS)).all()
        # Every registration with a budget (a removed one too, labelled apart) and the sum
        # of all its charges not given back, not only of the newest shown.
        registrations = connection.execute(
            select(datasets.c.name, datasets.c.active_name, budgets.c.total_units, budgets.c.spent_units,
                   select(func.coalesce(func.sum(charges.c.epsilon_units), 0))
                   .where(and_(charges.c.analyst_id == who.id, charges.c.dataset_id == datasets.c.id,
                               charges.c.status != "refunded")).scalar_subquery().label("charged_units"))
            .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
            .order_by(datasets.c.active_name.is_(None), datasets.c.name, datasets.c.id)).all()
    totals = [{"dataset": shown_name(r.name, r.active_name),
               "active": r.active_name is not None and int(r.total_units) > 0,
               "charged": fraction_text(units_fraction(int(r.charged_units))),
               "budget": service.budget_view(r.name, int(r.total_units), int(r.spent_units))}
              for r in registrations
              if (r.active_name is not None and int(r.total_units) > 0) or int(r.charged_units)]
    charge_rows = [{"at": c.created_at, "dataset": shown_name(c.dataset_name, c.active_name), "job": c.public_id,
                    "status": c.status, "epsilon_exact": fraction_text(units_fraction(int(c.epsilon_units)))}
                   for c in charged]
    return {"rows": rows, "charges": charge_rows, "totals": totals,
            "complete": len(rows) < LEDGER_PAGE_ROWS and len(charged) < LEDGER_PAGE_ROWS}


@router.get("/ledger", response_class=HTMLResponse)
async def ledger_page(request: Request) -> Response:
    """Every release charged to the analyst, jobs and statistics alike, with the sums per dataset."""
    request.state.action = "ui-ledger"
    found = await for_reading(request, "analyst")
    if isinstance(found, Response):
        return found
    context = await run_in_threadpool(analyst_ledger, request, found.analyst)
    return render(request, "ledger.html", session=found, **context)


@router.get("/datasets", response_class=HTMLResponse)
async def datasets_page(request: Request) -> Response:
    request.state.action = "ui-datasets"
    found = await for_reading(request, "analyst")
    if isinstance(found, Response):
        return found
    items = await run_in_threadpool(analyst_datasets, request, found.analyst)
    return render(request, "datasets.html", session=found, datasets=items)


def dataset_context(request: Request, who: accounts.Analyst, name: str, algorithm: str | None) -> dict[str, Any]:
    """A dataset page's context: the dataset, its algorithms, empty job and statistics forms."""
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
            "stats_form": {}, "stats": None, "stats_cost": None, "stats_message": None,
            "confidence_help": confidence_help()}


async def dataset_page(request: Request, found: Session, name: str, algorithm: str | None,
                       status: int = 200, **updates: Any) -> Response:
    """The dataset page with ``updates`` to its context (a form's values, cost or message)."""
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
    problem_text = algorithm_problem(algorithm)
    if problem_text is not None:  # a typed or old link: said, not silently another algorithm's form
        request.state.outcome = "unknown_algorithm"
        return await dataset_page(request, found, name, None, 422, message=problem_text)
    return await dataset_page(request, found, name, algorithm)


def algorithm_problem(algorithm: str | None) -> str | None:
    """Why a dataset page's ``?algorithm=`` names no job form (the API's one line), or None.

    Before, an algorithm the server does not run (``?algorithm=alt-mcmcm``, a link of a server
    that runs others) showed the first algorithm's form without a word: a job run from it was
    another algorithm than the link named, charged.

    Examples
    --------
    >>> algorithm_problem(None) is None, algorithm_problem("") is None, algorithm_problem("alt-expm") is None
    (True, True, True)
    >>> algorithm_problem("alt-mcmcm").startswith("unknown algorithm 'alt-mcmcm'; this server runs: ")
    True
    """
    from dprm.server.validation import private_algorithms

    if not algorithm or algorithm in private_algorithms():
        return None
    return (f"unknown algorithm {algorithm[:64]!r}; this server runs: {', '.join(private_algorithms())}. "
            "The form below is the first of them")


def dry_run_job(request: Request, found: Session, form: dict[str, Any], name: str) -> dict[str, Any]:
    """The API's dry run of the job form."""
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
    except FormError as error:  # a refusal keeps its status: the pages' HTMX swaps a 4xx answer in too
        request.state.outcome = "invalid_request"
        return render(request, "_cost.html", error.status, found, cost=None, message=error.message)
    except ApiError as error:
        request.state.outcome = error.code
        return render(request, "_cost.html", error.status, found, cost=None, message=error.message)


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
        answer, status = await run_in_threadpool(work)
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
    # 200: the form's key and values had made this job already (a double click, the back button): its page says so
    return redirect(f"/ui/jobs/{answer['id']}" + ("?again=1" if status == 200 else ""))


def _statistics_digest(form: dict[str, Any], name: str) -> str:
    """What a statistics form asks for (to tell a repeated post from a changed one)."""
    from dprm.server.jobs import request_digest

    fields = ("left", "right", "epsilon", "confidence", "dummy", "dummy_rows")
    return request_digest({"dataset": name, **{f: str(form.get(f, "")).strip() for f in fields}})


def statistics_key(key: str, digest: str) -> str:
    """The one-time key of a statistics form's post: the form's key (24 hex digits) and the
    first 8 of the digest of its values (32 characters, the column's width).

    As a job form's key (:func:`dprm.server.web.forms.job_key`): the same values sent again
    with the form's key (a double click, a reload, "Get the statistics" again after the
    back button, which puts the key back: ``static/dprm.js``) get the first answer, charged
    once; other values are a new request, not a ``409``. Two value sets whose digests share
    8 digits under one form key would be that 409 (the full digest is compared), never
    another request's answer.

    Examples
    --------
    >>> statistics_key("0123456789abcdef01234567", "89abcdef" + "0" * 56)
    '0123456789abcdef0123456789abcdef'
    """
    return key + digest[:8]


@router.post("/datasets/{name}/statistics", response_class=HTMLResponse)
async def statistics(request: Request, name: str) -> Response:
    """The redescription-statistics primitive of a query pair typed in clired syntax.

    A run (not a dry run) is charged once per rendered form and values: a second post of
    the form's one-time key with the same values gets the first answer, from whichever API
    process answered it (:mod:`~dprm.server.web.resubmission`); other values are a new
    request (:func:`statistics_key`).
    """
    request.state.action = "ui-statistics-form"
    found, form, refused = await for_posting(request, "analyst")
    if refused is not None:
        return refused
    dry = form.get("action") != "run"
    service = request.app.state.service
    answers = request.app.state.web_answers
    key = None if dry else form_key(form)

    def work() -> dict[str, Any]:
        with request.app.state.db.read() as connection:
            record, _, _ = service.granted(connection, found.analyst, name)
        body = statistics_request(form, name, record.schema, dry_run=dry)
        answer = service.primitive(request, found.analyst, "redescription-statistics", body)
        if dry:  # how the queries were read (clired's < and > include the bound), before anything is paid
            from dprm.queries import query_from_json, to_text

            answer = {**answer, "left_text": to_text(query_from_json(body.left)),
                      "right_text": to_text(query_from_json(body.right))}
        return answer

    def answered() -> tuple[int, dict[str, Any]]:
        try:
            return 200, {"stats_cost" if dry else "stats": work()}
        except FormError as error:
            request.state.outcome = "invalid_query"
            return error.status, {"stats_message": error.message}
        except ApiError as error:
            if error.code == "unknown_dataset":
                raise
            request.state.outcome = error.code
            return ERRORS[error.code][0], {"stats_message": error.message or ERRORS[error.code][1]}

    def once() -> tuple[int, dict[str, Any]]:
        if key is None:
            return answered()
        digest = _statistics_digest(form, name)
        try:
            outcome, replayed = answers.once(found.principal_id, statistics_key(key, digest), digest, answered)
        except ApiError as error:
            if error.code not in ("idempotency_key_reused", "submission_pending"):
                raise
            request.state.outcome = error.code
            return error.status, {"stats_message": error.message}
        if replayed:
            request.state.outcome = "idempotent_replay"
            request.state.epsilon_units = 0
            return outcome[0], {**outcome[1], "stats_again": True}  # the page says it is the first answer
        return outcome

    try:
        status, updates = await run_in_threadpool(once)
    except ApiError as error:
        return api_problem(request, error, found)
    updates = {"stats_form": form, **updates}
    if is_htmx(request):
        return render(request, "_statistics.html", status, found, **{  # the page's budget bar too
            "stats": None, "stats_cost": None, "stats_message": None, "budget_out_of_band": True, **updates})
    return await dataset_page(request, found, name, None, status, **updates)
