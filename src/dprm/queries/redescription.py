"""A redescription: a left query, a right query and their (noisy) statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dprm.errors import DprmError, ParameterError
from dprm.queries.base import Query
from dprm.queries.json_form import query_from_json, query_to_json
from dprm.queries.statistics import RedescriptionStats
from dprm.queries.text import to_text

__all__ = ["Redescription", "REDESCRIPTION_KEYS"]

#: The keys the spec defines for a redescription object; others are ``extra``.
REDESCRIPTION_KEYS: tuple[str, ...] = ("left", "right", "left_text", "right_text", "noisy", "pruned")


@dataclass(frozen=True)
class Redescription:
    """Two queries over the two views that describe (nearly) the same rows.

    Parameters
    ----------
    left, right : Query
        The queries over the left and the right view.
    stats : RedescriptionStats
        The released (noisy, or exact for a non-private run) statistics.
    pruned : bool
        True when the pruning strategy would drop it (kept for inspection).
    extra : dict
        More JSON-ready entries written beside the spec's keys (e.g. confidence
        intervals); their keys must differ from :data:`REDESCRIPTION_KEYS`.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, NumericLiteral, RedescriptionStats
    >>> r = Redescription(BooleanLiteral("smoker"), NumericLiteral("age", gt=40),
    ...                   RedescriptionStats.from_counts(10.2, 12.5, 8.1))
    >>> d = r.to_json()
    >>> d["left_text"], d["right_text"], d["noisy"]["union"], d["pruned"]
    ('smoker', '[age > 40]', 14.6, False)
    >>> Redescription.from_json(d) == r
    True
    """

    left: Query
    right: Query
    stats: RedescriptionStats
    pruned: bool = False
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for side in ("left", "right"):
            if not isinstance(getattr(self, side), Query):
                raise ParameterError(f"Redescription.{side} must be a query, got {getattr(self, side)!r}")
        if not isinstance(self.stats, RedescriptionStats):
            raise ParameterError(f"Redescription.stats must be RedescriptionStats, got {self.stats!r}")
        if not isinstance(self.pruned, bool):
            raise ParameterError(f"Redescription.pruned must be True or False, got {self.pruned!r}")
        if not isinstance(self.extra, dict):
            raise ParameterError(f"Redescription.extra must be a dict, got {self.extra!r}")
        clash = [k for k in self.extra if k in REDESCRIPTION_KEYS or not isinstance(k, str)]
        if clash:
            raise ParameterError(f"Redescription.extra cannot use the key {clash[0]!r}")
        object.__setattr__(self, "extra", dict(self.extra))

    def to_json(self) -> dict:
        """The spec's redescription object (plus the ``extra`` entries)."""
        return {
            "left": query_to_json(self.left),
            "right": query_to_json(self.right),
            "left_text": to_text(self.left),
            "right_text": to_text(self.right),
            "noisy": self.stats.to_json(),
            "pruned": self.pruned,
            **self.extra,
        }

    @classmethod
    def from_json(cls, obj: Any, *, where: str = "redescription") -> Redescription:
        """Read a redescription object; ``left``, ``right``, ``noisy``, ``pruned`` are required.

        The texts are not read back (they are derived from the queries); keys outside
        the spec go to ``extra``.
        """
        if not isinstance(obj, dict):
            raise DprmError(f"{where}: must be a JSON object, got {type(obj).__name__}")
        for key in ("left", "right", "noisy", "pruned"):
            if key not in obj:
                raise DprmError(f"{where}: missing key {key!r}")
        for key in ("left_text", "right_text"):
            if key in obj and not isinstance(obj[key], str):
                raise DprmError(f"{where}.{key}: must be a string")
        if not isinstance(obj["pruned"], bool):
            raise DprmError(f"{where}.pruned: must be true or false, got {obj['pruned']!r}")
        return cls(
            left=query_from_json(obj["left"], where=f"{where}.left"),
            right=query_from_json(obj["right"], where=f"{where}.right"),
            stats=RedescriptionStats.from_json(obj["noisy"], where=f"{where}.noisy"),
            pruned=obj["pruned"],
            extra={k: v for k, v in obj.items() if k not in REDESCRIPTION_KEYS},
        )
