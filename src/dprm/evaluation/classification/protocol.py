"""The protocol of the classifier comparison: repeated stratified cross-validation over a grid.

Repeated stratified k-fold cross-validation (default 10 folds x 5 repeats); every
method sees the same folds. Each fit gets its own seed, derived from the master seed
and the cell's name (dataset, method, ε, depth, repeat, fold), so a cell's result does
not depend on which other cells run. Private methods therefore run with *seeded*
noise: the evaluation is reproducible, and its fits are not private releases. It is a
tool for people who may see the data (it shows accuracies and row counts).
:func:`run_comparison` runs a :class:`GridConfig` (and the fit-time experiment) into
one tidy table (:data:`TABLE_COLUMNS`).
"""

from __future__ import annotations

import math
import time
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError
from dprm.evaluation.classification.data import Dataset
from dprm.evaluation.classification.methods import Method

__all__ = [
    "TABLE_COLUMNS",
    "GridConfig",
    "ClassificationResult",
    "fold_splits",
    "cross_validate",
    "run_comparison",
]

#: Columns of the tidy table, in order.
TABLE_COLUMNS: tuple[str, ...] = (
    "experiment", "dataset", "method", "variant", "private", "epsilon", "max_depth", "embedding_depth",
    "rows", "folds", "repeats", "fits", "accuracy_mean", "accuracy_std", "accuracy_repeat_std",
    "fit_seconds_mean", "fit_seconds_std", "status", "message",
)


def _seed(master: int, *keys: Any) -> int:
    """A 32-bit seed of ``master`` and the cell's keys (independent of the grid's order)."""
    words = [master % 2**32, master // 2**32 % 2**32] + [zlib.crc32(str(k).encode("utf-8")) for k in keys]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def fold_splits(y: np.ndarray, folds: int, repeats: int, seed: int) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Stratified ``folds``-fold splits of ``y``, ``repeats`` times reshuffled.

    Examples
    --------
    >>> y = np.array(["a"] * 6 + ["b"] * 4)
    >>> splits = fold_splits(y, 2, 3, seed=1)
    >>> len(splits), len(splits[0]), sorted(np.concatenate([t for _, t in splits[0]]).tolist()) == list(range(10))
    (3, 2, True)
    """
    from sklearn.model_selection import StratifiedKFold

    if folds < 2:
        raise ParameterError(f"folds must be at least 2, not {folds}")
    if repeats < 1:
        raise ParameterError(f"repeats must be at least 1, not {repeats}")
    _, counts = np.unique(y, return_counts=True)
    if counts.min() < folds:
        raise DataError(f"a class has fewer rows ({counts.min()}) than folds ({folds})")
    out = []
    for repeat in range(repeats):
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=_seed(seed, "folds", repeat))
        out.append(list(splitter.split(np.zeros((len(y), 1)), y)))
    return out


@dataclass
class CellResult:
    """One fit's outcomes of a cell, or why the cell did not run."""

    accuracies: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    repeats: list[int] = field(default_factory=list)
    train_rows: list[int] = field(default_factory=list)
    status: str = "ok"
    message: str = ""


def cross_validate(method: Method, dataset: Dataset, epsilon: float | None, max_depth: int,
                   splits: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]], seed: int) -> CellResult:
    """Fit a fresh classifier of ``method`` on every training fold; test accuracies and fit times.

    A fit that raises ``ValueError`` (a configuration the estimator refuses) ends the
    cell with status ``"refused"``; any other exception with ``"failed"``.

    Examples
    --------
    >>> from dprm.evaluation.classification import Schema, sklearn_cart_method
    >>> data = Dataset("t", pd.DataFrame({"a": ["x", "y"] * 10}), np.array(["p", "q"] * 10),
    ...                Schema({"a": ["x", "y"]}, ["p", "q"]))
    >>> cell = cross_validate(sklearn_cart_method(), data, None, 1, fold_splits(data.y, 2, 2, 0), seed=0)
    >>> cell.status, cell.accuracies, cell.repeats
    ('ok', [1.0, 1.0, 1.0, 1.0], [0, 0, 1, 1])
    """
    result = CellResult()
    for repeat, folds in enumerate(splits):
        for fold, (train, test) in enumerate(folds):
            random_state = _seed(seed, dataset.name, method.name, epsilon, max_depth, repeat, fold)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # seeded noise and the like: said in the report
                    model = method.factory(epsilon, max_depth, random_state, dataset.schema)
                    start = time.perf_counter()
                    model.fit(dataset.X.iloc[train], dataset.y[train])
                    seconds = time.perf_counter() - start
                    accuracy = float(np.mean(model.predict(dataset.X.iloc[test]) == dataset.y[test]))
            except ValueError as error:
                return CellResult(status="refused", message=_one_line(error))
            except Exception as error:  # noqa: BLE001 - one method's bug must not end a long grid
                return CellResult(status="failed", message=f"{type(error).__name__}: {_one_line(error)}")
            result.accuracies.append(accuracy)
            result.seconds.append(seconds)
            result.repeats.append(repeat)
            result.train_rows.append(len(train))
    return result


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@dataclass
class GridConfig:
    """What :func:`run_comparison` runs.

    Attributes
    ----------
    datasets : list of Dataset
    methods : list of Method
    epsilons : list of float
        Budgets of the private methods (non-private ones run once per depth).
    depths : list of int
        Maximum depths.
    folds, repeats : int
        Repeated stratified k-fold cross-validation.
    seed : int
        Master seed (folds and every fit's seed).
    timing_dataset : Dataset, optional
        Rows drawn from it for the fit-time experiment (Figure 8); None skips it.
    timing_rows : list of int
        Numbers of rows of the fit-time experiment.
    timing_epsilon, timing_depth, timing_repeats
        Its budget, maximum depth and fits per point.
    jobs : int
        Cells at the same time (processes; the fit-time experiment runs alone).
    """

    datasets: list[Dataset]
    methods: list[Method]
    epsilons: list[float] = field(default_factory=lambda: [0.01, 0.1, 1.0, 10.0])
    depths: list[int] = field(default_factory=lambda: list(range(1, 11)))
    folds: int = 10
    repeats: int = 5
    seed: int = 0
    timing_dataset: Dataset | None = None
    timing_rows: list[int] = field(default_factory=lambda: [500, 1000, 2000, 4000, 8000])
    timing_epsilon: float = 1.0
    timing_depth: int = 5
    timing_repeats: int = 3
    jobs: int = 1

    def check(self) -> None:
        """Raise :class:`ParameterError` for a grid that cannot run."""
        if not self.datasets:
            raise ParameterError("no dataset given")
        if not self.methods:
            raise ParameterError("no method given")
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ParameterError(f"method names must be unique: {names}")
        for epsilon in [*self.epsilons, self.timing_epsilon]:
            if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
                raise ParameterError(f"epsilon must be a positive number, not {epsilon}")
        if not self.depths:
            raise ParameterError("no maximum depth given")
        for depth in [*self.depths, self.timing_depth]:
            if not (isinstance(depth, int) and 1 <= depth <= 30):
                raise ParameterError(f"maximum depth must be an integer in [1, 30], not {depth}")
        if self.folds < 2 or self.repeats < 1:
            raise ParameterError(f"need at least 2 folds and 1 repeat, not {self.folds} and {self.repeats}")
        if any(not (isinstance(n, int) and n >= 1) for n in self.timing_rows) or self.timing_repeats < 1:
            raise ParameterError("timing rows and repeats must be positive integers")
        if not 1 <= self.jobs <= 256:
            raise ParameterError(f"jobs must be between 1 and 256, not {self.jobs}")

    def settings(self) -> dict[str, Any]:
        """The grid as plain values (for the JSON and the report)."""
        return {
            "datasets": {d.name: {"source": d.source, "rows": d.n_rows, "features": len(d.schema.columns),
                                  "classes": d.schema.classes} for d in self.datasets},
            "methods": [{"name": m.name, "private": m.private, "variant": m.variant,
                         "embedding_depth": m.embedding_depth} for m in self.methods],
            "epsilons": list(self.epsilons), "depths": list(self.depths), "folds": self.folds,
            "repeats": self.repeats, "seed": self.seed,
            "timing": None if self.timing_dataset is None else {
                "dataset": self.timing_dataset.name, "rows": list(self.timing_rows),
                "epsilon": self.timing_epsilon, "max_depth": self.timing_depth, "repeats": self.timing_repeats},
        }


@dataclass
class ClassificationResult:
    """The tidy table of a comparison, its settings and notes."""

    table: pd.DataFrame
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _row(experiment: str, dataset: str, method: Method, epsilon: float | None, max_depth: int,
         cell: CellResult, folds: int, repeats: int) -> dict[str, Any]:
    accuracies = np.asarray(cell.accuracies, dtype=float)
    seconds = np.asarray(cell.seconds, dtype=float)
    per_repeat = [np.mean(accuracies[np.asarray(cell.repeats) == r]) for r in sorted(set(cell.repeats))
                  ] if accuracies.size else []
    n = seconds.size
    return {
        "experiment": experiment, "dataset": dataset, "method": method.name, "variant": method.variant,
        "private": method.private, "epsilon": math.nan if epsilon is None else float(epsilon),
        "max_depth": max_depth, "embedding_depth": method.embedding_at(max_depth),
        "rows": float(np.mean(cell.train_rows)) if cell.train_rows else math.nan,
        "folds": folds, "repeats": repeats, "fits": n,
        "accuracy_mean": float(accuracies.mean()) if n and experiment == "accuracy" else math.nan,
        "accuracy_std": float(accuracies.std(ddof=1)) if n > 1 and experiment == "accuracy" else math.nan,
        "accuracy_repeat_std": float(np.std(per_repeat, ddof=1)) if len(per_repeat) > 1 else math.nan,
        "fit_seconds_mean": float(seconds.mean()) if n else math.nan,
        "fit_seconds_std": float(seconds.std(ddof=1)) if n > 1 else math.nan,
        "status": cell.status, "message": cell.message,
    }


def _accuracy_cell(method: Method, dataset: Dataset, epsilon: float | None, max_depth: int,
                   splits: Any, seed: int, folds: int, repeats: int) -> dict[str, Any]:
    cell = cross_validate(method, dataset, epsilon, max_depth, splits, seed)
    return _row("accuracy", dataset.name, method, epsilon, max_depth, cell, folds, repeats)


def _timing_cell(method: Method, dataset: Dataset, epsilon: float | None, max_depth: int,
                 repeats: int, seed: int) -> dict[str, Any]:
    """Fit ``repeats`` times on all of ``dataset``'s rows (fit seconds only)."""
    cell = CellResult()
    for repeat in range(repeats):
        random_state = _seed(seed, "timing", dataset.n_rows, method.name, repeat)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = method.factory(epsilon, max_depth, random_state, dataset.schema)
                start = time.perf_counter()
                model.fit(dataset.X, dataset.y)
                cell.seconds.append(time.perf_counter() - start)
        except ValueError as error:
            cell = CellResult(status="refused", message=_one_line(error))
            break
        except Exception as error:  # noqa: BLE001
            cell = CellResult(status="failed", message=f"{type(error).__name__}: {_one_line(error)}")
            break
        cell.repeats.append(repeat)
        cell.train_rows.append(dataset.n_rows)
    return _row("fit_time", dataset.name, method, epsilon, max_depth, cell, 0, repeats)


def run_comparison(config: GridConfig,
                   progress: Callable[[int, int], None] | None = None) -> ClassificationResult:
    """Run the grid: accuracy by cross-validation, then fit time by rows.

    Parameters
    ----------
    config : GridConfig
    progress : callable, optional
        ``progress(done, total)`` after each cell (a cell is every fold of one
        dataset, method, ε and depth).

    Returns
    -------
    ClassificationResult
        The tidy table (:data:`TABLE_COLUMNS`): one row per cell, ``experiment``
        ``"accuracy"`` (mean, std over all fits, std of the repeats' means, fit
        seconds; ``rows`` is the mean training size) or ``"fit_time"`` (``rows`` is
        the rows fitted on).

    Examples
    --------
    >>> from dprm.evaluation.classification import Schema, sklearn_cart_method
    >>> data = Dataset("toy", pd.DataFrame({"a": ["x", "y"] * 10}), np.array(["p", "q"] * 10),
    ...                Schema({"a": ["x", "y"]}, ["p", "q"]))
    >>> config = GridConfig([data], [sklearn_cart_method()], epsilons=[1.0], depths=[1, 2], folds=2,
    ...                     repeats=1)
    >>> result = run_comparison(config)
    >>> result.table[["method", "max_depth", "accuracy_mean", "status"]].values.tolist()
    [['sklearn CART', 1, 1.0, 'ok'], ['sklearn CART', 2, 1.0, 'ok']]
    """
    config.check()
    tasks: list[tuple[Callable[..., dict[str, Any]], tuple]] = []
    for dataset in config.datasets:
        try:
            splits = fold_splits(dataset.y, config.folds, config.repeats, _seed(config.seed, dataset.name))
        except DataError as error:
            raise DataError(f"{dataset.source}: {error}", file=dataset.source) from None
        for method in config.methods:
            for depth in config.depths:
                if not method.applies(depth):
                    continue
                for epsilon in (config.epsilons if method.private else [None]):
                    tasks.append((_accuracy_cell, (method, dataset, epsilon, depth, splits, config.seed,
                                                   config.folds, config.repeats)))
    timing: list[tuple[Callable[..., dict[str, Any]], tuple]] = []
    if config.timing_dataset is not None:
        rng = np.random.default_rng(_seed(config.seed, "timing rows"))
        for n in config.timing_rows:
            sample = config.timing_dataset.sample_rows(n, rng)
            for method in config.methods:
                if method.applies(config.timing_depth):
                    epsilon = config.timing_epsilon if method.private else None
                    timing.append((_timing_cell, (method, sample, epsilon, config.timing_depth,
                                                  config.timing_repeats, config.seed)))
    total = len(tasks) + len(timing)
    rows: list[dict[str, Any]] = []

    def done(row: dict[str, Any]) -> None:
        rows.append(row)
        if progress is not None:
            progress(len(rows), total)

    if config.jobs > 1 and len(tasks) > 1:
        from joblib import Parallel, delayed

        runner = Parallel(n_jobs=config.jobs, return_as="generator")
        for row in runner(delayed(function)(*arguments) for function, arguments in tasks):
            done(row)
    else:
        for function, arguments in tasks:
            done(function(*arguments))
    for function, arguments in timing:  # alone: fit times measured on an idle machine
        done(function(*arguments))
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    notes = [
        "cross-validation refits every method on each training fold: an evaluation for people who may see "
        "the data, not a private release; each fit spends its ε on its fold",
        "private methods ran with seeded noise (reproducible from the master seed, hence not private releases)",
    ]
    for status in ("refused", "failed"):
        bad = table[table["status"] == status]
        for _, row in bad.drop_duplicates(["method", "message"]).iterrows():
            notes.append(f"{row['method']}: {status} on {int((bad['method'] == row['method']).sum())} "
                         f"cell(s): {row['message']}")
    return ClassificationResult(table, config.settings(), notes)
