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
    held : sequence of array-like of int, optional
        Per column, the codes (ascending) the bitsets hold; by default every code
        ``0 .. size - 1``. ISON holds only the items that can be frequent (its single items
        reaching θ), so that a column declared with 32,767 categories of which two are
        frequent takes two bits, not 32,767. Code rows in and out keep the columns' own
        codes; a held code's bit is its rank among its column's held codes, so the bits
        keep the items' order. Encoding an item not held is a ``ValueError``.

    Examples
    --------
    >>> codec = ItemCodec([4, 3], held=[[1, 3], [2]])
    >>> items, _ = codec.encode(np.array([[3, 2], [1, -1]]))
    >>> codec.n_items, items.tolist(), codec.decode(items).tolist()
    (3, [[6], [1]], [[3, 2], [1, -1]])
    """

    def __init__(self, sizes: Sequence[int], held: Sequence[Sequence[int] | np.ndarray] | None = None) -> None:
        full = self._full = np.asarray(sizes, dtype=np.int64)
        self.n_columns = len(full)
        if held is None:
            self.sizes = full
            codes = [np.arange(size, dtype=np.int64) for size in full]
        else:
            codes = [np.asarray(c, dtype=np.int64).reshape(-1) for c in held]
            if len(codes) != self.n_columns or any(len(c) and (c[0] < 0 or c[-1] >= size or (np.diff(c) <= 0).any())
                                                   for c, size in zip(codes, full)):
                raise ValueError("held must list, per column, ascending codes within its size")
            self.sizes = np.array([len(c) for c in codes], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.n_items = int(self.sizes.sum())
        self.n_words = max(1, -(-self.n_items // 64))
        self.n_column_words = max(1, -(-self.n_columns // 64))
        self.item_column = np.repeat(np.arange(self.n_columns), self.sizes).astype(np.int64)
        # the code a bit decodes to: its column's own code (the compiled decoding writes it as it stands)
        self.item_code = np.concatenate(codes + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
        self._rank: np.ndarray | None = None  # a column's code -> its held rank (None: every code held, in place)
        if held is not None and not np.array_equal(self.sizes, full):
            # one lookup for every column: code v of column j at base[j] + 1 + v, the absent -1 at base[j]
            self._base = np.concatenate([[0], np.cumsum(full + 1)[:-1]]).astype(np.int64)
            self._rank = np.full(int((full + 1).sum()), -2, dtype=np.int64)  # -2: a code not held
            self._rank[self._base] = -1
            for j, c in enumerate(codes):
                self._rank[self._base[j] + 1 + c] = np.arange(len(c))

    def ranks(self, rows: np.ndarray) -> np.ndarray:
        """Code rows with each code replaced by its rank among its column's held codes (int64, -1 kept)."""
        rows = np.ascontiguousarray(np.atleast_2d(rows), dtype=np.int64)
        if self._rank is None:
            return rows
        ranked = self._rank[rows + (self._base + 1)[None, :]]
        if (ranked < -1).any():
            raise ValueError("a code row holds an item the codec does not hold")
        return ranked

    def holds_cells(self, rows: np.ndarray) -> np.ndarray:
        """Which cells of code rows are items the codec holds (a -1 cell is none)."""
        rows = np.ascontiguousarray(np.atleast_2d(rows), dtype=np.int64)
        if self._rank is None:
            return (rows >= 0) & (rows < self.sizes[None, :])
        inside = (rows >= 0) & (rows < self._full[None, :])
        return inside & (self._rank[np.where(inside, rows, -1) + (self._base + 1)[None, :]] >= 0)

    def holds(self, rows: np.ndarray) -> np.ndarray:
        """Which code rows hold only items the codec holds."""
        rows = np.atleast_2d(rows)
        return (self.holds_cells(rows) == (rows >= 0)).all(axis=1)

    def codes_of_ranks(self, ranked: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`ranks`: code rows (int16) of rows of ranks."""
        ranked = np.atleast_2d(np.asarray(ranked, dtype=np.int64))
        codes = np.append(self.item_code, 0)[np.where(ranked >= 0, self.offsets[None, :] + ranked, self.n_items)]
        return np.where(ranked >= 0, codes, -1).astype(np.int16)

    def encode(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The item bitsets ``(n, n_words)`` and column masks ``(n, n_column_words)`` of code rows."""
        return kernel("dprm.itemsets._candidate_kernels", "_encode")(self.ranks(rows), self.offsets, self.n_words,
                                                                     self.n_column_words)

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


