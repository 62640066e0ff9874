"""The canonical text of a category value.

Categories are strings. A categorical column whose cells are numbers (a code such
as ``3`` written ``3.0`` by some exporter) gets categories named by the number's
canonical text, so that a query's ``{"attr": "A", "eq": "3"}`` matches whatever the
file wrote: integral numbers lose their ``.0``, other numbers use the shortest text
that reads back as the same float.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal

from dprm.errors import short_text

__all__ = ["NONZERO_DIGITS", "category_order", "category_text", "integer_text", "number_text", "underflow_text",
           "written_category"]

#: A number as a CSV cell writes it: optional sign, digits with an optional decimal point, optional exponent.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: An integer as a text file writes it: optional sign, ASCII digits, optionally ``.``
#: and zeros (``7``, ``-007``, ``+7.0``, ``7.``).
_INTEGER = re.compile(r"([+-]?)0*([0-9]+?)(?:\.0*)?")
#: The start of a number's text whose digits before its exponent are not all 0: a number that is not 0
#: (for pyarrow's ``match_substring_regex`` on the cells that read as 0: ``1e-400``, not ``0.0e-400``).
NONZERO_DIGITS = r"^\s*[+-]?[0-9.]*[1-9]"


def underflow_text(written: str) -> str:
    """What a message says of the cell ``written``, a number that is not 0 but nearer 0 than a float64 holds.

    ``float("1e-400")`` is 0: the cell would read as 0 (``[x > 0]`` would leave it out),
    as pandas and pyarrow read it, without a word.

    Examples
    --------
    >>> underflow_text("1e-400")
    'value 1e-400 is too close to 0 for a number (nearer than ±4.9e-324, it would read as 0)'
    """
    return f"value {short_text(written)} is too close to 0 for a number (nearer than ±4.9e-324, it would read as 0)"


def category_text(value: object) -> str:
    """The category name of a cell value.

    Parameters
    ----------
    value : object
        A string (returned unchanged), a bool, an int, a float or a Decimal (a
        Parquet decimal column's value: ``1.00`` is ``"1"``, as the same number
        written as an integer or a float is).

    Returns
    -------
    str

    Examples
    --------
    >>> category_text(3.0), category_text(2.5), category_text(7), category_text("x")
    ('3', '2.5', '7', 'x')
    >>> import numpy as np
    >>> category_text(-0.0), category_text(True), category_text(np.float64(2.5))
    ('0', 'true', '2.5')
    >>> category_text(Decimal("1.00")), category_text(Decimal("3.50")), category_text(Decimal("12345678901234567890.0"))
    ('1', '3.5', '12345678901234567890')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):  # its own text keeps the column's scale: '1.00' would not be the id 1
        if value.is_finite() and value == value.to_integral_value():
            return str(int(value))  # exact, however many digits
        return category_text(float(value))
    if isinstance(value, float):  # numpy's float64 too (a subclass), whose repr is 'np.float64(2.5)'
        if math.isfinite(value) and value.is_integer():
            return str(int(value))
        return repr(float(value))
    # numpy scalars and the like
    if hasattr(value, "item"):
        return category_text(value.item())  # type: ignore[union-attr]
    return str(value)


def integer_text(text: str) -> str | None:
    """The canonical text of an integer written as ``text``, exactly; None if it is not one.

    Works on the digits, never through a float or :class:`int` (which would round
    integers beyond 2**53, or refuse more than 4300 digits): leading zeros, a ``+``
    sign and a fraction of zeros are dropped, and ``-0`` is ``0``.

    Parameters
    ----------
    text : str
        A cell as the file wrote it.

    Returns
    -------
    str or None

    Examples
    --------
    >>> integer_text("007"), integer_text("+7.0"), integer_text("-0"), integer_text("2.5")
    ('7', '7', '0', None)
    >>> integer_text("100000000000000000001")
    '100000000000000000001'
    """
    found = _INTEGER.fullmatch(text)
    if found is None:
        return None
    sign, digits = found.groups()
    return digits if sign != "-" or digits == "0" else "-" + digits


def number_text(value: float) -> str:
    """A number as a message shows it: :func:`category_text`'s text, short for huge values.

    Integral values of at least ``1e16`` in magnitude are written in exponent form
    (``1e+308``, not 309 digits); everything else as :func:`category_text` writes it.

    Examples
    --------
    >>> number_text(130.0), number_text(2.5), number_text(1e308), number_text(-1e20)
    ('130', '2.5', '1e+308', '-1e+20')
    """
    value = float(value)
    if math.isfinite(value) and abs(value) >= 1e16:
        return repr(value)
    return category_text(value)


def written_category(text: str) -> tuple[bool, float, str]:
    """A categorical cell's text as ``(is_number, value, category)``: numbers in their canonical text.

    A cell that writes a number (``3``, ``3.0``, ``03``, ``+3``, ``3e0``) is named by the
    number's canonical text (:func:`category_text`; an integer written without an
    exponent exactly, whatever its length: :func:`integer_text`), so that a column read as text (a word
    among the numbers) names ``3.0`` as a column of numbers does; any other text is
    itself. ``value`` orders the numbers (NaN for text: not to be compared).

    Examples
    --------
    >>> [written_category(t)[2] for t in ("3.0", "03", "+3", "3e0", "2.50", "-0", "x", "3 ")]
    ['3', '3', '3', '3', '2.5', '0', 'x', '3 ']
    >>> written_category("123456789012345678901234567890")[2]
    '123456789012345678901234567890'
    >>> len(written_category("9" * 5000)[2])   # exactly, beyond int()'s 4300 digits
    5000

    A number a float64 cannot hold is its text as written: ``1e-400`` is not the
    category ``0`` (it read as 0, merged with the cells written ``0``), nor ``1e400``
    and ``1e401`` both ``inf``.

    >>> [written_category(t)[2] for t in ("1e-400", "0e-400", "1e400", "-1e401")]
    ['1e-400', '0', '1e400', '-1e401']
    """
    if not _NUMBER.fullmatch(text):
        return False, math.nan, text
    integer = integer_text(text)
    if integer is not None:
        return True, float(integer), integer  # float: only to order them (inf beyond the float range)
    value = float(text)
    if not math.isfinite(value) or (value == 0 and re.match(NONZERO_DIGITS, text)):
        return True, value, text  # beyond the float64s: as written, not another number's text
    return True, value, category_text(value)


def category_order(texts: Iterable[str]) -> list[str]:
    """Category names (canonical, :func:`written_category`) in the loader's order: the numbers first, in numeric
    order, then the other texts in text order (what loading a categorical column gives its categories).

    Examples
    --------
    >>> category_order(["b", "10", "a", "9", "2.5"])
    ['2.5', '9', '10', 'a', 'b']
    """
    keys = {}
    for text in texts:
        number, value, name = written_category(text)
        keys[name] = (not number, value if number else 0.0, name)
    return [name for _, _, name in sorted(keys.values())]
