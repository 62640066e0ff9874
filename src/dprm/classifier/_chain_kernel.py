"""The classifier's subtree chain in one compiled loop (numba): the same chain, step for step.

:func:`run_subtree_chain` is :func:`dprm.classifier.subtree_mcmc.mcmc_subtree`'s
fixed-length chain (regrow and change moves) compiled: the same proposals drawn
from the same ``numpy.random.Generator`` in the same order (numba's ``Generator``
methods continue NumPy's stream exactly), the same pre-drawn acceptance numbers
``log u``, and leaf log-weights computed with the same floating-point operations in
the same order (a sum of up to 128 terms in NumPy's pairwise order), so a seeded fit
gives the tree the Python loop gives. Only where a transcendental function of the
compiler and of NumPy rounded differently in the last bit *and* that bit decided an
acceptance (``log u`` within about 1e-13 of ``log α``) could the two differ; the tests
compare them on several tables and seeds.

Layout
------
A node is a row of ``nodes`` (int64 fields ``_OPT_F`` … ``_PARENT``) and its leaf
log-weight ``weights[i]`` (its rows' weight as a leaf, kept current for every node).
Its rows are ``order[lo:hi]``; its children are ``n_children`` consecutive rows of
``nodes`` from ``first``, whose ranges split the node's range in child order (a
stable partition: rows keep their order, as with the Python loop's stable sort).
A proposal allocates new nodes past ``top`` and re-partitions the target's range;
a rejection restores the range (a saved copy) and ``top``; an accepted regrow leaves
the old subtree as garbage, which a compaction (:func:`_compact`) drops when it
outgrows the live tree. Arrays that fill up are doubled (the functions that
allocate return them).

Options of a node are, as :meth:`SubtreeSpace.options`, the multiway splits of the
categorical features not used above it (``cat_features`` in order), then the fixed
two-way tests (``fixed_f``, ``fixed_v``, ``fixed_kind``: 0 a numeric threshold,
1 a category test). A multiway option has ``v = -1``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["run_subtree_chain", "SCORE_JOINT", "SCORE_MAJORITY", "SCORE_GINI", "N_FIELDS", "LO", "HI", "MAX_CLASSES"]

SCORE_JOINT, SCORE_MAJORITY, SCORE_GINI = 0, 1, 2
_OPT_F, _OPT_V, _FIRST, _NCH, _DEPTH, _LO, _HI, _MISS, _NOPT, _PARENT = range(10)
N_FIELDS = 10
#: Most classes the compiled chain takes (its sums are NumPy's up to this length).
MAX_CLASSES = 128
#: Fields of a node's row range (``order[LO:HI]``), for readers of the result.
LO, HI = _LO, _HI


@njit(cache=True)
def _pairwise_sum(a: np.ndarray, start: int, n: int) -> float:
    """NumPy's pairwise sum of ``a[start:start + n]`` (its order of additions, for ``n <= MAX_CLASSES``).

    (NumPy splits longer sums in halves recursively; a recursive kernel does not
    load from numba's cache reliably, and no table here has more than 128 classes.)
    """
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[start + i]
        return res
    if n <= 128:
        r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
        r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
        i = 8
        while i < n - (n % 8):
            r0 += a[start + i]
            r1 += a[start + i + 1]
            r2 += a[start + i + 2]
            r3 += a[start + i + 3]
            r4 += a[start + i + 4]
            r5 += a[start + i + 5]
            r6 += a[start + i + 6]
            r7 += a[start + i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[start + i]
            i += 1
        return res
    return math.nan  # not reached: more than MAX_CLASSES classes run the Python loop


@njit(cache=True)
def _leaf_weight(counts: np.ndarray, row: int, missing: bool, mode: int, eta: float, leaf_cost: float,
                 log_classes: float, scratch: np.ndarray) -> float:
    """:meth:`SubtreeSpace.leaf_log_weights` of the class counts ``counts[row]``."""
    n_classes = counts.shape[1]
    cost = 0.0 if missing else leaf_cost
    if mode == SCORE_JOINT:
        top = -math.inf
        for c in range(n_classes):
            scratch[c] = eta * float(counts[row, c])
            if scratch[c] > top:
                top = scratch[c]
        for c in range(n_classes):
            scratch[c] = math.exp(scratch[c] - top)
        total = math.log(_pairwise_sum(scratch, 0, n_classes)) + top
        return total - log_classes - eta * cost
    if mode == SCORE_MAJORITY:
        top = -math.inf
        for c in range(n_classes):
            if float(counts[row, c]) > top:
                top = float(counts[row, c])
        return eta * (top - cost)
    for c in range(n_classes):
        scratch[c] = float(counts[row, c])
    size = _pairwise_sum(scratch, 0, n_classes)
    for c in range(n_classes):
        scratch[c] = scratch[c] * scratch[c]
    squares = _pairwise_sum(scratch, 0, n_classes)
    safe = size if size > 0 else 1.0
    return eta * -(size - squares / safe)


@njit(cache=True)
def _reserve(nodes: np.ndarray, weights: np.ndarray, top: int, extra: int) -> tuple[np.ndarray, np.ndarray]:
    """The node arrays with room for ``extra`` nodes past ``top`` (doubled when full)."""
    if top + extra <= nodes.shape[0]:
        return nodes, weights
    size = max(2 * nodes.shape[0], top + extra)
    grown = np.empty((size, N_FIELDS), dtype=np.int64)
    grown[:top] = nodes[:top]
    grown_weights = np.empty(size)
    grown_weights[:top] = weights[:top]
    return grown, grown_weights


@njit(cache=True)
def _option_of(nodes: np.ndarray, node: int, pick: int, n_fixed: int, cat_features: np.ndarray,
               fixed_f: np.ndarray, fixed_v: np.ndarray, used0: np.ndarray, used: np.ndarray) -> tuple[int, int]:
    """The ``pick``-th option of ``node`` as ``(feature, value)`` (value -1: multiway)."""
    n_unused = nodes[node, _NOPT] - n_fixed
    if pick >= n_unused:
        return fixed_f[pick - n_unused], fixed_v[pick - n_unused]
    used[:] = used0
    up = node
    while up >= 0:  # the multiway splits above the node (used0: above the chain's start)
        parent = nodes[up, _PARENT]
        if parent >= 0 and nodes[parent, _OPT_V] < 0:
            used[nodes[parent, _OPT_F]] = True
        up = parent
    seen = 0
    for f in cat_features:
        if not used[f]:
            if seen == pick:
                return f, -1
            seen += 1
    return -1, -1  # not reached: n_unused counts these features


@njit(cache=True)
def _split(nodes: np.ndarray, weights: np.ndarray, top: int, node: int, f: int, v: int, data: tuple,
           buffers: tuple, leaf: tuple) -> tuple[np.ndarray, np.ndarray, int]:
    """Split ``node`` on ``(f, v)``: new children past ``top``, their ranges and leaf weights."""
    n_codes = data[2]
    n_children = n_codes[f] + 1 if v < 0 else 3
    nodes, weights = _reserve(nodes, weights, top, n_children)
    child_opts = nodes[node, _NOPT] - (1 if v < 0 else 0)
    for c in range(n_children):
        child = top + c
        nodes[child, _OPT_F] = -1
        nodes[child, _OPT_V] = 0
        nodes[child, _FIRST] = -1
        nodes[child, _NCH] = 0
        nodes[child, _DEPTH] = nodes[node, _DEPTH] + 1
        nodes[child, _MISS] = 1 if c == n_children - 1 else 0
        nodes[child, _NOPT] = child_opts
        nodes[child, _PARENT] = node
    nodes[node, _OPT_F] = f
    nodes[node, _OPT_V] = v
    nodes[node, _FIRST] = top
    nodes[node, _NCH] = n_children
    _route(nodes, weights, node, data, buffers, leaf)
    return nodes, weights, top + n_children


@njit(cache=True)
def _route(nodes: np.ndarray, weights: np.ndarray, node: int, data: tuple, buffers: tuple, leaf: tuple) -> None:
    """Route the rows of ``node`` to its children by its test: their ranges and leaf weights.

    ``data`` is ``(features, y, n_codes, categorical)`` (``features[f, r]``: the code of
    feature ``f`` in row ``r``), ``buffers`` ``(order, spare,
    keys, counts, scratch)`` and ``leaf`` ``(mode, eta, leaf_cost, log_classes)``.
    """
    features, y, n_codes, categorical = data
    order, spare, keys, counts, scratch = buffers
    f, v = nodes[node, _OPT_F], nodes[node, _OPT_V]
    first, n_children = nodes[node, _FIRST], nodes[node, _NCH]
    missing_code = n_codes[f]
    lo, hi = nodes[node, _LO], nodes[node, _HI]
    counts[:n_children] = 0
    for i in range(lo, hi):
        r = order[i]
        code = features[f, r]
        if v < 0:
            key = code
        elif categorical[f]:
            key = (1 if code != v else 0) + (1 if code == missing_code else 0)
        else:
            key = (1 if code > v else 0) + (1 if code == missing_code else 0)
        keys[i] = key
        counts[key, y[r]] += 1
    start = lo
    for c in range(n_children):
        size = 0
        for k in range(counts.shape[1]):
            size += counts[c, k]
        child = first + c
        nodes[child, _LO] = start
        nodes[child, _HI] = start + size
        weights[child] = _leaf_weight(counts, c, c == n_children - 1, leaf[0], leaf[1], leaf[2], leaf[3], scratch)
        start += size
    _partition(nodes, first, n_children, lo, hi, order, spare, keys)


@njit(cache=True)
def _partition(nodes: np.ndarray, first: int, n_children: int, lo: int, hi: int, order: np.ndarray,
               spare: np.ndarray, keys: np.ndarray) -> None:
    """Stable partition of ``order[lo:hi]`` by ``keys`` into the children's ranges."""
    fill = np.empty(n_children, dtype=np.int64)
    for c in range(n_children):
        fill[c] = nodes[first + c, _LO]
    for i in range(lo, hi):
        k = keys[i]
        spare[fill[k]] = order[i]
        fill[k] += 1
    for i in range(lo, hi):
        order[i] = spare[i]


@njit(cache=True)
def _preorder(nodes: np.ndarray, root: int) -> list[int]:
    """``root`` and every node below it, parents before children (``GrowNode.nodes``)."""
    out = [root]
    out.pop()
    stack = [root]
    while stack:
        u = stack.pop()
        out.append(u)
        first, n = nodes[u, _FIRST], nodes[u, _NCH]
        for c in range(n - 1, -1, -1):
            stack.append(first + c)
    return out


@njit(cache=True)
def _log_prior(n_options: int, leaf: bool, allow_leaves: bool, log_leaf_prior: float,
               log_split_share: float) -> float:
    """``log μ`` of a node's choice (:meth:`SubtreeSpace.log_prior_leaf` / ``log_prior_split``)."""
    if leaf:
        if n_options == 0:
            return 0.0
        return log_leaf_prior if allow_leaves else -math.inf
    if not allow_leaves:
        return 0.0
    return log_split_share - math.log(n_options)


@njit(cache=True)
def _log_grow(n_options: int, leaf: bool, allow_leaves: bool, log_grow_leaf: float, log_grow_split: float) -> float:
    """``log g`` of growing a node as a leaf / one split (:meth:`SubtreeSpace.log_grow`)."""
    if n_options == 0:
        return 0.0
    if not allow_leaves:
        return -math.log(n_options)
    return log_grow_leaf if leaf else log_grow_split - math.log(n_options)


@njit(cache=True)
def _terms(nodes: np.ndarray, weights: np.ndarray, root: int, boundary: int, allow_leaves: bool,
           priors: np.ndarray) -> tuple[float, float, int, int]:
    """:meth:`SubtreeSpace.subtree_terms`: ``(w, log μ − log g, changeable nodes, nodes)``."""
    score = 0.0
    prior_minus_grow = 0.0
    changeable = 0
    below = _preorder(nodes, root)
    for u in below:
        leaf = nodes[u, _OPT_F] < 0
        if leaf:
            score += weights[u]
        if nodes[u, _DEPTH] < boundary:
            n_options = nodes[u, _NOPT]
            if n_options:
                changeable += 1
            mu = _log_prior(n_options, leaf, allow_leaves, priors[0], priors[1])
            prior_minus_grow += mu - _log_grow(n_options, leaf, allow_leaves, priors[2], priors[3])
    return score, prior_minus_grow, changeable, len(below)


@njit(cache=True)
def _compact(nodes: np.ndarray, weights: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The live tree below ``root`` copied to fresh arrays (root at 0, children kept consecutive)."""
    live = len(_preorder(nodes, root))
    size = max(1024, 4 * live)
    fresh = np.empty((size, N_FIELDS), dtype=np.int64)
    fresh_weights = np.empty(size)
    fresh[0] = nodes[root]
    fresh[0, _PARENT] = -1
    fresh_weights[0] = weights[root]
    top = 1
    at = 0
    while at < top:  # breadth first: a node's children are copied together
        old_first, n = fresh[at, _FIRST], fresh[at, _NCH]
        if n:
            fresh[at, _FIRST] = top
            for c in range(n):
                fresh[top + c] = nodes[old_first + c]
                fresh[top + c, _PARENT] = at
                fresh_weights[top + c] = weights[old_first + c]
            top += n
        at += 1
    return fresh, fresh_weights, top


@njit(cache=True)
def _grow(nodes: np.ndarray, weights: np.ndarray, top: int, start: int, boundary: int, rng, grow_leaf: float,
          allow_leaves: bool, data: tuple, buffers: tuple, leaf: tuple,
          options: tuple) -> tuple[np.ndarray, np.ndarray, int]:
    """Grow ``start`` (a leaf) from the generating distribution ``g`` (``subtree_mcmc._grow_random``)."""
    n_fixed, cat_features, fixed_f, fixed_v, used0, used = options
    stack = [start]
    while stack:
        current = stack.pop()
        nodes[current, _OPT_F] = -1
        nodes[current, _FIRST] = -1
        nodes[current, _NCH] = 0
        if nodes[current, _DEPTH] >= boundary:
            continue
        n_options = nodes[current, _NOPT]
        if n_options == 0 or (allow_leaves and rng.random() < grow_leaf):
            continue
        pick = rng.integers(0, n_options)
        f, v = _option_of(nodes, current, pick, n_fixed, cat_features, fixed_f, fixed_v, used0, used)
        nodes, weights, top = _split(nodes, weights, top, current, f, v, data, buffers, leaf)
        first = nodes[current, _FIRST]
        for c in range(nodes[current, _NCH]):
            stack.append(first + c)
    return nodes, weights, top


@njit(cache=True)
def _change(nodes: np.ndarray, weights: np.ndarray, target: int, rng, data: tuple, buffers: tuple, leaf: tuple,
            options: tuple, saved: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """A change move at ``target`` (``subtree_mcmc._change_move``), applied: ``(log α, undo record)``.

    The undo record holds, per node below ``target``, its id and range (and in its
    last row the old test), and the nodes' leaf weights; empty when the step stays.
    """
    n_fixed, fixed_f, fixed_v = options[0], options[2], options[3]
    empty, no_weights = np.empty((0, 3), dtype=np.int64), np.empty(0)
    if nodes[target, _OPT_F] < 0 or nodes[target, _OPT_V] < 0 or n_fixed == 0:
        return 0.0, empty, no_weights
    pick = rng.integers(0, n_fixed)
    f, v = fixed_f[pick], fixed_v[pick]
    if f == nodes[target, _OPT_F] and v == nodes[target, _OPT_V]:
        return 0.0, empty, no_weights
    below = _preorder(nodes, target)
    undo = np.empty((len(below) + 1, 3), dtype=np.int64)
    undo_weights = np.empty(len(below))
    old_score = 0.0
    for k in range(len(below)):
        u = below[k]
        undo[k, 0], undo[k, 1], undo[k, 2] = u, nodes[u, _LO], nodes[u, _HI]
        undo_weights[k] = weights[u]
        if nodes[u, _OPT_F] < 0:
            old_score += weights[u]
    undo[len(below), 0], undo[len(below), 1] = nodes[target, _OPT_F], nodes[target, _OPT_V]
    order = buffers[0]
    lo, hi = nodes[target, _LO], nodes[target, _HI]
    saved[lo:hi] = order[lo:hi]
    nodes[target, _OPT_F], nodes[target, _OPT_V] = f, v
    for u in below:  # parents before children: each node's rows are set before it splits
        if nodes[u, _OPT_F] >= 0:
            _route(nodes, weights, u, data, buffers, leaf)
    new_score = 0.0
    for u in below:
        if nodes[u, _OPT_F] < 0:
            new_score += weights[u]
    return new_score - old_score, undo, undo_weights


@njit(cache=True)
def _undo_change(nodes: np.ndarray, weights: np.ndarray, target: int, undo: np.ndarray,
                 undo_weights: np.ndarray, order: np.ndarray, saved: np.ndarray) -> None:
    """Restore the state before :func:`_change` (a rejected change move)."""
    n = undo.shape[0] - 1
    for k in range(n):
        u = undo[k, 0]
        nodes[u, _LO], nodes[u, _HI] = undo[k, 1], undo[k, 2]
        weights[u] = undo_weights[k]
    nodes[target, _OPT_F], nodes[target, _OPT_V] = undo[n, 0], undo[n, 1]
    lo, hi = nodes[target, _LO], nodes[target, _HI]
    order[lo:hi] = saved[lo:hi]


@njit(cache=True)
def _regrow(nodes: np.ndarray, weights: np.ndarray, top: int, target: int, boundary: int, rng, score: float,
            n_changeable: int, log_u: float, settings: tuple, data: tuple, buffers: tuple, leaf: tuple,
            options: tuple, priors: np.ndarray, saved: np.ndarray):
    """A regrow move at ``target`` (``mcmc_subtree``'s); returns the state after the test.

    Returns ``(nodes, weights, top, accepted, score, n_changeable, size change)``.
    """
    allow_leaves, grow_leaf = settings
    n_fixed, cat_features, fixed_f, fixed_v, used0, used = options
    n_options = nodes[target, _NOPT]
    pick = rng.integers(0, n_options + (1 if allow_leaves else 0))
    new_leaf = pick >= n_options
    old = nodes[target].copy()
    old_leaf = old[_OPT_F] < 0
    old_score, old_pg, old_changeable, old_size = _terms(nodes, weights, target, boundary, allow_leaves, priors)
    order = buffers[0]
    lo, hi = nodes[target, _LO], nodes[target, _HI]
    saved[lo:hi] = order[lo:hi]
    saved_top = top
    nodes[target, _OPT_F], nodes[target, _FIRST], nodes[target, _NCH] = -1, -1, 0
    if not new_leaf:
        f, v = _option_of(nodes, target, pick, n_fixed, cat_features, fixed_f, fixed_v, used0, used)
        nodes, weights, top = _split(nodes, weights, top, target, f, v, data, buffers, leaf)
        first = nodes[target, _FIRST]
        for c in range(nodes[target, _NCH]):
            nodes, weights, top = _grow(nodes, weights, top, first + c, boundary, rng, grow_leaf, allow_leaves,
                                        data, buffers, leaf, options)
    new_score, new_pg, changeable_below, new_size = _terms(nodes, weights, target, boundary, allow_leaves, priors)
    new_total = score - old_score + new_score
    new_changeable = n_changeable - old_changeable + changeable_below
    mu_old = _log_prior(n_options, old_leaf, allow_leaves, priors[0], priors[1])
    mu_new = _log_prior(n_options, new_leaf, allow_leaves, priors[0], priors[1])
    g_old = _log_grow(n_options, old_leaf, allow_leaves, priors[2], priors[3])
    g_new = _log_grow(n_options, new_leaf, allow_leaves, priors[2], priors[3])
    log_ratio = ((mu_new - mu_old) + (new_pg - (mu_new - g_new)) - (old_pg - (mu_old - g_old))
                 + math.log(n_changeable) - math.log(new_changeable))
    log_alpha = (new_total - score) + log_ratio
    if log_u < log_alpha:
        return nodes, weights, top, True, new_total, new_changeable, new_size - old_size
    nodes[target] = old
    order[lo:hi] = saved[lo:hi]
    return nodes, weights, saved_top, False, score, n_changeable, 0


@njit(cache=True)
def run_subtree_chain(nodes: np.ndarray, weights: np.ndarray, boundary: int, rng, log_u: np.ndarray,
                      change_share: float, settings: tuple, data: tuple, buffers: tuple, leaf: tuple,
                      options: tuple, priors: np.ndarray):
    """The fixed-length chain from the grown start ``nodes[0]``; ``(nodes, weights, root, accepted)``.

    ``nodes[0]`` is the chain's start node as a leaf (its range all of ``order``);
    ``settings`` is ``(allow_leaves, grow_leaf)``; one step per entry of ``log_u``.
    """
    allow_leaves, grow_leaf = settings
    order = buffers[0]
    saved = np.empty_like(order)
    nodes, weights, top = _grow(nodes, weights, 1, 0, boundary, rng, grow_leaf, allow_leaves, data, buffers, leaf,
                                options)
    root = 0
    score, _, n_changeable, live = _terms(nodes, weights, root, boundary, allow_leaves, priors)
    accepted_total = 0
    if n_changeable == 0:
        return nodes, weights, root, -1
    candidates = _candidates(nodes, root, boundary)
    for step in range(log_u.shape[0]):
        target = candidates[rng.integers(0, len(candidates))]
        if change_share and rng.random() < change_share:
            log_alpha, undo, undo_weights = _change(nodes, weights, target, rng, data, buffers, leaf, options,
                                                    saved)
            if log_u[step] < log_alpha:
                accepted_total += 1
                score += log_alpha
            elif undo.shape[0]:
                _undo_change(nodes, weights, target, undo, undo_weights, order, saved)
            continue
        nodes, weights, top, accepted, score, n_changeable, grown = _regrow(
            nodes, weights, top, target, boundary, rng, score, n_changeable, log_u[step], settings, data, buffers,
            leaf, options, priors, saved)
        if accepted:
            accepted_total += 1
            live += grown
            if top > 4 * live + 1024:
                nodes, weights, top = _compact(nodes, weights, root)
                root = 0
            candidates = _candidates(nodes, root, boundary)
    return nodes, weights, root, accepted_total


@njit(cache=True)
def _candidates(nodes: np.ndarray, root: int, boundary: int) -> np.ndarray:
    """Nodes a step may pick: above the boundary, with an option (in pre-order)."""
    below = _preorder(nodes, root)
    out = np.empty(len(below), dtype=np.int64)
    n = 0
    for u in below:
        if nodes[u, _DEPTH] < boundary and nodes[u, _NOPT] > 0:
            out[n] = u
            n += 1
    return out[:n]
