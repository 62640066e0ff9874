"""Encoding a typed column as an :class:`~dprm.data.attributes.Attribute`.

Given a column's cells (a pyarrow column, nulls for missing values), its kind and
the types file's declaration, build the attribute's value array in the encoding of
:mod:`dprm.data.attributes` and its :class:`~dprm.data.attributes.Domain`, checking
every value against the kind and the declared domain. Values that do not fit are a
:class:`~dprm.errors.DataError` naming the source, column, 1-based data row (the
header is not a row) and value, with a machine ``code`` (``"not_a_number"``,
``"not_finite"``, ``"not_boolean"``, ``"value_out_of_bounds"``,
``"unknown_category"``).

Values outside a declared domain are an error by default. With
``out_of_bounds="clamp"`` (OpenDP's convention) a number is clamped into the
declared bounds and a category that is not declared becomes a missing value; each
column where that happened gets a note (without counts or values), so nothing is
changed without the owner being told.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dprm.data.arrow_arrays import null_scalar, string_array, to_numpy
from dprm.data.attributes import Attribute, AttributeKind, Domain
from dprm.data.category_text import (NONZERO_DIGITS, category_order, category_text, integer_text, number_text,
                                     underflow_text, written_category)
from dprm.data.inference import BOOLEAN_WORDS
from dprm.data.literal_index import DEFAULT_MAX_SPLITS
from dprm.data.types_file import OUT_OF_BOUNDS, ColumnSpec
from dprm.errors import DataError, ParameterError, short_repr, short_text

__all__ = ["encode_column", "is_constant", "inferred_transform"]

#: Texts that commonly mark a missing value: a message about one suggests declaring it.
_MARKER_LIKE = frozenset({"na", "n/a", "nan", "null", "none", "?", "-", ".", "missing", "#n/a", "nil"})


class _Column:
    """Where a column is, for messages and errors."""

    def __init__(self, source: str, name: str, written: Callable[[], list[str | None] | None] | None):
        self.source, self.name, self._written = source, name, written

    def __str__(self) -> str:
        return f"{self.source}: column {self.name!r}"

    def error(self, row: int, text: str, code: str) -> DataError:
        """An error at 1-based ``row``: ``"<source>: column 'c', row r: <text>"``."""
        return DataError(f"{self}, row {row}: {text}", code=code, file=self.source, column=self.name, row=row)

    def written(self, row: int) -> str | None:
        """The cell at 1-based ``row`` as the file wrote it, when that can be known."""
        cells = self._written() if self._written is not None else None
        if cells is None or row > len(cells):
            return None
        return cells[row - 1]


def encode_column(
    name: str,
    view: str,
    column: pa.ChunkedArray | pa.Array,
    kind: AttributeKind,
    spec: ColumnSpec | None = None,
    source: str = "<memory>",
    *,
    out_of_bounds: str = "error",
    notes: list[str] | None = None,
    cells_as_written: Callable[[], list[str | None] | None] | None = None,
) -> Attribute:
    """Encode one column as an attribute of the given kind.

    Parameters
    ----------
    name : str
        The column name.
    view : str
        ``"left"`` or ``"right"``.
    column : pyarrow.ChunkedArray or pyarrow.Array
        The cells, in file order, nulls for missing values.
    kind : AttributeKind
        The kind to encode as (inferred or declared).
    spec : ColumnSpec, optional
        The types file's declaration, whose ``bounds`` or ``categories`` become a
        declared domain.
    source : str
        The file name for messages.
    out_of_bounds : {"error", "clamp"}
        A value outside the declared domain is an error, or (``"clamp"``) a number
        is clamped into the bounds and an undeclared category becomes missing (an
        error still in a column declared complete).
    notes : list of str, optional
        Where a note is appended when values were clamped or made missing.
    cells_as_written : callable, optional
        Returns the column's cells as the file wrote them (or None); used only to
        quote a value in an error message (``1e309`` rather than ``inf``).

    Returns
    -------
    Attribute

    Raises
    ------
    DataError
        When a value does not fit the kind or lies outside the declared domain.

    Examples
    --------
    >>> import pyarrow as pa
    >>> a = encode_column("n", "left", pa.array([3.0, None, 2.5]), AttributeKind.CATEGORICAL)
    >>> a.domain.categories, a.values.tolist()
    (('2.5', '3'), [1, -1, 0])
    >>> encode_column("b", "left", pa.array(["yes", "No"]), AttributeKind.BOOLEAN).values.tolist()
    [1, 0]
    >>> from dprm.data.types_file import ColumnSpec, ColumnType
    >>> notes = []
    >>> age = encode_column("age", "left", pa.array([30.0, 130.0]), AttributeKind.NUMERIC,
    ...                     ColumnSpec(ColumnType.NUMERIC, bounds=(0.0, 120.0)), "l.csv",
    ...                     out_of_bounds="clamp", notes=notes)
    >>> age.values.tolist(), notes
    ([30.0, 120.0], ["l.csv: column 'age': values outside the declared bounds [0, 120] clamped into them"])
    """
    if out_of_bounds not in OUT_OF_BOUNDS:
        raise ParameterError(f"out_of_bounds must be 'error' or 'clamp', not {short_repr(out_of_bounds)}")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    where = _Column(source, name, cells_as_written)
    clamp = out_of_bounds == "clamp"
    if kind is AttributeKind.BOOLEAN:
        values = _boolean(column, where)
        # {0, 1} is the whole domain, but the *type* is public only when the types file
        # says so: a column inferred as Boolean could be numeric with one more row.
        domain = Domain(declared=spec is not None)
    elif kind is AttributeKind.NUMERIC:
        values = _numeric(column, where)
        values, domain = _numeric_domain(values, spec, where, clamp, notes)
    elif kind is AttributeKind.CATEGORICAL:
        values, domain = _categorical(column, spec, where, clamp, notes)
    else:  # pragma: no cover - AttributeKind has three members
        raise ValueError(f"unknown kind {kind!r}")
    if spec is not None and spec.transform is not None:
        domain = replace(domain, transform=spec.transform)
    attribute = Attribute(name, view, kind, values, domain)
    if spec is not None and spec.complete:
        missing = np.flatnonzero(attribute.missing)
        if missing.size:  # data-dependent: the server shows only the code's generic text to analysts
            raise where.error(int(missing[0]) + 1, "a missing value, but the types file declares the column complete",
                              "missing_in_complete")
        attribute = Attribute(name, view, kind, values, replace(domain, complete=True))
    return attribute


def is_constant(attribute: Attribute) -> bool:
    """True when the attribute holds fewer than two distinct non-missing values.

    Examples
    --------
    >>> import numpy as np
    >>> is_constant(Attribute("a", "left", AttributeKind.NUMERIC, np.array([1.0, np.nan, 1.0])))
    True
    """
    values = attribute.values
    if attribute.kind is AttributeKind.NUMERIC:
        present = values[~np.isnan(values)]
    else:
        present = values[values >= 0]
    if present.size == 0:
        return True
    return bool(present.min() == present.max())


# ------------------------------------------------------------------------- boolean


def _boolean(column: pa.Array, where: _Column) -> np.ndarray:
    typ = column.type
    if pa.types.is_boolean(typ):
        return _int8(column)
    if pa.types.is_integer(typ) or pa.types.is_floating(typ):
        values = to_numpy(column, fill=0)  # a missing value is fine here
        _fail_where((values == 0) | (values == 1), column, where, "is not Boolean (0 or 1)", "not_boolean")
        return _int8(column)
    if pa.types.is_decimal(typ):
        ok = pc.or_(pc.equal(column, 0), pc.equal(column, 1))  # imports pandas: decimals come from Parquet only
        _fail_where(ok, column, where, "is not Boolean (0 or 1)", "not_boolean")
        return _int8(column)
    if pa.types.is_string(typ):
        lowered = pc.utf8_lower(pc.utf8_trim_whitespace(column))
        words = string_array(list(BOOLEAN_WORDS))
        index = pc.index_in(lowered, value_set=words)
        ok = pc.is_valid(index)
        _fail_where(pc.or_(ok, pc.is_null(column)), column, where,
                    "is not Boolean (0/1, true/false, yes/no)", "not_boolean")
        lookup = np.array(list(BOOLEAN_WORDS.values()) + [-1], dtype=np.int8)
        idx = to_numpy(index, fill=len(words))
        return lookup[idx]
    if pa.types.is_null(typ):
        return np.full(len(column), -1, dtype=np.int8)
    _fail_where(pc.is_null(column), column, where, "is not Boolean (0/1, true/false, yes/no)", "not_boolean")
    return np.full(len(column), -1, dtype=np.int8)  # all missing


def _int8(column: pa.Array) -> np.ndarray:
    return to_numpy(pc.cast(column, pa.int8()), fill=-1).astype(np.int8, copy=False)


# ------------------------------------------------------------------------- numeric


def _numeric(column: pa.Array, where: _Column) -> np.ndarray:
    typ = column.type
    if pa.types.is_null(typ):
        return np.full(len(column), np.nan)
    if pa.types.is_string(typ):
        trimmed = pc.utf8_trim_whitespace(column)
        try:
            column = pc.cast(trimmed, pa.float64())
        except pa.ArrowInvalid:
            _fail_numeric_text(trimmed, where)
            raise  # pragma: no cover - _fail_numeric_text always raises
        # "NaN" in a column of numbers is a missing value, as in a text file's numbers
        column = pc.if_else(pc.is_nan(column), null_scalar(pa.float64()), column)
        # a number nearer 0 than a float64 holds ("1e-400") reads as 0: refused (reading.py does so for the
        # columns pyarrow reads as numbers)
        tiny = (to_numpy(column, fill=np.nan) == 0.0) \
            & to_numpy(pc.match_substring_regex(trimmed, NONZERO_DIGITS), fill=False)
        if tiny.any():
            row = int(np.flatnonzero(tiny)[0]) + 1
            raise where.error(row, underflow_text(trimmed[row - 1].as_py()), "number_underflow")
    elif pa.types.is_boolean(typ) or pa.types.is_integer(typ) or pa.types.is_decimal(typ):
        exact = column
        column = pc.cast(column, pa.float64(), safe=False)
    elif not pa.types.is_floating(typ):
        _fail_where(pc.is_null(column), column, where, "is not a number", "not_a_number")
    values = to_numpy(pc.cast(column, pa.float64(), safe=False), fill=np.nan)
    values = np.asarray(values, dtype=np.float64)
    if pa.types.is_string(typ):
        _refuse_merged_whole_numbers(trimmed, values, where)
    elif pa.types.is_integer(typ) or pa.types.is_decimal(typ):
        _refuse_merged_whole_numbers(exact, values, where)
    infinite = np.isinf(values)
    if infinite.any():
        row = int(np.flatnonzero(infinite)[0]) + 1
        written = (where.written(row) or "").strip()
        if written and written.lower().lstrip("+-") not in ("inf", "infinity"):
            text = f"value {short_text(written)} is too large for a number (beyond ±1.8e308)"
        else:
            text = f"value {short_text(written or number_text(float(values[row - 1])))} is not a finite number"
        raise where.error(row, text, "not_finite")
    return values


#: Whole numbers of at least this size have neighbours a float64 cannot tell apart
#: (``2**53 + 1`` reads as ``2**53``).
_EXACT_WHOLE_NUMBERS = 2.0**53


def _refuse_merged_whole_numbers(exact: pa.Array, values: np.ndarray, where: _Column) -> None:
    """Raise where two different whole numbers of ``exact`` read as one float in ``values``.

    Beyond 2**53 a float64 keeps about 16 digits, so ``9223372036854775807`` and
    ``…806`` are one number: a column of such values (a 64-bit code or hash) would
    silently lose its distinctions, or be left out as constant. Only the few values
    that large are looked at in Python; integers, decimals and texts of whole numbers
    alike (a text ``1e19`` is a float as written, not a whole number, and is left alone).
    """
    large = np.flatnonzero(np.abs(values) >= _EXACT_WHOLE_NUMBERS)
    if len(large) == 0:
        return
    seen: dict[float, tuple[int, int]] = {}
    for position in large.tolist():
        cell = exact[position].as_py()
        if isinstance(cell, str):
            digits = integer_text(cell)  # exactly, as the categories read it
            if digits is None:
                continue
            cell = int(digits)
        elif not isinstance(cell, int):  # a Decimal
            if cell != cell.to_integral_value():
                continue
            cell = int(cell)
        first = seen.setdefault(float(values[position]), (cell, position))
        if first[0] != cell:
            raise where.error(position + 1, f"value {short_text(str(cell))} reads as the same number as "
                                            f"{short_text(str(first[0]))} (row {first[1] + 1}): whole numbers beyond "
                                            f"2^53 lose their last digits as numbers; declare the column "
                                            f"categorical, or ignore it, in a types file", "inexact_number")


def _fail_numeric_text(text: pa.Array, where: _Column) -> None:
    """Raise the error naming the first cell of ``text`` that pyarrow cannot read as a number.

    The row is found by pyarrow's own cast, halving the rows that hold a refused cell:
    Python's ``float()`` accepts texts pyarrow refuses (full-width digits ``５``,
    separators ``1_000``), so asking it named no row.
    """
    low, high = 0, len(text)
    while high - low > 1:
        middle = (low + high) // 2
        if _casts(text.slice(low, middle - low)):
            low = middle
        else:
            high = middle
    value = text[low].as_py() if high > low else None
    if value is None or _casts(text.slice(low, 1)):  # pragma: no cover - the whole did not cast
        raise DataError(f"{where}: holds values that are not numbers", code="not_a_number",
                        file=where.source, column=where.name)
    hint = ""
    if value.lower() in _MARKER_LIKE:
        hint = "; if it marks a missing value, declare it (na_values, --na-values)"
    elif "_" in value or not value.isascii():
        hint = "; write numbers in ASCII digits without separators"
    raise where.error(low + 1, f"value {short_repr(value)} is not a number (the column is numeric){hint}",
                      "not_a_number")


def _casts(text: pa.Array) -> bool:
    """Whether pyarrow reads every cell of ``text`` as a float64."""
    try:
        pc.cast(text, pa.float64())
    except pa.ArrowInvalid:
        return False
    return True


def _numeric_domain(
    values: np.ndarray, spec: ColumnSpec | None, where: _Column, clamp: bool, notes: list[str] | None
) -> tuple[np.ndarray, Domain]:
    if spec is not None and spec.bounds is not None:
        low, high = spec.bounds
        outside = (values < low) | (values > high)  # NaN compares false
        if outside.any():
            shown = f"[{number_text(low)}, {number_text(high)}]"
            if not clamp:
                row = int(np.flatnonzero(outside)[0]) + 1
                raise where.error(
                    row,
                    f"value {number_text(float(values[row - 1]))} is outside the declared bounds {shown}",
                    "value_out_of_bounds",
                )
            values = np.clip(values, low, high)  # NaN stays NaN
            if notes is not None:
                notes.append(f"{where}: values outside the declared bounds {shown} clamped into them")
        return values, Domain(bounds=(low, high), declared=True)
    present = values[~np.isnan(values)]
    if present.size == 0:
        return values, Domain()
    low, high = float(present.min()), float(present.max())
    return values, Domain(bounds=(low, high), declared=False, transform=_inferred_transform(present, low, high))


#: The widest range of an undeclared whole-number column whose inferred domain cuts it at every whole number
#: (:func:`_inferred_transform`): the default ``max_splits``, so that every threshold is one.
INFERRED_INTEGER_RANGE = DEFAULT_MAX_SPLITS


def _inferred_transform(present: np.ndarray, low: float, high: float) -> str | None:
    """``"integers"`` for an undeclared column of whole numbers spanning at most :data:`INFERRED_INTEGER_RANGE`.

    Such a column (a count of conditions, of years at school, a rating) has one distinct
    split per whole number; a grid chosen from the family between its observed bounds
    would put several thresholds between two whole numbers (``[chronic ≤ 0.072]`` and
    ``[chronic ≤ 0.5]``, the same split twice) and miss others. Its domain is inferred
    anyway (read off the rows, so a private run over it says it is not private), and the
    thresholds are then every whole number in it (:func:`dprm.data.grid.integer_grid`),
    with no budget spent on its grid. A declared column keeps what its types file says.

    Examples
    --------
    >>> _inferred_transform(np.array([0.0, 3.0, 8.0]), 0.0, 8.0)
    'integers'
    >>> _inferred_transform(np.array([0.0, 2.5]), 0.0, 2.5), _inferred_transform(np.array([0.0, 89.0]), 0.0, 89.0)
    (None, None)
    """
    return inferred_transform(low, high, bool(np.all(present == np.floor(present))))


def inferred_transform(low: float, high: float, whole: bool) -> str | None:
    """The transform :func:`_inferred_transform` infers from a column's observed bounds and whether every value is a
    whole number: what a sharded engine merges from its shards' summaries (``dprm.engine.sharding``).

    Examples
    --------
    >>> inferred_transform(0.0, 8.0, True), inferred_transform(0.0, 8.0, False), inferred_transform(3.0, 3.0, True)
    ('integers', None, None)
    """
    if high <= low or high - low > INFERRED_INTEGER_RANGE or not whole:
        return None
    return "integers"


# --------------------------------------------------------------------- categorical


def _categorical(
    column: pa.Array, spec: ColumnSpec | None, where: _Column, clamp: bool, notes: list[str] | None
) -> tuple[np.ndarray, Domain]:
    typ = column.type
    n = len(column)
    if pa.types.is_null(typ):
        codes = np.full(n, -1, dtype=np.int64)
        texts: list[str] = []
    elif pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ) \
            or pa.types.is_boolean(typ):
        # numbers: distinct values in numeric order, named by their canonical text
        if pa.types.is_decimal(typ):
            column = pc.cast(column, pa.float64(), safe=False)
        present = to_numpy(pc.is_valid(column))
        raw = to_numpy(column.drop_null())
        uniq, inverse = np.unique(raw, return_inverse=True)
        codes = np.full(n, -1, dtype=np.int64)
        codes[present] = inverse
        texts = [category_text(u) for u in uniq.tolist()]
    else:
        if not pa.types.is_string(typ):
            column = pc.cast(column, pa.string())
        encoded = pc.dictionary_encode(column)
        # cells that write a number are named by its canonical text (3.0, 03 and 3 are one category "3");
        # the numbers first, in numeric order, then the other texts in text order
        written = [written_category(text) for text in encoded.dictionary.to_pylist()]
        texts = category_order(encoded.dictionary.to_pylist())
        position = {name: i for i, name in enumerate(texts)}
        rank = np.array([position[name] for _, _, name in written] + [-1], dtype=np.int64)
        codes = rank[to_numpy(encoded.indices, fill=len(written))]
    if spec is not None and spec.categories is not None:
        declared = _declared_positions(spec.categories, where)
        remap = np.full(len(texts) + 1, -1, dtype=np.int64)
        for i, text in enumerate(texts):
            remap[i] = declared.get(text, -1)
        unknown = np.flatnonzero(remap[:-1] < 0)
        if unknown.size:
            outside = np.isin(codes, unknown)  # the cells of undeclared categories, in file order
            row = int(np.argmax(outside)) + 1
            # clamped, an undeclared category reads as missing; a column declared complete has none: the category
            # is the problem, unless a cell is missing before it (then the completeness check names that row)
            if not clamp or (spec.complete and not (codes[:row] == -1).any()):
                also = ("" if not clamp else
                        " (clamping would make it missing, but the types file declares the column complete)")
                raise where.error(row, f"value {short_repr(texts[codes[row - 1]])} is not one of the declared "
                                       f"categories{also}", "unknown_category")
            if notes is not None:
                notes.append(f"{where}: values that are not declared categories read as missing")
        return remap[codes].astype(np.int32), Domain(categories=spec.categories, declared=True)
    return codes.astype(np.int32), Domain(categories=tuple(texts), declared=False)


def _declared_positions(categories: tuple[str, ...], where: _Column) -> dict[str, int]:
    """Each declared category's position, by its canonical text (:func:`written_category`: ``"03"`` and a
    cell ``3.0`` are one category, named as declared); two declared categories writing one number: an error."""
    positions: dict[str, int] = {}
    for i, category in enumerate(categories):
        name = written_category(category)[2]
        if name in positions:
            raise DataError(f"{where}: the declared categories {categories[positions[name]]!r} and {category!r} "
                            f"are the same number", code="bad_types_file", file=where.source, column=where.name,
                            data_dependent=False)
        positions[name] = i
    return positions


# --------------------------------------------------------------------------- shared


def _fail_where(ok: pa.Array | np.ndarray, column: pa.Array, where: _Column, what: str, code: str) -> None:
    """Raise naming the first row where ``ok`` is false (nulls in ``ok`` are fine)."""
    bad = ~(ok if isinstance(ok, np.ndarray) else to_numpy(ok, fill=True))
    if not bad.any():
        return
    row = int(np.flatnonzero(bad)[0]) + 1
    value = column[row - 1].as_py()
    shown = short_text(number_text(value) if isinstance(value, float) else category_text(value)) \
        if isinstance(value, (int, float, Decimal)) else short_repr(value)  # a Parquet decimal's 2, not Decimal('2')
    raise where.error(row, f"value {shown} {what}", code)
