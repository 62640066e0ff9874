"""Exact privacy budgets: conversion to :class:`fractions.Fraction` and exact splits.

Epsilons are held as exact rationals so that budget checks never suffer from
floating-point error: ``0.1 + 0.2`` is exactly ``0.3``. A float is converted through
its shortest ``repr`` (``Fraction(repr(0.1)) == Fraction(1, 10)``), which is the
number the user typed.
"""

from __future__ import annotations

import math
import re
import sys
import numbers
from collections.abc import Sequence
from fractions import Fraction

from dprm.errors import ParameterError

__all__ = ["EpsilonLike", "SMALLEST_EPSILON", "LARGEST_EPSILON", "SMALLEST_BUDGET_SHARE", "as_fraction", "as_epsilon",
           "check_budget_share", "check_epsilon_range", "split_budget"]

EpsilonLike = int | float | str | Fraction
"""Types accepted wherever an epsilon (or another exact rational) is expected."""

#: The range of budgets dprm's local tools accept for one run or fit. Below it every
#: count drowns in noise of 10,000 rows and more; above it the noise is far below one
#: row (no privacy), and ``ε · score`` may overflow a float.
SMALLEST_EPSILON = Fraction(1, 10_000)
LARGEST_EPSILON = Fraction(10_000)
#: The smallest share of a budget a parameter may give a release, where it gives one (a
#: share may be 0 where the parameter allows it: no release). Even at the largest ε a
#: release with a millionth of it has noise of 100 rows and more on a count; far below,
#: the noise scale ``Δ/ε`` of a nested share (``1e-320`` of ε) is no float at all and a
#: run would fail after spending its first steps.
SMALLEST_BUDGET_SHARE = Fraction(1, 1_000_000)


#: The text of a number: ASCII digits, an optional sign, decimal point and exponent, or
#: a fraction ``a/b``; no spaces, no ``_`` separators, no other scripts' digits.
_NUMBER_TEXT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+/[0-9]+", re.ASCII)


def as_fraction(value: EpsilonLike, name: str = "value") -> Fraction:
    """Convert a finite number to an exact :class:`~fractions.Fraction`.

    Floats go through their shortest ``repr`` so that ``0.1`` becomes exactly
    ``1/10``; ints, strings (``"0.1"``, ``"1/3"``) and Fractions are exact already.

    Parameters
    ----------
    value : int, float, str or Fraction
        The number. Booleans, NaN and infinities are refused.
    name : str
        Name used in the error message.

    Returns
    -------
    Fraction

    Raises
    ------
    ParameterError
        If ``value`` is not a finite number.

    Examples
    --------
    >>> as_fraction(0.1)
    Fraction(1, 10)
    >>> as_fraction("1/3")
    Fraction(1, 3)
    >>> as_fraction("1_000")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: value must be a finite number, got '1_000'
    >>> as_fraction(float("nan"))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: value must be a finite number, got nan
    """
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a finite number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Rational):
        as_float = float(value)
        if not math.isfinite(as_float):
            raise ParameterError(f"{name} must be a finite number, got {as_float!r}")
        return Fraction(repr(as_float))
    if isinstance(value, numbers.Rational):
        return Fraction(value.numerator, value.denominator)
    if isinstance(value, str):
        if not _NUMBER_TEXT.fullmatch(value):  # Fraction also takes "١", "1_000" and " 1 "
            raise ParameterError(f"{name} must be a finite number, got {value!r}")
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise ParameterError(
                f"{name} must be a finite number, got {value!r}"
            ) from None
    raise ParameterError(f"{name} must be a finite number, got {value!r}")


_LARGEST_FLOAT = Fraction(sys.float_info.max)


def as_epsilon(value: EpsilonLike, name: str = "epsilon") -> Fraction:
    """Convert a strictly positive, finite epsilon to an exact Fraction.

    Parameters
    ----------
    value : int, float, str or Fraction
        The privacy parameter.
    name : str
        Name used in the error message.

    Returns
    -------
    Fraction

    Raises
    ------
    ParameterError
        If ``value`` is not finite or not strictly positive.

    Examples
    --------
    >>> as_epsilon(0.25)
    Fraction(1, 4)
    >>> as_epsilon(0)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: epsilon must be > 0, got 0
    """
    exact = as_fraction(value, name)
    if exact <= 0:
        raise ParameterError(f"{name} must be > 0, got {value!r}")
    if exact > _LARGEST_FLOAT:  # "1e400": exact, but no float (messages, ledgers) can show it
        raise ParameterError(f"{name} must be at most the largest float (about 1.8e308), got {value!r}")
    return exact


def check_epsilon_range(value: float | Fraction, name: str = "epsilon") -> None:
    """Raise :class:`ParameterError` unless ``value`` lies in [:data:`SMALLEST_EPSILON`, :data:`LARGEST_EPSILON`].

    Examples
    --------
    >>> check_epsilon_range(0.1)
    >>> check_epsilon_range(1e308, "--epsilon")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: --epsilon must be between 0.0001 and 10000 (a larger budget is no privacy, \
a smaller one drowns every count), not 1e+308
    """
    if not (math.isfinite(value) and SMALLEST_EPSILON <= value <= LARGEST_EPSILON):
        raise ParameterError(f"{name} must be between {float(SMALLEST_EPSILON):g} and {float(LARGEST_EPSILON):g} "
                             f"(a larger budget is no privacy, a smaller one drowns every count), "
                             f"not {float(value):g}")


def check_budget_share(value: float | Fraction, name: str, *, may_be_zero: bool = True) -> None:
    """Raise :class:`ParameterError` if ``value`` is a positive share below :data:`SMALLEST_BUDGET_SHARE`.

    The range of the share itself (``[0, 1)``, ``(0, 1)``) is the caller's to check;
    this refuses only the positive shares too small to release anything with.
    ``may_be_zero`` only words the message (whether 0 is among the allowed values).

    Examples
    --------
    >>> check_budget_share(0.05, "grid-share"); check_budget_share(0, "size-share")
    >>> check_budget_share(1e-320, "size-share")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: size-share must be 0 or at least 1e-06 of the budget (a smaller share's noise \
drowns every count), not 1e-320
    >>> check_budget_share("1/10000000", "omega", may_be_zero=False)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: omega must be at least 1e-06 of the budget (a smaller share's noise drowns every \
count), not 1e-07
    """
    exact = as_fraction(value, name)  # a float as typed: 1e-06 is exactly the smallest share
    if 0 < exact < SMALLEST_BUDGET_SHARE:
        shown = repr(value) if isinstance(value, float) else f"{float(exact):g}"
        raise ParameterError(f"{name} must be {'0 or ' if may_be_zero else ''}at least "
                             f"{float(SMALLEST_BUDGET_SHARE):g} of the budget (a "
                             f"smaller share's noise drowns every count), not {shown}")


def split_budget(total: EpsilonLike, weights: Sequence[EpsilonLike]) -> list[Fraction]:
    """Split a budget exactly in proportion to positive weights.

    Each share is ``total * w_i / sum(w)`` computed in exact rational arithmetic,
    so the shares sum to ``total`` exactly (sequential composition then spends
    exactly the budget).

    Parameters
    ----------
    total : int, float, str or Fraction
        The budget to split (> 0).
    weights : sequence of numbers
        One positive weight per part; at least one.

    Returns
    -------
    list of Fraction
        The shares, in the order of ``weights``.

    Raises
    ------
    ParameterError
        If ``total`` is not a positive finite number or a weight is not positive.

    Examples
    --------
    >>> shares = split_budget(1.0, [1, 1, 1])
    >>> shares
    [Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)]
    >>> sum(shares) == 1
    True
    >>> split_budget("0.3", [0.5, 0.25, 0.25])
    [Fraction(3, 20), Fraction(3, 40), Fraction(3, 40)]
    """
    exact_total = as_epsilon(total, "total epsilon")
    if len(weights) == 0:
        raise ParameterError("split_budget needs at least one weight")
    exact_weights = [as_epsilon(w, "budget weight") for w in weights]
    weight_sum = sum(exact_weights, Fraction(0))
    return [exact_total * w / weight_sum for w in exact_weights]
