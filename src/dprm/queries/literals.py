"""Literals: conditions on one attribute, the leaves of a query tree.

=================================== ============================= ==================
literal                             holds on a row where          JSON form
=================================== ============================= ==================
``BooleanLiteral("A", True)``       A is 1                        ``{"attr": "A", "eq": true}``
``CategoricalLiteral("A", "red")``  A equals the category         ``{"attr": "A", "eq": "red"}``
``NumericLiteral("A", gt=1, le=3)`` every given comparison holds  ``{"attr": "A", "gt": 1, "le": 3}``
=================================== ============================= ==================

A literal over a missing value is false. How a literal meets the attribute's kind:

* Boolean literal: the attribute must be Boolean.
* Categorical literal: on a categorical attribute, the category is looked up in
  ``domain.categories`` (when it is absent there but is a number, it matches the
  categories that are the same number, so ``"1.0"`` matches a category ``"1"``; a
  category found nowhere matches no row). On a numeric or Boolean attribute the
  category is read as a number and compared as a number (``float("1950") ==
  1950.0``), as the spec says for numeric-coded attributes.
* Numeric literal: on a numeric or Boolean (0/1) attribute; not on a categorical one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind, View
from dprm.errors import DprmError, ParameterError
from dprm.queries.base import Query

__all__ = ["Literal", "BooleanLiteral", "CategoricalLiteral", "NumericLiteral", "COMPARISONS"]

#: The comparison keys of a numeric literal, in the order they are written.
COMPARISONS: tuple[str, ...] = ("gt", "ge", "lt", "le")


def _check_attr(attr: object) -> str:
    if not isinstance(attr, str) or not attr:
        raise ParameterError(f"a literal's attribute name must be a non-empty string, got {attr!r}")
    return attr


class Literal(Query):
    """Base class of the literals; every literal has an ``attr`` (attribute name)."""

    __slots__ = ()
    attr: str

    def children(self) -> tuple[Query, ...]:
        return ()

    def _attribute(self, view: View) -> Attribute:
        if self.attr not in view:
            raise DprmError(f"query uses attribute {self.attr!r}, which the {view.name} view does not have")
        return view[self.attr]

    def _wrong_kind(self, a: Attribute, view: View, what: str) -> DprmError:
        return DprmError(f"{what} on attribute {self.attr!r} of the {view.name} view, which is {a.kind.value}")


@dataclass(frozen=True)
class BooleanLiteral(Literal):
    """Boolean attribute ``attr`` is 1 (``value=True``) or 0 (``value=False``).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> v = View("left", [Attribute("smoker", "left", AttributeKind.BOOLEAN,
    ...                             np.array([1, 0, -1], dtype=np.int8))])
    >>> BooleanLiteral("smoker", False).support(v).tolist()
    [False, True, False]
    """

    attr: str
    value: bool = True

    def __post_init__(self) -> None:
        _check_attr(self.attr)
        if not isinstance(self.value, (bool, np.bool_)):
            raise ParameterError(f"Boolean literal on {self.attr!r}: value must be True or False, got {self.value!r}")
        object.__setattr__(self, "value", bool(self.value))

    def support(self, view: View) -> np.ndarray:
        a = self._attribute(view)
        if a.kind is not AttributeKind.BOOLEAN:
            raise self._wrong_kind(a, view, "Boolean literal")
        return np.asarray(a.values) == (1 if self.value else 0)


def _as_number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class CategoricalLiteral(Literal):
    """Categorical attribute ``attr`` equals ``category``.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> state = Attribute("State", "left", AttributeKind.CATEGORICAL,
    ...                   np.array([0, 1, -1, 1], dtype=np.int32),
    ...                   Domain(categories=("CA", "NY")))
    >>> CategoricalLiteral("State", "NY").support(View("left", [state])).tolist()
    [False, True, False, True]
    """

    attr: str
    category: str

    def __post_init__(self) -> None:
        _check_attr(self.attr)
        if not isinstance(self.category, str):
            raise ParameterError(
                f"categorical literal on {self.attr!r}: category must be a string, got {self.category!r}"
            )

    def support(self, view: View) -> np.ndarray:
        a = self._attribute(view)
        values = np.asarray(a.values)
        if a.kind is AttributeKind.CATEGORICAL:
            categories = a.domain.categories or ()
            if self.category in categories:
                return values == categories.index(self.category)
            number = _as_number(self.category)
            if number is None:
                return np.zeros(values.shape, dtype=bool)
            codes = [i for i, c in enumerate(categories) if _as_number(c) == number]
            return np.isin(values, codes)
        number = _as_number(self.category)
        if number is None:
            raise DprmError(
                f"categorical literal {self.category!r} is not a number, but attribute {self.attr!r} "
                f"of the {view.name} view is {a.kind.value}"
            )
        return (values == number) & ~a.missing


@dataclass(frozen=True)
class NumericLiteral(Literal):
    """Numeric attribute ``attr`` satisfies every given comparison.

    ``gt``: value > bound, ``ge``: value ≥ bound, ``lt``: value < bound, ``le``:
    value ≤ bound. At least one must be given; bounds are finite numbers (stored as
    ``float``). An empty interval is allowed (it holds on no row).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> v = View("right", [Attribute("BirthY", "right", AttributeKind.NUMERIC,
    ...                              np.array([1940.0, 1950.0, np.nan, 1960.0]))])
    >>> NumericLiteral("BirthY", gt=1940, le=1950).support(v).tolist()
    [False, True, False, False]
    """

    attr: str
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def __post_init__(self) -> None:
        _check_attr(self.attr)
        given = 0
        for key in COMPARISONS:
            bound = getattr(self, key)
            if bound is None:
                continue
            if isinstance(bound, (bool, np.bool_)) or not isinstance(bound, Real):
                raise ParameterError(f"numeric literal on {self.attr!r}: {key} must be a number, got {bound!r}")
            try:
                bound = float(bound)
            except OverflowError:
                bound = math.inf
            if not math.isfinite(bound):
                raise ParameterError(f"numeric literal on {self.attr!r}: {key} must be finite, got {bound!r}")
            object.__setattr__(self, key, bound)
            given += 1
        if given == 0:
            raise ParameterError(f"numeric literal on {self.attr!r} needs at least one of gt, ge, lt, le")

    def bounds(self) -> dict[str, float]:
        """The given comparisons, as ``{key: bound}`` in the order gt, ge, lt, le."""
        return {k: getattr(self, k) for k in COMPARISONS if getattr(self, k) is not None}

    def support(self, view: View) -> np.ndarray:
        a = self._attribute(view)
        if a.kind is AttributeKind.CATEGORICAL:
            raise self._wrong_kind(a, view, "numeric literal")
        values = np.asarray(a.values, dtype=np.float64)
        if a.kind is AttributeKind.BOOLEAN:
            values = np.where(a.missing, np.nan, values)
        ops = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal}
        mask = np.ones(values.shape, dtype=bool)
        for key, bound in self.bounds().items():
            mask &= ops[key](values, bound)  # NaN compares False: missing rows drop out
        return mask
