"""Redescriptions from a pair of trees, counted on the table of leaf intersections.

The leaves of a tree partition the rows it sorts; rows with a missing value on a
tested attribute fall out of it. Adding that *residual* as one more cell, the leaves
of the left tree (``m_L`` leaves + residual) and of the right tree (``m_R`` + residual)
cut the rows into ``(m_L + 1) × (m_R + 1)`` disjoint cells. The **table** of their
counts answers every question extraction asks, exactly:

* a side query is a set of cells of its tree (*atoms*): a leaf ``n_i``, a disjunction
  of leaves ``n_i ∨ n_j ∨ ...``, or a negation ``¬n_i`` (every other leaf and the
  residual: the plain complement, so its support is exact even with missing values);
* ``|supp(q_L)|``, ``|supp(q_R)|``, ``|supp(q_L) ∩ supp(q_R)|`` and the data size are
  sums of cells.

So one histogram over disjoint cells (L1 sensitivity 1) is all a private extraction
needs to release; a non-private one counts the table exactly. This module is the
post-processing both share (Algorithm 6 of the tree-based paper): simple
redescriptions from pairs of leaves and their negations, each extended greedily by
up to ``max_clauses`` disjunctions per side while the Jaccard index rises and the
constraints Γ hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprm.errors import ParameterError
from dprm.queries.statistics import p_value

__all__ = ["Constraints", "LeafCombination", "contingency_table", "extract_combinations"]


@dataclass(frozen=True)
class Constraints:
    """The redescription constraints Γ.

    Parameters
    ----------
    min_support : float
        Minimum size of the intersection of the two supports (rows).
    max_support : float
        Maximum support of either query, as a share of the (noisy) data size.
    min_jaccard : float
        Minimum Jaccard index.
    max_pvalue : float
        Maximum p-value.
    max_clauses : int
        Maximum number of disjunctions added to each side of a simple redescription.
    """

    min_support: float = 10
    max_support: float = 0.8
    min_jaccard: float = 0.1
    max_pvalue: float = 0.01
    max_clauses: int = 3

    def __post_init__(self) -> None:
        if self.min_support < 0:
            raise ParameterError(f"min-support must be non-negative, not {self.min_support}")
        if not 0 < self.max_support <= 1:
            raise ParameterError(f"max-support must be in (0, 1], not {self.max_support}")
        if not 0 <= self.min_jaccard <= 1:
            raise ParameterError(f"min-jaccard must be in [0, 1], not {self.min_jaccard}")
        if not 0 < self.max_pvalue <= 1:
            raise ParameterError(f"max-pvalue must be in (0, 1], not {self.max_pvalue}")
        if self.max_clauses < 0:
            raise ParameterError(f"max-clauses must be non-negative, not {self.max_clauses}")

    def satisfied(
        self, support_left: np.ndarray, support_right: np.ndarray, intersection: np.ndarray, n_rows: float
    ) -> np.ndarray:
        """Which candidates satisfy Γ (vectorised over candidates)."""
        union = support_left + support_right - intersection
        jaccard = np.divide(intersection, union, out=np.zeros_like(union, dtype=float), where=union > 0)
        ok = (
            (intersection >= self.min_support)
            & (support_left <= self.max_support * n_rows)
            & (support_right <= self.max_support * n_rows)
            & (jaccard >= self.min_jaccard)
        )
        if ok.any():
            ok[ok] = p_value(intersection[ok], support_left[ok], support_right[ok], n_rows) <= self.max_pvalue
        return ok


@dataclass(frozen=True)
class LeafCombination:
    """A redescription as sets of cells: ``left[i]`` is True when atom ``i`` is in it.

    The last atom of each side is the residual (rows outside the tree); a side that
    contains it is a negation. Counts are in the units of the table (exact or noisy).
    """

    left: tuple[bool, ...]
    right: tuple[bool, ...]
    support_left: float
    support_right: float
    intersection: float
    n_rows: float

    @property
    def union(self) -> float:
        return self.support_left + self.support_right - self.intersection

    @property
    def jaccard(self) -> float:
        return self.intersection / self.union if self.union > 0 else 0.0


def contingency_table(left_leaf: np.ndarray, n_left: int, right_leaf: np.ndarray, n_right: int) -> np.ndarray:
    """Exact counts of the cells (left leaf or residual) × (right leaf or residual).

    Examples
    --------
    >>> contingency_table(np.array([0, 0, 1, -1]), 2, np.array([0, 1, 1, 1]), 2)
    array([[1, 1, 0],
           [0, 1, 0],
           [0, 1, 0]])
    """
    rows = np.where(left_leaf < 0, n_left, left_leaf)
    cols = np.where(right_leaf < 0, n_right, right_leaf)
    flat = np.bincount(rows * (n_right + 1) + cols, minlength=(n_left + 1) * (n_right + 1))
    return flat.reshape(n_left + 1, n_right + 1)


def _leaf_masks(n_leaves: int) -> np.ndarray:
    """Atom masks of the single leaves (no residual)."""
    return np.eye(n_leaves, n_leaves + 1, dtype=bool)


def _with_negations(masks: np.ndarray) -> np.ndarray:
    """The masks and their complements (which hold the residual), without the whole set."""
    options = np.concatenate([masks, ~masks])
    return np.unique(options[~options.all(axis=1) & options.any(axis=1)], axis=0)


def extract_combinations(
    table: np.ndarray,
    constraints: Constraints,
    left_units: np.ndarray | None = None,
    right_units: np.ndarray | None = None,
) -> list[LeafCombination]:
    """Simple redescriptions of a tree pair, extended by disjunctions, that satisfy Γ.

    Parameters
    ----------
    table : ndarray, shape (m_L + 1, m_R + 1)
        Counts of the cells; the last row and column are the residuals. Noisy counts
        are allowed (negative cells are treated as 0).
    constraints : Constraints
        Γ, and the number of disjunctions per side.
    left_units, right_units : ndarray of bool, optional
        The unions of leaves a simple query may be, one mask per row (residual
        column false). Default: the single leaves (Algorithm 6); passing the masks of
        every node of the tree (:func:`dprm.trees.leaf_queries.node_atoms`) also
        lets whole subtrees be queries. Simple queries are these units and their
        negations; a disjunction adds one unit.

    Returns
    -------
    list of LeafCombination
        Distinct combinations, best Jaccard first.

    Examples
    --------
    >>> table = np.array([[40, 2, 1], [3, 50, 4], [2, 1, 0]])
    >>> best = extract_combinations(table, Constraints(min_support=10))[0]
    >>> best.left, best.right, round(best.jaccard, 3)   # n_1 and ¬n_0 (n_1 ∨ residual)
    ((False, True, False), (False, True, True), 0.885)
    """
    table = np.clip(np.asarray(table, dtype=np.float64), 0.0, None)
    n_left, n_right = table.shape[0] - 1, table.shape[1] - 1
    if n_left < 1 or n_right < 1:
        return []
    units = [
        _leaf_masks(n_left) if left_units is None else np.asarray(left_units, dtype=bool),
        _leaf_masks(n_right) if right_units is None else np.asarray(right_units, dtype=bool),
    ]
    n_rows = float(table.sum())
    sums = [table.sum(axis=1), table.sum(axis=0)]
    options = [_with_negations(units[0]), _with_negations(units[1])]
    inter = options[0].astype(float) @ table @ options[1].T.astype(float)
    start = np.argwhere(inter >= max(constraints.min_support, 1e-12))
    if start.size == 0:
        return []
    # Every simple redescription is extended at once (arrays over the starts).
    sides = [options[0][start[:, 0]], options[1][start[:, 1]]]
    for _ in range(constraints.max_clauses):
        for side in (0, 1):
            oriented = table if side == 0 else table.T
            sides[side] = _extend_all(oriented, sums[side], sums[1 - side], n_rows,
                                      sides[side], sides[1 - side], units[side], constraints)
    combined = np.unique(np.concatenate(sides, axis=1), axis=0)
    left, right = combined[:, : n_left + 1], combined[:, n_left + 1 :]
    support_left = left.astype(float) @ sums[0]
    support_right = right.astype(float) @ sums[1]
    intersection = np.einsum("si,ij,sj->s", left.astype(float), table, right.astype(float))
    keep = constraints.satisfied(support_left, support_right, intersection, n_rows)
    found = [
        LeafCombination(tuple(left[s].tolist()), tuple(right[s].tolist()), float(support_left[s]),
                        float(support_right[s]), float(intersection[s]), n_rows)
        for s in np.flatnonzero(keep)
    ]
    return sorted(found, key=lambda c: (-c.jaccard, -c.intersection))


def _extend_all(
    table: np.ndarray,
    sums: np.ndarray,
    other_sums: np.ndarray,
    n_rows: float,
    mine: np.ndarray,
    other: np.ndarray,
    units: np.ndarray,
    constraints: Constraints,
) -> np.ndarray:
    """One disjunction step on one side of every redescription (rows of ``mine``).

    ``table`` is oriented with this side's cells as rows. For each redescription the
    unit whose disjunction gives the highest Jaccard index is chosen (Algorithm 6,
    line 10); it is taken when it raises the Jaccard index and the result satisfies
    Γ (line 11). Negations are not extended: ``¬n_i`` already holds every other
    leaf, so a disjunction could only make it the whole data.
    """
    weights = other.astype(float) @ table.T  # [s, k]: rows of cell k in the other query
    candidates = units[None, :, :] | mine[:, None, :]
    new_inter = np.einsum("suk,sk->su", candidates, weights)
    new_support = candidates.astype(float) @ sums
    support_other = (other.astype(float) @ other_sums)[:, None]
    current_inter = (mine * weights).sum(axis=1)[:, None]
    current_union = (mine.astype(float) @ sums)[:, None] + support_other - current_inter
    current = np.divide(current_inter, current_union, out=np.zeros_like(current_union), where=current_union > 0)
    union = new_support + support_other - new_inter
    jaccard = np.divide(new_inter, union, out=np.zeros_like(union), where=union > 0)
    changed = (candidates != mine[:, None, :]).any(axis=2) & ~candidates[:, :, :-1].all(axis=2)
    changed &= ~mine[:, -1][:, None]
    jaccard = np.where(changed, jaccard, -1.0)
    best = np.argmax(jaccard, axis=1)
    rows = np.arange(mine.shape[0])
    chosen_inter, chosen_support = new_inter[rows, best], new_support[rows, best]
    chosen_other = support_other[:, 0]
    better = jaccard[rows, best] > current[:, 0] + 1e-12
    ok = better & constraints.satisfied(chosen_support, chosen_other, chosen_inter, n_rows)
    extended = mine.copy()
    extended[ok] = candidates[rows[ok], best[ok]]
    return extended
