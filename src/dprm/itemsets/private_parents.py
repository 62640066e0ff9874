"""The conditionals of a private chain: chosen by the exponential mechanism, released by noisy counts.

:func:`release_conditional` releases one conditional ``f(X | Π)`` of a chain, ``Π`` a
small set of variables released before ``X`` (PrivBayes, Zhang et al., SIGMOD 2014);
:func:`next_candidates` lists what the chain's next release may be: PrivBayes's greedy
network chooses the *order* too (each release picks the next variable together with
its parents, so strongly dependent variables follow what they depend on), or the
order is given and each release picks only the parents.

1. **Choice.** The candidates ``(X, Π)`` are public: every ``Π`` of at most
   ``max_parents`` released variables whose table has at most ``max_cells`` cells
   (``|Π-configurations| · |X|``), the empty set included. One is drawn by the
   exponential mechanism (:class:`~dprm.privacy.ExponentialMechanism`, ``ε_select``)
   with the score

   ``q(X, Π) = n·R(X, Π) - (cells(Π) - |X|) · b / 2``

   where ``n·R(X, Π) = ½ Σ_{x,π} |c(x, π) - c(x) c(π) / n|`` (counts ``c`` of the rows,
   ``n`` rows) is how many rows of L1 mass separate the joint table from the product
   of its margins (PrivBayes's ``R`` score, in counts), and the second term, which
   does not depend on the data, is half the expected L1 noise the table's extra cells
   add (``b`` the noise scale of the counts' release): parents are worth their cells
   only when the dependence they capture beats the noise they bring. The candidates'
   tables are counted together, from packed bitsets
   (:mod:`~dprm.itemsets.private_dependence`: the same scores, bit for bit).

   *Sensitivity 3.* Add one row at cell ``(x₀, π₀)``. The joint table changes by 1 in
   L1. The product table ``n p q`` (``p``, ``q`` the margins as shares) becomes
   ``(n+1) p' q'`` with ``‖p' - p‖₁ = 2 (n - c(x₀)) / (n (n+1)) <= 2/(n+1)`` and
   likewise for ``q``, so ``‖(n+1) p'q' - n pq‖₁ <= (n+1)(‖p'-p‖₁ + ‖q'-q‖₁) + ‖pq‖₁ <= 5``.
   The L1 norm of ``c - npq`` therefore moves by at most 6, and ``n·R`` by at most
   3; removing a row is the same step backwards. The penalty is the same on
   neighbouring datasets. (An empty table and a table of one row have ``n·R = 0``.)
2. **Table.** The counts of the chosen table, one histogram over disjoint cells
   (each row in one cell): a discrete Laplace vector with ``ε_counts``, L1 sensitivity 1
   (:class:`~dprm.privacy.DiscreteLaplaceHistogram`).
3. **Post-processing** (free). Each configuration's noisy vector of ``X`` counts is
   made non-negative with its own total (:func:`nonnegative_counts`), and the table
   becomes an oblivious :class:`~dprm.itemsets.tree_model.ConditionalTree`: level
   ``ℓ`` splits every node on the ``ℓ``-th parent, one child per public category, the
   leaves hold the configurations' counts and an inner node the sum of its leaves'.

**Budget.** A release costs its ``ε``: :data:`SELECT_SHARE` of it for the choice
(PrivBayes's β = 0.3) and the rest for the counts; with a single candidate (the chain's
first variable, or no parent set that fits) there is no choice and the counts get all
of it. The chain's releases compose sequentially (each reads every row).

Examples
--------
>>> import numpy as np
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> a = rng.integers(0, 2, size=4000)
>>> codes = np.column_stack([a, np.where(rng.random(4000) < 0.9, a, 1 - a), rng.integers(0, 3, size=4000)])
>>> acc = Accountant(2.0, SeededNoise(np.random.default_rng(1)))
>>> first = release_conditional(codes, next_candidates([], [0, 1, 2], [2, 2, 3]), [2, 2, 3], 1.0, acc, "1")
>>> second = release_conditional(codes, next_candidates([0], [1, 2], [2, 2, 3]), [2, 2, 3], 1.0, acc, "2")
>>> (first.target, first.parents), (second.target, second.parents), acc.spent()
((0, ()), (1, (0,)), Fraction(2, 1))
>>> second.tree.predict_proba(np.array([[0, -1, -1], [1, -1, -1]])).round(1).tolist()
[[0.9, 0.1], [0.1, 0.9]]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.private_dependence import _table, candidate_arrays, dependence
from dprm.itemsets.private_dependence import dependences as batch_dependences
from dprm.itemsets.tree_model import ConditionalTree
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, ExponentialMechanism

__all__ = ["MAX_CANDIDATES", "MAX_CELLS", "MAX_PARENTS", "SCORE_SENSITIVITY", "SELECT_SHARE", "ConditionalRelease",
           "candidate_parents", "dependence", "draws_subset", "nonnegative_counts", "next_candidates",
           "oblivious_tree", "release_conditional"]

#: Most parents of a variable (PrivBayes's degree ``k``).
MAX_PARENTS = 2
#: Most cells of a released table (bounds the work and the noise of one release).
MAX_CELLS = 1024
#: Most candidates of one release, about: a wider table's release considers a random,
#: public subset of its targets and of the released variables as parents (PrivBayes's
#: greedy step would score ``targets × C(released, ≤ k)`` tables, tens of millions for a
#: table of 500 columns). Tables of up to about 25 columns never reach it.
MAX_CANDIDATES = 5000
#: Sensitivity of the score ``n·R`` (derived in the module notes).
SCORE_SENSITIVITY = 3
#: The score's penalty per extra cell, in units of the counts' noise scale (half the expected L1 noise of a cell).
NOISE_PENALTY = 0.5
#: The share of a release's budget that chooses the conditional (PrivBayes's β); the rest releases its counts.
SELECT_SHARE = Fraction(3, 10)


@dataclass(frozen=True)
class ConditionalRelease:
    """What :func:`release_conditional` returns: the variable, its parents, the tree of the released table.

    ``counts`` is the released table made non-negative (configurations × categories of
    the target), the tree's leaves.
    """

    target: int
    parents: tuple[int, ...]
    tree: ConditionalTree
    counts: np.ndarray | None = None


def nonnegative_counts(noisy: np.ndarray) -> np.ndarray:
    """The non-negative vector with the noisy vector's total nearest to it (post-processing).

    Noisy counts ``y`` (a histogram with zero-mean noise) are brought to
    ``x = max(y - d, 0)``, the one ``d`` for which ``sum(x) = max(sum(y), 0)``: the
    Euclidean projection of ``y`` onto the non-negative vectors of that total ("norm-sub",
    Wang et al., *Locally differentially private frequency estimation with
    consistency*, NDSS 2020). Clipping at 0 alone keeps every positive noise draw of
    an empty cell, so the many empty cells of a wide domain take mass from the
    frequent ones (supports of long itemsets, products of many conditionals, shrink);
    norm-sub keeps the total and takes that mass back evenly from the cells above
    ``d``. It reads only the noisy counts: post-processing, free of budget.

    Examples
    --------
    >>> nonnegative_counts(np.array([10.0, 6.0, -6.0, 2.0])).tolist()
    [8.0, 4.0, 0.0, 0.0]
    >>> nonnegative_counts(np.array([-3.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    y = np.asarray(noisy, dtype=np.float64)
    total = y.sum()
    if total <= 0.0:
        return np.zeros_like(y)
    ranked = np.sort(y)[::-1]
    shifts = (np.cumsum(ranked) - total) / np.arange(1, len(y) + 1)
    kept = int(np.flatnonzero(ranked > shifts)[-1])  # the cells above the shift, largest first
    return np.maximum(y - shifts[kept], 0.0)


def candidate_parents(earlier: Sequence[int], sizes: Sequence[int], target: int,
                      max_parents: int = MAX_PARENTS, max_cells: int = MAX_CELLS) -> list[tuple[int, ...]]:
    """Every parent set of at most ``max_parents`` of ``earlier`` whose table fits ``max_cells`` (public).

    The empty set comes first; sets keep the order of ``earlier``.

    Examples
    --------
    >>> candidate_parents([0, 1, 2], [2, 50, 3, 4], target=3, max_cells=100)
    [(), (0,), (2,), (0, 2)]
    """
    if max_parents < 0 or max_cells < 1:
        raise ParameterError("max_parents must be >= 0 and max_cells >= 1")
    return [()] + _fitting(_parent_sets_of(earlier, sizes, max_parents), sizes[target], max_cells)


def _parent_sets_of(earlier: Sequence[int], sizes: Sequence[int], max_parents: int
                    ) -> list[tuple[tuple[int, ...], int]]:
    """Every non-empty set of at most ``max_parents`` of ``earlier`` (in :func:`candidate_parents`' order), with
    its number of configurations."""
    return [(tuple(int(p) for p in parents), math.prod(sizes[p] for p in parents))
            for k in range(1, max_parents + 1) for parents in itertools.combinations(earlier, k)]


def _fitting(sets: list[tuple[tuple[int, ...], int]], target_size: int, max_cells: int) -> list[tuple[int, ...]]:
    """The parent sets of ``sets`` whose table with a target of ``target_size`` categories fits ``max_cells``."""
    return [parents for parents, configurations in sets if configurations * target_size <= max_cells]


def oblivious_tree(target: int, parents: Sequence[int], sizes: Sequence[int], leaf_counts: np.ndarray
                   ) -> ConditionalTree:
    """The :class:`ConditionalTree` of a table: level ``ℓ`` splits on ``parents[ℓ]``.

    ``leaf_counts[config]`` are the target's counts of each configuration (mixed-radix,
    first parent most significant); inner nodes get the sums of their leaves'.

    Examples
    --------
    >>> tree = oblivious_tree(2, [0], [2, 2, 2], np.array([[3.0, 1.0], [0.0, 4.0]]))
    >>> tree.predict_proba(np.array([[1, -1, -1], [-1, -1, -1]])).tolist()
    [[0.0, 1.0], [0.375, 0.625]]
    """
    level = np.asarray(leaf_counts, dtype=np.float64).reshape(-1, sizes[target])
    levels = [level]
    for p in reversed(parents):  # sum the last parent out, level by level, up to the root
        level = level.reshape(-1, sizes[p], sizes[target]).sum(axis=1)
        levels.append(level)
    levels.reverse()  # levels[d]: the nodes at depth d, in mixed-radix order of the first d parents
    feature: list[int] = []
    child_offset: list[int] = []
    n_children: list[int] = []
    child: list[int] = []
    first = np.cumsum([0] + [len(x) for x in levels])  # number of the first node of each depth
    for d, nodes in enumerate(levels):
        for i in range(len(nodes)):
            if d < len(parents):
                width = sizes[parents[d]]
                feature.append(int(parents[d]))
                child_offset.append(len(child))
                n_children.append(width)
                child.extend(int(first[d + 1] + i * width + v) for v in range(width))
            else:
                feature.append(-1)
                child_offset.append(0)
                n_children.append(0)
    return ConditionalTree.from_arrays(target=target, feature=feature, child_offset=child_offset,
                                       n_children=n_children, child=child, counts=np.vstack(levels))


def release_conditional(
    codes: np.ndarray,
    candidates: Sequence[tuple[int, tuple[int, ...]]],
    sizes: Sequence[int],
    epsilon: float | Fraction,
    accountant: Accountant,
    step: str,
    dependences: dict[tuple[int, tuple[int, ...]], float] | None = None,
) -> ConditionalRelease:
    """Release one conditional ``f(X | Π)``, ``(X, Π)`` drawn from ``candidates`` (see the module notes).

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n_rows, n_columns)
        The rows, every column's code in its public domain.
    candidates : sequence of (target column, parent columns)
        The public candidates; with more than one, the exponential mechanism picks one
        with :data:`SELECT_SHARE` of ``epsilon``, and the table's counts get the rest;
        with one, the counts get all of ``epsilon``.
    sizes : sequence of int
        Every column's number of public categories.
    epsilon : number
        The release's budget (charged to ``accountant``, steps ``STEP: parents`` and
        ``STEP: counts``).
    accountant : Accountant
    step : str
        Names the release in the ledger.
    dependences : dict, optional
        ``n·R`` of candidates computed before (read and filled; a chain's releases
        share one, since a candidate's dependence does not change between them).
    """
    if not candidates:
        raise ParameterError("no candidate conditional to release")
    epsilon = Fraction(epsilon)
    select = epsilon * SELECT_SHARE if len(candidates) > 1 else Fraction(0)
    counts_mechanism = DiscreteLaplaceHistogram(epsilon - select)
    target, parents = candidates[0]
    if select:
        known = {} if dependences is None else dependences
        target, parents_of, shape = candidate_arrays(candidates, sizes)
        new = np.flatnonzero(~np.fromiter(map(known.__contains__, candidates), dtype=bool, count=len(candidates)))
        # counted together (dprm.itemsets.private_dependence): each equal to dependence(_table(...)), bit for bit
        fresh = [candidates[i] for i in new.tolist()]
        known.update(zip(fresh, batch_dependences(codes, fresh, sizes,
                                                  (target[new], parents_of[new], shape[new])).tolist()))
        configurations = shape.prod(axis=1)  # math.prod of the parents' sizes (1 for none)
        scores = (np.fromiter(map(known.__getitem__, candidates), dtype=np.float64, count=len(candidates))
                  - (configurations - 1) * np.asarray(sizes, dtype=np.int64)[target] * counts_mechanism.scale
                  * NOISE_PENALTY)
        chosen = ExponentialMechanism(select, SCORE_SENSITIVITY).release(accountant, f"{step}: parents", scores)
        target, parents = candidates[int(chosen)]
    noisy = counts_mechanism.release(accountant, f"{step}: counts", _table(codes, target, parents, sizes))
    counts = np.vstack([nonnegative_counts(row) for row in noisy])
    return ConditionalRelease(target, tuple(parents), oblivious_tree(target, parents, sizes, counts), counts)


def next_candidates(released: Sequence[int], remaining: Sequence[int], sizes: Sequence[int], *,
                    choose_order: bool = True, max_parents: int = MAX_PARENTS, max_cells: int = MAX_CELLS,
                    max_candidates: int = MAX_CANDIDATES, rng: np.random.Generator | None = None
                    ) -> list[tuple[int, tuple[int, ...]]]:
    """The candidates ``(X, Π)`` of a chain's next release (public: they read no row).

    With ``choose_order`` (PrivBayes's greedy network) every remaining ``X`` with every
    parent set of :func:`candidate_parents` among the ``released`` variables; the
    chain's first release has only ``remaining[0]`` (drawn at random by the caller,
    independently of the data), with no parents. Without it, only ``remaining[0]``,
    the next variable of a given order, with every parent set.

    When ``targets × parent sets`` would exceed ``max_candidates``, the parents are
    taken among a random subset of ``released`` (the largest whose parent sets, times
    at most 8 targets, fit) and the targets are a random subset of ``remaining`` (as
    many as then fit), drawn with ``rng``: public choices that read no row.

    Examples
    --------
    >>> next_candidates([], [2, 0, 1], [2, 2, 2])
    [(2, ())]
    >>> next_candidates([2], [0, 1], [2, 2, 2])
    [(0, ()), (0, (2,)), (1, ()), (1, (2,))]
    >>> next_candidates([2], [0, 1], [2, 2, 2], choose_order=False)
    [(0, ()), (0, (2,))]
    """
    targets = list(remaining) if choose_order and released else list(remaining[:1])
    parents_from = list(released)
    if draws_subset(len(released), len(remaining), choose_order=choose_order, max_parents=max_parents,
                    max_candidates=max_candidates):
        if rng is None:
            raise ParameterError("next_candidates needs rng to choose among more than max_candidates candidates")
        per_target = max_candidates // min(len(targets), 8)
        kept = len(parents_from)
        while kept > 0 and _parent_sets(kept, max_parents) > per_target:
            kept -= 1
        parents_from = sorted(int(j) for j in rng.choice(parents_from, size=kept, replace=False))
        n_targets = max(1, min(len(targets), max_candidates // _parent_sets(kept, max_parents)))
        targets = [int(x) for x in rng.choice(targets, size=n_targets, replace=False)]
    if max_parents < 0 or max_cells < 1:
        raise ParameterError("max_parents must be >= 0 and max_cells >= 1")
    sets = _parent_sets_of(parents_from, sizes, max_parents)  # candidate_parents' sets, listed once for every target
    return [(int(x), p) for x in targets for p in [()] + _fitting(sets, sizes[x], max_cells)]


def draws_subset(n_released: int, n_remaining: int, *, choose_order: bool = True, max_parents: int = MAX_PARENTS,
                 max_candidates: int = MAX_CANDIDATES) -> bool:
    """Whether :func:`next_candidates` draws a random subset of the candidates (they would be more than
    ``max_candidates``): public, from the numbers of variables released and remaining.

    Examples
    --------
    >>> draws_subset(3, 2), draws_subset(300, 200)
    (False, True)
    """
    targets = n_remaining if choose_order and n_released else min(n_remaining, 1)
    return targets * _parent_sets(n_released, max_parents) > max_candidates


def _parent_sets(n_released: int, max_parents: int) -> int:
    """How many parent sets of at most ``max_parents`` variables ``n_released`` variables have."""
    return sum(math.comb(n_released, k) for k in range(max_parents + 1))
