"""Discrete Laplace (two-sided geometric) releases of counts and histograms.

Privacy map and derivation
--------------------------
Let ``c = f(D)`` be an integer vector with L1 sensitivity ``Δ`` under
add-remove-one-row: ``||f(D) - f(D')||_1 <= Δ``. The mechanism releases
``c + Z`` with ``Z_j`` i.i.d. discrete Laplace of scale ``s``,
``P(Z_j = z) = (1-a)/(1+a) a^|z|``, ``a = exp(-1/s)``. For any output ``y``,

    P[M(D) = y] / P[M(D') = y] = prod_j exp((|y_j - c'_j| - |y_j - c_j|) / s)
                               <= exp(||c - c'||_1 / s) <= exp(Δ / s),

by the triangle inequality. With ``s >= Δ/ε`` the mechanism is ε-DP; the
privacy map is ``d_in -> d_in / s <= d_in ε / Δ``. The scale is rounded *up* from the
exact epsilon (:func:`dprm.privacy.noise_scale`), so the real loss never exceeds the
charge.

A count has ``Δ = 1`` (one row more or less changes it by one). A histogram over
disjoint cells (every row falls in at most one cell) has L1 sensitivity 1: the row
added or removed changes exactly one cell by one. Releasing all cells therefore costs
ε once, not once per cell.

Integers, not floats: the noise is sampled exactly on the integers (OpenDP on the
secure path), so no floating-point artefacts can reveal the true count (Mironov 2012).
"""

from __future__ import annotations

import numbers

import numpy as np
import numpy.typing as npt

from dprm.errors import ParameterError
from dprm.privacy.accountant import Accountant
from dprm.privacy.budget import EpsilonLike
from dprm.privacy.mechanism import Mechanism
from dprm.privacy.scale import noise_scale

__all__ = ["INT64_RANGE", "DiscreteLaplaceCount", "DiscreteLaplaceHistogram"]

#: The range of a released count: int64's (a release near its ends saturates there). A count
#: outside it is refused before any charge instead of wrapping around.
INT64_RANGE = (-(2**63), 2**63 - 1)


def _integer_sensitivity(sensitivity: EpsilonLike) -> int:
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Integral):
        raise ParameterError(
            f"sensitivity of an integer count must be a positive integer, got {sensitivity!r}"
        )
    if int(sensitivity) < 1:
        raise ParameterError(f"sensitivity must be >= 1, got {sensitivity!r}")
    return int(sensitivity)


class _DiscreteLaplace(Mechanism):
    """Discrete Laplace noise of scale ``Δ/ε`` (rounded up) for an integer sensitivity ``Δ``:
    what :class:`DiscreteLaplaceCount` and :class:`DiscreteLaplaceHistogram` share."""

    def __init__(self, epsilon: EpsilonLike, sensitivity: int = 1) -> None:
        super().__init__(epsilon, _integer_sensitivity(sensitivity))
        self.scale: float = noise_scale(self.sensitivity, self.epsilon)


class DiscreteLaplaceCount(_DiscreteLaplace):
    """Release one integer count with discrete Laplace noise of scale ``Δ/ε``.

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of one release.
    sensitivity : int, default 1
        How much one row more or less can change the count.

    Attributes
    ----------
    scale : float
        The noise scale, the smallest float with ``Δ / scale <= ε``.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> mech = DiscreteLaplaceCount(epsilon=0.5)
    >>> mech.scale
    2.0
    >>> noisy = mech.release(acc, "support#1", 812)
    >>> isinstance(noisy, int), acc.spent()
    (True, Fraction(1, 2))
    """

    name = "discrete-laplace count"

    def release(self, accountant: Accountant, step: str, count: int) -> int:
        """Charge ``epsilon``, then return ``count`` plus discrete Laplace noise."""
        if isinstance(count, bool) or not isinstance(count, numbers.Integral):
            raise ParameterError(f"count must be an integer, got {count!r}")
        if not INT64_RANGE[0] <= int(count) <= INT64_RANGE[1]:  # checked before the charge, never wrapped
            raise ParameterError(f"count must be a 64-bit integer (within ±2**63), got {count!r}")
        self.charge(accountant, step)
        return int(accountant.noise.discrete_laplace(np.array([int(count)]), self.scale)[0])


class DiscreteLaplaceHistogram(_DiscreteLaplace):
    """Release a histogram over disjoint cells with one discrete Laplace vector draw.

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of releasing the whole histogram.
    sensitivity : int, default 1
        L1 sensitivity of the whole vector (1 for disjoint cells).

    Attributes
    ----------
    scale : float
        The noise scale, the smallest float with ``Δ / scale <= ε``.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> noisy = DiscreteLaplaceHistogram(1.0).release(acc, "leaves#1", [[3, 0], [7, 12]])
    >>> noisy.shape, noisy.dtype, acc.spent()
    ((2, 2), dtype('int64'), Fraction(1, 1))
    """

    name = "discrete-laplace histogram"

    def release(self, accountant: Accountant, step: str, counts: npt.ArrayLike) -> np.ndarray:
        """Charge ``epsilon``, then return ``counts`` plus noise (int64, same shape).

        The caller guarantees the cells are disjoint (each row in at most one cell).
        """
        array = np.asarray(counts)
        if array.size and array.dtype.kind not in "iu":
            raise ParameterError(f"histogram counts must be integers, got {array.dtype}")
        if array.size and (int(array.max()) > INT64_RANGE[1] or int(array.min()) < INT64_RANGE[0]):
            raise ParameterError("histogram counts must be 64-bit integers (within ±2**63)")   # before the charge
        array = array.astype(np.int64, copy=False)
        self.charge(accountant, step)
        return accountant.noise.discrete_laplace(array, self.scale)
