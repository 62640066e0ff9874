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
* The tree-pair score of MCMCTreePair, dprm's default ``pair_score="counts"``::

      M(T_L; a) + M(T_R; leaves of T_L) − B(leaves of T_L)

  with the *majority mass* ``M = Σ_cells max_c τ_{n,c}`` (rows of each cell's
  majority class, as a tree's accuracy counts them) and ``B = max_k N_k`` the
  majority mass of ``T_R``'s classes (the leaves of ``T_L``) without any split:
  ``M(T_R) − B`` is ``T_R``'s gain in rows over predicting the largest leaf of
  ``T_L``. Without ``B`` the score rewards a degenerate ``T_L`` whose one leaf holds
  nearly every row (then any ``T_R`` "predicts" it perfectly).

  **Bounded range 3 (sensitivity 2).** Adding one row raises each of ``M(T_L)``,
  ``M(T_R)`` and ``B`` by 0 or 1 (a maximum of counts rises by at most the one count
  that rises; the targets of ``T_R`` are the leaves of ``T_L``, a function of the row
  alone; an unlabelled row changes nothing). So for *every* tree pair the score
  changes by a value in ``[−1, 2]``, the same interval for all pairs: the chain
  targets ``exp(ε s / 3)`` (:class:`~dprm.privacy.MetropolisHastings` with
  ``score_range=3``, the bounded-range exponential mechanism), ε-DP upon
  convergence. The Gini form of the same score, ``pair_score="gini"``,
  ``(G(T_L) + G(T_R) − B_G)/3`` with ``B_G = Σ_k N_k²/N``, has sensitivity 1 but
  terms that move in both directions (``G`` changes by a value in ``(−1, 1]``), so it
  gets ``exp(ε s / 2)``, i.e. ``ε/6`` per row of Gini mass against ``ε/3`` per row of
  majority mass: on MAMMAL at ε = 1 the majority score raised the median true
  Jaccard of kept redescriptions from 0.51 to 0.57 (seeds 0–9,
  benchmarks/quality_tree_miners.py).
  (``tests/test_private_trees.py`` checks every bound on random neighbouring
  datasets.) The paper's normalised score (``pair_score="paper"``, equation (6), in
  [0, 1], sensitivity 1) varies by at most 1 over all tree pairs and leaves the chain
  practically uniform at small budgets.
* A single tree's *majority mass* ``M(T; a) = Σ_cells max_c τ_{n,c}`` (``sample_tree``'s
  ``score="counts"``, dprm's default for AltMCMC): adding a row raises it by 0 or 1
  for every tree alike, a monotone score of sensitivity 1, so the chain targets
  ``exp(ε M)`` (bounded range 1), four times the rate per row of Bai's ``exp(ε(G − τ)/4)``.
* AltExpM's per-node split quality is the Gini criterion of
  :mod:`dprm.trees.criterion` (sensitivity 2, Friedman & Schuster 2010).

MCMC proposals
--------------
A proposal picks an internal node uniformly (of either tree, for a pair) and
replaces its split; its subtrees stay. It is a mixture of two kernels, each
reversible, chosen independently of the state:

* global (the paper's move): a uniform attribute of the view, then a uniform split of
  it; not symmetric when attributes have different numbers of splits, so the
  Hastings term ``log(k_new / k_old)`` enters the acceptance;
* local (probability ``LOCAL_SHARE``): the neighbouring threshold of the same
  numeric attribute, below or above with probability 1/2 (no change at the ends of
  the grid), or a uniform split of the same Boolean/categorical attribute:
  symmetric. Local steps refine a threshold a global step finds only by chance.

A mixture of kernels that each satisfy detailed balance with the target satisfies
it too, so the chain targets the exponential mechanism over trees.

Which node a step replaces (``node_choice``, drawn before the move, independently of
the state): ``"uniform"`` (the paper's: every internal node of either tree alike)
or ``"by-depth"``: a node at level ``l`` (root 0) with probability proportional to
``2^l``, so each level of a tree is chosen with probability ∝ ``4^l``. The second
moves fewer rows per step (the rows below a node at level ``l`` are ``2^-l`` of
them on average: at depth 4, 15/85 of the rows per step instead of 4/15). Exactness:
let ``P(v) > 0`` be the probability of choosing node ``v``, the same for every
state. Two trees ``T ≠ T'`` that a step can connect differ at exactly one node
``v``, with splits ``s`` and ``s'``; the proposal densities are ``q(T → T') = P(v)
r(s' | s)`` and ``q(T' → T) = P(v) r(s | s')``, with ``r`` the split move above.
``P(v)`` cancels in the Hastings ratio ``q(T' → T)/q(T → T') = r(s | s')/r(s' | s)``,
which is the term the chain already uses, so the acceptance rule is unchanged and
detailed balance with ``π(T) ∝ exp(ε·score(T)/(2Δ))`` holds as before; the chain is
irreducible because every node has ``P(v) > 0`` (any tree reaches any other in at
most one step per node). Hence the same stationary distribution, the same
exponential mechanism and the same guarantee label; only how fast the chain
approaches it changes (the root is proposed less often), which is a quality
question, not a privacy one (``docs/performance.md``). ``tests/test_private_trees.py``
checks the stationary distribution of both on a small tree space. The chain runs
compiled (:func:`dprm.trees._kernels.run_chain`): only the rows below the replaced
node are re-routed and re-counted; the data-independent proposal draws come from
``rng`` and the acceptance uniforms from the accountant's noise source.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex
from dprm.errors import ParameterError
from dprm.privacy import Accountant, ExponentialMechanism, MetropolisHastings, split_budget
from dprm.privacy.budget import EpsilonLike
from dprm.trees.chain_draws import NODE_CHOICES, Anchor, ChainDraws, draw_chain
from dprm.trees.compiled import chain_kernel, route_rows, split_bitsets
from dprm.trees.criterion import GINI_SENSITIVITY, node_class_counts, qualities_from_counts
from dprm.trees.layout import bitset_bytes, preorder, tree_layout
from dprm.trees.tree import Tree

if TYPE_CHECKING:
    from dprm.trees.chain_shards import ChainRows, ShardedChainJob

__all__ = [
    "purity_mass",
    "random_tree",
    "grow_exponential_tree",
    "cell_counts",
    "sample_tree",
    "sample_tree_pair",
    "prepare_tree_pair",
    "ChainJob",
    "ChainCancelled",
    "ChainTrace",
    "ChainDraws",
    "draw_chain",
    "GrowingRows",
    "PAIR_SCORES",
    "TREE_SCORES",
]

PAIR_SCORES = ("counts", "gini", "paper")
# pair score → (compiled score kind, sensitivity, bounded range of the score's change)
_PAIR_SCORE_MECHANISMS = {"counts": (3, 2, 3), "gini": (1, 1, None), "paper": (2, 1, None)}
#: Scores of a single tree (``sample_tree``, ``grow_exponential_tree``): Bai's ``G − τ``
#: / the Gini quality (the papers'), or the majority mass (monotone, sensitivity 1).
TREE_SCORES = ("gini", "counts")
# single-tree score → (compiled score kind, sensitivity, bounded range of the score's change)
_TREE_SCORE_MECHANISMS = {"gini": (0, GINI_SENSITIVITY, None), "counts": (4, 1, 1)}
LOCAL_SHARE = 0.5  # probability of a local proposal (module docstring)
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
    *,
    rows: "GrowingRows | None" = None,
    score: str = "gini",
) -> Tree:
    """Algorithm 2 (createDTExpMech, Friedman & Schuster 2010, fixed depth).

    Level by level, every node chooses its split by the exponential mechanism over
    all candidate splits of the view with the Gini quality (``score="gini"``,
    sensitivity 2) or the rows of each branch's majority class (``score="counts"``,
    monotone, sensitivity 1: ``exp(ε q)`` instead of ``exp(ε q / 4)``) and
    ``ε/d``; the nodes of a level hold disjoint rows, so one charge of ``ε/d`` covers
    the level (parallel composition). No node counts are released. Total: ``ε``.
    ``rows`` counts and routes the rows (default: a :class:`GrowingRows` on ``index``'s
    rows and ``target``; a sharded run passes one that asks every shard and sums).
    """
    if score not in TREE_SCORES:
        raise ParameterError(f"tree-score must be one of {', '.join(TREE_SCORES)}, not {score!r}")
    shares = split_budget(epsilon, [1] * depth)
    tree = Tree(depth=depth)
    if rows is None:
        rows = GrowingRows(index, target)
    for level in range(depth):
        first = 2**level - 1
        n_nodes = 2**level
        qualities = qualities_from_counts(index, rows.level_counts(level, n_classes), n_nodes, n_classes, score)
        mechanism = (ExponentialMechanism(shares[level], 1, monotone=True) if score == "counts"
                     else ExponentialMechanism(shares[level], GINI_SENSITIVITY))
        chosen = mechanism.release_parallel(accountant, f"{step} level {level + 1}",
                                            [qualities[:, k] for k in range(n_nodes)])
        for k in range(n_nodes):
            tree.splits[first + k] = index.splits[int(chosen[k])]
        if level + 1 < depth:
            rows.route(tree, level)
    return tree


class GrowingRows:
    """Where the rows of a tree grown level by level are (:func:`grow_exponential_tree`).

    Parameters
    ----------
    index : LiteralIndex
        The view the tree is grown on (with the rows).
    target : ndarray of int
        Class of each row, ``-1`` for none.

    A sharded run keeps one per shard (each on its rows) and sums their
    :meth:`level_counts`: counts of rows, exact over all shards.
    """

    def __init__(self, index: LiteralIndex, target: np.ndarray) -> None:
        self.index = index
        self.target = np.asarray(target, dtype=np.int64)
        self.position = np.zeros(index.n_rows, dtype=np.int64)  # heap position, -1 = dropped

    def level_counts(self, level: int, n_classes: int) -> np.ndarray:
        """:func:`~dprm.trees.criterion.node_class_counts` of the nodes of ``level``."""
        first = 2**level - 1
        local = np.where(self.position >= first, self.position - first, -1)
        return node_class_counts(self.index, local, self.target, 2**level, n_classes)

    def route(self, tree: Tree, level: int) -> None:
        """Move the rows at the nodes of ``level`` one step down ``tree``."""
        rows = np.flatnonzero(self.position >= 2**level - 1)
        self.position[rows] = _route_level(self.index, tree, rows, self.position[rows])


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


def leaf_classes(cell: np.ndarray, depth: int) -> np.ndarray:
    """Leaf number of each heap-position cell (-1 for a drop-out cell)."""
    first_leaf = 2**depth - 1
    cell = np.asarray(cell, dtype=np.int64)
    return np.where(cell >= first_leaf, cell - first_leaf, -1)


def cell_counts(tree: Tree, index: LiteralIndex, target: np.ndarray, n_classes: int) -> np.ndarray:
    """``counts[cell, class]`` of a complete tree, cells as heap positions (a leaf, or
    the node where a row dropped out); rows without a class are not counted."""
    space = _ChainSpace.of(index, index.codes.dtype)
    node_splits = np.array([index.splits.index(split) for split in tree.splits], dtype=np.int64)
    return _counts(space.cells(node_splits, tree.depth), np.asarray(target, dtype=np.int64),
                   2 ** (tree.depth + 1) - 1, n_classes)


#: Deepest trees of a chain: a row's cell is one byte (255 heap positions at depth 7).
MAX_CHAIN_DEPTH = 7

#: The in-process chain runs on row bitsets (:mod:`dprm.trees._bit_kernels`) when its views'
#: split bitsets (one bit per row and candidate split) take at most this many bytes, and on
#: the pre-order row layout of :func:`dprm.trees._kernels.run_chain` otherwise (e.g. fine
#: numeric grids on many rows). Both give the same chain; the bitsets measured faster at
#: 2,575 and at 115,200 rows (``docs/performance.md``, appendix, round "3, chains: row bitsets").
BIT_CHAIN_BYTES = 256 * 2**20


def _check_chain(depth: int, iterations: int, stop: str, variance_window: int, node_choice: str = "uniform"
                 ) -> None:
    if not 1 <= depth <= MAX_CHAIN_DEPTH:
        raise ParameterError(f"depth must be 1 to {MAX_CHAIN_DEPTH}, not {depth}")
    if iterations < 1:
        raise ParameterError(f"mcmc-iterations must be at least 1, not {iterations}")
    if stop not in MCMC_STOPS:
        raise ParameterError(f"mcmc-stop must be one of {', '.join(MCMC_STOPS)}, not {stop!r}")
    if node_choice not in NODE_CHOICES:
        raise ParameterError(f"mcmc-nodes must be one of {', '.join(NODE_CHOICES)}, not {node_choice!r}")
    if variance_window < 2:
        raise ParameterError(f"the variance window must be at least 2, not {variance_window}")


class _ChainSpace:
    """A view's candidate splits as arrays for the compiled chain (:func:`run_chain`).

    Use :meth:`of`, which builds it once per literal index and code type (a widened
    copy of the codes of a large view is tens of megabytes).
    """

    @classmethod
    def of(cls, index: LiteralIndex, codes_dtype: np.dtype) -> "_ChainSpace":
        cache = index.__dict__.setdefault("_chain_spaces", {})
        if codes_dtype not in cache:
            cache[codes_dtype] = cls(index, codes_dtype)
        return cache[codes_dtype]

    def __init__(self, index: LiteralIndex, codes_dtype: np.dtype) -> None:
        self.index = index
        self.codes = index.codes.astype(codes_dtype, copy=False)
        self.missing = int(index.missing_code) if codes_dtype == index.codes.dtype else int(np.iinfo(codes_dtype).max)
        if codes_dtype != index.codes.dtype:
            self.codes = np.where(index.codes == index.missing_code, self.missing, index.codes).astype(codes_dtype)
        self.splits = np.array([[s.attribute, s.code, s.kind is AttributeKind.NUMERIC] for s in index.splits],
                               dtype=np.int64).reshape(-1, 3)
        splits_of = _attribute_splits(index)
        self.usable = _usable_attributes(splits_of)
        self.starts = np.array([p[0] if p.size else 0 for p in splits_of], dtype=np.int64)
        self.sizes = np.array([p.size for p in splits_of], dtype=np.int64)
        for positions in splits_of:  # each attribute's splits are contiguous, in threshold order
            assert positions.size == 0 or np.array_equal(positions, np.arange(positions[0], positions[-1] + 1))

    def bitset_bytes(self) -> int:
        """Memory of :meth:`bitsets`, without building them."""
        return bitset_bytes(self.index.n_rows, len(self.splits) + self.codes.shape[0])

    def bitsets(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows each split holds on and each attribute misses (:func:`~dprm.trees._bit_kernels.split_bitsets`).

        Built on the first call and kept: every chain on this view shares them.
        """
        if "_bitsets" not in self.__dict__:
            self._bitsets = split_bitsets(self.codes, self.missing, self.splits, self.starts, self.sizes)
        return self._bitsets

    def random_nodes(self, depth: int, rng: np.random.Generator,
                     tables: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Split ids of a random complete tree (uniform attribute, then uniform split).

        ``tables``: the ``(starts, sizes)`` of each attribute's splits to draw from
        (an anchor's window, :meth:`~dprm.trees.chain_draws.Anchor.tables`); default the view's.
        """
        starts, sizes = (self.starts, self.sizes) if tables is None else tables
        attributes = self.usable[rng.integers(self.usable.size, size=2**depth - 1)]
        return starts[attributes] + (rng.random(attributes.size) * sizes[attributes]).astype(np.int64)

    def cells(self, node_splits: np.ndarray, depth: int) -> np.ndarray:
        table = self.splits[node_splits]
        return route_rows(self.codes, self.missing, table[:, 0].copy(), table[:, 1].copy(), table[:, 2] == 1,
                          np.arange(self.index.n_rows, dtype=np.int64), 0, 2**depth - 1)

    def tree(self, node_splits: np.ndarray, depth: int) -> Tree:
        return Tree(depth=depth, splits=[self.index.splits[int(s)] for s in node_splits])


def _counts(cells: np.ndarray, target: np.ndarray, n_positions: int, n_classes: int) -> np.ndarray:
    labelled = target >= 0
    keys = cells[labelled].astype(np.int64) * n_classes + target[labelled]
    flat = np.bincount(keys, minlength=n_positions * n_classes)
    return flat.reshape(n_positions, n_classes).astype(np.int64)


#: How long a chunk of a chain runs between two progress reports, or two looks at whether
#: its run was stopped (:meth:`ChainJob.run`): a compiled chunk cannot be interrupted.
CHUNK_SECONDS = 0.2
#: The steps of a chain's first chunk, before its speed is known.
FIRST_CHUNK_STEPS = 100


class ChainCancelled(Exception):
    """A chain stopped between two chunks because its run was interrupted (:meth:`ChainJob.run`)."""


class ChainJob:
    """A prepared Metropolis–Hastings chain: charged, started, ready to :meth:`run`.

    Preparing draws everything random in a fixed order (the random start and the
    proposals from ``rng``, the acceptance uniforms from the accountant's noise
    source, after the charge), so several jobs can then run on several cores (numba's
    chain releases the GIL: :func:`dprm.trees.compiled.chain_kernel`) with results
    that do not depend on the scheduling.
    """

    def __init__(self, spaces, target, n_classes, depth, chain, rng, iterations, score_kind, stop,
                 variance_threshold, variance_window, trace, node_choice: str = "uniform",
                 anchor: Anchor | None = None) -> None:
        self.iterations = int(iterations)
        self.window = np.zeros(max(variance_window if stop == "variance" else 0, 1))
        first, second = spaces
        self.paired = second is not None
        second = second if self.paired else first
        self.spaces, self.depth, self.chain, self.trace = (first, second), depth, chain, trace
        n_positions = 2 ** (depth + 1) - 1
        # classes in one byte (-1: none; at most 128 classes, the leaves of a depth-7
        # tree): a moved row's class is one random read of a quarter of the memory
        # (measured 4-7 % less CPU a step at 115,200 rows than four bytes)
        target_a = np.asarray(target, dtype=np.int8 if n_classes <= 128 else np.int32).copy()
        draws = draw_chain(first, second, depth, self.paired, iterations, rng, chain, node_choice, anchor)
        starts_b, sizes_b = draws.tables_b  # an anchor's window cuts the second tree's split tables
        nodes_a, nodes_b = draws.nodes_a, draws.nodes_b
        cell_a = first.cells(nodes_a, depth).astype(np.uint8)  # 255 positions at the largest depth, 7
        cell_b = second.cells(nodes_b, depth).astype(np.uint8)
        target_b = leaf_classes(cell_a, depth).astype(np.int8)  # a leaf of at most 128
        counts_a = _counts(cell_a, target_a, n_positions, n_classes)
        counts_b = _counts(cell_b, target_b, n_positions, 2**depth)
        settings = (
            self.paired, score_kind, float(first.index.n_rows), float((target_a >= 0).sum()), depth, chain.scale,
            *draws.proposals, LOCAL_SHARE,
            variance_window if stop == "variance" else 0, float(variance_threshold),
        )
        views = (first, second) if self.paired else (first,)
        self.bitsets = sum(view.bitset_bytes() for view in views) <= BIT_CHAIN_BYTES
        if self.bitsets:
            self.arguments = (
                first.splits, first.starts, first.sizes, first.usable, *first.bitsets(),
                second.splits, starts_b, sizes_b, second.usable, *second.bitsets(),
                nodes_a, cell_a, counts_a, target_a, nodes_b, cell_b, counts_b, target_b, *settings,
            )
        else:
            rank, _ = preorder(depth)
            self.arguments = (
                first.codes, first.missing, first.splits, first.starts, first.sizes, first.usable,
                second.codes, second.missing, second.splits, starts_b, sizes_b, second.usable,
                nodes_a, cell_a, *tree_layout(cell_a, rank), counts_a, target_a,
                nodes_b, cell_b, *tree_layout(cell_b, rank), counts_b, target_b, *settings,
            )
        self.nodes = (nodes_a, nodes_b)

    def run(self, advance: Callable[[int], None] | None = None,
            cancelled: threading.Event | None = None) -> list[Tree]:
        """Run the chain (in place) and return the final tree(s).

        With ``advance`` or ``cancelled``, the chain runs in chunks of about
        :data:`CHUNK_SECONDS` and at most a hundredth of the chain each (the first of
        :data:`FIRST_CHUNK_STEPS` steps, the next sized by the speed measured so far), and
        ``advance(steps)`` is called after each; the steps a variance stop leaves out are
        reported as done when it stops, so the calls add up to ``iterations``. The result
        is the same as in one call, whatever the chunks. When ``cancelled`` is set, the chain stops
        after its chunk under way and raises :class:`ChainCancelled`: a chain on a worker
        thread cannot be interrupted otherwise (Ctrl-C reaches the main thread only, and
        a compiled chunk holds no Python frame), so a stopped run waits a chunk, not a
        whole chain, and a main-thread chain sees Ctrl-C within a chunk too.
        """
        run_chain = chain_kernel(self.bitsets, self.spaces[0].index.n_rows)

        n = self.iterations
        chunked = advance is not None or cancelled is not None
        chunk = min(n, FIRST_CHUNK_STEPS) if chunked else n
        longest = max(FIRST_CHUNK_STEPS, -(-n // 100))   # about 100 progress reports at least
        steps = accepted = 0
        start = 0
        seconds = 0.0
        while start < n:
            if cancelled is not None and cancelled.is_set():
                raise ChainCancelled("the chain was stopped: its run was interrupted")
            stop = min(n, start + chunk)
            began = time.perf_counter()
            done, taken = run_chain(*self.arguments, start, stop, self.window)
            seconds += time.perf_counter() - began
            steps, accepted = steps + int(done), accepted + int(taken)
            chunk = max(1, min(longest, int(CHUNK_SECONDS * steps / max(seconds, 1e-9))))
            if done < stop - start:  # the variance stop ended the chain
                if advance is not None:
                    advance(n - start)
                break
            if advance is not None:
                advance(stop - start)
            start = stop
        self.chain.record(steps, accepted)
        if self.trace is not None:
            self.trace.steps += int(steps)
            self.trace.accepted += int(accepted)
        trees = [self.spaces[0].tree(self.nodes[0], self.depth)]
        if self.paired:
            trees.append(self.spaces[1].tree(self.nodes[1], self.depth))
        return trees


def _codes_dtype(*indexes: LiteralIndex) -> np.dtype:
    return np.dtype(np.uint16) if any(i.codes.dtype == np.uint16 for i in indexes) else np.dtype(np.uint8)


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
    node_choice: str = "uniform",
    progress: Callable[[int], None] | None = None,
    rows: "ChainRows | None" = None,
    score: str = "gini",
) -> Tree:
    """Algorithm 3 (createDTMCMC, Bai et al. 2017): a tree sampled by MCMC.

    Starts from a random complete tree and runs ``iterations`` Metropolis–Hastings
    node replacements with Bai's score ``G − τ`` (``score="gini"``, sensitivity 2) or
    the majority mass ``M`` (``score="counts"``, monotone, sensitivity 1; module
    docstring) and the whole ``epsilon``, charged once. ``stop="variance"`` also stops when the variance of
    the last ``variance_window`` scores falls below ``variance_threshold`` (the
    paper's data-dependent stop; the chain's guarantee, recorded in the ledger, then
    says ``data-dependent stop``). ``progress(steps)`` is told the steps done, in
    chunks (:meth:`ChainJob.run`). With ``rows`` (:class:`~dprm.trees.chain_shards.ChainRows`),
    the rows and ``target`` are held by a counting engine's shards and the chain runs
    there (:func:`~dprm.trees.chain_shards.run_lockstep`): the same tree for the same seed.
    """
    _check_chain(depth, iterations, stop, variance_window, node_choice)
    if score not in TREE_SCORES:
        raise ParameterError(f"tree-score must be one of {', '.join(TREE_SCORES)}, not {score!r}")
    space = _ChainSpace.of(index, _codes_dtype(index))
    return _charged_job((space, None), target, rows, n_classes, depth, _TREE_SCORE_MECHANISMS[score], epsilon,
                        accountant, step, rng, iterations, stop, variance_threshold, variance_window, trace,
                        node_choice).run(progress)[0]


def _charged_job(spaces: tuple["_ChainSpace", "_ChainSpace | None"], target: np.ndarray, rows: "ChainRows | None",
                 n_classes: int, depth: int, mechanism: tuple[int, int, float | None], epsilon: EpsilonLike,
                 accountant: Accountant, step: str, rng: np.random.Generator, iterations: int, stop: str,
                 variance_threshold: float, variance_window: int, trace: ChainTrace | None, node_choice: str,
                 anchor: Anchor | None = None) -> "ChainJob | ShardedChainJob":
    """Start (charge) the chain's Metropolis–Hastings mechanism, then prepare its job.

    ``mechanism`` is ``(compiled score kind, sensitivity, score range)`` of the chosen score
    (``_TREE_SCORE_MECHANISMS`` or ``_PAIR_SCORE_MECHANISMS``); with ``rows``, the
    sharded job (:func:`_sharded_job`), else a :class:`ChainJob` on ``target``.
    """
    kind, sensitivity, score_range = mechanism
    chain = MetropolisHastings(epsilon, sensitivity, score_range, data_dependent_stop=stop == "variance").start(
        accountant, step)
    if rows is not None:
        return _sharded_job(spaces, rows, n_classes, depth, chain, rng, iterations, kind, stop, variance_threshold,
                            variance_window, trace, node_choice, anchor)
    return ChainJob(spaces, target, n_classes, depth, chain, rng, iterations, kind, stop, variance_threshold,
                    variance_window, trace, node_choice, anchor)


def _sharded_job(spaces, rows, n_classes, depth, chain, rng, iterations, score_kind, stop, variance_threshold,
                 variance_window, trace, node_choice, anchor=None):
    from dprm.trees.chain_shards import ShardedChainJob  # numba: imported by the runs that use it only

    return ShardedChainJob(spaces, rows, n_classes, depth, chain, rng, iterations, score_kind, LOCAL_SHARE, trace,
                           variance_window if stop == "variance" else 0, variance_threshold, node_choice, anchor)


def prepare_tree_pair(
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
    node_choice: str = "uniform",
    rows: "ChainRows | None" = None,
    anchor: Anchor | None = None,
) -> "ChainJob | ShardedChainJob":
    """Charge and prepare the chain of :func:`sample_tree_pair`; ``.run()`` it later.

    With ``rows`` (:class:`~dprm.trees.chain_shards.ChainRows`: ``target`` held by a
    counting engine's shards), a :class:`~dprm.trees.chain_shards.ShardedChainJob`
    with the same draws: run several in lock-step with
    :func:`~dprm.trees.chain_shards.run_lockstep`. With ``anchor``
    (:class:`~dprm.trees.chain_draws.Anchor`), the second tree keeps the anchored
    splits (or their attribute): the chain over the restricted pairs, same ε and score.
    """
    _check_chain(depth, iterations, stop, variance_window, node_choice)
    if pair_score not in PAIR_SCORES:
        raise ParameterError(f"pair-score must be one of {', '.join(PAIR_SCORES)}, not {pair_score!r}")
    dtype = _codes_dtype(first_index, second_index)
    spaces = (_ChainSpace.of(first_index, dtype), _ChainSpace.of(second_index, dtype))
    return _charged_job(spaces, target, rows, n_classes, depth, _PAIR_SCORE_MECHANISMS[pair_score], epsilon,
                        accountant, step, rng, iterations, stop, variance_threshold, variance_window, trace,
                        node_choice, anchor)


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
    progress: Callable[[int], None] | None = None,
    **options,
) -> tuple[Tree, Tree]:
    """Algorithm 5 (sampleTreePair): MCMC over pairs of trees with matching leaves.

    The first tree (on ``first_index``, the view without the initial attribute)
    predicts ``target``; the second predicts the leaves of the first. Each step
    replaces a uniformly chosen internal node of either tree; a change in the first
    tree re-targets the rows it moves in the second (``updateStats``). The chain
    uses the whole ``epsilon`` (charged once) with the pair score:
    ``pair_score="counts"`` (default: majority masses in rows, bounded range 3),
    ``"gini"`` (Gini masses in rows, sensitivity 1) or ``"paper"`` (equation (6),
    normalised, sensitivity 1); module docstring. Other options (``iterations``, ``stop``,
    ``variance_threshold``, ``variance_window``, ``trace``) as for
    :func:`prepare_tree_pair`; ``progress(steps)`` is told the steps done, in chunks
    (:meth:`ChainJob.run`).

    Returns ``(first tree, second tree)``.
    """
    first, second = prepare_tree_pair(first_index, second_index, target, n_classes, depth, epsilon, accountant,
                                      step, rng, **options).run(progress)
    return first, second
