"""The compiled chain's row layout and its shard split, against brute-force recounts.

* a single step (:func:`shard_delta`, :func:`shard_commit`) on random trees and random
  proposals, with missing values, equals a recount from scratch;
* whole chains (paired and single-tree, every score) equal a brute-force chain that
  recounts every proposal from scratch with the same pre-drawn numbers;
* the same chain run over 2 or 3 shards (:mod:`dprm.trees.chain_shards`) equals the
  in-process one.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_view

from dprm.data.literal_index import LiteralIndex
from dprm.trees._kernels import (
    accepts,
    chain_score,
    propose,
    run_chain,
    shard_commit,
    shard_delta,
)
from dprm.trees.chain_shards import ChainShard, run_sharded_chain
from dprm.trees.layout import preorder, tree_layout
from dprm.trees.private import _ChainSpace, _counts, leaf_classes
from dprm.trees.targets import target_from_attribute


def spaces_and_target(seed: int, n: int = 240, missing: float = 0.2):
    rng = np.random.default_rng(seed)
    left, right = random_view(rng, n, "left", missing), random_view(rng, n, "right", missing)
    spaces = [_ChainSpace(LiteralIndex(v, mode="private", max_splits=5), np.dtype(np.uint8)) for v in (left, right)]
    target, n_classes = target_from_attribute(right["right_c1"])
    # int8 classes: the type of the miners' chains (dprm.trees.private, ChainShard), which warm-cache compiles
    return rng, spaces, target.astype(np.int8), n_classes


def recount(spaces, nodes, target, n_classes, depth):
    """Cells and counts of both trees from scratch (routing every row from the root)."""
    cells = [space.cells(n, depth) for space, n in zip(spaces, nodes)]
    target_b = leaf_classes(cells[0], depth)
    n_positions = 2 ** (depth + 1) - 1
    return cells, target_b, [_counts(cells[0], target, n_positions, n_classes),
                             _counts(cells[1], target_b, n_positions, 2**depth)]


@pytest.mark.parametrize("seed", range(4))
def test_a_step_changes_the_counts_by_a_recount_and_keeps_the_layout(seed: int) -> None:
    rng, spaces, target, n_classes = spaces_and_target(seed)
    depth = 3
    rank, end = preorder(depth)
    nodes = [space.random_nodes(depth, rng) for space in spaces]
    for _ in range(40):
        cells, target_b, counts = recount(spaces, nodes, target, n_classes, depth)
        cell = [c.astype(np.uint8) for c in cells]
        target_b = target_b.astype(np.int8)
        side, node = int(rng.integers(2)), int(rng.integers(2**depth - 1))
        new = int(rng.integers(len(spaces[side].splits)))
        proposed = [n.copy() for n in nodes]
        proposed[side][node] = new
        _, new_target_b, new_counts = recount(spaces, proposed, target, n_classes, depth)
        table = spaces[side].splits[nodes[side]]
        attribute, code, numeric = table[:, 0].copy(), table[:, 1].copy(), table[:, 2] == 1
        order, offset = tree_layout(cell[side], rank)
        delta = [np.zeros_like(c) for c in counts]
        moved_rows, moved_cells = np.empty(240, np.int32), np.empty(240, np.int64)
        moved_flags = np.zeros(240, np.uint8)
        own_target, other = (target, 1) if side == 0 else (target_b, 0)
        other_target = target_b if side == 0 else target
        split = spaces[side].splits[new]
        count = shard_delta(spaces[side].codes, spaces[side].missing, cell[side], order, offset, attribute, code,
                            numeric, own_target, cell[other], other_target, side == 0, rank, end, depth,
                            node, split[0], split[1], split[2] == 1, delta[side], delta[other], moved_rows,
                            moved_cells, moved_flags)
        assert np.array_equal(counts[0] + delta[0], new_counts[0])
        assert np.array_equal(counts[1] + delta[1], new_counts[1])
        shard_commit(cell[side], order, offset, attribute, code, numeric, other_target, side == 0,
                     rank, end, depth, node, split[0], split[1], split[2] == 1, moved_rows, moved_cells, moved_flags,
                     count, np.empty(241, np.int32), np.empty(3 * rank.size + 1, np.int64))
        nodes = proposed
        cells, _, _ = recount(spaces, nodes, target, n_classes, depth)
        assert np.array_equal(cell[side], cells[side])
        assert np.array_equal(target_b, new_target_b)
        assert np.array_equal(np.sort(order), np.arange(240))  # a permutation, cells in pre-order
        assert np.array_equal(np.repeat(np.arange(rank.size), np.diff(offset)), rank[cell[side][order]])
        assert (attribute[node], code[node], numeric[node]) == (split[0], split[1], split[2] == 1)


def chain_inputs(seed: int, paired: bool, steps: int, scale: float):
    rng, spaces, target, n_classes = spaces_and_target(seed)
    depth = 3
    nodes = [space.random_nodes(depth, rng) for space in spaces]
    if not paired:
        spaces[1], nodes[1] = spaces[0], spaces[0].random_nodes(depth, rng)
    n_choices = (2 if paired else 1) * (2**depth - 1)
    draws = (rng.integers(n_choices, size=steps), rng.random(steps), rng.random(steps), rng.random(steps),
             np.log(rng.random(steps)))
    return spaces, nodes, target, n_classes, depth, draws, scale


def brute_force_chain(spaces, nodes, target, n_classes, depth, draws, scale, paired, score_kind):
    """The chain with every proposal recounted from scratch: the reference."""
    nodes = [n.copy() for n in nodes]
    labelled, n_rows = float((target >= 0).sum()), float(target.size)
    _, _, counts = recount(spaces, nodes, target, n_classes, depth)
    score = chain_score(counts[0], counts[1], score_kind, n_rows, labelled)
    accepted = 0
    choice, local_u, attribute_u, split_u, log_u = draws
    tables = [(s.splits, s.starts, s.sizes, s.usable) for s in spaces]
    for i in range(choice.size):
        side, node, new, log_ratio = propose(i, paired, 2**depth - 1, choice, local_u, attribute_u, split_u, 0.5,
                                             nodes[0], *tables[0], nodes[1], *tables[1])
        if new == nodes[side][node]:
            accepted += 1
            continue
        proposed = [n.copy() for n in nodes]
        proposed[side][node] = new
        _, _, new_counts = recount(spaces, proposed, target, n_classes, depth)
        new_score = chain_score(new_counts[0], new_counts[1], score_kind, n_rows, labelled)
        if accepts(log_u[i], new_score, score, scale, log_ratio):
            accepted += 1
            nodes, score = proposed, new_score
    return nodes, accepted


def compiled_chain(spaces, nodes, target, n_classes, depth, draws, scale, paired, score_kind):
    nodes = [n.copy() for n in nodes]
    cells, target_b, counts = recount(spaces, nodes, target, n_classes, depth)
    cells = [c.astype(np.uint8) for c in cells]
    rank, _ = preorder(depth)
    layouts = [tree_layout(c, rank) for c in cells]
    target_b = target_b.astype(np.int8)
    steps = draws[0].size
    done, accepted = run_chain(
        spaces[0].codes, spaces[0].missing, spaces[0].splits, spaces[0].starts, spaces[0].sizes, spaces[0].usable,
        spaces[1].codes, spaces[1].missing, spaces[1].splits, spaces[1].starts, spaces[1].sizes, spaces[1].usable,
        nodes[0], cells[0], *layouts[0], counts[0], target.copy(), nodes[1], cells[1], *layouts[1], counts[1],
        target_b, paired, score_kind, float(target.size), float((target >= 0).sum()), depth, scale, *draws, 0.5,
        0, 0.0, 0, steps, np.zeros(1))
    assert done == steps
    # the state it leaves is a recount of its trees
    new_cells, new_target_b, new_counts = recount(spaces, nodes, target, n_classes, depth)
    for k in range(2 if paired else 1):
        assert np.array_equal(cells[k], new_cells[k])
        assert np.array_equal(counts[k], new_counts[k])
    if paired:
        assert np.array_equal(target_b, new_target_b)
    return nodes, accepted


@pytest.mark.parametrize(("paired", "score_kind", "scale"), [(True, 3, 3.0), (True, 1, 1.0), (True, 2, 0.01),
                                                            (False, 0, 2.0)])
def test_the_compiled_chain_is_the_brute_force_chain(paired: bool, score_kind: int, scale: float) -> None:
    inputs = chain_inputs(7, paired, 300, scale)
    expected_nodes, expected_accepted = brute_force_chain(*inputs, paired, score_kind)
    nodes, accepted = compiled_chain(*inputs, paired, score_kind)
    assert 0 < accepted < 300  # both accepted and rejected steps
    assert accepted == expected_accepted
    assert all(np.array_equal(a, b) for a, b in zip(nodes[: 1 + paired], expected_nodes[: 1 + paired]))


@pytest.mark.parametrize(("paired", "score_kind", "n_shards"), [(True, 3, 2), (True, 1, 3), (False, 0, 3)])
def test_a_chain_over_shards_is_the_chain_over_all_rows(paired: bool, score_kind: int, n_shards: int) -> None:
    spaces, nodes, target, n_classes, depth, draws, scale = chain_inputs(11, paired, 400, 2.0)
    expected_nodes, expected_accepted = compiled_chain(spaces, nodes, target, n_classes, depth, draws, scale,
                                                       paired, score_kind)
    # rows dealt at random into shards, each with its own copy of its codes
    dealt = np.random.default_rng(0).integers(n_shards, size=target.size)
    shards = []
    for k in range(n_shards):
        rows = np.flatnonzero(dealt == k)
        shards.append(ChainShard(spaces[0].codes[:, rows].copy(), spaces[0].missing,
                                 spaces[1].codes[:, rows].copy(), spaces[1].missing, spaces[0].splits,
                                 spaces[1].splits, nodes[0], nodes[1], target[rows], depth, paired))
    node_split = [n.copy() for n in nodes]
    tables = [(s.splits, s.starts, s.sizes, s.usable) for s in spaces]
    steps, accepted = run_sharded_chain(shards, n_classes, *tables[0], *tables[1], node_split[0], node_split[1],
                                        paired, score_kind, float(target.size), float((target >= 0).sum()), depth,
                                        scale, *draws, 0.5)
    assert steps == 400 and 0 < accepted < 400
    assert accepted == expected_accepted
    assert all(np.array_equal(a, b) for a, b in zip(node_split[: 1 + paired], expected_nodes[: 1 + paired]))
    # each shard's cells are the recount of its rows
    cells, _, _ = recount(spaces, node_split, target, n_classes, depth)
    for k, shard in enumerate(shards):
        assert np.array_equal(shard.cell[0], cells[0][dealt == k])
