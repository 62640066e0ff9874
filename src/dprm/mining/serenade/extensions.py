"""Redescriptions under construction and the counts of all their single-literal extensions.

A :class:`Growing` redescription holds its two queries, their supports and the
attributes it uses. Its candidate extensions (Algorithm 3's candidate set) are

* the redescription itself, unextended (candidate 0), and
* for each side whose query has fewer than ``max_literals`` literals, and each
  operator ``∧`` / ``∨``, every candidate literal of that side's view whose attribute
  the redescription does not use yet (on either side: when the views share attribute
  names, an attribute is never on both sides).

This set depends on the queries (public outputs of earlier releases) and the public
schema only, never on the data. :func:`extension_counts` gives every candidate's
intersection and union sizes from one bincount per view
(:meth:`~dprm.mining.serenade.literals.LiteralTable.group_counts` with the four groups
"in this side's support" × "in the other side's support"):

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

from dprm.mining.serenade.literals import LiteralTable
from dprm.queries import And, Or, Query

__all__ = ["Growing", "Candidates", "extension_counts", "extend"]

OPERATORS = ("and", "or")


@dataclass(frozen=True)
class Growing:
    """A redescription being built literal by literal (queries, supports, attributes)."""

    queries: tuple[Query, Query]
    masks: tuple[np.ndarray, np.ndarray]
    n_literals: tuple[int, int]
    names: frozenset[str]

    @classmethod
    def pair(cls, tables: tuple[LiteralTable, LiteralTable], left: int, right: int) -> Growing:
        """The redescription of literal ``left`` of the left view and ``right`` of the right view."""
        return cls((tables[0].query(left), tables[1].query(right)),
                   (tables[0].support(left), tables[1].support(right)), (1, 1),
                   frozenset((tables[0].names[left], tables[1].names[right])))

    def counts(self) -> tuple[int, int]:
        """Exact ``(intersection, union)`` of the two supports."""
        inter = int(np.count_nonzero(self.masks[0] & self.masks[1]))
        return inter, int(np.count_nonzero(self.masks[0])) + int(np.count_nonzero(self.masks[1])) - inter

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


def extension_counts(state: Growing, tables: tuple[LiteralTable, LiteralTable], max_literals: int) -> Candidates:
    """Intersection and union sizes of every candidate extension of ``state``."""
    inter, union = state.counts()
    sizes = [int(np.count_nonzero(m)) for m in state.masks]
    parts_i, parts_u, sides, ops, literals = [np.array([inter])], [np.array([union])], [[-1]], [[-1]], [[-1]]
    parts_s: list[list] = [[np.array([sizes[0]])], [np.array([sizes[1]])]]
    for side in (0, 1):
        if state.n_literals[side] >= max_literals:
            continue
        table = tables[side]
        allowed = np.flatnonzero(table.allowed(state.names))
        if allowed.size == 0:
            continue
        mine, other = state.masks[side], state.masks[1 - side]
        groups = 2 * mine.astype(np.int64) + other.astype(np.int64)
        c = table.group_counts(groups, 4)[allowed]
        size_mine, size_other = int(np.count_nonzero(mine)), int(np.count_nonzero(other))
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
    mask = table.support(literal)
    if candidates.operator[choice] == 0:
        new_query, new_mask = And(state.queries[side], query), state.masks[side] & mask
    else:
        new_query, new_mask = Or(state.queries[side], query), state.masks[side] | mask
    queries = list(state.queries)
    masks = list(state.masks)
    n_literals = list(state.n_literals)
    queries[side], masks[side] = new_query, new_mask
    n_literals[side] += 1
    return Growing((queries[0], queries[1]), (masks[0], masks[1]), (n_literals[0], n_literals[1]),
                   state.names | {table.names[literal]})
