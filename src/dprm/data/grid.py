"""Equally spaced points between two bounds, for any finite bounds.

A private miner cuts a numeric attribute on a grid over its *public* bounds. The
textbook formula ``low + k / m * (high - low)`` overflows when the bounds are huge
and of opposite sign: ``1.7e308 - (-1.7e308)`` is infinite in float64, and every
grid point becomes ``inf`` or ``nan``. :func:`grid_points` computes the same points
for every pair of finite bounds: when ``high - low`` overflows it works on the halved
bounds (``low / 2`` and ``high / 2`` are exact, their difference is finite) and doubles
the result, which is again exact, so the points are those of the textbook formula
computed with a wider exponent range.

Examples
--------
>>> grid_points(0.0, 100.0, 3).tolist()
[25.0, 50.0, 75.0]
>>> grid_points(-1e308, 1e308, 3).tolist()   # 1e308 - (-1e308) overflows
[-5e+307, 0.0, 5e+307]
"""

from __future__ import annotations

import math

import numpy as np

#: The public transforms a types file may declare for a numeric column (``"transform"``).
TRANSFORMS: tuple[str, ...] = ("log",)

__all__ = ["TRANSFORMS", "grid_points", "grid_spacing", "rounded_grid", "log_grid", "public_grid"]


def grid_spacing(low: float, high: float, count: int) -> float:
    """The distance ``(high - low) / (count + 1)`` between neighbouring grid points.

    Finite for all finite bounds and ``count >= 1``.

    Examples
    --------
    >>> grid_spacing(0.0, 10.0, 4)
    2.0
    >>> grid_spacing(-1e308, 1e308, 1)
    1e+308
    """
    width = high - low
    if math.isfinite(width):
        return width / (count + 1)
    return (high / 2 - low / 2) / (count + 1) * 2


def grid_points(low: float, high: float, count: int) -> np.ndarray:
    """``count`` equally spaced points strictly between ``low`` and ``high``.

    Point ``k`` (``k = 1, ..., count``) is ``low + k / (count + 1) * (high - low)``,
    computed without overflow for any finite ``low <= high``. The points never leave
    ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Finite bounds, ``low <= high``.
    count : int
        The number of points, at least 1.

    Returns
    -------
    numpy.ndarray
        ``float64``, ascending (equal points when ``low == high``).

    Examples
    --------
    >>> grid_points(1.0, 2.0, 1).tolist()
    [1.5]
    >>> bool(np.isfinite(grid_points(-1.7976931348623157e308, 1.7976931348623157e308, 32)).all())
    True
    """
    steps = np.arange(1, count + 1) / (count + 1)
    if math.isfinite(high - low):
        grid = low + steps * (high - low)
    else:
        # halving and doubling are exact for normal floats (and these bounds are huge)
        half_low, half_high = low / 2, high / 2
        grid = (half_low + steps * (half_high - half_low)) * 2
    return np.clip(grid, low, high)


def rounded_grid(low: float, high: float, count: int) -> np.ndarray:
    """:func:`grid_points`, rounded to one decimal digit finer than the spacing, distinct.

    Readable thresholds (``25.0`` rather than ``24.999999999999996``) that are still
    a function of the bounds only. Rounding is skipped where it cannot be done in
    float64 (subnormal spacings, where ``10**digits`` overflows).

    Examples
    --------
    >>> rounded_grid(0.0, 1.0, 2).tolist()
    [0.33, 0.67]
    >>> rounded_grid(0.0, 1e-320, 1).tolist()
    [5e-321]
    >>> rounded_grid(5.0, 5.0, 3).tolist()
    [5.0]
    """
    grid = grid_points(low, high, count)
    spacing = grid_spacing(low, high, count)
    if spacing > 0:
        digits = max(0, math.ceil(-math.log10(spacing)) + 1)
        with np.errstate(over="ignore", invalid="ignore"):
            rounded = np.round(grid, digits)
        if np.isfinite(rounded).all():
            grid = np.clip(rounded, low, high)
    return np.unique(grid)


def log_grid(low: float, high: float, count: int) -> np.ndarray:
    """``count`` points equally spaced in ``log(1 + x)`` between ``low >= 0`` and ``high``, readable.

    The grid of a column declared ``"transform": "log"`` (heavy-tailed counts, incomes):
    dense where such values are many (near ``low``), sparse in the tail. Each point is
    rounded to two significant digits (``3.1``, ``250``, ``18000``), then the distinct
    ones are kept: still a function of the public bounds only.

    Examples
    --------
    >>> log_grid(0.0, 1000.0, 5).tolist()
    [2.2, 9.0, 31.0, 99.0, 320.0]
    >>> bool(log_grid(0.0, 1000.0, 5)[2] < 1000 / 2)   # the equal-width grid's middle point is 500
    True
    """
    if low < 0:
        raise ValueError(f"a log grid needs low >= 0, not {low}")
    points = np.expm1(np.linspace(math.log1p(low), math.log1p(high), count + 2)[1:-1])
    rounded = []
    for point in points.tolist():
        if point > 0 and math.isfinite(point):
            digits = 1 - math.floor(math.log10(point))
            point = round(point, digits)
        rounded.append(point)
    return np.unique(np.clip(np.array(rounded, dtype=np.float64), low, high))


def public_grid(low: float, high: float, count: int, transform: str | None = None) -> np.ndarray:
    """The thresholds a private miner may choose for a numeric column: a function of public facts only.

    Equally spaced between the public bounds (:func:`rounded_grid`), or, for a column the
    data owner declared ``"transform": "log"``, equally spaced in ``log(1 + x)``
    (:func:`log_grid`).

    Examples
    --------
    >>> public_grid(0.0, 100.0, 3).tolist(), public_grid(0.0, 100.0, 3, "log").tolist()
    ([25.0, 50.0, 75.0], [2.2, 9.0, 31.0])
    """
    if transform is None:
        return rounded_grid(low, high, count)
    if transform == "log":
        return log_grid(low, high, count)
    raise ValueError(f"unknown transform {transform!r}; use one of {', '.join(TRANSFORMS)}")
