"""The exponential mechanism: private selection from a finite candidate set.

Privacy map and derivation
--------------------------
Let ``q(D, i)`` be the score of candidate ``i`` with sensitivity ``Δ``:
``|q(D, i) - q(D', i)| <= Δ`` for all ``i`` and neighbours ``D, D'``. The
exponential mechanism (McSherry & Talwar 2007) selects ``i`` with

    P(i) = exp(ε q_i / (2Δ)) / Σ_j exp(ε q_j / (2Δ)).

The numerator changes by at most ``exp(ε/2)`` and the normaliser by at most
``exp(ε/2)`` between neighbours, so ``P_D(i) / P_D'(i) <= exp(ε)``: ε-DP. As a map
on the L-infinity distance of the score vectors, ``d_in -> d_in ε / Δ``.

Monotone scores (``monotone=True``): when adding a row never raises any score and
removing one never lowers any (or the reverse, for every pair of neighbours), the
numerator and the normaliser move in the same direction, so their ratio changes by at
most ``exp(ε)`` with ``P(i) ∝ exp(ε q_i / Δ)``: half the noise for the same ε
(McSherry & Talwar 2007, the remark after Theorem 6; OpenDP's ``linf_distance(monotonic=True)``).
Derivation for adding a row (``D' = D + x``, ``q'_i ∈ [q_i − Δ, q_i]`` for all ``i``):
``P_D(i) / P_D'(i) = exp(ε (q_i − q'_i) / Δ) · Z' / Z`` with the first factor in
``[1, e^ε]`` and ``Z' / Z`` in ``[e^−ε, 1]``, so the ratio lies in ``[e^−ε, e^ε]``.
The scale is then ``Δ/ε``; the caller states that its scores are monotone.

Sampling without overflow (``sampler="gumbel"``, default): with scale
``s = 2Δ/ε`` and i.i.d. standard Gumbel ``G_i``, ``argmax_i (q_i/s + G_i)`` has
exactly the distribution above (the Gumbel-max trick), and nothing is
exponentiated. The secure path uses OpenDP's ``make_noisy_max`` with
``zero_concentrated_divergence()``, which adds Gumbel noise of scale ``s``
(OpenDP reports that measurement's zCDP cost, ``ρ = (2Δ/s)²/8 = ε²/8``; we account
the pure ε of the exponential mechanism, which the same sampler satisfies). The
scale is rounded *up* from the exact epsilon, so the real loss ``2Δ/s`` never
exceeds the charge.

``sampler="permute-and-flip"``: exponential instead of Gumbel noise of the same scale
(OpenDP's ``make_noisy_max`` with ``max_divergence()``, whose privacy map
``2Δ/s`` the tests pin). This is the permute-and-flip mechanism (McKenna & Sheldon
2020), also ε-DP, with a different distribution whose expected score is never worse.
With monotone scores it too is ε-DP at the scale ``s = Δ/ε`` (report noisy max's
argument, Dwork & Roth 2014, Claim 3.9, with one-sided noise): let ``D' = D + x`` with
``q'_j ∈ [q_j, q_j + Δ]`` for every ``j``, fix the noise ``E_j`` of the others and let
``r = max_{j≠i}(q_j + s E_j) − q_i``, so that ``i`` wins on ``D`` when ``s E_i > r``.
On ``D'`` the others' maximum rises by at most ``Δ`` and ``q'_i ≥ q_i``, so
``s E_i > r + Δ`` makes ``i`` win; with ``P(s E > y) = min(1, e^{−y/s})``,
``P(s E > r + Δ) ≥ e^{−Δ/s} P(s E > r) = e^{−ε} P(s E > r)`` for every ``r``. The
reverse direction is the same with the roles of ``i`` and the others exchanged
(``q_i ≥ q'_i − Δ``, the others' maximum on ``D`` at most theirs on ``D'``), and
removing a row is the mirror case: ``P_D(i) ≤ e^ε P_D'(i)`` and back.
``tests/test_privacy_mechanisms.py`` checks it with the exact probabilities on
neighbouring score vectors.

Parallel composition: :meth:`ExponentialMechanism.release_parallel` makes one
selection per partition of the rows; when the partitions are disjoint, adding or
removing one row changes the scores of one partition only, so the whole set of
selections is ε-DP and is charged once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dprm.errors import ParameterError
from dprm.privacy.accountant import Accountant
from dprm.privacy.budget import EpsilonLike
from dprm.privacy.mechanism import Mechanism
from dprm.privacy.noise import SAMPLERS, Sampler, _as_scores
from dprm.privacy.scale import noise_scale

__all__ = ["ExponentialMechanism", "permute_and_flip_probabilities"]


class ExponentialMechanism(Mechanism):
    """Select one candidate with ``P(i) ∝ exp(ε q_i / (2Δ))``.

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of one selection (or of one parallel batch of selections).
    sensitivity : int, float, str or Fraction
        Sensitivity ``Δ`` of every candidate's score.
    sampler : {"gumbel", "permute-and-flip"}, default "gumbel"
        ``"gumbel"`` samples the exponential mechanism's distribution exactly;
        ``"permute-and-flip"`` is the (also ε-DP) permute-and-flip mechanism.
    monotone : bool, default False
        The caller's statement that the scores are monotone in the data (every score
        moves the same way when a row is added); the scale is then ``Δ/ε`` (module
        docstring).

    Attributes
    ----------
    scale : float
        Noise scale ``2Δ/ε`` (``Δ/ε`` for monotone scores), rounded up.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> em = ExponentialMechanism(epsilon=0.5, sensitivity=1)
    >>> em.scale
    4.0
    >>> em.release(acc, "split#1", np.array([0.1, 0.2, 500.0]))
    2
    >>> em.release_parallel(acc, "level#1", [np.array([0.0, 900.0]), np.array([800.0, 0.0])])
    array([1, 0])
    >>> [e.epsilon for e in acc.ledger]
    [Fraction(1, 2), Fraction(1, 2)]
    """

    name = "exponential"

    def __init__(
        self,
        epsilon: EpsilonLike,
        sensitivity: EpsilonLike = 1,
        sampler: Sampler = "gumbel",
        monotone: bool = False,
    ) -> None:
        super().__init__(epsilon, sensitivity)
        if sampler not in SAMPLERS:
            raise ParameterError(
                f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}"
            )
        self.sampler: Sampler = sampler
        self.monotone = bool(monotone)
        self.scale: float = noise_scale((1 if self.monotone else 2) * self.sensitivity, self.epsilon)
        self.name = f"exponential ({sampler}{', monotone scores' if self.monotone else ''})"

    def __repr__(self) -> str:
        return (
            f"ExponentialMechanism(epsilon={self.epsilon}, "
            f"sensitivity={self.sensitivity}, sampler={self.sampler!r}"
            + (", monotone=True)" if self.monotone else ")")
        )

    def probabilities(self, scores: npt.ArrayLike) -> np.ndarray:
        """The selection probabilities of ``scores``.

        Gumbel sampler: ``softmax(q / scale)``, computed in log space (huge or tiny
        scores neither overflow nor underflow). Permute-and-flip: by numerical
        integration (:func:`permute_and_flip_probabilities`, relative error about 1e-12).

        Examples
        --------
        >>> ExponentialMechanism(2.0, 1).probabilities([0.0, 1e6, 1e6]).tolist()
        [0.0, 0.5, 0.5]
        >>> p = ExponentialMechanism(2.0, 1, sampler="permute-and-flip").probabilities([0.0, 1.0])
        >>> [round(float(x), 6) for x in p]    # ½e⁻¹ for the lower; the exponential mechanism: 0.268941
        [0.18394, 0.81606]
        """
        if self.sampler != "gumbel":
            return permute_and_flip_probabilities(_as_scores(scores) / self.scale)
        from scipy.special import softmax  # imported here: scipy.special costs 0.2-0.4 s at start-up

        return softmax(_as_scores(scores) / self.scale)

    def release(self, accountant: Accountant, step: str, scores: npt.ArrayLike) -> int:
        """Charge ``epsilon``, then return the index of the selected candidate.

        Parameters
        ----------
        accountant : Accountant
            Charged before any noise is drawn.
        step : str
            Ledger step name.
        scores : array_like of float
            One finite score per candidate (validated before charging).

        Returns
        -------
        int
        """
        array = _as_scores(scores)
        self.charge(accountant, step)
        return accountant.noise.noisy_max(array, self.scale, self.sampler)

    def release_parallel(
        self,
        accountant: Accountant,
        step: str,
        score_vectors: Sequence[npt.ArrayLike],
    ) -> np.ndarray:
        """One selection per disjoint partition of the rows, charged once.

        The caller guarantees that the partitions are disjoint sets of rows and that
        each partition's scores depend only on its own rows (e.g. the leaves of one
        tree level). Then one row more or less changes one partition's scores only,
        and by parallel composition all selections together cost ``epsilon``.

        Returns
        -------
        numpy.ndarray of int64
            The selected index within each score vector.
        """
        arrays = [_as_scores(scores) for scores in score_vectors]
        if not arrays:
            raise ParameterError("release_parallel needs at least one score vector")
        self.charge(
            accountant, step, f"{self.name}, parallel over {len(arrays)} disjoint parts"
        )
        return accountant.noise.noisy_max_many(arrays, self.scale, self.sampler)


#: Gauss–Legendre nodes per panel and panels of :func:`permute_and_flip_probabilities`.
_PF_NODES, _PF_PANELS = 24, 400


def permute_and_flip_probabilities(scaled: npt.ArrayLike) -> np.ndarray:
    r"""``P(argmax_i (a_i + E_i) = i)`` for i.i.d. standard exponential ``E_i`` (permute-and-flip).

    ``scaled`` holds ``a = q / s``. With ``b = a − max a ≤ 0`` and ``u`` the winner's
    value above ``max a`` (candidate ``i`` wins at ``a_i + E_i = max a + u`` when every
    other ``j`` stays below, probability ``1 − e^{b_j − u}``)::

        P(i) = ∫_0^∞ e^{b_i − u} Π_{j≠i} (1 − e^{b_j − u}) du = ∫_0^∞ G(u) / (e^{u − b_i} − 1) du,

    ``G(u) = Π_j (1 − e^{b_j − u})``. The integrand is smooth on ``(0, ∞)``; it is
    integrated by Gauss–Legendre on geometric panels from 0 to ``ln(#candidates) + 45``
    (beyond, ``G ≈ 1`` and the tail ``e^{b_i − U}`` is added), relative error about
    1e-12 on the probabilities (checked against adaptive quadrature in the tests).

    Examples
    --------
    >>> [round(float(x), 6) for x in permute_and_flip_probabilities([0.0, 0.0])]
    [0.5, 0.5]
    """
    a = np.asarray(scaled, dtype=np.float64).ravel()
    b = a - a.max()
    upper = float(np.log(b.size)) + 45.0
    edges = np.concatenate(([0.0], np.geomspace(1e-9, upper, _PF_PANELS)))
    x, w = np.polynomial.legendre.leggauss(_PF_NODES)
    half = np.diff(edges)[:, None] / 2
    u = ((edges[:-1, None] + edges[1:, None]) / 2 + half * x[None, :]).ravel()
    weights = (half * w[None, :]).ravel()
    log_g = np.zeros(u.size)
    chunk = max(1, 2**22 // u.size)
    with np.errstate(divide="ignore", over="ignore"):  # log 0 = -inf and expm1 -> inf both give a 0 term
        for start in range(0, b.size, chunk):
            log_g += np.log1p(-np.exp(b[None, start:start + chunk] - u[:, None])).sum(axis=1)
        out = np.empty(b.size)
        for start in range(0, b.size, chunk):
            part = b[None, start:start + chunk]
            terms = np.exp(log_g[:, None] - np.log(np.expm1(u[:, None] - part)))
            out[start:start + chunk] = weights @ terms + np.exp(part[0] - upper)
    return out
