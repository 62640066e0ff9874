"""What a written ledger allows a run to claim: each release's guarantee, read back from its mechanism.

A ledger entry of the spec's JSON (``{"step", "mechanism", "epsilon"}``) does not
carry its release's label (:class:`~dprm.privacy.LedgerEntry` keeps it in memory
only), but the mechanism's name says it: the names dprm writes are those of its
mechanism classes, optionally followed by ``", parallel over N disjoint parts"``.
A chain (``exponential (MCMC)``) guarantees ``pure-dp-on-mcmc-convergence``; a
selection with float64 Gumbel keys (the weighted reservoir, the structured
exponential mechanism, Serenade's memoised race) ``pure-dp; floating-point
selection``; dpmm's synthesizers ``approx-dp; floating-point selection``; the exact
samplers (discrete Laplace, the exponential mechanism's ``gumbel`` and
``permute-and-flip``) ``pure-dp``. A name dprm does not write bounds nothing.

A document's ``privacy.guarantee`` may not claim more than its releases' labels
combined (:func:`~dprm.privacy.accountant.combine_guarantees`): a chain's release
under ``pure-dp`` is refused by the readers of documents
(:func:`dprm.evaluation.run_documents.check_run_document`). The data-dependent stop
of a chain is not in its name, so that qualifier cannot be read back.

Examples
--------
>>> mechanism_guarantee("exponential (MCMC), parallel over 4 disjoint parts")
'pure-dp-on-mcmc-convergence'
>>> ledger_guarantee([{"mechanism": "discrete-laplace count"}, {"mechanism": "exponential (weighted reservoir, k=3)"}])
'pure-dp; floating-point selection'
>>> claims_more("pure-dp", "pure-dp-on-mcmc-convergence"), claims_more("none", "pure-dp")
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dprm.privacy.accountant import (
    APPROX_DP,
    FLOATING_POINT_SELECTION,
    GUARANTEES,
    NO_GUARANTEE,
    PURE_DP,
    combine_guarantees,
    guarantee_label,
)
from dprm.privacy.metropolis import MetropolisHastings
from dprm.privacy.reservoir import WeightedReservoir
from dprm.privacy.structured import StructuredExponentialMechanism

__all__ = ["MECHANISM_GUARANTEES", "mechanism_guarantee", "ledger_guarantee", "claims_more"]

#: The suffix a release on disjoint parts adds to its mechanism's name.
_PARALLEL = ", parallel over "

_FLOAT_SELECTION = guarantee_label(PURE_DP, [FLOATING_POINT_SELECTION])

#: The start of each mechanism name dprm writes whose release guarantees less than ``pure-dp``, and its label.
#: ``exponential (memoised gumbel race)`` is Serenade's :class:`~dprm.mining.serenade.race.ExtensionRace`
#: (mining is above this package; tests/test_queries_document.py checks the two agree).
MECHANISM_GUARANTEES: tuple[tuple[str, str], ...] = (
    (MetropolisHastings.name, MetropolisHastings.guarantee),
    (WeightedReservoir.name.rstrip(")"), WeightedReservoir.guarantee),  # also "..., k=3)"
    (StructuredExponentialMechanism.name, StructuredExponentialMechanism.guarantee),
    ("exponential (memoised gumbel race)", _FLOAT_SELECTION),
    ("dpmm ", guarantee_label(APPROX_DP, [FLOATING_POINT_SELECTION])),
)


def mechanism_guarantee(mechanism: str) -> str:
    """The guarantee a release by ``mechanism`` (a ledger entry's name) has at most.

    ``pure-dp`` for the exact mechanisms and for any name dprm does not write.

    Examples
    --------
    >>> mechanism_guarantee("exponential (permute-and-flip, monotone scores)")
    'pure-dp'
    >>> mechanism_guarantee("exponential (structured), parallel over 2 disjoint parts")
    'pure-dp; floating-point selection'
    """
    name = str(mechanism).split(_PARALLEL)[0]
    for start, label in MECHANISM_GUARANTEES:
        if name.startswith(start):
            return label
    return PURE_DP


def ledger_guarantee(ledger: Iterable[Mapping[str, Any]]) -> str:
    """The most a run whose ``privacy.ledger`` is ``ledger`` may claim: its releases' labels combined."""
    return combine_guarantees(mechanism_guarantee(entry.get("mechanism", "")) for entry in ledger)


def claims_more(label: str, bound: str) -> bool:
    """Whether the guarantee ``label`` claims more than ``bound`` allows.

    It does when its base is stronger (:data:`~dprm.privacy.accountant.GUARANTEES`,
    strongest first) or, unless it is ``none``, it leaves out a qualifier (a caveat)
    of ``bound``. Qualifiers dprm does not write are allowed in ``label``.

    Examples
    --------
    >>> claims_more("pure-dp", "pure-dp; floating-point selection")
    True
    >>> claims_more("pure-dp-on-mcmc-convergence; floating-point selection", "pure-dp; floating-point selection")
    False
    """
    base, *qualifiers = (part.strip() for part in str(label).split(";"))
    bound_base, *bound_qualifiers = (part.strip() for part in str(bound).split(";"))
    if base == NO_GUARANTEE:
        return False
    if base not in GUARANTEES or GUARANTEES.index(base) < GUARANTEES.index(bound_base):
        return True
    return not set(bound_qualifiers) <= set(qualifiers)
