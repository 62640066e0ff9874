"""Plain JSON values from numpy and pandas values: one helper for every writer of JSON;
:func:`no_duplicate_keys`, the hook every reader of JSON refuses repeated keys with; and
:class:`JsonNumber`, a JSON number that keeps the text it was written as.

Examples
--------
>>> import numpy as np
>>> plain_json({"n": np.int64(3), "x": np.array([0.5, 1.0]), "t": (1, 2)})
{'n': 3, 'x': [0.5, 1.0], 't': [1, 2]}
>>> plain_json([float("nan"), np.float32(2.0)], nan_as_null=True)
[None, 2.0]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from dprm.errors import short_repr

__all__ = ["JsonNumber", "finite_number", "json_problem", "no_duplicate_keys", "plain_json"]


def plain_json(value: Any, *, nan_as_null: bool = False) -> Any:
    """``value`` with numpy scalars and arrays, tuples and mappings made plain.

    Parameters
    ----------
    value : Any
        A value, a mapping (its keys become strings), a list, tuple or numpy array;
        a :class:`~fractions.Fraction` becomes a float.
    nan_as_null : bool
        Write a float NaN as ``None`` (JSON ``null``); JSON has no NaN.

    Returns
    -------
    Any
        Python ``int``, ``float``, ``str``, ``bool``, ``None``, lists and dicts.
    """
    if isinstance(value, np.ndarray):
        return [plain_json(v, nan_as_null=nan_as_null) for v in value.tolist()]
    if isinstance(value, np.generic):
        return plain_json(value.item(), nan_as_null=nan_as_null)
    if isinstance(value, Mapping):
        return {str(k): plain_json(v, nan_as_null=nan_as_null) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v, nan_as_null=nan_as_null) for v in value]
    if isinstance(value, Fraction):  # an exact parameter (epsilon "1/3"): JSON has only floats
        return float(value)
    if nan_as_null and isinstance(value, float) and math.isnan(value):
        return None
    return value


def json_problem(value: Any, where: str = "the value") -> str | None:
    """Why ``value`` is no plain JSON value (the first part that is not, named by its path); else None.

    Plain JSON values are what :func:`plain_json` returns and :func:`json.dumps` writes as
    valid JSON: None, Booleans, ints, finite floats, strings, lists of them and dicts with
    string keys. Anything else (an object, a set, a date, NaN) would stop ``json.dumps``
    with its own ``TypeError`` (or write ``NaN``, which JSON has not) far from where it
    was given; check with this first (after :func:`plain_json`) and refuse in one line.

    Parameters
    ----------
    value : Any
        The value to check.
    where : str
        How the message names ``value``; the parts below it are named as
        ``where['key'][0]``.

    Examples
    --------
    >>> json_problem({"k": [1, 2.5, "a", None, True]}) is None
    True
    >>> json_problem({"k": [1, float("nan")]}, "extra")
    "extra['k'][1] is nan, not a finite number"
    >>> json_problem({1: "a"}, "extra")
    'extra has the key 1, which is not a string'
    >>> json_problem({"s": {1, 2}}, "extra")
    "extra['s'] is of type set, which is not a JSON value (use numbers, text, Booleans, None, lists and dicts)"
    """
    if value is None or isinstance(value, bool | int | str):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value!r}, not a finite number"
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = json_problem(item, f"{where}[{i}]")
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {short_repr(key)}, which is not a string"
            problem = json_problem(item, f"{where}[{short_repr(key)}]")
            if problem is not None:
                return problem
        return None
    return (f"{where} is of type {type(value).__name__}, which is not a JSON value "
            f"(use numbers, text, Booleans, None, lists and dicts)")


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's pairs as a dict; :class:`ValueError` naming a repeated key.

    For ``json.loads(..., object_pairs_hook=no_duplicate_keys)``: plain ``json`` keeps
    the last of two equal keys, silently dropping the first value.

    Examples
    --------
    >>> import json
    >>> json.loads('{"a": 1, "b": 2}', object_pairs_hook=no_duplicate_keys)
    {'a': 1, 'b': 2}
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=no_duplicate_keys)
    Traceback (most recent call last):
    ValueError: duplicate key 'a'
    """
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {short_repr(key, 60)}")
        out[key] = value
    return out


class JsonNumber(float):
    """A JSON number with a fraction or exponent, read as a float that keeps its text.

    For ``json.loads(..., parse_float=JsonNumber)``: everywhere a float is wanted it is
    the float the text reads as; a reader that must take the number exactly as written
    (an ε, which is refused when not a multiple of 10⁻⁹, never rounded) takes
    :attr:`text` instead: ``0.10000000000000001`` is the float 0.1 but not the number
    0.1, and ``1e-400`` is the float 0.0 but a positive number.

    Examples
    --------
    >>> import json
    >>> value = json.loads('{"e": 0.10000000000000001}', parse_float=JsonNumber)["e"]
    >>> value == 0.1, value.text
    (True, '0.10000000000000001')
    >>> JsonNumber("1e-400") == 0.0, JsonNumber("1e-400").text
    (True, '1e-400')
    """

    text: str

    def __new__(cls, text: str) -> "JsonNumber":
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __reduce__(self) -> tuple[Any, tuple[str]]:  # pickled with its text (to a pool process)
        return JsonNumber, (self.text,)


def finite_number(value: object) -> bool:
    """A finite number that is not a Boolean (``True`` is an ``int`` to Python), numpy's numbers too.

    Examples
    --------
    >>> finite_number(0.5), finite_number(np.float64(2)), finite_number(True), finite_number(10**400)
    (True, True, False, False)
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer of more than 308 digits
        return False
