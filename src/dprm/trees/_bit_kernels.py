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
one of them does. Only the set bits of that mask are visited (their first cell from
the same bits); they are routed down the unchanged subtree and counted exactly as
:func:`~dprm.trees._kernels.shard_delta` does. An accepted step writes the moved
rows' cells (and, for the first tree of a pair, their class in the other tree) and
rebuilds ``below`` of the node's internal descendants by word operations. No
per-row layout is kept.

Why: at 115,200 rows the layout kernel's step was bound by one pass over the rows
below the node (a gather of the new split's code per row) and the commit's second
pass over them; here that is a pass over ``rows / 64`` words of five bitsets, and the
commit touches only the moved rows. Memory: one bit per row and split (14.4 kB per
split at 115,200 rows), so :class:`~dprm.trees.private.ChainJob` uses this kernel
only when that stays small (``docs/performance.md``, "Third round: row bitsets").
The Ray shards keep the layout kernels of :mod:`dprm.trees._kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from dprm.trees._kernels import accepts, chain_score, propose, proposed_score

__all__ = ["bitset_bytes", "run_bit_chain", "split_bitsets"]


def bitset_bytes(n_rows: int, n_sets: int) -> int:
    """Bytes of ``n_sets`` row bitsets over ``n_rows`` rows.

    Examples
    --------
    >>> bitset_bytes(115_200, 1)   # 1,800 words of 8 bytes
    14400
    """
    return n_sets * ((n_rows + 63) // 64) * 8


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
    [[10, 2, 6], [4, 8]]
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
def _bit_delta(codes, missing, cell, attribute, code, numeric, target, other_cell, retarget, depth, below, holds,
               absent, node, old_split, new_split, old_attribute, new_attribute, new_code, new_numeric, delta,
               other_delta, moved_rows, moved_cells):
    """The change of the class counts if ``node`` took ``new_split``; returns the moved rows' count.

    As :func:`dprm.trees._kernels.shard_delta` (same ``delta``/``other_delta``, same
    ``moved_rows[:count]``/``moved_cells[:count]``, here in increasing row order), the
    moved rows found from the bitsets (module docstring).
    """
    first_leaf = 2**depth - 1
    mask = below[node]
    held, holds_now = holds[old_split], holds[new_split]
    gone, gone_now = absent[old_attribute], absent[new_attribute]
    left, right, here = 2 * node + 1, 2 * node + 2, -1 - node
    count = 0
    for w in range(mask.size):
        moved = mask[w] & ((held[w] ^ holds_now[w]) | (gone[w] ^ gone_now[w]))
        if moved == 0:
            continue
        base = w * 64
        h, g = holds_now[w], gone_now[w]
        while moved:
            b = trailing_zeros(moved)
            moved &= moved - np.uint64(1)
            moved_rows[count] = base + np.int64(b)
            if (g >> b) & np.uint64(1):
                moved_cells[count] = here  # dropped out here; restored below
            elif (h >> b) & np.uint64(1):
                moved_cells[count] = left
            else:
                moved_cells[count] = right
            count += 1
    # Route the moved rows on down the unchanged subtrees, level by level.
    level = 0
    while (1 << (level + 1)) <= node + 1:
        level += 1
    for _ in range(depth - level - 1):
        for k in range(count):
            position = moved_cells[k]
            if position >= first_leaf or position < 0:
                continue
            value = codes[attribute[position], moved_rows[k]]
            if value == missing:
                moved_cells[k] = -1 - position  # dropped out here; restored below
            else:
                test = value <= code[position] if numeric[position] else value == code[position]
                moved_cells[k] = 2 * position + (1 if test else 2)
    for k in range(count):
        if moved_cells[k] < 0:
            moved_cells[k] = -1 - moved_cells[k]
    for k in range(count):
        row = moved_rows[k]
        new_cell = moved_cells[k]
        label = target[row]
        if label >= 0:
            delta[cell[row], label] -= 1
            delta[new_cell, label] += 1
        if retarget:  # the other tree's class is this tree's leaf
            old_cell = cell[row]
            old_class = old_cell - first_leaf if old_cell >= first_leaf else -1
            new_class = new_cell - first_leaf if new_cell >= first_leaf else -1
            if old_class >= 0:
                other_delta[other_cell[row], old_class] -= 1
            if new_class >= 0:
                other_delta[other_cell[row], new_class] += 1
    return count


@njit(cache=True, nogil=True)
def _bit_commit(cell, attribute, code, numeric, other_target, retarget, depth, below, holds, absent, node_split,
                splits, node, new_attribute, new_code, new_numeric, moved_rows, moved_cells, count):
    """Apply an accepted proposal (``node_split[node]`` already the new split)."""
    first_leaf = 2**depth - 1
    attribute[node], code[node], numeric[node] = new_attribute, new_code, new_numeric
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
    codes_a, missing_a, splits_a, starts_a, sizes_a, usable_a, holds_a, absent_a,
    codes_b, missing_b, splits_b, starts_b, sizes_b, usable_b, holds_b, absent_b,
    node_split_a, cell_a, counts_a, target_a,
    node_split_b, cell_b, counts_b, target_b,
    paired, score_kind, n_rows, labelled, depth, scale,
    choice, local_u, attribute_u, split_u, log_u, local_share,
    variance_window, variance_threshold, start, stop, window,
):
    """Run a Metropolis–Hastings chain over one tree or a pair of trees, in place, on row bitsets.

    The arguments and the result are those of :func:`dprm.trees._kernels.run_chain`
    without the pre-order layout (``order``, ``offset``) and with each view's
    :func:`split_bitsets` (``holds_*``, ``absent_*``) after its split tables: the same
    chain, step for step. The trees' ``below`` bitsets are built from the current
    splits at each call, so a chain can run in chunks as with ``run_chain``.
    """
    n = cell_a.size
    first_leaf = 2**depth - 1
    n_internal = first_leaf
    attribute_a = np.empty(n_internal, dtype=np.int64)
    code_a = np.empty(n_internal, dtype=np.int64)
    numeric_a = np.empty(n_internal, dtype=np.bool_)
    attribute_b = np.empty(n_internal, dtype=np.int64)
    code_b = np.empty(n_internal, dtype=np.int64)
    numeric_b = np.empty(n_internal, dtype=np.bool_)
    for node in range(n_internal):
        s = node_split_a[node]
        attribute_a[node], code_a[node], numeric_a[node] = splits_a[s, 0], splits_a[s, 1], splits_a[s, 2] == 1
        s = node_split_b[node]
        attribute_b[node], code_b[node], numeric_b[node] = splits_b[s, 0], splits_b[s, 1], splits_b[s, 2] == 1
    below_a = _initial_below(n, n_internal, node_split_a, splits_a, holds_a, absent_a)
    below_b = _initial_below(n, n_internal, node_split_b, splits_b, holds_b, absent_b)
    moved_rows = np.empty(n, dtype=np.int64)
    moved_cells = np.empty(n, dtype=np.int64)
    delta_a = np.zeros_like(counts_a)
    delta_b = np.zeros_like(counts_b)
    scratch_a = counts_a.copy()
    scratch_b = counts_b.copy()

    score = chain_score(counts_a, counts_b, score_kind, n_rows, labelled)
    accepted = 0
    steps = 0
    for i in range(start, stop):
        if variance_window > 1:
            window[i % variance_window] = score
            if i + 1 >= variance_window:
                mean = window.mean()
                if ((window - mean) ** 2).mean() < variance_threshold:
                    break
        steps += 1
        side, node, new, log_ratio = propose(
            i, paired, n_internal, choice, local_u, attribute_u, split_u, local_share,
            node_split_a, splits_a, starts_a, sizes_a, usable_a, node_split_b, splits_b, starts_b, sizes_b, usable_b)
        old = node_split_a[node] if side == 0 else node_split_b[node]
        if new == old:  # no change: the score stays, and log u < 0 always accepts
            accepted += 1
            continue
        delta_a[:, :] = 0
        delta_b[:, :] = 0
        if side == 0:
            new_attribute, new_code, new_numeric = splits_a[new, 0], splits_a[new, 1], splits_a[new, 2] == 1
            count = _bit_delta(codes_a, missing_a, cell_a, attribute_a, code_a, numeric_a, target_a, cell_b, paired,
                               depth, below_a, holds_a, absent_a, node, old, new, attribute_a[node], new_attribute,
                               new_code, new_numeric, delta_a, delta_b, moved_rows, moved_cells)
        else:
            new_attribute, new_code, new_numeric = splits_b[new, 0], splits_b[new, 1], splits_b[new, 2] == 1
            count = _bit_delta(codes_b, missing_b, cell_b, attribute_b, code_b, numeric_b, target_b, cell_a, False,
                               depth, below_b, holds_b, absent_b, node, old, new, attribute_b[node], new_attribute,
                               new_code, new_numeric, delta_b, delta_a, moved_rows, moved_cells)
        proposed = proposed_score(counts_a, counts_b, delta_a, delta_b, scratch_a, scratch_b, score_kind, n_rows,
                                  labelled)
        if accepts(log_u[i], proposed, score, scale, log_ratio):
            accepted += 1
            score = proposed
            counts_a[:, :] = scratch_a
            counts_b[:, :] = scratch_b
            if side == 0:
                node_split_a[node] = new
                _bit_commit(cell_a, attribute_a, code_a, numeric_a, target_b, paired, depth, below_a, holds_a,
                            absent_a, node_split_a, splits_a, node, new_attribute, new_code, new_numeric, moved_rows,
                            moved_cells, count)
            else:
                node_split_b[node] = new
                _bit_commit(cell_b, attribute_b, code_b, numeric_b, target_a, False, depth, below_b, holds_b,
                            absent_b, node_split_b, splits_b, node, new_attribute, new_code, new_numeric, moved_rows,
                            moved_cells, count)
    return steps, accepted
