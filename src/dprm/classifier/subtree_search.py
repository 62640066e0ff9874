"""Private choice of a decision subtree: the exponential mechanism, exact or by MCMC.

One *computation* of Bai et al.'s embedding (Algorithm 1) grows the subtree of depth
at most ``d`` below a node with one exponential-mechanism release over all such
subtrees. This module samples that release.

Subtrees and their score
------------------------
A node either stays a leaf or splits on an *option*: a categorical feature not used
above it (``categorical_splits="multiway"``, the paper: one child per declared
category plus one for missing values), a test of one category against the others
(``"binary"``: children ``= v``, ``!= v``, missing; the feature may be tested again
below), either of the two (``"both"``: the multiway split and, for a feature of more
than two categories, its category tests; a two-category feature's test would repeat
its multiway split), or a threshold of a numeric feature (children ``<= t``, ``> t``,
missing).
Nodes at the computation's depth ``d`` are its *boundary*: leaves of this subtree
that the next computation may grow further.

The score is a sum over the subtree's leaves (boundary nodes included):

* ``score="majority"`` (dprm): ``max_c τ_c − λ`` per leaf, the rows a leaf labelled
  by its majority class gets right, less a data-independent cost of ``λ`` rows per
  leaf (none for a missing-values branch). Adding one row puts it in exactly one
  leaf of *every* candidate subtree, whose majority count then rises by 0 or 1; so
  every candidate's score changes by a value in ``[0, 1]`` (``[−1, 0]`` when
  removing): **bounded range R = 1**, and the release is ``P ∝ μ(T) exp(ε score(T))``.
* ``joint_labels`` (with the majority score; the classifier's default): a candidate
  is a subtree *with a label for each leaf*, scored by the rows whose leaf's label
  is their class, less ``λ`` per leaf. One added row raises the score of every
  labelled candidate by 1 (its leaf's label is its class) or 0: range 1 again. The
  labels have a uniform base measure ``C^{−leaves}``; summed out, a leaf weighs
  ``mean_c exp(η τ_c) · exp(−ηλ)`` (:meth:`SubtreeSpace.leaf_log_weights`), the
  structure is drawn from that marginal and each final leaf's label from its
  conditional ``∝ exp(η τ_c)`` (:meth:`SubtreeSpace.draw_label`): together one draw
  of the joint release.
* ``score="gini"`` (the paper's quality (2)): ``−(τ − Σ_c τ_c² / τ)`` per leaf,
  sensitivity 2 as the paper states (each leaf's ``Σ_c τ_c²/τ`` moves by at most 1
  and ``τ`` by 1), without range structure: ``P ∝ exp(ε score / 4)``.

The base measure ``μ`` (data-independent, so free, :mod:`dprm.privacy.structured`):
with ``allow_leaves`` (dprm) a node below the boundary is a leaf with prior weight
``leaf_prior`` and splits on each of its ``m`` options with ``(1 − leaf_prior)/m``;
without (the paper: complete ``(d+1)``-layer subtrees) every subtree weighs 1 and a
node is a leaf only when no option is left.

Exact sampling
--------------
The score is additive over leaves and ``μ`` is a product over nodes, so the release
factorises (:mod:`dprm.privacy.structured`): ``log Z`` of a node is computed
bottom-up over every option and child, then the subtree is drawn top-down. A child
without rows has a ``log Z`` that depends only on the schema and its depth, computed
once. The work is bounded by the number of (option path, child) pairs, a
data-independent figure :func:`exact_work` computes before anything is counted.

MCMC
----
Metropolis–Hastings over the same target (Algorithm 3, generalised): a step picks
one node above the boundary uniformly, proposes a uniform new choice for it (an
option, or a leaf when allowed) and regrows the nodes below it from a generating
distribution ``g`` (a leaf with probability ``GROW_LEAF`` when allowed, else a
uniform option). The acceptance is ``min(1, e^{Δw} · μ(new)/μ(old) ·
g(old below)/g(new below) · |C(x)|/|C(x')|)``, with ``w`` the sum of the leaves'
log-weights (``η`` × score, labels summed out if joint) and ``C`` the set of nodes a step
may pick: detailed balance with ``μ exp(η score)``, so upon convergence the state is
an exponential-mechanism draw. Proposals use ``rng`` (data-independent), the
acceptance tests the accountant's noise (:class:`~dprm.privacy.MetropolisChain`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from dprm.privacy import MetropolisChain, StructuredDraw
from dprm.classifier.encoding import CATEGORICAL, FeatureEncoding

__all__ = [
    "SubtreeSpace",
    "GrowNode",
    "exact_subtree",
    "mcmc_subtree",
    "exact_work",
    "SCORES",
    "GROW_LEAF",
]

SCORES = ("majority", "gini")
#: Probability that the MCMC proposal grows a new node as a leaf (when leaves are allowed).
GROW_LEAF = 0.75

Option = tuple[int, int]  # (feature, threshold index; -1 for a categorical multiway split)


@dataclass
class GrowNode:
    """A node of a tree being grown.

    Attributes
    ----------
    rows : numpy.ndarray of int
        Training rows in the node (never released).
    depth : int
        Depth in the whole tree (root 0).
    missing_branch : bool
        The node is the missing-values child of its parent.
    used : frozenset of int
        Categorical features split on above it.
    option : tuple or None
        ``(feature, threshold index)`` of its split (``-1`` for categorical), None for
        a leaf.
    children : list of GrowNode
    final : bool
        A leaf by choice (or with no option left): no later computation grows it.
    """

    rows: np.ndarray
    depth: int
    missing_branch: bool = False
    used: frozenset[int] = frozenset()
    option: Option | None = None
    children: list[GrowNode] = field(default_factory=list)
    final: bool = False
    label: int | None = None
    _leaf_weight: tuple[float, float] | None = field(default=None, repr=False, compare=False)

    def nodes(self) -> list[GrowNode]:
        """This node and every node below it, parents before children."""
        out, stack = [], [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


@dataclass
class SubtreeSpace:
    """The data and the rules of a subtree release.

    Attributes
    ----------
    codes : numpy.ndarray, shape (n_rows, n_features), int32
        Feature codes (:mod:`dprm.classifier.encoding`).
    y : numpy.ndarray of int
        Class index of each row.
    n_classes : int
    domains : sequence of FeatureEncoding
    score : {"majority", "gini"}
    eta : float
        Inverse temperature of the release (``ε/R``, from the :class:`StructuredDraw`
        or chain).
    allow_leaves : bool
        Nodes above the boundary may stay leaves (dprm); else complete subtrees.
    leaf_prior : float
        Base-measure weight of staying a leaf (``allow_leaves``).
    leaf_cost : float
        Cost per leaf in rows (majority score only; the classifier uses half the
        leaves' noise scale with noisy-count leaves and 0 with joint labels).
    joint_labels : bool
        The leaves' labels are drawn by the same release (majority score only):
        :meth:`leaf_log_weights`, :meth:`draw_label`.
    categorical_splits : {"multiway", "binary", "both"}
        A categorical feature splits into all its categories (the paper) or into one
        category against the others (``f = v`` / ``f != v`` / missing; the feature may
        be split again below), or either (``"both"``; module docstring). An option
        ``(f, -1)`` of a categorical feature is its multiway split.
    """

    codes: np.ndarray
    y: np.ndarray
    n_classes: int
    domains: Sequence[FeatureEncoding]
    score: str = "majority"
    eta: float = 1.0
    allow_leaves: bool = True
    leaf_prior: float = 0.5
    leaf_cost: float = 1.0
    categorical_splits: str = "multiway"
    joint_labels: bool = False
    _empty: dict[tuple[int, frozenset[int], bool], float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._options: dict[frozenset[int], list[Option]] = {}
        multiway = self.categorical_splits in ("multiway", "both")
        # "both": a two-category feature's one test is its multiway split; no duplicate
        self._categorical = [d.kind == CATEGORICAL and multiway for d in self.domains]
        self._binary_categorical = [
            d.kind == CATEGORICAL
            and (self.categorical_splits == "binary" or (self.categorical_splits == "both" and d.n_codes > 2))
            for d in self.domains
        ]
        self._n_codes = [d.n_codes for d in self.domains]
        # options that never run out: numeric thresholds, binary category tests
        # (one test suffices for a feature with two categories)
        self._numeric_options: list[Option] = [
            (f, j)
            for f, d in enumerate(self.domains)
            if d.kind != CATEGORICAL
            for j in range(d.n_options)
        ] + [
            (f, v)
            for f, d in enumerate(self.domains)
            if self._binary_categorical[f] and d.n_options
            for v in range(1 if d.n_codes == 2 else d.n_codes)
        ]
        fixed = self._numeric_options
        self._fixed_feature = np.array([f for f, _ in fixed], dtype=np.int64)
        self._fixed_value = np.array([v for _, v in fixed], dtype=np.int64)
        self._fixed_binary = np.array([self._binary_categorical[f] for f, _ in fixed], dtype=bool)
        self._widest = max(self._n_codes, default=1)

    def feature_histograms(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class counts of ``rows`` per feature and code, in one pass.

        Returns
        -------
        present : ndarray, shape (n_features, widest, n_classes)
            Counts per present code (zero-padded past a feature's codes).
        missing : ndarray, shape (n_features, n_classes)
            Counts of the rows missing the feature.
        """
        C, F, K = self.n_classes, len(self.domains), self._widest
        codes = self.codes[rows].astype(np.int64)
        missing_codes = np.asarray(self._n_codes, dtype=np.int64)
        codes = np.where(codes == missing_codes, K, codes)
        key = (np.arange(F, dtype=np.int64) * (K + 1) + codes) * C + self.y[rows][:, None]
        flat = np.bincount(key.ravel(), minlength=F * (K + 1) * C).reshape(F, K + 1, C)
        return flat[:, :K], flat[:, K]

    def _last_level_weights(self, rows: np.ndarray, options: Sequence[Option], split_prior: float) -> np.ndarray:
        """Log-weights of every split whose children are all leaves (vectorised)."""
        present, missing = self.feature_histograms(rows)
        weights = np.empty(len(options))
        n_fixed = len(self._numeric_options)
        n_multi = len(options) - n_fixed
        for i in range(n_multi):  # multiway splits: one child per category + missing
            f = options[i][0]
            counts = np.concatenate([present[f, : self._n_codes[f]], missing[f][None]])
            flags = np.zeros(counts.shape[0], dtype=bool)
            flags[-1] = True
            weights[i] = split_prior + float(self.leaf_log_weights(counts, flags).sum())
        if n_fixed:
            f, v = self._fixed_feature, self._fixed_value
            totals = present.sum(axis=1)
            cumulative = np.cumsum(present, axis=1)
            below = np.where(self._fixed_binary[:, None], present[f, v], cumulative[f, v])
            children = np.stack([below, totals[f] - below, missing[f]], axis=1)
            flags = np.array([False, False, True])
            weights[n_multi:] = split_prior + self.leaf_log_weights(children, flags).sum(axis=1)
        return weights

    # -- options and children ---------------------------------------------------
    def options(self, used: frozenset[int]) -> list[Option]:
        """Splits available below categorical features ``used`` (do not modify)."""
        cached = self._options.get(used)
        if cached is None:
            cats = [
                (f, -1)
                for f, d in enumerate(self.domains)
                if self._categorical[f] and f not in used and d.n_options
            ]
            cached = self._options[used] = cats + self._numeric_options
        return cached

    def node_leaf_weight(self, node: GrowNode) -> float:
        """Log-weight of ``node`` as a leaf (cached per node and ``eta``)."""
        cached = node._leaf_weight
        if cached is None or cached[0] != self.eta:
            value = float(self.leaf_log_weights(self.counts(node.rows), node.missing_branch))
            node._leaf_weight = cached = (self.eta, value)
        return cached[1]

    def leaf_log_weights(self, counts: np.ndarray, missing_branch: np.ndarray | bool) -> np.ndarray:
        """Log-weight of leaves in the release: ``η`` × score, labels summed out if joint.

        With ``joint_labels`` a leaf's label is part of the candidate (score: the rows
        of the label's class, less the leaf cost) under a uniform base measure over
        the ``C`` labels, so the leaf weighs ``mean_c exp(η τ_c) · exp(−ηλ)``.
        """
        if not self.joint_labels:
            return self.eta * self.leaf_scores(counts, missing_branch)
        counts = np.asarray(counts, dtype=np.float64)
        cost = np.where(missing_branch, 0.0, self.leaf_cost)
        scaled = self.eta * counts
        top = scaled.max(axis=-1)
        total = np.log(np.exp(scaled - top[..., None]).sum(axis=-1)) + top
        return total - math.log(self.n_classes) - self.eta * cost

    def draw_label(self, node: GrowNode, draw: StructuredDraw) -> int:
        """Draw a leaf's label ``∝ exp(η τ_c)`` (its conditional in the joint release)."""
        return draw.choose(self.eta * self.counts(node.rows).astype(np.float64))

    def is_multiway(self, option: Option) -> bool:
        """Whether ``option`` splits a categorical feature into all its categories."""
        f, j = option
        return self._categorical[f] and j < 0

    def n_children(self, option: Option) -> int:
        """Children of a split: categories + missing, or ``<=`` / ``=``, ``>`` / ``!=``, missing."""
        return self._n_codes[option[0]] + 1 if self.is_multiway(option) else 3

    def child_used(self, used: frozenset[int], option: Option) -> frozenset[int]:
        return used | {option[0]} if self.is_multiway(option) else used

    def children_rows(self, rows: np.ndarray, option: Option) -> list[np.ndarray]:
        """Rows of each child of ``option`` (missing-values child last)."""
        f, j = option
        column = self.codes[rows, f]
        if self.is_multiway(option):
            k = self._n_codes[f]
            order = np.argsort(column, kind="stable")
            bounds = np.concatenate(([0], np.cumsum(np.bincount(column, minlength=k + 1))))
            ordered = rows[order]
            return [ordered[bounds[c] : bounds[c + 1]] for c in range(k + 1)]
        missing = self._n_codes[f]
        if self.domains[f].kind == CATEGORICAL:
            return [rows[column == j], rows[(column != j) & (column < missing)], rows[column == missing]]
        return [rows[column <= j], rows[(column > j) & (column < missing)], rows[column == missing]]

    def counts(self, rows: np.ndarray) -> np.ndarray:
        """Class counts of ``rows``."""
        return np.bincount(self.y[rows], minlength=self.n_classes)

    # -- scores ----------------------------------------------------------------------
    def leaf_scores(self, counts: np.ndarray, missing_branch: np.ndarray | bool) -> np.ndarray:
        """Score of leaves with class counts ``counts[..., c]``."""
        counts = np.asarray(counts, dtype=np.float64)
        if self.score == "majority":
            cost = self.leaf_cost
            return counts.max(axis=-1) - np.where(missing_branch, 0.0, cost)
        sizes = counts.sum(axis=-1)
        squares = np.square(counts).sum(axis=-1)
        safe = np.where(sizes > 0, sizes, 1.0)
        return -(sizes - squares / safe)

    # -- the base measure ------------------------------------------------------------
    def log_prior_leaf(self, n_options: int) -> float:
        """``log μ`` of staying a leaf with ``n_options`` options."""
        if n_options == 0:
            return 0.0
        return math.log(self.leaf_prior) if self.allow_leaves else -math.inf

    def log_prior_split(self, n_options: int) -> float:
        """``log μ`` of one particular split among ``n_options``."""
        if not self.allow_leaves:
            return 0.0
        return math.log1p(-self.leaf_prior) - math.log(n_options)

    def log_grow(self, n_options: int, leaf: bool) -> float:
        """``log g`` of growing a new node as a leaf / as one particular split (MCMC)."""
        if n_options == 0:
            return 0.0
        if not self.allow_leaves:
            return -math.log(n_options)
        return math.log(GROW_LEAF) if leaf else math.log1p(-GROW_LEAF) - math.log(n_options)

    # -- exact: log-partition bottom-up ------------------------------------------
    def choice_weights(
        self, rows: np.ndarray, remaining: int, used: frozenset[int], missing_branch: bool
    ) -> tuple[float, list[Option], np.ndarray]:
        """``(log weight of the leaf, options, log weight of each split)`` of a node."""
        leaf = float(self.leaf_log_weights(self.counts(rows), missing_branch))
        options = self.options(used)
        if remaining == 0 or not options:
            return leaf, [], np.empty(0)
        leaf_weight = self.log_prior_leaf(len(options)) + leaf
        split_prior = self.log_prior_split(len(options))
        if rows.size == 0:
            weights = np.array(
                [split_prior + self._empty_split(option, remaining, used) for option in options]
            )
            return leaf_weight, options, weights
        if remaining == 1:
            return leaf_weight, options, self._last_level_weights(rows, options, split_prior)
        weights = np.empty(len(options))
        for i, option in enumerate(options):
            child_used = self.child_used(used, option)
            parts = self.children_rows(rows, option)
            total = 0.0
            for c, child_rows in enumerate(parts):
                total += self.log_z(child_rows, remaining - 1, child_used, c == len(parts) - 1)
            weights[i] = split_prior + total
        return leaf_weight, options, weights

    def log_z(self, rows: np.ndarray, remaining: int, used: frozenset[int], missing_branch: bool) -> float:
        """``log Z``: log of the total weight of the subtrees below a node."""
        if rows.size == 0:
            return self._empty_log_z(remaining, used, missing_branch)
        leaf, _, weights = self.choice_weights(rows, remaining, used, missing_branch)
        if weights.size == 0:
            return leaf
        return float(logsumexp(np.concatenate(([leaf], weights))))

    def _empty_split(self, option: Option, remaining: int, used: frozenset[int]) -> float:
        child_used = self.child_used(used, option)
        n = self.n_children(option)
        return (n - 1) * self._empty_log_z(remaining - 1, child_used, False) + self._empty_log_z(
            remaining - 1, child_used, True
        )

    def _empty_log_z(self, remaining: int, used: frozenset[int], missing_branch: bool) -> float:
        key = (remaining, used, missing_branch)
        value = self._empty.get(key)
        if value is None:
            leaf = float(self.leaf_log_weights(np.zeros(self.n_classes), missing_branch))
            options = self.options(used)
            if remaining == 0 or not options:
                value = leaf
            else:
                split_prior = self.log_prior_split(len(options))
                weights = [split_prior + self._empty_split(o, remaining, used) for o in options]
                value = float(logsumexp([self.log_prior_leaf(len(options)) + leaf, *weights]))
            self._empty[key] = value
        return value

    # -- MCMC helpers -------------------------------------------------------------
    def subtree_terms(self, node: GrowNode, boundary: int) -> tuple[float, float, float, int]:
        """``(w, log μ − log g, leaves' count, changeable nodes)`` of the subtree at ``node``.

        ``w`` sums the leaves' log-weights; the second term sums, over the nodes above
        ``boundary`` (a depth), ``log μ`` of their choice minus ``log g`` of growing it.
        """
        score = 0.0
        prior_minus_grow = 0.0
        changeable = 0
        n_leaves = 0
        for u in node.nodes():
            if u.option is None:
                score += self.node_leaf_weight(u)
                n_leaves += 1
            if u.depth < boundary:
                n_options = len(self.options(u.used))
                if n_options:
                    changeable += 1
                leaf = u.option is None
                mu = self.log_prior_leaf(n_options) if leaf else self.log_prior_split(n_options)
                prior_minus_grow += mu - self.log_grow(n_options, leaf)
        return score, prior_minus_grow, n_leaves, changeable


def exact_subtree(space: SubtreeSpace, node: GrowNode, depth: int, draw: StructuredDraw) -> None:
    """Grow ``node`` by an exact draw over its subtrees of depth at most ``depth``.

    Fills ``node.option`` / ``node.children`` / ``node.final`` in place; nodes at the
    boundary stay leaves with ``final=False`` (unless no option is left).
    """
    stack = [(node, depth)]
    while stack:
        current, remaining = stack.pop()
        leaf, options, weights = space.choice_weights(
            current.rows, remaining, current.used, current.missing_branch
        )
        if not options:
            current.final = remaining > 0 or not space.options(current.used)
            continue
        choice = draw.choose(np.concatenate(([leaf], weights)))
        if choice == 0:
            current.final = True
            continue
        option = options[choice - 1]
        _split(space, current, option)
        stack.extend((child, remaining - 1) for child in current.children)


def _split(space: SubtreeSpace, node: GrowNode, option: Option) -> None:
    parts = space.children_rows(node.rows, option)
    used = space.child_used(node.used, option)
    flags = np.zeros(len(parts), dtype=bool)
    flags[-1] = True
    weights = space.leaf_log_weights(np.stack([space.counts(rows) for rows in parts]), flags)
    node.option = option
    node.final = False
    node.children = [
        GrowNode(
            rows=rows,
            depth=node.depth + 1,
            missing_branch=bool(flags[c]),
            used=used,
            _leaf_weight=(space.eta, float(weights[c])),
        )
        for c, rows in enumerate(parts)
    ]


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
        _split(space, current, options[int(rng.integers(len(options)))])
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
) -> int:
    """Grow ``node`` by a Metropolis–Hastings chain over its subtrees of depth ``<= depth``.

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

    Returns
    -------
    int
        Steps made.
    """
    boundary = node.depth + depth
    _grow_random(space, node, boundary, rng)
    score, _, _, n_changeable = space.subtree_terms(node, boundary)
    recent: list[float] = []
    candidates: list[GrowNode] | None = None
    made = 0
    for made in range(1, steps + 1):
        if n_changeable == 0:
            break
        if candidates is None:  # the tree changed (a rejected move restores it exactly)
            candidates = [u for u in node.nodes() if u.depth < boundary and space.options(u.used)]
        target = candidates[int(rng.integers(len(candidates)))]
        options = space.options(target.used)
        n_choices = len(options) + (1 if space.allow_leaves else 0)
        pick = int(rng.integers(n_choices))
        new_option = options[pick] if pick < len(options) else None
        old_option, old_children = target.option, target.children
        old_score, old_pg, _, old_changeable = space.subtree_terms(target, boundary)
        if new_option is None:
            target.option, target.children = None, []
        else:
            _split(space, target, new_option)
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
        accepted = chain_accept(chain, (new_total - score) + log_ratio)
        if accepted:
            score, n_changeable = new_total, new_changeable
            candidates = None
        else:
            target.option, target.children = old_option, old_children
        if buffer:
            recent.append(score)
            if len(recent) > buffer:
                recent.pop(0)
            if len(recent) == buffer and float(np.var(recent)) <= threshold:
                break
    _mark_final(space, node, boundary)
    return made


def chain_accept(chain: MetropolisChain, log_alpha: float) -> bool:
    """One acceptance test ``log u < log_alpha`` on the chain's noise source."""
    accepted = bool(chain.log_uniforms(1)[0] < log_alpha)
    chain.record(1, int(accepted))
    return accepted


def _mark_final(space: SubtreeSpace, node: GrowNode, boundary: int) -> None:
    for u in node.nodes():
        if u.option is None:
            u.final = u.depth < boundary or not space.options(u.used)


def exact_work(domains: Sequence[FeatureEncoding], depth: int, categorical_splits: str = "multiway") -> float:
    """Data-independent bound on the child nodes an exact draw of depth ``depth`` visits.

    Every option path of length ``ℓ < depth`` is followed into every child; the
    deepest level is counted in one pass per node. The bound uses the schema only.

    Examples
    --------
    >>> from dprm.classifier.encoding import FeatureEncoding
    >>> ds = [FeatureEncoding.categorical(f"a{i}", ("y", "n")) for i in range(16)]
    >>> exact_work(ds, 1), exact_work(ds, 2)
    (1.0, 49.0)
    >>> three = [FeatureEncoding.categorical("c", ("x", "y", "z"))]
    >>> exact_work(three, 2, "multiway"), exact_work(three, 2, "binary"), exact_work(three, 2, "both")
    (5.0, 10.0, 17.0)
    """
    multiway = categorical_splits in ("multiway", "both")
    categorical = [d.n_codes + 1 for d in domains if d.kind == CATEGORICAL and d.n_options and multiway]
    numeric_options = sum(d.n_options for d in domains if d.kind != CATEGORICAL) + sum(
        (1 if d.n_codes == 2 else d.n_codes)
        for d in domains
        if d.kind == CATEGORICAL
        and d.n_options
        and (categorical_splits == "binary" or (categorical_splits == "both" and d.n_codes > 2))
    )
    n_cat = len(categorical)
    widest = max(categorical, default=3)
    total, frontier = 0.0, 1.0
    for level in range(depth - 1):
        options = max(n_cat - level, 0) + numeric_options
        frontier *= options * max(widest, 3)
        total += frontier
    return 1.0 + total
