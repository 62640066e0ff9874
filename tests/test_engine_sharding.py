"""Shards without Ray: each part's counts add up to the whole's, and the shards agree on one schema.

The oracle of the sharded engine: for random splits of random planted data into
parts, every counting request answered on each part and summed equals the answer on
all the rows; and reading a shard's part of a file (CSV runs of lines, gzip, Parquet
row groups, part files), merged into one schema, gives the rows and domains that
loading the whole file gives.
"""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from dprm.data import load_two_view
from dprm.data.attributes import Attribute, AttributeKind, TwoViewData, View
from dprm.datasets import make_planted
from dprm.engine import InProcessEngine, Support
from dprm.engine import sharding
from dprm.engine.shard_ids import deal_ids, duplicate_error, repeated_ids
from dprm.engine.sharding import (ShardSpec, adopt_schema, concatenate, merge_schemas, read_shard, read_shard_and_ids,
                                  schema_only, summarise)
from dprm.engine.supports import AND, OR
from dprm.engine.table_counter import TableCounter
from dprm.errors import DataError, ParameterError
from dprm.mining.serenade.pairs import _onehot_chunks


def _rows(data: TwoViewData, rows: np.ndarray) -> TwoViewData:
    def view(v: View) -> View:
        return View(v.name, [Attribute(a.name, a.view, a.kind, a.values[rows], a.domain) for a in v.attributes],
                    constant=list(v.constant))
    return TwoViewData(view(data.left), view(data.right))


def _random_support(rng, side: int, n_literals: int) -> Support:
    support = Support.literal(side, int(rng.integers(n_literals)))
    for _ in range(int(rng.integers(0, 3))):
        support = support.extended(int(rng.choice([AND, OR])), int(rng.integers(n_literals)))
    return support


@pytest.mark.parametrize("seed", range(4))
def test_the_counts_of_disjoint_parts_add_up_to_the_counts_of_all_rows(seed) -> None:
    rng = np.random.default_rng(seed)
    planted = make_planted(700, n_planted=2, n_left_numeric=3, missing=0.05, random_state=seed)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    whole = InProcessEngine(data).counts("private", 5)
    cuts = np.sort(rng.choice(np.arange(1, data.n_rows), size=int(rng.integers(1, 4)), replace=False))
    order = rng.permutation(data.n_rows)  # any assignment of rows to parts
    parts = [TableCounter(InProcessEngine(_rows(data, rows)).literal_tables("private", 5))
             for rows in np.split(order, cuts)]
    tables = whole.tables
    for side in (0, 1):
        assert np.array_equal(sum(p.literal_sizes(side) for p in parts), whole.literal_sizes(side))
    for _ in range(5):
        left, right = _random_support(rng, 0, len(tables[0])), _random_support(rng, 1, len(tables[1]))
        assert np.array_equal(sum(p.cells(left, right) for p in parts), whole.cells(left, right))
        summed = [sum(answers) for answers in zip(*(p.extension_counts(left, right, [0, 1]) for p in parts))]
        for got, expected in zip(summed, whole.extension_counts(left, right, [0, 1])):
            assert np.array_equal(got, expected)
    for side in (0, 1):
        requests = [(attributes, np.arange(len(tables[side])))
                    for attributes, literals, _ in _onehot_chunks(tables[1 - side], data.n_rows, 1 << 21)
                    if literals.size]
        summed = [sum(a) for a in zip(*(p.pair_intersections(side, requests) for p in parts))]
        for got, expected in zip(summed, whole.pair_intersections(side, requests)):
            assert np.array_equal(got, expected)


def test_a_support_is_evaluated_as_its_query() -> None:
    planted = make_planted(300, n_planted=1, missing=0.1, random_state=2)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    counter = InProcessEngine(data).counts("private", 4)
    table = counter.tables[1]
    support = Support.literal(1, 2).extended(OR, 7).extended(AND, 11)
    expected = (table.support(2) | table.support(7)) & table.support(11)
    assert np.array_equal(counter.mask(support), expected)
    query = (table.query(2) | table.query(7)) & table.query(11)
    assert np.array_equal(counter.mask(support), query.support(data.right))


@pytest.fixture(scope="module")
def planted_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sharding")
    planted = make_planted(503, n_planted=2, missing=0.03, random_state=9)
    frame = planted.left.copy()
    frame["colour"] = np.random.default_rng(1).choice(["red", "green", "blue"], size=len(frame))
    frame.loc[:200, "colour"] = "red"
    frame.to_csv(folder / "left.csv", index=False)
    planted.right.to_csv(folder / "right.csv", index=False)
    (folder / "types.json").write_text(json.dumps(planted.types))
    return folder


def _whole_and_shards(left, right, n_shards: int, **options):
    spec = ShardSpec.of(left, right, **options)
    shards = [read_shard(spec, i, n_shards) for i in range(n_shards)]
    present = [s for s in shards if s is not None]
    schema = merge_schemas([[summarise(s.views[side]) for s in present] for side in (0, 1)])
    return load_two_view(left, right, **options), [adopt_schema(s, schema) for s in shards], schema


@pytest.mark.parametrize("n_shards", [1, 2, 3, 7])
def test_csv_shards_read_runs_of_lines_that_make_up_the_file(planted_files, n_shards) -> None:
    whole, shards, schema = _whole_and_shards(planted_files / "left.csv", planted_files / "right.csv", n_shards)
    assert sum(s.n_rows for s in shards) == whole.n_rows
    assert max(s.n_rows for s in shards) - min(s.n_rows for s in shards) <= 1
    joined = concatenate(shards)
    for side in (0, 1):
        assert joined.views[side].names == whole.views[side].names
        for a in whole.views[side]:
            assert joined.views[side][a.name].domain == a.domain
            assert np.array_equal(joined.views[side][a.name].values, a.values, equal_nan=True)
    assert schema_only(schema).n_rows == 0
    assert schema_only(schema).left["colour"].domain.categories == ("blue", "green", "red")


def test_gzip_csv_parquet_row_groups_and_part_files(planted_files, tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = planted_files / "types.json"
    whole = load_two_view(planted_files / "left.csv", planted_files / "right.csv", types=types)
    for side in ("left", "right"):
        with open(planted_files / f"{side}.csv", "rb") as source, gzip.open(tmp_path / f"{side}.csv.gz", "wb") as out:
            shutil.copyfileobj(source, out)
        frame = pd.read_csv(planted_files / f"{side}.csv")
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / f"{side}.parquet",
                       row_group_size=100)
        for part, begin in enumerate(range(0, len(frame), 200)):
            frame.iloc[begin:begin + 200].to_csv(tmp_path / f"{side}-{part}.csv", index=False)
    parts = [sorted(tmp_path.glob(f"{side}-*.csv")) for side in ("left", "right")]
    for left, right in ((tmp_path / "left.csv.gz", tmp_path / "right.csv.gz"),
                        (tmp_path / "left.parquet", tmp_path / "right.parquet"), (parts[0], parts[1])):
        spec = ShardSpec.of(left, right, types=types)
        shards = [read_shard(spec, i, 2) for i in range(2)]
        assert sum(s.n_rows for s in shards) == whole.n_rows
        joined = concatenate(shards)  # every row once (Parquet row groups interleave, so compare sorted)
        for a in whole.right:
            assert np.array_equal(np.sort(joined.right[a.name].values), np.sort(a.values), equal_nan=True)


def test_columns_that_cannot_be_merged_from_summaries_are_refused_in_one_line(tmp_path) -> None:
    # numbers in one shard and words in the other: loading all the rows reads text (a category "1" for the number 1
    # needs every row); 0, 1 in one shard and other numbers in the other merge (see the test of zeros and ones)
    frame = pd.DataFrame({"a": ["1", "2", "1", "2", "x", "3", "y", "5"], "k": [1, 1, 1, 1, 0, 1, 0, 1]})
    frame.to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"b": [1, 0, 1, 0, 1, 1, 0, 0]}).to_csv(tmp_path / "right.csv", index=False)
    spec = ShardSpec.of(tmp_path / "left.csv", tmp_path / "right.csv")
    shards = [read_shard(spec, i, 2) for i in range(2)]
    with pytest.raises(ParameterError, match="column 'a' reads as categorical and numeric") as error:
        merge_schemas([[summarise(s.views[side]) for s in shards] for side in (0, 1)])
    assert "types file" in str(error.value) and "\n" not in str(error.value)
    frame["a"] = [0.5, 1, 2, 3, 4, 5, 6, 7]
    frame.to_csv(tmp_path / "left.csv", index=False)
    shards = [read_shard(spec, i, 2) for i in range(2)]  # 'k' is constant in the first shard only: kept
    schema = merge_schemas([[summarise(s.views[side]) for s in shards] for side in (0, 1)])
    assert [c.name for c in schema[0].attributes] == ["a", "k"] and schema[0].constant == ()
    with pytest.raises(ParameterError, match="same number of files"):
        ShardSpec.of([tmp_path / "left.csv"], [])


@pytest.fixture(scope="module")
def noted_files(tmp_path_factory):
    """Views whose loading notes things (a renamed duplicate, constant and empty columns, NaN read as missing,
    a column read as categorical, values clamped), as CSV and as Parquet of 60-row groups, and a types file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("noted")
    rng = np.random.default_rng(3)
    n = 600
    left = pd.DataFrame({"id": np.arange(n), "a": rng.integers(0, 2, n), "dup": rng.integers(0, 2, n),
                         "same": 1, "blank": "", "code": rng.integers(0, 9, n).astype(str)})
    left.loc[::97, "code"] = "x"  # not every value a number, in every shard: categorical, noted at row 1
    left.insert(3, "dup.x", rng.integers(0, 2, n))
    right = pd.DataFrame({"id": np.arange(n), "v": rng.normal(0, 1, n).round(3).astype(object),
                          "w": rng.uniform(0, 10, n).round(2)})
    right.loc[[130, 451], "v"] = "NaN"  # rows 131 and 452 of the file
    right.loc[[470, 488], "w"] = 12.5  # outside the declared bounds [0, 10]: clamped, one shard's rows only
    left_text = left.to_csv(index=False).replace("dup.x", "dup")  # the header names 'dup' twice
    (folder / "left.csv").write_text(left_text)
    right.to_csv(folder / "right.csv", index=False)
    for side in ("left", "right"):
        frame = pd.read_csv(folder / f"{side}.csv", dtype=str, keep_default_na=False)
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / f"{side}.parquet",
                       row_group_size=60)
    (folder / "types.json").write_text(json.dumps({"columns": {"w": {"type": "numeric", "bounds": [0, 10]}}}))
    return folder


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
@pytest.mark.parametrize("n_shards", [1, 3, 4])
def test_the_shards_notes_merged_are_those_of_loading_the_whole_files(noted_files, suffix, n_shards) -> None:
    """Notes name the user's files and their rows (never a slice's temporary file), once each; constant and
    empty columns are noted once the shards agree on them, as loading all the rows notes them."""
    options = dict(types=noted_files / "types.json", duplicate_names="rename", out_of_bounds="clamp")
    left, right = noted_files / f"left.{suffix}", noted_files / f"right.{suffix}"
    whole, _, schema = _whole_and_shards(left, right, n_shards, **options)
    # renamed (CSV: Parquet keeps pandas' 'dup.1'), categorical, empty, constant, NaN, clamped
    assert len(whole.notes) == (6 if suffix == "csv" else 5), whole.notes
    assert schema_only(schema).notes == whole.notes


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_shards_data_error_names_the_file_and_row_that_loading_the_whole_file_names(noted_files, tmp_path,
                                                                                     suffix) -> None:
    (tmp_path / "types.json").write_text(json.dumps({"columns": {"w": {"type": "numeric", "bounds": [0, 10]}}}))
    left, right = noted_files / f"left.{suffix}", noted_files / f"right.{suffix}"
    with pytest.raises(DataError) as whole:
        load_two_view(left, right, types=tmp_path / "types.json", duplicate_names="rename")
    assert whole.value.row == 471
    spec = ShardSpec.of(left, right, types=tmp_path / "types.json", duplicate_names="rename")
    errors = []
    for shard in range(3):
        try:
            read_shard(spec, shard, 3)
        except DataError as error:
            errors.append(error)
    # rows 471 and 489: in one run of lines, in two row groups of 60 rows
    assert len(errors) == (1 if suffix == "csv" else 2)
    errors.sort(key=lambda error: error.row)
    assert str(errors[0]) == str(whole.value)
    if suffix == "parquet":
        assert errors[1].row == 489 and str(errors[1]).startswith(f"{right}: column 'w', row 489: value 12.5")
    assert (errors[0].file, errors[0].row, errors[0].column) == (whole.value.file, 471, "w")


def test_views_not_in_the_same_order_are_refused_by_the_shards_naming_the_files(noted_files, tmp_path) -> None:
    """In-process the right view is matched to the left by id; the shards read the same rows of both files."""
    frame = pd.read_csv(noted_files / "right.csv", dtype=str, keep_default_na=False)
    frame.iloc[::-1].to_csv(tmp_path / "right.csv", index=False)
    left, right = noted_files / "left.csv", tmp_path / "right.csv"
    assert load_two_view(left, right, duplicate_names="rename").n_rows == 600
    spec = ShardSpec.of(left, right, duplicate_names="rename")
    with pytest.raises(DataError) as error:
        read_shard(spec, 1, 2)
    message = str(error.value)
    assert message.startswith(f"{left}, {right}: the two files do not hold the same entities in the same order "
                              f"(shard 2 of 2 reads rows 301 to 600 of each")
    assert "sorted by their id column" in message and "/" not in message.replace(str(left), "").replace(str(right), "")
    assert error.value.code == "unmatched_id" and "\n" not in message


def test_files_of_different_lengths_without_ids_are_refused_by_the_shards_as_such(tmp_path) -> None:
    """Without an id column, files of 1,000 and 999 rows: in-process the loader's row-count refusal, and
    the shard whose slices differ says the same (not that the entities are in another order)."""
    rng = np.random.default_rng(0)
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    pd.DataFrame({"a": rng.integers(0, 2, 1000), "b": rng.normal(size=1000)}).to_csv(left, index=False)
    pd.DataFrame({"x": rng.integers(0, 2, 999), "y": rng.normal(size=999)}).to_csv(right, index=False)
    with pytest.raises(DataError) as whole:
        load_two_view(left, right)
    assert whole.value.code == "row_count_mismatch"
    with pytest.raises(DataError) as error:
        read_shard(ShardSpec.of(left, right), 0, 2)
    message = str(error.value)
    assert message == (f"{left}, {right}: the two files have different numbers of rows (shard 1 of 2 reads rows 1 "
                       f"to 500 of {left}, rows 1 to 499 of {right}); the views must be row-aligned (or give an id "
                       "column)")
    assert error.value.code == "row_count_mismatch" and "same order" not in message


def _shards_duplicate_error(spec: ShardSpec, n_shards: int) -> DataError | None:
    """What the Ray engine's shards find together (``RayEngine._check_ids``), exchanged here in one process."""
    ids = [read_shard_and_ids(spec, shard, n_shards)[1] for shard in range(n_shards)]
    dealt = [deal_ids(part, n_shards) for part in ids]
    found = [repeated_ids([buckets[j] for buckets in dealt]) for j in range(n_shards)]
    return duplicate_error(found, (spec.left, spec.right))


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
@pytest.mark.parametrize("n_shards", [2, 3, 5])
def test_ids_repeated_across_shards_are_the_error_loading_the_whole_file_gives(noted_files, tmp_path, suffix,
                                                                               n_shards) -> None:
    """Ids twice in the files, each time in another shard's part (more of them than the message shows):
    every shard's part loads, and together the shards name the file, the column, the count and the first ids
    in the order of their second occurrence, as loading the whole file does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # row -> the row whose id it repeats (the ids are the rows' numbers): rows 60-179 and 480-599, in other
    # runs of lines for 2, 3 and 5 shards, and in row groups 1-2 and 8-9 (of 60 rows), 7 apart: other shards too
    repeats = {599: 150, 500: 70, 530: 100, 481: 61, 545: 130, 510: 80}
    for side in ("left", "right"):
        frame = pd.read_csv(noted_files / f"{side}.csv", dtype=str, keep_default_na=False)
        for row, copied in repeats.items():
            frame.loc[row, "id"] = frame.loc[copied, "id"]
        if suffix == "csv":
            frame.to_csv(tmp_path / f"{side}.csv", index=False)
        else:
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / f"{side}.parquet",
                           row_group_size=60)
    left, right = tmp_path / f"left.{suffix}", tmp_path / f"right.{suffix}"
    options = dict(types=noted_files / "types.json", duplicate_names="rename", out_of_bounds="clamp")
    with pytest.raises(DataError) as whole:
        load_two_view(left, right, **options)
    spec = ShardSpec.of(left, right, **options)
    assert all(read_shard(spec, shard, n_shards) is not None for shard in range(n_shards))  # each part loads
    error = _shards_duplicate_error(spec, n_shards)
    assert str(whole.value) == f"{left}: 6 id(s) occur more than once in column 'id': 61, 70, 80, 100, 130, ..."
    assert error is not None and str(error) == str(whole.value)
    assert (error.code, error.file, error.column) == ("duplicate_id", str(left), "id")


def test_ids_repeated_across_part_files_name_the_part_file_and_distinct_ids_pass(noted_files, tmp_path) -> None:
    frames = {side: pd.read_csv(noted_files / f"{side}.csv", dtype=str, keep_default_na=False)
              for side in ("left", "right")}
    parts: dict[str, list] = {"left": [], "right": []}
    for side, frame in frames.items():
        for part, begin in enumerate(range(0, 600, 200)):
            parts[side].append(tmp_path / f"{side}-{part}.csv")
            frame.iloc[begin:begin + 200].to_csv(parts[side][-1], index=False)
    options = dict(types=noted_files / "types.json", duplicate_names="rename", out_of_bounds="clamp")
    assert _shards_duplicate_error(ShardSpec.of(parts["left"], parts["right"], **options), 2) is None
    for side, frame in frames.items():  # the id of row 10 again in rows 450 (part 3) and 250 (part 2)
        frame.loc[[250, 450], "id"] = frame.loc[10, "id"]
        for part, begin in enumerate(range(0, 600, 200)):
            frame.iloc[begin:begin + 200].to_csv(parts[side][part], index=False)
    error = _shards_duplicate_error(ShardSpec.of(parts["left"], parts["right"], **options), 2)
    assert str(error) == f"{parts['left'][1]}: 1 id(s) occur more than once in column 'id': 10"


def test_an_id_twice_in_one_shards_part_is_the_loaders_error_not_views_out_of_order(noted_files, tmp_path) -> None:
    for side in ("left", "right"):
        frame = pd.read_csv(noted_files / f"{side}.csv", dtype=str, keep_default_na=False)
        frame.loc[20, "id"] = frame.loc[10, "id"]
        frame.to_csv(tmp_path / f"{side}.csv", index=False)
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    with pytest.raises(DataError) as whole:
        load_two_view(left, right, duplicate_names="rename")
    with pytest.raises(DataError) as shard:
        read_shard(ShardSpec.of(left, right, duplicate_names="rename"), 0, 2)
    assert str(shard.value) == str(whole.value) == f"{left}: 1 id(s) occur more than once in column 'id': 10"
    assert (shard.value.code, shard.value.file) == ("duplicate_id", str(left))


# -- a CSV's rows are the loader's rows -------------------------------------------------------


#: Files that load in-process with rows the line count got wrong, or that loading refuses (the fuzzing's F7, F8):
#: name -> (left file name, right file name); written by :func:`write_text_cases`.
TEXT_CASES = {
    "plain": ("left.csv", "right.csv"),
    "a blank line inside": ("left_blank.csv", "right.csv"),
    "blank lines at the end": ("left_trailing.csv", "right.csv"),
    "blank lines before the header": ("left_leading.csv", "right.csv"),
    "CR line ends": ("left_cr.csv", "right_cr.csv"),
    "CR line ends in one file": ("left_cr.csv", "right.csv"),
    "CRLF line ends": ("left_crlf.csv", "right_crlf.csv"),
    "no line end at the end": ("left_unended.csv", "right.csv"),
    "quoted line breaks": ("left_notes.csv", "right.csv"),
    "gzip": ("left.csv.gz", "right.csv.gz"),
    "an empty file": ("empty.csv", "right.csv"),
    "a header only": ("left.csv", "right_header.csv"),
    "blank lines only": ("blank.csv", "right.csv"),
    "a truncated gzip": ("left_truncated.csv.gz", "right.csv.gz"),
    "a damaged gzip": ("left_damaged.csv.gz", "right.csv.gz"),
    "not Parquet": ("left_fake.parquet", "right.parquet"),
}
#: The cases of :data:`TEXT_CASES` that loading refuses.
REFUSED = ("an empty file", "a header only", "blank lines only", "a truncated gzip", "a damaged gzip", "not Parquet")


def write_text_cases(folder) -> None:
    """The files of :data:`TEXT_CASES` (40 rows, both views with an id column) and ``types.json`` in ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(4)
    left = pd.DataFrame({"id": np.arange(1, 41), "colour": rng.choice(["red", "green", "blue"], size=40),
                         "flag": rng.integers(0, 2, size=40), "size": np.round(rng.uniform(0, 10, size=40), 1)})
    right = pd.DataFrame({"id": np.arange(1, 41), "b": rng.integers(0, 2, size=40),
                          "v": np.round(rng.uniform(0, 10, size=40), 1), "c": rng.choice(["x", "y"], size=40)})
    text = {"left": left.to_csv(index=False, lineterminator="\n").encode(),
            "right": right.to_csv(index=False, lineterminator="\n").encode()}
    lines = text["left"].splitlines(keepends=True)
    notes = left.assign(note=[["a\nb", "c\r\nd", "e\n\nf", "g\"\"h\ni", "plain"][i % 5] for i in range(40)])
    files = {
        "left.csv": text["left"], "right.csv": text["right"],
        "left_blank.csv": b"".join(lines[:18] + [b"\n"] + lines[18:]),
        "left_trailing.csv": text["left"] + b"\n\n\n",
        "left_leading.csv": b"\n\r\n" + text["left"],
        "left_cr.csv": text["left"].replace(b"\n", b"\r"), "right_cr.csv": text["right"].replace(b"\n", b"\r"),
        "left_crlf.csv": text["left"].replace(b"\n", b"\r\n"), "right_crlf.csv": text["right"].replace(b"\n", b"\r\n"),
        "left_unended.csv": text["left"].rstrip(b"\n"),
        "left_notes.csv": notes.to_csv(index=False, lineterminator="\n").encode(),
        "left.csv.gz": gzip.compress(text["left"]), "right.csv.gz": gzip.compress(text["right"]),
        "empty.csv": b"", "right_header.csv": text["right"].splitlines(keepends=True)[0],
        "blank.csv": b"\n\n\n", "left_truncated.csv.gz": gzip.compress(text["left"])[:200],
        "left_damaged.csv.gz": b"\x1f\x8b\x08\x00not gzip", "left_fake.parquet": text["left"],
    }
    for name, content in files.items():
        (folder / name).write_bytes(content)
    pq.write_table(pa.Table.from_pandas(right, preserve_index=False), folder / "right.parquet", row_group_size=10)
    (folder / "types.json").write_text(json.dumps({"columns": {
        "id": {"type": "id"}, "colour": {"type": "categorical", "categories": ["red", "green", "blue"]},
        "flag": {"type": "boolean"}, "size": {"type": "numeric", "bounds": [0, 10]}, "b": {"type": "boolean"},
        "v": {"type": "numeric", "bounds": [0, 10]}, "c": {"type": "categorical", "categories": ["x", "y"]}}}))


@pytest.fixture(scope="module")
def text_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    write_text_cases(folder)
    return folder


@pytest.mark.parametrize("case", list(TEXT_CASES))
def test_csv_shards_read_the_rows_loading_the_whole_file_reads_or_fail_with_its_error(text_files, case,
                                                                                     monkeypatch) -> None:
    """Blank lines (the loader skips them), CR or CRLF line ends and quoted line breaks: the shards read the rows
    loading the whole file reads; an empty, header-only, blank or damaged file: each shard that fails says what
    loading it says (the line count had read a blank line as a row, CR-only files as no rows, an empty file as
    "no rows" naming no file, and a damaged file killed the shard)."""
    monkeypatch.setattr(sharding, "_CHUNK", 7, raising=False)  # records across reads, a CRLF split between two
    left, right = (text_files / name for name in TEXT_CASES[case])
    options = dict(types=text_files / "types.json")
    try:
        whole = load_two_view(left, right, **options)
    except DataError as error:
        whole = str(error)
    assert isinstance(whole, str) == (case in REFUSED), whole
    for n_shards in (2, 3):
        spec = ShardSpec.of(left, right, **options)
        shards, errors = [], []
        for shard in range(n_shards):
            try:
                shards.append(read_shard(spec, shard, n_shards))
            except DataError as error:
                errors.append(str(error))
        if isinstance(whole, str):
            assert errors and set(errors) == {whole}, (case, n_shards)
            continue
        assert not errors and all(s is not None and s.n_rows >= 13 for s in shards), (case, n_shards, errors)
        schema = merge_schemas([[summarise(s.views[side]) for s in shards] for side in (0, 1)])
        joined = concatenate([adopt_schema(s, schema) for s in shards])
        assert schema_only(schema).notes == whole.notes
        for side in (0, 1):
            assert joined.views[side].names == whole.views[side].names
            for a in whole.views[side]:
                assert joined.views[side][a.name].domain == a.domain
                assert np.array_equal(joined.views[side][a.name].values, a.values, equal_nan=True)


@pytest.mark.parametrize("seed", range(3))
def test_the_records_of_a_text_file_are_the_rows_pyarrow_reads(seed, monkeypatch) -> None:
    """Oracle: random CSV text (blank lines, the three line ends, quoted cells holding line breaks, delimiters
    and doubled quotes, quotes inside unquoted cells) cut into records, read in chunks of a few bytes: the
    records are the rows (and the header) pyarrow reads from the whole text."""
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    ends = [b"\n", b"\r\n", b"\r"]
    parts = [b"q", b"\n", b"\r\n", b'""', b",", b"\r", b" "]

    def cell() -> bytes:
        if rng.random() < 0.5:
            return [b"a", b"bb", b"", b"12", b'5"', b'x"y'][rng.integers(6)]
        inner = b"".join(parts[rng.integers(len(parts))] for _ in range(rng.integers(0, 5)))
        return b'"' + inner + b'"' + (b"t" if rng.random() < 0.2 else b"")

    read = 0
    for _ in range(300):
        monkeypatch.setattr(sharding, "_CHUNK", int(rng.choice([1, 2, 3, 7, 64])))
        lines = [b"h1,h2,h3"]
        for _ in range(rng.integers(0, 7)):
            lines.append(b",".join(cell() for _ in range(3)))
            if rng.random() < 0.2:
                lines.append(b"")
        text = b"".join(line + ends[rng.integers(3)] for line in lines)
        if rng.random() < 0.3:
            text = text.rstrip(b"\r\n")
        options = pacsv.ParseOptions(newlines_in_values=True)
        try:
            table = pacsv.read_csv(io.BytesIO(text), parse_options=options)
        except pa.ArrowInvalid:  # not CSV (a row of other width): the loader refuses it, the shard's too
            continue
        records = [r for block in sharding._records(io.BytesIO(text), b",") for r in block]
        assert len(records) == table.num_rows + 1, text
        if table.num_rows:
            assert pacsv.read_csv(io.BytesIO(b"".join(records)), parse_options=options).equals(table), text
        read += 1
    assert read > 200


def _counted_rows(tmp_path, n: int):
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    left.write_text("a\n" + "".join(f"{i}\n" for i in range(n)))
    right.write_text("b\n" + "".join(f"{i % 3}\n" for i in range(n)))
    return left, right


def test_a_csv_file_changed_between_a_shards_count_and_its_read_is_refused_naming_it(tmp_path, monkeypatch) -> None:
    """A shard counts a CSV file's rows, then reads its run of them: a file appended to in between gave a run of
    another version's rows, silently (rows twice or not at all across the shards)."""
    left, right = _counted_rows(tmp_path, 10)
    original, opened = sharding.open_text_table, []

    def append_on_the_second_opening(path, *args):
        opened.append(path)
        if len(opened) == 2:  # the left file counted: more rows are written before its run is read
            with open(left, "a") as out:
                out.write("".join(f"{i}\n" for i in range(10, 30)))
        return original(path, *args)

    monkeypatch.setattr(sharding, "open_text_table", append_on_the_second_opening)
    with pytest.raises(DataError) as info:
        read_shard(ShardSpec.of(left, right), 1, 2)
    assert opened and info.value.code == "file_changed" and info.value.file == str(left)
    assert str(info.value).startswith(f"{left}: the file changed while") and "\n" not in str(info.value)
    assert info.value.public_message() == str(info.value)


def test_shards_that_read_a_file_in_two_versions_are_refused_and_one_version_passes(tmp_path) -> None:
    left, right = _counted_rows(tmp_path, 10)
    spec = ShardSpec.of(left, right)
    parts = [sharding.read_shard_part(spec, shard, 2) for shard in (0, 1)]
    sharding.check_same_files([stamps for _, _, stamps, _, _ in parts])  # one version: the rows of the file, once
    assert sum(data.n_rows for data, _, _, _, _ in parts) == 10
    with open(right, "a") as out:  # rewritten between the two shards' reads: rows 6 to 10 read by neither
        out.write("".join(f"{i % 3}\n" for i in range(10)))
    with open(left, "a") as out:
        out.write("".join(f"{i}\n" for i in range(10, 20)))
    late = sharding.read_shard_part(spec, 1, 2)
    with pytest.raises(DataError, match="changed while") as info:
        sharding.check_same_files([parts[0][2], late[2]])
    assert info.value.code == "file_changed" and info.value.file == str(left)
    sharding.check_same_files([parts[0][2], late[2]], places=["node 1", "node 2"])  # two machines' copies


def test_an_undeclared_whole_number_column_is_cut_at_whole_numbers_as_loading_all_rows_does(tmp_path) -> None:
    """The merge kept only the bounds of an inferred numeric domain: a column of counts (whole numbers over a short
    range, ``transform="integers"`` in-process) lost its transform on Ray, whose grid and output then differed."""
    n = 30
    left = pd.DataFrame({
        "visits": [i % 7 for i in range(n)],                                     # whole, short range: integers
        "late": [np.nan] * 12 + [float(i % 5) for i in range(n - 12)],           # empty in the first shards
        "once": [2.0] * 10 + [i % 4 for i in range(n - 10)],                     # constant in a shard
        "half": [i % 7 for i in range(n - 1)] + [2.5],                           # one value not whole
        "wide": [i % 7 for i in range(n - 1)] + [90],                            # range over 32
    })
    right = pd.DataFrame({"r": np.linspace(0, 1, n)})
    left.to_csv(tmp_path / "left.csv", index=False)
    right.to_csv(tmp_path / "right.csv", index=False)
    for n_shards in (2, 3, 5):
        whole, shards, schema = _whole_and_shards(tmp_path / "left.csv", tmp_path / "right.csv", n_shards)
        merged = {c.name: c.domain for c in schema[0].attributes}
        assert {a.name: a.domain.transform for a in whole.left} == {
            "visits": "integers", "late": "integers", "once": "integers", "half": None, "wide": None}
        assert merged == {a.name: a.domain for a in whole.left}, n_shards


FIRST_COLUMN_CASES = {
    # 1, 2 repeats over all rows but each 2-row part of 3 shards holds distinct values (Ray refused these files)
    "ids-only-within-parts": ([1, 2] * 3, [1, 2] * 3),
    # the left column looks like an id within each part only (Ray noted it), the right one over all rows
    "one-id-like-column": ([1, 2] * 3, [10, 20, 30, 40, 50, 60]),
    # one id column under two names in another order: refused in-process and sharded, in the same words
    "one-id-two-names": ([5, 6, 7, 8, 9, 10], [10, 9, 8, 7, 6, 5]),
    # distinct in each view but not the same values: both noted
    "two-id-like-columns": ([5, 6, 7, 8, 9, 10], [6, 5, 8, 7, 10, 11]),
    # 0, 1 is Boolean in the first part only: an id-like column over all rows
    "boolean-in-one-part": ([0, 1, 2, 3, 4, 5], ["x"] * 6),
    # Boolean words of another vocabulary in each 2-row part (yes/no, true/false): text over all rows, so one id
    # column under two names (Ray took each part's Boolean for all the rows' and mined them)
    "boolean-words-per-part": (["yes", "no", "true", "false", "Yes", "No"], ["yes", "no", "true", "false", "Yes", "No"]),
    # the same in the left view only: noted as looking like an id
    "boolean-words-in-one-view": (["no", "yes", "false", "true", "No", "Yes"], ["x"] * 6),
}


def _first_columns_sharded(spec: ShardSpec, n_shards: int) -> tuple[list[str], list[str]]:
    """What the Ray driver decides on the first columns, from the shards' parts (no Ray)."""
    from dprm.engine.shard_ids import bucket_facts, deal_keys
    from dprm.engine.sharding import first_column_notes, first_keys, first_summary, read_shard_part

    firsts = [read_shard_part(spec, shard, n_shards)[3] for shard in range(n_shards)]
    dealt = [deal_keys(first_keys(first), n_shards) for first in firsts]
    facts = [bucket_facts([buckets[j] for buckets in dealt]) for j in range(n_shards)]
    return first_column_notes([first_summary(first) for first in firsts], facts)


@pytest.mark.parametrize("case", FIRST_COLUMN_CASES, ids=list(FIRST_COLUMN_CASES))
def test_the_first_columns_are_refused_or_noted_on_all_the_rows_as_loading_in_process_does(tmp_path, case) -> None:
    """Rows matched by position: the check that the first columns are one id column under two names, and the
    note that one looks like an id, were made by each shard on its part (a part's values can be distinct when
    all the rows' are not: refused or noted where in-process loading is not); now on all the rows."""
    left, right = FIRST_COLUMN_CASES[case]
    pd.DataFrame({"a": left, "x": [0, 1, 1, 0, 1, 1]}).to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"b": right, "y": [1, 1, 0, 0, 1, 0]}).to_csv(tmp_path / "right.csv", index=False)
    spec = ShardSpec.of(tmp_path / "left.csv", tmp_path / "right.csv")
    try:
        data = load_two_view(tmp_path / "left.csv", tmp_path / "right.csv")
    except DataError as error:
        assert error.code == "id_names_differ"
        for n_shards in (1, 3):
            with pytest.raises(DataError) as raised:
                _first_columns_sharded(spec, n_shards)
            assert str(raised.value) == str(error)
        return
    expected = tuple([n for n in view.notes if "looks like an id" in n] for view in data.views)
    for n_shards in (1, 2, 3):
        assert _first_columns_sharded(spec, n_shards) == expected, n_shards


def test_categories_of_numbers_and_words_are_merged_in_the_loaders_order(tmp_path) -> None:
    """Loading orders a categorical column's numbers numerically, before its words (1, 2, 9, 10, a, b); the merge
    sorted the shards' categories as text unless every one was a number (1, 10, 2, 9, a, b): other category
    codes, hence other literals, than in-process."""
    pd.DataFrame({"c": ["10", "9", "a", "2", "1", "b"], "x": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]}).to_csv(
        tmp_path / "left.csv", index=False)
    pd.DataFrame({"y": [1, 0, 1, 0, 1, 0]}).to_csv(tmp_path / "right.csv", index=False)
    whole, shards, schema = _whole_and_shards(tmp_path / "left.csv", tmp_path / "right.csv", 2)
    assert whole.left["c"].domain.categories == ("1", "2", "9", "10", "a", "b")
    assert schema[0].attributes[0].domain == whole.left["c"].domain
    assert np.array_equal(concatenate(shards).left["c"].values, whole.left["c"].values)


@pytest.mark.parametrize("words", [["yes", "no", "true", "false", "yes", "no"], ["yes"] * 3 + ["true"] * 3],
                         ids=["two-vocabularies", "constant-in-each-shard"])
def test_boolean_words_of_different_vocabularies_in_different_shards_are_refused_not_mined_as_boolean(
        tmp_path, words) -> None:
    """yes, no in one shard and true, false in another: loading all the rows reads text (a categorical column of
    four categories, or two when each shard holds one word); each shard read Boolean, and the merge kept a Boolean
    column (or left it out as constant 1): another dataset than in-process, silently. Now refused in one line, as
    a column read with different kinds is; words of one vocabulary (yes, Yes, no) still merge as Boolean."""
    pd.DataFrame({"c": words, "x": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]}).to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"y": [1, 0, 1, 0, 1, 0]}).to_csv(tmp_path / "right.csv", index=False)
    assert load_two_view(tmp_path / "left.csv", tmp_path / "right.csv").left["c"].kind is AttributeKind.CATEGORICAL
    with pytest.raises(ParameterError, match="column 'c' reads as Boolean words of different vocabularies") as error:
        _whole_and_shards(tmp_path / "left.csv", tmp_path / "right.csv", 2 if words[0] == words[2] else 3)
    assert "types file" in str(error.value) and "\n" not in str(error.value)
    pd.DataFrame({"c": ["yes", "no", "Yes", "No", "YES", "no"], "x": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]}).to_csv(
        tmp_path / "left.csv", index=False)
    whole, shards, schema = _whole_and_shards(tmp_path / "left.csv", tmp_path / "right.csv", 3)
    assert schema[0].attributes[0].kind is whole.left["c"].kind is AttributeKind.BOOLEAN
    assert np.array_equal(concatenate(shards).left["c"].values, whole.left["c"].values)


def test_a_column_of_numbers_with_only_zeros_and_ones_in_some_shards_merges_as_the_numbers_loading_all_rows_reads(
        tmp_path) -> None:
    """A count column whose first rows are 0 and 1 (a shard reads it Boolean), or a column 1 to 7 on 8 shards (one
    row each: the shard holding 1 reads it Boolean, and one shard is empty): loading all the rows reads numbers
    (whole, cut at every whole number); the merge refused it ("reads as boolean and numeric in different shards")."""
    visits = [0, 1, 1, 0, 1, 0, 2, 5, 3, 0, 1, 4]
    pd.DataFrame({"visits": visits, "x": np.arange(12) + 0.5}).to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"y": [1, 0] * 6}).to_csv(tmp_path / "right.csv", index=False)
    whole, shards, schema = _whole_and_shards(tmp_path / "left.csv", tmp_path / "right.csv", 2)
    assert whole.left["visits"].kind is AttributeKind.NUMERIC and whole.left["visits"].domain.transform == "integers"
    assert schema[0].attributes[0].domain == whole.left["visits"].domain
    assert np.array_equal(concatenate(shards).left["visits"].values, whole.left["visits"].values)
    pd.DataFrame({"n": [1, 2, 3, 4, 5, 6, 7], "x": np.arange(7) + 0.5}).to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"y": [1, 0, 1, 0, 1, 0, 1]}).to_csv(tmp_path / "right.csv", index=False)
    whole, shards, schema = _whole_and_shards(tmp_path / "left.csv", tmp_path / "right.csv", 8)
    assert [c.domain for c in schema[0].attributes] == [a.domain for a in whole.left]
    assert np.array_equal(concatenate(shards).left["n"].values, whole.left["n"].values)
