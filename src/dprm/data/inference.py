"""Type inference: which :class:`~dprm.data.attributes.AttributeKind` a column is.

The rules, applied to the column's non-missing values:

* **boolean** when the column is a boolean column (pyarrow ``bool``, pandas
  ``bool``), or its values all lie within one of ``{0, 1}``, ``{true, false}``,
  ``{yes, no}`` (text compared case-insensitively);
* **categorical** when the values are text (or dates and times, kept as text);
* **numeric** otherwise (integers, floats, decimals).

A column with no values at all is numeric here; it is constant and is left out of
the view anyway. The types file overrides these rules column by column.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dprm.data.arrow_arrays import to_numpy
from dprm.data.attributes import AttributeKind

__all__ = ["infer_kind", "BOOLEAN_TEXT", "BOOLEAN_WORDS", "boolean_spellings", "boolean_in_all_parts"]

# A Boolean text column has at most this many distinct spellings ("yes", "Yes", ...).
_MAX_SPELLINGS = 32

#: Text values read as Boolean, by accepted vocabulary (compared in lower case).
BOOLEAN_TEXT: tuple[dict[str, int], ...] = (
    {"0": 0, "1": 1},
    {"false": 0, "true": 1},
    {"no": 0, "yes": 1},
)


#: Every Boolean spelling (lower case) and its value, all vocabularies together.
BOOLEAN_WORDS: dict[str, int] = {word: value for vocabulary in BOOLEAN_TEXT for word, value in vocabulary.items()}


def infer_kind(column: pa.Array | pa.ChunkedArray) -> AttributeKind:
    """Infer the kind of a column from its type and values.

    Parameters
    ----------
    column : pyarrow.Array or pyarrow.ChunkedArray
        The column, with missing values as nulls.

    Returns
    -------
    AttributeKind

    Examples
    --------
    >>> import pyarrow as pa
    >>> infer_kind(pa.array([0, 1, None, 1])).value
    'boolean'
    >>> infer_kind(pa.array(["Yes", "no", None])).value
    'boolean'
    >>> infer_kind(pa.array([0.5, 1.0])).value
    'numeric'
    >>> infer_kind(pa.array(["a", "b"])).value
    'categorical'
    """
    typ = column.type
    if pa.types.is_dictionary(typ):
        column = column.cast(typ.value_type)
        typ = column.type
    if pa.types.is_boolean(typ):
        return AttributeKind.BOOLEAN
    if pa.types.is_integer(typ) or pa.types.is_floating(typ):
        return AttributeKind.BOOLEAN if _within_01(column) else AttributeKind.NUMERIC
    if pa.types.is_decimal(typ):
        return AttributeKind.NUMERIC
    if pa.types.is_null(typ):
        return AttributeKind.NUMERIC
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return AttributeKind.BOOLEAN if boolean_text_map(column) is not None else AttributeKind.CATEGORICAL
    return AttributeKind.CATEGORICAL


def boolean_text_map(column: pa.Array | pa.ChunkedArray) -> dict[str, int] | None:
    """The vocabulary of :data:`BOOLEAN_TEXT` that holds all of a text column's values.

    Returns None when no vocabulary holds them all or the column has no values.
    """
    distinct = pc.unique(column.drop_null() if isinstance(column, pa.Array) else pc.drop_null(column))
    if len(distinct) == 0 or len(distinct) > _MAX_SPELLINGS:
        return None
    lowered = {str(v).lower() for v in distinct.to_pylist()}
    for vocabulary in BOOLEAN_TEXT:
        if lowered <= vocabulary.keys():
            return vocabulary
    return None


def boolean_spellings(column: pa.Array | pa.ChunkedArray) -> tuple[bool, frozenset[str]] | None:
    """What deciding whether a column is Boolean in all the rows needs from one part of them (None: not Boolean here).

    A Boolean part gives whether its column is typed (numbers ``0, 1``, or pyarrow
    ``bool``) and its distinct values as text (text as written; ``0``, ``1``, ``false``,
    ``true`` for typed values). :func:`boolean_in_all_parts` decides on all the parts
    (a sharded engine's shards each read one part of a file).

    Examples
    --------
    >>> boolean_spellings(pa.array(["Yes", "no", None])) == (False, frozenset({"Yes", "no"}))
    True
    >>> boolean_spellings(pa.array([1, 0, 1])) == (True, frozenset({"0", "1"}))
    True
    >>> boolean_spellings(pa.array(["a", "b"])) is None
    True
    """
    if infer_kind(column) is not AttributeKind.BOOLEAN:
        return None
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    distinct = pc.unique(column.drop_null() if isinstance(column, pa.Array) else pc.drop_null(column)).to_pylist()
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) \
            or pa.types.is_string_view(column.type):
        return False, frozenset(distinct)
    return True, frozenset(str(v).lower() if isinstance(v, bool) else str(int(v)) for v in distinct)


def boolean_in_all_parts(parts: list[tuple[bool, frozenset[str]] | None]) -> bool:
    """Whether a column Boolean in parts of the rows (:func:`boolean_spellings` of each) is Boolean in all of them.

    As :func:`infer_kind` reads all the rows: typed in every part (numbers ``0, 1`` or
    ``bool``: the column's type over all the rows), or text whose distinct values, all
    parts together, are at most 32 spellings of one vocabulary of :data:`BOOLEAN_TEXT`
    (``yes, no`` in one part and ``true, false`` in another are text of two vocabularies).

    Examples
    --------
    >>> yes_no, true_false = (False, frozenset({"yes", "no"})), (False, frozenset({"true", "False"}))
    >>> boolean_in_all_parts([yes_no, yes_no]), boolean_in_all_parts([yes_no, true_false])
    (True, False)
    >>> boolean_in_all_parts([(True, frozenset({"0", "1"})), (True, frozenset({"true"}))])
    True
    >>> boolean_in_all_parts([yes_no, None]), boolean_in_all_parts([])
    (False, False)
    """
    if not parts or any(part is None for part in parts):
        return False
    if all(typed for typed, _ in parts):  # type: ignore[misc]
        return True
    spellings = frozenset().union(*(words for _, words in parts))  # type: ignore[misc]
    lowered = {word.lower() for word in spellings}
    return len(spellings) <= _MAX_SPELLINGS and any(lowered <= vocabulary.keys() for vocabulary in BOOLEAN_TEXT)


def _within_01(column: pa.Array | pa.ChunkedArray) -> bool:
    if column.null_count == len(column):
        return False
    minmax = pc.min_max(column)
    low, high = minmax["min"].as_py(), minmax["max"].as_py()
    if low < 0 or high > 1:
        return False
    if pa.types.is_integer(column.type):
        return True
    # floats in [0, 1]: every value must be exactly 0 or 1
    values = to_numpy(column, fill=0.0)  # missing values are skipped
    return bool(((values == 0.0) | (values == 1.0)).all())
