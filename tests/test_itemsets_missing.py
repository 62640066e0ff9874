"""Missing values in the itemset estimates: no item, one more state, the supports and sensitivities unchanged.

An item is a ``(column, value)`` pair, so a row missing a column holds no item of it.
A domain that may hold missing values has one more state (the missing value, code
``len(categories)``): declared by ``missing=`` (public), or read off the data for an
undeclared column. These tests check the encoding, that the estimates' supports are the
shares of rows holding the items (rows missing a column excluded), that no itemset
names the missing value, and that every private release keeps its sensitivity (each
row in exactly one cell) and its ledger.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dprm.errors import DataError, ParameterError
from dprm.itemsets import DensityEstimator
from dprm.itemsets.domains import VariableDomain, declared_domains, encode_frame, infer_domains
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.ison import run_ison
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_items import release_items
from dprm.itemsets.sources import row_codes, scan_csv
from dprm.privacy import Accountant, SeededNoise

DOMAINS = {"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]}


def _table(n: int, seed: int, missing: float = 0.2) -> pd.DataFrame:
    """Three dependent columns; ``a`` and ``b`` miss a share of their values (NaN), ``c`` is complete."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y"], p=[0.7, 0.3], size=n).astype(object)
    b = np.where(a == "x", "u", rng.choice(["v", "w"], size=n)).astype(object)
    c = np.where(rng.random(n) < 0.85, np.where(a == "x", "p", "q"), rng.choice(["p", "q"], size=n)).astype(object)
    a[rng.random(n) < missing] = np.nan
    b[rng.random(n) < missing / 2] = np.nan
    return pd.DataFrame({"a": a, "b": b, "c": c})


def _true_support(frame: pd.DataFrame, items: dict[str, str]) -> float:
    held = np.ones(len(frame), dtype=bool)
    for column, value in items.items():
        held &= (frame[column] == value).to_numpy()  # NaN == value is False: a missing value is no item
    return float(held.mean())


def _names_no_missing(itemsets: list[dict[str, object]]) -> bool:
    return all(isinstance(v, str) and v != "nan" for items in itemsets for v in items.values())


# -- domains and encoding -----------------------------------------------------------------------------


def test_a_domain_with_the_missing_value_has_one_more_state_that_is_no_category() -> None:
    domain = VariableDomain("a", ("x", "y"), missing=True)
    assert (domain.size, domain.n_items, domain.missing_code) == (3, 2, 2)
    assert domain.encode(["y", None, float("nan"), pd.NA, "x"]).tolist() == [1, 2, 2, 2, 0]
    assert domain.decode([2, 1]) == [None, "y"]
    assert pd.isna(domain.texts(np.array([2, 0]))[0]) and domain.texts(np.array([0]))[0] == "x"
    binned = VariableDomain("v", ("[0, 1)", "[1, 2]"), edges=(0.0, 1.0, 2.0), missing=True)
    assert binned.encode(["0.5", None, "2"]).tolist() == [0, 2, 1]
    with pytest.raises(DataError, match=r"row 3: value '7' is not one of the categories") as info:
        domain.encode(["x", None, "7"])  # the row of the file, not of the values left once the missing are out
    assert info.value.row == 3
    with pytest.raises(DataError, match="row 2: missing value, but the column's declared domain has none"):
        VariableDomain("a", ("x", "y")).encode(["x", None])
    with pytest.raises(DataError, match=r"row 2: missing value"):
        VariableDomain("v", ("[0, 2]",), edges=(0.0, 2.0)).encode(["1", None])


def test_declared_columns_have_it_when_declared_undeclared_ones_when_the_data_hold_one() -> None:
    frame = pd.DataFrame({"a": ["x", None, "y"], "b": ["u", "v", "w"], "c": ["p", "q", None]})
    domains = infer_domains(frame, {"a": ["x", "y"], "b": ["u", "v", "w"]}, missing=["a", "b"])
    assert {c: (d.categories, d.missing) for c, d in domains.items()} == {
        "a": (("x", "y"), True), "b": (("u", "v", "w"), True),  # declared: public, whatever the rows hold
        "c": (("p", "q"), True)}                                  # read off the data, like its categories
    assert encode_frame(frame, domains).tolist() == [[0, 0, 0], [2, 1, 1], [1, 2, 2]]
    assert not infer_domains(frame[["b"]])["b"].missing  # no missing value read, none declared
    with pytest.raises(DataError, match="column 'a', row 2: missing value") as info:
        encode_frame(frame, infer_domains(frame, {"a": ["x", "y"]}))  # declared without it
    assert info.value.code == "missing_in_complete"
    with pytest.raises(ParameterError, match="missing: no column named 'z'"):
        infer_domains(frame, missing=["z"])
    with pytest.raises(ParameterError, match="missing must be a list of column names"):
        declared_domains(["a"], {"a": ["x"]}, missing="a")


def test_a_csv_file_and_a_stream_read_empty_cells_as_the_missing_value(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\nx,u\n,v\ny,\n")
    scan = scan_csv(path, "t.csv", 2, domains={"a": ["x", "y"]}, missing=["a"])
    assert {n: (d.categories, d.missing) for n, d in scan.variables.items()} == {"a": (("x", "y"), True),
                                                                               "b": (("u", "v"), True)}
    assert row_codes(scan.variables, {"a": None, "b": float("nan")}, 1).tolist() == [2, 2]
    with pytest.raises(DataError, match="row 2: missing value"):
        scan_csv(path, "t.csv", 2, domains={"a": ["x", "y"]})
    estimator = DensityEstimator(n_chains=1, domains={"a": ["x", "y"]}, missing=["a"], random_state=0).fit(path)
    assert estimator.variables_["a"].missing and estimator.domains_["a"] == ("x", "y")


# -- the non-private estimate: supports are shares of rows holding the items --------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_supports_exclude_the_rows_missing_a_column_and_no_itemset_names_the_missing_value(seed: int) -> None:
    """Oracle: the batch estimate of a small table against the exact supports (FP-growth, a missing cell no item)."""
    frame = _table(4000, seed)
    estimator = DensityEstimator(n_chains=2, learner="batch", random_state=seed).fit(frame)
    assert [d.missing for d in estimator.variables_.values()] == [True, True, False]
    for items in ({"a": "x"}, {"b": "u"}, {"a": "x", "b": "u"}, {"a": "y", "c": "q"}, {"c": "p"}):
        assert estimator.density(items) == pytest.approx(_true_support(frame, items), abs=0.02), items
    found = run_ison(estimator, 0.1).itemsets
    truth = frequent_itemsets(frame, 0.1)
    assert not any(("a", "nan") in key or ("b", "nan") in key for key in truth)
    assert all(value == pytest.approx(_true_support(frame, dict(key)), abs=1e-12) for key, value in truth.items())
    assert _names_no_missing([s.items for s in found])
    rates = itemset_rates([s.items for s in found], truth)
    assert rates.tpr == 1.0 and rates.fpr == 0.0


def test_a_sample_holds_missing_values_as_nan_in_their_share() -> None:
    frame = _table(5000, 3)
    estimator = DensityEstimator(n_chains=1, learner="batch", random_state=0).fit(frame)
    sample = estimator.sample(20_000, np.random.default_rng(0))
    assert sample["a"].isna().mean() == pytest.approx(frame["a"].isna().mean(), abs=0.02)
    assert set(sample["a"].dropna()) == {"x", "y"} and not sample["c"].isna().any()
    conditional = estimator.conditional("a", {"c": "p"})
    assert set(conditional) == {"x", "y"} and sum(conditional.values()) < 1  # the rest is the missing value's


def test_frequent_itemsets_count_a_missing_cell_as_no_item() -> None:
    frame = pd.DataFrame({"a": ["x", "x", None, None], "b": ["u", "u", "u", None], "c": [None] * 4})
    found = {tuple(sorted(k)): v for k, v in frequent_itemsets(frame, 0.25).items()}
    assert found == {(("a", "x"),): 0.5, (("b", "u"),): 0.75, (("a", "x"), ("b", "u")): 0.5}


# -- private releases: sensitivity, ledger, supports ---------------------------------------------------


def _histograms(codes: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    return [np.bincount(codes[:, j], minlength=size) for j, size in enumerate(sizes)]


def test_with_the_missing_state_each_histogram_still_moves_by_one_in_l1() -> None:
    """Every neighbour (a row removed, a row added, missing or not): each column's histogram changes by 1 in L1."""
    variables = declared_domains(list(DOMAINS), DOMAINS, missing=["a", "b"])
    sizes = [variables[c].size for c in DOMAINS]
    assert sizes == [3, 4, 2]
    codes = encode_frame(_table(40, 4, missing=0.3), variables)
    assert (codes[:, 0] == 2).any() and (codes[:, 1] == 3).any()
    base = _histograms(codes, sizes)
    neighbours = [np.delete(codes, r, axis=0) for r in range(len(codes))]
    neighbours += [np.vstack([codes, [[a, b, c]]]) for a in range(3) for b in range(4) for c in range(2)]
    for neighbour in neighbours:
        for h, h2 in zip(base, _histograms(neighbour, sizes)):
            assert np.abs(h - h2).sum() == 1


def test_the_missing_value_is_never_a_kept_item_and_the_noisy_total_counts_its_rows() -> None:
    frame = _table(20_000, 5, missing=0.6)  # a is missing in 60 % of the rows: more than θ
    variables = declared_domains(list(DOMAINS), DOMAINS, missing=["a", "b"])
    codes = encode_frame(frame, variables)
    acc = Accountant(100.0, SeededNoise(np.random.default_rng(1)))
    sizes = [variables[c].size for c in DOMAINS]
    chosen = release_items(codes, sizes, 100.0, 0.2, acc, list(DOMAINS), [variables[c].n_items for c in DOMAINS])
    assert 2 not in chosen.kept[0].tolist() and 3 not in chosen.kept[1].tolist()
    assert chosen.counts[0][2] == pytest.approx((codes[:, 0] == 2).sum(), abs=20)  # released, merged into other
    assert chosen.mapping[0][2] == len(chosen.kept[0])  # other
    assert chosen.n_hat == pytest.approx(20_000, abs=20)
    unaware = release_items(codes, sizes, 100.0, 0.2, Accountant(100.0, SeededNoise(np.random.default_rng(1))),
                            list(DOMAINS))
    assert 2 in unaware.kept[0].tolist()  # without n_items the frequent missing state would be an item


@pytest.mark.parametrize("method, structure", [("chain", "parents"), ("chain", "dp-trees"),
                                               ("frequent-items", "parents"), ("basis", "parents"),
                                               ("auto", "parents")])
def test_every_private_method_spends_epsilon_and_names_no_missing_value(method: str, structure: str) -> None:
    frame = _table(6000, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_private_estimator(frame, 20.0, domains=DOMAINS, missing=["a", "b"], min_support=0.2,
                                    private_method=method, structure=structure, random_state=3)
    assert sum(entry["epsilon"] for entry in fit.privacy["ledger"]) == pytest.approx(20.0)
    assert "categories of some columns read off the data" not in " ".join(fit.privacy["reasons"])
    if fit.bases is not None:
        found = [entry["items"] for entry in fit.bases.named_itemsets(0.2)]
    else:
        assert fit.estimator.variables_["a"].missing and not fit.estimator.variables_["c"].missing
        found = [s.items for s in run_ison(fit.estimator, 0.2).itemsets]
        assert fit.estimator.density({"a": "x"}) == pytest.approx(_true_support(frame, {"a": "x"}), abs=0.05)
    assert found and _names_no_missing(found)
    rates = itemset_rates(found, frequent_itemsets(frame, 0.2))
    assert rates.tpr >= 0.7, (method, structure, rates)


def test_a_private_fit_refuses_a_missing_value_its_declared_domains_do_not_have_before_spending() -> None:
    acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(DataError, match="column 'a', row .*: missing value"):
        fit_private_estimator(_table(500, 7), 1.0, domains=DOMAINS, missing=["b"], accountant=acc, random_state=0)
    assert acc.spent() == Fraction(0)


def test_the_dp_trees_learn_the_missing_value_as_a_class_and_a_branch() -> None:
    """A DP tree's missing-values child is the branch of the missing state; its target has one more class."""
    frame = _table(8000, 8, missing=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_private_estimator(frame, 200.0, domains=DOMAINS, missing=["a", "b"], structure="dp-trees",
                                    orders=[["a", "b", "c"]], random_state=0)
    trees = fit.estimator.chains_[0].trees
    sizes = [fit.estimator.variables_[c].size for c in DOMAINS]
    assert [t.n_classes for t in trees] == [sizes[t.target] for t in trees] == [3, 4, 2]
    for t in trees:  # every split has one child per state of the column it tests
        for node in range(len(t.feature)):
            if t.feature[node] >= 0:
                assert t.n_children[node] == sizes[t.feature[node]]
    assert fit.estimator.density({"b": "u"}) == pytest.approx(_true_support(frame, {"b": "u"}), abs=0.05)


# -- the types file's reading rules on a table of text (dprm itemsets) --------------------------------


def test_clamping_reads_undeclared_categories_as_missing_and_binned_numbers_into_their_edges() -> None:
    from dprm.itemsets.declarations import clamp_to_domains

    frame = pd.DataFrame({"g": ["1", "3", None, "2"], "v": ["4", "-1", "x", None], "u": ["a", "b", "c", "d"]})
    clamped, notes = clamp_to_domains(frame, {"g": [1, 2]}, {"v": [0, 2, 5]}, missing=["g"], source="t.csv")
    assert clamped["g"].isna().tolist() == [False, True, True, False]  # matched as the encoding matches them
    assert clamped["v"].tolist()[:2] == ["4", 0.0] and clamped["v"][2] == "x"  # not a number: left to the encoding
    assert clamped["u"].tolist() == ["a", "b", "c", "d"] and frame["g"][1] == "3"  # undeclared; the input untouched
    assert notes == ["t.csv: column 'g': values that are not declared categories read as missing",
                     "t.csv: column 'v': values outside the bin edges [0, 5] clamped into them"]
    variables = infer_domains(clamped, {"g": [1, 2]}, {"v": [0, 2, 5]}, missing=["g", "v"])
    with pytest.raises(DataError, match=r"column 'v', row 3: value 'x' is not a finite number"):
        encode_frame(clamped, variables)
    same, none = clamp_to_domains(frame[["u"]], {}, {}, missing=[], source="t.csv")
    assert none == [] and same.equals(frame[["u"]])
    with pytest.raises(DataError, match=r"column 'g', row 2: value '3' is not one of the declared categories "
                                        r"\(clamping would make it missing") as info:
        clamp_to_domains(frame, {"g": [1, 2]}, {}, missing=[], source="t.csv")
    assert info.value.code == "unknown_category" and info.value.row == 2


def test_a_complete_column_refuses_its_first_missing_value() -> None:
    from dprm.itemsets.declarations import check_complete

    frame = pd.DataFrame({"a": ["x", "y", None], "b": [None, "u", "v"]})
    check_complete(frame, [], source="t.csv", types_source="types.json")
    with pytest.raises(DataError, match=r"^t.csv: column 'a', row 3: a missing value, but types.json declares") as info:
        check_complete(frame, ["a"], source="t.csv", types_source="types.json")
    assert info.value.code == "missing_in_complete" and info.value.column == "a"
    with pytest.raises(DataError, match="column 'b', row 1"):  # the file's first column holding one
        check_complete(frame[["b", "a"]], ["a", "b"], source="t.csv", types_source="types.json")


def test_a_synthetic_table_s_missing_value_is_nan_and_no_item(monkeypatch, tmp_path) -> None:
    """mst / aim: the public domain sent holds the missing value's state; a synthetic row holding it is NaN."""
    import dprm.privacy.dpmm_runner as dpmm_module
    from test_itemsets_private_synthetic import FakeWorker

    python = tmp_path / "python"
    python.write_text("")
    monkeypatch.setenv("DPRM_DPMM_PYTHON", str(python))
    worker = FakeWorker()
    monkeypatch.setattr(dpmm_module, "run_dpmm", worker)
    fit = fit_private_estimator(_table(300, 9), 1.0, domains=DOMAINS, missing=["a", "b"], private_method="mst",
                                accountant=Accountant(1, SeededNoise(np.random.default_rng(0))))
    assert worker.requests[0]["domain"] == {"c0": 3, "c1": 4, "c2": 2}  # a: x, y, missing; b: u, v, w, missing
    codes = worker.requests[0]["codes"]
    assert (codes["c0"] == 2).any() and codes["c2"].max() <= 1  # rows missing a sent as its state; c has none
    synthetic = fit.synthetic  # the fake worker draws b's codes uniformly, its missing value's (3) among them
    assert synthetic["b"].isna().any() and set(synthetic["b"].dropna()) <= {"u", "v", "w"}
    assert fit.estimator.variables_["a"].missing and not fit.estimator.variables_["c"].missing
    found = frequent_itemsets(synthetic, 0.1)
    assert found and _names_no_missing([dict(key) for key in found])


def test_t_closeness_treats_a_quasi_identifier_s_missing_value_as_its_last_state() -> None:
    from dprm.itemsets.closeness import apply_t_closeness, check_t_closeness, global_distribution

    estimator = DensityEstimator(n_chains=2, learner="batch", random_state=0).fit(_table(4000, 10))
    assert len(global_distribution(estimator, "a")) == 3  # x, y and the missing value
    closed = apply_t_closeness(estimator, ["a"], delta=0.0)
    assert check_t_closeness(closed, ["a"], delta=0.0).ok
    assert _names_no_missing([s.items for s in run_ison(closed, 0.2).itemsets])
