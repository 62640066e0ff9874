"""Statistics of a redescription: supports, Jaccard index, p-value (spec, "Statistics").

* ``J = |supp(qL) ∩ supp(qR)| / |supp(qL) ∪ supp(qR)|`` (0 when the union is empty);
* ``p-value = P[X ≥ |supp(qL) ∩ supp(qR)|]`` with
  ``X ~ Binomial(n, (|supp(qL)|/n) · (|supp(qR)|/n))``: the probability that two
  independent queries with these supports overlap at least this much.

Noisy inputs (differentially private estimates) are real numbers that may be
negative or mutually inconsistent. :meth:`RedescriptionStats.from_counts` clips them
into a consistent range (below); :func:`p_value` first rounds them to the nearest
integers and then clips. Clipping is post-processing of released values, so it
costs no privacy.

Consistent range, applied in this order (``n`` only when given)::

    n      >= 0
    sL, sR in [0, n]
    inter  in [max(0, sL + sR - n), min(sL, sR)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dprm.errors import DprmError, short_repr

__all__ = ["RedescriptionStats", "p_value", "independence_jaccard", "excess_jaccard", "STATS_KEYS"]

#: The keys of the spec's ``noisy`` block, in order.
STATS_KEYS: tuple[str, ...] = ("support_left", "support_right", "intersection", "union", "jaccard", "p_value")

#: The statistics that are shares or probabilities, in [0, 1]; the others count rows (>= 0).
_UNIT_KEYS = frozenset({"jaccard", "p_value"})


def _clip_counts(sl, sr, inter, n=None):
    """Clip counts (arrays or scalars) into the consistent range of the module docstring."""
    sl, sr, inter = (np.asarray(x, dtype=np.float64) for x in (sl, sr, inter))
    if n is not None:
        n = np.maximum(np.asarray(n, dtype=np.float64), 0.0)
        sl, sr = np.clip(sl, 0.0, n), np.clip(sr, 0.0, n)
        low = np.maximum(sl + sr - n, 0.0)
    else:
        sl, sr = np.maximum(sl, 0.0), np.maximum(sr, 0.0)
        low = np.zeros_like(inter)
    inter = np.clip(inter, low, np.minimum(sl, sr))
    return sl, sr, inter, n


def independence_jaccard(support_left, support_right, n_rows):
    """The Jaccard index two independent queries of these support sizes would have, vectorised.

    With ``a = |supp(qL)|``, ``b = |supp(qR)|`` and ``n`` rows, independent queries
    share ``e = a·b/n`` rows in expectation, so their Jaccard index is
    ``J_ind = e / (a + b − e)``. Large supports make it large: two queries that each
    hold 90 % of the rows have ``J_ind ≈ 0.82`` whatever they say, which is why a
    Jaccard index alone does not make a finding (:func:`excess_jaccard`). Noisy
    (released) counts may be given: then ``J_ind`` is post-processing. Sizes are
    clipped into ``[0, n]``; ``n ≤ 0`` or empty supports give 0.

    Examples
    --------
    >>> round(independence_jaccard(900, 900, 1000), 3)
    0.818
    >>> independence_jaccard([100, 500], 100, 1000).round(4).tolist()
    [0.0526, 0.0909]
    """
    a, b, n = (np.asarray(x, dtype=np.float64) for x in (support_left, support_right, n_rows))
    n = np.maximum(n, 0.0)
    a, b = np.clip(a, 0.0, n), np.clip(b, 0.0, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        shared = np.where(n > 0, a * b / np.where(n > 0, n, 1.0), 0.0)
        union = a + b - shared
        result = np.where(union > 0, shared / np.where(union > 0, union, 1.0), 0.0)
    return float(result) if result.ndim == 0 else result


def excess_jaccard(jaccard, support_left, support_right, n_rows):
    """How far a Jaccard index exceeds :func:`independence_jaccard` of the same support sizes.

    ``J − J_ind``: about 0 for a pair of queries that are unrelated however large
    their Jaccard index, up to ``1 − J_ind`` for a pair that holds on exactly the
    same rows; negative when the queries avoid each other.

    Examples
    --------
    >>> round(excess_jaccard(0.82, 900, 900, 1000), 3)   # large and near-independent: no finding
    0.002
    >>> round(excess_jaccard(0.6, 100, 100, 1000), 3)
    0.547
    """
    result = np.asarray(jaccard, dtype=np.float64) - independence_jaccard(support_left, support_right, n_rows)
    return float(result) if np.ndim(result) == 0 else result


def p_value(intersection, support_left, support_right, n_rows):
    """``P[X ≥ intersection]``, ``X ~ Binomial(n, (sL/n)(sR/n))``, vectorised.

    Parameters
    ----------
    intersection, support_left, support_right, n_rows : float or array_like
        Counts; broadcast together. Non-integer (noisy) values are rounded to the
        nearest integer (``numpy.rint``, halves to even), then clipped into the
        consistent range of the module docstring. Arithmetic is in float64, so a
        large ``n`` (say 10⁹ rows) cannot overflow.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar inputs, else an array of the broadcast shape. ``n = 0``
        gives 1 (``P[X ≥ 0]``).

    Examples
    --------
    >>> round(p_value(3, 3, 3, 10), 6)    # P[X >= 3], X ~ Bin(10, 0.09)
    0.05404
    >>> p_value(0, 5, 5, 10)              # ">=": an empty intersection is never surprising
    1.0
    >>> p_value([2, 3], 3, 3, 10).round(4).tolist()
    [0.2254, 0.054]
    """
    arrays = [np.rint(np.asarray(x, dtype=np.float64)) for x in (support_left, support_right, intersection, n_rows)]
    if not all(np.isfinite(a).all() for a in arrays):
        raise DprmError("p_value needs finite counts")
    sl, sr, inter, n = _clip_counts(*arrays)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, (sl / np.where(n > 0, n, 1.0)) * (sr / np.where(n > 0, n, 1.0)), 0.0)
    p = np.clip(p, 0.0, 1.0)
    # scipy.stats.binom.sf calls exactly this ufunc (Boost's binomial tail) after its
    # argument checks, which the clipping above makes moot; importing scipy.stats for it
    # would cost about 0.4 s of every run (tests/test_queries_statistics.py pins the equality).
    from scipy.special._ufuncs import _binom_sf

    with np.errstate(invalid="ignore"):  # inter = 0 gives NaN here, replaced by 1 below
        result = _binom_sf(inter - 1.0, n, p)
    result = np.where(inter <= 0, 1.0, result)  # P[X >= 0] = 1 exactly, also for n = 0
    return float(result) if result.ndim == 0 else result


def _finite_or_none(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DprmError(f"{name} must be a number, got {value!r}")
    value = value.item() if isinstance(value, (np.integer, np.floating)) else value
    if not math.isfinite(value):
        raise DprmError(f"{name} must be finite, got {value!r}")
    return value


@dataclass(frozen=True)
class RedescriptionStats:
    """Supports, union, Jaccard index and p-value of one redescription.

    Values are exact (ints) when computed from supports and real numbers when they
    are noisy estimates; ``p_value`` is ``None`` when unknown (no row count to use).
    All values are finite.

    Examples
    --------
    >>> import numpy as np
    >>> s = RedescriptionStats.from_supports(np.array([1, 1, 0, 0], bool), np.array([1, 0, 1, 0], bool))
    >>> (s.support_left, s.intersection, s.union, s.jaccard)
    (2, 1, 3, 0.3333333333333333)
    >>> RedescriptionStats.from_counts(5.2, -0.7, 1.4).to_json()["support_right"]
    0.0
    """

    support_left: float
    support_right: float
    intersection: float
    union: float
    jaccard: float
    p_value: float | None = None

    def __post_init__(self) -> None:
        for key in STATS_KEYS:
            value = _finite_or_none(key, getattr(self, key))
            if value is None and key != "p_value":
                raise DprmError(f"{key} must be a number, got None")
            object.__setattr__(self, key, value)

    @classmethod
    def from_supports(cls, mask_left: np.ndarray, mask_right: np.ndarray) -> RedescriptionStats:
        """Exact statistics from the two Boolean support masks (same length = ``n``)."""
        left, right = np.asarray(mask_left, dtype=bool), np.asarray(mask_right, dtype=bool)
        if left.shape != right.shape or left.ndim != 1:
            raise DprmError(f"support masks must be 1-d of equal length, got shapes {left.shape} and {right.shape}")
        sl, sr = int(np.count_nonzero(left)), int(np.count_nonzero(right))
        inter = int(np.count_nonzero(left & right))
        union = sl + sr - inter
        n = left.shape[0]
        return cls(sl, sr, inter, union, inter / union if union > 0 else 0.0, p_value(inter, sl, sr, n))

    @classmethod
    def from_counts(
        cls, support_left: float, support_right: float, intersection: float, n_rows: float | None = None
    ) -> RedescriptionStats:
        """Statistics from (possibly noisy, real-valued) counts.

        The counts are clipped into the consistent range of the module docstring
        (not rounded); ``union = sL + sR - inter``; Jaccard is 0 when the union is 0.
        The p-value needs ``n_rows`` (a noisy estimate is fine) and is ``None`` without.
        """
        values = [_finite_or_none(k, v) for k, v in zip(
            ("support_left", "support_right", "intersection", "n_rows"),
            (support_left, support_right, intersection, n_rows))]
        if any(v is None for v in values[:3]):
            raise DprmError("from_counts needs support_left, support_right and intersection")
        sl, sr, inter, n = _clip_counts(*values)
        sl, sr, inter = float(sl), float(sr), float(inter)
        union = sl + sr - inter
        jaccard = min(inter / union, 1.0) if union > 0 else 0.0
        pv = None if n is None else p_value(inter, sl, sr, float(n))
        return cls(sl, sr, inter, union, jaccard, pv)

    def to_json(self) -> dict:
        """The spec's ``noisy`` block: the six keys of :data:`STATS_KEYS` (``p_value`` may be null)."""
        return {key: getattr(self, key) for key in STATS_KEYS}

    @classmethod
    def from_json(cls, obj: Any, *, where: str = "noisy") -> RedescriptionStats:
        """Read a ``noisy`` block strictly: exactly the six keys, each a finite number in its range.

        The supports, intersection and union are >= 0, the Jaccard index and the
        p-value (which may be null) in [0, 1]: every miner's estimate is clipped there
        (:meth:`from_counts`), so a value outside is no statistic of a run. The counts
        are also consistent as the sizes of two sets (:func:`_check_counts`): the
        intersection is at most each support, the union at least each support and at
        most their sum. Exact counts are so, and noisy ones are clipped so before they
        are written (post-processing), so this holds for every document dprm writes,
        private or not; the supports are not checked against a number of rows, which
        the block does not state (a private run's supports are clipped to a noisy one).

        Examples
        --------
        >>> block = {"support_left": 3.0, "support_right": 4.0, "intersection": 2.0, "union": 5.0,
        ...          "jaccard": 0.4, "p_value": None}
        >>> RedescriptionStats.from_json(block).jaccard
        0.4
        >>> RedescriptionStats.from_json({**block, "jaccard": 7.5}, where="out.json: redescriptions[0].noisy")
        Traceback (most recent call last):
        ...
        dprm.errors.DprmError: out.json: redescriptions[0].noisy.jaccard: must be in [0, 1], got 7.5
        >>> RedescriptionStats.from_json({**block, "intersection": 3.5}, where="out.json: redescriptions[0].noisy")
        Traceback (most recent call last):
        ...
        dprm.errors.DprmError: out.json: redescriptions[0].noisy.intersection: 3.5 is more than support_left 3.0 \
(the rows both queries hold are rows of each)
        """
        if not isinstance(obj, dict):
            raise DprmError(f"{where}: must be a JSON object, got {short_repr(obj)}")
        for key in obj:
            if key not in STATS_KEYS:
                raise DprmError(f"{where}: unknown key {short_repr(key, 60)}")
        for key in STATS_KEYS:
            if key not in obj:
                raise DprmError(f"{where}: missing key {key!r}")
            value = obj[key]
            if value is None and key == "p_value":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DprmError(f"{where}.{key}: must be a finite number, got {short_repr(value)}")
            try:
                finite = math.isfinite(value)
            except OverflowError:
                finite = False
            if not finite:
                raise DprmError(f"{where}.{key}: must be a finite number, got {short_repr(value)}")
            if key in _UNIT_KEYS and not 0 <= value <= 1:
                raise DprmError(f"{where}.{key}: must be in [0, 1], got {short_repr(value)}")
            if value < 0:
                raise DprmError(f"{where}.{key}: must be >= 0 (a number of rows), got {short_repr(value)}")
        _check_counts(obj, where)
        return cls(**{key: obj[key] for key in STATS_KEYS})


#: How far, relative to the larger count, a count may cross a bound of :func:`_check_counts`: float rounding
#: (a noisy union is written as ``sL + sR - inter`` in float64).
_COUNT_TOL = 1e-9


def _check_counts(block: dict, where: str) -> None:
    """Refuse counts of a ``noisy`` block (each a number >= 0) that no two sets of rows have.

    ``intersection <= support_left, support_right <= union <= support_left + support_right``,
    within a relative :data:`_COUNT_TOL`.

    Examples
    --------
    >>> block = {"support_left": 3, "support_right": 4, "intersection": 2, "union": 5}
    >>> _check_counts(block, "noisy")
    >>> _check_counts({**block, "union": 3}, "noisy")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: noisy.union: 3 is less than support_right 4 (the rows of either query are rows of \
the union)
    """
    left, right, inter, union = (block[key] for key in ("support_left", "support_right", "intersection", "union"))

    def above(value: float, bound: float) -> bool:
        return value > bound + _COUNT_TOL * max(1.0, abs(value), abs(bound))

    for side in ("support_left", "support_right"):
        if above(inter, block[side]):
            raise DprmError(f"{where}.intersection: {short_repr(inter)} is more than {side} {short_repr(block[side])} "
                            "(the rows both queries hold are rows of each)")
    for side in ("support_left", "support_right"):
        if above(block[side], union):
            raise DprmError(f"{where}.union: {short_repr(union)} is less than {side} {short_repr(block[side])} "
                            "(the rows of either query are rows of the union)")
    if above(union, left + right):
        raise DprmError(f"{where}.union: {short_repr(union)} is more than support_left + support_right "
                        f"{short_repr(left + right)}")
