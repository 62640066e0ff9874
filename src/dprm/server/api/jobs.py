"""``/v1/algorithms`` and ``/v1/jobs``: the private algorithms; submit, list, follow and cancel jobs."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from fastapi import APIRouter, Query, Request, Response
from sqlalchemy import select

from dprm.server import jobs
from dprm.server.api.service import cancel, submit
from dprm.server.api.bodies import ExactJsonRoute
from dprm.server.api.paging import newest_page
from dprm.server.api.deps import ERROR_RESPONSES, Analyst, Db, note
from dprm.server.api_models import ErrorBody, JobRequest
from dprm.server.registrations import shown_name
from dprm.server.tables import datasets

__all__ = ["router"]

router = APIRouter(route_class=ExactJsonRoute)


@router.get("/v1/algorithms", tags=["jobs"], responses=ERROR_RESPONSES,
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


@router.post("/v1/jobs", tags=["jobs"], status_code=201, responses={**ERROR_RESPONSES, 200: {
    "description": "A dry run, or the first job of an idempotency key used before"},
    403: {"model": ErrorBody, "description": "Over budget"},
    409: {"model": ErrorBody, "description": "Idempotency key reused for another request"}},
    summary="Submit a miner run; its epsilon is charged before any row is read.")
def submit_job(request: Request, response: Response, who: Analyst, body: JobRequest) -> dict[str, Any]:
    answer, status = submit(request, who, body)
    response.status_code = status
    return answer


@router.get("/v1/jobs", tags=["jobs"], responses=ERROR_RESPONSES,
            summary="The analyst's jobs, newest first, a page at a time.")
async def list_jobs(request: Request, who: Analyst, db: Db,
                    limit: Annotated[int, Query(ge=1, le=500, description="Jobs of a page.")] = 100,
                    before: Annotated[Optional[int], Query(ge=1, le=2**62, description=(
                        "The cursor of the next page: the answer's 'next' (jobs older than it).")
                    )] = None) -> dict[str, Any]:
    from dprm.server.tables import jobs as jobs_table

    note(request, "list-jobs")
    query = (select(jobs_table, datasets.c.name.label("dataset_name"), datasets.c.active_name)
             .join(datasets, datasets.c.id == jobs_table.c.dataset_id).where(jobs_table.c.analyst_id == who.id))
    rows, following = await db.aread(lambda connection: newest_page(connection, query, jobs_table.c.id, limit,
                                                                    before))
    return {"jobs": [jobs.job_view(r, shown_name(r.dataset_name, r.active_name)) for r in rows],
            "next": following, "truncated": following is not None}


@router.get("/v1/jobs/{job_id}", tags=["jobs"], responses=ERROR_RESPONSES, summary="A job's status and progress.")
async def job_status(request: Request, who: Analyst, db: Db, job_id: str) -> dict[str, Any]:
    note(request, "job-status")
    row, name = await db.aread(lambda connection: jobs.find_job(connection, who.id, job_id[:64]))
    return jobs.job_view(row, name)


@router.get("/v1/jobs/{job_id}/result", tags=["jobs"], responses={**ERROR_RESPONSES, 409: {
    "model": ErrorBody, "description": "Not done, failed or cancelled"}},
    summary="The result of a done job: a dprm.redescriptions/1 document.")
async def job_result(request: Request, who: Analyst, db: Db, job_id: str) -> Response:
    note(request, "job-result")
    row, _ = await db.aread(lambda connection: jobs.find_job(connection, who.id, job_id[:64]))
    return Response(jobs.job_result(row), media_type="application/json")


@router.post("/v1/jobs/{job_id}/cancel", tags=["jobs"], responses={**ERROR_RESPONSES, 409: {
    "model": ErrorBody, "description": "The job has finished"}},
    summary="Cancel a job: queued, its charge is refunded; running, it is kept if rows were read.")
def cancel_job(request: Request, who: Analyst, job_id: str) -> dict[str, Any]:
    return cancel(request, who, job_id)
