"""The common part of all mechanisms: exact epsilon, sensitivity and privacy map."""

from __future__ import annotations

from fractions import Fraction

from dprm.errors import ParameterError
from dprm.privacy.accountant import PURE_DP, Accountant
from dprm.privacy.budget import EpsilonLike, as_epsilon, as_fraction

__all__ = ["Mechanism"]


class Mechanism:
    """Base class: a release rule that knows its sensitivity and its epsilon cost.

    Subclasses set :attr:`name` (used in the ledger) and :attr:`guarantee`, compute
    their float noise scale conservatively from the exact epsilon, and always call
    :meth:`charge` before drawing noise from ``accountant.noise``.

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        The cost of one release (> 0).
    sensitivity : int, float, str or Fraction
        Sensitivity of the released query under add-remove-one-row (> 0), in the
        mechanism's input metric (L1 for counts, L-infinity over scores for
        selection).

    Attributes
    ----------
    epsilon : Fraction
    sensitivity : Fraction
    name : str
    guarantee : str

    Examples
    --------
    >>> m = Mechanism(0.5, 1)
    >>> m.privacy_map(1), m.privacy_map(2)
    (Fraction(1, 2), Fraction(1, 1))
    """

    name: str = "mechanism"
    guarantee: str = PURE_DP

    def __init__(self, epsilon: EpsilonLike, sensitivity: EpsilonLike = 1) -> None:
        self.epsilon: Fraction = as_epsilon(epsilon)
        self.sensitivity: Fraction = as_epsilon(sensitivity, "sensitivity")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(epsilon={self.epsilon}, "
            f"sensitivity={self.sensitivity})"
        )

    def privacy_map(self, d_in: EpsilonLike) -> Fraction:
        """Privacy loss for inputs at distance ``d_in``: ``d_in * epsilon / sensitivity``.

        ``d_in`` is measured in the mechanism's input metric; ``privacy_map(sensitivity)``
        is the charged ``epsilon``. Larger distances cost proportionally more (group
        privacy).
        """
        distance = as_fraction(d_in, "d_in")
        if distance < 0:
            raise ParameterError(f"d_in must be >= 0, got {d_in!r}")
        return distance * self.epsilon / self.sensitivity

    def charge(self, accountant: Accountant, step: str, mechanism: str | None = None) -> None:
        """Charge this mechanism's ``epsilon`` to ``accountant`` (before any noise)."""
        if not isinstance(accountant, Accountant):
            raise ParameterError("mechanisms need an Accountant to release anything")
        accountant.charge(self.epsilon, step=step, mechanism=mechanism or self.name, guarantee=self.guarantee)
