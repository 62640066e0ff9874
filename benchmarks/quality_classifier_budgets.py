"""The DP tree classifier's accuracy at every budget on six datasets, three of them not the paper's.

Issue 11 asks for a classifier that is at least 10 points above diffprivlib's DP tree
at ε = 0.1 on vote, mushroom and tic-tac-toe. So that nothing is tuned to those three
files, this benchmark measures the same protocol (stratified 10-fold cross-validation,
repeated, maximum depth 5, :mod:`dprm.evaluation.classification`) on six datasets:

* UCI vote (435 rows), mushroom (8,124), tic-tac-toe (958), from ``../shared/data/uci``;
* ``planted-d3``: 1,000 rows, 20 features x 3 categories, a planted tree of depth 3,
  5 % labels flipped (:func:`dprm.datasets.make_planted_classification`, seed 7): the
  best accuracy is known (0.95);
* ``planted-d4``: 3,000 rows, 10 features x 4 categories, planted depth 4, 10 % flipped
  (seed 7; best 0.90);
* ``rwas-voted``: ``../shared/data/rwas/left.csv`` (9,775 rows with an answer): whether
  the respondent voted, from 9 demographic answers, the 10 TIPI items and the age in 7
  fixed bands (a real table with a weak signal).

Each dataset's public schema (categories, classes) is read from the whole table, as
the data owner would declare it. Methods: dprm's DP tree with the whole tree embedded
(``--methods``: any of ``whole`` (binary category tests, the default),
``whole-multiway``, ``whole-both`` (``categorical_splits="both"``), ``one-step``,
``paper``), scikit-learn's CART and diffprivlib's DP
tree (when installed). Seeded noise (reproducible, not private releases).

Usage::

    python benchmarks/quality_classifier_budgets.py [--datasets vote,mushroom,...]
        [--epsilons 0.01,0.1,1,10] [--methods whole,whole-multiway] [--repeats 5]
        [--jobs 2] [--out out/classifier-budgets.csv]

Prints a Markdown table (mean accuracy over all folds and repeats, ± the standard
deviation of the repeats' means) and writes the tidy table as CSV.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.datasets import make_planted_classification
from dprm.evaluation.classification import (
    Dataset,
    GridConfig,
    Schema,
    diffprivlib_method,
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
DATASETS = ("vote", "mushroom", "tic-tac-toe", "planted-d3", "planted-d4", "rwas-voted")
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
}


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
    raise SystemExit(f"unknown dataset {name!r}: use {', '.join(DATASETS)}")


def markdown(table: pd.DataFrame, datasets: list[str], majority: dict[str, float]) -> str:
    """Rows: method and ε; columns: datasets."""
    lines = ["| method | ε | " + " | ".join(datasets) + " |", "| --- | --- |" + " --- |" * len(datasets)]
    lines.append("| majority class | – | " + " | ".join(f"{majority[d]:.3f}" for d in datasets) + " |")
    table = table[table["experiment"] == "accuracy"]
    keys = table[["method", "epsilon"]].drop_duplicates().sort_values(["epsilon", "method"], na_position="first")
    for _, key in keys.iterrows():
        cells = []
        for d in datasets:
            row = table[(table["method"] == key["method"]) & (table["dataset"] == d)
                        & ((table["epsilon"] == key["epsilon"]) | (table["epsilon"].isna() & pd.isna(key["epsilon"])))]
            if row.empty or row.iloc[0]["status"] != "ok":
                cells.append("–")
                continue
            spread = row.iloc[0]["accuracy_repeat_std"]
            cells.append(f"{row.iloc[0]['accuracy_mean']:.3f}" + ("" if pd.isna(spread) else f" ± {spread:.3f}"))
        epsilon = "–" if pd.isna(key["epsilon"]) else f"{key['epsilon']:g}"
        lines.append(f"| {key['method']} | {epsilon} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--epsilons", default="0.01,0.1,1,10")
    parser.add_argument("--methods", default="whole")
    parser.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                        help="also scikit-learn's CART and diffprivlib's DP tree")
    parser.add_argument("--max-depth", type=int, default=5)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="CSV of the tidy table")
    args = parser.parse_args(argv)
    names = [d.strip() for d in args.datasets.split(",") if d.strip()]
    datasets = [load(name) for name in names]
    unknown = [m for m in args.methods.split(",") if m not in METHODS]
    if unknown:
        raise SystemExit(f"unknown method {unknown[0]!r}: use {', '.join(METHODS)}")
    methods = [METHODS[m]() for m in args.methods.split(",")]
    if args.baselines:
        methods.append(sklearn_cart_method())
        dpl = diffprivlib_method()
        if dpl is None:
            print("diffprivlib is not installed: its baseline is skipped", file=sys.stderr)
        else:
            methods.append(dpl)
    config = GridConfig(datasets, methods, epsilons=[float(e) for e in args.epsilons.split(",")],
                        depths=[args.max_depth], folds=args.folds, repeats=args.repeats, seed=args.seed,
                        jobs=args.jobs)
    start = time.perf_counter()
    result = run_comparison(config, progress=lambda done, total: print(f"{done}/{total} cells", file=sys.stderr,
                                                                         flush=True))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result.table.to_csv(args.out, index=False)
    majority = {d.name: float(pd.Series(d.y).value_counts(normalize=True).max()) for d in datasets}
    print(f"# {args.folds}-fold CV x {args.repeats} repeats, maximum depth {args.max_depth}, seed {args.seed}; "
          f"rows: " + ", ".join(f"{d.name} {d.n_rows}" for d in datasets)
          + f"; {time.perf_counter() - start:.0f} s")
    print(markdown(result.table, names, majority))
    for note in result.notes[2:]:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
