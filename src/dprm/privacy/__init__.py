"""Differential privacy for dprm: noise sources, mechanisms and the accountant.

Privacy model
-------------
* Neighbouring datasets differ by adding or removing one row (one entity, both
  views): ``"add-remove-one-row"``. The number of rows is private.
* A count has sensitivity 1; a histogram over disjoint cells has L1 sensitivity 1.
* Costs compose sequentially (they add up in the :class:`Accountant`); parallel
  composition applies only to releases on disjoint sets of rows
  (:meth:`ExponentialMechanism.release_parallel`, a histogram's cells).
* Every release goes through a mechanism that charges its exact epsilon to the
  accountant *before* drawing noise; the accountant refuses any over-spend.
* Production runs use :class:`SecureNoise` (OpenDP's exact samplers, OS CSPRNG);
  :class:`SeededNoise` is reproducible and therefore not private.

This package knows nothing of trees or data; miners call it. See ``docs/privacy.md``
for each mechanism's privacy map and derivation.

Examples
--------
>>> import numpy as np
>>> from dprm.privacy import Accountant, SeededNoise, DiscreteLaplaceCount, split_budget
>>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
>>> eps_count, eps_select = split_budget(acc.total_epsilon, [1, 3])
>>> noisy = DiscreteLaplaceCount(eps_count).release(acc, "rows", 1000)
>>> best = ExponentialMechanism(eps_select, 1).release(acc, "best", [1.0, 50.0, 2.0])
>>> acc.remaining()
Fraction(0, 1)
"""

from dprm.privacy.accountant import (
    GUARANTEES,
    NEIGHBOURING,
    NO_GUARANTEE,
    PURE_DP,
    PURE_DP_ON_MCMC_CONVERGENCE,
    Accountant,
    LedgerEntry,
)
from dprm.privacy.budget import EpsilonLike, as_epsilon, as_fraction, split_budget
from dprm.privacy.exponential import ExponentialMechanism
from dprm.privacy.laplace import DiscreteLaplaceCount, DiscreteLaplaceHistogram
from dprm.privacy.ledger_labels import claims_more, ledger_guarantee, mechanism_guarantee
from dprm.privacy.mechanism import Mechanism
from dprm.privacy.metropolis import MetropolisChain, MetropolisHastings
from dprm.privacy.noise import SAMPLERS, NoiseSource, Sampler, SecureNoise, SeededNoise
from dprm.privacy.reservoir import ReservoirDraw, WeightedReservoir
from dprm.privacy.scale import float_down, float_up, noise_scale
from dprm.privacy.structured import StructuredDraw, StructuredExponentialMechanism

__all__ = [
    "Accountant",
    "DiscreteLaplaceCount",
    "DiscreteLaplaceHistogram",
    "EpsilonLike",
    "ExponentialMechanism",
    "GUARANTEES",
    "LedgerEntry",
    "Mechanism",
    "MetropolisChain",
    "MetropolisHastings",
    "NEIGHBOURING",
    "NO_GUARANTEE",
    "NoiseSource",
    "PURE_DP",
    "PURE_DP_ON_MCMC_CONVERGENCE",
    "ReservoirDraw",
    "SAMPLERS",
    "Sampler",
    "SecureNoise",
    "SeededNoise",
    "StructuredDraw",
    "StructuredExponentialMechanism",
    "WeightedReservoir",
    "as_epsilon",
    "as_fraction",
    "claims_more",
    "float_down",
    "float_up",
    "ledger_guarantee",
    "mechanism_guarantee",
    "noise_scale",
    "split_budget",
]
