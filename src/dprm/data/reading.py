"""Reading one view's table from a CSV or Parquet file, or a pandas DataFrame.

The result is a :class:`pyarrow.Table` with missing values as nulls, together with
the name of its source for messages. Nothing here knows about attribute kinds; it
only gets the cells in and checks the file's form (exists, is not empty, has rows,
has unique non-empty column names, parses, is UTF-8). Column names are stripped of
surrounding spaces.

Missing values
    In text files the empty cell is missing (quoted or not), and so is every cell
    whose text is exactly one of the declared markers (``na_values``: case and
    spaces count). Nothing else: ``NA``, ``none`` or ``null`` are values unless
    declared. In a DataFrame or Parquet file, nulls (``None``, ``NaN``, ``pd.NA``)
    are missing, and so are text cells that are empty or hold a declared marker.
    In a column of numbers, ``NaN`` (not a number, any letter case) is a missing
    value, as it is in DataFrames; :attr:`RawTable.nan_rows` records where a text
    file had one, so that the loader can say so.

Every error is a :class:`~dprm.errors.DataError` with a ``code`` and the ``file``
(and ``row``, where there is one); see :data:`dprm.errors.ERROR_CODES`.
"""

from __future__ import annotations

import codecs
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
import sys
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from dprm.data.arrow_arrays import null_scalar, string_array, to_numpy
from dprm.errors import DataError, ParameterError, short_repr
from dprm.input_files import regular_file_size

__all__ = ["DEFAULT_NA_VALUES", "RawTable", "check_column_names", "first_line", "nul_value_error", "open_text_table",
           "read_table", "missing_markers", "reading_options", "Source"]

if TYPE_CHECKING:
    import pandas as pd

    from dprm.data.types_file import TypesSpec

#: A view's source: a file path or a pandas DataFrame (pandas is imported only by
#: callers that pass a DataFrame: a command-line run never pays for it).
Source = Union[str, os.PathLike[str], "pd.DataFrame"]

#: The cell texts read as a missing value when none are declared: the empty cell only.
DEFAULT_NA_VALUES: tuple[str, ...] = ("",)

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
    names the file (as the user gave it) or ``"left DataFrame"``. ``renamed`` maps
    each renamed duplicate column to its original name; ``nan_rows`` maps each
    column of a text file in which a ``NaN`` was read as missing to the first such
    (1-based) row.
    """

    table: pa.Table
    source: str
    renamed: dict[str, str] = field(default_factory=dict)
    nan_rows: dict[str, int] = field(default_factory=dict)
    path: Path | None = None
    delimiter: str | None = None
    markers: tuple[str, ...] = DEFAULT_NA_VALUES

    @property
    def column_names(self) -> list[str]:
        return list(self.table.column_names)

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    def cells_as_written(self, name: str) -> list[str | None] | None:
        """The cells of column ``name`` as the text file wrote them (for messages).

        Re-reads that one column of a CSV file as text (missing cells as None);
        None for other sources or when the file cannot be re-read. Slow on big
        files: only for error messages.
        """
        if self.path is None or self.delimiter is None or name not in self.table.column_names:
            return None
        field_name = f"f{self.table.column_names.index(name)}"  # by position: names were cleaned
        try:
            table = pacsv.read_csv(
                self.path,
                read_options=pacsv.ReadOptions(
                    block_size=_BLOCK_SIZE, autogenerate_column_names=True, skip_rows=1
                ),
                parse_options=pacsv.ParseOptions(delimiter=self.delimiter),
                convert_options=pacsv.ConvertOptions(
                    include_columns=[field_name],
                    column_types={field_name: pa.string()},
                    null_values=list(self.markers),
                    strings_can_be_null=True,
                    quoted_strings_can_be_null=True,
                ),
            )
            return table.column(0).to_pylist()
        except (pa.ArrowException, OSError, KeyError):
            return None


def missing_markers(na_values: str | Sequence[str] | None = None) -> tuple[str, ...]:
    """The cell texts read as missing: the empty cell and the declared ``na_values``.

    Parameters
    ----------
    na_values : str or sequence of str, optional
        Declared markers (a single text is one marker).

    Raises
    ------
    ParameterError
        When a marker is not a text.

    Examples
    --------
    >>> missing_markers(["NA", "?"])
    ('', 'NA', '?')
    >>> missing_markers()
    ('',)
    """
    if na_values is None:
        return DEFAULT_NA_VALUES
    if isinstance(na_values, str):
        na_values = [na_values]
    if not isinstance(na_values, Sequence) or not all(isinstance(v, str) for v in na_values):
        raise ParameterError(f"na_values must be a list of texts, not {na_values!r}")
    return tuple(dict.fromkeys((*DEFAULT_NA_VALUES, *na_values)))


def reading_options(
    spec: TypesSpec, na_values: Sequence[str] | None, out_of_bounds: str | None
) -> tuple[tuple[str, ...], str]:
    """The missing-value markers (the empty cell, the argument's and the types file's) and the out-of-bounds policy.

    How every reader of the project combines the ``na_values`` and ``out_of_bounds``
    given as arguments (command-line options) with the types file's keys: the markers
    add up; an ``out_of_bounds`` argument wins over the file's, ``"error"`` by default.

    Examples
    --------
    >>> from dprm.data.types_file import TypesSpec
    >>> spec = TypesSpec.from_mapping({"na_values": ["?"], "out_of_bounds": "clamp"})
    >>> reading_options(spec, ["NA"], None)
    (('', 'NA', '?'), 'clamp')
    >>> reading_options(TypesSpec(), None, "error")
    (('',), 'error')
    """
    from dprm.data.types_file import OUT_OF_BOUNDS

    markers = missing_markers(na_values)
    markers = tuple(dict.fromkeys((*markers, *spec.na_values)))
    policy = out_of_bounds if out_of_bounds is not None else (spec.out_of_bounds or "error")
    if policy not in OUT_OF_BOUNDS:
        raise ParameterError(f"out_of_bounds must be 'error' or 'clamp', not {short_repr(policy)}")
    return markers, policy


def read_table(
    source: Source,
    side: str = "left",
    duplicate_names: str = "error",
    na_values: str | Sequence[str] | None = None,
) -> RawTable:
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
        or keep the first and rename the later ones ``"name.1"``, ``"name.2"``...
    na_values : sequence of str, optional
        Texts that mark a missing value besides the empty cell, compared exactly.

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
    >>> frame = pd.DataFrame({"a": [1, None, 3], "b": ["x", "?", "none"]})
    >>> read_table(frame).table.column("b").to_pylist()
    ['x', '?', 'none']
    >>> read_table(frame, na_values=["?"]).table.column("b").to_pylist()
    ['x', None, 'none']
    """
    if duplicate_names not in ("error", "rename"):
        raise ParameterError(f"duplicate_names must be 'error' or 'rename', not {duplicate_names!r}")
    markers = missing_markers(na_values)
    pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas is imported
    if pandas is not None and isinstance(source, pandas.DataFrame):
        raw = _from_dataframe(source, f"{side} DataFrame")
    elif isinstance(source, (str, os.PathLike)):
        raw = _from_path(Path(source), str(source), markers)
    else:
        raise DataError(
            f"{side} view: expected a file path or a pandas DataFrame, got {type(source).__name__}",
            code="bad_source", data_dependent=False,
        )
    raw.markers = markers
    _check_names(raw, rename=duplicate_names == "rename")
    if raw.num_rows == 0:
        raise _error(raw.source, "has a header but no data rows", "no_rows")
    raw.table = _normalise(raw, markers)
    return raw


def _error(source: str, text: str, code: str, *, row: int | None = None, column: str | None = None,
           data_dependent: bool = True) -> DataError:
    """A :class:`DataError` ``"<source>: <text>"`` with its structured details."""
    return DataError(f"{source}: {text}", code=code, file=source, column=column, row=row,
                     data_dependent=data_dependent)


def nul_value_error(source: str, column: str, row: int) -> DataError:
    """The error of a value holding a NUL character (``\\0``), which no text holds: column ``column``, row ``row``.

    Every reader of text cells refuses such a value with these words (numpy's text
    arrays drop trailing NULs, so ``"x\\0"`` would become ``"x"``).

    Parameters
    ----------
    source : str
        The file's name, for the message.
    column : str
        The column's name.
    row : int
        The data row, from 1 (the header not counted).

    Returns
    -------
    DataError
        Code ``nul_character``.

    Examples
    --------
    >>> print(nul_value_error("x.csv", "a", 2))
    x.csv: column 'a', row 2: a value holds a NUL character (\\0), which text cannot; is this a binary file?
    """
    return _error(source, f"column {column!r}, row {row}: a value holds a NUL character (\\0), which text cannot; "
                          f"is this a binary file?", "nul_character", column=column, row=row)


# --------------------------------------------------------------------------- files


def _file_format(path: Path, source: str, *, parquet: bool = True) -> str:
    """``"csv"``, ``"tsv"`` or ``"parquet"`` by the name's suffixes; an unknown one is an error saying what is read
    (``parquet``: whether the caller reads Parquet)."""
    name = path.name.lower()
    for comp in _COMPRESSIONS:
        for suffix in _CSV_SUFFIXES:
            if name.endswith(suffix + comp):
                return "tsv" if suffix == ".tsv" else "csv"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    raise _error(
        source,
        f"unknown file type {''.join(path.suffixes) or '(no extension)'!r}: "
        f"use .csv (or .tsv, optionally .gz-compressed){' or .parquet' if parquet else ''}",
        "unknown_file_type", data_dependent=False,
    )


def _file_size(path: Path, source: str) -> int:
    """The size of the regular file ``path``; anything else a one-line :class:`DataError`.

    A missing file, a directory, a loop of symbolic links and what is not a regular
    file (a named pipe, a device, a socket: the readers read a file more than once)
    are named as such (:func:`dprm.input_files.regular_file_size`).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     try:
    ...         _file_size(Path(tmp), "d.csv")
    ...     except DataError as error:
    ...         print(error)
    d.csv: is a directory, not a data file
    """
    return regular_file_size(path, source, "data file")


def _from_path(path: Path, source: str, markers: tuple[str, ...]) -> RawTable:
    size = _file_size(path, source)  # first: a folder is said to be one, whatever its name
    fmt = _file_format(path, source)
    if size == 0:
        raise _error(source, "is empty (0 bytes)", "empty_file")
    if fmt == "parquet":
        return RawTable(_read_parquet(path, source), source, path=path)
    delimiter = "\t" if fmt == "tsv" else _sniff_delimiter(path, source)
    table = _read_csv(path, source, delimiter, markers)
    return RawTable(table, source, path=path, delimiter=delimiter)


def open_text_table(path: Path, source: str) -> tuple[Any, str]:
    """A CSV or TSV file (optionally compressed) opened as a byte stream, and its delimiter.

    For readers of the text as written (the itemset miner): the same file types,
    compressions and delimiter rule as :func:`read_table`, and the same one-line
    errors for a missing, empty, Parquet or unknown file. The caller closes the stream
    and reports errors raised while reading it (a damaged compressed file).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "t.csv"
    ...     _ = path.write_text("a;b" + chr(10) + "1;2" + chr(10))
    ...     stream, delimiter = open_text_table(path, "t.csv")
    ...     with stream:
    ...         print(delimiter, stream.read().split())
    ; [b'a;b', b'1;2']
    """
    size = _file_size(path, source)  # first: a folder is said to be one, whatever its name
    fmt = _file_format(path, source, parquet=False)
    if fmt == "parquet":
        raise _error(source, "is a Parquet file; this command reads text: use .csv or .tsv (optionally .gz)",
                     "unsupported_file_type", data_dependent=False)
    if size == 0:
        raise _error(source, "is empty (0 bytes)", "empty_file", data_dependent=False)
    delimiter = "\t" if fmt == "tsv" else _sniff_delimiter(path, source)
    try:
        return pa.input_stream(str(path), compression="detect"), delimiter
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read: {first_line(exc)}", "unreadable_file") from None


def _read_parquet(path: Path, source: str) -> pa.Table:
    import pyarrow.parquet as pq  # 20 ms: only Parquet input pays for it

    try:  # one file, read as it is: read_table's dataset reading refuses repeated column names in its own words
        with pq.ParquetFile(path) as parquet:
            return parquet.read()
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read as Parquet: {first_line(exc)}", "bad_parquet") from None


def _convert_options(markers: tuple[str, ...]) -> pacsv.ConvertOptions:
    return pacsv.ConvertOptions(
        null_values=list(markers),
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )


def _read_csv(path: Path, source: str, delimiter: str, markers: tuple[str, ...]) -> pa.Table:
    parse = pacsv.ParseOptions(delimiter=delimiter)
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=_BLOCK_SIZE),
            parse_options=parse,
            convert_options=_convert_options(markers),
        )
        table.column_names  # decodes the header: fails here when it is not UTF-8
        _check_last_quote_closed(table, path, source)
        return table
    except UnicodeDecodeError:
        raise _error(source, _utf8_problem(path, source) or "is not UTF-8 text", "not_utf8") from None
    except pa.ArrowInvalid as exc:
        message = str(exc)
        if "Empty CSV file" in message:
            raise _error(source, "is empty (no header)", "empty_file") from None
        if "CSV parse error" in message:
            problem = _utf8_problem(path, source)
            if problem is not None:
                raise _error(source, problem, "not_utf8") from None
            text, row = _parse_error(path, delimiter, message, markers)
            raise _error(source, text, "bad_csv", row=row) from None
        raise _error(source, f"cannot be read as CSV: {first_line(exc)}", "bad_csv") from None
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read as CSV: {first_line(exc)}", "bad_csv") from None


def _check_last_quote_closed(table: pa.Table, path: Path, source: str) -> None:
    """Refuse a file whose last quoted cell never closes (an uncompressed file's end read back).

    A quote that never closes takes the rest of the file into its cell, so that cell is
    the last column of the table's last row, holding line breaks, and the file does not
    end with the closing quote: the rows after it were silently lost (the error then blamed
    the other view's ids) or, at the file's end, the line break became part of a category.
    """
    if table.num_rows == 0 or not path.name.lower().endswith(_CSV_SUFFIXES):
        return
    last = table.column(table.num_columns - 1)
    if not pa.types.is_string(last.type):
        return
    cell = last[-1].as_py()
    if cell is None or ("\n" not in cell and "\r" not in cell):
        return
    with open(path, "rb") as handle:
        handle.seek(max(0, handle.seek(0, os.SEEK_END) - 64))
        tail = handle.read()
    if not tail.rstrip(b"\r\n").endswith(b'"'):
        row = table.num_rows
        raise _error(source, f"row {row}: a quoted cell opens and never closes (a '\"' is missing), so it would "
                             f"take in the rest of the file", "bad_csv", row=row)


def _sniff_delimiter(path: Path, source: str) -> str:
    """``,`` unless the header line has no comma but tabs or semicolons."""
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(1 << 16)
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read: {first_line(exc)}", "unreadable_file") from None
    line = head.split(b"\n", 1)[0]
    if b"," in line:
        return ","
    if b"\t" in line:
        return "\t"
    if b";" in line:
        return ";"
    return ","


def _parse_error(path: Path, delimiter: str, message: str, markers: tuple[str, ...]) -> tuple[str, int | None]:
    """Re-read on one thread to learn which row broke the parse: (text, row)."""
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
            convert_options=_convert_options(markers),
        )
    except (pa.ArrowException, OSError, UnicodeDecodeError):
        pass
    if bad and bad[0].number is not None:
        row = bad[0]
        # pyarrow numbers records from 1 counting the header (blank lines skipped)
        return (
            f"row {row.number - 1} has {row.actual_columns} fields but the header has {row.expected_columns}",
            row.number - 1,
        )
    found = re.search(r"Expected \d+ columns, got \d+", message)
    detail = found.group(0) if found else " ".join(message.split())[:120]
    return f"cannot be parsed as CSV: {detail}", None


def _utf8_problem(path: Path, source: str) -> str | None:
    """A message (without the source) naming the first line that is not UTF-8, or None."""
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
                    return f"is not UTF-8 text: bad byte in {where}; save it as UTF-8"
                if not chunk:
                    return None
                line += chunk.count(b"\n")
    except (pa.ArrowException, OSError):
        return None


# ---------------------------------------------------------------------- DataFrames


def _from_dataframe(df: pd.DataFrame, source: str) -> RawTable:
    import pandas as pd  # the caller passed a DataFrame: already imported

    names = [str(c) for c in df.columns]
    arrays = []
    for i, name in enumerate(names):
        series = df.iloc[:, i]
        dtype = series.dtype
        if isinstance(dtype, pd.SparseDtype):
            series = series.sparse.to_dense()
        elif isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
        if isinstance(dtype, pd.IntervalDtype | pd.PeriodDtype) or getattr(dtype, "kind", "") == "c":
            hint = " (.astype(str) makes them categories)" if not getattr(dtype, "kind", "") == "c" else ""
            raise _error(source, f"column {name!r} holds values of pandas type {dtype}; use numbers, text or "
                         f"Booleans{hint}", "unsupported_column", column=name, data_dependent=False)
        try:
            arrays.append(pa.array(series, from_pandas=True))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise _error(
                source,
                f"column {name!r} mixes kinds of values ({first_line(exc)}); give it one type",
                "unsupported_column", column=name,
            ) from None
    return RawTable(pa.Table.from_arrays(arrays, names=names), source)


# -------------------------------------------------------------------- common checks


def check_column_names(names: Sequence[str], source: str, *, duplicates: bool = False,
                       remedy: str = "rename one") -> list[str]:
    """The column names without surrounding blanks; a :class:`DataError` if one is empty, repeated or holds a NUL.

    Parameters
    ----------
    names : sequence of str
        The header, as read.
    source : str
        The file's name, for the message.
    duplicates : bool, default False
        Allow repeated names (the caller renames them).
    remedy : str
        What the message of a repeated name advises.

    Examples
    --------
    >>> check_column_names([" a", "b "], "x.csv")
    ['a', 'b']
    >>> try:
    ...     check_column_names(["a", "a "], "x.csv")
    ... except DataError as error:
    ...     print(error.code, error.column)
    duplicate_column a
    >>> try:
    ...     check_column_names(["a", "b\\x00"], "x.csv")
    ... except DataError as error:
    ...     print(error)
    x.csv: column 2's name 'b\\x00' holds a NUL character (\\0), which text cannot; is this a binary file?
    """
    stripped = [str(n).strip() for n in names]
    if not stripped:
        raise _error(source, "has no columns", "no_columns", data_dependent=False)
    if not any(stripped):
        raise _error(source, "the header line is blank (no column names)", "unnamed_column", data_dependent=False)
    for i, name in enumerate(stripped):
        if name == "":
            raise _error(source, f"column {i + 1} has no name", "unnamed_column", data_dependent=False)
        if "\x00" in name:  # as a value's NUL is refused (nul_value_error)
            raise _error(source, f"column {i + 1}'s name {short_repr(name)} holds a NUL character (\\0), which text "
                                 f"cannot; is this a binary file?", "nul_character", column=name, data_dependent=False)
        control = next((c for c in name if unicodedata.category(c) == "Cc"), None)
        if control is not None:  # a terminal would act on it (an escape sequence recolours or rewrites the output)
            raise _error(source, f"column {i + 1}'s name {short_repr(name)} holds the control character "
                                 f"{control!r}; rename the column", "control_character", column=name,
                         data_dependent=False)
    if duplicates:
        return stripped
    first: dict[str, int] = {}
    for i, name in enumerate(stripped):
        if name in first:
            raise _error(
                source,
                f"column name {short_repr(name)} occurs more than once (columns {first[name] + 1} and {i + 1}); "
                f"{remedy}",
                "duplicate_column", column=name, data_dependent=False,
            )
        first[name] = i
    return stripped


def _check_names(raw: RawTable, rename: bool) -> None:
    names = check_column_names(raw.column_names, raw.source, duplicates=rename, remedy=(
        "rename one, or rename duplicates automatically "
        "(--duplicate-columns rename; duplicate_names='rename' in Python)"))
    if names != raw.column_names:
        raw.table = raw.table.rename_columns(names)
    if len(set(names)) == len(names):
        return
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


def _normalise(raw: RawTable, markers: tuple[str, ...]) -> pa.Table:
    """Nulls for NaN and missing markers; plain columns of supported types; UTF-8 text."""
    import pyarrow.compute as pc  # here, not at the top: 0.07 s that a reader of headers only need not pay

    table, source = raw.table, raw.source
    marker_set = string_array(markers)
    from_text = raw.delimiter is not None
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
                if from_text:
                    raw.nan_rows[name] = first_rows(to_numpy(nan, fill=False), 1)[0]
                col = pc.if_else(nan, null_scalar(pa.float64()), col)
        elif pa.types.is_string(typ):
            nul = pc.match_substring(col, "\x00")
            if pc.any(nul).as_py():  # numpy's text arrays drop trailing NULs: "x\0" would become "x"
                raise nul_value_error(source, name, first_rows(to_numpy(nul, fill=False), 1)[0])
            marked = pc.is_in(col, value_set=marker_set)
            if pc.any(marked).as_py():
                col = pc.if_else(marked, null_scalar(pa.string()), col)
        elif pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_binary_view(typ):
            text, row = _binary_message(col, name)
            raise _error(source, text, "not_utf8" if row is not None else "unsupported_column",
                         column=name, row=row)
        elif pa.types.is_temporal(typ):
            # dates and times are categories, in ISO text, without the trailing zeros of a fraction
            # of a second ("2020-03-04 00:00:00", "...07.25", not "...07.250000000" from nanoseconds)
            col = pc.replace_substring_regex(col.cast(pa.string()), pattern=r"(\.\d*[1-9])0+$", replacement=r"\1")
            col = pc.replace_substring_regex(col, pattern=r"\.0+$", replacement="")
        elif not (
            pa.types.is_null(typ)
            or pa.types.is_boolean(typ)
            or pa.types.is_integer(typ)
            or pa.types.is_decimal(typ)
        ):
            raise _error(
                source, f"column {name!r} has values of type {typ}; use numbers, text or Booleans",
                "unsupported_column", column=name, data_dependent=False,
            )
        columns.append(col)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _binary_message(col: pa.ChunkedArray, name: str) -> tuple[str, int | None]:
    for row, value in enumerate(col.to_pylist(), start=1):
        if value is None:
            continue
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return (
                f"column {name!r}, row {row}: the value {value!r} is not UTF-8 text; save the file as UTF-8",
                row,
            )
    return f"column {name!r} holds binary data, not text or numbers", None


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (at most 200 characters), for a one-line error."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def first_rows(mask: np.ndarray, limit: int = SHOW) -> list[int]:
    """The 1-based row numbers of the first ``limit`` true entries of ``mask``."""
    return [int(i) + 1 for i in np.flatnonzero(mask)[:limit]]
