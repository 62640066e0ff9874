"""Containment and disjointness of supports on negation normal forms (private).

The interval arithmetic of numeric literals and the provers behind
:func:`dprm.queries.implies` / :func:`dprm.queries.disjoint` (their rules are
documented in :mod:`dprm.queries.implication`). They take queries already in
negation normal form (negations on literals only), so that the normal form can use
them too without an import cycle: ``_containment`` ← ``normal_form`` ← ``implication``.
"""

from __future__ import annotations

import math
from functools import lru_cache

from dprm.queries.base import Query
from dprm.queries.literals import BooleanLiteral, CategoricalLiteral, NumericLiteral, _as_number
from dprm.queries.operators import And, Not, Or

# An interval: (low, low_closed, high, high_closed), ±inf where unbounded.
_Interval = tuple[float, bool, float, bool]


def _interval(lit: NumericLiteral) -> _Interval:
    """The set of reals ``lit`` admits, as one interval (rule 5: tightest bounds)."""
    low, low_closed, high, high_closed = -math.inf, False, math.inf, False
    if lit.gt is not None:
        low, low_closed = lit.gt, False
    if lit.ge is not None and (lit.ge > low):
        low, low_closed = lit.ge, True
    if lit.lt is not None:
        high, high_closed = lit.lt, False
    if lit.le is not None and (lit.le < high):
        high, high_closed = lit.le, True
    return low, low_closed, high, high_closed


def _literal(attr: str, interval: _Interval) -> NumericLiteral:
    low, low_closed, high, high_closed = interval
    bounds: dict[str, float] = {}
    if math.isfinite(low):
        bounds["ge" if low_closed else "gt"] = low
    if math.isfinite(high):
        bounds["le" if high_closed else "lt"] = high
    return NumericLiteral(attr, **bounds)


def _empty(interval: _Interval) -> bool:
    low, low_closed, high, high_closed = interval
    return low > high or (low == high and not (low_closed and high_closed))


def _intersect(a: _Interval, b: _Interval) -> _Interval:
    # lower end: the larger value; at equal values the open end is the tighter
    low, low_closed = max((a[0], not a[1]), (b[0], not b[1]))
    high, high_closed = min((a[2], a[3]), (b[2], b[3]))
    return low, not low_closed, high, high_closed


def _union(a: _Interval, b: _Interval) -> _Interval | None:
    """The union of two intervals when it is one interval other than the whole line."""
    if _empty(a):
        return b
    if _empty(b):
        return a
    if (a[0], not a[1]) > (b[0], not b[1]):
        a, b = b, a  # a starts first (at equal values the closed end is looser)
    if b[0] > a[2] or (b[0] == a[2] and not (b[1] or a[3])):
        return None  # a gap between them (a single point missing included)
    high, high_closed = max((a[2], a[3]), (b[2], b[3]))
    if math.isinf(a[0]) and math.isinf(high):
        return None  # the whole line: not a literal
    return a[0], a[1], high, high_closed


def _empty_literal(q: Query) -> bool:
    return isinstance(q, NumericLiteral) and _empty(_interval(q))


def _literal_within(a: Query, b: Query) -> bool:
    """Positive literals: ``supp(a) ⊆ supp(b)`` provably."""
    if a.attr != b.attr:
        return False
    if isinstance(a, NumericLiteral) and isinstance(b, NumericLiteral):
        ia, ib = _interval(a), _interval(b)
        return _intersect(ia, ib) == ia  # ia lies inside ib
    return a == b


def _literals_disjoint(a: Query, b: Query) -> bool:
    """Positive literals: ``supp(a) ∩ supp(b) = ∅`` provably."""
    if a.attr != b.attr:
        return False
    if isinstance(a, NumericLiteral) and isinstance(b, NumericLiteral):
        return _empty(_intersect(_interval(a), _interval(b)))
    if isinstance(a, BooleanLiteral) and isinstance(b, BooleanLiteral):
        return a.value != b.value
    if isinstance(a, CategoricalLiteral) and isinstance(b, CategoricalLiteral):
        number = _as_number(a.category)
        return a.category != b.category and (number is None or number != _as_number(b.category))
    return False


@lru_cache(maxsize=1 << 16)
def _implies(a: Query, b: Query) -> bool:
    if a == b or _empty_literal(a):
        return True
    if isinstance(a, Or):
        return all(_implies(x, b) for x in a.queries)
    if isinstance(b, And):
        return all(_implies(a, y) for y in b.queries)
    if isinstance(a, And) and any(_implies(x, b) for x in a.queries):
        return True
    if isinstance(b, Or) and any(_implies(a, y) for y in b.queries):
        return True
    if isinstance(b, Not):
        return _disjoint(a, b.query)
    if isinstance(a, Not) or isinstance(a, (And, Or)) or isinstance(b, Or):
        return False
    return _literal_within(a, b)


@lru_cache(maxsize=1 << 16)
def _disjoint(a: Query, b: Query) -> bool:
    if _empty_literal(a) or _empty_literal(b):
        return True
    if isinstance(a, Or):
        return all(_disjoint(x, b) for x in a.queries)
    if isinstance(b, Or):
        return all(_disjoint(a, y) for y in b.queries)
    if isinstance(a, And):
        return any(_disjoint(x, b) for x in a.queries)
    if isinstance(b, And):
        return any(_disjoint(a, y) for y in b.queries)
    if isinstance(a, Not) and isinstance(b, Not):
        return False
    if isinstance(a, Not):
        return _implies(b, a.query)
    if isinstance(b, Not):
        return _implies(a, b.query)
    return _literals_disjoint(a, b)
