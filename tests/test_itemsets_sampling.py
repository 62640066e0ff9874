"""Drawing a chain's rows and indexing a reference sample, against plain definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprm.data.literal_index import pack_rows
from dprm.itemsets.chain import Chain, sample_chain
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.reference_sample import ReferenceSample
from test_itemsets_tree_model import random_tree


def ancestral_rows(chain: Chain, n: int, rng: np.random.Generator) -> np.ndarray:
    """The definition (:func:`sample_chain`'s notes): each tree in the chain's order takes ``n`` uniform
    draws; a row's value is how many cumulative class probabilities of its node (``leaf_of``) the draw reaches."""
    codes = np.full((n, len(chain.order)), -1, dtype=np.int64)
    for tree in chain.trees:
        u = rng.random(n)
        cumulative = np.cumsum(tree.node_proba[tree.leaf_of(codes)], axis=1)
        codes[:, tree.target] = np.minimum((u[:, None] >= cumulative).sum(axis=1), tree.n_classes - 1)
    return codes


def random_chain(rng: np.random.Generator, sizes: list[int]) -> Chain:
    """A chain over the columns in a random order, each tree testing only columns before its own."""
    order = [int(j) for j in rng.permutation(len(sizes))]
    trees = []
    for i, target in enumerate(order):
        # random_tree splits on any column but its target: relabel columns 0..i to the chain's first i + 1
        local = random_tree(rng, i + 1, [sizes[c] for c in order[:i + 1]], target=i, max_depth=4)
        feature = np.where(local.feature >= 0, np.asarray(order)[np.maximum(local.feature, 0)], -1)
        trees.append(type(local).from_arrays(target=target, feature=feature, child_offset=local.child_offset,
                                             n_children=local.n_children, child=local.child, counts=local.counts))
    return Chain(tuple(order), tuple(trees))


@pytest.mark.parametrize("sizes", [[3, 2, 4, 3, 2, 5], [3, 40, 2, 200, 17]])  # the second: a search's classes
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [0, 1, 3, 5, 997])
def test_sample_chain_draws_each_row_at_the_leaf_it_reaches(seed, n, sizes) -> None:
    """Random trees whose splits miss categories (a row stops there), rows in blocks of four and a remainder."""
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, sizes)
    expected = ancestral_rows(chain, n, np.random.default_rng(seed + 10))
    np.testing.assert_array_equal(sample_chain(chain, n, np.random.default_rng(seed + 10)), expected)


@pytest.mark.parametrize("k", [5, 17, 300])
def test_a_drawn_class_is_the_count_of_running_sums_the_draw_reaches_at_every_boundary(k) -> None:
    """More than ``_kernels._SCAN_CLASSES`` classes are found by a binary search over each node's running
    sums: the scan's class for draws exactly on a sum, between sums, on classes of probability 0, and
    for a node with a negative or NaN probability (scanned)."""
    from dprm.itemsets._kernels import _draw

    rng = np.random.default_rng(k)
    proba = rng.random(k) * (rng.random(k) < 0.6)  # many classes of probability 0
    proba /= proba.sum()
    sums = np.cumsum(proba)  # sequential, as the scan adds
    u = np.concatenate([sums, np.nextafter(sums, 0.0), np.nextafter(sums, 2.0), rng.random(200), [0.0, 1.0]])
    leaf = (np.array([-1]), np.array([0]), np.array([0]), np.array([0]))  # one leaf: feature, offsets, ways
    for node_proba in (proba, np.where(np.arange(k) == 1, -0.01, proba), np.where(np.arange(k) == 2, np.nan, proba)):
        codes = np.full((1, len(u)), -1, dtype=np.int64)
        _draw(codes, u, 0, *leaf, node_proba[None, :])
        running = np.cumsum(node_proba)
        expected = np.minimum((u[:, None] >= running[None, :]).sum(axis=1), k - 1)
        np.testing.assert_array_equal(codes[0], expected)


def test_sample_chain_of_grown_trees_follows_the_definition() -> None:
    """Trees grown from data (nodes numbered best first, not depth first)."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, 3000)
    letters = np.array(list("xyz"))
    frame = pd.DataFrame({"a": letters[a], "b": letters[(a + (rng.random(3000) < 0.2)) % 3],
                          "c": letters[rng.integers(0, 2, 3000)]})
    estimator = DensityEstimator(n_chains=2, random_state=0).fit(frame)
    for chain in estimator.chains_:
        np.testing.assert_array_equal(sample_chain(chain, 2001, np.random.default_rng(1)),
                                      ancestral_rows(chain, 2001, np.random.default_rng(1)))


@pytest.mark.parametrize("n", [1, 63, 64, 65, 300])
def test_reference_sample_holds_one_packed_bitset_per_category(n) -> None:
    """Bit r of a (column, category)'s bitset is set exactly when row r holds it; codes outside the
    column's categories (-1, or too large) set no bit."""
    rng = np.random.default_rng(n)
    sizes = [3, 1, 4]
    codes = np.column_stack([rng.integers(-1, s + 2, size=n) for s in sizes])
    sample = ReferenceSample(codes, sizes)
    masks = np.vstack([codes[:, j][None, :] == np.arange(s)[:, None] for j, s in enumerate(sizes)])
    np.testing.assert_array_equal(sample.bitsets, pack_rows(masks))
    assert sample.bitsets.dtype == np.uint64 and sample.bitsets.flags.c_contiguous
