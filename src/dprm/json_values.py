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

__all__ = ["JsonNumber", "finite_number", "no_duplicate_keys", "plain_json"]


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
