"""The job queue, in the database: submit, claim, progress, finish, fail, cancel, recover.

A job's life, each step one transaction guarded by a condition on its status::

    submit   budget reserved + job 'queued'                (charge 'reserved')
    claim    'queued' -> 'running', worker token            (supervisor; fair: the analyst with the fewest
                                                             running jobs first, then the oldest job)
    touch    data_touched = true  WHERE 'running'           (worker, before reading rows)
    done     'running' -> 'done' + result + ledger rows     (charge 'spent')
    failed   'running' -> 'failed'                          (charge kept if touched, else refunded)
    cancel   'queued' -> 'cancelled'                        (refunded)
             'running' -> 'cancelled'                       (kept if touched, else refunded)
    removed  'queued'/'running' -> 'failed' dataset_removed (the owner's ``dataset remove --force``:
                                                             kept if touched, else refunded)

The result and the ledger rows are written in the same transaction, so a result is
never readable without its ledger. The worker's writes name its token and require
``status = 'running'``: once a job is cancelled or declared dead, a late worker can
neither touch the rows nor publish a result.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any, Sequence

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from dprm.server import budget
from dprm.server.budget import Release
from dprm.server.registrations import shown_name
from dprm.server.errors import ERRORS, ApiError
from dprm.server.tables import analysts, datasets, jobs
from dprm.server.units import units_float, units_text

__all__ = ["request_digest", "submit", "job_view", "find_job", "job_result", "claim_next", "touch", "record_progress",
           "heartbeat", "finish_done", "finish_failed", "cancel", "fail_running", "running_jobs", "active_jobs",
           "fail_dataset_jobs", "REMOVED_DATASET"]

#: The error code of a job whose dataset the owner removed while it was queued or running.
REMOVED_DATASET = "dataset_removed"


def request_digest(body: dict[str, Any]) -> str:
    """A digest of what a submission asks for (to compare two uses of one idempotency key)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def submit(db: Any, analyst_id: int, dataset_id: int, *, algorithm: str, parameters: dict[str, Any], units: int,
           dummy: bool, dummy_rows: int | None, idempotency_key: str | None, digest: str,
           max_active: int | None = None) -> tuple[Any, bool]:
    """Queue a job, charging its ε first (unless dummy); ``(job row, created)``.

    With an idempotency key already used by this analyst, the first job is returned
    and nothing is charged (``created`` False); the key with a different request is
    ``idempotency_key_reused``. Over budget: ``budget_exceeded``, nothing written.
    With ``max_active`` jobs of this analyst already queued or running (dummy ones
    too: they cost no ε but hold workers): ``too_many_jobs``, nothing written.
    """

    def existing(connection: Any) -> Any:
        if idempotency_key is None:
            return None
        return connection.execute(select(jobs).where(and_(jobs.c.analyst_id == analyst_id,
                                                          jobs.c.idempotency_key == idempotency_key))).first()

    def replay(row: Any) -> tuple[Any, bool]:
        if row.request_digest != digest:
            raise ApiError("idempotency_key_reused")
        return row, False

    def work(connection: Any) -> tuple[Any, bool]:
        row = existing(connection)
        if row is not None:
            return replay(row)
        if max_active is not None:
            # one submission of this analyst at a time counts (PostgreSQL: concurrent ones wait here).
            # FOR NO KEY UPDATE, not FOR UPDATE: a primitive's charge holds the budget row and
            # then takes FOR KEY SHARE on this row through its foreign key, which FOR UPDATE
            # would block while this transaction waits for the budget row (a deadlock).
            connection.execute(select(analysts.c.id).where(analysts.c.id == analyst_id)
                               .with_for_update(key_share=True))
            active = connection.execute(select(func.count()).select_from(jobs).where(and_(
                jobs.c.analyst_id == analyst_id, jobs.c.status.in_(("queued", "running"))))).scalar_one()
            if active >= max_active:
                raise ApiError("too_many_jobs", f"{active} of your jobs are queued or running, the most this "
                                                f"server allows; wait for one to finish or cancel one")
        charge_id = None
        if not dummy:
            charge_id = budget.reserve(connection, analyst_id, dataset_id, units, kind="job", action=algorithm)
            if charge_id is None:
                raise _over_budget(connection, analyst_id, dataset_id, units)
        public_id = "job_" + secrets.token_hex(12)
        connection.execute(insert(jobs).values(
            public_id=public_id, analyst_id=analyst_id, dataset_id=dataset_id, charge_id=charge_id,
            idempotency_key=idempotency_key, request_digest=digest, algorithm=algorithm,
            parameters=json.dumps(parameters), epsilon_units=units, dummy=dummy, dummy_rows=dummy_rows,
            status="queued", created_at=time.time(), data_touched=False))
        return connection.execute(select(jobs).where(jobs.c.public_id == public_id)).one(), True

    try:
        return db.transaction(work)
    except IntegrityError:
        # The same key in a concurrent submission won the race: answer with its job.
        with db.read() as connection:
            row = existing(connection)
        if row is None:
            raise
        return replay(row)


def _over_budget(connection: Any, analyst_id: int, dataset_id: int, units: int) -> ApiError:
    state = budget.remaining(connection, analyst_id, dataset_id)
    left = 0 if state is None else max(state[0] - state[1], 0)
    return ApiError("budget_exceeded", f"epsilon {units_text(units)} exceeds the remaining budget "
                                       f"{units_text(left)} on this dataset")


def job_view(row: Any, dataset_name: str) -> dict[str, Any]:
    """What the analyst sees of a job (never the worker, its pid or the owner's error text)."""
    error = None
    if row.error_code:
        error = {"code": row.error_code,
                 "message": row.error_message or ERRORS.get(row.error_code, ERRORS["computation_failed"])[1]}
    return {
        "id": row.public_id, "dataset": dataset_name, "algorithm": row.algorithm,
        "parameters": json.loads(row.parameters), "epsilon": units_float(row.epsilon_units),
        "epsilon_exact": units_text(row.epsilon_units), "dummy": bool(row.dummy), "status": row.status,
        "progress": None if row.progress is None else round(float(row.progress), 3),
        "created_at": row.created_at, "started_at": row.started_at, "finished_at": row.finished_at,
        "error": error, "result_available": row.status == "done",
        "idempotency_key": row.idempotency_key,
    }


def find_job(connection: Any, analyst_id: int, public_id: str) -> tuple[Any, str]:
    """The analyst's job and its dataset's name (``NAME (removed)`` for a removed registration);
    another analyst's job is ``unknown_job``."""
    row = connection.execute(
        select(jobs, datasets.c.name.label("dataset_name"), datasets.c.active_name)
        .join(datasets, datasets.c.id == jobs.c.dataset_id)
        .where(and_(jobs.c.public_id == public_id, jobs.c.analyst_id == analyst_id))
    ).first()
    if row is None:
        raise ApiError("unknown_job")
    return row, shown_name(row.dataset_name, row.active_name)


def job_result(row: Any) -> str:
    """A job's result document (JSON text), or why it has none: ``409 job_failed``,
    ``job_cancelled`` or ``job_not_done`` (the API's and the web pages' one answer)."""
    if row.status == "failed":
        raise ApiError("job_failed", f"the job failed ({row.error_code}); it has no result")
    if row.status == "cancelled":
        raise ApiError("job_cancelled")
    if row.status != "done" or row.result is None:
        raise ApiError("job_not_done", f"the job is {row.status}; it has no result yet")
    return row.result


def claim_next(db: Any, worker_token: str) -> Any | None:
    """Take a queued job for a worker (``'queued'`` → ``'running'``), or None.

    Fair between analysts: the oldest queued job of the analyst with the fewest running
    jobs, so one analyst's many jobs (free dummy ones, say) cannot hold every worker
    while another's wait.
    """

    with db.read() as connection:  # most rounds find nothing: no write lock for them
        if connection.execute(select(jobs.c.id).where(jobs.c.status == "queued").limit(1)).first() is None:
            return None

    def work(connection: Any) -> Any | None:
        for job_id in _fair_order(connection):
            now = time.time()
            taken = connection.execute(
                update(jobs).where(and_(jobs.c.id == job_id, jobs.c.status == "queued"))
                .values(status="running", worker_token=worker_token, started_at=now, heartbeat_at=now, progress=0.0)
            ).rowcount
            if taken == 1:
                return connection.execute(select(jobs).where(jobs.c.id == job_id)).one()
        return None

    return db.transaction(work)


def _fair_order(connection: Any, limit: int = 5) -> list[int]:
    """Up to ``limit`` queued job ids: by the analyst's running jobs, then by age."""
    running = dict(connection.execute(select(jobs.c.analyst_id, func.count()).where(jobs.c.status == "running")
                                      .group_by(jobs.c.analyst_id)).all())
    oldest = connection.execute(select(jobs.c.analyst_id, func.min(jobs.c.id)).where(jobs.c.status == "queued")
                                .group_by(jobs.c.analyst_id)).all()
    firsts = sorted(oldest, key=lambda row: (running.get(row[0], 0), row[1]))
    return [job_id for _, job_id in firsts[:limit]]


def _mine(job_id: int, token: str) -> Any:
    return and_(jobs.c.id == job_id, jobs.c.status == "running", jobs.c.worker_token == token)


def set_pid(db: Any, job_id: int, token: str, pid: int) -> None:
    with db.write() as connection:
        connection.execute(update(jobs).where(_mine(job_id, token)).values(worker_pid=pid, heartbeat_at=time.time()))


def touch(db: Any, job_id: int, token: str) -> bool:
    """Record that the worker is about to read rows; False if the job is no longer its."""
    with db.write() as connection:
        return connection.execute(update(jobs).where(_mine(job_id, token))
                                  .values(data_touched=True, heartbeat_at=time.time())).rowcount == 1


def heartbeat(db: Any, job_id: int, token: str) -> bool:
    """The worker is alive; False if the job is no longer its (cancelled, declared dead)."""
    with db.write() as connection:
        return connection.execute(update(jobs).where(_mine(job_id, token))
                                  .values(heartbeat_at=time.time())).rowcount == 1


def record_progress(db: Any, job_id: int, token: str, fraction: float) -> bool:
    with db.write() as connection:
        return connection.execute(update(jobs).where(_mine(job_id, token)).values(
            progress=min(max(float(fraction), 0.0), 1.0), heartbeat_at=time.time())).rowcount == 1


def finish_done(db: Any, job_id: int, token: str, releases: Sequence[Release], result: dict[str, Any]) -> bool:
    """Publish the result and the ledger rows in one transaction; False if too late."""
    text = json.dumps(result)

    def work(connection: Any) -> bool:
        # The job first: once it is 'done' nobody else settles its charge.
        changed = connection.execute(update(jobs).where(_mine(job_id, token)).values(
            status="done", result=text, progress=1.0, finished_at=time.time())).rowcount
        if changed != 1:
            return False
        charge_id = connection.execute(select(jobs.c.charge_id).where(jobs.c.id == job_id)).scalar_one()
        if charge_id is not None and not budget.keep(connection, charge_id, releases, job_id=job_id):
            raise RuntimeError(f"the charge of job {job_id} was settled before its result")  # rolls back
        return True

    return db.transaction(work)


def _settle(connection: Any, job: Any, touched: bool, step: str) -> None:
    if job.charge_id is None:
        return
    if touched:
        budget.keep(connection, job.charge_id, [], job_id=job.id, unspent_step=step)
    else:
        budget.refund(connection, job.charge_id)


def finish_failed(db: Any, job_id: int, token: str, *, code: str, message: str | None, owner_error: str | None,
                  touched: bool) -> bool:
    """The worker failed: charge kept if rows were (or may have been) read, else refunded."""

    def work(connection: Any) -> bool:
        job = connection.execute(select(jobs).where(_mine(job_id, token))).first()
        if job is None:
            return False
        changed = connection.execute(update(jobs).where(_mine(job_id, token)).values(
            status="failed", error_code=code, error_message=message, owner_error=owner_error,
            finished_at=time.time())).rowcount
        if changed != 1:
            return False
        touched_any = touched or bool(connection.execute(select(jobs.c.data_touched)
                                                          .where(jobs.c.id == job_id)).scalar_one())
        _settle(connection, job, touched_any, f"job failed ({code}) after reading the rows: no result")
        return True

    return db.transaction(work)


def fail_running(db: Any, job_id: int, *, code: str, owner_error: str) -> bool:
    """Declare a running job failed from outside its worker (dead worker, timeout)."""

    def work(connection: Any) -> bool:
        while True:
            job = connection.execute(select(jobs).where(and_(jobs.c.id == job_id, jobs.c.status == "running"))).first()
            if job is None:
                return False
            # The condition on data_touched: a worker that touches the rows meanwhile
            # makes the update miss, and the loop reads the job again.
            changed = connection.execute(update(jobs).where(and_(
                jobs.c.id == job_id, jobs.c.status == "running", jobs.c.data_touched == job.data_touched)).values(
                status="failed", error_code=code, error_message=None, owner_error=owner_error,
                finished_at=time.time())).rowcount
            if changed == 1:
                _settle(connection, job, bool(job.data_touched), f"job failed ({code}) after reading the rows: no result")
                return True

    return db.transaction(work)


def cancel(db: Any, analyst_id: int, public_id: str) -> Any:
    """Cancel the analyst's job (queued: refunded; running: kept if rows were read)."""

    def work(connection: Any) -> Any:
        while True:
            job, _ = find_job(connection, analyst_id, public_id)
            if job.status in ("done", "failed"):
                raise ApiError("job_finished")
            if job.status == "cancelled":
                return job
            changed = connection.execute(update(jobs).where(and_(
                jobs.c.id == job.id, jobs.c.status == job.status, jobs.c.data_touched == job.data_touched))
                .values(status="cancelled", finished_at=time.time())).rowcount
            if changed == 1:
                _settle(connection, job, bool(job.data_touched), "job cancelled after reading the rows: no result")
                return find_job(connection, analyst_id, public_id)[0]

    return db.transaction(work)


def active_jobs(connection: Any, dataset_id: int) -> dict[str, int]:
    """How many jobs on the dataset are ``queued`` and ``running``."""
    counted = dict(connection.execute(
        select(jobs.c.status, func.count()).where(and_(jobs.c.dataset_id == dataset_id,
                                                        jobs.c.status.in_(("queued", "running"))))
        .group_by(jobs.c.status)).all())
    return {"queued": int(counted.get("queued", 0)), "running": int(counted.get("running", 0))}


def fail_dataset_jobs(connection: Any, dataset_id: int, *, owner_error: str) -> dict[str, int]:
    """Fail every queued or running job on the dataset with :data:`REMOVED_DATASET`, in
    the caller's transaction (the owner removes the dataset in it).

    Each charge is settled as a failed job's: kept, with one ledger row, where the job
    had read rows; refunded where it had not. A running job's worker then finds the job
    no longer its own: its heartbeat stops it and it can publish nothing (its writes
    require ``status = 'running'`` and its token). Returns the numbers of jobs ended and
    of charges ``kept``, ``refunded`` and ``free`` (dummy jobs have none).
    """
    done = {"ended": 0, "kept": 0, "refunded": 0, "free": 0}
    while True:
        job = connection.execute(select(jobs).where(and_(
            jobs.c.dataset_id == dataset_id, jobs.c.status.in_(("queued", "running")))).order_by(jobs.c.id)
            .limit(1)).first()
        if job is None:
            return done
        # The conditions on status and data_touched: a worker that claims or touches the job
        # meanwhile makes the update miss, and the loop reads the job again.
        changed = connection.execute(update(jobs).where(and_(
            jobs.c.id == job.id, jobs.c.status == job.status, jobs.c.data_touched == job.data_touched)).values(
            status="failed", error_code=REMOVED_DATASET, error_message=None, owner_error=owner_error,
            finished_at=time.time())).rowcount
        if changed != 1:
            continue
        touched = bool(job.data_touched)
        _settle(connection, job, touched, f"job failed ({REMOVED_DATASET}) after reading the rows: no result")
        done["ended"] += 1
        done["free" if job.charge_id is None else "kept" if touched else "refunded"] += 1


def running_jobs(connection: Any) -> list[Any]:
    """Every running job (for the supervisor)."""
    return list(connection.execute(select(jobs.c.id, jobs.c.worker_pid, jobs.c.worker_token, jobs.c.heartbeat_at,
                                          jobs.c.started_at).where(jobs.c.status == "running")))
