"""Weighted reservoir sampling: the exponential mechanism over a stream of scores.

Derivation
----------
Efraimidis & Spirakis (2006) sample ``k`` items without replacement with
probabilities proportional to weights ``w_i`` by keeping the ``k`` largest keys
``u_i^(1/w_i)`` (``u_i`` uniform). In log space, ``log(u_i)/w_i`` is maximised where
``log(-log u_i) - log w_i`` is minimised, i.e. where

    key_i = log w_i - log(-log u_i) = log w_i + G_i,   G_i standard Gumbel,

is maximised. With ``w_i = exp(ε' q_i / (2Δ))`` the keys are
``q_i / s + G_i`` with ``s = 2Δ/ε'``: the Gumbel-max trick, so for ``k = 1`` the
reservoir is exactly the exponential mechanism (tested), and nothing is
exponentiated (no overflow or underflow).

For ``k > 1`` the top-``k`` Gumbel keys, in decreasing order, are distributed as
``k`` successive exponential-mechanism draws without replacement (Durfee & Rogers
2019, "one-shot top-k"), each ε'-DP. The mechanism charges ``epsilon`` once for the
whole stream and uses ``ε' = epsilon / k`` per draw, so the total is ``epsilon`` by
sequential composition: scale ``s = 2Δk/ε``.

Excluding candidates after the stream (``keep``): a draw that also keeps its
``keep − 1`` next-best keys can skip up to ``keep − 1`` candidates named only after
the stream has passed (e.g. those that earlier draws chose) by taking the first of
its kept keys not excluded. That is the largest key among the candidates not
excluded, i.e. the Gumbel-max trick over that subset: the same exponential mechanism
over the remaining candidates, at the same ε. Only that one candidate is released;
the other kept keys stay inside the draw.

Secure path: the Gumbel keys are computed in float64 from CSPRNG uniforms (52 bits,
strictly inside (0, 1): every key is finite).
Only the selected indices are released, never the keys, but unlike the exact
OpenDP samplers this is not immune to floating-point effects in principle; prefer
:class:`~dprm.privacy.ExponentialMechanism` when all scores fit in memory.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import numpy as np
import numpy.typing as npt

from dprm.errors import ParameterError
from dprm.privacy.accountant import FLOATING_POINT_SELECTION, PURE_DP, Accountant, guarantee_label
from dprm.privacy.budget import EpsilonLike
from dprm.privacy.mechanism import Mechanism
from dprm.privacy.noise import NoiseSource, _as_scores
from dprm.privacy.scale import noise_scale

__all__ = ["WeightedReservoir", "ReservoirDraw"]


class ReservoirDraw:
    """One running stream draw, created by :meth:`WeightedReservoir.start`.

    Feed the stream with :meth:`offer` chunk by chunk; :meth:`result` returns the
    selected stream positions. Memory is ``O(k + chunk size)``.

    Attributes
    ----------
    n_seen : int
        Number of candidates offered so far.
    """

    def __init__(self, noise: NoiseSource, scale: float, k: int, keep: int | None = None) -> None:
        self._noise = noise
        self._scale = scale
        self._k = k
        #: keys kept: ``k`` plus as many as :meth:`result` may skip (``exclude``)
        self._capacity = max(k, keep or k)
        self._keys = np.empty(0, dtype=np.float64)
        self._positions = np.empty(0, dtype=np.int64)
        self.n_seen = 0

    def offer(self, scores: npt.ArrayLike, labels: npt.ArrayLike | None = None) -> None:
        """Add a chunk of candidate scores (finite floats) to the stream.

        ``labels`` (int64, one per score) name the candidates in :meth:`result`
        instead of their stream positions, so a caller need not keep a map from
        positions to candidates for the whole stream.
        """
        chunk = _as_scores(scores)
        if labels is None:
            positions = np.arange(self.n_seen, self.n_seen + chunk.size, dtype=np.int64)
        else:
            positions = np.asarray(labels, dtype=np.int64)
            if positions.shape != chunk.shape:
                raise ParameterError("labels must give one integer per score")
        keys = chunk / self._scale + self._noise.gumbel(chunk.size)
        self.n_seen += chunk.size
        all_keys = np.concatenate((self._keys, keys))
        all_positions = np.concatenate((self._positions, positions))
        if all_keys.size > self._capacity:
            keep = np.argpartition(all_keys, all_keys.size - self._capacity)[-self._capacity :]
            all_keys, all_positions = all_keys[keep], all_positions[keep]
        self._keys, self._positions = all_keys, all_positions

    def result(self, exclude: Collection[int] = ()) -> np.ndarray:
        """Selected stream positions (or labels, if given), int64, in decreasing key order.

        The first is the exponential mechanism's choice; the rest continue the draw
        without replacement. Fewer than ``k`` when the stream had fewer candidates.
        ``exclude``: candidates named after the stream (at most ``keep − k`` of them
        among the kept keys, :meth:`WeightedReservoir.start`); the choice is then the
        exponential mechanism over the others at the same ε (module docstring). Only
        the ``k`` selected leave the draw, never the other kept keys.
        """
        order = np.argsort(-self._keys, kind="stable")
        ranked = self._positions[order]
        if len(exclude):
            ranked = ranked[~np.isin(ranked, np.fromiter(exclude, dtype=np.int64, count=len(exclude)))]
        return ranked[:self._k].copy()


class WeightedReservoir(Mechanism):
    """Streaming exponential mechanism (Efraimidis–Spirakis keys in log space).

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of one whole stream draw.
    sensitivity : int, float, str or Fraction
        Sensitivity ``Δ`` of every candidate's score.
    k : int, default 1
        Reservoir size; ``k > 1`` samples ``k`` candidates without replacement,
        each draw with ``epsilon / k``.

    Attributes
    ----------
    scale : float
        Key scale ``2Δk/ε``, rounded up.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> reservoir = WeightedReservoir(epsilon=1.0, sensitivity=1, k=2)
    >>> draw = reservoir.start(acc, "candidates#1")
    >>> draw.offer(np.array([0.0, 1000.0, 3.0]))
    >>> draw.offer(np.array([990.0]))
    >>> draw.result()
    array([1, 3])
    >>> acc.spent(), draw.n_seen
    (Fraction(1, 1), 4)
    """

    name = "exponential (weighted reservoir)"
    #: float64 Gumbel keys, not an exact sampler (a failure probability of ~2^-53 per draw).
    guarantee = guarantee_label(PURE_DP, [FLOATING_POINT_SELECTION])

    def __init__(self, epsilon: EpsilonLike, sensitivity: EpsilonLike = 1, k: int = 1) -> None:
        super().__init__(epsilon, sensitivity)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ParameterError(f"reservoir size k must be an integer >= 1, got {k!r}")
        self.k = int(k)
        self.scale: float = noise_scale(2 * self.sensitivity * self.k, self.epsilon)
        if self.k > 1:
            self.name = f"exponential (weighted reservoir, k={self.k})"

    def __repr__(self) -> str:
        return (
            f"WeightedReservoir(epsilon={self.epsilon}, "
            f"sensitivity={self.sensitivity}, k={self.k})"
        )

    def start(self, accountant: Accountant, step: str, *, keep: int = 1) -> ReservoirDraw:
        """Charge ``epsilon`` for the whole stream and return the running draw.

        ``keep`` is how many of the largest keys the draw keeps (at least ``k``), so
        that :meth:`ReservoirDraw.result` can exclude up to ``keep − k`` candidates
        named after the stream (module docstring); the cost is the same.
        """
        if isinstance(keep, bool) or not isinstance(keep, (int, np.integer)) or keep < 1:
            raise ParameterError(f"keep must be an integer >= 1, got {keep!r}")
        self.charge(accountant, step)
        return ReservoirDraw(accountant.noise, self.scale, self.k, int(keep))

    def release(
        self, accountant: Accountant, step: str, chunks: Iterable[npt.ArrayLike]
    ) -> np.ndarray:
        """Charge once, offer every chunk of ``chunks``, return the selected positions."""
        draw = self.start(accountant, step)
        for chunk in chunks:
            draw.offer(chunk)
        return draw.result()
