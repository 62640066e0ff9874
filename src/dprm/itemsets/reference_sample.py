"""A chain's reference sample: rows drawn once from the chain, indexed as bitsets to count supports fast.

The estimate answers a partial assignment that a chain cannot compute exactly by the
share of that chain's reference sample holding it (see *Inference on partial
assignments* in :mod:`dprm.itemsets.estimator`). The sample is held as one packed
bitset per (column, category), so a support costs a few AND and popcount operations;
code rows are visited in lexicographic order so that the AND of the items two
neighbours share is computed once.

Examples
--------
>>> import numpy as np
>>> sample = ReferenceSample(np.array([[0, 1], [0, 0], [1, 1], [0, 1]]), [2, 2])
>>> sample.supports(np.array([[0, 1], [-1, 1], [-1, -1], [1, 0]])).tolist()
[0.5, 0.75, 1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from dprm.data.literal_index import pack_rows
from dprm.precompiled import kernel

__all__ = ["ReferenceSample"]


class ReferenceSample:
    """A chain's reference sample as one packed bitset per (column, category)."""

    def __init__(self, codes: np.ndarray, sizes: Sequence[int]) -> None:
        self.n_rows = len(codes)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        masks = np.zeros((int(np.sum(sizes)), len(codes)), dtype=bool)
        for j, size in enumerate(sizes):
            masks[self.offsets[j] + codes[:, j], np.arange(len(codes))] = True
        self.bitsets = np.ascontiguousarray(pack_rows(masks))

    def supports(self, codes: np.ndarray) -> np.ndarray:
        """The share of the sample's rows holding each (partial) assignment."""
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        order = np.lexsort(codes.T[::-1]) if codes.size else np.arange(len(codes))
        counts = kernel("dprm.itemsets.reference_sample", "_count_matches")(self.bitsets, self.offsets, codes, order, self.n_rows)
        return counts / self.n_rows


@njit(cache=True)
def _popcount64(x):  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True)
def _count_matches(bitsets, offsets, codes, order, n_rows):  # pragma: no cover - compiled
    """Rows of the sample holding each code row, visiting rows in ``order`` (lexicographic by code)
    so that the AND of the items two neighbours share is computed once (a stack of prefix ANDs)."""
    n, m = codes.shape
    words = bitsets.shape[1]
    out = np.empty(n)
    stack = np.empty((m + 1, words), dtype=np.uint64)  # stack[d]: AND of the first d items of the row
    previous = -1
    for t in range(n):
        r = order[t]
        start = 0
        depth = 0
        if previous >= 0:  # the columns before the first difference are shared with the previous row
            while start < m and codes[r, start] == codes[previous, start]:
                if codes[r, start] >= 0:
                    depth += 1
                start += 1
        for j in range(start, m):
            c = codes[r, j]
            if c < 0:
                continue
            row = offsets[j] + c
            if depth == 0:
                for w in range(words):
                    stack[1, w] = bitsets[row, w]
            else:
                for w in range(words):
                    stack[depth + 1, w] = stack[depth, w] & bitsets[row, w]
            depth += 1
        previous = r
        if depth == 0:  # nothing assigned: every row matches
            out[r] = n_rows
            continue
        total = np.uint64(0)
        for w in range(words):
            total += _popcount64(stack[depth, w])
        out[r] = float(total)
    return out
