"""Which planted relation a literal-pair trial picks, and how well one pair can describe it.

For planted data of ``quality_weak_signal.py`` (four relations), prints for each relation
the best true Jaccard of a single pair of literals over its attributes (either polarity,
the grid's splits and intervals), the best score of its candidate pairs in the pair
chooser (:mod:`dprm.mining.literal_pairs`) and the exact probability that the
selection picks one of them at the pair's ε (the default trial below one trial's budget:
``0.7 · ε · 0.95²`` after the grids and the row count), drawn by ``--sampler``
(permute-and-flip, the default's below one trial's budget since session 48, or Gumbel,
the exponential mechanism's own distribution); then the probability of everything else.
Non-private diagnostics of the mechanism's odds, for docs/mining-sessions.md ("one literal pair
below one trial's budget", "Session 48").

    python benchmarks/pair_choice_odds.py --dataset planted --epsilon 0.1 [--sampler gumbel]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from quality_weak_signal import RELATIONS, dataset  # noqa: E402

from dprm.data.literal_index import LiteralIndex  # noqa: E402
from dprm.mining.initial_targets import candidate_literals, literal_masks  # noqa: E402
from dprm.mining.literal_pairs import PairChooser  # noqa: E402
from dprm.privacy import ExponentialMechanism  # noqa: E402


def best_pair_jaccard(indexes: list[LiteralIndex], attributes: set[str]) -> float:
    """The best true Jaccard of a literal of each view (or its opposite) over ``attributes``."""
    sides = []
    for index in indexes:
        literals = [lit for lit in candidate_literals(index)
                    if index.attributes[lit[0].attribute].name in attributes]
        holds = literal_masks(index, literals)[0].astype(np.float64)
        sides.append(np.concatenate([holds, 1 - holds], axis=1))
    left, right = sides
    both = left.T @ right
    union = left.sum(0)[:, None] + right.sum(0)[None, :] - both
    return float(np.max(both / np.maximum(union, 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="planted", choices=["planted", "planted-numeric", "planted-heavy"])
    parser.add_argument("--data-seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--max-splits", type=int, default=32)
    parser.add_argument("--sampler", default="permute-and-flip", choices=["permute-and-flip", "gumbel"])
    args = parser.parse_args()
    data, planted = dataset(args.dataset, args.data_seed)
    indexes = [LiteralIndex(view, mode="private", max_splits=args.max_splits) for view in data.views]
    chooser = PairChooser(indexes)
    scores = chooser.scores()
    pairs = []  # (target attribute, partner attribute) of every candidate, in the scores' order
    for side, (rows, columns) in enumerate(chooser._live(side) for side in (0, 1)):
        targets = [indexes[side].attributes[chooser._targets[side][r][0].attribute].name for r in rows]
        partners = [indexes[1 - side].attributes[chooser._partners[1 - side][c][0].attribute].name for c in columns]
        pairs += [(t, p) for t in targets for p in partners]
    probabilities = ExponentialMechanism(0.7 * args.epsilon * 0.95**2, 1, sampler=args.sampler).probabilities(scores)
    print(f"{len(scores):,} candidate pairs; pair epsilon {0.7 * args.epsilon * 0.95**2:.4f}; {args.sampler}")
    covered = np.zeros(len(scores), dtype=bool)
    for name, (left, right) in zip(RELATIONS, planted):
        attributes = set(re.findall(r"[lr]_\w+?_\d+", f"{left!r} {right!r}"))
        mine = np.array([t in attributes and p in attributes for t, p in pairs])
        covered |= mine
        print(f"{name:14s} best pair true J {best_pair_jaccard(indexes, attributes):.3f}  "
              f"best score {scores[mine].max():7.1f}  P(chosen) {probabilities[mine].sum():.3f}")
    print(f"{'anything else':14s} P(chosen) {probabilities[~covered].sum():.3f}")


if __name__ == "__main__":
    main()
