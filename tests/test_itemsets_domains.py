"""Domains of the density estimate: inference, declared categories, public bins, refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprm.errors import DataError, ParameterError
from dprm.itemsets.domains import infer_domains, encode_frame, VariableDomain


def test_categories_are_the_texts_as_written_and_codes_round_trip() -> None:
    frame = pd.DataFrame({"a": ["x", "?", "x"], "flag": [0, 1, 1], "b": [True, False, True]})
    domains = infer_domains(frame)
    assert domains["a"].categories == ("?", "x")
    assert domains["flag"].categories == ("0", "1")
    assert domains["b"].categories == ("false", "true")
    codes = encode_frame(frame, domains)
    assert [domains[n].decode(codes[:, j]) for j, n in enumerate(domains)] == [["x", "?", "x"], ["0", "1", "1"],
                                                                              ["true", "false", "true"]]


def test_numeric_column_needs_bins_or_categories() -> None:
    frame = pd.DataFrame({"age": [23, 51, 70]})
    with pytest.raises(ParameterError, match="'age' is numeric"):
        infer_domains(frame)
    assert infer_domains(frame, domains={"age": [23, 51, 70, 99]})["age"].categories == ("23", "51", "70", "99")
    binned = infer_domains(frame, bins={"age": [0, 50, 100]})["age"]
    assert encode_frame(frame, {"age": binned}).ravel().tolist() == [0, 1, 1]


def test_values_outside_the_domain_or_bins_and_missing_values_name_column_and_row() -> None:
    domain = VariableDomain("colour", ("blue", "red"))
    with pytest.raises(DataError, match=r"column 'colour', row 12: value 'green'") as info:
        domain.encode(["red", "green"], source="x.csv", first_row=11)
    assert info.value.code == "unknown_category"
    binned = infer_domains(pd.DataFrame({"v": [1.0]}), bins={"v": [0, 1, 2]})["v"]
    with pytest.raises(DataError, match=r"row 2: value 2\.5 is outside the bin edges \[0, 2\]$"):
        binned.encode([0.5, 2.5])
    halves = infer_domains(pd.DataFrame({"v": [0.25]}), bins={"v": [0, 0.5]})["v"]
    with pytest.raises(DataError, match=r"value 0\.75 is outside the bin edges \[0, 0\.5\]$"):  # was np.float64(0.5)
        halves.encode([0.25, 0.75])
    with pytest.raises(DataError, match="row 2: missing value, but the column's declared domain has none") as info:
        domain.encode(["red", None])  # a declared domain without the missing value: an error, not a guess
    assert info.value.code == "missing_in_complete" and "na_values" in str(info.value)


def test_bin_edges_are_checked() -> None:
    with pytest.raises(ParameterError, match="strictly increasing"):
        infer_domains(pd.DataFrame({"v": [1.0]}), bins={"v": [2, 1]})
    with pytest.raises(ParameterError, match="no column named 'w'"):
        infer_domains(pd.DataFrame({"v": [1.0]}), bins={"v": [0, 2], "w": [0, 1]})


def test_last_bin_is_closed() -> None:
    domain = infer_domains(pd.DataFrame({"v": [0.0]}), bins={"v": [0, 1, 2]})["v"]
    assert domain.encode(np.array([0.0, 1.0, 1.999, 2.0])).tolist() == [0, 1, 1, 1]


def test_integer_codes_are_named_together_and_read_as_categories_when_asked() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(1, 11, 300), "b": rng.integers(1, 4, 300).astype(str),
                          "c": rng.choice(["x", "y"], 300), "w": rng.normal(size=300)})
    with pytest.raises(ParameterError) as refused:
        infer_domains(frame)
    message = str(refused.value)
    assert "'w' is numeric" in message and "columns 'a', 'b' are numeric" in message
    assert "--categorical-integers" in message and message.count("\n") == 0
    domains = infer_domains(frame[["a", "b", "c"]], categorical_integers=True)
    assert domains["a"].categories == tuple(str(v) for v in range(1, 11))  # numeric order, not 1, 10, 2
    assert domains["b"].categories == ("1", "2", "3") and domains["c"].categories == ("x", "y")
    with pytest.raises(ParameterError, match="'w' is numeric"):  # measured values stay refused
        infer_domains(frame, categorical_integers=True)
    wide = pd.DataFrame({"a": np.arange(300) % 21})  # 21 distinct codes: more than MAX_INTEGER_CATEGORIES
    with pytest.raises(ParameterError, match="'a' is numeric: give its public bin edges"):
        infer_domains(wide, categorical_integers=True)


def test_named_columns_are_read_as_categories_whatever_numbers_they_hold() -> None:
    frame = pd.DataFrame({"a": [1.5, 2.5, 10.0, 1.5], "b": [1, 2, 3, 1], "w": [0.1, 0.2, 0.3, 0.4]})
    domains = infer_domains(frame[["a", "b"]], categorical_integers=["a", "b"])
    assert domains["a"].categories == ("1.5", "2.5", "10") and domains["b"].categories == ("1", "2", "3")
    with pytest.raises(ParameterError) as refused:  # only the named columns: 'b' and 'w' stay refused
        infer_domains(frame, categorical_integers=["a"])
    assert "'w' is numeric" in str(refused.value) and "'b' is numeric with at most" in str(refused.value)
    assert "'a'" not in str(refused.value)
    with pytest.raises(ParameterError, match="categorical_integers: no column named 'z'"):
        infer_domains(frame, categorical_integers=["z"])
    with pytest.raises(ParameterError, match="True, False or a list of column names"):
        infer_domains(frame, categorical_integers="a")


def test_mining_something_else_than_a_fitted_estimate_says_so() -> None:
    """``mine_itemsets(frame, 0.3)`` raised ``AttributeError: 'DataFrame' object has no attribute 'variables_'``."""
    from dprm.itemsets import DensityEstimator
    from dprm.itemsets.ison import mine_itemsets
    from dprm.itemsets.top_k import run_top_k

    frame = pd.DataFrame({"a": ["x", "y"]})
    with pytest.raises(ParameterError, match="must be a fitted DensityEstimator .* not DataFrame"):
        mine_itemsets(frame, 0.3)
    with pytest.raises(ParameterError, match="must be a fitted DensityEstimator"):
        run_top_k(frame, 5, 0.3)
    with pytest.raises(ParameterError, match="learned nothing yet"):
        mine_itemsets(DensityEstimator(), 0.3)
    with pytest.raises(ParameterError, match=r"domains\['a'\] must be a list of categories, not 'xy'"):
        DensityEstimator(domains={"a": "xy"}).fit(frame)  # was read as the categories x and y
