"""The Ray engine: rows in shards held by Ray actors; the driver sums their counts.

:class:`RayEngine` starts ``N`` shard actors (:class:`ShardActor`). Each reads its own
part of the files (:func:`dprm.engine.sharding.read_shard`: part files, Parquet row
groups or a run of CSV lines), the shards agree on one schema from summaries
(:func:`~dprm.engine.sharding.merge_schemas`), and each builds its own literal tables
on its rows. Every counting request (:class:`~dprm.engine.base.GridCounts`) goes to
every shard at once; the driver adds the shards' answers, which are counts of rows
over disjoint sets of rows, so the sum is the count over all rows, exactly. The
driver never holds a row: only the schema (:func:`~dprm.engine.sharding.schema_only`)
and the answers. What crosses the network: the request (literal numbers, supports
as literal steps) and the counts; never a row, a row mask or a value. (The
non-private miners' data-value thresholds are the one exception: per numeric
attribute, a few distinct values, extremes and order statistics,
:mod:`dprm.engine.value_statistics`; their output is not private anyway.)

Noise is drawn by the miner, on the driver, after the sum, with the same mechanisms
and the same accountant as in-process: the ledger is unchanged, and a seeded run
returns exactly what the in-process engine returns.

**Local mode and network hygiene.** Without an address, a Ray instance is started in
this process's session for the run and stopped after it. Every process it starts
listens and connects on loopback only: the node address is ``127.0.0.1`` (with
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` set before Ray is imported, Ray keeps the
loopback address instead of replacing it with the machine's reachable one), no
dashboard, usage statistics off (``RAY_USAGE_STATS_ENABLED=0``).
``tests/test_engine_ray.py`` lists every inet socket of the driver and of all Ray
processes during a run and checks that each address is a loopback address. With an
address (``ray://host:port`` or ``host:port``), the engine joins that cluster; its
network is then the cluster operator's.

A lost shard (its actor died) ends the run with :class:`~dprm.errors.EngineError`
before anything more is released; the command line writes nothing then, and Ray's
own paragraph on the dead worker is not printed (:func:`_no_error_printer`).

Examples
--------
Not run as a doctest (it starts Ray); see ``tests/test_engine_ray.py``::

    with RayEngine(ShardSpec.of("left.csv", "right.csv", types="types.json"), shards=2) as engine:
        miner = SerenadeES(epsilon=1.0).fit(engine)
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import re
import resource
import shutil
import signal
import stat
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: a local Ray's directory left behind stays
    fcntl = None  # type: ignore[assignment]

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.engine.base import CountingEngine, GridCounts
from dprm.engine.literal_table import LiteralTable
from dprm.engine.shard_ids import (RepeatedIds, ShardIds, bucket_facts, deal_ids, deal_keys, duplicate_error,
                                   repeated_ids)
from dprm.engine.sharding import (ShardSpec, adopt_schema, check_same_files, first_column_notes, first_keys,
                                  first_summary, merge_schemas, read_shard_part, schema_only,
                                  summarise)
from dprm.engine.supports import Support
from dprm.engine.table_counter import TableCounter
from dprm.engine.workers import ShardWorkers
from dprm.errors import DprmError, EngineError, ParameterError

__all__ = ["RayEngine", "ShardActor", "LOOPBACK_ENVIRONMENT", "import_ray", "start_ray", "stop_ray"]

#: Set before Ray is imported: every address on loopback, no usage statistics.
LOOPBACK_ENVIRONMENT = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

#: Set before Ray is imported unless the user set it: Ray's token authentication on,
#: for a local Ray (Ray 2.60's default there too) and towards a cluster (a client then
#: sends the token of ``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``;
#: ``ray start --head`` makes one, and without one a cluster that asks for it times out).
AUTHENTICATION_ENVIRONMENT = {"RAY_AUTH_MODE": "token"}

#: Set before Ray is imported unless the user set it (read then): no C++ failure-signal handler in the core worker
#: of this process, which printed a stack dump on SIGTERM ("*** SIGTERM received at time=...") to the command's
#: terminal, nor in a local Ray's workers, which inherit it (their dumps went to their logs, in the local Ray's
#: session directory, removed at the end of the run).
QUIET_SIGNALS = {"RAY_DISABLE_FAILURE_SIGNAL_HANDLER": "1"}

#: Tries at joining a cluster whose client server answers "Initialization failure":
#: the head starts one server process per client and gives it 30 s to answer
#: (``RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S`` on the head); a loaded head can
#: miss that once, and the next client gets a new server.
CLUSTER_JOIN_ATTEMPTS = 3


def import_ray() -> Any:
    """Import Ray with :data:`LOOPBACK_ENVIRONMENT` in force (refuse if Ray was imported without it)."""
    already = "ray" in sys.modules
    for name, value in {**LOOPBACK_ENVIRONMENT, **AUTHENTICATION_ENVIRONMENT, **QUIET_SIGNALS}.items():
        os.environ.setdefault(name, value)
    try:
        import ray
        from ray._private import ray_constants
    except ImportError:
        raise ParameterError("the Ray engine needs Ray: pip install 'dprm[ray]'") from None
    if ray_constants.ENABLE_RAY_CLUSTER and not already:  # pragma: no cover - set just above
        raise EngineError("Ray did not take RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: it cannot be held to loopback")
    if ray_constants.ENABLE_RAY_CLUSTER:
        raise EngineError("Ray was imported before dprm could hold it to loopback; import dprm.engine.ray_engine "
                          "first, or set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0")
    return ray


def start_ray(address: str | None = None, *, num_cpus: int | None = None) -> None:
    """Start a local Ray on loopback (``address`` None), or join the cluster at ``address``.

    The workers import :mod:`dprm` from the same place as this process (``PYTHONPATH``
    is passed to them, with :data:`LOOPBACK_ENVIRONMENT`): a local Ray's processes
    inherit it from this process's environment, set while Ray starts (and restored
    after); a cluster's workers get it through the job's runtime environment.
    """
    ray = import_ray()
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environment = {"PYTHONPATH": os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p),
                   **LOOPBACK_ENVIRONMENT}
    options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address is None:
        # A local Ray's processes inherit this process's environment, set while it starts: no
        # runtime environment, which would start every worker through a set-up process of its own
        # (a second interpreter importing Ray: about 0.5 CPU-seconds per shard actor). Its session
        # directory (logs, sockets) is a temporary directory of its own, removed by stop_ray: Ray
        # leaves $TMPDIR/ray/session_* of every start behind
        _remove_stale_folders(tempfile.gettempdir())
        folder = _local_folder()
        options.update(address="local", _node_ip_address="127.0.0.1", num_cpus=num_cpus or 1, _temp_dir=folder)
    else:  # a cluster's workers get the environment from the runtime environment of the job
        options.update(address=address, runtime_env={"env_vars": environment})
    attempts = 1 if address is None else CLUSTER_JOIN_ATTEMPTS
    for attempt in range(1, attempts + 1):
        try:
            with warnings.catch_warnings(), _environment(environment if address is None else {}), \
                    _no_error_printer(ray), \
                    (_signals_after_start(ray) if address is None else contextlib.nullcontext()):
                # Ray Client warns before it gives up ("connection timed out"): the error says it in one line
                warnings.simplefilter("ignore", UserWarning)
                ray.init(**options)
            return
        except Exception as error:  # noqa: BLE001 - any start-up failure is one line
            if attempt < attempts and "Initialization failure from server" in str(error):
                ray.shutdown()
                continue
            if address is None:
                stop_ray()
            if address is None and "AF_UNIX path length" in str(error):
                raise EngineError(f"Ray could not start: the paths of its sockets under the temporary directory "
                                  f"{tempfile.gettempdir()} are too long (a socket's path has at most "
                                  f"{SOCKET_PATH_BYTES} bytes); set TMPDIR to a shorter directory, e.g. "
                                  f"TMPDIR=/tmp") from None
            raise EngineError(f"Ray could not start{'' if address is None else f' at {address}'}: "
                              f"{_error_line(error)}") from None
        except BaseException:  # Ctrl-C or SIGTERM while Ray starts: what it started so far is stopped too
            stop_ray()
            raise


@contextlib.contextmanager
def _signals_after_start(ray: Any) -> Iterator[None]:
    """Around a local ``ray.init``: Ctrl-C and SIGTERM take effect once Ray has started, as the process handled them.

    Interrupted halfway, ``ray.init`` leaves the processes it started so far running
    untracked (its dashboard and runtime-environment agents outlived the command by a
    minute or more), which ``ray.shutdown`` cannot stop. So while it starts (seconds),
    SIGINT and SIGTERM are only noted, then raised again once it is done, to the
    handlers the process had: ``ray.shutdown`` then stops everything. Ray's own
    replacement of the SIGTERM handler (``sys.exit(15)``) is skipped; a process without
    a Python SIGTERM handler gets that behaviour (its ``finally`` blocks stop Ray), one
    with a handler keeps it (a command line's: ``dprm.cli.interrupts``). Only in the main
    thread (Python's signal handlers live there).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    if not callable(before[signal.SIGTERM]):
        before[signal.SIGTERM] = _exit_on_sigterm
    for number in before:
        signal.signal(number, lambda number, frame: pending.append(number))
    # Ray (2.60) replaces the SIGTERM handler inside ray.init through this private function; a Ray
    # without it is left as it is (its own handler then applies while it starts)
    utilities = getattr(getattr(ray, "_private", None), "utils", None)
    replace_handler = getattr(utilities, "set_sigterm_handler", None)
    if replace_handler is not None:
        utilities.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        if replace_handler is not None:
            utilities.set_sigterm_handler = replace_handler
        for number, handler in before.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        for number in dict.fromkeys(pending):
            signal.raise_signal(number)


@contextlib.contextmanager
def _no_error_printer(ray: Any) -> Iterator[None]:
    """Around ``ray.init``: no thread of Ray's prints its error messages to this process's standard output.

    Ray (2.60) starts, in a driver, a thread that prints every error message of the
    cluster to standard output whatever ``log_to_driver`` says: a shard actor killed
    printed a paragraph (``(raylet) A worker died or was killed ...``) into the output
    of ``dprm mine`` before the command's one error line. What such a message reports
    reaches the engine as the error of a request (a lost shard, a shard out of memory:
    :meth:`RayEngine._answer`), said in one line. The thread's function is replaced
    while ``ray.init`` starts it (a Ray without it is left as it is).
    """
    module = getattr(getattr(ray, "_private", None), "worker", None)
    listen = getattr(module, "listen_error_messages", None)
    if listen is None:
        yield
        return
    module.listen_error_messages = _ignore_error_messages
    try:
        yield
    finally:
        module.listen_error_messages = listen


def _ignore_error_messages(worker: Any, threads_stopped: Any) -> None:
    """In place of Ray's ``listen_error_messages`` (:func:`_no_error_printer`): it subscribes to nothing and ends."""


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """What Ray's driver does on SIGTERM (``ray.init`` installs it): exit, running the ``finally`` blocks."""
    sys.exit(signum)


#: The session directories of the local Ray this process started (:func:`start_ray`), to remove.
_LOCAL_FOLDERS: list[str] = []
#: The open lock files of :data:`_LOCAL_FOLDERS` (:func:`_local_folder`), held until they are removed.
_LOCKS: list[int] = []
#: The file in a local Ray's session directory that its process holds locked (:func:`fcntl.flock`) while it runs.
LOCK_NAME = "dprm.lock"
#: The longest path of a Unix socket (``sun_path`` less its final NUL): Ray's sockets are in the session directory.
SOCKET_PATH_BYTES = 107
#: A session directory's name (:func:`local_folder_prefix`, then :func:`tempfile.mkdtemp`'s 8 characters).
_FOLDER_NAME = re.compile(r"dprm-ray-([0-9]+)-[a-z0-9_]{8}")


def _local_folder() -> str:
    """A new session directory for a local Ray, with its lock file held by this process until :func:`stop_ray`.

    The lock file is locked before it gets its name (:data:`LOCK_NAME`): a directory
    whose lock file is there is locked as long as the process that made it runs, and
    no longer once it is gone, killed with SIGKILL too (:func:`_remove_stale_folders`).
    """
    folder = tempfile.mkdtemp(prefix=local_folder_prefix(os.getpid()))
    _LOCAL_FOLDERS.append(folder)
    if fcntl is not None:
        descriptor, name = tempfile.mkstemp(dir=folder)
        _LOCKS.append(descriptor)
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(name, os.path.join(folder, LOCK_NAME))
    return folder


def _remove_stale_folders(parent: str) -> None:
    """Remove the session directories in ``parent`` that local Rays of processes now gone left behind.

    A process killed with SIGKILL (or a machine that lost power) cannot remove its
    directory (:func:`stop_ray`); the next local Ray started here does. Only a
    directory of this user named as :func:`local_folder_prefix` names them, whose
    process (the pid in its name) no longer runs and whose lock file no process holds
    (:data:`LOCK_NAME`: a process of another pid namespace sharing the directory holds
    its own); a directory without a lock file is left alone.
    """
    if fcntl is None:
        return
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        found = _FOLDER_NAME.fullmatch(name)
        if found is None or int(found.group(1)) == os.getpid() or _running(int(found.group(1))):
            continue
        folder = os.path.join(parent, name)
        try:
            status = os.lstat(folder)
            if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
                continue
            descriptor = os.open(os.path.join(folder, LOCK_NAME), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its Ray runs
            os.close(descriptor)
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(descriptor)


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists (of any user).

    Examples
    --------
    >>> _running(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's (PermissionError), or an impossible pid: not ours to judge
        return True
    return True


def local_folder_prefix(pid: int) -> str:
    """The name that the session directory of a local Ray started by process ``pid`` begins with (in
    :func:`tempfile.gettempdir`): a server that kills a worker removes its worker's (``dprm.server.supervisor``).

    Examples
    --------
    >>> local_folder_prefix(4242)
    'dprm-ray-4242-'
    """
    return f"dprm-ray-{int(pid)}-"


def stop_ray() -> None:
    """Stop the Ray this process started or joined (:func:`start_ray`); remove a local Ray's session directory.

    Ray's processes are stopped by ``ray.shutdown``; a local Ray's are waited for (each
    gets a second to end, then SIGKILL), so that none outlives the command that started
    it, also when a shard actor died of itself. Their logs and sockets are in the
    directory :func:`start_ray` made, removed here with everything in it.
    """
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown(**({"wait_for_processes": True} if _LOCAL_FOLDERS else {}))
    while _LOCAL_FOLDERS:
        shutil.rmtree(_LOCAL_FOLDERS.pop(), ignore_errors=True)
    while _LOCKS:
        os.close(_LOCKS.pop())


@contextlib.contextmanager
def _environment(variables: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` with ``variables`` set, as it was afterwards.

    Examples
    --------
    >>> with _environment({"DPRM_EXAMPLE": "1"}):
    ...     os.environ["DPRM_EXAMPLE"]
    '1'
    >>> "DPRM_EXAMPLE" in os.environ
    False
    """
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _error_line(error: BaseException) -> str:
    r"""One line saying why Ray did not start: the first line, and the cause if the server sent its traceback.

    Examples
    --------
    >>> _error_line(ConnectionAbortedError("Initialization failure from server:\nTraceback ...:\n"
    ...                                    "RuntimeError: Proxy failed to Connect to backend!\n"))
    'Initialization failure from server: RuntimeError: Proxy failed to Connect to backend!'
    >>> _error_line(TimeoutError())
    'TimeoutError'
    """
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    first = lines[0].rstrip(":")
    return first if len(lines) == 1 else f"{first}: {lines[-1]}"


class ShardActor:
    """One shard: its rows, its literal tables and its counts (runs as a Ray actor).

    Parameters
    ----------
    spec : ShardSpec
        The files and loading options (every shard gets the same).
    shard, n_shards : int
        Which part this actor reads.
    workdir : str, optional
        Where the temporary slices of its part are written (default: the temporary
        directory): a local Ray's session directory, removed with it even when the
        actor is killed while it reads.
    """

    def __init__(self, spec: ShardSpec, shard: int, n_shards: int, workdir: str | None = None) -> None:
        # A part that cannot be loaded (a value outside its declared bounds, a malformed line, a damaged
        # file) is the user's error, said by the first request (:meth:`summary`), and so is any other
        # failure to read it: raised here, Ray would keep only its text and answer every call with "the
        # actor died"
        self._error: Exception | None = None
        self._data: TwoViewData | None = None
        self._ids: ShardIds | None = None
        self._stamps: dict = {}
        self._first: Any = None
        self._late: Exception | None = None
        try:
            self._data, self._ids, self._stamps, self._first, self._late = read_shard_part(spec, shard, n_shards,
                                                                                          workdir)
        except Exception as error:  # noqa: BLE001 - said by summary(): a DprmError as it is, else "a shard failed"
            self._error = error
        self._counters: dict[tuple[str, int], TableCounter] = {}
        self._workers: dict[int, Any] = {}
        self._data_thresholds: dict[int, tuple] = {}

    def summary(self) -> tuple:
        """The schema of this shard's rows (None when it has none), the stamps of the files it read
        (:func:`~dprm.engine.sharding.read_shard_part`), its Ray node and the error of building its columns
        (None: they loaded); raises the error of loading its part before its rows were matched."""
        if self._error is not None:
            raise self._error
        schema = None if self._data is None else (summarise(self._data.left), summarise(self._data.right))
        return schema, self._stamps, import_ray().get_runtime_context().get_node_id(), self._late

    def first_columns(self) -> Any:
        """This shard's first columns without their values (:func:`~dprm.engine.sharding.first_summary`)."""
        return first_summary(self._first)

    def deal_first(self, n_buckets: int) -> tuple:
        """This shard's first-column texts dealt into ``n_buckets`` (:func:`~dprm.engine.shard_ids.deal_keys`)."""
        return tuple(deal_keys(first_keys(self._first), n_buckets))

    def first_facts(self, *buckets: Any) -> tuple[bool, bool, bool]:
        """:func:`~dprm.engine.shard_ids.bucket_facts` of one bucket of every shard (none: this shard's own texts,
        when it is the only one); the texts are dropped after it."""
        own = deal_keys(first_keys(self._first), 1)
        self._first = None
        return bucket_facts(buckets or own)

    def deal_ids(self, n_buckets: int) -> tuple:
        """This shard's ids dealt into ``n_buckets`` (:func:`~dprm.engine.shard_ids.deal_ids`), one Ray object each."""
        return tuple(deal_ids(self._ids, n_buckets))

    def repeated_ids(self, *buckets: ShardIds | None) -> RepeatedIds | None:
        """The ids occurring more than once in one bucket of every shard (:func:`~dprm.engine.shard_ids.repeated_ids`);
        this shard's own ids are no longer needed after it."""
        self._ids = None
        return repeated_ids(buckets)

    def adopt(self, schema: tuple) -> int:
        """Take the merged schema (again, when its grids change); returns the number of rows held."""
        self._data = adopt_schema(self._data, schema)
        self._counters.clear()
        return self._data.n_rows

    def use_thresholds(self, max_splits: int, thresholds: tuple) -> None:
        """Take the data cut points merged over all shards for the ``mode="data"`` grid of ``max_splits``."""
        self._data_thresholds[int(max_splits)] = thresholds

    def _counter(self, mode: str, max_splits: int) -> TableCounter:
        key = (mode, int(max_splits))
        if key not in self._counters:
            given = (None, None)
            if mode == "data":  # thresholds at data values: those of all rows, never of this shard's alone
                if int(max_splits) not in self._data_thresholds:
                    raise EngineError("a shard was asked for data-value literals before their cut points were sent")
                given = self._data_thresholds[int(max_splits)]
            self._counters.clear()  # only the last grid is kept (as in-process)
            self._counters[key] = TableCounter(
                tuple(LiteralTable(view, mode=mode, max_splits=int(max_splits), thresholds=thresholds)
                      for view, thresholds in zip(self._data.views, given)))
        return self._counters[key]

    def request(self, mode: str, max_splits: int, method: str, args: tuple) -> Any:
        """Answer one counting request of :class:`~dprm.engine.base.GridCounts` on this shard's rows."""
        return getattr(self._counter(mode, max_splits), method)(*args)

    def requests(self, mode: str, max_splits: int, calls: Sequence[tuple[str, tuple]]) -> list:
        """Several requests in one round trip."""
        counter = self._counter(mode, max_splits)
        return [getattr(counter, method)(*args) for method, args in calls]

    def attach(self, key: int, factory: Callable[[TwoViewData], Any]) -> None:
        """Build a worker ``factory(rows)`` on this shard's rows under ``key`` (:mod:`dprm.engine.workers`)."""
        self._workers[key] = factory(self._data)

    def detach(self, key: int) -> None:
        self._workers.pop(key, None)

    def call(self, key: int, method: str, args: tuple) -> Any:
        """``method(*args)`` of the worker ``key``."""
        return getattr(self._workers[key], method)(*args)

    def resources(self) -> dict[str, float]:
        """This actor's process id, peak resident memory (bytes) and CPU seconds (user + system)."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {"pid": os.getpid(), "peak_rss": usage.ru_maxrss * 1024, "cpu_s": usage.ru_utime + usage.ru_stime}


class ShardedCounts(GridCounts):
    """:class:`GridCounts` of one grid, each request sent to every shard and the answers summed."""

    def __init__(self, engine: "RayEngine", mode: str, max_splits: int) -> None:
        self._engine = engine
        self._mode = mode
        self._splits = int(max_splits)

    def _sum(self, method: str, *args: Any) -> Any:
        answers = self._engine._all("request", self._mode, self._splits, method, args)
        first = answers[0]
        if isinstance(first, list):
            return [sum(parts[1:], start=parts[0].copy()) for parts in zip(*answers)]
        return sum(answers[1:], start=first.copy())

    def literal_sizes(self, side: int) -> np.ndarray:
        return self._sum("literal_sizes", side)

    def cells(self, left: Support, right: Support) -> np.ndarray:
        return self._sum("cells", left, right)

    def extension_counts(self, left: Support, right: Support, sides: Sequence[int]) -> list[np.ndarray]:
        return self._sum("extension_counts", left, right, list(sides))

    def pair_intersections(self, side: int, requests: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        return self._sum("pair_intersections", side, list(requests))

    def cells_and_extensions(self, left: Support, right: Support,
                             sides: Sequence[int]) -> tuple[np.ndarray, list[np.ndarray]]:
        calls = [("cells", (left, right))] + ([("extension_counts", (left, right, list(sides)))] if sides else [])
        answers = self._engine._all("requests", self._mode, self._splits, calls)
        cells = sum((a[0] for a in answers[1:]), start=answers[0][0].copy())
        if not sides:
            return cells, []
        return cells, [sum(parts[1:], start=parts[0].copy()) for parts in zip(*(a[1] for a in answers))]


class RayWorkers(ShardWorkers):
    """A worker in every shard actor (:meth:`RayEngine.workers`); each call goes to all at once."""

    def __init__(self, engine: "RayEngine", key: int, factory: Callable[[TwoViewData], Any]) -> None:
        self._engine, self._key = engine, key
        self.n_shards = engine.n_shards
        engine._all("attach", key, factory)

    def call(self, method: str, *args: Any) -> list:
        return self._engine._all("call", self._key, method, args)

    def close(self) -> None:
        if self._engine._actors:
            try:
                self._engine._all("detach", self._key)
            except EngineError:  # a shard was lost: its workers went with it, the run is ending with that error
                pass


class RayEngine(CountingEngine):
    """Rows in ``shards`` Ray actors, each reading its own part of ``spec``'s files.

    Parameters
    ----------
    spec : ShardSpec
        The files and loading options.
    shards : int
        Number of shard actors (at least 1).
    address : str, optional
        A running Ray cluster (``ray://host:port`` or ``host:port``); default: start a
        local Ray on loopback for this engine and stop it on :meth:`close`.
    num_cpus : int, optional
        CPUs of the local Ray (default: ``shards``).
    """

    def __init__(self, spec: ShardSpec, *, shards: int = 2, address: str | None = None,
                 num_cpus: int | None = None) -> None:
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            raise ParameterError(f"shards must be a positive integer, not {shards!r}")
        ray = import_ray()
        self._ray = ray
        self._own = False
        self._actors: list = []
        #: Requests sent to the shards so far (each goes to all shards at once: one round trip).
        self.round_trips = 0
        if not ray.is_initialized():
            start_ray(address, num_cpus=num_cpus or shards)
            self._own = True
        self.n_shards = shards
        try:
            actor = ray.remote(num_cpus=0)(ShardActor)
            workdir = _LOCAL_FOLDERS[-1] if self._own and _LOCAL_FOLDERS else None
            self._actors = [actor.remote(spec, i, shards, workdir) for i in range(shards)]
            answers = self._all("summary")
            # shards that read a file in different versions would count rows twice or not at all
            check_same_files([stamps for _, stamps, _, _ in answers], places=[node for _, _, node, _ in answers])
            # in the order loading all the rows checks them: the ids and the first columns, then the columns
            self._check_ids(spec)
            first_notes = self._first_notes()
            late = next((error for _, _, _, error in answers if error is not None), None)
            if late is not None:  # the first shard's in shard order: its rows come first in the files
                raise late
            summaries = [s for s, _, _, _ in answers if s is not None]
            if not summaries:
                raise ParameterError("the data has no rows")
            schema = merge_schemas([[s[side] for s in summaries] for side in (0, 1)])
            schema = tuple(dataclasses.replace(view, notes=(*notes, *view.notes))
                           for view, notes in zip(schema, first_notes))
            self._rows = int(sum(self._all("adopt", schema)))
            self._summaries = schema
            self.schema = schema_only(schema)
        except BaseException:
            self.close()
            raise
        self._tables: dict[tuple[str, int], tuple[LiteralTable, LiteralTable]] = {}
        self._thresholds: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self._worker_keys = itertools.count()

    # -- round trips ---------------------------------------------------------------------

    def _first_notes(self) -> tuple[list[str], list[str]]:
        """The first columns decided on all the rows (:func:`~dprm.engine.sharding.first_column_notes`).

        Each shard says which of its first columns could be ids; only when one could in every
        shard are the texts dealt shard to shard (as :meth:`_check_ids` deals ids), the driver
        getting one answer per bucket: distinct or not, the same values or not.
        """
        found = self._all("first_columns")
        present = [f for f in found if f is not None]
        if not any(all(f[0].keys[s] is not None for f in present) for s in (0, 1)) or not present:
            return [], []
        n = len(self._actors)
        self.round_trips += 1
        if n == 1:  # one shard holds all the rows: its own texts
            answers = [self._actors[0].first_facts.remote()]
        else:
            buckets = [a.deal_first.options(num_returns=n).remote(n) for a in self._actors]
            answers = [actor.first_facts.remote(*(dealt[j] for dealt in buckets))
                       for j, actor in enumerate(self._actors)]
        return first_column_notes(found, self._get(answers))

    def _check_ids(self, spec: ShardSpec) -> None:
        """Refuse ids that occur in more than one shard, as loading all the rows refuses a repeated id.

        Each shard deals its ids into one bucket per shard; shard ``j`` gets bucket ``j``
        of every shard straight from the object store (the driver passes references,
        never the ids) and answers the repeated ones (:mod:`dprm.engine.shard_ids`).
        """
        if len(self._actors) < 2:  # one shard loaded all the rows: the loader checked them
            return
        n = len(self._actors)
        self.round_trips += 1
        buckets = [a.deal_ids.options(num_returns=n).remote(n) for a in self._actors]
        answers = [actor.repeated_ids.remote(*(dealt[j] for dealt in buckets))
                   for j, actor in enumerate(self._actors)]
        try:
            found = self._get(answers)
        except DprmError:
            self._collect(answers)
            raise
        error = duplicate_error(found, (spec.left, spec.right))
        if error is not None:
            raise error

    def _all(self, method: str, *args: Any) -> list:
        """Call ``method`` on every shard at once; the answers in shard order."""
        self.round_trips += 1
        answers = [getattr(a, method).remote(*args) for a in self._actors]
        try:
            return self._get(answers)
        except DprmError:
            self._collect(answers)
            raise

    def _collect(self, answers: list) -> None:
        """Wait for every shard's answer of a failed request, so that Ray prints no "Unhandled error" later."""
        for answer in answers:
            try:
                self._ray.get(answer)
            except Exception:  # noqa: BLE001 - the first error is the one raised
                pass

    def _get(self, answers: list) -> list:
        """The answers of every shard; a shard's failure as one :class:`~dprm.errors.DprmError`.

        When several shards fail, the first shard's error in shard order is raised (its
        rows come first in the files: a data error names the row loading all rows
        in-process names).
        """
        try:
            return self._ray.get(answers)
        except self._ray.exceptions.RayError:
            pass
        for answer in answers:
            self._answer(answer)
        raise EngineError("a shard failed and then answered")  # pragma: no cover - Ray does not un-fail

    def _answer(self, answer: Any) -> Any:
        """One shard's answer; its failure as one :class:`~dprm.errors.DprmError`."""
        ray = self._ray
        try:
            return ray.get(answer)
        except ray.exceptions.OutOfMemoryError:
            raise EngineError("a shard of the Ray engine ran out of memory (Ray's memory monitor stopped it); use more "
                              "shards or machines") from None
        except ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            if isinstance(cause, DprmError):
                raise cause from None
            raise EngineError(f"a shard failed: {_error_line(cause or error)}") from None
        except ray.exceptions.RayActorError:
            raise EngineError("a shard of the Ray engine was lost (its actor died) during the run; "
                              "nothing more was released") from None

    # -- the engine ---------------------------------------------------------------------------

    @property
    def n_rows(self) -> int:
        return self._rows

    def literal_tables(self, mode: str, max_splits: int) -> tuple[LiteralTable, LiteralTable]:
        key = (mode, int(max_splits))
        if key not in self._tables:
            given = (None, None)
            if mode == "data":  # thresholds at data values (non-private miners): merged from the shards, exactly
                given = self.data_thresholds(int(max_splits))
                self._all("use_thresholds", int(max_splits), given)
            self._tables[key] = tuple(LiteralTable(view, mode=mode, max_splits=int(max_splits), thresholds=thresholds)
                                      for view, thresholds in zip(self.schema.views, given))
        return self._tables[key]

    def use_transforms(self, transforms: Mapping[tuple[int, str], str]) -> None:
        self._summaries = tuple(
            replace(summary, attributes=tuple(
                column if (side, column.name) not in transforms else
                replace(column, domain=replace(column.domain, transform=transforms[(side, column.name)]))
                for column in summary.attributes))
            for side, summary in enumerate(self._summaries))
        self._all("adopt", self._summaries)
        self.schema = schema_only(self._summaries)
        self._tables = {key: tables for key, tables in self._tables.items() if key[0] != "private"}

    def data_thresholds(self, max_splits: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The ``mode="data"`` thresholds merged from the shards (:mod:`dprm.engine.value_statistics`), kept."""
        if int(max_splits) not in self._thresholds:
            self._thresholds[int(max_splits)] = super().data_thresholds(int(max_splits))
        return self._thresholds[int(max_splits)]

    def counts(self, mode: str, max_splits: int) -> ShardedCounts:
        self.literal_tables(mode, max_splits)
        return ShardedCounts(self, mode, max_splits)

    def workers(self, factory: Callable[[TwoViewData], Any]) -> RayWorkers:
        """``factory(rows)`` built in every shard actor on its rows (``factory`` must be importable there)."""
        return RayWorkers(self, next(self._worker_keys), factory)

    def shard_resources(self) -> list[dict[str, float]]:
        """Each shard actor's process id, peak resident memory (bytes) and CPU seconds."""
        return self._all("resources")

    @property
    def actors(self) -> list:
        """The shard actors' handles (for tests and benchmarks)."""
        return list(self._actors)

    def close(self) -> None:
        ray = self._ray
        for actor in self._actors:
            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self._actors = []
        if self._own:
            stop_ray()
        self._own = False
