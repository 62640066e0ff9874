"""Runs queued jobs in worker processes and notices the ones that died.

A thread of the API process (started by :func:`dprm.server.app.create_app`). Every
``poll`` seconds it

1. reaps its own worker processes: one that exited while its job is still
   ``running`` died (SIGKILL, out of memory, a crash): the job is failed with
   ``worker_died``, its charge kept when it had touched the rows;
2. checks every running job, also those of workers it did not start (a previous
   server's, after a restart): a job whose worker's pid is gone or whose heartbeat is
   older than ``stale_after`` seconds is failed the same way (a pid is looked at only
   where it names a process of this machine: :func:`worker_token`; another server's
   worker on another machine sharing the PostgreSQL database is judged by its
   heartbeat alone); one running longer
   than ``job_timeout`` is failed with ``timeout`` and its worker killed; the worker
   of a cancelled job is killed, and one whose job ended (``done``, ``failed``) but
   which has not exited :data:`ENDED_GRACE_SECONDS` later (a killed worker with every
   process of its session: :func:`kill_session`);
3. keeps the orphaned charges of primitives (:func:`dprm.server.budget.keep_orphans`);
4. keeps a warm *fork server* (:mod:`dprm.server.fork_server`: imports done,
   compiled kernels loaded) and has it fork the process of each claimed job, so a job
   starts in milliseconds instead of paying a new interpreter's 1.5-2 CPU seconds; a
   job is never given to a dead fork server (it gets a new interpreter instead), and
   one that died is replaced after :data:`WARM_RETRY_SECONDS`. With ``warm=False``,
   or where pidfds do not exist, every job starts a new interpreter;
5. starts workers for queued jobs, at most ``workers`` at a time, counting the
   jobs still running in the workers of the previous server (found running, their
   worker alive, at :meth:`Supervisor.recover`) until they end or are failed in step 2:
   after a restart, ``--workers 1`` runs one job, not the orphan and a new one.

Workers run in their own session, so stopping the server (or Ctrl-C in its
terminal) does not stop them: a running job finishes and publishes its result,
and queued jobs wait in the database for the next start.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from sqlalchemy import and_, select

from dprm.server import budget, fork_server, jobs
from dprm.server.tables import jobs as jobs_table

__all__ = ["MAX_BACKOFF_SECONDS", "Supervisor", "failure_line", "machine_key", "pid_alive", "worker_token",
           "pid_is_local"]

log = logging.getLogger("dprm.server")

#: Seconds before a new fork server replaces one that died (one that cannot start
#: must not be restarted every round).
WARM_RETRY_SECONDS = 10.0

#: The longest wait between two failed rounds.
MAX_BACKOFF_SECONDS = 30.0

#: Seconds a worker whose job has ended as ``done`` or ``failed`` (it published its
#: answer, or another server failed the job) may take to exit by itself before it is
#: killed; a cancelled job's worker is killed at once. (Killing a worker in the
#: moment between its last write and its exit was a race: its exit code then said
#: SIGKILL for a job that had succeeded.)
ENDED_GRACE_SECONDS = 30.0


def failure_line(error: BaseException) -> str:
    """One line naming a failure: its type and the first line of what the driver said.

    Examples
    --------
    >>> failure_line(RuntimeError("attempt to write a readonly database\\n[SQL: UPDATE ...]"))
    'RuntimeError: attempt to write a readonly database'
    """
    text = str(getattr(error, "orig", None) or error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"[:500]


def machine_key() -> str:
    """8 hex digits naming the processes a pid can name here: the kernel's boot and this pid namespace.

    Two servers on one machine (and namespace) have the same key; servers on two
    machines sharing a PostgreSQL database, or in two containers, have different ones.
    Without ``/proc`` the host's name stands in.
    """
    parts = []
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            parts.append(handle.read().strip())
        parts.append(os.readlink("/proc/self/ns/pid"))
    except OSError:
        parts = [socket.gethostname()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


_MACHINE = machine_key()


def worker_token(machine: str | None = None) -> str:
    """A new worker's token: 32 random hex digits, ``@`` and the key of the machine it runs on.

    The job row keeps it beside the worker's pid, so that a supervisor judges a pid only
    where it names a process of its own machine (:func:`pid_is_local`).

    Examples
    --------
    >>> token = worker_token("0123abcd")
    >>> len(token), token.endswith("@0123abcd"), pid_is_local(token)
    (41, True, False)
    >>> pid_is_local(worker_token())
    True
    """
    return f"{secrets.token_hex(16)}@{_MACHINE if machine is None else machine}"


def pid_is_local(token: str | None) -> bool:
    """Whether the pid recorded with this worker token names a process of this machine.

    Tokens without ``@`` (those of servers before session 58) count as local, as they did.
    Another machine's pid names nothing here, or another process: its worker is alive or
    dead whatever ``os.kill`` says on this machine.
    """
    if token is None or "@" not in token:
        return True
    return token.rsplit("@", 1)[1] == _MACHINE


def pid_alive(pid: int | None) -> bool:
    """Whether a process with this pid exists (and is not a zombie, on Linux)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return True


def session_members(leader: int) -> list[int]:
    """The live processes (not zombies) of the session ``leader`` led, but the leader; ``[]`` without ``/proc``.

    Examples
    --------
    >>> child = subprocess.Popen(["sleep", "30"], start_new_session=True)   # leads a session of its own
    >>> grandchild_free = session_members(child.pid)   # nobody else is in it
    >>> child.kill(); _ = child.wait()
    >>> grandchild_free
    []
    """
    try:
        entries = os.listdir("/proc")
    except OSError:  # not Linux: the process group's kill is all there is
        return []
    members = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == leader:
            continue
        try:
            if os.getsid(int(entry)) != leader:
                continue
            with open(f"/proc/{entry}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):  # ended meanwhile
            continue
        if state not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def kill_session(process: "subprocess.Popen | fork_server.ForkedWorker") -> None:
    """SIGKILL a live worker and every process of its session, wait for them, remove its local Ray's folder.

    A worker leads a session of its own (``start_new_session``, or ``os.setsid`` in the
    fork server), which its own children share: a local Ray's processes (with
    ``--engine ray``), whose dashboard and runtime-environment agents outlive a killed
    driver by a minute or more. Called while the worker is alive, so that its pid is
    its session's and process group's id and names no other process. The local Ray's
    session directory (logs, sockets), which a killed worker cannot remove, is named
    after the worker's pid (:func:`dprm.engine.ray_engine.local_folder_prefix`).
    """
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # ended just now
        pass
    process.kill()
    process.wait(timeout=10)
    # A local Ray's workers run in process groups of their own within the session: killed
    # too, and waited for, so that none writes into the folder after it is removed.
    deadline = time.monotonic() + 10
    while (members := session_members(process.pid)) and time.monotonic() < deadline:
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
    from dprm.engine.ray_engine import local_folder_prefix  # (imports no Ray)

    prefix = glob.escape(local_folder_prefix(process.pid))
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), prefix + "*")):
        shutil.rmtree(folder, ignore_errors=True)


class Supervisor:
    """The job runner of one server process.

    Parameters
    ----------
    db : Database
    workers : int
        Jobs run at the same time (0: jobs stay queued).
    poll : float
        Seconds between rounds.
    job_timeout : float
        Seconds a job may run.
    stale_after : float
        Seconds without a heartbeat after which a worker counts as dead.
    warm : bool
        Fork each job's process from a warm fork server (step 4); ``False``: every
        job starts a new interpreter (``benchmarks/bench_startup.py --server``
        compares).
    engine : str, optional
        Where the workers count the rows of jobs whose miner counts through the
        engine (:mod:`dprm.engine`): None in the worker process, ``""`` sharded on a
        local Ray on loopback started by the worker, ``"ray://HOST:PORT"`` on that
        cluster; passed to the workers in their environment (``DPRM_WORKER_ENGINE``).
    shards : int
        Shards of the Ray engine (``DPRM_WORKER_SHARDS``).
    """

    def __init__(self, db: Any, workers: int, *, poll: float = 0.2, job_timeout: float = 3600.0,
                 stale_after: float = 60.0, orphan_after: float = 600.0, warm: bool = True,
                 engine: str | None = None, shards: int = 2) -> None:
        self.db = db
        self.engine = engine
        self.shards = int(shards)
        self.workers = int(workers)
        self.warm = warm and fork_server.available()
        self.poll = poll
        self.job_timeout = job_timeout
        self.stale_after = stale_after
        self.orphan_after = orphan_after
        self.processes: dict[int, tuple[subprocess.Popen | fork_server.ForkedWorker, str]] = {}
        #: Running jobs whose live workers this supervisor found at its start (a previous
        #: server's): each holds one of the ``workers`` slots while it runs.
        self.inherited: set[int] = set()
        self.fork_server: fork_server.ForkServer | None = None
        self._next_fork_server = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_sweep = 0.0
        #: When a round last found the database unavailable (``time.time()``; 0: never). For
        #: ``stale_after`` seconds after it no heartbeat is judged stale: the workers could not
        #: write theirs meanwhile either.
        self._unreachable_at = 0.0

    def start(self) -> None:
        self.recover()
        self._thread = threading.Thread(target=self._loop, name="dprm-supervisor", daemon=True)
        self._thread.start()

    def stop(self, *, kill_workers: bool = False) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.fork_server is not None:  # its input closes: it exits, its jobs go on
            self.fork_server.stop(kill=kill_workers)
            self.fork_server = None
        if kill_workers:
            for process, _ in self.processes.values():
                if process.poll() is None:
                    kill_session(process)

    def recover(self) -> None:
        """At start: fail the running jobs whose worker is gone; keep every orphan charge.

        A worker is gone when its pid names no process here; a job whose worker runs on
        another machine (another server on the same PostgreSQL database:
        :func:`pid_is_local`) is left to the heartbeat check of :meth:`round`.

        Every primitive charge still reserved when this server starts was reserved by
        a server that died before its answer (this one has answered nothing yet): it
        is kept now, so that ``spent`` equals the ledger's sum from the start. (A
        second server on the same PostgreSQL database may be answering one of them
        right now; it then finds the charge kept, the same amount, and the ledger
        says "interrupted" for a request that was answered: the books stay exact.)
        """
        with self.db.read() as connection:
            running = jobs.running_jobs(connection)
        for job in running:
            if not pid_is_local(job.worker_token):  # another machine's worker: its heartbeat tells (step 2)
                continue
            if not pid_alive(job.worker_pid):
                jobs.fail_running(self.db, job.id, code="worker_died",
                                  owner_error="the worker process was gone when the server started")
            elif job.id not in self.processes:
                self.inherited.add(job.id)
        self.db.transaction(lambda c: budget.keep_orphans(c))

    def _loop(self) -> None:
        """Rounds every ``poll`` seconds; after a failed round, waits twice as long each time
        (up to :data:`MAX_BACKOFF_SECONDS`) and logs one line per distinct failure, and one
        line when a round succeeds again (a database that cannot be written or reached
        fails every round: not a traceback five times a second)."""
        failures = 0
        last = ""
        while not self._stop.is_set():
            try:
                self.round()
            except Exception as error:  # noqa: BLE001 - a database hiccup: log and go on
                from dprm.server.worker import database_unavailable

                if database_unavailable(error):
                    self._unreachable_at = time.time()
                failures += 1
                reason = failure_line(error)
                if reason != last:
                    log.error("supervisor round failed: %s (retrying with back-off)", reason)
                    if failures == 1:  # the first one in full, for the owner
                        log.debug("supervisor round failed", exc_info=True)
                    last = reason
            else:
                if failures:
                    log.warning("supervisor rounds succeed again after %d failures", failures)
                failures, last = 0, ""
            self._stop.wait(min(self.poll * 2 ** min(failures, 16), MAX_BACKOFF_SECONDS) if failures else self.poll)

    def round(self) -> None:
        """One round of the steps in the module docstring."""
        now = time.time()
        # 1. own workers that exited
        for job_id, (process, token) in list(self.processes.items()):
            if process.poll() is not None:
                del self.processes[job_id]
                if jobs.fail_running(self.db, job_id, code="worker_died",
                                     owner_error=f"the worker exited with code {process.returncode} "
                                                 f"before publishing a result"):
                    log.warning("job %s: worker died (exit code %s)", job_id, process.returncode)
        # 2. every running job, and the cancelled ones still holding a worker
        with self.db.read() as connection:
            running = jobs.running_jobs(connection)
            ended = set()
            if self.processes:
                ended = {row.id for row in connection.execute(
                    select(jobs_table.c.id, jobs_table.c.status, jobs_table.c.finished_at).where(and_(
                        jobs_table.c.id.in_(list(self.processes)), jobs_table.c.status != "running")))
                         if row.status not in ("done", "failed") or row.finished_at is None
                         or now - row.finished_at > ENDED_GRACE_SECONDS}
        still_inherited = set()
        for job in running:
            own = job.id in self.processes
            if job.started_at is not None and now - job.started_at > self.job_timeout:
                if jobs.fail_running(self.db, job.id, code="timeout", owner_error="the job ran out of time"):
                    self._kill(job.id)
                continue
            if own:
                continue
            # (no heartbeat could be written while the database was unavailable: none is stale
            # until stale_after seconds after this supervisor last found it so)
            stale = ((job.heartbeat_at is None or now - job.heartbeat_at > self.stale_after)
                     and now - self._unreachable_at > self.stale_after)
            gone = job.worker_pid is not None and pid_is_local(job.worker_token) and not pid_alive(job.worker_pid)
            if gone or stale:
                # A silent worker that is still alive sees at its next heartbeat that
                # the job is no longer its and exits without publishing anything.
                jobs.fail_running(self.db, job.id, code="worker_died",
                                  owner_error="the worker is gone or silent (no heartbeat)")
            elif job.id in self.inherited:
                still_inherited.add(job.id)
        self.inherited = still_inherited  # a previous server's jobs hold slots while they run
        for job_id in ended:  # cancelled while our worker runs, or ended and the worker did not exit
            self._kill(job_id)
        # 3. primitives' charges nobody settled
        if now - self._last_sweep > 60:
            self._last_sweep = now
            self.db.transaction(lambda c: budget.keep_orphans(c, older_than=self.orphan_after))
        # 4. the warm fork server (before the jobs: the next one is forked from it)
        if self.fork_server is not None and not self.fork_server.alive():  # died: replace later, not in a loop
            self.fork_server.stop()
            self.fork_server = None
            self._next_fork_server = now + WARM_RETRY_SECONDS
        if (self.warm and self.fork_server is None and self.workers > 0 and not self._stop.is_set()
                and now >= self._next_fork_server):
            self.fork_server = fork_server.ForkServer(self._worker_environment())
        # 5. start workers
        while len(self.processes) + len(self.inherited) < self.workers and not self._stop.is_set():
            token = worker_token()
            job = jobs.claim_next(self.db, token)
            if job is None:
                break
            self._spawn(job.id, token)

    def _worker_environment(self) -> dict[str, str]:
        env = dict(os.environ, DPRM_WORKER_DB=self.db.url)
        env.pop("DPRM_WORKER_ENGINE", None)
        if self.engine is not None:
            env.update(DPRM_WORKER_ENGINE=self.engine or "ray", DPRM_WORKER_SHARDS=str(self.shards))
        return env

    def _spawn(self, job_id: int, token: str) -> None:
        process: subprocess.Popen | fork_server.ForkedWorker | None = None
        if self.fork_server is not None:
            process = self.fork_server.start(job_id, token)
            if process is None:  # dead or silent: this job gets a new interpreter, a new fork server follows
                self.fork_server = None
                self._next_fork_server = time.time() + WARM_RETRY_SECONDS
        if process is None:
            process = subprocess.Popen([sys.executable, "-m", "dprm.server.worker", "--job", str(job_id),
                                        "--token", token], env=self._worker_environment(),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
        self.processes[job_id] = (process, token)
        jobs.set_pid(self.db, job_id, token, process.pid)

    def _kill(self, job_id: int) -> None:
        """Kill our worker of ``job_id`` (a worker we did not start stops itself at its
        next heartbeat: a pid alone is never killed, it may have been reused)."""
        entry = self.processes.pop(job_id, None)
        if entry is not None and entry[0].poll() is None:
            kill_session(entry[0])
