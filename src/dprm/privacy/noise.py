"""Noise sources: where every random number of a private release comes from.

Two implementations of the :class:`NoiseSource` protocol draw from the *same*
distributions:

* :class:`SecureNoise` -- for private runs. Discrete Laplace noise and selection
  (noisy max) come from OpenDP's exact samplers on a cryptographically secure
  source (no floating-point leaks, Mironov 2012); uniforms and Gumbel keys come from
  the operating system's CSPRNG (:func:`os.urandom`).
* :class:`SeededNoise` -- for reproducible research runs. Same distributions, drawn
  with numpy from a user-given :class:`numpy.random.Generator`. A run using it is
  *not* private (anyone with the seed can remove the noise), and the accountant says
  so in its privacy block.

Distributions (``s`` is the scale):

* discrete Laplace: ``P(Z = z) ∝ exp(-|z| / s)`` on the integers. Seeded path:
  the difference of two i.i.d. geometric variables with success probability
  ``p = 1 - exp(-1/s)`` (the number of failures before a success).
* noisy max, ``sampler="gumbel"``: ``argmax_i (q_i / s + G_i)`` with standard Gumbel
  ``G_i``, i.e. ``P(i) ∝ exp(q_i / s)`` exactly (the Gumbel-max trick). Secure path:
  OpenDP ``make_noisy_max`` with ``zero_concentrated_divergence()``, which adds
  Gumbel noise (verified against the softmax in the tests).
* noisy max, ``sampler="permute-and-flip"``: ``argmax_i (q_i / s + E_i)`` with
  standard exponential ``E_i``, which is the permute-and-flip mechanism (McKenna &
  Sheldon 2020; Ding et al. 2021). Secure path: OpenDP ``make_noisy_max`` with
  ``max_divergence()``.
* uniform on the open interval ``(0, 1)``: ``(2k + 1) / 2**53`` with ``k`` uniform
  on ``{0, ..., 2**52 - 1}`` (the midpoints of ``2**52`` equal cells; computed
  exactly, so every value lies in ``[2**-53, 1 - 2**-53]``).
* standard Gumbel keys: ``-log(-log(u))`` of such uniforms, always finite (within
  about ``[-3.6, 36.7]``).

Huge scales (a tiny ε). Released values are int64; like OpenDP, whose integer
Laplace *saturates* at the int64 bounds, the seeded path clamps ``c + Z`` into
``[-2**63, 2**63 - 1]`` (a deterministic function of the exact noisy value, i.e.
post-processing). Up to a scale of ``2**52`` it uses numpy's geometric sampler;
beyond, numpy's sampler saturates *each* geometric variable at ``2**63 - 1`` so that
their difference would be 0 (no noise at all), and the seeded path draws
``floor(s E1) - floor(s E2)`` with standard exponential ``E`` in float64 instead
(``P(floor(s E) >= k) = exp(-k/s)``, the same geometric law; at such scales float64
is not integer-exact, which does not matter for noise that dwarfs every count).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dprm.errors import ParameterError

if TYPE_CHECKING:
    from opendp.mod import Measurement


def _opendp() -> dict[str, ModuleType]:
    """OpenDP's modules :class:`SecureNoise` draws with, imported on its first draw (about 0.07 s, which a run
    that draws no secure noise, such as a non-private ``dprm itemsets``, does not pay).

    The submodules, not ``opendp.prelude``: the prelude also imports OpenDP's scikit-learn,
    polars and numpy extras (scikit-learn and scipy.stats: about a second per process).
    """
    import opendp.domains
    import opendp.measurements
    import opendp.measures
    import opendp.metrics
    import opendp.mod

    opendp.mod.enable_features("contrib")
    return {"measurements": opendp.measurements, "domains": opendp.domains, "measures": opendp.measures,
            "metrics": opendp.metrics}

__all__ = ["Sampler", "SAMPLERS", "NoiseSource", "SecureNoise", "SeededNoise"]

Sampler = Literal["gumbel", "permute-and-flip"]
SAMPLERS: tuple[str, ...] = ("gumbel", "permute-and-flip")

#: ``2**-53``: the uniform grid's half-step (exact power of two).
_HALF_STEP = 2.0**-53
#: Largest scale for numpy's geometric sampler: at this scale its int64 cap ``2**63``
#: is ``2**63 / 2**52 = 2048`` scales away, reached with probability ``exp(-2048)``.
_NUMPY_GEOMETRIC_MAX_SCALE = 2.0**52
_INT64_MIN, _INT64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max


@runtime_checkable
class NoiseSource(Protocol):
    """What mechanisms need from a source of randomness.

    Attributes
    ----------
    secure : bool
        True when the draws are cryptographically secure (a private run).
    """

    secure: bool

    def discrete_laplace(self, values: npt.ArrayLike, scale: float) -> np.ndarray:
        """Return ``values`` plus i.i.d. discrete Laplace noise of ``scale`` (int64)."""
        ...

    def noisy_max(
        self, scores: np.ndarray, scale: float, sampler: Sampler = "gumbel"
    ) -> int:
        """Return ``argmax_i(scores_i / scale + noise_i)``."""
        ...

    def noisy_max_many(
        self, score_vectors: Sequence[np.ndarray], scale: float, sampler: Sampler = "gumbel"
    ) -> np.ndarray:
        """Return one independent :meth:`noisy_max` per score vector (int64 array)."""
        ...

    def uniform(self, size: int) -> np.ndarray:
        """Return ``size`` i.i.d. uniforms on the open interval (0, 1)."""
        ...

    def gumbel(self, size: int) -> np.ndarray:
        """Return ``size`` i.i.d. standard Gumbel variables."""
        ...


def _check_scale(scale: float) -> float:
    scale = float(scale)
    if not (np.isfinite(scale) and scale > 0.0):
        raise ParameterError(f"noise scale must be finite and > 0, got {scale!r}")
    return scale


def _check_sampler(sampler: str) -> None:
    if sampler not in SAMPLERS:
        raise ParameterError(
            f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}"
        )


def _as_int_values(values: npt.ArrayLike) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype.kind == "b" or (array.size and array.dtype.kind not in "iu"):
        raise ParameterError(f"discrete Laplace needs integer values, got {array.dtype}")
    return array.astype(np.int64, copy=False)


def _as_scores(scores: npt.ArrayLike) -> np.ndarray:
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ParameterError("scores must be a non-empty one-dimensional array")
    if not np.all(np.isfinite(array)):
        raise ParameterError("scores must be finite (no NaN or infinity)")
    return array


def _uniform_from_bits(bits: np.ndarray) -> np.ndarray:
    """Map uniform 64-bit integers to uniforms strictly inside (0, 1).

    The top 52 bits give ``k`` uniform on ``{0, ..., 2**52 - 1}`` and the result is
    ``(2k + 1) * 2**-53``, the midpoint of the ``k``-th of ``2**52`` equal cells of
    ``[0, 1)``. Every step is exact in float64: ``2k + 1 < 2**53`` is an integer
    float, and multiplying by a power of two only changes the exponent. So the
    smallest value is ``2**-53`` and the largest ``1 - 2**-53`` (the float just
    below 1), and the grid is symmetric about 1/2.

    (The former ``(k + 1/2) / 2**53`` with a 53-bit ``k`` was not exact: for
    ``k >= 2**52``, ``k + 1/2`` needs 54 bits and was rounded to an even integer,
    and ``k = 2**53 - 1`` gave exactly ``1.0``, i.e. an infinite Gumbel key.)

    Examples
    --------
    >>> top = np.array([0, 2**64 - 1], dtype=np.uint64)
    >>> u = _uniform_from_bits(top)
    >>> bool(u[0] == 2.0**-53), bool(u[1] == 1 - 2.0**-53), bool(u[1] < 1.0)
    (True, True, True)
    """
    k = (bits >> np.uint64(12)).astype(np.float64)
    return (2.0 * k + 1.0) * _HALF_STEP


def _saturating_add(values: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``values + noise`` clamped into the int64 range (as OpenDP saturates).

    ``values`` are int64; ``noise`` is int64 (then no clamping is needed unless a
    value is near the bounds) or float64 for noise too large for integers.
    """
    if noise.dtype.kind == "i":
        total = values + noise
        overflow = (noise > 0) & (total < values)
        underflow = (noise < 0) & (total > values)
        if overflow.any() or underflow.any():
            total = np.where(overflow, _INT64_MAX, np.where(underflow, _INT64_MIN, total))
        return total
    exact = values.astype(np.float64) + noise
    # 2**63 - 1024 is the largest float below 2**63: a safe int64 conversion.
    inside = np.clip(exact, -(2.0**63), 2.0**63 - 1024.0).astype(np.int64)
    return np.where(exact >= 2.0**63, _INT64_MAX, np.where(exact <= -(2.0**63), _INT64_MIN, inside))


class SecureNoise:
    """Cryptographically secure noise: OpenDP's exact samplers and the OS CSPRNG.

    Discrete Laplace noise for a whole vector is one OpenDP call; OpenDP
    measurements are cached per scale, so repeated releases pay only the call.

    Examples
    --------
    >>> noise = SecureNoise()
    >>> noise.secure
    True
    >>> noise.discrete_laplace(np.array([10, 20, 30]), scale=2.0).dtype
    dtype('int64')
    >>> noise.noisy_max(np.array([0.0, 100.0, 0.0]), scale=1.0)
    1
    >>> u = noise.uniform(4)
    >>> bool(np.all((u > 0) & (u < 1)))
    True
    """

    secure: bool = True

    def __init__(self) -> None:
        self._laplace: dict[float, Measurement] = {}
        self._noisy_max: dict[tuple[float, str], Measurement] = {}

    def __repr__(self) -> str:
        return "SecureNoise()"

    def _laplace_measurement(self, scale: float) -> Measurement:
        measurement = self._laplace.get(scale)
        if measurement is None:
            od = _opendp()
            measurement = od["measurements"].make_laplace(
                od["domains"].vector_domain(od["domains"].atom_domain(T="i64")), od["metrics"].l1_distance(T="i64"),
                scale,
            )
            self._laplace[scale] = measurement
        return measurement

    def _max_measurement(self, scale: float, sampler: str) -> Measurement:
        key = (scale, sampler)
        measurement = self._noisy_max.get(key)
        if measurement is None:
            od = _opendp()
            measure = (
                od["measures"].zero_concentrated_divergence()
                if sampler == "gumbel"
                else od["measures"].max_divergence()
            )
            measurement = od["measurements"].make_noisy_max(
                od["domains"].vector_domain(od["domains"].atom_domain(T=float, nan=False)),
                od["metrics"].linf_distance(T=float),
                measure,
                scale=scale,
            )
            self._noisy_max[key] = measurement
        return measurement

    def discrete_laplace(self, values: npt.ArrayLike, scale: float) -> np.ndarray:
        """Add exact discrete Laplace noise to integer ``values`` (one OpenDP call).

        Parameters
        ----------
        values : array_like of int
            Exact counts, any shape.
        scale : float
            Noise scale ``s``: ``P(z) ∝ exp(-|z|/s)``.

        Returns
        -------
        numpy.ndarray of int64
            Noisy values, same shape as ``values``.
        """
        array = _as_int_values(values)
        scale = _check_scale(scale)
        if array.size == 0:
            return array.copy()
        noisy = self._laplace_measurement(scale)(array.ravel().tolist())
        return np.asarray(noisy, dtype=np.int64).reshape(array.shape)

    def noisy_max(
        self, scores: npt.ArrayLike, scale: float, sampler: Sampler = "gumbel"
    ) -> int:
        """Return the index of the largest noisy score (OpenDP ``make_noisy_max``).

        Parameters
        ----------
        scores : array_like of float
            Finite scores, one per candidate.
        scale : float
            Noise scale; ``sampler="gumbel"`` gives ``P(i) ∝ exp(q_i / scale)``.
        sampler : {"gumbel", "permute-and-flip"}
            Gumbel noise (exponential mechanism) or exponential noise
            (permute-and-flip).

        Returns
        -------
        int
        """
        _check_sampler(sampler)
        array = _as_scores(scores)
        measurement = self._max_measurement(_check_scale(scale), sampler)
        return int(measurement(array.tolist()))

    def noisy_max_many(
        self,
        score_vectors: Sequence[npt.ArrayLike],
        scale: float,
        sampler: Sampler = "gumbel",
    ) -> np.ndarray:
        """Independent :meth:`noisy_max` for each score vector (int64 array)."""
        _check_sampler(sampler)
        arrays = [_as_scores(scores) for scores in score_vectors]
        measurement = self._max_measurement(_check_scale(scale), sampler)
        return np.array([measurement(a.tolist()) for a in arrays], dtype=np.int64)

    def uniform(self, size: int) -> np.ndarray:
        """Uniforms on (0, 1) from :func:`os.urandom` (52 random bits each)."""
        bits = np.frombuffer(os.urandom(8 * int(size)), dtype=np.uint64)
        return _uniform_from_bits(bits)

    def gumbel(self, size: int) -> np.ndarray:
        """Standard Gumbel variables ``-log(-log(u))`` of CSPRNG uniforms."""
        return -np.log(-np.log(self.uniform(size)))


class SeededNoise:
    """Reproducible noise with the same distributions as :class:`SecureNoise`.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness; the same seed gives the same draws.

    Notes
    -----
    Not private: the noise is a function of the seed. Use it for research runs,
    tests and reproducing papers.

    Examples
    --------
    >>> noise = SeededNoise(np.random.default_rng(7))
    >>> noise.secure
    False
    >>> a = noise.discrete_laplace(np.array([5, 5]), scale=1.0)
    >>> b = SeededNoise(np.random.default_rng(7)).discrete_laplace(np.array([5, 5]), 1.0)
    >>> bool(np.array_equal(a, b))
    True
    >>> noise.noisy_max(np.array([0.0, 100.0, 0.0]), scale=1.0)
    1
    """

    secure: bool = False

    def __init__(self, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise ParameterError("SeededNoise needs a numpy.random.Generator")
        self.rng = rng

    def __repr__(self) -> str:
        return f"SeededNoise({self.rng!r})"

    def discrete_laplace(self, values: npt.ArrayLike, scale: float) -> np.ndarray:
        """Add discrete Laplace noise: the difference of two geometric variables.

        With ``p = 1 - exp(-1/s)`` and ``X, Y`` i.i.d. counting failures before the
        first success, ``P(X - Y = z) = (1-a)/(1+a) a^|z|`` with ``a = exp(-1/s)``,
        the discrete Laplace pmf. Results are clamped into the int64 range, as
        OpenDP's are; beyond a scale of ``2**52`` the geometric variables are
        drawn as ``floor(s E)`` in float64 (module docstring: numpy's sampler
        would saturate both at ``2**63 - 1`` and add no noise at all).

        Examples
        --------
        >>> noise = SeededNoise(np.random.default_rng(0))
        >>> huge = noise.discrete_laplace(np.zeros(1000, dtype=np.int64), 1e30)
        >>> sorted(set(huge.tolist())) == [-2**63, 2**63 - 1]   # saturated, never exact
        True
        """
        array = _as_int_values(values)
        scale = _check_scale(scale)
        if scale <= _NUMPY_GEOMETRIC_MAX_SCALE:
            p = -np.expm1(-1.0 / scale)
            # numpy's geometric counts trials (>= 1); the difference is unaffected.
            first = self.rng.geometric(p, size=array.shape)
            second = self.rng.geometric(p, size=array.shape)
            noise = (first - second).astype(np.int64)
        else:
            first = np.floor(scale * self.rng.standard_exponential(array.shape))
            second = np.floor(scale * self.rng.standard_exponential(array.shape))
            noise = first - second
        return _saturating_add(array, noise)

    def _noise(self, size: int, sampler: str) -> np.ndarray:
        if sampler == "gumbel":
            return self.gumbel(size)
        return self.rng.standard_exponential(size)

    def noisy_max(
        self, scores: npt.ArrayLike, scale: float, sampler: Sampler = "gumbel"
    ) -> int:
        """Return ``argmax_i((q_i - max q) / scale + noise_i)`` (shifted: no overflow)."""
        _check_sampler(sampler)
        array = _as_scores(scores)
        scale = _check_scale(scale)
        shifted = (array - array.max()) / scale
        return int(np.argmax(shifted + self._noise(array.size, sampler)))

    def noisy_max_many(
        self,
        score_vectors: Sequence[npt.ArrayLike],
        scale: float,
        sampler: Sampler = "gumbel",
    ) -> np.ndarray:
        """Independent :meth:`noisy_max` per score vector, vectorised over all of them."""
        _check_sampler(sampler)
        arrays = [_as_scores(scores) for scores in score_vectors]
        scale = _check_scale(scale)
        if not arrays:
            return np.zeros(0, dtype=np.int64)
        lengths = np.array([a.size for a in arrays])
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        flat = np.concatenate(arrays)
        segment_max = np.maximum.reduceat(flat, starts)
        keys = (flat - np.repeat(segment_max, lengths)) / scale
        keys += self._noise(flat.size, sampler)
        key_max = np.maximum.reduceat(keys, starts)
        winners = np.flatnonzero(keys == np.repeat(key_max, lengths))
        segments = np.repeat(np.arange(len(arrays)), lengths)[winners]
        _, first = np.unique(segments, return_index=True)
        return (winners[first] - starts).astype(np.int64)

    def uniform(self, size: int) -> np.ndarray:
        """Uniforms on (0, 1) with 53 random bits each (same grid as SecureNoise)."""
        bits = self.rng.integers(0, 2**64, size=int(size), dtype=np.uint64, endpoint=False)
        return _uniform_from_bits(bits)

    def gumbel(self, size: int) -> np.ndarray:
        """Standard Gumbel variables ``-log(-log(u))``."""
        return -np.log(-np.log(self.uniform(size)))
