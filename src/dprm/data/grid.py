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
from decimal import Decimal

import numpy as np

#: The public transforms a types file may declare for a numeric column (``"transform"``):
#: ``"log"`` (thresholds equally spaced in ``log(1 + x)``), ``"linear"`` (equally wide)
#: or ``"integers"`` (whole numbers, :func:`integer_grid`: counts).
#: A column without one gets a grid of :data:`GRID_FAMILY` chosen privately
#: (:mod:`dprm.mining.private_grids`) unless the run asks for the public grid.
TRANSFORMS: tuple[str, ...] = ("log", "linear", "integers")

#: The grids a private run chooses between for a numeric column without a declared
#: transform: equally wide (``"linear"``), equally spaced in
#: ``log(1 + r · (x − low) / (high − low))`` for ``r`` = 10 … 10⁶ (``"log:r"``: the
#: larger ``r``, the more points near ``low`` and the fewer in the tail), or whole
#: numbers spaced alike with steps of at least one (``"integers"``: counts, where every
#: ``log:r`` point between two whole numbers is the same split), or the mirror images
#: of ``log:10`` … ``log:1000``, dense near ``high`` (``"log-high:r"``: values crowded
#: near the top of their bounds, as test scores in ``[0, 800]`` or shares near 100 %).
#: Each is a function of the public bounds only; which one a column gets is the
#: private choice.
GRID_FAMILY: tuple[str, ...] = ("linear", "log:10", "log:100", "log:1000", "log:10000", "log:100000",
                                "log:1000000", "integers", "log-high:10", "log-high:100", "log-high:1000")
#: The member of :data:`GRID_FAMILY` with whole-number thresholds (:func:`integer_grid`): counts.
INTEGER_GRID = "integers"

__all__ = ["TRANSFORMS", "GRID_FAMILY", "INTEGER_GRID", "grid_points", "grid_spacing", "rounded_grid", "log_grid",
           "scaled_log_grid", "integer_grid", "public_grid"]


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


def scaled_log_grid(low: float, high: float, count: int, ratio: float, *, dense_near: str = "low") -> np.ndarray:
    """``count`` points equally spaced in ``log(1 + ratio · (x − low) / (high − low))``, readable.

    A member of :data:`GRID_FAMILY` (``"log:ratio"``): for any finite bounds (the
    origin is ``low``, so negative bounds are fine). The first point lies about
    ``ratio^(1/(count+1)) − 1`` units of ``(high − low) / ratio`` above ``low``; a
    large ``ratio`` puts most points near ``low`` (heavy right tails), a small one
    is nearly equally wide. Each point's distance from ``low`` is rounded to two
    significant digits, then the point itself to the same decimal place where that
    keeps it strictly between the bounds (a bound with digits of its own, such as a
    data owner's ``78.99420166015625``, would otherwise print as ``9.99420166015625``
    rather than ``10``; the point moves by at most 5 % of its distance from ``low``),
    then the distinct points are kept: a function of the public bounds only.
    ``dense_near="high"`` gives the mirror image, equally spaced in
    ``log(1 + ratio · (high − x) / (high − low))`` (the members ``"log-high:r"``: values
    crowded near the top of their bounds), each point's distance from ``high`` rounded.

    Examples
    --------
    >>> scaled_log_grid(0.0, 1000.0, 5, 1000.0).tolist()   # like log_grid(0, 1000, 5)
    [2.2, 9.0, 31.0, 99.0, 320.0]
    >>> scaled_log_grid(-5.0, 5.0, 3, 10.0).tolist()
    [-4.18, -2.7, 0.0]
    >>> scaled_log_grid(43.79, 188.5, 32, 10_000.0).tolist()[-5:]   # a bound with digits of its own
    [80.0, 91.0, 107.0, 127.0, 150.0]
    >>> scaled_log_grid(0.0, 78.99420166015625, 5, 10.0, dense_near="high").tolist()
    [29.0, 48.0, 61.0, 69.3, 75.1]
    >>> scaled_log_grid(0.0, 800.0, 5, 100.0, dense_near="high").tolist()   # scores out of 800
    [430.0, 630.0, 728.0, 771.0, 790.7]
    """
    if not ratio > 0:
        raise ValueError(f"a scaled log grid needs a ratio > 0, not {ratio}")
    if dense_near not in ("low", "high"):
        raise ValueError(f"dense_near must be 'low' or 'high', not {dense_near!r}")
    unit = grid_spacing(low, high, 0) / ratio   # (high - low) / ratio, finite for finite bounds
    offsets = unit * np.expm1(np.linspace(0.0, math.log1p(ratio), count + 2)[1:-1])
    # The sum keeps the decimals of the bound and of the rounded offset, no more: in
    # float64 43.79 + 47 is 90.78999999999999 and -3.3 + 3.2 is -0.0999999999999996,
    # which would be printed so and would put a row holding 90.79 on the wrong side.
    # Then the point is rounded to the offset's decimal place (90.79 → 91), unless that
    # would reach a bound.
    origin, sign = (low, 1.0) if dense_near == "low" else (high, -1.0)
    origin_decimals = max(0, -int(Decimal(repr(origin)).as_tuple().exponent)) if math.isfinite(origin) else 0
    rounded = []
    for offset in offsets.tolist():
        point = origin + sign * offset
        if offset > 0 and math.isfinite(offset):
            digits = 1 - math.floor(math.log10(offset))
            point = round(origin + sign * round(offset, digits), max(digits, origin_decimals))
            short = round(point, digits)
            if low < short < high:
                point = short
        rounded.append(point)
    return np.unique(np.clip(np.array(rounded, dtype=np.float64), low, high))


def integer_grid(low: float, high: float, count: int) -> np.ndarray:
    """Up to ``count`` whole-number thresholds ``t`` (``low ≤ t < high``), spaced evenly in ``log(1 + t − ⌈low⌉)``.

    The member ``"integers"`` of :data:`GRID_FAMILY`, for counts (visits, children,
    days in hospital): a count column of public bounds ``[0, 89]`` has 22 of the 32
    points of ``"log:1000000"`` (11 of ``"log:1000"``) between 0 and 1, all the same
    split ``x = 0`` against ``x ≥ 1`` and printed as ``[visits ≤ 7.3e-05]``; here every
    threshold is a different whole number: all of them where there are at most
    ``count`` (``x ≤ 0``, ``x ≤ 1``, …), else the points of a log grid pushed apart to
    steps of at least one (the first ones ``0, 1, 2, …``, then wider). A function of the
    public bounds only, valid for any values (a threshold is a number; on counts
    ``x ≤ 3`` and ``x ≤ 3.5`` are the same split). Where no whole number lies in
    ``[low, high)`` (a range narrower than one), the equally wide grid; where the range
    is wider than ``2⁵²`` (every float there is a whole number), ``"log:1000000"``.

    Examples
    --------
    >>> integer_grid(0.0, 6.0, 32).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    >>> integer_grid(0.0, 89.0, 12).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 7.0, 11.0, 16.0, 25.0, 38.0, 58.0, 88.0]
    >>> integer_grid(3.5, 3.6, 4).tolist() == rounded_grid(3.5, 3.6, 4).tolist()
    True
    """
    first, last = math.ceil(low), math.ceil(high) - 1
    if last < first:
        return rounded_grid(low, high, count)
    span = last - first   # a Python int: exact for any finite bounds
    if span > 2**52:
        return scaled_log_grid(low, high, count, 1e6)
    if span + 1 <= count:
        offsets = list(range(span + 1))
    else:
        targets = np.expm1(np.linspace(0.0, math.log1p(float(span)), count))
        offsets = []
        for target in targets.tolist():   # steps of at least one, left to right
            offsets.append(max(offsets[-1] + 1 if offsets else 0, min(round(target), span)))
        for i in range(count - 1, -1, -1):   # and none beyond the last whole number, right to left
            offsets[i] = min(offsets[i], span - (count - 1 - i))
    points = np.array([float(first + offset) for offset in offsets], dtype=np.float64)
    return np.unique(np.clip(points, low, high))


def public_grid(low: float, high: float, count: int, transform: str | None = None) -> np.ndarray:
    """The thresholds a private miner may choose for a numeric column: a function of public facts only.

    Equally spaced between the public bounds (:func:`rounded_grid`; ``transform`` None
    or ``"linear"``), for a column the data owner declared ``"transform": "log"``
    equally spaced in ``log(1 + x)`` (:func:`log_grid`), or a member ``"log:r"`` or
    ``"log-high:r"`` of :data:`GRID_FAMILY` (:func:`scaled_log_grid`).

    Examples
    --------
    >>> public_grid(0.0, 100.0, 3).tolist(), public_grid(0.0, 100.0, 3, "log").tolist()
    ([25.0, 50.0, 75.0], [2.2, 9.0, 31.0])
    >>> public_grid(0.0, 100.0, 3, "log:100").tolist()
    [2.2, 9.0, 31.0]
    """
    if transform is None or transform == "linear":
        return rounded_grid(low, high, count)
    if transform == "log":
        return log_grid(low, high, count)
    if transform == INTEGER_GRID:
        return integer_grid(low, high, count)
    if transform in GRID_FAMILY:
        kind, ratio = transform.split(":")
        return scaled_log_grid(low, high, count, float(ratio), dense_near="high" if kind == "log-high" else "low")
    names = ", ".join(dict.fromkeys(TRANSFORMS + GRID_FAMILY[1:]))   # "integers" is in both
    raise ValueError(f"unknown transform {transform!r}; use one of {names}")
