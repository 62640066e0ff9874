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
from typing import AbstractSet

from dprm.queries._containment import _disjoint, _implies
from dprm.queries.base import Query
from dprm.queries.normal_form import _nnf

__all__ = ["implies", "disjoint"]


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

