"""The exponential mechanism over a structured candidate set, sampled exactly by parts.

Setting
-------
Some candidate sets are far too large to list but have a product structure: a
decision subtree is a choice at its root (stop, or split on an option) followed by
independent choices in each child. When the score is a sum over the parts (over a
tree's leaves) and a data-independent base measure ``μ`` weighs the structures, the
exponential mechanism's distribution

    P(T) ∝ μ(T) · exp(η · score(T))

factorises: its normaliser is computed bottom-up (``log Z`` of a node is the
log-sum-exp of its choices' weights, a split's weight being the sum of its children's
``log Z``), and a draw is made top-down, one Gumbel-max choice per node among the
node's choices with weights ``log μ(choice) + Σ log Z(children)``. The composition
of these conditional draws has exactly the distribution ``P`` (the chain rule), so
the whole structure is **one** exponential-mechanism release, charged once.

Privacy
-------
``η = ε / R``, where ``R`` is the width of an interval that holds the score change of
*every* candidate between any two neighbouring datasets (the bounded-range property,
see :mod:`dprm.privacy.metropolis`); ``R = 2Δ`` for a score of sensitivity ``Δ``
without further structure. A data-independent base measure ``μ`` multiplies both
``P_D(T)`` and ``P_D'(T)`` alike and cancels from their ratio, so it costs nothing.

A :class:`StructuredDraw` may draw the structures of several nodes whose rows are
disjoint (the nodes of one tree level): one row more or less changes the scores of
one node's candidates only, so by parallel composition the whole batch costs
``epsilon`` (the caller guarantees disjointness, as for
:meth:`~dprm.privacy.ExponentialMechanism.release_parallel`).

The choices are made with float64 Gumbel keys from the accountant's noise source
(52-bit CSPRNG uniforms on the secure path): the label is
``pure-dp; floating-point selection``, as for the weighted reservoir.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dprm.errors import ParameterError
from dprm.privacy.accountant import FLOATING_POINT_SELECTION, PURE_DP, Accountant, guarantee_label
from dprm.privacy.budget import EpsilonLike, as_epsilon
from dprm.privacy.mechanism import Mechanism
from dprm.privacy.noise import NoiseSource
from dprm.privacy.scale import float_down, noise_scale

__all__ = ["StructuredExponentialMechanism", "StructuredDraw"]


class StructuredDraw:
    """The choices of one charged structured release (:meth:`StructuredExponentialMechanism.start`).

    Attributes
    ----------
    eta : float
        Inverse temperature: the largest float ``<= 1 / scale`` (so ``eta · R <= ε``
        exactly); weigh a candidate's score by it.
    n_choices : int
        Conditional choices made so far.
    """

    def __init__(self, noise: NoiseSource, scale: float) -> None:
        self._noise = noise
        self.eta = float_down(Fraction(1) / Fraction(scale))
        self.n_choices = 0

    def choose(self, log_weights: npt.ArrayLike) -> int:
        """Index of one choice with probability ``∝ exp(log_weights)`` (Gumbel-max).

        Parameters
        ----------
        log_weights : array_like of float
            Log-weights of the node's choices; ``-inf`` marks an impossible choice (at
            least one must be finite).

        Returns
        -------
        int
        """
        weights = np.asarray(log_weights, dtype=np.float64).ravel()
        if weights.size == 0 or not np.any(np.isfinite(weights)) or np.any(np.isnan(weights)):
            raise ParameterError("a structured choice needs finite log-weights (no NaN)")
        if np.any(weights == np.inf):
            raise ParameterError("a structured choice's log-weights must be below +inf")
        self.n_choices += 1
        keys = weights + self._noise.gumbel(weights.size)
        return int(np.argmax(keys))


class StructuredExponentialMechanism(Mechanism):
    """Exponential mechanism ``P(T) ∝ μ(T) exp(ε score(T) / R)`` drawn part by part.

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of one release (a batch of structures on disjoint rows included).
    sensitivity : int, float, str or Fraction
        Sensitivity ``Δ`` of every candidate's score.
    score_range : int, float, str or Fraction, optional
        Width ``R`` of an interval holding every candidate's score change between any
        two neighbours; at most ``2Δ``, default ``2Δ`` (module docstring).

    Attributes
    ----------
    scale : float
        ``R / ε``, rounded up.

    Examples
    --------
    A node may stay a leaf (score 3) or split into two leaves (scores 10 and 2):

    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> mechanism = StructuredExponentialMechanism(0.5, sensitivity=1, score_range=1)
    >>> draw = mechanism.start(acc, "subtree#1")
    >>> draw.eta
    0.5
    >>> draw.choose([draw.eta * 3.0, draw.eta * (10.0 + 2.0)])
    1
    >>> acc.ledger_json()
    [{'step': 'subtree#1', 'mechanism': 'exponential (structured)', 'epsilon': 0.5}]
    >>> mechanism.guarantee
    'pure-dp; floating-point selection'
    """

    name = "exponential (structured)"
    guarantee = guarantee_label(PURE_DP, [FLOATING_POINT_SELECTION])

    def __init__(
        self,
        epsilon: EpsilonLike,
        sensitivity: EpsilonLike = 1,
        score_range: EpsilonLike | None = None,
    ) -> None:
        super().__init__(epsilon, sensitivity)
        self.score_range = (
            2 * self.sensitivity if score_range is None else as_epsilon(score_range, "score_range")
        )
        if self.score_range > 2 * self.sensitivity:
            raise ParameterError(
                f"score_range {self.score_range} exceeds 2 x sensitivity: use the sensitivity"
            )
        self.scale: float = noise_scale(self.score_range, self.epsilon)

    def start(self, accountant: Accountant, step: str, parts: int = 1) -> StructuredDraw:
        """Charge ``epsilon`` once, then return the drawer of the structure(s).

        ``parts`` > 1 records in the ledger that the release covers that many
        structures on disjoint rows (parallel composition).
        """
        mechanism = self.name if parts <= 1 else f"{self.name}, parallel over {parts} disjoint parts"
        self.charge(accountant, step, mechanism)
        return StructuredDraw(accountant.noise, self.scale)
