"""The common interface of every query node (literals and operators).

A query is an immutable, hashable tree. Its leaves are literals (conditions on one
attribute, :mod:`dprm.queries.literals`) and its inner nodes are the operators
:class:`~dprm.queries.operators.Not`, :class:`~dprm.queries.operators.And` and
:class:`~dprm.queries.operators.Or` (:mod:`dprm.queries.operators`).

Semantics (spec/redescriptions.md): a literal over a missing value is false; ``Not``
is the plain complement of its operand's support, so it *includes* the rows where
the operand's attributes are missing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Iterator

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from dprm.data.attributes import View
    from dprm.queries.literals import Literal

__all__ = ["Query", "hash_once"]


def hash_once(cls: type) -> type:
    """Class decorator, above ``@dataclass(frozen=True)`` of a compound query: its hash is computed once.

    A frozen dataclass hashes the tuple of its fields on every call, so hashing an
    ``And`` hashes its whole tree; the normal forms and the implication's caches hash
    the same subqueries over and over (most of the extraction's time on small runs).
    The value is the dataclass's own (iteration orders of sets and dicts of queries
    are unchanged), kept on the node and left out of its pickled state (string hashes
    differ between processes).

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral
    >>> a = BooleanLiteral("smoker") & BooleanLiteral("old")
    >>> hash(a) == hash(BooleanLiteral("smoker") & BooleanLiteral("old"))
    True
    >>> import pickle; "_hash" in pickle.loads(pickle.dumps(a)).__dict__
    False
    """
    fields_hash = cls.__hash__

    def __hash__(self: Query) -> int:
        state = self.__dict__
        value = state.get("_hash")
        if value is None:
            value = state["_hash"] = fields_hash(self)  # frozen: not through __setattr__
        return value

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    return cls


class Query(ABC):
    """Base class of query nodes.

    Subclasses are frozen dataclasses; ``q1 & q2``, ``q1 | q2`` and ``~q`` build
    :class:`And`, :class:`Or` and :class:`Not` nodes.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, NumericLiteral
    >>> q = ~BooleanLiteral("smoker", True) & NumericLiteral("age", le=40)
    >>> print(q)
    ¬smoker ∧ [age ≤ 40]
    >>> sorted(q.attributes())
    ['age', 'smoker']
    """

    __slots__ = ()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_hash", None)  # hash_once's value is valid in this process only
        return state

    @abstractmethod
    def support(self, view: View) -> np.ndarray:
        """Boolean mask, one entry per row of ``view``: the rows where the query holds.

        Raises
        ------
        DprmError
            When an attribute is unknown to the view or of the wrong kind.
        """

    @abstractmethod
    def children(self) -> tuple[Query, ...]:
        """The direct sub-queries (empty for a literal)."""

    def iter_nodes(self) -> Iterator[Query]:
        """All nodes of the tree, in pre-order (this node first)."""
        stack: list[Query] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def literals(self) -> tuple[Literal, ...]:
        """The literals of the tree, left to right (repeats kept)."""
        from dprm.queries.literals import Literal

        return tuple(n for n in self.iter_nodes() if isinstance(n, Literal))

    def attributes(self) -> frozenset[str]:
        """The names of the attributes the query uses."""
        return frozenset(lit.attr for lit in self.literals())

    def __and__(self, other: Query) -> Query:
        from dprm.queries.operators import And

        if not isinstance(other, Query):
            return NotImplemented
        return And(self, other)

    def __or__(self, other: Query) -> Query:
        from dprm.queries.operators import Or

        if not isinstance(other, Query):
            return NotImplemented
        return Or(self, other)

    def __invert__(self) -> Query:
        from dprm.queries.operators import Not

        return Not(self)

    def __str__(self) -> str:
        from dprm.queries.text import to_text

        return to_text(self)
