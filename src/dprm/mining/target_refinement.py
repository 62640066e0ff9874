r"""The second tree of a scored trees trial: the target's literal, refined by one split.

A scored trees trial of :class:`~dprm.mining.tree_pair.MCMCTreePair` starts from a
released initial target ``s`` (:mod:`dprm.mining.initial_targets`). The paper's trial
then samples both trees at once by one chain (``second_tree="chain"``,
:func:`~dprm.trees.private.sample_tree_pair`), which scores a pair by
``M(T_L; s) + M(T_R; leaves of T_L) − B`` at ``exp(ε·score/3)`` (bounded range 3)
over some ``e^21`` second trees of depth 2 on a wide view; at a trial's budget that
law spreads over second trees that hold none of the target's attributes
(docs/mining-sessions.md, sessions 38 and 39). With ``second_tree="refined-target"`` the
trial's tree budget pays for two releases instead:

1. **the first tree** ``T`` (the view without the target) by its own chain, the
   majority mass ``M(T; s)`` (monotone, sensitivity 1: ``exp(ε₁·M)``, bounded range 1,
   :func:`~dprm.trees.private.sample_tree`), :data:`FIRST_TREE_SHARE` of the budget;
2. **the second tree**, of the target's view, in one exponential-mechanism choice
   (:func:`refine_target`) with the rest:

   * candidates: a *root*, the target's split ``a ≤ t_j`` or, for a numeric target,
     any threshold of its attribute within :data:`ROOT_WINDOW` grid points of ``t_j``
     (a Boolean or categorical target keeps its split); a *branch* of the root; and a
     split ``q`` of the view under that branch (leaves ``r ∧ q, r ∧ ¬q, ¬r`` under the
     true branch, a conjunction, or ``r, ¬r ∧ q, ¬r ∧ ¬q`` under the false one, a
     disjunction ``r ∨ q``); the attributes of earlier trials' trees are left out, the
     root's own attribute stays. The set is public: the schema, the grid, the released
     target and the released trees;
   * score: the **majority count** of the candidate tree predicting ``T``'s leaves:
     over its parts (the unrefined branch, the rows where the root is missing, and in
     the refined branch ``q`` true, ``q`` missing, ``q`` false) the sum of each part's
     largest class, a class being a leaf of ``T`` (rows that drop out of ``T`` have
     none);
   * **sensitivity 1, monotone**: the parts partition the rows and a row's class is a
     function of the row and the released ``T``, so adding a row raises every
     candidate's score by 0 or 1, removing one lowers it by 0 or 1; the exponential
     mechanism for monotone scores samples ``∝ exp(ε₂·score)``
     (``ExponentialMechanism(monotone=True)``). Checked on neighbouring datasets in
     ``tests/test_target_refinement.py``.

   An interval target ``t_j < a ≤ t_k`` is already a tree of depth 2
   (:meth:`~dprm.mining.initial_targets.InitialTarget.tree`): it is the second tree as
   it is, and the first tree takes the whole budget.

Both releases are charged before they are made; the trial spends its tree budget
exactly. The counts behind the scores are counts of rows (:func:`leaf_refinement_counts`),
so a sharded run sums its shards' counts and scores the sum.

Examples
--------
>>> from dprm.data import Attribute, AttributeKind, View
>>> from dprm.data.literal_index import LiteralIndex
>>> from dprm.mining.initial_targets import InitialTarget
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> x, y, z = (rng.random(2000) < 0.5 for _ in range(3))
>>> view = View("r", [Attribute(name, "r", AttributeKind.BOOLEAN, v.astype(np.int8))
...                   for name, v in [("x", x), ("y", y), ("z", z)]])
>>> index = LiteralIndex(view)
>>> leaves = np.where(x & y, 1, 0)                  # the first tree's two leaves: x ∧ y and the rest
>>> target = InitialTarget(1, index.splits[0])      # x
>>> def counter(roots, splits):
...     return leaf_refinement_counts(index, roots, splits, leaves, 2)
>>> accountant = Accountant(0.5, SeededNoise(np.random.default_rng(1)))
>>> chosen = refine_target(index, target, counter, 0.5, accountant, "refineTarget#1")
>>> [s.attribute if s is not None else None for s in chosen.tree().splits]   # x, then y under its true branch
[0, 1, None]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.mining.initial_targets import InitialTarget, literal_masks
from dprm.privacy import Accountant, ExponentialMechanism
from dprm.privacy.budget import EpsilonLike
from dprm.trees.tree import Tree

__all__ = ["FIRST_TREE_SHARE", "ROOT_WINDOW", "TARGET_REFINEMENT_SENSITIVITY", "TargetRefinement",
           "leaf_refinement_counts", "majority_scores", "refine_target", "refinement_candidates", "root_candidates"]

#: The score's sensitivity (monotone: module docstring).
TARGET_REFINEMENT_SENSITIVITY = 1
#: The first tree's share of a trial's tree budget; the second tree's choice takes the rest
#: (measured against 1/3 and 2/3 in docs/mining-sessions.md, session 39).
FIRST_TREE_SHARE = Fraction(1, 2)
#: Grid points either side of a numeric target's threshold that are candidate roots.
ROOT_WINDOW = 3
#: Indicator cells counted at once (rows × candidate splits): 8 bytes each, 32 MB.
_CHUNK_CELLS = 4_000_000

#: ``(roots, splits) -> counts`` of :func:`leaf_refinement_counts` over all the rows (a sharded
#: run sums its shards').
LeafRefinementCounter = Callable[[Sequence[Split], Sequence[Split]], np.ndarray]


@dataclass(frozen=True)
class TargetRefinement:
    """The chosen second tree: ``root``, and ``split`` under its true (``branch``) or false branch."""

    root: Split
    branch: bool
    split: Split

    def tree(self) -> Tree:
        """The tree of depth 2 (post-processing of the choice).

        Examples
        --------
        >>> r, q = Split(0, AttributeKind.BOOLEAN, 1), Split(1, AttributeKind.BOOLEAN, 1)
        >>> TargetRefinement(r, False, q).tree().splits == [r, None, q]
        True
        """
        return Tree(depth=2, splits=[self.root, self.split, None] if self.branch else [self.root, None, self.split])


def root_candidates(index: LiteralIndex, split: Split) -> list[Split]:
    """The candidate roots for a target split: its attribute's thresholds within :data:`ROOT_WINDOW` grid
    points (numeric), else the split itself.

    Examples
    --------
    >>> from dprm.data import Attribute, Domain, View
    >>> x = Attribute("x", "v", AttributeKind.NUMERIC, np.linspace(0, 1, 50), Domain(bounds=(0, 1)))
    >>> index = LiteralIndex(View("v", [x]), mode="private", max_splits=8)
    >>> [s.code for s in root_candidates(index, index.splits[1])]
    [0, 1, 2, 3, 4]
    """
    if split.kind is not AttributeKind.NUMERIC:
        return [split]
    n = len(index.thresholds[split.attribute])
    return [Split(split.attribute, split.kind, code)
            for code in range(max(0, split.code - ROOT_WINDOW), min(n, split.code + ROOT_WINDOW + 1))]


def refinement_candidates(index: LiteralIndex, attribute: int, taken: Iterable[int] = ()) -> list[Split]:
    """Every split of ``index`` but those of the ``taken`` attributes; ``attribute``'s own stay."""
    left_out = set(taken) - {attribute}
    return [split for split in index.splits if split.attribute not in left_out]


def leaf_refinement_counts(index: LiteralIndex, roots: Sequence[Split], splits: Sequence[Split],
                           classes: np.ndarray, n_classes: int, rows: slice = slice(None)) -> np.ndarray:
    """Rows of each class in each part of every candidate tree: shape ``(roots, 2, 5, n_classes, splits)``.

    Axis 1: the refined branch of the root (0: its true branch, 1: its false one);
    axis 2: the parts (the other branch, the rows where the root is missing, then in the
    refined branch ``q`` true, ``q`` missing, ``q`` false); axis 3: the class
    (``classes[i]``, the first tree's leaf of the ``i``-th row of ``rows``, a contiguous
    slice of the index's rows; ``-1``: no class, not counted). Counts of rows: the counts
    of disjoint sets of rows add up (a sharded run's sum).
    :func:`~dprm.mining.pair_refinement.refinement_counts` is the case of one root and
    two classes.

    Examples
    --------
    >>> from dprm.data import Attribute, View
    >>> b = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=np.int8)
    >>> q = np.array([1, 1, 0, 0, 1, 1, 0, 0], dtype=np.int8)
    >>> index = LiteralIndex(View("r", [Attribute("b", "r", AttributeKind.BOOLEAN, b),
    ...                                 Attribute("q", "r", AttributeKind.BOOLEAN, q)]))
    >>> counts = leaf_refinement_counts(index, index.splits[:1], index.splits, b & q, 2)
    >>> counts[0, 0, :, :, 1].tolist()   # q under b's true branch: ¬b (4 / 0), b ∧ q (0 / 2), b ∧ ¬q (2 / 0)
    [[4.0, 0.0], [0.0, 0.0], [0.0, 2.0], [0.0, 0.0], [2.0, 0.0]]
    """
    classes = np.asarray(classes)
    first, last, _ = rows.indices(index.n_rows)
    out = np.zeros((len(roots), 2, 5, n_classes, len(splits)))
    chunk = max(256, _CHUNK_CELLS // max(1, len(splits), 2 * len(roots) * n_classes))
    for start in range(first, last, chunk):
        part_rows = slice(start, min(start + chunk, last))
        local = classes[start - first:part_rows.stop - first]
        members = np.stack([local == c for c in range(n_classes)])                      # (n_classes, rows)
        root_holds, root_missing = literal_masks(index, [(root, None) for root in roots], part_rows)
        root_false = ~root_holds & ~root_missing
        # rows of each (root, branch, class) in the chunk
        inside = np.stack([members[None] & root_holds.T[:, None], members[None] & root_false.T[:, None]], axis=1)
        sizes = inside.sum(axis=-1)                                                     # (roots, 2, n_classes)
        out[:, :, 0] += sizes[:, ::-1, :, None]        # the unrefined branch of refinement b is branch 1 − b
        out[:, :, 1] += (members[None] & root_missing.T[:, None]).sum(axis=-1)[:, None, :, None]
        q_holds, q_missing = literal_masks(index, [(split, None) for split in splits], part_rows)
        part = inside.astype(np.float64)
        true, lost = part @ q_holds.astype(np.float64), part @ q_missing.astype(np.float64)
        out[:, :, 2] += true
        out[:, :, 3] += lost
        out[:, :, 4] += sizes[..., None] - true - lost
    return out


def majority_scores(counts: np.ndarray) -> np.ndarray:
    """The majority count of every candidate, from :func:`leaf_refinement_counts`: shape ``(roots, 2, splits)``.

    Examples
    --------
    >>> counts = np.zeros((1, 2, 5, 2, 1)); counts[0, 0, :, :, 0] = [[4, 0], [0, 0], [0, 2], [0, 0], [2, 0]]
    >>> majority_scores(counts)[0, 0].tolist()
    [8.0]
    """
    return counts.max(axis=3).sum(axis=2)


def refine_target(index: LiteralIndex, target: InitialTarget, counter: LeafRefinementCounter,
                  epsilon: EpsilonLike, accountant: Accountant, step: str,
                  taken: Iterable[int] = ()) -> TargetRefinement:
    """The second tree of the target's view (``index``): one choice by the exponential mechanism.

    Charges ``epsilon`` as ``step`` (one monotone exponential mechanism of sensitivity
    1, module docstring). ``target`` is a split (not an interval); ``counter(roots,
    splits)`` counts the first tree's classes over all the rows
    (:func:`leaf_refinement_counts`, or a sharded run's sum); ``taken`` holds the view's
    attributes left out (those of earlier trials' trees).
    """
    if target.high is not None:
        raise ValueError("an interval target is its own second tree")
    roots = root_candidates(index, target.split)
    splits = refinement_candidates(index, target.split.attribute, taken)
    scores = majority_scores(counter(roots, splits))
    pick = ExponentialMechanism(epsilon, TARGET_REFINEMENT_SENSITIVITY, monotone=True).release(
        accountant, step, scores.ravel())
    root, rest = divmod(int(pick), 2 * len(splits))
    branch, column = divmod(rest, len(splits))
    return TargetRefinement(roots[root], branch == 0, splits[column])
