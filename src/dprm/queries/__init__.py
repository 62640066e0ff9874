"""Queries over one view, redescriptions, their statistics and their file forms.

* query trees: :class:`BooleanLiteral`, :class:`CategoricalLiteral`,
  :class:`NumericLiteral`, :class:`Not`, :class:`And`, :class:`Or` (all
  :class:`Query`; ``&``, ``|``, ``~`` build operators);
* JSON form (spec/redescriptions.md): :func:`query_to_json`, :func:`query_from_json`;
* normal form (equivalent simple forms coincide): :func:`normalize`,
  :func:`canonical_key`, :func:`complete_attributes`; provable containment and
  disjointness of supports: :func:`implies`, :func:`disjoint`;
* text: :func:`to_text`; python-clired / Siren syntax: :func:`to_clired`,
  :func:`write_clired_queries`;
* statistics: :class:`RedescriptionStats`, :func:`p_value`;
* :class:`Redescription` and the document: :func:`make_document`,
  :func:`write_document`, :func:`read_document`.
"""

from dprm.queries.base import Query
from dprm.queries.clired import CLIRED_HEADER, to_clired, write_clired_queries
from dprm.queries.document import (
    FORMAT,
    GUARANTEES,
    document_redescriptions,
    explain_guarantee,
    make_document,
    read_document,
    run_budget,
    write_document,
)
from dprm.queries.json_form import query_from_json, query_to_json
from dprm.queries.literals import COMPARISONS, BooleanLiteral, CategoricalLiteral, Literal, NumericLiteral
from dprm.queries.normal_form import canonical_key, complete_attributes, normalize
from dprm.queries.implication import disjoint, implies
from dprm.queries.operators import And, Not, Or
from dprm.queries.redescription import REDESCRIPTION_KEYS, Redescription
from dprm.queries.statistics import STATS_KEYS, RedescriptionStats, excess_jaccard, independence_jaccard, p_value
from dprm.queries.text import format_number, to_text

__all__ = [
    "Query",
    "Literal",
    "BooleanLiteral",
    "CategoricalLiteral",
    "NumericLiteral",
    "COMPARISONS",
    "Not",
    "And",
    "Or",
    "query_to_json",
    "normalize",
    "canonical_key",
    "complete_attributes",
    "implies",
    "disjoint",
    "query_from_json",
    "to_text",
    "format_number",
    "to_clired",
    "write_clired_queries",
    "CLIRED_HEADER",
    "RedescriptionStats",
    "p_value",
    "explain_guarantee",
    "independence_jaccard",
    "excess_jaccard",
    "STATS_KEYS",
    "Redescription",
    "REDESCRIPTION_KEYS",
    "FORMAT",
    "GUARANTEES",
    "make_document",
    "write_document",
    "read_document",
    "document_redescriptions",
    "run_budget",
]
