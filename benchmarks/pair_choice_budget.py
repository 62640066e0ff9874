"""What a private choice of literal pairs can find at a budget: each planted relation's score against its cost.

At low budgets every trial of the default miner is one literal pair, chosen by the
exponential mechanism among all the pairs of the two views' public literals
(:mod:`dprm.mining.literal_pairs`; score in rows, sensitivity 1), possibly refined
by one more split. Such a choice lands on a relation with good odds only where the
relation's best score ``M`` pays for the candidates it must beat::

    ε_choice · M / 2  ≥  ln N + ln 9          (about nine tenths of the mass near the top)

which is the rule :func:`dprm.mining.auto_trees.decisive_pairs` applies, with ``N`` the
number of candidates; a weaker relation is picked only where the stronger ones are
left out (a run leaves out the attributes of its earlier pairs). So the relations a
run can find decisively are the strongest ``k`` whose choices' budgets add up to what
the run has for choosing.

This script prints, per generated table with planted relations: the number of
candidates, each relation's best pair score (over the pairs whose two literals are
attributes of the relation), the true Jaccard index of that pair and the best that any
one literal pair of the relation reaches (the benchmark counts a relation found from
0.7 on; a refinement or a tree may reach more), the choice
budget a decisive choice of it needs, and the sum over the strongest relations; beside
them the choice budget of the default miner's trials at each ε (``--epsilons``, read off
a seeded run's ledger: the ``literal pair`` steps). Everything is computed on the true
rows, on the numeric grids a run would choose (each column's best-scoring grid of the
public family): it is a researcher's measurement of what the budget can buy, not a
private release.

Usage::

    python benchmarks/pair_choice_budget.py [--datasets planted,planted-mixed] [--data-seed 0,1,2,3,4]
        [--epsilons 0.1,0.3]
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality_weak_signal import dataset  # noqa: E402  (a sibling benchmark: the same tables)

from dprm.data.literal_index import LiteralIndex  # noqa: E402
from dprm.mining import make_miner  # noqa: E402
from dprm.mining.auto_trees import DECISIVE_ODDS  # noqa: E402
from dprm.mining.default import default_algorithm, default_parameters  # noqa: E402
from dprm.mining.initial_targets import literal_masks  # noqa: E402
from dprm.mining.literal_pairs import PairChooser  # noqa: E402
from dprm.privacy import Accountant, SeededNoise  # noqa: E402
from dprm.queries.text import to_text  # noqa: E402

MAX_SPLITS = 32
#: Largest share of the rows a side of a redescription may hold (the miners' default ``max_support``).
MAX_SUPPORT = 0.8


def relation_attributes(planted) -> list[tuple[set[str], set[str]]]:
    """The attribute names of each planted relation's left and right query."""
    def names(query) -> set[str]:
        return {literal.attr for literal in query.literals()}
    return [(names(left), names(right)) for left, right in planted]


def best_pair_jaccard(indexes, target_side: int, target, partner) -> float:
    """The best true Jaccard index of the literal pair ``(target, partner)`` in any of its four forms whose
    two sides each hold at most :data:`MAX_SUPPORT` of the rows (extraction's default ``max_support``: a form
    of two near-constant literals is no finding)."""
    holds_t, missing_t = literal_masks(indexes[target_side], [target])
    holds_p, missing_p = literal_masks(indexes[1 - target_side], [partner])
    present = ~(missing_t[:, 0] | missing_p[:, 0])
    t, p = holds_t[present, 0], holds_p[present, 0]
    best = 0.0
    limit = MAX_SUPPORT * np.count_nonzero(present)
    for a in (t, ~t):
        for b in (p, ~p):
            if np.count_nonzero(a) > limit or np.count_nonzero(b) > limit:
                continue
            union = np.count_nonzero(a | b)
            best = max(best, np.count_nonzero(a & b) / union if union else 0.0)
    return best


def with_run_grids(data):
    """``data`` with the numeric grids a run would choose (:mod:`dprm.mining.private_grids`), chosen with a
    budget so large that the choice is the best-scoring grid of each column (the run's own choice is noisy)."""
    from dprm.engine import InProcessEngine
    from dprm.mining.private_grids import choosable, choose_grids

    if not any(choosable(a) for view in data.views for a in view.attributes):
        return data
    accountant = Accountant(1_000_000, SeededNoise(np.random.default_rng(0)))
    chosen = choose_grids(InProcessEngine(data), 1_000_000, accountant, max_splits=MAX_SPLITS)
    return data.with_transforms(chosen)


def relation_scores(data, planted) -> tuple[int, list[dict]]:
    """The candidates' number and, per relation, its best pair score, that pair's Jaccard index and the best
    Jaccard index of any of the relation's pairs."""
    indexes = [LiteralIndex(view, mode="private", max_splits=MAX_SPLITS) for view in data.views]
    chooser = PairChooser(indexes)
    names = [view.names for view in data.views]
    rows = []
    for number, (left, right) in enumerate(relation_attributes(planted)):
        best, best_j = (-math.inf, None), 0.0
        for side, (own, other) in enumerate(((left, right), (right, left))):
            scores = chooser._scores[side]
            targets = [i for i, (split, _) in enumerate(chooser._targets[side]) if names[side][split.attribute] in own]
            partners = [j for j, (split, _) in enumerate(chooser._partners[1 - side])
                        if names[1 - side][split.attribute] in other]
            if not targets or not partners:
                continue
            block = scores[np.ix_(targets, partners)]
            i, j = np.unravel_index(int(np.argmax(block)), block.shape)
            best_j = max(best_j, max(best_pair_jaccard(indexes, side, chooser._targets[side][a],
                                                       chooser._partners[1 - side][b])
                                     for a in targets for b in partners))
            if block[i, j] > best[0]:
                best = (float(block[i, j]), (side, chooser._targets[side][targets[i]],
                                             chooser._partners[1 - side][partners[j]]))
        side, target, partner = best[1]
        rows.append({"relation": number, "planted": f"{to_text(planted[number][0])} ↔ {to_text(planted[number][1])}",
                     "score": best[0], "pair_jaccard": best_pair_jaccard(indexes, side, target, partner),
                     "best_jaccard": best_j})
    return int(chooser.scores().size), rows


def choice_budget(data, epsilon: float) -> tuple[str, float, int]:
    """The default miner's trial kind at ``epsilon``, the ε its ``literal pair`` steps spend, and their number."""
    algorithm = default_algorithm(epsilon)
    miner = make_miner(algorithm, **{**default_parameters(epsilon), "epsilon": epsilon})
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(1))
    steps = [entry for entry in accountant.ledger if entry.step.startswith("literal pair")]
    spent = sum((Fraction(entry.epsilon) for entry in steps), Fraction(0))
    return str(miner.settings_.get("trial")), float(spent), len(steps)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="planted,planted-mixed")
    parser.add_argument("--data-seed", default="0,1,2,3,4")
    parser.add_argument("--epsilons", default="0.1,0.3")
    args = parser.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    for name in args.datasets.split(","):
        for data_seed in (int(s) for s in args.data_seed.split(",")):
            data, planted = dataset(name, data_seed)
            n, rows = relation_scores(with_run_grids(data), planted)
            nats = math.log(n) + math.log(DECISIVE_ODDS)
            print(f"\n{name}, data seed {data_seed}: {data.n_rows} rows, {n:,} candidate pairs "
                  f"(ln N + ln {DECISIVE_ODDS} = {nats:.1f} nats)")
            print(f"  {'relation':<58} {'best score':>10} {'its J':>6} {'best J':>6} {'ε decisive':>10}")
            for row in sorted(rows, key=lambda r: -r["score"]):
                row["epsilon"] = 2 * nats / row["score"] if row["score"] > 0 else math.inf
                print(f"  {row['relation']}: {row['planted'][:55]:<55} {row['score']:>10.0f} "
                      f"{row['pair_jaccard']:>6.3f} {row['best_jaccard']:>6.3f} {row['epsilon']:>10.3f}")
            needed = np.cumsum([r["epsilon"] for r in sorted(rows, key=lambda r: -r["score"])])
            print("  decisive choices of the strongest 1, 2, ... relations need ε_choice "
                  + ", ".join(f"{value:.3f}" for value in needed))
            for epsilon in epsilons:
                trial, spent, count = choice_budget(data, epsilon)
                print(f"  ε = {epsilon:g}: the default's trials are {trial!r}; {count} literal-pair choice(s) "
                      f"spend ε_choice {spent:.3f} in all")


if __name__ == "__main__":
    main()
