"""Where the MCMC tree chains keep their rows: pre-order layouts and row bitsets' sizes.

Plain numpy, apart from the compiled kernels (:mod:`dprm.trees._kernels`,
:mod:`dprm.trees._bit_kernels`) that use these layouts, so that preparing a chain
does not import numba.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bitset_bytes", "preorder", "tree_layout"]


def preorder(depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Pre-order rank of each heap position of a complete tree, and of its subtree's end.

    ``rank[p]`` numbers the positions node first, then its left subtree, then its right
    subtree; ``end[p]`` is one past the last rank of ``p``'s subtree, so the positions
    below ``p`` (``p`` included) are those of ranks ``rank[p] .. end[p] - 1``.

    Examples
    --------
    >>> rank, end = preorder(2)
    >>> rank.tolist(), end.tolist()
    ([0, 1, 4, 2, 3, 5, 6], [7, 4, 7, 3, 4, 6, 7])
    """
    n_positions = 2 ** (depth + 1) - 1
    rank = np.zeros(n_positions, dtype=np.int64)
    end = np.zeros(n_positions, dtype=np.int64)
    for position in range(n_positions):
        level = int(np.log2(position + 1))
        size = 2 ** (depth - level + 1) - 1  # positions in the subtree of `position`
        if position > 0:
            parent = (position - 1) // 2
            left = position == 2 * parent + 1
            rank[position] = rank[parent] + 1 + (0 if left else size)
        end[position] = rank[position] + size
    return rank, end


def tree_layout(cell: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``order`` (rows sorted by the pre-order rank of their cell) and ``offset``.

    The rows of the cell of rank ``r`` are ``order[offset[r] : offset[r + 1]]``, in
    increasing row order.

    Examples
    --------
    >>> rank, _ = preorder(1)   # positions 0, 1, 2 have ranks 0, 1, 2
    >>> order, offset = tree_layout(np.array([2, 1, 1, 0], dtype=np.uint8), rank)
    >>> order.tolist(), offset.tolist()
    ([3, 1, 2, 0], [0, 1, 3, 4])
    """
    keys = rank[cell]
    order = np.argsort(keys, kind="stable").astype(np.int32)
    offset = np.zeros(rank.size + 1, dtype=np.int64)
    offset[1:] = np.cumsum(np.bincount(keys, minlength=rank.size))
    return order, offset


def bitset_bytes(n_rows: int, n_sets: int) -> int:
    """Bytes of ``n_sets`` row bitsets over ``n_rows`` rows (:func:`dprm.trees._bit_kernels.split_bitsets`).

    Examples
    --------
    >>> bitset_bytes(115_200, 1)   # 1,800 words of 8 bytes
    14400
    """
    return n_sets * ((n_rows + 63) // 64) * 8
