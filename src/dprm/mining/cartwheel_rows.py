"""One shard's rows as CARTwheels counts them: a worker of a counting engine.

The non-private CARTwheels (:class:`~dprm.mining.cartwheels.CartWheels`) grows greedy
Gini trees level by level (:func:`~dprm.trees.greedy.grow_greedy_tree`), each on one
view with the other view's classes as its target, and extracts redescriptions from
the ``(left cell, right cell)`` table of each tree pair. On a sharded engine each
shard holds a :class:`CartwheelRows` on its rows, with literal indexes on the data
cut points merged over all shards (:mod:`dprm.engine.value_statistics`), and keeps
beside its rows what the next request needs: the current target of every row, where
each row is in the tree being grown, and each view's last tree's cell of every row.
The driver holds the schema, the indexes without rows and the summed answers:

* the target of a trial: the attribute's classes (numeric: bins over edges the driver
  computed from merged order statistics; Boolean and categorical: the codes, with the
  largest code over all shards for their number);
* a level of a tree: the ``(code, node, class)`` counts of every attribute; then the
  split nodes' routing;
* a finished tree: its cells, and its leaves as the next target;
* an extraction: the cell table of the two last trees.

Every answer but the largest code and the value statistics is a count of rows, so the
driver's sum is the answer over all rows, exactly.

Examples
--------
>>> from dprm.data import load_two_view
>>> from dprm.datasets import make_planted
>>> from dprm.engine import InProcessEngine
>>> planted = make_planted(300, n_planted=1, random_state=0)
>>> engine = InProcessEngine(load_two_view(planted.left, planted.right, types=planted.types))
>>> rows = CartwheelRows(engine.schema, thresholds=engine.data_thresholds(8), max_splits=8)
>>> [int(m.sum()) for m in rows.missing_counts()]
[0, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.data.literal_index import LiteralIndex
from dprm.engine.value_statistics import ValueAnswers
from dprm.engine.workers import add_answers
from dprm.mining.extraction import contingency_table
from dprm.mining.tree_rows import binned_classes
from dprm.trees.greedy import GreedyRows
from dprm.trees.tree import Tree

__all__ = ["CartwheelRows", "ShardedGreedyRows"]


class CartwheelRows(ValueAnswers):
    """CARTwheels' requests on the rows of one shard (or of all rows in-process).

    Parameters
    ----------
    data : TwoViewData
        The shard's rows, in the run's schema.
    thresholds : (list of ndarray, list of ndarray)
        Every attribute's data cut points over all rows (per view).
    max_splits : int
        The miner's ``max_splits``.
    """

    def __init__(self, data: TwoViewData, *, thresholds: Sequence[Sequence[np.ndarray]], max_splits: int) -> None:
        super().__init__(data)
        self.indexes = [LiteralIndex(view, mode="data", max_splits=int(max_splits), thresholds=list(given))
                        for view, given in zip(data.views, thresholds)]
        self.target = np.empty(0, dtype=np.int64)
        self.growing: GreedyRows | None = None
        self.cells: list[np.ndarray | None] = [None, None]

    def missing_counts(self) -> list[np.ndarray]:
        """Per view, the rows where each attribute is missing."""
        return [np.array([int(a.missing.sum()) for a in view.attributes], dtype=np.int64) for view in self.data.views]

    def largest_code(self, side: int, name: str) -> int:
        """The largest code of a Boolean or categorical attribute in this shard (-1 without rows)."""
        values = self.data.views[side][name].values
        return int(values.max()) if values.size else -1

    def attribute_target(self, side: int, name: str, edges: np.ndarray | None) -> None:
        """The classes of attribute ``name`` of view ``side`` become the target (:func:`binned_classes`)."""
        attribute = self.data.views[side][name]
        self.target = binned_classes(attribute.values, attribute.kind, edges)

    def start_tree(self, side: int) -> None:
        """Start a greedy tree on view ``side`` for the current target (all rows at the root)."""
        self.growing = GreedyRows(self.indexes[side], self.target)

    def level_counts(self, level: int, n_classes: int) -> np.ndarray:
        return self.growing.level_counts(level, n_classes)

    def route(self, tree: Tree, level: int) -> None:
        self.growing.route(tree, level)

    def finish_tree(self, side: int, tree: Tree) -> None:
        """Keep the cells of the finished ``tree`` of view ``side``; its leaves become the target."""
        self.growing = None
        cells = tree.apply_cells(self.indexes[side])
        self.cells[side] = cells
        self.target = np.where(cells < tree.n_leaves, cells, -1).astype(np.int64)

    def cell_table(self, n_left: int, n_right: int) -> np.ndarray:
        """Rows in each (left cell, right cell) of the two views' last trees."""
        return contingency_table(self.cells[0], n_left, self.cells[1], n_right)


class ShardedGreedyRows:
    """The driver's :class:`~dprm.trees.greedy.GreedyRows`: counts summed over the shards, routing on each."""

    def __init__(self, workers, side: int) -> None:
        self.workers = workers
        workers.call("start_tree", side)

    def level_counts(self, level: int, n_classes: int) -> np.ndarray:
        answers = self.workers.call("level_counts", level, n_classes)
        # each shard's counts are a new array: one is the sum, uncopied (one per category of every attribute)
        return answers[0] if len(answers) == 1 else add_answers(answers)

    def route(self, tree: Tree, level: int) -> None:
        self.workers.call("route", tree, level)
