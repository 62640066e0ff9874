"""Exact privacy budgets on the server: ε as an integer number of units of 10⁻⁹.

Budgets, charges and the remaining budget are stored as integers (``BIGINT``) of
:data:`UNITS_PER_EPSILON` units per ε, so that the database compares and adds them
exactly on SQLite and PostgreSQL alike; a float never enters a budget. An ε that is
not a whole number of units (e.g. ``1e-10`` or ``1/3``) is refused, not rounded:
rounding down would charge less than the mechanism spends, rounding up would charge
more than the analyst asked for.

Examples
--------
>>> epsilon_units(0.1), epsilon_units("0.25"), epsilon_units(2)
(100000000, 250000000, 2000000000)
>>> units_text(100000000), units_text(2000000000), units_text(1)
('0.1', '2', '0.000000001')
>>> epsilon_units("1/3")
Traceback (most recent call last):
...
dprm.errors.ParameterError: epsilon must be a multiple of 1e-9 (at most 9 decimals), got '1/3'
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from dprm.errors import ParameterError, short_repr
from dprm.json_values import JsonNumber
from dprm.privacy.budget import as_epsilon, as_fraction

__all__ = ["UNITS_PER_EPSILON", "MAX_EPSILON", "MAX_UNITS", "epsilon_units", "units_fraction", "units_text",
           "units_float", "fraction_text", "huge_exponent"]

#: Units per ε: budgets are integers of 10⁻⁹ ε.
UNITS_PER_EPSILON = 10**9

#: The largest ε of one request, of a budget and of a total: 10⁶ (10¹⁵ units, far
#: inside a signed 64-bit integer even when summed over many charges).
MAX_EPSILON = 10**6
MAX_UNITS = MAX_EPSILON * UNITS_PER_EPSILON


_EXPONENT = re.compile(r"[eE][-+]?([0-9_]+)")


def huge_exponent(text: str) -> bool:
    """Whether a number's text has a decimal exponent of more than three digits.

    Such a text (``"1e999999999"``) is far outside every range the server accepts,
    but :class:`~fractions.Fraction` would first expand it to an integer of that many
    digits (seconds to hours, and gigabytes): refuse it before.

    Examples
    --------
    >>> huge_exponent("1e999"), huge_exponent("1e1000"), huge_exponent("2.5E-0_0_0_12"), huge_exponent("0.6,1e99999")
    (False, True, False, True)
    """
    return any(len(m.group(1).replace("_", "").lstrip("0")) > 3 for m in _EXPONENT.finditer(text))


def epsilon_units(value: Any, name: str = "epsilon", *, allow_zero: bool = False) -> int:
    """``value`` (int, float as typed, decimal string or Fraction) in units of 10⁻⁹.

    Raises
    ------
    ParameterError
        When ``value`` is not a finite number, not positive (or zero with
        ``allow_zero``), above :data:`MAX_EPSILON`, or not a multiple of 10⁻⁹.
        A float beyond the floats' range (a JSON number such as ``1e999``, which
        the JSON reader makes infinite) is said to be so, not shown as ``inf``.
        A JSON number read with its text (:class:`~dprm.json_values.JsonNumber`,
        as the API reads bodies) within the floats' range is read as that text,
        exactly as a string is:
        ``0.10000000000000001`` is refused, not rounded to the float 0.1, and
        ``1e-400`` is quoted as sent, not as 0.0.

    Examples
    --------
    >>> from dprm.json_values import JsonNumber
    >>> epsilon_units(JsonNumber("0.5e0"))
    500000000
    >>> epsilon_units(JsonNumber("0.10000000000000001"))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: epsilon must be a multiple of 1e-9 (at most 9 decimals), got '0.10000000000000001'
    """
    if isinstance(value, JsonNumber) and math.isfinite(value):  # (beyond the floats: said so below)
        value = value.text
    if isinstance(value, float) and not math.isfinite(value):  # JSON's 1e999 reads as inf: say so, not "inf"
        raise ParameterError(f"{name} must be a finite number, not NaN" if math.isnan(value) else
                             f"{name} must be a finite number: the one given is infinite or beyond the floats' "
                             f"range (about ±1.8e308)")
    if isinstance(value, str) and len(value) > 64:
        raise ParameterError(f"{name} must be a number of at most 64 characters")
    if isinstance(value, str) and huge_exponent(value):
        raise ParameterError(f"{name} must be a number between 1e-9 and {MAX_EPSILON:g}, got {short_repr(value)}")
    if allow_zero and not isinstance(value, bool):
        try:
            given: Fraction | None = as_fraction(value, name)
        except ParameterError:  # not a number: the general message below
            given = None
        if given == 0:  # 0, "0", "0.0", "-0", 0.0: a budget withdrawn
            return 0
        if given is not None and given < 0:
            raise ParameterError(f"{name} must be 0 or more, got {short_repr(value)}")
    exact = as_epsilon(value, name)
    if exact > MAX_EPSILON:
        raise ParameterError(f"{name} must be at most {MAX_EPSILON:g}, got {short_repr(value)}")
    units = exact * UNITS_PER_EPSILON
    if units.denominator != 1:
        raise ParameterError(f"{name} must be a multiple of 1e-9 (at most 9 decimals), got {short_repr(value)}")
    return int(units)


def units_fraction(units: int) -> Fraction:
    """The exact ε of ``units``."""
    return Fraction(int(units), UNITS_PER_EPSILON)


def units_float(units: int) -> float:
    """ε of ``units`` as the nearest float (display only)."""
    return float(units_fraction(units))


def units_text(units: int) -> str:
    """The exact decimal text of ``units`` (no trailing zeros); negative allowed."""
    units = int(units)
    sign = "-" if units < 0 else ""
    whole, frac = divmod(abs(units), UNITS_PER_EPSILON)
    if frac == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{frac:09d}".rstrip("0")


def fraction_text(value: Fraction) -> str:
    """An exact rational as text: a decimal when it has one of ≤ 9 decimals, else ``p/q``.

    Examples
    --------
    >>> fraction_text(Fraction(1, 8)), fraction_text(Fraction(1, 30))
    ('0.125', '1/30')
    """
    units = value * UNITS_PER_EPSILON
    if units.denominator == 1:
        return units_text(int(units))
    return f"{value.numerator}/{value.denominator}"
