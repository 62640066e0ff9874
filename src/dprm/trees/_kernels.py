"""Compiled inner loops of the MCMC tree samplers (numba).

A Metropolis–Hastings step replaces the split of one node; only the rows below that
node can move. :func:`run_chain` runs a whole chain in one compiled loop; each step is
three parts, each a compiled function of its own, so that the rows can also live in
several *shards* (processes or machines) whose partial counts a driver adds up:

(a) :func:`shard_delta` (shard-local): given a proposal (tree, node, new split), the
    change of the class-count tables that this shard's rows make, and which rows move;
(b) the driver's decision from the summed changes: :func:`propose` (the pre-drawn,
    data-independent proposal), then :func:`decide` (:func:`proposed_score` and
    :func:`accepts`: the pre-drawn ``log u`` against the score difference);
(c) :func:`shard_commit` (shard-local): apply an accepted proposal to the shard.

Row layout
----------
Cells are heap positions: a leaf, or the internal node where a row dropped out
because the value of that node's test is missing (``cell``, one byte per row: at
depth 7 there are 255 positions). Each tree also keeps its rows in *pre-order of
their cells* (``order``, with ``offset[r]`` the first entry of the cell of pre-order
rank ``r``, :func:`dprm.trees.layout.preorder`): the rows below any node, its own drop-outs first, then
its left subtree, then its right subtree, are one contiguous range of ``order``. So a
step reads only the rows below the node (a quarter of the rows on average at depth 4,
instead of a scan of all rows with a test per row), and it needs no code of the old
split: a row's old outcome at the node (missing / holds / fails) is the part of the
range it lies in. Only the rows whose outcome changes are routed down the subtree
(level by level: the loads of different rows are independent, so the processor
overlaps their cache misses) and counted; the scan also flags, per entry of the
range, whether its row moves (``moved_flags``), and an accepted step re-sorts the
node's range by the new cells from those flags (:func:`shard_commit`: each cell's
staying rows, then those moving in), without reading any row's cell.

Measured (user CPU on the 115,200 × 604 benchmark, ``docs/performance.md``): a step
costs about 40 % less than the full scan this layout replaced; what is left is
mostly the scan of the rows below the node and the commit's pass over them (the
moved rows' routing and counting are a fifth of a step). Tried and dropped as
slower: row positions instead of row numbers in the moved list, block copies in
the commit, a merge with the moved list instead of the flags, one packed per-row
record of both trees' cells and classes, branch-free routing.

The counts are integers and the decision uses exactly the pre-drawn numbers, so the
chain is the same whatever the layout or the number of shards (tests compare the
final state with a recount, the steps with a brute-force chain and with shards, and
the stationary distribution with the exponential mechanism's).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "accepts",
    "add_moves",
    "chain_score",
    "decide",
    "propose",
    "proposed_score",
    "run_chain",
    "shard_commit",
    "shard_delta",
    "variance_stop",
]


@njit(cache=True, nogil=True, inline="always")
def _route_row(codes, missing_code, attribute, code, numeric, row, start, first_leaf):
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
    return position


@njit(cache=True, nogil=True)
def _route_rows_serial(codes, missing_code, attribute, code, numeric, rows, start, first_leaf):
    out = np.empty(rows.size, dtype=np.int64)
    for k in range(rows.size):
        out[k] = _route_row(codes, missing_code, attribute, code, numeric, rows[k], start, first_leaf)
    return out


@njit(cache=True, parallel=True)
def _route_rows_parallel(codes, missing_code, attribute, code, numeric, rows, start, first_leaf):
    out = np.empty(rows.size, dtype=np.int64)
    for k in prange(rows.size):
        out[k] = _route_row(codes, missing_code, attribute, code, numeric, rows[k], start, first_leaf)
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
    if score_kind == 4:
        return _majority_mass(counts_a)
    ga = _purity_mass(counts_a)
    if score_kind == 0:
        return ga - labelled
    gb = _purity_mass(counts_b)
    if score_kind == 1:
        return (ga + gb - _class_mass(counts_b)) / 3.0
    return (ga / n_rows) * (1.0 + gb / n_rows) / 2.0


# -- (b) the driver: proposal and decision ----------------------------------------------


@njit(cache=True, nogil=True)
def propose(i, paired, n_internal, choice, local_u, attribute_u, split_u, local_share,
            node_split_a, splits_a, starts_a, sizes_a, usable_a,
            node_split_b, splits_b, starts_b, sizes_b, usable_b):
    """Step ``i``'s proposal from the pre-drawn numbers: ``(side, node, new split, log ratio)``.

    Data-independent (it reads only the current splits and public split tables).
    ``choice[i]`` picks the node (and the tree when ``paired``: ``side = choice //
    n_internal``). With probability ``local_share`` (``local_u[i]``) a local move: the
    neighbouring threshold of the same numeric attribute (below or above by
    ``split_u[i]``, none at the ends of the grid), or a uniform split of the same
    Boolean/categorical attribute; otherwise a global move: a uniform usable attribute
    (``attribute_u[i]``), a uniform split of it, and the Hastings term ``log(k_new /
    k_old)`` in ``log ratio`` (module docstring of :mod:`dprm.trees.private`).
    ``new == node_split[node]`` means no change.
    """
    side = choice[i] // n_internal if paired else 0
    node = choice[i] % n_internal
    if side == 0:
        node_split, splits, starts, sizes, usable = node_split_a, splits_a, starts_a, sizes_a, usable_a
    else:
        node_split, splits, starts, sizes, usable = node_split_b, splits_b, starts_b, sizes_b, usable_b
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
    return side, node, new, log_ratio


@njit(cache=True, nogil=True)
def chain_start(counts_a, counts_b, score_kind, n_rows, labelled):
    """A chain driver's buffers and first score: ``(delta_a, delta_b, scratch_a, scratch_b, score)``.

    ``delta`` holds a proposal's count changes, ``scratch`` the counts it would give
    (:func:`decide`); the score is that of the current ``counts``.
    """
    score = chain_score(counts_a, counts_b, score_kind, n_rows, labelled)
    return np.zeros_like(counts_a), np.zeros_like(counts_b), counts_a.copy(), counts_b.copy(), score


@njit(cache=True, nogil=True)
def next_move(i, paired, n_internal, choice, local_u, attribute_u, split_u, local_share,
              node_split_a, splits_a, starts_a, sizes_a, usable_a,
              node_split_b, splits_b, starts_b, sizes_b, usable_b, delta_a, delta_b):
    """Step ``i``'s proposal (:func:`propose`): ``(side, node, old split, new split, log ratio)``.

    When the proposal changes the node's split, ``delta`` is cleared for its count changes.
    """
    side, node, new, log_ratio = propose(i, paired, n_internal, choice, local_u, attribute_u, split_u, local_share,
                                         node_split_a, splits_a, starts_a, sizes_a, usable_a,
                                         node_split_b, splits_b, starts_b, sizes_b, usable_b)
    old = node_split_a[node] if side == 0 else node_split_b[node]
    if new != old:
        delta_a[:, :] = 0
        delta_b[:, :] = 0
    return side, node, old, new, log_ratio


@njit(cache=True, nogil=True)
def proposed_score(counts_a, counts_b, delta_a, delta_b, scratch_a, scratch_b, score_kind, n_rows, labelled):
    """The score of ``counts + delta`` (the summed changes of all shards), via ``scratch``."""
    for cell in range(counts_a.shape[0]):
        for label in range(counts_a.shape[1]):
            scratch_a[cell, label] = counts_a[cell, label] + delta_a[cell, label]
    for cell in range(counts_b.shape[0]):
        for label in range(counts_b.shape[1]):
            scratch_b[cell, label] = counts_b[cell, label] + delta_b[cell, label]
    return chain_score(scratch_a, scratch_b, score_kind, n_rows, labelled)


@njit(cache=True, nogil=True)
def accepts(log_u, proposed, score, scale, log_ratio):
    """``log u < (s' − s)/scale + log ratio``: :meth:`dprm.privacy.MetropolisChain.accept`."""
    return log_u < (proposed - score) / scale + log_ratio


@njit(cache=True, nogil=True)
def decide(log_u, score, scale, log_ratio, counts_a, counts_b, delta_a, delta_b, scratch_a, scratch_b, score_kind,
           n_rows, labelled):
    """(b) The decision on a proposal whose summed count changes are ``delta``.

    Its score (:func:`proposed_score`, through ``scratch``) against the pre-drawn
    ``log u`` (:func:`accepts`); if accepted, ``counts`` become ``counts + delta``.
    Returns ``(accepted, the score after the step)``. Every chain driver decides so:
    :func:`run_chain`, :func:`dprm.trees._bit_kernels.run_bit_chain` and the sharded
    drivers of :mod:`dprm.trees.chain_shards`.
    """
    proposed = proposed_score(counts_a, counts_b, delta_a, delta_b, scratch_a, scratch_b, score_kind, n_rows, labelled)
    if accepts(log_u, proposed, score, scale, log_ratio):
        counts_a[:, :] = scratch_a
        counts_b[:, :] = scratch_b
        return True, proposed
    return False, score


@njit(cache=True, nogil=True)
def variance_stop(window, i, score, variance_window, variance_threshold):
    """The papers' variance stop before step ``i``: keep ``score`` in the window; stop?

    ``window`` (length ``variance_window``) holds the scores before the last
    ``variance_window`` steps; the chain stops before step ``i`` once it is full and the
    variance of its scores is below ``variance_threshold``. Off when
    ``variance_window <= 1``.
    """
    if variance_window <= 1:
        return False
    window[i % variance_window] = score
    if i + 1 < variance_window:
        return False
    mean = window.mean()
    return ((window - mean) ** 2).mean() < variance_threshold


# -- (a) and (c): one shard's rows ---------------------------------------------------------


@njit(cache=True, nogil=True)
def _level(position):
    level = 0
    while (1 << (level + 1)) <= position + 1:
        level += 1
    return level


@njit(cache=True, nogil=True, inline="always")
def add_moves(moved_rows, moved_cells, count, cell, target, delta, retarget, first_leaf, other_cell, other_delta):
    """Add to the class counts what moving ``moved_rows[:count]`` to ``moved_cells[:count]`` changes.

    ``delta[cell, class]`` of this tree (rows of class -1 count in no class); with
    ``retarget`` (tree ``a`` of a pair) the other tree's class is this tree's leaf, so a
    row that changes leaf also changes class in ``other_delta[other_cell, class]`` (no
    read of the other tree's classes). Shared by :func:`shard_delta` and the bitset
    kernels (:mod:`dprm.trees._bit_kernels`).
    """
    for k in range(count):
        row = moved_rows[k]
        new_cell = moved_cells[k]
        label = target[row]
        if label >= 0:
            delta[cell[row], label] -= 1
            delta[new_cell, label] += 1
        if retarget:
            old_cell = cell[row]
            old_class = old_cell - first_leaf if old_cell >= first_leaf else -1
            new_class = new_cell - first_leaf if new_cell >= first_leaf else -1
            if old_class >= 0:
                other_delta[other_cell[row], old_class] -= 1
            if new_class >= 0:
                other_delta[other_cell[row], new_class] += 1


@njit(cache=True, nogil=True)
def shard_delta(codes, missing, cell, order, offset, attribute, code, numeric, target,
                other_cell, other_target, retarget, rank, end, depth,
                node, new_attribute, new_code, new_numeric,
                delta, other_delta, moved_rows, moved_cells, moved_flags):
    """(a) This shard's change of the class counts if ``node`` took the new split.

    One tree's rows of one shard: ``codes`` (``(attributes, rows)``, ``missing`` the
    missing code), ``cell`` (heap position per row), ``order``/``offset`` (the pre-order
    layout, :func:`dprm.trees.layout.tree_layout`), the tree's splits per internal node
    (``attribute``, ``code``, ``numeric``) and ``target`` (class per row, -1: none).
    ``rank``/``end``: :func:`dprm.trees.layout.preorder` of ``depth``.

    Adds the change to ``delta[cell, class]`` (which the caller zeroed). With
    ``retarget`` (tree ``a`` of a pair), the rows that change leaf also change class in
    the other tree, whose cells and classes are ``other_cell``/``other_target``: that
    change goes to ``other_delta``. The moved rows and their new cells are left in
    ``moved_rows[:count]``/``moved_cells[:count]``, and ``moved_flags[k]`` says
    whether the row at entry ``k`` of ``order`` moves (for the entries of the node's
    range), for :func:`shard_commit` (buffers of at least the shard's rows; the flags
    one byte each). Returns ``count``. Reads nothing but the rows below ``node``;
    writes nothing but ``delta``, ``other_delta`` and the buffers.
    """
    first_leaf = 2**depth - 1
    node_depth = _level(node)
    values = codes[new_attribute]
    r = rank[node]
    # The rows below the node: dropped out at it (old outcome missing), then those
    # of its left subtree (the test held), then of its right one (it failed).
    bounds = (offset[r], offset[r + 1], offset[rank[2 * node + 2]], offset[end[node]])
    count = 0
    for old_outcome in range(3):
        if old_outcome == 0:
            begin, stop = bounds[0], bounds[1]
            old_outcome_code = 2
        elif old_outcome == 1:
            begin, stop = bounds[1], bounds[2]
            old_outcome_code = 0
        else:
            begin, stop = bounds[2], bounds[3]
            old_outcome_code = 1
        for k in range(begin, stop):
            row = order[k]
            value = values[row]
            if value == missing:
                outcome = 2
            elif new_numeric:
                outcome = 0 if value <= new_code else 1
            else:
                outcome = 0 if value == new_code else 1
            # branch-free append: the slot is overwritten unless the outcome changed
            changed = outcome != old_outcome_code
            moved_rows[count] = row
            moved_flags[k] = changed
            count += changed
    # The moved rows' first step, under the new split (here rather than in the scan:
    # one store less per row read, measured 6 % faster a step).
    for k in range(count):
        value = values[moved_rows[k]]
        if value == missing:
            moved_cells[k] = -1 - node  # dropped out here; restored below
        else:
            holds = value <= new_code if new_numeric else value == new_code
            moved_cells[k] = 2 * node + (1 if holds else 2)
    # Route the moved rows on down the unchanged subtrees, level by level.
    for _ in range(depth - node_depth - 1):
        for k in range(count):
            position = moved_cells[k]
            if position >= first_leaf or position < 0:
                continue
            value = codes[attribute[position], moved_rows[k]]
            if value == missing:
                moved_cells[k] = -1 - position  # dropped out here; restored below
            else:
                holds = value <= code[position] if numeric[position] else value == code[position]
                moved_cells[k] = 2 * position + (1 if holds else 2)
    for k in range(count):
        if moved_cells[k] < 0:
            moved_cells[k] = -1 - moved_cells[k]
    add_moves(moved_rows, moved_cells, count, cell, target, delta, retarget, first_leaf, other_cell, other_delta)
    return count


@njit(cache=True, nogil=True)
def shard_commit(cell, order, offset, attribute, code, numeric, other_target, retarget, rank, end, depth,
                 node, new_attribute, new_code, new_numeric, moved_rows, moved_cells, moved_flags, count, buffer,
                 sizes):
    """(c) Apply an accepted proposal to this shard (arrays as for :func:`shard_delta`).

    Sets the node's split, moves ``moved_rows[:count]`` to ``moved_cells[:count]``
    (and, with ``retarget``, their class in the other tree to their new leaf), and
    re-sorts the node's range of ``order`` by the new cells, updating ``offset``: each
    cell's staying rows first, then the rows that move in. The staying rows are those
    whose ``moved_flags`` entry (left by :func:`shard_delta`) is 0: one sequential,
    branch-free pass over the range that reads no row's cell. Scratch: ``buffer`` of
    at least the shard's rows + 1, ``sizes`` of ``3 × positions + 1`` entries.
    """
    first_leaf = 2**depth - 1
    n_positions = rank.size
    attribute[node], code[node], numeric[node] = new_attribute, new_code, new_numeric
    if count == 0:
        return
    r, r_end = rank[node], end[node]
    old_offset = sizes[:n_positions + 1]
    stay = sizes[n_positions + 1:2 * n_positions + 1]
    moved_in = sizes[2 * n_positions + 1:]
    for q in range(r, r_end + 1):
        old_offset[q] = offset[q]
    # The staying rows, compacted into `buffer` cell after cell (a slot past the last
    # staying row is written over by the next one; `buffer` has a spare entry).
    at = old_offset[r]
    for q in range(r, r_end):
        first = at
        for k in range(old_offset[q], old_offset[q + 1]):
            buffer[at] = order[k]
            at += 1 - moved_flags[k]
        stay[q] = at - first
        moved_in[q] = 0
    for k in range(count):
        moved_in[rank[moved_cells[k]]] += 1
    # The new layout: each cell's staying rows, then room for the rows moving in.
    source = old_offset[r]
    for q in range(r, r_end):
        offset[q + 1] = offset[q] + stay[q] + moved_in[q]
        to = offset[q]
        for t in range(stay[q]):
            order[to + t] = buffer[source + t]
        source += stay[q]
        moved_in[q] = to + stay[q]  # from here on: where the next row moving in goes
    for k in range(count):
        row = moved_rows[k]
        new_cell = moved_cells[k]
        q = rank[new_cell]
        order[moved_in[q]] = row
        moved_in[q] += 1
        cell[row] = new_cell
        if retarget:
            other_target[row] = new_cell - first_leaf if new_cell >= first_leaf else -1


# -- the whole chain, in process ------------------------------------------------------------


@njit(cache=True, nogil=True)
def run_chain(
    codes_a, missing_a, splits_a, starts_a, sizes_a, usable_a,
    codes_b, missing_b, splits_b, starts_b, sizes_b, usable_b,
    node_split_a, cell_a, order_a, offset_a, counts_a, target_a,
    node_split_b, cell_b, order_b, offset_b, counts_b, target_b,
    paired, score_kind, n_rows, labelled, depth, scale,
    choice, local_u, attribute_u, split_u, log_u, local_share,
    variance_window, variance_threshold, start, stop, window,
):
    """Run a Metropolis–Hastings chain over one tree or a pair of trees, in place.

    Tree ``a`` predicts ``target_a``; if ``paired``, tree ``b`` predicts the leaf of
    each row in tree ``a`` (``target_b``, kept up to date). Splits are rows of
    ``splits_*`` = (attribute, code, numeric); the splits of attribute ``k`` are
    ``starts[k] : starts[k] + sizes[k]`` (in threshold order for numeric ones). Each
    tree's rows are in the layout of the module docstring (``cell``, ``order``,
    ``offset``: :func:`dprm.trees.layout.tree_layout`); ``counts`` are its class counts per cell.

    Step ``i`` uses the pre-drawn, data-independent ``choice[i]`` (node, and the tree
    when paired), ``local_u``, ``attribute_u``, ``split_u`` (:func:`propose`), and the
    noise source's ``log_u[i]``: the proposal is accepted iff
    ``log_u[i] < (s' − s)/scale + log_ratio`` — the rule of
    :meth:`dprm.privacy.MetropolisChain.accept`, with ``scale = 2Δ/ε``.

    ``score_kind``: 0 = Bai's ``G − τ`` (single tree), 1 = the Gini pair score
    ``(G_a + G_b − B_b)/3`` (``B_b``: purity mass of ``b``'s class totals), 2 = the
    paper's ``g_a (1 + g_b) / 2`` with ``g = G / n``, 3 = dprm's default pair score
    ``M_a + M_b − max_k N_k`` (majority masses; see :mod:`dprm.trees.private`), 4 = the
    majority mass ``M_a`` of a single tree (``sample_tree(score="counts")``).
    Runs steps ``start`` to ``stop - 1`` of the pre-drawn arrays, so a chain can run in
    chunks (for progress reports) with the same result as in one call: its state lives
    in the arrays it updates in place, and ``window`` (length ``max(variance_window,
    1)``) keeps the last scores of the variance stop between chunks. Returns
    ``(steps, accepted)`` of this chunk; stops early when ``variance_window > 1`` and
    the variance of the last ``variance_window`` scores is below
    ``variance_threshold`` (then ``steps < stop - start``).

    One shard holding every row: :func:`shard_delta`, the decision, :func:`shard_commit`.
    """
    n = cell_a.size
    first_leaf = 2**depth - 1
    n_internal = first_leaf
    n_positions = 2 ** (depth + 1) - 1
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
    # pre-order ranks (as :func:`dprm.trees.layout.preorder`, inlined: this function is compiled)
    rank = np.zeros(n_positions, dtype=np.int64)
    end = np.zeros(n_positions, dtype=np.int64)
    for position in range(n_positions):
        size = 2 ** (depth - _level(position) + 1) - 1
        if position > 0:
            parent = (position - 1) // 2
            rank[position] = rank[parent] + 1 + (0 if position == 2 * parent + 1 else size)
        end[position] = rank[position] + size
    moved_rows = np.empty(n, dtype=order_a.dtype)
    moved_cells = np.empty(n, dtype=np.int64)
    moved_flags = np.zeros(n, dtype=np.uint8)
    buffer = np.empty(n + 1, dtype=order_a.dtype)
    cell_sizes = np.empty(3 * n_positions + 1, dtype=np.int64)
    delta_a, delta_b, scratch_a, scratch_b, score = chain_start(counts_a, counts_b, score_kind, n_rows, labelled)
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
            new_attribute, new_code, new_numeric = splits_a[new, 0], splits_a[new, 1], splits_a[new, 2] == 1
            count = shard_delta(codes_a, missing_a, cell_a, order_a, offset_a, attribute_a, code_a, numeric_a,
                                target_a, cell_b, target_b, paired, rank, end, depth,
                                node, new_attribute, new_code, new_numeric, delta_a, delta_b, moved_rows, moved_cells,
                                moved_flags)
        else:
            new_attribute, new_code, new_numeric = splits_b[new, 0], splits_b[new, 1], splits_b[new, 2] == 1
            count = shard_delta(codes_b, missing_b, cell_b, order_b, offset_b, attribute_b, code_b, numeric_b,
                                target_b, cell_a, target_a, False, rank, end, depth,
                                node, new_attribute, new_code, new_numeric, delta_b, delta_a, moved_rows, moved_cells,
                                moved_flags)
        taken, score = decide(log_u[i], score, scale, log_ratio, counts_a, counts_b, delta_a, delta_b, scratch_a,
                              scratch_b, score_kind, n_rows, labelled)
        if taken:
            accepted += 1
            if side == 0:
                node_split_a[node] = new
                shard_commit(cell_a, order_a, offset_a, attribute_a, code_a, numeric_a, target_b, paired, rank, end,
                             depth, node, new_attribute, new_code, new_numeric, moved_rows, moved_cells, moved_flags, count,
                             buffer, cell_sizes)
            else:
                node_split_b[node] = new
                shard_commit(cell_b, order_b, offset_b, attribute_b, code_b, numeric_b, target_a, False, rank, end,
                             depth, node, new_attribute, new_code, new_numeric, moved_rows, moved_cells, moved_flags, count,
                             buffer, cell_sizes)
    return steps, accepted
