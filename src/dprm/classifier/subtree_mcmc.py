"""The subtree release by Metropolis–Hastings: regrow and change moves.

The target is the exponential mechanism of :mod:`dprm.classifier.subtree_search`
(its :class:`~dprm.classifier.subtree_search.SubtreeSpace` gives the leaves'
log-weights, the base measure ``μ`` and the generating distribution ``g``); this
module runs the chain over the subtrees of one computation (:func:`mcmc_subtree`).
Its limit is the exact draw, whatever the share of change moves; the number of steps
is fixed and data-independent unless the paper's variance stop is asked for.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dprm.classifier.encoding import CATEGORICAL
from dprm.classifier.subtree_search import GROW_LEAF, GrowNode, SubtreeSpace, split_node
from dprm.privacy import MetropolisChain

#: Most classes of the compiled chain (:data:`dprm.classifier._chain_kernel.MAX_CLASSES`; not
#: imported from there, which would import numba with the module).
MAX_CLASSES = 128

__all__ = ["mcmc_subtree", "chain_accept", "CHANGE_SHARE"]

#: Share of the dprm chain's steps that propose a *change* move (see :func:`mcmc_subtree`).
CHANGE_SHARE = 0.5


def _grow_random(space: SubtreeSpace, node: GrowNode, boundary: int, rng: np.random.Generator) -> None:
    """Grow ``node`` (a leaf) from the generating distribution ``g`` down to ``boundary``."""
    stack = [node]
    while stack:
        current = stack.pop()
        current.option, current.children = None, []
        if current.depth >= boundary:
            continue
        options = space.options(current.used)
        if not options or (space.allow_leaves and rng.random() < GROW_LEAF):
            continue
        split_node(space, current, options[int(rng.integers(len(options)))])
        stack.extend(current.children)


def mcmc_subtree(
    space: SubtreeSpace,
    node: GrowNode,
    depth: int,
    chain: MetropolisChain,
    rng: np.random.Generator,
    steps: int,
    *,
    buffer: int | None = None,
    threshold: float = 0.0,
    change_share: float = 0.0,
    compiled: bool = True,
) -> int:
    """Grow ``node`` by a Metropolis–Hastings chain over its subtrees of depth ``<= depth``.

    Two kinds of step, chosen by a coin of probability ``change_share`` that does
    not look at the state (a mixture of two kernels, each reversible with respect to
    the exponential mechanism, is reversible with respect to it; the limit is the
    exact draw either way):

    * *regrow* (the paper's Algorithm 3, generalised): a node above the boundary gets
      a new split (or becomes a leaf) drawn uniformly, and what is below it is
      regrown from the generating distribution ``g``; the Hastings ratio corrects
      for ``μ / g``;
    * *change*: a node split by a two-way test (a category test or a numeric
      threshold) gets another such test drawn uniformly from the same fixed list,
      and keeps the shape of its subtree, whose rows are routed again. The
      proposal is symmetric (the same node list, since the shape and the used
      features stay; the same option list), and ``μ`` of the tree is unchanged (a
      split's base measure depends only on the number of options, which a two-way
      test does not change), so the ratio is the scores' alone. It lets a good
      subtree survive a better test above it, which regrowing destroys: the
      chain mixes faster where the target is sharp (large ``ε · n``). A node that
      is a leaf or a multiway split, or the same test drawn again, is a step that
      stays (it still uses its acceptance uniform, so the count stays fixed).

    Parameters
    ----------
    space : SubtreeSpace
        ``space.eta`` must be the chain's ``1 / chain.scale``.
    node : GrowNode
        Grown in place (final state of the chain).
    depth : int
        Depth of the subtrees below ``node``.
    chain : MetropolisChain
        Acceptance tests (charged when the chain's mechanism started).
    rng : numpy.random.Generator
        Proposals (data-independent).
    steps : int
        Steps (the stop, unless ``buffer`` stops it earlier).
    buffer : int, optional
        The paper's stop: end once the variance of the last ``buffer`` scores is at
        most ``threshold`` (a data-dependent stop).
    change_share : float
        Probability of a change step (0: the paper's chain).
    compiled : bool
        Run a fixed-length chain in the compiled loop
        (:func:`dprm.classifier._chain_kernel.run_subtree_chain`: the same chain, the
        same draws); False: this Python loop (also used for the variance stop).

    Returns
    -------
    int
        Steps made.
    """
    boundary = node.depth + depth
    if compiled and buffer is None and steps > 0 and space.options(node.used) and space.n_classes <= MAX_CLASSES:
        return _compiled_chain(space, node, boundary, chain, rng, steps, change_share)
    _grow_random(space, node, boundary, rng)
    score, _, _, n_changeable = space.subtree_terms(node, boundary)
    recent: list[float] = []
    candidates: list[GrowNode] | None = None
    made = accepted_total = 0
    # The fixed-length chain draws its acceptance uniforms in one call: the same
    # stream as one draw per step, since the chain makes every step (a data-
    # independent number); a data-dependent stop draws them one by one.
    log_u = chain.log_uniforms(steps) if buffer is None and n_changeable else None
    for made in range(1, steps + 1):
        if n_changeable == 0:
            break
        if candidates is None:  # the tree changed (a rejected move restores it exactly)
            candidates = [u for u in node.nodes() if u.depth < boundary and space.options(u.used)]
        target = candidates[int(rng.integers(len(candidates)))]
        if change_share and rng.random() < change_share:
            log_alpha, restore = _change_move(space, target, rng)
            accepted = _accept(chain, log_alpha, log_u, made)
            accepted_total += accepted
            if accepted:
                score += log_alpha
            else:
                restore()
            if buffer and _variance_stop(recent, score, buffer, threshold):
                break
            continue
        options = space.options(target.used)
        n_choices = len(options) + (1 if space.allow_leaves else 0)
        pick = int(rng.integers(n_choices))
        new_option = options[pick] if pick < len(options) else None
        old_option, old_children = target.option, target.children
        old_score, old_pg, _, old_changeable = space.subtree_terms(target, boundary)
        if new_option is None:
            target.option, target.children = None, []
        else:
            split_node(space, target, new_option)
            for child in target.children:
                _grow_random(space, child, boundary, rng)
        new_score, new_pg, _, changeable_below = space.subtree_terms(target, boundary)
        new_total = score - old_score + new_score
        new_changeable = n_changeable - old_changeable + changeable_below
        # μ/g of the target itself: its new choice was drawn uniformly, not from g.
        n_opt = len(options)
        old_leaf = old_option is None
        new_leaf = new_option is None
        mu_old = space.log_prior_leaf(n_opt) if old_leaf else space.log_prior_split(n_opt)
        mu_new = space.log_prior_leaf(n_opt) if new_leaf else space.log_prior_split(n_opt)
        g_old = space.log_grow(n_opt, old_leaf)
        g_new = space.log_grow(n_opt, new_leaf)
        log_ratio = (
            (mu_new - mu_old)
            + (new_pg - (mu_new - g_new)) - (old_pg - (mu_old - g_old))
            + math.log(n_changeable) - math.log(new_changeable)
        )
        log_alpha = (new_total - score) + log_ratio
        accepted = _accept(chain, log_alpha, log_u, made)
        accepted_total += accepted
        if accepted:
            score, n_changeable = new_total, new_changeable
            candidates = None
        else:
            target.option, target.children = old_option, old_children
        if buffer and _variance_stop(recent, score, buffer, threshold):
            break
    if log_u is not None:
        chain.record(made, accepted_total)
    _mark_final(space, node, boundary)
    return made


def _compiled_chain(space: SubtreeSpace, node: GrowNode, boundary: int, chain: MetropolisChain,
                    rng: np.random.Generator, steps: int, change_share: float) -> int:
    """:func:`mcmc_subtree`'s fixed-length chain in the compiled loop; the tree is written back to ``node``."""
    from dprm.classifier._chain_kernel import N_FIELDS, SCORE_GINI, SCORE_JOINT, SCORE_MAJORITY, run_subtree_chain

    n_classes = space.n_classes
    if not space.joint_labels and space.score == "majority":
        mode = SCORE_MAJORITY
    else:
        mode = SCORE_JOINT if space.joint_labels else SCORE_GINI
    # the kernel's argument types are those `dprm warm-cache` compiles, whoever calls: the
    # rows as int32 unless the data needs int64 (as the estimator's root), the codes as a
    # C-ordered (features, rows) array, the transpose of the column-major copy (no copy; the
    # numba layout of a column-major array with one feature or one row would be 'C', not 'F')
    row_type = np.int32 if space.codes.shape[0] < 2**31 else np.int64
    rows = np.ascontiguousarray(node.rows, dtype=row_type)
    fixed = space._numeric_options
    n_codes = np.asarray(space._n_codes, dtype=np.int64)
    kinds = np.array([d.kind == CATEGORICAL for d in space.domains], dtype=bool)
    data = (np.ascontiguousarray(space._columns.T), np.ascontiguousarray(space.y, dtype=np.intp), n_codes, kinds)
    widest = max([3] + [int(n_codes[f]) + 1 for f, multiway in enumerate(space._categorical) if multiway])
    buffers = (rows.copy(), np.empty_like(rows), np.empty(rows.size, dtype=np.int32),
               np.zeros((widest, n_classes), dtype=np.int64), np.empty(n_classes))
    leaf = (mode, float(space.eta), float(space.leaf_cost), math.log(n_classes))
    used0 = np.zeros(len(space.domains), dtype=bool)
    used0[list(node.used)] = True
    cat_features = np.array([f for f, d in enumerate(space.domains) if space._categorical[f] and d.n_options],
                            dtype=np.int64)
    options = (len(fixed), cat_features, space._fixed_feature, space._fixed_value, used0, used0.copy())
    prior = space.leaf_prior if space.allow_leaves else 0.5  # unused without leaves
    priors = np.array([math.log(prior), math.log1p(-prior), math.log(GROW_LEAF), math.log1p(-GROW_LEAF)])
    nodes = np.empty((1024, N_FIELDS), dtype=np.int64)
    nodes[0] = (-1, 0, -1, 0, node.depth, 0, rows.size, int(node.missing_branch), len(space.options(node.used)), -1)
    weights = np.empty(1024)
    weights[0] = space.node_leaf_weight(node)
    log_u = chain.log_uniforms(steps)
    nodes, weights, root, accepted = run_subtree_chain(
        nodes, weights, boundary, rng, log_u, float(change_share), (bool(space.allow_leaves), GROW_LEAF), data,
        buffers, leaf, options, priors)
    chain.record(steps, int(accepted))
    _write_back(space, node, nodes, weights, root, buffers[0], boundary)
    return steps


def _write_back(space: SubtreeSpace, node: GrowNode, nodes: np.ndarray, weights: np.ndarray, root: int,
                order: np.ndarray, boundary: int) -> None:
    """The compiled chain's final tree as :class:`GrowNode` objects below ``node`` (``final`` marked)."""
    from dprm.classifier._chain_kernel import HI, LO

    stack = [(node, root)]
    eta = space.eta
    while stack:
        current, i = stack.pop()
        f, v, first, n_children = (int(x) for x in nodes[i, :4])
        current._leaf_weight = (eta, float(weights[i]))
        if f < 0:
            current.option, current.children = None, []
            current.final = current.depth < boundary or not space.options(current.used)
            continue
        option = (f, v)
        used = space.child_used(current.used, option)
        current.option, current.final = option, False
        current.children = []
        for c in range(n_children):
            j = first + c
            child = GrowNode(rows=order[nodes[j, LO]:nodes[j, HI]], depth=current.depth + 1,
                             missing_branch=c == n_children - 1, used=used, _leaf_weight=(eta, float(weights[j])))
            current.children.append(child)
            stack.append((child, j))


def chain_accept(chain: MetropolisChain, log_alpha: float) -> bool:
    """One acceptance test ``log u < log_alpha`` on the chain's noise source."""
    accepted = bool(chain.log_uniforms(1)[0] < log_alpha)
    chain.record(1, int(accepted))
    return accepted


def _accept(chain: MetropolisChain, log_alpha: float, log_u: np.ndarray | None, made: int) -> bool:
    """The acceptance test of step ``made``: ``log_u[made - 1] < log_alpha`` with the
    uniforms drawn up front (the fixed-length chain, which records its steps at the
    end), else :func:`chain_accept` (one uniform drawn now, recorded now)."""
    if log_u is None:
        return chain_accept(chain, log_alpha)
    return bool(log_u[made - 1] < log_alpha)


def _variance_stop(recent: list[float], score: float, buffer: int, threshold: float) -> bool:
    """Keep the last ``buffer`` scores in ``recent`` (``score`` added); whether their
    variance is at most ``threshold`` (the paper's data-dependent stop)."""
    recent.append(score)
    if len(recent) > buffer:
        recent.pop(0)
    return len(recent) == buffer and float(np.var(recent)) <= threshold


def _change_move(space: SubtreeSpace, target: GrowNode,
                 rng: np.random.Generator) -> tuple[float, Callable[[], None]]:
    """Propose another two-way test at ``target`` (subtree shape kept); ``(log α, undo)``.

    Applies the proposal in place. ``log α`` is the change of the subtree's
    log-weight (``η`` × score, labels summed out), ``undo`` restores the old state;
    a step that stays is ``(0.0, no-op)``.
    """
    fixed = space._numeric_options
    if target.option is None or space.is_multiway(target.option) or not fixed:
        return 0.0, _nothing
    new_option = fixed[int(rng.integers(len(fixed)))]
    if new_option == target.option:
        return 0.0, _nothing
    below = target.nodes()
    saved = [(u, u.rows, u._leaf_weight) for u in below]
    old_option = target.option
    old_score = sum(space.node_leaf_weight(u) for u in below if u.option is None)
    target.option = new_option
    for u in below:  # parents before children: each node's rows are set before it splits
        if u.option is None:
            continue
        parts, counts = space.split_rows(u.rows, u.option)
        flags = np.zeros(len(parts), dtype=bool)
        flags[-1] = True
        weights = space.leaf_log_weights(counts, flags).tolist()
        for c, child in enumerate(u.children):
            child.rows = parts[c]
            child._leaf_weight = (space.eta, weights[c])
    new_score = sum(space.node_leaf_weight(u) for u in below if u.option is None)

    def undo() -> None:
        target.option = old_option
        for u, rows, weight in saved:
            u.rows, u._leaf_weight = rows, weight

    return new_score - old_score, undo


def _nothing() -> None:
    return None


def _mark_final(space: SubtreeSpace, node: GrowNode, boundary: int) -> None:
    for u in node.nodes():
        if u.option is None:
            u.final = u.depth < boundary or not space.options(u.used)
