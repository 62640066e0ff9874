"""Two-view data: loading, types and public domains, validation, the literal index."""

from dprm.data.attributes import VIEW_NAMES, Attribute, AttributeKind, Domain, TwoViewData, View
from dprm.data.literal_index import LiteralIndex, Split
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
