"""Private extraction of redescriptions from a pair of trees (Algorithm 6).

The three tree-based private miners (AltExpM, AltMCMC, MCMCTreePair) call
:func:`private_extract_table` (or :func:`private_extract`, from the rows' cells) once
per tree pair. It releases the counts extraction needs through the accountant, then
everything else is post-processing of those noisy counts: the shared extraction
(:func:`dprm.mining.extraction.extract_combinations`), the statistics of the returned
redescriptions and their confidence intervals. The parts live beside this module:

* :mod:`dprm.mining.noisy_estimates`: the noise's variance, the data size from two
  estimates, cells made consistent with it;
* :mod:`dprm.mining.interval_estimates`: the marginal intervals (simulation of the
  known noise), ``extra["interval"]``;
* :mod:`dprm.mining.selection_bands`: the selection-aware Jaccard band written out
  instead, when the same noise chose and states the redescriptions;
* :mod:`dprm.mining.pruning`: :func:`~dprm.mining.pruning.prune`, applied afterwards
  by the miners; :mod:`dprm.mining.ranking`: the order of the results.

Two ways to count (``counts=``)
-------------------------------
``"cells"`` (dprm's default)
    Each tree's drop-out cells (rows with a missing value of a tested attribute,
    :meth:`~dprm.trees.tree.Tree.apply_cells`) are merged into **one residual cell**,
    index ``n_leaves``. The table of (left leaf or residual) × (right leaf or
    residual), shape ``(n_L + 1, n_R + 1)``, partitions the rows, so it is one
    histogram over disjoint cells: adding or removing a row changes exactly one cell
    by one, L1 sensitivity 1, released by **one** ``DiscreteLaplaceHistogram(ε)``
    (ledger step ``"{step}: cell counts"``). Its shape depends on the trees only
    (public outputs of earlier mechanisms), never on the data. Post-processing:
    cells are used as released (sums of unbiased noisy cells stay unbiased; clipping
    the many empty cells at 0 would inflate ``n̂`` and every support), ``n̂`` is the
    sum of the table, and only derived statistics are clipped into range. Units
    are the single leaves (the residual is never a unit); the negation of a leaf is
    every other cell, residual included, which is exactly the plain complement the
    written query ``¬(leaf)`` means. So every support, intersection and the data size
    is a sum of noisy cells of *exactly* the rows the written queries hold on, even
    with missing values: no heuristic, and half the noise of the paper's variant on
    the intersections (ε instead of ε/2).

``"paper"`` (the paper's variant, section 4.5 and Appendix C, kept to reproduce it)
    Two histograms with ε/2 each (``split_budget``, exact Fractions):

    * ``CntInt`` (line 2): the ``n_L × n_R`` leaf-intersection counts; rows outside
      either tree (a missing tested value) are not counted. Disjoint cells, L1
      sensitivity 1: ledger step ``"{step}: leaf intersections"``.
    * ``CntL`` (line 3): the ``n_L`` left-leaf counts; disjoint, L1 sensitivity 1:
      ``"{step}: left leaf counts"``.

    Derived by post-processing, as in the paper: ``CntR`` (line 4) = column sums of
    the noisy intersections; ``dSize`` (line 5) ``n̂ = Σ CntL``. Extraction runs on
    the table ``leaves × (right leaves + one residual column)`` whose residual column
    is ``CntL[l] − Σ_r CntInt[l, r]`` (the rows of left leaf ``l`` outside the right
    tree). Left units are the left leaves (rows), right units the right leaves (the
    residual column is never a unit). On this table extraction's sums are the
    paper's formulas:

    ======================================  ==========================================
    paper                                   table sum
    ======================================  ==========================================
    ``|supp(∨_{I_L} n_l)| = Σ_{I_L} CntL``  rows ``I_L``, all columns
    ``|supp(∨_{I_R} n_r)| = Σ_{I_R} CntR``  columns ``I_R``, all rows
    ``|∨_{I_L} ∩ ∨_{I_R}|``                 ``Σ_{I_L × I_R} CntInt``
    ``|supp(¬n_m)| ≈ Σ_{l≠m} CntL`` (App.C) all rows but ``m`` (left negation)
    ``|¬n_m ∩ ∨_{I_R}| = Σ_{l≠m, I_R}``     rows ``≠ m`` × columns ``I_R``
    ``|D| = Σ CntL``                        the whole table
    ======================================  ==========================================

    Exact equality holds when the noisy counts are consistent; otherwise the table
    is made consistent first by post-processing: negative intersections are clipped
    at 0 and a negative residual at 0 (so a left support is
    ``max(CntL[l], Σ_r CntInt[l, r])``). One deviation: the negation of a *right*
    leaf ``m`` is the complement of its column, residual column included, so its
    support is ``n̂ − CntR[m]`` instead of Appendix C's ``Σ_{r≠m} CntR[r]``; the
    difference is the residual column (rows in the left tree but outside the right
    tree), which the written query ``¬(n_m)`` does hold on, so dprm's number is the
    better estimate of the query it returns. The paper's heuristic also ignores all
    rows outside the left tree (they are not in ``n̂``); in this mode, supports of
    negations and ``n̂`` are therefore biased low with missing values, as in the
    paper.

Selection-aware statistics: a held-back share (``reestimate_share``, issue 13)
-------------------------------------------------------------------------------
With ``reestimate_share = r > 0`` (cells mode) the extraction's ε is split: the cell
table released with ``(1 − r)·ε`` *chooses* the combinations, and a second histogram
of the same cells, released with ``r·ε`` and fresh noise (another L1-sensitivity-1
histogram: ``ε`` in all by sequential composition), *states* them: the reported
counts, the data size, the intervals and therefore pruning come from the second
table only. Its noise is independent of the choice made on the first, so for the
chosen combinations the second table's counts are unbiased and the simulated
intervals are exact for linear statistics, as for a single redescription: the
winner's curse above is gone, at the price of noisier statements (scale ``1/(r·ε)``).

"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dprm.data.literal_index import LiteralIndex
from dprm.errors import BudgetExceededError, ParameterError
from dprm.mining.extraction import Constraints, LeafCombination, contingency_table, extract_combinations
from dprm.mining.independence import with_independence
from dprm.mining.interval_estimates import INTERVAL_KEY, combination_intervals, simulate_tables
from dprm.mining.noisy_estimates import (
    combine_estimates,
    consistent_cells,
    discrete_laplace_variance,
    simulated_sizes,
)
from dprm.mining.pruning import prune
from dprm.mining.selection_bands import (
    MAX_BAND_PAIRS,
    count_reachable,
    reachable_sets,
    selection_aware_intervals,
    selection_critical_value,
)
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, as_epsilon, split_budget
from dprm.privacy.budget import EpsilonLike, as_fraction
from dprm.queries import Not, Or, Query, Redescription, RedescriptionStats
from dprm.trees.leaf_queries import TreeQueries, node_cells
from dprm.trees.tree import Tree

# INTERVAL_KEY, combination_intervals, simulate_tables, prune and discrete_laplace_variance
# are also importable from here, where the miners and the server have always found them.
__all__ = [
    "COUNTS",
    "INTERVAL_KEY",
    "UNITS",
    "ExtractionOptions",
    "combination_intervals",
    "discrete_laplace_variance",
    "leaf_pair_table",
    "private_extract",
    "private_extract_table",
    "simulate_tables",
    "prune",
]

#: The ways to count a tree pair: dprm's exact cells, or the paper's two histograms.
COUNTS: tuple[str, ...] = ("cells", "paper")

#: What a simple query of extraction may be: one leaf, or the leaves below any node.
UNITS: tuple[str, ...] = ("leaves", "subtrees")

#: Released noisy counts and the scales of their noise (one or two histograms).
_Released = tuple[list[np.ndarray], list[float]]


@dataclass(frozen=True, kw_only=True)
class ExtractionOptions:
    """The keyword options of :func:`private_extract` and :func:`private_extract_table`.

    Checked when made (:class:`~dprm.errors.ParameterError`), before anything is
    charged; the meaning of each is in :func:`private_extract`.

    Examples
    --------
    >>> ExtractionOptions(rng=np.random.default_rng(0)).counts
    'cells'
    >>> ExtractionOptions(counts="paper", reestimate_share=0.2, rng=np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: reestimate-share needs counts 'cells'
    """

    counts: str = "cells"
    units: str = "leaves"
    data_size: tuple[float, float] | None = None
    confidence: float = 0.95
    n_simulations: int = 500
    reestimate_share: float = 0.0
    prune_width: float | None = 0.22
    prune_floor: float | None = None
    prune_excess_floor: float | None = None
    rng: np.random.Generator

    def __post_init__(self) -> None:
        counts, units, confidence, reestimate_share = self.counts, self.units, self.confidence, self.reestimate_share
        n_simulations = self.n_simulations
        if counts not in COUNTS:
            raise ParameterError(f"counts must be one of {', '.join(COUNTS)}, not {counts!r}")
        if units not in UNITS:
            raise ParameterError(f"units must be one of {', '.join(UNITS)}, not {units!r}")
        if not 0 < confidence < 1:
            raise ParameterError(f"confidence must be in (0, 1), not {confidence}")
        if not 0 <= reestimate_share < 1:
            raise ParameterError(f"reestimate-share must be in [0, 1), not {reestimate_share}")
        if reestimate_share > 0 and counts != "cells":
            raise ParameterError("reestimate-share needs counts 'cells'")
        if isinstance(n_simulations, bool) or not isinstance(n_simulations, (int, np.integer)) or n_simulations < 0:
            raise ParameterError(f"n-simulations must be a non-negative integer, not {n_simulations!r}")
        if not isinstance(self.rng, np.random.Generator):
            raise ParameterError("private_extract needs rng, a numpy.random.Generator")


# -- the released counts and the tables built from them ------------------------------


def _residual_merged(cells: np.ndarray, n_leaves: int) -> np.ndarray:
    """Leaf numbers, with every drop-out cell merged into the residual ``n_leaves``."""
    return np.where(cells < n_leaves, cells, n_leaves)


def _paper_table(intersections: np.ndarray, left_counts: np.ndarray, clip: bool = True) -> np.ndarray:
    """The table ``leaves × (right leaves + residual)`` of the paper's counts.

    Works on one released pair (2-d, 1-d) or on a stack of simulated ones (3-d, 2-d).
    With ``clip``, negative intersections and then negative residuals are clipped at
    0 (post-processing); simulations use ``clip=False``.
    """
    inter = np.asarray(intersections, dtype=np.float64)
    if clip:
        inter = np.clip(inter, 0.0, None)
    residual = np.asarray(left_counts, dtype=np.float64) - inter.sum(axis=-1)
    if clip:
        residual = np.clip(residual, 0.0, None)
    return np.concatenate([inter, residual[..., None]], axis=-1)


# -- queries -----------------------------------------------------------------------


def _side_query(queries: TreeQueries, tree: Tree, cells: tuple[bool, ...], negated: bool) -> Query:
    """The query of a set of leaf cells (residual last, if present), or of ``¬unit``.

    A union of leaves is the disjunction of the leaves' queries, never simplified to
    a parent node's query: with missing values the parent's query also holds on
    drop-out rows, which the union of its leaves does not contain.
    """
    mask = np.asarray(cells, dtype=bool)
    n_leaves = tree.n_leaves
    leaves = ~mask[:n_leaves] if negated else mask[:n_leaves]
    if not negated and mask[n_leaves:].any():
        raise ValueError("a union of leaves cannot hold the residual cell")
    parts = [queries.node(tree.leaves[k]) for k in np.flatnonzero(leaves)]
    if not parts:
        raise ValueError("a side query needs at least one leaf")
    query = parts[0] if len(parts) == 1 else Or(*parts)
    return Not(query) if negated else query



# -- the extraction ----------------------------------------------------------------


def _restated(c: LeafCombination, table: np.ndarray, n_rows: float) -> LeafCombination:
    """The combination's counts in another table of the same cells (its cell sets are kept)."""
    left, right = np.asarray(c.left, dtype=np.float64), np.asarray(c.right, dtype=np.float64)
    return replace(c, support_left=float(table.sum(axis=1) @ left), support_right=float(table.sum(axis=0) @ right),
                   intersection=float(left @ table @ right), n_rows=float(n_rows))


def _stats(c: LeafCombination) -> RedescriptionStats:
    """The reported (noisy) statistics of a combination: its counts, clipped."""
    return RedescriptionStats.from_counts(c.support_left, c.support_right, c.intersection, c.n_rows)


def _empty_leaves(tree: Tree, index: LiteralIndex) -> np.ndarray:
    """Which leaves no row can reach (their tests contradict each other)."""
    return np.array([not tree.satisfiable(index, leaf) for leaf in tree.leaves], dtype=bool)


def _leaf_units(tree: Tree, units: str, residual: bool, empty: np.ndarray | None = None) -> np.ndarray:
    """Unit masks over the tree's leaves (plus a false residual column if asked),
    without units made only of leaves known to be ``empty``."""
    if units == "leaves":
        masks = np.eye(tree.n_leaves, dtype=bool)
    else:
        masks = node_cells(tree)[1][:, : tree.n_leaves]
    if empty is not None:
        masks = masks & ~empty[None, :]
    masks = masks[masks.any(axis=1)]
    if residual:
        masks = np.column_stack([masks, np.zeros(masks.shape[0], dtype=bool)])
    return masks


def _check_budget(accountant: Accountant, epsilon, step: str) -> None:
    """Refuse before anything is charged (the paper's mode makes two charges)."""
    if not accountant.can_afford(epsilon):
        raise BudgetExceededError(
            f"privacy budget exceeded at step {step!r}: requested epsilon {float(epsilon):g}, "
            f"remaining {float(accountant.remaining()):g} of {float(accountant.total_epsilon):g}"
        )


def private_extract(
    left_cells: np.ndarray,
    left_tree: Tree,
    left_index: LiteralIndex,
    right_cells: np.ndarray,
    right_tree: Tree,
    right_index: LiteralIndex,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
    constraints: Constraints,
    **options: Any,
) -> list[Redescription]:
    """ε-DP redescriptions of one tree pair (Algorithm 6), with confidence intervals.

    Parameters
    ----------
    left_cells, right_cells : ndarray of int
        ``tree.apply_cells(index)`` of every row (true data, server side; row-aligned).
    left_tree, right_tree : Tree
        The trees (already released by a mechanism: their shape is public).
    left_index, right_index : LiteralIndex
        The views' literal indexes, to write the leaves' queries.
    epsilon : int, float, str or Fraction
        The extraction's budget; exactly this much is charged.
    accountant : Accountant
        Charged before any noise is drawn; the noise comes from ``accountant.noise``.
    step : str
        Prefix of the ledger steps, e.g. ``"extractReds#3"``.
    constraints : Constraints
        Γ and ``max_clauses``, evaluated on the noisy counts (``max_support`` as a
        share of the noisy data size ``n̂``).
    **options
        Keyword-only, the fields of :class:`ExtractionOptions` (``rng`` required):
    counts : {"cells", "paper"}
        One histogram of exact cells with ε (default), or the paper's two histograms
        with ε/2 each (module docstring).
    data_size : (float, float), optional
        A separately released estimate of the number of rows and its variance
        (e.g. a discrete-Laplace count). The data size used for Γ's maximum support
        and the p-values is then the inverse-variance weighted mean of it and the
        table's own sum (post-processing); without it, the table's sum alone — the
        sum of some hundred noisy cells, whose spread makes p-values of large
        redescriptions unreliable.
    units : {"leaves", "subtrees"}
        What a simple query may be: a single leaf (the paper), or the leaves below
        any node of the tree (a subtree, written as the disjunction of its leaves,
        which is exact with missing values too). Pure post-processing either way.
    confidence : float
        Coverage of the intervals in ``extra["interval"]``, in (0, 1).
    n_simulations : int
        Simulated tables for the intervals; 0 writes no interval.
    reestimate_share : float
        Share of ``epsilon`` held back (``counts="cells"`` only; 0: none, the default).
        The first table (the rest of ``epsilon``) chooses the combinations; a second,
        independent histogram of the same cells (ledger step ``"{step}: re-estimate
        counts"``, L1 sensitivity 1) gives the reported statistics and intervals of
        the chosen ones. Its noise is independent of the choice, so the estimates are
        not biased by it (no winner's curse) and the simulated intervals keep their
        coverage for what is chosen (module docstring).
    prune_width : float, optional
        The width rule of :func:`prune` that will judge these redescriptions (the
        miner's ``prune_interval``; ``None``: no such rule). Without a held-back share,
        the selection-aware band is simultaneous over the candidates this rule would
        keep (:mod:`dprm.mining.selection_bands`).
    prune_floor : float, optional
        The width rule's exception (the miner's ``prune_interval_floor``): a wider
        interval whose lower end is at least this is kept, so such candidates are in
        the band's set too. ``None``: no exception.
    prune_excess_floor : float, optional
        The width rule's second exception (the miner's ``prune_excess_floor``): a wider
        interval whose lower end exceeds the independence baseline of the released
        supports by at least this is kept, so such candidates are in the band's set too.
        ``None``: no exception.
    rng : numpy.random.Generator
        Randomness of the simulation (post-processing only; the released noise comes
        from the accountant's source).

    Returns
    -------
    list of Redescription
        Best noisy Jaccard first. ``stats`` are computed from the noisy table only
        (``RedescriptionStats.from_counts(sL, sR, inter, n̂)``); nothing exact leaves
        the function.

    Raises
    ------
    BudgetExceededError
        If the accountant cannot afford ``epsilon``; nothing is charged or drawn.
    ParameterError
        For a bad ``counts``, ``confidence``, ``n_simulations`` or cell arrays.
    """
    exact_epsilon = as_epsilon(epsilon)
    ExtractionOptions(**options)  # checked before the cells
    left_cells, right_cells = np.asarray(left_cells), np.asarray(right_cells)
    if left_cells.shape != right_cells.shape or left_cells.ndim != 1:
        raise ParameterError("left_cells and right_cells must be 1-d and row-aligned")
    n_left, n_right = left_tree.n_leaves, right_tree.n_leaves
    for name, cells, tree in (("left", left_cells, left_tree), ("right", right_cells, right_tree)):
        if cells.size and (cells.min() < 0 or cells.max() >= tree.n_cells):
            raise ParameterError(f"{name}_cells must be cells of the {name} tree (apply_cells)")
    _check_budget(accountant, exact_epsilon, step)
    table = leaf_pair_table(left_cells, n_left, right_cells, n_right)
    return private_extract_table(table, left_tree, left_index, right_tree, right_index, epsilon, accountant, step,
                                 constraints, **options)


def leaf_pair_table(left_cells: np.ndarray, n_left: int, right_cells: np.ndarray, n_right: int) -> np.ndarray:
    """Exact rows of every (left leaf, right leaf) pair, drop-outs merged into a residual row and column.

    ``left_cells``/``right_cells`` are :meth:`~dprm.trees.tree.Tree.apply_cells` of the
    same rows; the table has shape ``(n_left + 1, n_right + 1)`` (int64). It is a count
    of rows per cell, so the tables of disjoint sets of rows (shards) add up to the
    table of their union. Everything :func:`private_extract_table` releases is made
    from it.

    Examples
    --------
    >>> leaf_pair_table(np.array([0, 1, 5]), 2, np.array([1, 1, 0]), 2).tolist()
    [[0, 1, 0], [0, 1, 0], [1, 0, 0]]
    """
    return contingency_table(_residual_merged(np.asarray(left_cells), n_left), n_left + 1,
                             _residual_merged(np.asarray(right_cells), n_right), n_right + 1).astype(np.int64)



def private_extract_table(
    table: np.ndarray,
    left_tree: Tree,
    left_index: LiteralIndex,
    right_tree: Tree,
    right_index: LiteralIndex,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
    constraints: Constraints,
    **options: Any,
) -> list[Redescription]:
    """:func:`private_extract` from the exact :func:`leaf_pair_table` of the two trees' cells.

    The only thing extraction reads of the rows is that table (one request to a
    counting engine for a whole extraction); the arguments are otherwise those of
    :func:`private_extract`, which checks them (``options``: the keyword-only fields
    of :class:`ExtractionOptions`, ``rng`` required).
    """
    exact_epsilon = as_epsilon(epsilon)
    opts = ExtractionOptions(**options)
    trees = (left_tree, right_tree)
    n_left, n_right = left_tree.n_leaves, right_tree.n_leaves
    table = np.asarray(table)
    if table.shape != (n_left + 1, n_right + 1):
        raise ParameterError(f"the leaf-pair table must have shape {(n_left + 1, n_right + 1)}, not {table.shape}")
    _check_budget(accountant, exact_epsilon, step)
    if opts.counts == "cells":
        released, reestimate = _release_cells(table, exact_epsilon, opts.reestimate_share, accountant, step)
        # Leaves whose path contradicts itself (a then ¬a, x ≤ 3 then x > 5) hold no
        # row whatever the data: their cells are known to be 0 (tree structure only).
        layout = _Layout("cells", (_empty_leaves(left_tree, left_index), _empty_leaves(right_tree, right_index)))
    else:
        released, reestimate = _release_paper(table, exact_epsilon, accountant, step), None
        layout = _Layout("paper", None)
    del table
    # From here on only released values are used.
    # (the paper's table has no residual row: its left units have no residual cell)
    units = (_leaf_units(left_tree, opts.units, residual=opts.counts == "cells", empty=layout.empty_side(0)),
             _leaf_units(right_tree, opts.units, residual=True, empty=layout.empty_side(1)))
    statement = layout.state(*released, opts.data_size)
    combinations: list[LeafCombination] = extract_combinations(statement.table, constraints, *units,
                                                               n_rows=statement.n_hat)
    if not combinations:
        return []
    if reestimate is not None:
        # Report from the independent second table: the same cells, fresh noise.
        statement = layout.state(*reestimate, opts.data_size)
        combinations = [_restated(c, statement.table, statement.n_hat) for c in combinations]
    intervals: list[dict | None] = [None] * len(combinations)
    if opts.n_simulations > 0:
        intervals = _intervals(combinations, statement, layout, units, constraints, opts)
    queries = (TreeQueries(left_tree, left_index), TreeQueries(right_tree, right_index))
    found = []
    for c, interval in zip(combinations, intervals):
        left = _side_query(queries[0], trees[0], c.left, c.left_negated)
        right = _side_query(queries[1], trees[1], c.right, c.right_negated)
        extra = {} if interval is None else {INTERVAL_KEY: interval}
        found.append(with_independence(Redescription(left, right, _stats(c), extra=extra), c.n_rows))
    return found


def _release_cells(table: np.ndarray, epsilon, reestimate_share: float, accountant: Accountant, step: str
                   ) -> tuple[_Released, _Released | None]:
    """One histogram of every cell (and, with a held-back share, a second one): ``(parts, scales)`` each."""
    select_epsilon, reestimate_epsilon = epsilon, None
    if reestimate_share > 0:
        share = as_fraction(reestimate_share, "reestimate-share")
        select_epsilon, reestimate_epsilon = split_budget(epsilon, [1 - share, share])
    mechanism = DiscreteLaplaceHistogram(select_epsilon)
    released = ([mechanism.release(accountant, f"{step}: cell counts", table)], [mechanism.scale])
    reestimate = None
    if reestimate_epsilon is not None:
        second = DiscreteLaplaceHistogram(reestimate_epsilon)
        reestimate = ([second.release(accountant, f"{step}: re-estimate counts", table)], [second.scale])
    return released, reestimate


def _release_paper(table: np.ndarray, epsilon, accountant: Accountant, step: str) -> _Released:
    """The paper's two histograms, ε/2 each: the leaf intersections and the left leaves' counts."""
    n_left, n_right = table.shape[0] - 1, table.shape[1] - 1
    eps_inter, eps_left = split_budget(epsilon, [1, 1])
    inter_mech, left_mech = DiscreteLaplaceHistogram(eps_inter), DiscreteLaplaceHistogram(eps_left)
    exact_inter = np.ascontiguousarray(table[:n_left, :n_right])
    exact_left = table[:n_left, :].sum(axis=1)
    parts = [inter_mech.release(accountant, f"{step}: leaf intersections", exact_inter),
             left_mech.release(accountant, f"{step}: left leaf counts", exact_left)]
    return parts, [inter_mech.scale, left_mech.scale]


@dataclass(frozen=True)
class _Statement:
    """What states the redescriptions: the released parts, their scales, the table built
    from them, its sum's noise variance and the data size ``n̂``."""

    parts: list[np.ndarray]
    scales: list[float]
    table: np.ndarray
    table_variance: float
    n_hat: float


@dataclass(frozen=True)
class _Layout:
    """How released parts make extraction's table: the exact cells, or the paper's counts."""

    counts: str
    #: Cells mode: the leaves of each tree known to be empty (their cells are 0).
    empty: tuple[np.ndarray, np.ndarray] | None

    def empty_side(self, side: int) -> np.ndarray | None:
        return None if self.empty is None else self.empty[side]

    def build(self, parts: list[np.ndarray], clip: bool = True) -> np.ndarray:
        """The table of released (or simulated, ``clip=False``) parts."""
        if self.counts == "paper":
            return _paper_table(parts[0], parts[1], clip)
        # No clipping of cells: sums of unbiased noisy cells stay unbiased
        # (clipping the many empty cells at 0 would inflate n̂ and every support).
        table = np.array(parts[0], dtype=np.float64)
        table[..., np.flatnonzero(self.empty[0]), :] = 0.0
        table[..., :, np.flatnonzero(self.empty[1])] = 0.0
        return table

    def free(self, shape: tuple[int, ...]) -> np.ndarray | None:
        """Cells mode: the cells not known to be empty (``None`` in the paper's mode)."""
        if self.counts == "paper":
            return None
        free = np.ones(shape, dtype=bool)
        free[np.flatnonzero(self.empty[0]), :] = False
        free[:, np.flatnonzero(self.empty[1])] = False
        return free

    def state(self, parts: list[np.ndarray], scales: list[float], data_size: tuple[float, float] | None
              ) -> _Statement:
        """The table of ``parts`` and its data size ``n̂`` (post-processing).

        The table's own estimate of the data size is the sum of the last release (all
        cells, or the paper's left-leaf counts): a sum of independent noisy cells,
        combined with a separate count (``data_size``) if there is one; the cells are
        then made consistent with ``n̂``.
        """
        table = self.build(parts)
        free = self.free(table.shape)
        n_free = int(free.sum()) if free is not None else np.size(parts[-1])
        table_variance = n_free * discrete_laplace_variance(scales[-1])
        n_hat, _ = combine_estimates(float(table.sum()), table_variance, data_size)
        if free is not None and data_size is not None:
            table = consistent_cells(table, free, n_hat)
        return _Statement(parts, scales, table, table_variance, n_hat)


def _intervals(combinations: list[LeafCombination], statement: _Statement, layout: _Layout,
               units: tuple[np.ndarray, np.ndarray], constraints: Constraints, opts: ExtractionOptions
               ) -> list[dict]:
    """Each combination's intervals, from tables simulated around the stating release.

    The data size is simulated as it was estimated: from the simulated table's sum
    and, if there is one, a simulated separate count (same variance). Without a
    held-back share the same noise chose these combinations, so their Jaccard
    intervals are widened to the selection-aware band (:mod:`.selection_bands`).
    """
    draws = layout.build([simulate_tables(r, s, int(opts.n_simulations), opts.rng)
                          for r, s in zip(statement.parts, statement.scales)], clip=False)
    n_draws = simulated_sizes(draws.sum(axis=(1, 2)), statement.table_variance, opts.data_size, opts.rng)
    free = layout.free(statement.table.shape)
    if free is not None and opts.data_size is not None:
        draws = consistent_cells(draws, free, n_draws)
    left_masks = np.array([c.left for c in combinations])
    right_masks = np.array([c.right for c in combinations])
    estimates = [_stats(c) for c in combinations]
    intervals = combination_intervals(draws, left_masks, right_masks, opts.confidence, n_rows=n_draws,
                                      estimates=estimates, max_pvalue=constraints.max_pvalue)
    if opts.reestimate_share > 0:
        return intervals
    sets = [reachable_sets(u, constraints.max_clauses, limit=MAX_BAND_PAIRS) for u in units]
    cell_variance = max(discrete_laplace_variance(scale) for scale in statement.scales)
    critical, candidates = selection_critical_value(
        draws, n_draws, statement.table, statement.n_hat, sets[0], sets[1], constraints, opts.confidence,
        cell_variance, max_width=opts.prune_width, width_floor=opts.prune_floor, excess_floor=opts.prune_excess_floor,
        n_candidates=count_reachable(units[0], constraints.max_clauses) * count_reachable(units[1],
                                                                                         constraints.max_clauses))
    return selection_aware_intervals(intervals, estimates, left_masks, right_masks, cell_variance, critical,
                                     candidates)
