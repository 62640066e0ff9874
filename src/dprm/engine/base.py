"""The counting engine boundary: what a miner may ask of the rows.

A miner never reads rows. It asks an engine for **counts** (supports, intersections,
group histograms of literals) and adds noise to them itself, on the driver, after
the engine has summed them; so the privacy accounting does not depend on where the
rows live. Two engines answer the same requests with the same numbers:

* :class:`~dprm.engine.in_process.InProcessEngine` (the default): the rows of a
  :class:`~dprm.data.attributes.TwoViewData` in this process;
* :class:`~dprm.engine.ray_engine.RayEngine`: the rows split into shards, each held
  by a Ray actor that read its own part of the files; every request goes to every
  shard and the driver sums the partial counts.

Requests are grouped by the literal tables they count over, a *grid*: the literal
mode (``"private"`` or ``"data"``) and the number of thresholds per numeric
attribute (:meth:`CountingEngine.counts`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.engine.literal_table import LiteralTable
from dprm.engine.supports import Support
from dprm.engine.workers import ShardWorkers

__all__ = ["CountingEngine", "GridCounts"]


class GridCounts(ABC):
    """Counts over the left and right literal tables of one grid (see :class:`TableCounter`).

    Every method returns exact counts of rows, summed over all the rows the engine holds.
    """

    @abstractmethod
    def literal_sizes(self, side: int) -> np.ndarray:
        """``|supp(literal)|`` of every literal of ``side``."""

    @abstractmethod
    def cells(self, left: Support, right: Support) -> np.ndarray:
        """``[[L∩R, L∖R], [R∖L, neither]]``."""

    @abstractmethod
    def extension_counts(self, left: Support, right: Support, sides: Sequence[int]) -> list[np.ndarray]:
        """Per side: rows of each literal in the groups ``2·mine + other`` (``(n_literals, 4)``)."""

    @abstractmethod
    def pair_intersections(self, side: int, requests: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """Intersections of initial-view literals with a chunk of the other view's literals."""

    def cells_and_extensions(self, left: Support, right: Support,
                             sides: Sequence[int]) -> tuple[np.ndarray, list[np.ndarray]]:
        """:meth:`cells` and :meth:`extension_counts` of the same supports (a sharded engine: one round trip)."""
        return self.cells(left, right), (self.extension_counts(left, right, sides) if sides else [])


class CountingEngine(ABC):
    """Where the rows live: the schema, the number of rows and the counts of every grid.

    Attributes
    ----------
    schema : TwoViewData
        The two views' attributes with their kinds and domains; it holds the rows only
        in the in-process engine (a sharded engine's schema has no rows).
    """

    schema: TwoViewData

    @property
    @abstractmethod
    def n_rows(self) -> int:
        """The exact number of rows (private: release it only through a mechanism)."""

    @abstractmethod
    def literal_tables(self, mode: str, max_splits: int) -> tuple[LiteralTable, LiteralTable]:
        """The left and right literal tables of a grid, as the driver sees them."""

    @abstractmethod
    def counts(self, mode: str, max_splits: int) -> GridCounts:
        """The counting requests over the grid's tables."""

    @abstractmethod
    def workers(self, factory: Callable[[TwoViewData], Any]) -> ShardWorkers:
        """``factory(rows)`` built on every shard's rows, for requests that keep state (:mod:`dprm.engine.workers`)."""

    @abstractmethod
    def use_transforms(self, transforms: Mapping[tuple[int, str], str]) -> None:
        """Cut the attributes ``(side, name)`` on the grids ``transforms`` from now on (every shard).

        The grids a private run chose (:mod:`dprm.mining.private_grids`); the
        schema's domains carry them, and the literal tables of ``mode="private"``
        built after this call use them.
        """

    def data_thresholds(self, max_splits: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per view, every attribute's thresholds of :class:`~dprm.data.LiteralIndex` ``mode="data"`` over all rows.

        For the non-private miners (thresholds at data values). By default merged
        exactly from every shard's value summaries and counts
        (:class:`~dprm.engine.value_statistics.ValueStatistics`); the in-process
        engine computes them directly.
        """
        from dprm.engine.value_statistics import ValueAnswers, ValueStatistics

        workers = self.workers(ValueAnswers)
        try:
            return ValueStatistics(workers).data_thresholds(int(max_splits))
        finally:
            workers.close()

    def close(self) -> None:
        """Release what the engine holds (a sharded engine stops its actors)."""

    def __enter__(self) -> "CountingEngine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
