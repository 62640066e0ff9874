"""The experiment runner (issue 4, part 2): every algorithm, R runs per budget, true statistics.

An *experiment* is: two data files (plus an optional types file and id column),
a list of algorithms, a list of budgets ``EPSxRUNS`` (:mod:`dprm.evaluation.budgets`),
the miners' parameters and a master seed. :func:`run_experiment` runs every private
algorithm ``RUNS`` times at every budget's epsilon and every non-private algorithm
(``cartwheels``, the python-clired baselines ``clired-*``, any miner without an
``epsilon`` parameter) once, since they ignore the budget. Every run happens in a
fresh process (at most ``jobs`` at a time, none reused), so its peak memory
(``getrusage().ru_maxrss`` in the child, and of the child's own subprocesses for
the baselines) is honest. The processes are forked from one warm fork server that
has imported the miners and loaded the compiled kernels
(:mod:`dprm.evaluation.forkserver_preload`), so a run does not pay Python's and
numba's start-up again.

Layout of the output directory ``DIR``::

    DIR/experiment.json                     the manifest (what the experiment is)
    DIR/runs/ALGORITHM/EPSILON/RUN.json     each finished run: the spec's document
                                            with a top-level "run" block (seed, seconds,
                                            peak_mb, rows, ...); EPSILON is "none" for
                                            a non-private algorithm
    DIR/runs/ALGORITHM/EPSILON/RUN.failed.json   a run that raised (redone on restart)
    DIR/redescriptions.csv                  one row per redescription of every run,
                                            noisy and true statistics
    DIR/runs.csv                            one row per run
    DIR/summary.csv, DIR/mann_whitney.csv   the papers' tables (dprm.evaluation.tables)

Seeds. The runs use :class:`~dprm.privacy.SeededNoise`: an experiment is a local
tool for researchers who may see the data, and it must be reproducible. Run
``(algorithm, epsilon, run)`` gets the seed :func:`run_seed` derives from the master
seed; it is used exactly as ``dprm mine --seed`` uses its seed, so
``dprm mine LEFT RIGHT -a ALGORITHM --epsilon EPSILON --seed SEED`` (with the same
parameters) reproduces a run. Without a master seed one is drawn and recorded.
The released statistics are therefore *not* private releases; the documents'
privacy blocks say so.

Resuming. A run's JSON is written atomically (temporary file, then
:func:`os.replace`) only when it has finished, so after an interruption (Ctrl-C, a
kill, a crash) a restart skips exactly the finished runs and redoes the others.
The manifest decides whether ``DIR`` holds *the same* experiment: the same data
(by content: SHA-256 of the files, so moved files are fine), types file, id
column, parameters and master seed. Anything else is refused in one line.
The same experiment may be *extended*: more algorithms, more budgets or more runs
of a budget; the manifest then records the union, and every unfinished run of the
union is run (per-run seeds do not depend on which other runs exist, so the old
runs stay valid). ``alpha`` and ``timeout`` only shape the tables and the baselines'
limits: the latest values are recorded. A lock file (``DIR/.lock``) keeps two runners out of one DIR.

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
import datetime as _dt
import fcntl
import hashlib
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import resource
import secrets
import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from dprm.data.attributes import require_attributes
from dprm.errors import DataError, DprmError, EngineError, ParameterError
from dprm.files import write_atomic
from dprm.evaluation.tables import write_csv_atomic, write_paper_tables
from dprm.evaluation.budgets import NO_EPSILON, Budget, epsilon_label, format_budgets, parse_budgets

__all__ = [
    "BASELINES",
    "EXPERIMENT_FORMAT",
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

#: The format tag of ``experiment.json``.
EXPERIMENT_FORMAT = "dprm.experiment/1"

#: Non-private baselines run through python-clired (:mod:`dprm.evaluation.baselines`).
BASELINES: tuple[str, ...] = ("clired-reremi", "clired-splitt", "clired-layeredt")

#: What the manifest and the CLI say about the noise of the runs.
NOISE_NOTE = ("seeded noise: every run is reproducible from its seed; the results are for "
              "evaluation and are not private releases")

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

_LOCK_NAME = ".lock"
_MANIFEST_NAME = "experiment.json"


# -- algorithms and parameters ---------------------------------------------------------


def known_algorithms() -> list[str]:
    """Every algorithm name an experiment accepts: the miners, then the baselines.

    Examples
    --------
    >>> names = known_algorithms()
    >>> "alt-expm" in names and "cartwheels" in names and "clired-reremi" in names
    True
    """
    from dprm.mining import ALGORITHMS

    return [*ALGORITHMS, *(b for b in BASELINES if b not in ALGORITHMS)]


def _accepted(algorithm: str) -> set[str] | None:
    """The parameter names a miner accepts (without its fixed ones); None for a baseline."""
    from dprm.mining import ALGORITHMS

    if algorithm not in ALGORITHMS:
        return None
    miner_class, fixed = ALGORITHMS[algorithm]
    return set(miner_class.parameter_names()) - set(fixed)


def is_private(algorithm: str) -> bool:
    """Whether ``algorithm`` takes a privacy budget (a miner with an ``epsilon`` parameter).

    Examples
    --------
    >>> is_private("alt-mcmc"), is_private("cartwheels"), is_private("clired-splitt")
    (True, False, False)
    """
    accepted = _accepted(algorithm)
    return accepted is not None and "epsilon" in accepted


def parameters_for(algorithm: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters one algorithm gets from an experiment's ``parameters``.

    ``parameters`` maps parameter names to values (given to every miner that accepts
    the name) and algorithm names to mappings of that algorithm's own parameters
    (which win over the shared ones). Baselines get only their own mapping.

    Examples
    --------
    >>> p = {"mcmc_iterations": 50, "depth": 3, "alt-expm": {"depth": 2}}
    >>> parameters_for("alt-expm", p)
    {'mcmc_iterations': 50, 'depth': 2}
    >>> parameters_for("cartwheels", p)
    {'depth': 3}
    >>> parameters_for("clired-reremi", p)
    {}
    """
    from dprm.mining import ALGORITHMS
    from dprm.mining.base import read_none_texts

    names = set(known_algorithms())
    accepted = _accepted(algorithm)
    shared = {k: v for k, v in parameters.items() if k not in names}
    own = dict(parameters.get(algorithm) or {})
    if accepted is None:
        return own
    chosen = {**{k: v for k, v in shared.items() if k in accepted}, **own}
    return read_none_texts(ALGORITHMS[algorithm][0].parameter_specs, chosen)  # prune_interval=none


def parse_parameter_items(items: Iterable[str], option: str = "--parameters") -> dict[str, Any]:
    """Merge ``--parameters`` values: JSON objects and ``[ALGORITHM.]NAME=VALUE`` items.

    A ``VALUE`` is read as JSON when it is valid JSON (numbers, ``true``, ``null``,
    quoted text), else as text. Dashes in a name become underscores
    (``mcmc-iterations`` = ``mcmc_iterations``).

    Examples
    --------
    >>> parse_parameter_items(['{"depth": 3}', "mcmc-iterations=200", "alt-expm.units=subtrees"])
    {'depth': 3, 'mcmc_iterations': 200, 'alt-expm': {'units': 'subtrees'}}
    >>> parse_parameter_items(["prune_support=null"])
    {'prune_support': None}
    """
    names = set(known_algorithms())
    merged: dict[str, Any] = {}

    def put(algorithm: str | None, name: str, value: Any) -> None:
        name = name.strip().replace("-", "_")
        if not name:
            raise ParameterError(f"{option}: empty parameter name")
        if algorithm is None:
            merged[name] = value
        else:
            merged.setdefault(algorithm, {})
            if not isinstance(merged[algorithm], dict):
                raise ParameterError(f"{option}: {algorithm} must map to a JSON object of parameters")
            merged[algorithm][name] = value

    for item in items:
        text = item.strip()
        if text.startswith("{"):
            try:
                decoded = json.loads(text)
            except json.JSONDecodeError as err:
                raise ParameterError(f"{option}: not valid JSON: {err.msg} at character {err.pos}") from None
            if not isinstance(decoded, dict):
                raise ParameterError(f"{option}: a JSON value must be an object")
            for key, value in decoded.items():
                if key in names:
                    if not isinstance(value, dict):
                        raise ParameterError(f"{option}: {key} must map to a JSON object of parameters")
                    for name, inner in value.items():
                        put(key, name, inner)
                else:
                    put(None, key, value)
            continue
        if "=" not in text:
            raise ParameterError(f"{option}: {item!r} is neither a JSON object nor NAME=VALUE")
        key, raw = text.split("=", 1)
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        algorithm = None
        if "." in key:
            algorithm, key = key.rsplit(".", 1)
            algorithm = algorithm.strip()
            if algorithm not in names:
                raise ParameterError(f"{option}: unknown algorithm {algorithm!r} in {item!r}")
        put(algorithm, key, value)
    return merged


def _check_algorithms(algorithms: Iterable[str]) -> list[str]:
    names = known_algorithms()
    out: list[str] = []
    for algorithm in algorithms:
        if algorithm not in names:
            raise ParameterError(f"unknown algorithm {algorithm!r}; choose among: {', '.join(names)}")
        if algorithm in out:
            raise ParameterError(f"algorithm {algorithm} is listed twice")
        out.append(algorithm)
    if not out:
        raise ParameterError("give at least one algorithm")
    return out


def _check_parameters(algorithms: list[str], budgets: list[Budget], parameters: Mapping[str, Any]) -> None:
    """Refuse, before any work, a parameter that is misplaced or out of range."""
    from dprm.mining import make_miner

    names = set(known_algorithms())
    for key, value in parameters.items():
        if key in names:
            if key not in algorithms:
                raise ParameterError(f"--parameters: {key} is not among the experiment's algorithms")
            if not isinstance(value, Mapping):
                raise ParameterError(f"--parameters: {key} must map to a JSON object of parameters")
            for name in value:
                if name in ("epsilon", "seed"):
                    raise ParameterError(f"--parameters: {name} is set by the experiment (--budgets, --seed)")
            accepted = _accepted(key)
            if accepted is not None:
                for name in value:
                    if name not in accepted:
                        raise ParameterError(f"--parameters: {name} does not apply to {key}")
            continue
        if key in ("epsilon", "seed"):
            raise ParameterError(f"--parameters: {key} is set by the experiment (--budgets, --seed)")
        if not any(key in (_accepted(a) or ()) for a in algorithms):
            raise ParameterError(f"--parameters: {key} applies to none of the algorithms {', '.join(algorithms)}")
    try:
        json.dumps(dict(parameters), allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ParameterError(f"--parameters: cannot be recorded as JSON ({err})") from None
    # Values: build every miner and let it check its own parameters now, not in a run.
    for algorithm in algorithms:
        if _accepted(algorithm) is None:
            continue
        given = parameters_for(algorithm, parameters)
        if is_private(algorithm):
            given["epsilon"] = budgets[0].epsilon
        try:
            make_miner(algorithm, **given)  # Miner.check_parameters: every value and its limit
        except ParameterError as err:
            raise ParameterError(f"--parameters: {algorithm}: {err}") from None
        except (TypeError, ValueError) as err:
            raise ParameterError(f"--parameters: {algorithm}: bad value ({err})") from None


def check_sharded(algorithms: Iterable[str], parameters: Mapping[str, Any]) -> None:
    """Refuse, in one line, an algorithm that cannot run on a sharded engine (before anything is read).

    A miner runs sharded when it counts only through an engine (its
    ``counts_through_engine``, asked of the miner built with the experiment's
    parameters); the python-clired baselines never do.

    Examples
    --------
    >>> check_sharded(["serenade-es", "alt-expm"], {})
    >>> check_sharded(["serenade-es", "clired-splitt"], {})
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: clired-splitt does not run on --engine ray yet (...)
    """
    from dprm.mining import make_miner, sharded_algorithms

    for algorithm in algorithms:
        sharded = False
        if _accepted(algorithm) is not None:
            given = parameters_for(algorithm, parameters)
            if is_private(algorithm):
                given["epsilon"] = 1.0  # any budget: it does not decide where the miner counts
            sharded = bool(getattr(make_miner(algorithm, **given), "counts_through_engine", False))
        if not sharded:
            raise ParameterError(f"{algorithm} does not run on --engine ray yet "
                                 f"({', '.join(sharded_algorithms())} do)")


def run_seed(master_seed: int, algorithm: str, epsilon: str, run: int) -> int:
    """The seed of one run: a 63-bit hash of the master seed and the run's identity.

    It depends only on ``(master_seed, algorithm, epsilon label, run)``, so adding
    algorithms or budgets to an experiment leaves the other runs' seeds unchanged.

    Examples
    --------
    >>> run_seed(7, "alt-expm", "1", 0) == run_seed(7, "alt-expm", "1", 0)
    True
    >>> len({run_seed(7, "alt-expm", "1", r) for r in range(100)})
    100
    >>> run_seed(7, "alt-expm", "1", 0) != run_seed(8, "alt-expm", "1", 0)
    True
    >>> 0 <= run_seed(7, "alt-expm", "0.1", 3) < 2**63
    True
    """
    key = f"dprm-experiment/{int(master_seed)}/{algorithm}/{epsilon}/{int(run)}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1


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
        Seconds allowed to one baseline run (python-clired).
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

    def checked(self) -> "ExperimentConfig":
        """A copy with absolute paths and parsed budgets, every value checked.

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
        _check_parameters(algorithms, budgets, parameters)
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer))
                                      or self.seed < 0):
            raise ParameterError(f"--seed must be a non-negative integer, not {self.seed}")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ParameterError(f"--alpha must be in (0, 1), not {self.alpha}")
        if self.timeout is not None and not (self.timeout > 0):
            raise ParameterError(f"--timeout must be positive, not {self.timeout}")
        paths = []
        for name, path in (("left", self.left), ("right", self.right), ("types", self.types)):
            if path is None:
                paths.append(None)
                continue
            resolved = Path(path).expanduser().resolve()
            if not resolved.is_file():
                raise DataError(f"{path}: no such file ({name})")
            paths.append(str(resolved))
        return ExperimentConfig(
            left=paths[0], right=paths[1], algorithms=algorithms, budgets=budgets, parameters=parameters,
            seed=None if self.seed is None else int(self.seed), id_column=self.id_column, types=paths[2],
            alpha=float(self.alpha), timeout=self.timeout)


@dataclass
class RunRecord:
    """One run of an experiment, as a row of ``runs.csv``."""

    algorithm: str
    epsilon: float | None
    run: int
    seed: int
    seconds: float = math.nan
    peak_mb: float = math.nan
    returned: int | None = None
    kept: int | None = None
    rows: int | None = None
    status: str = "pending"
    message: str = ""

    @property
    def label(self) -> str:
        """The epsilon's directory name (``"none"`` for a non-private run)."""
        return epsilon_label(self.epsilon)

    def row(self) -> dict[str, Any]:
        out = asdict(self)
        out["epsilon"] = math.nan if self.epsilon is None else self.epsilon
        return out


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


# -- files ----------------------------------------------------------------------------


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_entry(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    return {"path": path, "sha256": _sha256(path), "bytes": os.path.getsize(path)}


def read_manifest(out_dir: str | os.PathLike) -> dict[str, Any]:
    """The manifest ``experiment.json`` of an experiment directory.

    Raises
    ------
    DprmError
        When it is missing or not an experiment manifest.
    """
    path = Path(out_dir) / _MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DprmError(f"{out_dir}: holds no experiment ({_MANIFEST_NAME} is missing)") from None
    except (OSError, ValueError) as err:
        raise DprmError(f"{path}: cannot read the experiment manifest ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPERIMENT_FORMAT:
        raise DprmError(f"{path}: not a dprm experiment manifest (format {EXPERIMENT_FORMAT})")
    return manifest


def _identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What makes two manifests the same experiment (see the module docstring)."""
    data = manifest["data"]
    return {
        "left": data["left"]["sha256"],
        "right": data["right"]["sha256"],
        "types": None if data.get("types") is None else data["types"]["sha256"],
        "id_column": data.get("id_column"),
        "parameters": manifest.get("parameters", {}),
        "seed": manifest.get("seed"),
    }


def _describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    for key, what in (("left", "left data"), ("right", "right data"), ("types", "types file"),
                      ("id_column", "id column"), ("parameters", "parameters"), ("seed", "master seed")):
        if old[key] != new[key]:
            if key == "seed":
                return f"master seed {old[key]}, not {new[key]}"
            if key == "parameters":
                return f"parameters {json.dumps(old[key], sort_keys=True)}"
            return f"other {what}"
    return "another experiment"


def _merge_manifest(old: Mapping[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    if old is None:
        return new
    algorithms = list(old["algorithms"]) + [a for a in new["algorithms"] if a not in old["algorithms"]]
    runs: dict[float, int] = {}
    for spec in (old["budgets"], new["budgets"]):
        for budget in parse_budgets(spec, option="experiment.json budgets"):
            runs[budget.epsilon] = max(runs.get(budget.epsilon, 0), budget.runs)
    merged = dict(new)
    merged["algorithms"] = algorithms
    merged["budgets"] = format_budgets([Budget(e, r) for e, r in runs.items()])
    merged["created"] = old.get("created", new["created"])
    return merged


class _DirectoryLock:
    """An exclusive ``flock`` on ``DIR/.lock`` (released when the process ends)."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / _LOCK_NAME
        self.handle = None

    def __enter__(self) -> "_DirectoryLock":
        self.handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.close()
            raise DprmError(f"{self.path.parent}: another dprm evaluate is running in this directory") from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"{os.getpid()}\n")
        self.handle.flush()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()


def _prepare_directory(out_dir: Path) -> dict[str, Any] | None:
    """Check ``out_dir`` before any work; the existing manifest, if any."""
    if out_dir.exists() and not out_dir.is_dir():
        raise DprmError(f"{out_dir}: exists and is not a directory")
    if not out_dir.exists():
        if not out_dir.parent.exists():
            raise DprmError(f"{out_dir}: directory {out_dir.parent} does not exist")
        return None
    if (out_dir / _MANIFEST_NAME).exists():
        return read_manifest(out_dir)
    leftovers = [p.name for p in out_dir.iterdir() if p.name != _LOCK_NAME]
    if leftovers:
        raise DprmError(f"{out_dir}: not empty and holds no experiment ({_MANIFEST_NAME}); choose another --out")
    return None


# -- one run (in a child process) -----------------------------------------------------


def _run_path(out_dir: Path, algorithm: str, label: str, run: int) -> Path:
    return out_dir / "runs" / algorithm / label / f"{run}.json"


def _failed_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.failed.json")


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


def _baseline(task: dict[str, Any], path: Path) -> dict[str, Any]:
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


# -- the experiment ---------------------------------------------------------------------


def _plan(manifest: Mapping[str, Any], out_dir: Path) -> list[RunRecord]:
    """Every run of the experiment, in a stable order (algorithm, budget, run)."""
    budgets = parse_budgets(manifest["budgets"], option="experiment.json budgets")
    seed = int(manifest["seed"])
    plan: list[RunRecord] = []
    for algorithm in manifest["algorithms"]:
        if is_private(algorithm):
            for budget in budgets:
                for run in range(budget.runs):
                    plan.append(RunRecord(algorithm, budget.epsilon, run, run_seed(seed, algorithm, budget.label, run)))
        else:
            plan.append(RunRecord(algorithm, None, 0, run_seed(seed, algorithm, NO_EPSILON, 0)))
    return plan


def _unfinished_algorithms(manifest: Mapping[str, Any], out_dir: Path) -> list[str]:
    """The algorithms of ``manifest`` with a run not finished in ``out_dir`` (in the manifest's order)."""
    try:
        plan = _plan(manifest, out_dir)
    except (KeyError, TypeError, ValueError, DprmError):
        return []  # an incomplete manifest is refused later, with its own message
    unfinished = {p.algorithm for p in plan if _finished(_run_path(out_dir, p.algorithm, p.label, p.run)) is None}
    return [a for a in manifest.get("algorithms", []) if a in unfinished]


def _finished(path: Path) -> dict[str, Any] | None:
    """The document of a finished run, or None (missing, unreadable or without its run block)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("run"), dict):
        return None
    return document


def _record_from(document: Mapping[str, Any], planned: RunRecord) -> RunRecord:
    run = document["run"]
    return RunRecord(planned.algorithm, planned.epsilon, planned.run, int(run.get("seed", planned.seed)),
                     float(run.get("seconds", math.nan)), float(run.get("peak_mb", math.nan)),
                     int(run.get("returned", len(document["redescriptions"]))),
                     int(run.get("kept", sum(not r.get("pruned", False) for r in document["redescriptions"]))),
                     run.get("rows"), "ok", "")


def _context() -> multiprocessing.context.BaseContext:
    """Forkserver with dprm preloaded: fresh processes that need not import numpy or load numba's kernels again."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["dprm.evaluation.runner", "dprm.mining", "dprm.data", "dprm.queries",
                                        "dprm.evaluation.forkserver_preload"])
        return context
    return multiprocessing.get_context("spawn")


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
        For bad options, unreadable data, or a directory holding another experiment;
        nothing is written then.
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
    config = config.checked()
    if shards is not None:
        check_sharded(config.algorithms, config.parameters)
    out_dir = Path(out_dir).expanduser().resolve()
    old = _prepare_directory(out_dir)
    if shards is not None and old is not None:  # the runs left over from earlier invocations run here too
        check_sharded([a for a in _unfinished_algorithms(old, out_dir) if a not in config.algorithms],
                      config.parameters)
    with contextlib.ExitStack() as stack:
        if shards is None:
            data = load_two_view(config.left, config.right, id_column=config.id_column, types=config.types,
                                 duplicate_names="rename")
            engine = None
        else:
            engine = data = stack.enter_context(_open_engine(config, shards, address))
        return _run_and_write(config, out_dir, old, data, engine, jobs, progress, reports)


def _open_engine(config: ExperimentConfig, shards: int, address: str | None) -> Any:
    """The Ray engine of a sharded experiment, its shards reading the files as the in-process runs load them."""
    from dprm.engine.ray_engine import RayEngine
    from dprm.engine.sharding import ShardSpec

    spec = ShardSpec.of(config.left, config.right, id_column=config.id_column, types=config.types,
                        duplicate_names="rename")
    return RayEngine(spec, shards=shards, address=address)


def _run_and_write(config: ExperimentConfig, out_dir: Path, old: Mapping[str, Any] | None, data: Any,
                   engine: Any, jobs: int, progress: ProgressCallback | None, reports: bool) -> ExperimentResult:
    """The manifest, the runs and the tables of :func:`run_experiment`, once the data (or engine) is open."""
    # every algorithm would refuse every run: say it before the directory is made
    require_attributes(data.views if engine is None else engine.schema.views)
    manifest = {
        "format": EXPERIMENT_FORMAT,
        "data": {"left": _file_entry(str(config.left)), "right": _file_entry(str(config.right)),
                 "types": _file_entry(None if config.types is None else str(config.types)),
                 "id_column": config.id_column},
        "algorithms": list(config.algorithms),
        "budgets": format_budgets(list(config.budgets)),
        "parameters": json.loads(json.dumps(config.parameters)),  # as it reads back
        "seed": config.seed,
        "alpha": config.alpha,
        "timeout": config.timeout,
        "noise": NOISE_NOTE,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if old is not None:
        if manifest["seed"] is None:
            manifest["seed"] = old.get("seed")
        try:
            old_identity = _identity(old)
        except (KeyError, TypeError):
            raise DprmError(f"{out_dir / _MANIFEST_NAME}: not a complete experiment manifest") from None
        new_identity = _identity(manifest)
        if old_identity != new_identity:
            raise DprmError(f"{out_dir}: holds another experiment ({_describe_difference(old_identity, new_identity)}); "
                            "choose another --out")
    if manifest["seed"] is None:
        manifest["seed"] = secrets.randbits(63)
    manifest = _merge_manifest(old, manifest)
    from dprm import __version__

    manifest["dprm_version"] = __version__

    out_dir.mkdir(exist_ok=True)
    with _DirectoryLock(out_dir):
        _atomic_write_text(out_dir / _MANIFEST_NAME, json.dumps(manifest, indent=2) + "\n")
        records = _run_all(manifest, out_dir, data.n_rows, jobs, progress, engine)
        result = write_tables(out_dir, data=data, manifest=manifest)
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


def _run_all(manifest: Mapping[str, Any], out_dir: Path, rows: int, jobs: int,
             progress: ProgressCallback | None, engine: Any = None) -> list[RunRecord]:
    plan = _plan(manifest, out_dir)
    pending: list[tuple[RunRecord, dict[str, Any]]] = []
    records: list[RunRecord] = []
    for planned in plan:
        path = _run_path(out_dir, planned.algorithm, planned.label, planned.run)
        document = _finished(path)
        if document is not None:
            record = _record_from(document, planned)
            record.status = "done-before"
            records.append(record)
            continue
        records.append(planned)
        baseline = planned.algorithm in BASELINES and _accepted(planned.algorithm) is None
        pending.append((planned, {
            "algorithm": planned.algorithm, "epsilon": planned.epsilon, "run": planned.run, "seed": planned.seed,
            "master_seed": int(manifest["seed"]), "path": str(path), "rows": rows, "baseline": baseline,
            "left": manifest["data"]["left"]["path"], "right": manifest["data"]["right"]["path"],
            "types": None if manifest["data"]["types"] is None else manifest["data"]["types"]["path"],
            "id_column": manifest["data"]["id_column"], "timeout": manifest.get("timeout"),
            "parameters": parameters_for(planned.algorithm, manifest["parameters"]),
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
    queue = list(pending)
    running: dict[Any, tuple[Any, RunRecord, Any]] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                planned, task = queue.pop(0)
                reader, writer = context.Pipe(duplex=False)
                process = context.Process(target=_child, args=(task, writer),
                                          name=f"dprm-run-{planned.algorithm}-{planned.label}-{planned.run}")
                process.start()
                writer.close()
                running[process.sentinel] = (process, planned, reader)
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
        document = _finished(path)
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
