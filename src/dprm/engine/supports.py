"""The support of a query grown literal by literal, described without rows.

A greedy miner grows each query of a redescription one literal at a time with ``∧``
or ``∨`` (left-deep: ``((l₁ ∨ l₂) ∧ l₃) ...``). :class:`Support` records those steps
as literal numbers of a :class:`~dprm.engine.literal_table.LiteralTable`, so that any
holder of rows (the in-process engine, or each shard of a sharded one) can evaluate
the same support on *its* rows. It is what crosses the network instead of a row
mask: a few integers.

Examples
--------
>>> first = Support(side=0, steps=((AND, 3),))
>>> grown = first.extended(OR, 5).extended(AND, 1)
>>> grown.steps
((0, 3), (1, 5), (0, 1))
>>> grown.n_literals
3
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AND", "OR", "Support"]

#: Step operators (the first step's operator is ignored: it starts the query).
AND = 0
OR = 1


@dataclass(frozen=True)
class Support:
    """A query of one side as ``(operator, literal)`` steps over that side's literal table.

    Parameters
    ----------
    side : int
        0 (left view) or 1 (right view).
    steps : tuple of (int, int)
        ``(operator, literal number)``; the support is folded left to right,
        ``AND`` intersecting and ``OR`` uniting with the literal's support.
    """

    side: int
    steps: tuple[tuple[int, int], ...]

    @classmethod
    def literal(cls, side: int, literal: int) -> "Support":
        """The support of one literal."""
        return cls(side, ((AND, int(literal)),))

    def extended(self, operator: int, literal: int) -> "Support":
        """This support combined with one more literal by ``operator`` (``AND`` or ``OR``)."""
        return Support(self.side, self.steps + ((int(operator), int(literal)),))

    @property
    def n_literals(self) -> int:
        return len(self.steps)
