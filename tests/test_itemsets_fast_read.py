"""The pandas-free reading of a small file of categories gives the same domains and codes as the chunked one.

:func:`dprm.itemsets.sources.table_codes` is the fast path of
:meth:`DensityEstimator.fit <dprm.itemsets.estimator.DensityEstimator.fit>` on a file;
anything it does not handle returns None and goes through :func:`scan_csv` /
:func:`csv_codes`, which word the errors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.itemsets.sources import csv_codes, scan_csv, surely_text, table_codes
from dprm.itemsets.text_table import read_text_header


def _slow(path: Path, domains=None):
    scan = scan_csv(path, path.name, 3, domains)
    return scan.variables, np.vstack(list(csv_codes(path, path.name, 3, scan.variables)))


@pytest.mark.parametrize("text, domains", [
    ("a,b\nx,u\ny,u\nx,v\nz,w\n", None),
    (" a ;b\n\"q,1\";u\ny;\"v\"\"w\"\n", None),                 # names stripped, quotes, the delimiter sniffed
    ("a,b\nx,1\ny,2\nx,3\n", None),                            # b: numbers and a letter? no: b is numeric -> slow path
    ("a,b\nx,1\ny,b2\n", None),                                # b holds a value that is surely text: categorical
    ("a,b\nx,1\ny,2\n", {"b": ["1", "2", "3"]}),                # b declared
    ("a,b\nx,?\ny,n\nx,y\n", {"a": ["y", "x"]}),                # declared categories in their own order
])
def test_the_fast_reading_gives_the_chunked_reading_s_domains_and_codes(tmp_path, text, domains) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    fast = table_codes(path, path.name, 100, domains)
    try:
        slow = _slow(path, domains)
    except Exception:  # noqa: BLE001 - a file the slow path refuses is never read by the fast one
        assert fast is None
        return
    if fast is None:  # a numeric column: left to the slow path, which decides with pandas
        assert text.startswith("a,b\nx,1\ny,2\nx,3")
        return
    assert {n: (d.categories, d.edges) for n, d in fast[0].items()} == \
        {n: (d.categories, d.edges) for n, d in slow[0].items()}
    assert fast[1].tolist() == slow[1].tolist()


@pytest.mark.parametrize("domains", [None, {"b": ["w", "v", "u", "t"]}])
def test_a_file_read_in_many_chunks_is_encoded_across_their_dictionaries(tmp_path, monkeypatch, domains) -> None:
    """Each chunk is dictionary-encoded as it is read, with its own dictionary (a value first seen in a later
    chunk, a chunk lacking a value): the codes are the chunked reading's."""
    from dprm.itemsets import text_table

    monkeypatch.setattr(text_table, "_BLOCK_SIZE", 64)
    rng = np.random.default_rng(0)
    rows = [f"{'xyz'[i % 3] if i < 40 else 'q'},{'uvw'[rng.integers(0, 3)] if i % 17 else 't'}" for i in range(90)]
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    from dprm.itemsets.text_table import read_text_arrow

    assert len(read_text_arrow(path, path.name, 1000, dictionary=True)[1][0].chunks) > 5
    fast = table_codes(path, path.name, 1000, domains)
    slow = _slow(path, domains)
    assert fast is not None
    assert {n: d.categories for n, d in fast[0].items()} == {n: d.categories for n, d in slow[0].items()}
    assert fast[1].tolist() == slow[1].tolist()


def test_a_column_read_as_plain_strings_is_encoded_the_same(tmp_path, monkeypatch) -> None:
    """A column pyarrow returns as plain strings rather than dictionary-encoded (once seen in CI on
    mushroom.csv) gives the same domains and codes as the chunked reading: no AttributeError."""
    import pyarrow as pa

    from dprm.itemsets import sources, text_table

    monkeypatch.setattr(text_table, "_BLOCK_SIZE", 64)
    rows = [f"{'xyz'[i % 3]},{'uvw'[i % 5 % 3]}" for i in range(60)]
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    read = text_table.read_text_arrow

    def mixed(*args, **kwargs):
        columns, cells = read(*args, **kwargs)
        assert len(cells[1].chunks) > 3
        return columns, [cells[0], cells[1].cast(pa.string())]  # column b plain strings, a encoded

    monkeypatch.setattr(sources, "read_text_arrow", mixed)
    fast = table_codes(path, path.name, 1000)
    slow = _slow(path, None)
    assert fast is not None
    assert {n: d.categories for n, d in fast[0].items()} == {n: d.categories for n, d in slow[0].items()}
    assert fast[1].tolist() == slow[1].tolist()


@pytest.mark.parametrize("text, domains, max_rows", [
    ("a,b\nx,\ny,u\n", None, 100),            # an empty cell: the slow path words "missing value"
    ("a,b\nx,u,9\ny,u\n", None, 100),         # a row with three fields
    ("a,b\nx,u\ny,v\n", {"a": ["x"]}, 100),   # y is not a declared category
    ("a,b\nx,u\ny,v\n", {"c": ["x"]}, 100),   # a declared column the file lacks
    ("a,b\n1,u\n2,v\n", None, 100),           # integer codes (--categorical-integers decides)
    ("a,b\nx,u\ny,v\nz,w\n", None, 2),        # more rows than max_rows: a stream
    ("a,b\n", None, 100),                     # no rows
    ("a,a\nx,u\n", None, 100),                # a repeated name
])
def test_what_the_fast_reading_does_not_handle_is_left_to_the_chunked_reading(tmp_path, text, domains,
                                                                               max_rows) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    assert table_codes(path, path.name, max_rows, domains) is None


def test_surely_text_never_calls_a_number_text() -> None:
    import pandas as pd

    values = ["x", "a1", "1d5", "0x10", "1_0", "-", ".", "1e5", ".5", " 7 ", "+inf", "NaN", "Infinity", "1,5", "½",
              "true", "1e", "e5", "١٢"]
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    for value, number in zip(values, numbers):
        if surely_text(value):
            assert pd.isna(number) and value.strip().lower().lstrip("+-") != "nan", value
    assert surely_text("x") and not surely_text("1e5") and not surely_text("nan")


@pytest.mark.parametrize("text", ["a,b\nx,y\n", " a , b \n1,2\n", "\ufeffa,\"b,c\"\n1,2\n", "\n\na;b\n1;2\n",
                                  "a\n1\n", "a,b\r\n1,2\r\n", "a;b\n1;2\n", "x\"y,z\n1,2\n"])
def test_the_header_is_the_one_pandas_reads(tmp_path, text) -> None:
    """pyarrow's names, checked, are what pandas' reading of the first line gave (the reading before pyarrow's)."""
    import pandas as pd

    from dprm.data.reading import check_column_names, open_text_table

    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    stream, delimiter = open_text_table(path, "t.csv")
    with stream:
        header = pd.read_csv(stream, sep=delimiter, header=None, nrows=1, dtype=str, keep_default_na=False)
    assert read_text_header(path, "t.csv") == check_column_names(header.iloc[0].tolist(), "t.csv")


def test_a_header_over_64_kib_is_read_by_both_readings(tmp_path) -> None:
    """12,000 columns (the fuzzer's file): pyarrow's "Empty CSV file or block: cannot infer number of
    columns", the header being read in blocks of 64 KiB; now read again in larger blocks."""
    names = [f"column_{j:05d}" for j in range(6000)]  # 78 kB
    path = tmp_path / "wide.csv"
    path.write_text(",".join(names) + "\n" + ",".join("xy"[j % 2] for j in range(6000)) + "\n"
                    + ",".join("yx"[j % 3 % 2] for j in range(6000)) + "\n")
    assert read_text_header(path, path.name) == names
    fast = table_codes(path, path.name, 100)
    assert fast is not None and list(fast[0]) == names
    slow = _slow(path)
    assert fast[1].tolist() == slow[1].tolist()


@pytest.mark.parametrize("where", [0, 25, 59])
def test_a_row_longer_than_a_block_is_read_in_larger_blocks_without_losing_or_repeating_a_row(
        tmp_path, monkeypatch, where) -> None:
    """pyarrow's "straddling object straddles two block boundaries": the file is read again with larger
    blocks, skipping the rows already given (here blocks of 64 bytes, a row of 2,000 at row ``where``)."""
    from dprm.itemsets import text_table
    from dprm.itemsets.text_table import read_text_arrow, read_text_chunks

    monkeypatch.setattr(text_table, "_BLOCK_SIZE", 64)
    rows = [("q" * 2000 if i == where else "xyz"[i % 3]) + f",{'uv'[i % 2]}" for i in range(60)]
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    frame = pd.concat(list(read_text_chunks(path, path.name, 7)), ignore_index=True)
    assert [f"{a},{b}" for a, b in zip(frame["a"], frame["b"])] == rows
    columns, cells = read_text_arrow(path, path.name, 1000)
    assert [f"{a},{b}" for a, b in zip(cells[0].to_pylist(), cells[1].to_pylist())] == rows
    assert table_codes(path, path.name, 1000)[1].tolist() == _slow(path)[1].tolist()
