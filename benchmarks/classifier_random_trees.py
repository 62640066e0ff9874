"""Private ensembles of random-structure trees: does spending nothing on the structure help?

A tree whose splits are drawn without looking at the data costs no budget for its
structure (Fan et al.'s random decision trees; the private versions of Jagannathan
et al. 2012 and diffprivlib's ``DecisionTreeClassifier``): all of ε goes to its
leaves' class counts. One such tree is a weak classifier, so they are used in
ensembles, and an ensemble of ``T`` trees pays for its leaves in one of two ways:

- ``shared``: every tree counts every row, each tree's leaf histogram is released
  with ``ε / T`` (sequential composition over the trees);
- ``disjoint``: the rows are split into ``T`` parts, one per tree, each histogram
  released with ``ε`` (parallel composition: a row is in one part).

Each tree here is *oblivious*: ``depth`` distinct features drawn uniformly, one
multiway split per feature and level (a missing value is a category of its own), so
it has ``∏ (categories + 1)`` leaves; the leaves' class counts (L1 sensitivity 1 per
tree: one row is in one leaf) are released by
:class:`dprm.privacy.DiscreteLaplaceHistogram`. A test row gets, from every tree, the
log of its leaf's smoothed noisy class frequencies; the class with the largest sum
wins. ``--epsilons`` may contain ``inf`` (counts without noise): the ceiling of the
structure class itself, which bounds what any budget split could reach.

This is the comparison behind docs/reproduction.md, "Private ensembles": dprm ships
no random-structure ensemble because it does not beat the whole-tree release on the
shared datasets.

Usage::

    python benchmarks/classifier_random_trees.py [--datasets tic-tac-toe,vote]
        [--epsilons 0.1,1,inf] [--depths 1,2,3] [--trees 1,3,9] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from classifier_signal_budget import codes_of  # noqa: E402  (a sibling benchmark)
from quality_classifier_budgets import load  # noqa: E402

from dprm.evaluation.classification import fold_splits  # noqa: E402
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise  # noqa: E402


def leaf_keys(codes: np.ndarray, features: np.ndarray, radices: np.ndarray) -> np.ndarray:
    """The leaf of every row in the oblivious tree that splits on ``features`` (mixed radix)."""
    keys = np.zeros(len(codes), dtype=np.int64)
    for f in features:
        keys = keys * radices[f] + codes[:, f]
    return keys


def ensemble_predict(codes: np.ndarray, y: np.ndarray, n_classes: int, radices: np.ndarray,
                     train: np.ndarray, test: np.ndarray, *, epsilon: float, trees: int, depth: int,
                     budget: str, rng: np.random.Generator) -> np.ndarray:
    """Fit an ensemble of ``trees`` random oblivious trees on ``train``; predict ``test``'s classes."""
    private = math.isfinite(epsilon)
    shares = (np.array_split(rng.permutation(train), trees) if budget == "disjoint"
              else [train] * trees)
    # disjoint: one accountant of ε per part (parallel composition); shared: one of ε for all trees
    per_tree = Fraction(str(epsilon)) / (trees if budget == "shared" else 1) if private else None
    accountant = Accountant(Fraction(str(epsilon)), SeededNoise(rng)) if private else None
    log_votes = np.zeros((len(test), n_classes))
    for t in range(trees):
        features = rng.choice(codes.shape[1], size=min(depth, codes.shape[1]), replace=False)
        n_leaves = int(np.prod(radices[features]))
        counts = np.zeros((n_leaves, n_classes), dtype=np.int64)
        np.add.at(counts, (leaf_keys(codes[shares[t]], features, radices), y[shares[t]]), 1)
        if private:
            if budget == "disjoint":
                accountant = Accountant(Fraction(str(epsilon)), SeededNoise(rng))
            counts = DiscreteLaplaceHistogram(per_tree).release(accountant, f"leaves#{t}", counts)
        frequencies = np.clip(counts, 0, None) + 0.5
        frequencies = frequencies / frequencies.sum(axis=1, keepdims=True)
        log_votes += np.log(frequencies[leaf_keys(codes[test], features, radices)])
    return log_votes.argmax(axis=1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="tic-tac-toe,vote")
    parser.add_argument("--epsilons", default="0.1,1,inf")
    parser.add_argument("--depths", default="1,2,3")
    parser.add_argument("--trees", default="1,3,9")
    parser.add_argument("--budgets", default="shared,disjoint")
    parser.add_argument("--repeats", type=int, default=3, help="10-fold cross-validations, reshuffled")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    print("| dataset | depth | trees | budget | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |")
    print("| --- " * (4 + len(epsilons)) + "|")
    for name in args.datasets.split(","):
        dataset = load(name)
        codes, y, _ = codes_of(dataset)
        radices = np.array([len(c) + 1 for c in dataset.schema.categories.values()], dtype=np.int64)
        n_classes = len(dataset.schema.classes)
        splits = fold_splits(dataset.y, 10, args.repeats, args.seed)
        for depth in [int(d) for d in args.depths.split(",")]:
            for trees in [int(t) for t in args.trees.split(",")]:
                for budget in args.budgets.split(",") if trees > 1 else ["shared"]:
                    cells = []
                    for epsilon in epsilons:
                        rng = np.random.default_rng([args.seed, depth, trees, len(budget)])
                        accuracies = [np.mean(ensemble_predict(codes, y, n_classes, radices, train, test,
                                                               epsilon=epsilon, trees=trees, depth=depth,
                                                               budget=budget, rng=rng) == y[test])
                                      for folds in splits for train, test in folds]
                        cells.append(f"{np.mean(accuracies):.3f}")
                    print(f"| {name} | {depth} | {trees} | {budget} | " + " | ".join(cells) + " |", flush=True)
        print(f"<!-- {name}: majority class {np.bincount(y).max() / len(y):.3f} -->")


if __name__ == "__main__":
    main()
