"""The itemset estimate's compiled loops (numba), apart so that importing the estimate does not import numba.

A small run calls them through :func:`dprm.precompiled.kernel` (the ahead-of-time
build, :data:`dprm.precompiled.KERNELS`), which imports this module, and numba with
it, only when the build lacks a kernel for the arguments' types; the Hoeffding
learner (streams) imports it when it learns. Each kernel's caller documents what it
computes: growing a batch tree (:mod:`dprm.itemsets.batch_tree`), drawing a chain's
rows (:mod:`dprm.itemsets.chain`), counting matches in a reference sample
(:mod:`dprm.itemsets.reference_sample`), soft predictions of a tree
(:mod:`dprm.itemsets.tree_model`), learning rows in a Hoeffding tree
(:mod:`dprm.itemsets.hoeffding`).
"""

import math

import numpy as np
from numba import njit


# --- from dprm.itemsets.batch_tree ---

@njit(cache=True)
def _chi2_quantile(df: float, z: float) -> float:  # pragma: no cover - compiled
    """The chi-squared quantile of ``df`` degrees of freedom at the normal quantile ``z`` (Wilson-Hilferty)."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


@njit(cache=True)
def _best_split(codes, rows, lo, hi, target, attributes, offsets, sizes, k, z, min_frac, max_share,
                stats):  # pragma: no cover - compiled
    """(attribute index, n · gain in bits) of the leaf holding ``rows[lo:hi]``; (-1, 0) when it stays a leaf.

    One pass over the leaf's rows fills the class counts of every (attribute, value):
    ``stats[offsets[a] + value, class]`` (a row's codes are contiguous in memory).
    """
    n = hi - lo
    cls = np.zeros(k)
    for i in range(lo, hi):
        cls[codes[rows[i], target]] += 1.0
    classes = 0
    majority = 0.0
    pre = 0.0
    for c in range(k):
        if cls[c] > 0.0:
            classes += 1
            p = cls[c] / n
            pre -= p * math.log2(p)
            majority = max(majority, cls[c])
    if classes < 2 or majority / n > max_share:
        return -1, 0.0
    stats[:, :] = 0.0
    n_att = len(attributes)
    for i in range(lo, hi):
        r = rows[i]
        y = codes[r, target]
        for a in range(n_att):
            stats[offsets[a] + codes[r, attributes[a]], y] += 1.0
    best = -1
    best_score = 0.0
    for a in range(n_att):
        width = sizes[attributes[a]]
        off = offsets[a]
        post = 0.0
        big = 0
        values = 0
        for v in range(width):
            w = 0.0
            for c in range(k):
                w += stats[off + v, c]
            if w > 0.0:
                values += 1
                if w / n > min_frac:
                    big += 1
                h = 0.0
                for c in range(k):
                    if stats[off + v, c] > 0.0:
                        p = stats[off + v, c] / w
                        h -= p * math.log2(p)
                post += w * h
        if big < 2:
            continue
        score = n * pre - post  # n · gain, in bits
        g = 2.0 * math.log(2.0) * score
        if g <= _chi2_quantile((values - 1.0) * (classes - 1.0), z):
            continue
        if score > best_score:
            best = a
            best_score = score
    return best, best_score


@njit(cache=True)
def _grow(codes, target, attributes, sizes, k, budget, max_depth, z, min_frac, max_share,
          capacity):  # pragma: no cover - compiled
    """Grow best first; ``n_nodes = -1`` when ``capacity`` (no budget) ran out."""
    n = codes.shape[0]
    offsets = np.zeros(len(attributes), dtype=np.int64)
    width_all = 0
    for a in range(len(attributes)):
        offsets[a] = width_all
        width_all += sizes[attributes[a]]
    feature = np.full(capacity, -1, dtype=np.int64)
    child_offset = np.zeros(capacity, dtype=np.int64)
    n_children = np.zeros(capacity, dtype=np.int64)
    child = np.zeros(capacity, dtype=np.int64)
    counts = np.zeros((capacity, k))
    lo_of = np.zeros(capacity, dtype=np.int64)
    hi_of = np.zeros(capacity, dtype=np.int64)
    depth = np.zeros(capacity, dtype=np.int64)
    split_on = np.full(capacity, -1, dtype=np.int64)
    score = np.zeros(capacity)
    rows = np.arange(n)
    scratch = np.empty(n, dtype=np.int64)
    stats = np.zeros((max(width_all, 1), k))
    for i in range(n):
        counts[0, codes[i, target]] += 1.0
    lo_of[0], hi_of[0] = 0, n
    n_nodes = 1
    n_child = 0
    if max_depth != 0:
        split_on[0], score[0] = _best_split(codes, rows, 0, n, target, attributes, offsets, sizes, k, z, min_frac,
                                            max_share, stats)
    while True:
        node = -1
        top = 0.0
        for j in range(n_nodes):  # the open leaf of largest n · gain
            if split_on[j] >= 0 and score[j] > top:
                node = j
                top = score[j]
        if node < 0:
            break
        col = attributes[split_on[node]]
        width = sizes[col]
        split_on[node] = -1
        if budget > 0 and n_nodes + width > budget:
            continue  # the budget has no room for this split: the leaf stays a leaf
        if n_nodes + width > capacity:
            return -1, feature, child_offset, n_children, child, n_child, counts
        lo, hi = lo_of[node], hi_of[node]
        # counting sort of the leaf's rows by the attribute's code
        start = np.zeros(width + 1, dtype=np.int64)
        for i in range(lo, hi):
            start[codes[rows[i], col] + 1] += 1
        for v in range(width):
            start[v + 1] += start[v]
        fill = start.copy()
        for i in range(lo, hi):
            v = codes[rows[i], col]
            scratch[fill[v]] = rows[i]
            fill[v] += 1
        for i in range(lo, hi):
            rows[i] = scratch[i - lo]
        feature[node] = col
        child_offset[node] = n_child
        n_children[node] = width
        for v in range(width):
            c = n_nodes + v
            child[n_child + v] = c
            lo_of[c], hi_of[c] = lo + start[v], lo + start[v + 1]
            depth[c] = depth[node] + 1
            for i in range(lo_of[c], hi_of[c]):
                counts[c, codes[rows[i], target]] += 1.0
            if hi_of[c] - lo_of[c] >= 2 and (max_depth < 0 or depth[c] < max_depth):
                split_on[c], score[c] = _best_split(codes, rows, lo_of[c], hi_of[c], target, attributes, offsets,
                                                    sizes, k, z, min_frac, max_share, stats)
        n_nodes += width
        n_child += width
    return n_nodes, feature, child_offset, n_children, child, n_child, counts


# --- from dprm.itemsets.chain ---

#: Most classes of a node whose class :func:`_draw` finds by a scan (more: a binary search over running sums).
_SCAN_CLASSES = 16


@njit(cache=True)
def _class_scanned(node_proba, g, u):  # pragma: no cover - compiled
    """The class of node ``g`` that ``u`` falls in: how many of its running sums ``u`` reaches (the last at most)."""
    n_classes = node_proba.shape[1]
    total = 0.0
    drawn = 0
    for k in range(n_classes):
        total += node_proba[g, k]
        if u >= total:
            drawn += 1
    return min(drawn, n_classes - 1)


@njit(cache=True)
def _draw(codes, u, target, feature, way_offset, n_ways, way, node_proba):  # pragma: no cover - compiled
    """Set column ``target`` of every row: the row's node (a hard descent), then the class ``u`` falls in.

    ``codes`` is column-major, ``codes[column, row]``: a tree writes one contiguous line and
    reads the few columns it tests row after row (row-major, a wide table's rows are
    thousands of bytes apart and every read and write missed the cache: 60 against 10 ns
    a cell for 500 columns). The tree is given as ways
    (:func:`dprm.itemsets.chain.descent_ways`): from node ``g`` a row
    whose code in column ``feature[g]`` is ``c`` goes to ``way[way_offset[g] + min(c, n_ways[g])]``,
    which is ``g`` itself at a leaf and for a code the split did not have, so a row has
    arrived when it stays put. Rows descend four at a time, in step, so that the four
    chains of dependent loads overlap (a third less time than one row at a time).
    """
    n = codes.shape[1]
    node = np.zeros(n, dtype=np.int64)
    if n_ways[0] > 0:  # a single leaf: every row stays at the root
        q = (n + 3) // 4
        for a in range(q):
            b = min(a + q, n - 1)
            c = min(a + 2 * q, n - 1)
            d = min(a + 3 * q, n - 1)
            ga = 0
            gb = 0
            gc = 0
            gd = 0
            while True:
                ha = way[way_offset[ga] + min(codes[feature[ga], a], n_ways[ga])]
                hb = way[way_offset[gb] + min(codes[feature[gb], b], n_ways[gb])]
                hc = way[way_offset[gc] + min(codes[feature[gc], c], n_ways[gc])]
                hd = way[way_offset[gd] + min(codes[feature[gd], d], n_ways[gd])]
                arrived = (ha == ga) & (hb == gb) & (hc == gc) & (hd == gd)
                ga = ha
                gb = hb
                gc = hc
                gd = hd
                if arrived:
                    break
            node[a] = ga
            node[b] = gb
            node[c] = gc
            node[d] = gd
    n_classes = node_proba.shape[1]
    if n_classes <= _SCAN_CLASSES:
        for r in range(n):
            codes[target, r] = _class_scanned(node_proba, node[r], u[r])
        return
    # Many classes (a column of thousands of declared categories): each node's running sums once,
    # then a binary search. The running sums are the scan's own floating-point sums, in its order;
    # where a node's probabilities are all >= 0 they never decrease (rounding is monotone), so the
    # classes whose sum u reaches are the first ones, and the search counts them: the scan's class.
    n_nodes = node_proba.shape[0]
    sums = np.empty((n_nodes, n_classes))
    ordered = np.ones(n_nodes, dtype=np.bool_)
    for g in range(n_nodes):
        total = 0.0
        for k in range(n_classes):
            p = node_proba[g, k]
            if not p >= 0.0:  # negative or NaN: the scan's count, not a search
                ordered[g] = False
            total += p
            sums[g, k] = total
    for r in range(n):
        g = node[r]
        if not ordered[g]:
            codes[target, r] = _class_scanned(node_proba, g, u[r])
            continue
        low = 0
        high = n_classes
        while low < high:  # the number of running sums at most u[r]
            middle = (low + high) // 2
            if u[r] >= sums[g, middle]:
                low = middle + 1
            else:
                high = middle
        codes[target, r] = min(low, n_classes - 1)



# --- from dprm.itemsets.reference_sample ---

@njit(cache=True)
def _popcount64(x):  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True)
def _pack_codes(columns, offsets, sizes, n_words):  # pragma: no cover - compiled
    """One bitset over the rows per (column, category): bit ``r`` (word ``r // 64``, bit ``r % 64``) of row
    ``offsets[j] + c`` is set when row ``r`` holds code ``c`` in column ``j`` (codes outside ``[0, sizes[j])``
    set none). ``columns`` is column-major (``columns[j, r]``), as :func:`_draw` writes a sample: a column's
    bitsets are filled while its codes are read in order."""
    m, n = columns.shape
    bits = np.zeros((int(np.sum(sizes)), n_words), dtype=np.uint64)
    for j in range(m):
        for r in range(n):
            c = columns[j, r]
            if 0 <= c < sizes[j]:
                bits[offsets[j] + c, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    return bits


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


# --- from dprm.itemsets.tree_model ---

@njit(cache=True)
def _soft_predict(codes, feature, child_offset, n_children, child, edge_proba, node_proba):  # pragma: no cover
    n_rows = codes.shape[0]
    n_classes = node_proba.shape[1]
    out = np.zeros((n_rows, n_classes))
    stack_node = np.empty(len(feature), dtype=np.int64)
    stack_weight = np.empty(len(feature))
    for r in range(n_rows):
        stack_node[0] = 0
        stack_weight[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            w = stack_weight[top]
            f = feature[node]
            if f < 0:
                for k in range(n_classes):
                    out[r, k] += w * node_proba[node, k]
                continue
            code = codes[r, f]
            if code >= n_children[node]:
                for k in range(n_classes):
                    out[r, k] += w * node_proba[node, k]
            elif code >= 0:
                stack_node[top] = child[child_offset[node] + code]
                stack_weight[top] = w
                top += 1
            else:
                o = child_offset[node]
                for j in range(n_children[node]):
                    p = edge_proba[o + j]
                    if p > 0.0:
                        stack_node[top] = child[o + j]
                        stack_weight[top] = w * p
                        top += 1
    return out


# --- from dprm.itemsets.hoeffding ---

@njit(cache=True)
def _entropy(dist) -> float:  # pragma: no cover - compiled
    total = 0.0
    for v in dist:
        total += v
    if total <= 0.0:
        return 0.0
    h = 0.0
    for v in dist:
        if v > 0.0:
            p = v / total
            h -= p * math.log2(p)
    return h


@njit(cache=True)
def _attempt_split(node, slot, attributes, att_offset, att_size, counts, total, stats, log_inv_delta, tau,
                   min_frac, max_share):  # pragma: no cover - compiled
    """The index (into ``attributes``) to split on; -1 for no split, -2 for no split and a reset of the
    attribute observers (the majority class holds more than ``max_share``)."""
    k = counts.shape[1]
    seen_classes = 0
    for c in range(k):
        if counts[node, c] > 0.0:
            seen_classes += 1
    if seen_classes < 2:
        return -1
    majority = 0.0
    for c in range(k):
        majority = max(majority, counts[node, c])
    if majority / total[node] > max_share:
        return -2
    pre = _entropy(counts[node])
    best = -np.inf
    second = -np.inf
    best_a = -1
    for a in range(len(attributes)):
        off = att_offset[a]
        weight = 0.0
        post = 0.0
        for v in range(att_size[a]):
            w = 0.0
            for c in range(k):
                w += stats[slot, off + v, c]
            if w > 0.0:
                post += w * _entropy(stats[slot, off + v])
            weight += w
        merit = -np.inf
        if weight > 0.0:
            big = 0
            for v in range(att_size[a]):
                w = 0.0
                for c in range(k):
                    w += stats[slot, off + v, c]
                if w / weight > min_frac:
                    big += 1
            if big >= 2:
                merit = pre - post / weight
        if merit >= best:
            second = best
            best = merit
            best_a = a
        elif merit > second:
            second = merit
    if best == -np.inf:
        return -1
    r = math.log2(max(seen_classes, 2))
    bound = math.sqrt(r * r * log_inv_delta / (2.0 * total[node]))
    if best - second > bound or bound < tau:
        return best_a
    return -1


@njit(cache=True)
def _learn_rows(codes, start, target, attributes, att_offset, att_size, widest, feature, child_offset, n_children,
                child, depth, slot, active, last_check, total, counts, initial, stats, free, state, grace,
                log_inv_delta, tau, min_frac, max_share, max_depth, max_nodes):  # pragma: no cover - compiled
    """Learn rows from ``start`` on; return where it stopped (len(codes) when done, earlier when
    a split could run out of capacity)."""
    k = counts.shape[1]
    n_att = len(attributes)
    for r in range(start, codes.shape[0]):
        if state[0] + widest > len(feature) or state[1] + widest > len(child) or state[2] < widest:
            return r
        node = 0
        stopped = False
        while feature[node] >= 0:
            code = codes[r, feature[node]]
            if code < 0 or code >= n_children[node]:
                stopped = True
                break
            node = child[child_offset[node] + code]
        y = codes[r, target]
        counts[node, y] += 1.0
        total[node] += 1.0
        if stopped or active[node] == 0:
            continue
        s = slot[node]
        for a in range(n_att):
            stats[s, att_offset[a] + codes[r, attributes[a]], y] += 1.0
        if max_depth >= 0 and depth[node] >= max_depth:
            active[node] = 0
            free[state[2]] = s
            state[2] += 1
            slot[node] = -1
            continue
        if total[node] - last_check[node] >= grace:
            a = _attempt_split(node, s, attributes, att_offset, att_size, counts, total, stats, log_inv_delta, tau,
                               min_frac, max_share)
            last_check[node] = total[node]
            if a == -2:
                stats[s, :, :] = 0.0
            elif a >= 0 and max_nodes >= 0 and state[0] + att_size[a] > max_nodes:
                active[node] = 0  # the budget is spent for this split: the leaf stops growing
                free[state[2]] = s
                state[2] += 1
                slot[node] = -1
            elif a >= 0:
                width = att_size[a]
                off = att_offset[a]
                first = state[0]
                feature[node] = attributes[a]
                child_offset[node] = state[1]
                n_children[node] = width
                for v in range(width):
                    c = first + v
                    child[state[1] + v] = c
                    feature[c] = -1
                    depth[c] = depth[node] + 1
                    t = 0.0
                    for j in range(k):
                        counts[c, j] = stats[s, off + v, j]
                        initial[c, j] = stats[s, off + v, j]
                        t += stats[s, off + v, j]
                    total[c] = t
                    last_check[c] = t
                    active[c] = 1
                    state[2] -= 1
                    new_slot = free[state[2]]
                    slot[c] = new_slot
                    stats[new_slot, :, :] = 0.0
                state[0] += width
                state[1] += width
                active[node] = 0
                slot[node] = -1
                free[state[2]] = s
                state[2] += 1
    return codes.shape[0]
