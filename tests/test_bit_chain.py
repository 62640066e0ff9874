"""The chain on row bitsets (:mod:`dprm.trees._bit_kernels`) is the chain on the row layout.

* :func:`split_bitsets` against the tests written out row by row, with missing
  values, Boolean, categorical and numeric splits, at row counts on and off a
  multiple of 64;
* a :class:`~dprm.trees.private.ChainJob` on either kernel (the same draws) leaves the
  same final state: splits, cells, class counts, the other tree's classes, steps and
  accepted steps, for paired and single-tree chains, every score, depths 1 to 5,
  the variance stop, and a chain run in chunks; and that state is a recount of its
  trees from scratch.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_view

from dprm.data.literal_index import LiteralIndex
from dprm.privacy import Accountant, MetropolisHastings, SeededNoise
from dprm.trees import private
from dprm.trees._bit_kernels import split_bitsets
from dprm.trees.private import ChainJob, ChainTrace, _ChainSpace, _counts, leaf_classes
from dprm.trees.targets import target_from_attribute

#: The memory bound of the bitset kernel as shipped (the tests set it to -1 for the layout kernel).
BIT_CHAIN_BYTES = private.BIT_CHAIN_BYTES


def spaces_and_target(seed: int, n: int, missing: float = 0.2, max_splits: int = 5):
    rng = np.random.default_rng(seed)
    left, right = random_view(rng, n, "left", missing), random_view(rng, n, "right", missing)
    spaces = [_ChainSpace(LiteralIndex(v, mode="private", max_splits=max_splits), np.dtype(np.uint8))
              for v in (left, right)]
    target, n_classes = target_from_attribute(right["right_c1"])
    return spaces, target, n_classes


def rows_of(words: np.ndarray, n_rows: int) -> np.ndarray:
    """The rows a bitset holds (bit ``r % 64`` of word ``r // 64``), as a Boolean mask."""
    bits = (words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    return bits.reshape(-1)[:n_rows].astype(bool)


@pytest.mark.parametrize(("seed", "n_rows"), [(0, 301), (1, 256), (2, 1)])
def test_split_bitsets_are_the_tests_row_by_row(seed: int, n_rows: int) -> None:
    spaces, _, _ = spaces_and_target(seed, n_rows, max_splits=7)
    for space in spaces:
        holds, absent = split_bitsets(space.codes, space.missing, space.splits, space.starts, space.sizes)
        assert holds.shape == (len(space.splits), -(-n_rows // 64))
        assert space.splits[:, 2].any() and not space.splits[:, 2].all()  # numeric and not
        for attribute in range(space.codes.shape[0]):
            values = space.codes[attribute]
            assert np.array_equal(rows_of(absent[attribute], n_rows), values == space.missing)
            # bits past the last row stay clear
            assert not (rows_of(absent[attribute], 64 * absent.shape[1])[n_rows:]).any()
        for s, (attribute, code, numeric) in enumerate(space.splits):
            values = space.codes[attribute]
            expected = (values != space.missing) & (values <= code if numeric else values == code)
            assert np.array_equal(rows_of(holds[s], n_rows), expected)


def final_state(bits: bool, monkeypatch, seed: int, n_rows: int, depth: int, paired: bool, score_kind: int,
                epsilon: float, stop: str, variance_threshold: float, chunked: bool):
    """Prepare and run one chain on the chosen kernel; its final state."""
    monkeypatch.setattr(private, "BIT_CHAIN_BYTES", BIT_CHAIN_BYTES if bits else -1)
    spaces, target, n_classes = spaces_and_target(seed, n_rows)
    sensitivity, score_range = (2, None) if score_kind == 0 else private._PAIR_SCORE_MECHANISMS[
        {3: "counts", 1: "gini", 2: "paper"}[score_kind]][1:]
    accountant = Accountant(1e9, SeededNoise(np.random.default_rng(seed)))
    chain = MetropolisHastings(epsilon, sensitivity, score_range, data_dependent_stop=stop == "variance").start(
        accountant, "chain")
    trace = ChainTrace()
    job = ChainJob((spaces[0], spaces[1] if paired else None), target, n_classes, depth, chain,
                   np.random.default_rng(seed + 1), 600, score_kind, stop, variance_threshold, 40, trace)
    assert job.bitsets == bits
    trees = job.run((lambda steps: None) if chunked else None)
    nodes = [n.copy() for n in job.nodes[: 1 + paired]]
    # the state the chain leaves is a recount of its trees (cells, counts, the other tree's classes)
    n_positions = 2 ** (depth + 1) - 1
    cells = [space.cells(n, depth) for space, n in zip(spaces, nodes)]
    arguments = job.arguments
    state_positions = (12, 13, 14, 15, 17, 18, 19) if bits else (12, 13, 16, 17, 19, 22, 23)
    _, cell_a, counts_a, target_a, cell_b, counts_b, target_b = (arguments[p] for p in state_positions)
    assert np.array_equal(cell_a, cells[0])
    assert np.array_equal(counts_a, _counts(cells[0], target_a.astype(np.int64), n_positions, n_classes))
    if paired:
        assert np.array_equal(target_b, leaf_classes(cells[0], depth))
        assert np.array_equal(cell_b, cells[1])
        assert np.array_equal(counts_b, _counts(cells[1], target_b.astype(np.int64), n_positions, 2**depth))
    return ([n.tolist() for n in nodes], cell_a.tolist(), counts_a.tolist(), cell_b.tolist(), counts_b.tolist(),
            target_b.tolist(), trace.steps, trace.accepted, [t.splits for t in trees])


@pytest.mark.parametrize(
    ("seed", "n_rows", "depth", "paired", "score_kind", "epsilon", "stop", "chunked"),
    [
        (0, 301, 1, True, 3, 0.5, "fixed", False),
        (1, 256, 2, True, 1, 5.0, "fixed", False),
        (2, 300, 3, True, 2, 50.0, "fixed", True),
        (3, 517, 4, True, 3, 2.0, "fixed", False),
        (4, 190, 5, True, 3, 1.0, "fixed", False),
        (5, 301, 1, False, 0, 1.0, "fixed", False),
        (6, 333, 3, False, 0, 5.0, "fixed", True),
        (7, 400, 5, False, 0, 0.5, "fixed", False),
        (8, 301, 3, True, 3, 1.0, "variance", False),
        (9, 301, 4, False, 0, 1.0, "variance", True),
    ],
)
def test_the_bitset_chain_is_the_layout_chain(monkeypatch, seed, n_rows, depth, paired, score_kind, epsilon, stop,
                                              chunked) -> None:
    # a threshold (scores in rows) that stops the variance chains part-way
    threshold = 20.0 if stop == "variance" else 0.005
    layout = final_state(False, monkeypatch, seed, n_rows, depth, paired, score_kind, epsilon, stop, threshold,
                         chunked)
    bits = final_state(True, monkeypatch, seed, n_rows, depth, paired, score_kind, epsilon, stop, threshold,
                       chunked)
    assert bits == layout
    steps, accepted = layout[6], layout[7]
    assert 0 < accepted < steps or stop == "variance"  # the fixed chains both accept and reject
    if stop == "variance":
        assert steps < 600  # the stop ended the chain
