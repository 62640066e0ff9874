"""Changes the loader makes on its own are notes; out_of_bounds="clamp"; nasty files."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dprm.data.attributes import AttributeKind
from dprm.data.loading import load_two_view, read_view
from dprm.errors import DataError, ParameterError

B, C, N = AttributeKind.BOOLEAN, AttributeKind.CATEGORICAL, AttributeKind.NUMERIC


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def right(tmp_path: Path) -> Path:
    return write(tmp_path / "right.csv", "id,w\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 7)))


def rows(header: str, lines: list[str]) -> str:
    return header + "\n" + "".join(f"{i},{line}\n" for i, line in enumerate(lines, start=1))


# ----------------------------------------------------------------------- notes


def test_every_silent_change_is_a_note(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id,age,empty,one,x,x,score", [
        "31,,5,0,1,1.5", "44,,5,1,0,nan", "unknown,,5,0,0,2.5", "27,,5,1,1,3", "50,,,0,1,1", "38,,5,1,0,2"]))
    data = load_two_view(left, right, duplicate_names="rename")
    assert data.left["age"].kind is C
    assert data.left.notes == [
        f"{left}: duplicate column 'x' renamed 'x.1'",
        f"{left}: column 'age' is categorical (inferred): not every value is a number, e.g. row 3",
        f"{left}: column 'score': NaN read as a missing value, e.g. row 2",
        f"{left}: column 'empty' is empty (all values missing) and left out",
        f"{left}: column 'one' is constant (a single value) and left out",
    ]
    assert data.right.notes == [] and data.notes == data.left.notes
    assert data.left.constant == ["empty", "one"]  # unchanged meaning: both left out
    for note in data.notes:  # notes never quote a value
        assert "unknown" not in note and "\n" not in note


def test_notes_survive_the_reordering_by_id(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0\n2,1\n3,0\n")
    right = write(tmp_path / "right.csv", "id,c,k\n3,7,x\n1,7,y\n2,7,x\n")
    data = load_two_view(left, right)
    assert data.right.notes == [f"{right}: column 'c' is constant (a single value) and left out"]


def test_many_left_out_columns_make_one_note(tmp_path: Path) -> None:
    names = [f"c{j}" for j in range(25)]
    left = write(tmp_path / "left.csv", "id," + ",".join(names) + ",v\n" + "".join(
        f"{i}," + ",".join("1" for _ in names) + f",{i % 2}\n" for i in range(1, 5)))
    right = write(tmp_path / "right.csv", "id,w\n1,0\n2,1\n3,0\n4,1\n")
    (note,) = load_two_view(left, right).left.notes
    assert note.startswith(f"{left}: 25 columns are constant (a single value) and left out: 'c0', 'c1',")
    assert note.endswith(", ... (25 in all)")


def test_declared_columns_are_kept_without_a_note(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id,one,empty", ["5,", "5,", "5,", "5,", "5,", "5,"]))
    data = load_two_view(left, right, types={"columns": {"one": "numeric", "empty": "numeric"}})
    assert data.left.names == ["one", "empty"] and data.left.notes == []


def test_a_text_column_without_numbers_has_no_note(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id,religion", ["none", "catholic", "nan", "none", "jewish", "none"]))
    assert load_two_view(left, right).left.notes == []


def test_numbers_with_a_decimal_comma_are_categories_with_a_note(tmp_path: Path) -> None:
    """Excel in European locales writes 2,5 in ;-separated files: the column was read as categories without a
    word. It still is (nothing is converted), with a note saying why; declared categorical, no note."""
    left = write(tmp_path / "eu.csv", "id;a;b;c\n1;0;2,5;x\n2;1;3,5;y\n3;0;;x\n4;1;7;y\n")
    right = write(tmp_path / "r.csv", "id;y\n1;0\n2;1\n3;1\n4;0\n")
    data = load_two_view(left, right)
    assert data.left["b"].kind is C and data.left["b"].domain.categories == ("7", "2,5", "3,5")
    assert data.left.notes == [f"{left}: column 'b' is categorical (inferred): its values are numbers written with a "
                               f"decimal comma, e.g. row 1, which are not read as numbers; write them with a decimal "
                               f"point, or declare the column categorical"]
    assert load_two_view(left, right, types={"columns": {"b": "categorical"}}).left.notes == []
    other = write(tmp_path / "w.csv", "id;b\n1;2,5\n2;n/a\n3;1\n4;2\n")  # a word too: the usual note
    assert load_two_view(other, right).left.notes == [
        f"{other}: column 'b' is categorical (inferred): not every value is a number, e.g. row 1"]


def test_numbers_with_thousands_separators_are_categories_with_a_note(tmp_path: Path) -> None:
    """``"1,234,567"`` (quoted), ``1 234``: a column of such numbers was categorical without a word (no value a
    number as written, so not even "not every value is a number"). Now a note says why; ``1,000`` may be a
    decimal comma or a thousand, and the note says both."""
    left = write(tmp_path / "l.csv", 'id,a,b,c\n1,"1,234,567",1 234,"1,000"\n2,"2,500,000",250,"2,500"\n'
                                     '3,12,3 000.5,"3,000"\n4,7,9,"4,250"\n')
    right = write(tmp_path / "r.csv", "id,y\n1,0\n2,1\n3,1\n4,0\n")
    data = load_two_view(left, right)
    assert data.left["a"].kind is C and data.left["b"].kind is C and data.left["c"].kind is C
    assert data.left.notes == [
        f"{left}: column 'a' is categorical (inferred): its values are numbers written with thousands separators, "
        f"e.g. row 1, which are not read as numbers; write them without, or declare the column categorical",
        f"{left}: column 'b' is categorical (inferred): its values are numbers written with thousands separators, "
        f"e.g. row 1, which are not read as numbers; write them without, or declare the column categorical",
        f"{left}: column 'c' is categorical (inferred): its values are numbers written with a comma, e.g. row 1, "
        f"a decimal comma or a thousands separator, which are not read as numbers; write them with a decimal point "
        f"and no separators, or declare the column categorical"]
    assert load_two_view(left, right, types={"columns": {"a": "categorical", "b": "categorical",
                                                         "c": "categorical"}}).left.notes == []


def test_read_view_has_notes_too(tmp_path: Path) -> None:
    view = read_view(pd.DataFrame({"k": [1, 2, 3], "a": ["1", "2", "three"], "c": [4, 4, 4]}), "right", id_column="k")
    assert view.notes == [
        "right DataFrame: column 'a' is categorical (inferred): not every value is a number, e.g. row 3",
        "right DataFrame: column 'c' is constant (a single value) and left out",
    ]


# ----------------------------------------------------------------- out_of_bounds


TYPES = {"columns": {"age": {"bounds": [0, 120]}, "sex": {"categories": ["f", "m"]}}}


@pytest.fixture
def outside(tmp_path: Path, right: Path) -> tuple[Path, Path]:
    left = write(tmp_path / "left.csv", rows("id,age,sex", ["30,f", "-4,m", "130,F", ",m", "120,x", "0.5,"]))
    return left, right


def test_out_of_bounds_is_an_error_by_default(outside) -> None:
    with pytest.raises(DataError) as info:
        load_two_view(*outside, types=TYPES)
    assert info.value.code == "value_out_of_bounds" and info.value.row == 2


def test_clamp_clamps_numbers_and_makes_unknown_categories_missing(outside) -> None:
    left, _ = outside
    for data in (load_two_view(*outside, types=TYPES, out_of_bounds="clamp"),
                 load_two_view(*outside, types={**TYPES, "out_of_bounds": "clamp"})):
        np.testing.assert_array_equal(data.left["age"].values, [30, 0, 120, np.nan, 120, 0.5])
        assert data.left["sex"].values.tolist() == [0, 1, -1, 1, -1, -1]
        assert data.left["sex"].domain.categories == ("f", "m") and data.domains_declared is False
        assert data.left.notes == [
            f"{left}: column 'age': values outside the declared bounds [0, 120] clamped into them",
            f"{left}: column 'sex': values that are not declared categories read as missing",
        ]


def test_the_argument_overrides_the_types_file(outside) -> None:
    with pytest.raises(DataError):
        load_two_view(*outside, types={**TYPES, "out_of_bounds": "clamp"}, out_of_bounds="error")


def test_clamp_without_anything_outside_makes_no_note(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id,age", ["30", "40", "50", "60", "70", "80"]))
    assert load_two_view(left, right, types=TYPES | {"columns": {"age": {"bounds": [0, 120]}}},
                         out_of_bounds="clamp").left.notes == []


@pytest.mark.parametrize("cells, code, row, fragment", [
    (["f", "m", "purple", "f", "m", "f"], "unknown_category", 3,
     "value 'purple' is not one of the declared categories (clamping would make it missing, but the types file "
     "declares the column complete)"),
    (["f", "", "purple", "f", "m", "f"], "missing_in_complete", 2, "a missing value, but the types file declares"),
], ids=["undeclared-category", "missing-cell-first"])
def test_clamp_in_a_complete_column_names_the_undeclared_category(tmp_path: Path, right: Path, cells: list[str],
                                                                   code: str, row: int, fragment: str) -> None:
    """Clamped, 'purple' became missing, and the error said a missing value (which the file does not hold)."""
    left = write(tmp_path / "left.csv", rows("id,sex", cells))
    with pytest.raises(DataError) as info:
        load_two_view(left, right, types={"columns": {"sex": {"categories": ["f", "m"], "complete": True}}},
                      out_of_bounds="clamp")
    assert (info.value.code, info.value.column, info.value.row) == (code, "sex", row)
    assert f"column 'sex', row {row}: {fragment}" in str(info.value)


def test_clamp_does_not_turn_wrong_types_into_values(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id,b", ["0", "1", "2", "1", "0", "1"]))
    with pytest.raises(DataError, match="not Boolean"):
        load_two_view(left, right, types={"columns": {"b": "boolean"}}, out_of_bounds="clamp")


@pytest.mark.parametrize("kwargs", [{"out_of_bounds": "clip"}, {"na_values": [3]}, {"na_values": 5}])
def test_bad_options(outside, kwargs) -> None:
    with pytest.raises(ParameterError):
        load_two_view(*outside, **kwargs)


@pytest.mark.parametrize("types, fragment", [
    ({"out_of_bounds": "clip"}, "'out_of_bounds' must be 'error' or 'clamp'"),
    ({"na_values": "NA"}, "'na_values' must be a list of texts"),
    ({"na_values": [1]}, "'na_values' must be a list of texts"),
])
def test_bad_types_file_keys(outside, types, fragment: str) -> None:
    with pytest.raises(DataError, match=fragment) as info:
        load_two_view(*outside, types=types)
    assert info.value.code == "bad_types_file"


# ------------------------------------------------------------- missing markers


def test_na_values_in_dataframes_apply_to_text_and_the_empty_string_is_missing() -> None:
    left = pd.DataFrame({"s": ["x", "", "NA", "y"], "n": [1.0, np.nan, 2.0, 3.0]})
    right = pd.DataFrame({"b": [0, 1, 0, 1]})
    assert load_two_view(left, right).left["s"].values.tolist() == [1, -1, 0, 2]
    assert load_two_view(left, right, na_values=["NA"]).left["s"].values.tolist() == [0, -1, -1, 1]


def test_na_values_mark_missing_ids_too(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a\n1,0\nNA,1\n3,0\n")
    right = write(tmp_path / "right.csv", "id,b\n1,0\nNA,1\n3,0\n")
    assert load_two_view(left, right).ids.tolist() == ["1", "NA", "3"]
    with pytest.raises(DataError) as info:
        load_two_view(left, right, na_values=["NA"])
    assert info.value.code == "missing_id"


def test_an_undeclared_marker_in_a_numeric_column_suggests_declaring_it(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id,a", ["1", "NA", "2", "3", "4", "5"]))
    with pytest.raises(DataError, match="value 'NA' is not a number .*declare it"):
        load_two_view(left, right, types={"columns": {"a": "numeric"}})


# ----------------------------------------------------------------- nasty files


def test_bom_and_crlf(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", b"\xef\xbb\xbfid,a,b\r\n" + b"".join(
        f"{i},{i / 2},{'xy'[i % 2]}\r\n".encode() for i in range(1, 7)))
    data = load_two_view(left, right)
    assert data.ids.tolist() == [str(i) for i in range(1, 7)]
    assert data.left["b"].domain.categories == ("x", "y") and data.left["a"].kind is N


def test_unicode_names_spaces_and_negative_zero(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", rows("id, ünï cødé ,😀,z", [f"{'é' if i % 2 else 'ß'},  {i % 3} ,{'-0' if i % 2 else '1'}"
                                                             for i in range(6)]))
    data = load_two_view(left, right)
    assert data.left.names == ["ünï cødé", "😀", "z"]
    assert data.left["😀"].values.tolist() == [0, 1, 2, 0, 1, 2]
    assert data.left["z"].kind is B and data.left["z"].values.tolist() == [1, 0, 1, 0, 1, 0]


def test_integers_beyond_float_precision_load(tmp_path: Path, right: Path) -> None:
    path = tmp_path / "left.parquet"
    pq.write_table(pa.table({"id": list(range(1, 7)),
                             "big": pa.array([2**63 - 1, -2**63, 0, 1, 2, 3], pa.int64()),
                             "u": pa.array([2**64 - 1, 0, 1, 2, 3, 4], pa.uint64())}), path)
    data = load_two_view(path, right)
    assert data.left["big"].values[0] == float(2**63 - 1) and data.left["u"].values[0] == float(2**64 - 1)


def test_broken_compressed_files_are_errors(tmp_path: Path, right: Path) -> None:
    plain = write(tmp_path / "plain.csv.gz", "id,a\n1,0\n")
    with gzip.open(tmp_path / "cut.csv.gz", "wb") as f:
        f.write(("id,a\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 200))).encode())
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(cut.read_bytes()[:40])
    said = {plain: "is named .gz but is not gzip-compressed: it is text: name it plain.csv", cut: "cannot be read"}
    for path in (plain, cut):
        with pytest.raises(DataError) as info:
            load_two_view(path, right)
        assert str(info.value).startswith(f"{path}: {said[path]}")


def test_csv_named_parquet_and_garbage(tmp_path: Path, right: Path) -> None:
    fake = write(tmp_path / "left.parquet", "id,a\n1,0\n")
    with pytest.raises(DataError, match="cannot be read as Parquet") as info:
        load_two_view(fake, right)
    assert info.value.code == "bad_parquet"
    garbage = write(tmp_path / "garbage.csv", bytes(range(256)) * 8)
    with pytest.raises(DataError, match="not UTF-8") as info:
        load_two_view(garbage, right)
    assert info.value.code == "not_utf8"


def test_an_id_named_column_in_one_view_only_gets_a_hint(tmp_path: Path, right: Path) -> None:
    left = write(tmp_path / "left.csv", "a,id\n0,1\n1,2\n0,3\n1,4\n0,5\n1,6\n")
    with pytest.raises(DataError, match="give it as the id column") as info:
        load_two_view(left, right)
    assert info.value.code == "shared_column"
    assert load_two_view(left, right, id_column="id").left.names == ["a"]


def test_a_wide_file(tmp_path: Path) -> None:
    n_columns = 10_000
    header = "id," + ",".join(f"c{j}" for j in range(n_columns))
    body = "".join(f"{i}," + ",".join(str((i * j) % 3) for j in range(n_columns)) + "\n" for i in range(1, 31))
    left = write(tmp_path / "left.csv", header + "\n" + body)
    right = write(tmp_path / "right.csv", "id,w\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 31)))
    data = load_two_view(left, right)
    assert len(data.left) + len(data.left.constant) == n_columns
    assert len(data.left.notes) == 1 and "left out" in data.left.notes[0]
