"""The itemset datasets: IBM-Quest-like streams (planted patterns are frequent) and the movielens table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.datasets import iter_transactions, load_movielens, make_transactions, movielens_types
from dprm.datasets.movielens import AGE_GROUPS, GENRES, OCCUPATIONS
from dprm.errors import DataError, ParameterError
from dprm.itemsets.ground_truth import frequent_itemsets

MOVIELENS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "movielens"


def test_stream_shape_domains_and_reproducibility():
    a = make_transactions(5000, n_variables=20, n_values=4, rng=np.random.default_rng(3))
    b = make_transactions(5000, n_variables=20, n_values=4, rng=np.random.default_rng(3))
    assert a.data.shape == (5000, 20)
    assert a.data.equals(b.data) and a.patterns == b.patterns
    assert set(np.unique(a.data.to_numpy())) <= {"a", "b", "c", "d"}
    assert a.types()["columns"]["x0"]["categories"] == ["a", "b", "c", "d"]


def test_heavy_planted_patterns_are_frequent_and_found_by_fp_growth():
    stream = make_transactions(20000, n_patterns=10, patterns_per_row=2, corruption=0.1,
                               rng=np.random.default_rng(1))
    truth = frequent_itemsets(stream.data, 0.05)
    for pattern, weight in zip(stream.patterns, stream.weights):
        # picked into one of 2 slots with probability ~2w, kept whole with 0.9^len; overrides cost a little
        expected = 2 * weight * 0.9 ** len(pattern)
        if expected >= 0.12:
            key = frozenset(pattern.items())
            assert key in truth, pattern
            assert truth[key] >= 0.6 * expected


def test_stream_without_patterns_is_independent():
    stream = make_transactions(40000, n_variables=3, patterns_per_row=0, rng=np.random.default_rng(2))
    frame = stream.data
    joint = pd.crosstab(frame["x0"], frame["x1"], normalize=True).to_numpy()
    product = np.outer(frame["x0"].value_counts(normalize=True).sort_index(),
                       frame["x1"].value_counts(normalize=True).sort_index())
    assert np.abs(joint - product).max() < 0.01


def test_chunks_give_the_rows_of_one_model():
    chunks = list(iter_transactions(2500, chunk_size=1000, rng=np.random.default_rng(4)))
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    again = pd.concat(iter_transactions(2500, chunk_size=1000, rng=np.random.default_rng(4)), ignore_index=True)
    assert pd.concat(chunks, ignore_index=True).equals(again)


@pytest.mark.parametrize("kwargs", [{"n_rows": 0}, {"n_rows": 10, "n_values": 1}, {"n_rows": 10, "corruption": 1.0}])
def test_bad_stream_parameters(kwargs):
    with pytest.raises(ParameterError):
        make_transactions(rng=np.random.default_rng(0), **kwargs)


@pytest.mark.skipif(not MOVIELENS.is_dir(), reason="MovieLens 100K not present")
def test_movielens_table_as_the_paper_builds_it():
    table = load_movielens(MOVIELENS, with_user=True)
    assert table.shape == (100000, 2 + 1 + len(GENRES))
    assert set(table["age_group"]) <= set(AGE_GROUPS) and set(table["occupation"]) <= set(OCCUPATIONS)
    assert set(np.unique(table[list(GENRES)].to_numpy())) == {"0", "1"}
    users = pd.read_csv(MOVIELENS / "users.csv")
    ratings = pd.read_csv(MOVIELENS / "ratings.csv")
    # the first rating's user: age group and occupation carried over
    first = users.set_index("user_id").loc[ratings.loc[0, "user_id"]]
    expected_group = AGE_GROUPS[int(np.searchsorted([25, 50, 75, 100], first["age"]))]
    assert table.loc[0, "age_group"] == expected_group and table.loc[0, "occupation"] == first["occupation"]
    assert table["user_id"].nunique() == 943
    small = load_movielens(MOVIELENS, genres=["Drama"])
    assert list(small.columns) == ["age_group", "occupation", "Drama"]
    movies = pd.read_csv(MOVIELENS / "movies.csv")
    assert (small["Drama"] == "1").mean() == pytest.approx(
        ratings["movie_id"].map(movies.set_index("movie_id")["Drama"]).mean())


def test_movielens_errors_and_types(tmp_path):
    with pytest.raises(ParameterError, match="unknown genre"):
        load_movielens(tmp_path, genres=["Opera"])
    with pytest.raises(DataError, match="no such file"):
        load_movielens(tmp_path)
    types = movielens_types()
    assert list(types["columns"])[:2] == ["age_group", "occupation"]
    assert len(types["columns"]) == 2 + len(GENRES)
