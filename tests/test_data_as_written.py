"""Values read as the file writes them, where pyarrow's own reading would rewrite them.

pyarrow's CSV reader reads a whole number written in hexadecimal (``0x10``) as an
integer (16), in a column of whole numbers only; no other reader of the file does.
The category, the declared category and the id are the text of the file.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from dprm.data.loading import load_two_view
from dprm.errors import DataError

from test_cli import assert_one_error_line, run, write

RIGHT = "id,b\n1,0\n2,1\n3,1\n4,0\n"


# ------------------------------------------------------------- hexadecimal whole numbers


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_a_column_written_in_hexadecimal_keeps_its_text(tmp_path: Path, suffix: str) -> None:
    text = b"id,code\n1,0x10\n2,0x20\n3,0x10\n4,0X1f\n"
    left = write(tmp_path / f"l{suffix}", gzip.compress(text) if suffix.endswith(".gz") else text)
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    code = data.left["code"]
    assert code.kind.value == "categorical"
    assert code.domain.categories == ("0X1f", "0x10", "0x20")  # was ('16', '31', '32')
    assert code.values.tolist() == [1, 2, 1, 0]


def test_declared_categories_written_in_hexadecimal_are_accepted(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,code\n1,0x10\n2,0x20\n3,0x10\n4,0x20\n")
    types = {"columns": {"code": {"categories": ["0x10", "0x20"]}}}
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT), types=types)
    assert data.left["code"].values.tolist() == [0, 1, 0, 1]  # was: "value '16' is not one of the declared categories"


def test_hexadecimal_ids_do_not_match_decimal_ones(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n0x1,5\n0x2,6\n0x3,7\n0x4,8\n")
    with pytest.raises(DataError) as caught:  # was silently matched with the ids 1, 2, 3, 4
        load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert caught.value.code == "unmatched_id"
    assert "0x1, 0x2, 0x3, 0x4" in str(caught.value)


def test_a_hexadecimal_id_is_not_a_repeat_of_its_decimal_value(tmp_path: Path) -> None:
    ids = "16,0x10,3,4"
    left = write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},{k}\n" for k, i in enumerate(ids.split(","))))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{k % 2}\n" for k, i in enumerate(ids.split(","))))
    data = load_two_view(left, right)  # was: "1 id(s) occur more than once in column 'id': 16"
    assert data.ids.tolist() == ["16", "0x10", "3", "4"]


def test_a_declared_numeric_column_written_in_hexadecimal_is_refused_naming_the_cell(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,n\n1,3\n2,0x10\n3,5\n4,6\n")
    with pytest.raises(DataError) as caught:
        load_two_view(left, write(tmp_path / "r.csv", RIGHT), types={"columns": {"n": "numeric"}})
    assert caught.value.code == "not_a_number"
    assert caught.value.row == 2
    assert "'0x10'" in str(caught.value)


def test_decimal_columns_of_a_file_holding_0x_elsewhere_are_unchanged(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,n,size\n1,3,10x20\n2,4,0x7\n3,5,1x1\n4,6,2x2\n")
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert data.left["n"].kind.value == "numeric"
    assert data.left["n"].values.tolist() == [3.0, 4.0, 5.0, 6.0]
    assert data.left["size"].domain.categories == ("0x7", "10x20", "1x1", "2x2")


def test_mine_refuses_a_hexadecimal_cell_of_a_declared_numeric_column_and_writes_nothing(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,n\n" + "".join(f"{i},{'0x10' if i == 3 else i}\n" for i in range(1, 21)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 21)))
    types = write(tmp_path / "t.json", json.dumps({"columns": {"n": {"bounds": [0, 100]}, "b": "boolean"}}))
    out = tmp_path / "out.json"
    code, _, err = run(["mine", left, right, "--types", types, "--epsilon", "1", "-o", out])
    assert code == 2
    assert_one_error_line(err, "l.csv: column 'n', row 3: value '0x10' is not a number")
    assert not out.exists()


def test_inspect_shows_declared_hexadecimal_categories(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,code\n1,0x10\n2,0x20\n3,0x10\n4,0x20\n")
    types = write(tmp_path / "t.json", json.dumps({"columns": {"code": {"categories": ["0x10", "0x20"]}}}))
    code, out, err = run(["inspect", left, write(tmp_path / "r.csv", RIGHT), "--types", types])
    assert code == 0, err  # was exit 2: "value '16' is not one of the declared categories"
    assert "2 categories declared" in out


# ------------------------------------------------------------- times and dates with a time


def test_times_and_timestamps_of_a_text_file_keep_their_text(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,t,at,zoned\n"
                                     "1,10:00,2020-01-01T10:00,2020-01-01T10:00:00+01:00\n"
                                     "2,11:30,2020-01-02T10:00,2020-01-01T09:00:00Z\n"
                                     "3,10:00,2020-01-01T10:00,2020-01-01T10:00:00+01:00\n"
                                     "4,11:30,2020-01-02T10:00,2020-01-01T09:00:00Z\n")
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    domains = {a.name: a.domain.categories for a in data.left}
    assert domains["t"] == ("10:00", "11:30")  # was ('10:00:00', '11:30:00')
    assert domains["at"] == ("2020-01-01T10:00", "2020-01-02T10:00")  # was '2020-01-01 10:00:00', ...
    # was one category '2020-01-01 09:00:00Z': the times were moved to UTC and merged
    assert domains["zoned"] == ("2020-01-01T09:00:00Z", "2020-01-01T10:00:00+01:00")
    assert data.left["zoned"].values.tolist() == [1, 0, 1, 0]


def test_declared_timestamp_categories_as_written_are_accepted(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,at\n1,2020-01-01 10:00\n2,2020-01-02 10:00\n3,2020-01-01 10:00\n4,"
                                     "2020-01-02 10:00\n")
    types = {"columns": {"at": {"categories": ["2020-01-01 10:00", "2020-01-02 10:00"], "complete": True}}}
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT), types=types)
    # was: "value '2020-01-01 10:00:00' is not one of the declared categories"
    assert data.left["at"].values.tolist() == [0, 1, 0, 1]


def test_timestamp_ids_are_matched_as_written(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n2020-01-01T10:00:00+01:00,5\n2020-01-01T12:00:00Z,6\n")
    right = write(tmp_path / "r.csv", "id,b\n2020-01-01T09:00:00Z,0\n2020-01-01T12:00:00Z,1\n")
    with pytest.raises(DataError) as caught:  # was matched: both read as 2020-01-01 09:00:00Z
        load_two_view(left, right)
    assert caught.value.code == "unmatched_id"
    assert "2020-01-01T10:00:00+01:00" in str(caught.value)


def test_ids_of_one_instant_in_two_time_zones_are_refused_not_two_entities(tmp_path: Path) -> None:
    """Ids are compared as written: ``2020-01-01T10:00+01:00`` and ``2020-01-01T09:00Z`` in one file were two
    entities without a word (the same entity twice, counted twice). Now ``duplicate_id`` naming both and their
    rows; a time without an offset (local time) is not an instant, and stays its text."""
    left = write(tmp_path / "l.csv", "id,a\n2020-01-01T10:00+01:00,5\n2020-01-02T09:00Z,6\n"
                                     "2020-01-01 09:00:00.000Z,7\n2020-01-01T09:00,8\n")
    right = write(tmp_path / "r.csv", "id,b\n2020-01-01T10:00+01:00,0\n2020-01-02T09:00Z,1\n"
                                      "2020-01-01 09:00:00.000Z,0\n2020-01-01T09:00,1\n")
    with pytest.raises(DataError) as caught:
        load_two_view(left, right)
    assert caught.value.code == "duplicate_id" and caught.value.row == 3
    assert str(caught.value) == (f"{left}: ids '2020-01-01T10:00+01:00' (row 1) and '2020-01-01 09:00:00.000Z' "
                                 f"(row 3) in column 'id' are one instant written in two time zones: one entity "
                                 f"twice; write each id once, in one form")


def test_ids_of_one_instant_written_otherwise_in_each_view_say_so(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n2020-01-01T10:00:00+01:00,5\n2020-01-01T12:00:00Z,6\n")
    right = write(tmp_path / "r.csv", "id,b\n2020-01-01T09:00:00Z,0\n2020-01-01T12:00:00Z,1\n")
    with pytest.raises(DataError) as caught:
        load_two_view(left, right)
    assert caught.value.code == "unmatched_id"
    assert ("('2020-01-01T10:00:00+01:00' and '2020-01-01T09:00:00Z' are one instant written in two time zones: "
            "write the ids in one form in both files)") in str(caught.value)


def test_a_date_column_of_a_text_file_is_unchanged(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,d\n1,2020-03-04\n2,2021-01-01\n3,2020-03-04\n4,2021-01-01\n")
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert data.left["d"].domain.categories == ("2020-03-04", "2021-01-01")


def test_mine_accepts_declared_categories_written_as_times(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,t\n" + "".join(f"{i},{'10:00' if i % 2 else '11:30'}\n" for i in range(1, 21)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 21)))
    types = write(tmp_path / "t.json", json.dumps({"columns": {"t": {"categories": ["10:00", "11:30"]},
                                                               "b": "boolean"}}))
    out = tmp_path / "out.json"
    code, _, err = run(["mine", left, right, "--types", types, "-a", "cartwheels", "-o", out])
    assert code == 0, err  # was exit 2: "value '10:00:00' is not one of the declared categories"
    assert out.exists()


def test_a_parquet_timestamp_with_a_time_zone_has_no_trailing_zeros(tmp_path: Path) -> None:
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    stamps = [datetime.datetime(2020, 1, 1), datetime.datetime(2020, 1, 1, 0, 0, 7, 250000)]
    pq.write_table(pa.table({"paris": pa.array(stamps, pa.timestamp("us", tz="Europe/Paris")),
                             "utc": pa.array(stamps, pa.timestamp("ns", tz="UTC"))}), tmp_path / "v.parquet")
    from dprm.data.loading import read_view

    domains = {a.name: a.domain.categories for a in read_view(tmp_path / "v.parquet")}
    # was '2020-01-01 01:00:00.000000+0100', '2020-01-01 00:00:00.000000000Z', ...
    assert domains["paris"] == ("2020-01-01 01:00:00+0100", "2020-01-01 01:00:07.25+0100")
    assert domains["utc"] == ("2020-01-01 00:00:00Z", "2020-01-01 00:00:07.25Z")


# ------------------------------------------------------------- the index pandas writes into a Parquet file


def test_the_unnamed_index_pandas_writes_into_parquet_is_no_attribute(tmp_path: Path) -> None:
    import pandas as pd

    from dprm.data.loading import read_view

    frame = pd.DataFrame({"a": [1.5, 2.5, 3.5, 4.5, 5.5], "c": list("xyxyx")}).iloc[[4, 2, 0, 1, 3]]
    frame.to_parquet(tmp_path / "v.parquet")  # the shuffled index becomes a column __index_level_0__
    view = read_view(tmp_path / "v.parquet")
    assert view.names == read_view(frame).names == ["a", "c"]  # was ['a', 'c', '__index_level_0__']
    assert any("'__index_level_0__' holds the index pandas wrote" in note for note in view.notes)


def test_a_named_pandas_index_stays_a_column(tmp_path: Path) -> None:
    import pandas as pd

    from dprm.data.loading import read_view

    frame = pd.DataFrame({"patient": ["p3", "p1", "p2"], "a": [1.5, 2.5, 3.5]}).set_index("patient")
    frame.to_parquet(tmp_path / "v.parquet")
    view = read_view(tmp_path / "v.parquet", id_column="patient")
    assert view.names == ["a"]


def test_inspect_reads_two_parquet_views_written_from_reordered_frames(tmp_path: Path) -> None:
    import pandas as pd

    order = [5, 3, 1, 0, 2, 4, 6, 7]
    left = pd.DataFrame({"id": range(8), "a": [0, 1] * 4}).iloc[order]
    right = pd.DataFrame({"id": range(8), "b": [1, 0, 0, 1] * 2}).iloc[order]
    left.to_parquet(tmp_path / "l.parquet")
    right.to_parquet(tmp_path / "r.parquet")
    # was: "1 column name(s) occur in both l.parquet and r.parquet: '__index_level_0__'"
    code, out, err = run(["inspect", tmp_path / "l.parquet", tmp_path / "r.parquet"])
    assert code == 0, err
    assert "__index_level_0__" not in out
    assert "holds the index pandas wrote with the frame" in err


# ------------------------------------------------------------- the delimiter of a header with quoted names


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_comma_inside_a_quoted_name_does_not_choose_the_delimiter(tmp_path: Path, delimiter: str) -> None:
    from dprm.data.loading import read_view

    rows = "".join(f"{60 + i}{delimiter}{'fm'[i % 2]}\n" for i in range(6))
    view = read_view(write(tmp_path / "v.csv", f'"weight, kg"{delimiter}sex\n{rows}'))
    # was one column 'weight, kg;sex' of the categories '60;f', '61;m', ... (with a tab: a refused name)
    assert view.names == ["weight, kg", "sex"]
    assert view["weight, kg"].values.tolist() == [60.0, 61.0, 62.0, 63.0, 64.0, 65.0]


def test_itemsets_reads_a_semicolon_file_with_a_comma_in_a_quoted_name(tmp_path: Path) -> None:
    table = write(tmp_path / "t.csv", '"weight, kg";"sex"\n' + "".join(f"{50 + i % 3};{'fm'[i % 2]}\n"
                                                                          for i in range(30)))
    code, out, err = run(["itemsets", table, "--min-support", "0.3", "--categorical-integers"])
    assert code == 0, err
    assert "sex=f" in out  # was the items 'weight, kg;"sex"=51;m', ...
    assert ";" not in out.split("items", 1)[1]


def test_a_pandas_index_column_that_is_named_by_the_caller_stays(tmp_path: Path) -> None:
    """A types file that declares the column (a server's types file declares every column) or an id column of
    that name keeps it, as before."""
    import pandas as pd

    from dprm.data.loading import check_declared_columns, read_view
    from dprm.data.types_file import TypesSpec

    order = [3, 1, 0, 2]
    pd.DataFrame({"a": [1.5, 2.5, 3.5, 4.5]}).iloc[order].to_parquet(tmp_path / "l.parquet")
    pd.DataFrame({"b": [0, 1, 1, 0]}).iloc[order].to_parquet(tmp_path / "r.parquet")
    declared = {"columns": {"__index_level_0__": "ignore", "a": {"bounds": [0, 5]}}}
    check_declared_columns(TypesSpec.from_mapping(declared), tmp_path / "l.parquet")
    assert read_view(tmp_path / "l.parquet", types=declared, all_types_here=True).names == ["a"]
    mined = {"columns": {"__index_level_0__": "numeric"}}
    assert read_view(tmp_path / "l.parquet", types=mined).names == ["a", "__index_level_0__"]
    data = load_two_view(tmp_path / "l.parquet", tmp_path / "r.parquet", id_column="__index_level_0__")
    assert data.ids.tolist() == ["3", "1", "0", "2"]


def test_a_pipe_separated_file_is_refused_not_read_as_one_column(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id|a|c\n" + "".join(f"{i}|{i % 3}|{'xy'[i % 2]}\n" for i in range(1, 21)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 21)))
    out = tmp_path / "out.json"
    # was read as one column 'id|a|c' of 20 categories ('1|1|y', ...) and mined
    code, _, err = run(["mine", left, right, "-a", "cartwheels", "-o", out])
    assert code == 2
    assert_one_error_line(err, "l.csv: its header and first row hold no ',', tab or ';' but '|'")
    assert not out.exists()
    code, _, err = run(["itemsets", left, "--min-support", "0.2"])
    assert code == 2
    assert_one_error_line(err, "l.csv: its header and first row hold no ',', tab or ';' but '|'")


def test_a_single_column_with_a_pipe_in_its_values_only_is_read(tmp_path: Path) -> None:
    from dprm.data.loading import read_view

    view = read_view(write(tmp_path / "v.csv", "route\na|b\nc\na|b\nc\n"))
    assert view["route"].domain.categories == ("a|b", "c")


# ------------------------------------------------------------- names alike once Unicode-normalised

NFC, NFD = "caf\u00e9", "cafe\u0301"  # the same name 'café', its accent a letter of its own or a combining mark


def test_two_columns_named_alike_with_different_code_points_are_refused(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", f"id,{NFC},{NFD}\n1,1,x\n2,2,y\n3,3,x\n4,4,y\n")
    with pytest.raises(DataError) as caught:  # was two columns that print alike
        load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert caught.value.code == "duplicate_column"
    assert "columns 2 and 3 are both named 'café'" in str(caught.value)
    assert "'cafe\\u0301'" in str(caught.value)


def test_a_name_in_both_views_written_with_different_code_points_is_shared(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", f"id,{NFC}\n1,1\n2,2\n3,3\n4,4\n")
    right = write(tmp_path / "r.csv", f"id,{NFD}\n1,0\n2,1\n3,1\n4,0\n")
    with pytest.raises(DataError) as caught:  # was one attribute 'café' in each view
        load_two_view(left, right)
    assert caught.value.code == "shared_column"


def test_mine_refuses_alike_names_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", f"id,{NFC},{NFD}\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(1, 21)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 21)))
    out = tmp_path / "out.json"
    code, _, err = run(["mine", left, right, "-a", "cartwheels", "-o", out])
    assert code == 2
    assert_one_error_line(err, "l.csv: columns 2 and 3 are both named 'café'")
    assert not out.exists()


@pytest.mark.parametrize("written, declared, hint", [(NFD, NFC, "'cafe\\u0301'"), (NFD, "Café", "'cafe\\u0301'"),
                                                     ("age", "Age", "'age'")])
def test_a_declared_name_written_otherwise_than_the_file_is_named(tmp_path: Path, written: str, declared: str,
                                                                  hint: str) -> None:
    left = write(tmp_path / "l.csv", f"id,{written}\n1,1\n2,2\n3,3\n4,4\n")
    with pytest.raises(DataError) as caught:
        load_two_view(left, write(tmp_path / "r.csv", RIGHT), types={"columns": {declared: "numeric"}})
    assert caught.value.code == "unknown_column"
    # was "... in neither l.csv nor r.csv: 'café'" alone, while the file shows a column 'café'
    assert f"(the files have {hint}, written otherwise: declare it as the file writes it)" in str(caught.value)


# ------------------------------------------------------------- float32 numbers as written


def test_float32_values_are_the_numbers_they_are_written_as(tmp_path: Path) -> None:
    import numpy as np
    import pandas as pd

    from dprm.data.loading import read_view

    frame = pd.DataFrame({"x": np.array([0.1, 1.1, 0.5, np.nan], dtype=np.float32),
                          "h": np.array([0.1, 1.1, 0.5, 2.0], dtype=np.float16)})
    frame.to_parquet(tmp_path / "v.parquet")
    for source in (tmp_path / "v.parquet", frame):
        # was [0.10000000149011612, 1.100000023841858, ...] and [0.0999755859375, 1.099609375, ...]
        view = read_view(source, types={"columns": {"x": {"bounds": [0, 1.1]}, "h": {"bounds": [0, 2]}}})
        assert view["x"].values.tolist()[:3] == [0.1, 1.1, 0.5]  # was refused: 1.100000023841858 > 1.1
        assert view["h"].values.tolist() == [0.1, 1.1, 0.5, 2.0]
        categories = read_view(source, types={"columns": {"x": {"categories": ["0.1", "0.5", "1.1"]}}})
        assert categories["x"].values.tolist() == [0, 2, 1, -1]  # was: '0.10000000149011612' is not declared


def test_mine_reads_a_float32_parquet_column_within_its_declared_bounds(tmp_path: Path) -> None:
    import numpy as np
    import pandas as pd

    ids = list(range(1, 21))
    pd.DataFrame({"id": ids, "x": np.array([1.1 if i % 4 == 0 else 0.1 * (i % 7) for i in ids], dtype=np.float32)}
                 ).to_parquet(tmp_path / "l.parquet")
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in ids))
    types = write(tmp_path / "t.json", json.dumps({"columns": {"x": {"bounds": [0, 1.1]}, "b": "boolean"}}))
    out = tmp_path / "out.json"
    code, _, err = run(["mine", tmp_path / "l.parquet", right, "--types", types, "-a", "cartwheels", "-o", out])
    assert code == 0, err  # was exit 2: "value 1.100000023841858 is outside the declared bounds [0, 1.1]"
    assert out.exists()


# ------------------------------------------------------------- ids of a Parquet decimal column


def test_decimal_ids_match_the_same_numbers_of_the_other_view(tmp_path: Path) -> None:
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = pa.array([Decimal("1.00"), Decimal("2.00"), Decimal("3.50"), Decimal("4.00")], pa.decimal128(6, 2))
    pq.write_table(pa.table({"id": ids, "a": [1.5, 2.5, 3.5, 4.5]}), tmp_path / "l.parquet")
    right = write(tmp_path / "r.csv", "id,b\n4,0\n3.5,1\n2,1\n1,0\n")
    # was "l.parquet: 4 id(s) are not in r.csv: 1.00, 2.00, 3.50, 4.00"
    data = load_two_view(tmp_path / "l.parquet", right)
    assert data.ids.tolist() == ["1", "2", "3.5", "4"]
    assert data.right["b"].values.tolist() == [0, 1, 1, 0]
    code, out, err = run(["inspect", tmp_path / "l.parquet", right])
    assert code == 0, err


def test_a_decimal_that_is_not_boolean_is_named_as_a_number(tmp_path: Path) -> None:
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    from dprm.data.loading import read_view

    column = pa.array([Decimal("1"), Decimal("0"), Decimal("2")], pa.decimal128(3, 0))
    pq.write_table(pa.table({"flag": column}), tmp_path / "v.parquet")
    with pytest.raises(DataError) as caught:
        read_view(tmp_path / "v.parquet", types={"columns": {"flag": "boolean"}})
    # was "value Decimal('2') is not Boolean (0 or 1)": Python's spelling, not the file's
    assert str(caught.value).endswith("column 'flag', row 3: value 2 is not Boolean (0 or 1)")


# ------------------------------------------------------------- a compressed name on other data


@pytest.mark.parametrize("name, content, said", [
    ("l.csv.gz", "text", "is named .gz but is not gzip-compressed: it is text: name it l.csv"),
    ("l.csv.gz", "bz2", "is named .gz but is not gzip-compressed: it is bzip2-compressed: name it l.csv.bz2"),
    ("l.csv.bz2", "gzip", "is named .bz2 but is not bzip2-compressed: it is gzip-compressed: name it l.csv.gz"),
])
def test_a_file_named_as_compressed_that_is_not_says_what_it_is(tmp_path: Path, name: str, content: str,
                                                                said: str) -> None:
    import bz2

    text = ("id,a\n" + "".join(f"{i},{i % 3}\n" for i in range(1, 21))).encode()
    data = {"text": text, "bz2": bz2.compress(text), "gzip": gzip.compress(text)}[content]
    left = write(tmp_path / name, data)
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 21)))
    out = tmp_path / "out.json"
    code, _, err = run(["mine", left, right, "-a", "cartwheels", "-o", out])
    assert code == 2
    # was "l.csv.gz: cannot be read: zlib inflate failed: incorrect header check"
    assert_one_error_line(err, f"{name}: {said}")
    assert not out.exists()
    code, _, err = run(["itemsets", left, "--min-support", "0.2"])
    assert code == 2
    assert_one_error_line(err, f"{name}: {said}")


def test_a_damaged_gzip_file_is_still_said_to_be_unreadable(tmp_path: Path) -> None:
    from dprm.data.loading import read_view

    left = write(tmp_path / "l.csv.gz", gzip.compress(b"id,a\n1,2\n")[:12] + b"\x00" * 20)
    with pytest.raises(DataError) as caught:
        read_view(left)
    assert caught.value.code in ("unreadable_file", "bad_csv")


def test_a_float16_whole_number_is_itself(tmp_path: Path) -> None:
    """825751d read float16's 65504 as 65500 (its shortest float16 text, 6.55e+04)."""
    import numpy as np
    import pandas as pd

    from dprm.data.loading import read_view

    frame = pd.DataFrame({"h": np.array([65504, 2049, 0.1, -3], dtype=np.float16),
                          "s": np.array([16777216, 3e38, 0.1, -3], dtype=np.float32)})
    view = read_view(frame)
    assert view["h"].values.tolist() == [65504.0, 2048.0, 0.1, -3.0]  # float16(2049) is 2048
    assert view["s"].values.tolist() == [16777216.0, 3e38, 0.1, -3.0]


# ------------------------------------------------------------- durations


def test_durations_are_numbers_of_seconds_whatever_their_unit(tmp_path: Path) -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dprm.data.loading import read_view

    pq.write_table(pa.table({"s": pa.array([1, 90, None, 3600], pa.duration("s")),
                             "ms": pa.array([1500, 90000, 250, None], pa.duration("ms"))}), tmp_path / "v.parquet")
    view = read_view(tmp_path / "v.parquet")
    # was the categories '1', '3600', '90' and '1500', '250', '90000': numbers without their unit
    assert view["s"].kind.value == "numeric"
    assert view["s"].values.tolist()[:2] == [1.0, 90.0] and view["s"].values.tolist()[3] == 3600.0
    assert view["ms"].values.tolist()[:3] == [1.5, 90.0, 0.25]
    assert f"{tmp_path / 'v.parquet'}: column 's' holds durations, read as numbers of seconds" in view.notes
    frame = pd.DataFrame({"t": pd.to_timedelta([1, 2, 1.5], unit="s")})  # nanoseconds
    assert read_view(frame)["t"].values.tolist() == [1.0, 2.0, 1.5]  # was the categories '1000000000', ...


# ------------------------------------------------------------- invisible characters in column names

ZWSP, BOM, SHY, RLO, ZWNJ = "\u200b", "\ufeff", "\u00ad", "\u202e", "\u200c"


@pytest.mark.parametrize("name, code, said", [
    (ZWSP, "unnamed_column", "column 2's name '\\u200b' is invisible characters only (U+200B (ZERO WIDTH SPACE))"),
    (ZWSP + BOM, "unnamed_column", "is invisible characters only (U+200B (ZERO WIDTH SPACE), U+FEFF"),
    (BOM + "age", "invisible_character",
     "column 2's name '\\ufeffage' starts with the invisible character U+FEFF (ZERO WIDTH NO-BREAK SPACE)"),
    ("age" + SHY, "invisible_character", "column 2's name 'age\\xad' ends with the invisible character U+00AD"),
    ("age" + ZWSP, "invisible_character", "ends with the invisible character U+200B (ZERO WIDTH SPACE)"),
    ("a" + RLO + "ge", "invisible_character",
     "holds the text-direction control U+202E (RIGHT-TO-LEFT OVERRIDE), which can show it as another name"),
])
def test_a_column_name_of_invisible_characters_or_ending_in_one_is_refused(tmp_path: Path, name: str, code: str,
                                                                           said: str) -> None:
    """A name made of zero-width spaces was a column that prints as no name; ``age`` + a zero-width space, or a
    byte-order mark before it, a column that prints as ``age`` which no types file or query naming ``age``
    found; a right-to-left override a name shown as another. Each is one line naming the column's position."""
    left = write(tmp_path / "l.csv", f"id,{name}\n1,1\n2,2\n3,3\n4,4\n")
    with pytest.raises(DataError) as caught:
        load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert caught.value.code == code and said in str(caught.value) and "\n" not in str(caught.value)
    assert not caught.value.data_dependent


def test_two_names_that_differ_by_invisible_characters_only_are_refused_in_one_file_and_across_views(
        tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", f"id,a{ZWSP}ge,age\n1,1,x\n2,2,y\n3,3,x\n4,4,y\n")
    with pytest.raises(DataError) as caught:  # was two columns that print alike
        load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert caught.value.code == "duplicate_column"
    assert ("columns 2 and 3 are both named 'age' once invisible characters are left out ('a\\u200bge' and 'age': "
            "U+200B (ZERO WIDTH SPACE))") in str(caught.value)
    left = write(tmp_path / "l.csv", f"id,a{SHY}ge\n1,1\n2,2\n3,3\n4,4\n")
    right = write(tmp_path / "r.csv", "id,age\n1,0\n2,1\n3,1\n4,0\n")
    with pytest.raises(DataError) as caught:  # was an attribute 'age' in each view
        load_two_view(left, right)
    assert caught.value.code == "shared_column"


def test_an_invisible_character_inside_a_name_is_kept(tmp_path: Path) -> None:
    """A zero-width non-joiner is part of Persian words (and a joiner of emoji): inside a name, alone, kept;
    a byte-order mark starting the file is no part of the first name."""
    persian = "\u0646\u0645" + ZWNJ + "\u0647"
    left = tmp_path / "l.csv"
    left.write_bytes(("\ufeffid," + persian + "\n1,1\n2,2\n3,3\n4,5\n").encode())
    data = load_two_view(left, write(tmp_path / "r.csv", RIGHT))
    assert [a.name for a in data.left] == [persian]


def test_mine_refuses_an_invisible_name_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", f"id,x{ZWSP}\n" + "".join(f"{i},{i % 3}\n" for i in range(1, 21)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 21)))
    out = tmp_path / "out.json"
    code, _, err = run(["mine", left, right, "-a", "cartwheels", "-o", out])
    assert code == 2 and not out.exists()
    assert_one_error_line(err, "l.csv: column 2's name 'x\\u200b' ends with the invisible character U+200B")


@pytest.mark.parametrize("left_id, right_id, said", [
    ("A", "a", "1 id(s) are not in {right}: A ('A' and 'a' differ only in letter case: ids are compared as written"),
    ('"a "', "a", "1 id(s) are not in {right}: 'a ' ('a ' and 'a' differ only in the spaces around them"),
    (" a", "a", "1 id(s) are not in {right}: ' a' (' a' and 'a' differ only in the spaces around them"),
])
def test_ids_that_differ_by_case_or_spaces_between_the_views_say_so(tmp_path: Path, left_id: str, right_id: str,
                                                                       said: str) -> None:
    """``a `` (a space after it) was shown ``a``, as the other view's id it did not match: the message did not
    say what differed. Now such an id is quoted, and the hint names the two ids."""
    left = write(tmp_path / "l.csv", f"id,x\n{left_id},2\nb,3\nc,4\n")
    right = write(tmp_path / "r.csv", f"id,y\n{right_id},1\nb,0\nc,1\n")
    with pytest.raises(DataError) as caught:
        load_two_view(left, right)
    assert caught.value.code == "unmatched_id"
    assert said.format(right=right) in str(caught.value)
