"""The normal form of a query: equivalent simple forms are written, and counted, once.

:func:`normalize` rewrites a query into a logically equivalent one under the spec's
semantics (spec/redescriptions.md: a literal over a missing value is false; ``not``
is the plain complement of the support). :func:`canonical_key` is the JSON text of
the normal form, so **equal keys mean equal supports on every dataset** (the rules
below are sound); the converse is not promised (equivalence of Boolean formulas is
co-NP-hard), but the simple forms miners produce coincide.

Rules, and why each is sound
----------------------------
On sets of rows ``Not``/``And``/``Or`` are complement, intersection and union, so
every law of Boolean algebra holds between *whole* queries whatever the data.
Literals are the only atoms, and relations between two literals hold only where the
spec's semantics make them hold on every row, missing values included.

Always (data-independent):

1. **Negation normal form** first (rules 1–8; rule 9 writes it back compactly).
   ``¬¬q = q``; De Morgan ``¬(a ∧ b) = ¬a ∨ ¬b`` and ``¬(a ∨ b) = ¬a ∧ ¬b`` (laws
   of set complement). Negations end up on literals.
2. **Flattening** ``(a ∧ b) ∧ c = a ∧ b ∧ c`` (associativity).
3. **Duplicates removed** ``a ∧ a = a``, ``a ∨ a = a`` (idempotence); a junction
   left with one operand is that operand.
4. **Canonical order** of the operands of ``∧``/``∨`` (commutativity): literals and
   negated literals by attribute name (a literal before its negation), compound
   operands after them by their JSON text.
5. **Tight numeric bounds.** A literal keeps one lower and one upper bound, the
   tighter (``[x > 1 ∧ x ≥ 2]`` is ``[x ≥ 2]``, ``[x > 2 ∧ x ≥ 2]`` is ``[x > 2]``):
   the same set of real numbers, and missing values fail either way.
6. **Intervals merged in a conjunction.** All numeric literals on one attribute in
   one ``∧`` become one literal, the intersection of their intervals
   (``[x > 1] ∧ [x ≤ 3] = [1 < x ≤ 3]``): a row satisfies both iff its value lies
   in both intervals; a missing value fails every one of them and the merged one.
   Where the intersection is empty the literals stay apart (an empty literal
   cannot be written in clired's syntax).
7. **Intervals merged in a disjunction** where their union is one interval
   (overlapping or touching, not the whole line): ``[x ≤ 3] ∨ [2 < x ≤ 5] =
   [x ≤ 5]``. Same argument: missing values fail every literal involved. An
   empty interval in a disjunction disappears into a neighbour on its attribute.
   Negated numeric literals merge by De Morgan: ``¬[x ≤ 3] ∨ ¬[x ≤ 5] = ¬[x ≤ 3]``
   (``¬I ∨ ¬J = ¬(I ∩ J)``), and ``¬I ∧ ¬J = ¬(I ∪ J)`` where the union is one
   interval.

Only for attributes declared **complete** (no missing value; the ``complete``
argument):

8. **Negated literals become literals.** ``¬[B = false] = [B = true]`` and
   ``¬B = [B = false]`` for a Boolean B; ``¬[x ≤ 3] = [x > 3]``, and the negation of
   a bounded interval is the disjunction of the two half-intervals outside it
   (``¬[1 < x ≤ 3] = [x ≤ 1] ∨ [x > 3]``). With a missing value these are *false*:
   ``¬[B = false]`` holds on a row where B is missing (plain complement), ``[B =
   true]`` does not. So the rewrite is sound exactly when no row misses the
   attribute, a fact about the data: give ``complete`` only what is known. In a
   non-private run that may be read off the data (:func:`complete_attributes`);
   in a private run it must be public (declared by the data owner), otherwise
   nothing (the default), because whether a column has a missing value is itself a
   fact about the rows. Negated categorical literals stay (their complement needs
   the public category list and the literal's numeric matching).

Within every junction, after rules 3-7 (``_absorb``, ``_resolve``, ``_consensus``):

10. **Absorption** ``a ∨ b = b`` where ``a ⊆ b`` (and dually).
11. **Resolution against another operand** ``u ∨ (c ∧ x) = u ∨ x`` where ``¬c ⊆ u``
    (and dually, with disjointness).
12. **Consensus of two operands** ``(a ∧ x) ∨ (b ∧ x) = x`` where ``¬a ⊆ b`` (so, for
    a complete attribute, ``([p > 7] ∧ x) ∨ ([p ≤ 7] ∧ x) = x``), and ``(a ∨ x) ∧ (b
    ∨ x) = x`` where ``a`` and ``b`` are disjoint.

13. **Factoring** ``(a ∧ x) ∨ (a ∧ y) = a ∧ (x ∨ y)`` (and dually), the operand
    shared by the most, after rules 10-12 (distributivity: a law of sets, sound whatever
    is missing). Each occurrence of a shared operand taken out makes the query
    shorter, so the rewriting ends.
14. **Trivial operands dropped**: in a conjunction, a disjunction of two operands ``a``
    and ``b`` with ``¬a ⊆ b`` (it holds on every row); in a disjunction, a conjunction
    of two disjoint ones (it holds on none). One operand always stays.

Last, on the negation normal form (so still a function of it: equal negation normal
forms, equal normal forms):

9. **Negations pulled out**, bottom up: a junction *all* of whose operands are
   negations is written as the negation of the dual junction, ``¬a ∨ ¬b = ¬(a ∧
   b)`` (De Morgan backwards). So the negation of a tree leaf stays ``¬(a ∧ [x ≤
   3])`` where its attributes may be missing, instead of ``¬a ∨ ¬[x ≤ 3]``; where
   they are complete, rule 8 has already made it ``[a = false] ∨ [x > 3]``.

Examples
--------
>>> from dprm.queries import BooleanLiteral as B, NumericLiteral as N, Not
>>> print(normalize(Not(Not(B("b"))) & N("x", gt=1) & N("x", le=3) & B("a")))
a ∧ b ∧ [1 < x ≤ 3]
>>> print(normalize(Not(N("x", le=3) & Not(Not(B("bear", False))))))
¬([bear = false] ∧ [x ≤ 3])
>>> print(normalize(Not(B("bear", False) & N("x", le=3)), complete={"bear", "x"}))
bear ∨ [x > 3]
>>> canonical_key(Not(B("bear", False)), complete={"bear"}) == canonical_key(B("bear"))
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from functools import lru_cache
from typing import AbstractSet

from dprm.data.attributes import View
from dprm.queries._containment import (
    _disjoint,
    _empty,
    _implies,
    _intersect,
    _Interval,
    _interval,
    _literal,
    _related_keys,
    _simple_key,
    _union,
)
from dprm.queries.base import Query
from dprm.queries.json_form import query_to_json
from dprm.queries.literals import BooleanLiteral, CategoricalLiteral, Literal, NumericLiteral
from dprm.queries.operators import And, Not, Or

__all__ = ["normalize", "canonical_key", "complete_attributes", "decided"]

def _complement(lit: Literal) -> Query | None:
    """The literal(s) holding exactly where ``lit`` does not, for a complete attribute."""
    if isinstance(lit, BooleanLiteral):
        return BooleanLiteral(lit.attr, not lit.value)
    if isinstance(lit, NumericLiteral):
        low, low_closed, high, high_closed = _interval(lit)
        parts: list[Query] = []
        if math.isfinite(low):
            parts.append(NumericLiteral(lit.attr, **{"lt" if low_closed else "le": low}))
        if math.isfinite(high):
            parts.append(NumericLiteral(lit.attr, **{"gt" if high_closed else "ge": high}))
        return parts[0] if len(parts) == 1 else Or(*parts)
    return None  # categorical: stays negated


@lru_cache(maxsize=1 << 16)
def _text(q: Query) -> str:
    """``json.dumps(query_to_json(q), sort_keys=True)``, built from the children's
    (cached) texts: the canonical key of a normal form."""
    if isinstance(q, Not):
        return '{"not": ' + _text(q.query) + "}"
    if isinstance(q, (And, Or)):
        return '{"' + ("and" if isinstance(q, And) else "or") + '": [' + ", ".join(map(_text, q.queries)) + "]}"
    return json.dumps(query_to_json(q), sort_keys=True)


def _order(q: Query) -> tuple:
    """Sort key of a normalised operand (rule 4), total over distinct normal forms.

    Distinct (normalised) literals differ in their attribute, kind, value or interval,
    negated or not; compound operands come after them, ordered by their JSON text.
    """
    negated = isinstance(q, Not)
    inner = q.query if negated else q
    if isinstance(inner, Literal):
        if isinstance(inner, BooleanLiteral):
            detail: tuple = (0, not inner.value)
        elif isinstance(inner, CategoricalLiteral):
            detail = (1, inner.category)
        else:
            low, low_closed, high, high_closed = _interval(inner)
            detail = (2, low, not low_closed, high, high_closed)
        return (0, inner.attr, detail, negated)
    return (1, _text(q))


def _intersect_all(intervals: list[_Interval]) -> list[_Interval]:
    """One interval, their intersection; all of them, apart, where it is empty
    (an empty literal cannot be written in clired's syntax, and the contradiction
    itself says more to a reader)."""
    result = intervals[0]
    for interval in intervals[1:]:
        result = _intersect(result, interval)
    return intervals if _empty(result) and len(intervals) > 1 else [result]


def _union_all(intervals: list[_Interval]) -> list[_Interval]:
    """The intervals, any two whose union is one interval merged, until none are."""
    pending = sorted(intervals, key=lambda i: (i[0], not i[1], i[2], i[3]))
    merged = True
    while merged:
        merged = False
        for i, j in ((i, j) for i in range(len(pending)) for j in range(i + 1, len(pending))):
            union = _union(pending[i], pending[j])
            if union is not None:
                pending[i] = union
                del pending[j]
                merged = True
                break
    return pending


def _merge(op: type, operands: list[Query]) -> list[Query]:
    """Rules 6 and 7: numeric literals on one attribute merged within a junction.

    Negated ones too, by De Morgan: ``¬I ∨ ¬J = ¬(I ∩ J)`` and ``¬I ∧ ¬J = ¬(I ∪ J)``
    (``[x ∈ I ∩ J]`` holds exactly where both literals hold, missing values included).
    """
    groups: dict[tuple[str, bool], list[_Interval]] = {}
    others: list[Query] = []
    for q in operands:
        negated = isinstance(q, Not)
        inner = q.query if negated else q
        if isinstance(inner, NumericLiteral):
            groups.setdefault((inner.attr, negated), []).append(_interval(inner))
        else:
            others.append(q)
    for (attr, negated), intervals in groups.items():
        intersect = (op is And) != negated
        for interval in (_intersect_all if intersect else _union_all)(intervals):
            literal = _literal(attr, interval)
            others.append(Not(literal) if negated else literal)
    return others


def _flatten(op: type, operands: Iterable[Query]) -> list[Query]:
    flat: list[Query] = []
    for q in operands:
        flat.extend(q.queries if type(q) is op else (q,))  # rule 2
    return flat


def _absorb(op: type, operands: list[Query]) -> list[Query]:
    """Rule 10: ``a ∨ b = b`` where ``a ⊆ b``; ``a ∧ b = b`` where ``b ⊆ a`` (first dropped
    first, in the canonical order, so of two equivalent operands the later stays).

    Only the pairs the provers could relate are tried (see :func:`~dprm.queries._containment._simple_key`): a
    disjunction of 2,000 categories of one attribute is 2,000 checks, not 4 million.
    """
    keys = [_simple_key(x) for x in operands]
    buckets: dict[tuple[str, bool, bool], list[int]] = {}
    anything: list[int] = []  # compound operands and empty literals: tried against every operand
    for i, key in enumerate(keys):
        (anything if key is None else buckets.setdefault(key, [])).append(i)
    dropped = [False] * len(operands)
    for i, x in enumerate(operands):
        key = keys[i]
        if key is None:
            candidates: Iterable[int] = range(len(operands))
        else:
            # a disjunction drops x within another operand, a conjunction x containing one
            near = [buckets.get(k, []) for k in _related_keys(key, "contains" if op is Or else "within")]
            candidates = [j for group in (anything, *near) for j in group]
        if any(j != i and not dropped[j] and (_implies(x, operands[j]) if op is Or else _implies(operands[j], x))
               for j in candidates):
            dropped[i] = True
    return [x for x, gone in zip(operands, dropped) if not gone]


def _resolve(op: type, operands: list[Query], complete: frozenset[str]) -> list[Query] | None:
    """Rule 11, once over the operands; None when nothing changes.

    In a disjunction, a conjunct ``c`` of an operand ``c ∧ x`` is dropped where
    ``¬c ⊆ u`` for another operand ``u``: ``u ∨ (c ∧ x) = u ∨ x``. In a conjunction,
    a disjunct ``c`` of an operand ``c ∨ x`` is dropped where ``c`` and another
    operand ``u`` are disjoint: ``u ∧ (c ∨ x) = u ∧ x``. An operand keeps one part.
    """
    inner = And if op is Or else Or
    current = list(operands)
    changed = False
    for position, operand in enumerate(operands):
        if type(operand) is not inner:
            continue
        others = [u for u in current if u is not current[position]]
        parts = list(operand.queries)
        for c in operand.queries:
            if len(parts) == 1:
                break
            if op is Or:
                redundant = any(_implies(_nnf(c, True, complete), u) for u in others)
            else:
                redundant = any(_disjoint(c, u) for u in others)
            if redundant:
                parts.remove(c)
        if len(parts) < len(operand.queries):
            current[position] = _junction(inner, parts, complete)
            changed = True
    return current if changed else None


def _consensus(op: type, operands: list[Query], complete: frozenset[str]) -> list[Query] | None:
    """Rule 12, the first pair found; None when no pair merges.

    In a disjunction, two operands ``a ∧ x`` and ``b ∧ x`` (the same other conjuncts
    ``x``) where ``¬a ⊆ b`` are the one operand ``x``: ``(a ∧ x) ∨ (b ∧ x) = x ∧ (a ∨
    b)`` and ``a ∨ b`` holds on every row. With missing values ``¬a ⊆ b`` rarely holds
    (``[p ≤ 72.7]`` is not the complement of ``[p > 72.7]``); for a complete attribute
    rule 8 makes ``¬a`` a literal, and then ``([p > 72.7] ∧ x) ∨ ([p ≤ 72.7] ∧ x)`` is
    ``x``. In a conjunction, ``(a ∨ x) ∧ (b ∨ x) = x ∨ (a ∧ b) = x`` where ``a`` and
    ``b`` are disjoint (sound whatever is missing: a missing value fails both).
    """
    inner = And if op is Or else Or
    compounds = [(i, q, set(q.queries)) for i, q in enumerate(operands) if type(q) is inner]
    for position, (i, p, p_parts) in enumerate(compounds):
        for j, q, q_parts in compounds[position + 1:]:
            if len(p_parts) != len(q_parts):
                continue
            only_p, only_q = p_parts - q_parts, q_parts - p_parts
            if len(only_p) != 1 or len(only_q) != 1:
                continue
            (a,), (b,) = only_p, only_q
            merges = _implies(_nnf(a, True, complete), b) if op is Or else _disjoint(a, b)
            if merges:
                shared = _junction(inner, [x for x in p.queries if x in q_parts], complete)
                return [x for k, x in enumerate(operands) if k not in (i, j)] + [shared]
    return None


def _factor(op: type, operands: list[Query], complete: frozenset[str]) -> list[Query] | None:
    """Rule 13, one factor; None when no operand is shared.

    In a disjunction, the conjunct shared by the most conjunctions among the operands
    (at least two; of equals, the first in the canonical order) is taken out of them:
    ``(a ∧ x) ∨ (a ∧ y) ∨ z = (a ∧ (x ∨ y)) ∨ z`` (distributivity, a law of sets);
    dually ``(a ∨ x) ∧ (a ∨ y) = a ∨ (x ∧ y)``. The query has the same support and
    one occurrence of ``a`` instead of several: the two leaves of a tree node,
    ``([a ≤ 0.95] ∧ [b > -99]) ∨ ([a ≤ 0.95] ∧ [b ≤ -99])``, become ``[a ≤ 0.95] ∧
    ([b ≤ -99] ∨ [b > -99])`` (``b`` may be missing, so the disjunction is not dropped; the
    text writes it ``[b known]``, :mod:`dprm.queries.text`).
    """
    inner = And if op is Or else Or
    compounds = [(i, set(q.queries)) for i, q in enumerate(operands) if type(q) is inner]
    counts: dict[Query, int] = {}
    for _, parts in compounds:
        for part in parts:
            counts[part] = counts.get(part, 0) + 1
    shared = [part for part, count in counts.items() if count >= 2]
    if not shared:
        return None
    factor = min(shared, key=lambda part: (-counts[part], _order(part)))
    group = [i for i, parts in compounds if factor in parts]
    rests = [_junction(inner, [x for x in operands[i].queries if x != factor], complete) for i in group]
    factored = _junction(inner, [factor, _junction(op, rests, complete)], complete)
    return [x for k, x in enumerate(operands) if k not in group] + [factored]


def _trivial(op: type, operands: list[Query], complete: frozenset[str]) -> list[Query] | None:
    """Rule 14; None when nothing is dropped.

    In a conjunction, an operand ``a ∨ b ∨ …`` with ``¬a ⊆ b`` holds on every row and is
    dropped: ``u ∧ (a ∨ b) = u``; in a disjunction, an operand ``a ∧ b ∧ …`` with ``a``
    and ``b`` disjoint holds on none and is dropped: ``u ∨ (a ∧ b) = u``. One operand
    always stays. These are rule 12's cases once rule 13 has factored them, as in a
    query normalised again with more attributes complete: ``Mountain Hare ∧ (Tatra Pine
    Vole ∨ [Tatra Pine Vole = false])`` is ``Mountain Hare`` where the vole is complete.
    """
    inner = Or if op is And else And
    kept = [q for q in operands if not (type(q) is inner and _trivial_junction(q, complete))]
    if len(kept) == len(operands):
        return None
    return kept or operands[:1]


def _trivial_junction(q: And | Or, complete: frozenset[str]) -> bool:
    """Whether a disjunction holds on every row (two parts with ``¬a ⊆ b``) or a conjunction on none
    (two disjoint parts), as :func:`_trivial` asks.

    Only the pairs the provers could relate are tried (as in :func:`_absorb`): a conjunction
    with a disjunction of 2,000 categories of one attribute is 2,000 checks, not 4 million.
    """
    parts = q.queries
    keys = [_simple_key(x) for x in parts]
    buckets: dict[tuple[str, bool, bool], list[int]] = {}
    anything: list[int] = []  # compound parts and empty literals: tried against every part
    for i, key in enumerate(keys):
        (anything if key is None else buckets.setdefault(key, [])).append(i)
    for i, a in enumerate(parts):
        # a disjunction: ¬a within another part; a conjunction: a disjoint from another part
        x = _nnf(a, True, complete) if isinstance(q, Or) else a
        key = _simple_key(x)
        if key is None:
            candidates: Iterable[int] = range(len(parts))
        else:
            related = [key, *_related_keys(key, "contains" if isinstance(q, Or) else "disjoint")]
            candidates = [j for group in (anything, *(buckets.get(k, []) for k in related)) for j in group]
        if any(j != i and (_implies(x, parts[j]) if isinstance(q, Or) else _disjoint(x, parts[j]))
               for j in candidates):
            return True
    return False


def _junction(op: type, operands: Iterable[Query], complete: frozenset[str] = frozenset()) -> Query:
    """The normal form of ``op(*operands)`` from normal-form operands (rules 2-4, 6, 7, 10-14)."""
    current = _flatten(op, operands)
    while True:
        current = sorted(set(_merge(op, current)), key=_order)  # rules 3, 4 (after 6, 7)
        current = _absorb(op, current)
        resolved = _resolve(op, current, complete)
        if resolved is None:
            resolved = _consensus(op, current, complete)
        if resolved is None and len(current) > 1:
            resolved = _trivial(op, current, complete)
        if resolved is None:
            resolved = _factor(op, current, complete)
        if resolved is None:
            break
        current = _flatten(op, resolved)
    return current[0] if len(current) == 1 else op(*current)


@lru_cache(maxsize=1 << 16)
def _nnf(q: Query, negated: bool, complete: frozenset[str]) -> Query:
    """Rules 1-8: the negation normal form of ``q`` (of ``¬q`` if ``negated``)."""
    if isinstance(q, Not):
        return _nnf(q.query, not negated, complete)  # rule 1: ¬¬q = q
    if isinstance(q, (And, Or)):
        op = type(q)
        if negated:
            op = Or if op is And else And  # rule 1: De Morgan
        return _junction(op, (_nnf(c, negated, complete) for c in q.queries), complete)
    if isinstance(q, NumericLiteral):
        q = _literal(q.attr, _interval(q))  # rule 5
    if not negated:
        return q
    if q.attr in complete:
        complement = _complement(q)  # rule 8
        if complement is not None:
            return _nnf(complement, False, complete)
    return Not(q)


@lru_cache(maxsize=1 << 16)
def _pull(q: Query) -> Query:
    """Rule 9: bottom up, a junction of negations becomes the negation of the dual."""
    if not isinstance(q, (And, Or)):
        return q
    operands = [_pull(c) for c in q.queries]
    if all(isinstance(c, Not) for c in operands):
        dual = Or if isinstance(q, And) else And
        return Not(dual(*sorted((c.query for c in operands), key=_order)))
    return type(q)(*sorted(operands, key=_order))


def normalize(query: Query, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> Query:
    """The normal form of ``query`` (the rules of the module docstring).

    Parameters
    ----------
    query : Query
    complete : set of str
        Names of attributes known to have no missing value on the rows the query
        will be evaluated on (rule 8 applies to them only). Default: none, which
        is sound on any data.

    Returns
    -------
    Query
        A query with the same support on every dataset where the ``complete``
        attributes have no missing value. Normalising twice changes nothing.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, NumericLiteral as N
    >>> print(normalize((N("x", le=3) | N("x", gt=2, le=5)) | ~~B("a")))
    a ∨ [x ≤ 5]
    >>> print(normalize(~N("x", gt=1, le=3), complete={"x"}))
    [x ≤ 1] ∨ [x > 3]
    """
    return _pull(_nnf(query, False, frozenset(complete)))


def canonical_key(query: Query, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> str:
    """A text equal for queries whose normal forms are equal (so their supports are).

    Parameters
    ----------
    query : Query
    complete : set of str
        As for :func:`normalize`.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B
    >>> canonical_key(B("a") & B("b")) == canonical_key(B("b") & ~~B("a") & B("b"))
    True
    >>> canonical_key(~B("a", False)) == canonical_key(B("a"))   # not if a may be missing
    False
    """
    return _text(normalize(query, complete))


def decided(query: Query, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> str | None:
    """``"every"`` where ``query`` holds on every row whatever the data, ``"none"`` where on no row, else None.

    Read off the normal form (:func:`normalize`): a disjunction two of whose parts cover
    every row between them (``a ∨ ¬a``; ``[x ≤ 5] ∨ [x > 5]`` where ``x`` is complete)
    holds everywhere, a conjunction two of whose parts are disjoint (``a ∧ ¬a``, ``[x >
    5] ∧ [x < 3]``) nowhere, by the same provers that rule 14 uses. Sound, not complete:
    None does not promise that the rows decide. Single literals are not judged here
    (their domain does it: :mod:`dprm.server.public_domain`).

    Parameters
    ----------
    query : Query
    complete : set of str
        As for :func:`normalize`.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, NumericLiteral as N
    >>> decided(B("a") & ~B("a")), decided(B("a") | ~B("a")), decided(B("a") & B("b"))
    ('none', 'every', None)
    >>> decided(N("x", le=5) | N("x", gt=5)), decided(N("x", le=5) | N("x", gt=5), complete={"x"})
    (None, 'every')
    """
    form = normalize(query, complete)
    if isinstance(form, (And, Or)) and _trivial_junction(form, frozenset(complete)):
        return "every" if isinstance(form, Or) else "none"
    return None


def complete_attributes(*views: View) -> frozenset[str]:
    """Names of the attributes of ``views`` that have no missing value **in the data**.

    This reads the rows: use it for non-private runs only. A private run may only
    use completeness the data owner declared (public), never this.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> v = View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, np.array([1, 0], dtype=np.int8)),
    ...                   Attribute("b", "left", AttributeKind.BOOLEAN, np.array([1, -1], dtype=np.int8))])
    >>> sorted(complete_attributes(v))
    ['a']
    """
    return frozenset(a.name for view in views for a in view if not a.missing.any())
