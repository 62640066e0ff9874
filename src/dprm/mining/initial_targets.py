r"""Initial targets chosen privately by their association with the other view.

The tree-based paper starts every trial from a uniformly random attribute. Among
some 200 attributes of which a handful take part in a relation, a few uniform draws
rarely start near one (issue 13). Here a trial's initial target is a *split literal*
of one view (``a``, ``a = v`` or ``a ≤ t`` on the public grid), chosen by the
exponential mechanism with a score that says how well **one** split of the other
view predicts it.

The score (derivation)
----------------------
A candidate target ``s`` splits the rows into classes 1 (the literal holds) and 0
(its opposite holds); rows where ``s``'s attribute is missing have no class and take
no part. For a literal ``p`` of the other view, with branches true / false / missing
and class counts ``(A, B)`` of all classed rows and ``(a_b, b_b)`` of branch ``b``,
two gains in rows say how well ``p`` predicts ``s``:

.. math::

    g(s, p) = I(A, B) - \sum_{b \in \{t, f, m\}} I(a_b, b_b), \qquad I(x, y) = \frac{2xy}{x + y}

    m(s, p) = \sum_{b \in \{t, f, m\}} \max(a_b, b_b) - \max(A, B)

``g`` is the Gini gain (``I`` the Gini impurity ``n − Σ_c n_c²/n`` of two classes, 0
for an empty node); ``m`` the *majority gain*, the rows a one-split tree classifies
correctly beyond the majority class. The score of ``s`` is
``max_p max(g(s, p)/2, m(s, p)) ≥ 0``.

**Sensitivity 1.** Adding a row of class 1 to a node with counts ``(x, y)`` changes
``I`` by ``I(x+1, y) − I(x, y) = 2y²/((x+y)(x+y+1)) ∈ [0, 2)`` (and symmetrically for
class 0), and ``max(x, y)`` by 0 or 1. A row without a class changes nothing; a row
with a class enters the root and exactly one branch of ``p``, so ``g`` changes by the
difference of two numbers in ``[0, 2)`` (``|Δg/2| < 1``) and ``m`` by the difference
of two numbers in ``{0, 1}`` (``|Δm| ≤ 1``). A maximum of functions that each move by
at most 1 moves by at most 1. (Removing a row is the reverse change.)

Why both. The exponential mechanism weighs a score ``u`` by ``exp(ε u / (2Δ))``;
the Gini gain alone (``Δ = 2``) gives ``exp(ε g / 4)``, and on the planted data of
docs/mining.md ("Weak signal", 150 Boolean vs 40 numeric attributes, 2,500 rows) the
attributes of the weaker relations scored ``g ≈ 230–300`` rows: at a trial's share
of ε = 1 (about 0.036 for the attribute) that is a weight of ``e^2``–``e^2.7``
against some 180 unrelated attributes of weight about 1, so a relation was picked in
only about one trial of six. A relation flips the majority class of a branch, where
``m`` counts the rows that flip (``m ≈ 340–470`` for the same attributes, with
``Δ = 1``: weights ``e^6``–``e^8``). Where no branch flips it (a rare class), ``g/2``
keeps the old weight. Unrelated attributes score ``g/2 ≈ 2–5`` and ``m`` of a few
rows (median 4–5; the largest of 190, a maximum over thousands of literal pairs,
70–100).

Two choices per trial, each by the exponential mechanism with sensitivity 1: (1) an
*attribute* of either view, among those not taken, scored by the best of its split
literals (half of the trial's share); (2) one of its split literals (a numeric
attribute has one per grid point, a categorical one per category; the other half).
A Boolean attribute has one literal: choosing among one tells nothing, so the second
choice is not made and its half goes to the next trial's choice of an attribute (the
later picks, made after the strongest relations are taken, are the ones short of
budget); only the last trial makes it regardless, so that the targets' share is spent
exactly. Whether a choice is skipped depends on the released attribute and the
schema only.
The scores are computed against the splits of the
attributes not taken only. The chosen attribute is taken, and so are the attributes
of the trees each trial releases (:class:`TargetChooser`, ``take``): once a relation
is described by released trees, its attributes lend no score to the next choices,
which then start from another relation (on planted data with four relations, the
strongest two otherwise took most trials). The candidate sets and the taken sets are
public (the schema, the public grid, released trees); only the choices are released,
each charged before it is made; the sensitivity stays 1 whatever set is taken.

Intervals. Besides the splits, the candidates of a numeric attribute include the
intervals ``t_j < a ≤ t_k`` between up to 8 evenly spaced points of its public grid
(:func:`candidate_literals`), both as targets and as the other view's literals that
score them: a relation whose numeric side is an interval (``40 < x ≤ 70``) shows no
large gain for any single threshold, and is found once intervals are candidates (on
planted data, the interval relation went from found in 0 to 3 of 4 datasets). The
argument above holds for any binary test, so the sensitivity stays 1.

Counting: on many rows, for each pair of attributes with several literals each, one
joint histogram of their codes (one pass over the rows), from which every pair of
their literals' counts is a small product over the codes; otherwise one matrix product
per view and chunk of rows, the class indicators of every candidate against the branch
indicators of every split of the other view. Both give the exact counts of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dprm.data.literal_index import LiteralIndex, Split
from dprm.privacy import Accountant, ExponentialMechanism, split_budget
from dprm.privacy.budget import EpsilonLike
from dprm.trees.tree import Tree

__all__ = ["TARGET_SCORE_SENSITIVITY", "InitialTarget", "TargetChooser", "candidate_literals", "literal_masks",
           "split_gain_counts", "gains_from_counts", "majority_counts",
           "split_masks", "split_gains", "attribute_gains", "best_split_gains", "choose_targets"]

#: Sensitivity of a candidate target's score ``max(g/2, m)`` (module docstring).
TARGET_SCORE_SENSITIVITY = 1

#: Rows per chunk of the counting products, for 64 literals: a chunk holds about
#: ``_CHUNK × 64`` indicators per mask (four float32 masks: ~64 MB at most). Fewer,
#: larger chunks cost less Python per row (MAMMAL: one chunk, 2.3× less CPU than 11).
_CHUNK = 65536

#: Multiply-adds of one :func:`split_gain_counts` call from which its products use
#: every BLAS thread. Below, one thread does them: OpenBLAS's idle threads spin for a
#: while after each product, which on MAMMAL (1.4·10⁹ per side, ~0.02 s of work) cost
#: more CPU than the products (the initial targets took 0.40 CPU-s with two threads,
#: 0.17 with one, and less wall time under load) and compete with the chains that
#: follow for the cores.
PARALLEL_PRODUCTS = 1 << 33


#: Most grid points per numeric attribute between which intervals are candidates
#: (8 points: 28 intervals beside the 32 thresholds of the default grid; the products
#: of the scores grow with the square of the literals per attribute).
INTERVAL_POINTS = 8

#: A candidate literal: a split (``a``, ``a = v``, ``a ≤ t_j``), or with ``high`` the
#: interval ``t_j < a ≤ t_high`` of a numeric attribute (``j`` the split's code).
Literal = tuple[Split, "int | None"]
#: ``(target literals, other literals) -> (counts, totals)`` of :func:`split_gain_counts` over
#: all the rows (a sharded run sums its shards' counts).
GainCounter = Callable[[list, list], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class InitialTarget:
    """A chosen initial target of view ``side`` (0 left, 1 right): the split literal ``split``,
    or with ``high`` the interval ``t_j < a ≤ t_high`` (``j = split.code``)."""

    side: int
    split: Split
    high: int | None = None

    def classes(self, index: LiteralIndex) -> tuple[np.ndarray, int]:
        """``(class per row, 2)``: 1 where the literal holds, 0 where its opposite does, −1 if missing."""
        true, missing = literal_masks(index, [(self.split, self.high)])
        classes = np.zeros(index.n_rows, dtype=np.int64)
        classes[true[:, 0]] = 1
        classes[missing[:, 0]] = -1
        return classes, 2

    def tree(self) -> Tree:
        """The literal as a tree of its view, whose leaves are its classes and their parts.

        A split is a tree of depth 1 (leaves: the literal, its opposite); an interval
        ``t_j < a ≤ t_high`` one of depth 2, ``a ≤ t_high`` at the root and ``a ≤ t_j``
        below it (leaves ``a ≤ t_j``, the interval, ``a > t_high``). Released choices
        only: building it is post-processing.

        Examples
        --------
        >>> from dprm.data.attributes import AttributeKind
        >>> InitialTarget(1, Split(0, AttributeKind.NUMERIC, 2), high=5).tree().splits
        [Split(attribute=0, kind=<AttributeKind.NUMERIC: 'numeric'>, code=5), \
Split(attribute=0, kind=<AttributeKind.NUMERIC: 'numeric'>, code=2), None]
        """
        if self.high is None:
            return Tree(depth=1, splits=[self.split])
        return Tree(depth=2, splits=[Split(self.split.attribute, self.split.kind, int(self.high)), self.split, None])


def candidate_literals(index: LiteralIndex, intervals: bool = True) -> list[Literal]:
    """Every split of ``index`` and, with ``intervals``, the intervals between up to
    :data:`INTERVAL_POINTS` evenly spaced grid points of each numeric attribute.

    Examples
    --------
    >>> from dprm.data import Attribute, AttributeKind, Domain, View
    >>> x = Attribute("x", "v", AttributeKind.NUMERIC, np.linspace(0, 1, 50), Domain(bounds=(0, 1)))
    >>> index = LiteralIndex(View("v", [x]), mode="private", max_splits=3)
    >>> [(split.code, high) for split, high in candidate_literals(index)]
    [(0, None), (1, None), (2, None), (0, 1), (0, 2), (1, 2)]
    """
    out: list[Literal] = [(split, None) for split in index.splits]
    if intervals:
        for position, attribute in enumerate(index.attributes):
            n = len(index.thresholds[position]) if attribute.kind.name == "NUMERIC" else 0
            points = np.unique(np.round(np.linspace(0, n - 1, min(n, INTERVAL_POINTS))).astype(int)) if n > 1 else []
            out += [(Split(position, attribute.kind, int(low)), int(high))
                    for i, low in enumerate(points) for high in points[i + 1:]]
    return out


def literal_masks(index: LiteralIndex, literals: list[Literal], rows: slice = slice(None)
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Indicators of every literal over ``rows``: ``(holds, missing)``, each ``(n_rows, n_literals)``.

    Where neither, the opposite literal holds (``¬a``, ``a ≠ v``, ``a > t``, outside the interval).
    """
    n = len(np.arange(index.n_rows)[rows])
    # Built one literal per row (contiguous writes), returned transposed: (n_rows, n_literals).
    holds = np.zeros((len(literals), n), dtype=bool)
    missing = np.zeros((len(literals), n), dtype=bool)
    # Every literal is a code range (low, high] of its attribute, or code == v:
    # numeric a ≤ t_j is (−1, j], an interval (j, k]; Boolean and categorical a = v.
    by_attribute: dict[int, list[int]] = {}
    for j, (split, _) in enumerate(literals):
        by_attribute.setdefault(split.attribute, []).append(j)
    for attribute, columns in by_attribute.items():
        codes = index.codes[attribute, rows].astype(np.int64)
        absent = codes == index.missing_code
        missing[columns] = absent[None, :]
        numeric = literals[columns[0]][0].kind.name == "NUMERIC"
        if numeric:
            low = np.array([-1 if literals[j][1] is None else literals[j][0].code for j in columns])
            high = np.array([literals[j][0].code if literals[j][1] is None else literals[j][1] for j in columns])
            holds[columns] = (codes[None, :] > low[:, None]) & (codes[None, :] <= high[:, None]) & ~absent[None, :]
        else:
            values = np.array([literals[j][0].code for j in columns])
            holds[columns] = codes[None, :] == values[:, None]
    return holds.T, missing.T


def split_masks(index: LiteralIndex, rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """Branch indicators of every split of ``index.splits`` over ``rows``: ``(true, missing)``.

    Both of shape ``(n_rows, n_splits)``; the false branch is ``~true & ~missing``.

    Examples
    --------
    >>> from dprm.data import Attribute, AttributeKind, View
    >>> view = View("v", [Attribute("a", "v", AttributeKind.BOOLEAN, np.array([1, 0, 1], np.int8))])
    >>> true, missing = split_masks(LiteralIndex(view))
    >>> true[:, 0].tolist(), missing[:, 0].tolist()
    ([True, False, True], [False, False, False])
    """
    return literal_masks(index, [(split, None) for split in index.splits], rows)


def _impurity(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    total = x + y
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, 2.0 * x * y / np.where(total > 0, total, 1.0), 0.0)


def best_split_gains(targets: LiteralIndex, other: LiteralIndex) -> np.ndarray:
    """For every split literal of ``targets`` as a binary target, its score: the best of one split of ``other``.

    Returns an array over ``targets.splits`` (module docstring: ``max_p max(g(s, p)/2, m(s, p))``).

    Examples
    --------
    >>> from dprm.data import Attribute, AttributeKind, View
    >>> a = np.array([1, 1, 0, 0, 1, 0], np.int8)
    >>> left = View("l", [Attribute("a", "l", AttributeKind.BOOLEAN, a)])
    >>> right = View("r", [Attribute("b", "r", AttributeKind.BOOLEAN, a.copy()),
    ...                    Attribute("c", "r", AttributeKind.BOOLEAN, np.array([1, 0, 1, 0, 1, 0], np.int8))])
    >>> best_split_gains(LiteralIndex(left), LiteralIndex(right)).tolist()   # b predicts a: m = 6 − 3, g/2 = 1.5
    [3.0]
    """
    return split_gains(targets, other).max(axis=1, initial=0.0)


def split_gains(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal] | None = None,
                other_literals: list[Literal] | None = None, counter: "GainCounter | None" = None) -> np.ndarray:
    """The score ``max(g(s, p)/2, m(s, p)) ≥ 0`` of every literal ``p`` of ``other`` for each literal ``s``.

    ``g`` is the Gini gain and ``m`` the majority gain, both in rows; literals default
    to the splits of each index; shape ``(#target literals, #other literals)``
    (module docstring: sensitivity 1).
    """
    if target_literals is None:
        target_literals = [(split, None) for split in targets.splits]
    if other_literals is None:
        other_literals = [(split, None) for split in other.splits]
    if counter is None:
        counts, totals = split_gain_counts(targets, other, target_literals, other_literals)
    else:
        counts, totals = counter(target_literals, other_literals)
    return gains_from_counts(counts, totals)


def split_gain_counts(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal],
                      other_literals: list[Literal]) -> tuple[np.ndarray, np.ndarray]:
    """The counts :func:`split_gains` scores: ``(counts (4, m, p), totals (2, m))`` over the rows of the indexes.

    ``counts`` holds the rows of class 1 / class 0 of each target literal in the true
    branch, then in the missing branch, of each other literal; ``totals`` the rows of
    class 1 / class 0. Counts of rows: the counts of disjoint sets of rows (shards)
    add up to those of their union (:func:`gains_from_counts` scores the sum).
    """
    m, p = len(target_literals), len(other_literals)
    with _blas_threads(m * p * targets.n_rows):
        return _split_gain_counts(targets, other, target_literals, other_literals)


@contextmanager
def _blas_threads(work: int) -> Iterator[None]:
    """One BLAS thread for fewer than :data:`PARALLEL_PRODUCTS` multiply-adds, all of them otherwise."""
    if work >= PARALLEL_PRODUCTS:
        yield
        return
    from threadpoolctl import threadpool_limits  # 5 ms

    with threadpool_limits(1, user_api="blas"):
        yield


def _split_gain_counts(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal],
                       other_literals: list[Literal]) -> tuple[np.ndarray, np.ndarray]:
    m, p = len(target_literals), len(other_literals)
    counts = np.zeros((4, m, p))  # class 1 / class 0 in the true branch, then in the missing branch
    totals = np.zeros((2, m))
    # On many rows, pairs of attributes with several literals each (numeric grids and
    # intervals, categoricals) are counted from their joint histogram of codes; the
    # rest (a Boolean side: one literal) by the products of indicators. Both give the
    # exact counts of rows, so the scores are the same whichever counts a pair.
    histograms = targets.n_rows >= _HISTOGRAM_ROWS
    t_wide = _wide_literals(target_literals) & histograms
    o_wide = _wide_literals(other_literals) & histograms
    t_narrow, o_narrow = ~t_wide, ~o_wide
    if m and p and t_wide.any() and o_wide.any():
        t_rows, o_rows = np.flatnonzero(t_wide), np.flatnonzero(o_wide)
        block, _ = _histogram_counts(targets, other, [target_literals[i] for i in t_rows],
                                     [other_literals[j] for j in o_rows])
        counts[:, t_rows[:, None], o_rows[None, :]] = block
    for rows, columns in ((np.arange(m), np.flatnonzero(o_narrow)), (np.flatnonzero(t_narrow), np.flatnonzero(o_wide))):
        if len(rows) and len(columns):
            block, _ = _product_counts(targets, other, [target_literals[i] for i in rows],
                                       [other_literals[j] for j in columns])
            counts[:, rows[:, None], columns[None, :]] = block
    totals[:] = _class_totals(targets, target_literals)
    return counts, totals


#: Literals of one attribute from which its pairs with another such attribute are
#: counted from their joint histogram of codes (one pass over the rows per pair of
#: attributes) rather than by products of indicators (one multiply-add per row and
#: pair of literals, after building each literal's indicator of the rows). Measured
#: (benchmarks/bench_mine_scale.py, generated tables of half heavy-tailed numeric, half
#: categorical columns): both views' counts took 19 → 1.9 CPU-s at 100,000 rows × 50 + 50
#: columns, 3.5 → 0.09 at 100,000 × 10 + 10, 2.0 → 1.1 at 10,000 × 50 + 50.
_WIDE_LITERALS = 2
#: Fewest rows from which histograms count: a pair of attributes costs some 40 µs of
#: Python besides its pass over the rows; on MAMMAL (2,575 rows) the products were
#: quicker (0.15 against 0.25 CPU-s).
_HISTOGRAM_ROWS = 8192


def _wide_literals(literals: list[Literal]) -> np.ndarray:
    """Whether each literal's attribute has at least :data:`_WIDE_LITERALS` literals in ``literals``."""
    attributes = np.array([split.attribute for split, _ in literals], dtype=np.int64)
    if not len(attributes):
        return np.zeros(0, dtype=bool)
    _, inverse, sizes = np.unique(attributes, return_inverse=True, return_counts=True)
    return sizes[inverse] >= _WIDE_LITERALS


def _dense_codes(index: LiteralIndex, attribute: int) -> tuple[np.ndarray, int]:
    """Codes of ``attribute`` as ``intp`` in ``[0, k]`` with ``k`` for missing, and ``k`` (the codes' count)."""
    raw = index.codes[attribute]
    absent = raw == index.missing_code
    top = int(raw.max(initial=0, where=~absent))
    k = max(int(index.n_codes[attribute]), top + 1)
    dense = raw.astype(np.intp)
    dense[absent] = k
    return dense, k


def _code_indicators(literals: list[Literal], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Over the codes ``0 … k`` (``k``: missing) of one attribute: ``(holds, class 0)``, each ``(len, k + 1)``.

    The ranges of :func:`literal_masks`: numeric ``a ≤ t_j`` holds on codes ``(−1, j]``,
    an interval on ``(j, high]``; others on ``code == v``. Class 0 is neither holds nor missing.
    """
    codes = np.arange(k + 1)
    holds = np.zeros((len(literals), k + 1))
    for i, (split, high) in enumerate(literals):
        if split.kind.name == "NUMERIC":
            low, top = (-1, split.code) if high is None else (split.code, high)
            holds[i] = (codes > low) & (codes <= top)
        else:
            holds[i] = codes == split.code
    holds[:, k] = 0.0
    zeros = 1.0 - holds
    zeros[:, k] = 0.0
    return holds, zeros


def _by_attribute(literals: list[Literal]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for j, (split, _) in enumerate(literals):
        groups.setdefault(split.attribute, []).append(j)
    return groups


def _class_totals(targets: LiteralIndex, target_literals: list[Literal]) -> np.ndarray:
    """Rows of class 1 / class 0 of each target literal, ``(2, m)``, from each attribute's histogram of codes."""
    totals = np.zeros((2, len(target_literals)))
    for attribute, rows in _by_attribute(target_literals).items():
        codes, k = _dense_codes(targets, attribute)
        histogram = np.bincount(codes, minlength=k + 1).astype(np.float64)
        holds, zeros = _code_indicators([target_literals[i] for i in rows], k)
        totals[0, rows] = holds @ histogram
        totals[1, rows] = zeros @ histogram
    return totals


def _histogram_counts(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal],
                      other_literals: list[Literal]) -> tuple[np.ndarray, None]:
    """The counts of :func:`split_gain_counts` from the joint histogram of each pair of attributes' codes.

    Exact: the histograms hold counts of rows, and the products sum them with 0/1
    weights in float64 (integers below 2^53).
    """
    counts = np.zeros((4, len(target_literals), len(other_literals)))
    t_groups, o_groups = _by_attribute(target_literals), _by_attribute(other_literals)
    o_codes = {b: _dense_codes(other, b) for b in o_groups}
    o_indicators = {b: _code_indicators([other_literals[j] for j in columns], o_codes[b][1])[0]
                    for b, columns in o_groups.items()}
    for a, rows in t_groups.items():
        t_codes, k = _dense_codes(targets, a)
        holds, zeros = _code_indicators([target_literals[i] for i in rows], k)
        for b, columns in o_groups.items():
            codes, kb = o_codes[b]
            joint = np.bincount(t_codes * (kb + 1) + codes, minlength=(k + 1) * (kb + 1))
            joint = joint.reshape(k + 1, kb + 1).astype(np.float64)
            true_branch = joint @ o_indicators[b].T  # (k + 1, literals of b)
            missing_branch = joint[:, kb]
            block = np.ix_(rows, columns)
            counts[0][block] = holds @ true_branch
            counts[1][block] = zeros @ true_branch
            counts[2][block] = (holds @ missing_branch)[:, None]
            counts[3][block] = (zeros @ missing_branch)[:, None]
    return counts, None


def _product_counts(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal],
                    other_literals: list[Literal]) -> tuple[np.ndarray, np.ndarray]:
    """The counts of :func:`split_gain_counts` by products of the literals' indicators, in chunks of rows."""
    m, p = len(target_literals), len(other_literals)
    chunk = max(256, _CHUNK * 64 // max(64, p + m))
    # A literal's missing rows are its attribute's: the products with the missing
    # indicators are taken once per attribute (`first`: one literal of each) and
    # spread to the attribute's literals (`spread`), and skipped when none is missing.
    _, first, spread = np.unique([split.attribute for split, _ in other_literals], return_index=True,
                                 return_inverse=True)
    _, t_first, t_spread = np.unique([split.attribute for split, _ in target_literals], return_index=True,
                                     return_inverse=True)
    counts = np.zeros((4, m, p))  # class 1 / class 0 in the true branch, then in the missing branch
    totals = np.zeros((2, m))
    for start in range(0, targets.n_rows, chunk):
        rows = slice(start, min(start + chunk, targets.n_rows))
        t_true, t_missing = literal_masks(targets, target_literals, rows)
        # float32 products are exact (0/1 terms, at most a chunk of rows << 2^24 per sum)
        # and cheaper than float64 (split_gains: a quarter less CPU on MAMMAL); the sums
        # over chunks accumulate in float64.
        ones = t_true.astype(np.float32)
        zeros = (~t_true & ~t_missing).astype(np.float32)
        o_true, o_missing = literal_masks(other, other_literals, rows)
        o_true = o_true.astype(np.float32)
        true_true = ones.T @ o_true
        counts[0] += true_true
        # Class 0 is neither class 1 nor missing: zeros.T @ o_true without its product
        # (half the work), from the column sums and the targets' missing rows, taken
        # once per attribute like the other view's. Exact: integers below 2^24.
        false_true = o_true.sum(axis=0)[None, :] - true_true
        t_missing_first = t_missing[:, t_first]
        if t_missing_first.any():
            false_true -= (t_missing_first.astype(np.float32).T @ o_true)[t_spread]
        counts[1] += false_true
        o_missing = o_missing[:, first]
        if o_missing.any():
            o_missing = o_missing.astype(np.float32)
            counts[2] += (ones.T @ o_missing)[:, spread]
            counts[3] += (zeros.T @ o_missing)[:, spread]
        totals[0] += ones.sum(axis=0)
        totals[1] += zeros.sum(axis=0)
    return counts, totals


def _false_branch(counts: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of class 1 / class 0 in each other literal's false branch: the totals less the true and missing ones."""
    return totals[0][:, None] - counts[0] - counts[2], totals[1][:, None] - counts[1] - counts[3]


def majority_counts(counts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Rows each other literal's branches classify correctly by their larger class, from :func:`split_gain_counts`.

    Shape ``(#target literals, #other literals)``: ``Σ_b max(a_b, b_b)`` over the true,
    missing and false branches (the majority gain ``m`` before ``max(A, B)`` is taken off).

    Examples
    --------
    >>> counts = np.array([[[30.]], [[5.]], [[2.]], [[1.]]])    # (true: classes 1 / 0), then missing
    >>> majority_counts(counts, np.array([[40.], [60.]]))         # 30 + 2 + max(8, 54)
    array([[86.]])
    """
    false_ones, false_zeros = _false_branch(counts, totals)
    return (np.maximum(counts[0], counts[1]) + np.maximum(counts[2], counts[3])
            + np.maximum(false_ones, false_zeros))


def gains_from_counts(counts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """:func:`split_gains` from :func:`split_gain_counts` (of all the rows)."""
    m, p = counts.shape[1], counts.shape[2]
    if p == 0:
        return np.zeros((m, 0))
    a_all, b_all = totals[0][:, None], totals[1][:, None]
    false_ones, false_zeros = _false_branch(counts, totals)
    gini = (_impurity(a_all, b_all) - _impurity(counts[0], counts[1]) - _impurity(counts[2], counts[3])
            - _impurity(false_ones, false_zeros))
    majority = majority_counts(counts, totals) - np.maximum(a_all, b_all)
    return np.maximum(np.maximum(gini / 2.0, majority), 0.0)


def attribute_gains(targets: LiteralIndex, other: LiteralIndex, target_literals: list[Literal],
                    other_literals: list[Literal], block: int = 2048, counter: "GainCounter | None" = None
                    ) -> np.ndarray:
    """``G[s, a] = max`` of :func:`split_gains` over the literals of attribute ``a`` of ``other``.

    Shape ``(len(target_literals), len(other.attributes))`` (0 for an attribute without
    literals). Computed in blocks of about ``block`` literals of ``other`` (memory).
    """
    out = np.zeros((len(target_literals), len(other.attributes)))
    attribute = np.array([split.attribute for split, _ in other_literals], dtype=int)
    start = 0
    while start < len(other_literals):
        stop = min(start + block, len(other_literals))
        while stop < len(other_literals) and attribute[stop] == attribute[stop - 1]:
            stop += 1  # keep an attribute's literals in one block
        gains = split_gains(targets, other, target_literals, other_literals[start:stop], counter)
        for a in np.unique(attribute[start:stop]):
            columns = np.flatnonzero(attribute[start:stop] == a)
            out[:, a] = np.maximum(out[:, a], gains[:, columns].max(axis=1))
        start = stop
    return out


class TargetChooser:
    """Initial targets one trial at a time, each by the two-stage exponential mechanism.

    ``epsilon`` is split equally over ``k`` trials; each :meth:`next` spends its share:
    half to choose an attribute among those not taken, half to choose one of its split
    literals (for an attribute with one literal, a Boolean one, that half is added to the
    next trial's attribute choice; the last trial spends all that is left, so that ``k``
    calls spend ``epsilon`` exactly). Scores have
    sensitivity :data:`TARGET_SCORE_SENSITIVITY` and are computed against the splits of
    the attributes not taken (module docstring). A chosen attribute is taken;
    :meth:`take` takes others (a miner takes the attributes of the trees it released,
    so that the next trial starts from a relation the trees have not described yet).

    Ledger steps ``"{step} {t}: attribute"`` and ``"{step} {t}: split"``.
    """

    def __init__(self, indexes: tuple[LiteralIndex, LiteralIndex] | list[LiteralIndex], k: int,
                 epsilon: EpsilonLike, accountant: Accountant, step: str = "initial target", *,
                 intervals: bool = True, counters: "tuple[GainCounter, GainCounter] | None" = None) -> None:
        self.indexes = tuple(indexes)
        self.accountant = accountant
        self.step = step
        self._shares = list(split_budget(epsilon, [1] * k))
        self._trial = 0
        self._literals = [candidate_literals(index, intervals) for index in self.indexes]
        # gains[side][s, a]: the best gain for literal s of `side` of a literal of attribute a
        # of the other view (only the best per attribute is ever needed).
        self._gains = [attribute_gains(self.indexes[side], self.indexes[1 - side], self._literals[side],
                                       self._literals[1 - side], counter=None if counters is None else counters[side])
                       for side in (0, 1)]
        # Attributes of both views, numbered left first, and the candidate literals of each.
        self._attributes: list[tuple[int, int]] = []
        self._members: list[np.ndarray] = []
        for side in (0, 1):
            members: list[list[int]] = [[] for _ in self.indexes[side].attributes]
            for i, (split, _) in enumerate(self._literals[side]):
                members[split.attribute].append(i)
            for position, own in enumerate(members):
                if own:
                    self._attributes.append((side, position))
                    self._members.append(np.array(own, dtype=int))
        self._number = {attribute: j for j, attribute in enumerate(self._attributes)}
        # For each side's gain matrix, the attribute number of every column (an attribute of the other view).
        self._columns = [np.array([self._number.get((1 - side, position), -1)
                                   for position in range(len(self.indexes[1 - side].attributes))], dtype=int)
                         for side in (0, 1)]
        self.available = np.ones(len(self._attributes), dtype=bool)
        self._carried = Fraction(0)  # a skipped split choice's share, for the next attribute choice

    def take(self, side: int, positions: Iterable[int]) -> None:
        """Take the attributes at ``positions`` of view ``side`` (chosen or described already)."""
        for position in positions:
            number = self._number.get((side, int(position)))
            if number is not None:
                self.available[number] = False

    def close(self) -> Fraction:
        """End the choices here; the budget of the trials not made (and a carried share), now the caller's.

        A miner that stops making trees trials (:data:`~dprm.mining.auto_trees.TREES_THEN_PAIRS`)
        spends it elsewhere, so that the run still spends its whole budget. After it,
        :meth:`next` makes no choice.

        Examples
        --------
        >>> from dprm.data import Attribute, AttributeKind, View
        >>> from dprm.data.literal_index import LiteralIndex
        >>> from dprm.privacy import Accountant, SeededNoise
        >>> rng = np.random.default_rng(0)
        >>> coin = lambda: (rng.random(50) < 0.5).astype(np.int8)
        >>> views = [View(side, [Attribute(f"{side}{j}", side, AttributeKind.BOOLEAN, coin()) for j in range(3)])
        ...          for side in ("l", "r")]
        >>> accountant = Accountant(1, SeededNoise(np.random.default_rng(1)))
        >>> chooser = TargetChooser([LiteralIndex(v) for v in views], 4, Fraction(2, 5), accountant)
        >>> _ = chooser.next()                      # a Boolean target: its split's half is carried
        >>> chooser.close(), accountant.spent()     # 3 trials' tenths and the carried twentieth
        (Fraction(7, 20), Fraction(1, 20))
        """
        rest = sum(self._shares[self._trial:], Fraction(0)) + self._carried
        self._shares, self._carried = self._shares[:self._trial], Fraction(0)
        return rest

    def next(self) -> InitialTarget:
        """The next trial's target; spends this trial's share exactly."""
        share = self._shares[self._trial]
        self._trial += 1
        attribute_share, split_share = split_budget(share, [1, 1])
        attribute_share, self._carried = attribute_share + self._carried, Fraction(0)
        if not self.available.any():  # every attribute taken: start over
            self.available[:] = True
        live = [self._gains[side][:, (self._columns[side] >= 0) & self.available[self._columns[side]]]
                for side in (0, 1)]
        literal_scores = [g.max(axis=1) if g.shape[1] else np.zeros(g.shape[0]) for g in live]
        scores = np.array([literal_scores[side][own].max() for (side, _), own in zip(self._attributes, self._members)])
        candidates = np.flatnonzero(self.available)
        pick = ExponentialMechanism(attribute_share, TARGET_SCORE_SENSITIVITY).release(
            self.accountant, f"{self.step} {self._trial}: attribute", scores[candidates])
        number = int(candidates[pick])
        self.available[number] = False
        side, _ = self._attributes[number]
        own = self._members[number]
        if len(own) == 1 and self._trial < len(self._shares):  # a choice among one: its share goes on
            self._carried = split_share
            which = 0
        else:
            which = ExponentialMechanism(split_share, TARGET_SCORE_SENSITIVITY).release(
                self.accountant, f"{self.step} {self._trial}: split", literal_scores[side][own])
        split, high = self._literals[side][int(own[int(which)])]
        return InitialTarget(side, split, high)


def choose_targets(
    indexes: tuple[LiteralIndex, LiteralIndex] | list[LiteralIndex],
    k: int,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str = "initial target",
) -> list[InitialTarget]:
    """``k`` initial targets of :class:`TargetChooser`, spending exactly ``epsilon``; each takes only itself.

    Examples
    --------
    >>> from dprm.data import Attribute, AttributeKind, View
    >>> from dprm.privacy import SeededNoise
    >>> rng = np.random.default_rng(0)
    >>> a = rng.random(400) < 0.4
    >>> noise = [rng.random(400) < 0.3 for _ in range(5)]
    >>> left = View("l", [Attribute(f"x{j}", "l", AttributeKind.BOOLEAN, v.astype(np.int8))
    ...                   for j, v in enumerate([a] + noise[:2])])
    >>> right = View("r", [Attribute(f"y{j}", "r", AttributeKind.BOOLEAN, v.astype(np.int8))
    ...                    for j, v in enumerate([a ^ (rng.random(400) < 0.05)] + noise[2:])])
    >>> accountant = Accountant(2.0, SeededNoise(np.random.default_rng(1)))
    >>> chosen = choose_targets((LiteralIndex(left), LiteralIndex(right)), 2, 2.0, accountant)
    >>> [(t.side, t.split.attribute) for t in chosen][0]   # y0, the one related to x0
    (1, 0)
    >>> float(accountant.spent()), [entry.step for entry in accountant.ledger]  # y0 is Boolean: one literal
    (2.0, ['initial target 1: attribute', 'initial target 2: attribute', 'initial target 2: split'])

    Once ``y0`` is taken, ``x0`` has no partner left among the attributes not taken,
    so the second choice is anywhere.
    """
    chooser = TargetChooser(indexes, k, epsilon, accountant, step, intervals=False)
    return [chooser.next() for _ in range(k)]
