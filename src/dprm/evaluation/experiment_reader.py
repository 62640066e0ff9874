"""An experiment's tables, read for the figures and the report: the redescriptions, the runs, the methods.

An experiment directory (written by ``dprm evaluate``) holds ``redescriptions.csv``
(one row per redescription of every run, with noisy and true statistics) and
``runs.csv`` (one row per run). :func:`read_experiment` reads and checks them (one
directory or several, combined) into an :class:`Experiment`. A method is an
(algorithm, budget) pair (:func:`methods`, in a fixed order; :func:`method_label`),
and a non-private algorithm (empty ``epsilon``) has the budget "non-private".
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from dprm.errors import DataError, DprmError, short_text

__all__ = [
    "REDESCRIPTION_COLUMNS",
    "RUN_COLUMNS",
    "NON_PRIVATE",
    "Experiment",
    "read_experiment",
    "method_label",
    "methods",
    "select_method",
    "budget_label",
    "experiment_alpha",
    "experiment_names",
]

#: Columns ``redescriptions.csv`` must have (others are allowed and kept).
REDESCRIPTION_COLUMNS: tuple[str, ...] = (
    "algorithm", "epsilon", "run", "index", "pruned",
    "noisy_jaccard", "true_jaccard", "noisy_intersection", "true_intersection", "true_pvalue",
)


#: Columns ``runs.csv`` must have (``rows``, ``status``, ``peak_mb``, ... are used when present).
RUN_COLUMNS: tuple[str, ...] = ("algorithm", "epsilon", "run", "seconds", "kept")


#: Statuses of ``runs.csv`` that mean the run finished (an empty status does too).
OK_STATUSES = frozenset({"ok", "done", "success", "succeeded", "finished", "completed"})


NON_PRIVATE = "non-private"


@dataclass
class Experiment:
    """The tables of one or more experiment directories, read and checked.

    Attributes
    ----------
    dirs : list of Path
        The directories, in the order given.
    redescriptions : pandas.DataFrame
        All rows of their ``redescriptions.csv``, with ``epsilon`` numeric (NaN for a
        non-private algorithm), ``pruned`` Boolean, and two added columns:
        ``experiment`` (the directory's name) and ``method`` (:func:`method_label`).
    runs : pandas.DataFrame
        All rows of their ``runs.csv``, with the same added columns and ``ok``
        (the run finished: its status, when there is one, says so).
    metadata : list of dict
        Each directory's ``experiment.json`` (an empty dict when it has none).
    """

    dirs: list[Path]
    redescriptions: pd.DataFrame
    runs: pd.DataFrame
    metadata: list[dict] = field(default_factory=list)


def method_label(algorithm: str, epsilon: float) -> str:
    """The name of a method in figures and tables.

    Examples
    --------
    >>> method_label("alt-mcmc", 0.1), method_label("cartwheels", float("nan"))
    ('alt-mcmc, ε = 0.1', 'cartwheels (non-private)')
    """
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return f"{algorithm} ({NON_PRIVATE})"
    return f"{algorithm}, ε = {float(epsilon):g}"


def budget_label(epsilon: float) -> str:
    """``"ε = 0.1"``, or ``"non-private"`` for a missing epsilon.

    Examples
    --------
    >>> budget_label(1.0), budget_label(float("nan"))
    ('ε = 1', 'non-private')
    """
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return NON_PRIVATE
    return f"ε = {float(epsilon):g}"


def _check_fields(path: Path) -> None:
    """Each row has as many fields as the header: a table cut mid-row (an interrupted copy) is refused.

    pandas would fill a short row with missing values, and the report would count what is left.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            records = csv.reader(handle)
            header = next(records, None)
            if header is None:
                return
            row = 0
            for record in records:
                if not record:  # a blank line: pandas skips it
                    continue
                row += 1
                if len(record) != len(header):
                    raise DataError(f"{path}: row {row} has {len(record)} fields but the header has {len(header)}")
    except (OSError, UnicodeDecodeError, csv.Error):  # pandas' reading words these
        return


def _read_csv(path: Path, required: Sequence[str]) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"{path}: not found (is {path.parent} an experiment directory written by dprm evaluate?)")
    _check_fields(path)
    try:
        # seeds are 64-bit integers: read as text, never through a float
        frame = pd.read_csv(path, dtype={"algorithm": str, "seed": str}, keep_default_na=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: empty file (no header line)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DataError(f"{path}: not a readable CSV table: {message}") from None
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err.strerror or err}") from None
    for column in required:
        if column not in frame.columns:
            raise DataError(f"{path}: missing column {column!r}")
    return frame


_TRUE = {"true", "1", "yes", "t", "y", "1.0"}


_FALSE = {"false", "0", "no", "f", "n", "0.0", ""}


def _booleans(values: pd.Series, path: Path, column: str) -> pd.Series:
    if values.dtype == bool:
        return values
    out = []
    for value in values:
        text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value).strip().lower()
        if text in _TRUE:
            out.append(True)
        elif text in _FALSE:
            out.append(False)
        else:
            raise DataError(f"{path}: column {column!r} holds {value!r}, expected true or false")
    return pd.Series(out, index=values.index, dtype=bool)


def _numbers(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() & raw.notna() & (raw.astype(str).str.strip() != "")
    if bad.any():
        raise DataError(f"{path}: column {column!r} holds {raw[bad].iloc[0]!r}, expected a number")
    return values.astype(float)


def _check_texts(path: Path, numeric: Iterable[str]) -> None:
    """Each row's numbers as written: finite, and ε a positive number or nothing (a non-private run).

    The table is read with pandas' missing-value markers, so a written ``nan`` would
    otherwise pass as nothing (for ε, a phantom non-private row); ``inf`` would reach
    the figures and the integer columns (``kept``, ``rows``) as an infinite number.
    """
    try:
        texts = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError):  # the first reading has worded any error of the table
        return
    if "epsilon" in texts.columns:
        text = texts["epsilon"].str.strip()
        values = pd.to_numeric(text.where(text != ""), errors="coerce")
        bad = (text != "") & ~(values.gt(0) & values.lt(float("inf")))
        if bad.any():
            raise DataError(f"{path}: column 'epsilon' holds {text[bad].iloc[0]!r}, expected a positive number, "
                            "or nothing for a run that is not private")
    for column in numeric:
        if column == "epsilon" or column not in texts.columns:
            continue
        text = texts[column].str.strip()
        values = pd.to_numeric(text, errors="coerce")  # empty, a marker, a word, 'nan' or '1e999': NaN
        suspects = (text != "") & ~values.between(-math.inf, math.inf, inclusive="neither")
        for row in suspects.to_numpy().nonzero()[0]:
            if not _finite_or_not_a_number(text.iloc[row]):
                raise DataError(f"{path}: column {column!r} holds {short_text(text.iloc[row])!r} in row {row + 1}, "
                                "expected a finite number")


def _finite_or_not_a_number(text: str) -> bool:
    """False for a text Python reads as an infinite number or NaN (``inf``, ``-Infinity``, ``nan``, ``1e999``)."""
    try:
        return math.isfinite(float(text))
    except ValueError:  # empty, a missing-value marker or a word (worded by _numbers)
        return True


def _prepare(frame: pd.DataFrame, path: Path, numeric: Iterable[str], experiment: str) -> pd.DataFrame:
    _check_texts(path, numeric)
    frame = frame.copy()
    frame["algorithm"] = frame["algorithm"].fillna("").astype(str)
    for column in numeric:
        if column in frame.columns:
            frame[column] = _numbers(frame, column, path)
    if (frame["epsilon"] <= 0).any():
        raise DataError(f"{path}: column 'epsilon' holds {float(frame.loc[frame['epsilon'] <= 0, 'epsilon'].iloc[0])!r}, "
                        "expected a positive number or nothing (non-private)")
    frame["experiment"] = experiment
    frame["method"] = [method_label(a, e) for a, e in zip(frame["algorithm"], frame["epsilon"])]
    return frame


#: What each number column may hold (where present): (whole number, required, lowest, highest).
_Rule = tuple[bool, bool, float, float]
_REDESCRIPTION_VALUES: dict[str, _Rule] = {
    "run": (True, True, 0, math.inf),
    "index": (True, True, 0, math.inf),
    "true_jaccard": (False, False, 0, 1),
    "true_pvalue": (False, False, 0, 1),
    "true_intersection": (True, False, 0, math.inf),
    "noisy_intersection": (False, False, 0, math.inf),
    "abs_error_jaccard": (False, False, 0, math.inf),
}
_RUN_VALUES: dict[str, _Rule] = {
    "run": (True, True, 0, math.inf),
    "returned": (True, False, 0, math.inf),
    "kept": (True, False, 0, math.inf),
    "rows": (True, False, 0, math.inf),
    "seconds": (False, False, 0, math.inf),
    "peak_mb": (False, False, 0, math.inf),
}


def _number_text(value: float) -> str:
    """A number of a table as it reads: ``1.5``, ``-3`` (not ``-3.0``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _check_values(frame: pd.DataFrame, path: Path, rules: dict[str, _Rule], *, key: Sequence[str], what: str) -> None:
    """Refuse, in one line naming the file, row and column, a number out of its range and a repeated row.

    A run number or index that is not a whole number >= 0, a count below 0 or not whole,
    a time below 0, a true Jaccard index or p-value outside [0, 1]; and two rows of the
    same ``key`` (a redescription, a run), which the summaries would count twice.
    Empty cells are left to the columns' own meaning (a failed run has no time).
    """
    for column, (whole, required, low, high) in rules.items():
        if column not in frame.columns:
            continue
        values = frame[column]
        for position, value in enumerate(values):
            if math.isnan(value):
                if required:
                    raise DataError(f"{path}: column {column!r} is empty in row {position + 1}, expected a whole "
                                    "number >= 0")
                continue
            if (whole and value != math.floor(value)) or not low <= value <= high:
                expected = ("a whole number >= 0" if whole else
                            f"a number in [{low:g}, {high:g}]" if high < math.inf else f"a number >= {low:g}")
                raise DataError(f"{path}: column {column!r} holds {_number_text(value)} in row {position + 1}, "
                                f"expected {expected}")
    seen: dict[tuple, int] = {}
    columns = [frame[c].tolist() for c in key]
    for position, values in enumerate(zip(*columns)):
        identity = tuple(None if isinstance(v, float) and math.isnan(v) else v for v in values)
        if identity in seen:
            raise DataError(f"{path}: row {position + 1} repeats row {seen[identity] + 1} (the same "
                            f"{', '.join(key)}): each {what} has one row, which the summaries would count twice")
        seen[identity] = position


def _check_kept(frame: pd.DataFrame, path: Path) -> None:
    """A run keeps no more redescriptions than it returned."""
    if "returned" not in frame.columns:
        return
    for position, (kept, returned) in enumerate(zip(frame["kept"], frame["returned"])):
        if kept > returned:  # False where either is empty
            raise DataError(f"{path}: column 'kept' holds {_number_text(kept)} in row {position + 1}, more than "
                            f"the {_number_text(returned)} redescriptions the run returned")


def experiment_names(dirs: Sequence[Path]) -> list[str]:
    """The ``experiment`` column's name of each directory: its base name, or the path as given when two share one.

    Examples
    --------
    >>> experiment_names([Path("a/exp1"), Path("b/exp2")]), experiment_names([Path("a/exp"), Path("b/exp")])
    (['exp1', 'exp2'], ['a/exp', 'b/exp'])
    """
    names = [d.resolve().name or str(d) for d in dirs]
    if len(set(names)) < len(names):  # same base name twice: use the paths as given
        names = [str(d) for d in dirs]
    return names


def read_experiment(dirs: str | os.PathLike | Sequence[str | os.PathLike]) -> Experiment:
    """Read the tables of one experiment directory or of several (combined).

    Parameters
    ----------
    dirs : path or sequence of paths
        Directories written by ``dprm evaluate``.

    Returns
    -------
    Experiment

    Raises
    ------
    DataError
        One line naming the directory or file and what is wrong: not a directory,
        a table missing, a row with more or fewer fields than the header (a table
        cut mid-row), a required column (:data:`REDESCRIPTION_COLUMNS`,
        :data:`RUN_COLUMNS`) absent, a value that is not a number or a Boolean, a
        number that is not finite (``inf``, ``nan``; with its row), a number out of
        its column's range (a run or index not a whole number >= 0, a count or time
        below 0, a true Jaccard index or p-value outside [0, 1], more kept than
        returned), a row repeated (the same algorithm, epsilon, run and, in
        ``redescriptions.csv``, index).
    """
    if isinstance(dirs, (str, os.PathLike)):
        dirs = [dirs]
    paths = [Path(d) for d in dirs]
    if not paths:
        raise DataError("no experiment directory given")
    for path in paths:
        if not path.exists():
            raise DataError(f"{path}: no such directory")
        if not path.is_dir():
            raise DataError(f"{path}: not a directory")
    names = experiment_names(paths)
    redescriptions, runs, metadata = [], [], []
    for path, name in zip(paths, names):
        file = path / "redescriptions.csv"
        if not file.exists() and (path / "experiment.json").is_file():
            raise DataError(f"{path}: the experiment has not finished (no redescriptions.csv yet); run the same "
                            "dprm evaluate command again to resume it")
        frame = _read_csv(file, REDESCRIPTION_COLUMNS)
        frame = _prepare(frame, file, ["epsilon", "run", "index", "noisy_jaccard", "true_jaccard",
                                       "noisy_intersection", "true_intersection", "true_pvalue",
                                       "abs_error_jaccard", "jaccard_low", "jaccard_high"], name)
        frame["pruned"] = _booleans(frame["pruned"], file, "pruned")
        _check_values(frame, file, _REDESCRIPTION_VALUES, key=("algorithm", "epsilon", "run", "index"),
                      what="redescription")
        if "abs_error_jaccard" not in frame.columns:
            frame["abs_error_jaccard"] = (frame["noisy_jaccard"] - frame["true_jaccard"]).abs()
        redescriptions.append(frame)
        file = path / "runs.csv"
        frame = _read_csv(file, RUN_COLUMNS)
        frame = _prepare(frame, file, ["epsilon", "run", "seconds", "peak_mb", "returned", "kept", "rows"], name)
        _check_values(frame, file, _RUN_VALUES, key=("algorithm", "epsilon", "run"), what="run")
        _check_kept(frame, file)
        if "status" in frame.columns:
            status = frame["status"].fillna("").astype(str).str.strip().str.lower()
            frame["ok"] = status.isin(OK_STATUSES) | (status == "")
        else:
            frame["ok"] = True
        manifest = _read_metadata(path / "experiment.json")
        _check_redescriptions_of_runs(redescriptions[-1], frame, path)
        if manifest:
            _check_runs_of_manifest(frame, manifest, path)
        runs.append(frame)
        metadata.append(manifest)
    return Experiment(paths, pd.concat(redescriptions, ignore_index=True), pd.concat(runs, ignore_index=True),
                      metadata)


def _read_metadata(path: Path) -> dict:
    """The manifest ``experiment.json`` read strictly (:func:`~dprm.evaluation.manifest.read_manifest`); {} when absent.

    Tables written without ``dprm evaluate`` (by hand, by another tool) may come
    without one; a manifest that is there is what ``dprm evaluate`` wrote or an error
    naming the file and the field (not JSON, ``NaN``, a key twice, a field missing, of
    another type or out of range), as ``dprm evaluate`` itself reads it.
    """
    from dprm.evaluation.manifest import read_manifest

    if not os.path.lexists(path):
        return {}
    try:
        return read_manifest(path.parent)
    except DataError:
        raise
    except DprmError as err:
        raise DataError(str(err)) from None


def _run_name(algorithm: str, epsilon: float, run: Any) -> str:
    """``run 2 of alt-expm at ε 0.1`` (``at ε none`` for a non-private run)."""
    from dprm.evaluation.budgets import epsilon_label

    return f"run {_number_text(run)} of {algorithm} at ε {epsilon_label(epsilon)}"


def _run_keys(frame: pd.DataFrame) -> list[tuple[str, float | None, float]]:
    """Each row's run: (algorithm, epsilon or None for a non-private run, run number)."""
    return [(a, None if math.isnan(e) else float(e), float(r))
            for a, e, r in zip(frame["algorithm"], frame["epsilon"], frame["run"])]


def _check_redescriptions_of_runs(redescriptions: pd.DataFrame, runs: pd.DataFrame, path: Path) -> None:
    """Refuse tables that disagree on the runs: a redescription of a run ``runs.csv`` does not list, or a
    run whose ``returned`` (or ``kept``) is not the number of its rows (its kept rows) in ``redescriptions.csv``.

    ``dprm evaluate`` writes both tables from the same run documents; an edited or
    stale one would have the summaries count redescriptions under runs they are not of.
    """
    counts: dict[tuple, list[int]] = {}
    listed = set(_run_keys(runs))
    for position, (key, pruned) in enumerate(zip(_run_keys(redescriptions), redescriptions["pruned"])):
        if key not in listed:
            raise DataError(f"{path / 'redescriptions.csv'}: row {position + 1} is a redescription of "
                            f"{_run_name(key[0], math.nan if key[1] is None else key[1], key[2])}, which "
                            f"{path / 'runs.csv'} does not list")
        slot = counts.setdefault(key, [0, 0])
        slot[0] += 1
        slot[1] += not pruned
    for position, key in enumerate(_run_keys(runs)):
        returned, kept = counts.get(key, [0, 0])
        for column, rows, what in (("returned", returned, "rows"), ("kept", kept, "kept (not pruned) rows")):
            if column not in runs.columns:
                continue
            value = runs[column].iloc[position]
            if not math.isnan(value) and value != rows:
                raise DataError(f"{path / 'runs.csv'}: column {column!r} holds {_number_text(value)} in row "
                                f"{position + 1}, but {path / 'redescriptions.csv'} has {rows} {what} of "
                                f"{_run_name(key[0], math.nan if key[1] is None else key[1], key[2])}")


def _check_runs_of_manifest(runs: pd.DataFrame, manifest: dict, path: Path) -> None:
    """Refuse a ``runs.csv`` that is not the runs ``experiment.json`` plans, one line naming the row or run.

    Every row is a planned run (an algorithm and budget of the manifest, a run number
    within the budget's runs; a non-private algorithm's one run, without ε), with the
    seed the master seed gives it (:func:`~dprm.evaluation.algorithms.run_seed`, where
    the ``seed`` column is); every planned run has its row (tables older than an
    extended manifest: an interrupted ``dprm evaluate``, which the same command finishes).
    """
    from dprm.evaluation.manifest import _plan

    runs_path, manifest_path = path / "runs.csv", path / "experiment.json"
    plan = {(p.algorithm, p.epsilon, float(p.run)): p for p in _plan(manifest, path)}
    seeds = runs["seed"] if "seed" in runs.columns else None
    for position, key in enumerate(_run_keys(runs)):
        name = _run_name(key[0], math.nan if key[1] is None else key[1], key[2])
        planned = plan.get(key)
        if planned is None:
            raise DataError(f"{runs_path}: row {position + 1} is {name}, which {manifest_path} does not plan "
                            f"(algorithms {', '.join(manifest['algorithms'])}; budgets {manifest['budgets']})")
        seed = None if seeds is None else seeds.iloc[position]
        if seed is None or (isinstance(seed, float) and math.isnan(seed)) or not str(seed).strip():
            continue
        text = str(seed).strip()
        if not (text.isascii() and text.isdigit()) or int(text) != planned.seed:
            raise DataError(f"{runs_path}: column 'seed' holds {short_text(text)!r} in row {position + 1}, not "
                            f"{planned.seed} (the seed the master seed {manifest['seed']} of {manifest_path} "
                            f"gives {name})")
    missing = set(plan) - set(_run_keys(runs))
    if missing:
        algorithm, epsilon, run = next(k for k in plan if k in missing)
        raise DataError(f"{runs_path}: has no row for {_run_name(algorithm, math.nan if epsilon is None else epsilon, run)}, "
                        f"which {manifest_path} plans: the tables are older than the manifest (an interrupted dprm "
                        "evaluate); run the same dprm evaluate command again to finish them")


def _algorithm_order(names: Iterable[str]) -> list[str]:
    try:
        from dprm.mining import ALGORITHMS

        known = list(ALGORITHMS)
    except ImportError:  # pragma: no cover - the mining package is part of dprm
        known = []
    names = set(names)
    return [a for a in known if a in names] + sorted(names - set(known))


def _budget_order(epsilons: Iterable[float]) -> list[float]:
    """Non-private first (NaN), then the budgets from the largest down."""
    epsilons = [float(e) for e in epsilons]
    values = {e for e in epsilons if not math.isnan(e)}
    has_nan = any(math.isnan(e) for e in epsilons)
    return ([math.nan] if has_nan else []) + sorted(values, reverse=True)


def methods(frame: pd.DataFrame) -> list[tuple[str, float]]:
    """The (algorithm, epsilon) pairs of a frame in a fixed order (algorithms, then budgets).

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": ["b", "a", "a", "a"], "epsilon": [1.0, 0.1, 1.0, float("nan")]})
    >>> [method_label(*m) for m in methods(frame)]
    ['a (non-private)', 'a, ε = 1', 'a, ε = 0.1', 'b, ε = 1']
    """
    if frame.empty:
        return []
    out = []
    for algorithm in _algorithm_order(frame["algorithm"]):
        mine = frame["epsilon"][frame["algorithm"] == algorithm].astype(float)
        for epsilon in _budget_order(list(mine)):
            out.append((algorithm, epsilon))
    return out


def select_method(frame: pd.DataFrame, algorithm: str, epsilon: float) -> pd.DataFrame:
    """The rows of one method (a NaN ``epsilon`` selects the non-private rows).

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": ["a", "a", "b"], "epsilon": [1.0, float("nan"), 1.0]})
    >>> len(select_method(frame, "a", 1.0)), len(select_method(frame, "a", float("nan")))
    (1, 1)
    """
    same_algorithm = frame["algorithm"] == algorithm
    if math.isnan(epsilon):
        return frame[same_algorithm & frame["epsilon"].isna()]
    return frame[same_algorithm & (frame["epsilon"] == epsilon)]


def experiment_alpha(experiment: Experiment, default: float = 0.01) -> float:
    """The significance threshold recorded in the (first) ``experiment.json`` (``alpha``), else ``default``.

    Examples
    --------
    >>> experiment_alpha(Experiment([], pd.DataFrame(), pd.DataFrame(), [{"alpha": 0.05}]))
    0.05
    """
    for metadata in experiment.metadata:
        value = metadata.get("alpha")
        if value is None:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1:
            return float(value)
        raise DataError(f"experiment.json: alpha is {value!r}, expected a number in (0, 1) (the significance "
                        "threshold the experiment was run with)")
    return default
