"""The default fit's two releases forced, on the comparison's folds and seeds (docs/classifier.md, "Small budgets").

A default fit releases a noisy row count and then, by a public rule
(:func:`dprm.classifier.small_budget.prefers_root_split`), either the whole tree or
the chosen root split, each with ``0.9 ε``. ``--release tree`` / ``chosen`` replaces
the rule by a constant (the row count is still released, so both get ``0.9 ε`` and
the same noise stream as the default); ``default`` keeps it. The method is named
"dprm default" at depth 8, so the fits' seeds are the comparison's
(``benchmarks/quality_classifier_budgets.py``).

Usage::

    python benchmarks/classifier_small_budget_releases.py --datasets wine,vote --epsilons 0.1,0.3 --release chosen

Prints one line per table and ε: mean accuracy ± standard error over the fits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality_classifier_budgets import METHODS, load  # noqa: E402  (a sibling benchmark)

import dprm.classifier.estimator as estimator  # noqa: E402
from dprm.classifier.parameters import auto_max_depth  # noqa: E402
from dprm.evaluation.classification.protocol import _seed, cross_validate, fold_splits  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="wine,many-classes,digits,vote,breast-cancer,tic-tac-toe,planted-d3,"
                                              "credit-like")
    parser.add_argument("--epsilons", default="0.05,0.1,0.2,0.3,0.5")
    parser.add_argument("--release", choices=("default", "tree", "chosen"), default="default")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.release != "default":
        chosen = args.release == "chosen"
        estimator.prefers_root_split = lambda *_: chosen  # the rule replaced by a constant
    depth = auto_max_depth("dprm")
    for name in args.datasets.split(","):
        dataset = load(name)
        splits = fold_splits(dataset.y, args.folds, args.repeats, _seed(args.seed, dataset.name))
        for epsilon in (float(e) for e in args.epsilons.split(",")):
            cell = cross_validate(METHODS["default"](), dataset, epsilon, depth, splits, args.seed)
            acc = np.asarray(cell.accuracies)
            print(f"{name} ε = {epsilon:g} {args.release}: {acc.mean():.3f} ± {acc.std() / np.sqrt(acc.size):.3f}"
                  f" {cell.status} {cell.message}", flush=True)


if __name__ == "__main__":
    main()
