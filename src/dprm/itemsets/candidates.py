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
        return kernel("dprm.itemsets._candidate_kernels", "_encode")(rows, self.offsets, self.n_words, self.n_column_words)

    def decode(self, items: np.ndarray) -> np.ndarray:
        """The code rows (int16, -1 where a column is absent) of item bitsets."""
        return kernel("dprm.itemsets._candidate_kernels", "_decode")(np.ascontiguousarray(items, dtype=np.uint64), self.item_column, self.item_code,
                       self.n_columns)

    def columns_of(self, items: np.ndarray) -> np.ndarray:
        """The column masks of item bitsets."""
        return kernel("dprm.itemsets._candidate_kernels", "_columns_of")(np.ascontiguousarray(items, dtype=np.uint64), self.item_column, self.n_column_words)


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
        self.table = kernel("dprm.itemsets._candidate_kernels", "_rehash")(self.table, 1 << int(2 * need - 1).bit_length())

    def add(self, keys: np.ndarray) -> np.ndarray:
        """Add keys; return which were not in the set before (a key repeated in ``keys`` counts once)."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, self.n_words)
        if len(keys) and not keys.any(axis=1).all():
            raise ValueError("the empty itemset cannot be stored")
        self.reserve(len(keys))
        return kernel("dprm.itemsets._candidate_kernels", "_add_many")(self.table, self.count, keys)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Which keys are in the set."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, self.n_words)
        return kernel("dprm.itemsets._candidate_kernels", "_contains_many")(self.table, keys)


def without_rejected_subsets(items: np.ndarray, rejected: KeySet) -> np.ndarray:
    """Which item bitsets have no subset one item smaller in ``rejected``."""
    items = np.ascontiguousarray(items, dtype=np.uint64).reshape(-1, rejected.n_words)
    if len(rejected) == 0:
        return np.ones(len(items), dtype=bool)
    return kernel("dprm.itemsets._candidate_kernels", "_keep_without_rejected")(items, rejected.table)


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
        n, dropped = kernel("dprm.itemsets._candidate_kernels", "_merge_block")(a_items, a_columns, b_items, b_columns, start, stop, seen.table, seen.count,
                                  rejected.table, len(rejected) > 0, limit, buffer)
        out.append(buffer[:n].copy())
        pruned += dropped
        start = stop
    items = np.vstack(out) if out else np.zeros((0, codec.n_words), dtype=np.uint64)
    return items, pruned


