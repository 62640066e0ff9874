"""Metropolis–Hastings: an MCMC approximation of the exponential mechanism.

Derivation and what holds
-------------------------
The target distribution is the exponential mechanism's
``π(x) ∝ exp(ε q(x) / (2Δ))`` over a (huge) state space. From state ``x`` with
score ``s``, a proposal ``x'`` (score ``s'``) drawn from ``g(x' | x)`` is accepted
with probability

    min(1, exp(ε (s' - s) / (2Δ)) · g(x | x') / g(x' | x)),

computed in log space: accept iff ``log u < (s' - s)/scale + log_proposal_ratio``
with ``u`` uniform on (0, 1) from the noise source and ``scale = 2Δ/ε`` (rounded up),
so nothing is exponentiated. The chain's stationary distribution is ``π``
(detailed balance), so *upon convergence* its state is an ε-DP exponential-mechanism
draw. A finite chain has no pure-ε guarantee in general, hence the guarantee string
``"pure-dp-on-mcmc-convergence"``. The whole chain is one release: it is charged
once, when it starts. Use a fixed, data-independent number of steps; a stopping rule
that looks at the scores depends on the data: a chain built with
``data_dependent_stop=True`` says so in its guarantee,
``"pure-dp-on-mcmc-convergence; data-dependent stop"``, which its charge records in the
ledger, so the run's label says it too.

The acceptance tests compare float64 ``log u`` (CSPRNG uniforms) with float64 score
differences. No further qualifier is added for that: the label claims the exponential
mechanism only at convergence, an idealisation that already leaves the finite,
floating-point chain without a formal guarantee.

Bounded range
-------------
The factor 2 in ``2Δ`` pays for scores that move in *opposite* directions between
neighbouring datasets. If, for every pair of neighbours ``D, D'``, every state's
change ``q_{D'}(x) − q_D(x)`` lies in one interval ``[a, a + R]`` (``a`` may depend on
the pair but not on ``x``), then ``π'(x)/π(x) = exp(η(q'(x) − q(x))) · Z/Z'`` with
``Z'/Z`` a π-weighted mean of ``exp(η(q' − q))`` ∈ ``[e^{ηa}, e^{η(a+R)}]``, so the
ratio lies in ``[e^{−ηR}, e^{ηR}]``: ``η = ε/R`` is ε-DP (the *bounded-range*
property of the exponential mechanism; Durfee & Rogers 2019; McSherry & Talwar's
monotone case is ``R = Δ``). Give ``score_range=R`` to use ``scale = R/ε``; for a
score of sensitivity ``Δ`` without further structure ``R = 2Δ`` (the default).
Equivalently, with changes in ``[−down, up]`` (``R = up + down``) the shifted score
``q − (up − down)/2 · |D|`` has sensitivity ``R/2`` and the same selection
probabilities; the Serenade miners pass that sensitivity to
:class:`~dprm.privacy.ExponentialMechanism` and :class:`~dprm.privacy.WeightedReservoir`.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from dprm.errors import ParameterError
from dprm.privacy.accountant import DATA_DEPENDENT_STOP, PURE_DP_ON_MCMC_CONVERGENCE, Accountant, guarantee_label
from dprm.privacy.budget import EpsilonLike, as_epsilon
from dprm.privacy.mechanism import Mechanism
from dprm.privacy.noise import NoiseSource
from dprm.privacy.scale import noise_scale

__all__ = ["MetropolisHastings", "MetropolisChain"]

_BUFFER = 4096


class MetropolisChain:
    """The acceptance tests of one running chain, created by :meth:`MetropolisHastings.start`.

    Attributes
    ----------
    n_proposed : int
        Acceptance tests made so far.
    n_accepted : int
        Proposals accepted so far.
    """

    def __init__(self, noise: NoiseSource, scale: float) -> None:
        self._noise = noise
        self._scale = scale
        self._uniforms = np.empty(0, dtype=np.float64)
        self._next = 0
        self.n_proposed = 0
        self.n_accepted = 0

    def _log_uniform(self) -> float:
        if self._next >= self._uniforms.size:
            self._uniforms = np.log(self._noise.uniform(_BUFFER))
            self._next = 0
        value = float(self._uniforms[self._next])
        self._next += 1
        return value

    def accept(
        self, current_score: float, proposed_score: float, log_proposal_ratio: float = 0.0
    ) -> bool:
        """Whether to move from a state with ``current_score`` to the proposal.

        Parameters
        ----------
        current_score, proposed_score : float
            Scores ``s`` and ``s'`` (finite; ``-inf`` for an impossible proposal).
        log_proposal_ratio : float, default 0.0
            ``log g(x | x') - log g(x' | x)``; zero for a symmetric proposal.

        Returns
        -------
        bool
        """
        log_alpha = (float(proposed_score) - float(current_score)) / self._scale + float(
            log_proposal_ratio
        )
        if math.isnan(log_alpha):
            raise ParameterError("Metropolis-Hastings scores must not be NaN")
        self.n_proposed += 1
        accepted = self._log_uniform() < log_alpha
        self.n_accepted += accepted
        return accepted

    def accept_many(
        self,
        current_scores: npt.ArrayLike,
        proposed_scores: npt.ArrayLike,
        log_proposal_ratio: npt.ArrayLike = 0.0,
    ) -> np.ndarray:
        """Vectorised independent acceptance tests (e.g. for parallel chains).

        Returns
        -------
        numpy.ndarray of bool
        """
        current = np.asarray(current_scores, dtype=np.float64)
        proposed = np.asarray(proposed_scores, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            log_alpha = (proposed - current) / self._scale + np.asarray(
                log_proposal_ratio, dtype=np.float64
            )
        if np.any(np.isnan(log_alpha)):
            raise ParameterError("Metropolis-Hastings scores must not be NaN")
        log_u = np.log(self._noise.uniform(log_alpha.size)).reshape(log_alpha.shape)
        accepted = log_u < log_alpha
        self.n_proposed += int(accepted.size)
        self.n_accepted += int(np.count_nonzero(accepted))
        return accepted

    @property
    def scale(self) -> float:
        """``2Δ/ε`` (rounded up): a step is accepted iff ``log u < (s' − s)/scale + log_ratio``."""
        return self._scale

    def log_uniforms(self, size: int) -> np.ndarray:
        """``log u`` for the next ``size`` acceptance tests, from the noise source.

        For compiled chains that apply :meth:`accept`'s rule themselves,
        ``log u < (s' − s)/scale + log_proposal_ratio``; they report their counts
        with :meth:`record`.
        """
        return np.log(self._noise.uniform(int(size)))

    def record(self, proposed: int, accepted: int) -> None:
        """Add the tests made by a compiled chain to :attr:`n_proposed` / :attr:`n_accepted`."""
        self.n_proposed += int(proposed)
        self.n_accepted += int(accepted)

    @property
    def acceptance_rate(self) -> float:
        """Fraction of accepted proposals (0.0 before the first test)."""
        return self.n_accepted / self.n_proposed if self.n_proposed else 0.0


class MetropolisHastings(Mechanism):
    """Metropolis–Hastings chain targeting ``P(x) ∝ exp(ε q(x) / (2Δ))``.

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of the whole chain (charged once, at :meth:`start`).
    sensitivity : int, float, str or Fraction
        Sensitivity ``Δ`` of the score of every state.
    score_range : int, float, str or Fraction, optional
        Width ``R`` of an interval that holds every state's score change between
        any two neighbouring datasets (module docstring, "Bounded range"); at most
        ``2Δ``. Default ``2Δ``.
    data_dependent_stop : bool, default False
        The chain may stop by a rule that looks at its scores (the papers' variance
        stop); the guarantee then says ``data-dependent stop``.

    Attributes
    ----------
    scale : float
        ``R/ε`` (``2Δ/ε`` by default), rounded up.
    guarantee : str
        ``"pure-dp-on-mcmc-convergence"``, with ``"; data-dependent stop"`` when
        ``data_dependent_stop``; recorded with the charge.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> chain = MetropolisHastings(epsilon=1.0, sensitivity=1).start(acc, "sampleTreePair#1")
    >>> chain.accept(current_score=10.0, proposed_score=12.0)  # better: always accepted
    True
    >>> chain.accept(current_score=0.0, proposed_score=-1e6)   # far worse: never
    False
    >>> acc.ledger_json()
    [{'step': 'sampleTreePair#1', 'mechanism': 'exponential (MCMC)', 'epsilon': 1.0}]
    >>> MetropolisHastings(epsilon=0.5, sensitivity=1, score_range=1).scale   # monotone score
    2.0
    >>> MetropolisHastings(epsilon=0.5, sensitivity=1, data_dependent_stop=True).guarantee
    'pure-dp-on-mcmc-convergence; data-dependent stop'
    """

    name = "exponential (MCMC)"
    guarantee = PURE_DP_ON_MCMC_CONVERGENCE

    def __init__(self, epsilon: EpsilonLike, sensitivity: EpsilonLike = 1,
                 score_range: EpsilonLike | None = None, *, data_dependent_stop: bool = False) -> None:
        super().__init__(epsilon, sensitivity)
        self.data_dependent_stop = bool(data_dependent_stop)
        if self.data_dependent_stop:
            self.guarantee = guarantee_label(PURE_DP_ON_MCMC_CONVERGENCE, [DATA_DEPENDENT_STOP])
        self.score_range = 2 * self.sensitivity if score_range is None else as_epsilon(score_range, "score_range")
        if self.score_range > 2 * self.sensitivity:
            raise ParameterError(f"score_range {self.score_range} exceeds 2 x sensitivity: use the sensitivity")
        self.scale: float = noise_scale(self.score_range, self.epsilon)

    def start(self, accountant: Accountant, step: str) -> MetropolisChain:
        """Charge ``epsilon`` for the whole chain and return its acceptance tester."""
        self.charge(accountant, step)
        return MetropolisChain(accountant.noise, self.scale)
