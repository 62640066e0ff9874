"""A warm fork server for job workers: each job a process of its own, started in milliseconds.

A fresh Python worker spends 1.5–2 CPU seconds importing the miners and loading the
compiled kernels before it reads a row; on a server taking a job a second that is
most of two cores. The fork server pays it once:
``python -m dprm.server.fork_server`` warms up (:func:`dprm.server.worker.warm_up`:
imports and kernels, no data, no database), then for every line ``JOB TOKEN`` on its
standard input forks a child that runs that one job exactly as a fresh worker would
(its own session, its own database connection, one job per process), and answers
``started JOB PID``. When a child exits it answers ``exited PID CODE`` (the code as
:attr:`subprocess.Popen.returncode` gives it: negative for a signal). It exits when
its input closes (the supervisor stopped or died); its children do not: a running
job finishes and publishes its result.

The fork server holds no thread, no database connection and no data when it forks;
Python's :mod:`random` reseeds itself in every child and every job draws its noise
from fresh OS entropy (:class:`~dprm.privacy.SecureNoise`,
``numpy.random.default_rng()``), so children share no random state.

The supervisor's side is :class:`ForkServer`; a child is watched through a Linux
*pidfd* (:class:`ForkedWorker`), so that neither a kill nor the check that it ended
can reach another process that later gets the same pid. Where pidfds do not exist
(:func:`available` is false) the supervisor starts a new interpreter per job.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import traceback

__all__ = ["ForkServer", "ForkedWorker", "available", "main"]

#: The code a child is given when the fork server is gone and cannot report it
#: (as :mod:`multiprocessing`'s fork server does).
UNKNOWN_EXIT = 255


def available() -> bool:
    """Whether this system has what :class:`ForkedWorker` needs (Linux ≥ 5.3 pidfds).

    Examples
    --------
    >>> isinstance(available(), bool)
    True
    """
    if not (hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class ForkedWorker:
    """A job's process forked by the fork server, with the part of :class:`subprocess.Popen` the supervisor uses.

    Parameters
    ----------
    server : ForkServer
        The fork server that forked it (it reports the exit code).
    pid : int
        The child's pid; a pidfd is opened on it at once.
    """

    def __init__(self, server: "ForkServer", pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd: int | None = os.pidfd_open(pid)

    def _ended(self, timeout: float) -> bool:
        if self._pidfd is None:
            return True
        return bool(select.select([self._pidfd], [], [], timeout)[0])

    def poll(self) -> int | None:
        """The exit code once the process has ended (:data:`UNKNOWN_EXIT` if nobody could tell it), else ``None``."""
        if self.returncode is None and self._ended(0):
            self.returncode = self.server.exit_code(self.pid)
            os.close(self._pidfd)
            self._pidfd = None
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the end; :class:`subprocess.TimeoutExpired` after ``timeout`` seconds."""
        if self.poll() is None:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired(f"job process {self.pid}", timeout)
            self.poll()
        return self.returncode

    def kill(self) -> None:
        """SIGKILL, through the pidfd: never another process that reused the pid."""
        if self.poll() is None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:  # ended just now
                pass


class ForkServer:
    """The supervisor's handle on one fork server process.

    Parameters
    ----------
    env : dict
        The environment of the fork server and so of every job it forks (the
        database URL in ``DPRM_WORKER_DB``, the engine's variables).
    reply_timeout : float
        Seconds to wait for ``started``: the first job waits for the warm-up.
    """

    def __init__(self, env: dict[str, str], *, reply_timeout: float = 120.0) -> None:
        self.reply_timeout = reply_timeout
        self.process = subprocess.Popen([sys.executable, "-m", "dprm.server.fork_server"], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        self._pending = b""
        self._exits: dict[int, int] = {}

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def _read(self, timeout: float) -> bool:
        """Read what the fork server wrote within ``timeout`` seconds; ``False`` at its end."""
        stream = self.process.stdout.fileno()
        if not select.select([stream], [], [], timeout)[0]:
            return True
        data = os.read(stream, 65536)
        self._pending += data
        return bool(data)

    def _lines(self) -> list[list[str]]:
        *complete, self._pending = self._pending.split(b"\n")
        found = []
        for line in complete:
            words = line.decode("ascii", "replace").split()
            if words[:1] == ["exited"] and len(words) == 3:
                self._exits[int(words[1])] = int(words[2])
            elif words:
                found.append(words)
        return found

    def start(self, job_id: int, token: str) -> ForkedWorker | None:
        """Fork a child for the claimed job; ``None`` if the fork server is dead or silent (it is then stopped)."""
        try:
            self.process.stdin.write(f"{job_id} {token}\n".encode("ascii"))
            self.process.stdin.flush()
        except OSError:  # it died
            self.stop(kill=True)
            return None
        deadline = time.monotonic() + self.reply_timeout
        while time.monotonic() < deadline:
            if not self._read(max(0.0, deadline - time.monotonic())):
                break
            for words in self._lines():
                if words[:2] == ["started", str(job_id)] and len(words) == 3:
                    try:
                        return ForkedWorker(self, int(words[2]))
                    except OSError:  # it ended before we looked: a pidfd of nothing
                        break
        self.stop(kill=True)
        return None

    def exit_code(self, pid: int) -> int:
        """The code of an ended child, as its fork server reported it (waiting briefly for the report)."""
        deadline = time.monotonic() + 1.0
        while pid not in self._exits:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._read(remaining):
                break
            self._lines()
        return self._exits.pop(pid, UNKNOWN_EXIT)

    def stop(self, *, kill: bool = False) -> None:
        """Close its input, so that it exits (its children go on); ``kill``: SIGKILL it as well."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        if kill and self.process.poll() is None:
            self.process.kill()
        if self.process.poll() is not None or kill:
            self.process.wait(timeout=10)


def _child(job: int, token: str, closing: list[int], ready: int) -> None:
    """In the forked child: a session of its own (then a byte on ``ready``), no pipes to the supervisor, the
    job, exit."""
    code = 1
    try:
        os.setsid()
        os.write(ready, b"s")  # the fork server reports the job started only now: in its own session
        os.close(ready)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for descriptor in closing:
            os.close(descriptor)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
        from dprm.server.worker import run_claimed

        code = run_claimed(os.environ["DPRM_WORKER_DB"], job, token)
    except BaseException:  # noqa: BLE001 - the child's end, never the fork server's code
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _report(line: str) -> None:
    os.write(1, (line + "\n").encode("ascii"))


def _reap() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        _report(f"exited {pid} {code}")


def main() -> int:
    """The fork server's process: warm up, then fork one child per ``JOB TOKEN`` line until the input closes."""
    if not os.environ.get("DPRM_WORKER_DB"):
        print("error: DPRM_WORKER_DB is not set", file=sys.stderr)
        return 2
    from dprm.server.worker import warm_up

    warm_up()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes the select through the pipe
    pending = b""
    while True:
        ready = select.select([0, wake_read], [], [])[0]
        if wake_read in ready:
            os.read(wake_read, 4096)
        _reap()
        if 0 not in ready:
            continue
        data = os.read(0, 4096)
        if not data:  # the supervisor closed our input: no more jobs
            return 0
        *lines, pending = (pending + data).split(b"\n")
        for line in lines:
            job, token = line.decode("ascii").split()
            ready_read, ready_write = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                os.close(ready_read)
                _child(int(job), token, [wake_read, wake_write], ready_write)
            os.close(ready_write)
            os.read(ready_read, 1)  # the child has its own session (b"" if it died before: it is reaped)
            os.close(ready_read)
            _report(f"started {job} {pid}")


if __name__ == "__main__":  # pragma: no cover - run as a process
    raise SystemExit(main())
