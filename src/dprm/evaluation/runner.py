"""The experiment runner (issue 4, part 2): every algorithm, R runs per budget, true statistics.

An *experiment* is: two data files (plus an optional types file and id column),
a list of algorithms, a list of budgets ``EPSxRUNS`` (:mod:`dprm.evaluation.budgets`),
the miners' parameters and a master seed. :func:`run_experiment` runs every private
algorithm ``RUNS`` times at every budget's epsilon and every non-private algorithm
(``cartwheels``, the python-clired baselines ``clired-*``, any miner without an
``epsilon`` parameter) once, since they ignore the budget. Every run happens in a
fresh process (:mod:`dprm.evaluation.workers`: at most ``jobs`` at a time, forked from
a warm fork server, so that a run's peak memory is its own). The experiment
directory (manifest, run files, resuming and extending, the lock) is described in
:mod:`dprm.evaluation.manifest`; the algorithm names, their parameters and the
per-run seeds in :mod:`dprm.evaluation.algorithms`.

Seeds. The runs use :class:`~dprm.privacy.SeededNoise`: an experiment is a local
tool for researchers who may see the data, and it must be reproducible. Run
``(algorithm, epsilon, run)`` gets the seed :func:`run_seed` derives from the master
seed; it is used exactly as ``dprm mine --seed`` uses its seed, so
``dprm mine LEFT RIGHT -a ALGORITHM --epsilon EPSILON --seed SEED`` (with the same
parameters) reproduces a run. Without a master seed one is drawn and recorded.
The released statistics are therefore *not* private releases; the documents'
privacy blocks say so.

The tables are rebuilt from the run JSONs at the end of every invocation
(:func:`write_tables`), so they always describe every finished run.

Sharded runs (``dprm evaluate --engine ray[://ADDRESS] --shards N``, ``shards=N``).
The rows then stay in the shard actors of one
:class:`~dprm.engine.ray_engine.RayEngine`, opened **once** for the whole
experiment (a local Ray costs 6–15 s to start: not once per run) and closed at the
end. The runs execute one after the other in the calling process, the driver,
each on all the shards (every counting request already goes to every shard at
once, so runs side by side would only queue on the same actors; ``jobs`` must be
1). The driver never holds a row: the miners ask the engine for counts, and the
true statistics of the released redescriptions are counted by a worker in every
shard (:class:`~dprm.evaluation.true_statistics.SupportCounts`: support sizes and
intersections cross the network, never a row), summed on the driver. A run gets
the same seed and the same parameters as in-process and the engine returns the
same counts, so every run's document (redescriptions, statistics, ledger) and
every table equal the in-process experiment's; only the run block's ``seconds``,
``peak_mb`` (the largest peak of the driver and the shard actors so far, since
they serve every run) and ``engine`` differ. A run that raises is recorded as
failed or refused as in-process; a lost shard
(:class:`~dprm.errors.EngineError`) records the run under way as failed and stops
the experiment with that error (the finished runs are kept; the tables are not
rewritten; rerunning resumes). Algorithms that cannot count through an engine
(``counts_through_engine`` false: the non-private baselines) are refused before
anything is read (:func:`check_sharded`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from dprm.data.attributes import require_attributes
from dprm.errors import DataError, DprmError, ParameterError
from dprm.file_sets import naming
from dprm.json_values import finite_number
from dprm.evaluation.algorithms import (BASELINES, SYNTHETIC_BASELINES, _accepted, _check_algorithms, _check_parameters, check_sharded,
                                        is_private, known_algorithms, parameters_for, parse_parameter_items, run_seed)
from dprm.evaluation.budgets import Budget, format_budgets, parse_budgets
from dprm.evaluation.manifest import (EXPERIMENT_FORMAT, NOISE_NOTE, RunRecord, _DirectoryLock, _MANIFEST_NAME,
                                      _atomic_write_text, _data_files, _failed_path, _finished, _new_manifest,
                                      _plan, _prepare_directory, _record_from, _run_path, _unfinished_algorithms,
                                      read_manifest)
from dprm.evaluation.tables import write_csv_atomic, write_paper_tables
from dprm.evaluation.workers import _in_fresh_processes, _on_engine, _one_line, dpmm_python_or_none

__all__ = [
    "BASELINES",
    "EXPERIMENT_FORMAT",
    "NOISE_NOTE",
    "ExperimentConfig",
    "ExperimentResult",
    "RunRecord",
    "REDESCRIPTION_COLUMNS",
    "RUN_COLUMNS",
    "known_algorithms",
    "is_private",
    "parameters_for",
    "parse_parameter_items",
    "run_seed",
    "run_experiment",
    "check_sharded",
    "write_tables",
    "read_manifest",
]

#: The columns of ``redescriptions.csv``, in order.
REDESCRIPTION_COLUMNS: tuple[str, ...] = (
    "algorithm", "epsilon", "run", "index", "pruned", "significant",
    "noisy_support_left", "noisy_support_right", "noisy_intersection", "noisy_union",
    "noisy_jaccard", "noisy_pvalue",
    "true_support_left", "true_support_right", "true_intersection", "true_union",
    "true_jaccard", "true_pvalue",
    "abs_error_jaccard", "error_intersection",
    "jaccard_low", "jaccard_high", "true_jaccard_in_interval",
    "left_text", "right_text",
)


#: The columns of ``runs.csv``, in order.
RUN_COLUMNS: tuple[str, ...] = (
    "algorithm", "epsilon", "run", "seed", "seconds", "peak_mb", "returned", "kept", "rows",
    "status", "message",
)


# -- the experiment's description -----------------------------------------------------


@dataclass
class ExperimentConfig:
    """What an experiment is.

    Parameters
    ----------
    left, right : str or PathLike
        The two views (CSV or Parquet), as for :func:`dprm.data.load_two_view`.
    algorithms : sequence of str
        Names from :func:`known_algorithms`.
    budgets : str or sequence of Budget
        ``"1x10,0.1x10"`` or parsed :class:`~dprm.evaluation.budgets.Budget` objects.
        Private algorithms run ``runs`` times at each ``epsilon``; non-private ones
        once in all.
    parameters : mapping
        Miner parameters: ``{name: value}`` for every miner that accepts ``name``,
        ``{algorithm: {name: value}}`` for one algorithm (see :func:`parameters_for`).
    seed : int, optional
        The master seed (non-negative); drawn (and recorded) when not given.
    id_column : str, optional
        Id column of both views.
    types : str or PathLike, optional
        A types file.
    alpha : float
        Significance level of the tables (the papers: 0.01).
    timeout : float, optional
        Seconds allowed to one run of a baseline (python-clired's, or a DP synthetic-data
        one's synthesizer); refused when ``algorithms`` names no such baseline.
    """

    left: str | os.PathLike
    right: str | os.PathLike
    algorithms: list[str]
    budgets: str | list[Budget]
    parameters: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    id_column: str | None = None
    types: str | os.PathLike | None = None
    alpha: float = 0.01
    timeout: float | None = None

    def checked(self, recorded: Mapping[str, Any] | None = None) -> "ExperimentConfig":
        """A copy with absolute paths and parsed budgets, every value checked.

        Parameters
        ----------
        recorded : mapping, optional
            The manifest of the experiment this one extends (read by
            :func:`~dprm.evaluation.manifest.read_manifest`). Its algorithms run too (the
            experiment is the union), so a parameter of one of them is in place although
            ``algorithms`` does not list it; and without ``parameters`` the recorded ones
            are the experiment's, as the recorded master seed is without ``seed``.

        Raises
        ------
        ParameterError, DataError
            One line naming the bad option or file.
        """
        budgets = parse_budgets(self.budgets) if isinstance(self.budgets, str) else list(self.budgets)
        if not budgets:
            raise ParameterError("--budgets: give at least one budget EPSxRUNS (e.g. 1x10)")
        for budget in budgets:
            if not isinstance(budget, Budget):
                raise ParameterError(f"--budgets: {budget!r} is not a Budget")
        parse_budgets(format_budgets(budgets))  # the same checks as for text (positive, no repeats)
        algorithms = _check_algorithms(self.algorithms)
        parameters = dict(self.parameters or {})
        union = list(algorithms)
        if recorded is not None:
            union += [a for a in recorded["algorithms"] if a not in algorithms]
            if not parameters:
                parameters = json.loads(json.dumps(recorded["parameters"]))
        _check_parameters(union, budgets, parameters)
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer))
                                      or self.seed < 0):
            raise ParameterError(f"--seed must be a non-negative integer, not {self.seed}")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ParameterError(f"--alpha must be in (0, 1), not {self.alpha}")
        if self.timeout is not None and not (finite_number(self.timeout) and self.timeout > 0):
            raise ParameterError(f"--timeout must be a positive finite number of seconds, not {self.timeout!r}")
        if self.timeout is not None and not set(algorithms) & {*BASELINES, *SYNTHETIC_BASELINES}:
            raise ParameterError(f"--timeout bounds the runs of the baselines only ({', '.join(BASELINES)}, "
                                 f"{', '.join(SYNTHETIC_BASELINES)}), and --algorithms names none of them")
        paths = []
        for name, path in (("left", self.left), ("right", self.right), ("types", self.types)):
            if path is None:
                paths.append(None)
                continue
            resolved = Path(path).expanduser().resolve()
            if not resolved.is_file():
                what = ("is a directory, not a file" if resolved.is_dir() else
                        "is not a regular file" if resolved.exists() else "no such file")
                raise DataError(f"{path}: {what} ({name})")
            paths.append(str(resolved))
        return ExperimentConfig(
            left=paths[0], right=paths[1], algorithms=algorithms, budgets=budgets, parameters=parameters,
            seed=None if self.seed is None else int(self.seed), id_column=self.id_column, types=paths[2],
            alpha=float(self.alpha), timeout=self.timeout)


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` did and wrote."""

    out_dir: Path
    manifest: Path
    redescriptions: Path
    runs: Path
    tables: dict[str, Path]
    records: list[RunRecord]
    ran: int
    skipped: int
    master_seed: int
    notes: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    report: Path | None = None

    @property
    def failed(self) -> list[RunRecord]:
        """The runs that raised (they are redone by the next invocation)."""
        return [r for r in self.records if r.status == "failed"]

    @property
    def refused(self) -> list[RunRecord]:
        """The runs whose miner refused its input: they are refused again on a rerun."""
        return [r for r in self.records if r.status == "refused"]


# -- the experiment ---------------------------------------------------------------------


ProgressCallback = Callable[[int, int, "RunRecord | None"], None]


def run_experiment(
    config: ExperimentConfig,
    out_dir: str | os.PathLike,
    *,
    jobs: int = 1,
    progress: ProgressCallback | None = None,
    reports: bool = True,
    shards: int | None = None,
    address: str | None = None,
) -> ExperimentResult:
    """Run (or resume, or extend) an experiment in ``out_dir`` and write its tables.

    Parameters
    ----------
    config : ExperimentConfig
        The experiment; checked before anything is written.
    out_dir : str or PathLike
        Its directory: new, empty, or holding the same experiment (see the module
        docstring: resuming and extending).
    jobs : int
        Runs at the same time, each in its own fresh process.
    progress : callable, optional
        Called as ``progress(done, total, record)``: once with ``record=None``
        before the first run (``done`` counts the runs already finished), then
        after every run with its :class:`RunRecord`.
    reports : bool
        Also call :func:`dprm.evaluation.figures.write_figures` and
        :func:`dprm.evaluation.report.write_experiment_report` when they exist.
    shards : int, optional
        Run on a :class:`~dprm.engine.ray_engine.RayEngine` with this many shards
        instead of in fresh processes (see "Sharded runs" in the module docstring);
        ``jobs`` must then be 1.
    address : str, optional
        With ``shards``: the Ray cluster to join (``ray://host:port``); default a
        local Ray on loopback, started once for the whole experiment.

    Returns
    -------
    ExperimentResult
        Paths, every run's record (``failed`` ones are redone next time), notes.

    Raises
    ------
    ParameterError, DataError, DprmError
        For bad options, unreadable data, a directory holding another experiment, or
        a run document's path taken by a directory; nothing is written then.
    KeyboardInterrupt
        Passed on after the pool is shut down; finished runs are kept.
    """
    from dprm.data import load_two_view

    if not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"--jobs must be at least 1, not {jobs}")
    if shards is not None:
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            raise ParameterError(f"--shards must be a positive integer, not {shards!r}")
        if jobs != 1:
            raise ParameterError("--jobs: with --engine ray the runs go one at a time through the shards "
                                 "(every request already uses all of them); leave --jobs out")
    out_dir = Path(out_dir).expanduser().resolve()
    # A first look at the directory, to refuse what is wrong before any work; it is looked at
    # again under its lock (_run_and_write), since another runner may write it meanwhile.
    seen = _prepare_directory(out_dir)
    checked = config.checked(recorded=seen)
    if shards is not None:
        check_sharded(checked.algorithms, checked.parameters)
        _check_sharded_leftovers(seen, out_dir, checked)
    with contextlib.ExitStack() as stack:
        if shards is None:
            data = load_two_view(checked.left, checked.right, id_column=checked.id_column, types=checked.types,
                                 duplicate_names="rename")
            engine = None
        else:
            engine = data = stack.enter_context(_open_engine(checked, shards, address))
        return _run_and_write(config, out_dir, _data_files(checked), data, engine, jobs, progress, reports)


def _check_sharded_leftovers(old: Mapping[str, Any] | None, out_dir: Path, config: ExperimentConfig,
                             finished: Mapping[Path, Any] | None = None) -> None:
    """On a sharded engine, refuse the runs left over from earlier invocations that cannot run there.

    ``finished``: the runs' documents as the look under the lock read them (without: a
    run is finished when its document's file is there; none is read).
    """
    if old is not None:
        check_sharded([a for a in _unfinished_algorithms(old, out_dir, finished) if a not in config.algorithms],
                      config.parameters)


def _open_engine(config: ExperimentConfig, shards: int, address: str | None) -> Any:
    """The Ray engine of a sharded experiment, its shards reading the files as the in-process runs load them."""
    from dprm.engine.ray_engine import RayEngine
    from dprm.engine.sharding import ShardSpec

    spec = ShardSpec.of(config.left, config.right, id_column=config.id_column, types=config.types,
                        duplicate_names="rename")
    return RayEngine(spec, shards=shards, address=address)


def _run_and_write(config: ExperimentConfig, out_dir: Path, files: Mapping[str, Any], data: Any, engine: Any,
                   jobs: int, progress: ProgressCallback | None, reports: bool) -> ExperimentResult:
    """The manifest, the runs and the tables of :func:`run_experiment`, once the data (or engine) is open.

    The directory is looked at twice: before its lock is taken (:func:`_look`: a bad
    directory is refused while nothing is written, not even the lock), then again
    with the lock held, and only that second look decides what is written and run. A
    second runner that looked before the first took the lock would otherwise write its
    stale manifest over the first's (dropping the first's algorithms) or take another
    experiment's finished runs for its own. ``config`` is the caller's, unchecked: each
    look checks it against the manifest it finds; ``files`` is the manifest's ``data``
    (the files' hashes, computed once).

    Each finished run's document is read once, by the look under the lock: the
    document checked there is the one the run's record and its rows of the tables are
    made from (:func:`write_tables`' ``finished``), so a file changed after the check
    cannot put unchecked statistics into the tables, nor make them disagree with the
    records. The first look checks the manifest, the options and the runs' paths only;
    a document refused under the lock leaves the folder as it was (the lock file too:
    :class:`~dprm.evaluation.manifest._DirectoryLock`).
    """
    # every algorithm would refuse every run: say it before the directory is made
    views = data.views if engine is None else engine.schema.views
    require_attributes(views)
    _look(config, out_dir, views, data.n_rows, files, engine, documents=False)
    made = _make_directory(out_dir)
    with _DirectoryLock(out_dir, made) as lock:
        manifest, finished = _look(config, out_dir, views, data.n_rows, files, engine)
        lock.claim()
        _atomic_write_text(out_dir / _MANIFEST_NAME, json.dumps(manifest, indent=2) + "\n")
        records = _run_all(manifest, out_dir, data.n_rows, jobs, progress, engine, finished)
        result = write_tables(out_dir, data=data, manifest=manifest, finished=finished)
        result.records = records
        result.ran = sum(r.status != "done-before" for r in records)
        result.skipped = sum(r.status == "done-before" for r in records)
        for record in records:
            if record.status == "done-before":
                record.status = "ok"
        notes = result.notes
        for algorithm in manifest["algorithms"]:
            bad = [r for r in records if r.algorithm == algorithm and r.status in ("failed", "refused", "unavailable")]
            if bad:
                notes.append(f"{algorithm}: {len(bad)} run(s) {bad[0].status}: {bad[0].message}")
        if reports:
            _reports(out_dir, result)
    return result


def _make_directory(out_dir: Path) -> bool:
    """Make ``out_dir`` (its parent exists: :func:`_prepare_directory`); whether this call made it."""
    try:
        with naming(out_dir):
            out_dir.mkdir()
    except FileExistsError:
        return False
    return True


def _look(config: ExperimentConfig, out_dir: Path, views: Sequence[Any], rows: int,
          files: Mapping[str, Any], engine: Any, *, documents: bool = True
          ) -> tuple[dict[str, Any], dict[Path, Any]]:
    """The directory's manifest merged with ``config``, and its finished runs, all checked.

    ``documents``: read and check the finished runs' documents (the look under the
    lock); without, only their paths are checked and every run maps to None.

    Raises
    ------
    DprmError
        A directory holding another experiment, a manifest dprm could not have written,
        options that do not fit the experiment recorded (parameters of an algorithm it
        lacks), a finished run's document that is not this experiment's run.
    """
    old = _prepare_directory(out_dir)
    checked = config.checked(recorded=old)
    if engine is not None and not documents:
        _check_sharded_leftovers(old, out_dir, checked)
    manifest = _new_manifest(checked, old, out_dir, files)
    finished = _check_run_paths(manifest, out_dir, views, rows, documents=documents)
    if engine is not None and documents:
        _check_sharded_leftovers(old, out_dir, checked, finished)
    return manifest, finished


def _check_run_paths(manifest: Mapping[str, Any], out_dir: Path, views: Sequence[Any],
                     rows: int, *, documents: bool = True) -> dict[Path, Any]:
    """Refuse, before anything is written or run, a run whose document's path is taken by a directory,
    holds a document dprm could not have written there or that records another run
    (:func:`~dprm.evaluation.manifest._finished`: another master seed, seed or number of
    ``rows``), or a finished run's document whose queries do not fit the data's ``views``.

    The run would be mined, then fail to write, and be reported as refusing its input; the
    document would go into the tables as the run's (or fail them after the other runs were mined).
    Returns each run's finished document (None: to run), read once for :func:`_run_all` and
    :func:`write_tables`; with ``documents`` false only the paths are checked (every run None).
    """
    finished: dict[Path, Any] = {}
    for planned in _plan(manifest, out_dir):
        path = _run_path(out_dir, planned.algorithm, planned.label, planned.run)
        if path.is_dir() or (path.exists() and not path.is_file()):
            kind = "a directory" if path.is_dir() else "not a regular file"
            raise DprmError(f"{path}: is {kind}, where the run's document is written; move it away and run the "
                            "same dprm evaluate command again")
        if not documents:
            finished[path] = None
            continue
        # a finished run's document that dprm could not have written, or another experiment's: refused now
        document = _finished(path, planned, master_seed=int(manifest["seed"]), rows=rows)
        if document is not None:
            _check_query_attributes(document, path, views)
        finished[path] = document
    return finished


def _check_query_attributes(document: Mapping[str, Any], path: Path, views: Sequence[Any]) -> None:
    """Refuse a finished run's document whose queries do not fit its side's view (one line).

    A literal on an attribute the view lacks, or of a kind the attribute's kind does not
    take (the ones :meth:`~dprm.queries.Literal.support` raises on: a Boolean literal on
    another kind, a numeric literal on a categorical attribute, a category that is not a
    number on a numeric or Boolean one). Found here, before the progress bar is drawn,
    not by the true statistics after the other runs were mined.
    """
    from dprm.data.attributes import AttributeKind
    from dprm.queries import BooleanLiteral, CategoricalLiteral, NumericLiteral, query_from_json
    from dprm.queries.literals import _as_number  # how a categorical literal on a numeric attribute reads it

    for index, entry in enumerate(document["redescriptions"]):
        for view, side in zip(views, ("left", "right")):
            query = query_from_json(entry[side])
            absent = sorted(query.attributes() - set(view.names))
            if absent:
                raise DprmError(f"{path}: redescriptions[{index}].{side}: query uses attribute {absent[0]!r}, which "
                                f"the {view.name} view does not have; delete the file to have the run redone")
            for literal in query.literals():
                kind = view[literal.attr].kind
                if isinstance(literal, BooleanLiteral) and kind is not AttributeKind.BOOLEAN:
                    problem = "a Boolean literal"
                elif isinstance(literal, NumericLiteral) and kind is AttributeKind.CATEGORICAL:
                    problem = "a numeric literal"
                elif (isinstance(literal, CategoricalLiteral) and kind is not AttributeKind.CATEGORICAL
                      and _as_number(literal.category) is None):
                    problem = f"the category {literal.category!r} (not a number)"
                else:
                    continue
                raise DprmError(f"{path}: redescriptions[{index}].{side}: {problem} on attribute {literal.attr!r} "
                                f"of the {view.name} view, which is {kind.value}; delete the file to have the run "
                                "redone")


def _run_all(manifest: Mapping[str, Any], out_dir: Path, rows: int, jobs: int,
             progress: ProgressCallback | None, engine: Any, finished: Mapping[Path, Any]) -> list[RunRecord]:
    plan = _plan(manifest, out_dir)
    pending: list[tuple[RunRecord, dict[str, Any]]] = []
    records: list[RunRecord] = []
    for planned in plan:
        path = _run_path(out_dir, planned.algorithm, planned.label, planned.run)
        document = finished[path]  # read and checked by _check_run_paths
        if document is not None:
            record = _record_from(document, planned)
            record.status = "done-before"
            records.append(record)
            continue
        records.append(planned)
        baseline = planned.algorithm in (*BASELINES, *SYNTHETIC_BASELINES) and _accepted(planned.algorithm) is None
        pending.append((planned, {
            "algorithm": planned.algorithm, "epsilon": planned.epsilon, "run": planned.run, "seed": planned.seed,
            "master_seed": int(manifest["seed"]), "path": str(path), "rows": rows, "baseline": baseline,
            "left": manifest["data"]["left"]["path"], "right": manifest["data"]["right"]["path"],
            "types": None if manifest["data"]["types"] is None else manifest["data"]["types"]["path"],
            "id_column": manifest["data"]["id_column"], "timeout": manifest.get("timeout"),
            "parameters": parameters_for(planned.algorithm, manifest["parameters"]),
            "dpmm_python": dpmm_python_or_none(planned.algorithm),
        }))
    total, done = len(plan), len(plan) - len(pending)
    if progress is not None:
        progress(done, total, None)
    if not pending:
        return records
    position = {id(planned): i for i, planned in enumerate(records)}
    runs = _in_fresh_processes(pending, jobs) if engine is None else _on_engine(pending, engine)
    with contextlib.closing(runs) as finished:  # closing stops the runs under way
        for planned, fields in finished:
            if fields is None:
                fields = {"algorithm": planned.algorithm, "epsilon": planned.epsilon, "run": planned.run,
                          "seed": planned.seed, "rows": rows, "status": "failed",
                          "message": "the run's process ended without a result (killed, or out of memory?)"}
            record = RunRecord(**fields)
            records[position[id(planned)]] = record
            done += 1
            if progress is not None:
                progress(done, total, record)
    return records


def _reports(out_dir: Path, result: ExperimentResult) -> None:
    """Figures and the HTML report, when their modules exist (dprm.evaluation.figures/report)."""
    for module_name, function_name, what in (("dprm.evaluation.figures", "write_figures", "figures"),
                                            ("dprm.evaluation.report", "write_experiment_report", "report")):
        try:
            module = __import__(module_name, fromlist=[function_name])
            function = getattr(module, function_name)
        except (ImportError, AttributeError):
            result.notes.append(f"{what} skipped: {module_name}.{function_name} is not available")
            continue
        try:
            written = function(out_dir)
        except Exception as error:  # the runs and tables stand without the figures
            result.notes.append(f"{what} failed: {_one_line(error)}")
            continue
        if what == "figures" and written is not None:
            result.figures = [Path(p) for p in (written.values() if isinstance(written, dict) else written)]
        elif what == "report" and written is not None:
            result.report = Path(written)


# -- the tidy tables --------------------------------------------------------------------


def _redescription_rows(document: Mapping[str, Any], record: RunRecord, data: Any, alpha: float) -> pd.DataFrame:
    from dprm.evaluation.true_statistics import true_statistics

    body = {key: value for key, value in document.items() if key != "run"}
    frame = true_statistics(body, data)
    frame.insert(0, "algorithm", record.algorithm)
    frame.insert(1, "epsilon", math.nan if record.epsilon is None else record.epsilon)
    frame.insert(2, "run", record.run)
    frame["significant"] = frame["true_pvalue"] < alpha
    for column in ("jaccard_low", "jaccard_high"):
        if column not in frame.columns:
            frame[column] = math.nan
    if "true_jaccard_in_interval" not in frame.columns:
        frame["true_jaccard_in_interval"] = pd.array([None] * len(frame), dtype="boolean")
    return frame[list(REDESCRIPTION_COLUMNS)]


def write_tables(
    out_dir: str | os.PathLike,
    *,
    data: Any = None,
    manifest: Mapping[str, Any] | None = None,
    finished: Mapping[Path, Any] | None = None,
) -> ExperimentResult:
    """Rebuild ``redescriptions.csv``, ``runs.csv`` and the papers' tables from the run JSONs.

    Runs that have not finished appear in ``runs.csv`` with status ``failed``, ``refused``,
    ``unavailable`` (from their ``.failed.json``) or ``missing``.

    Parameters
    ----------
    out_dir : str or PathLike
        An experiment directory.
    data : TwoViewData or CountingEngine, optional
        The experiment's data (loaded from the manifest's paths when not given), or
        an engine holding it: the true statistics are then counted on its shards
        (:func:`~dprm.evaluation.true_statistics.true_statistics`).
    manifest : mapping, optional
        The experiment's manifest (read from ``out_dir`` when not given).
    finished : mapping, optional
        Run document path → the document read and checked before the runs (None: the
        run had not finished then), as the runner's look under the lock returns them.
        Those documents are used as they were checked, not read again; the others
        (the runs of this invocation) are read from ``out_dir``. Without it every
        document is read.
    """
    from dprm.data import load_two_view

    out_dir = Path(out_dir)
    manifest = read_manifest(out_dir) if manifest is None else manifest
    if data is None:
        files = manifest["data"]
        data = load_two_view(files["left"]["path"], files["right"]["path"], id_column=files.get("id_column"),
                             types=None if files.get("types") is None else files["types"]["path"],
                             duplicate_names="rename")
    alpha = float(manifest.get("alpha", 0.01))
    records: list[RunRecord] = []
    frames: list[pd.DataFrame] = []
    for planned in _plan(manifest, out_dir):
        path = _run_path(out_dir, planned.algorithm, planned.label, planned.run)
        document = finished.get(path) if finished is not None else None
        if document is None:  # not finished when checked: run now (or failed), read once here
            document = _finished(path, planned, master_seed=int(manifest["seed"]), rows=data.n_rows)
        if document is None:
            record = planned
            record.rows = data.n_rows
            try:
                failure = json.loads(_failed_path(path).read_text(encoding="utf-8"))
                record.status = str(failure.get("status", "failed"))
                record.message = str(failure.get("message", ""))
            except (OSError, ValueError):
                record.status = "missing"
            records.append(record)
            continue
        record = _record_from(document, planned)
        records.append(record)
        try:
            frames.append(_redescription_rows(document, record, data, alpha))
        except DprmError as err:
            raise DprmError(f"{path}: {err}") from None
    runs = pd.DataFrame([r.row() for r in records], columns=list(RUN_COLUMNS))
    for column in ("returned", "kept", "rows"):
        runs[column] = pd.array([None if pd.isna(v) else int(v) for v in runs[column]], dtype="Int64")
    redescriptions = (pd.concat(frames, ignore_index=True) if frames
                      else pd.DataFrame({c: pd.Series(dtype=object) for c in REDESCRIPTION_COLUMNS}))
    redescriptions_path = write_csv_atomic(redescriptions, out_dir / "redescriptions.csv")
    runs_path = write_csv_atomic(runs, out_dir / "runs.csv")
    tables = write_paper_tables(redescriptions, runs, out_dir, algorithms=list(manifest["algorithms"]), alpha=alpha)
    return ExperimentResult(out_dir=out_dir, manifest=out_dir / _MANIFEST_NAME, redescriptions=redescriptions_path,
                            runs=runs_path, tables=tables, records=records, ran=0, skipped=0,
                            master_seed=int(manifest["seed"]))
