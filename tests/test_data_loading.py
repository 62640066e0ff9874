"""Loading two-view data: formats, ids, type inference, the types file, real data."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dprm.data.attributes import AttributeKind, Domain
from dprm.data.category_text import category_text
from dprm.data.inference import infer_kind
from dprm.data.loading import load_two_view, read_view
from dprm.data.types_file import ColumnType, TypesSpec, read_types_file
from dprm.errors import DataError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
B, C, N = AttributeKind.BOOLEAN, AttributeKind.CATEGORICAL, AttributeKind.NUMERIC


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    left = write(
        tmp_path / "left.csv",
        "id,smoker,sex,score,flag,grade\n"
        "a,yes,f,1.5,TRUE,3\n"
        "b,no,m,2.5,false,2.0\n"
        "c,YES,,,true,3\n"
        "d,No,f,nan,,1\n",
    )
    right = write(
        tmp_path / "right.csv",
        "id,x,y\n"
        "c,1,10\n"
        "a,0,30\n"
        "d,1,\n"
        "b,0,20\n",
    )
    return left, right


# ------------------------------------------------------------------ inference


@pytest.mark.parametrize(
    "values, kind",
    [
        ([0, 1, None, 1], B),
        ([0.0, 1.0, 1.0], B),
        ([True, False, None], B),
        (["yes", "No", "YES"], B),
        (["True", "false"], B),
        ([0, 1, 2], N),
        ([0.0, 0.5, 1.0], N),
        ([-3, 7], N),
        (["a", "b", None], C),
        (["yes", "no", "maybe"], C),
        (["true", "no"], C),  # two vocabularies mixed: not Boolean
        ([None, None], N),
    ],
)
def test_infer_kind(values: list, kind: AttributeKind) -> None:
    assert infer_kind(pa.array(values)) is kind


def test_inference_and_missing_values_from_csv(pair: tuple[Path, Path]) -> None:
    data = load_two_view(*pair)
    left = data.left
    assert [(a.name, a.kind) for a in left] == [
        ("smoker", B), ("sex", C), ("score", N), ("flag", B), ("grade", N)
    ]
    assert left["smoker"].values.tolist() == [1, 0, 1, 0]
    assert left["flag"].values.tolist() == [1, 0, 1, -1]
    assert left["sex"].values.tolist() == [0, 1, -1, 0]
    assert left["sex"].domain == Domain(categories=("f", "m"), declared=False)
    np.testing.assert_array_equal(left["score"].values, [1.5, 2.5, np.nan, np.nan])
    assert left["score"].domain == Domain(bounds=(1.5, 2.5), declared=False)
    assert left["smoker"].domain == Domain(declared=False)  # an inferred type is not public
    assert data.domains_declared is False


def test_only_the_empty_cell_is_missing_unless_markers_are_declared(tmp_path: Path) -> None:
    words = ["none", "None", "NA", "null", "N/A", "?"]
    lines = ["id,religion,score"] + [f"{i},{w},{w}" for i, w in enumerate(words)] + ["98,catholic,1.5", "99,,2.5"]
    left = write(tmp_path / "l.csv", "\n".join(lines) + "\n")
    right = write(tmp_path / "r.csv", "id,w\n" + "".join(f"{i},{i % 2}\n" for i in [*range(len(words)), 98, 99]))
    data = load_two_view(left, right)
    religion = data.left["religion"]
    assert religion.kind is C and set(religion.domain.categories) == {*words, "catholic"}
    assert religion.missing.tolist() == [False] * 7 + [True]
    assert data.left["score"].kind is C  # words among numbers: categorical, with a note
    assert any("column 'score' is categorical (inferred)" in n and "row 1" in n for n in data.left.notes)


def test_declared_markers_are_missing(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,religion,score\n1,none,NA\n2,catholic,1.5\n3,NA,2.5\n4,?,-\n")
    right = write(tmp_path / "r.csv", "id,w\n1,0\n2,1\n3,0\n4,1\n")
    by_option = load_two_view(left, right, na_values=["NA", "-"])
    assert by_option.left["religion"].domain.categories == ("?", "catholic", "none")
    np.testing.assert_array_equal(by_option.left["score"].values, [np.nan, 1.5, 2.5, np.nan])
    by_file = load_two_view(left, right, types={"na_values": ["NA", "-"]})
    np.testing.assert_array_equal(by_file.left["score"].values, by_option.left["score"].values)
    # the option adds to the types file's markers; markers are compared exactly
    both = load_two_view(left, right, na_values=["?"], types={"na_values": ["NA", "-"]})
    assert both.left["religion"].domain.categories == ("catholic", "none")
    assert load_two_view(left, right, na_values=["na", "-"]).left["score"].kind is C


def test_nan_in_a_column_of_numbers_is_missing_with_a_note(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,x,word\n1,0.5,a\n2,NaN,nan\n3,2.5,b\n")
    right = write(tmp_path / "r.csv", "id,w\n1,0\n2,1\n3,0\n")
    data = load_two_view(left, right)
    np.testing.assert_array_equal(data.left["x"].values, [0.5, np.nan, 2.5])
    assert data.left["word"].domain.categories == ("a", "b", "nan")  # in text, "nan" is a word
    assert data.left.notes == [f"{left}: column 'x': NaN read as a missing value, e.g. row 2"]


def test_constant_columns_are_set_aside(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "k,one,empty,mostly,same_text,ok\n1,1,,7,u,0\n2,1,,,u,1\n3,,,7,u,1\n")
    right = write(tmp_path / "r.csv", "k,z\n1,0.5\n2,0.25\n3,0\n")
    data = load_two_view(left, right)
    assert data.left.names == ["ok"]
    assert data.left.constant == ["one", "empty", "mostly", "same_text"]
    assert data.right.constant == []


# ------------------------------------------------------------------------ ids


def test_ids_align_shuffled_right_view(pair: tuple[Path, Path]) -> None:
    data = load_two_view(*pair)
    assert data.ids.tolist() == ["a", "b", "c", "d"]
    assert data.right["x"].values.tolist() == [0, 0, 1, 1]
    np.testing.assert_array_equal(data.right["y"].values, [30.0, 20.0, 10.0, np.nan])
    assert data.n_rows == 4


def test_ids_align_many_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 500
    ids = np.arange(1000, 1000 + n)
    x = rng.normal(size=n)
    pd.DataFrame({"rid": ids, "x": x}).to_csv(tmp_path / "l.csv", index=False)
    perm = rng.permutation(n)
    pd.DataFrame({"rid": ids[perm], "y": 2 * x[perm]}).to_csv(tmp_path / "r.csv", index=False)
    data = load_two_view(tmp_path / "l.csv", tmp_path / "r.csv")
    np.testing.assert_allclose(data.right["y"].values, 2 * data.left["x"].values)
    assert data.ids.tolist() == [str(i) for i in ids]


@pytest.mark.parametrize("base", [10**20, 2**63, 2**64 - 20, 10**400], ids=["1e20", "2^63", "2^64-20", "1e400"])
def test_distinct_big_integer_ids_stay_distinct(tmp_path: Path, base: int) -> None:
    # beyond int64 pyarrow reads them as float64, which merged 2**63 and 2**63 + 1
    ids = [base + i for i in range(20)]
    left = write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},{i % 2}\n" for i in ids))
    right = write(tmp_path / "r.csv", "id,p\n" + "".join(f"{i},{(i % 7) / 2}\n" for i in reversed(ids)))
    data = load_two_view(left, right)
    assert data.ids.tolist() == [str(i) for i in ids]
    assert data.right["p"].values.tolist() == [(i % 7) / 2 for i in ids]


def test_big_integer_ids_match_across_writings(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n0100000000000000000001,0\n100000000000000000002,1\n")
    right = write(tmp_path / "r.csv", "id,p\n100000000000000000002.0,1.5\n+100000000000000000001,2.5\n")
    data = load_two_view(left, right)
    assert data.ids.tolist() == ["100000000000000000001", "100000000000000000002"]
    assert data.right["p"].values.tolist() == [2.5, 1.5]


def test_explicit_id_column_not_first(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "x,key\n1.5,p\n2.5,q\n3.5,r\n")
    right = write(tmp_path / "r.csv", "y,key\n0,r\n1,p\n1,q\n")
    data = load_two_view(left, right, id_column="key")
    assert data.left.names == ["x"] and data.right.names == ["y"]
    assert data.right["y"].values.tolist() == [1, 1, 0]


def test_no_id_column_keeps_row_order(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "a,b\n1,x\n0,y\n")
    right = write(tmp_path / "r.csv", "c\n0.5\n0.25\n")
    data = load_two_view(left, right)
    assert data.ids is None
    assert data.left.names == ["a", "b"] and data.left["a"].kind is B
    assert data.right["c"].values.tolist() == [0.5, 0.25]


def test_siren_ids_column_in_one_view(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "ids,a\nr1,1.5\nr2,2\n")
    right = write(tmp_path / "r.csv", "b\nx\ny\n")
    data = load_two_view(left, right)
    assert data.left.names == ["a"]
    assert data.ids.tolist() == ["r1", "r2"]


# ------------------------------------------------- rows matched by position, first columns that look like ids

ROWS = [(1, "yes", 2.5), (2, "no", 3.5), (3, "yes", 1.0), (4, "no", 7.25), (5, "yes", 0.5), (6, "no", 4.0)]


def two_views(tmp_path: Path, left_id: str, right_id: str, shuffle: bool = True) -> tuple[Path, Path]:
    """The same six entities in both views, the ids in columns named differently (the right in another order)."""
    order = [3, 0, 5, 1, 4, 2] if shuffle else list(range(6))
    left = write(tmp_path / "l.csv", f"{left_id},smoker\n" + "".join(f"{i},{s}\n" for i, s, _ in ROWS))
    right = write(tmp_path / "r.csv", f"{right_id},score\n"
                  + "".join(f"{ROWS[k][0]},{ROWS[k][2]}\n" for k in order))
    return left, right


@pytest.mark.parametrize("shuffle, order", [(True, "in another order"), (False, "in the same order")])
def test_one_id_column_under_two_names_is_refused(tmp_path: Path, shuffle: bool, order: str) -> None:
    """The audit's case: 'row_id' and 'id' were mined as attributes and the rows matched by position."""
    left, right = two_views(tmp_path, "row_id", "id", shuffle)
    with pytest.raises(DataError) as refused:
        load_two_view(left, right)
    error = refused.value
    assert str(error) == (
        f"{left}, {right}: first columns 'row_id' and 'id' hold the same distinct values ({order}), like one id "
        f"column with two names: give them one name, or declare both in the types file to match rows by position")
    assert (error.code, error.file, error.column, error.row) == ("id_names_differ", str(left), "row_id", None)
    assert error.data_dependent  # it says what the values are like
    public = error.public_message()
    assert "order" not in public and "distinct" not in public and "id_names_differ" in public


def test_one_id_column_under_two_names_matches_by_id_once_renamed(tmp_path: Path) -> None:
    left, right = two_views(tmp_path, "row_id", "row_id")
    data = load_two_view(left, right)
    assert data.ids.tolist() == ["1", "2", "3", "4", "5", "6"] and data.notes == []
    assert data.right["score"].values.tolist() == [s for *_, s in ROWS]


@pytest.mark.parametrize("declared", [{"row_id": "ignore", "id": "ignore"},
                                      {"row_id": "numeric", "id": {"type": "numeric", "bounds": [0, 10]}}],
                         ids=["ignored", "mined"])
def test_declaring_both_first_columns_matches_the_rows_by_position(tmp_path: Path, declared: dict) -> None:
    """The owner's declaration says they are not the ids: rows by position, as asked, without a note."""
    left, right = two_views(tmp_path, "row_id", "id")
    data = load_two_view(left, right, types={"columns": declared})
    assert data.ids is None and data.notes == []
    assert data.right["score"].values.tolist() == [ROWS[k][2] for k in [3, 0, 5, 1, 4, 2]]
    mined = "ignore" not in declared.values()
    assert ("row_id" in data.left.names, "id" in data.right.names) == (mined, mined)


def test_declaring_one_first_column_is_not_enough(tmp_path: Path) -> None:
    left, right = two_views(tmp_path, "row_id", "id")
    with pytest.raises(DataError, match="declare 'id' in the types file") as refused:
        load_two_view(left, right, types={"columns": {"row_id": "ignore"}})
    assert refused.value.code == "id_names_differ"


def test_a_siren_ids_column_and_the_same_ids_under_another_name_are_refused(tmp_path: Path) -> None:
    left, right = two_views(tmp_path, "ids", "id")
    with pytest.raises(DataError, match="first columns 'ids' and 'id' .* declare 'id' in the types file"):
        load_two_view(left, right)
    data = load_two_view(left, right, types={"columns": {"id": "ignore"}})
    assert data.ids.tolist() == ["1", "2", "3", "4", "5", "6"] and data.right.names == ["score"]


def test_a_first_column_that_looks_like_an_id_mined_by_position_gets_a_note(tmp_path: Path) -> None:
    """Different values (here other ids) or an id in one view only: by position, said in a note."""
    left = write(tmp_path / "l.csv", "row_id,smoker,smoker\n" + "".join(f"{i},{s},{s}\n" for i, s, _ in ROWS))
    right = write(tmp_path / "r.csv", "id,score\n" + "".join(f"{i + 10},{x}\n" for i, _, x in ROWS))
    data = load_two_view(left, right, duplicate_names="rename")
    says = "looks like an id (distinct values, none missing) but is mined as an attribute: the rows are " \
           "matched by position, since the views' first columns have different names"
    assert data.left.notes[0] == f"{left}: column 'row_id' {says}"  # first: before the renamed duplicate
    assert data.left.notes[1].endswith("duplicate column 'smoker' renamed 'smoker.1'")
    assert data.right.notes == [f"{right}: column 'id' {says}"]
    assert data.ids is None and "row_id" in data.left.names and "id" in data.right.names
    alone = write(tmp_path / "r1.csv", "score\n" + "".join(f"{x}\n" for *_, x in ROWS))
    assert load_two_view(left, alone, duplicate_names="rename").right.notes == []
    assert load_two_view(left, alone, duplicate_names="rename").left.notes[0] == f"{left}: column 'row_id' {says}"


@pytest.mark.parametrize("first", [
    "0\n1\n0\n1\n0\n1", "1\n2\n2\n3\n4\n5", "1.5\n2\n3\n4\n5\n6", "1\n2\n\n4\n5\n6", "a\nb\nc\nc\nd\ne"],
    ids=["boolean", "repeated", "decimal", "missing", "repeated-text"])
def test_a_first_column_that_is_no_id_gets_no_note(tmp_path: Path, first: str) -> None:
    left = write(tmp_path / "l.csv", "k,a\n" + "".join(f"{v},{i % 2}\n" for i, v in enumerate(first.split("\n"))))
    right = write(tmp_path / "r.csv", "m,b\n" + "".join(f"{v},{i % 3}\n" for i, v in enumerate(first.split("\n"))))
    data = load_two_view(left, right)
    assert not [n for n in data.notes if "looks like an id" in n]


# ----------------------------------------------------------------- types file


def test_types_file_overrides_and_domains(pair: tuple[Path, Path], tmp_path: Path) -> None:
    types = write(
        tmp_path / "types.json",
        json.dumps(
            {
                "columns": {
                    "grade": {"type": "categorical"},
                    "score": {"type": "numeric", "bounds": [0, 10]},
                    "sex": {"categories": ["m", "f", "x"]},
                    "x": "numeric",
                    "flag": "ignore",
                }
            }
        ),
    )
    data = load_two_view(*pair, types=types)
    grade = data.left["grade"]
    assert grade.kind is C
    assert grade.domain == Domain(categories=("1", "2", "3"), declared=False)
    assert grade.values.tolist() == [2, 1, 2, 0]
    assert data.left["score"].domain == Domain(bounds=(0.0, 10.0), declared=True)
    sex = data.left["sex"]
    assert sex.domain == Domain(categories=("m", "f", "x"), declared=True)
    assert sex.values.tolist() == [1, 0, -1, 1]
    assert data.right["x"].kind is N
    assert "flag" not in data.left and "flag" not in data.left.constant
    assert data.right["y"].domain.declared is False


def test_fully_declared_domains(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,b,c\n1,0,u\n2,1,v\n")
    right = write(tmp_path / "r.csv", "id,n\n1,3\n2,4\n")
    spec = {"columns": {"b": "boolean", "c": {"categories": ["u", "v"]}, "n": {"bounds": [0, 5]}}}
    assert load_two_view(left, right, types=spec).domains_declared is True


def test_an_inferred_boolean_type_is_not_declared(tmp_path: Path) -> None:
    """A column that looks Boolean could be numeric with one more row (a 2): its type
    is a choice made on the data unless the types file declares it."""
    left = write(tmp_path / "l.csv", "id,b,c\n1,0,u\n2,1,v\n")
    right = write(tmp_path / "r.csv", "id,n\n1,3\n2,4\n")
    spec = {"columns": {"c": {"categories": ["u", "v"]}, "n": {"bounds": [0, 5]}}}
    data = load_two_view(left, right, types=spec)
    assert data.left["b"].kind is B and data.left["b"].domain.declared is False
    assert data.domains_declared is False
    neighbour = write(tmp_path / "l2.csv", "id,b,c\n1,0,u\n2,1,v\n3,2,u\n")
    right3 = write(tmp_path / "r3.csv", "id,n\n1,3\n2,4\n3,1\n")
    assert load_two_view(neighbour, right3, types=spec).left["b"].kind is N


def test_types_file_toml_with_id_type(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "a,who\n3.0,p\n2.5,q\n")
    right = write(tmp_path / "r.csv", "who,b\nq,1\np,0\n")
    types = write(
        tmp_path / "types.toml",
        '[columns]\nwho = "id"\na = { type = "categorical", categories = [2.5, 3] }\n',
    )
    spec = read_types_file(types)
    assert spec.id_column == "who" and spec.columns["a"].categories == ("2.5", "3")
    data = load_two_view(left, right, types=types)
    assert data.left["a"].values.tolist() == [1, 0]
    assert data.right["b"].values.tolist() == [0, 1]


def test_types_spec_parsing() -> None:
    spec = TypesSpec.from_mapping(
        {"id_column": "k", "columns": {"n": {"bounds": [-1, 1.5]}, "b": "Boolean"}}
    )
    assert spec.id_column == "k"
    assert spec.columns["k"].type is ColumnType.ID
    assert spec.columns["b"].type is ColumnType.BOOLEAN
    assert spec.columns["n"].bounds == (-1.0, 1.5)


def test_category_text_is_canonical() -> None:
    assert [category_text(v) for v in (3.0, 2.5, 10, -1.0, 0.1)] == ["3", "2.5", "10", "-1", "0.1"]
    # numpy's float64 is a float whose repr is 'np.float64(2.5)': it named categories and bin edges so
    numbers = (np.float64(3.0), np.float64(2.5), np.int64(10), np.float32(0.5), np.float64(-np.inf))
    assert [category_text(v) for v in numbers] == ["3", "2.5", "10", "0.5", "-inf"]


def test_numbers_typed_categorical_sort_numerically(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,c\n1,10\n2,9\n3,9.5\n")
    right = write(tmp_path / "r.csv", "id,d\n1,0\n2,1\n3,1\n")
    data = load_two_view(left, right, types={"columns": {"c": "categorical"}})
    assert data.left["c"].domain.categories == ("9", "9.5", "10")
    assert data.left["c"].values.tolist() == [2, 0, 1]


# ------------------------------------------------------------------- formats


def test_dataframe_input() -> None:
    left = pd.DataFrame(
        {"id": [10, 20, 30], "b": [True, False, None], "c": pd.Categorical(["u", "v", "u"]),
         "n": [1.0, np.nan, 3.0], "s": ["x", "?", "y"]}
    )
    right = pd.DataFrame({"id": [30, 10, 20], "m": pd.array([1, None, 2], dtype="Int64")})
    data = load_two_view(left, right, na_values=["?"])
    assert data.left.source == "left DataFrame"
    assert [(a.name, a.kind) for a in data.left] == [("b", B), ("c", C), ("n", N), ("s", C)]
    assert data.left["b"].values.tolist() == [1, 0, -1]
    assert data.left["s"].values.tolist() == [0, -1, 1]
    np.testing.assert_array_equal(data.right["m"].values, [np.nan, 2.0, 1.0])
    assert data.ids.tolist() == ["10", "20", "30"]


def test_parquet_input(tmp_path: Path) -> None:
    left = pd.DataFrame({"id": ["a", "b", "c"], "n": [0.5, np.nan, 2.0], "b": [1, 0, 1]})
    right = pd.DataFrame({"id": ["b", "c", "a"], "c": ["p", "q", None]})
    pq.write_table(pa.Table.from_pandas(left, preserve_index=False), tmp_path / "l.parquet")
    pq.write_table(pa.Table.from_pandas(right, preserve_index=False), tmp_path / "r.parquet")
    data = load_two_view(tmp_path / "l.parquet", tmp_path / "r.parquet")
    np.testing.assert_array_equal(data.left["n"].values, [0.5, np.nan, 2.0])
    assert data.left["b"].kind is B
    assert data.right["c"].values.tolist() == [-1, 0, 1]


def test_mixed_formats(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n1,0.5\n2,1.5\n")
    pq.write_table(pa.table({"id": [2, 1], "b": ["u", "v"]}), tmp_path / "r.parquet")
    data = load_two_view(left, tmp_path / "r.parquet")
    assert data.right["b"].values.tolist() == [1, 0]


def test_gzip_tsv_and_semicolon(tmp_path: Path) -> None:
    with gzip.open(tmp_path / "l.csv.gz", "wt", encoding="utf-8") as f:
        f.write("id,a\n1,0.5\n2,1.5\n")
    write(tmp_path / "r.tsv", "id\tb\n1\tx\n2\ty\n")
    write(tmp_path / "r2.csv", "id;b\n1;x\n2;y\n")
    for right in ("r.tsv", "r2.csv"):
        data = load_two_view(tmp_path / "l.csv.gz", tmp_path / right)
        assert data.left["a"].values.tolist() == [0.5, 1.5]
        assert data.right["b"].domain.categories == ("x", "y")


def test_read_view_alone(pair: tuple[Path, Path]) -> None:
    view = read_view(pair[1], "right", id_column="id", types={"columns": {"x": "numeric", "smoker": "boolean"}})
    assert view.name == "right" and view.names == ["x", "y"]
    assert view["x"].kind is N
    assert view["y"].values[:2].tolist() == [10.0, 30.0]  # file order


def test_read_view_finds_the_id_column_as_load_two_view_does(tmp_path: Path) -> None:
    """Given, declared (``id_column`` or ``type: id``), or Siren's first column ``ids``: never an attribute."""
    table = write(tmp_path / "t.csv", "row_id,a,b\n1,x,0.5\n2,y,1.5\n3,x,2.5\n")
    assert read_view(table).names == ["row_id", "a", "b"]  # no rule of one view makes it the id column
    assert read_view(table, id_column="row_id").names == ["a", "b"]
    assert read_view(table, types={"id_column": "row_id"}).names == ["a", "b"]
    assert read_view(table, types={"columns": {"row_id": "id"}}).names == ["a", "b"]
    assert read_view(table, id_column="row_id", types={"id_column": "row_id"}).names == ["a", "b"]
    siren = write(tmp_path / "s.csv", "IDS,a\nr1,x\nr2,y\n")
    assert read_view(siren).names == ["a"]
    not_first = write(tmp_path / "n.csv", "a,ids\nx,r1\ny,r2\n")
    assert read_view(not_first).names == ["a", "ids"]  # Siren's ids are the first column only


@pytest.mark.parametrize("id_column, types, fragment", [
    ("a", {"id_column": "row_id"}, "id column 'a' given, but types declares 'row_id'"),
    ("row_id", {"columns": {"row_id": {"categories": ["1", "2", "3"]}}},
     "column 'row_id' is the id column (given as the id column) but is declared categorical"),
    (None, {"columns": {"ids": "numeric"}}, "column 'ids' is the id column (named like an id column)"),
])
def test_read_view_refuses_a_conflicting_id_column(tmp_path: Path, id_column: str | None, types: dict,
                                                   fragment: str) -> None:
    first = "ids" if "ids" in types.get("columns", {}) else "row_id"
    table = write(tmp_path / "t.csv", f"{first},a\n1,x\n2,y\n3,x\n")
    with pytest.raises(DataError) as caught:
        read_view(table, id_column=id_column, types=types)
    assert caught.value.code == "id_column_conflict" and fragment in str(caught.value)
    assert not caught.value.data_dependent


def test_duplicate_names_can_be_renamed(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,m,m,m.1\n1,0,1,0\n2,1,0,1\n")
    right = write(tmp_path / "r.csv", "id,z\n1,0\n2,1\n")
    data = load_two_view(left, right, duplicate_names="rename")
    # the names pandas.read_csv gives, so a pandas-based reader re-evaluates the queries
    assert data.left.names == list(pd.read_csv(left).columns[1:]) == ["m", "m.2", "m.1"]
    assert data.left["m.2"].values.tolist() == [1, 0]
    assert data.left.renamed == {"m.2": "m"}


# ----------------------------------------------------------------- real data


def _shared(name: str) -> tuple[Path, Path]:
    left, right = SHARED / name / "left.csv", SHARED / name / "right.csv"
    if not (left.exists() and right.exists()):
        pytest.skip(f"shared data {name} not available")
    return left, right


def _header(path: Path) -> list[str]:
    return path.open(encoding="utf-8").readline().rstrip("\n").split(",")


@pytest.mark.parametrize(
    "name, rows, left_kinds, right_kinds",
    [
        ("mammals", 2575, {"boolean": 194}, {"numeric": 48}),
        ("rwas", 9881, {"numeric": 22, "boolean": 16, "categorical": 1}, {"numeric": 22}),
        ("spi", 4000, {"numeric": 10}, {"numeric": 135}),
        ("nmes1988", 4406, {"boolean": 5, "categorical": 4, "numeric": 4}, {"numeric": 6}),
    ],
)
def test_shared_datasets(name: str, rows: int, left_kinds: dict, right_kinds: dict) -> None:
    left, right = _shared(name)
    # mammals has two species both called "House mouse": load with renaming
    data = load_two_view(left, right, duplicate_names="rename")
    assert data.n_rows == rows and len(data.ids) == rows
    for view, path, kinds in ((data.left, left, left_kinds), (data.right, right, right_kinds)):
        header = _header(path)
        # the first column is the id; every other column is an attribute or a constant
        assert len(view) + len(view.constant) == len(header) - 1
        assert not set(view.names) & set(view.constant)
        # constant columns are reported with their kinds counted as inferred
        counted = Counter(a.kind.value for a in view)
        assert sum(counted.values()) + len(view.constant) == sum(kinds.values())
        for kind, count in counted.items():
            assert count <= kinds[kind]
        for a in view:
            assert a.n_rows == rows


def test_mammals_kinds_and_constants() -> None:
    left, right = _shared("mammals")
    data = load_two_view(left, right, duplicate_names="rename")
    assert all(a.kind is B for a in data.left)
    assert all(a.kind is N for a in data.right)
    assert len(data.left) + len(data.left.constant) == 194
    assert len(data.right) == 48
    assert {"House mouse", "House mouse.1"} <= set(data.left.names)
    for name in data.left.constant:  # species absent from every cell
        assert name not in data.left
    assert data.ids[:3].tolist() == ["1", "2", "3"]


def test_declared_constant_columns_are_kept(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a,b\n1,1,0\n2,1,1\n3,1,0\n")
    right = write(tmp_path / "r.csv", "id,z\n1,0\n2,1\n3,1\n")
    undeclared = load_two_view(left, right)
    assert undeclared.left.constant == ["a"] and undeclared.left.names == ["b"]
    declared = load_two_view(left, right, types={"columns": {"a": "boolean"}})
    assert declared.left.constant == [] and declared.left.names == ["a", "b"]


def test_dates_and_times_are_categories_in_iso_text(tmp_path) -> None:
    """A nanosecond Parquet column gave '2020-03-04 00:00:00.000000000'; a CSV's dates stay as written."""
    import datetime

    stamps = [datetime.datetime(2020, 3, 4), datetime.datetime(2020, 3, 4, 5, 6, 7, 250000),
              datetime.datetime(2020, 3, 4, 5, 6, 10)]
    table = pa.table({"t": pa.array(stamps, pa.timestamp("ns")), "d": [datetime.date(2020, 3, d) for d in (4, 5, 6)],
                      "x": [1.0, 2.0, 3.0]})
    pq.write_table(table, tmp_path / "v.parquet")
    view = read_view(tmp_path / "v.parquet")
    domains = {a.name: a.domain.categories for a in view}
    assert domains["t"] == ("2020-03-04 00:00:00", "2020-03-04 05:06:07.25", "2020-03-04 05:06:10")
    assert domains["d"] == ("2020-03-04", "2020-03-05", "2020-03-06")
    (tmp_path / "v.csv").write_text("d,x\n2020-03-04,1\n2021-01-01,2\n")
    assert {a.name: a.domain.categories for a in read_view(tmp_path / "v.csv")}["d"] == ("2020-03-04", "2021-01-01")


def test_an_empty_category_and_an_epsilon_beyond_floats_are_refused(tmp_path) -> None:
    """An empty category never matched (an empty cell is missing) yet private miners spent
    budget on it; "1e400" was accepted, then failed when a refusal was formatted."""
    from dprm.data.types_file import read_types_file
    from dprm.errors import DataError, ParameterError
    from dprm.privacy import Accountant, SecureNoise

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"columns": {"c": {"categories": ["", "x"]}}}))
    with pytest.raises(DataError, match="category '' is empty"):
        read_types_file(path)
    with pytest.raises(ParameterError, match="at most the largest float"):
        Accountant("1e400", SecureNoise())


def test_cells_writing_one_number_are_one_category_in_a_column_of_text(tmp_path: Path) -> None:
    """A word among numbers makes a column categorical and read as text: ``3``, ``3.0`` and ``03`` were three
    categories (``[grade = 3]``, ``[grade = 3.0]``, ``[grade = 03]``, each a third of the relation); now one,
    ``"3"``, as in a column of numbers declared categorical (docs/data.md, canonical text)."""
    from dprm.errors import DataError

    left = write(tmp_path / "left.csv", "id,grade\n1,3\n2,3.0\n3,03\n4,unknown\n5,10\n6,2.50\n7,Z\n")
    right = write(tmp_path / "right.csv", "id,high\n1,1\n2,1\n3,1\n4,0\n5,0\n6,0\n7,0\n")
    data = load_two_view(left, right)
    grade = data.views[0].attributes[0]
    assert grade.domain.categories == ("2.5", "3", "10", "Z", "unknown")  # numbers in numeric order, then text
    assert grade.values.tolist() == [1, 1, 1, 4, 2, 0, 3]
    types = tmp_path / "types.json"
    types.write_text(json.dumps({"columns": {"grade": {"categories": ["03", "10", "2.5", "unknown", "Z"]}}}))
    declared = load_two_view(left, right, types=types).views[0].attributes[0]
    assert declared.domain.categories == ("03", "10", "2.5", "unknown", "Z")  # named as declared
    assert declared.values.tolist() == [0, 0, 0, 3, 1, 2, 4]
    types.write_text(json.dumps({"columns": {"grade": {"categories": ["03", "3", "10", "2.5", "unknown", "Z"]}}}))
    with pytest.raises(DataError, match="declared categories '03' and '3' are the same number"):
        load_two_view(left, right, types=types)
