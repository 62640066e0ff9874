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

__all__ = ["infer_kind", "BOOLEAN_TEXT", "BOOLEAN_WORDS"]

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
