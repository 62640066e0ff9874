"""The in-process MCMC tree chain on row bitsets (numba).

The same chain as :func:`dprm.trees._kernels.run_chain` (same proposals, same integer
count changes, same decisions from the same pre-drawn numbers, hence the same final
state), with another way of finding the rows a step moves. Rows are bits of
``uint64`` words (row ``r`` is bit ``r % 64`` of word ``r // 64``):

* per candidate split ``s``, ``holds[s]``: the rows whose value of the split's
  attribute is known and passes the test; per attribute ``a``, ``absent[a]``: the
  rows whose value is missing (:func:`split_bitsets`, built once per view);
* per tree and internal heap position ``p``, ``below[p]``: the rows whose cell is
  ``p`` or below it. ``below[root]`` is every row; a left child's rows are its
  parent's rows where the parent's test holds, a right child's where it fails
  (neither holds nor is missing): word operations on the split bitsets.

A step's moved rows are ``below[node] & ((holds[old] ^ holds[new]) | (absent[old
attribute] ^ absent[new attribute]))``, word by word: a row's outcome at the node
(missing / holds / fails) is the pair of its two bits, so it changes exactly where
one of them does. Each word of moved rows is then sent down the node's subtree by
word operations too (at each internal position: the rows missing its attribute stay
there, the rest go left where its split holds and right where it does not, under
the new split at the node and the unchanged ones below), and only the set bits of
the words that reach each cell are visited, to count them exactly as
:func:`~dprm.trees._kernels.shard_delta` does. An accepted step writes the moved
rows' cells (and, for the first tree of a pair, their class in the other tree) and
rebuilds ``below`` of the node's internal descendants by word operations. Neither
the literal codes nor a per-row layout are read.

Why: at 115,200 rows the layout kernel's step was bound by one pass over the rows
below the node (a gather of the new split's code per row), the routing of the moved
rows (gathers of their codes in rows of 115 kB) and the commit's second pass over
the node's rows; here the first two are passes over ``rows / 64`` words of a few
bitsets of 14.4 kB, and the commit touches only the moved rows (about 4 times less
CPU a step, ``docs/performance.md``, appendix, round "3, chains: row bitsets"). Memory: one bit
per row and candidate split, so :class:`~dprm.trees.private.ChainJob` uses this
kernel only while that stays small (:data:`dprm.trees.private.BIT_CHAIN_BYTES`). The
Ray shards keep the layout kernels of :mod:`dprm.trees._kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from dprm.kernel_cache import KERNEL_DEPENDENCIES, tie_to_sources
from dprm.trees._kernels import add_moves, chain_start, decide, next_move, variance_stop

__all__ = ["run_bit_chain", "split_bitsets"]


@njit(cache=True, nogil=True)
def split_bitsets(codes, missing, splits, starts, sizes):
    """``(holds, absent)``: the rows each split's test holds on, the rows each attribute misses.

    ``codes`` is the literal index's ``(attributes, rows)`` matrix with missing code
    ``missing``; ``splits`` rows are (attribute, code, numeric), the splits of
    attribute ``a`` are ``starts[a] : starts[a] + sizes[a]``. A Boolean or categorical
    split holds where the code equals its code, a numeric one where the code is at
    most its threshold code; a missing value holds no test. One pass over each
    attribute's codes (a bitset per code), then the numeric thresholds as prefix
    unions of those.

    Examples
    --------
    >>> codes = np.array([[0, 1, 255, 1], [2, 0, 1, 255]], dtype=np.uint8)
    >>> splits = np.array([[0, 1, 0], [1, 0, 1], [1, 1, 1]])   # a0 == 1; a1 <= 0; a1 <= 1
    >>> holds, absent = split_bitsets(codes, 255, splits, np.array([0, 1]), np.array([1, 2]))
    >>> [int(w) for w in holds[:, 0]], [int(w) for w in absent[:, 0]]   # rows 0..3 are bits 0..3
    ([10, 2, 6], [4, 8])
    """
    n_attributes, n_rows = codes.shape
    n_words = (n_rows + 63) // 64
    holds = np.zeros((splits.shape[0], n_words), dtype=np.uint64)
    absent = np.zeros((n_attributes, n_words), dtype=np.uint64)
    top = 0
    for s in range(splits.shape[0]):
        top = max(top, splits[s, 1])
    equal = np.zeros((top + 1, n_words), dtype=np.uint64)
    one = np.uint64(1)
    for a in range(n_attributes):
        last = -1
        for s in range(starts[a], starts[a] + sizes[a]):
            last = max(last, splits[s, 1])
        equal[: last + 1, :] = 0
        values = codes[a]
        for row in range(n_rows):
            value = values[row]
            bit = one << np.uint64(row & 63)
            if value == missing:
                absent[a, row >> 6] |= bit
            elif value <= last:
                equal[value, row >> 6] |= bit
        if sizes[a] == 0:
            continue
        if splits[starts[a], 2] == 1:  # numeric: at most the threshold
            for value in range(1, last + 1):
                for w in range(n_words):
                    equal[value, w] |= equal[value - 1, w]
        for s in range(starts[a], starts[a] + sizes[a]):
            holds[s, :] = equal[splits[s, 1]]
    return holds, absent


@njit(cache=True, nogil=True)
def _rebuild_below(below, node, node_split, splits, holds, absent):
    """``below`` of the internal positions under ``node`` from ``below[node]`` and the splits."""
    n_internal = below.shape[0]
    n_words = below.shape[1]
    first, width = 2 * node + 1, 2
    while first < n_internal:
        for q in range(first, min(first + width, n_internal)):
            parent = (q - 1) // 2
            s = node_split[parent]
            test = holds[s]
            if q == 2 * parent + 1:  # left: the parent's test holds
                for w in range(n_words):
                    below[q, w] = below[parent, w] & test[w]
            else:  # right: it fails (known, and does not hold)
                gone = absent[splits[s, 0]]
                for w in range(n_words):
                    below[q, w] = below[parent, w] & ~(test[w] | gone[w])
        first, width = 2 * first + 1, 2 * width


@njit(cache=True, nogil=True)
def _initial_below(n_rows, n_internal, node_split, splits, holds, absent):
    n_words = (n_rows + 63) // 64
    below = np.zeros((n_internal, n_words), dtype=np.uint64)
    below[0, :] = ~np.uint64(0)
    if n_rows % 64:
        below[0, n_words - 1] = (np.uint64(1) << np.uint64(n_rows % 64)) - np.uint64(1)
    _rebuild_below(below, 0, node_split, splits, holds, absent)
    return below


@njit(cache=True, nogil=True)
def _bit_delta(cell, node_split, attribute, target, other_cell, retarget, depth, below, holds, absent, node,
               old_split, new_split, old_attribute, new_attribute, delta, other_delta, moved_rows, moved_cells,
               masks, inner_split, inner_attribute):
    """The change of the class counts if ``node`` took ``new_split``; returns the moved rows' count.

    As :func:`dprm.trees._kernels.shard_delta` (same ``delta``/``other_delta``, same
    ``moved_rows[:count]``/``moved_cells[:count]``, here grouped by word and new
    cell), from the bitsets (module docstring): each word of moved rows is sent down
    the node's subtree by word operations, then the rows of each cell it reaches
    are visited. Scratch: ``masks`` (one word per heap position), ``inner_split``
    and ``inner_attribute`` (one entry per internal node).
    """
    first_leaf = 2**depth - 1
    mask = below[node]
    held, holds_now = holds[old_split], holds[new_split]
    gone, gone_now = absent[old_attribute], absent[new_attribute]
    # The node's subtree, level by level: internal positions inner[0 : n_inner]
    # (from ``node`` on), then the leaves from ``first_leaf_here``, ``n_leaves`` of them.
    n_inner = 0
    first, width = node, 1
    while first < first_leaf:
        for q in range(first, first + width):
            inner_split[n_inner] = new_split if q == node else node_split[q]
            inner_attribute[n_inner] = new_attribute if q == node else attribute[q]
            n_inner += 1
        first, width = 2 * first + 1, 2 * width
    first_leaf_here, n_leaves = first, width
    count = 0
    for w in range(mask.size):
        moved = mask[w] & ((held[w] ^ holds_now[w]) | (gone[w] ^ gone_now[w]))
        if moved == 0:
            continue
        base = w * 64
        masks[node] = moved
        first, width, j = node, 1, 0
        while first < first_leaf:
            for q in range(first, first + width):
                here = masks[q]
                test = holds[inner_split[j], w]
                missing = absent[inner_attribute[j], w]
                j += 1
                masks[2 * q + 1] = here & test
                masks[2 * q + 2] = here & ~(test | missing)
                dropped = here & missing
                while dropped:  # rows whose value is missing stay at q
                    moved_rows[count] = base + np.int64(trailing_zeros(dropped))
                    moved_cells[count] = q
                    dropped &= dropped - np.uint64(1)
                    count += 1
            first, width = 2 * first + 1, 2 * width
        for q in range(first_leaf_here, first_leaf_here + n_leaves):
            rows = masks[q]
            while rows:
                moved_rows[count] = base + np.int64(trailing_zeros(rows))
                moved_cells[count] = q
                rows &= rows - np.uint64(1)
                count += 1
    add_moves(moved_rows, moved_cells, count, cell, target, delta, retarget, first_leaf, other_cell, other_delta)
    return count


@njit(cache=True, nogil=True)
def _bit_commit(cell, attribute, other_target, retarget, depth, below, holds, absent, node_split, splits, node,
                new_attribute, moved_rows, moved_cells, count):
    """Apply an accepted proposal (``node_split[node]`` already the new split)."""
    first_leaf = 2**depth - 1
    attribute[node] = new_attribute
    for k in range(count):
        row = moved_rows[k]
        new_cell = moved_cells[k]
        cell[row] = new_cell
        if retarget:
            other_target[row] = new_cell - first_leaf if new_cell >= first_leaf else -1
    if count:
        _rebuild_below(below, node, node_split, splits, holds, absent)


@njit(cache=True, nogil=True)
def run_bit_chain(
    splits_a, starts_a, sizes_a, usable_a, holds_a, absent_a,
    splits_b, starts_b, sizes_b, usable_b, holds_b, absent_b,
    node_split_a, cell_a, counts_a, target_a,
    node_split_b, cell_b, counts_b, target_b,
    paired, score_kind, n_rows, labelled, depth, scale,
    choice, local_u, attribute_u, split_u, log_u, local_share,
    variance_window, variance_threshold, start, stop, window,
):
    """Run a Metropolis–Hastings chain over one tree or a pair of trees, in place, on row bitsets.

    The arguments and the result are those of :func:`dprm.trees._kernels.run_chain`
    with each view's :func:`split_bitsets` (``holds_*``, ``absent_*``) after its split
    tables instead of its literal codes, and without the pre-order layout (``order``,
    ``offset``): the same chain, step for step. The trees' ``below`` bitsets are built
    from the current splits at each call, so a chain can run in chunks as with
    ``run_chain``.
    """
    n = cell_a.size
    first_leaf = 2**depth - 1
    n_internal = first_leaf
    attribute_a = splits_a[node_split_a, 0].copy()  # the attribute of each internal node
    attribute_b = splits_b[node_split_b, 0].copy()
    below_a = _initial_below(n, n_internal, node_split_a, splits_a, holds_a, absent_a)
    below_b = _initial_below(n, n_internal, node_split_b, splits_b, holds_b, absent_b)
    delta_a, delta_b, scratch_a, scratch_b, score = chain_start(counts_a, counts_b, score_kind, n_rows, labelled)
    moved_rows = np.empty(n, dtype=np.int64)
    moved_cells = np.empty(n, dtype=np.int64)
    masks = np.zeros(2 ** (depth + 1) - 1, dtype=np.uint64)
    inner_split = np.empty(n_internal, dtype=np.int64)
    inner_attribute = np.empty(n_internal, dtype=np.int64)
    accepted = steps = 0
    for i in range(start, stop):
        if variance_stop(window, i, score, variance_window, variance_threshold):
            break
        steps += 1
        side, node, old, new, log_ratio = next_move(
            i, paired, n_internal, choice, local_u, attribute_u, split_u, local_share, node_split_a, splits_a,
            starts_a, sizes_a, usable_a, node_split_b, splits_b, starts_b, sizes_b, usable_b, delta_a, delta_b)
        if new == old:  # no change: the score stays, and log u < 0 always accepts
            accepted += 1
            continue
        if side == 0:
            new_attribute = splits_a[new, 0]
            count = _bit_delta(cell_a, node_split_a, attribute_a, target_a, cell_b, paired, depth, below_a, holds_a,
                               absent_a, node, old, new, attribute_a[node], new_attribute, delta_a, delta_b,
                               moved_rows, moved_cells, masks, inner_split, inner_attribute)
        else:
            new_attribute = splits_b[new, 0]
            count = _bit_delta(cell_b, node_split_b, attribute_b, target_b, cell_a, False, depth, below_b, holds_b,
                               absent_b, node, old, new, attribute_b[node], new_attribute, delta_b, delta_a,
                               moved_rows, moved_cells, masks, inner_split, inner_attribute)
        taken, score = decide(log_u[i], score, scale, log_ratio, counts_a, counts_b, delta_a, delta_b, scratch_a,
                              scratch_b, score_kind, n_rows, labelled)
        if taken:
            accepted += 1
            if side == 0:
                node_split_a[node] = new
                _bit_commit(cell_a, attribute_a, target_b, paired, depth, below_a, holds_a, absent_a,
                            node_split_a, splits_a, node, new_attribute, moved_rows, moved_cells, count)
            else:
                node_split_b[node] = new
                _bit_commit(cell_b, attribute_b, target_a, False, depth, below_b, holds_b, absent_b,
                            node_split_b, splits_b, node, new_attribute, moved_rows, moved_cells, count)
    return steps, accepted


# the cached kernels above include the ones they call from dprm.trees._kernels: stamp them with its text too
tie_to_sources(globals(), *KERNEL_DEPENDENCIES[__name__])
