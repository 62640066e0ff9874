"""A table's cells as written, read from a CSV or TSV file in chunks (the itemset miner's input).

The itemset miner reads values as text (``"1"`` and ``"1.0"`` are two categories),
so it reads with pandas (every column as ``str``, only the empty cell missing) rather
than through the typed reader of :mod:`dprm.data.reading`. It shares that reader's
file rules (:func:`dprm.data.reading.open_text_table`: file types, ``.gz`` / ``.bz2`` /
``.zst`` / ``.lz4`` compression, the delimiter read off the header, one-line errors)
and its header rule (:func:`dprm.data.reading.check_column_names`: the names as
written, none empty or repeated).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "t.csv"
...     _ = path.write_text("a;b" + chr(10) + "x;1.0" + chr(10) + ";2" + chr(10))
...     print(read_text_header(path, "t.csv"), read_text_frame(path, "t.csv").to_dict("list"))
['a', 'b'] {'a': ['x', nan], 'b': ['1.0', '2']}
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa

from dprm.data.reading import check_column_names, first_line, open_text_table
from dprm.errors import DataError

__all__ = ["read_text_chunks", "read_text_frame", "read_text_header"]


def read_text_header(path: Path, name: str) -> list[str]:
    """The column names as written (checked: none empty, none repeated once stripped)."""
    stream, delimiter = open_text_table(path, name)
    with stream, _reading(name):
        # header=None: pandas would rename a repeated name "a.1" and an empty one "Unnamed: 0"
        header = pd.read_csv(stream, sep=delimiter, header=None, nrows=1, dtype=str, keep_default_na=False)
    return check_column_names(header.iloc[0].tolist(), name)


def read_text_chunks(path: Path, name: str, rows: int) -> Iterator[pd.DataFrame]:
    """The rows in chunks of ``rows``, every cell a ``str`` or missing (the empty cell)."""
    columns = read_text_header(path, name)
    stream, delimiter = open_text_table(path, name)
    with stream, _reading(name):
        with pd.read_csv(stream, sep=delimiter, dtype=str, keep_default_na=False, na_values=[""],
                         chunksize=rows) as reader:
            for chunk in reader:
                if chunk.shape[1] != len(columns):
                    raise DataError(f"{name}: rows have {chunk.shape[1]} fields, the header {len(columns)}",
                                    code="bad_csv", file=name)
                chunk.columns = columns
                yield chunk


def read_text_frame(path: Path, name: str) -> pd.DataFrame:
    """The whole table (see :func:`read_text_chunks`); a file without data rows is a :class:`DataError`."""
    chunks = list(read_text_chunks(path, name, 1 << 16))
    if not chunks or sum(len(c) for c in chunks) == 0:
        raise DataError(f"{name}: the file has no data rows", code="no_rows", file=name, data_dependent=False)
    return pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]


class _reading:
    """Turn the errors of reading ``name`` into one-line :class:`DataError`s."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, error: BaseException | None, _traceback: object) -> bool:
        name = self.name
        if error is None or isinstance(error, DataError):
            return False
        if isinstance(error, pd.errors.EmptyDataError):
            raise DataError(f"{name}: the file has no header line", code="empty_file", file=name,
                            data_dependent=False) from None
        if isinstance(error, pd.errors.ParserError | UnicodeDecodeError):
            raise DataError(f"{name}: cannot be parsed as CSV ({first_line(error)})", code="bad_csv",
                            file=name) from None
        if isinstance(error, pa.ArrowException | OSError | EOFError):  # a damaged compressed file
            raise DataError(f"{name}: cannot be read ({first_line(error)})", code="unreadable_file",
                            file=name) from None
        return False

