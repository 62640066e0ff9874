"""Trees over one view: Gini criterion, greedy growth, leaves and their queries."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_view

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.data.literal_index import LiteralIndex
from dprm.queries import RedescriptionStats
from dprm.trees import criterion
from dprm.trees.criterion import GINI_SENSITIVITY, gini_quality, node_class_counts, split_qualities
from dprm.trees.greedy import grow_greedy_tree
from dprm.trees.leaf_queries import TreeQueries, leaf_query, node_cells
from dprm.trees.targets import freedman_diaconis_bins, target_from_attribute
from dprm.trees.tree import Tree


def random_tree(rng: np.random.Generator, index: LiteralIndex, depth: int) -> Tree:
    splits = [index.splits[int(rng.integers(len(index.splits)))] for _ in range(2**depth - 1)]
    return Tree(depth=depth, splits=splits)


def brute_quality(index: LiteralIndex, split, rows: np.ndarray, target: np.ndarray, n_classes: int) -> float:
    true, false = index.split_branches(split, rows)
    missing = ~(true | false)
    labelled = target[rows] >= 0
    counts = np.zeros((3, n_classes))
    for b, mask in enumerate((true, false, missing)):
        np.add.at(counts[b], target[rows][mask & labelled], 1)
    return float(gini_quality(counts))


@pytest.mark.parametrize("parallel", [False, True])  # the histogram pass on one core / on all cores
@pytest.mark.parametrize("seed", range(4))
def test_split_qualities_match_brute_force(seed: int, parallel: bool, monkeypatch) -> None:
    monkeypatch.setattr(criterion, "PARALLEL_HISTOGRAM_CELLS", 0 if parallel else 1 << 62)
    rng = np.random.default_rng(seed)
    view = random_view(rng, 150)
    index = LiteralIndex(view, max_splits=4)
    n_nodes, n_classes = 3, 3
    node = rng.integers(-1, n_nodes, index.n_rows)
    target = rng.integers(-1, n_classes, index.n_rows)
    qualities = split_qualities(index, node, target, n_nodes, n_classes)
    assert qualities.shape == (len(index.splits), n_nodes)
    for s, split in enumerate(index.splits):
        for g in range(n_nodes):
            rows = np.flatnonzero(node == g)
            assert qualities[s, g] == pytest.approx(brute_quality(index, split, rows, target, n_classes))


def dense_from_counts(index: LiteralIndex, flat: np.ndarray, n_nodes: int, n_classes: int, quality: str):
    """The reference: every split of every attribute scored from its dense ``(code, node, class)`` counts."""
    qualities, true_sizes, false_sizes = [], [], []
    start = 0
    for attribute, n in zip(index.attributes, index.n_codes):
        n = int(n)
        hist = flat[start:start + (n + 1) * n_nodes * n_classes].reshape(n + 1, n_nodes, n_classes)
        start += hist.size
        missing, present = hist[-1], hist[:-1].sum(axis=0)
        if attribute.kind is AttributeKind.BOOLEAN:
            true = hist[1:2]
        elif attribute.kind is AttributeKind.CATEGORICAL:
            true = hist[: (1 if n == 2 else n)]
        else:
            true = np.cumsum(hist[:-2], axis=0)
        false = present[None] - true
        branches = np.stack([true, false, np.broadcast_to(missing[None], true.shape)], axis=-2)
        qualities.append(criterion.majority_quality(branches) if quality == "counts" else gini_quality(branches))
        true_sizes.append(true.sum(axis=-1))
        false_sizes.append(false.sum(axis=-1))
    return np.concatenate(qualities), np.concatenate(true_sizes), np.concatenate(false_sizes)


@pytest.mark.parametrize("seed", range(3))
def test_categories_no_row_holds_are_scored_as_the_dense_counts_score_them(seed: int) -> None:
    """Declared categories by the thousand, a few held (the split of an absent one is scored once): the
    qualities and branch sizes are those of the dense counts, bit for bit (blocks of one and of two wide
    attributes, copied slice by slice, and narrow ones)."""
    rng = np.random.default_rng(seed)
    attributes = list(random_view(rng, 300).attributes)
    for j, (declared, held) in enumerate([(6000, 5), (6000, 40), (7000, 2), (40, 3), (5, 5), (7, 0)]):
        values = rng.choice(rng.choice(declared, size=max(held, 1), replace=False), size=300).astype(np.int32)
        values[rng.random(300) < (1.0 if held == 0 else 0.1)] = -1
        categories = tuple(f"k{c}" for c in range(declared))
        attributes.append(Attribute(f"wide{j}", "left", AttributeKind.CATEGORICAL, values,
                                    Domain(categories=categories, declared=True)))
    index = LiteralIndex(View("left", attributes), max_splits=4)
    for n_nodes, n_classes in ((1, 2), (4, 3)):
        node = rng.integers(-1, n_nodes, index.n_rows)
        target = rng.integers(-1, n_classes, index.n_rows)
        flat = node_class_counts(index, node, target, n_nodes, n_classes)
        for quality in ("gini", "counts"):
            expected = dense_from_counts(index, flat, n_nodes, n_classes, quality)
            got = criterion.qualities_from_counts(index, flat, n_nodes, n_classes, quality)
            assert np.array_equal(got, expected[0])  # exactly: the greedy and private choices rank them
        true_sizes, false_sizes = criterion.branch_sizes_from_counts(index, flat, n_nodes, n_classes)
        assert np.array_equal(true_sizes, expected[1]) and np.array_equal(false_sizes, expected[2])


def test_the_serial_and_parallel_histogram_passes_count_the_same(monkeypatch) -> None:
    rng = np.random.default_rng(7)
    index = LiteralIndex(random_view(rng, 3000, missing=0.2), max_splits=40)
    node, target = rng.integers(-1, 4, index.n_rows), rng.integers(-1, 3, index.n_rows)
    counts = []
    for threshold in (1 << 62, 0):
        monkeypatch.setattr(criterion, "PARALLEL_HISTOGRAM_CELLS", threshold)
        counts.append(node_class_counts(index, node, target, 4, 3))
    assert counts[0].sum() > 0 and np.array_equal(counts[0], counts[1])


@pytest.mark.parametrize("seed", range(20))
def test_gini_quality_sensitivity_is_at_most_two(seed: int) -> None:
    """Adding one row to any branch and class changes the quality by at most 2."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, size=(3, 4))
    base = gini_quality(counts)
    for b in range(3):
        for c in range(4):
            neighbour = counts.copy()
            neighbour[b, c] += 1
            assert abs(gini_quality(neighbour) - base) <= GINI_SENSITIVITY + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_leaf_queries_hold_exactly_on_the_rows_of_their_leaves(seed: int) -> None:
    rng = np.random.default_rng(seed)
    view = random_view(rng, 300, missing=0.15)
    index = LiteralIndex(view, max_splits=6)
    tree = random_tree(rng, index, depth=3)
    leaf_of_row = tree.apply(index)
    for k, position in enumerate(tree.leaves):
        assert np.array_equal(leaf_query(tree, index, position).support(view), leaf_of_row == k)


def test_a_declared_complete_categorical_writes_its_no_branch_as_one_negated_literal() -> None:
    from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    from dprm.queries import CategoricalLiteral, Not, Or

    rng = np.random.default_rng(3)
    categories = ("north", "east", "south", "west")
    values = rng.integers(0, 4, 200).astype(np.int32)
    queries = {}
    for complete in (False, True):
        region = Attribute("region", "left", AttributeKind.CATEGORICAL, values,
                           Domain(categories=categories, declared=True, complete=complete))
        view = View("left", [region])
        index = LiteralIndex(view)
        split = next(s for s in index.splits if s.code == 1)  # region = east
        tree = Tree(depth=1, splits=[split])
        no_branch = leaf_query(tree, index, tree.leaves[1])
        assert np.array_equal(no_branch.support(view), tree.apply(index) == 1)  # exactly the leaf's rows
        queries[complete] = no_branch
    assert queries[True] == Not(CategoricalLiteral("region", "east"))  # public completeness: one literal
    assert queries[False] == Or(*(CategoricalLiteral("region", c) for c in ("north", "south", "west")))
    # where a value may be missing, the plain complement would hold on it, so the other categories are written
    missing = values.copy()
    missing[:5] = -1
    region = Attribute("region", "left", AttributeKind.CATEGORICAL, missing, Domain(categories=categories))
    assert Not(CategoricalLiteral("region", "east")).support(View("left", [region]))[:5].all()
    assert not queries[False].support(View("left", [region]))[:5].any()


@pytest.mark.parametrize("seed", range(3))
def test_node_queries_hold_exactly_on_their_cells(seed: int) -> None:
    rng = np.random.default_rng(seed)
    view = random_view(rng, 400, missing=0.15)
    index = LiteralIndex(view, max_splits=6)
    tree = random_tree(rng, index, depth=3)
    nodes, masks = node_cells(tree)
    assert len(nodes) == 14 and masks.shape == (14, tree.n_cells) and tree.n_cells == 8 + 7
    assert (masks[0] ^ masks[1]).sum() == tree.n_cells - 1  # the root's children: all but its drop-outs
    cell_of_row = tree.apply_cells(index)
    assert np.array_equal(cell_of_row < 8, tree.apply(index) >= 0)
    queries = TreeQueries(tree, index)
    for mask in masks:
        rows = np.isin(cell_of_row, np.flatnonzero(mask))
        assert np.array_equal(queries.union(mask).support(view), rows)
        assert np.array_equal(queries.union(~mask, negated=True).support(view), ~rows)
    both = masks[2] | masks[5]
    assert np.array_equal(queries.union(both).support(view), np.isin(cell_of_row, np.flatnonzero(both)))


@pytest.mark.parametrize("seed", range(4))
def test_complete_and_incomplete_trees_route_every_row_as_a_walk_down_the_tree(seed: int) -> None:
    """apply_cells (one compiled pass for complete trees, level by level otherwise)
    against a row-by-row walk, with missing values, on all rows and on a subset."""
    rng = np.random.default_rng(seed)
    index = LiteralIndex(random_view(rng, 150, "left", 0.25), mode="private", max_splits=4)
    for depth in (1, 3, 4):
        tree = random_tree(rng, index, depth)
        if seed % 2 and depth > 1:  # greedy trees may stop early: a leaf inside
            tree.splits[2] = None
        cell_of = {position: k for k, position in enumerate(tree.leaves)}
        cell_of.update({position: tree.n_leaves + j for j, position in enumerate(tree.internal_nodes)})
        expected = []
        for row in range(index.n_rows):
            position = 0
            while position < len(tree.splits) and tree.splits[position] is not None:
                true, false = index.split_branches(tree.splits[position], np.array([row]))
                if not (true[0] or false[0]):
                    break
                position = 2 * position + (1 if true[0] else 2)
            expected.append(cell_of[position])
        assert tree.apply_cells(index).tolist() == expected
        rows = np.sort(rng.choice(index.n_rows, 40, replace=False))
        assert tree.apply_cells(index, rows).tolist() == [expected[r] for r in rows]


def test_greedy_tree_recovers_a_planted_rule() -> None:
    rng = np.random.default_rng(0)
    view = random_view(rng, 500, missing=0.0)
    index = LiteralIndex(view)
    x = view["left_x0"].values
    b = view["left_b1"].values
    target = ((x > 0.5) & (b == 1)).astype(np.int64)
    tree = grow_greedy_tree(index, target, 2, depth=2)
    leaf_of_row = tree.apply(index)
    purity = [np.bincount(target[leaf_of_row == k], minlength=2).max() / (leaf_of_row == k).sum()
              for k in range(tree.n_leaves)]
    assert min(purity) == 1.0
    assert "left_x0" in tree.describe(index) and "left_b1" in tree.describe(index)


def test_greedy_tree_stops_at_pure_nodes() -> None:
    rng = np.random.default_rng(1)
    view = random_view(rng, 200, missing=0.0)
    index = LiteralIndex(view)
    target = view["left_b0"].values.astype(np.int64)
    tree = grow_greedy_tree(index, target, 2, depth=4)
    assert tree.n_leaves == 2


def test_freedman_diaconis_and_numeric_targets() -> None:
    values = np.random.default_rng(2).normal(size=5000)
    n_bins = freedman_diaconis_bins(values, max_bins=100)
    iqr = np.subtract(*np.percentile(values, [75, 25]))
    assert n_bins == int(np.ceil((values.max() - values.min()) / (2 * iqr * 5000 ** (-1 / 3))))
    rng = np.random.default_rng(3)
    view = random_view(rng, 400)
    classes, n_classes = target_from_attribute(view["left_x1"], max_bins=6)
    assert n_classes <= 6
    assert np.array_equal(classes < 0, np.isnan(view["left_x1"].values))
    present = classes >= 0
    order = np.argsort(view["left_x1"].values[present])
    assert np.all(np.diff(classes[present][order]) >= 0)  # bins are ordered intervals


def test_stats_of_leaf_pairs_are_exact() -> None:
    rng = np.random.default_rng(7)
    left, right = random_view(rng, 250, "left"), random_view(rng, 250, "right")
    indexes = [LiteralIndex(left), LiteralIndex(right)]
    trees = [random_tree(rng, indexes[0], 2), random_tree(rng, indexes[1], 2)]
    queries = [leaf_query(trees[s], indexes[s], trees[s].leaves[0]) for s in (0, 1)]
    stats = RedescriptionStats.from_supports(queries[0].support(left), queries[1].support(right))
    leaves = [trees[s].apply(indexes[s]) for s in (0, 1)]
    assert stats.intersection == int(((leaves[0] == 0) & (leaves[1] == 0)).sum())
