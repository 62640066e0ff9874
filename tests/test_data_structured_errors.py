"""Structured errors: code, file, column, row, and a public message without data."""

from __future__ import annotations

import pickle
from pathlib import Path

import pandas as pd
import pytest

from dprm.data.loading import load_two_view
from dprm.data.types_file import read_types_file
from dprm.errors import ERROR_CODES, BudgetExceededError, DataError, DprmError, ParameterError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def error_of(*args, **kwargs) -> DataError:
    with pytest.raises(DataError) as info:
        load_two_view(*args, **kwargs)
    return info.value


@pytest.fixture
def right(tmp_path: Path) -> Path:
    return write(tmp_path / "right.csv", "id,b\n1,x\n2,y\n3,x\n")


def test_positional_message_still_works_and_classes_have_default_codes() -> None:
    assert str(DprmError("m")) == "m" and DprmError("m").code == "dprm_error"
    assert DataError("m").code == "data_error" and DataError("m").data_dependent is True
    assert ParameterError("m").code == "parameter_error" and ParameterError("m").data_dependent is False
    assert BudgetExceededError("m").code == "budget_exceeded"
    assert isinstance(ParameterError("m"), ValueError)
    err = DataError("m")
    assert (err.file, err.column, err.row) == (None, None, None)
    assert DataError().code == "data_error"


def test_keywords_and_pickling() -> None:
    err = DataError("f.csv: column 'a', row 3: value 7 is bad", code="value_out_of_bounds", file="f.csv",
                    column="a", row=3)
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and (again.code, again.file, again.column, again.row) == (
        "value_out_of_bounds", "f.csv", "a", 3)


def test_public_message_names_no_value_and_no_row() -> None:
    err = DataError("f.csv: column 'age', row 17: value 130 is outside the declared bounds [0, 120]",
                    code="value_out_of_bounds", file="f.csv", column="age", row=17)
    public = err.public_message()
    assert "130" not in public and "17" not in public
    assert public == "f.csv: column 'age': a value is outside the declared bounds (value_out_of_bounds)"
    independent = DataError("types.json: column 'a': unknown type 'integer'", code="bad_types_file",
                            data_dependent=False)
    assert independent.public_message() == str(independent)
    assert DataError("secret 42").public_message() == "the data cannot be read or does not fit the two-view " \
                                                     "format (data_error)"


@pytest.mark.parametrize("left_text, types, code, column, row, leaked", [
    ("id,a\n1,0.5\n2,1.5\n3,130\n", {"columns": {"a": {"bounds": [0, 120]}}}, "value_out_of_bounds", "a", 3, "130"),
    ("id,a\n1,f\n2,m\n3,F\n", {"columns": {"a": {"categories": ["f", "m"]}}}, "unknown_category", "a", 3, "'F'"),
    ("id,a\n1,0.5\n2,lots\n3,1\n", {"columns": {"a": "numeric"}}, "not_a_number", "a", 2, "lots"),
    ("id,a\n1,0\n2,7\n3,1\n", {"columns": {"a": "boolean"}}, "not_boolean", "a", 2, "7"),
    ("id,a\n1,0.5\n2,inf\n3,1\n", None, "not_finite", "a", 2, "inf"),
    ("id,a\n1,0\n,1\n3,0\n", None, "missing_id", "id", 2, "row 2"),
])
def test_value_errors_carry_code_column_and_row(tmp_path: Path, right: Path, left_text: str, types, code: str,
                                               column: str, row: int, leaked: str) -> None:
    left = write(tmp_path / "left.csv", left_text)
    err = error_of(left, right, types=types)
    assert (err.code, err.file, err.column, err.row) == (code, str(left), column, row)
    assert code in ERROR_CODES
    assert err.data_dependent
    public = err.public_message()
    assert public.startswith(f"{left}: column {column!r}: ")
    # The file's path is the owner's and may hold any digit (pytest-147/...): look past it.
    assert leaked in str(err).removeprefix(str(left)) and leaked not in public.removeprefix(str(left))


@pytest.mark.parametrize("make, code, dependent", [
    (lambda d: (d / "absent.csv", None), "file_not_found", False),
    (lambda d: ((d / "dir.csv").mkdir() or d / "dir.csv", None), "not_a_file", False),
    (lambda d: (write(d / "x.xlsx", "a"), None), "unknown_file_type", False),
    (lambda d: (write(d / "e.csv", ""), None), "empty_file", True),
    (lambda d: (write(d / "h.csv", "id,a\n"), None), "no_rows", True),
    (lambda d: (write(d / "f.csv", "id,a\n1,2\n2,3,4\n"), None), "bad_csv", True),
    (lambda d: (write(d / "n.csv", "id,a,a\n1,2,3\n"), None), "duplicate_column", False),
    (lambda d: (write(d / "u.csv", "id,,a\n1,2,3\n"), None), "unnamed_column", False),
    (lambda d: (write(d / "s.csv", "id,b\n1,2\n"), None), "shared_column", False),
    (lambda d: (write(d / "i.csv", "id,a\n1,0\n1,1\n3,0\n"), None), "duplicate_id", True),
    (lambda d: (write(d / "m.csv", "id,a\n1,0\n2,1\n4,0\n"), None), "unmatched_id", True),
    (lambda d: (write(d / "ok.csv", "id,a\n1,0\n2,1\n3,0\n"), {"columns": {"zz": "numeric"}}), "unknown_column",
     False),
    (lambda d: (write(d / "ok.csv", "id,a\n1,0\n2,1\n3,0\n"), {"columns": {"a": "integer"}}), "bad_types_file",
     False),
    (lambda d: (write(d / "ok.csv", "id,a\n1,0\n2,1\n3,0\n"), d / "absent.json"), "file_not_found", False),
    (lambda d: (write(d / "ok.csv", "k,a\n1,0\n2,1\n3,0\n"), {"id_column": "k"}), "missing_id_column", False),
])
def test_file_and_schema_errors_carry_codes(tmp_path: Path, right: Path, make, code: str, dependent: bool) -> None:
    left, types = make(tmp_path)
    err = error_of(left, right, types=types)
    assert err.code == code and code in ERROR_CODES and err.data_dependent is dependent
    assert err.file is not None
    assert "\n" not in str(err) and "\n" not in err.public_message()


def test_types_file_errors_depend_on_the_types_file_only(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", '{"columns": {"a": {"bounds": [3, 1]}}}')
    with pytest.raises(DataError) as info:
        read_types_file(path)
    err = info.value
    assert (err.code, err.file, err.column, err.data_dependent) == ("bad_types_file", str(path), "a", False)
    assert err.public_message() == str(err)


def test_dataframe_errors_have_codes() -> None:
    err = error_of(pd.DataFrame({"m": ["a", 1, 2.5]}), pd.DataFrame({"b": [0, 1, 0]}))
    assert err.code == "unsupported_column" and err.column == "m" and err.file == "left DataFrame"
