"""Ground truth (FP-growth against brute force), the paper's rates, the JSON document, the evaluation."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.errors import DataError, ParameterError
from dprm.evaluation.itemsets import EvalConfig, ItemsetDataset, output_names, render_outputs, run_evaluation
from dprm.itemsets.document import FORMAT, itemsets_document, not_private_block, read_itemsets
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_key, itemset_rates
from dprm.itemsets.ison import Itemset
from test_cli import assert_one_error_line, run


def _brute_force(frame: pd.DataFrame, theta: float) -> dict:
    n = len(frame)
    result = {}
    columns = list(frame.columns)
    for size in range(1, len(columns) + 1):
        for chosen in itertools.combinations(columns, size):
            for values, count in frame.groupby(list(chosen)).size().items():
                values = values if isinstance(values, tuple) else (values,)
                if count >= theta * n - 1e-9:
                    result[frozenset(zip(chosen, map(str, values)))] = count / n
    return result


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("theta", [0.05, 0.2, 0.5])
def test_frequent_itemsets_equal_brute_force_with_constant_columns(seed, theta):
    rng = np.random.default_rng(seed)
    n = 60
    frame = pd.DataFrame({"a": rng.choice(["x", "y"], n), "b": rng.choice(["u", "v", "w"], n, p=[0.6, 0.3, 0.1]),
                          "c": ["k"] * n, "d": rng.choice(["p", "q"], n, p=[0.9, 0.1]), "e": ["1"] * n})
    truth = frequent_itemsets(frame, theta)
    expected = _brute_force(frame, theta)
    assert truth.keys() == expected.keys()
    for key, support in expected.items():
        assert truth[key] == pytest.approx(support)
    assert frozenset({("c", "k"), ("e", "1")}) in truth  # constant items are back, with support 1


def test_frequent_itemsets_max_length_and_bad_support():
    frame = pd.DataFrame({"a": ["x"] * 4, "b": ["u", "u", "v", "u"], "c": ["k", "k", "k", "l"]})
    assert max(len(k) for k in frequent_itemsets(frame, 0.25, max_length=2)) == 2
    assert frequent_itemsets(frame, 0.25, max_length=2).keys() == {
        k for k in frequent_itemsets(frame, 0.25) if len(k) <= 2}
    for bad in (0, 1.5, -0.1):
        with pytest.raises(ParameterError):
            frequent_itemsets(frame, bad)
    with pytest.raises(ParameterError, match="no rows"):
        frequent_itemsets(frame.iloc[:0], 0.5)


def test_rates_use_the_papers_denominators():
    truth = {itemset_key({"a": "x"}): 0.5, itemset_key({"b": "u"}): 0.4, itemset_key({"a": "x", "b": "u"}): 0.3,
             itemset_key({"c": "k"}): 0.9}
    found = [Itemset({"a": "x"}, 0.5), Itemset({"b": "u", "a": "x"}, 0.3), Itemset({"b": "v"}, 0.3),
             Itemset({"c": "l"}, 0.2), Itemset({"c": "m"}, 0.2), Itemset({"c": "n"}, 0.2), Itemset({"d": "o"}, 0.2),
             Itemset({"d": "p"}, 0.2)]
    rates = itemset_rates(found, truth)
    assert (rates.true_positives, rates.false_positives, rates.n_true, rates.n_reported) == (2, 6, 4, 8)
    assert rates.tpr == 0.5 and rates.fpr == 1.5 and rates.precision == 0.25  # FPR over |true| can exceed 1
    empty = itemset_rates(found, {})
    assert math.isnan(empty.tpr) and math.isnan(empty.fpr)


def test_document_round_trip_and_refusals(tmp_path):
    itemsets = [Itemset({"odor": "n", "ring-number": "o"}, 0.4), Itemset({"age": "[0, 25)"}, 0.05)]
    doc = itemsets_document(itemsets, {"min_support": 0.05, "orders": [("a", "b")]},
                            not_private_block(t_closeness=True))
    path = tmp_path / "itemsets.json"
    path.write_text(json.dumps(doc))
    assert doc["format"] == FORMAT
    assert doc["privacy"]["ledger"] == [] and doc["privacy"]["epsilon"] == 0.0
    assert doc["parameters"]["orders"] == [["a", "b"]]
    # in the format's order: by number of items, then by decreasing support
    assert [(s.items, s.support) for s in read_itemsets(path)] == [(s.items, s.support) for s in itemsets[::-1]]
    with pytest.raises(DataError, match="not a dprm.itemsets/1"):
        read_itemsets({"format": "dprm.redescriptions/1"})
    with pytest.raises(DataError, match="itemset 1"):
        read_itemsets({"format": FORMAT, "itemsets": [{"items": {}, "support": 0.2}]})
    with pytest.raises(DataError, match="itemset 1"):
        read_itemsets({"format": FORMAT, "itemsets": [{"items": {"a": "x"}, "support": 1.7}]})


def _planted(n: int = 4000, seed: int = 0) -> ItemsetDataset:
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y"], p=[0.7, 0.3], size=n)
    b = np.where(a == "x", "u", rng.choice(["u", "v"], size=n))
    c = rng.choice(["k", "l", "m"], size=n)
    frame = pd.DataFrame({"a": a, "b": b, "c": c})
    return ItemsetDataset("planted", frame, {"a": ["x", "y"], "b": ["u", "v"], "c": ["k", "l", "m"]}, ["c"])


def test_evaluation_on_known_data():
    config = EvalConfig(datasets=[_planted()], thetas=[0.2, 0.4], epsilons=[50.0], chain_counts=[1, 2],
                        chains_theta=0.2, timing_rows=[500, 1000], timing_theta=0.3, closeness_theta=0.1, seed=3)
    result = run_evaluation(config)
    table = result.table
    discovery = table[table["experiment"] == "discovery"]
    assert set(discovery["method"]) == {"ison", "ison t-closeness", "ison dp"}
    assert len(discovery) == 2 * 3
    ison = discovery[discovery["method"] == "ison"]
    assert (ison["tpr"] >= 0.9).all() and (ison["fpr"] <= 0.1).all()
    assert (discovery[discovery["method"] == "ison dp"]["tpr"] >= 0.8).all()  # ε = 50: nearly exact counts
    assert list(table[table["experiment"] == "chains"]["chains"]) == [1, 2]
    timing = table[table["experiment"] == "timing"]
    assert list(timing["rows"]) == [500, 1000] and (timing["learn_seconds"] > 0).all()
    assert not result.deviations.empty and (result.deviations["after"] > 0).all()
    assert not result.singled_out.empty
    # Table II: the true rows and people of a small group's itemsets are counted from the data
    first = result.singled_out.iloc[0]
    assert first["true_people"] == first["true_rows"]  # no user ids: one row per person
    outputs = render_outputs(result)
    assert list(outputs) == output_names()
    assert outputs["tpr_fpr.png"].startswith(b"\x89PNG") and b"Table II" in outputs["report.html"]
    rows = json.loads(outputs["itemsets_eval.json"])["rows"]
    assert len(rows) == len(table)


def test_evaluation_refuses_bad_settings():
    with pytest.raises(ParameterError):
        run_evaluation(EvalConfig(datasets=[_planted(100)], thetas=[0.0]))
    with pytest.raises(ParameterError):
        run_evaluation(EvalConfig(datasets=[_planted(100)], epsilons=[-1.0]))
    with pytest.raises(ParameterError, match="no dataset"):
        run_evaluation(EvalConfig(datasets=[]))


def test_cli_quick_writes_everything(tmp_path):
    out = tmp_path / "eval"
    code, stdout, stderr = run(["itemsets-eval", out, "--quick", "--experiments", "discovery,timing",
                                "--ibm-rows", "1500"])
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(output_names())
    assert "discovery" in stdout and "timing" in stdout


@pytest.mark.parametrize("args, fragment", [(["--thetas", "0"], "thetas"), (["--epsilons", "0"], "epsilons"),
                                            (["--grace-period", "0"], "grace_period must be 1 or more, not 0"),
                                            (["--split-confidence", "2"], "split_confidence must be in (0, 1)"),
                                            (["--chain-counts", "1,1"], "chain_counts must not repeat"),
                                            (["--experiments", "nope"], "--experiments"),
                                            (["--datasets", "nope"], "unknown dataset")])
def test_cli_bad_options_write_nothing(tmp_path, args, fragment):
    out = tmp_path / "never"
    code, _, stderr = run(["itemsets-eval", out, "--quick", *args])
    assert code == 2
    assert_one_error_line(stderr, fragment)
    assert not out.exists()


@pytest.mark.parametrize("content, fragment", [
    (b"", "is empty"),
    (b"a,b\n\xe9,x\ny,z\n", "column 'a', row 1: a value is not UTF-8 text"),  # not UTF-8
    (b"a,b,c\nx,u,p\ny,v\nx,u,q\n", "row 2 has 2 fields"),      # a short row, not missing values
])
def test_cli_refuses_a_file_it_cannot_read(tmp_path, content, fragment):
    data = tmp_path / "d.csv"
    data.write_bytes(content)
    out = tmp_path / "never"
    code, _, stderr = run(["itemsets-eval", out, "--quick", "--datasets", str(data)])
    assert code == 2, stderr
    assert_one_error_line(stderr, "d.csv", fragment)
    assert not out.exists()


def test_cli_refuses_a_folder_of_other_files(tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "report.html").write_text("precious")
    code, _, stderr = run(["itemsets-eval", keep, "--quick", "--experiments", "discovery", "--ibm-rows", "1500"])
    assert code == 2
    assert_one_error_line(stderr, "not empty", "itemsets_eval.json")
    assert (keep / "report.html").read_text() == "precious"
