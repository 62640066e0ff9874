"""The in-process engine: the rows of one :class:`~dprm.data.attributes.TwoViewData`, here.

The default engine. Its tables are built on all the rows, once per grid, and its
counts are those of :class:`~dprm.engine.table_counter.TableCounter` on them.

Examples
--------
>>> from dprm.data import load_two_view
>>> from dprm.datasets import make_planted
>>> planted = make_planted(200, n_planted=1, random_state=0)
>>> engine = InProcessEngine(load_two_view(planted.left, planted.right, types=planted.types))
>>> engine.n_rows
200
>>> sizes = engine.counts("private", 4).literal_sizes(0)
>>> bool((sizes >= 0).all() and (sizes <= 200).all())
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dprm.data.attributes import AttributeKind, TwoViewData
from dprm.data.literal_index import data_thresholds
from dprm.engine.base import CountingEngine
from dprm.engine.literal_table import LiteralTable
from dprm.engine.table_counter import TableCounter
from dprm.engine.workers import LocalWorkers
from dprm.errors import ParameterError

__all__ = ["InProcessEngine", "as_engine", "check_data"]


class InProcessEngine(CountingEngine):
    """Counts on the rows of ``data``, in this process.

    Parameters
    ----------
    data : TwoViewData
    """

    def __init__(self, data: TwoViewData) -> None:
        self.schema = data
        self._counters: dict[tuple[str, int], TableCounter] = {}

    @property
    def n_rows(self) -> int:
        return self.schema.n_rows

    def literal_tables(self, mode: str, max_splits: int) -> tuple[LiteralTable, LiteralTable]:
        return self.counts(mode, max_splits).tables

    def counts(self, mode: str, max_splits: int) -> TableCounter:
        """The counter of a grid; only the last grid used is kept (a miner moves to a new grid, never back)."""
        key = (mode, int(max_splits))
        if key not in self._counters:
            self._counters.clear()  # free the previous grid's tables before building the new ones
            self._counters[key] = TableCounter(
                tuple(LiteralTable(view, mode=mode, max_splits=int(max_splits)) for view in self.schema.views))
        return self._counters[key]

    def use_transforms(self, transforms: Mapping[tuple[int, str], str]) -> None:
        self.schema = self.schema.with_transforms(transforms)
        self._counters.clear()

    def data_thresholds(self, max_splits: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Every attribute's ``mode="data"`` thresholds, computed on all the rows here."""
        out = [[data_thresholds(a.values, int(max_splits)) if a.kind is AttributeKind.NUMERIC else np.empty(0)
                for a in view.attributes] for view in self.schema.views]
        return out[0], out[1]

    def workers(self, factory: Callable[[TwoViewData], Any]) -> LocalWorkers:
        """One worker on all the rows, called directly."""
        return LocalWorkers(factory, self.schema)


def check_data(data: object) -> None:
    """A :class:`~dprm.errors.ParameterError` unless ``data`` is two-view data or a counting engine.

    Examples
    --------
    >>> check_data("left.csv")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: data must be a TwoViewData (dprm.data.load_two_view) or a counting engine \
(dprm.engine), not str
    """
    if not isinstance(data, (TwoViewData, CountingEngine)):
        raise ParameterError("data must be a TwoViewData (dprm.data.load_two_view) or a counting engine "
                             f"(dprm.engine), not {type(data).__name__}")


def as_engine(data: "TwoViewData | CountingEngine") -> CountingEngine:
    """``data`` itself if it is an engine, else the in-process engine over it (checked: :func:`check_data`)."""
    check_data(data)
    return data if isinstance(data, CountingEngine) else InProcessEngine(data)
