"""The DP tree classifier's accuracy at every budget on eleven tables, against diffprivlib and the majority class.

The comparison of docs/classifier.md (issue 29): stratified 10-fold cross-validation,
repeated (:mod:`dprm.evaluation.classification`); dprm's trees at the library's
default maximum depth (``--max-depth auto``: 8 for dprm, 5 for the paper's variant,
:func:`dprm.classifier.parameters.auto_max_depth`, so the table measures what users
get), the baselines at ``--baseline-depth`` (5), on

* UCI vote (435 rows), mushroom (8,124), tic-tac-toe (958), from ``../shared/data/uci``;
* ``planted-d3``: 1,000 rows, 20 features x 3 categories, a planted tree of depth 3,
  5 % labels flipped (:func:`dprm.datasets.make_planted_classification`, seed 7): the
  best accuracy is known (0.95);
* ``planted-d4``: 3,000 rows, 10 features x 4 categories, planted depth 4, 10 % flipped
  (seed 7; best 0.90);
* ``rwas-voted``: ``../shared/data/rwas/left.csv`` (9,775 rows with an answer): whether
  the respondent voted, from 9 demographic answers, the 10 TIPI items and the age in 7
  fixed bands (a real table with a weak signal);
* ``many-classes``: generated, soybean-like, 683 rows, 19 classes (12 rows at least),
  35 categorical features; ``credit-like``: generated, 1,000 rows, 70 % one class, a
  weak signal in 5 of 20 features;
* ``breast-cancer``, ``digits``, ``wine``: scikit-learn's bundled tables (offline),
  numeric features cut into 5 public quantile bins.

Each dataset's public schema (categories, classes) is read from the whole table, as
the data owner would declare it. Methods (``--methods``): dprm's DP tree with its
defaults (``default``), the whole tree with binary category tests (``whole``),
``whole-multiway``, ``whole-both`` (``categorical_splits="both"``), ``one-step``,
``paper``, ``ensemble3`` / ``ensemble5`` (:class:`dprm.classifier.ensemble.DPTreeEnsembleClassifier`:
3 or 5 default trees on disjoint random parts of the rows); with ``--baselines`` (the default) also the majority class, scikit-learn's
CART and diffprivlib's models (:func:`~dprm.evaluation.classification.diffprivlib_methods`;
"diffprivlib best" is the best of them per cell). Seeded noise (reproducible, not
private releases).

Usage::

    python benchmarks/quality_classifier_budgets.py [--datasets vote,mushroom,...]
        [--epsilons 0.1,1,10] [--methods default,one-step] [--folds 10] [--repeats 3]
        [--max-depth auto] [--baseline-depth 5] [--detail] [--jobs 2] [--out out/classifier-budgets.csv]

A fit's seed is derived from the dataset, method, ε, depth, repeat and fold, so a
dprm method at ``--max-depth auto`` gives the same fits as at ``--max-depth 8``.

Prints a Markdown table (mean accuracy ± its standard error over all fits), then
every (dataset, ε) where a dprm method is below the majority class or diffprivlib's
best by more than its standard error, and writes the tidy table as CSV.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.classifier.parameters import auto_max_depth
from dprm.datasets import make_planted_classification
from dprm.evaluation.classification import (
    Dataset,
    GridConfig,
    Method,
    Schema,
    diffprivlib_methods,
    majority_method,
    dprm_tree_method,
    load_dataset,
    run_comparison,
    sklearn_cart_method,
    UCI_TARGETS,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
if not DATA.is_dir():  # a worktree beside /work/main
    DATA = Path("/work/shared/data")
DATASETS = ("vote", "mushroom", "tic-tac-toe", "planted-d3", "planted-d4", "rwas-voted", "many-classes",
            "credit-like", "breast-cancer", "digits", "wine")
#: The RWAS answers used as features (codes as categories; missing answers stay missing).
RWAS_FEATURES = ("education", "urban", "gender", "engnat", "hand", "religion", "orientation", "race", "married",
                 *(f"TIPI{i}" for i in range(1, 11)))
AGE_BANDS = ([0, 20, 25, 30, 40, 50, 60, 200], ["<20", "20-24", "25-29", "30-39", "40-49", "50-59", "60+"])
METHODS = {
    "whole": lambda: dprm_tree_method("whole", "dprm", name="dprm whole"),
    "whole-multiway": lambda: dprm_tree_method("whole", "dprm", name="dprm whole multiway",
                                               categorical_splits="multiway"),
    "whole-both": lambda: dprm_tree_method("whole", "dprm", name="dprm whole both", categorical_splits="both"),
    "one-step": lambda: dprm_tree_method(1, "dprm", name="dprm one-step"),
    "paper": lambda: dprm_tree_method("whole", "paper", name="paper whole"),
    "default": lambda: dprm_tree_method("auto", "dprm", name="dprm default"),
    "ensemble3": lambda: ensemble_method(3),
    "ensemble5": lambda: ensemble_method(5),
}


def ensemble_method(n_estimators: int) -> Method:
    """:class:`dprm.classifier.ensemble.DPTreeEnsembleClassifier` of ``n_estimators`` default trees."""

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> object:
        from dprm.classifier.ensemble import DPTreeEnsembleClassifier

        return DPTreeEnsembleClassifier(n_estimators, epsilon=1.0 if epsilon is None else epsilon,
                                        max_depth=max_depth, categories={c: list(v) for c, v in schema.categories.items()},
                                        classes=list(schema.classes), random_state=random_state)

    return Method(f"dprm ensemble of {n_estimators}", factory, private=True, embedding_depth="auto", variant="dprm")
#: Public bins of the numeric features of the scikit-learn tables (quantiles of the whole table).
N_BINS = 5


def _frame_dataset(name: str, X: pd.DataFrame, y: np.ndarray) -> Dataset:
    """A dataset whose public schema is read from the whole table."""
    X = X.astype(object).where(X.notna(), np.nan)
    categories = {str(c): sorted(X[c].dropna().unique().tolist()) for c in X.columns}
    nullable = tuple(str(c) for c in X.columns if X[c].isna().any())
    classes = sorted(set(y.tolist()))
    return Dataset(name, X.reset_index(drop=True), np.asarray(y, dtype=str), Schema(categories, classes, nullable),
                   source=name)


def load(name: str) -> Dataset:
    """One of :data:`DATASETS`."""
    if name in UCI_TARGETS:
        return load_dataset(DATA / "uci" / f"{name}.csv", UCI_TARGETS[name], name=name)
    if name == "planted-d3":
        data = make_planted_classification(1000, n_features=20, n_categories=3, depth=3, noise=0.05,
                                           rng=np.random.default_rng(7))
        return _frame_dataset(name, data.X, data.y)
    if name == "planted-d4":
        data = make_planted_classification(3000, n_features=10, n_categories=4, depth=4, noise=0.1,
                                           rng=np.random.default_rng(7))
        return _frame_dataset(name, data.X, data.y)
    if name == "rwas-voted":
        table = pd.read_csv(DATA / "rwas" / "left.csv")
        table = table[table["voted"].isin([1.0, 2.0])]
        X = pd.DataFrame({c: table[c].map(lambda v: np.nan if pd.isna(v) else str(int(v))) for c in RWAS_FEATURES})
        X["age"] = pd.cut(table["age"], AGE_BANDS[0], right=False, labels=AGE_BANDS[1]).astype(object)
        y = table["voted"].map({1.0: "yes", 2.0: "no"}).to_numpy()
        return _frame_dataset(name, X, y)
    if name == "many-classes":
        return _many_classes(np.random.default_rng(11))
    if name == "credit-like":
        return _credit_like(np.random.default_rng(12))
    if name in ("breast-cancer", "digits", "wine"):
        from sklearn import datasets as sk

        bunch = {"breast-cancer": sk.load_breast_cancer, "digits": sk.load_digits, "wine": sk.load_wine}[name]()
        X = pd.DataFrame(bunch.data, columns=[f"x{i}" for i in range(bunch.data.shape[1])])
        X = X.loc[:, X.nunique() > 1]
        binned = pd.DataFrame({c: pd.qcut(X[c], N_BINS, duplicates="drop", labels=False).astype(str)
                               for c in X.columns})
        y = np.asarray([f"c{v}" for v in bunch.target])
        return _frame_dataset(name, binned, y)
    raise SystemExit(f"unknown dataset {name!r}: use {', '.join(DATASETS)}")


def _many_classes(rng: np.random.Generator, n_rows: int = 683, n_classes: int = 19, n_features: int = 35) -> Dataset:
    """A soybean-like table: 19 classes of unequal sizes (12 rows at least), 35 categorical features.

    Each class draws each feature from its own Dirichlet(0.5) distribution over 2-7
    categories, so a few features separate groups of classes and none all of them.
    """
    priors = rng.dirichlet(np.full(n_classes, 3.0))
    priors = np.minimum(priors, 0.13)
    priors /= priors.sum()
    # at least 12 rows a class, so that stratified 10-fold cross-validation can run
    floor = np.repeat(np.arange(n_classes), 12)
    y = rng.permutation(np.concatenate([floor, rng.choice(n_classes, size=n_rows - floor.size, p=priors)]))
    columns = {}
    for f in range(n_features):
        k = int(rng.integers(2, 8))
        table = rng.dirichlet(np.full(k, 0.5), size=n_classes)
        u = rng.random(n_rows)[:, None]
        columns[f"a{f}"] = np.array([f"v{v}" for v in (u > np.cumsum(table[y], axis=1)).sum(axis=1).clip(0, k - 1)])
    return _frame_dataset("many-classes", pd.DataFrame(columns), np.array([f"k{c:02d}" for c in y]))


def _credit_like(rng: np.random.Generator, n_rows: int = 1000) -> Dataset:
    """A credit-scoring-like table: 70 % good, 13 categorical and 7 binned numeric features, a weak signal.

    The log-odds of "bad" is linear in three categorical and two numeric features;
    the other fifteen are noise. Numeric features are cut into 5 public quantile bins.
    """
    cats = {f"c{i}": rng.integers(0, int(rng.integers(2, 6)), size=n_rows) for i in range(13)}
    nums = {f"n{i}": rng.normal(size=n_rows) for i in range(7)}
    logit = (-1.2 + 0.9 * (cats["c0"] == 0) - 0.7 * (cats["c1"] == 1) + 0.6 * (cats["c2"] >= 2)
             + 0.8 * nums["n0"] - 0.5 * (nums["n1"] > 1))
    bad = rng.random(n_rows) < 1 / (1 + np.exp(-logit))
    X = pd.DataFrame({**{c: [f"v{v}" for v in col] for c, col in cats.items()},
                      **{c: pd.qcut(col, N_BINS, labels=False).astype(str) for c, col in nums.items()}})
    return _frame_dataset("credit-like", X, np.where(bad, "bad", "good"))


def method_depths(methods: list, max_depth: str, baseline_depth: int) -> dict[int, list]:
    """The methods grouped by the maximum depth each runs at (dprm's: ``max_depth``, "auto" = the library's).

    >>> from dprm.evaluation.classification import majority_method
    >>> groups = method_depths([METHODS["default"](), METHODS["paper"](), majority_method()], "auto", 5)
    >>> {depth: [m.name for m in group] for depth, group in groups.items()}
    {8: ['dprm default'], 5: ['paper whole', 'majority class']}
    """
    groups: dict[int, list] = {}
    for method in methods:
        if method.variant in ("dprm", "paper"):
            depth = auto_max_depth(method.variant) if max_depth == "auto" else int(max_depth)
        else:
            depth = baseline_depth
        groups.setdefault(depth, []).append(method)
    return groups


def _cell(table: pd.DataFrame, method: str, dataset: str, epsilon: float | None) -> pd.Series | None:
    rows = table[(table["method"] == method) & (table["dataset"] == dataset)]
    rows = rows[rows["epsilon"].isna()] if epsilon is None else rows[rows["epsilon"] == epsilon]
    if rows.empty or rows.iloc[0]["status"] != "ok":
        return None
    return rows.iloc[0]


def standard_error(row: pd.Series) -> float:
    """The standard error of a cell's mean accuracy: the fits' standard deviation / sqrt(fits)."""
    return float(row["accuracy_std"] / np.sqrt(row["fits"]))


def best_of(table: pd.DataFrame, methods: list[str], dataset: str, epsilon: float) -> pd.Series | None:
    """The cell of the method with the largest mean among ``methods`` (chosen on the test folds)."""
    cells = [c for m in methods if (c := _cell(table, m, dataset, epsilon)) is not None]
    return max(cells, key=lambda c: c["accuracy_mean"]) if cells else None


def markdown(table: pd.DataFrame, datasets: list[str], epsilons: list[float], dprm: list[str],
             diffprivlib: list[str], detail: bool) -> str:
    """Rows: method and ε (majority class and CART once); columns: datasets; mean ± standard error.

    "diffprivlib best" is, per cell, the best of ``diffprivlib`` (its model in brackets).
    """
    table = table[table["experiment"] == "accuracy"]
    lines = ["| method | ε | " + " | ".join(datasets) + " |", "| --- | --- |" + " --- |" * len(datasets)]

    def line(label: str, epsilon: float | None, cells: list[pd.Series | None], show_model: bool = False) -> None:
        texts = []
        for c in cells:
            if c is None:
                texts.append("–")
                continue
            text = f"{c['accuracy_mean']:.3f} ± {standard_error(c):.3f}"
            if show_model:
                text += f" ({c['method'].removeprefix('diffprivlib ')})"
            texts.append(text)
        lines.append(f"| {label} | {'–' if epsilon is None else f'{epsilon:g}'} | " + " | ".join(texts) + " |")

    for name in ("majority class", "sklearn CART"):
        line(name, None, [_cell(table, name, d, None) for d in datasets])
    for epsilon in epsilons:
        if diffprivlib:
            line("diffprivlib best", epsilon, [best_of(table, diffprivlib, d, epsilon) for d in datasets],
                 show_model=True)
        for name in (diffprivlib if detail else []) + dprm:
            line(name, epsilon, [_cell(table, name, d, epsilon) for d in datasets])
    return "\n".join(lines)


def acceptance(table: pd.DataFrame, datasets: list[str], epsilons: list[float], method: str,
               diffprivlib: list[str]) -> list[str]:
    """Cells where ``method`` is below the majority class or diffprivlib's best by more than its standard error."""
    table = table[table["experiment"] == "accuracy"]
    failures = []
    for d in datasets:
        majority = _cell(table, "majority class", d, None)
        for epsilon in epsilons:
            ours = _cell(table, method, d, epsilon)
            if ours is None:
                continue
            se = standard_error(ours)
            for label, bar in (("majority class", majority), ("diffprivlib best", best_of(table, diffprivlib, d, epsilon))):
                if bar is not None and ours["accuracy_mean"] < bar["accuracy_mean"] - se:
                    failures.append(f"{d} at ε = {epsilon:g}: {method} {ours['accuracy_mean']:.3f} ± {se:.3f} "
                                    f"below {label} {bar['accuracy_mean']:.3f}")
    return failures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--epsilons", default="0.1,1,10")
    parser.add_argument("--methods", default="default")
    parser.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                        help="also scikit-learn's CART and diffprivlib's DP tree")
    parser.add_argument("--max-depth", default="auto",
                        help="maximum depth of dprm's trees: 'auto' (the library's default) or an integer")
    parser.add_argument("--baseline-depth", type=int, default=5,
                        help="maximum depth of scikit-learn's and diffprivlib's trees")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="CSV of the tidy table")
    parser.add_argument("--detail", action="store_true", help="also every diffprivlib model's row")
    args = parser.parse_args(argv)
    names = [d.strip() for d in args.datasets.split(",") if d.strip()]
    datasets = [load(name) for name in names]
    unknown = [m for m in args.methods.split(",") if m not in METHODS]
    if unknown:
        raise SystemExit(f"unknown method {unknown[0]!r}: use {', '.join(METHODS)}")
    methods = [METHODS[m]() for m in args.methods.split(",")]
    diffprivlib: list[str] = []
    if args.baselines:
        methods += [majority_method(), sklearn_cart_method()]
        variants = diffprivlib_methods()
        if not variants:
            print("diffprivlib is not installed: its baselines are skipped", file=sys.stderr)
        methods += variants
        diffprivlib = [m.name for m in variants]
    epsilons = [float(e) for e in args.epsilons.split(",")]
    groups = method_depths(methods, args.max_depth, args.baseline_depth)
    start = time.perf_counter()
    results = [run_comparison(GridConfig(datasets, group, epsilons=epsilons, depths=[depth], folds=args.folds,
                                         repeats=args.repeats, seed=args.seed, jobs=args.jobs),
                              progress=lambda done, total: print(f"{done}/{total} cells", file=sys.stderr,
                                                                 flush=True))
               for depth, group in groups.items()]
    table = pd.concat([r.table for r in results], ignore_index=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)
    depths = ", ".join(f"{depth} ({', '.join(m.name for m in group)})" for depth, group in groups.items())
    print(f"# {args.folds}-fold CV x {args.repeats} repeats, maximum depth {depths}, seed {args.seed}; "
          f"rows: " + ", ".join(f"{d.name} {d.n_rows}" for d in datasets)
          + f"; {time.perf_counter() - start:.0f} s; mean ± standard error over the fits")
    dprm = [m.name for m in methods if m.variant in ("dprm", "paper")]
    print(markdown(table, names, epsilons, dprm, diffprivlib, args.detail))
    if args.baselines:
        for name in dprm:
            failures = acceptance(table, names, epsilons, name, diffprivlib)
            print(f"{name}: " + ("at least the majority class and diffprivlib's best less one standard error "
                                 "in every cell" if not failures else f"{len(failures)} cells below a bar"))
            for failure in failures:
                print(f"  {failure}")
    for result in results:
        for note in result.notes[2:]:
            print(f"note: {note}")


if __name__ == "__main__":
    main()
