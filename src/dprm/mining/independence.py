"""Excess over independence: how much of a redescription's Jaccard index is a finding.

Two queries that each hold on most rows have a high Jaccard index whatever they say:
two independent queries of supports ``a`` and ``b`` over ``n`` rows share
``e = a·b/n`` rows in expectation, so their Jaccard index is ``J_ind = e/(a+b−e)``
(:func:`dprm.queries.independence_jaccard`), 0.82 for two queries of 90 % each. The
**excess** ``J − J_ind`` separates real structure from such large near-independent
pairs. Every miner writes it beside its statistics, as the redescription's
``independence`` entry (an optional key beside the spec's)::

    "independence": {"jaccard": 0.12, "excess": 0.55, "excess_interval": [0.41, 0.66]}

Privacy: a private miner computes it from its released supports and its released
(noisy) row count ``n̂``, so it is post-processing and costs no budget. Its interval
is the Jaccard interval shifted by ``J_ind`` (``J_ind`` is itself an estimate, from
the released supports; the interval does not widen for it, which the report says).

Examples
--------
>>> from dprm.queries import RedescriptionStats
>>> stats = RedescriptionStats.from_counts(900, 900, 810, 1000)   # large, independent
>>> entry = independence_entry(stats, 1000)
>>> entry["jaccard"], entry["excess"]
(0.818, 0.0)
>>> independence_entry(RedescriptionStats.from_counts(100, 100, 90, 1000), 1000, (0.7, 0.9))
{'jaccard': 0.053, 'excess': 0.766, 'excess_interval': [0.647, 0.847]}
>>> independence_entry(RedescriptionStats.from_counts(106, 164, 80), 100)   # n̂ below the union: 190 rows
{'jaccard': 0.513, 'excess': -0.092}
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dprm.queries import Redescription, RedescriptionStats, independence_jaccard

__all__ = ["INDEPENDENCE_KEY", "independence_entry", "independence_of", "excess_of", "with_independence"]

#: The redescription's extra key that holds the entry.
INDEPENDENCE_KEY = "independence"

#: Decimals of the entry's values (they are estimates; more digits would be noise).
_DIGITS = 3


def independence_entry(stats: RedescriptionStats, n_rows: float | None,
                       jaccard_interval: tuple[float, float] | None = None) -> dict[str, Any] | None:
    """The ``independence`` entry of a redescription: ``J_ind``, the excess and its interval.

    Parameters
    ----------
    stats : RedescriptionStats
        The statistics as reported (released ones for a private miner).
    n_rows : float or None
        The number of rows the statistics refer to (a private miner's released
        ``n̂``; taken as at least the statistics' union, which the rows hold). None:
        no entry (there is no independence baseline without it).
    jaccard_interval : (low, high), optional
        The reported interval of the Jaccard index; the excess's is it shifted.
    """
    if n_rows is None or not n_rows > 0:
        return None
    # The rows hold the union: a released n̂ below the released union (noise of a small
    # ε·n, or a row count released apart, as Serenade's) would clip both supports to n̂
    # and make every pair look independent (J_ind 1, excess near −1).
    n_rows = max(float(n_rows), stats.union)
    baseline = float(independence_jaccard(stats.support_left, stats.support_right, n_rows))
    entry: dict[str, Any] = {"jaccard": round(baseline, _DIGITS), "excess": round(stats.jaccard - baseline, _DIGITS)}
    if jaccard_interval is not None:
        low, high = jaccard_interval
        entry["excess_interval"] = [round(float(low) - baseline, _DIGITS), round(float(high) - baseline, _DIGITS)]
    return entry


def _entry_value(extra: dict[str, Any], key: str) -> float | None:
    """The number ``key`` of the ``independence`` entry in ``extra``, or None."""
    entry = extra.get(INDEPENDENCE_KEY)
    if isinstance(entry, dict) and isinstance(entry.get(key), (int, float)):
        return float(entry[key])
    return None


def excess_of(extra: dict[str, Any]) -> float | None:
    """The excess stored in a redescription's ``extra`` (None when it has no entry).

    Examples
    --------
    >>> excess_of({"independence": {"jaccard": 0.1, "excess": 0.5}}), excess_of({})
    (0.5, None)
    """
    return _entry_value(extra, "excess")


def independence_of(extra: dict[str, Any]) -> float | None:
    """The independence baseline ``J_ind`` stored in a redescription's ``extra`` (None when it has no entry).

    Examples
    --------
    >>> independence_of({"independence": {"jaccard": 0.1, "excess": 0.5}}), independence_of({})
    (0.1, None)
    """
    return _entry_value(extra, "jaccard")


def with_independence(redescription: Redescription, n_rows: float | None) -> Redescription:
    """``redescription`` with its :func:`independence_entry` in ``extra`` (unchanged when there is none).

    The Jaccard interval, if the redescription carries one (``extra["interval"]["jaccard"]``),
    gives the excess's interval.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B
    >>> r = Redescription(B("a"), B("b"), RedescriptionStats.from_counts(100, 100, 90, 1000))
    >>> with_independence(r, 1000).extra
    {'independence': {'jaccard': 0.053, 'excess': 0.766}}
    """
    interval = redescription.extra.get("interval")
    pair = interval.get("jaccard") if isinstance(interval, dict) else None
    jaccard_interval = (float(pair[0]), float(pair[1])) if isinstance(pair, (list, tuple)) and len(pair) == 2 else None
    entry = independence_entry(redescription.stats, n_rows, jaccard_interval)
    if entry is None:
        return redescription
    return replace(redescription, extra={**redescription.extra, INDEPENDENCE_KEY: entry})
