"""The query operators: negation, conjunction, disjunction.

``Not`` is the plain complement of its operand's support (rows with missing values
included); ``And``/``Or`` take two or more operands and flatten nested operands of the
same operator, so ``And(And(a, b), c) == And(a, b, c)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from dprm.data.attributes import View
from dprm.errors import ParameterError
from dprm.queries.base import Query, hash_once

__all__ = ["Not", "And", "Or"]


@hash_once
@dataclass(frozen=True)
class Not(Query):
    """Negation: holds exactly where ``query`` does not (the plain complement).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> from dprm.queries import BooleanLiteral
    >>> v = View("left", [Attribute("smoker", "left", AttributeKind.BOOLEAN,
    ...                             np.array([1, 0, -1], dtype=np.int8))])
    >>> Not(BooleanLiteral("smoker", True)).support(v).tolist()
    [False, True, True]
    """

    query: Query

    def __post_init__(self) -> None:
        if not isinstance(self.query, Query):
            raise ParameterError(f"Not needs a query, got {self.query!r}")

    def children(self) -> tuple[Query, ...]:
        return (self.query,)

    def support(self, view: View) -> np.ndarray:
        return ~self.query.support(view)


def _operands(cls: type, queries: tuple) -> tuple[Query, ...]:
    name = cls.__name__
    if len(queries) == 1 and isinstance(queries[0], (list, tuple)):
        queries = tuple(queries[0])
    flat: list[Query] = []
    for q in queries:
        if not isinstance(q, Query):
            raise ParameterError(f"{name} needs queries, got {q!r}")
        flat.extend(q.queries if type(q) is cls else (q,))
    if len(flat) < 2:
        raise ParameterError(f"{name} needs two or more queries, got {len(flat)}")
    return tuple(flat)


class _Junction(Query):
    """Shared code of :class:`And` and :class:`Or`."""

    __slots__ = ()
    queries: tuple[Query, ...]
    _reduce: np.ufunc

    def __init__(self, *queries: Query | Iterable[Query]) -> None:
        object.__setattr__(self, "queries", _operands(type(self), queries))

    def children(self) -> tuple[Query, ...]:
        return self.queries

    def support(self, view: View) -> np.ndarray:
        return type(self)._reduce.reduce([q.support(view) for q in self.queries], axis=0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.queries))})"


@hash_once
@dataclass(frozen=True, init=False, repr=False)
class And(_Junction):
    """Conjunction of two or more queries.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B
    >>> And(B("a"), And(B("b"), B("c"))) == And(B("a"), B("b"), B("c"))
    True
    """

    queries: tuple[Query, ...]
    _reduce = np.logical_and


@hash_once
@dataclass(frozen=True, init=False, repr=False)
class Or(_Junction):
    """Disjunction of two or more queries.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B
    >>> len((B("a") | B("b") | B("c")).queries)
    3
    """

    queries: tuple[Query, ...]
    _reduce = np.logical_or
