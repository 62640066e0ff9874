"""ISON's candidate bookkeeping in compiled code: itemsets as item bitsets, an exact hash set, merging.

An itemset over discrete columns (each column at most once) is written as an *item
bitset*: one bit per (column, category) of the estimate's domains, ``n_items = sum of
the domain sizes`` bits in ``ceil(n_items / 64)`` unsigned 64-bit words, beside a
*column mask* (one bit per column). The bitset is an exact, reversible key of the
itemset, so sets of itemsets are hash sets of bitsets (:class:`KeySet`: open
addressing, exact comparison of the words, no false positives), an itemset one item
smaller is the bitset with one bit cleared, and two itemsets can be united when they
agree on their shared columns, that is when
``popcount(items_a & items_b) == popcount(columns_a & columns_b)``; the union is
``items_a | items_b``.

:func:`merge_new` forms the consistent unions of two lists of itemsets that are
larger than the first one, keeps those never seen before, drops those with a subset
one item smaller in a set of rejected itemsets (Apriori's pruning) and adds the rest
to the seen set, in one compiled pass over all the pairs, without writing the pairs
out.

Examples
--------
>>> import numpy as np
>>> codec = ItemCodec([2, 3])
>>> rows = np.array([[0, -1], [-1, 2], [1, 2]], dtype=np.int16)
>>> items, columns = codec.encode(rows)
>>> codec.decode(items).tolist() == rows.tolist()
True
>>> seen = KeySet(codec.n_words)
>>> seen.add(items[:2]).tolist(), seen.contains(items).tolist()
([True, True], [True, True, False])
>>> merged, _ = merge_new(codec, items[:1], columns[:1], items[1:], columns[1:], seen, KeySet(codec.n_words))
>>> codec.decode(merged).tolist()   # {a=0} with {b=2} (new); {a=0} with {a=1, b=2} conflicts
[[0, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from dprm.precompiled import kernel

__all__ = ["ItemCodec", "KeySet", "merge_new", "without_rejected_subsets"]


class ItemCodec:
    """Itemsets (code rows, -1 where a column is absent) to and from item bitsets and column masks.

    Parameters
    ----------
    sizes : sequence of int
        The number of categories of every column.
    """

    def __init__(self, sizes: Sequence[int]) -> None:
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.n_columns = len(self.sizes)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.n_items = int(self.sizes.sum())
        self.n_words = max(1, -(-self.n_items // 64))
        self.n_column_words = max(1, -(-self.n_columns // 64))
        self.item_column = np.repeat(np.arange(self.n_columns), self.sizes).astype(np.int64)
        self.item_code = (np.arange(self.n_items) - self.offsets[self.item_column]).astype(np.int64)

    def encode(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The item bitsets ``(n, n_words)`` and column masks ``(n, n_column_words)`` of code rows."""
        rows = np.ascontiguousarray(np.atleast_2d(rows), dtype=np.int64)
        return kernel("dprm.itemsets.candidates", "_encode")(rows, self.offsets, self.n_words, self.n_column_words)

    def decode(self, items: np.ndarray) -> np.ndarray:
        """The code rows (int16, -1 where a column is absent) of item bitsets."""
        return kernel("dprm.itemsets.candidates", "_decode")(np.ascontiguousarray(items, dtype=np.uint64), self.item_column, self.item_code,
                       self.n_columns)

    def columns_of(self, items: np.ndarray) -> np.ndarray:
        """The column masks of item bitsets."""
        return kernel("dprm.itemsets.candidates", "_columns_of")(np.ascontiguousarray(items, dtype=np.uint64), self.item_column, self.n_column_words)


class KeySet:
    """An exact set of non-empty item bitsets (open addressing, the keys stored in the table; grows as needed).

    Parameters
    ----------
    n_words : int
        Words per key.
    capacity : int
        Keys to make room for at first.
    """

    def __init__(self, n_words: int, capacity: int = 1024) -> None:
        self.n_words = int(n_words)
        size = 1 << max(4, int(capacity * 2 - 1).bit_length())
        self.table = np.zeros((size, self.n_words), dtype=np.uint64)  # an all-zero row is an empty slot
        self.count = np.zeros(1, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.count[0])

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more keys (the table stays at most half full)."""
        need = len(self) + int(extra)
        if 2 * need <= len(self.table):
            return
        self.table = kernel("dprm.itemsets.candidates", "_rehash")(self.table, 1 << int(2 * need - 1).bit_length())

    def add(self, keys: np.ndarray) -> np.ndarray:
        """Add keys; return which were not in the set before (a key repeated in ``keys`` counts once)."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, self.n_words)
        if len(keys) and not keys.any(axis=1).all():
            raise ValueError("the empty itemset cannot be stored")
        self.reserve(len(keys))
        return kernel("dprm.itemsets.candidates", "_add_many")(self.table, self.count, keys)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Which keys are in the set."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, self.n_words)
        return kernel("dprm.itemsets.candidates", "_contains_many")(self.table, keys)


def without_rejected_subsets(items: np.ndarray, rejected: KeySet) -> np.ndarray:
    """Which item bitsets have no subset one item smaller in ``rejected``."""
    items = np.ascontiguousarray(items, dtype=np.uint64).reshape(-1, rejected.n_words)
    if len(rejected) == 0:
        return np.ones(len(items), dtype=bool)
    return kernel("dprm.itemsets.candidates", "_keep_without_rejected")(items, rejected.table)


def merge_new(codec: ItemCodec, a_items: np.ndarray, a_columns: np.ndarray, b_items: np.ndarray,
              b_columns: np.ndarray, seen: KeySet, rejected: KeySet,
              max_length: int | None = None) -> tuple[np.ndarray, int]:
    """The unions of an itemset of ``a`` with one of ``b`` that are new, short enough and not pruned.

    A union counts when the two agree on their shared columns and it is larger than
    the itemset of ``a``; the itemsets of ``a`` must not be in ``rejected`` (the
    subset that is one of them is not looked up). Only the returned unions are added
    to ``seen``: one too long or pruned is dropped again if formed again (the rejected
    set only grows), which keeps ``seen`` to the candidates actually estimated. Each union not in ``seen`` is added to it; it is returned
    unless it has more than ``max_length`` items or a subset one item smaller is in
    ``rejected``.

    Returns
    -------
    items : numpy.ndarray of uint64, shape (n, n_words)
        The candidates, in order of the pairs ``(a, b)``.
    pruned : int
        The unions not in ``seen`` dropped because of a rejected subset (each time formed).
    """
    out = []
    pruned = 0
    limit = -1 if max_length is None else int(max_length)
    a_items = np.ascontiguousarray(a_items, dtype=np.uint64)
    b_items = np.ascontiguousarray(b_items, dtype=np.uint64)
    a_columns = np.ascontiguousarray(a_columns, dtype=np.uint64)
    b_columns = np.ascontiguousarray(b_columns, dtype=np.uint64)
    start = 0
    step = max(1, 1_000_000 // max(1, len(b_items)))
    while start < len(a_items):
        stop = min(len(a_items), start + step)
        seen.reserve((stop - start) * len(b_items))
        buffer = np.empty(((stop - start) * len(b_items), codec.n_words), dtype=np.uint64)
        n, dropped = kernel("dprm.itemsets.candidates", "_merge_block")(a_items, a_columns, b_items, b_columns, start, stop, seen.table, seen.count,
                                  rejected.table, len(rejected) > 0, limit, buffer)
        out.append(buffer[:n].copy())
        pruned += dropped
        start = stop
    items = np.vstack(out) if out else np.zeros((0, codec.n_words), dtype=np.uint64)
    return items, pruned


@njit(cache=True)
def _popcount(x):  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True)
def _hash(words):  # pragma: no cover - compiled
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(words.shape[0]):
        z = words[w] + h
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = z ^ (z >> np.uint64(31))
    return h


@njit(cache=True)
def _find(table, key):  # pragma: no cover - compiled
    """The slot holding ``key``, or the empty slot where it would go."""
    last = table.shape[0] - 1
    slot = np.int64(_hash(key) & np.uint64(last))
    n_words = key.shape[0]
    while True:
        empty = True
        same = True
        for w in range(n_words):
            v = table[slot, w]
            if v != np.uint64(0):
                empty = False
            if v != key[w]:
                same = False
        if same or empty:
            return slot
        slot = (slot + 1) & last


@njit(cache=True)
def _is_empty(table, slot):  # pragma: no cover - compiled
    for w in range(table.shape[1]):
        if table[slot, w] != np.uint64(0):
            return False
    return True


@njit(cache=True)
def _insert(table, count, key):  # pragma: no cover - compiled
    """Add ``key``; True if it was not there (the caller reserved room)."""
    slot = _find(table, key)
    if not _is_empty(table, slot):
        return False
    for w in range(key.shape[0]):
        table[slot, w] = key[w]
    count[0] += 1
    return True


@njit(cache=True)
def _rehash(old, size):  # pragma: no cover - compiled
    table = np.zeros((size, old.shape[1]), dtype=np.uint64)
    for i in range(old.shape[0]):
        if not _is_empty(old, i):
            slot = _find(table, old[i])
            for w in range(old.shape[1]):
                table[slot, w] = old[i, w]
    return table


@njit(cache=True)
def _add_many(table, count, keys):  # pragma: no cover - compiled
    new = np.zeros(keys.shape[0], dtype=np.bool_)
    for i in range(keys.shape[0]):
        new[i] = _insert(table, count, keys[i])
    return new


@njit(cache=True)
def _contains_many(table, keys):  # pragma: no cover - compiled
    found = np.zeros(keys.shape[0], dtype=np.bool_)
    for i in range(keys.shape[0]):
        found[i] = not _is_empty(table, _find(table, keys[i]))
    return found


@njit(cache=True)
def _has_rejected_subset(table, key, scratch, known):  # pragma: no cover - compiled
    """Whether some subset of ``key`` one item smaller is in the (rejected) set (the empty set never is).

    The subset without the item ``known`` (a bitset with one bit, or none) is known not to be in it."""
    for w in range(key.shape[0]):
        scratch[w] = key[w]
    for w in range(key.shape[0]):
        bits = key[w]
        while bits != np.uint64(0):
            low = bits & (~bits + np.uint64(1))
            scratch[w] = key[w] ^ low
            if low != known[w] and not _is_empty(table, _find(table, scratch)):
                return True
            scratch[w] = key[w]
            bits ^= low
    return False


@njit(cache=True)
def _keep_without_rejected(items, table):  # pragma: no cover - compiled
    keep = np.ones(items.shape[0], dtype=np.bool_)
    scratch = np.empty(items.shape[1], dtype=np.uint64)
    none = np.zeros(items.shape[1], dtype=np.uint64)
    for i in range(items.shape[0]):
        keep[i] = not _has_rejected_subset(table, items[i], scratch, none)
    return keep


@njit(cache=True)
def _merge_block(a_items, a_columns, b_items, b_columns, start, stop, seen_table, seen_count, rejected_table,
                 check_rejected, max_length, out):  # pragma: no cover - compiled
    n_words = a_items.shape[1]
    n_column_words = a_columns.shape[1]
    union = np.empty(n_words, dtype=np.uint64)
    scratch = np.empty(n_words, dtype=np.uint64)
    known = np.empty(n_words, dtype=np.uint64)
    n_out = 0
    pruned = 0
    for i in range(start, stop):
        for j in range(b_items.shape[0]):
            shared_columns = 0
            grows = False
            for w in range(n_column_words):
                shared_columns += _popcount(a_columns[i, w] & b_columns[j, w])
                if b_columns[j, w] & ~a_columns[i, w]:
                    grows = True
            if not grows:
                continue
            shared_items = 0
            length = 0
            for w in range(n_words):
                shared_items += _popcount(a_items[i, w] & b_items[j, w])
                union[w] = a_items[i, w] | b_items[j, w]
                length += _popcount(union[w])
            if shared_items != shared_columns:
                continue
            slot = _find(seen_table, union)
            if not _is_empty(seen_table, slot):
                continue
            if max_length >= 0 and length > max_length:
                continue
            # the union without its one new item (if it has one) is the itemset of ``a``: not rejected
            added = 0
            for w in range(n_words):
                known[w] = union[w] & ~a_items[i, w]
                added += _popcount(known[w])
            if added != 1:
                for w in range(n_words):
                    known[w] = 0
            if check_rejected and _has_rejected_subset(rejected_table, union, scratch, known):
                pruned += 1  # not recorded as seen: it will be pruned again (the rejected set only grows)
                continue
            for w in range(n_words):
                seen_table[slot, w] = union[w]
                out[n_out, w] = union[w]
            seen_count[0] += 1
            n_out += 1
    return n_out, pruned


@njit(cache=True)
def _encode(rows, offsets, n_words, n_column_words):  # pragma: no cover - compiled
    n, m = rows.shape
    items = np.zeros((n, n_words), dtype=np.uint64)
    columns = np.zeros((n, n_column_words), dtype=np.uint64)
    for r in range(n):
        for j in range(m):
            c = rows[r, j]
            if c < 0:
                continue
            bit = offsets[j] + c
            items[r, bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)
            columns[r, j >> 6] |= np.uint64(1) << np.uint64(j & 63)
    return items, columns


@njit(cache=True)
def _decode(items, item_column, item_code, n_columns):  # pragma: no cover - compiled
    n = items.shape[0]
    rows = np.full((n, n_columns), -1, dtype=np.int16)
    for r in range(n):
        for w in range(items.shape[1]):
            bits = items[r, w]
            while bits != np.uint64(0):
                low = bits & (~bits + np.uint64(1))
                bit = w * 64 + int(_popcount(low - np.uint64(1)))
                rows[r, item_column[bit]] = item_code[bit]
                bits ^= low
    return rows


@njit(cache=True)
def _columns_of(items, item_column, n_column_words):  # pragma: no cover - compiled
    n = items.shape[0]
    columns = np.zeros((n, n_column_words), dtype=np.uint64)
    for r in range(n):
        for w in range(items.shape[1]):
            bits = items[r, w]
            while bits != np.uint64(0):
                low = bits & (~bits + np.uint64(1))
                bit = w * 64 + int(_popcount(low - np.uint64(1)))
                j = item_column[bit]
                columns[r, j >> 6] |= np.uint64(1) << np.uint64(j & 63)
                bits ^= low
    return columns
