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
from dprm.data.attributes import Attribute, TwoViewData, View
from dprm.datasets import make_planted
from dprm.engine import InProcessEngine, Support
from dprm.engine.sharding import (ShardSpec, adopt_schema, concatenate, merge_schemas, read_shard, schema_only,
                                  summarise)
from dprm.engine.supports import AND, OR
from dprm.engine.table_counter import TableCounter
from dprm.errors import ParameterError
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
    frame = pd.DataFrame({"a": [0, 1, 0, 1, 0, 3, 4, 5], "k": [1, 1, 1, 1, 0, 1, 0, 1]})
    frame.to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"b": [1, 0, 1, 0, 1, 1, 0, 0]}).to_csv(tmp_path / "right.csv", index=False)
    spec = ShardSpec.of(tmp_path / "left.csv", tmp_path / "right.csv")
    shards = [read_shard(spec, i, 2) for i in range(2)]
    with pytest.raises(ParameterError, match="column 'a' reads as boolean and numeric") as error:
        merge_schemas([[summarise(s.views[side]) for s in shards] for side in (0, 1)])
    assert "types file" in str(error.value) and "\n" not in str(error.value)
    frame["a"] = [0.5, 1, 2, 3, 4, 5, 6, 7]
    frame.to_csv(tmp_path / "left.csv", index=False)
    shards = [read_shard(spec, i, 2) for i in range(2)]  # 'k' is constant in the first shard only: kept
    schema = merge_schemas([[summarise(s.views[side]) for s in shards] for side in (0, 1)])
    assert [c.name for c in schema[0].attributes] == ["a", "k"] and schema[0].constant == ()
    with pytest.raises(ParameterError, match="same number of files"):
        ShardSpec.of([tmp_path / "left.csv"], [])
