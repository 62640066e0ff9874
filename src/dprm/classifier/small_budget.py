"""The small-budget release of ``DPDecisionTreeClassifier`` (issue 29): a public rule and a chosen root split.

Why
---
The whole-tree release (the dprm default) pays for naming its structure: a split
among ``m`` root options and its extra leaf's label cost about
``ln(m / (1 − LEAF_PRIOR)) + ln C`` nats (docs/classifier.md, "What a small budget
can buy"). Where ``ε · n`` cannot pay for several splits the release stays a single
leaf or a poor small tree (wine at ε = 0.1: 0.373; the 19-class table: 0.081). One
multiway root split whose feature and children's labels are drawn *jointly* by one
exponential-mechanism release (:func:`chosen_split_tree`) costs ε once: given the
feature, each child's label is an exponential-mechanism draw with the whole ε
(the children's rows are disjoint), and the feature itself is drawn with the
weight of its children's labels, so informative features are preferred at no extra
cost. Forced at ε = 0.1 (10-fold CV × 3): wine 0.586, tic-tac-toe 0.687, breast
cancer 0.886, the 19-class table 0.134 (a random root split with noisy leaf counts,
the release this one replaced: 0.486, 0.668, 0.792, 0.124).

The release (``embedding_depth="auto"``, ``variant="dprm"``, ``leaf_labels="auto"``)
-----------------------------------------------------------------------------------
Budget split (sequential composition, adaptive; the choice in step 2 is
post-processing of step 1's output):

1. ``ε_rows = COUNT_SHARE · ε``: the row count ``n`` with discrete Laplace noise
   (L1 sensitivity 1: one row more or less moves ``n`` by 1), ``n̂``;
2. the public rule :func:`prefers_root_split` of ``ε_rest = ε − ε_rows``, ``n̂``,
   ``C`` and the schema's number of root options ``m`` chooses the release;
3. either the whole-tree release with ``ε_rest`` (unchanged: one
   exponential-mechanism draw, score range 1), or the chosen root split with
   ``ε_rest`` (one exponential-mechanism draw over (feature, children's labels),
   score = rows right, range 1).

So ``ε_rows + ε_rest = ε`` on every path: one ledger entry ``rows`` and one of
``structure#1`` or ``split``, ``privacy_spent_ == ε``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dprm.classifier.encoding import CATEGORICAL, FeatureEncoding
from dprm.classifier.subtree_search import GrowNode, SubtreeSpace, split_node
from dprm.privacy import StructuredDraw

__all__ = ["COUNT_SHARE", "ROOT_SPLIT_RATIO", "chosen_split_tree", "prefers_root_split", "root_options",
           "root_split_options"]

#: Share of ε spent on the noisy row count that decides the release.
COUNT_SHARE = Fraction(1, 10)

#: The chosen root split is released where ``ε · n̂ · √C < ROOT_SPLIT_RATIO · price``
#: (:func:`prefers_root_split`; measured on the 11 tables of docs/classifier.md).
ROOT_SPLIT_RATIO = 30.0


def root_options(domains: Sequence[FeatureEncoding], categorical_splits: str) -> int:
    """The number ``m`` of split options of the root in the whole-tree release (schema only).

    Binary category tests (``categorical_splits="binary"``): one per category, one
    for a two-category feature; multiway: one per categorical feature; ``"both"``:
    both kinds (a two-category feature counts once); numeric: its thresholds.

    Examples
    --------
    >>> from dprm.classifier.encoding import FeatureEncoding
    >>> ds = [FeatureEncoding.categorical("a", ("x", "y")), FeatureEncoding.categorical("b", ("p", "q", "r"))]
    >>> root_options(ds, "binary"), root_options(ds, "multiway"), root_options(ds, "both")
    (4, 2, 5)
    """
    m = 0
    for d in domains:
        if not d.n_options:
            continue
        if d.kind != CATEGORICAL:
            m += d.n_options
            continue
        binary = 1 if d.n_codes == 2 else d.n_codes
        multiway = 1
        if categorical_splits == "binary":
            m += binary
        elif categorical_splits == "multiway":
            m += multiway
        else:
            m += multiway + (0 if d.n_codes == 2 else binary)
    return m


def prefers_root_split(epsilon: float, n_rows: float, n_classes: int, n_options: int, leaf_prior: float) -> bool:
    """Whether the release should be the chosen root split rather than the whole tree (public inputs only).

    The whole-tree release must pay about ``price = ln(m / (1 − leaf_prior)) + ln C``
    nats for every split it names (docs/classifier.md, "What a small budget can
    buy"), the chosen root split (:func:`chosen_split_tree`) nothing beyond its one
    draw among the features, but it can tell at most one split's children apart,
    which is worth less the more classes there are. The rule::

        ε · n̂ · √C  <  ROOT_SPLIT_RATIO · price

    was read off the crossovers of the two releases, each forced with ``0.9 ε``
    (10-fold CV × 3, ε ∈ {0.05, 0.1, 0.2, 0.3, 0.5}), where ``ε n √C / price`` was
    about 16 on wine (3 classes, between ε = 0.3 and 0.5), 18 on planted-d3 (ε ≈ 0.1),
    31 on digits (10 classes, between 0.05 and 0.1), 36 on breast cancer (≈ 0.4), 39
    on tic-tac-toe (≈ 0.2) and 58 on the 19-class table (≈ 0.23), and below 10 on vote
    (the tree 0.949 against 0.940 at ε = 0.1); 30 is about their median. Near a
    crossover the two releases are close by definition. At ε ≥ 1 every table of
    docs/classifier.md keeps the tree (wine at ε = 1: 36). Its inputs are public or
    released: ε, the noisy row count ``n̂``, the declared classes and the schema.

    Examples
    --------
    >>> prefers_root_split(0.09, 160, 3, 65, 0.8)    # wine-sized at ε = 0.1
    True
    >>> prefers_root_split(0.09, 1617, 10, 320, 0.8)  # digits-sized at ε = 0.1
    False
    >>> prefers_root_split(0.9, 160, 3, 65, 0.8)
    False
    """
    if n_options == 0:
        return False
    price = math.log(n_options / (1.0 - leaf_prior)) + math.log(n_classes)
    return epsilon * n_rows * math.sqrt(n_classes) < ROOT_SPLIT_RATIO * price


def root_split_options(domains: Sequence[FeatureEncoding]) -> list[tuple[int, int]]:
    """One root split per splittable feature (schema only): a categorical feature's multiway split
    ``(f, -1)``, a numeric one's middle threshold ``(f, n_options // 2)``.

    Examples
    --------
    >>> from dprm.classifier.encoding import FeatureEncoding
    >>> ds = [FeatureEncoding.categorical("a", ("x", "y", "z")), FeatureEncoding.numeric("b", 0.0, 1.0, np.linspace(0.2, 0.8, 4))]
    >>> root_split_options(ds)
    [(0, -1), (1, 2)]
    """
    return [(f, -1) if d.kind == CATEGORICAL else (f, d.n_options // 2)
            for f, d in enumerate(domains) if d.n_options]


def chosen_split_tree(codes: np.ndarray, y: np.ndarray, n_classes: int, domains: Sequence[FeatureEncoding],
                      draw: StructuredDraw) -> GrowNode:
    """The root split and its children's labels, drawn jointly by one exponential-mechanism release.

    A candidate is one of :func:`root_split_options` (base measure uniform) with a
    label for each child (uniform among ``C``); its score is the number of training
    rows its labels get right. One row more lands in exactly one child of every
    candidate and raises its score by 0 or 1, so every score change lies in ``[0, 1]``
    (range 1) and ``P ∝ exp(η · score)`` with ``η = ε`` (``draw``'s) is ε-DP. The draw
    factorises: the split with probability ``∝ Π_k (1/C) Σ_c exp(η n_kc)``, then each
    child's label ``∝ exp(η n_kc)`` given the split (exactly the joint distribution).
    Given the split, each child's label is an exponential-mechanism draw with the
    whole ε (as for a split drawn at random); the split itself is tilted towards informative features at
    no extra cost. Without a splittable feature the root is a leaf with a drawn label.

    Examples
    --------
    >>> from dprm.classifier.encoding import FeatureEncoding
    >>> from dprm.privacy import StructuredDraw, SeededNoise
    >>> ds = [FeatureEncoding.categorical("a", ("x", "y")), FeatureEncoding.categorical("b", ("p", "q"))]
    >>> codes = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 50, dtype=np.int32)
    >>> y = codes[:, 1].astype(np.intp)           # b decides the class
    >>> draw = StructuredDraw(SeededNoise(np.random.default_rng(0)), 1.0)
    >>> root = chosen_split_tree(codes, y, 2, ds, draw)
    >>> root.option, [child.label for child in root.children]   # the last child: missing values
    ((1, -1), [0, 1, 1])
    """
    row_type = np.int32 if codes.shape[0] < 2**31 else np.int64
    root = GrowNode(rows=np.arange(codes.shape[0], dtype=row_type), depth=0, final=True)
    space = SubtreeSpace(codes, y, n_classes, domains, categorical_splits="multiway", score="majority",
                         allow_leaves=True, leaf_prior=0.5, leaf_cost=0.0)
    options = root_split_options(domains)
    if not options:
        root.label = draw.choose(draw.eta * space.counts(root.rows).astype(np.float64))
        return root
    log_c = math.log(n_classes)
    log_weights = np.empty(len(options))
    for i, option in enumerate(options):
        counts = space.split_rows(root.rows, option)[1].astype(np.float64) * draw.eta
        top = counts.max(axis=1, keepdims=True)
        log_weights[i] = float(np.sum(top[:, 0] + np.log(np.exp(counts - top).sum(axis=1)) - log_c))
    option = options[draw.choose(log_weights)]
    split_node(space, root, option)
    for child in root.children:
        child.final = True
        child.label = draw.choose(draw.eta * space.counts(child.rows).astype(np.float64))
    return root
