"""The rows of an MCMC tree chain split into shards, and a driver that adds them up.

:func:`dprm.trees._kernels.run_chain` runs a whole chain over rows in one process.
For rows spread over several processes or machines, each step splits into
(a) shard-local :func:`~dprm.trees._kernels.shard_delta` (the change of the class
counts that this shard's rows make under a proposal), (b) the driver's decision from
the summed changes, and (c) shard-local :func:`~dprm.trees._kernels.shard_commit`.
A :class:`ChainShard` holds one shard's rows of both trees of a chain and calls (a)
and (c); :func:`run_sharded_chain` is the reference driver: it makes the same
proposals and the same decisions from the same pre-drawn numbers as ``run_chain``,
so the chain is the same however the rows are split (the counts are integers and
their sum does not depend on the split). It is a plain Python loop over shards in
this process: a correct reference.

For rows held by a counting engine's shards (:mod:`dprm.engine.workers`), a
:class:`ShardedChainJob` is the driver's half of a chain (the same draws as the
in-process :class:`~dprm.trees.private.ChainJob`, :mod:`dprm.trees.chain_draws`), and
:func:`run_lockstep` runs several such chains together: one round trip to the shards
carries one step of every chain (the commits of the last accepted proposals and the
new proposals), the driver sums the shards' changes and decides. The shards' side is
:class:`~dprm.mining.tree_rows.TreeRows` (one :class:`ChainShard` per chain).
"""

from __future__ import annotations

import numpy as np

from dprm.trees._kernels import (
    chain_score,
    decide,
    propose,
    shard_commit,
    shard_delta,
    variance_stop,
)
from dprm.trees.chain_draws import CHUNK_STEPS, draw_chain
from dprm.trees.compiled import route_rows
from dprm.trees.layout import preorder, tree_layout

__all__ = ["ChainShard", "run_sharded_chain", "ChainRows", "ShardedChainJob", "run_lockstep"]


def _split_arrays(splits: np.ndarray, node_split: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    table = splits[node_split]
    return table[:, 0].copy(), table[:, 1].copy(), table[:, 2] == 1


class ChainShard:
    """One shard's rows of the trees of a chain (tree ``b`` only when paired).

    Parameters
    ----------
    codes_a, codes_b : ndarray
        This shard's columns of the literal indexes' ``(attributes, rows)`` codes of
        the two views (the same array twice for a single tree).
    missing_a, missing_b : int
        Their missing codes (the largest value of the code type).
    splits_a, splits_b : ndarray
        The split tables ``(attribute, code, numeric)`` of the two views.
    node_split_a, node_split_b : ndarray
        The split id of each internal node of the chain's current trees.
    target : ndarray of int
        This shard's class of each row for tree ``a`` (-1: none).
    depth : int
        The trees' depth.

    Examples
    --------
    >>> codes = np.array([[0, 1, 1, 255]], dtype=np.uint8)   # one Boolean attribute, 4 rows
    >>> splits = np.array([[0, 1, 0]])                          # its split "= 1"
    >>> shard = ChainShard(codes, 255, codes, 255, splits, splits, np.array([0]), np.array([0]),
    ...                    np.array([0, 1, 1, 0]), depth=1, paired=False)
    >>> shard.counts(2)[0].tolist()   # cells: node 0 (dropped out), leaf 1 (= 1), leaf 2 (≠ 1)
    [[1, 0], [0, 2], [1, 0]]
    """

    def __init__(self, codes_a, missing_a, codes_b, missing_b, splits_a, splits_b, node_split_a, node_split_b,
                 target, depth: int, paired: bool = True) -> None:
        self.depth, self.paired = depth, paired
        self.codes = (codes_a, codes_b)
        self.missing = (int(missing_a), int(missing_b))
        self.rank, self.end = preorder(depth)
        first_leaf = 2**depth - 1
        self.nodes = [_split_arrays(splits_a, node_split_a), _split_arrays(splits_b, node_split_b)]
        n = codes_a.shape[1]
        rows = np.arange(n, dtype=np.int64)
        self.cell = [route_rows(codes, missing, *nodes, rows, 0, first_leaf).astype(np.uint8)
                     for codes, missing, nodes in zip(self.codes, self.missing, self.nodes)]
        self.layout = [tree_layout(cell, self.rank) for cell in self.cell]
        cell_a = self.cell[0].astype(np.int64)
        # the classes as dprm.trees.private's in-process chain holds them (int8 where they fit:
        # up to 128 classes; tree b's classes are the leaves of a, at most 128 at depth 7), so
        # the kernels' specialisations `dprm warm-cache` compiled serve the sharded chain too
        target = np.asarray(target)
        fits = target.size == 0 or (int(target.min()) >= -1 and int(target.max()) < 128)
        self.target = [target.astype(np.int8 if fits else np.int32),
                       np.where(cell_a >= first_leaf, cell_a - first_leaf, -1).astype(
                           np.int8 if first_leaf + 1 <= 128 else np.int32)]
        self.moved_rows = np.empty(n, dtype=np.int32)
        self.moved_cells = np.empty(n, dtype=np.int64)
        self.moved_flags = np.zeros(n, dtype=np.uint8)
        self.buffer = np.empty(n + 1, dtype=np.int32)
        self.sizes = np.empty(3 * self.rank.size + 1, dtype=np.int64)
        self.count = 0

    def counts(self, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """This shard's class counts per cell of tree ``a`` and of tree ``b``."""
        n_positions = self.rank.size
        out = []
        for cell, target, classes in zip(self.cell, self.target, (n_classes, 2**self.depth)):
            keep = target >= 0
            keys = cell[keep].astype(np.int64) * classes + target[keep]
            out.append(np.bincount(keys, minlength=n_positions * classes).reshape(n_positions, classes))
        return out[0], out[1]

    def delta(self, side: int, node: int, split: np.ndarray, delta_a: np.ndarray, delta_b: np.ndarray) -> None:
        """(a) Add this shard's change of the counts under the proposal to ``delta_a``/``delta_b``.

        ``split`` is the proposed split's row ``(attribute, code, numeric)``; the moved
        rows stay in this shard's buffers for :meth:`commit`.
        """
        other = 1 - side
        deltas = (delta_a, delta_b) if side == 0 else (delta_b, delta_a)
        order, offset = self.layout[side]
        self.count = shard_delta(
            self.codes[side], self.missing[side], self.cell[side], order, offset, *self.nodes[side],
            self.target[side], self.cell[other], self.target[other], self.paired and side == 0, self.rank, self.end,
            self.depth, node, int(split[0]), int(split[1]), bool(split[2] == 1), deltas[0], deltas[1],
            self.moved_rows, self.moved_cells, self.moved_flags)

    def commit(self, side: int, node: int, split: np.ndarray) -> None:
        """(c) Apply the accepted proposal whose :meth:`delta` was the last one computed."""
        order, offset = self.layout[side]
        shard_commit(self.cell[side], order, offset, *self.nodes[side], self.target[1 - side],
                     self.paired and side == 0, self.rank, self.end, self.depth, node, int(split[0]), int(split[1]),
                     bool(split[2] == 1), self.moved_rows, self.moved_cells, self.moved_flags, self.count, self.buffer,
                     self.sizes)


def run_sharded_chain(shards, n_classes, splits_a, starts_a, sizes_a, usable_a, splits_b, starts_b, sizes_b,
                      usable_b, node_split_a, node_split_b, paired, score_kind, n_rows, labelled, depth, scale,
                      choice, local_u, attribute_u, split_u, log_u, local_share):
    """Run a fixed-length chain over ``shards`` (the driver, (b)); returns ``(steps, accepted)``.

    The arguments are those of :func:`~dprm.trees._kernels.run_chain` without the rows
    (which the shards hold); ``node_split_a``/``node_split_b`` are updated in place.
    The counts are the sums of the shards' counts, each step's change the sum of the
    shards' changes.
    """
    n_internal = 2**depth - 1
    parts = [shard.counts(n_classes) for shard in shards]
    counts_a = sum(part[0] for part in parts)
    counts_b = sum(part[1] for part in parts)
    scratch_a, scratch_b = counts_a.copy(), counts_b.copy()
    score = chain_score(counts_a, counts_b, score_kind, n_rows, labelled)
    accepted = 0
    for i in range(choice.size):
        side, node, new, log_ratio = propose(i, paired, n_internal, choice, local_u, attribute_u, split_u, local_share,
                                             node_split_a, splits_a, starts_a, sizes_a, usable_a,
                                             node_split_b, splits_b, starts_b, sizes_b, usable_b)
        node_split = node_split_a if side == 0 else node_split_b
        if new == node_split[node]:
            accepted += 1
            continue
        split = (splits_a if side == 0 else splits_b)[new]
        delta_a, delta_b = np.zeros_like(counts_a), np.zeros_like(counts_b)
        for shard in shards:
            shard.delta(side, node, split, delta_a, delta_b)
        taken, score = decide(log_u[i], score, scale, log_ratio, counts_a, counts_b, delta_a, delta_b, scratch_a,
                              scratch_b, score_kind, n_rows, labelled)
        if taken:
            accepted += 1
            node_split[node] = new
            for shard in shards:
                shard.commit(side, node, split)
    return choice.size, accepted


# -- chains whose rows are held by a counting engine's shard workers ----------------------------


class ChainRows:
    """Where a chain's rows are: the shard workers of a counting engine, and what they hold.

    Parameters
    ----------
    workers : dprm.engine.workers.ShardWorkers
        Workers with the methods ``start_chains``, ``chain_step`` and ``end_chains``
        (:class:`dprm.mining.tree_rows.TreeRows`), each on its shard's rows.
    sides : (int, int)
        The view of tree ``a`` and of tree ``b`` (``b``'s is ``a``'s for a single tree).
    target : int
        The key under which every worker holds its rows' classes of tree ``a``.
    n_rows : int
        The number of rows of all shards (private: it enters the score only).
    """

    def __init__(self, workers, sides: tuple[int, int], target: int, n_rows: int) -> None:
        self.workers, self.sides, self.target, self.n_rows = workers, sides, target, int(n_rows)


_CHAIN_KEYS = iter(range(1, 2**62))


class ShardedChainJob:
    """A prepared chain over rows held in shards: the driver's half (:func:`run_lockstep`).

    The same draws in the same order as :class:`~dprm.trees.private.ChainJob`
    (:func:`~dprm.trees.chain_draws.draw_chain`) and the same proposals and decisions as
    :func:`~dprm.trees._kernels.run_chain`, made on the driver from the shards'
    summed counts and changes; so the chain is the chain over all rows in one process.
    """

    def __init__(self, spaces, rows: ChainRows, n_classes: int, depth: int, chain, rng, iterations: int,
                 score_kind: int, local_share: float, trace=None, variance_window: int = 0,
                 variance_threshold: float = 0.0, node_choice: str = "uniform", anchor=None) -> None:
        first, second = spaces
        self.paired = second is not None
        second = second if self.paired else first
        self.spaces, self.rows, self.depth, self.chain, self.trace = (first, second), rows, depth, chain, trace
        self.iterations, self.score_kind, self.n_classes = int(iterations), int(score_kind), int(n_classes)
        self.local_share = float(local_share)
        self.draws = draw_chain(first, second, depth, self.paired, iterations, rng, chain, node_choice, anchor)
        self.nodes = (self.draws.nodes_a, self.draws.nodes_b)
        self.key = next(_CHAIN_KEYS)
        self.spec = (self.key, rows.sides[0], rows.sides[1] if self.paired else rows.sides[0], rows.target,
                     self.n_classes, depth, self.nodes[0].copy(), self.nodes[1].copy(), first.codes.dtype.str,
                     self.paired)
        self.steps = self.accepted = 0
        # the variance stop (variance_window > 1), as run_chain keeps it: the last scores, before each step
        self.variance_window, self.variance_threshold = int(variance_window), float(variance_threshold)
        self.window = np.zeros(max(self.variance_window, 1))
        self.stopped = False

    def begin(self, counts_a: np.ndarray, counts_b: np.ndarray) -> None:
        """Take the summed counts of the starting trees."""
        self.counts = (counts_a.astype(np.int64), counts_b.astype(np.int64))
        self.scratch = (self.counts[0].copy(), self.counts[1].copy())
        self.labelled = float(self.counts[0].sum())  # every labelled row is in exactly one cell
        self.score = chain_score(self.counts[0], self.counts[1], self.score_kind, float(self.rows.n_rows),
                                 self.labelled)

    def propose(self, i: int):
        """Step ``i``'s proposal ``(side, node, split row, new split id, log ratio)``; None if it changes nothing.

        With the variance stop, the chain stops before step ``i`` when the variance of its
        last ``variance_window`` scores is below the threshold (:attr:`stopped`; the rule
        and arithmetic of :func:`~dprm.trees._kernels.run_chain`).
        """
        if variance_stop(self.window, i, self.score, self.variance_window, self.variance_threshold):
            self.stopped = True
            return None
        a, b = self.spaces
        side, node, new, log_ratio = propose(i, self.paired, 2**self.depth - 1, *self.draws.proposals[:4],
                                             self.local_share, self.nodes[0], a.splits, a.starts, a.sizes, a.usable,
                                             self.nodes[1], b.splits, *self.draws.tables_b, b.usable)
        self.steps += 1
        if new == self.nodes[side][node]:
            self.accepted += 1
            return None
        return int(side), int(node), self.spaces[side].splits[new], int(new), log_ratio

    def decide(self, i: int, proposal, delta_a: np.ndarray, delta_b: np.ndarray) -> bool:
        """Accept or reject step ``i``'s proposal from the summed changes (the rule of ``run_chain``)."""
        side, node, _, new, log_ratio = proposal
        taken, self.score = decide(self.draws.proposals[4][i], self.score, self.chain.scale, log_ratio,
                                   self.counts[0], self.counts[1], delta_a, delta_b, *self.scratch, self.score_kind,
                                   float(self.rows.n_rows), self.labelled)
        if not taken:
            return False
        self.accepted += 1
        self.nodes[side][node] = new
        return True

    def finish(self) -> list:
        """Record the chain's tests and return its tree(s)."""
        self.chain.record(self.steps, self.accepted)
        if self.trace is not None:
            self.trace.steps += self.steps
            self.trace.accepted += self.accepted
        trees = [self.spaces[0].tree(self.nodes[0], self.depth)]
        if self.paired:
            trees.append(self.spaces[1].tree(self.nodes[1], self.depth))
        return trees

    def run(self, advance=None) -> list:
        """This chain alone (:func:`run_lockstep`)."""
        return run_lockstep([self], advance)[0]




def run_lockstep(jobs: list[ShardedChainJob], advance=None, chunk: int | None = None) -> list[list]:
    """Run chains over the same shard workers in lock-step: one round trip carries a step of every chain.

    Each round trip sends the commits of the previous step's accepted proposals and
    this step's proposals of every chain (a chain whose proposal changes nothing sends
    none); every shard answers each proposal's change of its counts, and the driver
    sums them and decides. ``advance(steps)`` is told the steps done by all chains,
    about every ``chunk`` steps (default: a hundredth of the longest chain, at least :data:`CHUNK_STEPS`).
    Returns each job's tree(s) (:meth:`ShardedChainJob.finish`).
    """
    if not jobs:
        return []
    workers = jobs[0].rows.workers
    n = max(job.iterations for job in jobs)
    chunk = chunk or max(CHUNK_STEPS, -(-n // 100))
    started = workers.sum("start_chains", [job.spec for job in jobs])
    for job, (counts_a, counts_b) in zip(jobs, started):
        job.begin(counts_a, counts_b)
    commits: list = []
    reported = 0
    for i in range(n):
        waiting, proposals = [], []
        for job in jobs:
            if i < job.iterations and not job.stopped:
                proposal = job.propose(i)
                if proposal is not None:
                    waiting.append((job, proposal))
                    proposals.append((job.key, proposal[0], proposal[1], proposal[2]))
        if proposals:
            deltas = workers.sum("chain_step", commits, proposals)
            commits = []
            for (job, proposal), (delta_a, delta_b) in zip(waiting, deltas):
                if job.decide(i, proposal, delta_a, delta_b):
                    commits.append((job.key, proposal[0], proposal[1], proposal[2]))
        if advance is not None and ((i + 1) % chunk == 0 or i + 1 == n):
            done = sum(job.iterations if job.stopped else min(i + 1, job.iterations) for job in jobs)
            advance(done - reported)
            reported = done
    # (after a failure the chains' state goes with the workers, which the miner closes)
    workers.call("end_chains", [job.key for job in jobs])
    return [job.finish() for job in jobs]
