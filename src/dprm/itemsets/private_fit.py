"""What every private fit of the itemsets' estimate shares: the result it returns and its ledger.

:func:`~dprm.itemsets.private.fit_private_estimator` hands each method to its fit (the
chain's, :mod:`dprm.itemsets.private_chain`; the bases', :mod:`dprm.itemsets.private_basis_fit`;
the synthetic table's, :mod:`dprm.itemsets.private_synthetic_fit`). Each opens its
accountant with :func:`fit_accountant` (refused, before anything is spent, when it cannot
afford ε), charges every release's budget under its step before the release reads a row
(:func:`charge`: the release spends it on an accountant of its own), checks that the
release spent exactly that and copies its entries into the fit's ledger (:func:`record`),
so that the ledger adds up to ε; and returns a :class:`PrivateFit`. The budget each
release gets, and its sensitivity, are derived beside the code that spends it (the
modules above, and :mod:`dprm.itemsets.private_parents`, :mod:`dprm.itemsets.private_items`,
:mod:`dprm.itemsets.private_dp_trees`, :mod:`dprm.itemsets.private_basis`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.private_basis_supports import BasisRelease
from dprm.privacy import Accountant, SecureNoise, SeededNoise
from dprm.privacy.accountant import check_accountant, check_affordable

__all__ = ["PrivateFit", "DOMAIN_REASON", "fit_accountant", "charge", "record"]

#: Reason given when a column's categories are read off the data.
DOMAIN_REASON = "categories of some columns read off the data (declare them: types file or domains=)"


@dataclass
class PrivateFit:
    """What :func:`~dprm.itemsets.private.fit_private_estimator` returns.

    Attributes
    ----------
    estimator : DensityEstimator or None
        The private estimate (frozen, built from released trees; ``n_seen_`` is 0);
        None with ``private_method="basis"``, which releases supports, not a model.
    privacy : dict
        ``{"epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"}``;
        the ledger lists every release (step names prefixed by chain and tree).
    parameters : dict
        The settings used (chains, orders, maximum depth, ε per tree).
    synthetic : pandas.DataFrame or None
        With ``private_method="mst"`` / ``"aim"``: the released synthetic rows (values as
        the declared categories' text), which FP-growth mines; the estimator is then the
        batch estimate of these rows (post-processing).
    bases : BasisRelease or None
        With ``private_method="basis"``: the released bases
        (:class:`~dprm.itemsets.private_basis_supports.BasisRelease`; ``bases.named_itemsets()``
        lists the itemsets at ``min_support`` with their supports' noise).
    """

    estimator: DensityEstimator | None
    privacy: dict[str, Any]
    parameters: dict[str, Any] = field(default_factory=dict)
    synthetic: pd.DataFrame | None = None
    bases: BasisRelease | None = None


def fit_accountant(accountant: Accountant | None, eps: Fraction, seeded: bool, rng: np.random.Generator
                   ) -> Accountant:
    """``accountant``, checked to afford ``eps``; else a new one (seeded noise drawn from ``rng`` if ``seeded``)."""
    check_accountant(accountant)
    if accountant is None:
        noise = SeededNoise(np.random.default_rng(rng.integers(2**63))) if seeded else SecureNoise()
        accountant = Accountant(eps, noise)
    check_affordable(accountant, eps)  # a BudgetExceededError and a ParameterError
    return accountant


def charge(accountant: Accountant, budget: Fraction, step: str, mechanism: str) -> Accountant:
    """Charge ``budget`` to ``accountant`` under ``step``; the release's own accountant of ``budget``."""
    sub = Accountant(budget, accountant.noise)
    accountant.charge(budget, step, mechanism)
    return sub


def record(sub: Accountant, budget: Fraction, step: str, prefix: str, ledger: list[dict[str, Any]],
           guarantees: list[str], *, inner: bool = False) -> None:
    """Check that a release spent its whole ``budget``; add its ledger entries (``PREFIX: ...``) and guarantees.

    With ``inner``, an entry's own step name is cut to what follows its first ``": "``.
    """
    if sub.spent() != budget:  # a release spends its whole share (a DP tree's leaves take what its levels leave)
        raise RuntimeError(f"{step}: spent {sub.spent()} of {budget}")  # pragma: no cover - invariant
    guarantees.extend(entry.guarantee for entry in sub.ledger)
    ledger.extend({"step": f"{prefix}: {entry.step.partition(': ')[2] if inner else entry.step}",
                   "mechanism": entry.mechanism, "epsilon": float(entry.epsilon)} for entry in sub.ledger)
