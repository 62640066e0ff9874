"""Helpers of the server tests: a throw-away PostgreSQL cluster, a served API, mammals.

Import the fixtures into a test module (``from server_support import postgres_url``);
this module is not a conftest, so nothing here runs for other tests.

PostgreSQL: :func:`postgres_cluster` finds Debian's binaries
(``/usr/lib/postgresql/<version>/bin``), runs ``initdb`` on a temporary directory
(as the ``postgres`` user when the tests run as root: ``initdb`` and ``pg_ctl``
refuse root), starts the server on a free loopback port with its socket in that
directory, creates a database, and stops and removes everything at the end. Where no
binaries exist the tests that need it skip with one line.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAMMALS = ROOT.parent / "shared" / "data" / "mammals"
MAMMALS_TYPES = ROOT / "tests" / "data" / "mammals-types.json"
DPRM = [sys.executable, "-m", "dprm.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def listens(pid: int, port: int) -> bool:
    """Whether ``pid`` or one of its children holds the socket listening on loopback ``port``
    (Linux /proc): a server started on a port another test took answers for that test."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(f"socket:[{fields[9]}]")
    for owner in [pid, *children(pid)]:
        try:
            descriptors = list((Path("/proc") / str(owner) / "fd").iterdir())
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(descriptor) in inodes:
                    return True
            except OSError:
                continue
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def require_mammals() -> None:
    if not (MAMMALS / "left.csv").is_file():
        pytest.skip(f"shared data {MAMMALS} not available")


# -- PostgreSQL ------------------------------------------------------------------------


def postgres_bin() -> Path | None:
    """The newest PostgreSQL binaries folder with initdb and pg_ctl, or None."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if candidates:
        return Path(candidates[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


#: The watchdog of :func:`postgres_cluster`: ``python -c _WATCHDOG PID BASE COMMAND...`` runs COMMAND (the
#: cluster's stop) and removes BASE once process PID has ended.
_WATCHDOG = """
import os, shutil, subprocess, sys, time
parent = int(sys.argv[1])
while True:
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        break
    time.sleep(1)
subprocess.run(sys.argv[3:], capture_output=True, timeout=60)
shutil.rmtree(sys.argv[2], ignore_errors=True)
"""


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A running throw-away cluster; yields a ``postgresql+psycopg://`` URL."""
    binaries = postgres_bin()
    if binaries is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    as_root = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="dprm-pg-"))
    data = base / "data"
    prefix: list[str] = []
    if as_root:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run PostgreSQL as")
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    log = base / "server.log"
    watchdog: subprocess.Popen | None = None
    try:
        subprocess.run(prefix + [str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                 "--no-sync", "-E", "UTF8"], check=True, capture_output=True, timeout=120)
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
        subprocess.run(prefix + [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w",
                                 "-t", "60", "start"], check=True, capture_output=True, timeout=120)
        # a watchdog stops the cluster if this process dies without its ``finally`` (SIGKILL, a crashed worker)
        watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(base),
             *prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        subprocess.run(prefix + [str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                                 "dprm"], check=True, capture_output=True, timeout=60)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/dprm"
    finally:
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait(timeout=10)
        subprocess.run(prefix + [str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a session-wide throw-away PostgreSQL server (databases made per test)."""
    with postgres_cluster() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    import psycopg

    name = f"t{os.getpid()}_{time.monotonic_ns()}"
    admin = postgres_server.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return postgres_server.rsplit("/", 1)[0] + "/" + name


# -- a database with a dataset and analysts -----------------------------------------------


def tiny_views(folder: Path, rows: int = 200) -> tuple[Path, Path, Path]:
    """A small two-view dataset with a complete types file (deterministic)."""
    import json

    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, rows)
    b = np.where(rng.random(rows) < 0.9, a, 1 - a)
    x = np.round(rng.uniform(0, 100, rows), 1)
    state = np.array(["CA", "NY", "TX"])[rng.integers(0, 3, rows)]
    left = folder / "left.csv"
    right = folder / "right.csv"
    left.write_text("id,a,state\n" + "".join(f"{i},{a[i]},{state[i]}\n" for i in range(rows)))
    right.write_text("id,b,x\n" + "".join(f"{i},{b[i]},{x[i]}\n" for i in range(rows)))
    types = folder / "types.json"
    types.write_text(json.dumps({"id_column": "id", "columns": {
        "a": "boolean", "b": "boolean", "state": {"type": "categorical", "categories": ["CA", "NY", "TX"]},
        "x": {"type": "numeric", "bounds": [0, 100]}}}))
    return left, right, types


def submit_small_job(db: object) -> int:
    """Queue a small ``alt-expm`` job of ε 0.5 on ``tiny`` for analyst 1 (as the API would); its id."""
    from dprm.server import jobs
    from dprm.server.units import epsilon_units

    parameters = {"init_trials": 1, "depth": 2}
    body = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "parameters": parameters}
    row, created = jobs.submit(db, 1, 1, algorithm="alt-expm", parameters=parameters, units=epsilon_units("0.5"),
                               dummy=False, dummy_rows=None, idempotency_key=None, digest=jobs.request_digest(body))
    assert created
    return row.id


def setup_server_db(url: str, folder: Path, *, budgets: dict[str, str] | None = None, mammals: bool = False
                    ) -> dict[str, str]:
    """Migrate ``url``, register ``tiny`` (and ``mammals``), add analysts with budgets.

    Returns the analysts' tokens by name (default: alice and bob, 10 each).
    """
    from dprm.server import accounts, budget
    from dprm.server.database import Database
    from dprm.server.datasets import register_dataset
    from dprm.server.units import epsilon_units

    db = Database(url)
    db.migrate()
    register_dataset(db, "tiny", *tiny_views(folder))
    names = ["tiny"]
    if mammals:
        require_mammals()
        register_dataset(db, "mammals", MAMMALS / "left.csv", MAMMALS / "right.csv", MAMMALS_TYPES)
        names.append("mammals")
    tokens = {}
    with db.write() as connection:
        for name, total in (budgets or {"alice": "10", "bob": "10"}).items():
            tokens[name] = accounts.add_analyst(connection, name)
            who = accounts.find_analyst(connection, name)
            for dataset_id in range(1, len(names) + 1):
                budget.set_budget(connection, who.id, dataset_id, epsilon_units(total))
    db.dispose()
    return tokens


# -- a served API ---------------------------------------------------------------------------


class Served:
    """``dprm serve`` in a subprocess on a free loopback port; stops itself at exit."""

    def __init__(self, db_url: str, *, workers: int = 1, extra: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.db_url = db_url
        self.workers = workers
        self.extra = extra or []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, **(env or {}))
        self.process: subprocess.Popen | None = None
        self.log = Path(tempfile.mkstemp(prefix="dprm-serve-", suffix=".log")[1])

    def start(self, timeout: float = 90.0, attempts: int = 3) -> "Served":
        """Start the server and wait for its ``/health``; a port another process took
        between :func:`free_port` and the bind (tests run in parallel) is replaced by a new
        one, and a ``/health`` answered by that other process does not count.
        """
        import httpx

        for attempt in range(attempts):
            with open(self.log, "ab") as log:
                self.process = subprocess.Popen(
                    DPRM + ["serve", "--db", self.db_url, "--host", "127.0.0.1", "--port", str(self.port),
                            "--workers", str(self.workers)] + self.extra,
                    stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    if "Address already in use" in self.log.read_text() and attempt + 1 < attempts:
                        break
                    raise RuntimeError(f"dprm serve exited: {self.log.read_text()[-3000:]}")
                try:
                    if (httpx.get(self.url + "/health", timeout=1.0).status_code == 200
                            and listens(self.process.pid, self.port)):
                        return self
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            else:
                self.stop()
                raise RuntimeError(f"dprm serve did not answer: {self.log.read_text()[-3000:]}")
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        raise AssertionError("unreachable")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.unlink(missing_ok=True)

    def __enter__(self) -> "Served":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def serve_in_thread(db_url: str, **settings: object) -> Iterator[str]:
    """The API (:func:`dprm.server.app.create_app`) under uvicorn in a thread; yields its URL."""
    import threading

    import uvicorn

    from dprm.server.app import create_app

    app = create_app(db_url, **settings)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
