"""Ranking: the order in which redescriptions are listed, best first.

Every miner lists its results best first, and the redundancy filter keeps the better
of two overlapping ones; these are the rules, all on released (or, for the
non-private miners, exact) statistics only, so a ranking is post-processing.

* :func:`finding_key`: the order of every miner's results: higher ``J + ½·excess``
  first, where the excess is ``J − J_ind`` over two independent queries of the same
  sizes (:mod:`dprm.mining.independence`); then higher Jaccard index, larger
  intersection. Ranking by the Jaccard index alone lists large near-independent pairs
  (two queries of 90 % of the rows each have ``J ≈ 0.82`` whatever they say) before
  real structure; ranking by the excess alone lists small exact pairs before large
  ones. Measured over the top 10 of seeded runs with true statistics
  (``benchmarks/quality_ranking.py``; docs/mining.md, "Excess over independence"):
  non-private cartwheels on MAMMAL, median true excess 0.33 → 0.92 at true J 0.94 →
  0.92; on planted data 0.41 → 0.52 at J 0.87 → 0.85; the default private miner on
  MAMMAL at ε = 1 (5 runs), 0.30 → 0.33 at J 0.76 → 0.75;
* :func:`rank_key`: higher Jaccard index first, then larger intersection (extraction's
  combinations, before they are redescriptions);
* :func:`ranked`: redescriptions kept before pruned, each part by :func:`finding_key`;
  with ``ties="kept"`` equal keys keep the order found (SerenadeCS and SerenadeES);
* :func:`quality_order`: the redundancy filter's order (:mod:`dprm.mining.redundancy`):
  not pruned before pruned, then :func:`finding_key`, p-value (low first; unknown
  last), position in the list.

Examples
--------
>>> from dprm.queries import BooleanLiteral as B, Redescription, RedescriptionStats
>>> def red(inter, pruned=False):
...     return Redescription(B("a"), B("b"), RedescriptionStats.from_counts(100, 100, inter, 1000), pruned=pruned)
>>> [r.stats.intersection for r in ranked([red(50), red(90), red(70)])]
[90.0, 70.0, 50.0]
>>> quality_order([red(90, pruned=True), red(50)])
[1, 0]
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol, Sequence

from dprm.mining.independence import excess_of

if TYPE_CHECKING:
    from dprm.queries import Redescription

__all__ = ["RANKING_TIES", "EXCESS_WEIGHT", "finding_key", "quality_order", "rank_key", "ranked"]

#: How :func:`ranked` orders equal keys: by intersection, or as found.
RANKING_TIES = ("intersection", "kept")
#: The weight of the excess over independence in :func:`finding_key`.
EXCESS_WEIGHT = 0.5


class _Ranked(Protocol):
    """Anything with a Jaccard index and an intersection (statistics, extraction's combinations)."""

    @property
    def jaccard(self) -> float: ...

    @property
    def intersection(self) -> float: ...


def rank_key(statistics: _Ranked) -> tuple[float, float]:
    """The sort key of the usual order: higher Jaccard index first, then larger intersection.

    Examples
    --------
    >>> from dprm.queries import RedescriptionStats
    >>> rank_key(RedescriptionStats.from_counts(100, 100, 80, 1000))
    (-0.6666666666666666, -80.0)
    """
    return (-statistics.jaccard, -statistics.intersection)


def finding_key(redescription: Redescription) -> tuple[float, float, float]:
    """The sort key of a miner's results: higher ``J + ½·excess`` first, then J, then intersection.

    The excess is the redescription's ``independence`` entry (post-processing of the
    reported statistics); without one, the key is the Jaccard index's.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, Redescription, RedescriptionStats
    >>> from dprm.mining.independence import with_independence
    >>> large = with_independence(Redescription(B("a"), B("b"), RedescriptionStats.from_counts(900, 900, 820, 1000)), 1000)
    >>> small = with_independence(Redescription(B("c"), B("d"), RedescriptionStats.from_counts(100, 100, 80, 1000)), 1000)
    >>> round(large.stats.jaccard, 3), round(small.stats.jaccard, 3)   # the large pair has the higher J ...
    (0.837, 0.667)
    >>> [r.left.attr for r in sorted([large, small], key=finding_key)]   # ... but is near independence
    ['c', 'a']
    """
    s = redescription.stats
    excess = excess_of(redescription.extra)
    return (-(s.jaccard + EXCESS_WEIGHT * (excess if excess is not None else 0.0)), -s.jaccard, -s.intersection)


def ranked(redescriptions: Sequence[Redescription], *, ties: str = "intersection") -> list[Redescription]:
    """The redescriptions kept before pruned, each part best first by :func:`finding_key` (a stable sort).

    A pruned redescription is a probable artefact of the noise: listed after every kept
    one, as ``dprm mine``, the report and the web page list them, so that the first
    entries of a miner's ``redescriptions_`` are the findings. With ``ties="kept"``, only
    ``J + ½·excess`` counts: equal ones keep the given order.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, Redescription, RedescriptionStats
    >>> strong = Redescription(B("a"), B("b"), RedescriptionStats.from_counts(100, 100, 95, 1000), pruned=True)
    >>> weak = Redescription(B("c"), B("d"), RedescriptionStats.from_counts(100, 100, 40, 1000))
    >>> [str(r.left) for r in ranked([strong, weak])]
    ['c', 'a']
    """
    if ties not in RANKING_TIES:
        raise ValueError(f"ties must be one of {', '.join(RANKING_TIES)}, not {ties!r}")
    if ties == "kept":
        return sorted(redescriptions, key=lambda r: (r.pruned, finding_key(r)[0]))
    return sorted(redescriptions, key=lambda r: (r.pruned, *finding_key(r)))


def quality_order(redescriptions: Sequence[Redescription]) -> list[int]:
    """Positions of ``redescriptions`` in the redundancy filter's order (best first).

    Not pruned before pruned (a probable artefact of the noise never hides a sound
    one), then :func:`finding_key`'s first key (high first), the Jaccard index,
    p-value (low first; unknown last), intersection (large first), position in the list.
    """
    def key(i: int) -> tuple:
        r = redescriptions[i]
        p = math.inf if r.stats.p_value is None else r.stats.p_value
        first, jaccard, intersection = finding_key(r)
        return (r.pruned, first, jaccard, p, intersection, i)

    return sorted(range(len(redescriptions)), key=key)
