"""A table's cells as written, read from a CSV or TSV file in chunks (the itemset miner's input).

The itemset miner reads values as text (``"1"`` and ``"1.0"`` are two categories),
so it reads with pyarrow (every column as ``str``; the empty cell missing, and the
declared markers, ``na_values``, compared exactly as :mod:`dprm.data.reading` compares
them: :func:`dprm.data.reading.missing_markers`) rather than through the typed reader
of :mod:`dprm.data.reading`. It shares that reader's
file rules (:func:`dprm.data.reading.open_text_table`: file types, ``.gz`` / ``.bz2`` /
``.zst`` / ``.lz4`` compression, the delimiter read off the header, one-line errors)
and its header rule (:func:`dprm.data.reading.check_column_names`: the names as
written, none empty or repeated).

pandas is imported only when a chunk is made a DataFrame or an error is worded
(about 0.35 s of a command's start-up): :func:`read_text_header` takes the names as
pyarrow parses them (the same as pandas' on every well-formed header, tested) and
asks pandas only when pyarrow fails, so that the error is the one pandas' reading
words; :func:`read_text_arrow` gives a small file's cells as pyarrow columns, for
:func:`dprm.itemsets.sources.table_codes`, which encodes them without pandas.

pyarrow parses a file in blocks (64 KiB for the header, 4 MiB for the rows), cut at
the line ends outside quotes (``newlines_in_values``: a quoted line break at a block's
end made a row of one field, 'row N has 1 fields but the header has 3'; no slower on
one thread), and refuses a header or a row longer than one block; every reading here then starts
again with blocks 16 times larger (up to pyarrow's largest, 2 GiB), skipping the rows
it has already given (:func:`_larger_block`): a file of ordinary rows is read as
before, a long cell or a header of many thousand columns is read too, as ``dprm mine``
reads it. A value holding a NUL character is refused as ``dprm mine`` refuses it
(:func:`dprm.data.reading.nul_value_error`; a column's name: by
:func:`~dprm.data.reading.check_column_names`), and so is a quote that opens and never
closes, which took the rest of the file (or the lines up to a later quote) into one
cell: the cells holding a line break are gathered batch by batch
(:func:`dprm.data.reading.line_break_cells`) and must be found in the file as quoted
cells that close (:func:`dprm.data.reading.check_quotes_close`), and a last line
without a line end must not open a quote (:func:`dprm.data.reading.check_last_line_closes`),
before the last chunk is given: one line naming the file and the row, as ``dprm mine``
says it. :func:`read_text_arrow` leaves a file with a line break or another control
character in a cell, or an open quote on its last line, to :func:`read_text_chunks`.

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

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from dprm.data.arrow_arrays import to_numpy
from dprm.data.reading import (check_column_names, check_last_line_closes, check_quotes_close, first_line,
                               first_rows, line_break_cells, missing_markers, nul_value_error, open_text_table)
from dprm.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

# bytes parsed at a time
_BLOCK_SIZE = 1 << 22
#: Bytes parsed to read the header (the first block: the header and the first rows).
_HEADER_BLOCK_SIZE = 1 << 16
#: The largest block pyarrow's CSV reader takes (its block size is a 32-bit integer).
_MAX_BLOCK_SIZE = (1 << 31) - 1
#: pyarrow's words when a row (``straddles``) or the header (``Empty ... block``) is longer than one block.
_TOO_LONG_FOR_A_BLOCK = ("straddles two block boundaries", "Empty CSV file or block")

__all__ = ["read_text_arrow", "read_text_chunks", "read_text_frame", "read_text_header"]


def read_text_header(path: Path, name: str) -> list[str]:
    """The column names as written (checked: none empty, none repeated once stripped, none holding a NUL)."""
    try:
        names = _names_as_parsed(path, name)
    except Exception:  # noqa: BLE001 - pandas' reading below words the error
        names = None
    if names is not None:
        try:
            return check_column_names(names, name)
        except DataError as error:
            if error.code == "nul_character":  # pandas' reading drops the NUL: "a\0" would be "a"
                raise
            # the error is worded from pandas' reading of the header, below
    import pandas as pd

    stream, delimiter = open_text_table(path, name)
    with stream, _reading(name, []):
        # header=None: pandas would rename a repeated name "a.1" and an empty one "Unnamed: 0"
        header = pd.read_csv(stream, sep=delimiter, header=None, nrows=1, dtype=str, keep_default_na=False)
    return check_column_names(header.iloc[0].tolist(), name)


def read_text_chunks(path: Path, name: str, rows: int, na_values: Sequence[str] | None = None
                     ) -> Iterator[pd.DataFrame]:
    """The rows in chunks of ``rows``, every cell a ``str`` or missing (the empty cell, or one of ``na_values``).

    A row with more or fewer fields than the header is a :class:`DataError` naming it, and so is a quote that
    opens and never closes (module notes), before the last chunk is given.
    """
    import pandas as pd

    columns = read_text_header(path, name)
    written = _names_as_parsed(path, name)
    short: list[Any] = []

    def invalid_row(row: Any) -> str:
        short.append(row)
        return "error"

    convert = pacsv.ConvertOptions(column_types={c: pa.string() for c in written},
                                   null_values=list(missing_markers(na_values)),
                                   strings_can_be_null=True, quoted_strings_can_be_null=True)
    read = 0  # data rows before the batch
    broken: list[tuple[int, int, str]] = []  # the cells holding a line break: (row from 0, column from 0, text)
    with _reading(name, short, columns):
        rest = None  # rows of the previous batch not yet yielded
        for batch in _batches(path, name, _BLOCK_SIZE, invalid_row, convert):
            _refuse_nul(batch, name, columns, read)
            broken.extend((read + row, column, text)
                          for row, column, text in line_break_cells(pa.Table.from_batches([batch])))
            read += batch.num_rows
            frame = _frame(batch, columns)
            if rest is not None:
                frame = pd.concat([rest, frame], ignore_index=True)
            whole = len(frame) - len(frame) % rows
            for start in range(0, whole, rows):
                yield frame.iloc[start:start + rows].reset_index(drop=True)
            rest = frame.iloc[whole:] if whole < len(frame) else None
        _check_quotes(path, name, columns, broken, read)
        if rest is not None:
            yield rest.reset_index(drop=True)


def _check_quotes(path: Path, name: str, columns: list[str], broken: list[tuple[int, int, str]], rows: int) -> None:
    """Refuse a quote that opens and never closes (module notes), as :func:`dprm.data.reading.read_table` does:
    ``broken`` are the file's cells holding a line break, ``rows`` its data rows."""
    if not broken and not rows:
        return
    stream, delimiter = open_text_table(path, name)
    stream.close()
    if broken:
        check_quotes_close(broken, rows, columns, path, name, delimiter)
    else:
        check_last_line_closes(path, name, delimiter, rows)


def read_text_arrow(path: Path, name: str, max_rows: int, *, dictionary: bool = False
                    ) -> tuple[list[str], list[pa.ChunkedArray]] | None:
    """The checked header and every column's cells (pyarrow strings, the empty cell null) of a small file.

    ``dictionary``: the cells dictionary-encoded as they are read (each chunk its own
    dictionary of the texts it holds; no ``pyarrow.compute``, 0.06 s to import).

    None when the file has more than ``max_rows`` data rows, none, or a row with
    more or fewer fields than the header, or cannot be read: then
    :func:`read_text_chunks` reads it and words any error.
    """
    try:
        written = _names_as_parsed(path, name)
        columns = check_column_names(written, name)
    except (DataError, pa.ArrowException, OSError, UnicodeDecodeError):
        return None
    invalid: list[Any] = []

    def invalid_row(row: Any) -> str:
        invalid.append(row)
        return "skip"

    batches, rows = [], 0
    cell_type = pa.dictionary(pa.int32(), pa.string()) if dictionary else pa.string()
    convert = pacsv.ConvertOptions(column_types={c: cell_type for c in written}, null_values=[""],
                                   strings_can_be_null=True, quoted_strings_can_be_null=True)
    try:
        for batch in _batches(path, name, _BLOCK_SIZE, invalid_row, convert):
            rows += batch.num_rows
            if rows > max_rows or invalid:
                return None
            batches.append(batch)
    except (DataError, pa.ArrowException, OSError, EOFError, UnicodeDecodeError):
        return None
    if invalid or rows == 0:
        return None
    table = pa.Table.from_batches(batches)
    if any(_control_bytes(chunk) for column in table.columns for chunk in column.chunks):
        return None  # a line break in a cell: its quote is checked by read_text_chunks
    try:
        _check_quotes(path, name, columns, [], rows)
    except DataError:
        return None
    return columns, [table.column(j) for j in range(table.num_columns)]


def _control_bytes(chunk: pa.Array) -> bool:
    """Whether a chunk of text (or its dictionary) holds a line break or another byte below ``\x0e``, as
    :func:`dprm.data.reading.line_break_cells` looks for them (numpy on the bytes, no ``pyarrow.compute``)."""
    texts = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
    data = texts.buffers()[2]
    return data is not None and bool(np.any(np.frombuffer(data, np.uint8) <= 13))


def _names_as_parsed(path: Path, name: str) -> list[str]:
    """The header as pyarrow reads it (the keys of its column types)."""
    block_size = _HEADER_BLOCK_SIZE
    with _reading(name, []):
        while True:
            stream, delimiter = open_text_table(path, name)
            try:
                with stream:
                    reader = pacsv.open_csv(
                        stream, read_options=pacsv.ReadOptions(use_threads=False, block_size=block_size),
                        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True,
                                                         invalid_row_handler=lambda _: "skip"))
                    return reader.schema.names
            except pa.ArrowInvalid as error:
                block_size = _larger_block(block_size, error)


def _batches(path: Path, name: str, block_size: int, invalid_row: Callable[[Any], str],
             convert: pacsv.ConvertOptions) -> Iterator[pa.RecordBatch]:
    """The file's data rows as pyarrow reads them in blocks of ``block_size`` bytes, larger where a row needs it.

    When a row (or the header) is longer than a block, the file is read again from its
    start with larger blocks (:func:`_larger_block`) and the rows already given are
    skipped. ``invalid_row`` is pyarrow's handler of a row with too many or too few
    fields; the caller reports pyarrow's errors (:class:`_reading`).
    """
    given = 0  # data rows yielded
    while True:
        stream, delimiter = open_text_table(path, name)
        skip = given
        try:
            with stream:
                reader = pacsv.open_csv(
                    stream, read_options=pacsv.ReadOptions(use_threads=False, block_size=block_size),
                    parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True,
                                                     invalid_row_handler=invalid_row),
                    convert_options=convert)
                for batch in reader:
                    if skip >= batch.num_rows:
                        skip -= batch.num_rows
                        continue
                    batch, skip = batch.slice(skip), 0
                    given += batch.num_rows
                    yield batch
            return
        except pa.ArrowInvalid as error:
            block_size = _larger_block(block_size, error)


def _larger_block(block_size: int, error: pa.ArrowInvalid) -> int:
    """The block size to read again with after ``error``: 16 times ``block_size``; ``error`` raised again when
    it is not a row or header longer than a block, or the block is already pyarrow's largest.

    Examples
    --------
    >>> _larger_block(1 << 16, pa.ArrowInvalid("straddling object straddles two block boundaries"))
    1048576
    >>> try:
    ...     _larger_block(1 << 16, pa.ArrowInvalid("CSV parse error: Expected 2 columns, got 3"))
    ... except pa.ArrowInvalid as error:
    ...     print(error)
    CSV parse error: Expected 2 columns, got 3
    """
    if block_size >= _MAX_BLOCK_SIZE or not any(words in str(error) for words in _TOO_LONG_FOR_A_BLOCK):
        raise error
    return min(block_size * 16, _MAX_BLOCK_SIZE)


def _refuse_nul(batch: pa.RecordBatch, name: str, columns: list[str], before: int) -> None:
    """A :class:`DataError` naming the column and row (``before`` data rows precede the batch) of the first
    value that holds a NUL character, as ``dprm mine`` refuses it."""
    import pyarrow.compute as pc  # the chunked reading's: pandas is imported anyway

    for column, cells in zip(columns, batch.columns):
        nul = pc.match_substring(cells, "\x00")
        if pc.any(nul).as_py():
            raise nul_value_error(name, column, before + first_rows(to_numpy(nul, fill=False), 1)[0])


def _frame(batch: pa.RecordBatch, columns: list[str]) -> pd.DataFrame:
    frame = batch.to_pandas()
    frame.columns = columns
    return frame.astype(object).where(frame.notna(), np.nan)


def read_text_frame(path: Path, name: str, *, allow_empty: bool = False,
                    na_values: Sequence[str] | None = None) -> pd.DataFrame:
    """The whole table (see :func:`read_text_chunks`; ``na_values``: the markers of a missing value).

    A file without data rows is a :class:`DataError`, unless ``allow_empty`` (a private
    fit over declared domains, which releases noise only on no rows): then the empty
    table with the header's columns.
    """
    import pandas as pd

    chunks = list(read_text_chunks(path, name, 1 << 16, na_values))
    if not chunks or sum(len(c) for c in chunks) == 0:
        if allow_empty:
            return pd.DataFrame({c: pd.Series([], dtype=object) for c in read_text_header(path, name)})
        raise DataError(f"{name}: the file has no data rows", code="no_rows", file=name)
    return pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]


#: pyarrow's words for a cell that is not UTF-8, its column from 0 and its row from 1 counting the header.
_NOT_UTF8 = re.compile(r"In CSV column #(\d+): Row #(\d+): CSV conversion error to string: invalid UTF8 data")


class _reading:
    """Turn the errors of reading ``name`` into one-line :class:`DataError`s (``invalid``: rows pyarrow refused;
    ``columns``: the header, to name a column)."""

    def __init__(self, name: str, invalid: list[Any], columns: list[str] | None = None) -> None:
        self.name = name
        self.invalid = invalid
        self.columns = columns

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, error: BaseException | None, _traceback: object) -> bool:
        name = self.name
        if error is None or isinstance(error, DataError):
            return False
        import pandas as pd

        if isinstance(error, pd.errors.EmptyDataError):
            raise DataError(f"{name}: the file has no header line", code="empty_file", file=name,
                            data_dependent=False) from None
        if isinstance(error, pd.errors.ParserError | UnicodeDecodeError):
            raise DataError(f"{name}: cannot be parsed as CSV ({first_line(error)})", code="bad_csv",
                            file=name) from None
        if self.invalid and self.invalid[0].number is not None:
            row = self.invalid[0]  # numbered from 1 with the header
            raise DataError(f"{name}: row {row.number - 1} has {row.actual_columns} fields but the header has "
                            f"{row.expected_columns}", code="bad_csv", file=name, row=row.number - 1) from None
        not_utf8 = _NOT_UTF8.search(str(error)) if isinstance(error, pa.ArrowException) else None
        if not_utf8 is not None:  # as dprm classify and mine say it: the column's name, rows from 1 without the header
            column, row = int(not_utf8.group(1)), int(not_utf8.group(2)) - 1
            where = f"column {self.columns[column]!r}" if self.columns and column < len(self.columns) else \
                f"column {column + 1}"
            raise DataError(f"{name}: {where}, row {row}: a value is not UTF-8 text", code="not_utf8", file=name,
                            row=row) from None
        if isinstance(error, pa.ArrowException | OSError | EOFError):  # a damaged compressed file
            raise DataError(f"{name}: cannot be read ({first_line(error)})", code="unreadable_file",
                            file=name) from None
        return False

