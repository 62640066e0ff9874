"""Stateful workers on every shard's rows: counts that need state kept beside the rows.

Some counting requests need state that lives with the rows between requests: an
MCMC chain's cell of every row, a tree's node of every row while it grows level by
level, the class of every row of an initial target. A miner then asks the engine to
build one **worker** on each shard's rows (:meth:`CountingEngine.workers
<dprm.engine.base.CountingEngine.workers>` with a factory, a class or function the
shard can import, called as ``factory(rows)`` with the shard's
:class:`~dprm.data.attributes.TwoViewData`), and calls the workers' methods: every
call goes to every shard at once and returns the answers of all shards
(:meth:`ShardWorkers.call`) or their sum (:meth:`ShardWorkers.sum`, for answers that
are counts of rows: the count over all rows, exactly). What a worker does is the
miner's business (the engine imports neither trees nor miners); the engine only
carries the calls and the answers, so the same rule holds as for every request:
only counts cross the network, never a row.

Examples
--------
>>> from dprm.data import load_two_view
>>> from dprm.datasets import make_planted
>>> from dprm.engine import InProcessEngine
>>> planted = make_planted(300, n_planted=1, random_state=0)
>>> engine = InProcessEngine(load_two_view(planted.left, planted.right, types=planted.types))
>>> workers = engine.workers(RowCount)
>>> workers.n_shards, int(workers.sum("rows"))
(1, 300)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from dprm.data.attributes import TwoViewData

__all__ = ["ShardWorkers", "LocalWorkers", "add_answers", "RowCount"]


def add_answers(answers: list) -> Any:
    """The sum of the shards' answers, element by element (arrays, numbers, and lists or tuples of them).

    Examples
    --------
    >>> add_answers([(np.array([1, 2]), [3]), (np.array([10, 20]), [30])])
    (array([11, 22]), [33])
    """
    first = answers[0]
    if isinstance(first, (list, tuple)):
        summed = [add_answers([answer[k] for answer in answers]) for k in range(len(first))]
        return tuple(summed) if isinstance(first, tuple) else summed
    if isinstance(first, np.ndarray):
        total = first.copy()
        for answer in answers[1:]:
            total += answer
        return total
    return sum(answers[1:], start=first)


class ShardWorkers(ABC):
    """One worker per shard, built by the same factory on each shard's rows.

    Attributes
    ----------
    n_shards : int
        Number of workers (1 in-process).
    """

    n_shards: int

    @abstractmethod
    def call(self, method: str, *args: Any) -> list:
        """``worker.method(*args)`` on every shard at once; the answers in shard order."""

    def sum(self, method: str, *args: Any) -> Any:
        """:meth:`call`, its answers summed (:func:`add_answers`): for answers that are counts of rows."""
        return add_answers(self.call(method, *args))

    def close(self) -> None:
        """Drop the workers (their state is freed)."""


class LocalWorkers(ShardWorkers):
    """The one worker of rows held in this process (no copy of the rows, no pickling)."""

    def __init__(self, factory: Callable[[TwoViewData], Any], data: TwoViewData) -> None:
        self.n_shards = 1
        self._worker: Any = factory(data)

    def call(self, method: str, *args: Any) -> list:
        return [getattr(self._worker, method)(*args)]

    def close(self) -> None:
        self._worker = None


class RowCount:
    """The smallest worker: the number of rows of its shard (for tests and examples)."""

    def __init__(self, data: TwoViewData) -> None:
        self._rows = data.n_rows

    def rows(self) -> int:
        return self._rows
