"""Bad input: every problem is one DataError line naming the file (and column/row/value)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dprm.data.loading import load_two_view, read_view
from dprm.data.types_file import TypesSpec, read_types_file
from dprm.errors import DataError, ParameterError

GOOD = "id,a\n1,0.5\n2,1.5\n3,2.5\n"
GOOD_RIGHT = "id,b\n1,x\n2,y\n3,x\n"


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def load_error(left, right, **kwargs) -> str:
    """Load, expect a DataError, return its message after checking it is one line."""
    with pytest.raises(DataError) as info:
        load_two_view(left, right, **kwargs)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message and message
    return message


@pytest.fixture
def right(tmp_path: Path) -> Path:
    return write(tmp_path / "right.csv", GOOD_RIGHT)


# -------------------------------------------------------------------- the files


def test_missing_file(tmp_path: Path, right: Path) -> None:
    message = load_error(tmp_path / "nope.csv", right)
    assert "nope.csv" in message and "no such file" in message


def test_directory_is_not_a_file(tmp_path: Path, right: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    assert "is a directory" in load_error(tmp_path / "dir.csv", right)


@pytest.mark.parametrize("name", ["somedir", "folder.d", "data.xlsx"])
def test_a_directory_is_said_to_be_one_whatever_its_name(tmp_path: Path, right: Path, name: str) -> None:
    """A folder without a data file's extension was called an unknown file type '(no extension)'."""
    (tmp_path / name).mkdir()
    with pytest.raises(DataError) as refused:
        load_two_view(right, tmp_path / name)
    assert str(refused.value) == f"{tmp_path / name}: is a directory, not a data file"
    assert refused.value.code == "not_a_file"


def test_a_missing_file_is_said_to_be_missing_before_its_extension_is_judged(tmp_path: Path, right: Path) -> None:
    message = load_error(tmp_path / "nope.xlsx", right)
    assert message == f"{tmp_path / 'nope.xlsx'}: no such file"


def test_empty_file(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.csv", ""), right)
    assert "left.csv" in message and "empty" in message


def test_header_only(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.csv", "id,a\n"), right)
    assert "left.csv" in message and "no data rows" in message


def test_unknown_extension(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.xlsx", GOOD), right)
    assert "left.xlsx" in message and "unknown file type '.xlsx'" in message


def test_wrong_number_of_fields_names_the_row(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0.5\n2,1.5,9\n3,2.5\n")
    message = load_error(left, right)
    assert "left.csv" in message and "row 2 has 3 fields" in message and "header has 2" in message


def test_wrong_number_of_fields_after_blank_line(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0.5\n\n2,1.5\n3\n")
    assert "row 3 has 1 fields" in load_error(left, right)


def test_non_utf8_value(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", b"id,a\n1,caf\xe9\n2,x\n3,y\n")
    message = load_error(left, right)
    assert "left.csv" in message and "column 'a', row 1" in message and "not UTF-8" in message


def test_nul_character_names_the_column_and_row(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", b"id,a\n1,x\n2,x\x00\n3,y\n")
    message = load_error(left, right)  # numpy text arrays drop trailing NULs: "x\0" was confused with "x"
    assert "left.csv" in message and "column 'a', row 2" in message and "NUL character" in message


@pytest.mark.parametrize("header", [b"id,a\x00", b"id,a\x00b", b"id,\x00"])
def test_nul_character_in_a_column_name_names_the_file_and_column(tmp_path: Path, right: Path, header: bytes) -> None:
    """It was accepted: "a\0" was a column name (and "\0" one the empty-name rule did not see)."""
    left = write(tmp_path / "left.csv", header + b"\n1,x\n2,y\n3,y\n")
    with pytest.raises(DataError) as refused:
        load_two_view(left, right)
    message = str(refused.value)
    assert "\n" not in message and "left.csv: column 2's name " in message
    assert "holds a NUL character" in message and refused.value.code == "nul_character"


def test_non_utf8_header(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", b"id,caf\xe9\n1,0\n2,1\n3,1\n")
    message = load_error(left, right)
    assert "left.csv" in message and "not UTF-8" in message


def test_unreadable_parquet(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.parquet", GOOD), right)
    assert "left.parquet" in message and "Parquet" in message


def test_parquet_without_rows(tmp_path: Path, right: Path) -> None:
    pq.write_table(pa.table({"id": pa.array([], pa.int64()), "a": pa.array([], pa.float64())}),
                   tmp_path / "left.parquet")
    assert "no data rows" in load_error(tmp_path / "left.parquet", right)


def test_not_a_path_or_dataframe(right: Path) -> None:
    assert "expected a file path or a pandas DataFrame" in load_error(42, right)


# ---------------------------------------------------------------- column names


def test_duplicate_column_names(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a,a\n1,0,1\n2,1,0\n3,0,0\n")
    message = load_error(left, right)
    assert "left.csv" in message and "'a' occurs more than once (columns 2 and 3)" in message


def test_duplicate_names_option_is_checked(tmp_path: Path, right: Path) -> None:
    with pytest.raises(ParameterError):
        load_two_view(write(tmp_path / "left.csv", GOOD), right, duplicate_names="merge")


def test_duplicate_dataframe_columns(right: Path) -> None:
    df = pd.DataFrame([[1, 0, 1], [2, 1, 0], [3, 0, 0]], columns=["id", "a", "a"])
    assert "left DataFrame: column name 'a' occurs more than once" in load_error(df, right)


def test_empty_column_name(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,,c\n1,0,1\n2,1,0\n3,0,0\n")
    assert "left.csv: column 2 has no name" in load_error(left, right)


def test_column_in_both_views(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a,b\n1,0,1\n2,1,0\n")
    right = write(tmp_path / "right.csv", "id,b,c\n1,0,1\n2,1,0\n")
    message = load_error(left, right)
    assert "'b'" in message and "left.csv" in message and "right.csv" in message
    assert "both" in message


# --------------------------------------------------------------------- rows/ids


def test_differing_row_counts_without_ids(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", "a\n1\n0\n1\n")
    right = write(tmp_path / "right.csv", "b\n1\n0\n")
    message = load_error(left, right)
    assert "left.csv has 3 rows but" in message and "right.csv has 2" in message


def test_id_column_absent(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "key,a\n1,0.5\n2,1.5\n3,2.5\n")
    message = load_error(left, right, id_column="id")
    assert "left.csv: has no id column 'id'" in message


def test_id_column_absent_in_right(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", GOOD)
    right = write(tmp_path / "right.csv", "key,b\n1,x\n2,y\n3,x\n")
    assert "right.csv: has no id column 'id'" in load_error(left, right, id_column="id")


def test_missing_ids(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0.5\n,1.5\n3,2.5\n")
    message = load_error(left, right)
    assert "left.csv: 1 row(s) have no id in column 'id': row 2" in message


def test_duplicate_ids(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", GOOD)
    right = write(tmp_path / "right.csv", "id,b\n1,x\n2,y\n2,x\n3,y\n1,z\n")
    message = load_error(left, right)
    assert "right.csv: 2 id(s) occur more than once in column 'id': 2, 1" in message


def test_ids_only_in_right(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", GOOD)
    right = write(tmp_path / "right.csv", "id,b\n17,u\n1,x\n2,y\n18,x\n3,y\n40,u\n")
    message = load_error(left, right)
    assert message.endswith("right.csv: 3 id(s) are not in " + str(left) + ": 17, 18, 40")


def test_ids_only_in_left(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0.5\n2,1.5\n9,2.5\n3,3.5\n")
    message = load_error(left, right)
    assert "left.csv: 1 id(s) are not in" in message and message.endswith(": 9")


# ------------------------------------------------------------- values and types


def test_non_numeric_value_in_declared_numeric_column(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0.5\n2,1.5\n3,lots\n")
    message = load_error(left, right, types={"columns": {"a": "numeric"}})
    assert "left.csv: column 'a', row 3: value 'lots' is not a number" in message


@pytest.mark.parametrize("cell", ["\uff15", "1_000", "\u0663", "x" * 1000],
                         ids=["full-width", "underscore", "arabic-indic", "long"])
def test_a_number_python_reads_but_pyarrow_does_not_names_its_row(tmp_path: Path, right: Path, cell: str) -> None:
    """float() reads full-width digits and '1_000', pyarrow does not: the message named no row or value."""
    left = write(tmp_path / "left.csv", f"id,a\n1,0.5\n2,{cell}\n3,1.5\n")
    message = load_error(left, right, types={"columns": {"a": "numeric"}})
    assert "left.csv: column 'a', row 2: value " in message and "is not a number" in message
    assert len(message) < len(str(tmp_path)) + 200


def test_value_outside_declared_bounds(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", GOOD)
    message = load_error(left, right, types={"columns": {"a": {"bounds": [0, 2]}}})
    assert "left.csv: column 'a', row 3: value 2.5 is outside the declared bounds [0, 2]" in message


def test_category_not_declared(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.csv", GOOD), right,
                         types={"columns": {"b": {"categories": ["x"]}}})
    assert "right.csv: column 'b', row 2: value 'y' is not one of the declared categories" in message


@pytest.mark.parametrize("cells, row, value", [
    (["7.5", "1", "0.25"], 1, "7.5"),      # numbers: named the smallest undeclared (0.25, row 3)
    (["1", "zebra", "apple"], 2, "zebra"),  # texts: named the first in text order (apple, row 3)
    (["", "9", "0.5"], 2, "9"),
], ids=["numbers", "texts", "after-a-missing-cell"])
def test_an_undeclared_category_names_the_first_row_in_file_order(tmp_path: Path, right: Path, cells: list[str],
                                                                   row: int, value: str) -> None:
    left = write(tmp_path / "left.csv", "id,a\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cells, 1)))
    message = load_error(left, right, types={"columns": {"a": {"type": "categorical", "categories": ["1", "2"]}}})
    assert f"left.csv: column 'a', row {row}: value '{value}' is not one of the declared categories" in message


def test_declared_boolean_with_other_value(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0\n2,2\n3,1\n")
    message = load_error(left, right, types={"columns": {"a": "boolean"}})
    assert "left.csv: column 'a', row 2: value 2 is not Boolean" in message


def test_declared_boolean_with_other_text(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.csv", GOOD), right,
                         types={"columns": {"b": "boolean"}})
    assert "right.csv: column 'b', row 1: value 'x' is not Boolean" in message


def test_infinite_value(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0.5\n2,inf\n3,1.5\n")
    assert "column 'a', row 2: value inf is not a finite number" in load_error(left, right)


def test_dataframe_mixed_column(right: Path) -> None:
    df = pd.DataFrame({"id": [1, 2, 3], "m": ["a", 1, 2.5]})
    assert "left DataFrame: column 'm' mixes kinds of values" in load_error(df, right)


# ------------------------------------------------------------------- types file


def test_types_file_names_unknown_column(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.csv", GOOD), right,
                         types={"columns": {"zzz": "numeric"}})
    assert "types: declares column(s) that are in neither" in message and "'zzz'" in message


@pytest.mark.parametrize(
    "spec, expected",
    [
        ({"columns": {"a": "integer"}}, "column 'a': unknown type 'integer'"),
        ({"columns": {"a": {"type": "numeric", "bound": [0, 1]}}}, "unknown key(s) 'bound'"),
        ({"columns": {"a": {"bounds": [2, 1]}}}, "low <= high"),
        ({"columns": {"a": {"bounds": [0]}}}, "'bounds' must be [low, high]"),
        ({"columns": {"a": {"type": "categorical", "bounds": [0, 1]}}}, "only for numeric"),
        ({"columns": {"a": {"type": "numeric", "categories": ["x"]}}}, "only for categorical"),
        ({"columns": {"a": {"categories": ["x", "x"]}}}, "'x' is listed twice"),
        ({"columns": {"a": {"categories": []}}}, "non-empty list"),
        ({"columns": {"a": {}}}, "give its 'type'"),
        ({"columns": ["a"]}, "'columns' must map"),
        ({"column": {}}, "unknown key(s) 'column'"),
        ({"columns": {"a": "id", "b": "id"}}, "two id columns"),
    ],
)
def test_malformed_types(spec: dict, expected: str) -> None:
    with pytest.raises(DataError) as info:
        TypesSpec.from_mapping(spec, source="t.json")
    assert expected in str(info.value) and str(info.value).startswith("t.json: ")


def test_types_file_bad_json(tmp_path: Path) -> None:
    path = write(tmp_path / "types.json", '{"columns": {"a": "numeric",}}')
    with pytest.raises(DataError, match=r"types.json: invalid JSON at line 1"):
        read_types_file(path)


def test_types_file_bad_toml(tmp_path: Path) -> None:
    path = write(tmp_path / "types.toml", "[columns\n")
    with pytest.raises(DataError, match=r"types.toml: invalid TOML"):
        read_types_file(path)


def test_types_file_missing_or_wrong_extension(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        read_types_file(tmp_path / "types.json")
    with pytest.raises(DataError, match="use .json or .toml"):
        read_types_file(write(tmp_path / "types.yaml", "{}"))


@pytest.mark.parametrize("name, text, expected", [
    ("big.json", '{"columns": {"p": {"bounds": [0, 1%s]}}}' % ("0" * 400), "'bounds' must be finite"),
    ("neg.json", '{"columns": {"p": {"bounds": [-1%s, 0]}}}' % ("0" * 400), "'bounds' must be finite"),
    ("digits.json", '{"columns": {"p": {"bounds": [0, 1%s]}}}' % ("0" * 5000), "more than 4300 digits"),
    ("cats.json", '{"columns": {"c": {"categories": [1%s]}}}' % ("0" * 5000), "more than 4300 digits"),
    ("digits.toml", "[columns.p]\nbounds = [0, 1%s]\n" % ("0" * 5000), "more than 4300 digits"),
], ids=["bounds-1e400", "bounds--1e400", "json-5000-digits", "category-5000-digits", "toml-5000-digits"])
def test_types_file_with_a_huge_integer_is_one_short_line(tmp_path: Path, name: str, text: str,
                                                          expected: str) -> None:
    """An internal error before (OverflowError in float(), ValueError from Python's digit limit)."""
    with pytest.raises(DataError) as info:
        read_types_file(write(tmp_path / name, text))
    assert expected in str(info.value) and str(info.value).startswith(str(tmp_path / name))
    assert len(str(info.value)) < len(str(tmp_path)) + 160


@pytest.mark.parametrize("entry, expected", [
    ({"complete": 10**400}, "'complete' must be true or false, got 100"),
    ({"type": 10**400}, "unknown type 100"),
    ({"type": "x" * 10_000}, "unknown type 'xxx"),
    ({"bounds": [0, "9" * 10_000]}, "'bounds' must be [low, high]"),
    ({"categories": ["x" * 10_000, "x" * 10_000]}, "is listed twice"),
], ids=["complete", "type-int", "type-text", "bounds", "categories"])
def test_types_errors_echo_values_short(entry: dict, expected: str) -> None:
    with pytest.raises(DataError) as info:
        TypesSpec.from_mapping({"columns": {"p": entry}}, source="t.json")
    assert expected in str(info.value) and len(str(info.value)) < 160


def test_a_huge_column_name_is_echoed_short(tmp_path: Path, right: Path) -> None:
    name = "p" * 100_000
    message = load_error(write(tmp_path / "left.csv", GOOD), right, types={"columns": {name: "numeric"}})
    assert "declares column(s) that are in neither" in message and len(message) < 300
    with pytest.raises(DataError) as info:
        TypesSpec.from_mapping({"columns": {name: {"type": "nope"}}}, source="t.json")
    assert "unknown type 'nope'" in str(info.value) and len(str(info.value)) < 200


@pytest.mark.parametrize("name, text, spelled", [
    ("nan.json", '{"columns": {"cls": {"categories": [0, 1, NaN]}}}', "NaN"),
    ("inf.json", '{"columns": {"cls": {"categories": [0, Infinity, 1]}}}', "Infinity"),
    ("neg.json", '{"columns": {"cls": {"categories": [-Infinity]}}}', "-Infinity"),
    ("huge.json", '{"columns": {"cls": {"categories": [0, 1e999]}}}', "Infinity"),
    ("nan.toml", "[columns.cls]\ncategories = [0, nan]\n", "NaN"),
    ("inf.toml", "[columns.cls]\ncategories = [-inf, 0]\n", "-Infinity"),
], ids=["json-NaN", "json-Infinity", "json--Infinity", "json-1e999", "toml-nan", "toml--inf"])
def test_types_file_with_a_category_that_is_not_finite_is_refused(tmp_path: Path, name: str, text: str,
                                                                  spelled: str) -> None:
    """Python's json reads NaN and Infinity: they became the phantom categories 'nan' and 'inf'."""
    path = write(tmp_path / name, text)
    with pytest.raises(DataError) as info:
        read_types_file(path)
    assert str(info.value) == (f"{path}: column 'cls': category {spelled} is not a finite number; "
                               "a types file takes no NaN or infinity")
    assert info.value.column == "cls"
    with pytest.raises(DataError, match="column 'c': category NaN is not a finite number"):
        TypesSpec.from_mapping({"columns": {"c": {"categories": ["a", float("nan")]}}}, source="t.json")


def test_types_json_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    """json kept the last of two entries for 'p', silently; the report's reader refuses them too."""
    path = write(tmp_path / "types.json", '{"columns": {"p": {"bounds": [0, 100]}, "p": {"bounds": [0, 1]}}}')
    with pytest.raises(DataError, match=r"types.json: invalid JSON: duplicate key 'p'$"):
        read_types_file(path)


def test_types_file_path_through_loader(tmp_path: Path, right: Path) -> None:
    types = write(tmp_path / "types.json", json.dumps({"columns": {"a": {"bounds": [0, 1]}}}))
    message = load_error(write(tmp_path / "left.csv", GOOD), right, types=types)
    assert "row 2: value 1.5 is outside" in message


def test_conflicting_id_columns(tmp_path: Path, right: Path) -> None:
    message = load_error(write(tmp_path / "left.csv", GOOD), right, id_column="id",
                         types={"id_column": "a"})
    assert "id column 'id' given, but types declares 'a'" in message


def test_read_view_missing_id_column(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="left.csv: has no id column 'key'"):
        read_view(write(tmp_path / "left.csv", GOOD), id_column="key")


@pytest.mark.parametrize("codec, what", [("utf-16", "UTF-16 (little-endian)"), ("utf-32", "UTF-32 (little-endian)"),
                                         ("utf-16-be", "UTF-16 (big-endian)")])
@pytest.mark.parametrize("name", ["left.csv", "left.csv.gz"])
def test_utf16_file_is_not_utf8_and_its_byte_order_mark_says_what_it_is(tmp_path: Path, right: Path, codec: str,
                                                                       what: str, name: str) -> None:
    """A file saved as UTF-16 or UTF-32 with a byte-order mark (Excel's "Unicode text") was "is not UTF-8
    text: bad byte in the header (line 1)", which did not say what it is."""
    import gzip

    text = "id,a\n1,2\n2,3\n3,4\n".encode(codec)
    text = (b"\xfe\xff" + text) if codec == "utf-16-be" else text
    left = write(tmp_path / name, gzip.compress(text) if name.endswith(".gz") else text)
    message = load_error(left, right)
    assert message == f"{left}: is not UTF-8 text: it is {what}, as its byte-order mark says; save it as UTF-8"


def test_nested_dataframe_column(right: Path) -> None:
    df = pd.DataFrame({"id": [1, 2, 3], "l": [[1], [2], [3]]})
    assert "left DataFrame: column 'l' has values of type list" in load_error(df, right)


def test_header_names_are_stripped(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "id , a,a \n1,0,1\n2,1,0\n3,0,0\n")
    assert "'a' occurs more than once" in load_error(left, right)


def test_id_column_declared_with_another_type() -> None:
    with pytest.raises(DataError, match="column 'k' is the id column but is declared numeric"):
        TypesSpec.from_mapping({"id_column": "k", "columns": {"k": "numeric"}}, source="t.json")


def test_an_id_column_found_in_the_files_must_not_be_declared_with_another_type(tmp_path: Path, right: Path) -> None:
    # The id column is the files' common first column, or given with id_column=; a types
    # file that declares it an attribute would be silently overruled: refused instead.
    left = write(tmp_path / "left.csv", GOOD)
    message = load_error(left, right, types={"columns": {"id": {"type": "numeric", "bounds": [0, 9]}}})
    assert "column 'id' is the id column (the first column of both files) but is declared numeric" in message
    message = load_error(left, right, id_column="id", types={"columns": {"id": "ignore"}})
    assert "column 'id' is the id column (given as the id column) but is declared ignore" in message
    with pytest.raises(DataError) as info:
        load_two_view(left, right, types={"columns": {"id": "numeric"}})
    assert info.value.code == "id_column_conflict" and not info.value.data_dependent
    assert load_two_view(left, right, types={"columns": {"id": "id"}}).n_rows == 3


def test_read_view_side_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ParameterError):
        read_view(write(tmp_path / "left.csv", GOOD), "middle")


def test_pandas_types_without_a_dprm_kind_are_named_and_sparse_columns_read() -> None:
    import numpy as np
    import pandas as pd

    left = pd.DataFrame({"a": ["x", "y"] * 10, "b": np.arange(20.0)})
    right = pd.DataFrame({"c": ["u", "v"] * 10})
    for column, kind in ((pd.cut(left.b, 3), "interval"), (np.ones(20) * 1j, "complex128"),
                         (pd.period_range("2020-01", periods=20, freq="M"), "period")):
        with pytest.raises(DataError, match=f"column 'u' holds values of pandas type {kind}"):
            load_two_view(left.assign(u=column), right)  # interval was a raw ArrowNotImplementedError
    data = load_two_view(left.assign(u=pd.arrays.SparseArray([0, 1] * 10)), right)  # was "mixes kinds of values"
    assert "u" in data.left


def test_a_quote_that_never_closes_is_named_with_its_row(tmp_path: Path) -> None:
    """It took the rest of the file into its cell: the error blamed the other view's ids, or (at the end) a line
    break became part of a category. A quoted cell that closes, with a line break in it, still reads."""
    rows = "".join(f"{i},{i % 2}\n" for i in range(4, 12))
    right = write(tmp_path / "right.csv", "id,b\n" + "".join(f"{i},{i % 3 == 0}\n" for i in range(1, 12)))
    middle = write(tmp_path / "middle.csv", 'id,c\n1,x\n2,y\n3,"x\n' + rows)
    assert "middle.csv: row 3: a quoted cell opens and never closes" in load_error(middle, right)
    end = write(tmp_path / "end.csv", "id,c\n" + "".join(f"{i},x\n" for i in range(1, 11)) + '11,"y\n')
    assert "end.csv: row 11: a quoted cell opens and never closes" in load_error(end, right)
    closed = write(tmp_path / "closed.csv", "id,c\n" + "".join(f"{i},x\n" for i in range(1, 11)) + '11,"y\nz"\n')
    left = load_two_view(closed, right).views[0].attributes[0]
    assert "y\nz" in left.domain.categories


def _quoted_rows(unclosed: int | None) -> str:
    """A file that quotes every text, as many programs write it; row ``unclosed`` misses its closing quote."""
    colours = ("red", "green", "blue")
    return "id,a,c\n" + "".join(f'{i},{i % 2},"{colours[i % 3]}{"" if i == unclosed else chr(34)}\n'
                                for i in range(1, 41))


@pytest.mark.parametrize("compressed", [False, True])
def test_an_unclosed_quote_in_a_file_that_quotes_its_texts_is_named_with_its_row(tmp_path: Path,
                                                                                 compressed: bool) -> None:
    """pyarrow paired row 25's open quote with row 26's opening one: 39 rows, one category 'red\n26,1,red"'
    (read without a word; the two-view check then blamed the other file's id 26). The check of the file's end
    was skipped for a compressed file, and fooled by a last cell legitimately quoted."""
    import gzip

    right = write(tmp_path / "right.csv", "id,y\n" + "".join(f"{i},{i % 3 == 0:d}\n" for i in range(1, 41)))
    name = "q.csv.gz" if compressed else "q.csv"
    text = _quoted_rows(25).encode()
    left = write(tmp_path / name, gzip.compress(text) if compressed else text)
    with pytest.raises(DataError) as info:
        load_two_view(left, right)
    assert str(info.value) == (f"{left}: row 25: a quoted cell opens and never closes (a '\"' is missing), so it "
                               f"would take in the next line(s), up to a later '\"'")
    assert (info.value.code, info.value.row, info.value.column) == ("bad_csv", 25, "c")
    with pytest.raises(DataError, match="row 11: a quoted cell opens and never closes"):  # to the end, compressed
        load_two_view(write(tmp_path / "end.csv.gz", gzip.compress(b'id,c\n' + b"".join(
            b"%d,x\n" % i for i in range(1, 11)) + b'11,"y\n')), right)
    closed = write(tmp_path / "closed.csv", _quoted_rows(None))
    assert load_two_view(closed, right).n_rows == 40


@pytest.mark.parametrize("text", [
    'id,c,d\r\n1,"a\r\nb",x\r\n2,"he said ""hi""\r\nok",y\r\n3,z,"q\n"\r\n',  # CRLF, doubled quotes, at a row's end
    'id,c,d\n1,"x, ""y""\nz",u\n2,"w",""\n3,"v\nu",',  # the delimiter in the cell, no line end at the file's end
])
def test_quoted_line_breaks_still_read(tmp_path: Path, text: str) -> None:
    right = write(tmp_path / "right.csv", "id,b\n1,x\n2,y\n3,x\n")
    data = load_two_view(write(tmp_path / "left.csv", text), right)
    assert data.n_rows == 3 and len(data.left["c"].domain.categories) == 3


def test_quoted_line_breaks_read_in_a_file_of_several_blocks(tmp_path: Path) -> None:
    """pyarrow cuts a file into 4 MiB blocks at line ends without looking at quotes: a quoted line break at a
    block's end failed the reading ('row 143515 has 1 fields but the header has 3'), a file that any program reads."""
    rows = "".join(f'{i},{i % 2},"note {i % 7}\nsecond line"\n' for i in range(1, 150_001))
    left = write(tmp_path / "left.csv", "id,a,c\n" + rows)
    right = write(tmp_path / "right.csv", "id,b\n" + "".join(f"{i},{i % 3}\n" for i in range(1, 150_001)))
    assert left.stat().st_size > 4 << 20
    data = load_two_view(left, right)
    assert data.n_rows == 150_000 and data.left["c"].domain.categories[0] == "note 0\nsecond line"


def test_a_compressed_file_in_a_name_of_capitals_is_read(tmp_path: Path) -> None:
    """The file type ignores letter case, pyarrow's compression does not: UP.CSV.GZ was 'is empty (no header)'."""
    import gzip

    right = write(tmp_path / "right.csv", GOOD_RIGHT)
    for name in ("UP.CSV.GZ", "up.csv.Bz2", "Up.Tsv.gz"):
        compress = __import__("bz2").compress if name.lower().endswith("bz2") else gzip.compress
        text = GOOD.replace(",", "\t") if ".tsv" in name.lower() else GOOD
        data = load_two_view(write(tmp_path / name, compress(text.encode())), right)
        assert data.left["a"].values.tolist() == [0.5, 1.5, 2.5]


def test_what_a_file_named_as_text_is_instead_is_said(tmp_path: Path, right: Path) -> None:
    """A gzip file named .csv was 'is empty (no header)'; UTF-16 without a byte-order mark was 'row 4 has 1
    fields but the header has 3'; a header without a line end and no rows was 'is empty (no header)'."""
    import bz2
    import gzip
    import lzma

    for compress, what, remedy in ((gzip.compress, "gzip-compressed", "name it l.csv.gz"),
                                   (bz2.compress, "bzip2-compressed", "name it l.csv.bz2"),
                                   (lzma.compress, "xz-compressed", "decompress it")):
        message = load_error(write(tmp_path / "l.csv", compress(GOOD.encode())), right)
        assert message.startswith(f"{tmp_path / 'l.csv'}: is {what}: {remedy}")
    pq.write_table(pa.table({"id": [1, 2, 3]}), tmp_path / "p.csv")
    assert load_error(tmp_path / "p.csv", right).endswith("p.csv: is a Parquet file: name it p.parquet")
    for codec in ("utf-16-le", "utf-16-be"):
        message = load_error(write(tmp_path / "u.csv", "id,a,b\n1,0,2.5\n2,1,3.5\n3,0,1.5\n".encode(codec)), right)
        assert message.endswith("u.csv: is not UTF-8 text: it looks like UTF-16 (a NUL byte beside each "
                                "character); save it as UTF-8")
    for header in ("id,a,b", "id,a,b\n"):
        with pytest.raises(DataError) as info:
            load_two_view(write(tmp_path / "h.csv", header), right)
        assert str(info.value) == f"{tmp_path / 'h.csv'}: has a header but no data rows"
    assert "column 2 has no name" in load_error(write(tmp_path / "h.csv", "id,,b"), right)
    assert load_error(write(tmp_path / "b.csv", "\n\n"), right).endswith("b.csv: is empty (no header)")


def test_a_comma_separated_file_named_tsv_is_refused(tmp_path: Path, right: Path) -> None:
    """It was read as one column 'id,a' (then 'has 4 rows but ...' or an id error)."""
    message = load_error(write(tmp_path / "c.tsv", GOOD), right)
    assert message.endswith("c.tsv: is named .tsv (tab-separated) but its header and first row hold no tab and "
                            "',' between the values: name it c.csv")
    one = write(tmp_path / "one.tsv", "id\tname, first\n1\tAnn\n2\tBob\n3\tCy\n")  # a comma in a name: read
    assert load_two_view(one, right).left["name, first"].domain.categories == ("Ann", "Bob", "Cy")


def test_whole_numbers_a_float_cannot_tell_apart_are_refused(tmp_path: Path, right: Path) -> None:
    """Distinct 64-bit whole numbers (a code or hash column) read as one float64 each: the column was
    left out as "constant" with a note saying so. Now one line naming the file, column, rows and values."""
    big = write(tmp_path / "big.csv", "id,a\n1,9223372036854775807\n2,9223372036854775806\n3,5\n")
    message = load_error(big, right)
    assert message == (f"{big}: column 'a', row 2: value 9223372036854775806 reads as the same number as "
                       "9223372036854775807 (row 1): whole numbers beyond 2^53 lose their last digits as numbers; "
                       "declare the column categorical, or ignore it, in a types file")
    with pytest.raises(DataError) as info:
        load_two_view(big, right)
    assert (info.value.code, info.value.column, info.value.row) == ("inexact_number", "a", 2)
    # Parquet integers and decimals alike; 2^53 + 1 is the first whole number that merges
    for array in (pa.array([2**63 - 1, 2**63 - 2, 5], pa.int64()), pa.array([2**64 - 1, 2**64 - 2, 5], pa.uint64()),
                  pa.array([2**53 + 1, 2**53, 5], pa.int64()),
                  pa.array([Decimal(2**63 - 1), Decimal(2**63 - 2), Decimal(5)], pa.decimal128(38, 0))):
        pq.write_table(pa.table({"id": [1, 2, 3], "a": array}), tmp_path / "big.parquet")
        assert "reads as the same number as" in load_error(tmp_path / "big.parquet", right)
    # declared categorical, the values stay distinct; ignored, the column is not read
    types = {"columns": {"a": {"type": "categorical"}}}
    assert load_two_view(big, right, types=types).left["a"].domain.categories == (
        "5", "9223372036854775806", "9223372036854775807")
    assert "a" not in load_two_view(big, right, types={"columns": {"a": "ignore"}}).left.names
    # large numbers that stay distinct, and floats as written, are numbers as before
    for text in ("1,18014398509481984\n2,9007199254740992\n3,5\n", "1,1e19\n2,1.00000000000000001e19\n3,5\n",
                 "1,9007199254740992\n2,9007199254740992\n3,5\n"):
        data = load_two_view(write(tmp_path / "fine.csv", "id,a\n" + text), right)
        assert data.left["a"].kind.value == "numeric"


@pytest.mark.parametrize(("left", "types", "fragment"), [
    ("id,a\n1,1" + "0" * 5000 + "\n2,1\n3,2\n", None, "is too large for a number"),
    ("id,a\n1," + "q" * 5000 + "\n2,1\n3,0\n", {"columns": {"a": {"type": "boolean"}}}, "is not Boolean"),
    ("id,a\n1," + "q" * 5000 + "\n2,x\n3,y\n", {"columns": {"a": {"type": "categorical", "categories": ["x", "y"]}}},
     "is not one of the declared categories"),
    ("id," + "q" * 5000 + ",b," + "q" * 5000 + "\n1,1,2,3\n2,1,2,3\n3,0,1,1\n", None, "occurs more than once"),
])
def test_a_long_value_or_name_is_quoted_short(tmp_path: Path, right: Path, left: str, types, fragment: str) -> None:
    """The value or name a message quotes is cut to about 40 characters: a 5,000-character cell made a
    5,000-character line."""
    path = write(tmp_path / "long.csv", left)
    kwargs = {"types": types} if types else {"duplicate_names": "error"}
    message = load_error(path, right, **kwargs)
    assert fragment in message and len(message) < 250 + len(str(path)), message


def test_a_table_whose_columns_are_all_left_out_still_counts_its_rows(tmp_path: Path) -> None:
    """One row, every column constant and left out: ``dprm inspect`` said "0 rows" (1 with an id column)."""
    left = write(tmp_path / "l.csv", "a,x\n1,2.5\n")
    right = write(tmp_path / "r.csv", "b,y\n0,3\n")
    data = load_two_view(left, right)
    assert (len(data.left), len(data.right), data.n_rows) == (0, 0, 1)
    assert data.with_transforms({}).n_rows == 1


def test_an_id_holding_a_line_break_is_named_quoted_on_one_line(tmp_path: Path) -> None:
    """The message kept its first line only, which named the id '1' (not in the file) instead of '1\\n2'."""
    left = write(tmp_path / "l.csv", 'id,a\n"1\n2",0\n3,1\n4,0\n')
    right = write(tmp_path / "r.csv", "id,b\n1,0\n3,1\n4,0\n")
    assert load_error(left, right) == f"{left}: 1 id(s) are not in {right}: '1\\n2'"


@pytest.mark.parametrize("name", ["a\x1b[31mX", "a\tb", "a\rb", "z\x7f"])
def test_a_column_name_holding_a_control_character_is_refused(tmp_path: Path, right: Path, name: str) -> None:
    """An escape sequence in a column name reached the terminal in dprm inspect's and mine's output."""
    left = write(tmp_path / "l.csv", f'id,"{name}"\n1,0\n2,1\n3,0\n')
    message = load_error(left, right)
    assert message.startswith(f"{left}: column 2's name {name!r} holds the control character ") and "rename" in message
    with pytest.raises(DataError) as info:
        load_two_view(pd.DataFrame({name: [0, 1, 0]}), pd.DataFrame({"b": [1, 0, 1]}))
    assert info.value.code == "control_character" and not info.value.data_dependent


def test_a_parquet_file_with_a_repeated_column_name_is_read_as_a_csv_file_is(tmp_path: Path, right: Path) -> None:
    """pyarrow's dataset reading refused it in its own words ("Multiple matches for FieldRef.Name(x)")."""
    table = pa.Table.from_arrays([pa.array([1, 2, 3]), pa.array([0.5, 1.5, 2.5]), pa.array([5, 6, 7])],
                                 names=["id", "x", "x"])
    pq.write_table(table, tmp_path / "dup.parquet")
    message = load_error(tmp_path / "dup.parquet", right, duplicate_names="error")
    assert "column name 'x' occurs more than once (columns 2 and 3)" in message
    data = load_two_view(tmp_path / "dup.parquet", right, duplicate_names="rename")
    assert data.left.names == ["x", "x.1"] and data.left["x.1"].values.tolist() == [5.0, 6.0, 7.0]


def test_text_that_starts_like_a_signature_is_read_as_text(tmp_path: Path) -> None:
    """'PAR1' (a gene) and 'BZh' begin a CSV header as well as a Parquet or bzip2 file: a header 'PAR1,PAR2' was
    refused as 'is a Parquet file'. A real Parquet file named .csv still is."""
    right = write(tmp_path / "right.csv", "y,z\na,1\nb,2\na,3\nb,1\n")
    for header in ("PAR1,PAR2", "BZh,x2", "BZh9,x2"):
        left = write(tmp_path / "left.csv", f"{header}\n0.5,2.5\n0.7,3.5\n0.1,1.0\n0.9,2.0\n")
        assert load_two_view(left, right).n_rows == 4, header
    parquet = tmp_path / "p.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]}).to_parquet(parquet)
    assert "p.csv: is a Parquet file: name it p.parquet" in load_error(parquet, right)


def test_a_quoted_line_break_followed_by_text_before_the_delimiter_still_reads(tmp_path: Path) -> None:
    """pyarrow reads '"a<newline>b" ,3' as the cell 'a<newline>b ' (what followed the closing quote is kept): it
    was refused as a quote that never closes."""
    right = write(tmp_path / "right.csv", "id,y\n1,u\n2,v\n3,u\n")
    for after in (" ", "\t", "x"):
        left = write(tmp_path / "left.csv", f'id,t,n\n1,"a\nb"{after},3\n2,c,4\n3,d,5\n')
        data = load_two_view(left, right)
        assert f"a\nb{after}" in data.left["t"].domain.categories, after


def test_a_quote_open_at_the_end_of_a_file_without_a_final_line_end_is_named(tmp_path: Path) -> None:
    """'3,4,"abc' at the very end read as the cell 'abc' without a word (Python's csv: unexpected end of data)."""
    right = write(tmp_path / "right.csv", "id,y\n1,u\n2,v\n3,u\n")
    for ending in ('3,4,"abc', '3,4,"a""b'):
        left = write(tmp_path / "left.csv", "id,t,n\n1,a,2\n2,b,3\n" + ending)
        assert ("left.csv: row 3: a quoted cell opens and never closes (a '\"' is missing before the end of the "
                "file)") in load_error(left, right), ending
    for ending in ('3,4,"abc"', '3,4,x"y', '3,4,"a""b"', "3,4,5"):  # closed, a quote inside a cell, no quote
        assert load_two_view(write(tmp_path / "left.csv", "id,t,n\n1,a,2\n2,b,3\n" + ending), right).n_rows == 3


@pytest.mark.parametrize("name, text, shown", [
    ("l.csv", b"sep=;\nid;a\n1;0.5\n2;1.5\n3;2.5\n", "'sep=;'"),
    ("l.csv", b'\xef\xbb\xbf"sep=,"\r\nid,a\r\n1,0.5\r\n2,1.5\r\n3,2.5\r\n', "'\"sep=,\"'"),
    ("l.tsv", b"SEP=\t\nid\ta\n1\t0.5\n2\t1.5\n3\t2.5\n", "'SEP=\\t'"),
])
def test_a_spreadsheets_sep_line_is_said_to_be_one(tmp_path: Path, right: Path, name: str, text: bytes,
                                                     shown: str) -> None:
    """A file saved with Excel's ``sep=;`` first line was read with it as the header: ``column 2 has no
    name`` (or one column ``sep=``), which did not say what was wrong. Now one line naming it."""
    left = write(tmp_path / name, text)
    message = load_error(left, right)
    assert message.startswith(f"{left}: its first line {shown} is a spreadsheet's note of the delimiter")
    assert message.endswith("not the header: delete that line")
    assert load_two_view(write(tmp_path / "ok.csv", text.split(b"\n", 1)[1]), right).left.source.endswith("ok.csv")


def test_a_header_line_longer_than_a_block_is_read(tmp_path: Path, right: Path) -> None:
    """A header line longer than pyarrow's 4 MiB block (a table of hundreds of thousands of columns) was
    ``is empty (no header)``; now its columns are read, as a narrower file's."""
    wide = 600_000
    names = ",".join(f"s{k:07d}" for k in range(wide))
    left = write(tmp_path / "wide.csv", f"id,{names}\n" + "".join(f"{i}," + ",".join("01"[(i + k) % 2] for k in
                                                                                   range(wide)) + "\n"
                                                                  for i in (1, 2, 3)))
    from dprm.data.reading import read_header, read_table

    assert len(read_header(left).column_names) == wide + 1
    raw = read_table(left)
    assert raw.num_rows == 3 and raw.column_names[-1] == f"s{wide - 1:07d}"
