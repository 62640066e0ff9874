"""Plain JSON values from numpy and pandas values: one helper for every writer of JSON.

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
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["plain_json"]


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
