r"""A literal of each view, chosen together: the low-budget trial of the tree miners.

A scored trial of a tree miner makes two choices before its extraction: an initial
target (:mod:`dprm.mining.initial_targets`: an attribute, then one of its literals)
and then a tree of the other view that predicts it. Each choice by the exponential
mechanism separates candidates whose scores differ by about ``2Δ·ln(#candidates)/ε``
rows, so splitting a small budget between them halves what each can tell apart,
while choosing the *pair* at once pays ``ln(#targets) + ln(#partners)`` with the
whole budget: the same candidates, half the rows needed. Below one trial's budget
(``ε·n̂`` under 600 rows) the choices of the trees are close to uniform
(docs/mining.md, "Weak signal"), so there a trial is one pair chosen at once:

* candidates: every literal ``s`` of either view that may be an initial target (the
  splits of the public grid and the intervals between up to 8 of its points,
  :func:`~dprm.mining.initial_targets.candidate_literals`) together with every split
  ``p`` of the other view, the attributes of earlier trials' pairs left out; a pair of
  two splits is one candidate (a target of the left view), scored by the better of its
  two directions (a maximum of scores of sensitivity 1 has sensitivity 1), so the right
  view's targets are its intervals;
* score: how well ``p`` predicts ``s``, ``max(g(s, p)/2, m(s, p))`` of
  :mod:`dprm.mining.initial_targets` (Gini gain over two, majority gain, in rows);
  **sensitivity 1** for every pair, derived there (it holds for any two binary tests);
* one choice by the exponential mechanism with sensitivity 1 (below one trial's budget
  drawn by permute-and-flip, :mod:`dprm.mining.selection`), charged as one release;
  the pair is then a tree of each view (``s``'s: depth 1, or 2 for an interval;
  ``p``'s: depth 1), extracted privately like any tree pair.

The candidate set is public (the schema, the public grid, released pairs), only the
choice is released. A pair of literals is what a small budget can describe: a
redescription ``s ↔ p``, its mirror ``¬s ↔ ¬p`` and the mixed ones of extraction.

Examples
--------
>>> from dprm.data import Attribute, AttributeKind, View
>>> from dprm.data.literal_index import LiteralIndex
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> a = rng.random(600) < 0.3
>>> left = View("l", [Attribute(f"x{j}", "l", AttributeKind.BOOLEAN, v.astype(np.int8))
...                   for j, v in enumerate([rng.random(600) < 0.3, a, rng.random(600) < 0.5])])
>>> right = View("r", [Attribute(f"y{j}", "r", AttributeKind.BOOLEAN, v.astype(np.int8))
...                    for j, v in enumerate([rng.random(600) < 0.4, a ^ (rng.random(600) < 0.03)])])
>>> accountant = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
>>> chooser = PairChooser((LiteralIndex(left), LiteralIndex(right)))
>>> target, partner = chooser.choose(1.0, accountant, "literal pair 1")
>>> sorted([(target.side, target.split.attribute), (1 - target.side, partner.attribute)])   # x1 and y1
[(0, 1), (1, 1)]
>>> [entry.step for entry in accountant.ledger], float(accountant.spent())
(['literal pair 1'], 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from dprm.data.literal_index import LiteralIndex, Split
from dprm.mining.initial_targets import (TARGET_SCORE_SENSITIVITY, GainCounter, InitialTarget, Literal,
                                         candidate_literals, split_gains)
from dprm.privacy import Accountant, ExponentialMechanism
from dprm.privacy.noise import Sampler
from dprm.privacy.budget import EpsilonLike

__all__ = ["MAX_PAIR_CANDIDATES", "PairChooser"]

#: Most pairs a chooser scores (:meth:`PairChooser.scored`, both views' targets against the
#: other view's splits): 8 bytes of score each, 160 MB at most. Beyond it the ``"auto"``
#: rule makes tree trials instead.
MAX_PAIR_CANDIDATES = 20_000_000
#: Pairs counted at once (:func:`_pair_gains`): their counts take 32 bytes a pair, 32 MB.
_BLOCK_PAIRS = 1 << 20


def _pair_gains(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal],
                partners: list[Literal], counter: "GainCounter | None") -> np.ndarray:
    """:func:`~dprm.mining.initial_targets.split_gains` in blocks of partners (bounded memory; the same values)."""
    out = np.zeros((len(target_literals), len(partners)))
    step = max(1, _BLOCK_PAIRS // max(1, len(target_literals)))
    for start in range(0, len(partners), step):
        out[:, start:start + step] = split_gains(targets, other, target_literals, partners[start:start + step],
                                                 counter)
    return out


class PairChooser:
    """Pairs ``(target literal, partner split)`` of the two views, each chosen at once (module docstring).

    Parameters
    ----------
    indexes : pair of LiteralIndex
        The views' literal indexes (private mode: public grids).
    intervals : bool, default True
        Whether intervals of numeric attributes are candidate targets.
    counters : pair of callables, optional
        The counts of :func:`~dprm.mining.initial_targets.split_gain_counts` for each
        side's targets over all the rows (a sharded run sums its shards' counts).
    """

    def __init__(self, indexes: tuple[LiteralIndex, LiteralIndex] | list[LiteralIndex], *, intervals: bool = True,
                 counters: "tuple[GainCounter, GainCounter] | None" = None) -> None:
        self.indexes = tuple(indexes)
        self._targets: list[list[Literal]] = [candidate_literals(index, intervals) for index in self.indexes]
        self._partners: list[list[Literal]] = [[(split, None) for split in index.splits] for index in self.indexes]
        # scores[side][s, p]: how well split p of view 1 − side predicts literal s of view `side`
        self._scores = [_pair_gains(self.indexes[side], self.indexes[1 - side], self._targets[side],
                                    self._partners[1 - side], None if counters is None else counters[side])
                        for side in (0, 1)]
        # A pair of two splits is a candidate once, as a target of the left view, scored by the
        # better of its two directions (a maximum of scores of sensitivity 1 has sensitivity 1).
        n_splits = [len(index.splits) for index in self.indexes]
        both = np.maximum(self._scores[0][:n_splits[0]], self._scores[1][:n_splits[1]].T)
        self._scores[0][:n_splits[0]] = both
        self._first = [0, n_splits[1]]  # the first candidate target row of each side
        self._target_attributes = [np.array([s.attribute for s, _ in literals], dtype=int)
                                   for literals in self._targets]
        self._partner_attributes = [np.array([s.attribute for s, _ in literals], dtype=int)
                                    for literals in self._partners]
        self.taken: list[set[int]] = [set(), set()]

    @staticmethod
    def scored(indexes: tuple[LiteralIndex, LiteralIndex] | list[LiteralIndex], intervals: bool = True) -> int:
        """The number of pairs a chooser of ``indexes`` scores (both directions of two splits included)."""
        targets = [len(candidate_literals(index, intervals)) for index in indexes]
        return targets[0] * len(indexes[1].splits) + targets[1] * len(indexes[0].splits)

    def take(self, side: int, positions: Iterable[int]) -> None:
        """Leave the attributes at ``positions`` of view ``side`` out of later choices."""
        self.taken[side].update(int(p) for p in positions)

    def _live(self, side: int) -> tuple[np.ndarray, np.ndarray]:
        rows = ~np.isin(self._target_attributes[side], list(self.taken[side]))
        rows[:self._first[side]] = False
        columns = ~np.isin(self._partner_attributes[1 - side], list(self.taken[1 - side]))
        return np.flatnonzero(rows), np.flatnonzero(columns)

    def scores(self) -> np.ndarray:
        """The score of every candidate pair not taken, in the order :meth:`choose` numbers them."""
        return self._candidates()[1]

    def _candidates(self) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """``(live rows and columns of each side, their scores flattened side by side)``."""
        live = [self._live(side) for side in (0, 1)]
        return live, np.concatenate([self._scores[side][np.ix_(rows, columns)].ravel()
                                     for side, (rows, columns) in enumerate(live)])

    def choose(self, epsilon: EpsilonLike, accountant: Accountant, step: str, *,
               sampler: Sampler = "gumbel") -> tuple[InitialTarget, Split]:
        """One pair by the exponential mechanism (sensitivity 1) drawn by ``sampler``, charging ``epsilon`` as ``step``.

        Returns the target literal (of its view, :class:`InitialTarget`) and the partner
        split of the other view. The pair's attributes are then taken. When every
        candidate is taken, all are candidates again.
        """
        live, scores = self._candidates()
        if len(scores) == 0:
            self.taken = [set(), set()]
            live, scores = self._candidates()
        pick = ExponentialMechanism(epsilon, TARGET_SCORE_SENSITIVITY, sampler=sampler).release(accountant, step, scores)
        first_block = len(live[0][0]) * len(live[0][1])
        side = 0 if pick < first_block else 1
        pick -= 0 if side == 0 else first_block
        rows, columns = live[side]
        s, p = rows[pick // len(columns)], columns[pick % len(columns)]
        split, high = self._targets[side][int(s)]
        partner = self._partners[1 - side][int(p)][0]
        self.take(side, [split.attribute])
        self.take(1 - side, [partner.attribute])
        return InitialTarget(side, split, high), partner
