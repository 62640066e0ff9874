"""One job in its own process: ``python -m dprm.server.worker --job ID --token TOKEN``.

The database URL comes in the environment (``DPRM_WORKER_DB``), not on the command
line, so that a PostgreSQL password never shows in ``ps``. The supervisor
(:mod:`dprm.server.supervisor`) claims the job and has it forked by its warm fork
server (:mod:`dprm.server.fork_server`, which ran :func:`warm_up` once), or starts
this process for it. Either way one process runs one job. Then the worker

1. reads the job and its dataset; starts a heartbeat thread;
2. hashes the dataset's files again (:func:`~dprm.server.datasets.verify_files`):
   a changed or missing file fails the job with ``dataset_changed`` /
   ``dataset_missing`` and the charge is refunded, because no row was read;
3. records ``data_touched`` (a condition on the job still being its own: a
   cancelled job stops here), then loads the rows (or synthesises dummy rows);
   with a Ray engine (``DPRM_WORKER_ENGINE``: ``ray`` for a local Ray on loopback,
   or ``ray://HOST:PORT``; ``DPRM_WORKER_SHARDS`` shards) and a miner that counts
   through the engine, the rows are not loaded here: each shard actor reads its own
   part of the files and only counts come back (:mod:`dprm.engine`);
4. fits the miner with an :class:`~dprm.privacy.Accountant` holding exactly the
   charged ε and secure noise, reporting progress (noise is drawn here, on the
   summed counts, whichever engine counted them);
5. refuses to publish a result whose privacy block says it is not private (a
   safety net: a complete types file prevents it), and otherwise publishes the
   document and the ledger rows of every release in one transaction.

Any error after step 3 fails the job with the generic ``computation_failed`` (the
charge is kept); its text and traceback go to the job's ``owner_error`` only.

The job's end (the result with its ledger rows, or the failure) is written by
:func:`publish`: a database that does not answer for a while (a PostgreSQL restart,
a lost connection, a SQLite file locked or read-only) is tried again with back-off
for up to :data:`PUBLISH_RETRY_SECONDS`, as the heartbeats go on trying meanwhile,
instead of losing a finished result (the job then ended ``worker_died`` with its ε
kept). Each try is one transaction guarded by the job's status and the worker's
token, so a try whose commit did happen before its answer was lost makes the next
find the job no longer running: nothing is written twice.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import threading
import time
import traceback
from typing import Any

__all__ = ["run_job", "run_claimed", "main", "warm_up", "publish", "database_unavailable", "Unpublished",
           "HEARTBEAT_SECONDS", "JOB_NICENESS", "PUBLISH_RETRY_SECONDS"]

#: Seconds between heartbeats.
HEARTBEAT_SECONDS = 1.0

#: How long a worker tries to write its job's end (result and ledger, or failure) while
#: the database does not answer, before it gives up and exits (the supervisor then fails
#: the job ``worker_died``, its charge kept if it had read rows): 10 minutes.
PUBLISH_RETRY_SECONDS = 600.0

#: The first and the longest wait between two tries of :func:`publish` (doubling in between).
PUBLISH_FIRST_WAIT = 0.1
PUBLISH_LONGEST_WAIT = 5.0

_clock, _sleep = time.monotonic, time.sleep  # (the tests' fake time replaces these two only)

#: How much lower a job's process runs than the server (``nice``): a long job must not
#: slow the interactive requests (budget reads, pages, primitives) of every analyst.
JOB_NICENESS = 10


class _Heartbeat(threading.Thread):
    def __init__(self, db: Any, job_id: int, token: str) -> None:
        super().__init__(daemon=True, name="dprm-heartbeat")
        self.db, self.job_id, self.token = db, job_id, token
        self.stopped = threading.Event()
        self.lost = threading.Event()
        #: Set when the worker writes its job's end (:func:`publish`): from then on the job is
        #: no longer running because of that write, perhaps, so a failed heartbeat is no
        #: reason to end the process (the write itself is guarded by the status and the token).
        self.publishing = threading.Event()

    def run(self) -> None:
        from dprm.server import jobs

        while not self.stopped.wait(HEARTBEAT_SECONDS):
            try:
                if not jobs.heartbeat(self.db, self.job_id, self.token):
                    if self.publishing.is_set():  # ended by this worker's own write (or it finds out there)
                        return
                    self.lost.set()  # cancelled or declared dead: stop at once, publish nothing
                    os._exit(3)
            except Exception:  # noqa: BLE001 - a transient database error: try again
                pass


def _progress_callback(db: Any, job_id: int, token: str) -> Any:
    from dprm.server import jobs

    last = [0.0]

    def progress(done: float, total: float | None = None, *args: Any, **kwargs: Any) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5:
            return
        last[0] = now
        try:
            fraction = float(done) / float(total) if total else float(done)
            jobs.record_progress(db, job_id, token, fraction)
        except Exception:  # noqa: BLE001 - progress is best effort
            pass

    return progress


class Unpublished(Exception):
    """The database stayed unavailable for :data:`PUBLISH_RETRY_SECONDS`: the job's end is not
    written (its cause is the last database error). The worker exits; the supervisor fails the job."""


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be used for a while (worth another try).

    A lost or refused connection, a server shutting down, a pool exhausted, a SQLite
    lock or read-only file (SQLAlchemy's ``OperationalError`` and ``InterfaceError``), a
    connection SQLAlchemy invalidated, a PostgreSQL transaction refused as read-only;
    not a constraint or a programming error, which another try would only repeat.

    Examples
    --------
    >>> from sqlalchemy.exc import IntegrityError, OperationalError
    >>> database_unavailable(OperationalError("UPDATE jobs", {}, Exception("server closed the connection")))
    True
    >>> database_unavailable(IntegrityError("INSERT", {}, Exception("duplicate key"))), database_unavailable(KeyError())
    (False, False)
    """
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(error, (OperationalError, InterfaceError, PoolTimeout)):
        return True
    return isinstance(error, DBAPIError) and (bool(error.connection_invalidated)
                                              or getattr(error.orig, "sqlstate", None) == "25006")


def publish(write: Any, *args: Any, within: float | None = None, **kwargs: Any) -> Any:
    """``write(*args, **kwargs)`` (:func:`~dprm.server.jobs.finish_done` or
    :func:`~dprm.server.jobs.finish_failed`), tried again while the database is unavailable.

    Waits :data:`PUBLISH_FIRST_WAIT` seconds after the first failure, twice as long after
    each next one (at most :data:`PUBLISH_LONGEST_WAIT`), for up to ``within`` seconds in
    all (default :data:`PUBLISH_RETRY_SECONDS`); then :class:`Unpublished` is raised (from
    the last database error); any other error is raised at once. The writes are guarded
    by the job's status and the worker's token, so a try that committed before its answer
    was lost is not repeated: the next one finds the job ended and returns False. (The
    API settles a primitive's charge the same way, with a shorter ``within``:
    :mod:`dprm.server.api.service`; a charge settles once, whatever the tries.)
    """
    seconds = PUBLISH_RETRY_SECONDS if within is None else within
    deadline = _clock() + seconds
    wait = PUBLISH_FIRST_WAIT
    while True:
        try:
            return write(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - only an unavailable database is tried again
            if not database_unavailable(error):
                raise
            if _clock() + wait > deadline:
                raise Unpublished(f"the database was unavailable for {seconds:g} s") from error
        _sleep(wait)
        wait = min(wait * 2, PUBLISH_LONGEST_WAIT)


def run_job(db: Any, job_id: int, token: str) -> str:
    """Run the claimed job ``job_id``; returns its final status."""
    import numpy as np
    from sqlalchemy import select

    from dprm.errors import DprmError
    from dprm.mining import make_miner
    from dprm.privacy import Accountant, SecureNoise
    from dprm.server import jobs
    from dprm.server.budget import Release
    from dprm.server.datasets import DatasetRecord, load_registered, verify_files
    from dprm.server.dummy import dummy_data, dummy_privacy
    from dprm.server.errors import ApiError
    from dprm.server.tables import datasets, jobs as jobs_table
    from dprm.server.units import units_fraction

    with db.read() as connection:
        job = connection.execute(select(jobs_table).where(jobs_table.c.id == job_id)).first()
        if job is None or job.status != "running" or job.worker_token != token:
            return "not-mine"
        dataset_row = connection.execute(select(datasets).where(datasets.c.id == job.dataset_id)).one()
        record = DatasetRecord.from_row(dataset_row)
    if dataset_row.active_name is None:  # removed by the owner while the job was queued: no row read
        publish(jobs.finish_failed, db, job_id, token, code=jobs.REMOVED_DATASET, message=None,
                owner_error="the dataset was removed before the job started", touched=False)
        return "failed"
    heart = _Heartbeat(db, job_id, token)
    heart.start()
    touched = False
    try:
        if not job.dummy:
            verify_files(record)
        if not jobs.touch(db, job_id, token):
            return "cancelled"
        touched = not job.dummy
        parameters = json.loads(job.parameters)
        parameters["epsilon"] = float(units_fraction(job.epsilon_units))
        miner = make_miner(job.algorithm, **parameters)
        accountant = Accountant(units_fraction(job.epsilon_units), SecureNoise())
        fit_options: dict[str, Any] = {"accountant": accountant, "rng": np.random.default_rng()}
        if "progress" in inspect.signature(miner.fit).parameters:
            fit_options["progress"] = _progress_callback(db, job_id, token)
        described: dict[str, Any] = {"dataset": record.name, "dummy": bool(job.dummy)}
        engine = _engine_from_environment()
        if engine is not None and not job.dummy and getattr(miner, "counts_through_engine", False):
            with _sharded(record, *engine) as sharded:
                miner.fit(sharded, **fit_options)
            described.update(engine="ray", shards=engine[1])
        else:
            data = dummy_data(record, job.dummy_rows or 1000) if job.dummy else load_registered(record)
            miner.fit(data, **fit_options)
        document = miner.document(described)
        if job.dummy:  # no private row touched: not a DP release of the data (dummy.DUMMY_REASON)
            document["privacy"] = dummy_privacy(document["privacy"])
        if not job.dummy and not document.get("privacy", {}).get("private", False):
            reasons = document.get("privacy", {}).get("reasons", [])
            # The analyst sees the generic failure: which failure it was may depend on the rows.
            heart.publishing.set()
            ok = publish(jobs.finish_failed, db, job_id, token, code="computation_failed", message=None,
                         owner_error=f"result withheld, not private: {reasons}", touched=True)
            return "failed" if ok else "lost"
        releases = [Release(e.step, e.mechanism, e.epsilon) for e in accountant.ledger]
        heart.publishing.set()
        return "done" if publish(jobs.finish_done, db, job_id, token, releases, document) else "lost"
    except Unpublished:  # the database is gone: no other end can be written either
        raise
    except ApiError as error:  # the files changed or vanished: no row was read
        heart.publishing.set()
        publish(jobs.finish_failed, db, job_id, token, code=error.code, message=error.message,
                owner_error=str(error), touched=touched)
        return "failed"
    except Exception as error:  # noqa: BLE001 - generic for the analyst, full text for the owner
        owner = "".join(traceback.format_exception(error))[-8000:]
        message = None
        if job.dummy and isinstance(error, DprmError):  # dummy rows are public
            message = str(error).splitlines()[0][:300]
        heart.publishing.set()
        publish(jobs.finish_failed, db, job_id, token, code="computation_failed", message=message,
                owner_error=owner, touched=touched)
        return "failed"
    finally:
        heart.stopped.set()


def _engine_from_environment() -> tuple[str | None, int] | None:
    """The Ray engine the supervisor asked for: ``(address, shards)``, address None
    for a local Ray on loopback; None to count in this process."""
    engine = os.environ.get("DPRM_WORKER_ENGINE")
    if not engine:
        return None
    return (None if engine == "ray" else engine), int(os.environ.get("DPRM_WORKER_SHARDS", "2"))


def _sharded(record: Any, address: str | None, shards: int) -> Any:
    """A :class:`~dprm.engine.ray_engine.RayEngine` over the registered files, loaded
    with the options they were registered with (each shard reads its own part)."""
    from dprm.data import TypesSpec
    from dprm.engine.ray_engine import RayEngine
    from dprm.engine.sharding import ShardSpec
    from dprm.server.datasets import loading_options

    types = TypesSpec.from_mapping(record.types, source=f"types of dataset {record.name}")
    spec = ShardSpec.of(record.left_path, record.right_path, types=types, **loading_options(record))
    return RayEngine(spec, shards=shards, address=address)


def warm_up() -> None:
    """What a job's first seconds would otherwise go to: the imports, the precompiled kernels and numba's cache.

    Touches no data, no database and starts no thread: the fork server
    (:mod:`dprm.server.fork_server`) runs it once and forks every job from the result.
    """
    import dprm.data.loading  # noqa: F401 (dprm.data imports its loaders on first use)
    import dprm.mining  # noqa: F401
    import dprm.server.database  # noqa: F401
    import dprm.server.datasets  # noqa: F401
    import dprm.server.jobs  # noqa: F401
    from dprm.kernel_cache import load_cached
    from dprm.precompiled import preload

    try:
        preload()
        load_cached()
    except Exception:  # noqa: BLE001 - only a head start: the job compiles or loads what it needs itself
        pass


def run_claimed(url: str, job_id: int, token: str) -> int:
    """Run the claimed job on the database at ``url`` at :data:`JOB_NICENESS`; the process's exit code (0: the job ended as it should)."""
    from dprm.server.database import Database

    os.nice(JOB_NICENESS)

    db = Database(url, pool_size=2)
    try:
        status = run_job(db, job_id, token)
    finally:
        db.dispose()
    return 0 if status in ("done", "failed", "cancelled", "not-mine") else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of a worker process."""
    parser = argparse.ArgumentParser(prog="python -m dprm.server.worker")
    parser.add_argument("--job", type=int, required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args(argv)
    url = os.environ.get("DPRM_WORKER_DB")
    if not url:
        print("error: DPRM_WORKER_DB is not set", file=sys.stderr)
        return 2
    return run_claimed(url, args.job, args.token)


if __name__ == "__main__":  # pragma: no cover - run as a process
    raise SystemExit(main())
