"""Plain JSON values from numpy and pandas values: one helper for every writer of JSON;
and :func:`no_duplicate_keys`, the hook every reader of JSON refuses repeated keys with.

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

__all__ = ["finite_number", "no_duplicate_keys", "plain_json"]


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
