"""Evaluation: true statistics of a document, and the papers' summary figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import random_view
from scipy.stats import binom, mannwhitneyu, spearmanr

from dprm.data import Attribute, AttributeKind, Domain, TwoViewData, View, load_two_view
from dprm.datasets import make_planted
from dprm.errors import DprmError
from dprm.evaluation import (
    INTERVAL_COLUMNS,
    MANN_WHITNEY_COLUMNS,
    STATISTICS_COLUMNS,
    SUMMARY_COLUMNS,
    mann_whitney_best,
    median_true_jaccard,
    runs_with_results,
    share_significant,
    spearman,
    summarise,
    true_statistics,
)
from dprm.mining import CartWheels
from dprm.mining.base import not_private_block
from dprm.queries import (
    BooleanLiteral,
    CategoricalLiteral,
    NumericLiteral,
    Redescription,
    RedescriptionStats,
    make_document,
    write_document,
)

# ---------------------------------------------------------------- true statistics


def small_data() -> TwoViewData:
    """Eight rows with a Boolean, a categorical and a numeric attribute and missing values."""
    left = View("left", [
        Attribute("smoker", "left", AttributeKind.BOOLEAN, np.array([1, 1, 1, 0, 0, -1, 1, 0], np.int8)),
        Attribute("state", "left", AttributeKind.CATEGORICAL, np.array([0, 0, 1, 1, -1, 0, 0, 1], np.int32),
                  Domain(categories=("CA", "NY"))),
    ])
    right = View("right", [
        Attribute("age", "right", AttributeKind.NUMERIC,
                  np.array([50, 60, 30, np.nan, 45, 70, 20, 35], dtype=np.float64)),
        Attribute("sick", "right", AttributeKind.BOOLEAN, np.array([1, 1, 0, 0, 1, 1, 1, 0], np.int8)),
    ])
    return TwoViewData(left, right)


SMOKER, SICK = BooleanLiteral("smoker"), BooleanLiteral("sick")
NY, CA = CategoricalLiteral("state", "NY"), CategoricalLiteral("state", "CA")
OLD = NumericLiteral("age", gt=40)


def small_document() -> dict:
    """Four redescriptions whose true values are worked out by hand in the test."""
    redescriptions = [
        # truth: sL 4 {0,1,2,6}, sR 5 {0,1,4,5,6}, inter 3, union 6; the release over-states the overlap
        Redescription(SMOKER, SICK, RedescriptionStats(4, 5, 4, 5, 0.8, 0.01),
                      extra={"interval": {"jaccard": [0.4, 0.9]}}),
        # truth: ¬smoker ∨ NY = {2,3,4,5,7} (row 5: smoker missing, so ¬ holds), age > 40 = {0,1,4,5}
        Redescription(~SMOKER | NY, OLD, RedescriptionStats(5, 4, 2, 7, 2 / 7), pruned=True),
        # truth: smoker ∧ CA = {0,1,6}, ¬(age > 40) = {2,3,6,7} (NaN row 3 included), inter {6}
        Redescription(SMOKER & CA, ~OLD, RedescriptionStats(3.4, 3.9, 1.2, 6.1, 1.2 / 6.1, 0.5),
                      extra={"interval": [0.3, 0.6]}),
        # the first again, exact
        Redescription(SMOKER, SICK, RedescriptionStats(4, 5, 3, 6, 0.5, 0.2)),
    ]
    return make_document("hand-made", {}, not_private_block("hand-made"), redescriptions)


def test_hand_made_document_has_the_true_values_and_errors() -> None:
    frame = true_statistics(small_document(), small_data())
    assert list(frame.columns) == [*STATISTICS_COLUMNS, *INTERVAL_COLUMNS]
    assert frame["index"].tolist() == [0, 1, 2, 3]
    assert frame["pruned"].tolist() == [False, True, False, False]
    assert frame["left_text"].tolist()[0] == "smoker" and frame["right_text"].tolist()[1] == "[age > 40]"
    assert frame["true_support_left"].tolist() == [4, 5, 3, 4]
    assert frame["true_support_right"].tolist() == [5, 4, 4, 5]
    assert frame["true_intersection"].tolist() == [3, 2, 1, 3]
    assert frame["true_union"].tolist() == [6, 7, 6, 6]
    assert frame["true_jaccard"].tolist() == pytest.approx([0.5, 2 / 7, 1 / 6, 0.5])
    expected_p = [binom.sf(i - 1, 8, sl / 8 * sr / 8) for i, sl, sr in ((3, 4, 5), (2, 5, 4), (1, 3, 4), (3, 4, 5))]
    assert frame["true_pvalue"].tolist() == pytest.approx(expected_p, rel=1e-12)
    # noisy values as released; an unknown p-value is NaN
    assert frame["noisy_intersection"].tolist() == [4, 2, 1.2, 3]
    assert frame["noisy_pvalue"].iloc[0] == 0.01 and math.isnan(frame["noisy_pvalue"].iloc[1])
    # errors
    assert frame["error_intersection"].tolist() == pytest.approx([1.0, 0.0, 0.2, 0.0])
    assert frame["abs_error_jaccard"].tolist() == pytest.approx([0.3, 0.0, abs(1.2 / 6.1 - 1 / 6), 0.0])
    # intervals: inside, absent, outside, absent
    assert frame["jaccard_low"].tolist()[0] == 0.4 and frame["jaccard_high"].tolist()[2] == 0.6
    assert np.isnan(frame["jaccard_low"].iloc[1])
    assert frame["true_jaccard_in_interval"].tolist() == [True, pd.NA, False, pd.NA]


def test_path_and_dict_give_the_same_frame(tmp_path) -> None:
    path = tmp_path / "doc.json"
    write_document(small_document(), path)
    pd.testing.assert_frame_equal(true_statistics(path, small_data()), true_statistics(small_document(), small_data()))
    pd.testing.assert_frame_equal(true_statistics(str(path), small_data()),
                                  true_statistics(small_document(), small_data()))


def test_interval_forms_and_no_interval_columns_without_intervals() -> None:
    data = small_document()
    del data["redescriptions"][0]["interval"], data["redescriptions"][2]["interval"]
    assert list(true_statistics(data, small_data()).columns) == list(STATISTICS_COLUMNS)
    for form in ({"jaccard_low": 0.45, "jaccard_high": 0.55}, {"jaccard": {"low": 0.45, "high": 0.55}},
                 {"support_left": [3, 5], "jaccard": [0.45, 0.55]}):
        data["redescriptions"][0]["interval"] = form
        frame = true_statistics(data, small_data())
        assert (frame["jaccard_low"].iloc[0], frame["jaccard_high"].iloc[0]) == (0.45, 0.55)
        assert frame["true_jaccard_in_interval"].iloc[0] == True  # noqa: E712 (nullable Boolean)
    data["redescriptions"][0]["interval"] = {"jaccard": [0.51, 0.6]}
    assert not true_statistics(data, small_data())["true_jaccard_in_interval"].iloc[0]


def test_each_query_is_evaluated_once(monkeypatch) -> None:
    calls: list[str] = []
    original = BooleanLiteral.support

    def counting(self, view):
        calls.append(self.attr)
        return original(self, view)

    monkeypatch.setattr(BooleanLiteral, "support", counting)
    one = Redescription(SMOKER, SICK, RedescriptionStats(4, 5, 3, 6, 0.5))
    doc = make_document("many", {}, not_private_block("hand-made"), [one] * 3000)
    frame = true_statistics(doc, small_data())
    assert len(frame) == 3000 and (frame["abs_error_jaccard"] == 0).all()
    assert sorted(calls) == ["sick", "smoker"]


def test_empty_document_and_bad_input() -> None:
    frame = true_statistics(make_document("none", {}, not_private_block("hand-made"), []), small_data())
    assert frame.empty and list(frame.columns) == list(STATISTICS_COLUMNS)
    assert share_significant(frame) != share_significant(frame)  # NaN
    unknown = make_document("bad", {}, not_private_block("hand-made"),
                            [Redescription(SMOKER, SICK, RedescriptionStats(1, 1, 1, 1, 1.0)),
                             Redescription(BooleanLiteral("nope"), SICK, RedescriptionStats(1, 1, 1, 1, 1.0))])
    with pytest.raises(DprmError, match=r"redescriptions\[1\]\.left"):
        true_statistics(unknown, small_data())
    with pytest.raises(DprmError, match="format"):
        true_statistics({**small_document(), "format": "other/1"}, small_data())
    with pytest.raises(DprmError):
        true_statistics(42, small_data())  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(2))
def test_non_private_cartwheels_reports_the_true_statistics_exactly(seed: int, tmp_path) -> None:
    planted = make_planted(600, n_planted=2, noise=0.05, random_state=seed)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    miner = CartWheels(init_trials=2, alternations=2, max_pvalue=1.0, min_jaccard=0.0).fit(data, rng=np.random.default_rng(seed))
    path = tmp_path / "run.json"
    write_document(miner.document(), path)
    frame = true_statistics(path, data)
    assert len(frame) == len(miner.redescriptions_) > 10
    for stat in ("support_left", "support_right", "intersection", "union", "jaccard"):
        assert (frame[f"noisy_{stat}"] == frame[f"true_{stat}"]).all(), stat
    assert (frame["noisy_pvalue"] == frame["true_pvalue"]).all()
    assert (frame["abs_error_jaccard"] == 0).all() and (frame["error_intersection"] == 0).all()


def test_non_private_cartwheels_exact_with_missing_values_and_categories() -> None:
    rng = np.random.default_rng(5)
    data = TwoViewData(random_view(rng, 300, "left", 0.2), random_view(rng, 300, "right", 0.2))
    miner = CartWheels(init_trials=4, alternations=2, depth=3, min_support=5, max_pvalue=1.0, min_jaccard=0.0)
    frame = true_statistics(miner.fit(data, rng=np.random.default_rng(5)).document(), data)
    assert len(frame) > 10 and frame["left_text"].str.contains("¬").any()
    for stat in ("support_left", "support_right", "intersection", "union", "jaccard", "pvalue"):
        assert (frame[f"noisy_{stat}"] == frame[f"true_{stat}"]).all(), stat


# ---------------------------------------------------------------- summaries


def pooled() -> pd.DataFrame:
    """Two algorithms at one budget, two runs each; algorithm a is clearly more accurate."""
    rows = []
    a_true = [0.8, 0.85, 0.9, 0.95, 0.7, 0.75]
    b_true = [0.2, 0.3, 0.1, 0.25, 0.15, 0.35]
    for algorithm, truths in (("a", a_true), ("b", b_true)):
        for k, true in enumerate(truths):
            rows.append({"algorithm": algorithm, "epsilon": 1.0, "run": k % 2, "index": k // 2,
                         "pruned": k == 5, "true_jaccard": true, "noisy_jaccard": true + 0.05 * (k + 1),
                         "true_pvalue": 1e-6 if (algorithm == "a" or k % 3 == 0) else 0.2})
    frame = pd.DataFrame(rows)
    frame["abs_error_jaccard"] = (frame["noisy_jaccard"] - frame["true_jaccard"]).abs()
    return frame


def test_share_significant() -> None:
    frame = pd.DataFrame({"pruned": [False, False, False, True], "true_pvalue": [0.001, 0.5, 0.0099, 1e-9]})
    assert share_significant(frame) == pytest.approx(2 / 3)
    assert share_significant(frame, kept_only=False) == pytest.approx(3 / 4)
    assert share_significant(frame, alpha=0.005) == pytest.approx(1 / 3)
    assert share_significant(frame, alpha=0.001) == 0.0  # strictly below alpha
    assert math.isnan(share_significant(frame.iloc[:0]))
    assert math.isnan(share_significant(frame[frame["pruned"]]))
    assert math.isnan(share_significant(pd.DataFrame()))


def test_spearman() -> None:
    monotone = pd.DataFrame({"noisy_jaccard": [0.1, 0.4, 0.5, 0.9], "true_jaccard": [0.0, 0.05, 0.3, 0.31],
                             "pruned": [False] * 4})
    rho, p = spearman(monotone)
    assert rho == pytest.approx(1.0) and 0 <= p < 0.1
    reverse = monotone.assign(true_jaccard=monotone["true_jaccard"][::-1].to_numpy())
    assert spearman(reverse)[0] == pytest.approx(-1.0)
    frame = pooled()
    expected = spearmanr(frame.loc[~frame.pruned, "noisy_jaccard"], frame.loc[~frame.pruned, "true_jaccard"])
    assert spearman(frame) == pytest.approx((expected.statistic, expected.pvalue))
    for degenerate in (monotone.iloc[:0], monotone.iloc[:1], monotone.assign(true_jaccard=0.5), pd.DataFrame()):
        rho, p = spearman(degenerate)
        assert math.isnan(rho) and math.isnan(p)


def test_median_true_jaccard() -> None:
    frame = pd.DataFrame({"pruned": [False, False, False, True], "true_jaccard": [0.2, 0.6, 0.3, 1.0]})
    assert median_true_jaccard(frame) == pytest.approx(0.3)
    assert median_true_jaccard(frame, kept_only=False) == pytest.approx(0.45)
    assert math.isnan(median_true_jaccard(frame.iloc[:0]))
    # without a pruned column every row counts
    assert median_true_jaccard(frame.drop(columns="pruned")) == pytest.approx(0.45)


def test_runs_with_results() -> None:
    runs = pd.DataFrame({"algorithm": ["a"] * 4 + ["b"] * 2, "epsilon": [1.0, 1.0, 0.1, 0.1, 1.0, 1.0],
                         "run": [0, 1, 0, 1, 0, 1], "returned": [3, 2, 1, 0, 5, 4], "kept": [2, 0, 1, 0, 5, 4]})
    assert runs_with_results(runs) == pytest.approx(4 / 6)
    by = runs_with_results(runs, by=["algorithm", "epsilon"])
    assert by.to_dict() == {("a", 0.1): 0.5, ("a", 1.0): 0.5, ("b", 1.0): 1.0}
    assert math.isnan(runs_with_results(runs.iloc[:0]))
    assert math.isnan(runs_with_results(pd.DataFrame()))
    assert runs_with_results(runs.iloc[:0], by="algorithm").empty
    with pytest.raises(KeyError, match="kept"):
        runs_with_results(runs.drop(columns="kept"))


def test_mann_whitney_best_against_scipy() -> None:
    frame = pooled()
    table = mann_whitney_best(frame)
    assert list(table.columns) == list(MANN_WHITNEY_COLUMNS)
    assert table[["best", "other", "n_best", "n_other"]].values.tolist() == [["a", "b", 5, 5]]
    a = frame.loc[(frame.algorithm == "a") & ~frame.pruned, "true_jaccard"]
    b = frame.loc[(frame.algorithm == "b") & ~frame.pruned, "true_jaccard"]
    expected = mannwhitneyu(a, b, alternative="greater")
    assert table.loc[0, "statistic"] == expected.statistic == 25.0
    assert table.loc[0, "pvalue"] == pytest.approx(expected.pvalue)
    assert table.loc[0, "median_best"] == pytest.approx(a.median())
    # errors: smaller is better ("auto" sees "error" in the name)
    errors = mann_whitney_best(frame, value="abs_error_jaccard")
    best, other = errors.loc[0, "best"], errors.loc[0, "other"]
    assert errors.loc[0, "median_best"] <= errors.loc[0, "median_other"]
    expected = mannwhitneyu(frame.loc[(frame.algorithm == best) & ~frame.pruned, "abs_error_jaccard"],
                            frame.loc[(frame.algorithm == other) & ~frame.pruned, "abs_error_jaccard"],
                            alternative="less")
    assert errors.loc[0, "pvalue"] == pytest.approx(expected.pvalue)
    # three methods: the best against each of the others, sorted by p-value
    third = frame[frame.algorithm == "b"].assign(algorithm="c", true_jaccard=lambda f: f.true_jaccard + 0.4)
    table = mann_whitney_best(pd.concat([frame, third]))
    assert table["best"].tolist() == ["a", "a"] and table["other"].tolist() == ["b", "c"]
    assert table["pvalue"].is_monotonic_increasing


def test_mann_whitney_best_degenerate() -> None:
    frame = pooled()
    assert mann_whitney_best(frame.iloc[:0]).empty
    assert list(mann_whitney_best(frame.iloc[:0]).columns) == list(MANN_WHITNEY_COLUMNS)
    assert mann_whitney_best(frame[frame.algorithm == "a"]).empty
    with pytest.raises(ValueError, match="better"):
        mann_whitney_best(frame, better="best")


def test_summarise() -> None:
    frame = pooled()
    table = summarise(frame)
    assert list(table.columns) == ["algorithm", "epsilon", *SUMMARY_COLUMNS]
    assert table["algorithm"].tolist() == ["a", "b"]
    assert table["n_runs"].tolist() == [2, 2] and table["n_kept"].tolist() == [5, 5]
    kept_a = frame[(frame.algorithm == "a") & ~frame.pruned]
    row = table.iloc[0]
    assert row["median_true_jaccard"] == pytest.approx(kept_a.true_jaccard.median())
    assert row["share_significant"] == 1.0 and table.iloc[1]["share_significant"] == pytest.approx(2 / 5)
    assert row["spearman_rho"] == pytest.approx(spearmanr(kept_a.noisy_jaccard, kept_a.true_jaccard).statistic)
    assert row["median_abs_error_jaccard"] == pytest.approx(kept_a.abs_error_jaccard.median())
    # a single run's frame (no algorithm/epsilon/run columns): one row, n_runs NaN
    single = summarise(frame[frame.algorithm == "a"].drop(columns=["algorithm", "epsilon", "run"]))
    assert len(single) == 1 and math.isnan(single["n_runs"].iloc[0]) and single["n_kept"].iloc[0] == 5
    # empty inputs
    empty = summarise(frame.iloc[:0])
    assert empty.empty and list(empty.columns) == ["algorithm", "epsilon", *SUMMARY_COLUMNS]
    nothing = summarise(pd.DataFrame())
    assert len(nothing) == 1 and nothing["n_kept"].iloc[0] == 0 and math.isnan(nothing["share_significant"].iloc[0])


def test_summaries_of_a_true_statistics_frame() -> None:
    frame = true_statistics(small_document(), small_data())
    assert share_significant(frame, alpha=0.5) == pytest.approx(np.mean(frame.loc[~frame.pruned, "true_pvalue"] < 0.5))
    row = summarise(frame.assign(algorithm="hand", epsilon=1.0, run=0)).iloc[0]
    assert (row["n_runs"], row["n_kept"]) == (1, 3)
    assert row["median_true_jaccard"] == pytest.approx(0.5)
