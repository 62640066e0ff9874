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

__all__ = ["CHUNK_STEPS", "ChainDraws", "draw_chain"]

#: Fewest steps a chain runs between two progress reports (:meth:`~dprm.trees.private.ChainJob.run`).
CHUNK_STEPS = 1000


@dataclass
class ChainDraws:
    """Everything random of a chain, drawn before it runs (:func:`draw_chain`)."""

    nodes_a: np.ndarray
    nodes_b: np.ndarray
    #: ``(choice, local_u, attribute_u, split_u, log_u)`` of every step (:func:`~dprm.trees._kernels.propose`)
    proposals: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def draw_chain(first: object, second: object, depth: int, paired: bool, iterations: int,
               rng: np.random.Generator, chain) -> ChainDraws:
    """The random start and the proposals from ``rng``, then the acceptance uniforms from ``chain``.

    In this order, for every chain however its rows are held (in this process or in
    shards), so that the same seed gives the same chain. ``second`` is ``first`` for
    a single tree (its second start is drawn all the same).
    """
    nodes_a = first.random_nodes(depth, rng)
    nodes_b = second.random_nodes(depth, rng)
    n_choices = (2 if paired else 1) * (2**depth - 1)
    return ChainDraws(nodes_a, nodes_b, (rng.integers(n_choices, size=iterations), rng.random(iterations),
                                         rng.random(iterations), rng.random(iterations),
                                         chain.log_uniforms(iterations)))
