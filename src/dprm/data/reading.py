"""Reading one view's table from a CSV or Parquet file, or a pandas DataFrame.

The result is a :class:`pyarrow.Table` with missing values as nulls, together with
the name of its source for messages. Nothing here knows about attribute kinds; it
only gets the cells in and checks the file's form (exists, is not empty, has rows,
has unique non-empty column names, parses, is UTF-8). Column names are stripped of
surrounding spaces.

Missing values
    In CSV files these cells are missing: the empty cell, ``?``, and ``NA``,
    ``N/A``, ``NaN``, ``null``, ``None`` in any letter case (``na``, ``nan``,
    ``NULL``, ...). In a DataFrame or Parquet file, nulls (``None``, ``NaN``,
    ``pd.NA``) are missing, and so are text cells holding one of the markers above.
"""

from __future__ import annotations

import codecs
import itertools
import re
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from dprm.errors import DataError, ParameterError

__all__ = ["MISSING_MARKERS", "RawTable", "read_table", "Source"]

Source = str | os.PathLike[str] | pd.DataFrame


def _case_variants(word: str) -> list[str]:
    options = [(c.lower(), c.upper()) if c.isalpha() else (c,) for c in word]
    return sorted({"".join(p) for p in itertools.product(*options)})


#: The cell texts read as a missing value (besides these, nulls in typed sources).
MISSING_MARKERS: tuple[str, ...] = ("", "?") + tuple(
    v for w in ("NA", "N/A", "NaN", "null", "None") for v in _case_variants(w)
)

_CSV_SUFFIXES = (".csv", ".tsv", ".txt")
_COMPRESSIONS = ("", ".gz", ".bz2", ".zst", ".lz4")
_PARQUET_SUFFIXES = (".parquet", ".pq")
#: CSV block size: larger than pyarrow's 1 MiB default, which wide files (hundreds
#: of columns) read markedly faster with.
_BLOCK_SIZE = 1 << 22
#: How many offending values a message lists.
SHOW = 5


@dataclass
class RawTable:
    """A view's cells as read, before typing.

    ``table`` has missing values as nulls and its rows in file order; ``source``
    names the file (as the user gave it) or ``"left DataFrame"``.
    """

    table: pa.Table
    source: str
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def column_names(self) -> list[str]:
        return list(self.table.column_names)

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)


def read_table(source: Source, side: str = "left", duplicate_names: str = "error") -> RawTable:
    """Read a CSV/Parquet file or take a DataFrame, and check its form.

    Parameters
    ----------
    source : str, PathLike or pandas.DataFrame
        The file (format chosen by extension: ``.csv``, ``.tsv``, ``.txt``, each
        optionally ``.gz``/``.bz2``/``.zst``/``.lz4`` compressed; ``.parquet``,
        ``.pq``) or the DataFrame.
    side : str
        ``"left"`` or ``"right"``: names a DataFrame source in messages.
    duplicate_names : {"error", "rename"}
        What to do when a column name occurs more than once: raise (the default),
        or keep the first and rename the later ones ``"name (2)"``, ``"name (3)"``...

    Returns
    -------
    RawTable

    Raises
    ------
    DataError
        When the file is missing, empty, has no data rows, cannot be parsed, is
        not UTF-8, or has a duplicate or empty column name.

    Examples
    --------
    >>> import pandas as pd
    >>> raw = read_table(pd.DataFrame({"a": [1, None], "b": ["x", "?"]}))
    >>> raw.source, raw.table.column("b").to_pylist()
    ('left DataFrame', ['x', None])
    """
    if isinstance(source, pd.DataFrame):
        raw = _from_dataframe(source, f"{side} DataFrame")
    elif isinstance(source, (str, os.PathLike)):
        raw = _from_path(Path(source), str(source))
    else:
        raise DataError(
            f"{side} view: expected a file path or a pandas DataFrame, got {type(source).__name__}"
        )
    if duplicate_names not in ("error", "rename"):
        raise ParameterError(f"duplicate_names must be 'error' or 'rename', not {duplicate_names!r}")
    _check_names(raw, rename=duplicate_names == "rename")
    if raw.num_rows == 0:
        raise DataError(f"{raw.source}: has a header but no data rows")
    raw.table = _normalise(raw.table, raw.source)
    return raw


# --------------------------------------------------------------------------- files


def _file_format(path: Path, source: str) -> str:
    name = path.name.lower()
    for comp in _COMPRESSIONS:
        for suffix in _CSV_SUFFIXES:
            if name.endswith(suffix + comp):
                return "tsv" if suffix == ".tsv" else "csv"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    raise DataError(
        f"{source}: unknown file type {''.join(path.suffixes) or '(no extension)'!r}: "
        f"use .csv (or .tsv, optionally .gz-compressed) or .parquet"
    )


def _from_path(path: Path, source: str) -> RawTable:
    fmt = _file_format(path, source)
    if not path.exists():
        raise DataError(f"{source}: no such file")
    if path.is_dir():
        raise DataError(f"{source}: is a directory, not a data file")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DataError(f"{source}: cannot be read: {exc.strerror or exc}") from None
    if size == 0:
        raise DataError(f"{source}: is empty (0 bytes)")
    if fmt == "parquet":
        return RawTable(_read_parquet(path, source), source)
    return RawTable(_read_csv(path, source, "\t" if fmt == "tsv" else None), source)


def _read_parquet(path: Path, source: str) -> pa.Table:
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{source}: cannot be read as Parquet: {_first_line(exc)}") from None


def _convert_options() -> pacsv.ConvertOptions:
    return pacsv.ConvertOptions(
        null_values=list(MISSING_MARKERS),
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )


def _read_csv(path: Path, source: str, delimiter: str | None) -> pa.Table:
    if delimiter is None:
        delimiter = _sniff_delimiter(path, source)
    parse = pacsv.ParseOptions(delimiter=delimiter)
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=_BLOCK_SIZE),
            parse_options=parse,
            convert_options=_convert_options(),
        )
        table.column_names  # decodes the header: fails here when it is not UTF-8
        return table
    except UnicodeDecodeError:
        raise DataError(_utf8_problem(path, source) or f"{source}: is not UTF-8 text") from None
    except pa.ArrowInvalid as exc:
        message = str(exc)
        if "Empty CSV file" in message:
            raise DataError(f"{source}: is empty (no header)") from None
        if "CSV parse error" in message:
            problem = _utf8_problem(path, source) or _parse_error(path, source, delimiter, message)
            raise DataError(problem) from None
        raise DataError(f"{source}: cannot be read as CSV: {_first_line(exc)}") from None
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{source}: cannot be read as CSV: {_first_line(exc)}") from None


def _sniff_delimiter(path: Path, source: str) -> str:
    """``,`` unless the header line has no comma but tabs or semicolons."""
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(1 << 16)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{source}: cannot be read: {_first_line(exc)}") from None
    line = head.split(b"\n", 1)[0]
    if b"," in line:
        return ","
    if b"\t" in line:
        return "\t"
    if b";" in line:
        return ";"
    return ","


def _parse_error(path: Path, source: str, delimiter: str, message: str) -> str:
    """Re-read on one thread to learn which row broke the parse."""
    bad: list[Any] = []

    def handler(row: Any) -> str:
        bad.append(row)
        return "error"

    parse = pacsv.ParseOptions(delimiter=delimiter, invalid_row_handler=handler)
    try:
        pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(use_threads=False, block_size=_BLOCK_SIZE),
            parse_options=parse,
            convert_options=_convert_options(),
        )
    except (pa.ArrowException, OSError):
        pass
    if bad and bad[0].number is not None:
        row = bad[0]
        # pyarrow numbers records from 1 counting the header (blank lines skipped)
        return (
            f"{source}: row {row.number - 1} has {row.actual_columns} fields but the "
            f"header has {row.expected_columns}"
        )
    found = re.search(r"Expected \d+ columns, got \d+", message)
    detail = found.group(0) if found else " ".join(message.split())[:120]
    return f"{source}: cannot be parsed as CSV: {detail}"


def _utf8_problem(path: Path, source: str) -> str | None:
    """A message naming the first line that is not UTF-8, or None when all of it is."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            while True:
                chunk = stream.read(1 << 20)
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as exc:
                    line += chunk.count(b"\n", 0, exc.start)
                    where = "the header (line 1)" if line == 1 else f"line {line} of the file"
                    return f"{source}: is not UTF-8 text: bad byte in {where}; save it as UTF-8"
                if not chunk:
                    return None
                line += chunk.count(b"\n")
    except (pa.ArrowException, OSError):
        return None


# ---------------------------------------------------------------------- DataFrames


def _from_dataframe(df: pd.DataFrame, source: str) -> RawTable:
    names = [str(c) for c in df.columns]
    arrays = []
    for i, name in enumerate(names):
        series = df.iloc[:, i]
        try:
            arrays.append(pa.array(series, from_pandas=True))
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise DataError(
                f"{source}: column {name!r} mixes kinds of values ({_first_line(exc)}); "
                f"give it one type"
            ) from None
    return RawTable(pa.Table.from_arrays(arrays, names=names), source)


# -------------------------------------------------------------------- common checks


def _check_names(raw: RawTable, rename: bool) -> None:
    names = raw.column_names
    stripped = [n.strip() for n in names]
    if stripped != names:
        raw.table = raw.table.rename_columns(stripped)
        names = stripped
    if not names:
        raise DataError(f"{raw.source}: has no columns")
    for i, name in enumerate(names):
        if name == "":
            raise DataError(f"{raw.source}: column {i + 1} has no name")
    if len(set(names)) == len(names):
        return
    if not rename:
        first: dict[str, int] = {}
        for i, name in enumerate(names):
            if name in first:
                raise DataError(
                    f"{raw.source}: column name {name!r} occurs more than once (columns "
                    f"{first[name] + 1} and {i + 1}); rename one, or rename duplicates automatically "
                    f"(--duplicate-columns rename; duplicate_names='rename' in Python)"
                )
            first[name] = i
    # As pandas.read_csv does: later occurrences become "name.1", "name.2", ..., so a
    # program that reads the file with pandas finds the same names in the queries.
    taken = set(names)
    seen: dict[str, int] = {}
    new: list[str] = []
    for name in names:
        if name not in seen:
            seen[name] = 0
            new.append(name)
            continue
        k = seen[name]
        while True:
            k += 1
            candidate = f"{name}.{k}"
            if candidate not in taken:
                break
        seen[name] = k
        taken.add(candidate)
        new.append(candidate)
        raw.renamed[candidate] = name
    raw.table = raw.table.rename_columns(new)


def _normalise(table: pa.Table, source: str) -> pa.Table:
    """Nulls for NaN and missing markers; plain columns of supported types; UTF-8 text."""
    markers = pa.array(MISSING_MARKERS, type=pa.string())
    columns = []
    for name, col in zip(table.column_names, table.columns):
        typ = col.type
        if pa.types.is_dictionary(typ):
            col = col.cast(typ.value_type)
            typ = col.type
        if pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
            col = col.cast(pa.string())
            typ = col.type
        if pa.types.is_floating(typ):
            if typ != pa.float64():
                col = col.cast(pa.float64())
            nan = pc.is_nan(col)
            if pc.any(nan).as_py():
                col = pc.if_else(nan, pa.scalar(None, pa.float64()), col)
        elif pa.types.is_string(typ):
            marked = pc.is_in(col, value_set=markers)
            if pc.any(marked).as_py():
                col = pc.if_else(marked, pa.scalar(None, pa.string()), col)
        elif pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
            raise DataError(_binary_message(col, name, source))
        elif pa.types.is_temporal(typ):
            col = col.cast(pa.string())  # dates and times are categories, in ISO text
        elif not (
            pa.types.is_null(typ)
            or pa.types.is_boolean(typ)
            or pa.types.is_integer(typ)
            or pa.types.is_decimal(typ)
        ):
            raise DataError(
                f"{source}: column {name!r} has values of type {typ}; use numbers, text or Booleans"
            )
        columns.append(col)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _binary_message(col: pa.ChunkedArray, name: str, source: str) -> str:
    for row, value in enumerate(col.to_pylist(), start=1):
        if value is None:
            continue
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return (
                f"{source}: column {name!r}, row {row}: the value {value!r} is not UTF-8 "
                f"text; save the file as UTF-8"
            )
    return f"{source}: column {name!r} holds binary data, not text or numbers"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def first_rows(mask: np.ndarray, limit: int = SHOW) -> list[int]:
    """The 1-based row numbers of the first ``limit`` true entries of ``mask``."""
    return [int(i) + 1 for i in np.flatnonzero(mask)[:limit]]
