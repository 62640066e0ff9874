"""No rows is a dataset like any other for a private release (issue 32, item 10).

A private release must be defined on every dataset, the empty one included: refusing
no rows while releasing one row tells ``n = 0`` from ``n = 1`` with certainty. With
every domain declared, the classifier and the private itemsets release noise only on
no rows and spend ε as on any other input. With a domain read off the data the fit is
not private anyway, and no rows leave nothing to read: a refusal flagged
``data_dependent`` (that a table has no rows is a fact about the rows, so a server
answers it with the public message only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli import run

from dprm.classifier import DPDecisionTreeClassifier
from dprm.errors import DataError
from dprm.itemsets.ison import mine_itemsets
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.text_table import read_text_frame

DOMAINS = {"a": ["x", "y"], "b": ["u", "v"]}


def _table(n: int) -> pd.DataFrame:
    return pd.DataFrame({"a": ["x"] * n, "b": ["u"] * n}, dtype=object)


@pytest.mark.parametrize("method", ["chain", "frequent-items"])
@pytest.mark.parametrize("n", [0, 1])
def test_private_itemsets_release_on_no_rows_as_on_one(n: int, method: str) -> None:
    fit = fit_private_estimator(_table(n), 1.0, domains=DOMAINS, private_method=method,
                                min_support=None if method == "chain" else 0.3)
    assert fit.privacy["epsilon"] == pytest.approx(1.0)
    assert sum(step["epsilon"] for step in fit.privacy["ledger"]) == pytest.approx(1.0)
    assert fit.privacy["guarantee"] != "none" and not fit.privacy.get("reasons")
    singles = {tuple(s.items.items())[0][1]: s.support for s in mine_itemsets(fit.estimator, 1e-9, max_length=1)}
    assert singles and set(singles) <= {"x", "y", "u", "v"} and all(0.0 <= f <= 1.0 for f in singles.values())


def test_a_private_fit_of_no_rows_with_domains_read_off_the_data_is_a_data_dependent_refusal() -> None:
    with pytest.raises(DataError) as info:
        fit_private_estimator(_table(0), 1.0, domains={"a": ["x", "y"]})
    assert info.value.code == "no_rows" and info.value.data_dependent is True


def test_a_text_table_without_rows_is_a_data_dependent_refusal_unless_allowed(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\n")
    with pytest.raises(DataError) as info:
        read_text_frame(path, "t.csv")
    assert info.value.code == "no_rows" and info.value.data_dependent is True
    empty = read_text_frame(path, "t.csv", allow_empty=True)
    assert list(empty.columns) == ["a", "b"] and len(empty) == 0


def test_the_itemsets_command_releases_a_header_only_file_with_declared_domains(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n")
    (tmp_path / "types.json").write_text(
        '{"columns": {"a": {"type": "categorical", "categories": ["x", "y"]},'
        ' "b": {"type": "categorical", "categories": ["u", "v"]}}}')
    out = tmp_path / "out.json"
    code, _, stderr = run(["itemsets", tmp_path / "t.csv", "--epsilon", "1", "--types", tmp_path / "types.json",
                           "--min-support", "0.3", "-o", out])
    assert code == 0, stderr
    assert out.exists()
    code, _, stderr = run(["itemsets", tmp_path / "t.csv", "--epsilon", "1", "--min-support", "0.3",
                           "-o", tmp_path / "x.json"])
    assert code == 2 and "no data rows" in stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("n", [0, 1])
def test_the_classifier_fits_no_rows_as_one_when_everything_is_declared(n: int) -> None:
    X = np.zeros((n, 2))
    y = np.array(["p"] * n, dtype=object)
    model = DPDecisionTreeClassifier(epsilon=1.0, max_depth=2, classes=["p", "q"],
                                     bounds={0: (0.0, 1.0), 1: (0.0, 1.0)})
    model.fit(X, y)
    assert model.privacy_spent_ == pytest.approx(1.0)
    assert set(model.predict(np.array([[0.2, 0.7], [0.9, 0.1]]))) <= {"p", "q"}


def test_the_classifier_refuses_no_rows_when_a_domain_is_read_off_the_data() -> None:
    model = DPDecisionTreeClassifier(epsilon=1.0, max_depth=2, classes=["p", "q"], bounds={0: (0.0, 1.0)})
    with pytest.raises(ValueError, match="0 sample"):
        model.fit(np.zeros((0, 2)), np.array([], dtype=object))
