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
A proposal picks an internal node uniformly and replaces its split (its subtrees
stay): either by a uniform attribute of the view and a uniform split of it (the
paper's move; not symmetric when attributes have different numbers of splits, so
the Hastings correction ``log(k_new / k_old)`` enters the acceptance), or by a local
move to the neighbouring threshold of the same attribute (symmetric); see
:class:`_Proposer`. Only the rows under the replaced node are re-routed and
re-counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.errors import ParameterError
from dprm.privacy import Accountant, ExponentialMechanism, MetropolisHastings, split_budget
from dprm.privacy.budget import EpsilonLike
from dprm.trees._kernels import ancestor_table, moved_counts, retarget_counts, route_rows, rows_below
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
    the rows with a class. The per-step loops are compiled (:mod:`dprm.trees._kernels`).
    """

    def __init__(self, tree: Tree, index: LiteralIndex, target: np.ndarray, n_classes: int) -> None:
        if any(split is None for split in tree.splits):
            raise ValueError("a RoutedTree needs a complete tree")
        self.tree = tree
        self.index = index
        self.depth = tree.depth
        self.first_leaf = 2**self.depth - 1
        self.n_positions = 2 ** (self.depth + 1) - 1
        self.attribute, self.code, self.numeric = _split_arrays(tree)
        self.target = np.asarray(target, dtype=np.int64).copy()
        self.n_classes = n_classes
        self.ancestors = ancestor_table(self.depth)
        self.cell = route_rows(index.codes, index.missing_code, self.attribute, self.code, self.numeric,
                               np.arange(index.n_rows, dtype=np.int64), 0, self.first_leaf)
        labelled = self.target >= 0
        flat = np.bincount(self.cell[labelled] * n_classes + self.target[labelled],
                           minlength=self.n_positions * n_classes)
        self.counts = flat.reshape(self.n_positions, n_classes).astype(np.int64)

    def rows_below(self, node: int) -> np.ndarray:
        """Rows whose cell is ``node`` or a position below it."""
        return rows_below(self.cell, node, self.ancestors)

    def propose(self, node: int, split: Split) -> tuple[np.ndarray, np.ndarray]:
        """Rows below ``node`` and their cells if ``node`` held ``split``."""
        rows = rows_below(self.cell, node, self.ancestors)
        attribute, code, numeric = self.attribute.copy(), self.code.copy(), self.numeric.copy()
        attribute[node], code[node] = split.attribute, split.code
        numeric[node] = split.kind is AttributeKind.NUMERIC
        cells = route_rows(self.index.codes, self.index.missing_code, attribute, code, numeric, rows, node,
                           self.first_leaf)
        return rows, cells

    def count_change(self, rows: np.ndarray, new_cells: np.ndarray) -> np.ndarray:
        """Counts after moving ``rows`` to ``new_cells`` (not committed)."""
        return moved_counts(self.counts, rows, self.cell[rows], new_cells, self.target)

    def commit(self, node: int, split: Split, rows: np.ndarray, new_cells: np.ndarray, counts: np.ndarray) -> None:
        self.tree.splits[node] = split
        self.attribute[node], self.code[node] = split.attribute, split.code
        self.numeric[node] = split.kind is AttributeKind.NUMERIC
        self.cell[rows] = new_cells
        self.counts = counts

    def retargeted_counts(self, rows: np.ndarray, new_target: np.ndarray) -> np.ndarray:
        """Counts if ``rows`` had the classes ``new_target`` (not committed)."""
        return retarget_counts(self.counts, rows, self.cell, self.target[rows], new_target)

    def retarget(self, rows: np.ndarray, new_target: np.ndarray, counts: np.ndarray | None = None) -> None:
        """Change the classes of ``rows`` (the targets of a paired tree changed)."""
        self.counts = self.retargeted_counts(rows, new_target) if counts is None else counts
        self.target[rows] = new_target

    def leaf_target(self) -> tuple[np.ndarray, int]:
        """Leaf number of every row as a class for a paired tree (-1 when dropped)."""
        return leaf_classes(self.cell, self.depth), 2**self.depth


def leaf_classes(cell: np.ndarray, depth: int) -> np.ndarray:
    first_leaf = 2**depth - 1
    return np.where(cell >= first_leaf, cell - first_leaf, -1)


class _Proposer:
    """Proposals for node replacements: a mixture of two kernels, each reversible.

    * global (the paper's): a uniform attribute, then a uniform split of it; not
      symmetric when attributes have different numbers of splits, so it returns
      the Hastings term ``log(k_new / k_old)``;
    * local (with probability ``local_share``, chosen independently of the state):
      the same attribute, the neighbouring threshold below or above with
      probability 1/2 each (no change at the ends of the grid), or a uniform split of
      the same Boolean/categorical attribute: symmetric, Hastings term 0. Local
      steps let a chain refine a threshold that a global step finds only by chance.

    A mixture of kernels that each satisfy detailed balance with the target
    distribution satisfies it too, so the chain still targets the exponential
    mechanism over trees.
    """

    def __init__(self, index: LiteralIndex, depth: int, rng: np.random.Generator,
                 local_share: float = 0.5) -> None:
        self.index = index
        self.splits_of = _attribute_splits(index)
        self.usable = _usable_attributes(self.splits_of)
        self.n_internal = 2**depth - 1
        self.rng = rng
        self.local_share = local_share

    def draw(self, tree: Tree) -> tuple[int, Split, float]:
        node = int(self.rng.integers(self.n_internal))
        if self.rng.random() < self.local_share:
            return node, self._local(tree.splits[node]), 0.0
        attribute = int(self.usable[self.rng.integers(self.usable.size)])
        candidates = self.splits_of[attribute]
        split = self.index.splits[int(candidates[self.rng.integers(candidates.size)])]
        old = tree.splits[node]
        log_ratio = float(np.log(candidates.size / self.splits_of[old.attribute].size))
        return node, split, log_ratio

    def _local(self, old: Split) -> Split:
        candidates = self.splits_of[old.attribute]
        if old.kind is AttributeKind.NUMERIC:
            step = old.code + (1 if self.rng.random() < 0.5 else -1)
            return self.index.splits[int(candidates[step])] if 0 <= step < candidates.size else old
        return self.index.splits[int(candidates[self.rng.integers(candidates.size)])]


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
            second_counts = second.retargeted_counts(rows, new_classes)
            proposed = score_of(first_counts, second_counts)
            if chain.accept(score, proposed, log_ratio):
                first.commit(node, split, rows, cells, first_counts)
                second.retarget(rows, new_classes, second_counts)
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

