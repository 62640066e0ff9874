"""One shard's rows as the private tree miners count them: a worker of a counting engine.

A sharded run (:mod:`dprm.engine.workers`) builds one :class:`TreeRows` on every
shard's rows; the miner (:class:`~dprm.mining.private_trees.PrivateTreeMiner`) keeps
on the driver only the schema, the literal indexes without rows and the summed
answers. A worker keeps beside its rows what the requests need between round
trips, under keys the driver chooses:

* **targets**: this shard's class of every row of an initial target
  (:meth:`attribute_classes`, :meth:`literal_classes`) or of a tree's leaves
  (:meth:`leaf_classes`);
* **chains**: the rows' cells of the trees of MCMC chains
  (:class:`~dprm.trees.chain_shards.ChainShard`: :meth:`start_chains`,
  :meth:`chain_step`, :meth:`end_chains`), several chains in one round trip;
* **growing trees**: where each row is in a tree grown level by level
  (:class:`~dprm.trees.private.GrowingRows`).

Every answer is a count of rows (a histogram, a table, a change of counts), so the
driver's sum over the shards is the answer over all rows, exactly; no row, value or
row mask is ever answered.

Examples
--------
>>> from dprm.data import load_two_view
>>> from dprm.datasets import make_planted
>>> planted = make_planted(200, n_planted=1, random_state=0)
>>> rows = TreeRows(load_two_view(planted.left, planted.right, types=planted.types), max_splits=8)
>>> rows.attribute_classes(1, 0, rows.data.left.attributes[0].name, None)   # a Boolean attribute
>>> int(rows.class_histogram(1, 2).sum())
200
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dprm.data.attributes import AttributeKind, TwoViewData
from dprm.data.literal_index import LiteralIndex, Split
from dprm.mining.initial_targets import InitialTarget, Literal, split_gain_counts
from dprm.mining.pair_refinement import refinement_counts
from dprm.mining.private_extraction import leaf_pair_table
from dprm.mining.target_refinement import leaf_refinement_counts
from dprm.trees.private import GrowingRows, _ChainSpace
from dprm.trees.tree import Tree

__all__ = ["TreeRows", "ShardedGrowingRows", "binned_classes"]


def binned_classes(values: np.ndarray, kind: AttributeKind, edges: np.ndarray | None) -> np.ndarray:
    """The class of every row of an initial target attribute (``-1``: missing).

    A numeric attribute is cut at ``edges`` (equal-width bins over public bounds,
    chosen by the driver); Boolean values and categories are the classes.

    Examples
    --------
    >>> binned_classes(np.array([0.5, 2.5, np.nan]), AttributeKind.NUMERIC, np.array([1.0, 2.0])).tolist()
    [0, 2, -1]
    """
    if kind is AttributeKind.NUMERIC:
        classes = np.searchsorted(edges, values, side="right").astype(np.int64)
        classes[np.isnan(values)] = -1
        return classes
    return values.astype(np.int64)


class TreeRows:
    """The private tree miners' requests on the rows of one shard (or of all rows in-process).

    Parameters
    ----------
    data : TwoViewData
        The shard's rows, in the run's schema.
    max_splits : int
        Grid points per numeric attribute (the miner's ``max_splits``; private mode).
    """

    def __init__(self, data: TwoViewData, *, max_splits: int) -> None:
        self.data = data
        self.indexes = [LiteralIndex(view, mode="private", max_splits=int(max_splits)) for view in data.views]
        self.targets: dict[int, np.ndarray] = {}
        self.chains: dict[int, Any] = {}
        self.growing: dict[int, GrowingRows] = {}

    # -- targets ------------------------------------------------------------------------

    def attribute_classes(self, key: int, side: int, name: str, edges: np.ndarray | None) -> None:
        """Hold under ``key`` the classes of attribute ``name`` of view ``side`` (:func:`binned_classes`)."""
        attribute = self.data.views[side][name]
        self.targets[key] = binned_classes(attribute.values, attribute.kind, edges)

    def literal_classes(self, key: int, target: InitialTarget) -> None:
        """Hold under ``key`` the classes of a chosen literal target (:meth:`InitialTarget.classes`)."""
        self.targets[key] = target.classes(self.indexes[target.side])[0]

    def leaf_classes(self, key: int, side: int, tree: Tree) -> None:
        """Hold under ``key`` the leaf of every row in ``tree`` (``-1``: it dropped out)."""
        cells = tree.apply_cells(self.indexes[side])
        self.targets[key] = np.where(cells < tree.n_leaves, cells, -1)

    def forget(self, keys: list[int]) -> None:
        """Drop the targets and growing trees held under ``keys``."""
        for key in keys:
            self.targets.pop(key, None)
            self.growing.pop(key, None)

    def class_histogram(self, key: int, n_classes: int) -> np.ndarray:
        """Rows of each class of target ``key`` (for tests and checks)."""
        target = self.targets[key]
        return np.bincount(target[target >= 0], minlength=n_classes)

    def code_histogram(self, side: int, name: str) -> np.ndarray:
        """Rows of each code (threshold bin) of a numeric attribute, missing values left out."""
        index = self.indexes[side]
        position = index.view.names.index(name)
        codes = index.codes[position]
        present = codes != index.missing_code
        return np.bincount(codes[present], minlength=index.thresholds[position].size + 1)

    def gain_counts(self, side: int, target_literals: list[Literal],
                    other_literals: list[Literal]) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~dprm.mining.initial_targets.split_gain_counts` of view ``side`` against the other view."""
        return split_gain_counts(self.indexes[side], self.indexes[1 - side], target_literals, other_literals)

    def refinement_counts(self, side: int, base: Split, klass: Literal, splits: list[Split]) -> np.ndarray:
        """:func:`~dprm.mining.pair_refinement.refinement_counts` of view ``side`` against the other view."""
        return refinement_counts(self.indexes[side], base, self.indexes[1 - side], klass, splits)

    def leaf_refinement_counts(self, side: int, key: int, n_classes: int, roots: list[Split],
                               splits: list[Split]) -> np.ndarray:
        """:func:`~dprm.mining.target_refinement.leaf_refinement_counts` of view ``side`` against the classes
        held under ``key`` (a tree's leaves, :meth:`leaf_classes`)."""
        return leaf_refinement_counts(self.indexes[side], roots, splits, self.targets[key], n_classes)

    # -- MCMC chains --------------------------------------------------------------------

    def start_chains(self, specs: list[tuple]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Start chains (:attr:`ShardedChainJob.spec <dprm.trees.chain_shards.ShardedChainJob>`); their counts."""
        from dprm.trees.chain_shards import ChainShard  # numba: imported by the runs that use it only

        out = []
        for key, side_a, side_b, target, n_classes, depth, nodes_a, nodes_b, dtype, paired in specs:
            first = _ChainSpace.of(self.indexes[side_a], np.dtype(dtype))
            second = _ChainSpace.of(self.indexes[side_b], np.dtype(dtype))
            shard = ChainShard(first.codes, first.missing, second.codes, second.missing, first.splits,
                               second.splits, nodes_a, nodes_b, self.targets[target], depth, paired)
            shard.n_classes = n_classes
            self.chains[key] = shard
            out.append(shard.counts(n_classes))
        return out

    def chain_step(self, commits: list[tuple], proposals: list[tuple]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Apply the accepted ``commits`` of the last step, then this shard's change of the counts per proposal.

        Each commit and proposal is ``(chain key, side, node, split row)``.
        """
        for key, side, node, split in commits:
            self.chains[key].commit(side, node, split)
        out = []
        for key, side, node, split in proposals:
            shard = self.chains[key]
            n_positions = shard.rank.size
            delta_a = np.zeros((n_positions, shard.n_classes), dtype=np.int64)
            delta_b = np.zeros((n_positions, 2**shard.depth), dtype=np.int64)
            shard.delta(side, node, split, delta_a, delta_b)
            out.append((delta_a, delta_b))
        return out

    def end_chains(self, keys: list[int]) -> None:
        for key in keys:
            self.chains.pop(key, None)

    # -- trees grown level by level --------------------------------------------------------

    def grow(self, key: int, side: int, target: int) -> None:
        """Start a tree on view ``side`` for target ``target`` (all rows at the root)."""
        self.growing[key] = GrowingRows(self.indexes[side], self.targets[target])

    def level_counts(self, key: int, level: int, n_classes: int) -> np.ndarray:
        return self.growing[key].level_counts(level, n_classes)

    def route(self, key: int, tree: Tree, level: int) -> None:
        self.growing[key].route(tree, level)

    # -- extraction ---------------------------------------------------------------------

    def cell_table(self, left: Tree, right: Tree) -> np.ndarray:
        """:func:`~dprm.mining.private_extraction.leaf_pair_table` of a left and a right tree on this shard's rows."""
        return leaf_pair_table(left.apply_cells(self.indexes[0]), left.n_leaves,
                               right.apply_cells(self.indexes[1]), right.n_leaves)


class ShardedGrowingRows:
    """The driver's side of a tree grown level by level on the shards (for
    :func:`~dprm.trees.private.grow_exponential_tree`): the level's counts summed over
    the shards, and routing done by each shard on its rows."""

    def __init__(self, workers: Any, key: int, side: int, target: int) -> None:
        self.workers, self.key = workers, key
        workers.call("grow", key, side, target)

    def level_counts(self, level: int, n_classes: int) -> np.ndarray:
        return self.workers.sum("level_counts", self.key, level, n_classes)

    def route(self, tree: Tree, level: int) -> None:
        self.workers.call("route", self.key, tree, level)
