"""Reading one view's table from a CSV or Parquet file, or a pandas DataFrame.

The result is a :class:`pyarrow.Table` with missing values as nulls, together with
the name of its source for messages. Nothing here knows about attribute kinds; it
only gets the cells in and checks the file's form (exists, is not empty, has rows,
has unique non-empty column names, parses, is UTF-8, is the text its name says and
not compressed data or UTF-16, every quote it opens closes). Column names are
stripped of surrounding spaces.

Quoted line breaks
    A quoted cell may hold line breaks (``"a<newline>b"``). pyarrow cuts a file into
    blocks at line ends without looking at quotes; when a quoted line break falls at
    a block's end it fails, and the file is read again cut at the line ends outside
    quotes. A cell holding a line break must be found in the file as a quoted cell
    that closes; otherwise a quote opened and never closed (it took in the lines
    after it), an error naming its row.

Missing values
    In text files the empty cell is missing (quoted or not), and so is every cell
    whose text is exactly one of the declared markers (``na_values``: case and
    spaces count). Nothing else: ``NA``, ``none`` or ``null`` are values unless
    declared. In a DataFrame or Parquet file, nulls (``None``, ``NaN``, ``pd.NA``)
    are missing, and so are text cells that are empty or hold a declared marker.
    In a column of numbers, ``NaN`` (not a number, any letter case) is a missing
    value, as it is in DataFrames; :attr:`RawTable.nan_rows` records where a text
    file had one, so that the loader can say so.

Values as written
    A text file's cells that pyarrow alone would rewrite are read as the file writes
    them: whole numbers in hexadecimal (``0x10``, not 16) and times or dates with a
    time (``2020-01-01T10:00``, not ``2020-01-01 10:00:00``) are text
    (:func:`_as_written`). A float32/float16 value is the number it is written as
    (``1.1``, not 1.100000023841858), a duration a number of seconds, and the unnamed
    index pandas writes into a Parquet file no column (:func:`pandas_index_columns`).

Every error is a :class:`~dprm.errors.DataError` with a ``code`` and the ``file``
(and ``row``, where there is one); see :data:`dprm.errors.ERROR_CODES`.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
import sys
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from dprm.data.arrow_arrays import null_scalar, string_array, to_numpy
from dprm.data.category_text import NONZERO_DIGITS
from dprm.errors import DataError, ParameterError, not_utf8, printable_text, short_repr, short_text
from dprm.input_files import regular_file_size

__all__ = ["DEFAULT_NA_VALUES", "RawTable", "check_column_names", "check_last_line_closes", "check_quotes_close",
           "column_name_key",
           "data_file_format", "first_line", "line_break_cells", "native_file", "nul_value_error", "open_text_table",
           "pandas_index_columns", "read_header", "read_table", "missing_markers", "reading_options", "Source"]

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
#: A text file's compression by its name's last suffix, in any letter case (pyarrow's own
#: detection knows the lower-case suffixes only: ``UP.CSV.GZ`` was read as text).
_CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}
#: The first bytes of what a file named as text may be instead: (magic, what it is, the suffix that reads it).
_MAGIC: tuple[tuple[bytes, str, str | None], ...] = (
    (b"\x1f\x8b", "gzip-compressed", ".gz"),
    (b"BZh", "bzip2-compressed", ".bz2"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", ".zst"),
    (b"\x04\x22\x4d\x18", "lz4-compressed", ".lz4"),
    (b"\xfd7zXZ\x00", "xz-compressed", None),
    (b"PK\x03\x04", "a zip archive (or an Excel workbook)", None),
    (b"PAR1", "a Parquet file", ".parquet"),
)
_PARQUET_SUFFIXES = (".parquet", ".pq")
#: The end of a text file read to check that its last line's quotes close (a last line longer than this
#: is not checked).
_TAIL_BYTES = 1 << 16
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
    (1-based) row; ``line_breaks`` says that a text file's quoted cells hold line
    breaks (it is re-read as it was read: with pyarrow's ``newlines_in_values``);
    ``pandas_index`` names the columns of a Parquet file that hold the unnamed index
    pandas wrote with its frame, left out (:func:`pandas_index_columns`); ``durations``
    the columns of durations (a Parquet file's or DataFrame's), read as numbers of seconds; ``tiny_numbers``
    the positions of a text file's columns of numbers read as text because a cell's number is not 0 but
    reads as 0 (``1e-400``): numbers unless declared otherwise, so that the cell is refused.
    """

    table: pa.Table
    source: str
    renamed: dict[str, str] = field(default_factory=dict)
    nan_rows: dict[str, int] = field(default_factory=dict)
    path: Path | None = None
    delimiter: str | None = None
    markers: tuple[str, ...] = DEFAULT_NA_VALUES
    line_breaks: bool = False
    pandas_index: list[str] = field(default_factory=list)
    durations: list[str] = field(default_factory=list)
    tiny_numbers: list[int] = field(default_factory=list)

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
            with _open_text(self.path) as stream:
                table = pacsv.read_csv(
                    stream,
                    read_options=pacsv.ReadOptions(
                        block_size=_block_size(self.path), autogenerate_column_names=True, skip_rows=1
                    ),
                    parse_options=pacsv.ParseOptions(delimiter=self.delimiter, newlines_in_values=self.line_breaks),
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
    >>> missing_markers([os.fsdecode(b"N\\xff")])
    Traceback (most recent call last):
    dprm.errors.ParameterError: na_values 'N\\xff': not UTF-8 text; a marker is compared with the cells of the \
UTF-8 file
    """
    if na_values is None:
        return DEFAULT_NA_VALUES
    if isinstance(na_values, str):
        na_values = [na_values]
    if not isinstance(na_values, Sequence) or not all(isinstance(v, str) for v in na_values):
        raise ParameterError(f"na_values must be a list of texts, not {na_values!r}")
    for value in na_values:
        if not_utf8(value):  # pyarrow would fail on it (UnicodeEncodeError), and no cell of a UTF-8 file holds it
            raise ParameterError(f"na_values '{short_text(printable_text(value))}': not UTF-8 text; "
                                 f"a marker is compared with the cells of the UTF-8 file")
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
    keep: Collection[str] = (),
) -> RawTable:
    """Read a CSV/Parquet file or take a DataFrame, and check its form.

    Parameters
    ----------
    source : str, PathLike or pandas.DataFrame
        The file (format chosen by extension, in any letter case: ``.csv``, ``.tsv``,
        ``.txt``, each optionally ``.gz``/``.bz2``/``.zst``/``.lz4`` compressed;
        ``.parquet``, ``.pq``) or the DataFrame.
    side : str
        ``"left"`` or ``"right"``: names a DataFrame source in messages.
    duplicate_names : {"error", "rename"}
        What to do when a column name occurs more than once: raise (the default),
        or keep the first and rename the later ones ``"name.1"``, ``"name.2"``...
    na_values : sequence of str, optional
        Texts that mark a missing value besides the empty cell, compared exactly.
    keep : collection of str
        Columns named by the caller (the types file's, the id column): kept even when
        they hold the index pandas wrote into a Parquet file (:func:`pandas_index_columns`),
        which is otherwise left out.

    Returns
    -------
    RawTable

    Raises
    ------
    DataError
        When the file is missing, empty, has no data rows, cannot be parsed (a quote
        that never closes included), is not UTF-8, is not what its name says, or has
        a duplicate or empty column name.

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
        raw = _from_path(Path(source), str(source), markers, keep)
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


def read_header(source: str | os.PathLike[str], duplicate_names: str = "error", keep: Collection[str] = ()) -> RawTable:
    """A file's column names as :func:`read_table` checks and renames them, without its rows.

    The header of a text file (its first block is parsed), the schema of a Parquet
    file; the same one-line errors as :func:`read_table` for the file's form.

    Parameters
    ----------
    source : str or PathLike
        The file.
    duplicate_names : {"error", "rename"}
        As :func:`read_table`'s.
    keep : collection of str
        As :func:`read_table`'s.

    Returns
    -------
    RawTable
        With no rows.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "t.csv"
    ...     _ = path.write_text(" a,b,a" + chr(10) + "1,2,3" + chr(10))
    ...     raw = read_header(path, "rename")
    >>> raw.column_names, raw.num_rows
    (['a', 'b', 'a.1'], 0)
    """
    if duplicate_names not in ("error", "rename"):
        raise ParameterError(f"duplicate_names must be 'error' or 'rename', not {duplicate_names!r}")
    path, name = Path(source), str(source)
    size = _file_size(path, name)
    fmt = _file_format(path, name)
    if size == 0:
        raise _error(name, "is empty (0 bytes)", "empty_file")
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            with native_file(path) as stream:
                schema = pq.read_schema(stream)
        except (pa.ArrowException, OSError) as exc:
            raise _error(name, f"cannot be read as Parquet: {first_line(exc)}", "bad_parquet") from None
    else:
        delimiter = _sniff_delimiter(path, name, fmt)
        try:
            with _open_text(path) as stream:
                schema = pacsv.open_csv(
                    stream, read_options=pacsv.ReadOptions(use_threads=False, block_size=_block_size(path)),
                    parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True,
                                                     invalid_row_handler=lambda _: "skip")).schema
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            raise _error(name, f"cannot be read as CSV: {first_line(exc)}", "bad_csv") from None
    index = pandas_index_columns(schema, keep)
    raw = RawTable(schema.empty_table().drop_columns(index), name, path=path, pandas_index=index)
    _check_names(raw, rename=duplicate_names == "rename")
    return raw


def _block_size(path: Path) -> int:
    """The block size pyarrow reads the text file ``path`` in: :data:`_BLOCK_SIZE`, or more when its header line
    is longer.

    pyarrow takes a file's columns from its first block: a header line longer than a
    block (hundreds of thousands of columns, as a genotype table has) was "Empty CSV
    file", said as ``is empty (no header)``. The block holds twice the header line.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "wide.csv"
    ...     _ = path.write_text("h" * (5 << 20) + chr(10) + "1" + chr(10))
    ...     _block_size(path) > 10 << 20, _block_size(Path(tmp) / "missing.csv") == _BLOCK_SIZE
    (True, True)
    """
    length = 0
    try:
        with _open_text(path) as stream:
            while True:
                chunk = stream.read(1 << 16)
                ends = [at for at in (chunk.find(b"\n"), chunk.find(b"\r")) if at >= 0]
                if ends or not chunk:
                    length += min(ends) if ends else 0
                    break
                length += len(chunk)
    except (pa.ArrowException, OSError):
        return _BLOCK_SIZE
    return max(_BLOCK_SIZE, 1 << (2 * length + 1).bit_length())


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


def data_file_format(path: str | os.PathLike[str], source: str | None = None) -> str:
    """The form of the data file ``path`` by its name, ``"csv"``, ``"tsv"`` or ``"parquet"``, after the checks
    :func:`read_table` makes before it reads (``source``: its name in messages, default the path).

    The same one-line errors as :func:`read_table` for a missing file, a directory or
    anything else that is not a regular file, a name of no known form, and an empty
    file: for readers of a file's parts (the Ray engine's shards, :mod:`dprm.engine.sharding`).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "v.CSV.gz").write_bytes(b"x")
    ...     _ = (Path(tmp) / "empty.pq").write_bytes(b"")
    ...     print(data_file_format(Path(tmp) / "v.CSV.gz"))
    ...     try:
    ...         data_file_format(Path(tmp) / "empty.pq", "empty.pq")
    ...     except DataError as error:
    ...         print(error)
    csv
    empty.pq: is empty (0 bytes)
    """
    path, source = Path(path), str(path) if source is None else source
    size = _file_size(path, source)  # first: a folder is said to be one, whatever its name
    fmt = _file_format(path, source)
    if size == 0:
        raise _error(source, "is empty (0 bytes)", "empty_file")
    return fmt


def _from_path(path: Path, source: str, markers: tuple[str, ...], keep: Collection[str] = ()) -> RawTable:
    fmt = data_file_format(path, source)
    if fmt == "parquet":
        table = _read_parquet(path, source)
        index = pandas_index_columns(table.schema, keep)
        return RawTable(table.drop_columns(index), source, path=path, pandas_index=index)
    delimiter = _sniff_delimiter(path, source, fmt)
    table, line_breaks, tiny = _read_csv(path, source, delimiter, markers)
    return RawTable(table, source, path=path, delimiter=delimiter, line_breaks=line_breaks, tiny_numbers=tiny)


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
    delimiter = _sniff_delimiter(path, source, fmt)
    try:
        return _open_text(path), delimiter
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read: {first_line(exc)}", "unreadable_file") from None


def _open_text(path: Path) -> Any:
    """The text file ``path`` as a byte stream, decompressed as its name's last suffix says, in any letter case.

    pyarrow's own detection reads ``.gz`` but not ``.GZ``: ``UP.CSV.GZ`` was parsed
    as the compressed bytes (``is empty (no header)``).
    """
    codec = _CODECS.get(path.suffix.lower())
    stream = native_file(path)
    return pa.CompressedInputStream(stream, codec) if codec else stream


def native_file(path: str | os.PathLike[str]) -> pa.NativeFile:
    """The file ``path`` opened for reading as pyarrow's file, whatever bytes its name holds.

    pyarrow takes a path as UTF-8 text: a name that is not UTF-8 (``bad\\xff.csv``, which
    Python holds with surrogate escapes) failed with ``UnicodeEncodeError: surrogates not
    allowed``. The name is given as the bytes the operating system knows it by
    (:func:`os.fsencode`), which pyarrow opens as they are. Every reader here hands pyarrow
    the file this gives, never the path (the CSV reader, the compressed streams, Parquet).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / os.fsdecode(b"bad\\xff.csv")
    ...     _ = path.write_bytes(b"a,b")
    ...     with native_file(path) as stream:
    ...         print(stream.read())
    b'a,b'
    """
    return pa.OSFile(os.fsencode(path), "r")


def _read_parquet(path: Path, source: str) -> pa.Table:
    import pyarrow.parquet as pq  # 20 ms: only Parquet input pays for it

    try:  # one file, read as it is: read_table's dataset reading refuses repeated column names in its own words
        with native_file(path) as stream, pq.ParquetFile(stream) as parquet:
            return parquet.read()
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read as Parquet: {first_line(exc)}", "bad_parquet") from None


#: The name pandas gives the column holding a frame's unnamed index (level ``N``) in a Parquet file.
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")


def pandas_index_columns(schema: pa.Schema, keep: Collection[str] = ()) -> list[str]:
    """The columns of a Parquet file that hold the unnamed index pandas wrote with its frame.

    ``DataFrame.to_parquet`` writes an index that is not a plain range (the frame was
    filtered, sorted or concatenated) as a column ``__index_level_0__`` and says so in
    the file's ``pandas`` metadata; pandas reads it back as the index, not a column.
    It is no column of the frame (the same frame passed as a DataFrame has no such
    column): the row labels, mined as an attribute, would have said which rows come
    first. A named index (``frame.set_index("patient")``) is the user's column and stays,
    and so does a column in ``keep`` (one the types file declares, or the id column).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": [1, 2, 3]}).iloc[[2, 0]]
    >>> pandas_index_columns(pa.Table.from_pandas(frame).schema)
    ['__index_level_0__']
    >>> pandas_index_columns(pa.Table.from_pandas(frame.set_index("a")).schema)
    []
    """
    import json

    metadata = schema.metadata or {}
    try:
        index = json.loads(metadata[b"pandas"]).get("index_columns", [])
    except (KeyError, ValueError, AttributeError):
        return []
    return [name for name in index if isinstance(name, str) and _PANDAS_INDEX.fullmatch(name)
            and name in schema.names and name not in keep]


def _convert_options(markers: tuple[str, ...]) -> pacsv.ConvertOptions:
    return pacsv.ConvertOptions(
        null_values=list(markers),
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )


def _parse_csv(path: Path, delimiter: str, markers: tuple[str, ...], line_breaks: bool) -> pa.Table:
    """pyarrow's reading of the text file, on several threads (``line_breaks``: its ``newlines_in_values``)."""
    with _open_text(path) as stream:
        return pacsv.read_csv(
            stream,
            read_options=pacsv.ReadOptions(block_size=_block_size(path)),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=line_breaks),
            convert_options=_convert_options(markers),
        )


def _read_csv(path: Path, source: str, delimiter: str, markers: tuple[str, ...]) -> tuple[pa.Table, bool, list[int]]:
    """The text file's table, whether quoted cells of it hold line breaks, and the positions of its columns of
    numbers read as text because a cell is not 0 but reads as 0 (:func:`_rounded_to_zero_as_written`).

    pyarrow splits a file into blocks at line ends without looking at quotes (fast, on
    several threads); a quoted line break at the end of a block makes it fail ("out of
    sync"), never misread, and the file is then read again split at the line ends
    outside quotes. Cells that hold a line break are checked to be quoted cells that
    close (:func:`check_quotes_close`).
    """
    try:
        line_breaks = False
        try:
            table = _parse_csv(path, delimiter, markers, line_breaks)
        except pa.ArrowInvalid as exc:
            if "out of sync" not in str(exc) and "CSV parse error" not in str(exc):
                raise
            line_breaks = True  # a quoted line break across two blocks (or a bad row: worded below)
            table = _parse_csv(path, delimiter, markers, line_breaks)
        table.column_names  # decodes the header: fails here when it is not UTF-8
        cells = line_break_cells(table)
        if cells:
            check_quotes_close(cells, table.num_rows, table.column_names, path, source, delimiter)
        elif table.num_rows:
            check_last_line_closes(path, source, delimiter, table.num_rows)
        line_breaks = line_breaks or bool(cells)
        table, tiny = _rounded_to_zero_as_written(table, path, delimiter, markers, line_breaks)
        return _as_written(table, path, delimiter, markers, line_breaks), line_breaks, tiny
    except UnicodeDecodeError:
        raise _error(source, _utf8_problem(path, source) or "is not UTF-8 text", "not_utf8") from None
    except pa.ArrowInvalid as exc:
        message = str(exc)
        if "Empty CSV file" in message:
            return _header_alone(path, source, delimiter, markers), False, []
        if "CSV parse error" in message:
            problem = _utf8_problem(path, source)
            if problem is not None:
                raise _error(source, problem, "not_utf8") from None
            text, row = _parse_error(path, delimiter, message, markers)
            raise _error(source, text, "bad_csv", row=row) from None
        raise _error(source, f"cannot be read as CSV: {first_line(exc)}", "bad_csv") from None
    except (pa.ArrowException, OSError) as exc:
        raise _error(source, f"cannot be read as CSV: {first_line(exc)}", "bad_csv") from None


#: A cell pyarrow reads as a whole number although it is written in hexadecimal (``0x10`` as 16).
_HEXADECIMAL = r"^\s*0[xX][0-9a-fA-F]+\s*$"
#: How much of a text file is looked through at a time for a ``0x`` (:func:`_holds_hexadecimal`).
_SCAN_BYTES = 1 << 24


def _as_written(table: pa.Table, path: Path, delimiter: str, markers: tuple[str, ...], line_breaks: bool) -> pa.Table:
    """The table with the columns whose cells pyarrow rewrites read as the file writes them, as text.

    pyarrow's CSV reader reads

    - ``0x10`` as the integer 16 (in a column of whole numbers only: beside ``2.5`` it
      stays text), which no other reader does (Python, pandas, R, a spreadsheet): a
      category ``0x10`` became ``16`` (and a declared ``"categories": ["0x10"]`` refused
      the value ``16``, which the file does not hold), an id ``0x10`` matched the other
      view's ``16``. An integer column with a cell written so is read as text, like any
      column that is not all decimal numbers. Only a file holding the bytes ``0x`` or
      ``0X`` (:func:`_holds_hexadecimal`) is looked at again for them.
    - times and dates with a time as timestamps, written back in another form:
      ``2020-01-01T10:00`` became ``2020-01-01 10:00:00``, ``10:00`` became ``10:00:00``,
      and ``10:00+01:00`` was moved to UTC (``09:00:00Z``, merged with the cells written
      ``09:00Z``): a declared category as the file writes it was refused. Such a column
      is read as its text. (A date alone, ``2020-01-01``, reads back as written.)

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "t.csv"
    ...     _ = path.write_text("a,b,t" + chr(10) + "0x10,1,10:00" + chr(10) + "2,3,11:30" + chr(10))
    ...     table = _parse_csv(path, ",", ("",), False)
    ...     print(table.column("a").to_pylist(), _as_written(table, path, ",", ("",), False).to_pydict())
    [16, 2] {'a': ['0x10', '2'], 'b': [1, 3], 't': ['10:00', '11:30']}
    """
    temporal = [j for j, column in enumerate(table.columns)
                if pa.types.is_timestamp(column.type) or pa.types.is_time(column.type)]
    integers = [j for j, column in enumerate(table.columns) if pa.types.is_integer(column.type)]
    if integers and not _holds_hexadecimal(path):
        integers = []
    if not integers and not temporal:
        return table
    import pyarrow.compute as pc  # here: 0.07 s that a file without such a cell need not pay

    fields = {j: f"f{j}" for j in sorted(integers + temporal)}  # by position: the names are cleaned later
    texts = _columns_as_text(path, fields, delimiter, markers, line_breaks)
    if texts.num_rows != table.num_rows:  # pragma: no cover - the same file, read the same way
        return table
    for j, name in fields.items():
        column = texts.column(name)
        if j in temporal or pc.any(pc.match_substring_regex(column, _HEXADECIMAL)).as_py():
            table = table.set_column(j, table.column_names[j], column)
    return table


def _columns_as_text(path: Path, fields: dict[int, str], delimiter: str, markers: tuple[str, ...],
                     line_breaks: bool) -> pa.Table:
    """The columns of a CSV file at the positions of ``fields`` read again as text, named by ``fields``' values
    (``f3``: by position, as the header's names are cleaned later); missing markers are nulls."""
    with _open_text(path) as stream:
        return pacsv.read_csv(
            stream,
            read_options=pacsv.ReadOptions(block_size=_block_size(path), autogenerate_column_names=True, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=line_breaks),
            convert_options=pacsv.ConvertOptions(include_columns=list(fields.values()),
                                                 column_types={f: pa.string() for f in fields.values()},
                                                 null_values=list(markers), strings_can_be_null=True,
                                                 quoted_strings_can_be_null=True),
        )


#: Bytes that a number nearer 0 than a float64 holds (below 2.5e-324) is written with: an exponent of three
#: digits or more (``1e-400``), or a run of a hundred zeros (``0.000...1``, also before a smaller exponent).
_TINY = re.compile(rb"[eE]-0*[1-9][0-9]{2}|0{100}")


def _rounded_to_zero_as_written(table: pa.Table, path: Path, delimiter: str, markers: tuple[str, ...],
                                line_breaks: bool) -> tuple[pa.Table, list[int]]:
    """The table with each column of numbers holding a cell whose number is not 0 but reads as 0 (``1e-400``)
    read as the file writes it, as text; and those columns' positions.

    pyarrow (as pandas, and Python's ``float``) reads a number nearer 0 than the
    smallest float64 (4.9e-324) as 0, without a word: ``[x > 0]`` then left out a
    positive value, and a column declared categorical had the category ``0`` for it.
    Read as text, such a column is refused where it is typed as numbers (declared
    numeric, or not declared: :attr:`RawTable.tiny_numbers`), naming the cell
    (:func:`dprm.data.encoding.encode_column`, as ``1e309`` is), and is the category the
    file writes where it is declared categorical. Only a file holding the bytes such a
    number is written with (:data:`_TINY`) has its columns of numbers holding a 0 read
    again as text.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "t.csv"
    ...     _ = path.write_text("a,b" + chr(10) + "0e-400,2" + chr(10) + "-1e-400,3" + chr(10))
    ...     table, tiny = _rounded_to_zero_as_written(_parse_csv(path, ",", ("",), False), path, ",", ("",), False)
    >>> table.to_pydict(), tiny
    ({'a': ['0e-400', '-1e-400'], 'b': [2, 3]}, [0])
    """
    import pyarrow.compute as pc

    # zeros found with numpy: a compute function given a Python number imports pandas (dprm.data.arrow_arrays)
    numbers = [j for j, column in enumerate(table.columns) if pa.types.is_floating(column.type)
               and bool((to_numpy(column, fill=np.nan) == 0.0).any())]
    if not numbers or not _file_holds(path, _TINY):
        return table, []
    fields = {j: f"f{j}" for j in numbers}  # by position: the names are cleaned later
    texts = _columns_as_text(path, fields, delimiter, markers, line_breaks)
    if texts.num_rows != table.num_rows:  # pragma: no cover - the same file, read the same way
        return table, []
    tiny = []
    for j, name in fields.items():
        text = texts.column(name)
        zero = to_numpy(table.column(j), fill=np.nan) == 0.0
        if (zero & to_numpy(pc.match_substring_regex(text, NONZERO_DIGITS), fill=False)).any():
            table = table.set_column(j, table.column_names[j], text)
            tiny.append(j)
    return table, tiny


def _file_holds(path: Path, pattern: re.Pattern[bytes], overlap: int = 128) -> bool:
    """Whether the text file ``path`` (decompressed) holds bytes that ``pattern`` matches (one at most
    ``overlap`` bytes long may span two chunks read)."""
    with _open_text(path) as stream:
        last = b""
        while True:
            chunk = stream.read(_SCAN_BYTES)
            if not chunk:
                return False
            chunk = last + chunk
            if pattern.search(chunk):
                return True
            last = chunk[-overlap:]


def _holds_hexadecimal(path: Path) -> bool:
    """Whether the text file ``path`` (decompressed) holds the bytes ``0x`` or ``0X`` anywhere."""
    with _open_text(path) as stream:
        last = b""
        while True:
            chunk = stream.read(_SCAN_BYTES)
            if not chunk:
                return False
            chunk = last + chunk
            if b"0x" in chunk or b"0X" in chunk:
                return True
            last = chunk[-1:]


def _header_alone(path: Path, source: str, delimiter: str, markers: tuple[str, ...]) -> pa.Table:
    """The table without rows of a file that is a header line without a line end (``id,a,b``), which pyarrow
    calls empty; a file of blank lines is empty (no header)."""
    try:
        with _open_text(path) as stream:
            text = stream.read(_block_size(path))
        if text.strip() and b"\n" not in text and b"\r" not in text:
            return pacsv.read_csv(io.BytesIO(text + b"\n"), parse_options=pacsv.ParseOptions(delimiter=delimiter),
                                  convert_options=_convert_options(markers))
    except (pa.ArrowException, OSError, UnicodeDecodeError):
        pass
    raise _error(source, "is empty (no header)", "empty_file")


def line_break_cells(table: pa.Table) -> list[tuple[int, int, str]]:
    """The text cells that hold a line break, in file order: (row from 0, column from 0, text).

    For :func:`check_quotes_close` (also the itemset miner's chunked reading's, one batch at
    a time: :mod:`dprm.itemsets.text_table`).

    Only a quoted cell can hold one. The text columns' bytes are looked through at
    once (a few milliseconds for 30 MB); the cells only of a column that holds a byte
    of a line break (or another control character below ``\\x0e``).
    """
    cells = []
    for j, column in enumerate(table.columns):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        if not any(chunk.buffers()[2] is not None and np.any(np.frombuffer(chunk.buffers()[2], np.uint8) <= 13)
                   for chunk in column.chunks):
            continue
        import pyarrow.compute as pc  # here: 0.07 s that a file without such a byte need not pay

        breaks = pc.or_(pc.match_substring(column, "\n"), pc.match_substring(column, "\r"))
        for row in np.flatnonzero(to_numpy(breaks, fill=False)).tolist():
            cells.append((row, j, column[row].as_py()))
    return sorted(cells)


def check_quotes_close(cells: Sequence[tuple[int, int, str]], rows: int, columns: Sequence[str], path: Path,
                       source: str, delimiter: str) -> None:
    """Refuse a file in which a quote opens and never closes: a cell holding a line break must be written in
    the file as a quoted cell that closes where the cell ends.

    ``cells``: every cell of the file that holds a line break, in file order
    (:func:`line_break_cells`, rows from 0); ``rows``: the file's data rows; ``columns``:
    its header (to name the column).

    A quote that never closes takes the line end into its cell, and with it the next
    lines: up to the end of the file, or up to the next ``"`` (in a file that quotes its
    texts, the opening quote of a later cell, which pyarrow reads as closing it, and the
    rest of that cell then as more text). Rows were silently lost or merged (the error
    then blamed the other view's ids), or a line break became part of a category. A
    cell that closes is found in the file as written: ``"``, its text with each ``"``
    doubled, ``"``, then the delimiter, a line end or the end of the file; the cells
    are looked for in file order.
    """
    with _open_text(path) as stream:
        text = stream.read()
    position = 0
    for row, column, value in cells:
        at, length = _closed_cell(text, value, delimiter, position)
        if at < 0:
            taken = "the rest of the file" if row == rows - 1 else "the next line(s), up to a later '\"'"
            raise _error(source, f"row {row + 1}: a quoted cell opens and never closes (a '\"' is missing), so it "
                                 f"would take in {taken}", "bad_csv", row=row + 1, column=columns[column])
        position = at + length


def check_last_line_closes(path: Path, source: str, delimiter: str, rows: int) -> None:
    """Refuse a file without a final line end whose last line opens a quote that never closes (``3,"abc``).

    pyarrow reads such a cell as ``abc``; a quote that opens before a line end is found by
    :func:`check_quotes_close` (the cell then holds the line break). For a file whose
    rows are one line each (no cell holds a line break), the last line is the last row,
    read again by Python's strict CSV reader. Compressed files are not looked at (their
    end is known only once the whole file is decompressed).
    """
    if path.suffix.lower() in _CODECS:
        return
    import csv

    with open(path, "rb") as file:
        file.seek(0, os.SEEK_END)
        start = max(file.tell() - _TAIL_BYTES, 0)
        file.seek(start)
        tail = file.read()
    lines = re.split(rb"\r\n|\r|\n", tail)
    line = lines[-1]
    if not line or b'"' not in line or (start > 0 and len(lines) == 1):
        return  # a final line end, no quote in the last line, or a last line longer than the tail read
    try:
        list(csv.reader([line.decode("utf-8", "replace")], delimiter=delimiter, strict=True))
    except csv.Error:
        raise _error(source, f"row {rows}: a quoted cell opens and never closes (a '\"' is missing before the end "
                             "of the file)", "bad_csv", row=rows) from None


def _closed_cell(text: bytes, value: str, delimiter: str, start: int) -> tuple[int, int]:
    """Where the cell ``value`` (it holds a line break) is written in ``text`` from ``start`` on as a quoted
    cell that closes, and its length; ``(-1, 0)`` if nowhere.

    ``"``, the value with each ``"`` doubled, ``"``, then the delimiter, a line end or the
    end of the file; or, as pyarrow reads ``"a<newline>b" ,3``, the quoted part up to a
    closing quote and the rest of the value after it (no quote in that rest; the line
    breaks in the quoted part).

    Examples
    --------
    >>> _closed_cell(b'1,"a\\nb",2', "a\\nb", ",", 0), _closed_cell(b'1,"a\\nb" ,2', "a\\nb ", ",", 0)
    ((2, 5), (2, 6))
    >>> _closed_cell(b'1,"a\\nb,2', "a\\nb,2", ",", 0)
    (-1, 0)
    """
    ends = (delimiter.encode(), b"\n", b"\r", b"")
    last_break = max(value.rfind("\n"), value.rfind("\r"))
    for split in range(len(value), last_break, -1):  # the whole value quoted first: the usual case
        rest = value[split:]
        if '"' in rest:
            break
        written = b'"' + value[:split].encode("utf-8").replace(b'"', b'""') + b'"' + rest.encode("utf-8")
        at = text.find(written, start)
        while at >= 0 and text[at + len(written):at + len(written) + 1] not in ends:
            at = text.find(written, at + 1)
        if at >= 0:
            return at, len(written)
    return -1, 0


def _sniff_delimiter(path: Path, source: str, fmt: str) -> str:
    """The delimiter: a tab for ``.tsv``; else ``,`` unless the header line has no comma but tabs or semicolons
    (outside its quoted names).

    The file's first bytes are looked at first, to say in one line what a file named
    as text is instead: compressed (``gzip``, ``bzip2``, ``zstd``, ``lz4``, ``xz``),
    a zip archive or Excel workbook, a Parquet file, or UTF-16 text (a NUL byte
    beside each character). A ``.tsv`` file whose header and first row hold no tab
    but commas (or semicolons) is refused: read as one column, it would be misread;
    so is a file separated by ``|`` (its header and first row hold ``|`` and no other
    delimiter).
    """
    try:
        with _open_text(path) as stream:
            head = stream.read(1 << 16)
    except (pa.ArrowException, OSError) as exc:
        _refuse_misnamed_compression(path, source)
        raise _error(source, f"cannot be read: {first_line(exc)}", "unreadable_file") from None
    if path.suffix.lower() not in _CODECS:
        _check_not_binary(head, path, source)
    _refuse_utf16_or_32(head, source)
    lines = re.split(rb"\r\n|\r|\n", head, maxsplit=2)
    line = lines[0]
    excel = re.fullmatch(rb'(?:\xef\xbb\xbf)?"?sep=(.?)"?\s*', line, re.IGNORECASE)
    if excel is not None:  # read as the header, 'sep=;' was a table of columns 'sep=' and '' (no name)
        said = excel.group(1).decode("utf-8", "replace")
        raise _error(source, f"its first line {short_repr(line.decode('utf-8', 'replace').lstrip(chr(0xfeff)))} is "
                             f"a spreadsheet's note of the delimiter ({said!r}), not the header: delete that line",
                     "bad_csv", data_dependent=False)
    if fmt == "tsv":
        first = lines[1] if len(lines) > 1 else b""
        for other in (b",", b";"):
            if b"\t" not in line + first and other in line and other in first:
                at = path.name.lower().rfind(".tsv")
                name = f"{path.name[:at]}.csv{path.name[at + 4:]}"
                raise _error(source, f"is named .tsv (tab-separated) but its header and first row hold no tab and "
                                     f"{other.decode()!r} between the values: name it {name}", "bad_csv")
        return "\t"
    names = _outside_quotes(line)  # '"weight, kg";age' is separated by semicolons: its comma is in a name
    if b"," in names:
        return ","
    if b"\t" in names:
        return "\t"
    if b";" in names:
        return ";"
    if b"|" in names and b"|" in _outside_quotes(lines[1] if len(lines) > 1 else b""):
        # read as one column, every row one category: 'a|b' = '1|2'
        raise _error(source, "its header and first row hold no ',', tab or ';' but '|' between the values: "
                             "dprm reads comma-, tab- or semicolon-separated text; save it with commas", "bad_csv")
    return ","


def _outside_quotes(line: bytes) -> bytes:
    """The header line without its quoted names (where a delimiter is part of a name).

    Examples
    --------
    >>> _outside_quotes(b'"weight, kg";"say ""hi"", he said";age')
    b';;age'
    """
    return re.sub(rb'"[^"]*("|$)', b"", line)


def _refuse_misnamed_compression(path: Path, source: str) -> None:
    """Say what a file named as compressed (``.gz``, ``.bz2``, ``.zst``, ``.lz4``) that cannot be decompressed is
    instead, when its first bytes tell: lines of UTF-8 text, or data of another compression (its magic bytes).

    ``l.csv.gz`` holding plain text was ``cannot be read: zlib inflate failed: incorrect
    header check``; it is now ``is named .gz but is not gzip-compressed: it is text: name
    it l.csv``. A file that starts as its name says (a damaged one) is left to the caller.

    Examples
    --------
    >>> import bz2, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for name, data in (("a.csv.gz", b"id,x" + bytes([10])), ("b.csv.gz", bz2.compress(b"id,x"))):
    ...         _ = (Path(tmp) / name).write_bytes(data)
    ...         try:
    ...             _refuse_misnamed_compression(Path(tmp) / name, name)
    ...         except DataError as error:
    ...             print(error)
    a.csv.gz: is named .gz but is not gzip-compressed: it is text: name it a.csv
    b.csv.gz: is named .gz but is not gzip-compressed: it is bzip2-compressed: name it b.csv.bz2
    """
    suffix = path.suffix.lower()
    if suffix not in _CODECS:
        return
    try:
        with native_file(path) as stream:
            head = stream.read(1 << 16)
    except (pa.ArrowException, OSError):
        return
    magics = {ending: (magic, what) for magic, what, ending in _MAGIC if ending is not None}
    if head.startswith(magics[suffix][0]):
        return  # what its name says, damaged
    named = f"is named {path.suffix} but is not {magics[suffix][1]}"
    for magic, what, ending in _MAGIC:
        if head.startswith(magic) and _confirmed(magic, head, path):
            remedy = f": name it {path.stem}{ending}" if ending in _CODECS else ""
            raise _error(source, f"{named}: it is {what}{remedy}", "unsupported_file_type", data_dependent=False)
    if b"\n" not in head and b"\r" not in head:
        return  # not lines of text: some other damage
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not a character cut by the end of the bytes read
            return
    raise _error(source, f"{named}: it is text: name it {path.stem}", "unsupported_file_type", data_dependent=False)


def _check_not_binary(head: bytes, path: Path, source: str) -> None:
    """A one-line error when a file named as text starts as something else: compressed data, an archive, a Parquet
    file (its magic bytes), or UTF-16 text without a byte-order mark (a NUL byte beside each character).

    Examples
    --------
    >>> import gzip
    >>> try:
    ...     _check_not_binary(gzip.compress(b"id,a"), Path("l.csv"), "l.csv")
    ... except DataError as error:
    ...     print(error)
    l.csv: is gzip-compressed: name it l.csv.gz
    >>> try:
    ...     _check_not_binary("id,a".encode("utf-16-le"), Path("l.csv"), "l.csv")
    ... except DataError as error:
    ...     print(error)
    l.csv: is not UTF-8 text: it looks like UTF-16 (a NUL byte beside each character); save it as UTF-8
    """
    for magic, what, suffix in _MAGIC:
        if head.startswith(magic) and _confirmed(magic, head, path):
            if suffix in _CODECS:
                remedy = f"name it {path.name}{suffix}"
            elif suffix is not None:
                remedy = f"name it {path.stem}{suffix}"
            elif what.startswith("a zip"):
                remedy = "extract the CSV file (or save the sheet as CSV)"
            else:
                remedy = f"decompress it (or compress it with gzip: {path.name}.gz)"
            raise _error(source, f"is {what}: {remedy}", "unsupported_file_type", data_dependent=False)
    sample = head[:1024]
    sample = sample[:len(sample) - len(sample) % 2]
    if len(sample) >= 4 and not sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        half = len(sample) // 2
        if sample[1::2].count(0) >= 0.8 * half or sample[0::2].count(0) >= 0.8 * half:
            raise _error(source, "is not UTF-8 text: it looks like UTF-16 (a NUL byte beside each character); "
                                 "save it as UTF-8", "not_utf8", data_dependent=False)


#: The byte-order marks of the encodings a text file is saved in besides UTF-8 (UTF-32's first: its
#: little-endian mark starts with UTF-16's).
_OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32 (little-endian)"), (codecs.BOM_UTF32_BE, "UTF-32 (big-endian)"),
               (codecs.BOM_UTF16_LE, "UTF-16 (little-endian)"), (codecs.BOM_UTF16_BE, "UTF-16 (big-endian)"))


def _refuse_utf16_or_32(head: bytes, source: str) -> None:
    """Say that a text file (decompressed) starting with UTF-16's or UTF-32's byte-order mark is in that encoding.

    Excel's "Unicode text" and PowerShell save UTF-16 with a byte-order mark; it was
    ``is not UTF-8 text: bad byte in the header (line 1)``, which did not say what the
    file is (UTF-16 without a mark is said to look like it: :func:`_check_not_binary`).

    Examples
    --------
    >>> try:
    ...     _refuse_utf16_or_32("id,a".encode("utf-16"), "l.csv")
    ... except DataError as error:
    ...     print(error)
    l.csv: is not UTF-8 text: it is UTF-16 (little-endian), as its byte-order mark says; save it as UTF-8
    """
    for bom, what in _OTHER_BOMS:
        if head.startswith(bom):
            raise _error(source, f"is not UTF-8 text: it is {what}, as its byte-order mark says; save it as UTF-8",
                         "not_utf8", data_dependent=False)


def _confirmed(magic: bytes, head: bytes, path: Path) -> bool:
    """Whether a file starting with ``magic`` is that format, where text may start so too.

    ``PAR1`` (a gene's name) and ``BZh`` can begin a CSV header: a Parquet file also
    ends with ``PAR1``; a bzip2 stream goes on with a block size digit and a block's
    (or the end's) magic number. The other signatures hold bytes no UTF-8 header starts with.

    Examples
    --------
    >>> import bz2
    >>> _confirmed(b"BZh", bz2.compress(b"id,a"), Path("l.csv")), _confirmed(b"BZh", b"BZh9,x,y", Path("l.csv"))
    (True, False)
    """
    if magic == b"BZh":
        return head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")
    if magic == b"PAR1":
        try:
            with open(path, "rb") as file:
                file.seek(0, os.SEEK_END)
                file.seek(max(file.tell() - 4, 0))
                return file.read(4) == b"PAR1"
        except OSError:
            return False
    return True


def _parse_error(path: Path, delimiter: str, message: str, markers: tuple[str, ...]) -> tuple[str, int | None]:
    """Re-read on one thread to learn which row broke the parse: (text, row)."""
    bad: list[Any] = []

    def handler(row: Any) -> str:
        bad.append(row)
        return "error"

    parse = pacsv.ParseOptions(delimiter=delimiter, invalid_row_handler=handler, newlines_in_values=True)
    try:
        with _open_text(path) as stream:
            pacsv.read_csv(
                stream,
                read_options=pacsv.ReadOptions(use_threads=False, block_size=_block_size(path)),
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
        with _open_text(path) as stream:
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
        _refuse_invisible_characters(name, i, source)
    _refuse_names_equal_once_normalised(stripped, source)
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


#: Characters that show nothing where they stand (besides the format characters, Unicode category ``Cf``:
#: zero-width space U+200B, byte-order mark U+FEFF, soft hyphen U+00AD, ...): the Hangul fillers and the
#: blank Braille pattern.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: The controls of text direction (embeddings, overrides, isolates): a name holding one can show as another.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _invisible(character: str) -> bool:
    return unicodedata.category(character) == "Cf" or character in _BLANK_LETTERS


def _code_point(character: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``."""
    return f"U+{ord(character):04X} ({unicodedata.name(character, 'unnamed')})"


def column_name_key(name: str) -> str:
    """What a column's name is once its writing is left aside: Unicode-normalised (NFC) and without invisible
    characters (:func:`_invisible`).

    Two names of one key print alike (``café`` written with ``é`` or with ``e`` and a
    combining accent; ``x`` and ``x`` followed by a zero-width space): one file, or the
    two views, may not hold both.

    Examples
    --------
    >>> column_name_key("cafe\u0301"), column_name_key("a\u200bge\u00ad")
    ('café', 'age')
    """
    return "".join(c for c in unicodedata.normalize("NFC", name) if not _invisible(c))


def _refuse_invisible_characters(name: str, position: int, source: str) -> None:
    """Refuse a column name (the ``position``-th, from 0) that shows as another: made of invisible characters
    only (``unnamed_column``), starting or ending with one, or holding a control of text direction
    (``invisible_character``). One inside a name (a Persian zero-width non-joiner, an emoji's joiner, a soft
    hyphen) is kept, unless another name differs from it by such characters only
    (:func:`_refuse_names_equal_once_normalised`).

    Examples
    --------
    >>> for name in ("\u200b", "\ufeffid", "age\u00ad", "a\u202eb", "\u0646\u0645\u200c\u0647"):
    ...     try:
    ...         _refuse_invisible_characters(name, 1, "x.csv")
    ...     except DataError as error:
    ...         print(error.code, error)
    unnamed_column x.csv: column 2's name '\u200b' is invisible characters only (U+200B (ZERO WIDTH SPACE)); name the column
    invisible_character x.csv: column 2's name '\ufeffid' starts with the invisible character U+FEFF (ZERO WIDTH NO-BREAK SPACE); rename the column
    invisible_character x.csv: column 2's name 'age\xad' ends with the invisible character U+00AD (SOFT HYPHEN); rename the column
    invisible_character x.csv: column 2's name 'a\u202eb' holds the text-direction control U+202E (RIGHT-TO-LEFT OVERRIDE), which can show it as another name; rename the column
    """
    shown = short_text(ascii(name))
    hidden = [c for c in name if _invisible(c)]
    if not hidden:
        return
    if len(hidden) == len(name):
        listed = ", ".join(_code_point(c) for c in dict.fromkeys(hidden))
        raise _error(source, f"column {position + 1}'s name {shown} is invisible characters only ({listed}); name "
                             f"the column", "unnamed_column", column=name, data_dependent=False)
    for end, character in (("starts", name[0]), ("ends", name[-1])):
        if _invisible(character):
            raise _error(source, f"column {position + 1}'s name {shown} {end} with the invisible character "
                                 f"{_code_point(character)}; rename the column", "invisible_character", column=name,
                         data_dependent=False)
    control = next((c for c in name if c in _BIDI_CONTROLS), None)
    if control is not None:
        raise _error(source, f"column {position + 1}'s name {shown} holds the text-direction control "
                             f"{_code_point(control)}, which can show it as another name; rename the column",
                     "invisible_character", column=name, data_dependent=False)


def _refuse_names_equal_once_normalised(names: Sequence[str], source: str) -> None:
    """Refuse two column names written differently that are the same text once Unicode-normalised (NFC).

    ``café`` can be written with the letter ``é`` or with ``e`` and a combining accent:
    the two names print alike, yet were two columns (and a types file or a query naming
    one missed the other). Not the same name either (renaming later copies ``name.1``
    would not say which is which): the file must spell one of them otherwise.

    Examples
    --------
    >>> try:
    ...     _refuse_names_equal_once_normalised(["caf\u00e9", "cafe\u0301"], "x.csv")
    ... except DataError as error:
    ...     print(error)
    x.csv: columns 1 and 2 are both named 'café', written with different Unicode code points ('caf\\xe9' and \
'cafe\\u0301': an accent as a letter of its own or as a combining mark): rename one, or write both alike
    """
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        key = column_name_key(name)
        j = seen.setdefault(key, i)
        if j != i and names[j] != name and unicodedata.normalize("NFC", names[j]) != unicodedata.normalize("NFC", name):
            hidden = [c for c in names[j] + name if _invisible(c)]
            raise _error(source, f"columns {j + 1} and {i + 1} are both named {short_repr(key)} once invisible "
                                 f"characters are left out ({short_text(ascii(names[j]))} and "
                                 f"{short_text(ascii(name))}: {_code_point(hidden[0])}): rename one, or write both "
                                 f"alike", "duplicate_column", column=name, data_dependent=False)
        if j != i and names[j] != name:
            raise _error(source, f"columns {j + 1} and {i + 1} are both named {short_repr(key)}, written with "
                                 f"different Unicode code points ({short_text(ascii(names[j]))} and "
                                 f"{short_text(ascii(name))}: an accent as a letter of its own or as a combining "
                                 f"mark): rename one, or write both alike", "duplicate_column", column=name,
                         data_dependent=False)


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
                col = _shortest_float64(col)
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
        elif pa.types.is_duration(typ):
            # a number of seconds, whatever the unit it is stored in: its integer alone ('1000000000' for a
            # second in nanoseconds) named no unit, and the same durations stored in two units differed
            col = pc.divide(pc.cast(col.cast(pa.int64()), pa.float64()), float(_PER_SECOND[typ.unit]))
            raw.durations.append(name)
        elif pa.types.is_temporal(typ):
            # dates and times are categories, in ISO text, without the trailing zeros of a fraction
            # of a second ("2020-03-04 00:00:00", "...07.25", not "...07.250000000" from nanoseconds),
            # also before a time zone ("...00:00:00+0100", not "...00:00:00.000000+0100")
            col = pc.replace_substring_regex(col.cast(pa.string()), pattern=r"(\.\d*[1-9])0+([+-]\d{4}|Z)?$",
                                             replacement=r"\1\2")
            col = pc.replace_substring_regex(col, pattern=r"\.0+([+-]\d{4}|Z)?$", replacement=r"\1")
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


def _shortest_float64(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A float32 (or float16) column as the float64 numbers its values are written as (their shortest decimals).

    A float32 value written ``1.1`` is the binary number 1.100000023841858..., which as
    a float64 is outside the declared bounds ``[0, 1.1]`` and the category
    ``1.100000023841858`` (not the declared ``1.1``); numpy, pandas and a spreadsheet
    show it as ``1.1``. Each value becomes the float64 of its shortest decimal text
    (numpy's, exact for the narrow type: ``float32(1.1)`` reads back as itself); a whole
    number below 2**24 stays itself (float16's ``65504``, whose shortest float16 text
    ``6.55e+04`` is another float64).

    Examples
    --------
    >>> import numpy as np
    >>> column = pa.chunked_array([pa.array(np.array([1.1, 0.1], dtype=np.float32)), pa.array([None], pa.float32())])
    >>> column.cast(pa.float64()).to_pylist()[:1], _shortest_float64(column).to_pylist()
    ([1.100000023841858], [1.1, 0.1, None])
    >>> _shortest_float64(pa.chunked_array([pa.array(np.array([65504, 0.1, -0.0], dtype=np.float16))])).to_pylist()
    [65504.0, 0.1, -0.0]
    """
    chunks = []
    for chunk in column.chunks:
        values = chunk.to_numpy(zero_copy_only=False)  # a missing value as NaN, masked again below
        missing = chunk.is_null().to_numpy(zero_copy_only=False)
        exact = values.astype(np.float64)
        shortest = values.astype(str).astype(np.float64)
        with np.errstate(invalid="ignore"):
            # a whole number below 2**24 is exact in float32 and float16 alike: as written (float16's 65504,
            # whose shortest float16 text is 6.55e+04)
            whole = (exact == np.round(exact)) & (np.abs(exact) < 2.0 ** 24)
        chunks.append(pa.array(np.where(whole, exact, shortest), mask=missing, type=pa.float64()))
    return pa.chunked_array(chunks, type=pa.float64())


#: A duration's units per second, by its unit.
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


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
