"""Export of queries in the query syntax of python-clired / Siren (version 6.0.9).

Syntax (clired's grammar ``redquery_parser.py`` and ``classQuery.py``)
---------------------------------------------------------------------
* Boolean literal ``[A]``; its negation ``![A]`` (``¬[A]``).
* Categorical literal ``[A = red]``; negation ``![A = red]``.
* Numeric literal ``[1.5 < A < 3]``, ``[A < 3]``, ``[1.5 < A]``: a **closed**
  interval ``lowb ≤ A ≤ upb``; clired reads ``<`` and ``≤`` alike, it has no strict
  comparison. A strict bound is written exactly, as the neighbouring float
  (``A > 1.5`` is ``[1.5000000000000002 < A]``: the same rows for float64 data).
* Operators ``&`` / ``|`` (``∧`` / ``∨``). A conjunction's operands are literals or
  parenthesised disjunctions and vice versa; a negation applies to a literal or to
  a parenthesised group (``!( ... )``), not inside a group of the same operator, so
  such negations are pushed inwards by De Morgan's laws.
* Attributes are referred to by **name** (looked up in the names of the data's
  columns of that side, so the data must be loaded with the same column names) or
  by **column index** ``v<i>`` (0-based, in the side's column order as clired loads
  the data: the CSV columns without the id column). ``v<i>`` wins over a name, so a
  column named like ``v3`` can only be referred to by index: give ``columns``.
  Names (and categories) must be clired tokens: no ``< > = ! [ ] ( ) { } & | ,`` (nor
  ``∧ ∨ ≤ ≥ ∈ ∉ ≠ ¬``), tabs or newlines, not starting with a digit, ``?``, ``@`` or a
  space, not ending with a space. A category may also be a plain number (``1``,
  ``2.5``). Anything else is a :class:`~dprm.errors.DprmError` (use ``columns``).
* clired has no quoting nor escaping. For dprm's own reader
  (:func:`dprm.queries.clired_parser.parse_clired_query`, e.g. the server's statistics
  form) a category clired cannot hold is written by its index among its attribute's
  declared categories, ``[colour = #2]``, when ``domains`` are given
  (:func:`query_category`); clired itself would read
  ``#2`` as the category of that text, so a file for clired is written without them.

Semantics differ on missing values: clired evaluates queries in three-valued logic
(a negated literal is false on a missing value), whereas dprm's ``Not`` is the plain
complement. On data without missing values both agree; ``Not(BooleanLiteral(A,
False))`` is written ``[A]``.

The queries file (:func:`write_clired_queries`) is clired's tab-separated
redescription list: a header ``rid  query_LHS  query_RHS  acc  pval  card_Exo
card_Eox  card_Exx`` and one line per redescription (``-`` for an unknown value;
the cardinalities are the noisy counts rounded to integers).
"""

from __future__ import annotations

import math
import os
import re
from typing import Mapping, Sequence

import numpy as np

from dprm.errors import DprmError
from dprm.files import write_atomic
from dprm.queries.base import Query
from dprm.queries.literals import BooleanLiteral, CategoricalLiteral, Literal, NumericLiteral
from dprm.queries.operators import And, Not, Or
from dprm.queries.redescription import Redescription
from dprm.queries.text import format_number

__all__ = ["to_clired", "write_clired_queries", "clired_problem", "query_category", "CATEGORY_INDEX", "CLIRED_HEADER"]

#: The header fields of the queries file.
CLIRED_HEADER: tuple[str, ...] = ("rid", "query_LHS", "query_RHS", "acc", "pval", "card_Exo", "card_Eox", "card_Exx")

# clired's STRING and category tokens (redquery_parser.py), anchored.
_SPECIAL = r"<>=!\[\]\(\)\{\}&|,\n\t\u2227\u2228\u2264\u2265\u2208\u2209\u2260\u00ac"
_STRING = re.compile(rf"[^{_SPECIAL}? \d][^{_SPECIAL}]*(?<! )\Z")
_NAME = re.compile(rf"[^{_SPECIAL}?@ \d][^{_SPECIAL}]*(?<! )\Z")  # '@' would start a time value
_NUMBER_CATEGORY = re.compile(r"\d+\.?\d*\Z")
_INDEX_NAME = re.compile(r"v\d+\Z")
#: dprm's reader's symbols: clired's, and ``?`` and ``@`` anywhere (clired_parser's words stop there).
_QUERY_SPECIAL = re.compile(rf"[{_SPECIAL}?@]")
#: A category written by its index among its attribute's declared categories (dprm's reader only).
CATEGORY_INDEX = re.compile(r"#(\d+)\Z", re.ASCII)

_SYMBOLS = {
    True: {"not": "!", "and": " & ", "or": " | ", "le": "<"},
    False: {"not": "¬", "and": " ∧ ", "or": " ∨ ", "le": "≤"},
}


def _name(attr: str, columns: Sequence[str] | None) -> str:
    if columns is not None:
        try:
            return f"v{list(columns).index(attr)}"
        except ValueError:
            raise DprmError(f"clired export: attribute {attr!r} is not among the given columns") from None
    if not _writable_name(attr):
        raise DprmError(
            f"clired export: attribute name {attr!r} cannot be written in clired syntax; "
            "pass columns= to refer to attributes by index"
        )
    return attr


def clired_problem(attribute: str, categories: Sequence[str] = ()) -> str | None:
    """Why queries over ``attribute`` (with these categories) may not be written in clired syntax, or None.

    Lets a command refuse ``--clired`` before it mines, rather than after.

    Examples
    --------
    >>> clired_problem("colour", ["red", "dark blue"]) is None
    True
    >>> clired_problem("colour", ["red", "c, d"])
    "category 'c, d' of 'colour' cannot be written in clired syntax"
    >>> clired_problem("v3")
    "attribute name 'v3' cannot be written in clired syntax"
    """
    if not _writable_name(attribute):
        return f"attribute name {attribute!r} cannot be written in clired syntax"
    for category in categories:
        if not _writable_category(category):
            return f"category {category!r} of {attribute!r} cannot be written in clired syntax"
    return None


def _writable_name(attribute: str) -> bool:
    return not _INDEX_NAME.match(attribute) and bool(_NAME.match(attribute))


def _writable_category(category: str) -> bool:
    return bool(_STRING.match(category) or _NUMBER_CATEGORY.match(category))


def query_category(category: str, index: int) -> str:
    """How a query writes ``category``, the ``index``-th (0-based) declared category of its
    attribute: the category itself where clired's grammar holds it as one token and
    :func:`~dprm.queries.clired_parser.parse_clired_query` reads it back as itself, else ``#<index>`` (it holds a symbol
    of the grammar, ``?`` or ``@``, begins or ends with a space, begins with a digit but is
    no plain number, or is itself like ``#2``, which is read as an index).

    Examples
    --------
    >>> cats = ["red", "dark blue", "a]b", "x, y", " pale", "1e5", "2.5", "#1", "it's", "a?"]
    >>> [query_category(c, k) for k, c in enumerate(cats)]
    ['red', 'dark blue', '#2', '#3', '#4', '#5', '2.5', '#7', "it's", '#9']
    >>> from dprm.queries import to_text
    >>> from dprm.queries.clired_parser import parse_clired_query
    >>> to_text(parse_clired_query("[colour = #2] | [colour ∈ {red,#4}]", domains={"colour": cats}))
    '[colour = a]b] ∨ [colour = red] ∨ [colour =  pale]'
    """
    readable = (bool(category) and category == category.strip(" \r") and not CATEGORY_INDEX.match(category)
                and not _QUERY_SPECIAL.search(category) and _writable_category(category))
    return category if readable else f"#{index}"


def _closed_bounds(lit: NumericLiteral) -> tuple[float, float]:
    """The closed float interval ``[low, high]`` holding the same float64 values."""
    low, high = -math.inf, math.inf
    b = lit.bounds()
    if "ge" in b:
        low = max(low, b["ge"])
    if "gt" in b:
        low = max(low, float(np.nextafter(b["gt"], math.inf)))
    if "le" in b:
        high = min(high, b["le"])
    if "lt" in b:
        high = min(high, float(np.nextafter(b["lt"], -math.inf)))
    return low, high


def _category(lit: CategoricalLiteral, domains: Mapping[str, Sequence[str]] | None) -> str:
    """How ``lit``'s category is written: by index among its declared ones where given and needed."""
    declared = None if domains is None else domains.get(lit.attr)
    if declared is not None and lit.category in list(declared):
        return query_category(lit.category, list(declared).index(lit.category))
    if not _writable_category(lit.category):
        raise DprmError(f"clired export: category {lit.category!r} of {lit.attr!r} cannot be written in clired syntax")
    return lit.category


def _literal(lit: Literal, negated: bool, columns, sym, domains=None) -> str:
    name = _name(lit.attr, columns)
    if isinstance(lit, BooleanLiteral):
        negated ^= not lit.value
        body = f"[{name}]"
    elif isinstance(lit, CategoricalLiteral):
        body = f"[{name} = {_category(lit, domains)}]"
    elif isinstance(lit, NumericLiteral):
        low, high = _closed_bounds(lit)
        if low > high or math.isinf(low) and math.isinf(high):
            raise DprmError(f"clired export: the interval of {lit.attr!r} holds no float value")
        parts = ([format_number(low), sym["le"]] if math.isfinite(low) else []) + [name]
        parts += [sym["le"], format_number(high)] if math.isfinite(high) else []
        body = "[" + " ".join(parts) + "]"
    else:  # pragma: no cover
        raise TypeError(f"not a literal: {lit!r}")
    return (sym["not"] if negated else "") + body


def _render(q: Query, negated: bool, parent: type | None, columns, sym, domains=None) -> str:
    """Text of ``q`` (negated if asked) as an operand of ``parent`` (None: top level)."""
    while isinstance(q, Not):
        q, negated = q.query, not negated
    if isinstance(q, Literal):
        return _literal(q, negated, columns, sym, domains)
    op = type(q)
    if negated and op is parent:
        # clired cannot negate a group inside a group of the same operator: De Morgan.
        op, negated = (Or if op is And else And), False
        children = [Not(c) for c in q.queries]
    else:
        children = list(q.queries)
    joiner = sym["and"] if op is And else sym["or"]
    body = joiner.join(_render(c, False, op, columns, sym, domains) for c in children)
    if op is parent:  # after De Morgan the operator equals the parent's: splice in, no brackets
        return body
    if parent is None and not negated:
        return body
    return (sym["not"] if negated else "") + f"({body})"


def to_clired(query: Query, *, columns: Sequence[str] | None = None, ascii: bool = True,
              domains: Mapping[str, Sequence[str]] | None = None) -> str:
    """``query`` in python-clired / Siren query syntax (see the module docstring).

    Parameters
    ----------
    query : Query
    columns : sequence of str, optional
        The column names of the query's side, in clired's column order; when given,
        attributes are written by index (``v0``, ``v1``, ...) and may have any name.
    ascii : bool
        ``& | ! <`` (default, what clired writes itself) or ``∧ ∨ ¬ ≤``.
    domains : mapping, optional
        ``{attribute: its declared categories, in order}``: a category clired cannot hold
        is written by its index ``#<k>``, which dprm's reader reads back with the same
        ``domains`` (not clired: see the module docstring).

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, CategoricalLiteral, NumericLiteral
    >>> q = (~BooleanLiteral("Hypertension") & CategoricalLiteral("State", "CA")) | NumericLiteral(
    ...     "Birth year", le=1950)
    >>> to_clired(q)
    '(![Hypertension] & [State = CA]) | [Birth year < 1950]'
    >>> to_clired(q, ascii=False)
    '(¬[Hypertension] ∧ [State = CA]) ∨ [Birth year ≤ 1950]'
    >>> to_clired(q, columns=["State", "Hypertension", "Birth year"])
    '(![v1] & [v0 = CA]) | [v2 < 1950]'
    >>> to_clired(NumericLiteral("x", gt=0.5, le=2))
    '[0.5000000000000001 < x < 2]'
    >>> to_clired(CategoricalLiteral("State", "N/A, unknown") | CategoricalLiteral("State", "CA"),
    ...           domains={"State": ["CA", "N/A, unknown"]})
    '[State = #1] | [State = CA]'
    """
    return _render(query, False, None, columns, _SYMBOLS[bool(ascii)], domains)


def _cell(value: float | None, as_int: bool = False) -> str:
    if value is None:
        return "-"
    if as_int:
        return str(max(int(round(value)), 0))
    return format_number(value)


def write_clired_queries(
    redescriptions: Sequence[Redescription],
    path: str | os.PathLike,
    *,
    columns: tuple[Sequence[str], Sequence[str]] | None = None,
    ascii: bool = True,
) -> None:
    """Write redescriptions as clired's tab-separated queries file (UTF-8), atomically.

    A new file gets mode 0666 less the umask; an existing file keeps its mode
    (:func:`dprm.files.write_atomic`).

    Parameters
    ----------
    redescriptions : sequence of Redescription
    path : path-like
    columns : pair of sequences of str, optional
        Column names of the left and the right side, to refer to attributes by index.
    ascii : bool
        Operator symbols, as in :func:`to_clired`.

    Raises
    ------
    DprmError
        When a query cannot be written in clired syntax or the file cannot be written.
    """
    lines = ["\t".join(CLIRED_HEADER)]
    for i, r in enumerate(redescriptions, start=1):
        s = r.stats
        queries = [
            to_clired(q, columns=None if columns is None else columns[side], ascii=ascii)
            for side, q in enumerate((r.left, r.right))
        ]
        lines.append("\t".join([
            f"r{i}", *queries, _cell(s.jaccard), _cell(s.p_value),
            _cell(s.support_left - s.intersection, True), _cell(s.support_right - s.intersection, True),
            _cell(s.intersection, True),
        ]))
    name = os.fspath(path)
    try:
        write_atomic(name, "\n".join(lines) + "\n")
    except OSError as err:
        raise DprmError(f"{name}: cannot write: {err.strerror or err}") from None
