"""The greedy miners' candidate literals: :class:`~dprm.engine.literal_table.LiteralTable`.

The table lives in :mod:`dprm.engine` (every engine, in-process or sharded, counts
through it); this module keeps the name the greedy miners have always imported.
"""

from dprm.engine.literal_table import LiteralTable

__all__ = ["LiteralTable"]
