r"""One more split for a chosen literal pair: the refined-pair trial of the tree miners.

A literal pair (:mod:`dprm.mining.literal_pairs`) describes what one test of each view
can: ``s ↔ p``. Many relations need one more test on a side: ``a`` against
``x > 60 ∧ y > 60`` is matched by ``a ↔ x > 60`` with a Jaccard index of about 0.65
only, because ``x > 60`` alone also holds on a third of the rows outside the group;
``a ∨ b`` against ``x > 60`` by ``a ↔ x > 60`` with about 0.6. After the pair is
released, one more exponential-mechanism choice adds **one split** ``q`` under one
branch of one side's tree:

* candidates: for the side of the partner split ``p`` and, when the target ``s`` is a
  split (not an interval), for the side of ``s``: every split ``q`` of that view (the
  attributes taken by earlier trials left out, the side's own attribute kept) under
  the *true* branch of the side's split (leaves ``b ∧ q``, ``b ∧ ¬q``, ``¬b``: a
  conjunction) or under its *false* branch (leaves ``b``, ``¬b ∧ q``, ``¬b ∧ ¬q``: a
  disjunction ``b ∨ q``). The set is public: the schema, the public grid, the released
  pair and the attributes earlier trials released;
* score: the **majority count** of the refined tree predicting the *other* side's
  literal (``s`` for the partner's side, ``p`` for the target's): over the parts of the
  refined tree (the unrefined branch, the refined branch's three parts ``q``, ``¬q``,
  ``q`` missing, and the rows where the side's split is missing), the sum of each
  part's larger class. Rows where the other side's literal is missing have no class.
* **sensitivity 1, monotone**: adding a row adds it to exactly one part of every
  candidate (the parts partition the rows) and to one class or none, so every
  candidate's score rises by 0 or 1; removing one lowers it by 0 or 1. The exponential
  mechanism for monotone scores then samples ``∝ exp(ε · score)``
  (``ExponentialMechanism(monotone=True)``), twice the rate of a two-sided score of
  the same sensitivity. Checked on neighbouring datasets in
  ``tests/test_pair_refinement.py``.

The refined trees are extracted like any tree pair; the unions of their leaves include
the pair's own ``s ↔ p`` (``b ∧ q`` and ``b ∧ ¬q`` together are ``b``), so an
unhelpful ``q`` costs only the noise of one more cell.

The counts behind the scores are counts of rows (:func:`refinement_counts`), so a
sharded run sums its shards' counts and scores the sum: the same scores as in-process.

Examples
--------
>>> from dprm.data import Attribute, AttributeKind, View
>>> from dprm.data.literal_index import LiteralIndex
>>> from dprm.mining.initial_targets import InitialTarget
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> x, y = rng.random(2000) < 0.5, rng.random(2000) < 0.5
>>> a = (x & y) ^ (rng.random(2000) < 0.03)
>>> left = View("l", [Attribute("a", "l", AttributeKind.BOOLEAN, a.astype(np.int8))])
>>> right = View("r", [Attribute(name, "r", AttributeKind.BOOLEAN, v.astype(np.int8))
...                    for name, v in [("x", x), ("y", y), ("z", rng.random(2000) < 0.5)]])
>>> indexes = (LiteralIndex(left), LiteralIndex(right))
>>> target = InitialTarget(0, indexes[0].splits[0])          # a, released with its partner x
>>> accountant = Accountant(0.1, SeededNoise(np.random.default_rng(1)))
>>> left_tree, right_tree, refinement = refine_pair(indexes, target, indexes[1].splits[0], 0.1, accountant,
...                                                 "refinement 1")
>>> [s.attribute if s is not None else None for s in right_tree.splits]   # x, then y under x's true branch
[0, 1, None]
>>> [entry.step for entry in accountant.ledger]
['refinement 1']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dprm.data.literal_index import LiteralIndex, Split
from dprm.mining.initial_targets import InitialTarget, Literal, literal_masks
from dprm.mining.target_refinement import leaf_refinement_counts
from dprm.privacy import Accountant, ExponentialMechanism
from dprm.privacy.budget import EpsilonLike
from dprm.trees.tree import Tree

__all__ = ["REFINEMENT_SENSITIVITY", "Refinement", "RefinementSide", "majority_scores", "refine_pair",
           "refinement_counts", "refinement_sides"]

#: The refinement score's sensitivity (monotone: module docstring).
REFINEMENT_SENSITIVITY = 1

#: A counter of :func:`refinement_counts` over all the rows: ``(side, base, klass, splits) → counts``
#: (a sharded run sums its shards').
RefinementCounter = Callable[[int, Split, Literal, Sequence[Split]], np.ndarray]


@dataclass(frozen=True)
class Refinement:
    """One candidate: ``split`` of view ``side`` under the ``branch`` (True: the true one) of the side's split."""

    side: int
    branch: bool
    split: Split

    def tree(self, base: Split) -> Tree:
        """The side's tree: ``base`` at the root, the refinement under its branch (post-processing).

        Examples
        --------
        >>> from dprm.data.attributes import AttributeKind
        >>> b, q = Split(0, AttributeKind.BOOLEAN, 1), Split(1, AttributeKind.BOOLEAN, 1)
        >>> Refinement(0, False, q).tree(b).splits == [b, None, q]
        True
        """
        return Tree(depth=2, splits=[base, self.split, None] if self.branch else [base, None, self.split])


@dataclass(frozen=True)
class RefinementSide:
    """A side that may be refined: its split ``base``, the other view's literal ``klass`` it predicts, the candidates."""

    side: int
    base: Split
    klass: Literal
    candidates: list[Split]


def refinement_counts(index: LiteralIndex, base: Split, other: LiteralIndex, klass: Literal,
                      splits: Sequence[Split], rows: slice = slice(None)) -> np.ndarray:
    """Rows of each class in each part of every refined tree: shape ``(2, 5, 2, len(splits))``.

    Axis 0: the refined branch (0: ``base``'s true branch, 1: its false branch); axis 1:
    the parts (the other branch, the rows where ``base`` is missing, then in the refined
    branch ``q`` true, ``q`` missing, ``q`` false); axis 2: the class (the other view's
    ``klass`` holds / does not; rows where it is missing are not counted). Counts of
    rows over ``rows`` (a contiguous slice): the counts of disjoint sets of rows add up.

    Examples
    --------
    >>> from dprm.data import Attribute, AttributeKind, View
    >>> b = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=np.int8)
    >>> q = np.array([1, 1, 0, 0, 1, 1, 0, 0], dtype=np.int8)
    >>> view = View("r", [Attribute("b", "r", AttributeKind.BOOLEAN, b), Attribute("q", "r", AttributeKind.BOOLEAN, q)])
    >>> other = LiteralIndex(View("l", [Attribute("s", "l", AttributeKind.BOOLEAN, b & q)]))
    >>> index = LiteralIndex(view)
    >>> counts = refinement_counts(index, index.splits[0], other, (other.splits[0], None), index.splits)
    >>> counts[0, :, :, 1].tolist()   # q under b's true branch: ¬b (0 / 4), b ∧ q (2 / 0), b ∧ ¬q (0 / 2)
    [[0.0, 4.0], [0.0, 0.0], [2.0, 0.0], [0.0, 0.0], [0.0, 2.0]]
    """
    holds, missing = (mask[:, 0] for mask in literal_masks(other, [klass], rows))
    classes = np.where(missing, -1, np.where(holds, 0, 1))  # class 0: the literal holds
    return leaf_refinement_counts(index, [base], splits, classes, 2, rows)[0]


def majority_scores(counts: np.ndarray) -> np.ndarray:
    """The majority count of every refined tree, from :func:`refinement_counts`: shape ``(2, n_splits)``.

    Examples
    --------
    >>> counts = np.zeros((2, 5, 2, 1)); counts[0, :, :, 0] = [[0, 4], [0, 0], [2, 0], [0, 0], [0, 2]]
    >>> majority_scores(counts)[0].tolist()
    [8.0]
    """
    return counts.max(axis=2).sum(axis=1)


def refinement_sides(indexes: Sequence[LiteralIndex], target: InitialTarget, partner: Split,
                     taken: Sequence[Iterable[int]] = ((), ())) -> list[RefinementSide]:
    """The sides a refinement may split (module docstring): the partner's, and the target's unless an interval."""
    sides = [(1 - target.side, partner, (target.split, target.high))]
    if target.high is None:
        sides.append((target.side, target.split, (partner, None)))
    out = []
    for side, base, klass in sides:
        left_out = set(taken[side])
        candidates = [split for split in indexes[side].splits
                      if split.attribute == base.attribute or split.attribute not in left_out]
        out.append(RefinementSide(side, base, klass, candidates))
    return out


def refine_pair(indexes: Sequence[LiteralIndex], target: InitialTarget, partner: Split, epsilon: EpsilonLike,
                accountant: Accountant, step: str, taken: Sequence[Iterable[int]] = ((), ()),
                counter: RefinementCounter | None = None) -> tuple[Tree, Tree, Refinement]:
    """The pair's trees (left, right), one split added by the exponential mechanism, and the split.

    Charges ``epsilon`` as ``step`` (one monotone exponential mechanism of sensitivity
    1, module docstring). ``taken`` holds each view's attributes left out (those of
    earlier trials; the refined side's own attribute stays a candidate); ``counter``
    counts over all the rows (a sharded run's sum), by default ``refinement_counts``
    on ``indexes``.
    """
    if counter is None:
        def counter(side: int, base: Split, klass: Literal, splits: Sequence[Split]) -> np.ndarray:
            return refinement_counts(indexes[side], base, indexes[1 - side], klass, splits)
    sides = refinement_sides(indexes, target, partner, taken)
    blocks = [majority_scores(counter(s.side, s.base, s.klass, s.candidates)) for s in sides]
    scores = np.concatenate([block.ravel() for block in blocks])
    pick = ExponentialMechanism(epsilon, REFINEMENT_SENSITIVITY, monotone=True).release(accountant, step, scores)
    for side, block in zip(sides, blocks):
        if pick < block.size:
            branch, column = divmod(pick, len(side.candidates))
            refinement = Refinement(side.side, branch == 0, side.candidates[column])
            break
        pick -= block.size
    trees = [Tree(depth=1, splits=[partner]), Tree(depth=1, splits=[partner])]
    trees[target.side] = target.tree()
    chosen = next(s for s in sides if s.side == refinement.side)
    trees[refinement.side] = refinement.tree(chosen.base)
    return trees[0], trees[1], refinement
