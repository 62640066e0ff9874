"""Pruning: which redescriptions are marked as probable artefacts of the noise.

Pruning (section 4.6)
---------------------
:func:`prune` marks (``pruned=True``, kept in the list) redescriptions whose noisy
intersection is below ``min_noisy_support`` (the paper's noisy-support threshold,
chosen from the noisy support vs noisy Jaccard plot; e.g. 500 on MAMMAL) or, dprm's
rule, whose Jaccard interval is wider than ``max_interval_width`` unless its lower
end reaches ``interval_floor`` or exceeds the independence baseline by ``excess_floor``,
or (``max_pvalue``) which are not surely significant. All are functions of released
values only.

:func:`greedy_pruned` is the rule of the greedy miners (SerenadeCS, SerenadeES): their
minimum support, minimum Jaccard and significance, on released values too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from dprm.errors import ParameterError
from dprm.mining.independence import independence_of
from dprm.mining.interval_estimates import INTERVAL_KEY
from dprm.queries import Redescription, RedescriptionStats

__all__ = ["greedy_pruned", "prune"]


def prune(
    redescriptions: Sequence[Redescription],
    *,
    min_noisy_support: float | None = None,
    max_interval_width: float | None = 0.22,
    max_pvalue: float | None = None,
    interval_floor: float | None = None,
    excess_floor: float | None = None,
    significance_probability: float | None = None,
) -> list[Redescription]:
    """Mark redescriptions that are probably artefacts of the noise (section 4.6).

    Parameters
    ----------
    redescriptions : sequence of Redescription
    min_noisy_support : float, optional
        The paper's rule: prune where the noisy intersection is below this threshold
        (e.g. 500 on MAMMAL). ``None``: not applied.
    max_interval_width : float, optional
        dprm's rule: prune where the Jaccard interval (``extra["interval"]``: its
        marginal interval ``"jaccard_marginal"`` where there is one, else
        ``"jaccard"``) is wider than this. ``None``: not applied. A redescription
        without an interval is not judged by this rule.
    interval_floor : float, optional
        The width rule's exception: an interval wider than ``max_interval_width`` whose
        lower end is at least ``interval_floor`` does not prune (the Jaccard index is
        surely that high, only imprecise: on few rows or a small ε every interval is
        wide, and a finding such as ``J ∈ [0.61, 0.99]`` with ``p ≤ 1e-20`` would be
        lost). ``None`` (the function's default and the paper variant's): no exception;
        the tree miners' default is 0.5 (docs/mining-sessions.md, session 43).
    excess_floor : float, optional
        The width rule's second exception: an interval wider than ``max_interval_width``
        whose lower end exceeds the Jaccard index of independent queries of the same
        sizes, ``J_ind`` (the redescription's ``independence`` entry, computed from the
        released supports and row count, :mod:`dprm.mining.independence`), by at least
        ``excess_floor`` does not prune: the redescription is surely above independence,
        only imprecise (on a few hundred rows at ε = 0.3 the interval of a real relation
        such as ``J ∈ [0.43, 0.88]`` with ``J_ind = 0.34`` is wider than any useful width
        rule). ``None`` (the function's default and the paper variant's): no exception;
        the tree miners' default is 0.05 (docs/mining-sessions.md, session 45). A redescription
        without an ``independence`` entry is not kept by it.
    max_pvalue : float, optional
        dprm's significance rule: prune where the redescription is not surely
        significant at this level (the winner's curse: among many candidates, those
        whose noise raised the intersection pass Γ most easily). ``None``: not applied.
    significance_probability : float, optional
        How sure: with it, prune where the posterior probability that the true p-value
        is at most ``max_pvalue`` (the interval's ``"significance"`` at that level, the share
        of the simulated tables on which it is:
        :func:`~dprm.mining.interval_estimates.combination_intervals`) is below this;
        the tree miners' default (``"auto"``) is 0.95 where their trials are literal pairs,
        else 0.975 (:mod:`dprm.mining.auto_trees`; docs/mining-sessions.md, session 49). ``None`` (the
        function's default and the paper variant's), or an interval without that entry (or
        with it at another level): prune where the upper end of the p-value interval exceeds
        ``max_pvalue``, i.e.
        where the redescription is not significant at the pessimistic end of the noise
        (one-sided ``(1 + confidence)/2``: 0.975 for 95 % intervals).

    Returns
    -------
    list of Redescription
        The same redescriptions in the same order, ``pruned=True`` where a rule
        applies (already pruned ones stay pruned). Pure post-processing.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral
    >>> r = Redescription(BooleanLiteral("a"), BooleanLiteral("b"),
    ...                   RedescriptionStats.from_counts(600, 640, 520, 2000),
    ...                   extra={"interval": {"confidence": 0.95, "jaccard": [0.4, 0.9]}})
    >>> [x.pruned for x in prune([r], min_noisy_support=500, max_interval_width=None)]
    [False]
    >>> [x.pruned for x in prune([r], min_noisy_support=500, max_interval_width=0.25)]
    [True]
    >>> sure = replace(r, extra={"interval": {"confidence": 0.95, "jaccard": [0.61, 0.99]}})
    >>> [x.pruned for x in prune([sure], max_interval_width=0.22, interval_floor=0.5)]
    [False]
    >>> above = replace(r, extra={**r.extra, "independence": {"jaccard": 0.3, "excess": 0.55}})
    >>> [x.pruned for x in prune([above], max_interval_width=0.22, excess_floor=0.05)]   # 0.4 ≥ 0.3 + 0.05
    [False]
    >>> [x.pruned for x in prune([above], max_interval_width=0.22, excess_floor=0.15)]
    [True]
    >>> likely = replace(r, extra={"interval": {"p_value": [0.0, 0.03],
    ...                                         "significance": {"max_pvalue": 0.01, "probability": 0.96}}})
    >>> [x.pruned for x in prune([likely], max_interval_width=None, max_pvalue=0.01)]   # the upper end: 0.03
    [True]
    >>> [x.pruned for x in prune([likely], max_interval_width=None, max_pvalue=0.01, significance_probability=0.95)]
    [False]
    """
    if min_noisy_support is not None and not min_noisy_support >= 0:
        raise ParameterError(f"prune-support must be non-negative, not {min_noisy_support}")
    if max_interval_width is not None and not max_interval_width >= 0:
        raise ParameterError(f"max-interval-width must be non-negative, not {max_interval_width}")
    if interval_floor is not None and not 0 <= interval_floor <= 1:
        raise ParameterError(f"prune-interval-floor must be in [0, 1], not {interval_floor}")
    if excess_floor is not None and not 0 <= excess_floor <= 1:
        raise ParameterError(f"prune-excess-floor must be in [0, 1], not {excess_floor}")
    if significance_probability is not None and not 0 < significance_probability < 1:
        raise ParameterError(f"significance-probability must be in (0, 1), not {significance_probability}")
    out = []
    for r in redescriptions:
        drop = min_noisy_support is not None and r.stats.intersection < min_noisy_support
        interval = r.extra.get(INTERVAL_KEY)
        if max_interval_width is not None and isinstance(interval, dict) and "jaccard" in interval:
            lo, hi = interval.get("jaccard_marginal", interval["jaccard"])
            surely_high = interval_floor is not None and lo >= interval_floor
            baseline = independence_of(r.extra)
            surely_above = excess_floor is not None and baseline is not None and lo - baseline >= excess_floor
            drop = drop or ((hi - lo) > max_interval_width and not (surely_high or surely_above))
        if max_pvalue is not None and isinstance(interval, dict) and "p_value" in interval:
            sure = interval.get("significance")
            if significance_probability is not None and sure is not None and sure["max_pvalue"] == max_pvalue:
                drop = drop or sure["probability"] < significance_probability
            else:
                drop = drop or interval["p_value"][1] > max_pvalue
        out.append(replace(r, pruned=True) if drop and not r.pruned else r)
    return out


def greedy_pruned(stats: RedescriptionStats, interval: dict, *, min_support: float, min_jaccard: float,
                  max_pvalue: float, significance: str) -> bool:
    """Whether a result of SerenadeCS or SerenadeES is marked pruned (released values only).

    Pruned when its noisy intersection is below ``min_support`` rows, its noisy
    Jaccard below ``min_jaccard``, its noisy p-value above ``max_pvalue`` or, with
    ``significance="interval"``, the upper end of its p-value interval
    (``interval["p_value"]``) above ``max_pvalue`` (``"point"``: the paper's rule,
    the noisy p-value only).

    Examples
    --------
    >>> stats = RedescriptionStats.from_counts(600, 640, 520, 2000)
    >>> interval = {"p_value": [0.0, 0.02]}
    >>> rule = dict(min_support=100, min_jaccard=0.3, max_pvalue=0.01)
    >>> greedy_pruned(stats, interval, significance="point", **rule)
    False
    >>> greedy_pruned(stats, interval, significance="interval", **rule)
    True
    """
    return bool(stats.intersection < min_support or stats.jaccard < min_jaccard
                or (stats.p_value is not None and stats.p_value > max_pvalue)
                or (significance == "interval" and interval["p_value"][1] > max_pvalue))
