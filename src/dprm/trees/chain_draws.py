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

__all__ = ["CHUNK_STEPS", "NODE_CHOICES", "ChainDraws", "draw_chain", "node_choices"]

#: Fewest steps a chain runs between two progress reports (:meth:`~dprm.trees.private.ChainJob.run`).
CHUNK_STEPS = 1000

#: How a step picks the node it replaces (:mod:`dprm.trees.private`'s docstring).
NODE_CHOICES = ("uniform", "by-depth")


@dataclass
class ChainDraws:
    """Everything random of a chain, drawn before it runs (:func:`draw_chain`)."""

    nodes_a: np.ndarray
    nodes_b: np.ndarray
    #: ``(choice, local_u, attribute_u, split_u, log_u)`` of every step (:func:`~dprm.trees._kernels.propose`)
    proposals: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def node_choices(node_choice: str, depth: int, n_trees: int, iterations: int, rng: np.random.Generator
                 ) -> np.ndarray:
    """Each step's node, ``tree · (2^depth − 1) + heap position`` (:mod:`dprm.trees.private`).

    ``"uniform"`` draws exactly as the chain always has (same seeds, same chain);
    ``"by-depth"`` gives a node at level ``l`` a weight ``2^l``, both trees alike.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> counts = np.bincount(node_choices("by-depth", 2, 1, 70_000, rng), minlength=3)
    >>> (counts / 70_000).round(2).tolist()     # root 1/5, each child 2/5
    [0.2, 0.4, 0.4]
    """
    n_internal = 2**depth - 1
    if node_choice == "uniform":
        return rng.integers(n_trees * n_internal, size=iterations)
    levels = np.floor(np.log2(np.arange(n_internal) + 1))
    weights = np.tile(2.0**levels, n_trees)
    return rng.choice(weights.size, size=iterations, p=weights / weights.sum())


def draw_chain(first: object, second: object, depth: int, paired: bool, iterations: int,
               rng: np.random.Generator, chain, node_choice: str = "uniform") -> ChainDraws:
    """The random start and the proposals from ``rng``, then the acceptance uniforms from ``chain``.

    In this order, for every chain however its rows are held (in this process or in
    shards), so that the same seed gives the same chain. ``second`` is ``first`` for
    a single tree (its second start is drawn all the same).
    """
    nodes_a = first.random_nodes(depth, rng)
    nodes_b = second.random_nodes(depth, rng)
    return ChainDraws(nodes_a, nodes_b, (node_choices(node_choice, depth, 2 if paired else 1, iterations, rng),
                                         rng.random(iterations), rng.random(iterations), rng.random(iterations),
                                         chain.log_uniforms(iterations)))
