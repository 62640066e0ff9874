"""The score of many candidate conditionals at once: ``n·R`` of their count tables, from packed bitsets.

The exponential mechanism of :func:`~dprm.itemsets.private_parents.release_conditional`
scores every public candidate ``(X, Π)`` by the dependence ``n·R`` of its table
(:func:`dependence` of :func:`_table`, the reference, defined here). A release of a wide table has
thousands of candidates (about :data:`~dprm.itemsets.private_parents.MAX_CANDIDATES`),
and counting each table on its own, a dozen numpy calls over the rows per candidate,
took minutes for a table of 500 columns (about 0.4 s per release of 2,000 rows). Here
the candidates are counted together:

* each column's categories are packed bitsets over the rows (one 64-bit word per 64
  rows, the layout of :func:`dprm.data.literal_index.pack_rows`), so a cell of a
  table ``(π, x)`` is the popcount of the AND of its items' bitsets: ``cells × words``
  operations instead of a pass over the rows, vectorised over all the candidates of
  one table shape (each parent's categories and the target's);
* ``n·R`` is computed for all the tables of one shape at once, by the same
  floating-point operations as :func:`dependence`
  (exact integer sums; ``|c - r·s / n|`` cell by cell; each table's sum over its cells,
  in their order, by numpy's summation of a row), so the scores, and hence the
  mechanism's choice, are those of the candidate-by-candidate computation bit for bit
  (``tests/test_itemsets_private_dependence.py`` checks it on random tables).

Only the counting changes: the candidates, their scores, the sensitivity (3) and the
budget are those of :mod:`~dprm.itemsets.private_parents`. Tables of more than
:data:`BITSET_CELLS` cells (where a pass over the rows is cheaper than ``cells ×
words``) are counted one by one as before.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> codes = rng.integers(0, 3, size=(500, 4))
>>> candidates = [(0, ()), (1, (0,)), (2, (0, 3)), (3, (1, 2))]
>>> batch = dependences(codes, candidates, [3, 3, 3, 3])
>>> batch.tolist() == [dependence(_table(codes, x, p, [3, 3, 3, 3])) for x, p in candidates]
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["BITSET_CELLS", "candidate_arrays", "dependence", "dependences", "table_dependences"]

#: Most cells of a table counted from bitsets (``cells × ⌈n / 64⌉`` word operations; a
#: pass over the rows costs about ``4 n``): larger tables are counted one by one.
BITSET_CELLS = 256
#: Most 64-bit words of the AND arrays of one batch (bounds memory: 8 MB).
_BATCH_WORDS = 1 << 20
#: Most flags (bytes) of the categories packed at once into bitsets (bounds memory: 16 MB).
_PACK_FLAGS = 1 << 24


def _configurations(codes: np.ndarray, parents: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """Each row's configuration of ``parents`` as one mixed-radix code (the first parent most significant)."""
    config = np.zeros(len(codes), dtype=np.int64)
    for p in parents:
        config = config * sizes[p] + codes[:, p]
    return config


def _table(codes: np.ndarray, target: int, parents: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """Counts of (configuration, target category), shape ``(configurations, |X|)``."""
    configs = math.prod(sizes[p] for p in parents)
    k = sizes[target]
    cell = _configurations(codes, parents, sizes) * k + codes[:, target]
    return np.bincount(cell, minlength=configs * k).reshape(configs, k)


def dependence(table: np.ndarray) -> float:
    """``n·R``: half the L1 distance, in rows, between a count table and the product of its margins.

    Examples
    --------
    >>> dependence(np.array([[50, 0], [0, 50]])), dependence(np.array([[25, 25], [25, 25]]))
    (50.0, 0.0)
    """
    table = np.asarray(table, dtype=np.float64)
    n = table.sum()
    if n <= 0:
        return 0.0
    product = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    return 0.5 * float(np.abs(table - product).sum())


def table_dependences(tables: np.ndarray) -> np.ndarray:
    """``n·R`` of each table of ``tables`` (shape ``(b, configurations, |X|)``), as :func:`dependence` computes it.

    Examples
    --------
    >>> table_dependences(np.array([[[50, 0], [0, 50]], [[25, 25], [25, 25]], [[0, 0], [0, 0]]])).tolist()
    [50.0, 0.0, 0.0]
    """
    table = np.asarray(tables, dtype=np.float64)
    b = table.shape[0]
    n = table.reshape(b, -1).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty table: 0, as dependence() returns
        product = table.sum(axis=2)[:, :, None] * table.sum(axis=1)[:, None, :] / n[:, None, None]
    total = np.abs(table - product).reshape(b, -1).sum(axis=1)  # each table's cells summed as one row
    return np.where(n > 0, 0.5 * total, 0.0)


def candidate_arrays(candidates: Sequence[tuple[int, tuple[int, ...]]], sizes: Sequence[int]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates as arrays: targets, parents (one slot per parent of the longest set, ``-1`` past a set's
    end) and each slot's number of configurations (1 for an empty slot; their product is the table's).

    Examples
    --------
    >>> [a.tolist() for a in candidate_arrays([(0, ()), (2, (1,)), (1, (0, 2))], [2, 3, 4])]
    [[0, 2, 1], [[-1, -1], [1, -1], [0, 2]], [[1, 1], [3, 1], [2, 4]]]
    """
    count = len(candidates)
    targets, sets = zip(*candidates) if count else ((), ())
    target = np.array(targets, dtype=np.int64)
    lengths = np.fromiter(map(len, sets), dtype=np.int64, count=count)
    parents = np.full((count, int(lengths.max()) if count else 0), -1, dtype=np.int64)
    if parents.size:
        flat = np.fromiter(itertools.chain.from_iterable(sets), dtype=np.int64, count=int(lengths.sum()))
        ends = np.cumsum(lengths)
        parents[np.repeat(np.arange(count), lengths), np.arange(len(flat)) - np.repeat(ends - lengths, lengths)] = flat
    size = np.asarray(sizes, dtype=np.int64)
    return target, parents, np.where(parents >= 0, size[np.maximum(parents, 0)], 1)


def dependences(codes: np.ndarray, candidates: Sequence[tuple[int, tuple[int, ...]]], sizes: Sequence[int],
                arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``n·R`` of each candidate's table, equal bit for bit to ``dependence(_table(codes, X, Π, sizes))``.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n_rows, n_columns)
        The rows, every column's code in its public domain (any memory order).
    candidates : sequence of (target column, parent columns)
    sizes : sequence of int
        Every column's number of public categories.
    arrays : tuple of numpy.ndarray, optional
        :func:`candidate_arrays` of ``candidates``, when the caller has them.

    Returns
    -------
    numpy.ndarray of float64, one score per candidate
    """
    out = np.empty(len(candidates))
    if not candidates:
        return out
    codes = np.asarray(codes)
    words = max(1, -(-codes.shape[0] // 64))
    size = np.asarray(sizes, dtype=np.int64)
    target, parents, shape = candidate_arrays(candidates, sizes) if arrays is None else arrays
    k = size[target]
    packed = shape.prod(axis=1) * k <= BITSET_CELLS
    for i in np.flatnonzero(~packed):  # a pass over the rows is cheaper
        x, p = candidates[i]
        out[i] = dependence(_table(codes, x, p, sizes))
    chosen = np.flatnonzero(packed)
    if not len(chosen):
        return out
    used = np.concatenate([target[chosen], parents[chosen].ravel()])
    bits, first = _item_bitsets(codes, size, np.flatnonzero(np.bincount(used[used >= 0], minlength=len(size))),
                                words)
    key = k[chosen]  # the table's shape: every slot's configurations and the target's categories
    for slot in range(shape.shape[1]):
        key = key * (BITSET_CELLS + 1) + shape[chosen, slot]
    ranked = np.argsort(key, kind="stable")
    for group in np.split(chosen[ranked], np.flatnonzero(np.diff(key[ranked])) + 1):  # one table shape each
        widths, configurations = shape[group[0]].tolist(), int(shape[group[0]].prod())
        step = max(1, _BATCH_WORDS // (configurations * int(k[group[0]]) * words))
        for start in range(0, len(group), step):
            batch = group[start:start + step]
            counts = _counts(bits, first, parents[batch], widths, target[batch], int(k[group[0]]), words)
            out[batch] = table_dependences(counts)
    return out


def _item_bitsets(codes: np.ndarray, size: np.ndarray, columns: np.ndarray, words: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Packed bitsets of the categories of ``columns`` (one row per (column, category)) and each column's first row.

    ``first[j]`` is the row of column ``j``'s category 0 (0 for a column not given). Bit
    ``r`` of word ``r // 64`` is set when row ``r`` holds the category; bits past the
    last row are 0.
    """
    first = np.zeros(len(size), dtype=np.int64)
    widths = size[columns]
    first[columns] = np.concatenate([[0], np.cumsum(widths)[:-1]])
    bits = np.empty((int(widths.sum()), words), dtype=np.uint64)
    n_rows = codes.shape[0]
    chunk = max(1, _PACK_FLAGS // (words * 64))  # categories packed at once
    for j, width in zip(columns.tolist(), widths.tolist()):
        for start in range(0, width, chunk):
            stop = min(width, start + chunk)
            holds = np.zeros((stop - start, words * 64), dtype=bool)  # padded to whole words
            np.equal(codes[:, j], np.arange(start, stop)[:, None], out=holds[:, :n_rows])
            bits[first[j] + start:first[j] + stop] = np.packbits(holds, axis=1, bitorder="little").view(np.uint64)
    return bits, first


def _counts(bits: np.ndarray, first: np.ndarray, parents: np.ndarray, widths: list[int], target: np.ndarray,
            k: int, words: int) -> np.ndarray:
    """Counts ``(candidate, configuration, x)`` of candidates of one table shape: popcounts of their items' ANDs.

    Configurations in mixed radix, the first parent most significant (as
    :func:`_configurations`). An empty slot (``-1``) is one configuration holding every
    row: it is skipped, or its bitset is all ones; the target's bitsets, 0 past the last
    row, bound every AND.
    """
    every = np.uint64(0xFFFFFFFFFFFFFFFF)
    joint = None  # (candidate, configuration of the slots so far, word)
    for slot, width in enumerate(widths):
        p = parents[:, slot]
        if (p < 0).all():
            continue
        held = bits[first[np.maximum(p, 0)][:, None] + np.arange(width)]
        if (p < 0).any():
            held = np.where((p >= 0)[:, None, None], held, every)
        joint = held if joint is None else (joint[:, :, None, :] & held[:, None, :, :]).reshape(len(p), -1, words)
    items = bits[first[target][:, None] + np.arange(k)]
    cells = items[:, None, :, :] if joint is None else joint[:, :, None, :] & items[:, None, :, :]
    return np.bitwise_count(cells).sum(axis=-1, dtype=np.int64)
