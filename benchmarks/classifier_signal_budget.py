"""How many nats a private tree can buy at a budget: the signal in rows against the cost of naming splits.

A private tree learner that releases a tree chooses it, in effect, among all trees of
its shape; an ε-DP choice that singles out one tree among ``K`` near-equivalent
candidates needs a score gap of about ``ln K / ε`` rows (the utility bound of the
exponential mechanism, and the packing lower bound of pure-DP selection). For dprm's
release (score: training rows classified right, ``exp(ε · score)``, splits among the
``m`` category tests of the schema) a tree with ``s`` splits over the single leaf
needs, roughly::

    ε · gain(T)  ≳  s · ln(m / (1 − p_leaf)) + (leaves − 1) · ln C

where ``gain(T)`` is the rows ``T`` classifies right beyond the majority class and
``p_leaf`` the prior weight of a leaf (:data:`dprm.classifier.parameters.LEAF_PRIOR`).
This script measures, per dataset, the best such trade that exists: for each depth
``k`` it finds the binary-test tree of depth ``≤ k`` with the **most** training rows
right (an exact search: the optimum of a subtree does not depend on its siblings),
and reports its splits, its training gain, the nats that gain buys at each ε, the
nats its structure costs, and its 10-fold cross-validated accuracy (what a learner
that found it every time would reach). scikit-learn's CART of depth ``k`` (one-hot,
greedy Gini) is shown beside it, since deeper CART trees are what pass a given bar.

Usage::

    python benchmarks/classifier_signal_budget.py [--datasets tic-tac-toe,vote] [--depths 1,2,3]
        [--epsilons 0.1,1]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality_classifier_budgets import load  # noqa: E402  (a sibling benchmark)

from dprm.evaluation.classification import fold_splits, sklearn_cart_method  # noqa: E402
from dprm.classifier.parameters import LEAF_PRIOR  # noqa: E402


def codes_of(dataset) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Integer codes (missing = number of categories), class indices and the binary tests ``(f, v)``."""
    columns = []
    tests = []
    for f, (name, categories) in enumerate(dataset.schema.categories.items()):
        lookup = {value: i for i, value in enumerate(categories)}
        column = dataset.X[name].map(lambda v: lookup.get(v, len(categories))).to_numpy(dtype=np.int64)
        columns.append(column)
        tests += [(f, v) for v in range(1 if len(categories) == 2 else len(categories))]
    y = np.searchsorted(np.asarray(dataset.schema.classes), dataset.y)
    return np.stack(columns, axis=1), y, tests


def best_tree(codes, y, n_classes, tests, rows, depth):
    """``(rows right, splits, tree)`` of the most accurate binary-test tree of depth ``≤ depth`` on ``rows``.

    A tree is a class index (leaf) or ``(f, v, equal child, other child)``; rows missing
    ``f`` go with "other" (the search's and the prediction's convention).
    """
    counts = np.bincount(y[rows], minlength=n_classes)
    best = (int(counts.max()), 0, int(counts.argmax()))
    if depth == 0 or counts.max() == rows.size:
        return best
    for f, v in tests:
        equal = codes[rows, f] == v
        inside, outside = rows[equal], rows[~equal]
        if inside.size == 0 or outside.size == 0:
            continue
        a = best_tree(codes, y, n_classes, tests, inside, depth - 1)
        b = best_tree(codes, y, n_classes, tests, outside, depth - 1)
        if a[0] + b[0] > best[0] or (a[0] + b[0] == best[0] and 1 + a[1] + b[1] < best[1]):
            best = (a[0] + b[0], 1 + a[1] + b[1], (f, v, a[2], b[2]))
    return best


def predict(tree, row: np.ndarray) -> int:
    while isinstance(tree, tuple):
        f, v, equal, other = tree
        tree = equal if row[f] == v else other
    return tree


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="tic-tac-toe,vote")
    parser.add_argument("--depths", default="1,2,3")
    parser.add_argument("--cart-depths", default="1,2,3,4,5")
    parser.add_argument("--epsilons", default="0.1,1")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    print("| dataset | tree | depth | splits | leaves | train gain (rows) | "
          + " | ".join(f"nats bought at ε={e:g}" for e in epsilons) + " | nats the structure costs | CV accuracy |")
    print("| --- " * (8 + len(epsilons)) + "|")
    for name in args.datasets.split(","):
        dataset = load(name)
        codes, y, tests = codes_of(dataset)
        n_classes = len(dataset.schema.classes)
        per_split = math.log(len(tests) / (1 - LEAF_PRIOR))
        folds = fold_splits(dataset.y, 10, 1, args.seed)[0]
        rows = []
        for depth in [int(d) for d in args.depths.split(",")]:
            gains, splits, accuracies = [], [], []
            for train, test in folds:
                right, n_splits, tree = best_tree(codes, y, n_classes, tests, train, depth)
                gains.append(right - np.bincount(y[train]).max())
                splits.append(n_splits)
                accuracies.append(np.mean([predict(tree, codes[i]) == y[i] for i in test]))
            rows.append(("most accurate", depth, np.mean(splits), np.mean(gains), np.mean(accuracies)))
        for depth in [int(d) for d in args.cart_depths.split(",")]:
            gains, splits, accuracies = [], [], []
            for train, test in folds:
                model = sklearn_cart_method().factory(None, depth, args.seed, dataset.schema)
                model.fit(dataset.X.iloc[train], dataset.y[train])
                tree = model[-1].tree_
                train_right = np.sum(model.predict(dataset.X.iloc[train]) == dataset.y[train])
                gains.append(train_right - np.bincount(y[train]).max())
                splits.append(int(np.sum(tree.children_left >= 0)))
                accuracies.append(np.mean(model.predict(dataset.X.iloc[test]) == dataset.y[test]))
            rows.append(("CART (one-hot)", depth, np.mean(splits), np.mean(gains), np.mean(accuracies)))
        for kind, depth, n_splits, gain, accuracy in rows:
            cost = n_splits * per_split + n_splits * math.log(n_classes)  # each split adds a leaf
            print(f"| {name} | {kind} | {depth} | {n_splits:.1f} | {n_splits + 1:.1f} | {gain:.0f} | "
                  + " | ".join(f"{e * gain:.1f}" for e in epsilons) + f" | {cost:.1f} | {accuracy:.3f} |", flush=True)
        print(f"<!-- {name}: {len(tests)} category tests, {dataset.n_rows} rows, {n_classes} classes, "
              f"{per_split:.2f} nats a split -->")


if __name__ == "__main__":
    main()
