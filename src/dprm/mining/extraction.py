"""Redescriptions from a pair of trees, counted on the table of their cells.

A tree sorts every row into one **cell**: the leaf it reaches or, when the row's
value of a tested attribute is missing, the *drop-out cell* of the node whose test it
cannot take (:meth:`dprm.trees.tree.Tree.apply_cells`). The cells of the left tree
× the cells of the right tree partition the rows, and the **table** of their counts
answers every question extraction asks, exactly:

* a side query is a set of cells: a *unit* (a leaf, or a whole subtree: the
  conjunction of a node's path, which holds on the leaves below the node and on the
  drop-out cells of the node and its descendants), a disjunction of units, or the
  negation of one (all other cells: the plain complement, so its support is exact
  even with missing values);
* ``|supp(q_L)|``, ``|supp(q_R)|``, ``|supp(q_L) ∩ supp(q_R)|`` and the data size are
  sums of cells.

So one histogram over disjoint cells (L1 sensitivity 1) is all a private extraction
needs to release; a non-private one counts the table exactly. This module is the
post-processing both share (Algorithm 6 of the tree-based paper): simple
redescriptions from pairs of units and their negations, each extended greedily by up
to ``max_clauses`` disjunctions per side while the Jaccard index rises and the
constraints Γ hold. The paper's variant, units = single leaves, is the default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprm.errors import ParameterError
from dprm.mining.ranking import rank_key
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
    """A redescription as sets of cells: ``left[i]`` is True when cell ``i`` is in it.

    ``left_negated`` says the left set was made as the complement of a union of
    units (its query is a negation); likewise on the right. Counts are in the units
    of the table (exact or noisy).
    """

    left: tuple[bool, ...]
    right: tuple[bool, ...]
    left_negated: bool
    right_negated: bool
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


def contingency_table(left_cell: np.ndarray, n_left: int, right_cell: np.ndarray, n_right: int) -> np.ndarray:
    """Exact counts of the rows in each (left cell, right cell).

    Examples
    --------
    >>> contingency_table(np.array([0, 0, 1, 2]), 3, np.array([0, 1, 1, 1]), 2)
    array([[1, 1],
           [0, 1],
           [0, 1]])
    """
    flat = np.bincount(np.asarray(left_cell) * n_right + np.asarray(right_cell), minlength=n_left * n_right)
    return flat.reshape(n_left, n_right)


def _options(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The units and their complements, without empty or full sets, and negation flags."""
    masks = np.concatenate([units, ~units])
    negated = np.repeat([False, True], units.shape[0])
    keep = masks.any(axis=1) & ~masks.all(axis=1)
    masks, negated = masks[keep], negated[keep]
    _, first = np.unique(np.column_stack([masks, negated]), axis=0, return_index=True)
    first = np.sort(first)
    return masks[first], negated[first]


def extract_combinations(
    table: np.ndarray,
    constraints: Constraints,
    left_units: np.ndarray | None = None,
    right_units: np.ndarray | None = None,
    n_rows: float | None = None,
) -> list[LeafCombination]:
    """Simple redescriptions of a tree pair, extended by disjunctions, that satisfy Γ.

    Parameters
    ----------
    table : ndarray, shape (n_left_cells, n_right_cells)
        Counts of the cells. Noisy counts are used as they are: a sum of unbiased
        noisy cells is unbiased, where clipping every cell at 0 would inflate the
        sums of many (mostly empty) cells; only the resulting statistics are clipped
        into their valid ranges (:meth:`RedescriptionStats.from_counts`).
    constraints : Constraints
        Γ, and the number of disjunctions per side.
    left_units, right_units : ndarray of bool, optional
        The sets of cells a simple query may be, one mask per row. Default: every
        cell alone. Passing the masks of every node of the tree
        (:func:`dprm.trees.leaf_queries.node_cells`) lets whole subtrees be queries;
        passing the leaves only gives the paper's Algorithm 6. Simple queries are
        these units and their negations; a disjunction adds one unit.
    n_rows : float, optional
        The data size for Γ (maximum support, p-values); default the table's sum.

    Returns
    -------
    list of LeafCombination
        Distinct combinations, best Jaccard first.

    Examples
    --------
    >>> table = np.array([[40, 2, 1], [3, 50, 4], [2, 1, 0]])
    >>> best = extract_combinations(table, Constraints(min_support=10))[0]
    >>> best.left, best.right, round(best.jaccard, 3)   # (cell 1, cell 1 ∨ cell 2)
    ((False, True, False), (False, True, True), 0.885)
    """
    table = np.asarray(table, dtype=np.float64)
    n_cells = table.shape
    if min(n_cells) < 2:
        return []
    units = [
        np.eye(n, dtype=bool) if given is None else np.asarray(given, dtype=bool)
        for n, given in zip(n_cells, (left_units, right_units))
    ]
    n_rows = float(table.sum()) if n_rows is None else float(n_rows)
    sums = [table.sum(axis=1), table.sum(axis=0)]
    (left_options, left_neg), (right_options, right_neg) = _options(units[0]), _options(units[1])
    inter = left_options.astype(float) @ table @ right_options.T.astype(float)
    start = np.argwhere(inter >= max(constraints.min_support, 1e-12))
    if start.size == 0:
        return []
    # Every simple redescription is extended at once (arrays over the starts).
    sides = [left_options[start[:, 0]], right_options[start[:, 1]]]
    negated = [left_neg[start[:, 0]], right_neg[start[:, 1]]]
    for _ in range(constraints.max_clauses):
        for side in (0, 1):
            oriented = table if side == 0 else table.T
            sides[side] = _extend_all(oriented, sums[side], sums[1 - side], n_rows, sides[side], negated[side],
                                      sides[1 - side], units[side], constraints)
    combined = np.column_stack([sides[0], sides[1], negated[0], negated[1]])
    _, first = np.unique(combined, axis=0, return_index=True)
    left, right = sides[0][first], sides[1][first]
    left_negated, right_negated = negated[0][first], negated[1][first]
    support_left = left.astype(float) @ sums[0]
    support_right = right.astype(float) @ sums[1]
    intersection = np.einsum("si,ij,sj->s", left.astype(float), table, right.astype(float))
    keep = constraints.satisfied(support_left, support_right, intersection, n_rows)
    found = [
        LeafCombination(tuple(left[s].tolist()), tuple(right[s].tolist()), bool(left_negated[s]),
                        bool(right_negated[s]), float(support_left[s]), float(support_right[s]),
                        float(intersection[s]), n_rows)
        for s in np.flatnonzero(keep)
    ]
    return sorted(found, key=rank_key)


def _extend_all(
    table: np.ndarray,
    sums: np.ndarray,
    other_sums: np.ndarray,
    n_rows: float,
    mine: np.ndarray,
    negated: np.ndarray,
    other: np.ndarray,
    units: np.ndarray,
    constraints: Constraints,
) -> np.ndarray:
    """One disjunction step on one side of every redescription (rows of ``mine``).

    ``table`` is oriented with this side's cells as rows. For each redescription the
    unit whose disjunction gives the highest Jaccard index is chosen (Algorithm 6,
    line 10); it is taken when it raises the Jaccard index and the result satisfies
    Γ (line 11). Negations are not extended: ``¬u`` already holds every cell outside
    ``u``, so a disjunction could only make it the whole data or leave it unchanged.
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
    allowed = (candidates != mine[:, None, :]).any(axis=2) & ~candidates.all(axis=2) & ~negated[:, None]
    jaccard = np.where(allowed, jaccard, -1.0)
    best = np.argmax(jaccard, axis=1)
    rows = np.arange(mine.shape[0])
    chosen_inter, chosen_support = new_inter[rows, best], new_support[rows, best]
    better = jaccard[rows, best] > current[:, 0] + 1e-12
    ok = better & constraints.satisfied(chosen_support, support_other[:, 0], chosen_inter, n_rows)
    extended = mine.copy()
    extended[ok] = candidates[rows[ok], best[ok]]
    return extended
