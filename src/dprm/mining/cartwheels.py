"""CARTwheels: non-private redescription mining by alternating decision trees.

Ramakrishnan et al. (2004), in the alternation scheme of the tree-based paper
(section 4.3) without privacy: the non-private baseline the private miners are
compared with.

For each of ``init_trials`` trials:

1. pick a random attribute of either view; its values (Boolean, categories, or
   Freedman–Diaconis bins of a numeric attribute) are the initial classes;
2. grow a greedy Gini tree of depth ``depth`` on the *other* view predicting them;
3. ``alternations`` times: the leaves of the last tree are the classes of a new tree
   on the opposite view; each new tree and the previous one form a pair with
   matching leaves, from which redescriptions are extracted
   (:mod:`dprm.mining.extraction`) with exact counts.

Every statistic in the output is exact and re-evaluable from the queries alone.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from dprm.data.attributes import AttributeKind, TwoViewData, View, require_attributes
from dprm.data.cut_points import linear_percentiles
from dprm.data.grid import grid_points
from dprm.data.literal_index import LiteralIndex
from dprm.engine import CountingEngine, as_engine
from dprm.engine.value_statistics import ValueStatistics
from dprm.engine.workers import ShardWorkers
from dprm.errors import ParameterError
from dprm.mining.base import (
    ALTERNATIONS,
    DEPTH,
    INIT_TRIALS,
    MAX_CLAUSES,
    MAX_PVALUE,
    MAX_ROWS,
    MAX_SPLITS_TREES,
    MAX_SUPPORT,
    MIN_JACCARD,
    MIN_SUPPORT_ROWS,
    Miner,
    Param,
    Progress,
    ProgressCallback,
    not_private_block,
    parameter_table,
)
from dprm.mining.cartwheel_rows import CartwheelRows, ShardedGreedyRows
from dprm.mining.extraction import extract_combinations
from dprm.mining.independence import with_independence
from dprm.mining.ranking import finding_key
from dprm.params import as_generator
from dprm.queries import Redescription, RedescriptionStats, canonical_key, p_value
from dprm.trees.greedy import grow_greedy_tree
from dprm.trees.leaf_queries import TreeQueries, node_cells
from dprm.trees.targets import freedman_diaconis_rule
from dprm.trees.tree import Tree

__all__ = ["CartWheels"]


def _without_rows(view: View) -> View:
    """``view``'s schema with no rows (the driver's literal indexes read splits and thresholds only)."""
    return replace(view, attributes=[replace(a, values=a.values[:0]) for a in view.attributes])


class CartWheels(Miner):
    """Non-private CARTwheels miner.

    Every parameter's meaning, unit and allowed values are in
    ``CartWheels.parameter_specs`` (``dprm mine --help`` shows them).

    Parameters
    ----------
    depth : int
        Depth of the trees (d), 1 to 6.
    init_trials : int
        Number of initial targets (InTr).
    alternations : int
        Number of alternations per initial target (RMIter).
    max_clauses : int
        Disjunctions added per side of a simple redescription.
    min_support : float
        Smallest intersection, in rows.
    max_support : float
        Largest support of either query, as a share of the rows.
    min_jaccard, max_pvalue : float
        The rest of the constraints Γ (see :class:`~dprm.mining.extraction.Constraints`).
    max_splits : int
        Maximum number of thresholds per numeric attribute.
    min_leaf : int
        Minimum number of rows in each branch of a split.

    Notes
    -----
    Progress units (:meth:`work`): trees, ``InTr · (RMIter + 1)``; each tree after
    the first of a trial includes the extraction from its pair.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.datasets import make_planted
    >>> from dprm.data import load_two_view
    >>> planted = make_planted(600, n_planted=1, random_state=0)
    >>> data = load_two_view(planted.left, planted.right)
    >>> miner = CartWheels(init_trials=2).fit(data, rng=np.random.default_rng(0))
    >>> miner.redescriptions_[0].stats.jaccard > 0.7
    True
    >>> miner.privacy_["guarantee"], miner.privacy_["private"], miner.privacy_["reasons"]
    ('none', False, ['cartwheels is not a private algorithm: every statistic is exact'])
    """

    algorithm = "cartwheels"
    parameter_specs = parameter_table(
        replace(DEPTH, high=6, why="extraction compares every pair of leaf sets of a tree pair: memory grows as "
                                   "16^depth, up to 7 GB at depth 6"),
        INIT_TRIALS,
        ALTERNATIONS,
        MAX_CLAUSES,
        MIN_SUPPORT_ROWS,
        MAX_SUPPORT,
        MIN_JACCARD,
        MAX_PVALUE,
        replace(MAX_SPLITS_TREES, help="Split points per numeric attribute, at quantiles of its values"),
        Param("min_leaf", "Fewest rows (with a class) on each side of a split of a greedy tree", "int",
              unit="rows", low=1, high=MAX_ROWS, why="more rows than any table in memory"),
    )

    def __init__(
        self,
        *,
        depth: int = 4,
        init_trials: int = 20,
        alternations: int = 3,
        max_clauses: int = 3,
        min_support: float = 10,
        max_support: float = 0.8,
        min_jaccard: float = 0.1,
        max_pvalue: float = 0.01,
        max_splits: int = 32,
        min_leaf: int = 5,
    ) -> None:
        self._store(locals())

    def work(self) -> int:
        """Progress total: the trees of a run, ``InTr · (RMIter + 1)``."""
        return self.init_trials * (self.alternations + 1)

    #: Counts only through the engine (:mod:`dprm.mining.cartwheel_rows`): it runs sharded with the in-process output.
    counts_through_engine = True

    def fit(self, data: TwoViewData | CountingEngine, *, accountant=None, rng: np.random.Generator | None = None,
            progress: ProgressCallback | None = None) -> "CartWheels":
        """Mine redescriptions of ``data``; ``accountant`` is unused (nothing is private).

        ``data`` is a dataset or a counting engine (:mod:`dprm.engine`, e.g. the rows
        sharded on Ray): the trees are grown from counts summed over the shards
        (:mod:`dprm.mining.cartwheel_rows`) on thresholds merged exactly from them
        (:mod:`dprm.engine.value_statistics`), so the output is the same whatever the
        engine. ``progress(done, total)`` is told the trees grown (:meth:`work`).
        """
        self._forget_fit()
        self.check_parameters()
        constraints = self.constraints()
        tracker = Progress(progress, self.work())
        rng = as_generator(rng)
        engine = as_engine(data)
        schema = engine.schema
        require_attributes(schema.views)
        thresholds = engine.data_thresholds(self.max_splits)
        # the driver's indexes: the splits and thresholds only (the rows stay with the workers)
        indexes = [LiteralIndex(_without_rows(view), mode="data", max_splits=self.max_splits, thresholds=given)
                   for view, given in zip(schema.views, thresholds)]
        workers = engine.workers(partial(CartwheelRows, thresholds=thresholds, max_splits=self.max_splits))
        try:
            found = self._mine(engine, indexes, workers, constraints, tracker, rng)
        finally:
            workers.close()
        self.redescriptions_ = sorted((with_independence(r, engine.n_rows) for r in found.values()), key=finding_key)
        self.privacy_ = not_private_block("cartwheels is not a private algorithm: every statistic is exact")
        self.notes_ = []
        tracker.finish()
        return self

    def _mine(self, engine: CountingEngine, indexes: list[LiteralIndex], workers: ShardWorkers,
              constraints, tracker: Progress, rng: np.random.Generator) -> dict[tuple, Redescription]:
        schema = engine.schema
        found: dict[tuple, Redescription] = {}
        # Non-private: the attributes without missing values may be read off the data,
        # so that e.g. ¬[B = false] and B (equal on complete B) are one redescription.
        missing = workers.sum("missing_counts")
        complete = frozenset(a.name for view, counts in zip(schema.views, missing)
                             for a, count in zip(view.attributes, counts) if count == 0)
        n_attributes = [len(schema.left), len(schema.right)]
        for trial in range(self.init_trials):
            pick = int(rng.integers(sum(n_attributes)))
            source = 0 if pick < n_attributes[0] else 1
            position = pick - source * n_attributes[0]
            n_classes = self._attribute_target(schema, workers, source, position)
            side = 1 - source
            trees: list[Tree | None] = [None, None]
            for step in range(self.alternations + 1):
                tree = grow_greedy_tree(indexes[side], None, n_classes, self.depth, min_leaf=self.min_leaf,
                                        rows=ShardedGreedyRows(workers, side))
                if tree.n_leaves < 2:
                    break
                trees[side] = tree
                workers.call("finish_tree", side, tree)  # its cells kept; its leaves the next target
                if step > 0:
                    table = workers.sum("cell_table", trees[0].n_cells, trees[1].n_cells)
                    self._extract(engine.n_rows, indexes, trees, table, constraints, found, complete)
                tracker.advance(1)
                n_classes = max(tree.n_leaves, 2)  # target_from_leaves
                side = 1 - side
            tracker.advance_to((trial + 1) * (self.alternations + 1))  # a trial that stopped early
        return found

    def _attribute_target(self, schema: TwoViewData, workers: ShardWorkers, side: int, position: int) -> int:
        """Make attribute ``position`` of view ``side`` the workers' target; returns its number of classes.

        The same classes as :func:`~dprm.trees.targets.target_from_attribute` on all
        rows: a numeric attribute in Freedman–Diaconis bins between its smallest and
        largest value (the quartiles from order statistics merged exactly over the
        shards, :class:`~dprm.engine.value_statistics.ValueStatistics`); Boolean values
        and categories as classes, as many as the largest code over the shards + 1
        (at least 2).
        """
        attribute = schema.views[side].attributes[position]
        if attribute.kind is not AttributeKind.NUMERIC:
            workers.call("attribute_target", side, attribute.name, None)
            return max(max(workers.call("largest_code", side, attribute.name)) + 1, 2)
        statistics = ValueStatistics(workers)
        summary = statistics.summary(side, position, 1)
        n_bins = 2
        if summary.count >= 2:
            def halved(ranks: np.ndarray) -> np.ndarray:
                return statistics.order_statistics([(side, position, summary, ranks)])[0] / 2

            half_q75, half_q25 = linear_percentiles(summary.count, np.array([75, 25]), halved)
            n_bins = freedman_diaconis_rule(summary.count, half_q75, half_q25, summary.low, summary.high)
        edges = grid_points(summary.low, summary.high, n_bins - 1)
        workers.call("attribute_target", side, attribute.name, edges)
        return n_bins

    def _extract(self, n_rows, indexes, trees, table, constraints, found, complete) -> None:
        units = [node_cells(trees[s])[1] for s in (0, 1)]
        combinations = extract_combinations(table, constraints, *units)
        if not combinations:
            return
        queries = [TreeQueries(trees[s], indexes[s]) for s in (0, 1)]
        counts = np.array([[c.support_left, c.support_right, c.intersection] for c in combinations])
        p_values = p_value(counts[:, 2], counts[:, 0], counts[:, 1], n_rows)
        for c, (support_left, support_right, intersection), pv in zip(combinations, counts, p_values):
            left = queries[0].union(c.left, c.left_negated)
            right = queries[1].union(c.right, c.right_negated)
            key = (canonical_key(left, complete), canonical_key(right, complete))
            if key in found:
                continue
            # Exact: the cells partition the rows and each query is a union of cells
            # (the tests re-evaluate the queries on the data to check this).
            union = support_left + support_right - intersection
            stats = RedescriptionStats(
                int(support_left), int(support_right), int(intersection), int(union),
                float(intersection / union), float(pv),
            )
            found[key] = Redescription(left, right, stats).normalized(complete)
