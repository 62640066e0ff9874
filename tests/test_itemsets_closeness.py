"""t-closeness of the estimate: distances, Algorithm 1 and its check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance

from dprm.errors import ParameterError
from dprm.itemsets.closeness import (apply_t_closeness, check_t_closeness, distribution_distance,
                                     global_distribution)
from dprm.itemsets.estimator import DensityEstimator


def linked_frame(seed: int, n_rows: int) -> pd.DataFrame:
    """Age group and occupation strongly linked, genre preferences depending on both."""
    rng = np.random.default_rng(seed)
    age = rng.choice(["18-24", "25-49", "50-74"], p=[0.3, 0.5, 0.2], size=n_rows)
    occupation = np.where(age == "18-24", rng.choice(["student", "clerk", "retired"], p=[0.8, 0.2, 0.0], size=n_rows),
                          np.where(age == "50-74", rng.choice(["student", "clerk", "retired"], p=[0.02, 0.3, 0.68],
                                                              size=n_rows),
                                   rng.choice(["student", "clerk", "retired"], p=[0.1, 0.85, 0.05], size=n_rows)))
    drama = np.where(occupation == "retired", rng.random(n_rows) < 0.8, rng.random(n_rows) < 0.3)
    comedy = np.where(age == "18-24", rng.random(n_rows) < 0.7, rng.random(n_rows) < 0.4)
    return pd.DataFrame({"age": age, "occupation": occupation, "drama": drama, "comedy": comedy})


@pytest.fixture(scope="module")
def estimator() -> DensityEstimator:
    return DensityEstimator(n_chains=3, grace_period=50, split_confidence=0.01, tie_threshold=0.2,
                            random_state=0).fit(linked_frame(0, 20000))


@pytest.mark.parametrize("seed", range(5))
def test_emd_is_the_wasserstein_distance_on_equally_spaced_categories(seed) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    expected = wasserstein_distance(np.arange(k), np.arange(k), p, q) / (k - 1)
    assert distribution_distance(p, q, "emd") == pytest.approx(expected)
    assert distribution_distance(p, q, "variational") == pytest.approx(0.5 * np.abs(p - q).sum())


def test_the_unmodified_estimate_is_not_t_close(estimator) -> None:
    report = check_t_closeness(estimator, ["age", "occupation"], delta=0.1)
    assert not report.ok
    assert report.max_distance["occupation"] > 0.1
    assert {v.kind for v in report.violations} == {"edges", "class"}


@pytest.mark.parametrize("distance", ["emd", "variational"])
def test_delta_zero_makes_every_node_equal_to_the_global_distribution(estimator, distance) -> None:
    names = ["age", "occupation"]
    modified = apply_t_closeness(estimator, names, delta=0.0, distance=distance)
    report = check_t_closeness(modified, names, delta=0.0, distance=distance)
    assert report.ok and report.nodes_checked > 20
    columns = modified.columns_
    for name in names:
        q = columns.index(name)
        target = global_distribution(modified, name)
        for chain in modified.chains_:
            for tree in chain.trees:
                for node in range(tree.n_nodes):
                    if tree.target == q:
                        np.testing.assert_allclose(tree.class_distribution(node), target, atol=1e-9)
                    if tree.feature[node] == q:
                        np.testing.assert_allclose(tree.edge_distribution(node), target, atol=1e-9)
    # the original is left as it was
    assert not check_t_closeness(estimator, names, delta=0.0, distance=distance).ok


@pytest.mark.parametrize("distance", ["emd", "variational"])
@pytest.mark.parametrize("delta", [0.02, 0.1])
def test_positive_delta_brings_every_node_within_delta_and_changes_no_more_than_needed(estimator, distance,
                                                                                         delta) -> None:
    names = ["occupation"]
    modified = apply_t_closeness(estimator, names, delta=delta, distance=distance, step=10)
    report = check_t_closeness(modified, names, delta=delta, distance=distance)
    assert report.ok
    assert report.max_distance["occupation"] <= delta
    # a tree of a column that is neither a quasi-identifier nor tests one keeps its counts
    q = modified.columns_.index("occupation")
    for before, after in zip(estimator.chains_, modified.chains_):
        for a, b in zip(before.trees, after.trees):
            if a.target != q and q not in a.split_columns():
                np.testing.assert_array_equal(a.counts, b.counts)
                np.testing.assert_array_equal(a.child_weight, b.child_weight)


def test_a_small_group_is_no_longer_singled_out(estimator) -> None:
    """The paper's Table II effect: after δ = 0 a rare (age, occupation) pair gets the global share."""
    before = estimator.density({"age": "18-24", "occupation": "retired"})
    modified = apply_t_closeness(estimator, ["age", "occupation"], delta=0.0)
    after = modified.density({"age": "18-24", "occupation": "retired"})
    g_age = global_distribution(modified, "age")[modified.domains_["age"].index("18-24")]
    g_occ = global_distribution(modified, "occupation")[modified.domains_["occupation"].index("retired")]
    assert before < 0.005
    assert after == pytest.approx(g_age * g_occ, rel=0.05)


def test_bad_arguments_are_refused(estimator) -> None:
    with pytest.raises(ParameterError, match="no column named 'salary'"):
        apply_t_closeness(estimator, ["salary"], delta=0.1)
    with pytest.raises(ParameterError, match="delta must be a number >= 0"):
        check_t_closeness(estimator, ["age"], delta=-0.1)
    with pytest.raises(ParameterError, match="step must lie in"):
        apply_t_closeness(estimator, ["age"], delta=0.1, step=0)
    with pytest.raises(ParameterError, match="distance must be one of"):
        check_t_closeness(estimator, ["age"], delta=0.1, distance="kl")


def test_a_step_too_small_to_finish_a_correction_is_refused_in_one_line(estimator) -> None:
    """A step of 1e-300 changes no float: the loop ran for more than ten minutes (then would have raised
    RuntimeError); the least step is derived from delta and named."""
    message = (r"^step must lie in \[0\.0047, 100\] for delta=0\.01 \(a correction must bring a distance of 1 "
               r"below delta within 100,000 steps\), got 1e-300$")
    with pytest.raises(ParameterError, match=message):
        apply_t_closeness(estimator, ["age"], delta=0.01, step=1e-300)
    with pytest.raises(ParameterError, match=r"^step must lie in \[0\.0047, 100\]"):
        apply_t_closeness(estimator, ["age"], delta=0.01, step=0.0046)
    for bad in (True, float("nan"), "10"):
        with pytest.raises(ParameterError, match=r"^step must lie in \(0, 100\], got "):
            apply_t_closeness(estimator, ["age"], delta=0.01, step=bad)


@pytest.mark.parametrize("delta", [0.5, 0.01, 1e-300])
def test_the_least_step_finishes_a_correction_from_the_farthest_distribution(delta, monkeypatch) -> None:
    """From a distance of 1, :func:`smallest_step` brings a distribution within delta in at most MAX_STEPS
    steps (below delta, or as close as floats get when delta is below the rounding)."""
    from dprm.itemsets import closeness

    target, far = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    step = closeness.smallest_step(delta)
    assert closeness.smallest_step(delta) >= 100 * (1 - delta ** (1 / closeness.MAX_STEPS))
    moves = []
    original = closeness.distribution_distance

    def counted(p, q, distance="emd"):
        moves.append(1)
        return original(p, q, distance)

    monkeypatch.setattr(closeness, "distribution_distance", counted)
    corrected = closeness._corrected(far, target, delta, "emd", step)
    assert original(target, corrected) < max(delta, 1e-12)
    assert len(moves) <= closeness.MAX_STEPS


def test_numpy_integer_steps_and_deltas_are_numbers(estimator) -> None:
    """``step=np.int64(10)`` was refused while ``np.float64(10)`` was taken; the same correction."""
    expected = apply_t_closeness(estimator, ["age"], delta=0.05, step=10)
    for step, delta in ((np.int64(10), 0.05), (np.float64(10), np.float64(0.05)), (10, np.float32(0.05))):
        got = apply_t_closeness(estimator, ["age"], delta=delta, step=step)
        if delta == 0.05:
            for mine, theirs in zip(got.chains_, expected.chains_):
                for a, b in zip(mine.trees, theirs.trees):
                    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.child_weight, b.child_weight)
        assert check_t_closeness(got, ["age"], delta=float(delta)).ok
    assert check_t_closeness(apply_t_closeness(estimator, ["age"], delta=np.int64(0)), ["age"], delta=0).ok
    with pytest.raises(ParameterError, match=r"^delta must be a number >= 0, got True$"):
        check_t_closeness(estimator, ["age"], delta=True)


def test_trees_without_counts_are_corrected_too() -> None:
    """A tree from another learner may have empty nodes (e.g. noisy counts clipped at zero)."""
    from dprm.itemsets.tree_model import ConditionalTree

    first = ConditionalTree.single_leaf(0, [30.0, 10.0])
    second = ConditionalTree.from_arrays(target=1, feature=[0, -1, -1], child_offset=[0, 0, 0], n_children=[2, 0, 0],
                                         child=[1, 2], counts=[[0, 0, 0], [0, 0, 0], [5, 0, 1]],
                                         child_weight=[3, 1])
    est = DensityEstimator.from_trees({"a": ["0", "1"], "q": ["x", "y", "z"]}, [([0, 1], [first, second])])
    modified = apply_t_closeness(est, ["q"], delta=0.0)
    assert check_t_closeness(modified, ["q"], delta=0.0).ok
