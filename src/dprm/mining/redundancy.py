"""Duplicate and redundant redescriptions: what to show once (issue 9).

A miner may return the same redescription in several equivalent forms and many
that describe nearly the same entities (extraction extends every start by
disjunctions, alternation revisits the same splits). Two filters, for any miner:

:func:`deduplicate`
    Queries in normal form (:mod:`dprm.queries.normal_form`) and one redescription
    per pair of normal forms, the first (miners list the best first). Equal normal
    forms have equal supports on every dataset, so nothing is lost.

:func:`redundant` / :func:`filter_redundant`
    Siren's redundancy filter: greedily, best first, a redescription is
    **redundant** when the entities it describes overlap those of a better one
    already kept by more than ``max_overlap``. Quality order: not pruned before
    pruned (a probable artefact of the noise never hides a sound one), then
    Jaccard index (high first), p-value (low first; unknown last), intersection
    (large first), position in the list (:func:`dprm.mining.ranking.quality_order`).

What "the entities it describes" are (``support``): ``"intersection"`` (default)
``E₁₁ = supp(qL) ∩ supp(qR)``, the rows both queries hold on; ``"union"``
``supp(qL) ∪ supp(qR)``. The overlap of two of them is their Jaccard index
``|A ∩ B| / |A ∪ B|`` (1 for two empty sets).

Exact overlaps (non-private runs)
---------------------------------
With ``data``, the supports are evaluated on the rows and the overlaps are exact
(packed bitsets, one ``popcount`` per pair). Only for people who may see the data:
non-private miners (CARTwheels, ReReMi, the clired baselines) and local evaluation.

Overlaps from released values only (private runs)
-------------------------------------------------
Without ``data`` the filter is **post-processing**: its inputs are the
redescriptions the analyst already holds, the queries and their released noisy
statistics, and nothing else (no row, no count, no data size), so by the
post-processing property of differential privacy its output costs no budget and
the guarantee of the run is unchanged, whatever it outputs. It cannot know the
overlap of two arbitrary supports; it uses the one case where released values
determine it: **provable containment**. When the queries alone prove
``qL ⊆ qL'`` and ``qR ⊆ qR'`` (:func:`dprm.queries.implies`: logic valid on every
dataset, e.g. ``qL' = qL ∨ u`` as extraction's disjunctions make, a wider interval,
the other leaves of a tree inside the negation of one), the described sets are
nested, ``A ⊆ B``, so their overlap is ``|A| / |B|``, estimated by the ratio of the
two released sizes (noisy intersections, or unions), ``min/max`` so that noise
cannot push it above 1. Pairs whose containment is not provable are never
redundant: the filter errs towards showing. (A fuller private filter would need
the released cell counts of each tree pair in the output; see the docs.)

``complete`` names attributes known to have no missing value (normal form rule 8,
more provable containments). In a non-private run it may come from the data
(:func:`dprm.queries.complete_attributes`); in a private run only from public
declarations, never from the rows.

Examples
--------
>>> from dprm.queries import BooleanLiteral as B, NumericLiteral as N, Redescription, RedescriptionStats
>>> def red(left, right, sl, sr, inter):
...     return Redescription(left, right, RedescriptionStats.from_counts(sl, sr, inter, 1000))
>>> found = [red(B("a"), N("x", le=3), 100, 105, 95),
...          red(B("a") | B("b"), N("x", le=3.5), 103, 110, 97),     # contains the first one
...          red(B("c"), N("y", gt=1), 300, 280, 250)]
>>> redundant(found)          # private: the second repeats the first (95/97 > 0.9)
[None, 0, None]
>>> [str(r.left) for r in filter_redundant(found)]
['a', 'c']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import AbstractSet

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.data.literal_index import pack_rows
from dprm.errors import ParameterError
from dprm.mining.ranking import quality_order
from dprm.queries import Query, Redescription, implies

__all__ = ["DEFAULT_MAX_OVERLAP", "REDUNDANT_KEY", "SUPPORTS", "deduplicate", "redundant", "filter_redundant",
           "mark_redundant"]

#: The default largest overlap of a shown redescription with a better shown one.
DEFAULT_MAX_OVERLAP = 0.9

#: What a redescription describes: the rows of both queries, or of either.
SUPPORTS: tuple[str, ...] = ("intersection", "union")

#: The key of :attr:`Redescription.extra` that :func:`filter_redundant` sets with ``mark=True``.
REDUNDANT_KEY = "redundant"


def deduplicate(
    redescriptions: Iterable[Redescription], *, complete: AbstractSet[str] | Iterable[str] = frozenset()
) -> list[Redescription]:
    """Redescriptions in normal form, each pair of normal forms once (the first kept).

    Parameters
    ----------
    redescriptions : iterable of Redescription
        Best first, as miners return them.
    complete : set of str
        Attributes known to have no missing value (see the module docstring);
        their negated literals become literals, ``¬[B = false]`` is ``B``.

    Returns
    -------
    list of Redescription
        The first of each group of equal normal forms, in the given order, with
        its queries normalised for ``complete``; statistics unchanged (equal normal
        forms have equal supports).

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, Not, Redescription, RedescriptionStats
    >>> s = RedescriptionStats.from_counts(50, 60, 45)
    >>> reds = [Redescription(B("bear"), B("cold"), s), Redescription(Not(B("bear", False)), B("cold"), s)]
    >>> len(deduplicate(reds)), len(deduplicate(reds, complete={"bear"}))
    (2, 1)
    """
    complete = frozenset(complete)
    seen: set[tuple[str, str]] = set()
    out = []
    for r in redescriptions:
        r = r.normalized(complete)
        key = r.key()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _check(max_overlap: float, support: str) -> None:
    if isinstance(max_overlap, bool) or not isinstance(max_overlap, (int, float)) or not 0 <= max_overlap <= 1:
        raise ParameterError(f"max-overlap must be a number in [0, 1], not {max_overlap!r}")
    if support not in SUPPORTS:
        raise ParameterError(f"support must be one of {', '.join(SUPPORTS)}, not {support!r}")


def _exact(redescriptions, order, data: TwoViewData, max_overlap: float, support: str) -> list[int | None]:
    """Greedy filter on the true supports (reads the rows)."""
    cache: dict[tuple[int, Query], np.ndarray] = {}

    def rows(side: int, query: Query) -> np.ndarray:
        if (side, query) not in cache:
            cache[(side, query)] = query.support(data.views[side])
        return cache[(side, query)]

    combine = np.logical_and if support == "intersection" else np.logical_or
    sets = pack_rows(np.array([combine(rows(0, r.left), rows(1, r.right)) for r in redescriptions]))
    sizes = np.bitwise_count(sets).sum(axis=1, dtype=np.int64)
    result: list[int | None] = [None] * len(redescriptions)
    kept: list[int] = []
    kept_sets = np.empty_like(sets)  # the first len(kept) rows are in use
    for i in order:
        if kept:
            inter = np.bitwise_count(kept_sets[: len(kept)] & sets[i]).sum(axis=1, dtype=np.int64)
            union = sizes[kept] + sizes[i] - inter
            overlap = np.divide(inter, union, out=np.ones(len(kept)), where=union > 0)
            worst = int(np.argmax(overlap))
            if overlap[worst] > max_overlap:
                result[i] = kept[worst]
                continue
        kept_sets[len(kept)] = sets[i]
        kept.append(i)
    return result


def _released(redescriptions, order, max_overlap: float, support: str, complete: frozenset) -> list[int | None]:
    """Greedy filter on released values and provable containment (no row read)."""
    sizes = np.array([max(getattr(r.stats, support), 0.0) for r in redescriptions])
    result: list[int | None] = [None] * len(redescriptions)
    kept: list[int] = []
    for i in order:
        if kept:
            k = np.array(kept)
            low, high = np.minimum(sizes[k], sizes[i]), np.maximum(sizes[k], sizes[i])
            ratio = np.divide(low, high, out=np.ones(len(k)), where=high > 0)
            r = redescriptions[i]
            for j in k[ratio > max_overlap]:  # best first: the first proven one is the reason
                other = redescriptions[j]
                nested = (implies(r.left, other.left, complete) and implies(r.right, other.right, complete)) or (
                    implies(other.left, r.left, complete) and implies(other.right, r.right, complete))
                if nested:
                    result[i] = int(j)
                    break
            if result[i] is not None:
                continue
        kept.append(i)
    return result


def redundant(
    redescriptions: Sequence[Redescription],
    *,
    data: TwoViewData | None = None,
    max_overlap: float = DEFAULT_MAX_OVERLAP,
    support: str = "intersection",
    complete: AbstractSet[str] | Iterable[str] = frozenset(),
) -> list[int | None]:
    """Which redescriptions are redundant, and with which better one.

    Parameters
    ----------
    redescriptions : sequence of Redescription
    data : TwoViewData, optional
        The data, for exact overlaps of the true supports (non-private runs only).
        ``None``: overlaps from the queries and the released statistics only
        (post-processing; see the module docstring).
    max_overlap : float
        In [0, 1]; a redescription whose overlap with a better kept one exceeds it is
        redundant. 1 keeps everything; 0 keeps only pairwise disjoint ones (with
        ``data``).
    support : {"intersection", "union"}
        The set of entities a redescription describes.
    complete : set of str
        Attributes known to have no missing value (only used without ``data``).

    Returns
    -------
    list of (int or None)
        For each redescription, in the given order: ``None`` when it is kept,
        else the index of the kept redescription it repeats.
    """
    _check(max_overlap, support)
    redescriptions = list(redescriptions)
    if not redescriptions:
        return []
    order = quality_order(redescriptions)
    if data is not None:
        return _exact(redescriptions, order, data, float(max_overlap), support)
    return _released(redescriptions, order, float(max_overlap), support, frozenset(complete))


def filter_redundant(
    redescriptions: Sequence[Redescription],
    *,
    data: TwoViewData | None = None,
    max_overlap: float = DEFAULT_MAX_OVERLAP,
    support: str = "intersection",
    complete: AbstractSet[str] | Iterable[str] = frozenset(),
    mark: bool = False,
) -> list[Redescription]:
    """The redescriptions that are not redundant, or all of them with the redundant marked.

    Parameters are those of :func:`redundant`, and:

    mark : bool
        False (default): only the kept redescriptions, in the given order (the
        terminal table). True: all of them, in the given order, the redundant ones
        with ``extra["redundant"] = True`` (the JSON document; an optional key
        beside the spec's).

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, Redescription, RedescriptionStats
    >>> s = RedescriptionStats.from_counts(50, 60, 45)
    >>> reds = [Redescription(B("a"), B("c"), s), Redescription(B("a") | B("b"), B("c"), s)]
    >>> [r.extra for r in filter_redundant(reds, mark=True)]
    [{}, {'redundant': True}]
    """
    flags = redundant(redescriptions, data=data, max_overlap=max_overlap, support=support, complete=complete)
    if not mark:
        return [r for r, flag in zip(redescriptions, flags) if flag is None]
    return [r if flag is None else replace(r, extra={**r.extra, REDUNDANT_KEY: True})
            for r, flag in zip(redescriptions, flags)]


def mark_redundant(
    redescriptions: Sequence[Redescription],
    *,
    data: TwoViewData | None = None,
    max_overlap: float = DEFAULT_MAX_OVERLAP,
    support: str = "intersection",
    complete: AbstractSet[str] | Iterable[str] = frozenset(),
) -> list[Redescription]:
    """All of ``redescriptions``, in order, marked as the terminal table hides them.

    The table shows :func:`filter_redundant` of :func:`deduplicate`; here a repeated
    normal form (after its first) and a redundant one both get
    ``extra["redundant"] = True``, so that the unmarked ones of the document are
    exactly the table's, and a report of the file counts what the table counted.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, Not, Redescription, RedescriptionStats
    >>> s = RedescriptionStats.from_counts(50, 60, 45)
    >>> reds = [Redescription(B("a"), B("c"), s), Redescription(Not(Not(B("a"))), B("c"), s)]
    >>> [r.extra for r in mark_redundant(reds)]
    [{}, {'redundant': True}]
    """
    complete = frozenset(complete)
    firsts: dict[tuple[str, str], int] = {}
    for i, r in enumerate(redescriptions):
        firsts.setdefault(r.normalized(complete).key(), i)
    unique = sorted(firsts.values())
    flags = redundant([redescriptions[i].normalized(complete) for i in unique], data=data, max_overlap=max_overlap,
                      support=support, complete=complete)
    kept = {i for i, flag in zip(unique, flags) if flag is None}
    return [r if i in kept else replace(r, extra={**r.extra, REDUNDANT_KEY: True})
            for i, r in enumerate(redescriptions)]
