"""The DP decision-tree comparison of Bai et al. (2017): harness, tidy table, figures, report.

The paper compares its embedding depths with other classifiers by cross-validated
accuracy against the tree's maximum depth at several budgets (its Figures 4–6, one
figure per dataset with a panel per ε) and by fit time against the number of rows
(its Figure 8, rows drawn from mushroom). This module runs that comparison for any
set of *methods*, writes it as one tidy table and draws the figures.

Data and public schema
----------------------
:func:`load_dataset` reads a UCI CSV as categorical strings (``?`` and empty cells
are missing, NaN) and its target column. The *public schema* (each column's
categories, the class labels, which columns may be missing) is read from the whole
file: it stands for the declaration the data owner would publish (the categories
are the UCI ``.names`` files' values), so every method gets it for free and none
reads a domain off its training folds.

Methods
-------
A :class:`Method` is a name and a factory ``factory(epsilon, max_depth,
random_state, schema)`` that returns a fresh, unfitted scikit-learn classifier which
accepts the DataFrame ``X``. :func:`dprm_tree_method` wraps
:class:`dprm.trees.DPDecisionTreeClassifier` (embedding depth ``1, 2, 3`` or
``"whole"`` = ``max_depth``, variant ``"dprm"`` or ``"paper"``);
:func:`sklearn_cart_method` is scikit-learn's non-private CART and
:func:`diffprivlib_method` diffprivlib's random private tree (Fletcher & Islam), both
on the one-hot encoding of the public schema (:func:`one_hot`). Any other estimator
plugs in by building a :class:`Method`.

Protocol
--------
Repeated stratified k-fold cross-validation (default 10 folds x 5 repeats); every
method sees the same folds. Each fit gets its own seed, derived from the master seed
and the cell's name (dataset, method, ε, depth, repeat, fold), so a cell's result does
not depend on which other cells run. Private methods therefore run with *seeded*
noise: the evaluation is reproducible, and its fits are not private releases. It is a
tool for people who may see the data (it shows accuracies and row counts).

The encoding of the diffprivlib baseline
----------------------------------------
diffprivlib's tree splits a random feature at a random point inside its bounds, so
its accuracy depends on the encoding. One-hot columns of the declared categories,
plus one indicator column "missing" for each column the schema declares nullable,
bounds ``(0, 1)`` and the declared classes reproduce the anchors measured on this
machine (10 folds x 5 repeats, depth 5; vote / mushroom / tic-tac-toe): 0.852 /
0.699 / 0.663 at ε = 1 and 0.812 / 0.731 / 0.643 at ε = 0.1 (over 100 repeats this
encoding gives 0.842 / 0.721 / 0.671 and 0.814 / 0.721 / 0.645; the mean of five
repeats varies by about 0.01, 0.015 on mushroom; this harness with seed 0 gives
0.835 / 0.733 / 0.672 and 0.807 / 0.725 / 0.642). Ordinal codes give 0.82 / 0.78 / 0.67 instead (the
mushroom anchor is off), and leaving the missing indicator out gives vote 0.875.
scikit-learn's CART on the same encoding gives 0.948 / 0.998 / 0.904 (anchors
0.949 / 0.999 / 0.912).
"""

from __future__ import annotations

import json
import math
import time
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError
from dprm.json_values import plain_json

__all__ = [
    "UCI_TARGETS",
    "MISSING_MARKERS",
    "WHOLE",
    "TABLE_COLUMNS",
    "Schema",
    "Dataset",
    "Method",
    "GridConfig",
    "ClassificationResult",
    "load_dataset",
    "resolve_dataset",
    "dataset_name",
    "one_hot",
    "dprm_tree_method",
    "sklearn_cart_method",
    "diffprivlib_method",
    "default_methods",
    "fold_splits",
    "cross_validate",
    "run_comparison",
    "table_csv",
    "table_json",
    "accuracy_figure",
    "fit_time_figure",
    "figure_names",
    "render_figures",
    "report_html",
    "render_outputs",
    "output_names",
    "parse_embedding_depths",
]

#: The UCI datasets of the paper and their class columns.
UCI_TARGETS: dict[str, str] = {"vote": "class", "mushroom": "edibility", "tic-tac-toe": "class"}
#: Texts that mark a missing value in the UCI files (besides the empty cell).
MISSING_MARKERS: tuple[str, ...] = ("?",)
#: The embedding depth that grows the whole tree in one computation (``= max_depth``).
WHOLE = "whole"
#: Columns of the tidy table, in order.
TABLE_COLUMNS: tuple[str, ...] = (
    "experiment", "dataset", "method", "variant", "private", "epsilon", "max_depth", "embedding_depth",
    "rows", "folds", "repeats", "fits", "accuracy_mean", "accuracy_std", "accuracy_repeat_std",
    "fit_seconds_mean", "fit_seconds_std", "status", "message",
)


# -- data and the public schema ---------------------------------------------------------------


@dataclass(frozen=True)
class Schema:
    """The public schema of a categorical dataset: what every method may know.

    Attributes
    ----------
    categories : dict of str to list of str
        Each feature's declared categories (sorted), in column order.
    classes : list of str
        The declared class labels.
    nullable : tuple of str
        The features that may be missing.
    """

    categories: dict[str, list[str]]
    classes: list[str]
    nullable: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        return list(self.categories)


@dataclass(frozen=True)
class Dataset:
    """Categorical features, class labels and their public schema.

    ``X`` holds strings with NaN for missing values; ``y`` the labels as strings.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    schema: Schema
    source: str = "<memory>"

    @property
    def n_rows(self) -> int:
        return int(len(self.y))

    def sample_rows(self, n: int, rng: np.random.Generator) -> "Dataset":
        """``n`` rows drawn at random: without replacement up to the dataset's size, with beyond.

        Examples
        --------
        >>> data = Dataset("t", pd.DataFrame({"a": ["x", "y", "x"]}), np.array(["p", "q", "p"]),
        ...                Schema({"a": ["x", "y"]}, ["p", "q"]))
        >>> data.sample_rows(7, np.random.default_rng(0)).n_rows
        7
        """
        index = rng.choice(self.n_rows, size=n, replace=n > self.n_rows)
        return Dataset(self.name, self.X.iloc[index].reset_index(drop=True), self.y[index], self.schema,
                       self.source)


def load_dataset(path: str | Path, target: str, *, name: str | None = None,
                 missing: Sequence[str] = MISSING_MARKERS) -> Dataset:
    """Read a CSV of categorical columns, its class column and the schema of the whole file.

    The schema read from the whole file stands for the data owner's public
    declaration (module docstring).

    Raises
    ------
    DataError
        A missing or unreadable file, an unknown target column, missing class labels,
        fewer than two classes.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "toy.csv"
    >>> _ = path.write_text("class,a,b\\nyes,x,?\\nno,y,u\\nyes,x,v\\n")
    >>> data = load_dataset(path, "class")
    >>> data.name, data.schema.classes, data.schema.categories, data.schema.nullable
    ('toy', ['no', 'yes'], {'a': ['x', 'y'], 'b': ['u', 'v']}, ('b',))
    >>> data.X["b"].isna().tolist()
    [True, False, False]
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file", code="file_not_found", file=str(path), data_dependent=False)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[*missing, ""])
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot be read as CSV ({str(error).splitlines()[0] if str(error) else error})",
                        file=str(path)) from None
    if target not in frame.columns:
        raise DataError(f"{path}: no target column {target!r}; columns: {', '.join(map(str, frame.columns))}",
                        file=str(path), data_dependent=False)
    labels = frame.pop(target)
    if labels.isna().any():
        raise DataError(f"{path}: the target column {target!r} has missing values", file=str(path))
    y = labels.to_numpy(dtype=object).astype(str)
    classes = sorted(set(y.tolist()))
    if len(classes) < 2:
        raise DataError(f"{path}: the target column {target!r} has only one class", file=str(path))
    categories = {str(c): sorted(frame[c].dropna().unique().tolist()) for c in frame.columns}
    nullable = tuple(str(c) for c in frame.columns if frame[c].isna().any())
    frame.columns = [str(c) for c in frame.columns]
    return Dataset(name or path.stem, frame, y, Schema(categories, classes, nullable), str(path))


def resolve_dataset(spec: str, data_dir: str | Path) -> Dataset:
    """A dataset by name (``vote``, ``mushroom``, ``tic-tac-toe`` in ``data_dir``) or ``FILE.csv[:TARGET]``.

    A file's target defaults to ``class``.

    Examples
    --------
    >>> import tempfile
    >>> directory = Path(tempfile.mkdtemp())
    >>> _ = (directory / "toy.csv").write_text("label,a\\nyes,x\\nno,y\\n")
    >>> resolve_dataset(f"{directory}/toy.csv:label", directory).schema.classes
    ['no', 'yes']
    """
    if spec in UCI_TARGETS:
        return load_dataset(Path(data_dir) / f"{spec}.csv", UCI_TARGETS[spec], name=spec)
    path, target = _file_and_target(spec)
    return load_dataset(path, target)


def _file_and_target(spec: str) -> tuple[str, str]:
    path, _, target = spec.rpartition(":") if spec.rpartition(":")[0].endswith(".csv") else (spec, "", "")
    if not path.endswith(".csv"):
        raise ParameterError(f"unknown dataset {spec!r}: use {', '.join(UCI_TARGETS)} or FILE.csv[:TARGET]")
    return path, target or "class"


def dataset_name(spec: str) -> str:
    """The name :func:`resolve_dataset` gives ``spec``, without reading anything.

    Examples
    --------
    >>> dataset_name("vote"), dataset_name("data/toy.csv:label"), dataset_name("toy.csv")
    ('vote', 'toy', 'toy')
    """
    return spec if spec in UCI_TARGETS else Path(_file_and_target(spec)[0]).stem


def one_hot(X: pd.DataFrame | np.ndarray, schema: Schema) -> np.ndarray:
    """One 0/1 column per declared category, and one "missing" column per nullable feature.

    A value outside the schema gives zeros. The encoding depends on the schema only
    (it is fitted on nothing), so it can sit in front of a private model.

    Examples
    --------
    >>> schema = Schema({"a": ["x", "y"], "b": ["u"]}, ["p", "q"], nullable=("b",))
    >>> one_hot(pd.DataFrame({"a": ["x", "z"], "b": [np.nan, "u"]}), schema).tolist()
    [[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    """
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X, columns=schema.columns)
    parts = []
    for column, categories in schema.categories.items():
        values = frame[column].to_numpy(dtype=object)
        parts.append(np.stack([values == c for c in categories], axis=1) if categories
                     else np.zeros((len(values), 0), dtype=bool))
        if column in schema.nullable:
            parts.append(pd.isna(frame[column]).to_numpy()[:, None])
    return np.concatenate(parts, axis=1).astype(np.float64) if parts else np.zeros((len(frame), 0))


# -- methods --------------------------------------------------------------------------------------

#: ``factory(epsilon, max_depth, random_state, schema)`` -> a fresh unfitted classifier.
Factory = Callable[[float | None, int, int | None, Schema], Any]


@dataclass(frozen=True)
class Method:
    """A classifier configuration of the comparison.

    Attributes
    ----------
    name : str
        Its label in the table and the figures.
    factory : callable
        ``factory(epsilon, max_depth, random_state, schema)`` returns a fresh,
        unfitted scikit-learn classifier taking the DataFrame ``X`` (``epsilon`` is
        None for a non-private method).
    private : bool
        Whether it takes a budget (it then runs once per ε, else once).
    embedding_depth : int or "whole", optional
        For the DP tree: levels per private computation; the cell is skipped when it
        exceeds ``max_depth``.
    variant : str
        A free label (the DP tree's variant), shown in the table.
    """

    name: str
    factory: Factory
    private: bool = True
    embedding_depth: int | str | None = None
    variant: str = ""

    def applies(self, max_depth: int) -> bool:
        """Whether the method has a configuration at ``max_depth``."""
        return not isinstance(self.embedding_depth, int) or self.embedding_depth <= max_depth

    def embedding_at(self, max_depth: int) -> float:
        """The embedding depth used at ``max_depth`` (NaN when not a DP tree)."""
        if self.embedding_depth is None:
            return math.nan
        return float(max_depth if self.embedding_depth == WHOLE else self.embedding_depth)


def dprm_tree_method(embedding_depth: int | str = 1, variant: str = "dprm", name: str | None = None,
                     **options: Any) -> Method:
    """:class:`dprm.trees.DPDecisionTreeClassifier` at one embedding depth (or ``"whole"``).

    ``options`` go to the estimator (``search``, ``mcmc_steps``, ...).

    Examples
    --------
    >>> method = dprm_tree_method(2, "paper")
    >>> method.name, method.applies(1), method.applies(3), method.embedding_at(3)
    ('paper d=2', False, True, 2.0)
    >>> clf = method.factory(0.5, 3, 7, Schema({"a": ["x"]}, ["p", "q"]))
    >>> clf.embedding_depth, clf.epsilon, clf.classes
    (2, 0.5, ['p', 'q'])
    """
    if embedding_depth != WHOLE and not (isinstance(embedding_depth, int) and embedding_depth >= 1):
        raise ParameterError(f"embedding depth must be a positive integer or {WHOLE!r}, not {embedding_depth!r}")

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from dprm.classifier import DPDecisionTreeClassifier

        return DPDecisionTreeClassifier(
            epsilon=1.0 if epsilon is None else epsilon, max_depth=max_depth,
            embedding_depth=max_depth if embedding_depth == WHOLE else embedding_depth,
            categories={c: list(v) for c, v in schema.categories.items()}, classes=list(schema.classes),
            variant=variant, random_state=random_state, **options)

    label = name or f"{variant} d={embedding_depth}"
    return Method(label, factory, private=True, embedding_depth=embedding_depth, variant=variant)


def _encoded(model: Any, schema: Schema) -> Any:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    return make_pipeline(FunctionTransformer(one_hot, kw_args={"schema": schema}), model)


def sklearn_cart_method(name: str = "sklearn CART") -> Method:
    """scikit-learn's non-private ``DecisionTreeClassifier(max_depth)`` on :func:`one_hot`.

    Examples
    --------
    >>> schema = Schema({"a": ["x", "y"]}, ["p", "q"])
    >>> X, y = pd.DataFrame({"a": ["x", "y"] * 5}), np.array(["p", "q"] * 5)
    >>> sklearn_cart_method().factory(None, 2, 0, schema).fit(X, y).score(X, y)
    1.0
    """

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from sklearn.tree import DecisionTreeClassifier

        return _encoded(DecisionTreeClassifier(max_depth=max_depth, random_state=random_state), schema)

    return Method(name, factory, private=False, variant="non-private")


def diffprivlib_method(name: str = "diffprivlib") -> Method | None:
    """diffprivlib's ``DecisionTreeClassifier`` on :func:`one_hot` with public bounds and classes.

    None when diffprivlib is not installed. Each fit gets its own
    ``BudgetAccountant`` (diffprivlib's default one is global).
    """
    try:
        import diffprivlib.models  # noqa: F401
    except ImportError:
        return None

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import DecisionTreeClassifier

        width = one_hot(pd.DataFrame({c: [] for c in schema.columns}), schema).shape[1]
        model = DecisionTreeClassifier(
            max_depth=max_depth, epsilon=1.0 if epsilon is None else epsilon,
            bounds=(np.zeros(width), np.ones(width)), classes=np.asarray(schema.classes),
            random_state=random_state, accountant=BudgetAccountant())
        return _encoded(model, schema)

    return Method(name, factory, private=True, variant="diffprivlib")


def parse_embedding_depths(text: str) -> list[int | str]:
    """``"1,2,3,whole"`` as ``[1, 2, 3, "whole"]``.

    Examples
    --------
    >>> parse_embedding_depths("1, 3,whole")
    [1, 3, 'whole']
    """
    depths: list[int | str] = []
    for part in (p.strip() for p in text.split(",")):
        if part == WHOLE:
            depths.append(WHOLE)
            continue
        try:
            value = int(part)
        except ValueError:
            raise ParameterError(f"embedding depths: {part!r} is neither a positive integer nor {WHOLE!r}") from None
        if value < 1:
            raise ParameterError(f"embedding depths: {value} is not a positive integer")
        depths.append(value)
    if not depths:
        raise ParameterError("embedding depths: none given")
    return depths


def default_methods(embedding_depths: Iterable[int | str] = (1, 2, 3, WHOLE),
                    variants: Iterable[str] = ("dprm", "paper"),
                    baselines: bool = True) -> tuple[list[Method], list[str]]:
    """The DP tree at each embedding depth and variant, then scikit-learn's CART and diffprivlib.

    Returns the methods and notes (e.g. diffprivlib is not installed).

    Examples
    --------
    >>> methods, notes = default_methods([1, "whole"], ["dprm"], baselines=False)
    >>> [m.name for m in methods], notes
    (['dprm d=1', 'dprm d=whole'], [])
    """
    methods = [dprm_tree_method(d, v) for v in variants for d in embedding_depths]
    notes: list[str] = []
    if baselines:
        methods.append(sklearn_cart_method())
        dpl = diffprivlib_method()
        if dpl is None:
            notes.append("diffprivlib is not installed: its baseline is skipped (pip install diffprivlib==0.6.6)")
        else:
            methods.append(dpl)
    return methods, notes


# -- the protocol ---------------------------------------------------------------------------------


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


# -- outputs --------------------------------------------------------------------------------------


def table_csv(result: ClassificationResult) -> bytes:
    """The tidy table as CSV bytes."""
    return result.table.to_csv(index=False).encode("utf-8")


def table_json(result: ClassificationResult) -> bytes:
    """The settings, notes and table rows as JSON bytes (NaN as null).

    Examples
    --------
    >>> result = ClassificationResult(pd.DataFrame({"epsilon": [math.nan, 1.0]}), {"seed": 3}, ["n"])
    >>> json.loads(table_json(result))["rows"]
    [{'epsilon': None}, {'epsilon': 1.0}]
    """
    rows = [{k: plain_json(v, nan_as_null=True) for k, v in record.items()} for record in result.table.to_dict(orient="records")]
    document = {"settings": result.settings, "notes": result.notes, "columns": list(result.table.columns),
                "rows": rows}
    return (json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n").encode("utf-8")


#: Line colours of embedding depths (by position) and of the baselines.
_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7")
_BASELINE_COLOURS = {"non-private": "#222222", "diffprivlib": "#9c755f"}


def _styles(methods: Sequence[str], table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """A colour per embedding depth, a line style per variant, black/brown for the baselines."""
    info = table.drop_duplicates("method").set_index("method")
    embeddings: list[str] = []
    styles: dict[str, dict[str, Any]] = {}
    for name in methods:
        variant = str(info.loc[name, "variant"]) if name in info.index else ""
        if variant in _BASELINE_COLOURS:
            styles[name] = {"color": _BASELINE_COLOURS[variant], "linestyle": ":" if variant == "diffprivlib" else "--",
                            "marker": "s"}
            continue
        key = name.split("=")[-1] if "=" in name else name
        if key not in embeddings:
            embeddings.append(key)
        styles[name] = {"color": _COLOURS[embeddings.index(key) % len(_COLOURS)],
                        "linestyle": "-" if variant != "paper" else "-.", "marker": "o" if variant != "paper" else "^"}
    return styles


def accuracy_figure(table: pd.DataFrame, dataset: str) -> Any:
    """Accuracy vs maximum depth, one panel per ε, a line per method (the paper's Figures 4–6).

    Non-private methods are drawn in every panel. None when the dataset has no
    accuracy rows.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from matplotlib.ticker import MaxNLocator

    rows = table[(table["experiment"] == "accuracy") & (table["dataset"] == dataset)
                 & (table["status"] == "ok")]
    if rows.empty:
        return None
    epsilons = sorted(rows["epsilon"].dropna().unique().tolist()) or [math.nan]
    methods = list(dict.fromkeys(rows["method"]))
    styles = _styles(methods, table)
    figure = Figure(figsize=(3.6 * len(epsilons) + 1.8, 3.6), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(epsilons), sharey=True, squeeze=False)[0]
    for ax, epsilon in zip(axes, epsilons):
        for name in methods:
            mine = rows[rows["method"] == name]
            mine = mine[mine["epsilon"].isna() | (mine["epsilon"] == epsilon)].sort_values("max_depth")
            if mine.empty:
                continue
            ax.errorbar(mine["max_depth"], mine["accuracy_mean"], yerr=mine["accuracy_repeat_std"].fillna(0.0),
                        label=name, capsize=2, linewidth=1.3, markersize=3.5, **styles[name])
        ax.set_title(f"ε = {epsilon:g}" if not math.isnan(epsilon) else "non-private")
        ax.set_xlabel("maximum depth")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy (mean over folds × repeats)")
    handles, labels = axes[-1].get_legend_handles_labels()
    for ax in axes[:-1]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    figure.legend(handles, labels, loc="outside right center", fontsize=8)
    figure.suptitle(f"{dataset}: accuracy vs maximum depth (bars: std of the repeats' means)", fontsize=10)
    return figure


def fit_time_figure(table: pd.DataFrame) -> Any:
    """Mean fit seconds vs rows, a line per method (the paper's Figure 8); None without data."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = table[(table["experiment"] == "fit_time") & (table["status"] == "ok")]
    if rows.empty:
        return None
    methods = list(dict.fromkeys(rows["method"]))
    styles = _styles(methods, table)
    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    for name in methods:
        mine = rows[rows["method"] == name].sort_values("rows")
        ax.plot(mine["rows"], mine["fit_seconds_mean"], label=name, linewidth=1.3, markersize=3.5, **styles[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows")
    ax.set_ylabel("fit seconds (mean)")
    ax.grid(alpha=0.3, which="both")
    first = rows.iloc[0]
    ax.set_title(f"{first['dataset']}: fit time vs rows (ε = {first['epsilon'] if not pd.isna(first['epsilon']) else '–'}"
                 f", maximum depth {int(first['max_depth'])})", fontsize=10)
    figure.legend(loc="outside right center", fontsize=8)
    return figure


def figure_names(datasets: Iterable[str], timing: bool) -> list[str]:
    """The PNG files a comparison writes: ``accuracy_DATASET.png`` each, ``fit_time.png``.

    Examples
    --------
    >>> figure_names(["vote", "a b"], True)
    ['accuracy_vote.png', 'accuracy_a_b.png', 'fit_time.png']
    """
    import re

    names = [f"accuracy_{re.sub(r'[^A-Za-z0-9_.-]+', '_', d)}.png" for d in datasets]
    return names + (["fit_time.png"] if timing else [])


def _placeholder(title: str) -> Any:
    """A small figure saying that ``title`` has no finished cell to draw."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.0, 1.6))
    FigureCanvasAgg(figure)
    figure.text(0.5, 0.5, f"{title}: no finished cell to draw", ha="center", va="center", fontsize=10)
    return figure


def render_figures(result: ClassificationResult) -> dict[str, bytes]:
    """Every figure of :func:`figure_names` as PNG bytes.

    A figure without a finished cell is a short message instead, so the files a
    comparison writes are known before it runs.
    """
    from dprm.evaluation.figures import render_figure

    datasets = list(result.settings.get("datasets", {}))
    timing = result.settings.get("timing") is not None
    out: dict[str, bytes] = {}
    names = figure_names(datasets, timing)
    for name, dataset in zip(names, datasets):
        figure = accuracy_figure(result.table, dataset) or _placeholder(f"{dataset}: accuracy")
        out[name] = render_figure(figure, "png")
    if timing:
        figure = fit_time_figure(result.table) or _placeholder("fit time")
        out[names[-1]] = render_figure(figure, "png")
    return out


def report_html(result: ClassificationResult, figures: Mapping[str, bytes]) -> str:
    """A self-contained HTML page: settings, notes, the figures and the sortable table."""
    from dprm.evaluation.html_page import Column, definition_table, escape, html_table, page, png_image

    settings = result.settings
    parts = ["<h2>Settings</h2>", definition_table(
        [("epsilons", settings.get("epsilons")), ("maximum depths", settings.get("depths")),
         ("cross-validation", f"{settings.get('folds')} folds × {settings.get('repeats')} repeats, stratified"),
         ("master seed", settings.get("seed")), ("methods", [m["name"] for m in settings.get("methods", [])]),
         ("datasets", settings.get("datasets")), ("fit-time experiment", settings.get("timing"))])]
    parts.append("<h2>Notes</h2>")
    parts += [f'<p class="note">{escape(note)}</p>' for note in result.notes]
    parts.append("<h2>Figures</h2>")
    for name, png in figures.items():
        parts.append(f"<figure>{png_image(png, name, name=name.removesuffix('.png'))}"
                     f"<figcaption>{escape(name)}</figcaption></figure>")
    columns = [Column("experiment", "experiment"), Column("dataset", "dataset"), Column("method", "method"),
               Column("epsilon", "ε", "float"), Column("max_depth", "max depth", "int"),
               Column("embedding_depth", "embedding", "int"), Column("rows", "rows", "float"),
               Column("fits", "fits", "int"), Column("accuracy_mean", "accuracy", "float"),
               Column("accuracy_std", "std (fits)", "float"),
               Column("accuracy_repeat_std", "std (repeats)", "float", title="std of the repeats' mean accuracies"),
               Column("fit_seconds_mean", "fit s", "float"), Column("status", "status"),
               Column("message", "message")]
    parts.append("<h2>Table</h2>")
    parts.append(html_table(columns, result.table.to_dict(orient="records"),
                            caption="one row per cell; click a header to sort"))
    return page("DP decision trees: accuracy by embedding depth", "\n".join(parts),
                subtitle="Bai et al. (2017), Figures 4–6 and 8, reproduced with dprm")


def output_names(datasets: Iterable[str], timing: bool) -> list[str]:
    """The files :func:`render_outputs` gives, known before the comparison runs.

    Examples
    --------
    >>> output_names(["vote"], False)
    ['classification.csv', 'classification.json', 'accuracy_vote.png', 'report.html']
    """
    return ["classification.csv", "classification.json", *figure_names(datasets, timing), "report.html"]


def render_outputs(result: ClassificationResult) -> dict[str, bytes]:
    """Every file of a comparison by name (:func:`output_names`): the table as CSV and JSON, the PNGs, the report."""
    figures = render_figures(result)
    outputs: dict[str, bytes] = {"classification.csv": table_csv(result),
                                        "classification.json": table_json(result)}
    outputs.update(figures)
    outputs["report.html"] = report_html(result, figures).encode("utf-8")
    return outputs

