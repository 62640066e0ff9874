"""The canonical text of a category value.

Categories are strings. A categorical column whose cells are numbers (a code such
as ``3`` written ``3.0`` by some exporter) gets categories named by the number's
canonical text, so that a query's ``{"attr": "A", "eq": "3"}`` matches whatever the
file wrote: integral numbers lose their ``.0``, other numbers use the shortest text
that reads back as the same float.
"""

from __future__ import annotations

import math

__all__ = ["category_text"]


def category_text(value: object) -> str:
    """The category name of a cell value.

    Parameters
    ----------
    value : object
        A string (returned unchanged), a bool, an int or a float.

    Returns
    -------
    str

    Examples
    --------
    >>> category_text(3.0), category_text(2.5), category_text(7), category_text("x")
    ('3', '2.5', '7', 'x')
    >>> category_text(-0.0), category_text(True)
    ('0', 'true')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return str(int(value))
        return repr(value)
    # numpy scalars and the like
    if hasattr(value, "item"):
        return category_text(value.item())  # type: ignore[union-attr]
    return str(value)
