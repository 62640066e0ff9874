"""Compiled inner loops of the MCMC tree samplers (numba).

A Metropolis–Hastings step replaces the split of one node; only the rows below that
node move. :func:`run_chain` runs a whole chain: per step it finds those rows,
routes them down from the node with the proposed split and updates the class counts
in one pass without temporaries, so a step costs a fraction of a millisecond at
100,000+ rows, where the same work in numpy (fancy indexing, ``np.add.at``, one
Python round trip per step) cost several milliseconds.

Cells are heap positions: a leaf, or the internal node where a row dropped out
because the value of that node's test is missing. The tests compare the chain's
final counts with a recount and its stationary distribution with the exponential
mechanism's.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["chain_score", "route_rows", "run_chain"]


@njit(cache=True, parallel=True)
def route_rows(
    codes: np.ndarray,
    missing_code: int,
    attribute: np.ndarray,
    code: np.ndarray,
    numeric: np.ndarray,
    rows: np.ndarray,
    start: int,
    first_leaf: int,
) -> np.ndarray:
    """Cells of ``rows`` (increasing) routed from node ``start`` down a complete tree.

    ``codes`` is the literal index's ``(attributes, rows)`` matrix: the rows below a
    node all take that node's test first, so they read one attribute's codes in
    order (a layout with one row per data row measured three times slower).
    """
    out = np.empty(rows.size, dtype=np.int64)
    for k in prange(rows.size):
        row = rows[k]
        position = start
        while position < first_leaf:
            value = codes[attribute[position], row]
            if value == missing_code:
                break
            if numeric[position]:
                holds = value <= code[position]
            else:
                holds = value == code[position]
            position = 2 * position + (1 if holds else 2)
        out[k] = position
    return out


@njit(cache=True)
def _purity_mass(counts: np.ndarray) -> float:
    total = 0.0
    for cell in range(counts.shape[0]):
        size = 0
        squares = 0.0
        for label in range(counts.shape[1]):
            c = counts[cell, label]
            size += c
            squares += c * c
        if size > 0:
            total += squares / size
    return total


@njit(cache=True)
def _class_mass(counts: np.ndarray) -> float:
    """``Σ_c n_c² / N`` of the class totals: the purity mass of not splitting at all."""
    total = 0.0
    squares = 0.0
    for label in range(counts.shape[1]):
        c = 0
        for cell in range(counts.shape[0]):
            c += counts[cell, label]
        total += c
        squares += c * c
    return squares / total if total > 0 else 0.0


@njit(cache=True)
def _majority_mass(counts: np.ndarray) -> float:
    """``Σ_cells max_c n_c``: rows of each cell's majority class."""
    total = 0.0
    for cell in range(counts.shape[0]):
        best = 0
        for label in range(counts.shape[1]):
            if counts[cell, label] > best:
                best = counts[cell, label]
        total += best
    return total


@njit(cache=True)
def _majority_class(counts: np.ndarray) -> float:
    """``max_k N_k`` of the class totals: the majority mass of not splitting at all."""
    best = 0
    for label in range(counts.shape[1]):
        c = 0
        for cell in range(counts.shape[0]):
            c += counts[cell, label]
        if c > best:
            best = c
    return float(best)


@njit(cache=True)
def chain_score(counts_a: np.ndarray, counts_b: np.ndarray, score_kind: int, n_rows: float,
                labelled: float) -> float:
    """The chain's score from the class counts per cell (see :func:`run_chain`)."""
    if score_kind == 3:
        return _majority_mass(counts_a) + _majority_mass(counts_b) - _majority_class(counts_b)
    ga = _purity_mass(counts_a)
    if score_kind == 0:
        return ga - labelled
    gb = _purity_mass(counts_b)
    if score_kind == 1:
        return (ga + gb - _class_mass(counts_b)) / 3.0
    return (ga / n_rows) * (1.0 + gb / n_rows) / 2.0


@njit(cache=True, nogil=True)
def run_chain(
    codes_a, missing_a, splits_a, starts_a, sizes_a, usable_a,
    codes_b, missing_b, splits_b, starts_b, sizes_b, usable_b,
    node_split_a, cell_a, counts_a, target_a,
    node_split_b, cell_b, counts_b, target_b,
    paired, score_kind, n_rows, labelled, depth, scale,
    choice, local_u, attribute_u, split_u, log_u, local_share,
    variance_window, variance_threshold, start, stop, window,
):
    """Run a Metropolis–Hastings chain over one tree or a pair of trees, in place.

    Tree ``a`` predicts ``target_a``; if ``paired``, tree ``b`` predicts the leaf of
    each row in tree ``a`` (``target_b``, kept up to date). Splits are rows of
    ``splits_*`` = (attribute, code, numeric); the splits of attribute ``k`` are
    ``starts[k] : starts[k] + sizes[k]`` (in threshold order for numeric ones).

    Step ``i`` uses the pre-drawn, data-independent ``choice[i]`` (node, and the tree
    when paired), ``local_u``, ``attribute_u``, ``split_u``, and the noise source's
    ``log_u[i]``: the proposal is accepted iff
    ``log_u[i] < (s' − s)/scale + log_ratio`` — the rule of
    :meth:`dprm.privacy.MetropolisChain.accept`, with ``scale = 2Δ/ε``.

    ``score_kind``: 0 = Bai's ``G − τ`` (single tree), 1 = the Gini pair score
    ``(G_a + G_b − B_b)/3`` (``B_b``: purity mass of ``b``'s class totals), 2 = the
    paper's ``g_a (1 + g_b) / 2`` with ``g = G / n``, 3 = dprm's default pair score
    ``M_a + M_b − max_k N_k`` (majority masses; see :mod:`dprm.trees.private`).
    Runs steps ``start`` to ``stop - 1`` of the pre-drawn arrays, so a chain can run in
    chunks (for progress reports) with the same result as in one call: its state lives
    in the arrays it updates in place, and ``window`` (length ``max(variance_window,
    1)``) keeps the last scores of the variance stop between chunks. Returns
    ``(steps, accepted)`` of this chunk; stops early when ``variance_window > 1`` and
    the variance of the last ``variance_window`` scores is below
    ``variance_threshold`` (then ``steps < stop - start``).
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
    rows = np.empty(n, dtype=np.int64)
    new_cells = np.empty(n, dtype=np.int64)
    n_positions = 2 ** (depth + 1) - 1
    below = np.zeros(n_positions, dtype=np.bool_)
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
        side = choice[i] // n_internal if paired else 0
        node = choice[i] % n_internal
        if side == 0:
            codes, missing, splits, starts, sizes, usable = codes_a, missing_a, splits_a, starts_a, sizes_a, usable_a
            node_split, cell, attribute, code, numeric = node_split_a, cell_a, attribute_a, code_a, numeric_a
        else:
            codes, missing, splits, starts, sizes, usable = codes_b, missing_b, splits_b, starts_b, sizes_b, usable_b
            node_split, cell, attribute, code, numeric = node_split_b, cell_b, attribute_b, code_b, numeric_b
        old = node_split[node]
        old_attribute = splits[old, 0]
        log_ratio = 0.0
        if local_u[i] < local_share:
            if splits[old, 2] == 1:
                step = old + (1 if split_u[i] < 0.5 else -1)
                new = step if starts[old_attribute] <= step < starts[old_attribute] + sizes[old_attribute] else old
            else:
                new = starts[old_attribute] + int(split_u[i] * sizes[old_attribute])
        else:
            a = usable[int(attribute_u[i] * usable.size)]
            new = starts[a] + int(split_u[i] * sizes[a])
            log_ratio = np.log(sizes[a] / sizes[old_attribute])
        if new == old:  # no change: the score stays, and log u < 0 always accepts
            accepted += 1
            continue
        new_attribute, new_code, new_numeric = splits[new, 0], splits[new, 1], splits[new, 2] == 1
        # rows below the node, and their cells under the proposal
        node_depth = 0
        while (1 << (node_depth + 1)) <= node + 1:
            node_depth += 1
        for position in range(n_positions):
            position_depth = 0
            while (1 << (position_depth + 1)) <= position + 1:
                position_depth += 1
            shift = position_depth - node_depth
            below[position] = shift >= 0 and ((position + 1) >> shift) - 1 == node
        # Only rows whose outcome at the node changes (true / false / missing) move:
        # the others keep their whole path, as the subtrees stay. A local move
        # (neighbouring threshold) flips only the rows between the two thresholds.
        old_attribute_code, old_code, old_numeric = attribute[node], code[node], numeric[node]
        same_attribute = old_attribute_code == new_attribute
        count = 0
        for row in range(n):
            if below[cell[row]]:
                old_value = codes[old_attribute_code, row]
                new_value = old_value if same_attribute else codes[new_attribute, row]
                if old_value == missing:
                    old_outcome = 2
                elif (old_value <= old_code) if old_numeric else (old_value == old_code):
                    old_outcome = 0
                else:
                    old_outcome = 1
                if new_value == missing:
                    new_outcome = 2
                elif (new_value <= new_code) if new_numeric else (new_value == new_code):
                    new_outcome = 0
                else:
                    new_outcome = 1
                if old_outcome != new_outcome:
                    rows[count] = row
                    new_cells[count] = node
                    count += 1
        # Route level by level: within a level the loads of different rows are
        # independent, so the processor overlaps their cache misses (following one
        # row down all levels first measured twice as slow at 100,000+ rows).
        for _ in range(depth - node_depth):
            for k in range(count):
                position = new_cells[k]
                if position >= first_leaf or position < 0:
                    continue
                if position == node:
                    a, c, is_numeric = new_attribute, new_code, new_numeric
                else:
                    a, c, is_numeric = attribute[position], code[position], numeric[position]
                value = codes[a, rows[k]]
                if value == missing:
                    new_cells[k] = -1 - position  # dropped out here; restored below
                else:
                    holds = value <= c if is_numeric else value == c
                    new_cells[k] = 2 * position + (1 if holds else 2)
        for k in range(count):
            if new_cells[k] < 0:
                new_cells[k] = -1 - new_cells[k]
        # counts under the proposal
        scratch_a[:, :] = counts_a
        scratch_b[:, :] = counts_b
        for k in range(count):
            row = rows[k]
            if side == 0:
                label = target_a[row]
                if label >= 0:
                    scratch_a[cell_a[row], label] -= 1
                    scratch_a[new_cells[k], label] += 1
                if paired:
                    old_class = target_b[row]
                    new_class = new_cells[k] - first_leaf if new_cells[k] >= first_leaf else -1
                    if old_class >= 0:
                        scratch_b[cell_b[row], old_class] -= 1
                    if new_class >= 0:
                        scratch_b[cell_b[row], new_class] += 1
            else:
                label = target_b[row]
                if label >= 0:
                    scratch_b[cell_b[row], label] -= 1
                    scratch_b[new_cells[k], label] += 1
        proposed = chain_score(scratch_a, scratch_b, score_kind, n_rows, labelled)
        if log_u[i] < (proposed - score) / scale + log_ratio:
            accepted += 1
            score = proposed
            counts_a[:, :] = scratch_a
            counts_b[:, :] = scratch_b
            node_split[node] = new
            attribute[node], code[node], numeric[node] = new_attribute, new_code, new_numeric
            for k in range(count):
                row = rows[k]
                if side == 0 and paired:
                    target_b[row] = new_cells[k] - first_leaf if new_cells[k] >= first_leaf else -1
                cell[row] = new_cells[k]
    return steps, accepted
