"""ConditionalTree: the array layout, routing of rows, marginalisation, validation."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.itemsets.tree_model import ConditionalTree


def random_tree(rng: np.random.Generator, n_columns: int, sizes: list[int], target: int,
                max_depth: int = 3) -> ConditionalTree:
    """A random multiway tree over columns other than ``target`` (no column twice on a path)."""
    feature, offset, n_children, child, counts = [], [], [], [], []
    k = sizes[target]

    def grow(used: set[int], depth: int) -> int:
        node = len(feature)
        feature.append(-1), offset.append(0), n_children.append(0)
        counts.append(list(rng.integers(0, 5, size=k).astype(float)))
        free = [c for c in range(n_columns) if c != target and c not in used]
        if depth < max_depth and free and rng.random() < 0.7:
            column = int(rng.choice(free))
            width = sizes[column] - int(rng.integers(0, 2))  # sometimes a category has no child
            feature[node], n_children[node] = column, width
            kids = [grow(used | {column}, depth + 1) for _ in range(width)]
            offset[node] = len(child)
            child.extend(kids)
        return node

    grow(set(), 0)
    weights = rng.random(len(child))
    return ConditionalTree.from_arrays(target=target, feature=feature, child_offset=offset,
                                       n_children=n_children, child=child, counts=counts, child_weight=weights)


def brute_force_proba(tree: ConditionalTree, row: np.ndarray) -> np.ndarray:
    """The module's definition, written as a plain recursion."""
    def at(node: int) -> np.ndarray:
        f = tree.feature[node]
        if f < 0:
            return tree.node_proba[node]
        code = row[f]
        kids = tree.children_of(node)
        if code >= len(kids):
            return tree.node_proba[node]
        if code >= 0:
            return at(int(kids[code]))
        weights = tree.edge_distribution(node)
        return sum(w * at(int(c)) for w, c in zip(weights, kids))
    return at(0)


@pytest.mark.parametrize("seed", range(5))
def test_predict_proba_matches_brute_force_with_given_missing_and_unseen_codes(seed) -> None:
    rng = np.random.default_rng(seed)
    sizes = [3, 2, 4, 3, 2]
    tree = random_tree(rng, 5, sizes, target=4)
    codes = np.column_stack([rng.integers(-1, s + 1, size=200) for s in sizes])
    got = tree.predict_proba(codes)
    expected = np.array([brute_force_proba(tree, row) for row in codes])
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


@pytest.mark.parametrize("seed", range(3))
def test_a_variable_not_given_is_the_edge_weighted_mixture_of_its_values(seed) -> None:
    rng = np.random.default_rng(seed)
    sizes = [3, 3, 2]
    tree = random_tree(rng, 3, sizes, target=2, max_depth=1)
    if tree.is_leaf(0):
        pytest.skip("the random tree is a single leaf")
    column = int(tree.feature[0])
    row = np.zeros((1, 3), dtype=np.int64)
    row[0, column] = -1
    mixture = sum(w * tree.predict_proba(np.where(np.arange(3) == column, v, row))[0]
                  for v, w in enumerate(tree.edge_distribution(0)))
    np.testing.assert_allclose(tree.predict_proba(row)[0], mixture)


def test_leaf_of_and_paths_agree() -> None:
    rng = np.random.default_rng(7)
    sizes = [3, 2, 4, 3]
    tree = random_tree(rng, 4, sizes, target=3)
    for leaf, conditions in tree.paths():
        assert tree.is_leaf(leaf)
        row = np.zeros((1, 4), dtype=np.int64)
        for column, code in conditions:
            row[0, column] = code
        assert tree.leaf_of(row)[0] == leaf
        np.testing.assert_allclose(tree.predict_proba(row)[0], tree.class_distribution(leaf))
    assert len(tree.paths()) == int((tree.feature < 0).sum())


def test_empty_node_borrows_its_parents_distribution_and_edges_default_to_child_totals() -> None:
    tree = ConditionalTree.from_arrays(target=1, feature=[0, -1, -1], child_offset=[0, 0, 0],
                                       n_children=[2, 0, 0], child=[1, 2], counts=[[3, 1], [2, 2], [0, 0]])
    np.testing.assert_allclose(tree.class_distribution(2), [0.75, 0.25])
    np.testing.assert_allclose(tree.edge_distribution(0), [1.0, 0.0])


@pytest.mark.parametrize("arrays", [
    dict(feature=[0, -1], child_offset=[0, 0], n_children=[2, 0], child=[1, 1], counts=[[1], [1]]),
    dict(feature=[0, -1], child_offset=[0, 0], n_children=[1, 0], child=[5], counts=[[1], [1]]),
    dict(feature=[-1], child_offset=[0], n_children=[0], child=[], counts=[[-1.0]]),
    dict(feature=[0, -1, -1], child_offset=[0, 0, 0], n_children=[1, 0, 0], child=[1], counts=[[1], [1], [1]]),
])
def test_malformed_arrays_are_refused(arrays) -> None:
    with pytest.raises(ValueError):
        ConditionalTree.from_arrays(target=1, **arrays)


@pytest.mark.parametrize("seed", range(5))
def test_target_proba_is_the_full_prediction_read_at_the_target_bit_for_bit(seed: int) -> None:
    """``target_proba`` (ISON's density of a candidate, without the (rows, K) matrix that made 32,767 single
    items of a 32,767-category column cost 32,767^2 cells) against ``predict_proba``, exactly: rows routed to
    one node, rows stopped by a code beyond a split's children, rows marginalised where a code is not given."""
    rng = np.random.default_rng(seed)
    sizes = [2, 3, 4, 5]
    tree = random_tree(rng, 4, sizes, target=3)
    codes = np.column_stack([rng.integers(-1, size + 1, size=400) for size in sizes])  # -1, and one beyond
    codes[:, 3] = rng.integers(0, sizes[3], size=400)
    full = tree.predict_proba(codes)[np.arange(400), codes[:, 3]]
    np.testing.assert_array_equal(tree.target_proba(codes), full)
