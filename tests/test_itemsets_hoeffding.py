"""The compiled Hoeffding tree against river's HoeffdingTreeClassifier on the same streams.

river is configured comparably: nominal attributes, multiway splits, the same grace
period, delta and tau, majority-class leaves (their class counts are what is compared).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from river.tree import HoeffdingTreeClassifier
from river.tree.base import Branch

from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.hoeffding import HoeffdingTreeLearner

MUSHROOM = Path("/work/shared/data/uci/mushroom.csv")


def planted_stream(seed: int, n_rows: int, sizes: list[int]) -> np.ndarray:
    """Rows whose last column depends on the first two (and noise), the others independent."""
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, s, size=n_rows) for s in sizes[:-1]]
    k = sizes[-1]
    table = rng.dirichlet(np.full(k, 0.4), size=(sizes[0], sizes[1]))
    u = rng.random(n_rows)[:, None]
    y = (u > np.cumsum(table[columns[0], columns[1]], axis=1)).sum(axis=1)
    return np.column_stack(columns + [np.minimum(y, k - 1)]).astype(np.int64)


def river_branches(node, path=()) -> dict[tuple, object]:
    """Every branch of a river tree by its path of (feature, value) conditions."""
    found = {}
    if isinstance(node, Branch):
        found[path] = node.feature
        for index, kid in enumerate(node.children):
            found.update(river_branches(kid, path + ((node.feature, node._r_mapping[index]),)))
    return found


def river_leaves(node, path=()) -> dict[tuple, dict]:
    if isinstance(node, Branch):
        found = {}
        for index, kid in enumerate(node.children):
            found.update(river_leaves(kid, path + ((node.feature, node._r_mapping[index]),)))
        return found
    return {path: dict(node.stats)}


def our_branches(tree, names) -> dict[tuple, object]:
    found = {}
    stack = [(0, ())]
    while stack:
        node, path = stack.pop()
        if tree.feature[node] >= 0:
            column = int(tree.feature[node])
            found[path] = names[column]
            for code, kid in enumerate(tree.children_of(node)):
                stack.append((int(kid), path + ((names[column], code),)))
    return found


def run_both(codes: np.ndarray, target: int, attributes: list[int], sizes: list[int], **options):
    names = [f"x{j}" for j in range(codes.shape[1])]
    river = HoeffdingTreeClassifier(grace_period=options["grace_period"], delta=options["split_confidence"],
                                    tau=options["tie_threshold"], leaf_prediction="mc",
                                    nominal_attributes=[names[a] for a in attributes])
    ours = HoeffdingTreeLearner(target, attributes, sizes, **options)
    river_log, our_log = [], []
    known_river: dict = {}
    known_ours: dict = {}
    leaves = 1
    for i, row in enumerate(codes):
        river.learn_one({names[a]: int(row[a]) for a in attributes}, int(row[target]))
        count = river._n_active_leaves + river._n_inactive_leaves
        if count != leaves:
            leaves = count
            branches = river_branches(river._root)
            river_log += [(i, p, f) for p, f in sorted(branches.items()) if p not in known_river]
            known_river = branches
        before = ours.n_nodes
        ours.learn(row[None, :])
        if ours.n_nodes != before:
            branches = our_branches(ours.to_tree(), names)
            our_log += [(i, p, f) for p, f in sorted(branches.items()) if p not in known_ours]
            known_ours = branches
    return river, ours, river_log, our_log, names


def assert_same_leaves(river, ours, names) -> None:
    tree = ours.to_tree()
    expected = river_leaves(river._root)
    for leaf, conditions in tree.paths():
        path = tuple((names[c], v) for c, v in conditions)
        if path not in expected:  # a category the leaf's parent never saw: river has no child for it
            assert tree.counts[leaf].sum() == 0
            continue
        stats = expected.pop(path)
        got = {k: tree.counts[leaf, k] for k in range(tree.n_classes) if tree.counts[leaf, k] > 0}
        assert got == pytest.approx({k: v for k, v in stats.items() if v > 0})
    assert expected == {}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_splits_at_the_same_rows_as_river_on_planted_streams(seed) -> None:
    sizes = [3, 4, 2, 3, 3]
    codes = planted_stream(seed, 9000, sizes)
    options = dict(grace_period=100, split_confidence=1e-5, tie_threshold=0.05)
    river, ours, river_log, our_log, names = run_both(codes, 4, [0, 1, 2, 3], sizes, **options)
    assert len(our_log) >= 2  # the planted dependence is found
    assert our_log == river_log
    assert_same_leaves(river, ours, names)


@pytest.mark.parametrize("target", ["edibility", "odor", "habitat"])
def test_same_splits_at_the_same_rows_as_river_on_mushroom(target) -> None:
    frame = pd.read_csv(MUSHROOM, dtype=str, keep_default_na=False)
    frame = frame.drop(columns=["veil-type"])  # constant
    domains = infer_domains(frame)
    codes = encode_frame(frame, domains)
    sizes = [d.size for d in domains.values()]
    t = list(domains).index(target)
    attributes = [j for j in range(len(sizes)) if j != t]
    options = dict(grace_period=200, split_confidence=1e-7, tie_threshold=0.05)
    river, ours, river_log, our_log, names = run_both(codes, t, attributes, sizes, **options)
    assert len(our_log) >= 1
    assert our_log == river_log
    assert_same_leaves(river, ours, names)


@pytest.mark.parametrize("batch", [1, 7, 250, 6000])
def test_mini_batches_give_the_same_tree_as_one_row_at_a_time(batch) -> None:
    sizes = [3, 4, 2, 3, 3]
    codes = planted_stream(5, 6000, sizes)
    reference = HoeffdingTreeLearner(4, [0, 1, 2, 3], sizes, grace_period=50)
    for row in codes:
        reference.learn(row[None, :])
    batched = HoeffdingTreeLearner(4, [0, 1, 2, 3], sizes, grace_period=50)
    for start in range(0, len(codes), batch):
        batched.learn(codes[start:start + batch])
    a, b = reference.to_tree(), batched.to_tree()
    assert a.n_nodes == b.n_nodes > 1
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.child, b.child)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_inner_node_counts_are_the_counts_of_the_rows_that_reached_them() -> None:
    sizes = [3, 4, 2, 3, 3]
    codes = planted_stream(3, 5000, sizes)
    learner = HoeffdingTreeLearner(4, [0, 1, 2, 3], sizes, grace_period=50)
    learner.learn(codes)
    tree = learner.to_tree()
    # the root saw every row; a split node saw at least what each child saw
    assert tree.n_nodes > 4
    np.testing.assert_allclose(tree.counts[0], np.bincount(codes[:, 4], minlength=3))
    for node in range(tree.n_nodes):
        if not tree.is_leaf(node):
            assert (tree.counts[node].sum() >= tree.counts[tree.children_of(node)].sum(axis=1)).all()


def test_growth_past_the_initial_capacity_and_max_depth() -> None:
    sizes = [4, 4, 4, 4]
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(20000, 3))
    y = np.where(x[:, 1] < 2, x[:, 0], x[:, 2])
    codes = np.column_stack([x, y])
    deep = HoeffdingTreeLearner(3, [0, 1, 2], sizes, grace_period=50)
    deep.learn(codes)
    assert deep.n_nodes > 20
    shallow = HoeffdingTreeLearner(3, [0, 1, 2], sizes, grace_period=50, max_depth=1)
    shallow.learn(codes)
    assert shallow.to_tree().depth() == 1


def test_max_nodes_bounds_the_tree_and_fixes_its_shape_once_spent() -> None:
    sizes = [4, 4, 4, 4]
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, size=(40000, 3))
    y = np.where(x[:, 1] < 2, x[:, 0], x[:, 2])
    codes = np.column_stack([x, y])
    free = HoeffdingTreeLearner(3, [0, 1, 2], sizes, grace_period=50)
    free.learn(codes)
    assert free.n_nodes > 13
    bounded = HoeffdingTreeLearner(3, [0, 1, 2], sizes, grace_period=50, max_nodes=13)
    bounded.learn(codes[:20000])
    first = bounded.to_tree()
    assert 5 <= first.n_nodes <= 13
    # the splits made before the budget ran out are the unbounded tree's (same rows, same order)
    inner = first.feature >= 0
    assert inner.sum() >= 2
    np.testing.assert_array_equal(first.feature[inner], free.to_tree().feature[:first.n_nodes][inner])
    bounded.learn(codes[20000:])
    second = bounded.to_tree()
    assert second.n_nodes == first.n_nodes
    np.testing.assert_array_equal(second.feature, first.feature)
    # the leaves go on counting every row
    assert second.counts[0].sum() == len(codes)
    np.testing.assert_allclose(second.counts[0], np.bincount(y, minlength=4))


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_max_nodes_is_refused(bad) -> None:
    from dprm.errors import ParameterError

    with pytest.raises(ParameterError, match="max_nodes"):
        HoeffdingTreeLearner(1, [0], [2, 2], max_nodes=bad)
