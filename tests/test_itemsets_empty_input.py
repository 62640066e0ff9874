"""An empty input's refusal in the itemsets says that it depends on the data (issue 32, item 10).

That a table has no rows is a fact about the rows (:mod:`dprm.errors`: "that a row
exists at all"); its refusal must be flagged ``data_dependent`` so that a server
answers it with the public message only.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dprm.errors import DataError
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.text_table import read_text_frame


def test_a_private_fit_of_no_rows_is_a_data_dependent_refusal() -> None:
    with pytest.raises(DataError) as info:
        fit_private_estimator(pd.DataFrame({"a": []}), 1.0, domains={"a": ["x", "y"]})
    assert info.value.code == "no_rows" and info.value.data_dependent is True


def test_a_text_table_without_rows_is_a_data_dependent_refusal(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\n")
    with pytest.raises(DataError) as info:
        read_text_frame(path, "t.csv")
    assert info.value.code == "no_rows" and info.value.data_dependent is True
