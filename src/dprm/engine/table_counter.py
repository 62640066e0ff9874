"""Counts over the rows one process holds: the work of the in-process engine and of every shard.

A :class:`TableCounter` answers the greedy miners' counting requests for one pair
of :class:`~dprm.engine.literal_table.LiteralTable` (left, right) built on the same
rows. Every answer is a vector or matrix of **counts of rows**, so the answers of
disjoint sets of rows (shards) add up to the answer on their union: this is what
lets a sharded engine sum its shards' answers and be exact.

Supports (:class:`~dprm.engine.supports.Support`) are evaluated on the rows held and
kept in a small cache (most recently used first), so that growing a query by one
literal costs one ``&`` / ``|`` of two row masks, as it did before the engine.

Examples
--------
>>> import numpy as np
>>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
>>> def boolean(name, side, values):
...     return Attribute(name, side, AttributeKind.BOOLEAN, np.array(values, np.int8), Domain(declared=True))
>>> left = View("left", [boolean("a", "left", [1, 1, 0, 0])])
>>> right = View("right", [boolean("x", "right", [1, 0, 1, 0])])
>>> counter = TableCounter(tuple(LiteralTable(v, mode="private", max_splits=3) for v in (left, right)))
>>> counter.cells(Support.literal(0, 0), Support.literal(1, 0)).tolist()
[[1, 1], [1, 1]]
>>> counter.literal_sizes(0).tolist()
[2]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from dprm.engine.base import GridCounts
from dprm.engine.literal_table import LiteralTable
from dprm.engine.supports import AND, Support

__all__ = ["TableCounter", "MASK_CACHE"]

#: Row masks a counter keeps (most recently used); a greedy run touches about two per slot.
MASK_CACHE = 96
#: ... and at most this many bytes of them (at 10 M rows: 51 masks).
MASK_CACHE_BYTES = 512 * 2**20


class TableCounter(GridCounts):
    """The greedy miners' counts on the rows of ``tables`` (the left and the right view's table).

    Parameters
    ----------
    tables : (LiteralTable, LiteralTable)
        Built on the same rows, in the same order.
    """

    def __init__(self, tables: Sequence[LiteralTable]) -> None:
        self.tables = (tables[0], tables[1])
        self.n_rows = tables[0].n_rows
        self._masks: OrderedDict[Support, np.ndarray] = OrderedDict()

    # -- supports -----------------------------------------------------------------------

    def mask(self, support: Support) -> np.ndarray:
        """Boolean row mask of ``support`` (cached)."""
        cached = self._masks.get(support)
        if cached is not None:
            self._masks.move_to_end(support)
            return cached
        table = self.tables[support.side]
        if len(support.steps) == 1:
            mask = table.support(support.steps[0][1])
        else:
            operator, literal = support.steps[-1]
            before = self.mask(Support(support.side, support.steps[:-1]))
            other = table.support(literal)
            mask = before & other if operator == AND else before | other
        self._masks[support] = mask
        if len(self._masks) > max(8, min(MASK_CACHE, MASK_CACHE_BYTES // max(self.n_rows, 1))):
            self._masks.popitem(last=False)
        return mask

    # -- requests -----------------------------------------------------------------------

    def literal_sizes(self, side: int) -> np.ndarray:
        """``|supp(literal)|`` of every literal of one side (int64), in one pass over the rows."""
        table = self.tables[side]
        return table.group_counts(np.zeros(self.n_rows, dtype=np.int64), 1)[:, 0].astype(np.int64)

    def cells(self, left: Support, right: Support) -> np.ndarray:
        """Exact ``[[L∩R, L∖R], [R∖L, neither]]`` of two supports (int64, 2×2)."""
        a, b = self.mask(left), self.mask(right)
        both = int(np.count_nonzero(a & b))
        only_left = int(np.count_nonzero(a)) - both
        only_right = int(np.count_nonzero(b)) - both
        return np.array([[both, only_left], [only_right, self.n_rows - both - only_left - only_right]],
                        dtype=np.int64)

    def extension_counts(self, left: Support, right: Support, sides: Sequence[int]) -> list[np.ndarray]:
        """Per side in ``sides``: rows of each literal in each of the four groups ``2·mine + other``.

        ``mine`` is that side's support and ``other`` the other side's; the result for a
        side has shape ``(n_literals, 4)`` (int64).
        """
        supports = (left, right)
        out = []
        for side in sides:
            mine, other = self.mask(supports[side]), self.mask(supports[1 - side])
            groups = 2 * mine.astype(np.int64) + other.astype(np.int64)
            out.append(self.tables[side].group_counts(groups, 4).astype(np.int64))
        return out

    def pair_intersections(self, side: int, requests: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """``|supp(f) ∩ supp(o)|`` for blocks of initial-view literals ``f`` and other-view literals ``o``.

        Each request is ``(attributes, members)``: consecutive attribute positions of
        the other view (a chunk) and literal numbers of the initial view ``side``.
        Returns per request an int64 matrix ``(members, literals of the chunk's
        attributes)``.

        Counted from joint histograms of codes: for each attribute ``a`` of the members
        and ``b`` of the chunk, one ``bincount`` of the rows' bin pairs (missing values in
        a slot no literal covers), a cumulative sum over both axes, and each literal
        pair (an interval of ``a``'s bins with one of ``b``'s) as four entries of it
        (inclusion–exclusion). Exact integers; memory ``O(rows + bins_a · bins_b)`` per
        attribute pair and time ``O(rows)``, instead of a dense ``(members, rows)``
        matrix of row masks per chunk (3.3 GB at 100,000 rows × 50 + 50 columns).
        """
        first, other = self.tables[side], self.tables[1 - side]
        out = []
        for attributes, members in requests:
            attributes = np.asarray(attributes, dtype=np.int64)
            members = np.asarray(members, dtype=np.int64)
            literals = np.flatnonzero((other.attribute >= attributes[0]) & (other.attribute <= attributes[-1]))
            result = np.zeros((members.size, literals.size), dtype=np.int64)
            if self.n_rows == 0 or members.size == 0 or literals.size == 0:
                out.append(result)
                continue
            member_attributes = first.attribute[members]
            for a in np.unique(member_attributes):
                rows_a = np.flatnonzero(member_attributes == a)
                width_a, local_a = _local_bins(first, int(a))
                lower_a = first.lo[members[rows_a]]
                upper_a = first.hi[members[rows_a]] + 1
                for b in attributes:
                    columns_b = np.flatnonzero(other.attribute[literals] == b)
                    if columns_b.size == 0:
                        continue
                    width_b, local_b = _local_bins(other, int(b))
                    joint = np.bincount(local_a * width_b + local_b, minlength=width_a * width_b)
                    cumulative = joint.reshape(width_a, width_b).cumsum(axis=0).cumsum(axis=1)
                    lower_b = other.lo[literals[columns_b]]
                    upper_b = other.hi[literals[columns_b]] + 1
                    block = (cumulative[np.ix_(upper_a, upper_b)] - cumulative[np.ix_(lower_a, upper_b)]
                             - cumulative[np.ix_(upper_a, lower_b)] + cumulative[np.ix_(lower_a, lower_b)])
                    result[np.ix_(rows_a, columns_b)] = block
            out.append(result)
        return out


def _local_bins(table: LiteralTable, attribute: int) -> tuple[int, np.ndarray]:
    """``(width, slots)``: each row's slot in one attribute's cumulative layout.

    Slot ``0`` stays empty, bin ``c`` is slot ``c + 1`` (a literal over bins ``lo..hi``
    covers slots ``lo + 1..hi + 1``, the cumulative entries ``hi + 1`` minus ``lo``) and
    a missing value is slot ``width - 1``, which no literal covers.
    """
    n = int(table.index.n_codes[attribute])
    codes = table.index.codes[attribute].astype(np.int64)
    slots = codes + 1
    slots[codes == table.index.missing_code] = n + 1
    return n + 2, slots
