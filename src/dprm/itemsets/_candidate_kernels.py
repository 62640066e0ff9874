"""ISON's candidate sets in compiled code (numba): the hash set of packed itemsets and the merging loops.

Apart from :mod:`dprm.itemsets.candidates`, which calls them through
:func:`dprm.precompiled.kernel`, so that a run with the ahead-of-time build never
imports numba; that module documents the representation (itemsets packed into
64-bit words, an open-addressing table whose all-zero row is an empty slot).
"""

import numpy as np
from numba import njit


# --- from dprm.itemsets.candidates ---

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


# --- from dprm.itemsets.ison ---

@njit(cache=True)
def _extend(level, bits, offsets, sizes, item_column, item_code):  # pragma: no cover - compiled
    """Every row of ``level`` extended by each item, at a column after its last one, whose bitset over the
    paths meets the AND of the row's items' bitsets (rows in order, items in order; a row with a code
    beyond its column's size on the paths has none)."""
    n_rows, m = level.shape
    n_items, words = bits.shape
    inside = np.empty(words, dtype=np.uint64)
    used = np.empty(words, dtype=np.int64)
    out = np.empty((max(16, 4 * n_rows), m), dtype=np.int16)
    n_out = 0
    for r in range(n_rows):
        last = -1
        for c in range(m):
            v = level[r, c]
            if v < 0:
                continue
            if v >= sizes[c]:
                last = -2
                break
            item = offsets[c] + v
            if last == -1:
                for w in range(words):
                    inside[w] = bits[item, w]
            else:
                for w in range(words):
                    inside[w] &= bits[item, w]
            last = c
        if last < 0:
            continue
        n_used = 0  # the words of the AND that hold a path: only those can meet an item's bitset
        for w in range(words):
            if inside[w] != np.uint64(0):
                used[n_used] = w
                n_used += 1
        for item in range(offsets[last] + sizes[last], n_items):
            hit = False
            for i in range(n_used):
                w = used[i]
                if bits[item, w] & inside[w] != np.uint64(0):
                    hit = True
                    break
            if not hit:
                continue
            if n_out == out.shape[0]:
                bigger = np.empty((2 * out.shape[0], m), dtype=np.int16)
                bigger[:n_out] = out
                out = bigger
            for c in range(m):
                out[n_out, c] = level[r, c]
            out[n_out, item_column[item]] = item_code[item]
            n_out += 1
    return out[:n_out].copy()
