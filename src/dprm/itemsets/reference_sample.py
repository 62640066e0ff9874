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

from dprm.precompiled import kernel

__all__ = ["ReferenceSample"]


class ReferenceSample:
    """A chain's reference sample as one packed bitset per (column, category)."""

    def __init__(self, codes: np.ndarray, sizes: Sequence[int]) -> None:
        self.n_rows = len(codes)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        # packed column by column: a sample of sample_chain (Fortran-ordered) is read in place
        columns = np.ascontiguousarray(np.asarray(codes, dtype=np.int64).T)
        self.bitsets = kernel("dprm.itemsets._kernels", "_pack_codes")(
            columns, self.offsets, np.asarray(sizes, dtype=np.int64),
            max(1, -(-self.n_rows // 64)))  # the layout of dprm.data.literal_index.pack_rows

    def supports(self, codes: np.ndarray) -> np.ndarray:
        """The share of the sample's rows holding each (partial) assignment."""
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        # only the columns some row assigns: a column no row assigns changes neither the rows' lexicographic order
        # nor any count (a wide table's candidates hold a few dozen of its columns; every one was sorted and scanned)
        used = np.flatnonzero((codes >= 0).any(axis=0))
        codes = np.ascontiguousarray(codes[:, used])
        order = np.lexsort(codes.T[::-1]) if codes.size else np.arange(len(codes))
        counts = kernel("dprm.itemsets._kernels", "_count_matches")(self.bitsets, np.ascontiguousarray(self.offsets[used]),
                                                                    codes, order, self.n_rows)
        return counts / self.n_rows


