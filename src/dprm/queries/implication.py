"""Provable containment and disjointness of supports, from the queries alone.

:func:`implies` ``(a, b)`` is True when ``supp(a) ⊆ supp(b)`` on **every** dataset
(under the spec's semantics: a literal over a missing value is false, ``not`` is
the plain complement); :func:`disjoint` ``(a, b)`` when ``supp(a) ∩ supp(b) = ∅`` on
every dataset. Both look at no row, so what they say about released results is
post-processing. They are sound and incomplete: False means "not proven".

Both work on negation normal forms (rules 1–8 of :mod:`dprm.queries.normal_form`:
negations on literals only) with these rules, each exact or sound:

* ``a ∨ a' ⊆ b`` iff both are; ``a ⊆ b ∧ b'`` iff ``a ⊆ b`` and ``a ⊆ b'`` (exact);
* ``a ∧ a' ⊆ b`` if ``a ⊆ b``; ``a ⊆ b ∨ b'`` if ``a ⊆ b`` (sound);
* ``a ⊆ ¬c`` iff ``a`` and ``c`` are disjoint; ``¬c ⊆ ¬d`` iff ``d ⊆ c``;
* ``a ∨ a'`` and ``b`` are disjoint iff both are; ``a ∧ a'`` and ``b`` are if one of
  ``a``, ``a'`` is; ``¬c`` and ``b`` are disjoint iff ``b ⊆ c``; two negated literals
  never provably (a row missing both attributes is in both);
* literals on one attribute: numeric intervals by containment and intersection
  (an empty interval holds on no row); Boolean literals by value; categorical
  literals are disjoint when their categories differ and do not read as the same
  number (``"1"`` and ``"1.0"`` may match the same rows). Literals on different
  attributes are never provably related.

Examples
--------
>>> from dprm.queries import BooleanLiteral as B, NumericLiteral as N
>>> implies(B("a") & N("x", le=2), N("x", le=3) | B("c"))
True
>>> implies(N("x", le=3), ~N("x", gt=5)), implies(~N("x", gt=5), N("x", le=3))
(True, False)
>>> disjoint(B("a") & N("x", le=2), B("a", False) | N("x", gt=2))
True
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import AbstractSet

from dprm.queries.base import Query
from dprm.queries.literals import BooleanLiteral, CategoricalLiteral, NumericLiteral, _as_number
from dprm.queries.normal_form import _empty, _interval, _intersect, _nnf
from dprm.queries.operators import And, Not, Or

__all__ = ["implies", "disjoint"]


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


def implies(a: Query, b: Query, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> bool:
    """True when ``supp(a) ⊆ supp(b)`` provably, on every dataset.

    Parameters
    ----------
    a, b : Query
        Queries over the same view.
    complete : set of str
        Attributes known to have no missing value (see
        :func:`~dprm.queries.normal_form.normalize`); default none, sound on any data.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B
    >>> implies(B("a"), ~B("a", False)), implies(~B("a", False), B("a"))
    (True, False)
    >>> implies(~B("a", False), B("a"), complete={"a"})
    True
    """
    complete = frozenset(complete)
    return _implies(_nnf(a, False, complete), _nnf(b, False, complete))


def disjoint(a: Query, b: Query, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> bool:
    """True when ``supp(a) ∩ supp(b) = ∅`` provably, on every dataset.

    Examples
    --------
    >>> from dprm.queries import NumericLiteral as N
    >>> disjoint(N("x", le=1), N("x", gt=1)), disjoint(N("x", le=1), N("x", ge=1))
    (True, False)
    """
    complete = frozenset(complete)
    return _disjoint(_nnf(a, False, complete), _nnf(b, False, complete))

