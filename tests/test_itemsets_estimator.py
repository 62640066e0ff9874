"""DensityEstimator: learning paths agree, inference against brute force, bad input refused."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest

from dprm.errors import DataError, ParameterError
from dprm.itemsets.estimator import MAX_PASSES, ROWS_TO_LEARN, WIDTH_TO_LEARN, DensityEstimator, passes_for


def planted_frame(seed: int, n_rows: int) -> pd.DataFrame:
    """Four discrete columns with chained dependencies (a -> b -> c, d independent)."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["a0", "a1", "a2"], p=[0.5, 0.3, 0.2], size=n_rows)
    b = np.where(a == "a0", rng.choice(["b0", "b1"], p=[0.9, 0.1], size=n_rows),
                 rng.choice(["b0", "b1"], p=[0.2, 0.8], size=n_rows))
    c = np.where(b == "b1", "c1", rng.choice(["c0", "c1"], p=[0.7, 0.3], size=n_rows))
    d = rng.choice(["d0", "d1"], p=[0.6, 0.4], size=n_rows)
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d})


@pytest.fixture(scope="module")
def fitted() -> tuple[DensityEstimator, pd.DataFrame]:
    frame = planted_frame(0, 20000)
    return DensityEstimator(n_chains=3, grace_period=50, split_confidence=0.01, tie_threshold=0.2,
                            random_state=1).fit(frame), frame


def brute_force_chain_marginal(estimator: DensityEstimator, chain_index: int, codes: np.ndarray) -> float:
    """Sum of the chain's product of conditionals over every completion of a partial code row."""
    sizes = [len(v) for v in estimator.domains_.values()]
    chain = estimator.chains_[chain_index]
    free = [j for j in range(len(sizes)) if codes[j] < 0]
    total = 0.0
    for values in itertools.product(*[range(sizes[j]) for j in free]):
        row = codes.copy()
        row[free] = values
        p = 1.0
        for tree in chain.trees:
            p *= tree.predict_proba(row[None, :])[0, row[tree.target]]
        total += p
    return total


def all_partial_rows(sizes: list[int]) -> np.ndarray:
    return np.array(list(itertools.product(*[range(-1, s) for s in sizes])), dtype=np.int64)


def test_full_assignments_match_the_data(fitted) -> None:
    estimator, frame = fitted
    counts = frame.value_counts(normalize=True)
    for values, share in counts.items():
        assert estimator.density(dict(zip(frame.columns, values))) == pytest.approx(share, abs=0.01)


def test_partial_assignments_are_the_chains_exact_marginals(fitted) -> None:
    estimator, _ = fitted
    sizes = [len(v) for v in estimator.domains_.values()]
    rows = all_partial_rows(sizes)
    rows = rows[(rows >= 0).any(axis=1)]
    per_chain = estimator.chain_densities(rows)
    for c in range(3):
        exact = np.array([brute_force_chain_marginal(estimator, c, row) for row in rows])
        # exact where no marginalisation is needed, otherwise a 100,000-row sample: 5 standard errors
        np.testing.assert_allclose(per_chain[:, c], exact, atol=5 * 0.5 / np.sqrt(estimator.n_samples))


def test_densities_of_one_set_of_variables_sum_to_one(fitted) -> None:
    estimator, _ = fitted
    for columns in [("a",), ("b", "d"), ("a", "c", "d")]:
        domains = [estimator.domains_[c] for c in columns]
        for method, tolerance in (("paths", 1e-9), ("exact-or-sample", 0.01)):
            total = sum(estimator.density(dict(zip(columns, values)), method=method)
                        for values in itertools.product(*domains))
            assert total == pytest.approx(1.0, abs=tolerance)


def test_conditional_and_sample_follow_the_density(fitted) -> None:
    estimator, frame = fitted
    given = {"a": "a0"}
    conditional = estimator.conditional("b", given)
    assert sum(conditional.values()) == pytest.approx(1.0)
    assert conditional["b0"] == pytest.approx(0.9, abs=0.02)
    drawn = estimator.sample(20000, np.random.default_rng(3))
    assert list(drawn.columns) == list(frame.columns)
    for values, share in drawn[["a", "b"]].value_counts(normalize=True).items():
        assert share == pytest.approx(estimator.density(dict(zip(["a", "b"], values))), abs=0.015)


def test_learning_one_row_at_a_time_from_a_csv_or_an_iterable_gives_the_same_estimate(tmp_path) -> None:
    frame = planted_frame(1, 3000)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    options = dict(n_chains=2, grace_period=40, random_state=4, batch_size=700, passes=1)
    whole = DensityEstimator(**options).fit(frame)
    from_csv = DensityEstimator(**options).fit(path)
    declared = {name: sorted(frame[name].unique()) for name in frame.columns}  # a stream needs its domains
    from_rows = DensityEstimator(domains=declared, **options).fit(iter(frame.to_dict("records")))
    one_by_one = DensityEstimator(**options).fit(frame.iloc[:10])
    for row in frame.iloc[10:].to_dict("records"):
        one_by_one.learn_one(row)
    for other in (from_csv, from_rows, one_by_one):
        assert other.n_seen_ == 3000
        assert other.domains_ == whole.domains_
        for mine, theirs in zip(whole.chains_, other.chains_):
            assert mine.order == theirs.order
            for a, b in zip(mine.trees, theirs.trees):
                np.testing.assert_array_equal(a.feature, b.feature)
                np.testing.assert_array_equal(a.counts, b.counts)


def test_a_small_table_is_learned_in_shuffled_passes_a_stream_once(tmp_path) -> None:
    frame = planted_frame(2, 3000)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    options = dict(n_chains=2, random_state=7, batch_size=700, learner="hoeffding")
    auto = DensityEstimator(**options).fit(frame)
    passes = passes_for(3000)
    assert passes == ROWS_TO_LEARN // 3000 + 1 and auto.passes_ == passes
    assert auto.n_seen_ == passes * 3000
    assert all(tree.counts[0].sum() == passes * 3000 for chain in auto.chains_ for tree in chain.trees)
    from_csv = DensityEstimator(**options).fit(path)  # the same passes, the same shuffles
    assert from_csv.n_seen_ == auto.n_seen_
    for mine, theirs in zip(auto.chains_, from_csv.chains_):
        for a, b in zip(mine.trees, theirs.trees):
            np.testing.assert_array_equal(a.feature, b.feature)
            np.testing.assert_array_equal(a.counts, b.counts)
    # the passes are shuffled: not the same as the file's order repeated
    repeated = DensityEstimator(**{**options, "passes": 1}).fit(frame)
    for _ in range(passes - 1):
        repeated.learn_many(frame)
    assert repeated.n_seen_ == auto.n_seen_
    assert any(not np.array_equal(a.counts, b.counts) or not np.array_equal(a.feature, b.feature)
               for mine, theirs in zip(auto.chains_, repeated.chains_) for a, b in zip(mine.trees, theirs.trees))
    declared = {name: sorted(frame[name].unique()) for name in frame.columns}
    stream = DensityEstimator(domains=declared, **options).fit(iter(frame.to_dict("records")))
    assert stream.n_seen_ == 3000 and stream.passes_ == 1
    assert DensityEstimator(passes=3, **options).fit(frame).n_seen_ == 9000


def test_wide_tables_learn_the_work_of_a_table_of_width_to_learn() -> None:
    budget = ROWS_TO_LEARN * WIDTH_TO_LEARN * (WIDTH_TO_LEARN - 1)  # rows times ordered column pairs
    for n in (50, 958, 20_000, 10**6):
        assert all(passes_for(n, n_columns=c) == passes_for(n) for c in (1, 17, WIDTH_TO_LEARN))
        for c in (WIDTH_TO_LEARN + 1, 100, 500, 5000):
            rows = n * passes_for(n, n_columns=c)
            # at most the budget's rows (one pass more when it is not a whole number of passes), never none
            assert passes_for(n, n_columns=c) == 1 or (rows - n) * c * (c - 1) < budget
            assert passes_for(n, n_columns=c) <= passes_for(n, n_columns=c - 1)
    frame = pd.DataFrame({f"c{j}": ["a", "b"] * 1000 for j in range(60)})
    fitted = DensityEstimator(n_chains=1, learner="hoeffding", random_state=0).fit(frame)
    assert fitted.passes_ == passes_for(2000, n_columns=60) == 70 < passes_for(2000) == 100


def test_passes_learns_enough_rows_and_is_checked() -> None:
    assert [passes_for(n) for n in (1, 435, 8124, ROWS_TO_LEARN - 1, ROWS_TO_LEARN, 10**7)] == \
        [MAX_PASSES, 460, 25, 2, 1, 1]
    assert all(n * passes_for(n) >= ROWS_TO_LEARN for n in range(200, 400_000, 997))
    for bad in (0, -1, 1.5, "many", MAX_PASSES + 1, True):
        with pytest.raises(ParameterError, match="passes"):
            DensityEstimator(passes=bad).fit(planted_frame(0, 100))


@pytest.mark.parametrize("setting, bad", [
    ("n_chains", True), ("batch_size", True), ("n_samples", True), ("max_depth", True),  # were 1 chain, 1 row, ...
    ("n_chains", 2.0), ("batch_size", 2.5), ("n_samples", 0.5), ("batch_size", "x"), ("max_depth", -1),
])
def test_integer_settings_refuse_bools_and_fractions(setting, bad) -> None:
    with pytest.raises(ParameterError, match=f"^{setting} must be .*integer.*, not {re.escape(repr(bad))}$"):
        DensityEstimator(**{setting: bad}).fit(planted_frame(0, 100))
    assert DensityEstimator(**{setting: np.int64(2)}, random_state=0).fit(planted_frame(0, 100)).n_seen_ > 0


def test_from_trees_rebuilds_the_same_estimate(fitted) -> None:
    estimator, _ = fitted
    rebuilt = DensityEstimator.from_trees(estimator.variables_, estimator.chains_)
    rows = all_partial_rows([3, 2, 2, 2])[1:]
    np.testing.assert_allclose(rebuilt.density_many(rows, method="paths"),
                               estimator.density_many(rows, method="paths"))
    with pytest.raises(ParameterError, match="cannot learn"):
        rebuilt.learn_one({"a": "a0", "b": "b0", "c": "c0", "d": "d0"})


def test_binned_numeric_columns_and_declared_domains() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.uniform(0, 90, size=2000), "group": rng.choice(["x", "y"], size=2000)})
    estimator = DensityEstimator(n_chains=1, bins={"age": [0, 30, 60, 90]}, domains={"group": ["x", "y", "z"]},
                                 random_state=0).fit(frame)
    assert estimator.domains_ == {"age": ("[0, 30)", "[30, 60)", "[60, 90]"), "group": ("x", "y", "z")}
    assert estimator.density({"age": "[0, 30)"}) == pytest.approx(((frame.age < 30).mean()), abs=0.01)
    assert estimator.density({"group": "z"}) == 0.0


def test_bad_input_is_refused_before_anything_is_learned(tmp_path) -> None:
    with pytest.raises(ParameterError, match="'age' is numeric"):
        DensityEstimator().fit(pd.DataFrame({"age": [1.5, 2.5, 3.5]}))
    with pytest.raises(DataError, match="no rows") as info:
        DensityEstimator().fit(pd.DataFrame({"a": []}))
    assert info.value.code == "no_rows"
    with pytest.raises(DataError, match="no rows"):
        DensityEstimator(domains={"a": ["x"]}).fit(iter([]))
    with pytest.raises(ParameterError, match="needs the columns' domains"):
        DensityEstimator().learn_one({"a": "x"})
    path = tmp_path / "bad.csv"
    path.write_text("a,b\nx,1\ny,2\nz,1\n")
    estimator = DensityEstimator(domains={"a": ["x", "y"], "b": ["1", "2"]})
    with pytest.raises(DataError, match=r"bad.csv: column 'a', row 3: value 'z'"):
        estimator.fit(path)
    with pytest.raises(ParameterError, match="learned nothing"):
        estimator.density({"a": "x"})
    with pytest.raises(DataError, match="no such file"):
        DensityEstimator().fit(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    with pytest.raises(DataError, match="no data rows"):
        DensityEstimator().fit(empty)


def test_queries_name_unknown_columns_and_values(fitted) -> None:
    estimator, _ = fitted
    with pytest.raises(ParameterError, match="no column named 'zz'"):
        estimator.density({"zz": "1"})
    with pytest.raises(ParameterError, match="no category 'b9'"):
        estimator.density({"b": "b9"})
    with pytest.raises(ParameterError, match="method"):
        estimator.density({"b": "b0"}, method="magic")


def test_csv_numeric_columns_need_bins_and_binned_ones_are_learned(tmp_path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("age,flag,town\n" + "".join(f"{20 + i % 50},{i % 2},t{i % 3}\n" for i in range(600)))
    with pytest.raises(ParameterError, match="people.csv: column 'age' is numeric"):
        DensityEstimator().fit(path)
    estimator = DensityEstimator(n_chains=1, bins={"age": [0, 40, 100]}, random_state=0).fit(path)
    assert estimator.domains_ == {"age": ("[0, 40)", "[40, 100]"), "flag": ("0", "1"), "town": ("t0", "t1", "t2")}
    assert estimator.density({"age": "[0, 40)"}) == pytest.approx(0.4, abs=0.01)
    with pytest.raises(DataError, match=r"column 'age', row 3: value '150' is outside the bin edges"):
        bad = tmp_path / "bad.csv"
        bad.write_text("age,flag,town\n20,0,t0\n30,1,t1\n150,0,t2\n")
        DensityEstimator(bins={"age": [0, 40, 100]}).fit(bad)


def test_max_nodes_bounds_every_tree_and_the_estimate_stops_growing() -> None:
    frame = planted_frame(5, 6000)
    free = DensityEstimator(n_chains=2, grace_period=30, split_confidence=0.01, tie_threshold=0.2, max_nodes=None,
                            random_state=0).fit(frame)
    assert max(tree.n_nodes for chain in free.chains_ for tree in chain.trees) > 7
    bounded = DensityEstimator(n_chains=2, grace_period=30, split_confidence=0.01, tie_threshold=0.2, max_nodes=7,
                               passes=1, random_state=0).fit(frame.iloc[:3000])
    shapes = [tree.feature.copy() for chain in bounded.chains_ for tree in chain.trees]
    assert all(len(f) <= 7 for f in shapes)
    bounded.learn_many(frame.iloc[3000:])
    later = [tree for chain in bounded.chains_ for tree in chain.trees]
    # a tree of 6 or 7 nodes has spent its budget (every split adds at least 2 nodes): its shape is fixed
    spent = [i for i, f in enumerate(shapes) if len(f) >= 6]
    assert spent
    assert all(np.array_equal(shapes[i], later[i].feature) for i in spent)
    assert all(t.n_nodes <= 7 for t in later)
    assert all(t.counts[0].sum() == 6000 for t in later)  # the leaves still count every row


def test_bad_max_nodes_is_refused_by_the_estimator() -> None:
    with pytest.raises(ParameterError, match="max_nodes"):
        DensityEstimator(max_nodes=0).fit(planted_frame(0, 100))
