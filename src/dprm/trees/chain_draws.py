"""Everything random of an MCMC tree chain, drawn before it runs.

A chain's random start and proposals come from the run's ``rng`` and its acceptance
uniforms from the accountant's noise source, all before the chain runs and in one
order (:func:`draw_chain`), whether its rows are in this process
(:class:`~dprm.trees.private.ChainJob`) or in shards
(:class:`~dprm.trees.chain_shards.ShardedChainJob`): the same seed gives the same
chain wherever the rows are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ANCHOR_MOVES", "CHUNK_STEPS", "NODE_CHOICES", "Anchor", "ChainDraws", "draw_chain", "node_choices"]

#: Fewest steps a sharded chain runs between two progress reports (:func:`~dprm.trees.chain_shards.run_lockstep`).
CHUNK_STEPS = 1000

#: How a step picks the node it replaces (:mod:`dprm.trees.private`'s docstring).
NODE_CHOICES = ("uniform", "by-depth")

#: How an anchored node of a pair's second tree moves (:class:`Anchor`).
ANCHOR_MOVES = ("held", "local")


@dataclass(frozen=True)
class Anchor:
    """Nodes of a tree pair's second tree kept at released splits: a restriction of the chain's states.

    ``nodes`` are heap positions of the second tree (``b``), ``splits`` their split ids
    (rows of the view's split table). ``move="held"``: the chain never proposes those
    nodes (it moves every other node of both trees); ``move="local"``: it proposes them
    by local moves only (the neighbouring threshold of the same numeric attribute, a
    uniform split of the same categorical one: symmetric), so each keeps its attribute;
    with ``window`` the anchored attribute's splits in the second tree are cut to those
    at most ``window`` grid points from the anchored ones (at every node of ``b``:
    :meth:`tables`). The states, proposals and acceptance rule are those of the chain on
    a smaller state space fixed before it runs (from released choices only), so the
    chain is the exponential mechanism over that space: the same ε, sensitivity and
    guarantee (:mod:`dprm.trees.private`).

    Examples
    --------
    >>> Anchor(nodes=(0,), splits=(7,)).move
    'held'
    """

    nodes: tuple[int, ...]
    splits: tuple[int, ...]
    move: str = "held"
    window: int | None = None

    def tables(self, space) -> tuple[np.ndarray, np.ndarray]:
        """The second tree's ``(starts, sizes)`` of each attribute's splits: ``space``'s, with the window."""
        starts, sizes = space.starts.copy(), space.sizes.copy()
        split = space.splits[self.splits[0]]
        if self.move == "local" and self.window is not None and split[2] == 1:
            attribute = split[0]
            low = max(int(starts[attribute]), min(self.splits) - self.window)
            high = min(int(starts[attribute] + sizes[attribute]), max(self.splits) + self.window + 1)
            starts[attribute], sizes[attribute] = low, high - low
        return starts, sizes

    def start(self, space, depth: int, rng: np.random.Generator,
              tables: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """A random start of the second tree in the restricted space (``space.random_nodes``' draws from
        ``tables``, :meth:`tables`' result)."""
        nodes = space.random_nodes(depth, rng, tables)
        nodes[list(self.nodes)] = self.splits
        return nodes


@dataclass
class ChainDraws:
    """Everything random of a chain, drawn before it runs (:func:`draw_chain`)."""

    nodes_a: np.ndarray
    nodes_b: np.ndarray
    #: ``(choice, local_u, attribute_u, split_u, log_u)`` of every step (:func:`~dprm.trees._kernels.propose`)
    proposals: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    #: The second tree's ``(starts, sizes)`` split tables the chain proposes from: the view's,
    #: or an anchor's window (:meth:`Anchor.tables`)
    tables_b: tuple[np.ndarray, np.ndarray]


def node_choices(node_choice: str, depth: int, n_trees: int, iterations: int, rng: np.random.Generator,
                 held: tuple[int, ...] = ()) -> np.ndarray:
    """Each step's node, ``tree · (2^depth − 1) + heap position`` (:mod:`dprm.trees.private`).

    ``"uniform"`` draws exactly as the chain always has (same seeds, same chain);
    ``"by-depth"`` gives a node at level ``l`` a weight ``2^l``, both trees alike.
    The node ids in ``held`` (an :class:`Anchor`'s) are never drawn; the others keep
    their relative weights.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> counts = np.bincount(node_choices("by-depth", 2, 1, 70_000, rng), minlength=3)
    >>> (counts / 70_000).round(2).tolist()     # root 1/5, each child 2/5
    [0.2, 0.4, 0.4]
    """
    n_internal = 2**depth - 1
    if node_choice == "uniform" and not held:
        return rng.integers(n_trees * n_internal, size=iterations)
    if node_choice == "uniform":
        free = np.setdiff1d(np.arange(n_trees * n_internal), held)
        return free[rng.integers(free.size, size=iterations)]
    levels = np.floor(np.log2(np.arange(n_internal) + 1))
    weights = np.tile(2.0**levels, n_trees)
    weights[list(held)] = 0.0
    return rng.choice(weights.size, size=iterations, p=weights / weights.sum())


def draw_chain(first: object, second: object, depth: int, paired: bool, iterations: int,
               rng: np.random.Generator, chain, node_choice: str = "uniform", anchor: Anchor | None = None
               ) -> ChainDraws:
    """The random start and the proposals from ``rng``, then the acceptance uniforms from ``chain``.

    In this order, for every chain however its rows are held (in this process or in
    shards), so that the same seed gives the same chain. ``second`` is ``first`` for
    a single tree (its second start is drawn all the same). With ``anchor`` (a pair
    only), the second tree starts with the anchored splits and, in the restricted
    space, its other nodes at random (:meth:`Anchor.start`); held nodes are never
    drawn, local ones always move locally (their ``local_u`` is 0).
    """
    nodes_a = first.random_nodes(depth, rng)
    if anchor is None:
        nodes_b = second.random_nodes(depth, rng)
        return ChainDraws(nodes_a, nodes_b, (node_choices(node_choice, depth, 2 if paired else 1, iterations, rng),
                                             rng.random(iterations), rng.random(iterations), rng.random(iterations),
                                             chain.log_uniforms(iterations)), (second.starts, second.sizes))
    if not paired:
        raise ValueError("only the second tree of a pair can be anchored")
    tables_b = anchor.tables(second)
    nodes_b = anchor.start(second, depth, rng, tables_b)
    anchored = tuple(2**depth - 1 + node for node in anchor.nodes)
    choice = node_choices(node_choice, depth, 2, iterations, rng, anchored if anchor.move == "held" else ())
    local_u = rng.random(iterations)
    if anchor.move == "local":
        local_u[np.isin(choice, anchored)] = 0.0
    return ChainDraws(nodes_a, nodes_b, (choice, local_u, rng.random(iterations), rng.random(iterations),
                                         chain.log_uniforms(iterations)), tables_b)
