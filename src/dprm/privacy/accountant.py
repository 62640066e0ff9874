"""The privacy accountant: an exact ledger that refuses over-spending.

Every release is charged here *before* any noise is drawn. Costs add up
(sequential composition); a mechanism that releases on disjoint row sets charges
once for all of them (parallel composition). Epsilons are exact
:class:`fractions.Fraction` values, so the refusal boundary is exact: with a total
of 0.3, charges of 0.1 and 0.2 are accepted and any further positive charge is
refused.

Guarantee labels
----------------
Every charge records what its mechanism guarantees (its ``guarantee``), so the
output's ``privacy.guarantee`` is computed from the releases actually made
(:meth:`Accountant.privacy_block`) and cannot drift from them. A label is a base,
from strongest to weakest ``pure-dp``, ``pure-dp-on-mcmc-convergence``, ``approx-dp``
((ε, δ)-DP; the accountant keeps ε only, the caller states δ), ``none``,
optionally followed by qualifiers after semicolons (spec/redescriptions.md):
``floating-point selection`` (a selection made with float64 Gumbel keys instead of
an exact sampler) and ``data-dependent stop`` (an MCMC chain stopped by a rule that
looks at the scores). A run's label is the weakest base of its releases with every
qualifier any of them carries (:func:`combine_guarantees`), and ``none`` whenever
anything breaks the guarantee (a seeded noise source, domains read off the data):
then ``reasons`` says why, and ``private`` is false.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprm.errors import BudgetExceededError, ParameterError, UnaffordableEpsilonError
from dprm.privacy.budget import EpsilonLike, as_epsilon
from dprm.privacy.noise import NoiseSource, SecureNoise

__all__ = [
    "NEIGHBOURING",
    "GUARANTEES",
    "PURE_DP",
    "PURE_DP_ON_MCMC_CONVERGENCE",
    "APPROX_DP",
    "NO_GUARANTEE",
    "FLOATING_POINT_SELECTION",
    "DATA_DEPENDENT_STOP",
    "QUALIFIERS",
    "SEEDED_REASON",
    "SEEDED_PROPOSALS_REASON",
    "LedgerEntry",
    "Accountant",
    "check_accountant",
    "check_affordable",
    "run_accountant",
    "combine_guarantees",
    "guarantee_label",
    "is_guarantee",
    "parse_guarantee",
]

NEIGHBOURING = "add-remove-one-row"
"""The neighbouring relation: datasets differ by one row (one entity, both views)."""

PURE_DP = "pure-dp"
PURE_DP_ON_MCMC_CONVERGENCE = "pure-dp-on-mcmc-convergence"
APPROX_DP = "approx-dp"
"""(ε, δ)-DP: only releases made by dpmm's synthesizers (``dprm.itemsets.private_synthetic``) carry it."""
NO_GUARANTEE = "none"
GUARANTEES: tuple[str, ...] = (PURE_DP, PURE_DP_ON_MCMC_CONVERGENCE, APPROX_DP, NO_GUARANTEE)
"""The bases of a guarantee label, strongest first."""

FLOATING_POINT_SELECTION = "floating-point selection"
DATA_DEPENDENT_STOP = "data-dependent stop"
QUALIFIERS: tuple[str, ...] = (FLOATING_POINT_SELECTION, DATA_DEPENDENT_STOP)
"""The caveats a label may carry after its base, in the order they are written."""

SEEDED_REASON = "seeded noise source: the run's noise is reproducible from its seed, so it is not secret"
#: Why a run whose MCMC chains draw their proposals from a given seed is not private, even
#: with secure noise: the convergence guarantee is about chains whose proposals are secret.
SEEDED_PROPOSALS_REASON = ("the MCMC chains' proposals come from a given seed (random_state or rng), so they "
                           "are not secret (leave it unset, or pass numpy.random.default_rng(), for a private run)")


def parse_guarantee(label: str) -> tuple[str, tuple[str, ...]]:
    """Split a label into its base and its qualifiers; ParameterError if it is not one.

    Examples
    --------
    >>> parse_guarantee("pure-dp-on-mcmc-convergence; data-dependent stop")
    ('pure-dp-on-mcmc-convergence', ('data-dependent stop',))
    >>> parse_guarantee("approximately private")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: guarantee must be one of pure-dp, pure-dp-on-mcmc-convergence, approx-dp, none (with qualifiers floating-point selection, data-dependent stop after '; '), not 'approximately private'
    """
    parts = [part.strip() for part in str(label).split(";")] if isinstance(label, str) else [None]
    base, qualifiers = parts[0], tuple(parts[1:])
    if (base not in GUARANTEES or any(q not in QUALIFIERS for q in qualifiers)
            or len(set(qualifiers)) != len(qualifiers) or (base == NO_GUARANTEE and qualifiers)):
        raise ParameterError(f"guarantee must be one of {', '.join(GUARANTEES)} (with qualifiers "
                             f"{', '.join(QUALIFIERS)} after '; '), not {label!r}")
    return base, qualifiers


def is_guarantee(label: Any) -> bool:
    """Whether ``label`` is a valid ``privacy.guarantee`` of the spec (base and qualifiers).

    Examples
    --------
    >>> is_guarantee("pure-dp; floating-point selection"), is_guarantee("pure-dp; fast")
    (True, False)
    """
    try:
        parse_guarantee(label)
    except ParameterError:
        return False
    return True


def guarantee_label(base: str, qualifiers: Iterable[str] = ()) -> str:
    """The label of ``base`` with ``qualifiers`` (deduplicated, in :data:`QUALIFIERS` order).

    Examples
    --------
    >>> guarantee_label(PURE_DP, [DATA_DEPENDENT_STOP, FLOATING_POINT_SELECTION])
    'pure-dp; floating-point selection; data-dependent stop'
    """
    given = set(qualifiers)
    label = "; ".join([base, *(q for q in QUALIFIERS if q in given)])
    parse_guarantee(label)
    return label


def combine_guarantees(labels: Iterable[str]) -> str:
    """What holds for a run made of releases with these labels.

    The weakest base (``pure-dp`` if there are none) with every qualifier of any
    label; ``none`` without qualifiers if any label is ``none``.

    Examples
    --------
    >>> combine_guarantees(["pure-dp", "pure-dp-on-mcmc-convergence; data-dependent stop"])
    'pure-dp-on-mcmc-convergence; data-dependent stop'
    >>> combine_guarantees(["pure-dp; floating-point selection", "pure-dp"])
    'pure-dp; floating-point selection'
    >>> combine_guarantees([])
    'pure-dp'
    """
    weakest, qualifiers = 0, set()
    for label in labels:
        base, more = parse_guarantee(label)
        weakest = max(weakest, GUARANTEES.index(base))
        qualifiers.update(more)
    if GUARANTEES[weakest] == NO_GUARANTEE:
        return NO_GUARANTEE
    return guarantee_label(GUARANTEES[weakest], qualifiers)


@dataclass(frozen=True)
class LedgerEntry:
    """One release: the step of the algorithm, the mechanism, its exact cost and guarantee.

    ``guarantee`` is what the mechanism guarantees (a label, see
    :func:`parse_guarantee`); it shapes the run's label, not the ledger's JSON.

    Examples
    --------
    >>> LedgerEntry("count#1", "discrete-laplace count", Fraction(1, 10)).to_json()
    {'step': 'count#1', 'mechanism': 'discrete-laplace count', 'epsilon': 0.1}
    """

    step: str
    mechanism: str
    epsilon: Fraction
    guarantee: str = PURE_DP

    def to_json(self) -> dict[str, Any]:
        """The spec's ``privacy.ledger`` item: ``{"step", "mechanism", "epsilon"}``."""
        return {"step": self.step, "mechanism": self.mechanism, "epsilon": float(self.epsilon)}


class Accountant:
    """Holds a privacy budget, the noise source, and the ledger of releases.

    Parameters
    ----------
    total_epsilon : int, float, str or Fraction
        The whole budget (> 0, finite); floats are read exactly as typed
        (``0.1`` is ``1/10``).
    noise : NoiseSource
        Where mechanisms draw their noise from, after charging.

    Attributes
    ----------
    total_epsilon : Fraction
        The budget.
    noise : NoiseSource
        The noise source.
    ledger : list of LedgerEntry
        Every accepted charge, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import SeededNoise
    >>> acc = Accountant(0.3, SeededNoise(np.random.default_rng(0)))
    >>> acc.charge(0.1, step="count#1", mechanism="discrete-laplace count")
    >>> acc.charge(0.2, step="count#2", mechanism="discrete-laplace count")
    >>> acc.remaining()
    Fraction(0, 1)
    >>> acc.charge(1e-9, step="count#3", mechanism="discrete-laplace count")
    Traceback (most recent call last):
    ...
    dprm.errors.BudgetExceededError: privacy budget exceeded at step 'count#3': requested epsilon 1e-09, remaining 0 of 0.3
    """

    def __init__(self, total_epsilon: EpsilonLike, noise: NoiseSource) -> None:
        self.total_epsilon: Fraction = as_epsilon(total_epsilon, "total epsilon")
        if not isinstance(noise, NoiseSource):
            raise ParameterError("the accountant needs a NoiseSource (SecureNoise or SeededNoise)")
        self.noise: NoiseSource = noise
        self.ledger: list[LedgerEntry] = []
        self._spent = Fraction(0)

    def __copy__(self) -> "Accountant":
        return self

    def __deepcopy__(self, memo: dict) -> "Accountant":
        """The accountant itself: a budget is spent once, whoever holds a copy of its holder.

        scikit-learn's ``clone`` deep-copies an estimator's parameters, so each fold of
        ``cross_val_score`` or candidate of ``GridSearchCV`` would otherwise be charged
        to a fresh copy, and the budget never refuse a fit.
        """
        return self

    def __reduce__(self) -> Any:
        """Refused: a pickled accountant is a second budget, charged in another process and never here.

        joblib's processes (``cross_val_score(..., n_jobs=2)``) pickle an estimator with
        its parameters, so each fold would be charged to its own copy and this
        accountant to nothing.
        """
        raise ParameterError("an Accountant cannot be pickled: a copy in another process or file would be a second "
                             "budget, never charged here. Run the fits in this process (n_jobs=1), or "
                             "set_params(accountant=None) on a fitted estimator before saving it")

    def __repr__(self) -> str:
        return (
            f"Accountant(total_epsilon={self.total_epsilon}, spent={self._spent}, "
            f"noise={self.noise!r})"
        )

    def spent(self) -> Fraction:
        """Exact sum of all accepted charges."""
        return self._spent

    def remaining(self) -> Fraction:
        """Exact budget left: ``total_epsilon - spent()``."""
        return self.total_epsilon - self._spent

    def can_afford(self, epsilon: EpsilonLike) -> bool:
        """Whether a charge of ``epsilon`` would be accepted now.

        Examples
        --------
        >>> import numpy as np
        >>> from dprm.privacy import SeededNoise
        >>> Accountant(1, SeededNoise(np.random.default_rng(0))).can_afford("1.5")
        False
        """
        return as_epsilon(epsilon) <= self.remaining()

    def charge(self, epsilon: EpsilonLike, step: str, mechanism: str, guarantee: str = PURE_DP) -> None:
        """Record a release of cost ``epsilon``, or refuse it.

        Must be called before the release draws any noise. A refused charge
        records nothing.

        Parameters
        ----------
        epsilon : int, float, str or Fraction
            Cost of the release (> 0, finite).
        step : str
            Name of the algorithm step, e.g. ``"sampleTreePair#1"``.
        mechanism : str
            Name of the mechanism, e.g. ``"exponential (MCMC)"``.
        guarantee : str, default "pure-dp"
            What the mechanism guarantees (its ``guarantee`` label);
            :meth:`~dprm.privacy.Mechanism.charge` passes it.

        Raises
        ------
        ParameterError
            If ``epsilon`` is not a positive finite number, or ``guarantee`` not a label.
        BudgetExceededError
            If ``epsilon`` exceeds the remaining budget.
        """
        exact = as_epsilon(epsilon)
        parse_guarantee(guarantee)
        remaining = self.remaining()
        if exact > remaining:
            raise BudgetExceededError(
                f"privacy budget exceeded at step {step!r}: requested epsilon "
                f"{float(exact):g}, remaining {float(remaining):g} of "
                f"{float(self.total_epsilon):g}"
            )
        self.ledger.append(LedgerEntry(str(step), str(mechanism), exact, guarantee))
        self._spent += exact

    def ledger_json(self) -> list[dict[str, Any]]:
        """The spec's ``privacy.ledger``: ``[{"step", "mechanism", "epsilon"}, ...]``."""
        return [entry.to_json() for entry in self.ledger]

    def privacy_block(
        self,
        guarantee: str | None = None,
        *,
        reasons: Sequence[str] = (),
        qualifiers: Iterable[str] = (),
        since: int = 0,
    ) -> dict[str, Any]:
        """The spec's ``privacy`` block of the releases ``ledger[since:]`` (one run).

        The guarantee is computed from what was charged: the weakest guarantee of
        the releases' mechanisms with all their qualifiers, plus ``qualifiers``
        (:func:`combine_guarantees`). It is ``none`` whenever there is a reason the
        run is not private: the seeded noise source (:data:`SEEDED_REASON`, first)
        and ``reasons``. ``private`` is true exactly when the guarantee is not
        ``none``. ``"epsilon"`` is what those releases spent, so that the ledger's
        epsilons add up to it.

        Parameters
        ----------
        guarantee : str, optional
            A label the caller claims at most (kept for callers that state one);
            the result is the weaker of it and the releases' labels.
        reasons : sequence of str
            Why the run is not private besides the noise source, in words (never a
            value from the data).
        qualifiers : iterable of str
            Caveats of the run not carried by a mechanism (:data:`QUALIFIERS`).
        since : int
            Index of the run's first release in :attr:`ledger` (an accountant shared
            by several runs).

        Returns
        -------
        dict
            ``{"epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"}``.

        Examples
        --------
        >>> import numpy as np
        >>> from dprm.privacy import SecureNoise, SeededNoise
        >>> acc = Accountant(1.0, SecureNoise())
        >>> acc.charge(0.5, "count#1", "discrete-laplace count")
        >>> acc.charge(0.5, "tree#1", "exponential (MCMC)", guarantee=PURE_DP_ON_MCMC_CONVERGENCE)
        >>> block = acc.privacy_block()
        >>> block["epsilon"], block["guarantee"], block["private"], block["reasons"]
        (1.0, 'pure-dp-on-mcmc-convergence', True, [])
        >>> seeded = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
        >>> seeded.charge(0.5, "count#1", "discrete-laplace count")
        >>> block = seeded.privacy_block()
        >>> block["guarantee"], block["private"], block["reasons"][0].startswith("seeded noise")
        ('none', False, True)
        """
        entries = self.ledger[since:]
        labels = [entry.guarantee for entry in entries]
        if guarantee is not None:
            labels.append(guarantee)
        if qualifiers:
            labels.append(guarantee_label(PURE_DP, qualifiers))
        all_reasons = ([] if self.noise.secure else [SEEDED_REASON]) + [str(r) for r in reasons]
        label = NO_GUARANTEE if all_reasons else combine_guarantees(labels)
        return {
            "epsilon": float(sum((entry.epsilon for entry in entries), Fraction(0))),
            "neighbouring": NEIGHBOURING,
            "guarantee": label,
            "private": label != NO_GUARANTEE,
            "reasons": all_reasons,
            "ledger": [entry.to_json() for entry in entries],
        }


def check_accountant(accountant: object) -> None:
    """A :class:`~dprm.errors.ParameterError` unless ``accountant`` is None or an :class:`Accountant`.

    Examples
    --------
    >>> check_accountant(None)
    >>> check_accountant("budget")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: accountant must be a dprm.privacy.Accountant (or None), not str
    """
    if accountant is not None and not isinstance(accountant, Accountant):
        raise ParameterError(f"accountant must be a dprm.privacy.Accountant (or None), not {type(accountant).__name__}")


def check_affordable(accountant: Accountant, epsilon: EpsilonLike) -> None:
    """Refuse an estimator's fit whose ``epsilon`` its accountant cannot afford, before any release.

    The classifiers' and the itemset estimate's check: an
    :class:`~dprm.errors.UnaffordableEpsilonError`, which is a
    :class:`~dprm.errors.BudgetExceededError` (as the miners' refusal,
    :func:`run_accountant`) and a :class:`~dprm.errors.ParameterError` (a ``ValueError``,
    as these estimators promised). Nothing is charged.

    Examples
    --------
    >>> accountant = Accountant(1, SecureNoise())
    >>> check_affordable(accountant, 1)
    >>> accountant.charge("0.5", "rows", "discrete-laplace count")
    >>> check_affordable(accountant, 1)
    Traceback (most recent call last):
    ...
    dprm.errors.UnaffordableEpsilonError: the accountant's remaining budget 0.5 does not cover epsilon 1
    """
    if not accountant.can_afford(epsilon):
        raise UnaffordableEpsilonError(f"the accountant's remaining budget {float(accountant.remaining()):g} "
                                       f"does not cover epsilon {float(as_epsilon(epsilon)):g}")


def run_accountant(accountant: object, epsilon: EpsilonLike) -> Accountant:
    """The accountant of a private run that spends ``epsilon``, the whole run refused before any release.

    Parameters
    ----------
    accountant : Accountant or None
        The caller's accountant (checked by :func:`check_accountant`); None: a new one
        of ``epsilon`` on :class:`~dprm.privacy.noise.SecureNoise`.
    epsilon : int, float, str or Fraction
        What the run will spend.

    Returns
    -------
    Accountant

    Raises
    ------
    ParameterError
        If ``accountant`` is neither None nor an :class:`Accountant`.
    BudgetExceededError
        If the accountant cannot afford ``epsilon``; nothing is charged.

    Examples
    --------
    >>> run_accountant(None, 0.5).total_epsilon
    Fraction(1, 2)
    >>> run_accountant(Accountant(0.3, SecureNoise()), 1)
    Traceback (most recent call last):
    ...
    dprm.errors.BudgetExceededError: privacy budget exceeded: the run needs epsilon 1, 0.3 of 0.3 remain
    """
    check_accountant(accountant)
    if accountant is None:
        accountant = Accountant(epsilon, SecureNoise())
    if not accountant.can_afford(epsilon):  # refuse the whole run before any release
        raise BudgetExceededError(
            f"privacy budget exceeded: the run needs epsilon {float(as_epsilon(epsilon)):g}, "
            f"{float(accountant.remaining()):g} of {float(accountant.total_epsilon):g} remain"
        )
    return accountant
