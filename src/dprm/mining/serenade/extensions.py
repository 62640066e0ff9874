"""Redescriptions under construction and the counts of all their single-literal extensions.

A :class:`Growing` redescription holds its two queries, their supports (as
:class:`~dprm.engine.supports.Support` steps, no rows: an engine evaluates them where
the rows are) and the attributes it uses. Its candidate extensions (Algorithm 3's candidate set) are

* the redescription itself, unextended (candidate 0), and
* for each side whose query has fewer than ``max_literals`` literals, and each
  operator ``∧`` / ``∨``, every candidate literal of that side's view whose attribute
  the redescription does not use yet (on either side: when the views share attribute
  names, an attribute is never on both sides).

This set depends on the queries (public outputs of earlier releases) and the public
schema only, never on the data. :func:`extension_counts` gives every candidate's
intersection and union sizes from one bincount per view
(:meth:`~dprm.engine.table_counter.TableCounter.extension_counts`: the four groups
"in this side's support" × "in the other side's support", one request to the engine):

============ ===================================== =====================================
operator     intersection ``I'``                   this side's support ``S'``
============ ===================================== =====================================
``q ∧ l``    ``|l ∩ q ∩ o|``                       ``|l ∩ q|``
``q ∨ l``    ``I + |l ∩ o ∖ q|``                   ``|q| + |l ∖ q|``
============ ===================================== =====================================

with ``o`` the other side's support and ``U' = |o| + S' − I'``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprm.engine.base import GridCounts
from dprm.engine.supports import AND, OR, Support
from dprm.engine.table_counter import TableCounter
from dprm.mining.serenade.literals import LiteralTable
from dprm.queries import And, Or, Query

__all__ = ["Growing", "Candidates", "extension_counts", "extend"]

OPERATORS = ("and", "or")


@dataclass(frozen=True)
class Growing:
    """A redescription being built literal by literal (queries, supports, attributes)."""

    queries: tuple[Query, Query]
    supports: tuple[Support, Support]
    names: frozenset[str]

    @property
    def n_literals(self) -> tuple[int, int]:
        return self.supports[0].n_literals, self.supports[1].n_literals

    def masks(self, tables: tuple[LiteralTable, LiteralTable]) -> tuple[np.ndarray, np.ndarray]:
        """The two supports as row masks of the rows ``tables`` encode."""
        counter = TableCounter(tables)
        return counter.mask(self.supports[0]), counter.mask(self.supports[1])

    @classmethod
    def pair(cls, tables: tuple[LiteralTable, LiteralTable], left: int, right: int) -> Growing:
        """The redescription of literal ``left`` of the left view and ``right`` of the right view."""
        return cls((tables[0].query(left), tables[1].query(right)),
                   (Support.literal(0, left), Support.literal(1, right)),
                   frozenset((tables[0].names[left], tables[1].names[right])))

    def key(self) -> str:
        from dprm.queries import canonical_key

        return canonical_key(self.queries[0]) + " | " + canonical_key(self.queries[1])


@dataclass(frozen=True)
class Candidates:
    """All candidate extensions of one redescription (index 0: unextended).

    ``side``, ``operator`` and ``literal`` are -1 for the unextended candidate.
    """

    intersection: np.ndarray
    union: np.ndarray
    support_left: np.ndarray
    support_right: np.ndarray
    side: np.ndarray
    operator: np.ndarray
    literal: np.ndarray

    def __len__(self) -> int:
        return int(self.intersection.size)


def extension_counts(state: Growing, tables: tuple[LiteralTable, LiteralTable], max_literals: int,
                     counts: GridCounts | None = None) -> Candidates:
    """Intersection and union sizes of every candidate extension of ``state``.

    ``counts`` answers the counting requests (an engine's, for ``tables``' grid); by
    default the rows ``tables`` encode are counted here. The cell table and the
    extension counts are one request (one round trip to a sharded engine).
    """
    counts = TableCounter(tables) if counts is None else counts
    wanted = {}  # the sides to extend and their allowed literals: public (queries and schema)
    for side in (0, 1):
        if state.n_literals[side] >= max_literals:
            continue
        allowed = np.flatnonzero(tables[side].allowed(state.names))
        if allowed.size:
            wanted[side] = allowed
    cells, grouped_counts = counts.cells_and_extensions(*state.supports, list(wanted))
    grouped = dict(zip(wanted, grouped_counts))
    inter = int(cells[0, 0])
    sizes = [int(cells[0].sum()), int(cells[:, 0].sum())]
    union = sizes[0] + sizes[1] - inter
    parts_i, parts_u, sides, ops, literals = [np.array([inter])], [np.array([union])], [[-1]], [[-1]], [[-1]]
    parts_s: list[list] = [[np.array([sizes[0]])], [np.array([sizes[1]])]]
    for side, allowed in wanted.items():
        c = grouped[side][allowed]
        size_mine, size_other = sizes[side], sizes[1 - side]
        and_i = c[:, 3]
        and_s = c[:, 2] + c[:, 3]
        or_i = inter + c[:, 1]
        or_s = size_mine + c[:, 0] + c[:, 1]
        for op, i_new, s_new in ((0, and_i, and_s), (1, or_i, or_s)):
            parts_i.append(i_new)
            parts_u.append(size_other + s_new - i_new)
            parts_s[side].append(s_new)
            parts_s[1 - side].append(np.full(allowed.size, size_other))
            sides.append(np.full(allowed.size, side))
            ops.append(np.full(allowed.size, op))
            literals.append(allowed)
    return Candidates(np.concatenate(parts_i).astype(np.int64), np.concatenate(parts_u).astype(np.int64),
                      np.concatenate(parts_s[0]).astype(np.int64), np.concatenate(parts_s[1]).astype(np.int64),
                      np.concatenate(sides).astype(np.int64), np.concatenate(ops).astype(np.int64),
                      np.concatenate(literals).astype(np.int64))


def extend(state: Growing, candidates: Candidates, choice: int,
           tables: tuple[LiteralTable, LiteralTable]) -> Growing:
    """The redescription that candidate ``choice`` makes of ``state``."""
    side = int(candidates.side[choice])
    if side < 0:
        return state
    literal = int(candidates.literal[choice])
    table = tables[side]
    query = table.query(literal)
    if candidates.operator[choice] == 0:
        new_query, new_support = And(state.queries[side], query), state.supports[side].extended(AND, literal)
    else:
        new_query, new_support = Or(state.queries[side], query), state.supports[side].extended(OR, literal)
    queries = list(state.queries)
    supports = list(state.supports)
    queries[side], supports[side] = new_query, new_support
    return Growing((queries[0], queries[1]), (supports[0], supports[1]), state.names | {table.names[literal]})
