"""The analyst's job pages: the jobs with live progress, a job with its result and ledger, downloads.

=========================================  ==========================================
``GET  /ui/jobs``                          jobs with live progress
``GET  /ui/jobs/{id}``                     a job, its result and ledger
``GET  /ui/jobs/{id}/result.json``         the spec's JSON document
``GET  /ui/jobs/{id}/queries.txt``         the clired queries file
``POST /ui/jobs/{id}/cancel``              cancel
=========================================  ==========================================

Another analyst's job is 404, as in the API (:func:`dprm.server.jobs.find_job`).
"""

from __future__ import annotations

import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from dprm.errors import DprmError
from dprm.queries.document import explain_guarantee
from dprm.server import accounts, jobs
from dprm.server.registrations import shown_name
from dprm.server.errors import ApiError
from dprm.server.units import fraction_text
from dprm.server.web.access import for_posting, for_reading
from dprm.server.web.pages import SECURITY_HEADERS, api_problem, is_htmx, page_switch, problem, redirect, render
from dprm.server.web.sessions import Session

__all__ = ["router", "SORT_KEYS", "support_bar"]

router = APIRouter(prefix="/ui", include_in_schema=False)

#: What the guarantee ``none`` of a dummy job's result means (instead of the label's general
#: sentence, "the values may reveal individual rows": here only rows made up from the schema).
DUMMY_MEANING = ("No privacy guarantee is claimed, and none is needed: the job ran on rows synthesised from the "
                 "public schema, not on the private data.")

#: Result table columns that can be sorted, and how to read them from a redescription.
SORT_KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "rank": lambda r: r["rank"],
    "jaccard": lambda r: r["noisy"].get("jaccard"),
    "excess": lambda r: (r.get("independence") or {}).get("excess"),
    "support_left": lambda r: r["noisy"].get("support_left"),
    "support_right": lambda r: r["noisy"].get("support_right"),
    "intersection": lambda r: r["noisy"].get("intersection"),
    "p_value": lambda r: r["noisy"].get("p_value"),
    "pruned": lambda r: bool(r.get("pruned")),
}


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



#: How many of the analyst's newest jobs the jobs page lists (the API's ``/v1/jobs`` pages through all).
JOBS_PAGE_ROWS = 200


def analyst_jobs(request: Request, who: accounts.Analyst) -> tuple[list[dict[str, Any]], bool]:
    """The analyst's newest :data:`JOBS_PAGE_ROWS` jobs and any older one still queued or running
    (its cancel button and the list's refresh), and whether that is every job.

    Before, the newest 200 were listed and nothing said so: an analyst with more jobs did not
    learn that older ones exist, and a job still running behind them had no cancel button.
    """
    from sqlalchemy import and_, select

    from dprm.server.tables import datasets
    from dprm.server.tables import jobs as jobs_table

    query = (select(jobs_table, datasets.c.name.label("dataset_name"), datasets.c.active_name)
             .join(datasets, datasets.c.id == jobs_table.c.dataset_id)
             .where(jobs_table.c.analyst_id == who.id).order_by(jobs_table.c.id.desc()))
    with request.app.state.db.read() as connection:
        rows = connection.execute(query.limit(JOBS_PAGE_ROWS + 1)).all()
        complete = len(rows) <= JOBS_PAGE_ROWS
        rows = rows[:JOBS_PAGE_ROWS]
        if not complete:
            rows += connection.execute(query.where(and_(
                jobs_table.c.id < rows[-1].id, jobs_table.c.status.in_(("queued", "running"))))).all()
    return [jobs.job_view(r, shown_name(r.dataset_name, r.active_name)) for r in rows], complete


@router.get("/jobs", response_class=HTMLResponse)
async def jobs_page(request: Request, partial: str = "0") -> Response:
    """The analyst's jobs; ``partial=1``: the table only (the list's refresh)."""
    request.state.action = "ui-jobs"
    found = await for_reading(request, "analyst")
    if isinstance(found, Response):
        return found
    try:
        only_table = page_switch(partial, "partial")
    except ApiError as error:
        return api_problem(request, error, found)
    items, complete = await run_in_threadpool(analyst_jobs, request, found.analyst)
    active = any(j["status"] in ("queued", "running") for j in items)
    return render(request, "_jobs_table.html" if only_table else "jobs.html", session=found, jobs=items,
                  active=active, complete=complete, shown_rows=JOBS_PAGE_ROWS)


def _clired_reason(error: DprmError) -> str:
    """The one-line reason of a clired export's refusal, without its advice to the command line's users."""
    return str(error).splitlines()[0].split("; pass columns=")[0].removeprefix("clired export: ")[:300]


def clired_problem_of(document: dict[str, Any], source: str) -> str | None:
    """Why a result's queries cannot be written as clired's queries file (an attribute's name
    or a category clired's syntax cannot hold: the public schema's), or None.

    The job page asks it before it offers the file: a download answered 422 is cancelled by the
    browser without a word (the link has ``download``), so the page says why instead.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats, make_document
    >>> privacy = {"epsilon": 1.0, "guarantee": "pure-dp", "private": True, "neighbouring": "add-remove-one-row",
    ...            "reasons": [], "ledger": [{"step": "all", "epsilon": 1.0, "mechanism": "discrete-laplace"}]}
    >>> def result(name):
    ...     found = Redescription(BooleanLiteral(name), BooleanLiteral("b"),
    ...                           RedescriptionStats.from_counts(30.0, 40.0, 20.0, 200.0))
    ...     return make_document("alt-expm", {}, privacy, [found])
    >>> clired_problem_of(result("a"), "job_1") is None
    True
    >>> clired_problem_of(result("a<b"), "job_1")
    "attribute name 'a<b' cannot be written in clired syntax"
    """
    from dprm.queries import document_redescriptions, to_clired

    try:
        for redescription in document_redescriptions(document, source=source):
            to_clired(redescription.left)
            to_clired(redescription.right)
    except DprmError as error:
        return _clired_reason(error)
    return None


def job_context(request: Request, who: accounts.Analyst, job_id: str, sort: str, order: str) -> dict[str, Any]:
    """A job page's context: the job, its result sorted by ``sort`` and ``order``, its ledger rows."""
    from sqlalchemy import and_, select

    from dprm.server.tables import budgets, ledger

    with request.app.state.db.read() as connection:
        row, name = jobs.find_job(connection, who.id, job_id[:64])
        entries = connection.execute(
            select(ledger).where(and_(ledger.c.job_id == row.id, ledger.c.analyst_id == who.id))
            .order_by(ledger.c.id)).all()
        # the dataset's page is linked where it opens: registered, and a budget on it not withdrawn (0)
        linked = row.active_name is not None and connection.execute(select(budgets.c.total_units).where(and_(
            budgets.c.analyst_id == who.id, budgets.c.dataset_id == row.dataset_id,
            budgets.c.total_units > 0))).first() is not None
    view = jobs.job_view(row, name)
    document = json.loads(row.result) if row.status == "done" and row.result else None
    results = []
    if document is not None:
        # ranked as dprm mine lists them: the kept ones first, the pruned after, each in the miner's order
        entries_kept_first = sorted(document.get("redescriptions", []), key=lambda entry: bool(entry.get("pruned")))
        for rank, entry in enumerate(entries_kept_first, start=1):
            item = {**entry, "rank": rank, "noisy": entry.get("noisy") or {}}
            item["bar"] = support_bar(item["noisy"], entry.get("interval"))
            results.append(item)
        key = SORT_KEYS.get(sort, SORT_KEYS["rank"])
        present = [r for r in results if key(r) is not None]
        missing = [r for r in results if key(r) is None]
        results = sorted(present, key=key, reverse=order == "desc") + missing
    guarantee = str(((document or {}).get("privacy") or {}).get("guarantee", "none"))
    return {"job": view, "dataset_active": linked,
            "clired_problem": None if document is None else clired_problem_of(document, row.public_id),
            "document": document, "results": results, "sort": sort if sort in SORT_KEYS else "rank",
            "kept": sum(not r.get("pruned") for r in results),
            "guarantee_meaning": DUMMY_MEANING if view["dummy"] else explain_guarantee(guarantee),
            "order": "desc" if order == "desc" else "asc",
            "ledger": [{"step": e.step, "mechanism": e.mechanism, "epsilon": e.epsilon,
                        "epsilon_exact": e.epsilon_exact, "at": e.created_at} for e in entries],
            "ledger_total": fraction_text(sum((Fraction(e.epsilon_exact) for e in entries), Fraction(0)))}


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
async def job_page(request: Request, job_id: str, sort: str = "rank", order: str = "asc",
                   partial: str = "0", again: str = "0") -> Response:
    """A job's page; ``again=1`` when the job form that made it was sent again (its page says so)."""
    request.state.action = "ui-job"
    found = await for_reading(request, "analyst")
    if isinstance(found, Response):
        return found
    try:
        page_switch(partial, "partial")  # taken as before (an old page's refresh), always the whole page
        sent_again = page_switch(again, "again")
        context = await run_in_threadpool(job_context, request, found.analyst, job_id, sort, order)
    except ApiError as error:
        return api_problem(request, error, found)
    return render(request, "job.html", session=found, sent_again=sent_again, **context)


def job_document(request: Request, who: accounts.Analyst, job_id: str) -> tuple[Any, str]:
    """The analyst's done job row and its dataset's name, or the API's 409
    (``job_failed``, ``job_cancelled``, ``job_not_done``: :func:`dprm.server.jobs.job_result`)."""
    with request.app.state.db.read() as connection:
        row, name = jobs.find_job(connection, who.id, job_id[:64])
    jobs.job_result(row)
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
        reason = _clired_reason(error)
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
    message = None
    try:
        await run_in_threadpool(request.app.state.service.cancel, request, found.analyst, job_id)
    except ApiError as error:
        if error.code == "unknown_job":
            return api_problem(request, error, found)
        request.state.outcome = error.code
        message = f"The job was not cancelled: {error.message}."  # job_finished: it ended meanwhile
    if is_htmx(request) or message is not None:  # the list with the message, without a redirect that loses it
        items, complete = await run_in_threadpool(analyst_jobs, request, found.analyst)
        return render(request, "_jobs_table.html" if is_htmx(request) else "jobs.html",
                      409 if message is not None else 200, found, jobs=items, message=message,
                      complete=complete, shown_rows=JOBS_PAGE_ROWS,
                      active=any(j["status"] in ("queued", "running") for j in items))
    return redirect("/ui/jobs")
