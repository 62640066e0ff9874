r"""Sharded data: each shard reads its own part of the files, and the shards agree on one schema.

A sharded engine never gathers the rows in one place. Shard ``i`` of ``N`` reads:

* **a list of part files** (``left`` and ``right`` lists of the same length, row-aligned
  pair by pair): the pairs ``i, i + N, i + 2N, ...``;
* **one Parquet file per view**: its row groups ``i, i + N, ...`` (both files must have
  row-aligned row groups, as a writer of both views makes them);
* **one CSV file per view**: the ``i``-th of ``N`` equal runs of rows (each shard
  counts the rows itself, streaming, so no process needs the number of rows first).
  The rows are those the loader reads (:func:`_records`): blank lines skipped, lines
  ending in ``\n``, ``\r\n`` or ``\r``, a quoted cell's line breaks kept in its row.

Each part is loaded by :func:`~dprm.data.load_two_view` exactly as a whole file would
be (the same types file, missing-value markers and messages, which name the part).

**One schema for all shards.** The literal tables of all shards must be the same:
the same attributes, kinds, categories (codes) and numeric grid. A shard's schema is
summarised (:func:`summarise`: names, kinds, declared or inferred domains, constant
columns; never a row) and the driver merges the summaries (:func:`merge_schemas`):

* a declared column (types file) has its declared type and domain everywhere;
* an inferred numeric column's bounds are the smallest and largest of the shards'
  bounds (cut at every whole number when each shard's values are whole numbers and
  those bounds are close: :func:`~dprm.data.encoding.inferred_transform`), and an inferred categorical column's categories the union of the shards'
  categories in the loader's order (the numbers first, in numeric order, then the other
  texts in text order: :func:`~dprm.data.category_text.category_order`): exactly what loading all the rows at once infers;
* an undeclared column is left out as constant when it is constant (or empty) in every
  shard with the same single value, as loading all rows would; a shard where it is
  empty (all values missing) does not vote on its kind or domain;
* an undeclared column of numbers that holds only 0 and 1 in some shards (read Boolean
  there) and other numbers in others is numeric, as loading all the rows reads it
  (:func:`_zeros_and_ones_as_numbers`);
* an undeclared column whose inferred kind otherwise differs between shards (numbers in
  one, words in another), or whose Boolean words are of different vocabularies (``yes,
  no`` in one, ``true, false`` in another: text in all the rows), cannot be merged from
  summaries alone: the run stops with a one-line error asking to declare that column in
  the types file.

Shards load with ``keep_constant=True`` (:func:`~dprm.data.load_two_view`) so that a
column constant within one part is described and kept until the merge says.

Each shard then adopts the merged schema (:func:`adopt_schema`: category codes
remapped, domains replaced; the values are not read again). What the merge costs: one
round trip of summaries (a few numbers per column), no second read of the data. A
private run needs declared domains anyway (its thresholds come from public bounds),
and then the merge only checks.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind, Domain, TwoViewData, View
from dprm.data.category_text import category_order
from dprm.data.encoding import inferred_transform
from dprm.data.inference import boolean_in_all_parts
from dprm.data.loading import FirstColumns, left_out_notes, load_two_view, position_notes
from dprm.data.reading import data_file_format, first_line, native_file, open_text_table
from dprm.engine.shard_ids import ROW_BITS, ShardIds
from dprm.errors import ERROR_CODES, DataError, DprmError, ParameterError

__all__ = ["ShardSpec", "ColumnSummary", "ViewSummary", "read_shard", "read_shard_and_ids", "read_shard_part",
           "first_summary", "first_keys", "first_column_notes",
           "FileStamp", "file_stamp", "check_same_files", "summarise",
           "merge_schemas", "adopt_schema", "schema_only", "concatenate"]


@dataclass(frozen=True)
class ShardSpec:
    """What every shard is told: where the data is and how to load it.

    ``left`` and ``right`` are one path each, or lists of part files of the same
    length; ``load_options`` are keyword arguments of :func:`~dprm.data.load_two_view`.
    """

    left: tuple[str, ...]
    right: tuple[str, ...]
    load_options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, left: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
           right: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], **load_options: Any) -> "ShardSpec":
        def paths(value: Any) -> tuple[str, ...]:
            if isinstance(value, (str, os.PathLike)):
                return (os.fspath(value),)
            return tuple(os.fspath(v) for v in value)

        spec = cls(paths(left), paths(right), dict(load_options))
        if not spec.left or len(spec.left) != len(spec.right):
            raise ParameterError(f"the left and right views must be given as the same number of files, not "
                                 f"{len(spec.left)} and {len(spec.right)}")
        return spec


@dataclass(frozen=True)
class ColumnSummary:
    """One attribute of one shard, without its values.

    ``constant``: fewer than two distinct values in this shard, ``value`` then its
    value (None when ``empty``: every value missing). ``whole``: a numeric column
    whose every value in this shard is a whole number (an undeclared one is cut at
    every whole number when all its rows' are and their range is short:
    :func:`~dprm.data.encoding.inferred_transform`).
    """

    name: str
    kind: AttributeKind
    domain: Domain
    constant: bool = False
    empty: bool = False
    value: float | None = None
    whole: bool = False
    spellings: tuple[bool, frozenset[str]] | None = None


@dataclass(frozen=True)
class ViewSummary:
    """The attributes (in order) and constant columns of one view of one shard, and its loader's notes.

    ``notes`` name the user's file and its rows (:func:`read_shard`); merged
    (:func:`merge_schemas`), they are what loading all the rows at once notes.
    """

    attributes: tuple[ColumnSummary, ...]
    constant: tuple[str, ...]
    source: str
    notes: tuple[str, ...] = ()


# -- reading a shard's part -----------------------------------------------------------------


def read_shard(spec: ShardSpec, shard: int, n_shards: int, workdir: str | None = None) -> TwoViewData | None:
    """Load shard ``shard`` of ``n_shards`` (None when it has no rows to read).

    Runs where the shard lives (a Ray actor); it reads only its own part. Its notes
    and errors name the user's files and their rows, as loading the whole files
    would (never the temporary file of a slice, nor a row number within it); its
    notes leave out constant columns, which only the merge of all shards can tell
    (:func:`merge_schemas`).
    """
    return read_shard_and_ids(spec, shard, n_shards, workdir)[0]


def read_shard_and_ids(spec: ShardSpec, shard: int, n_shards: int,
                       workdir: str | None = None) -> tuple[TwoViewData | None, ShardIds | None]:
    """:func:`read_shard`, and the part's ids with their rows' positions in the files (None without an id column).

    The shards check with these that no id is in two of them
    (:mod:`dprm.engine.shard_ids`): loading checks each part alone.
    """
    data, ids, _, _, late = read_shard_part(spec, shard, n_shards, workdir)
    if late is not None:
        raise late
    return data, ids


#: What identifies one version of a file: device, inode, size in bytes and modification time (ns).
FileStamp = tuple[int, int, int, int]


def file_stamp(path: str) -> FileStamp | None:
    """The :data:`FileStamp` of ``path`` now (None when it cannot be looked up: the loader says why)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _changed(path: str) -> DataError:
    return DataError(f"{path}: the file changed while the shards of the Ray engine read it (each shard reads its "
                     f"own part: parts of different versions would count some rows twice and others not at all); "
                     f"run again once it no longer changes", code="file_changed", file=path, data_dependent=False)


def check_same_files(stamps: Sequence[dict[str, FileStamp | None]], places: Sequence[Any] | None = None) -> None:
    """Refuse files that the shards saw in different versions (each shard's :func:`read_shard_part` stamps).

    ``places[i]`` says where shard ``i`` ran (a machine): only the stamps of shards in one
    place are compared, as the same file on two machines is two files (each machine's copy
    has its own inode and times). Raises :class:`~dprm.errors.DataError` (code
    ``file_changed``) naming the first file seen in two versions.

    Examples
    --------
    >>> check_same_files([{"a.csv": (1, 2, 30, 4)}, {"a.csv": (1, 2, 30, 4)}])
    >>> check_same_files([{"a.csv": (1, 2, 30, 4)}, {"a.csv": (7, 9, 30, 6)}], places=["node 1", "node 2"])
    >>> check_same_files([{"a.csv": (1, 2, 30, 4)}, {"a.csv": (1, 2, 45, 5)}])
    Traceback (most recent call last):
    ...
    dprm.errors.DataError: a.csv: the file changed while the shards of the Ray engine read it (each shard reads \
its own part: parts of different versions would count some rows twice and others not at all); run again once it \
no longer changes
    """
    seen: dict[tuple[Any, str], FileStamp | None] = {}
    for place, shard in zip(places if places is not None else [None] * len(stamps), stamps):
        for path, stamp in shard.items():
            if seen.setdefault((place, path), stamp) != stamp:
                raise _changed(path)


def read_shard_part(spec: ShardSpec, shard: int, n_shards: int, workdir: str | None = None
                    ) -> tuple[TwoViewData | None, ShardIds | None, dict[str, FileStamp | None], FirstColumns | None,
                               DprmError | None]:
    """:func:`read_shard_and_ids`, the :data:`FileStamp` of each file the shard read, its part's first columns,
    and the error of building its columns (None when they load).

    The first columns (rows matched by position; None with ids, or no rows) are decided
    on all the rows by the driver (:func:`first_column_notes`), not by each part's loader.

    Loading all the rows checks the ids and the first columns before it builds any column
    (a value outside its declared bounds): a part whose columns fail to build gives its ids
    and first columns and that error (``data`` None), for the driver to raise once the ids
    and first columns of all the parts are checked; so does a part whose ids repeat (the
    driver's check of all the parts' ids then says every repeated id, as loading all the
    rows does). An error before (reading a file, an id missing) is raised here.

    A file that changed while this shard read it is refused here (:class:`~dprm.errors.DataError`,
    code ``file_changed``, also in place of the loader's error about a file that changed); the
    stamps let the driver refuse a file that two shards read in different versions
    (:func:`check_same_files`): a CSV file's shards each count its rows, and a shard that counted
    the rows of another version than its neighbour would read rows that overlap or leave a gap.
    """
    if len(spec.left) > 1:
        paths = [path for pair in list(zip(spec.left, spec.right))[shard::n_shards] for path in pair]
    else:
        paths = [spec.left[0], spec.right[0]]
    before = {path: file_stamp(path) for path in paths}
    try:
        data, ids, first, late = _read_shard_and_ids(spec, shard, n_shards, workdir)
    except DprmError as error:
        failure: DprmError = error
    else:
        _check_unchanged(before)
        return data, ids, before, first, late
    _check_unchanged(before)  # a file that changed: said instead of the loader's words about what it read
    raise failure


def _check_unchanged(before: dict[str, FileStamp | None]) -> None:
    for path, stamp in before.items():
        if file_stamp(path) != stamp:
            raise _changed(path)


def _read_shard_and_ids(spec: ShardSpec, shard: int, n_shards: int, workdir: str | None = None
                        ) -> tuple[TwoViewData | None, ShardIds | None, FirstColumns | None, DprmError | None]:
    ids: list[ShardIds] = []
    firsts: list[FirstColumns] = []
    matched: list[tuple[np.ndarray | None, tuple[int, str] | None]] = []
    late: DprmError | None = None
    parts = []
    if len(spec.left) > 1:
        numbered = list(enumerate(zip(spec.left, spec.right)))[shard::n_shards]
        for number, (left, right) in numbered:
            try:
                parts.append(_without_constant_notes(load_two_view(left, right, keep_constant=True,
                                                                   first_columns=firsts, matched=matched,
                                                                   boolean_spellings=True, **spec.load_options)))
            except DprmError as error:
                if len(matched) <= len(parts):  # before its rows were matched: said as it is
                    raise
                late = error  # its columns: said once the ids and first columns of all parts are checked
            part_ids, id_column = matched[-1]
            if part_ids is not None and id_column is not None:
                rows = (np.int64(number) << ROW_BITS) + np.arange(len(part_ids), dtype=np.int64)
                ids.append(ShardIds(part_ids, rows, *id_column))
            if late is not None:
                break
    else:
        with tempfile.TemporaryDirectory(dir=workdir) as folder:
            files = [_slice(path, side, shard, n_shards, Path(folder))
                     for side, path in (("left", spec.left[0]), ("right", spec.right[0]))]
            if files[0] is None or files[1] is None:
                return None, None, None, None
            try:
                data = load_two_view(files[0].path, files[1].path, keep_constant=True, first_columns=firsts,
                                     matched=matched, boolean_spellings=True, **spec.load_options)
            except DprmError as error:
                if not matched:  # before its rows were matched: said as it is
                    raise _in_files(error, files, shard, n_shards) from None
                late = _in_files(error, files, shard, n_shards)
            else:
                parts = [_in_file_terms(_without_constant_notes(data), files)]
            firsts = [FirstColumns((files[0].original, files[1].original), f.names, f.undeclared, f.keys, f.boolean,
                                   f.spellings) for f in firsts]
            part_ids, id_column = matched[0]
            if part_ids is not None and id_column is not None:
                ids.append(ShardIds(part_ids, files[id_column[0]].file_rows(len(part_ids)), *id_column))
    if not parts and late is None:
        return None, None, None, None
    first = None if not firsts else FirstColumns(
        firsts[0].sources, firsts[0].names, firsts[0].undeclared,
        tuple(None if any(f.keys[s] is None for f in firsts)  # type: ignore[arg-type]
              else [k for f in firsts for k in f.keys[s]] for s in (0, 1)),  # type: ignore[union-attr]
        tuple(boolean_in_all_parts([f.spellings[s] for f in firsts]) for s in (0, 1)),  # type: ignore[arg-type]
        tuple(_joined_spellings([f.spellings[s] for f in firsts]) for s in (0, 1)))  # type: ignore[arg-type]
    found = None if not ids else ShardIds(np.concatenate([i.keys for i in ids]),
                                          np.concatenate([i.positions for i in ids]), ids[0].side, ids[0].column)
    if late is not None:
        return None, found, first, late
    if len(parts) == 1:
        return parts[0], found, first, None
    merged = merge_schemas([[summarise(p.views[s]) for p in parts] for s in (0, 1)])
    return concatenate([adopt_schema(p, merged) for p in parts]), found, first, None


# -- first columns of views matched by position ---------------------------------------------


def first_summary(first: FirstColumns | None) -> tuple[FirstColumns, int, bool] | None:
    """A shard's first columns without their values: which could be ids, its number of rows, and whether
    both hold the same values row by row (None: no rows, or rows matched by ids).

    The values stay in the shard; :func:`~dprm.engine.shard_ids.deal_keys` deals them shard to shard.
    """
    if first is None:
        return None
    left, right = first.keys
    rows = len(left if left is not None else right or [])
    kept = FirstColumns(first.sources, first.names, first.undeclared,
                        tuple(None if k is None else [] for k in first.keys), first.boolean,  # type: ignore[arg-type]
                        first.spellings)
    return kept, rows, left is not None and left == right


def first_keys(first: FirstColumns | None) -> tuple[np.ndarray | None, np.ndarray | None] | None:
    """A shard's first columns' texts (a view's None: its column cannot be an id), to deal into buckets."""
    if first is None:
        return None
    left, right = (None if k is None else np.array(k, dtype=object) for k in first.keys)
    return left, right


def first_column_notes(found: Sequence[tuple[FirstColumns, int, bool] | None],
                       facts: Sequence[tuple[bool, bool, bool]]) -> tuple[list[str], list[str]]:
    """What loading all the rows decides on the first columns (:func:`~dprm.data.loading.position_notes`).

    ``found``: each shard's :func:`first_summary`; ``facts``: each bucket's
    :func:`~dprm.engine.shard_ids.bucket_facts`. Raises the loader's ``id_names_differ`` error.

    Examples
    --------
    >>> part = FirstColumns(("l.csv", "r.csv"), ("a", "b"), (True, True), ([], []), (False, False))
    >>> first_column_notes([(part, 2, True), (part, 2, True)], [(True, True, True)])
    Traceback (most recent call last):
    dprm.errors.DataError: l.csv, r.csv: first columns 'a' and 'b' hold the same distinct values (in the same ...
    >>> first_column_notes([(part, 2, True), (part, 2, True)], [(False, False, True)])
    ([], [])
    """
    present = [f for f in found if f is not None]
    if not present:
        return [], []
    rows = sum(rows for _, rows, _ in present)
    # Boolean in all the rows as loading them all infers it: Boolean in every part, and text words of one
    # vocabulary all parts together (yes, no in one part and true, false in another are text)
    like = tuple(rows >= 2 and all(f.keys[s] is not None for f, _, _ in present) and all(b[s] for b in facts)
                 and not boolean_in_all_parts([f.spellings[s] for f, _, _ in present]) for s in (0, 1))
    same_values = all(b[2] for b in facts)
    same_order = all(same for _, _, same in present)
    return position_notes(present[0][0], (like[0], like[1]), same_values, same_order)


def _joined_spellings(parts: Sequence[tuple[bool, frozenset[str]] | None]) -> tuple[bool, frozenset[str]] | None:
    """The :func:`~dprm.data.inference.boolean_spellings` of parts read as one (None unless Boolean in all).

    Examples
    --------
    >>> _joined_spellings([(False, frozenset({"yes"})), (False, frozenset({"no"}))]) == (False, {"yes", "no"})
    True
    >>> _joined_spellings([(False, frozenset({"yes"})), (False, frozenset({"true"}))]) is None
    True
    """
    if not boolean_in_all_parts(list(parts)):
        return None
    return all(p[0] for p in parts), frozenset().union(*(p[1] for p in parts))  # type: ignore[index]


@dataclass(frozen=True)
class _Slice:
    """A shard's slice of one file, written to ``path``: where its rows are in ``original``.

    The slice's rows come in runs: run ``k`` begins at row ``part_starts[k]`` of the
    slice and row ``file_starts[k]`` of the file (0-based); ``rows`` says which in words.
    """

    path: Path
    original: str
    part_starts: tuple[int, ...]
    file_starts: tuple[int, ...]
    rows: str

    def file_row(self, row: int) -> int:
        """The 1-based row of the file that is row ``row`` (1-based) of the slice.

        Examples
        --------
        >>> part = _Slice(Path("p.csv"), "f.csv", (0, 10), (20, 60), "row groups 2, 6")
        >>> part.file_row(1), part.file_row(10), part.file_row(11)
        (21, 30, 61)
        """
        run = max(k for k, start in enumerate(self.part_starts) if start <= row - 1)
        return self.file_starts[run] + (row - 1 - self.part_starts[run]) + 1

    def file_rows(self, count: int) -> np.ndarray:
        """The 0-based rows of the file that are the slice's ``count`` rows, in order.

        Examples
        --------
        >>> _Slice(Path("p.csv"), "f.csv", (0, 2), (20, 60), "row groups 2, 6").file_rows(4).tolist()
        [20, 21, 60, 61]
        """
        ends = [*self.part_starts[1:], count]
        return np.concatenate([np.arange(start, end, dtype=np.int64) - start + first
                               for start, end, first in zip(self.part_starts, ends, self.file_starts)])


#: A row number (or a list of them) in a loader's message: ``row 7``, ``rows 3, 9``, ``row 2, 5, ...``.
_ROWS = re.compile(r"(?<![\w'\"])(rows? )(\d+(?:, \d+)*)")


def _in_file_text(text: str, files: Sequence[_Slice]) -> str:
    """``text`` of the loader about the slices, in terms of the files: their names and rows.

    Examples
    --------
    >>> part = _Slice(Path("/tmp/x/left.csv"), "data/left.csv", (0,), (1000,), "rows 1001 to 2000")
    >>> _in_file_text("/tmp/x/left.csv: column 'a', row 3: value 9 is outside", [part])
    "data/left.csv: column 'a', row 1003: value 9 is outside"
    """
    for part in files:
        if text.startswith(f"{part.path}:"):
            text = _ROWS.sub(lambda m: m.group(1) + ", ".join(str(part.file_row(int(n)))
                                                             for n in m.group(2).split(", ")), text)
        text = text.replace(str(part.path), part.original)
    return text


def _in_files(error: DprmError, files: Sequence[_Slice], shard: int, n_shards: int) -> DprmError:
    """The loader's ``error`` about a shard's slices as an error about the user's files."""
    left, right = files
    if error.code == "row_count_mismatch":
        # no id column: each shard reads the same share of both files' rows, so files of different
        # lengths give some shard slices of different lengths (the in-process loader's refusal)
        text = (f"{left.original}, {right.original}: the two files have different numbers of rows (shard "
                f"{shard + 1} of {n_shards} reads {left.rows} of {left.original}, {right.rows} of {right.original}); "
                f"the views must be row-aligned (or give an id column)")
        return DataError(text, code=error.code, file=right.original, data_dependent=error.data_dependent)
    if error.code == "unmatched_id":
        # the slices hold other entities: the files do not list the same rows in the same order
        # (an id twice in one slice is twice in its file: the loader's own error, below)
        described = (f"{left.rows} of each" if left.rows == right.rows
                     else f"{left.rows} of {left.original}, {right.rows} of {right.original}")
        text = (f"{left.original}, {right.original}: the two files do not hold the same entities in the same order "
                f"(shard {shard + 1} of {n_shards} reads {described}: {ERROR_CODES[error.code]}); the Ray "
                f"engine reads the same rows of both files in each shard: write both views row-aligned, e.g. "
                f"sorted by their id column, or load them in-process")
        return DataError(text, code=error.code, file=right.original, data_dependent=error.data_dependent)
    file = next((part for part in files if error.file == str(part.path)), None)
    return type(error)(_in_file_text(str(error), files), code=error.code,
                       file=error.file if file is None else file.original, column=error.column,
                       row=error.row if file is None or error.row is None else file.file_row(error.row),
                       data_dependent=error.data_dependent)


def _in_file_terms(data: TwoViewData, files: Sequence[_Slice]) -> TwoViewData:
    """``data`` loaded from the slices, its views' sources and notes naming the files and their rows."""
    views = [View(view.name, view.attributes, source=part.original, constant=list(view.constant),
                  renamed=dict(view.renamed), notes=[_in_file_text(n, files) for n in view.notes],
                  spellings=dict(view.spellings))
             for view, part in zip(data.views, files)]
    return TwoViewData(views[0], views[1], ids=data.ids, id_column=data.id_column, rows_read=data.rows_read)


def _without_constant_notes(data: TwoViewData) -> TwoViewData:
    """``data`` without the notes on its constant columns: constant in a part need not be in all rows."""
    for view in data.views:
        empty = [name for name in view.constant if view[name].missing.all()]
        dropped = set(left_out_notes(view.source, view.constant, empty, "kept"))
        view.notes = [n for n in view.notes if n not in dropped]
    return data


def _slice(path: str, side: str, shard: int, n_shards: int, folder: Path) -> _Slice | None:
    """This shard's part of one file, written to ``folder`` (None when it is empty).

    The file is checked as the loader checks it first (missing, not a regular file, a
    name of no known form, empty, not the text its name says: the loader's one-line
    errors, naming the file), and an error reading it (a damaged compressed stream, a
    file named ``.parquet`` that is not Parquet) is the loader's error too. A file
    without rows gives every shard all of it (its header), for the loader to refuse
    as it refuses the whole file.
    """
    if data_file_format(path) == "parquet":
        return _parquet_slice(path, side, shard, n_shards, folder)
    return _text_slice(path, side, shard, n_shards, folder)


def _parquet_slice(path: str, side: str, shard: int, n_shards: int, folder: Path) -> _Slice | None:
    """This shard's row groups of a Parquet file (:func:`_slice`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = folder / f"{side}.parquet"
    try:
        with native_file(path) as stream, pq.ParquetFile(stream) as source:  # a name that is not UTF-8 too
            sizes = [source.metadata.row_group(g).num_rows for g in range(source.num_row_groups)]
            if sum(sizes) == 0:  # no rows: the loader refuses the file as it refuses the whole file
                pq.write_table(source.schema_arrow.empty_table(), target)
                return _Slice(target, path, (0,), (0,), "rows")
            groups = list(range(source.num_row_groups))[shard::n_shards]
            if not groups:
                return None
            pq.write_table(source.read_row_groups(groups), target)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{path}: cannot be read as Parquet: {first_line(exc)}", code="bad_parquet",
                        file=path) from None
    firsts = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
    mine = [sizes[g] for g in groups]
    return _Slice(target, path, tuple(np.concatenate([[0], np.cumsum(mine)[:-1]]).astype(int).tolist()),
                  tuple(firsts[g] for g in groups), f"row groups {', '.join(map(str, groups))}")


def _text_slice(path: str, side: str, shard: int, n_shards: int, folder: Path) -> _Slice | None:
    r"""This shard's run of rows of a CSV or TSV file (:func:`_slice`): the rows the loader reads, counted first.

    The rows are the file's records (:func:`_records`): blank lines left out, lines
    ending in ``\n``, ``\r\n`` or ``\r``, a quoted cell's line breaks inside its row.
    The slice holds the header and the shard's records as written in the file.
    """
    import pyarrow as pa

    suffixes = [s.lower() for s in Path(path).suffixes]
    compressed = suffixes[-1] in (".gz", ".bz2", ".zst", ".lz4")
    target = folder / f"{side}{''.join(suffixes[:-1] if compressed else suffixes)}"
    try:
        stream, delimiter = open_text_table(Path(path), path)  # the loader's checks and errors, its delimiter
        with stream:
            n_rows = sum(len(block) for block in _records(stream, delimiter.encode())) - 1  # less the header
        begin = math.floor(shard * max(n_rows, 0) / n_shards)
        end = math.floor((shard + 1) * max(n_rows, 0) / n_shards)
        if end <= begin and n_rows > 0:
            return None
        stream, _ = open_text_table(Path(path), path)
        with stream, open(target, "wb") as out:
            if n_rows < 0:  # not even a header (blank lines only): the loader's "is empty (no header)"
                out.write(b"\n")
            row = -1  # the row of the block's first record: the header is row -1
            for block in _records(stream, delimiter.encode()):
                if row < 0 and block:
                    out.write(block[0])
                    block, row = block[1:], 0
                mine = block[max(begin - row, 0):max(end - row, 0)]
                if mine:
                    out.write(b"".join(mine))
                row += len(block)
                if row >= end:
                    break
    except (pa.ArrowException, OSError) as exc:  # a damaged compressed stream: the loader's words
        raise DataError(f"{path}: cannot be read as CSV: {first_line(exc)}", code="bad_csv", file=path) from None
    return _Slice(target, path, (0,), (begin,), f"rows {begin + 1} to {end}")


#: How much of a text file :func:`_records` reads at a time.
_CHUNK = 1 << 20
#: A blank line: pyarrow (the loader) skips it.
_BLANK = (b"\n", b"\r\n", b"\r")


def _records(stream: Any, delimiter: bytes) -> Iterator[list[bytes]]:
    r"""The records of a text file as the loader's parser reads them, in blocks: each as written, line end included.

    A line ends at ``\n``, ``\r\n`` or ``\r``; a blank line is no record; a quoted
    cell that holds line breaks keeps its row's lines together (:func:`_quote_open`).
    The first record is the header.

    Examples
    --------
    >>> import io
    >>> text = b'id,a\r\n1,x\r\r\n2,"y\n\nz"\n\n3,"w""\n'
    >>> [r for block in _records(io.BytesIO(text), b",") for r in block]
    [b'id,a\r\n', b'1,x\r', b'2,"y\n\nz"\n', b'3,"w""\n']
    """
    carry, open_record = b"", []
    while True:
        chunk = stream.read(_CHUNK)
        data = carry + chunk
        if not data:
            if open_record:  # a quote that never closes: the rest of the file, as the parser takes it
                yield [b"".join(open_record)]
            break
        lines = data.splitlines(keepends=True)
        carry = lines.pop() if chunk and not lines[-1].endswith((b"\n", b"\r")) else b""
        if not open_record and (b'"' not in data or _closed_lines(delimiter).fullmatch(data, 0,
                                                                                      len(data) - len(carry))):
            yield [line for line in lines if line not in _BLANK]  # the usual block: no line break in a cell
            continue
        block = []
        for line in lines:
            if open_record:  # inside a quoted cell: its line breaks, blank lines too, are in the cell
                open_record.append(line)
                if not _quote_open(line, delimiter, True):
                    block.append(b"".join(open_record))
                    open_record = []
            elif line in _BLANK:
                continue
            elif b'"' in line and _quote_open(line, delimiter, False):
                open_record = [line]
            else:
                block.append(line)
        if not chunk and open_record:  # a quote that never closes: the rest of the file, as the parser takes it
            block.append(b"".join(open_record))
            open_record = []
        yield block


@functools.lru_cache(maxsize=None)
def _closed_lines(delimiter: bytes) -> re.Pattern[bytes]:
    r"""Lines each of whose quoted cells closes on the line (the last line's end may be missing): read by the
    regular expression engine at once, no line break in any cell (:func:`_quote_open` says the same line by line).

    Examples
    --------
    >>> [bool(_closed_lines(b",").fullmatch(text)) for text in (b'1,"a""b"\r\n\n2,5"\n3', b'1,"a\n2"\n')]
    [True, False]
    """
    d = re.escape(delimiter)
    cell = rb'(?:"(?:[^"\r\n]|"")*+"[^' + d + rb'\r\n]*+|[^"' + d + rb'\r\n][^' + d + rb'\r\n]*+|)'
    line = rb"(?>" + cell + rb"(?:" + d + cell + rb")*+)"
    return re.compile(rb"(?:" + line + rb"(?:\r\n|\r|\n))*+" + line + rb"?")


def _quote_open(line: bytes, delimiter: bytes, inside: bool) -> bool:
    """Whether a quoted cell is open at the end of ``line`` (``inside``: whether one was open at its start).

    As the loader's parser reads quotes: a quote opens a cell only at the cell's start,
    ``""`` in a quoted cell is a quote, and after the closing quote the cell goes on
    to the delimiter with any quote in it as text.

    Examples
    --------
    >>> _quote_open(b'1,"a\\n', b",", False), _quote_open(b'1,"a""b",c\\n', b",", False)
    (True, False)
    >>> _quote_open(b'1,5",x\\n', b",", False), _quote_open(b'b""\\n', b",", True), _quote_open(b'b"\\n', b",", True)
    (False, True, False)
    """
    at, quote = 0, b'"'
    while True:
        if inside:
            close = line.find(quote, at)
            if close < 0:
                return True
            if line[close + 1:close + 2] == quote:  # a doubled quote: a quote in the cell
                at = close + 2
                continue
            inside, at = False, close + 1
        elif line[at:at + 1] == quote:
            inside, at = True, at + 1
            continue
        after = line.find(delimiter, at)  # the rest of the cell is text, up to the next cell
        if after < 0:
            return False
        at = after + 1


# -- one schema ---------------------------------------------------------------------------


def summarise(view: View) -> ViewSummary:
    """The schema of one view, without its values (a constant column's one value)."""
    columns = []
    for a in view.attributes:
        present = a.values[~a.missing]
        whole = a.kind is AttributeKind.NUMERIC and bool(np.all(present == np.floor(present)))
        spellings = view.spellings.get(a.name)
        if a.name not in view.constant:
            columns.append(ColumnSummary(a.name, a.kind, a.domain, whole=whole, spellings=spellings))
            continue
        value = None
        if present.size:
            value = float(present[0])
            if a.kind is AttributeKind.CATEGORICAL:  # compare categories by their text, not their code
                value = a.domain.categories[int(present[0])]
        columns.append(ColumnSummary(a.name, a.kind, a.domain, True, present.size == 0, value, whole, spellings))
    return ViewSummary(tuple(columns), tuple(view.constant), view.source, tuple(view.notes))


def merge_schemas(summaries: Sequence[Sequence[ViewSummary]]) -> tuple[ViewSummary, ViewSummary]:
    """The one schema of the shards, per view, from each shard's :class:`ViewSummary`.

    ``summaries[side]`` lists the shards' summaries of that view (shards without rows
    left out). Raises :class:`~dprm.errors.ParameterError` (one line, naming the
    column) when a column cannot be merged from summaries alone.

    Examples
    --------
    >>> a = ViewSummary((ColumnSummary("c", AttributeKind.CATEGORICAL, Domain(categories=("x", "z"))),), (), "p1")
    >>> b = ViewSummary((ColumnSummary("c", AttributeKind.CATEGORICAL, Domain(categories=("y",))),), (), "p2")
    >>> merge_schemas([[a, b], [a, b]])[0].attributes[0].domain.categories
    ('x', 'y', 'z')
    """
    merged = []
    for side, shards in enumerate(summaries):
        view = "left" if side == 0 else "right"
        names: list[str] = []
        for summary in shards:
            for column in summary.attributes:
                if column.name not in names:
                    names.append(column.name)
        columns, constant, empty = [], [], []
        for name in names:
            found = [c for s in shards for c in s.attributes if c.name == name]
            if len(found) != len(shards):
                raise ParameterError(f"{view} view: column {name!r} is not in every shard's part")
            voters = [c for c in found if not c.empty] or found[:1]
            _check_boolean_words(view, voters)
            voters = _zeros_and_ones_as_numbers(voters)
            if all(c.constant for c in found) and len({c.value for c in voters}) == 1 \
                    and len({c.kind for c in voters}) == 1:
                constant.append(name)  # a single value (or none) in all the rows: left out, as in-process
                if all(c.empty for c in found):
                    empty.append(name)
                continue
            columns.append(_merge_column(view, voters))
        source = shards[0].source if shards else view
        notes = _merge_notes([summary.notes for summary in shards])
        merged.append(ViewSummary(tuple(columns), tuple(constant), source,
                                  tuple(notes + left_out_notes(source, constant, empty))))
    return merged[0], merged[1]


#: A note's example row (``e.g. row 17``), which differs between shards.
_EXAMPLE_ROW = re.compile(r"e\.g\. row (\d+)")


def _merge_notes(shards: Sequence[Sequence[str]]) -> list[str]:
    """The shards' notes once each, in the loader's order; of notes that differ only in their example row,
    the first row's.

    Each shard's notes come in the order loading all the rows gives (the id column, renamed
    columns, then column by column): the merge keeps every shard's order, and takes a
    note from the earliest shard whose next note no other shard has still to come after
    notes of its own.

    Examples
    --------
    >>> _merge_notes([["f: 'b' renamed 'b.1'", "f: column 'c': NaN read as a missing value, e.g. row 40"],
    ...               ["f: 'b' renamed 'b.1'", "f: column 'a': clamped", "f: column 'c': NaN read as a missing "
    ...                "value, e.g. row 7"]])
    ["f: 'b' renamed 'b.1'", "f: column 'a': clamped", "f: column 'c': NaN read as a missing value, e.g. row 7"]
    """
    chosen: dict[str, str] = {}
    for notes in shards:
        for note in notes:
            key = _EXAMPLE_ROW.sub("e.g. row", note)
            if key not in chosen or _example_row(note) < _example_row(chosen[key]):
                chosen[key] = note
    queues = [list(dict.fromkeys(_EXAMPLE_ROW.sub("e.g. row", note) for note in notes)) for notes in shards]
    merged: list[str] = []
    while any(queues):
        heads = [queue[0] for queue in queues if queue]
        # a head no shard has later in its list; none when the shards disagree: the earliest shard's
        key = next((h for h in heads if not any(h in queue[1:] for queue in queues)), heads[0])
        merged.append(chosen[key])
        queues = [[k for k in queue if k != key] for queue in queues]
    return merged


def _example_row(note: str) -> int:
    found = _EXAMPLE_ROW.search(note)
    return int(found.group(1)) if found else 0


def _zeros_and_ones_as_numbers(found: list[ColumnSummary]) -> list[ColumnSummary]:
    """A column of numbers that holds only 0 and 1 in some shards: those shards' Boolean summaries as numbers.

    Loading all the rows reads numbers beyond 0 and 1 as a numeric column, and a part of
    them holding only 0 and 1 (typed numbers: :func:`~dprm.data.inference.boolean_spellings`)
    reads Boolean: as a numeric part its bounds are its values and they are whole
    (:func:`adopt_schema` turns its codes into those numbers). Other summaries are left as
    they are (Boolean words, or Boolean beside categorical: refused by the merge).

    Examples
    --------
    >>> counts = [ColumnSummary("n", AttributeKind.BOOLEAN, Domain(), spellings=(True, frozenset({"1", "0"}))),
    ...           ColumnSummary("n", AttributeKind.NUMERIC, Domain(bounds=(2.0, 7.0)), whole=True)]
    >>> [(c.kind.value, c.domain.bounds, c.whole) for c in _zeros_and_ones_as_numbers(counts)]
    [('numeric', (0.0, 1.0), True), ('numeric', (2.0, 7.0), True)]
    """
    if {c.kind for c in found} != {AttributeKind.BOOLEAN, AttributeKind.NUMERIC} or any(
            c.domain.declared for c in found):
        return found
    parts = [c.spellings for c in found if c.kind is AttributeKind.BOOLEAN]
    if any(p is None or not p[0] or not p[1] or not p[1] <= {"0", "1"} for p in parts):
        return found
    return [c if c.kind is AttributeKind.NUMERIC else dataclasses.replace(
        c, kind=AttributeKind.NUMERIC, whole=True, spellings=None,
        domain=Domain(bounds=(float(min(c.spellings[1])), float(max(c.spellings[1])))))  # type: ignore[index]
        for c in found]


def _check_boolean_words(view: str, found: list[ColumnSummary]) -> None:
    """Refuse an inferred Boolean column whose shards' words are of different vocabularies (one line).

    ``yes, no`` in one shard and ``true, false`` in another are text in all the rows
    (:func:`~dprm.data.inference.boolean_in_all_parts`): loading them all reads a categorical
    column, which the shards' Boolean parts cannot give (their words are gone).

    Examples
    --------
    >>> words = [ColumnSummary("c", AttributeKind.BOOLEAN, Domain(), spellings=(False, frozenset(w)))
    ...          for w in (["yes", "no"], ["True"])]
    >>> _check_boolean_words("left", words[:1])
    >>> _check_boolean_words("left", words)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: left view: column 'c' reads as Boolean words of different vocabularies in \
different shards (such as yes, no and true, false), text in all the rows; declare its type in the types file to \
shard this data
    """
    spelled = [c.spellings for c in found if c.kind is AttributeKind.BOOLEAN and c.spellings is not None]
    if len(spelled) < 2 or len(spelled) != len(found) or boolean_in_all_parts(spelled):
        return
    raise ParameterError(f"{view} view: column {found[0].name!r} reads as Boolean words of different vocabularies "
                         f"in different shards (such as yes, no and true, false), text in all the rows; declare its "
                         f"type in the types file to shard this data")


def _merge_column(view: str, found: list[ColumnSummary]) -> ColumnSummary:
    first = found[0]
    kinds = {c.kind for c in found}
    if len(kinds) > 1:
        shown = " and ".join(sorted(k.value for k in kinds))
        raise ParameterError(f"{view} view: column {first.name!r} reads as {shown} in different shards; declare "
                             f"its type in the types file to shard this data")
    if first.domain.declared:
        return ColumnSummary(first.name, first.kind, first.domain)
    if first.kind is AttributeKind.NUMERIC:
        bounds = [c.domain.bounds for c in found if c.domain.bounds is not None]
        if not bounds:
            return ColumnSummary(first.name, first.kind, Domain())
        low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
        # what loading all the rows infers: whole numbers over a short range are cut at every whole number
        domain = Domain(bounds=(low, high), transform=inferred_transform(low, high, all(c.whole for c in found)))
        return ColumnSummary(first.name, first.kind, domain)
    if first.kind is AttributeKind.CATEGORICAL:
        # the loader's order: numbers first, numerically, then other texts (10 after 9 also beside words)
        texts = category_order({t for c in found for t in (c.domain.categories or ())})
        return ColumnSummary(first.name, first.kind, Domain(categories=tuple(texts)))
    return ColumnSummary(first.name, first.kind, first.domain)


def adopt_schema(data: TwoViewData | None, schema: tuple[ViewSummary, ViewSummary]) -> TwoViewData:
    """``data`` re-expressed in the merged schema (codes remapped, domains replaced).

    ``None`` (a shard without rows) becomes the schema with no rows.
    """
    views = []
    for side, summary in enumerate(schema):
        view = None if data is None else data.views[side]
        attributes = []
        for column in summary.attributes:
            if view is None:
                dtype = np.float64 if column.kind is AttributeKind.NUMERIC else np.int8
                values = np.empty(0, dtype=dtype)
            elif view[column.name].kind is AttributeKind.BOOLEAN and column.kind is AttributeKind.NUMERIC:
                codes = view[column.name].values  # 0 and 1 in this shard, numbers in all the rows: as numbers
                values = np.where(codes < 0, np.nan, codes.astype(np.float64))
            elif view[column.name].kind is not column.kind:  # empty in this shard, read with another kind
                values = (np.full(data.n_rows, np.nan) if column.kind is AttributeKind.NUMERIC
                          else np.full(data.n_rows, -1, dtype=np.int32 if column.kind is AttributeKind.CATEGORICAL
                                       else np.int8))
            else:
                values = view[column.name].values
                mine = view[column.name].domain.categories
                if column.kind is AttributeKind.CATEGORICAL and mine != column.domain.categories:
                    position = {text: code for code, text in enumerate(column.domain.categories or ())}
                    remap = np.array([position[text] for text in (mine or ())] + [-1], dtype=np.int64)
                    values = remap[np.where(values < 0, len(mine or ()), values)].astype(values.dtype)
            attributes.append(Attribute(column.name, "left" if side == 0 else "right", column.kind, values,
                                        column.domain))
        views.append(View("left" if side == 0 else "right", attributes, source=summary.source,
                          constant=list(summary.constant), notes=list(summary.notes if view is None else view.notes),
                          spellings={} if view is None else dict(view.spellings)))
    return TwoViewData(views[0], views[1])


def schema_only(schema: tuple[ViewSummary, ViewSummary]) -> TwoViewData:
    """The two views with the merged schema and no rows (what a sharded engine's driver holds), and its notes."""
    return adopt_schema(None, schema)


def concatenate(parts: Sequence[TwoViewData]) -> TwoViewData:
    """Parts in one schema (:func:`adopt_schema`) as one dataset, rows in order."""
    views = []
    for side in (0, 1):
        first = parts[0].views[side]
        attributes = [Attribute(a.name, a.view, a.kind,
                                np.concatenate([p.views[side][a.name].values for p in parts]), a.domain)
                      for a in first.attributes]
        names = dict.fromkeys(name for p in parts for name in p.views[side].spellings)
        joined = {name: _joined_spellings([p.views[side].spellings[name] for p in parts
                                           if name in p.views[side].spellings]) for name in names}
        views.append(View(first.name, attributes, source=first.source, constant=list(first.constant),
                          notes=[n for p in parts for n in p.views[side].notes],
                          spellings={name: words for name, words in joined.items() if words is not None}))
    return TwoViewData(views[0], views[1])
