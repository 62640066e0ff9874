"""Loading a two-view dataset: the public entry point :func:`load_two_view`.

Steps: read both tables (:mod:`dprm.data.reading`), find the id column, check the
column names, align the rows by id, type every column (types file first, then
:func:`~dprm.data.inference.infer_kind`), encode it
(:func:`~dprm.data.encoding.encode_column`) and set constant columns aside.

Columns are encoded in file order, so a message's row number is the row of the
file it names; the right view is reordered to the left's ids afterwards.

Every change the loader makes on its own (a renamed duplicate column, a column read
as categorical because not every value is a number, ``NaN`` read as missing, values
clamped, empty and constant columns left out) is recorded as a one-line note in
:attr:`~dprm.data.attributes.View.notes`, and so is a first column that looks like
an id but is mined as an attribute because the rows are matched by position.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dprm.data.arrow_arrays import string_array, to_numpy
from dprm.data.attributes import Attribute, AttributeKind, TwoViewData, View
from dprm.data.category_text import category_text, integer_text
from dprm.data.encoding import encode_column, is_constant
from dprm.data.inference import boolean_spellings, infer_kind
from dprm.data.reading import (SHOW, RawTable, Source, column_name_key, first_rows, read_header, read_table,
                               reading_options)
from dprm.data.types_file import ColumnType, TypesSpec, read_types_file
from dprm.errors import DataError, ParameterError, short_repr, short_text

__all__ = ["load_two_view", "FirstColumns", "position_notes",
           "read_view", "check_declared_columns", "left_out_notes", "duplicate_ids_error",
           "TypesLike", "SIREN_ID_NAMES"]

TypesLike = str | os.PathLike[str] | Mapping[str, Any] | TypesSpec | None

#: First-column names taken as an id column even when only one view has it
#: (the convention of Siren/clired data files).
SIREN_ID_NAMES: frozenset[str] = frozenset({"ids"})


def load_two_view(
    left: Source,
    right: Source,
    *,
    id_column: str | None = None,
    types: TypesLike = None,
    duplicate_names: str = "error",
    na_values: Sequence[str] | None = None,
    out_of_bounds: str | None = None,
    keep_constant: bool = False,
    first_columns: list[FirstColumns] | None = None,
    matched: list[tuple[np.ndarray | None, tuple[int, str] | None]] | None = None,
    boolean_spellings: bool = False,
) -> TwoViewData:
    """Load a two-view dataset from two files or DataFrames.

    Parameters
    ----------
    left, right : str, PathLike or pandas.DataFrame
        The views: CSV (``.csv``, ``.tsv``, optionally compressed, e.g.
        ``.csv.gz``) or Parquet (``.parquet``) files, or DataFrames.
    id_column : str, optional
        The column holding entity ids in both views. When not given, the types
        file's id column is used; failing that, the first column is the id when
        both views' first columns have the same name (or a view's first column is
        named ``ids``, Siren's convention). Without one the rows are matched by
        position: first columns of different names that hold the same distinct
        values (one id column under two names, ``row_id`` and ``id``) are then an
        error unless the types file declares them, and an undeclared first column
        that looks like an id is mined as an attribute with a note.
    types : str, PathLike, Mapping or TypesSpec, optional
        A types file (``.json``/``.toml``), or its content as a mapping, declaring
        column types and public domains (see ``docs/data.md``).
    duplicate_names : {"error", "rename"}
        A column name occurring twice in one file is an error, unless ``"rename"``:
        then later occurrences become ``"name.1"``, ``"name.2"``, ... as pandas
        names them (``View.renamed`` maps each new name to the original).
    na_values : sequence of str, optional
        Texts that mark a missing value, besides the empty cell (which always
        does); compared exactly (case and spaces count). Added to the types file's
        ``na_values``. By default nothing else is missing: ``NA``, ``none`` or
        ``null`` are values.
    out_of_bounds : {"error", "clamp"}, optional
        A value outside its declared domain is an error (``"error"``), or
        (``"clamp"``) a number is clamped into the declared bounds and a category
        that is not declared becomes missing, with a note. Default: the types
        file's ``out_of_bounds``, else ``"error"``.
    keep_constant : bool
        Keep undeclared constant (and empty) columns as attributes, still listed in
        ``View.constant``: a shard of a sharded engine must describe them, since a
        column constant within one part of the rows need not be constant in all
        (:mod:`dprm.engine.sharding`). Default False: they are left out.
    first_columns : list, optional
        When given and the rows are matched by position, the first columns are neither
        refused as one id column with two names nor noted as looking like ids: their
        :class:`FirstColumns` is appended to this list instead, for a sharded engine to
        decide on all the rows (:func:`position_notes`), since one part cannot.
    matched : list, optional
        When given, the ids and id column (None, None without one) are appended to it once
        the rows are matched (their ids checked, the first columns decided), before any
        column is built, or when the ids (those of ``TwoViewData.ids``) repeat, before that
        error: a sharded engine whose part then fails (a value outside its bounds)
        still checks the ids and first columns of all the parts first, in the order loading
        all the rows checks them.
    boolean_spellings : bool
        Record each inferred Boolean column's spellings in ``View.spellings``
        (:func:`~dprm.data.inference.boolean_spellings`): a sharded engine's shards tell
        with them whether the column is Boolean in all the rows (``yes, no`` in one part
        and ``true, false`` in another are not). Default False.

    Returns
    -------
    TwoViewData
        The views with rows aligned (the right view in the left's id order),
        ``ids`` the left view's ids as text (None without an id column); each
        view's ``notes`` lists the changes made without being asked.

    Raises
    ------
    DataError
        For any problem with the input, in one line naming the file (and column,
        row and value where relevant).

    Examples
    --------
    >>> import pandas as pd
    >>> left = pd.DataFrame({"id": [1, 2, 3], "smoker": ["yes", "no", "yes"]})
    >>> right = pd.DataFrame({"id": [3, 1, 2], "age": [70.0, 30.5, 41.0]})
    >>> data = load_two_view(left, right, types={"columns": {"age": {"bounds": [0, 120]}}})
    >>> data.ids.tolist(), data.right["age"].values.tolist()
    (['1', '2', '3'], [30.5, 41.0, 70.0])
    >>> data.left["smoker"].kind.value, data.right["age"].domain
    ('boolean', Domain(bounds=(0.0, 120.0), categories=None, declared=True, complete=False, transform=None))
    >>> survey = pd.DataFrame({"religion": ["none", "catholic", "?"], "age": ["31", "x", "40"]})
    >>> other = pd.DataFrame({"b": [0, 1, 1]})
    >>> data = load_two_view(survey, other, na_values=["?"])
    >>> data.left["religion"].domain.categories, data.left["religion"].values.tolist()
    (('catholic', 'none'), [1, 0, -1])
    >>> data.notes
    ["left DataFrame: column 'age' is categorical (inferred): not every value is a number, e.g. row 2"]
    """
    _check_flag(keep_constant, "keep_constant")
    _check_flag(boolean_spellings, "boolean_spellings")
    spec = _as_spec(types)
    markers, policy = reading_options(spec, na_values, out_of_bounds)
    named = _named_columns(spec, id_column)
    lraw = read_table(left, "left", duplicate_names, markers, named)
    rraw = read_table(right, "right", duplicate_names, markers, named)
    lid, rid = _id_columns(lraw, rraw, id_column, spec)
    _check_shared_names(lraw, rraw, {lid, rid})
    _check_spec_names(spec, lraw, rraw)

    order: np.ndarray | None = None
    ids: np.ndarray | None = None
    id_column: tuple[int, str] | None = None
    first_notes: tuple[list[str], list[str]] = ([], [])
    if lid is not None and rid is not None:
        lkeys = _id_keys(lraw, lid, matched, 0)
        rkeys = _id_keys(rraw, rid)
        order = _align(lkeys, rkeys, lraw.source, rraw.source)
        ids, id_column = lkeys, (0, lid)
    else:
        if lraw.num_rows != rraw.num_rows:
            raise DataError(
                f"{lraw.source} has {lraw.num_rows} rows but {rraw.source} has "
                f"{rraw.num_rows}; the views must be row-aligned (or give an id column)",
                code="row_count_mismatch", file=rraw.source,
            )
        if lid is not None:
            ids, id_column = _id_keys(lraw, lid, matched, 0), (0, lid)
        elif rid is not None:
            ids, id_column = _id_keys(rraw, rid, matched, 1), (1, rid)
        first = _first_columns(lraw, rraw, lid, rid, spec, written_booleans=first_columns is not None)
        if first_columns is not None:
            first_columns.append(first)
        else:
            first_notes = position_notes(first, *_like_ids(first))

    if matched is not None:
        matched.append((ids, id_column))
    left_view = _build_view(lraw, "left", spec, exclude=lid, out_of_bounds=policy, keep_constant=keep_constant,
                            first_notes=first_notes[0], spellings=boolean_spellings)
    right_view = _build_view(rraw, "right", spec, exclude=rid, out_of_bounds=policy, keep_constant=keep_constant,
                             first_notes=first_notes[1], spellings=boolean_spellings)
    if order is not None and not np.array_equal(order, np.arange(order.size)):
        right_view = _reorder(right_view, order)
    return TwoViewData(left_view, right_view, ids=ids, id_column=id_column, rows_read=lraw.num_rows)


def read_view(
    source: Source,
    side: str = "left",
    *,
    id_column: str | None = None,
    types: TypesLike = None,
    duplicate_names: str = "error",
    na_values: Sequence[str] | None = None,
    out_of_bounds: str | None = None,
    all_types_here: bool = False,
    keep_constant: bool = False,
) -> View:
    """Read one view on its own (rows in file order; the id column dropped).

    The id column is found as :func:`load_two_view` finds it, less the rule that needs
    two views: the ``id_column`` argument, else the types file's ``id_column`` (or the
    column it declares ``type: id``), else a first column named ``ids`` (Siren's
    convention). It is not an attribute; rows stay in file order. An ``id_column``
    other than the types file's, or an id column the types file declares with another
    type, is a :class:`DataError` (``id_column_conflict``), as in :func:`load_two_view`.

    Types-file entries for columns that this view lacks are ignored here (they may
    belong to the other view), unless ``all_types_here`` (the file is the only table:
    an entry for a column it lacks is then a :class:`DataError`). The other options are
    those of :func:`load_two_view` (``keep_constant``: a single table's undeclared
    constant columns stay attributes, so that leaving them out is not a choice made on
    the data).

    Examples
    --------
    >>> import pandas as pd
    >>> v = read_view(pd.DataFrame({"k": [1, 2], "x": [0, 1], "c": [5, 5]}), "right", id_column="k")
    >>> v.names, v.constant, v.source
    (['x'], ['c'], 'right DataFrame')
    >>> read_view(pd.DataFrame({"ids": ["r1", "r2"], "x": [0, 1]})).names   # Siren's id column
    ['x']
    """
    if side not in ("left", "right"):
        raise ParameterError(f"side must be 'left' or 'right', not {side!r}")
    _check_flag(keep_constant, "keep_constant")
    _check_flag(all_types_here, "all_types_here")
    spec = _as_spec(types)
    markers, policy = reading_options(spec, na_values, out_of_bounds)
    raw = read_table(source, side, duplicate_names, markers, _named_columns(spec, id_column))
    id_name = _view_id_column(raw, id_column, spec)
    if all_types_here:
        _check_view_spec_names(spec, raw)
    return _build_view(raw, side, spec, exclude=id_name, out_of_bounds=policy, keep_constant=keep_constant)


# ---------------------------------------------------------------------- internals


def _as_spec(types: TypesLike) -> TypesSpec:
    if types is None:
        return TypesSpec()
    if isinstance(types, TypesSpec):
        return types
    if isinstance(types, Mapping):
        return TypesSpec.from_mapping(types, source="types")
    if isinstance(types, (str, os.PathLike)):
        return read_types_file(Path(types))
    raise DataError(f"types: expected a file path or a mapping, got {type(types).__name__}",
                    code="bad_types_file", data_dependent=False)


def _named_columns(spec: TypesSpec, id_column: str | None) -> set[str]:
    """The columns the caller names: the types file's and the id column (kept even when they hold a Parquet
    file's pandas index, :func:`dprm.data.reading.pandas_index_columns`)."""
    return {*spec.columns, *(name for name in (id_column, spec.id_column) if name is not None)}


def _no_id_column(raw: RawTable, name: str) -> DataError:
    return DataError(f"{raw.source}: has no id column {short_repr(name, 60)}{_columns_hint(raw)}",
                     code="missing_id_column", file=raw.source, column=name, data_dependent=False)


def _columns_hint(raw: RawTable) -> str:
    names = raw.column_names
    shown = ", ".join(short_repr(n, 60) for n in names[:SHOW])
    more = ", ..." if len(names) > SHOW else ""
    return f" (its columns: {shown}{more})"


def _given_id_column(id_column: str | None, spec: TypesSpec) -> str | None:
    """The id column named by the argument or the types file (a conflict between them is an error)."""
    if id_column is not None and spec.id_column is not None and id_column != spec.id_column:
        raise DataError(
            f"id column {short_repr(id_column, 60)} given, but {spec.source} declares "
            f"{short_repr(spec.id_column, 60)}",
            code="id_column_conflict", file=spec.source, data_dependent=False,
        )
    return id_column if id_column is not None else spec.id_column


def _check_id_types(spec: TypesSpec, ids: Sequence[str | None], how: str) -> None:
    """Refuse an id column that the types file declares as an attribute (``id_column_conflict``)."""
    for used in dict.fromkeys(i for i in ids if i is not None):
        declared = spec.get(used)
        if declared is not None and declared.type is not ColumnType.ID:
            raise DataError(
                f"{spec.source}: column {used!r} is the id column ({how}) but is declared "
                f"{declared.type.value}; declare it \"type\": \"id\", or name another id column",
                code="id_column_conflict", file=spec.source, column=used, data_dependent=False,
            )


def _view_id_column(raw: RawTable, id_column: str | None, spec: TypesSpec) -> str | None:
    """The id column of a view read alone (:func:`read_view`), or None.

    :func:`_id_columns`' rules that one view can follow: given, declared, or a first
    column named like Siren's id column (:data:`SIREN_ID_NAMES`).
    """
    name = _given_id_column(id_column, spec)
    if name is not None:
        if name not in raw.column_names:
            raise _no_id_column(raw, name)
        how = "given as the id column"
    else:
        first = raw.column_names[0]
        name = first if first.lower() in SIREN_ID_NAMES else None
        how = "named like an id column"
    _check_id_types(spec, [name], how)
    return name


def _id_columns(
    lraw: RawTable, rraw: RawTable, id_column: str | None, spec: TypesSpec
) -> tuple[str | None, str | None]:
    name = _given_id_column(id_column, spec)
    if name is not None:
        for raw in (lraw, rraw):
            if name not in raw.column_names:
                raise _no_id_column(raw, name)
        ids = (name, name)
        how = "given as the id column"
    else:
        lfirst, rfirst = lraw.column_names[0], rraw.column_names[0]
        if lfirst == rfirst:
            ids = (lfirst, rfirst)
        else:
            ids = (lfirst if lfirst.lower() in SIREN_ID_NAMES else None,
                   rfirst if rfirst.lower() in SIREN_ID_NAMES else None)
        how = "the first column of both files" if lfirst == rfirst else "named like an id column"
    _check_id_types(spec, ids, how)
    return ids


def _check_shared_names(lraw: RawTable, rraw: RawTable, ids: set[str | None]) -> None:
    # 'café' twice, however the é is written; 'x' and 'x' with a zero-width space
    right = {column_name_key(n) for n in rraw.column_names}
    shared = [n for n in lraw.column_names if column_name_key(n) in right and n not in ids]
    if shared:
        listed = ", ".join(short_repr(n, 60) for n in shared[:SHOW]) + (", ..." if len(shared) > SHOW else "")
        hint = ""
        if len(shared) == 1 and not ids - {None}:
            hint = " (if it holds the ids, give it as the id column: --id-column, id_column=)"
        raise DataError(
            f"{len(shared)} column name(s) occur in both {lraw.source} and {rraw.source}: "
            f"{listed}; names must be unique across the views{hint}",
            code="shared_column", file=rraw.source, column=shared[0], data_dependent=False,
        )


def check_declared_columns(spec: TypesSpec, left: str | os.PathLike[str], right: str | os.PathLike[str] | None = None,
                           duplicate_names: str = "error") -> None:
    """Refuse a types file that declares a column in neither file (or not in ``left``, alone), reading their
    headers only (no row).

    :func:`load_two_view` (and :func:`read_view` with ``all_types_here``) refuses it
    after reading the rows; a private ``dprm mine`` or ``dprm classify`` checks the
    declarations before any row is read (``TypesSpec.check_public_domains``) and calls
    this first when they fail, so that a column in neither file is said to be one (as
    ``dprm inspect`` says it), not to need its public domain.

    Raises
    ------
    DataError
        ``unknown_column``, naming the types file and the columns; or the one-line
        error of a header that cannot be read.
    """
    named = _named_columns(spec, None)
    lraw = read_header(left, duplicate_names, named)
    if right is None:
        _check_view_spec_names(spec, lraw)
    else:
        _check_spec_names(spec, lraw, read_header(right, duplicate_names, named))


def _check_view_spec_names(spec: TypesSpec, raw: RawTable) -> None:
    unknown = [n for n in spec.columns if n not in raw.column_names]
    if unknown:
        listed = ", ".join(short_repr(n, 60) for n in unknown[:SHOW]) + (", ..." if len(unknown) > SHOW else "")
        listed += _spelling_hint(unknown[0], raw.column_names)
        raise DataError(f"{spec.source}: declares column(s) that are not in {raw.source}: {listed}",
                        code="unknown_column", file=spec.source, column=unknown[0], data_dependent=False)


def _check_spec_names(spec: TypesSpec, lraw: RawTable, rraw: RawTable) -> None:
    known = set(lraw.column_names) | set(rraw.column_names)
    unknown = [n for n in spec.columns if n not in known]
    if unknown:
        listed = ", ".join(short_repr(n, 60) for n in unknown[:SHOW]) + (", ..." if len(unknown) > SHOW else "")
        listed += _spelling_hint(unknown[0], [*lraw.column_names, *rraw.column_names])
        raise DataError(
            f"{spec.source}: declares column(s) that are in neither {lraw.source} nor "
            f"{rraw.source}: {listed}",
            code="unknown_column", file=spec.source, column=unknown[0], data_dependent=False,
        )


def _spelling_hint(declared: str, names: Sequence[str]) -> str:
    """A hint naming the column that a declared name misses only by its letter case or its Unicode code points.

    ``café`` can be written with the letter ``é`` or with ``e`` and a combining accent;
    the two print alike, so a message naming the declared one alone does not say why it
    is not found.

    Examples
    --------
    >>> _spelling_hint("Age", ["id", "age"])
    " (the files have 'age', written otherwise: declare it as the file writes it)"
    >>> _spelling_hint("caf\u00e9", ["cafe\u0301"])
    " (the files have 'cafe\\\\u0301', written otherwise: declare it as the file writes it)"
    >>> _spelling_hint("zzz", ["age"])
    ''
    """
    def key(name: str) -> str:
        return column_name_key(name).casefold()

    match = next((name for name in names if key(name) == key(declared)), None)
    if match is None:
        return ""
    # a name not in the usual (composed) form is shown by its code points: printed, it looks like the declared one
    shown = short_repr(match, 60) if match == column_name_key(match) else short_text(ascii(match), 60)
    return f" (the files have {shown}, written otherwise: declare it as the file writes it)"


def _id_keys(raw: RawTable, name: str,
             matched: list[tuple[np.ndarray | None, tuple[int, str] | None]] | None = None,
             side: int = 0) -> np.ndarray:
    """The ids as text (numbers in canonical text), an object array; checks nulls and repeats.

    Ids that repeat are appended to ``matched`` (with ``(side, name)``) before their error
    is raised, when it is given (:func:`load_two_view`): a sharded engine checks the ids of
    all its parts together, and says every repeated id at once as loading all the rows does.
    """
    col = raw.table.column(name)
    missing = to_numpy(pc.is_null(col))
    if missing.any():
        rows = first_rows(missing)
        raise DataError(
            f"{raw.source}: {int(missing.sum())} row(s) have no id in column {name!r}: "
            f"row {', '.join(map(str, rows))}{', ...' if missing.sum() > len(rows) else ''}",
            code="missing_id", file=raw.source, column=name, row=rows[0],
        )
    texts = _key_texts(raw, name)
    keys = np.empty(len(texts), dtype=object)
    keys[:] = texts
    if len(set(texts)) < len(texts):
        seen: set[str] = set()
        repeated: dict[str, None] = {}  # in the order of their second occurrence
        for key in texts:
            if key in seen:
                repeated.setdefault(key)
            seen.add(key)
        if matched is not None:
            matched.append((keys, (side, name)))
        raise duplicate_ids_error(raw.source, name, list(repeated), len(repeated))
    pair = one_instant_twice(texts)
    if pair is not None:
        first, second = pair
        raise DataError(f"{raw.source}: ids {short_repr(texts[first])} (row {first + 1}) and {short_repr(texts[second])} "
                        f"(row {second + 1}) in column {name!r} are one instant written in two time zones: one "
                        f"entity twice; write each id once, in one form", code="duplicate_id", file=raw.source,
                        column=name, row=second + 1)
    return keys


#: A date and time with a time zone's offset, as an id may be written (``2020-01-01T10:00+01:00``, ``...09:00Z``).
_ZONED_TIME = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?\s*([Zz]|[+-]\d{2}(:?\d{2})?)$"


def one_instant_twice(texts: Sequence[str | None]) -> tuple[int, int] | None:
    """The positions of the first two texts that are one instant written in two time zones, if any.

    Ids are compared as written (a date and time is text: :mod:`dprm.data.reading`), so
    ``2020-01-01T10:00+01:00`` and ``2020-01-01T09:00Z`` were two entities without a word
    (or, one in each view, two unmatched ids). Only dates and times with an offset are
    one instant; one without (local time) is compared as written.

    Examples
    --------
    >>> one_instant_twice(["2020-01-01T10:00+01:00", "x", "2020-01-01T09:00Z"])
    (0, 2)
    >>> one_instant_twice(["2020-01-01T10:00+01:00", "2020-01-01T10:00Z", "2020-01-01T09:00"]) is None
    True
    """
    column = string_array(["" if text is None else text for text in texts])  # pa.array(list) would import pandas
    zoned = np.flatnonzero(to_numpy(pc.match_substring_regex(column, _ZONED_TIME), fill=False))
    if len(zoned) < 2:
        return None
    utc = pa.timestamp("ns", tz="UTC")
    try:  # pyarrow's ISO 8601 reading, offsets included
        instants = to_numpy(pc.cast(column.take(zoned), utc).cast(pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # one it cannot read (month 13): one at a time
        instants = np.empty(len(zoned), dtype=np.int64)
        for k, position in enumerate(zoned.tolist()):
            try:
                instants[k] = pc.cast(column[position], utc).value
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                instants[k] = np.iinfo(np.int64).min + k  # no instant: distinct from every other
    order = np.argsort(instants, kind="stable")
    same = np.flatnonzero(np.diff(instants[order]) == 0)
    if not len(same):
        return None
    first, second = sorted((int(zoned[order[same[0]]]), int(zoned[order[same[0] + 1]])))
    return first, second


def duplicate_ids_error(source: str, column: str, repeated: Sequence[str], count: int) -> DataError:
    """The error of ids that occur more than once in ``column`` of ``source``.

    ``repeated``: the first of the ``count`` repeated ids in the order of their second
    occurrence (at least the first few shown: a sharded engine finds them in its shards,
    :mod:`dprm.engine.shard_ids`, and passes no more).

    Examples
    --------
    >>> str(duplicate_ids_error("left.csv", "id", ["7", "3"], 2))
    "left.csv: 2 id(s) occur more than once in column 'id': 7, 3"
    >>> str(duplicate_ids_error("left.csv", "id", list("abcdef"), 9))
    "left.csv: 9 id(s) occur more than once in column 'id': a, b, c, d, e, ..."
    """
    shown = _list(list(repeated)[:SHOW]) + (", ..." if count > SHOW else "")
    return DataError(f"{source}: {count} id(s) occur more than once in column {column!r}: {shown}",
                     code="duplicate_id", file=source, column=column)


def _key_texts(raw: RawTable, name: str) -> list[str | None]:
    """The values of column ``name`` as id texts: text as written, integers in decimal, other numbers canonical."""
    typ = raw.table.column(name).type
    if pa.types.is_string(typ) or pa.types.is_integer(typ):
        return pc.cast(raw.table.column(name), pa.string()).to_pylist()
    return _number_id_texts(raw, name)


def _id_like_keys(raw: RawTable, name: str) -> list[str] | None:
    """Column ``name``'s id texts when it looks like an id column; else None.

    It looks like one when it holds whole numbers or text (not Boolean: ``0, 1`` or
    ``yes, no``), in at least two rows, none missing, all distinct: what the id
    column's checks (:func:`_id_keys`) accept, and what is mined as a useless
    attribute when it is not taken as the ids (every value names one row).

    Examples
    --------
    >>> import pandas as pd
    >>> from dprm.data.reading import read_table
    >>> _id_like_keys(read_table(pd.DataFrame({"k": [7, 3, 5]})), "k")
    ['7', '3', '5']
    >>> [_id_like_keys(read_table(pd.DataFrame({"k": values})), "k")
    ...  for values in ([7, 3, 7], [0.5, 1.5], [0, 1], ["a", None], [7])]
    [None, None, None, None, None]
    """
    texts = _id_candidate_keys(raw, name)
    if texts is None or infer_kind(raw.table.column(name)) is AttributeKind.BOOLEAN:
        return None
    return texts if len(texts) >= 2 and len(set(texts)) == len(texts) else None


def _id_candidate_keys(raw: RawTable, name: str, written_booleans: bool = False) -> list[str] | None:
    """Column ``name``'s id texts when it holds whole numbers or text, none missing; else None.

    What :func:`_id_like_keys` asks of a column besides not being Boolean and its values
    being distinct, in two rows or more: what one part of the rows can tell alone. With
    ``written_booleans`` (a part of the rows), a text file's column read as ``bool``
    (``true, false``) gives its cells as written: in a part it can be the text of all the
    rows (``yes, no`` in another part); over all the rows it is Boolean, never an id.
    """
    column = raw.table.column(name)
    typ = column.type
    if column.null_count:
        return None
    if pa.types.is_boolean(typ) and written_booleans:
        written = raw.cells_as_written(name)
        return written if written is not None and len(written) == len(column) and None not in written else None
    if not (pa.types.is_string(typ) or pa.types.is_integer(typ)):
        return None
    return _key_texts(raw, name)  # type: ignore[return-value]


@dataclass(frozen=True)
class FirstColumns:
    """The views' first columns when rows are matched by position, in some rows: what deciding on them needs.

    ``sources`` and ``names``: each view's file and first column; ``undeclared``: whether
    it is neither taken as the ids nor declared in the types file; ``keys``: its values as
    id texts when it could be an id column (:func:`_id_candidate_keys`), else None;
    ``boolean``: whether it is Boolean in these rows (``0, 1`` or ``yes, no``: not an id);
    ``spellings``: then its :func:`~dprm.data.inference.boolean_spellings` (else None), with
    which the parts' columns are Boolean in all the rows or not
    (:func:`~dprm.data.inference.boolean_in_all_parts`: ``yes, no`` in one part and ``true,
    false`` in another are not).
    """

    sources: tuple[str, str]
    names: tuple[str, str]
    undeclared: tuple[bool, bool]
    keys: tuple[list[str] | None, list[str] | None]
    boolean: tuple[bool, bool]
    spellings: tuple[tuple[bool, frozenset[str]] | None, tuple[bool, frozenset[str]] | None] = (None, None)


def _first_columns(lraw: RawTable, rraw: RawTable, lid: str | None, rid: str | None,
                   spec: TypesSpec, written_booleans: bool = False) -> FirstColumns:
    firsts = [(raw, raw.column_names[0], taken) for raw, taken in ((lraw, lid), (rraw, rid))]
    keys = [_id_candidate_keys(raw, name, written_booleans) for raw, name, _ in firsts]
    undeclared = [taken is None and spec.get(name) is None for _, name, taken in firsts]
    spellings = [boolean_spellings(raw.table.column(name)) for raw, name, _ in firsts]
    return FirstColumns((lraw.source, rraw.source), (firsts[0][1], firsts[1][1]),
                        (undeclared[0], undeclared[1]), (keys[0], keys[1]),
                        (spellings[0] is not None, spellings[1] is not None), (spellings[0], spellings[1]))


def _like_ids(first: FirstColumns) -> tuple[tuple[bool, bool], bool, bool]:
    """Whether each first column looks like an id (:func:`_id_like_keys`), whether both hold the same values,
    and whether in the same order."""
    like = tuple(k is not None and not boolean and len(k) >= 2 and len(set(k)) == len(k)
                 for k, boolean in zip(first.keys, first.boolean))
    left, right = first.keys
    both = left is not None and right is not None
    return (like[0], like[1]), both and set(left) == set(right), both and left == right  # type: ignore[arg-type]


def position_notes(first: FirstColumns, like_ids: tuple[bool, bool], same_values: bool,
                   same_order: bool) -> tuple[list[str], list[str]]:
    """Rows matched by position: refuse one id column under two names; note first columns that look like ids.

    ``like_ids``: whether each view's first column looks like an id (:func:`_id_like_keys`)
    in all the rows; ``same_values``, ``same_order``: whether both hold the same values,
    and in the same order. Decided on all the rows: in-process from the files, by a
    sharded engine from what its shards found (:mod:`dprm.engine.sharding`).

    The first columns of both views look like ids and hold the same values, but have
    different names, so neither is taken as the id column: that is one id column under
    two names (``row_id`` and ``id``), and matching the rows by position would pair rows
    of different entities whenever the orders differ, and mine the ids as attributes. A
    :class:`DataError`, unless the types file declares both columns (``"ignore"``, or a
    type to mine them; a first column named ``ids`` is taken as the ids by Siren's
    convention and needs no declaration): then the owner has said they are not the ids.
    Otherwise each undeclared first column that looks like an id, and is mined as an
    attribute, gets a note (one list of notes per view).
    """
    if all(like_ids) and any(first.undeclared) and same_values:
        lfirst, rfirst = first.names
        order = "in the same order" if same_order else "in another order"
        free = [name for name, is_free in zip(first.names, first.undeclared) if is_free]
        declare = "both" if len(free) == 2 else short_repr(free[0], 60)
        raise DataError(
            f"{first.sources[0]}, {first.sources[1]}: first columns {short_repr(lfirst, 60)} and "
            f"{short_repr(rfirst, 60)} hold the same distinct values ({order}), like one id column with two "
            f"names: give them one name, or declare {declare} in the types file to match rows by position",
            code="id_names_differ", file=first.sources[0], column=lfirst,
        )
    notes: tuple[list[str], list[str]] = ([], [])
    for side, (source, name, looks_like_id, is_free) in enumerate(zip(first.sources, first.names, like_ids,
                                                                     first.undeclared)):
        if looks_like_id and is_free:
            notes[side].append(
                f"{source}: column {name!r} looks like an id (distinct values, none missing) but is mined "
                f"as an attribute: the rows are matched by position, since the views' first columns have "
                f"different names")
    return notes


def _number_id_texts(raw: RawTable, name: str) -> list[str]:
    """The canonical texts of an id column read as floats (or other non-text values).

    A text file's integers too large for int64 are read as float64 by pyarrow, which
    would merge distinct ids (``2**63`` and ``2**63 + 1``); their cells are re-read as
    written and canonicalised exactly (:func:`~dprm.data.category_text.integer_text`).
    Other numbers get the canonical text of their float.
    """
    values = raw.table.column(name).to_pylist()
    written = raw.cells_as_written(name) if pa.types.is_floating(raw.table.column(name).type) else None
    if written is None or len(written) != len(values):
        return [category_text(v) for v in values]
    texts = []
    for value, cell in zip(values, written):
        exact = integer_text(cell.strip()) if cell is not None else None
        texts.append(exact if exact is not None else category_text(value))
    return texts


def _align(lkeys: np.ndarray, rkeys: np.ndarray, lsource: str, rsource: str) -> np.ndarray:
    """Positions in the right view of each left id; errors on ids in one view only.

    The ids of each view are distinct (:func:`_id_keys` checked).
    """
    position = {key: i for i, key in enumerate(rkeys.tolist())}
    order = np.fromiter((position.get(key, -1) for key in lkeys.tolist()), dtype=np.intp, count=len(lkeys))
    only_left = lkeys[order < 0]
    if only_left.size:
        in_left = set(lkeys.tolist())
        only_right = [key for key in rkeys.tolist() if key not in in_left]
        raise DataError(f"{lsource}: {only_left.size} id(s) are not in {rsource}: {_list(only_left)}"
                        f"{_unmatched_hint(only_left.tolist(), only_right)}", code="unmatched_id", file=lsource)
    if len(rkeys) != len(lkeys):
        in_left = set(lkeys.tolist())
        only_right = [key for key in rkeys.tolist() if key not in in_left]
        raise DataError(
            f"{rsource}: {len(only_right)} id(s) are not in {lsource}: {_list(only_right)}",
            code="unmatched_id", file=rsource,
        )
    return order


def _unmatched_hint(left: list[str], right: list[str]) -> str:
    """What an error of unmatched ids adds when one of ``left`` and one of ``right`` are one id written otherwise:
    one instant in two time zones (each view's ids are distinct instants: :func:`_id_keys`), or a text with other
    spaces around it or in another letter case (ids are compared as written: ``A`` is not ``a``).

    Examples
    --------
    >>> _unmatched_hint(["A", "x"], ["y", "a"]), _unmatched_hint(["b "], ["b"]), _unmatched_hint(["1"], ["2"])
    (" ('A' and 'a' differ only in letter case: ids are compared as written; write them alike in both files)", " ('b ' and 'b' differ only in the spaces around them: ids are compared as written; write them alike in both files)", '')
    """
    pair = one_instant_twice(left + right)
    if pair is not None:
        return (f" ({short_repr(left[pair[0]])} and {short_repr(right[pair[1] - len(left)])} are one instant "
                f"written in two time zones: write the ids in one form in both files)")
    for how, key in (("in the spaces around them", str.strip), ("in letter case", str.casefold),
                     ("in letter case and spaces", lambda text: text.strip().casefold())):
        others = {key(text): text for text in right}
        match = next((text for text in left if key(text) in others), None)
        if match is not None:
            return (f" ({short_repr(match)} and {short_repr(others[key(match)])} differ only {how}: ids are "
                    f"compared as written; write them alike in both files)")
    return ""


def _list(values: Any) -> str:
    """The first :data:`SHOW` ids, each cut short (an id may be huge) and quoted where it holds a line break or
    another character that does not print (the message is one line, and says which id).

    >>> _list(["7", "a\\nb", "x" * 50])
    "7, 'a\\\\nb', xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."
    >>> _list(["a ", " b"])
    "'a ', ' b'"
    """
    values = [str(v) for v in values]
    # quoted also where spaces begin or end it: 'a ' printed as a was not told from the other view's a
    shown = ", ".join(short_text(v if v.isprintable() and v == v.strip() else repr(v)) for v in values[:SHOW])
    return shown + (", ..." if len(values) > SHOW else "")


def _check_flag(value: object, name: str) -> None:
    """Refuse a flag that is not a Boolean: ``keep_constant="no"`` would be true.

    >>> _check_flag(True, "keep_constant")
    >>> _check_flag("no", "keep_constant")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: keep_constant must be True or False, not 'no'
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False, not {short_repr(value)}")


def _build_view(raw: RawTable, side: str, spec: TypesSpec, exclude: str | None,
                out_of_bounds: str = "error", keep_constant: bool = False,
                first_notes: Sequence[str] = (), spellings: bool = False) -> View:
    attributes: list[Attribute] = []
    words: dict[str, tuple[bool, frozenset[str]]] = {}
    constant: list[str] = []
    empty: list[str] = []
    notes = [*first_notes,
             *(f"{raw.source}: duplicate column {original!r} renamed {new!r}" for new, original in raw.renamed.items()),
             *(f"{raw.source}: column {name!r} holds the index pandas wrote with the frame (not one of its columns) "
               f"and is left out" for name in raw.pandas_index),
             *(f"{raw.source}: column {name!r} holds durations, read as numbers of seconds" for name in raw.durations)]
    for name, column in zip(raw.column_names, raw.table.columns):
        if name == exclude:
            continue
        declared = spec.get(name)
        if declared is not None and declared.type is ColumnType.IGNORE:
            continue
        if declared is not None and declared.type is ColumnType.ID:
            # an id column of the types file that is not this view's id
            continue
        kind = declared.type.kind if declared is not None else None
        if kind is None and raw.column_names.index(name) in raw.tiny_numbers:
            kind = AttributeKind.NUMERIC  # numbers (pyarrow read them so) of which one reads as 0: refused, named
        if kind is None:
            kind = infer_kind(column)
            if kind is AttributeKind.BOOLEAN and spellings:
                words[name] = boolean_spellings(column)  # type: ignore[assignment]
            if kind is AttributeKind.CATEGORICAL:
                comma = _decimal_comma_row(column)
                thousands = _thousands_row(column)
                row = _first_non_number(column) if comma is None and thousands is None else None
                if comma is not None and thousands is not None:  # 1,000: a decimal comma, or a thousand?
                    notes.append(f"{raw.source}: column {name!r} is categorical (inferred): its values are numbers "
                                 f"written with a comma, e.g. row {comma}, a decimal comma or a thousands separator, "
                                 f"which are not read as numbers; write them with a decimal point and no "
                                 f"separators, or declare the column categorical")
                elif comma is not None:
                    notes.append(f"{raw.source}: column {name!r} is categorical (inferred): its values are numbers "
                                 f"written with a decimal comma, e.g. row {comma}, which are not read as numbers; "
                                 f"write them with a decimal point, or declare the column categorical")
                elif thousands is not None:
                    notes.append(f"{raw.source}: column {name!r} is categorical (inferred): its values are numbers "
                                 f"written with thousands separators, e.g. row {thousands}, which are not read as "
                                 f"numbers; write them without, or declare the column categorical")
                elif row is not None:
                    notes.append(f"{raw.source}: column {name!r} is categorical (inferred): "
                                 f"not every value is a number, e.g. row {row}")
        if name in raw.nan_rows and kind is not AttributeKind.CATEGORICAL:
            notes.append(f"{raw.source}: column {name!r}: NaN read as a missing value, "
                         f"e.g. row {raw.nan_rows[name]}")
        attribute = encode_column(
            name, side, column, kind, declared, raw.source, out_of_bounds=out_of_bounds, notes=notes,
            cells_as_written=lambda name=name: raw.cells_as_written(name),
        )
        # A column the types file declares is kept even when constant: the set of
        # attributes of a private run must not depend on the data.
        if declared is None and is_constant(attribute):
            constant.append(name)
            if attribute.missing.all():
                empty.append(name)
            if keep_constant:
                attributes.append(attribute)
        else:
            attributes.append(attribute)
    notes += left_out_notes(raw.source, constant, empty, "kept" if keep_constant else "left out")
    return View(side, attributes, source=raw.source, constant=constant, renamed=dict(raw.renamed), notes=notes,
                spellings=words)


#: A finite number written in digits (spaces around are fine): "nan" or "inf" alone
#: does not make a text column look numeric.
_NUMBER = r"^\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)\s*$"
#: How many column names a note lists.
_NOTE_NAMES = 10


def _first_non_number(column: pa.ChunkedArray) -> int | None:
    """For a text column holding some numbers: the first row that is not one; else None."""
    if not pa.types.is_string(column.type):
        return None
    is_number = pc.match_substring_regex(column, _NUMBER, ignore_case=True)
    if not pc.any(is_number).as_py():
        return None
    not_number = ~to_numpy(is_number, fill=True)
    if not not_number.any():
        return None  # pragma: no cover - such a column is numeric
    return first_rows(not_number, 1)[0]


#: A number as a spreadsheet writes it with a decimal comma (``2,5``, ``-0,25``, ``1.234,5``), or a whole number.
_DECIMAL_COMMA = r"^\s*[+-]?((\d+|\d{1,3}(\.\d{3})+)(,\d*)?|,\d+)\s*$"
#: How many of a column's first values show whether it may hold numbers with a decimal comma.
_DECIMAL_COMMA_PROBE = 64


def _decimal_comma_row(column: pa.ChunkedArray) -> int | None:
    """For a text column whose every value is a number once its decimal comma is read as a point (and one at
    least has a comma): the first row with a comma; else None.

    Excel in many European locales writes ``2,5`` (in a ``;``-separated file); the
    column is read as categories, as written, and a note says why. Its first values
    decide first, so that a column of words costs nothing more.

    Examples
    --------
    >>> _decimal_comma_row(pa.chunked_array([["3", None, "2,5", "1.234,75"]]))
    3
    >>> _decimal_comma_row(pa.chunked_array([["2,5", "n/a"]])) is None
    True
    """
    if not pa.types.is_string(column.type):
        return None
    probe = pc.drop_null(column.slice(0, _DECIMAL_COMMA_PROBE)).to_pylist()
    if not probe or not all(re.match(_DECIMAL_COMMA, value) for value in probe):
        return None
    if not pc.all(pc.match_substring_regex(column, _DECIMAL_COMMA)).as_py():
        return None
    comma = to_numpy(pc.match_substring(column, ","), fill=False)
    return first_rows(comma, 1)[0] if comma.any() else None


#: A number written with thousands separators (``1,234,567``, ``1 234``, ``1'234.5``, a no-break space), or a
#: whole number without.
_THOUSANDS = r"^\s*[+-]?(\d{1,3}([,' \x{a0}\x{202f}]\d{3})+|\d+)(\.\d*)?\s*$"


def _thousands_row(column: pa.ChunkedArray) -> int | None:
    """For a text column whose every value is a number once its thousands separators are left out (and one at
    least has one): the first row with a separator; else None.

    ``1,234,567`` (quoted in a comma-separated file), ``1 234`` or ``1'234`` made the
    column categories without a word (no value is a number as written, so the note of a
    column "not every value is a number" was not given either).

    Examples
    --------
    >>> _thousands_row(pa.chunked_array([["3", None, "1,234,567", "2 500.5"]]))
    3
    >>> _thousands_row(pa.chunked_array([["1,2345"]])) is None, _thousands_row(pa.chunked_array([["12"]])) is None
    (True, True)
    """
    if not pa.types.is_string(column.type):
        return None
    probe = pc.drop_null(column.slice(0, _DECIMAL_COMMA_PROBE))
    if len(probe) == 0 or not pc.all(pc.match_substring_regex(probe, _THOUSANDS)).as_py():
        return None
    if not pc.all(pc.match_substring_regex(column, _THOUSANDS)).as_py():
        return None
    separated = to_numpy(pc.match_substring_regex(column, r"\d[,' \x{a0}\x{202f}]\d"), fill=False)
    return first_rows(separated, 1)[0] if separated.any() else None


def left_out_notes(source: str, constant: Sequence[str], empty: Sequence[str], fate: str = "left out") -> list[str]:
    """The notes on a view's undeclared empty and constant columns (``constant`` includes the ``empty`` ones).

    Examples
    --------
    >>> for note in left_out_notes("l.csv", ["a", "b", "c"], ["b"]):
    ...     print(note)
    l.csv: column 'b' is empty (all values missing) and left out
    l.csv: 2 columns are constant (a single value) and left out: 'a', 'c'
    """
    notes = []
    if empty:
        notes.append(_left_out(source, list(empty), "empty (all values missing)", fate))
    if len(constant) > len(empty):
        notes.append(_left_out(source, [n for n in constant if n not in empty], "constant (a single value)", fate))
    return notes


def _left_out(source: str, names: list[str], what: str, fate: str = "left out") -> str:
    if len(names) == 1:
        return f"{source}: column {names[0]!r} is {what} and {fate}"
    shown = ", ".join(short_repr(n, 60) for n in names[:_NOTE_NAMES])
    more = f", ... ({len(names)} in all)" if len(names) > _NOTE_NAMES else ""
    return f"{source}: {len(names)} columns are {what} and {fate}: {shown}{more}"


def _reorder(view: View, order: np.ndarray) -> View:
    attributes = [
        Attribute(a.name, a.view, a.kind, a.values[order], a.domain) for a in view.attributes
    ]
    return View(view.name, attributes, source=view.source, constant=list(view.constant), renamed=view.renamed,
                notes=list(view.notes), spellings=dict(view.spellings))
