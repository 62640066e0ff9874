"""Differentially private trees of fixed depth: exponential-mechanism and MCMC trees.

Both builders grow complete trees of depth ``d`` (every internal position holds a
split), so the *shape* never depends on the data; the data reaches the output only
through the mechanisms, which charge the accountant.

Scores
------
For a partition of the labelled rows into cells (leaves, and the drop-out cells of
rows with a missing value on a tested attribute) with class counts ``τ_{n,c}``::

    G = Σ_cells Σ_c τ_{n,c}² / τ_n        ("purity mass", in rows)

**Sensitivity of G is 1.** Adding one row of class ``c`` to a cell with ``τ_n = t``
rows, ``τ_{n,c} = a`` and ``S = Σ_c τ_{n,c}²`` changes ``G`` by
``Δ = ((2a + 1)t − S) / (t(t + 1))`` (``Δ = 1`` for an empty cell). As ``a² ≤ S ≤ t²``
and ``a ≤ t``: ``Δ ≤ ((2a+1)t − a²)/(t(t+1)) ≤ (t² + t)/(t(t+1)) = 1`` and
``Δ ≥ (t − t²)/(t(t+1)) > −1``. Removing a row is the reverse change. Rows without a
class are in no count. (``tests/test_private_trees.py`` checks it on random
neighbouring datasets.)

* Bai et al.'s tree score (3) is ``G − τ`` (τ = labelled rows): sensitivity 2, as the
  paper uses (Algorithm 3: acceptance ``exp(ε(g' − g)/4)``).
* The tree-pair score of MCMCTreePair, dprm's default ``pair_score="counts"``:
  ``(G(T_L; a) + G(T_R; leaves of T_L)) / 2`` — one row changes each term by at most
  1 (the targets of ``T_R`` are the leaves of ``T_L``, a function of the row alone),
  so the sensitivity is 1, in units of rows: the sampler sees differences of many
  rows, where the paper's normalised score (``pair_score="paper"``, equation (6),
  in [0, 1], sensitivity 1) varies by at most 1 over all tree pairs and leaves the
  chain practically uniform at small budgets.
* AltExpM's per-node split quality is the Gini criterion of
  :mod:`dprm.trees.criterion` (sensitivity 2, Friedman & Schuster 2010).

MCMC proposals
--------------
A proposal picks an internal node uniformly, an attribute of the view uniformly and
a split of that attribute uniformly, and replaces the node's split (its subtrees
stay). The proposal is not symmetric when attributes have different numbers of
splits, so the Hastings correction ``log(k_new / k_old)`` (numbers of splits of the
new and the old attribute) enters the acceptance. Only the rows under the replaced
node are re-routed and re-counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.errors import ParameterError
from dprm.privacy import Accountant, ExponentialMechanism, MetropolisHastings, split_budget
from dprm.privacy.budget import EpsilonLike
from dprm.trees.criterion import GINI_SENSITIVITY, split_qualities
from dprm.trees.tree import Tree

__all__ = [
    "purity_mass",
    "random_tree",
    "grow_exponential_tree",
    "RoutedTree",
    "sample_tree",
    "sample_tree_pair",
    "ChainTrace",
    "PAIR_SCORES",
]

PAIR_SCORES = ("counts", "paper")
MCMC_STOPS = ("fixed", "variance")


def purity_mass(counts: np.ndarray) -> float:
    """``G = Σ_cells Σ_c τ_{n,c}² / τ_n`` of a ``(cells, classes)`` count matrix.

    Examples
    --------
    >>> purity_mass(np.array([[3, 0], [1, 1], [0, 0]]))
    4.0
    """
    counts = np.asarray(counts, dtype=np.float64)
    sizes = counts.sum(axis=1)
    squares = np.square(counts).sum(axis=1)
    return float(np.sum(squares[sizes > 0] / sizes[sizes > 0]))


def _attribute_splits(index: LiteralIndex) -> list[np.ndarray]:
    """For each attribute, the positions of its splits in ``index.splits``."""
    by_attribute: list[list[int]] = [[] for _ in index.attributes]
    for position, split in enumerate(index.splits):
        by_attribute[split.attribute].append(position)
    return [np.array(p, dtype=np.int64) for p in by_attribute]


def _usable_attributes(splits_of: list[np.ndarray]) -> np.ndarray:
    usable = np.array([k for k, s in enumerate(splits_of) if s.size > 0], dtype=np.int64)
    if usable.size == 0:
        raise ParameterError("a view has no attribute with a split to build trees on")
    return usable


def random_tree(index: LiteralIndex, depth: int, rng: np.random.Generator) -> Tree:
    """A complete tree whose splits are drawn at random (attribute, then split).

    Data-independent: only the public candidate splits are used.
    """
    splits_of = _attribute_splits(index)
    usable = _usable_attributes(splits_of)
    chosen = []
    for _ in range(2**depth - 1):
        attribute = usable[rng.integers(usable.size)]
        chosen.append(index.splits[int(rng.choice(splits_of[attribute]))])
    return Tree(depth=depth, splits=chosen)


def grow_exponential_tree(
    index: LiteralIndex,
    target: np.ndarray,
    n_classes: int,
    depth: int,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
) -> Tree:
    """Algorithm 2 (createDTExpMech, Friedman & Schuster 2010, fixed depth).

    Level by level, every node chooses its split by the exponential mechanism over
    all candidate splits of the view with the Gini quality (sensitivity 2) and
    ``ε/d``; the nodes of a level hold disjoint rows, so one charge of ``ε/d`` covers
    the level (parallel composition). No node counts are released. Total: ``ε``.
    """
    shares = split_budget(epsilon, [1] * depth)
    tree = Tree(depth=depth)
    position = np.zeros(index.n_rows, dtype=np.int64)  # heap position, -1 = dropped
    target = np.asarray(target, dtype=np.int64)
    for level in range(depth):
        first = 2**level - 1
        n_nodes = 2**level
        local = np.where(position >= first, position - first, -1)
        qualities = split_qualities(index, local, target, n_nodes, n_classes)
        mechanism = ExponentialMechanism(shares[level], GINI_SENSITIVITY)
        chosen = mechanism.release_parallel(accountant, f"{step} level {level + 1}",
                                            [qualities[:, k] for k in range(n_nodes)])
        for k in range(n_nodes):
            tree.splits[first + k] = index.splits[int(chosen[k])]
        if level + 1 < depth:
            rows = np.flatnonzero(position >= first)
            nodes = position[rows]
            routed = _route_level(index, tree, rows, nodes)
            position[rows] = routed
    return tree


def _split_arrays(tree: Tree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(tree.splits)
    attribute = np.zeros(n, dtype=np.int64)
    code = np.zeros(n, dtype=np.int64)
    numeric = np.zeros(n, dtype=bool)
    for node, split in enumerate(tree.splits):
        if split is not None:
            attribute[node], code[node] = split.attribute, split.code
            numeric[node] = split.kind is AttributeKind.NUMERIC
    return attribute, code, numeric


def _route_level(index: LiteralIndex, tree: Tree, rows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """One step down for ``rows`` at internal ``nodes``: child position, -1 if dropped."""
    attribute, code, numeric = _split_arrays(tree)
    values = index.codes[attribute[nodes], rows]
    missing = values == index.missing_code
    holds = np.where(numeric[nodes], values <= code[nodes], values == code[nodes])
    child = 2 * nodes + np.where(holds, 1, 2)
    return np.where(missing, -1, child)


@dataclass
class ChainTrace:
    """What an MCMC chain did (kept server side; never released: only for tests)."""

    steps: int = 0
    accepted: int = 0
    scores: list[float] = field(default_factory=list)


class RoutedTree:
    """A complete tree with every row's cell and the class counts per cell, kept up
    to date under node replacements (only the rows below the node are re-routed).

    Cells are heap positions: a leaf position, or the internal position where the row
    dropped out (missing value of that node's test). ``counts[cell, class]`` counts
    the rows with a class.
    """

    def __init__(self, tree: Tree, index: LiteralIndex, target: np.ndarray, n_classes: int) -> None:
        if any(split is None for split in tree.splits):
            raise ValueError("a RoutedTree needs a complete tree")
        self.tree = tree
        self.index = index
        self.depth = tree.depth
        self.n_positions = 2 ** (self.depth + 1) - 1
        self.attribute, self.code, self.numeric = _split_arrays(tree)
        self.target = np.asarray(target, dtype=np.int64)
        self.n_classes = n_classes
        self.cell = self._route(np.arange(index.n_rows), np.zeros(index.n_rows, dtype=np.int64))
        self.counts = self._count(self.cell, self.target)
        # ancestor[p, k]: the ancestor of position p at depth k (p itself at its depth)
        depth_of = np.floor(np.log2(np.arange(self.n_positions) + 1)).astype(np.int64)
        self.depth_of = depth_of
        self.ancestor = np.full((self.n_positions, self.depth + 1), -1, dtype=np.int64)
        for p in range(self.n_positions):
            for k in range(depth_of[p] + 1):
                self.ancestor[p, k] = ((p + 1) >> (depth_of[p] - k)) - 1

    def _count(self, cell: np.ndarray, target: np.ndarray) -> np.ndarray:
        labelled = target >= 0
        flat = np.bincount(cell[labelled] * self.n_classes + target[labelled],
                           minlength=self.n_positions * self.n_classes)
        return flat.reshape(self.n_positions, self.n_classes)

    def _route(self, rows: np.ndarray, start: np.ndarray, attribute=None, code=None, numeric=None) -> np.ndarray:
        attribute = self.attribute if attribute is None else attribute
        code = self.code if code is None else code
        numeric = self.numeric if numeric is None else numeric
        position = start.copy()
        active = np.ones(rows.size, dtype=bool)
        first_leaf = 2**self.depth - 1
        for _ in range(self.depth):
            moving = np.flatnonzero(active & (position < first_leaf))
            if moving.size == 0:
                break
            nodes = position[moving]
            values = self.index.codes[attribute[nodes], rows[moving]]
            missing = values == self.index.missing_code
            holds = np.where(numeric[nodes], values <= code[nodes], values == code[nodes])
            position[moving] = np.where(missing, nodes, 2 * nodes + np.where(holds, 1, 2))
            active[moving[missing]] = False
        return position

    def rows_below(self, node: int) -> np.ndarray:
        """Rows whose cell is ``node`` or a position below it."""
        depth = int(self.depth_of[node])
        return np.flatnonzero(self.ancestor[self.cell, depth] == node)

    def propose(self, node: int, split: Split) -> tuple[np.ndarray, np.ndarray]:
        """Rows below ``node`` and their cells if ``node`` held ``split``."""
        rows = self.rows_below(node)
        attribute, code, numeric = self.attribute.copy(), self.code.copy(), self.numeric.copy()
        attribute[node], code[node] = split.attribute, split.code
        numeric[node] = split.kind is AttributeKind.NUMERIC
        cells = self._route(rows, np.full(rows.size, node, dtype=np.int64), attribute, code, numeric)
        return rows, cells

    def count_change(self, rows: np.ndarray, new_cells: np.ndarray, target: np.ndarray | None = None) -> np.ndarray:
        """Counts after moving ``rows`` to ``new_cells`` (not committed)."""
        target = self.target if target is None else target
        labelled = target[rows] >= 0
        counts = self.counts.copy()
        np.subtract.at(counts, (self.cell[rows][labelled], target[rows][labelled]), 1)
        np.add.at(counts, (new_cells[labelled], target[rows][labelled]), 1)
        return counts

    def commit(self, node: int, split: Split, rows: np.ndarray, new_cells: np.ndarray, counts: np.ndarray) -> None:
        self.tree.splits[node] = split
        self.attribute[node], self.code[node] = split.attribute, split.code
        self.numeric[node] = split.kind is AttributeKind.NUMERIC
        self.cell[rows] = new_cells
        self.counts = counts

    def retarget(self, rows: np.ndarray, new_target: np.ndarray) -> None:
        """Change the classes of ``rows`` (the targets of a paired tree changed)."""
        old = self.target[rows]
        labelled_old, labelled_new = old >= 0, new_target >= 0
        np.subtract.at(self.counts, (self.cell[rows][labelled_old], old[labelled_old]), 1)
        np.add.at(self.counts, (self.cell[rows][labelled_new], new_target[labelled_new]), 1)
        self.target[rows] = new_target

    def leaf_target(self) -> tuple[np.ndarray, int]:
        """Leaf number of every row as a class for a paired tree (-1 when dropped)."""
        return leaf_classes(self.cell, self.depth), 2**self.depth


def leaf_classes(cell: np.ndarray, depth: int) -> np.ndarray:
    first_leaf = 2**depth - 1
    return np.where(cell >= first_leaf, cell - first_leaf, -1)


class _Proposer:
    """Uniform node, uniform attribute, uniform split of it; with the Hastings term."""

    def __init__(self, index: LiteralIndex, depth: int, rng: np.random.Generator) -> None:
        self.index = index
        self.splits_of = _attribute_splits(index)
        self.usable = _usable_attributes(self.splits_of)
        self.n_internal = 2**depth - 1
        self.rng = rng

    def draw(self, tree: Tree) -> tuple[int, Split, float]:
        node = int(self.rng.integers(self.n_internal))
        attribute = int(self.usable[self.rng.integers(self.usable.size)])
        candidates = self.splits_of[attribute]
        split = self.index.splits[int(candidates[self.rng.integers(candidates.size)])]
        old = tree.splits[node]
        log_ratio = float(np.log(candidates.size / self.splits_of[old.attribute].size))
        return node, split, log_ratio


def _check_chain(depth: int, iterations: int, stop: str, variance_window: int) -> None:
    if depth < 1:
        raise ParameterError(f"depth must be at least 1, not {depth}")
    if iterations < 1:
        raise ParameterError(f"mcmc-iterations must be at least 1, not {iterations}")
    if stop not in MCMC_STOPS:
        raise ParameterError(f"mcmc-stop must be one of {', '.join(MCMC_STOPS)}, not {stop!r}")
    if variance_window < 2:
        raise ParameterError(f"the variance window must be at least 2, not {variance_window}")


def _stabilised(scores: list[float], window: int, threshold: float) -> bool:
    return len(scores) >= window and float(np.var(scores[-window:])) < threshold


def sample_tree(
    index: LiteralIndex,
    target: np.ndarray,
    n_classes: int,
    depth: int,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
    rng: np.random.Generator,
    *,
    iterations: int = 10_000,
    stop: str = "fixed",
    variance_threshold: float = 0.005,
    variance_window: int = 500,
    trace: ChainTrace | None = None,
) -> Tree:
    """Algorithm 3 (createDTMCMC, Bai et al. 2017): a tree sampled by MCMC.

    Starts from a random complete tree and runs ``iterations`` Metropolis–Hastings
    node replacements with Bai's score ``G − τ`` (sensitivity 2) and the whole
    ``epsilon``, charged once. ``stop="variance"`` also stops when the variance of
    the last ``variance_window`` scores falls below ``variance_threshold`` (the
    paper's data-dependent stop; the result then holds only with that caveat).
    """
    _check_chain(depth, iterations, stop, variance_window)
    tree = random_tree(index, depth, rng)
    state = RoutedTree(tree, index, target, n_classes)
    labelled = float((np.asarray(target) >= 0).sum())
    chain = MetropolisHastings(epsilon, GINI_SENSITIVITY).start(accountant, step)
    proposer = _Proposer(index, depth, rng)
    score = purity_mass(state.counts) - labelled
    trace = trace if trace is not None else ChainTrace()
    for _ in range(iterations):
        if stop == "variance":
            trace.scores.append(score)
            if _stabilised(trace.scores, variance_window, variance_threshold):
                break
        node, split, log_ratio = proposer.draw(state.tree)
        rows, cells = state.propose(node, split)
        counts = state.count_change(rows, cells)
        proposed = purity_mass(counts) - labelled
        trace.steps += 1
        if chain.accept(score, proposed, log_ratio):
            state.commit(node, split, rows, cells, counts)
            score = proposed
            trace.accepted += 1
    return state.tree


def sample_tree_pair(
    first_index: LiteralIndex,
    second_index: LiteralIndex,
    target: np.ndarray,
    n_classes: int,
    depth: int,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
    rng: np.random.Generator,
    *,
    iterations: int = 10_000,
    pair_score: str = "counts",
    stop: str = "fixed",
    variance_threshold: float = 0.005,
    variance_window: int = 500,
    trace: ChainTrace | None = None,
) -> tuple[Tree, Tree]:
    """Algorithm 5 (sampleTreePair): MCMC over pairs of trees with matching leaves.

    The first tree (on ``first_index``, the view without the initial attribute)
    predicts ``target``; the second predicts the leaves of the first. Each step
    replaces a uniformly chosen internal node of either tree; a change in the first
    tree re-targets the rows it moves in the second (``updateStats``). The chain
    uses the whole ``epsilon`` (charged once) with the pair score (sensitivity 1):
    ``"counts"`` (default, in rows) or ``"paper"`` (equation (6), normalised).

    Returns ``(first tree, second tree)``.
    """
    _check_chain(depth, iterations, stop, variance_window)
    if pair_score not in PAIR_SCORES:
        raise ParameterError(f"pair-score must be one of {', '.join(PAIR_SCORES)}, not {pair_score!r}")
    first = RoutedTree(random_tree(first_index, depth, rng), first_index, target, n_classes)
    second_target, n_leaves = first.leaf_target()
    second = RoutedTree(random_tree(second_index, depth, rng), second_index, second_target, n_leaves)
    n_rows = float(first_index.n_rows)

    def score_of(first_counts: np.ndarray, second_counts: np.ndarray) -> float:
        g_first, g_second = purity_mass(first_counts), purity_mass(second_counts)
        if pair_score == "counts":
            return (g_first + g_second) / 2.0
        return (g_first / n_rows) * (1.0 + g_second / n_rows) / 2.0

    chain = MetropolisHastings(epsilon, 1).start(accountant, step)
    proposers = [_Proposer(first_index, depth, rng), _Proposer(second_index, depth, rng)]
    n_internal = 2**depth - 1
    score = score_of(first.counts, second.counts)
    trace = trace if trace is not None else ChainTrace()
    for _ in range(iterations):
        if stop == "variance":
            trace.scores.append(score)
            if _stabilised(trace.scores, variance_window, variance_threshold):
                break
        side = int(rng.integers(2 * n_internal)) // n_internal  # a uniform node of either tree
        trace.steps += 1
        if side == 0:
            node, split, log_ratio = proposers[0].draw(first.tree)
            rows, cells = first.propose(node, split)
            first_counts = first.count_change(rows, cells)
            new_classes = leaf_classes(cells, depth)
            second_counts = _retargeted_counts(second, rows, new_classes)
            proposed = score_of(first_counts, second_counts)
            if chain.accept(score, proposed, log_ratio):
                first.commit(node, split, rows, cells, first_counts)
                second.retarget(rows, new_classes)
                score = proposed
                trace.accepted += 1
        else:
            node, split, log_ratio = proposers[1].draw(second.tree)
            rows, cells = second.propose(node, split)
            second_counts = second.count_change(rows, cells)
            proposed = score_of(first.counts, second_counts)
            if chain.accept(score, proposed, log_ratio):
                second.commit(node, split, rows, cells, second_counts)
                score = proposed
                trace.accepted += 1
    return first.tree, second.tree


def _retargeted_counts(state: RoutedTree, rows: np.ndarray, new_target: np.ndarray) -> np.ndarray:
    old = state.target[rows]
    counts = state.counts.copy()
    keep_old, keep_new = old >= 0, new_target >= 0
    np.subtract.at(counts, (state.cell[rows][keep_old], old[keep_old]), 1)
    np.add.at(counts, (state.cell[rows][keep_new], new_target[keep_new]), 1)
    return counts
