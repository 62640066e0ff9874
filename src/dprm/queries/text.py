"""Human-readable text of a query, as in the spec: ``(¬A ∧ [State = CA]) ∨ [BirthY ≤ 1950]``.

============================ ===================== =====================
node                         Unicode               ASCII
============================ ===================== =====================
``BooleanLiteral(A, True)``  ``A``                 ``A``
``BooleanLiteral(A B, True)`` ``[A B]``             ``[A B]``
``BooleanLiteral(A, False)`` ``[A = false]``       ``[A = false]``
categorical                  ``[State = CA]``      ``[State = CA]``
numeric                      ``[1.5 < x ≤ 3]``     ``[1.5 < x <= 3]``
``Not``                      ``¬q``                ``!q``
``And`` / ``Or``             ``a ∧ b`` / ``a ∨ b`` ``a & b`` / ``a | b``
known value (below)          ``[x known]``         ``[x known]``
============================ ===================== =====================

**Known values.** Operands of one ``Or`` that together hold on every row where an
attribute has a value, and on no other, are written as one ``[x known]``: numeric
literals of ``x`` whose intervals cover the whole line (``[x ≤ 3] ∨ [x > 3]``), or
``B`` and ``[B = false]``. A tree splits a child on a column whose missing values
are not ruled out (the types file does not declare it ``complete``), extraction then
keeps both sides of that split, and the normal form (:mod:`dprm.queries.normal_form`)
may not drop them: they say only that the value is present. Only the text changes;
the JSON form keeps the literals.

``BooleanLiteral(A, False)`` ("A is 0", false where A is missing) is not written
``¬A``: that is ``Not(A)``, which holds where A is missing. A Boolean attribute's name
is written bare only where it reads as one word (no space, bracket, parenthesis,
operator or comparison sign): ``House mouse ∧ Moose`` could be read as three
attributes, ``[House mouse] ∧ Moose`` cannot, and a line is never broken inside
brackets (:func:`dprm.cli.display.wrap_query`). Parentheses are written
exactly around a compound operand of an operator (no precedence between ∧ and ∨ is
assumed). The text is for people; the JSON form is the machine-readable one.
"""

from __future__ import annotations

import math
import re

from dprm.queries._containment import _interval
from dprm.queries.base import Query
from dprm.queries.literals import BooleanLiteral, CategoricalLiteral, NumericLiteral
from dprm.queries.operators import And, Not, Or

__all__ = ["to_text", "format_number"]

#: Characters that make a bare Boolean name ambiguous in the text: it is then written in brackets.
_NOT_BARE = re.compile(r"[\s()\[\]¬∧∨!&|=<>≤≥]")

_UNICODE = {"not": "¬", "and": " ∧ ", "or": " ∨ ", "ge": "≥", "le": "≤"}
_ASCII = {"not": "!", "and": " & ", "or": " | ", "ge": ">=", "le": "<="}


def format_number(x: float) -> str:
    """The shortest text that reads back as the same float; integers without ``.0``.

    Examples
    --------
    >>> [format_number(v) for v in (1950.0, 1.5, 0.1, -2.0, 1e-05, 1e20, 2.0**60)]
    ['1950', '1.5', '0.1', '-2', '1e-05', '1e+20', '1.152921504606847e+18']
    """
    x = float(x)
    if math.isfinite(x) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


def _numeric_text(lit: NumericLiteral, sym: dict[str, str]) -> str:
    op = {"gt": ">", "ge": sym["ge"], "lt": "<", "le": sym["le"]}
    flipped = {"gt": "<", "ge": sym["le"]}
    b = lit.bounds()
    lower = [k for k in ("gt", "ge") if k in b]
    upper = [k for k in ("lt", "le") if k in b]
    if len(lower) == 1 and len(upper) == 1:
        lo, hi = lower[0], upper[0]
        return f"[{format_number(b[lo])} {flipped[lo]} {lit.attr} {op[hi]} {format_number(b[hi])}]"
    return "[" + sym["and"].join(f"{lit.attr} {op[k]} {format_number(v)}" for k, v in b.items()) + "]"


def _covers_line(literals: list[NumericLiteral]) -> bool:
    """Whether the intervals of ``literals`` (one attribute) together cover every real number."""
    intervals = sorted((_interval(lit) for lit in literals), key=lambda i: (i[0], not i[1]))
    if not intervals or intervals[0][0] != -math.inf:
        return False
    reach, reach_closed = intervals[0][2], intervals[0][3]
    for low, low_closed, high, high_closed in intervals[1:]:
        if low > reach or (low == reach and not (low_closed or reach_closed)):
            return False  # a gap before this interval (a single point included)
        if (high, high_closed) > (reach, reach_closed):
            reach, reach_closed = high, high_closed
    return reach == math.inf


def _known_groups(operands: tuple[Query, ...]) -> tuple[dict[int, str], set[int]]:
    """The operands of an ``Or`` that say only that an attribute is known (module docstring).

    Returns ``{position of the group's first operand: attribute}`` and the positions of the
    groups' other operands (left out of the text).
    """
    groups: dict[tuple[type, str], list[int]] = {}
    for position, q in enumerate(operands):
        if isinstance(q, (NumericLiteral, BooleanLiteral)):
            groups.setdefault((type(q), q.attr), []).append(position)
    first: dict[int, str] = {}
    dropped: set[int] = set()
    for (kind, attr), positions in groups.items():
        literals = [operands[p] for p in positions]
        if kind is NumericLiteral:
            known = len(literals) > 1 and _covers_line(literals)
        else:
            known = {lit.value for lit in literals} == {True, False}
        if known:
            first[positions[0]] = attr
            dropped.update(positions[1:])
    return first, dropped


def _text(q: Query, sym: dict[str, str], nested: bool) -> str:
    if isinstance(q, BooleanLiteral):
        if not q.value:
            return f"[{q.attr} = false]"
        return f"[{q.attr}]" if _NOT_BARE.search(q.attr) or not q.attr else q.attr
    if isinstance(q, CategoricalLiteral):
        # a category holding a control character (an escape sequence, a line break) is written escaped: a terminal
        # would act on it, and the query's text is one line
        category = q.category if q.category.isprintable() else repr(q.category)[1:-1]
        return f"[{q.attr} = {category}]"
    if isinstance(q, NumericLiteral):
        return _numeric_text(q, sym)
    if isinstance(q, Not):
        return sym["not"] + _text(q.query, sym, nested=True)
    if isinstance(q, (And, Or)):
        joiner = sym["and"] if isinstance(q, And) else sym["or"]
        known, dropped = _known_groups(q.queries) if isinstance(q, Or) else ({}, set())
        parts = [f"[{known[k]} known]" if k in known else _text(c, sym, nested=True)
                 for k, c in enumerate(q.queries) if k not in dropped]
        body = joiner.join(parts)
        return f"({body})" if nested and len(parts) > 1 else body
    raise TypeError(f"not a query node: {q!r}")


def to_text(query: Query, *, ascii: bool = False) -> str:
    """Readable text of ``query`` (Unicode symbols, or ASCII with ``ascii=True``).

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, CategoricalLiteral, NumericLiteral
    >>> q = (~BooleanLiteral("Hypertension", True) & CategoricalLiteral("State", "CA")) | NumericLiteral(
    ...     "BirthY", le=1950)
    >>> to_text(q)
    '(¬Hypertension ∧ [State = CA]) ∨ [BirthY ≤ 1950]'
    >>> to_text(q, ascii=True)
    '(!Hypertension & [State = CA]) | [BirthY <= 1950]'
    >>> to_text(BooleanLiteral("House mouse") & ~BooleanLiteral("Moose"))
    '[House mouse] ∧ ¬Moose'
    >>> to_text(NumericLiteral("age", gt=40) & (NumericLiteral("income", le=3) | NumericLiteral("income", gt=3)))
    '[age > 40] ∧ [income known]'
    """
    return _text(query, _ASCII if ascii else _UNICODE, nested=False)
