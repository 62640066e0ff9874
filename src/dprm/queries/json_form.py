"""The JSON form of a query tree (spec/redescriptions.md, "Query trees").

========================================== ====================================
JSON                                       query
========================================== ====================================
``{"attr": "A", "eq": true}`` / ``false``  ``BooleanLiteral("A", True/False)``
``{"attr": "A", "eq": "red"}``             ``CategoricalLiteral("A", "red")``
``{"attr": "A", "gt": 1.5, "le": 3}``      ``NumericLiteral("A", gt=1.5, le=3)``
``{"not": Q}``                             ``Not(Q)``
``{"and": [Q, ...]}`` / ``{"or": [...]}``  ``And(...)`` / ``Or(...)`` (two or more)
========================================== ====================================

Reading is strict: anything else (unknown or missing keys, an ``eq`` that is neither
a Boolean nor a string, a bound that is not a finite number, fewer than two operands)
is a :class:`~dprm.errors.DprmError` whose one-line message says where it is, e.g.
``query.and[1]: unknown key 'foo'``. Integral bounds are written as JSON integers.
"""

from __future__ import annotations

import math
from typing import Any

from dprm.errors import DprmError, ParameterError, short_repr
from dprm.queries.base import Query
from dprm.queries.literals import COMPARISONS, BooleanLiteral, CategoricalLiteral, NumericLiteral
from dprm.queries.operators import And, Not, Or

__all__ = ["MAX_QUERY_DEPTH", "query_to_json", "query_from_json"]

#: The deepest query read (levels of ``not``, ``and``, ``or`` above a literal). A miner's
#: queries are a few levels deep (unions of a tree pair's leaves); a deeper one would
#: make every later step (normal form, hashing, printing) recurse as deep.
MAX_QUERY_DEPTH = 64


class _TooDeep(Exception):
    """A query deeper than :data:`MAX_QUERY_DEPTH` (reported once, where the query starts)."""


def _json_number(x: float) -> int | float:
    return int(x) if x.is_integer() and abs(x) <= 2**53 else x


def query_to_json(query: Query) -> dict:
    """The spec's JSON object (plain dicts, lists, str, bool, int, float) of ``query``.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, NumericLiteral
    >>> query_to_json(~BooleanLiteral("A") | NumericLiteral("B", gt=1.5, le=3))
    {'or': [{'not': {'attr': 'A', 'eq': True}}, {'attr': 'B', 'gt': 1.5, 'le': 3}]}
    """
    if isinstance(query, BooleanLiteral):
        return {"attr": query.attr, "eq": query.value}
    if isinstance(query, CategoricalLiteral):
        return {"attr": query.attr, "eq": query.category}
    if isinstance(query, NumericLiteral):
        return {"attr": query.attr, **{k: _json_number(v) for k, v in query.bounds().items()}}
    if isinstance(query, Not):
        return {"not": query_to_json(query.query)}
    if isinstance(query, And):
        return {"and": [query_to_json(q) for q in query.queries]}
    if isinstance(query, Or):
        return {"or": [query_to_json(q) for q in query.queries]}
    raise TypeError(f"not a query node: {query!r}")


def _finite_number(x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:  # a huge JSON integer
        return False


def _parse(obj: Any, where: str, depth: int = 0) -> Query:
    if depth > MAX_QUERY_DEPTH:
        raise _TooDeep
    if not isinstance(obj, dict):
        raise DprmError(f"{where}: a query must be a JSON object, got {short_repr(obj)}")
    for key in obj:
        if not isinstance(key, str):
            raise DprmError(f"{where}: keys must be strings, got {key!r}")
    for op in ("not", "and", "or"):
        if op in obj:
            extra = sorted(set(obj) - {op})
            if extra:
                raise DprmError(f"{where}: unexpected key {extra[0]!r} beside {op!r}")
            if op == "not":
                return Not(_parse(obj["not"], f"{where}.not", depth + 1))
            items = obj[op]
            if not isinstance(items, list):
                raise DprmError(f"{where}.{op}: must be a list of queries, got {short_repr(items)}")
            if len(items) < 2:
                raise DprmError(f"{where}.{op}: needs two or more queries, got {len(items)}")
            parts = [_parse(item, f"{where}.{op}[{i}]", depth + 1) for i, item in enumerate(items)]
            return And(*parts) if op == "and" else Or(*parts)
    if "attr" not in obj:
        if not obj:
            raise DprmError(f"{where}: empty query object")
        unknown = [k for k in obj if k not in ("eq", *COMPARISONS)]
        if unknown:
            raise DprmError(f"{where}: unknown key {unknown[0]!r}")
        raise DprmError(f"{where}: literal without 'attr'")
    attr = obj["attr"]
    if not isinstance(attr, str) or not attr:
        raise DprmError(f"{where}.attr: must be a non-empty string, got {short_repr(attr)}")
    unknown = [k for k in obj if k not in ("attr", "eq", *COMPARISONS)]
    if unknown:
        raise DprmError(f"{where}: unknown key {unknown[0]!r}")
    if "eq" in obj:
        if len(obj) != 2:
            other = next(k for k in obj if k not in ("attr", "eq"))
            raise DprmError(f"{where}: 'eq' cannot be combined with {other!r}")
        value = obj["eq"]
        if isinstance(value, bool):
            return BooleanLiteral(attr, value)
        if isinstance(value, str):
            return CategoricalLiteral(attr, value)
        raise DprmError(f"{where}.eq: must be true, false or a string, got {short_repr(value)}")
    bounds = {k: obj[k] for k in COMPARISONS if k in obj}
    if not bounds:
        raise DprmError(f"{where}: literal on {attr!r} needs 'eq' or one of gt, ge, lt, le")
    for key, bound in bounds.items():
        if not _finite_number(bound):
            raise DprmError(f"{where}.{key}: must be a finite number, got {short_repr(bound)}")
    return NumericLiteral(attr, **bounds)


def query_from_json(obj: Any, *, where: str = "query") -> Query:
    """Read a query from its JSON object, strictly (see the module docstring).

    Parameters
    ----------
    obj : object
        The decoded JSON value.
    where : str
        How error messages name ``obj`` (e.g. ``"out.json: redescriptions[3].left"``).

    Raises
    ------
    DprmError
        When ``obj`` is not a query of the spec's grammar.

    Examples
    --------
    >>> q = query_from_json({"and": [{"attr": "A", "eq": True}, {"attr": "B", "eq": "x"}]})
    >>> print(q)
    A ∧ [B = x]
    >>> query_from_json({"attr": "A", "eq": 1})
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: query.eq: must be true, false or a string, got 1
    >>> deep = {"attr": "A", "eq": True}
    >>> for _ in range(65):
    ...     deep = {"not": deep}
    >>> query_from_json(deep, where="left")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: left: query nested too deeply (more than 64 levels of not, and, or)
    """
    try:
        return _parse(obj, where)
    except ParameterError as err:  # a literal's own validation (should not happen after the checks)
        raise DprmError(f"{where}: {err}") from None
    except (_TooDeep, RecursionError):
        raise DprmError(f"{where}: query nested too deeply (more than {MAX_QUERY_DEPTH} levels of not, and, "
                        f"or)") from None
