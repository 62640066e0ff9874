"""Containment and disjointness of supports on negation normal forms (private).

The interval arithmetic of numeric literals and the provers behind
:func:`dprm.queries.implies` / :func:`dprm.queries.disjoint` (their rules are
documented in :mod:`dprm.queries.implication`). They take queries already in
negation normal form (negations on literals only), so that the normal form can use
them too without an import cycle: ``_containment`` ← ``normal_form`` ← ``implication``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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


def _simple_key(q: Query) -> tuple[str, bool, bool] | None:
    """``(attribute, positive, numeric)`` of a non-empty literal or negated literal; None otherwise.

    The provers below relate two such operands only within one attribute, and only in
    the cases :func:`_related_keys` lists. An empty literal is within everything, so
    it has no key, like a compound query.
    """
    positive = not isinstance(q, Not)
    literal = q if positive else q.query
    if not isinstance(literal, (BooleanLiteral, CategoricalLiteral, NumericLiteral)):
        return None
    numeric = isinstance(literal, NumericLiteral)
    if numeric and _empty(_interval(literal)):
        return None
    return literal.attr, positive, numeric


def _related_keys(key: tuple[str, bool, bool], relation: str) -> list[tuple[str, bool, bool]]:
    """The keys of the simple operands ``x`` for which ``relation`` may be proved with ``q`` of ``key``.

    Read off :func:`_implies` and :func:`_disjoint` on two keyed operands of one
    attribute (besides ``x == q``, which the caller adds): ``"within"`` (``x ⊆ q``)
    and ``"contains"`` (``q ⊆ x``) hold between two positive or two negated literals
    only when both are numeric (nested intervals), never for a negated literal within
    a positive one, and for a positive literal within a negated one of any kind
    (disjoint values); ``"disjoint"`` never holds between two negated literals.
    """
    attr, positive, numeric = key
    both_numeric = [(attr, positive, True)] if numeric else []
    any_kind = [(attr, not positive, False), (attr, not positive, True)]
    if relation == "within":
        return both_numeric if positive else any_kind + both_numeric
    if relation == "contains":
        return any_kind + both_numeric if positive else both_numeric
    if relation == "disjoint":
        return [(attr, True, False), (attr, True, True)] + (any_kind if positive else [])
    raise ValueError(f"unknown relation {relation!r}")  # pragma: no cover - internal


@lru_cache(maxsize=1 << 10)
def _operands_by_key(q: And | Or) -> tuple[dict[tuple[str, bool, bool], tuple[Query, ...]], tuple[Query, ...],
                                            frozenset[Query]]:
    """``q``'s operands with a :func:`_simple_key`, by key, the others, and the set of all."""
    by_key: dict[tuple[str, bool, bool], list[Query]] = {}
    others: list[Query] = []
    for x in q.queries:
        key = _simple_key(x)
        if key is None:
            others.append(x)
        else:
            by_key.setdefault(key, []).append(x)
    return {k: tuple(xs) for k, xs in by_key.items()}, tuple(others), frozenset(q.queries)


def _related_operands(q: And | Or, other: Query, relation: str) -> tuple[Query, ...] | list[Query]:
    """The operands of ``q`` that ``relation`` could hold between with ``other`` (a superset).

    All of them unless ``other`` is simple (see :func:`_simple_key`) and ``q`` has
    enough operands to make the index worth it.
    """
    key = _simple_key(other)
    if key is None or len(q.queries) < 8:
        return q.queries
    by_key, others, members = _operands_by_key(q)
    related = [*others, *(x for k in _related_keys(key, relation) for x in by_key.get(k, ()))]
    return [other, *related] if other in members else related


def _for_all_operands(q: And | Or, other: Query, relation: str, test: Callable[[Query], bool]) -> bool:
    """``all(test(x) for x in q.queries)``, where ``test(x)`` proves ``relation`` between ``x`` and ``other``.

    With a simple ``other`` and many operands, the keys decide what they can: an
    operand of an unrelated key fails at once (``other`` itself only a disjointness), and a
    positive category of ``other``'s attribute is disjoint from a bucket of
    (negated) categories exactly when its value is none of theirs (a set lookup instead
    of one proof per category: attributes of thousands of categories are common).
    """
    key = _simple_key(other)
    if key is None or len(q.queries) < 8:
        return all(test(x) for x in q.queries)
    by_key, others, _ = _operands_by_key(q)
    related = _related_keys(key, relation)
    # an unrelated operand fails the test, unless it is ``other`` and the test an implication (x ⊆ x)
    exempt = None if relation == "disjoint" else other
    if any(k not in related and any(x != exempt for x in xs) for k, xs in by_key.items()):
        return False
    attr, positive, numeric = key
    fast = None
    if isinstance(other, CategoricalLiteral):
        fast = {"contains": (attr, False, False), "disjoint": (attr, True, False)}.get(relation)
    for k in related:
        if k == fast:
            categories, numbers, all_categorical = _categories_of(q, k)
            number = _as_number(other.category)
            if not all_categorical or other.category in categories or (number is not None and number in numbers):
                return False
        elif not all(test(x) for x in by_key.get(k, ())):
            return False
    return all(test(x) for x in others)


@lru_cache(maxsize=1 << 10)
def _categories_of(q: And | Or, key: tuple[str, bool, bool]) -> tuple[frozenset[str], frozenset[float], bool]:
    """The categories (and their numbers) of ``q``'s operands of ``key``, and whether all are categorical."""
    literals = [x if key[1] else x.query for x in _operands_by_key(q)[0].get(key, ())]
    categorical = [x for x in literals if isinstance(x, CategoricalLiteral)]
    numbers = (_as_number(x.category) for x in categorical)
    return (frozenset(x.category for x in categorical), frozenset(n for n in numbers if n is not None),
            len(categorical) == len(literals))


@lru_cache(maxsize=1 << 16)
def _implies(a: Query, b: Query) -> bool:
    if a == b or _empty_literal(a):
        return True
    if isinstance(a, Or):
        return _for_all_operands(a, b, "within", lambda x: _implies(x, b))
    if isinstance(b, And):
        return _for_all_operands(b, a, "contains", lambda y: _implies(a, y))
    if isinstance(a, And) and any(_implies(x, b) for x in _related_operands(a, b, "within")):
        return True
    if isinstance(b, Or) and any(_implies(a, y) for y in _related_operands(b, a, "contains")):
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
        return _for_all_operands(a, b, "disjoint", lambda x: _disjoint(x, b))
    if isinstance(b, Or):
        return _for_all_operands(b, a, "disjoint", lambda y: _disjoint(a, y))
    if isinstance(a, And):
        return any(_disjoint(x, b) for x in _related_operands(a, b, "disjoint"))
    if isinstance(b, And):
        return any(_disjoint(a, y) for y in _related_operands(b, a, "disjoint"))
    if isinstance(a, Not) and isinstance(b, Not):
        return False
    if isinstance(a, Not):
        return _implies(b, a.query)
    if isinstance(b, Not):
        return _implies(a, b.query)
    return _literals_disjoint(a, b)
