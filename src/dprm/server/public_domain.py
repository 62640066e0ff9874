"""Literals the public schema decides: refused before anything is charged.

A dataset's declared domains are public (:func:`dprm.server.datasets.public_schema`)
and every value lies in them: the loader refuses a value outside its bounds or
categories, or clamps it into them (docs/data.md). So some literals are decided by
the schema alone, and an answer about them would spend ε on nothing the analyst
does not know already (most likely a typo or a wrong unit, ``[x > 1000]`` on bounds
``[0, 100]``). Deciding it reads only the request and the schema: it is
post-processing of public information and costs no budget.

A literal is *outside the domain* when its truth on a row follows from the schema:

- **no value** of the declared domain satisfies it (a numeric interval that misses
  the closed bounds, a category that is not declared): it holds on no row, whatever
  the rows, missing values included (a literal over a missing value is false);
- **every value** satisfies it and the column is declared ``complete`` (no missing
  value, public too): it holds on every row. Without that declaration it holds
  exactly where the attribute has a value, which the rows decide: such a literal
  (``[x ≥ 0]``, read as "x is present") is a question about the data and accepted.

In a tree split (:mod:`dprm.server.tree_json`) both cases are decided whatever the
missing values, since rows missing the attribute drop out of the tree: a split no
value passes leaves its ``yes`` branch empty, one every value passes its ``no``
branch.

Numeric values are taken as real numbers in the closed bounds (a declared grid or
integer values are not assumed), so only literals no real number of the bounds can
satisfy, or every one does, are refused.

Examples
--------
>>> from dprm.queries import NumericLiteral
>>> x = {"name": "x", "type": "numeric", "bounds": [0, 100]}
>>> satisfied_by(NumericLiteral("x", gt=1000), x), satisfied_by(NumericLiteral("x", ge=100), x)
('none', None)
>>> satisfied_by(NumericLiteral("x", ge=0), x), satisfied_by(NumericLiteral("x", gt=99.5), x)
('every', None)
>>> query_problem(NumericLiteral("x", gt=1000), x, "right")
"right: [x > 1000] holds for no value in the declared domain of 'x', [0, 100]: it holds on no row whatever the data, so its answer is known from the public schema (nothing was charged)"
>>> query_problem(NumericLiteral("x", ge=0), x, "right") is None      # holds where x has a value
True
"""

from __future__ import annotations

from typing import Any

from dprm.errors import DprmError
from dprm.queries import BooleanLiteral, CategoricalLiteral, NumericLiteral, to_text

__all__ = ["OutsideDomainError", "satisfied_by", "query_problem", "split_problem", "domain_text"]


class OutsideDomainError(DprmError):
    """A literal of the request is outside the declared domain (its message says which and why)."""


#: Categories a message names at most.
_SHOWN_CATEGORIES = 8


def satisfied_by(literal: Any, entry: dict[str, Any]) -> str | None:
    """``"none"`` when no value of ``entry``'s declared domain satisfies ``literal``,
    ``"every"`` when every value does, None when the rows decide.

    ``entry`` is the attribute's entry of the public schema (``type``, ``bounds`` or
    ``categories``), of the literal's kind (checked before).
    """
    if isinstance(literal, BooleanLiteral):
        return None  # both values are in the domain: true for some rows, false for others
    if isinstance(literal, CategoricalLiteral):
        categories = list(entry.get("categories") or [])
        if literal.category not in categories:
            return "none"
        return "every" if categories == [literal.category] else None
    if isinstance(literal, NumericLiteral) and entry.get("bounds") is not None:
        low, high = (float(b) for b in entry["bounds"])
        return _interval_against(literal.bounds(), low, high)
    return None


def _interval_against(bounds: dict[str, float], low: float, high: float) -> str | None:
    """Compare the literal's interval with the closed domain ``[low, high]``."""
    start, start_open = low, False  # the literal's interval cut to the domain
    end, end_open = high, False
    every = True
    for key, bound in bounds.items():
        if key in ("gt", "ge"):
            strict = key == "gt"
            every &= bound < low or (bound == low and not strict)
            if bound > start or (bound == start and strict):
                start, start_open = bound, strict
        else:
            strict = key == "lt"
            every &= bound > high or (bound == high and not strict)
            if bound < end or (bound == end and strict):
                end, end_open = bound, strict
    if start > end or (start == end and (start_open or end_open)):
        return "none"
    return "every" if every else None


def domain_text(entry: dict[str, Any]) -> str:
    """The declared domain as a message names it: ``[0, 100]``, ``{CA, NY, TX}``.

    Examples
    --------
    >>> domain_text({"type": "categorical", "categories": ["CA", "NY"]})
    '{CA, NY}'
    >>> domain_text({"type": "numeric", "bounds": [-40, 12.345678]})
    '[-40, 12.345678]'
    """
    if entry.get("bounds") is not None:  # each bound as the schema shows it (a float's shortest exact text)
        low, high = entry["bounds"]
        return f"[{low!r}, {high!r}]"
    categories = [str(c)[:40] for c in entry.get("categories") or []]
    more = len(categories) - _SHOWN_CATEGORIES
    shown = categories[:_SHOWN_CATEGORIES] + ([f"… {more} more"] if more > 0 else [])
    return "{" + ", ".join(shown) + "}"


def _named(literal: Any, entry: dict[str, Any], where: str, which: str) -> str:
    return (f"{where}: {to_text(literal)[:120]} holds for {which} value in the declared domain of "
            f"{literal.attr[:64]!r}, {domain_text(entry)}")


def query_problem(literal: Any, entry: dict[str, Any], where: str) -> str | None:
    """Why a query's ``literal`` is outside the domain (the module's rule), or None.

    The message names the literal and the attribute as the request did, and the
    declared domain: nothing that depends on the rows.
    """
    decided = satisfied_by(literal, entry)
    if decided == "none":
        return (_named(literal, entry, where, "no") + ": it holds on no row whatever the data, so its answer is "
                "known from the public schema (nothing was charged)")
    if decided == "every" and entry.get("complete") is True:
        return (_named(literal, entry, where, "every") + f", and {literal.attr[:64]!r} is declared complete: it "
                "holds on every row, so its answer is known from the public schema (nothing was charged)")
    return None


def split_problem(literal: Any, entry: dict[str, Any], where: str) -> str | None:
    """Why a tree's split ``literal`` is outside the domain: one of its branches is
    empty whatever the rows (the module's rule), or None."""
    decided = satisfied_by(literal, entry)
    if decided is None:
        return None
    empty, which = ("yes", "no") if decided == "none" else ("no", "every")
    return (_named(literal, entry, where, which) + f": its {empty!r} branch is empty whatever the data, so "
            "its counts are known from the public schema (nothing was charged)")
