"""Counting engines: where the rows live and are counted (DESIGN.md, layer ``engines``).

Miners ask an engine for counts, never for rows, so noise is added once, on the
driver, after the engine has summed its counts, and the privacy accounting is the
same whatever the engine:

* :class:`InProcessEngine` (the default): the rows of a
  :class:`~dprm.data.attributes.TwoViewData` in this process;
* :class:`~dprm.engine.ray_engine.RayEngine` (extra ``ray``): the rows split into
  shards held by Ray actors, each reading its own part of the files.

Layering: the engine depends on ``data`` and ``queries`` (literal tables name their
literals as queries) and never on ``privacy``, ``trees`` or ``mining``; the miners
depend on it.

Modules: :mod:`.base` (the interface), :mod:`.supports` (supports as literal steps),
:mod:`.literal_table` (the candidate literals and their vectorised counts),
:mod:`.table_counter` (counts over rows held here), :mod:`.in_process`,
:mod:`.sharding` (reading a shard's part, merging the shards' schemas),
:mod:`.workers` (stateful workers a miner builds on every shard's rows, for counts
that need state kept beside the rows: the tree miners' chains),
:mod:`.value_statistics` (the non-private miners' data-value thresholds and order
statistics, merged exactly from the shards) and :mod:`.ray_engine`.
"""

from dprm.engine.base import CountingEngine, GridCounts
from dprm.engine.in_process import InProcessEngine, as_engine, check_data
from dprm.engine.supports import Support

__all__ = ["CountingEngine", "GridCounts", "InProcessEngine", "Support", "as_engine", "check_data"]
