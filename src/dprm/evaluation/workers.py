"""The runs of an experiment: one run, and the fresh processes (or the shards) that run them.

Every run happens in a fresh process (at most ``jobs`` at a time, none reused), so
its peak memory (``getrusage().ru_maxrss`` in the child, and of the child's own
subprocesses for the baselines) is honest. The processes are forked from one warm
fork server that has imported the miners and loaded the compiled kernels
(:mod:`dprm.evaluation.forkserver_preload`), so a run does not pay Python's and
numba's start-up again. A sharded experiment runs its tasks one after the other in
the driver, on the engine's shards (:func:`_on_engine`).

A run (:func:`_execute`) writes its document with a top-level ``run`` block, or its
``.failed.json`` (:mod:`dprm.evaluation.manifest`), and returns its record's fields.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing
import multiprocessing.connection
import resource
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from dprm.errors import DprmError, EngineError
from dprm.evaluation.algorithms import SYNTHETIC_BASELINES
from dprm.evaluation.budgets import epsilon_label
from dprm.evaluation.manifest import NOISE_NOTE, RunRecord, _atomic_write_text, _failed_path

__all__: list[str] = []

def _peak_mb(engine: Any = None) -> float:
    """This process's (and its finished children's) peak resident memory, and the shards' with ``engine``."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak = max(own, children) / 1024.0  # Linux reports kilobytes
    shards = getattr(engine, "shard_resources", None)
    if shards is not None:
        peak = max([peak, *(r["peak_rss"] / 2**20 for r in shards())])
    return peak


def _engine_name(engine: Any) -> str:
    """Where a run counted: ``"in-process"`` or ``"ray, N shards"`` (recorded in the run block)."""
    return "in-process" if engine is None else f"ray, {engine.n_shards} shards"


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if not isinstance(error, DprmError) else first


def _mine(task: dict[str, Any], engine: Any = None) -> dict[str, Any]:
    """Fit the task's miner on its data (loaded here), or on ``engine`` (a sharded run: no row here)."""
    from dprm.data import load_two_view
    from dprm.mining import make_miner
    from dprm.privacy import Accountant, SeededNoise

    data = engine if engine is not None else load_two_view(
        task["left"], task["right"], id_column=task["id_column"], types=task["types"], duplicate_names="rename")
    parameters = dict(task["parameters"])
    if task["epsilon"] is not None:
        parameters["epsilon"] = task["epsilon"]
    miner = make_miner(task["algorithm"], **parameters)
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(task["seed"]).spawn(2))
    accountant = Accountant(miner.epsilon, SeededNoise(noise)) if task["epsilon"] is not None else None
    start = time.perf_counter()
    miner.fit(data, accountant=accountant, rng=choices)
    document = miner.document({"seed": task["seed"]})
    document["_seconds"] = time.perf_counter() - start
    return document


def _synthetic(task: dict[str, Any], work_dir: Path) -> dict[str, Any]:
    """A DP synthetic-data baseline's run (:mod:`dprm.evaluation.synthetic`) at the task's ε and seed."""
    from dprm.evaluation.synthetic import DPMM_PYTHON_VARIABLE, run_synthetic

    if task.get("dpmm_python") is None:  # the experiment's process found no dpmm environment
        raise _Unavailable("the synthetic-data baseline needs dpmm in its own environment, which is missing: "
                           f"make synthetic (.venv-dpmm), or set {DPMM_PYTHON_VARIABLE}")
    options = dict(task["parameters"])
    if task["timeout"] is not None:
        options.setdefault("timeout", task["timeout"])
    try:
        return run_synthetic(task["algorithm"], task["left"], task["right"], epsilon=task["epsilon"],
                             seed=task["seed"], work_dir=work_dir, types=task.get("types"),
                             id_column=task.get("id_column"), parameters=options, python=task["dpmm_python"])
    except ImportError as err:  # dpmm's environment is missing (SyntheticUnavailable)
        raise _Unavailable(_one_line(err)) from None


def dpmm_python_or_none(algorithm: str) -> str | None:
    """For a synthetic-data baseline, dpmm's Python as the experiment's process finds it (None: missing).

    Resolved in the experiment's process, whose environment the user set; the runs'
    processes come from a fork server that may have started earlier.
    """
    if algorithm not in SYNTHETIC_BASELINES:
        return None
    from dprm.evaluation.synthetic import SyntheticUnavailable, dpmm_python

    try:
        return str(dpmm_python())
    except SyntheticUnavailable:
        return None


def _baseline(task: dict[str, Any], path: Path) -> dict[str, Any]:
    if task["algorithm"] in SYNTHETIC_BASELINES:
        work_dir = path.with_name(f"{path.stem}.work")
        shutil.rmtree(work_dir, ignore_errors=True)
        start = time.perf_counter()
        document = dict(_synthetic(task, work_dir))
        document["_seconds"] = time.perf_counter() - start
        shutil.rmtree(work_dir, ignore_errors=True)
        return document
    try:
        from dprm.evaluation.baselines import run_clired
    except ImportError as err:
        raise _Unavailable(f"the python-clired baselines are not available ({_one_line(err)})") from None
    work_dir = path.with_name(f"{path.stem}.work")
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    start = time.perf_counter()
    options = dict(task["parameters"])
    if task["timeout"] is not None:  # otherwise the baselines' own default applies
        options["timeout"] = task["timeout"]
    try:
        document = run_clired(task["algorithm"], task["left"], task["right"], work_dir=work_dir,
                              types=task.get("types"), id_column=task.get("id_column"), **options)
    except (ImportError, FileNotFoundError) as err:  # python-clired or its executable is missing
        raise _Unavailable(_one_line(err)) from None
    except DprmError as err:
        if "install" in str(err).lower():  # the baselines module's own "not installed" message
            raise _Unavailable(str(err)) from None
        raise
    document = dict(document)
    document["_seconds"] = time.perf_counter() - start
    shutil.rmtree(work_dir, ignore_errors=True)
    return document


class _Unavailable(DprmError):
    """A baseline that cannot run here (its module or python-clired is missing)."""


def _execute(task: dict[str, Any], engine: Any = None) -> dict[str, Any]:
    """Run one task, write its JSON; return the run record's fields.

    Without ``engine`` the task runs in this (fresh) process on the rows it loads;
    with a sharded ``engine`` it runs in the driver on the engine's shards, and its
    ``peak_mb`` is the largest peak of the driver and of the shard actors so far
    (they serve every run of the experiment: an upper bound of the run's own).
    A shard lost during the run (:class:`~dprm.errors.EngineError`) records the run
    as ``failed`` (redone on restart) and is raised again: no later run can use the engine.
    """
    from dprm.queries import document_redescriptions, write_document

    path = Path(task["path"])
    record = {key: task[key] for key in ("algorithm", "epsilon", "run", "seed")}
    try:
        document = _baseline(task, path) if task["baseline"] else _mine(task, engine)
        seconds = float(document.pop("_seconds"))
        redescriptions = document_redescriptions(document, source=str(path))
        record.update(
            seconds=seconds,
            peak_mb=_peak_mb(engine),
            returned=len(redescriptions),
            kept=sum(not r.pruned for r in redescriptions),
            rows=task["rows"],
            status="ok",
            message="",
        )
        document["run"] = {**record, "epsilon_label": epsilon_label(task["epsilon"]),
                           "master_seed": task["master_seed"], "noise": "none" if task["epsilon"] is None
                           else NOISE_NOTE, "engine": _engine_name(engine)}
        path.parent.mkdir(parents=True, exist_ok=True)
        write_document(document, path)
        _failed_path(path).unlink(missing_ok=True)
    except Exception as error:  # a failed run is recorded and redone on restart, never fatal
        # "refused": the miner rejected its input (a DprmError), and will do so again on a
        # rerun of the same experiment; "failed": anything else (a crash, memory), worth a retry.
        # A lost shard (EngineError) is not the input's fault: "failed", and the experiment stops.
        status = ("unavailable" if isinstance(error, _Unavailable)
                  else "failed" if isinstance(error, EngineError)
                  else "refused" if isinstance(error, DprmError) else "failed")
        record.update(seconds=math.nan, peak_mb=_peak_mb(None if isinstance(error, EngineError) else engine),
                      rows=task["rows"], status=status, message=_one_line(error))
        try:
            _atomic_write_text(_failed_path(path), json.dumps(
                {**record, "seconds": None, "epsilon_label": epsilon_label(task["epsilon"])}, indent=2) + "\n")
        except OSError:
            pass
        if isinstance(error, EngineError):
            raise
    return record


def _context() -> multiprocessing.context.BaseContext:
    """Forkserver with dprm preloaded: fresh processes that need not import numpy or load numba's kernels again."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["dprm.evaluation.runner", "dprm.mining", "dprm.data.loading", "dprm.queries",
                                        "dprm.evaluation.forkserver_preload"])
        return context
    return multiprocessing.get_context("spawn")


#: The signals that stop an experiment: Ctrl-C, and SIGTERM, which ``dprm evaluate`` turns into Ctrl-C.
_STOPS = frozenset({signal.SIGINT, signal.SIGTERM})


def _ready() -> None:
    """The target of the process that tells that the fork server is ready: nothing to do."""


def _start_fork_server(context: multiprocessing.context.BaseContext) -> None:
    """Start ``context``'s fork server, if it has one, and wait until it has imported its preload.

    Two faults of a stop (Ctrl-C, SIGTERM) during the server's preload (some seconds:
    numpy, the miners, the compiled kernels) are avoided so:

    - Ctrl-C sends SIGINT to every process of the terminal's foreground group, the
      server included, which ignores SIGINT only once its preload is imported: it
      printed its ``KeyboardInterrupt`` traceback under the runner's one line
      ``interrupted``. The server is started with SIGINT ignored, which it keeps
      through ``exec`` (Python installs its own handler only over the default one);
      the runs' processes it forks ignore SIGINT anyway (:func:`_child`). The runner
      blocks SIGINT while it ignores it for the start, so that a Ctrl-C meanwhile
      stays pending and reaches it once its handler is back rather than being lost.
    - Starting a process waits for the server to fork it, so a stop during the
      preload stopped the runner inside a run's start: the run's process, forked
      once the preload was done, was in no list the runner terminates, ran to its
      end after the command had said ``interrupted`` (its document written behind
      a restart's back) and printed a ``BrokenPipeError`` traceback. A process that
      does nothing is started first and waited for, where a stop may come: the
      server has imported its preload once it returns, and a stop meanwhile leaves
      only that process to be forked, which does nothing. The runs' processes are
      then started with the stops held back (:func:`_stops_held`): a fork takes
      milliseconds.

    A server already running (a second experiment of the same process) is only waited
    for; outside the main thread, where no handler can be set, it is started as it is.
    """
    if context.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    if threading.current_thread() is threading.main_thread():
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                forkserver.ensure_running()
            finally:
                signal.signal(signal.SIGINT, handler if handler is not None else signal.SIG_DFL)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    ready = context.Process(target=_ready, name="dprm-fork-server-ready")
    ready.start()
    ready.join()


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back while the block runs; one that came meanwhile is raised after it.

    :func:`_in_fresh_processes` starts a run's process and lists it as running in such
    a block: a stop that came while the fork server forked the process would leave the
    runner without the process to terminate (see :func:`_start_fork_server`); held
    back, it comes once the process is listed, and the ``finally`` terminates it.
    The fork server is ready by then, so a fork holds a stop back for milliseconds.
    """
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _child(task: dict[str, Any], connection: Any) -> None:
    """A run's process: ignore Ctrl-C (the parent stops it), run, send the record back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        connection.send(_execute(task))
    finally:
        connection.close()


def _on_engine(pending: list[tuple[RunRecord, dict[str, Any]]], engine: Any):
    """Run every task here, one after the other, on the shards of ``engine``; yield ``(planned, record)``.

    A lost shard ends the experiment: the run under way is recorded as failed and the
    :class:`~dprm.errors.EngineError` goes up (the runs not started are redone on restart).
    """
    for planned, task in pending:
        yield planned, _execute(task, engine)


def _in_fresh_processes(pending: list[tuple[RunRecord, dict[str, Any]]], jobs: int):
    """Run every task in its own new process, ``jobs`` at a time; yield ``(planned, record or None)``.

    One process per run (not a pool of reused workers) makes ``ru_maxrss`` the run's
    own peak, and a run that is killed (out of memory) costs only itself. When the
    caller stops (Ctrl-C, an exception in ``progress``), the runs under way are
    terminated, so that none finishes behind a restart's back; a run's JSON is
    written atomically, so none is ever half-written.
    """
    context = _context()
    _start_fork_server(context)
    queue = list(pending)
    running: dict[Any, tuple[Any, RunRecord, Any]] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                planned, task = queue.pop(0)
                reader, writer = context.Pipe(duplex=False)
                process = context.Process(target=_child, args=(task, writer),
                                          name=f"dprm-run-{planned.algorithm}-{planned.label}-{planned.run}")
                with _stops_held():
                    process.start()
                    running[process.sentinel] = (process, planned, reader)
                    writer.close()
            for sentinel in multiprocessing.connection.wait(list(running)):
                process, planned, reader = running.pop(sentinel)
                fields = None
                try:
                    if reader.poll():
                        fields = reader.recv()
                except (EOFError, OSError):
                    fields = None
                reader.close()
                process.join()
                yield planned, fields
    finally:
        for process, _, reader in running.values():
            if process.is_alive():
                process.terminate()
        for process, _, reader in running.values():
            process.join()
            reader.close()
