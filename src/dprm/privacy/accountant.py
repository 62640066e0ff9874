"""The privacy accountant: an exact ledger that refuses over-spending.

Every release is charged here *before* any noise is drawn. Costs add up
(sequential composition); a mechanism that releases on disjoint row sets charges
once for all of them (parallel composition). Epsilons are exact
:class:`fractions.Fraction` values, so the refusal boundary is exact: with a total
of 0.3, charges of 0.1 and 0.2 are accepted and any further positive charge is
refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprm.errors import BudgetExceededError, ParameterError
from dprm.privacy.budget import EpsilonLike, as_epsilon
from dprm.privacy.noise import NoiseSource

__all__ = [
    "NEIGHBOURING",
    "GUARANTEES",
    "PURE_DP",
    "PURE_DP_ON_MCMC_CONVERGENCE",
    "NO_GUARANTEE",
    "LedgerEntry",
    "Accountant",
]

NEIGHBOURING = "add-remove-one-row"
"""The neighbouring relation: datasets differ by one row (one entity, both views)."""

PURE_DP = "pure-dp"
PURE_DP_ON_MCMC_CONVERGENCE = "pure-dp-on-mcmc-convergence"
NO_GUARANTEE = "none"
GUARANTEES: tuple[str, ...] = (PURE_DP, PURE_DP_ON_MCMC_CONVERGENCE, NO_GUARANTEE)


@dataclass(frozen=True)
class LedgerEntry:
    """One release: the step of the algorithm, the mechanism and its exact cost.

    Examples
    --------
    >>> LedgerEntry("count#1", "discrete-laplace count", Fraction(1, 10)).to_json()
    {'step': 'count#1', 'mechanism': 'discrete-laplace count', 'epsilon': 0.1}
    """

    step: str
    mechanism: str
    epsilon: Fraction

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

    def charge(self, epsilon: EpsilonLike, step: str, mechanism: str) -> None:
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

        Raises
        ------
        ParameterError
            If ``epsilon`` is not a positive finite number.
        BudgetExceededError
            If ``epsilon`` exceeds the remaining budget.
        """
        exact = as_epsilon(epsilon)
        remaining = self.remaining()
        if exact > remaining:
            raise BudgetExceededError(
                f"privacy budget exceeded at step {step!r}: requested epsilon "
                f"{float(exact):g}, remaining {float(remaining):g} of "
                f"{float(self.total_epsilon):g}"
            )
        self.ledger.append(LedgerEntry(str(step), str(mechanism), exact))
        self._spent += exact

    def ledger_json(self) -> list[dict[str, Any]]:
        """The spec's ``privacy.ledger``: ``[{"step", "mechanism", "epsilon"}, ...]``."""
        return [entry.to_json() for entry in self.ledger]

    def privacy_block(self, guarantee: str) -> dict[str, Any]:
        """The spec's ``privacy`` block of a redescriptions document.

        ``"epsilon"`` is the budget actually spent, so that the ledger's epsilons add
        up to it. With a seeded noise source the block also says
        ``"private": False`` and why.

        Parameters
        ----------
        guarantee : {"pure-dp", "pure-dp-on-mcmc-convergence", "none"}
            What holds for the run.

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> from dprm.privacy import SeededNoise
        >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
        >>> acc.charge(0.5, "count#1", "discrete-laplace count")
        >>> block = acc.privacy_block("pure-dp")
        >>> block["epsilon"], block["neighbouring"], block["private"]
        (0.5, 'add-remove-one-row', False)
        """
        if guarantee not in GUARANTEES:
            raise ParameterError(
                f"guarantee must be one of {', '.join(GUARANTEES)}, got {guarantee!r}"
            )
        block: dict[str, Any] = {
            "epsilon": float(self._spent),
            "neighbouring": NEIGHBOURING,
            "guarantee": guarantee,
            "ledger": self.ledger_json(),
        }
        if not self.noise.secure:
            block["private"] = False
            block["reason"] = (
                "seeded noise source: the run is reproducible from its seed, so its "
                "noise is not secret and the output is not differentially private"
            )
        return block
