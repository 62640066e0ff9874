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
* uniform on the open interval ``(0, 1)``: ``(k + 1/2) / 2**53`` with ``k`` uniform
  on ``{0, ..., 2**53 - 1}``.
* standard Gumbel keys: ``-log(-log(u))`` of such uniforms.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
import opendp.prelude as dp

from dprm.errors import ParameterError

dp.enable_features("contrib")

__all__ = ["Sampler", "SAMPLERS", "NoiseSource", "SecureNoise", "SeededNoise"]

Sampler = Literal["gumbel", "permute-and-flip"]
SAMPLERS: tuple[str, ...] = ("gumbel", "permute-and-flip")

_TWO_POW_53 = float(2**53)


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
    """Map uniform 64-bit integers to uniforms on the open interval (0, 1)."""
    return ((bits >> np.uint64(11)).astype(np.float64) + 0.5) / _TWO_POW_53


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
        self._laplace: dict[float, dp.Measurement] = {}
        self._noisy_max: dict[tuple[float, str], dp.Measurement] = {}

    def __repr__(self) -> str:
        return "SecureNoise()"

    def _laplace_measurement(self, scale: float) -> dp.Measurement:
        measurement = self._laplace.get(scale)
        if measurement is None:
            measurement = dp.m.make_laplace(
                dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale
            )
            self._laplace[scale] = measurement
        return measurement

    def _max_measurement(self, scale: float, sampler: str) -> dp.Measurement:
        key = (scale, sampler)
        measurement = self._noisy_max.get(key)
        if measurement is None:
            measure = (
                dp.zero_concentrated_divergence()
                if sampler == "gumbel"
                else dp.max_divergence()
            )
            measurement = dp.m.make_noisy_max(
                dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                dp.linf_distance(T=float),
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
        """Uniforms on (0, 1) from :func:`os.urandom` (53 random bits each)."""
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
        the discrete Laplace pmf.
        """
        array = _as_int_values(values)
        scale = _check_scale(scale)
        p = -np.expm1(-1.0 / scale)
        # numpy's geometric counts trials (>= 1); the difference is unaffected.
        first = self.rng.geometric(p, size=array.shape)
        second = self.rng.geometric(p, size=array.shape)
        return array + (first - second).astype(np.int64)

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
