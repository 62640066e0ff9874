"""The data owner's pages: datasets, analysts, budgets, the audit log, the jobs.

The same operations as ``dprm admin`` (:mod:`dprm.cli.admin`), through the same
functions: :func:`~dprm.server.datasets.register_dataset` (a dataset from files on
the server with its complete types file), :mod:`~dprm.server.accounts` (add,
disable, enable, rotate), :func:`~dprm.server.budget.set_budget` (grant: what was
spent stays spent).

Post/redirect/get: a form that changes something answers ``303 See Other`` to the
overview when it succeeds, and what it did (the notice, a new or rotated token)
crosses the redirect in a sealed cookie that the overview reads and deletes
(:mod:`~dprm.server.web.owner_notices`); a reload or the back button repeats that
``GET``, never the action, and a token is shown once, to the session that asked,
and stored nowhere. A form that is refused did nothing; its page (422, the form's
values kept) says why.

The audit page's filters are read by :func:`audit_filters`: a value the page cannot
use is one message on the same page, naming the field as the page does, with every
filter kept.
"""

from __future__ import annotations

from typing import Any, Callable, Collection

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from dprm.errors import DprmError
from dprm.server.web import owner_notices
from dprm.server.web.access import for_posting, for_reading
from dprm.server.web.pages import redirect, render
from dprm.server.web.sessions import COOKIE

__all__ = ["router", "overview", "audit_rows", "audit_filters"]

router = APIRouter(prefix="/ui", include_in_schema=False)

#: The newest audit records a page shows at most.
MAX_AUDIT_ROWS = 1000


def overview(db: Any) -> dict[str, Any]:
    """Everything the owner's main page shows: datasets, analysts, budgets, active jobs."""
    import json

    from sqlalchemy import select

    from dprm.server.datasets import list_datasets
    from dprm.server.tables import analysts, budgets, datasets, jobs
    from dprm.server.units import units_float, units_text

    with db.read() as connection:
        dataset_rows = list_datasets(connection)
        analyst_rows = connection.execute(select(analysts).order_by(analysts.c.name)).all()
        budget_rows = connection.execute(
            select(analysts.c.name.label("analyst"), datasets.c.name.label("dataset"), budgets.c.total_units,
                   budgets.c.spent_units)
            .join(analysts, analysts.c.id == budgets.c.analyst_id)
            .join(datasets, datasets.c.id == budgets.c.dataset_id)
            .where(datasets.c.active_name.is_not(None))
            .order_by(analysts.c.name, datasets.c.name)).all()
        job_rows = connection.execute(
            select(jobs, analysts.c.name.label("analyst"), datasets.c.name.label("dataset"), datasets.c.active_name)
            .join(analysts, analysts.c.id == jobs.c.analyst_id).join(datasets, datasets.c.id == jobs.c.dataset_id)
            .where(jobs.c.status.in_(("queued", "running"))).order_by(jobs.c.id)).all()
    return {
        "datasets": [{"name": r.name, "left": r.left_path, "right": r.right_path, "types": r.types_path,
                      "attributes": [len(v) for v in json.loads(r.public_schema)["views"].values()],
                      "left_sha256": r.left_sha256, "created_at": r.created_at} for r in dataset_rows],
        "analysts": [{"name": r.name, "token_id": r.token_id, "disabled": bool(r.disabled),
                      "expires_at": r.expires_at, "created_at": r.created_at} for r in analyst_rows],
        "budgets": [{"analyst": r.analyst, "dataset": r.dataset, "total": units_text(r.total_units),
                     "spent": units_text(r.spent_units), "remaining": units_text(max(r.total_units - r.spent_units, 0)),
                     "share": units_float(r.spent_units) / units_float(r.total_units) if r.total_units else 1.0}
                    for r in budget_rows],
        "jobs": [_job_row(r) for r in job_rows],
    }


def _job_row(r: Any) -> dict[str, Any]:
    """A job as the owner's pages list it; a removed registration's ``NAME (removed)``, as ``dprm admin jobs``."""
    from dprm.server.registrations import shown_name
    from dprm.server.units import units_text

    return {"id": r.public_id, "analyst": r.analyst, "dataset": shown_name(r.dataset, r.active_name),
            "algorithm": r.algorithm,
            "epsilon": units_text(r.epsilon_units), "dummy": bool(r.dummy), "status": r.status,
            "progress": r.progress, "pid": r.worker_pid, "error": r.error_code, "owner_error": r.owner_error,
            "created_at": r.created_at}


def audit_rows(db: Any, *, analyst: str = "", action: str = "", outcome: str = "", errors_only: bool = False,
               static_files: bool = False, limit: int = 200) -> list[dict[str, Any]]:
    """The newest audit records matching the filters (exact analyst, action and outcome;
    the web pages' style sheet and script fetches only with ``static_files``)."""
    from sqlalchemy import select

    from dprm.server.tables import analysts, audit
    from dprm.server.units import units_text

    query = select(audit, analysts.c.name.label("analyst")).outerjoin(analysts, analysts.c.id == audit.c.analyst_id)
    if analyst:
        query = query.where(analysts.c.name == analyst)
    if action:
        query = query.where(audit.c.action == action)
    if outcome:
        query = query.where(audit.c.outcome == outcome)
    if errors_only:
        query = query.where(audit.c.status >= 400)
    if not static_files:
        query = query.where(audit.c.path.not_like("/ui/static/%"))
    with db.read() as connection:
        rows = connection.execute(query.order_by(audit.c.id.desc()).limit(limit)).all()
    return [{"at": r.at, "analyst": r.analyst, "action": r.action, "method": r.method, "path": r.path,
             "dataset": r.dataset, "epsilon": None if r.epsilon_units is None else units_text(r.epsilon_units),
             "status": r.status, "outcome": r.outcome, "detail": r.detail, "ms": r.duration_ms} for r in rows]


#: What the overview says when the notice of an earlier form is there but cannot be read.
LOST_NOTICE = ("The answer to an earlier form could not be shown: it waited more than 5 minutes, or it "
               "belongs to another sign-in. Look at the tables below; if it issued a token, give the analyst "
               "a new one (New token).")

#: The overview, where an owner's form that changed something sends the browser.
OVERVIEW = "/ui/owner"


class Refused(DprmError):
    """An owner's form refused, with a command that does what the pages do not (shown as code)."""

    def __init__(self, message: str, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command


async def main_page(request: Request, found: Any, status: int = 200, **notes: Any) -> HTMLResponse:
    """The owner's overview with ``notes`` (error, form values), and what the form just done
    said (:mod:`~dprm.server.web.owner_notices`: read once, then deleted in the browser)."""
    carried, present = owner_notices.take(request, request.cookies.get(COOKIE, ""))
    context = await run_in_threadpool(overview, request.app.state.db)
    shown: dict[str, Any] = {"notice": None, "error": None, "error_command": None, "new_token": None,
                             "form": {}, "lost_notice": None}
    if carried is not None:
        shown.update({key: carried[key] for key in ("notice", "new_token", "form") if key in carried})
    elif present:
        shown["lost_notice"] = LOST_NOTICE
    shown.update(notes)
    response = render(request, "owner.html", status, found, **context, **shown)
    if present:
        owner_notices.forget(response, request)
    return response


@router.get("/owner", response_class=HTMLResponse)
async def owner_home(request: Request) -> Response:
    request.state.action = "ui-owner"
    found = await for_reading(request, "owner")
    if isinstance(found, Response):
        return found
    return await main_page(request, found)


async def act(request: Request, action: str, work: Callable[[dict[str, Any]], dict[str, Any]]) -> Response:
    """Run an owner's form: on success ``303`` to the overview, which then says what was done
    (post/redirect/get; a reload repeats the GET, not the action); a refusal is the overview
    with its error in one line and the form's values (nothing done)."""
    request.state.action = action
    found, form, refused = await for_posting(request, "owner")
    if refused is not None:
        return refused
    try:
        notes = await run_in_threadpool(work, form)
    except DprmError as error:
        request.state.outcome = "invalid_request"
        return await main_page(request, found, 422, error=str(error).splitlines()[0][:500], form=form,
                               error_command=getattr(error, "command", None))
    response = redirect(OVERVIEW)
    sealed = notes.get(SEALED)
    if isinstance(sealed, str):  # notes sealed by a form's first post (a one-time key's answer)
        owner_notices.put_sealed(response, request, sealed)
    else:
        owner_notices.put(response, request, request.cookies.get(COOKIE, ""), notes)
    return response


def replayed_rotation_notice(name: str) -> str:
    """What the overview says when a "New token" form for ``name`` is sent again after its first
    answer can no longer be shown (more than :data:`~dprm.server.web.owner_notices.LIFETIME`
    seconds later, or from another sign-in): before, it showed no token and the words of a
    lost notice ("an earlier form ... could not be shown").

    Examples
    --------
    >>> print(replayed_rotation_notice("bob"))  # doctest: +NORMALIZE_WHITESPACE
    this New token form for bob was sent before: bob's token was changed then and shown once, and it cannot be
    shown again (tokens are kept nowhere). Nothing was changed now. If bob did not get that token, press New
    token to give a new one.
    """
    return (f"this New token form for {name} was sent before: {name}'s token was changed then and shown once, "
            "and it cannot be shown again (tokens are kept nowhere). Nothing was changed now. If "
            f"{name} did not get that token, press New token to give a new one.")


#: The key of a ``work``'s notes that holds notes sealed already (:func:`act` sets them as they are).
SEALED = "sealed"


def registered_already(db: Any, name: str) -> Refused:
    """The refusal of a dataset name in use, with the ``dprm admin`` command that frees it
    (the pages do not remove datasets: a removal and a new registration of the same rows start
    the analysts' budgets afresh, a decision for the owner at the server's console)."""
    import shlex

    from dprm.server.database import shown_url

    where = shown_url(db.url)
    password = " (with the database's password in place of ***)" if "***" in where else ""
    return Refused(f"a dataset named {name!r} is registered already. These pages do not remove datasets: remove "
                   f"it on the server with the command below{password}, then register it again here. Budgets "
                   "on the new registration start afresh; what analysts spent on the old one stays in the ledger.",
                   f"dprm admin --db {shlex.quote(where)} dataset remove {shlex.quote(name)}")


@router.post("/owner/datasets", response_class=HTMLResponse)
async def add_dataset(request: Request) -> Response:
    from dprm.server.datasets import active_dataset, register_dataset

    db = request.app.state.db

    def registered(name: str) -> bool:
        with db.read() as connection:
            return active_dataset(connection, name) is not None

    def work(form: dict[str, Any]) -> dict[str, Any]:
        name = str(form.get("name", "")).strip()
        paths = [str(form.get(k, "")).strip() for k in ("left", "right", "types")]
        request.state.dataset = name[:128]
        if name and registered(name):  # before the files are loaded: that can take a while
            raise registered_already(db, name)
        for what, path in zip(("left file", "right file", "types file"), paths):
            if not path:
                raise DprmError(f"give the {what}'s path on the server")
        id_column = str(form.get("id_column", "")).strip() or None
        try:
            schema = register_dataset(db, name, *paths, id_column=id_column)
        except DprmError:
            if name and registered(name):  # registered by another request meanwhile
                raise registered_already(db, name) from None
            raise
        views = schema["views"]
        return {"notice": f"registered {name}: {len(views['left'])} left and {len(views['right'])} right "
                          "attributes"}

    return await act(request, "ui-owner-add-dataset", work)


@router.post("/owner/analysts", response_class=HTMLResponse)
async def add_analyst(request: Request) -> Response:
    from dprm.server.accounts import add_analyst as add

    def work(form: dict[str, Any]) -> dict[str, Any]:
        name = str(form.get("name", "")).strip()
        with request.app.state.db.write() as connection:
            token = add(connection, name)
        return {"notice": f"added analyst {name}", "new_token": {"name": name, "token": token}}

    return await act(request, "ui-owner-add-analyst", work)


#: The changes of an analyst the overview's buttons post.
CHANGES = ("disable", "enable", "rotate")


@router.post("/owner/analysts/{name}/{change}", response_class=HTMLResponse)
async def change_analyst(request: Request, name: str, change: str) -> Response:
    """Disable, enable or give a new token to an analyst.

    The "New token" form carries a one-time key (:mod:`~dprm.server.web.resubmission`):
    its first post rotates the token and keeps its notice, sealed for the owner's
    session (:func:`dprm.server.web.owner_notices.seal`: the database never holds the
    token in the clear); a repeat of the key (a double click, a resent post) rotates
    nothing and shows that notice again, so every answer shows the one token that works
    (two rotations answered out of order showed the first, revoked, token).
    """
    from dprm.server.accounts import find_analyst, rotate_token, set_disabled
    from dprm.server.errors import ApiError
    from dprm.server.jobs import request_digest
    from dprm.server.web.resubmission import form_key

    def rotated() -> dict[str, Any]:
        with request.app.state.db.write() as connection:
            token = rotate_token(connection, name)
        return {"notice": f"new token for {name}; the old one no longer works",
                "new_token": {"name": name, "token": token}}

    def rotated_once(key: str) -> dict[str, Any]:
        with request.app.state.db.read() as connection:
            analyst_id = find_analyst(connection, name).id
        session = request.cookies.get(COOKIE, "")

        def first() -> tuple[int, dict[str, Any]]:
            return 200, {SEALED: owner_notices.seal(session, rotated())}

        try:
            (_, notes), replayed = request.app.state.web_answers.once(
                analyst_id, key, request_digest({"owner-rotate": name}), first)
        except ApiError as error:
            if error.code not in ("idempotency_key_reused", "submission_pending"):
                raise
            request.state.outcome = error.code
            raise DprmError(error.message or "this form was sent already; reload the page") from None
        if replayed:
            request.state.outcome = "idempotent_replay"
            sealed = notes.get(SEALED)
            if not isinstance(sealed, str) or owner_notices.unseal(session, sealed) is None:
                # its notice waited too long (LIFETIME) or was sealed for another sign-in: the
                # token it showed cannot be shown again; say so, not "an earlier form's answer"
                return {"notice": replayed_rotation_notice(name)}
        return notes

    def work(form: dict[str, Any]) -> dict[str, Any]:
        if change == "rotate":
            key = form_key(form)
            return rotated() if key is None else rotated_once(key)
        if change in ("disable", "enable"):
            with request.app.state.db.write() as connection:
                set_disabled(connection, name, change == "disable")
            return {"notice": f"{change}d {name}"}
        raise DprmError(f"unknown change {change[:32]!r}: disable, enable or rotate")

    return await act(request, f"ui-owner-{change}-analyst" if change in CHANGES else "ui-owner-change-analyst",
                     work)


@router.post("/owner/budgets", response_class=HTMLResponse)
async def grant(request: Request) -> Response:
    from dprm.server import budget
    from dprm.server.units import epsilon_units

    def work(form: dict[str, Any]) -> dict[str, Any]:
        analyst = str(form.get("analyst", "")).strip()
        dataset = str(form.get("dataset", "")).strip()
        units = epsilon_units(str(form.get("epsilon", "")).strip(), "epsilon", allow_zero=True)
        request.state.dataset = dataset[:128]
        with request.app.state.db.write() as connection:
            total, spent = budget.grant(connection, analyst, dataset, units)
        # the form keeps the analyst and dataset just granted: a second grant typed after
        # this one must not silently go to the first analyst and dataset of the lists
        return {"notice": budget.grant_notice(analyst, dataset, total, spent),
                "form": {"analyst": analyst, "dataset": dataset}}

    return await act(request, "ui-owner-grant", work)


#: How many of the newest audit records the page shows unless asked.
DEFAULT_AUDIT_ROWS = 200

#: Outcomes the audit page suggests (its field takes any: ``http_NNN`` and others too).
OUTCOMES = ("ok", "idempotent_replay", "csrf_refused", "missing_session", "wrong_role")


def audit_filters(*, analyst: str = "", action: str = "", outcome: str = "", errors: str = "", static: str = "",
                  limit: str = "", analysts: Collection[str] | None = None
                  ) -> tuple[dict[str, Any], list[str], list[str]]:
    """The audit page's filters as the page keeps them, the problems that refuse them, and notes.

    ``filters["newest"]`` is how many records to show. A value the page cannot use is a
    problem naming its field as the page does (the page then shows no record); a
    number of records above :data:`MAX_AUDIT_ROWS` is clamped to it, and a note says so.
    ``analysts``: the names an analyst filter may take (None: not checked).

    Examples
    --------
    >>> filters, problems, notes = audit_filters(action="submit-job", limit="20")
    >>> filters["newest"], problems, notes
    (20, [], [])
    >>> audit_filters(limit="abc")[1]
    ["Newest: 'abc' is not a whole number; give one from 1 to 1000."]
    >>> audit_filters(limit="-5")[1]
    ['Newest: -5 is less than 1; give a number of records from 1 to 1000.']
    >>> filters, problems, notes = audit_filters(limit="5000")
    >>> filters["newest"], filters["limit"], notes
    (1000, '1000', ['Newest: this page shows at most 1000 records; showing the newest 1000, not 5000.'])
    >>> audit_filters(action="statistics")[1]  # doctest: +NORMALIZE_WHITESPACE
    ["Action: no action is called 'statistics'; did you mean redescription-statistics,
      dry-run-redescription-statistics or ui-statistics-form?"]
    >>> audit_filters(analyst="mallory", analysts=["alice", "bob"])[1]
    ["Analyst: no analyst is called 'mallory'."]
    """
    import difflib
    import re

    from dprm.server.audit import ACTIONS

    problems: list[str] = []
    notes: list[str] = []
    filters: dict[str, Any] = {"analyst": analyst.strip()[:128], "action": action.strip()[:128],
                               "outcome": outcome.strip()[:64], "errors": errors == "on", "static": static == "on",
                               "limit": limit.strip()[:32], "newest": DEFAULT_AUDIT_ROWS, "invalid": []}
    text = filters["limit"]
    if not text:
        filters["limit"] = str(DEFAULT_AUDIT_ROWS)
    elif not re.fullmatch(r"[+-]?[0-9]+", text):
        problems.append(f"Newest: {text!r} is not a whole number; give one from 1 to {MAX_AUDIT_ROWS}.")
        filters["invalid"].append("limit")
    elif int(text) < 1:
        problems.append(f"Newest: {int(text)} is less than 1; give a number of records from 1 to {MAX_AUDIT_ROWS}.")
        filters["invalid"].append("limit")
    elif int(text) > MAX_AUDIT_ROWS:
        notes.append(f"Newest: this page shows at most {MAX_AUDIT_ROWS} records; showing the newest "
                     f"{MAX_AUDIT_ROWS}, not {int(text)}.")
        filters["newest"], filters["limit"] = MAX_AUDIT_ROWS, str(MAX_AUDIT_ROWS)
    else:
        filters["newest"], filters["limit"] = int(text), str(int(text))
    name = filters["action"]
    if name and name not in ACTIONS:
        lowered = name.lower()
        near = [a for a in ACTIONS if lowered in a]
        near += [a for a in difflib.get_close_matches(lowered, ACTIONS, n=3, cutoff=0.6) if a not in near]
        near = near[:4]
        hint = (f"; did you mean {', '.join(near[:-1])} or {near[-1]}?" if len(near) > 1
                else f"; did you mean {near[0]}?" if near else "; choose one of the list.")
        problems.append(f"Action: no action is called {name!r}{hint}")
        filters["invalid"].append("action")
    if filters["analyst"] and analysts is not None and filters["analyst"] not in analysts:
        problems.append(f"Analyst: no analyst is called {filters['analyst']!r}.")
        filters["invalid"].append("analyst")
    return filters, problems, notes


@router.get("/owner/audit", response_class=HTMLResponse)
async def audit_page(request: Request, analyst: str = "", action: str = "", outcome: str = "",
                     errors: str = "", static: str = "", limit: str = "") -> Response:
    """The audit log, newest first, filtered; a filter it cannot use is one message on the
    page (422, no records, every filter kept)."""
    from sqlalchemy import select

    from dprm.server.audit import ACTION_GROUPS, ACTIONS
    from dprm.server.errors import ERRORS
    from dprm.server.tables import analysts

    request.state.action = "ui-owner-audit"
    found = await for_reading(request, "owner")
    if isinstance(found, Response):
        return found
    db = request.app.state.db
    names = await db.aread(lambda connection: list(
        connection.execute(select(analysts.c.name).order_by(analysts.c.name)).scalars()))
    filters, problems, notes = audit_filters(analyst=analyst, action=action, outcome=outcome, errors=errors,
                                             static=static, limit=limit, analysts=names)
    rows: list[dict[str, Any]] = []
    if problems:
        request.state.outcome = "invalid_request"
    else:
        rows = await run_in_threadpool(lambda: audit_rows(
            db, analyst=filters["analyst"], action=filters["action"], outcome=filters["outcome"],
            errors_only=filters["errors"], static_files=filters["static"], limit=filters["newest"]))
    return render(request, "owner_audit.html", 422 if problems else 200, found, rows=rows, filters=filters,
                  problems=problems, notes=notes, action_groups=ACTION_GROUPS, action_names=ACTIONS,
                  analyst_names=names,
                  outcome_names=sorted({*OUTCOMES, *ERRORS}), max_rows=MAX_AUDIT_ROWS)


#: How many of the newest jobs the owner's jobs page lists (of a status, when one is chosen).
OWNER_JOBS_ROWS = 500


def jobs_status_problem(status: str) -> str | None:
    """Why the jobs page's status filter cannot be used (one line naming the field), or None.

    Before, any text was a filter: ``?status=Done`` or ``?status=zzz`` (a typed or an old link)
    showed an empty table captioned "Jobs zzz", as if no job had that status.

    Examples
    --------
    >>> jobs_status_problem("done") is None, jobs_status_problem("") is None
    (True, True)
    >>> jobs_status_problem("Done")
    "Status: no job is 'Done'; a job is queued, running, done, failed or cancelled."
    """
    from dprm.errors import short_repr
    from dprm.server.tables import JOB_STATES

    if not status or status in JOB_STATES:
        return None
    return (f"Status: no job is {short_repr(status)}; a job is {', '.join(JOB_STATES[:-1])} or "
            f"{JOB_STATES[-1]}.")


@router.get("/owner/jobs", response_class=HTMLResponse)
async def jobs_page(request: Request, status: str = "") -> Response:
    from sqlalchemy import select

    from dprm.server.tables import JOB_STATES, analysts, datasets, jobs

    request.state.action = "ui-owner-jobs"
    found = await for_reading(request, "owner")
    if isinstance(found, Response):
        return found
    status = status.strip()
    problem_text = jobs_status_problem(status)
    if problem_text is not None:  # one message naming the field, no rows (as the audit log's filters)
        request.state.outcome = "invalid_request"
        return render(request, "owner_jobs.html", 422, found, jobs=[], chosen_status="", problem=problem_text,
                      states=JOB_STATES)

    def read() -> list[dict[str, Any]]:
        query = (select(jobs, analysts.c.name.label("analyst"), datasets.c.name.label("dataset"),
                        datasets.c.active_name)
                 .join(analysts, analysts.c.id == jobs.c.analyst_id)
                 .join(datasets, datasets.c.id == jobs.c.dataset_id))
        if status:
            query = query.where(jobs.c.status == status)
        with request.app.state.db.read() as connection:
            return [_job_row(r) for r in connection.execute(
                query.order_by(jobs.c.id.desc()).limit(OWNER_JOBS_ROWS + 1)).all()]

    rows = await run_in_threadpool(read)
    # beyond the newest rows a note says so (before, older jobs were left out without a word)
    return render(request, "owner_jobs.html", session=found, jobs=rows[:OWNER_JOBS_ROWS], chosen_status=status,
                  problem=None, states=JOB_STATES, complete=len(rows) <= OWNER_JOBS_ROWS,
                  shown_rows=OWNER_JOBS_ROWS)
