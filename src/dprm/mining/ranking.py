"""Ranking: the order in which redescriptions are listed, best first.

Every miner lists its results best first, and the redundancy filter keeps the better
of two overlapping ones; these are the rules, all on released (or, for the
non-private miners, exact) statistics only, so a ranking is post-processing.

* :func:`rank_key`: higher Jaccard index first, then larger intersection (extraction's
  combinations, the tree miners, ReReMi);
* :func:`ranked` with ``ties="kept"``: higher Jaccard index first, equal ones in the
  order found (SerenadeCS and SerenadeES);
* :func:`quality_order`: the redundancy filter's order (:mod:`dprm.mining.redundancy`):
  not pruned before pruned, then Jaccard index (high first), p-value (low first;
  unknown last), intersection (large first), position in the list.

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

if TYPE_CHECKING:
    from dprm.queries import Redescription

__all__ = ["RANKING_TIES", "quality_order", "rank_key", "ranked"]

#: How :func:`ranked` orders equal Jaccard indices: by intersection, or as found.
RANKING_TIES = ("intersection", "kept")


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


def ranked(redescriptions: Sequence[Redescription], *, ties: str = "intersection") -> list[Redescription]:
    """The redescriptions best first: by :func:`rank_key`, or (``ties="kept"``) by Jaccard index only.

    A stable sort: with ``ties="kept"`` equal Jaccard indices keep the given order.
    """
    if ties not in RANKING_TIES:
        raise ValueError(f"ties must be one of {', '.join(RANKING_TIES)}, not {ties!r}")
    if ties == "kept":
        return sorted(redescriptions, key=lambda r: -r.stats.jaccard)
    return sorted(redescriptions, key=lambda r: rank_key(r.stats))


def quality_order(redescriptions: Sequence[Redescription]) -> list[int]:
    """Positions of ``redescriptions`` in the redundancy filter's order (best first).

    Not pruned before pruned (a probable artefact of the noise never hides a sound
    one), then Jaccard index (high first), p-value (low first; unknown last),
    intersection (large first), position in the list.
    """
    def key(i: int) -> tuple:
        s = redescriptions[i].stats
        p = math.inf if s.p_value is None else s.p_value
        return (redescriptions[i].pruned, -s.jaccard, p, -s.intersection, i)

    return sorted(range(len(redescriptions)), key=key)
