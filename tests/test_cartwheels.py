"""The non-private CARTwheels miner: exact statistics, planted and real redescriptions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import random_view

from dprm.data import TwoViewData, load_two_view
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import CartWheels
from dprm.queries import RedescriptionStats, query_from_json, write_document
from scipy.stats import binom


def independent_support(query: dict, frame: pd.DataFrame) -> np.ndarray:
    """Evaluate a query of the spec's JSON form with pandas alone (not dprm.queries)."""
    if "not" in query:
        return ~independent_support(query["not"], frame)
    if "and" in query:
        return np.logical_and.reduce([independent_support(q, frame) for q in query["and"]])
    if "or" in query:
        return np.logical_or.reduce([independent_support(q, frame) for q in query["or"]])
    column = frame[query["attr"]]
    present = column.notna().to_numpy()
    if "eq" in query:
        value = query["eq"]
        if isinstance(value, bool):
            text = column.astype(str).str.lower()
            truthy = {"1", "1.0", "true", "yes"} if value else {"0", "0.0", "false", "no"}
            return present & text.isin(truthy).to_numpy()
        if pd.api.types.is_numeric_dtype(column):
            return present & (column.to_numpy(dtype=float) == float(value))
        return present & (column.astype(str) == value).to_numpy()
    values = column.to_numpy(dtype=float)
    out = present.copy()
    with np.errstate(invalid="ignore"):
        for key, test in (("gt", np.greater), ("ge", np.greater_equal), ("lt", np.less), ("le", np.less_equal)):
            if key in query:
                out &= test(values, query[key])
    return out


def check_document_against_data(document: dict, left: pd.DataFrame, right: pd.DataFrame) -> None:
    n = len(left)
    for number, r in enumerate(document["redescriptions"]):
        in_left = independent_support(r["left"], left)
        in_right = independent_support(r["right"], right)
        inter = int((in_left & in_right).sum())
        union = int((in_left | in_right).sum())
        s = r["noisy"]
        where = f"redescription {number}: {r['left_text']} | {r['right_text']}"
        assert (s["support_left"], s["support_right"]) == (in_left.sum(), in_right.sum()), where
        assert (s["intersection"], s["union"]) == (inter, union), where
        assert s["jaccard"] == pytest.approx(inter / union), where
        expected_p = binom.sf(inter - 1, n, in_left.sum() / n * in_right.sum() / n)
        assert s["p_value"] == pytest.approx(expected_p, rel=1e-6, abs=1e-300), where


@pytest.mark.parametrize("seed", range(3))
def test_statistics_are_exact_with_missing_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = TwoViewData(random_view(rng, 400, "left", 0.2), random_view(rng, 400, "right", 0.2))
    miner = CartWheels(init_trials=4, alternations=2, depth=3, min_support=5, max_pvalue=1.0, min_jaccard=0.0)
    miner.fit(data, rng=np.random.default_rng(seed))
    assert miner.redescriptions_
    for r in miner.redescriptions_:
        exact = RedescriptionStats.from_supports(r.left.support(data.left), r.right.support(data.right))
        assert (r.stats.support_left, r.stats.support_right, r.stats.intersection) == (
            exact.support_left, exact.support_right, exact.intersection)
        assert r.stats.jaccard == pytest.approx(exact.jaccard)


def test_finds_the_planted_redescriptions() -> None:
    planted = make_planted(1500, n_planted=3, noise=0.02, random_state=4)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    # 6 trials (was 30, five times the time): with 5 every planted pair was found in each of the
    # seeds 0-4 with 0.05-0.14 of Jaccard to spare over the 0.02 allowed below
    miner = CartWheels(init_trials=6).fit(data, rng=np.random.default_rng(0))
    for left_json, right_json in planted.planted:
        left_attrs = set(query_from_json(left_json).attributes())
        right_attr = query_from_json(right_json).attributes()
        truth = RedescriptionStats.from_supports(
            query_from_json(left_json).support(data.left), query_from_json(right_json).support(data.right))
        matches = [r for r in miner.redescriptions_
                   if left_attrs <= r.left.attributes() and right_attr <= r.right.attributes()]
        assert matches, f"planted {left_json} / {right_json} not found"
        assert max(r.stats.jaccard for r in matches) >= truth.jaccard - 0.02


def test_constraints_hold_and_output_is_sorted() -> None:
    planted = make_planted(800, n_planted=2, random_state=1)
    data = load_two_view(planted.left, planted.right)
    miner = CartWheels(init_trials=6, min_support=40, max_support=0.5, min_jaccard=0.3, max_pvalue=1e-5)
    miner.fit(data, rng=np.random.default_rng(1))
    stats = [r.stats for r in miner.redescriptions_]
    assert stats
    for s in stats:
        assert s.intersection >= 40 and s.jaccard >= 0.3 and s.p_value <= 1e-5
        assert max(s.support_left, s.support_right) <= 0.5 * data.n_rows
    # best first: J + ½ excess over independence (dprm.mining.ranking.finding_key)
    scores = [s.jaccard + 0.5 * r.extra["independence"]["excess"] for s, r in zip(stats, miner.redescriptions_)]
    assert scores == sorted(scores, reverse=True)


def test_same_seed_same_result_and_parameters_validated() -> None:
    planted = make_planted(500, n_planted=1, random_state=2)
    data = load_two_view(planted.left, planted.right)
    first = CartWheels(init_trials=3).fit(data, rng=np.random.default_rng(9))
    second = CartWheels(init_trials=3).fit(data, rng=np.random.default_rng(9))
    assert first.document() == second.document()
    with pytest.raises(ParameterError, match="depth"):
        CartWheels(depth=0).fit(data)
    with pytest.raises(ParameterError, match="max-support"):
        CartWheels(max_support=1.5).fit(data)


def test_mammals_follows_the_spec_and_finds_accurate_redescriptions(shared_data, tmp_path) -> None:
    """The acceptance run: re-evaluated by an independent reader, best Jaccard ≥ 0.8."""
    folder = shared_data / "mammals"
    data = load_two_view(folder / "left.csv", folder / "right.csv", duplicate_names="rename")
    # 3 trials (was 8): seeds 0-2 each gave best Jaccard 0.92-0.93 and 1,650-1,940 redescriptions
    miner = CartWheels(init_trials=3).fit(data, rng=np.random.default_rng(0))
    path = tmp_path / "out.json"
    write_document(miner.document(), path)
    document = json.loads(path.read_text())
    assert document["format"] == "dprm.redescriptions/1" and document["privacy"]["guarantee"] == "none"
    assert max(r["noisy"]["jaccard"] for r in document["redescriptions"]) >= 0.8
    left = pd.read_csv(folder / "left.csv").iloc[:, 1:]   # pandas renames the duplicate as "House mouse.1"
    right = pd.read_csv(folder / "right.csv").iloc[:, 1:]
    sample = dict(document, redescriptions=document["redescriptions"][::25])
    check_document_against_data(sample, left, right)
