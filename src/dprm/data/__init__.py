"""Two-view data: loading, types and public domains, validation, the literal index.

The loaders (:func:`load_two_view`, :func:`read_view`, from :mod:`dprm.data.loading`)
and the types file's reader (:mod:`dprm.data.types_file`, which imports ``tomllib``)
are imported on first use: the loaders import ``pyarrow.compute`` (about 0.07 s), which a
module that needs only a helper of this package (``dprm itemsets`` reads its file
without it) does not pay. ``import dprm.data.loading`` loads them at once (a process
that forks workers).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dprm.data.attributes import VIEW_NAMES, Attribute, AttributeKind, Domain, TwoViewData, View
from dprm.data.literal_index import LiteralIndex, Split

if TYPE_CHECKING:
    from dprm.data.loading import load_two_view, read_view
    from dprm.data.types_file import TypesSpec, read_types_file

__all__ = [
    "VIEW_NAMES",
    "Attribute",
    "AttributeKind",
    "Domain",
    "LiteralIndex",
    "Split",
    "TwoViewData",
    "TypesSpec",
    "View",
    "load_two_view",
    "read_types_file",
    "read_view",
]

#: The names imported on first use, and their modules.
_LAZY = {"load_two_view": "dprm.data.loading", "read_view": "dprm.data.loading",
         "TypesSpec": "dprm.data.types_file", "read_types_file": "dprm.data.types_file"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
