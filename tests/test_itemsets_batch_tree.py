"""The batch-grown conditional trees (dprm.itemsets.batch_tree) and the estimator's choice of learner."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dprm.itemsets.estimator as estimator_module
from dprm.errors import ParameterError
from dprm.itemsets.batch_tree import grow_batch_tree
from dprm.itemsets.estimator import DensityEstimator
from test_itemsets_estimator import planted_frame


def random_codes(seed: int, n: int, sizes: list[int]) -> np.ndarray:
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, s, size=n) for s in sizes])
    codes[:, -1] = (codes[:, 0] + codes[:, 1] * (rng.random(n) < 0.7)) % sizes[-1]  # the target depends on 0, 1
    return codes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counts_are_the_exact_class_counts_of_every_node(seed) -> None:
    sizes = [3, 4, 2, 5]
    codes = random_codes(seed, 2000, sizes)
    tree = grow_batch_tree(codes, target=3, attributes=[0, 1, 2], sizes=sizes, significance=0.5)
    assert tree.n_nodes > 1
    assert tree.counts[0].sum() == len(codes)
    leaves = tree.leaf_of(codes)
    for node in range(tree.n_nodes):
        if tree.is_leaf(node):
            expected = np.bincount(codes[leaves == node, 3], minlength=5)
            np.testing.assert_array_equal(tree.counts[node], expected)
        else:
            kids = tree.children_of(node)
            np.testing.assert_array_equal(tree.counts[node], tree.counts[kids].sum(axis=0))
            assert len(kids) == sizes[tree.feature[node]]  # one child per category of the split column


def test_the_budget_the_depth_and_the_level_bound_the_tree() -> None:
    sizes = [3, 4, 2, 5]
    codes = random_codes(3, 5000, sizes)
    free = grow_batch_tree(codes, 3, [0, 1, 2], sizes, max_nodes=None, significance=0.5)
    for budget in (1, 4, 10, 30):
        assert grow_batch_tree(codes, 3, [0, 1, 2], sizes, max_nodes=budget).n_nodes <= budget
    assert grow_batch_tree(codes, 3, [0, 1, 2], sizes, max_depth=1).depth() <= 1
    assert grow_batch_tree(codes, 3, [0, 1, 2], sizes, max_depth=0).n_nodes == 1
    strict = grow_batch_tree(codes, 3, [0, 1, 2], sizes, max_nodes=None, significance=1e-12)
    assert strict.n_nodes <= free.n_nodes
    # the first split is on the column that explains the target best (column 0: target = x0 + ... mod 5)
    assert free.feature[0] == 0
    # a target independent of every attribute: no split at a strict level
    noise = np.column_stack([codes[:, :3], np.random.default_rng(9).integers(0, 5, size=len(codes))])
    assert grow_batch_tree(noise, 3, [0, 1, 2], sizes, significance=1e-4).n_nodes == 1
    with pytest.raises(ParameterError, match="significance"):
        grow_batch_tree(codes, 3, [0], sizes, significance=1.0)
    with pytest.raises(ParameterError, match="max_nodes"):
        grow_batch_tree(codes, 3, [0], sizes, max_nodes=0)


def test_no_budget_grows_past_the_first_capacity() -> None:
    sizes = [40, 40, 40]
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 40, size=(20000, 3))
    codes[:, 2] = (codes[:, 0] * 7 + codes[:, 1]) % 40  # a function of both: a split under every value of column 0
    tree = grow_batch_tree(codes, 2, [0, 1], sizes, max_nodes=None)
    assert tree.n_nodes > 1024
    proba = tree.predict_proba(codes[:50])
    np.testing.assert_allclose(proba[np.arange(50), codes[:50, 2]], 1.0)


def test_a_table_is_grown_in_batch_by_default_and_the_same_from_a_file(tmp_path) -> None:
    frame = planted_frame(2, 3000)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    batch = DensityEstimator(n_chains=2, random_state=7).fit(frame)
    assert batch.learner_ == "batch" and batch.passes_ == 1 and batch.n_seen_ == 3000
    from_csv = DensityEstimator(n_chains=2, random_state=7, batch_size=700).fit(path)
    assert from_csv.learner_ == "batch"
    for mine, theirs in zip(batch.chains_, from_csv.chains_):
        assert mine.order == theirs.order
        for a, b in zip(mine.trees, theirs.trees):
            np.testing.assert_array_equal(a.feature, b.feature)
            np.testing.assert_array_equal(a.counts, b.counts)
    # exact marginals where the chain allows: the first variable's share is the table's
    first = batch.columns_[batch.chains_[0].order[0]]
    share = (frame[first] == frame[first].iloc[0]).mean()
    assert batch.chain_densities(batch.codes_of({first: frame[first].iloc[0]}))[0, 0] == pytest.approx(share)
    with pytest.raises(ParameterError, match="cannot learn"):
        batch.learn_one(frame.iloc[0].to_dict())
    # a number of passes, or learner="hoeffding", keeps the online learner
    assert DensityEstimator(n_chains=1, passes=2, random_state=0).fit(frame).learner_ == "hoeffding"
    assert DensityEstimator(n_chains=1, learner="hoeffding", random_state=0).fit(frame).learner_ == "hoeffding"
    with pytest.raises(ParameterError, match="learner"):
        DensityEstimator(learner="magic").fit(frame)


def test_a_long_file_is_a_stream_for_the_online_learner(tmp_path, monkeypatch) -> None:
    frame = planted_frame(3, 1000)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    monkeypatch.setattr(estimator_module, "ROWS_TO_LEARN", 1000)  # "long" = 1,000 rows or more here
    fitted = DensityEstimator(n_chains=1, random_state=0).fit(path)
    assert fitted.learner_ == "hoeffding"
    assert DensityEstimator(n_chains=1, learner="batch", random_state=0).fit(path).learner_ == "batch"
    monkeypatch.setattr(estimator_module, "ROWS_TO_LEARN", 10**6)
    monkeypatch.setattr(estimator_module, "BATCH_WORK", 1000 * 4 * 3)  # a table of 1,000 x 4 at most
    assert DensityEstimator(n_chains=1, random_state=0).fit(frame).learner_ == "batch"
    assert DensityEstimator(n_chains=1, random_state=0).fit(pd.concat([frame, frame])).learner_ == "hoeffding"
    declared = {name: sorted(frame[name].unique()) for name in frame.columns}
    stream = DensityEstimator(n_chains=1, domains=declared, random_state=0).fit(iter(frame.to_dict("records")))
    assert stream.learner_ == "hoeffding"


def test_batch_estimate_finds_the_planted_itemsets() -> None:
    from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
    from dprm.itemsets.ison import mine_itemsets

    frame = planted_frame(4, 5000)
    found = mine_itemsets(DensityEstimator(n_chains=3, random_state=1).fit(frame), 0.1)
    rates = itemset_rates(found, frequent_itemsets(frame, 0.1))
    assert rates.tpr >= 0.95 and rates.fpr <= 0.05
