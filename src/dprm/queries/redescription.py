"""A redescription: a left query, a right query and their (noisy) statistics.

Its queries are kept in normal form (:func:`dprm.queries.normal_form.normalize`, the
rules sound on any data), so every miner's output, its JSON, text and clired forms
write logically equal simple forms once, whatever form the miner built.
:meth:`Redescription.normalized` applies the rules that also need attributes known
to be complete (no missing value), and :meth:`Redescription.key` says when two
redescriptions are the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import AbstractSet, Any

from dprm.errors import DprmError, ParameterError, short_repr
from dprm.json_values import finite_number
from dprm.queries.base import Query
from dprm.queries.json_form import query_from_json, query_to_json
from dprm.queries.normal_form import canonical_key, normalize
from dprm.queries.statistics import RedescriptionStats
from dprm.queries.text import to_text

__all__ = ["Redescription", "REDESCRIPTION_KEYS"]

#: The keys the spec defines for a redescription object; others are ``extra``.
REDESCRIPTION_KEYS: tuple[str, ...] = ("left", "right", "left_text", "right_text", "noisy", "pruned")

#: The ``[low, high]`` entries of the optional ``interval`` object (docs/mining.md, "Error bars").
INTERVAL_PAIRS: tuple[str, ...] = ("jaccard", "intersection", "support_left", "support_right", "p_value",
                                   "jaccard_marginal")


@dataclass(frozen=True)
class Redescription:
    """Two queries over the two views that describe (nearly) the same rows.

    Parameters
    ----------
    left, right : Query
        The queries over the left and the right view; stored in normal form
        (:func:`~dprm.queries.normal_form.normalize` without complete attributes:
        the same supports on any data).
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
    >>> from dprm.queries import Not
    >>> print(Redescription(Not(Not(BooleanLiteral("a"))), NumericLiteral("age", gt=40) & NumericLiteral(
    ...     "age", le=60), r.stats).right)
    [40 < age ≤ 60]
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
        object.__setattr__(self, "left", normalize(self.left))
        object.__setattr__(self, "right", normalize(self.right))
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

    def normalized(self, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> Redescription:
        """The same redescription with queries normalised also for ``complete`` attributes.

        ``complete`` names attributes (of either view) known to have no missing value
        on the data the statistics describe (rule 8 of
        :mod:`dprm.queries.normal_form`): read off the data only in a non-private
        run (:func:`~dprm.queries.normal_form.complete_attributes`), declared
        (public) in a private one. The statistics stay true: the supports do not change.
        One set serves both sides, as column names are unique across the views (the
        loader refuses shared names); for hand-made views that share a name, name it
        only if it is complete in both.

        Examples
        --------
        >>> from dprm.queries import BooleanLiteral, Not, RedescriptionStats
        >>> r = Redescription(Not(BooleanLiteral("bear", False)), BooleanLiteral("cold"),
        ...                   RedescriptionStats.from_counts(5, 5, 4))
        >>> print(r.left, "|", r.normalized({"bear"}).left)
        ¬[bear = false] | bear
        """
        complete = frozenset(complete)
        if not complete:
            return self
        left, right = normalize(self.left, complete), normalize(self.right, complete)
        if left == self.left and right == self.right:
            return self
        return replace(self, left=left, right=right)

    def key(self, complete: AbstractSet[str] | Iterable[str] = frozenset()) -> tuple[str, str]:
        """``(canonical_key(left), canonical_key(right))``: equal keys, equal supports.

        ``complete`` as for :meth:`normalized`.
        """
        return canonical_key(self.left, complete), canonical_key(self.right, complete)

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
        the spec go to ``extra``, the documented optional ``redundant`` and ``interval``
        checked first (:func:`_check_optional_keys`).
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
        _check_optional_keys(obj, where)
        return cls(
            left=query_from_json(obj["left"], where=f"{where}.left"),
            right=query_from_json(obj["right"], where=f"{where}.right"),
            stats=RedescriptionStats.from_json(obj["noisy"], where=f"{where}.noisy"),
            pruned=obj["pruned"],
            extra={k: v for k, v in obj.items() if k not in REDESCRIPTION_KEYS},
        )


def _check_optional_keys(obj: dict, where: str) -> None:
    """Refuse a malformed documented optional key, as ``pruned`` is refused.

    ``redundant`` (docs/mining.md, "Redundancy") is true or false. ``interval``
    (docs/mining.md, "Error bars") is an object, or the Jaccard interval alone as
    ``[low, high]`` (the forms the evaluation reads, docs/evaluation.md); an object's
    ``confidence`` is a number in (0, 1) and its :data:`INTERVAL_PAIRS` entries are
    ``[low, high]`` or ``{"low": l, "high": h}`` of finite numbers, its ``significance`` (what
    pruning's significance rule reads) ``{"max_pvalue": a number in (0, 1], "probability": a
    number in [0, 1]}``. A report showed
    ``interval: "x"`` as no interval and a confidence of ``1e308`` as "1e+310%".

    Examples
    --------
    >>> _check_optional_keys({"redundant": True, "interval": {"confidence": 0.9, "jaccard": [0.1, 0.4]}}, "r")
    >>> _check_optional_keys({"interval": {"confidence": 95}}, "r")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: r.interval.confidence: must be a number in (0, 1), got 95
    """
    if "redundant" in obj and not isinstance(obj["redundant"], bool):
        raise DprmError(f"{where}.redundant: must be true or false, got {short_repr(obj['redundant'])}")
    if "interval" not in obj:
        return
    interval = obj["interval"]
    if isinstance(interval, list | tuple):
        if not _is_pair(interval):
            raise DprmError(f"{where}.interval: must be a JSON object, or [low, high] of two finite numbers, "
                            f"got {short_repr(interval)}")
        return
    if not isinstance(interval, dict):
        raise DprmError(f"{where}.interval: must be a JSON object, got {short_repr(interval)}")
    confidence = interval.get("confidence", 0.5)
    if not (finite_number(confidence) and 0 < confidence < 1):
        raise DprmError(f"{where}.interval.confidence: must be a number in (0, 1), got {short_repr(confidence)}")
    for key in INTERVAL_PAIRS:
        pair = interval.get(key, [0, 0])
        ends = [pair.get("low", 0), pair.get("high", 0)] if isinstance(pair, dict) else pair
        if not _is_pair(ends):
            raise DprmError(f"{where}.interval.{key}: must be [low, high], two finite numbers, got {short_repr(pair)}")
    if "significance" in interval:
        sure = interval["significance"]
        if not (isinstance(sure, dict) and finite_number(sure.get("max_pvalue")) and 0 < sure["max_pvalue"] <= 1
                and finite_number(sure.get("probability")) and 0 <= sure["probability"] <= 1):
            raise DprmError(f"{where}.interval.significance: must be {{\"max_pvalue\": a number in (0, 1], "
                            f"\"probability\": a number in [0, 1]}}, got {short_repr(sure)}")


def _is_pair(value: Any) -> bool:
    """``[low, high]``: a list (or tuple) of two finite numbers."""
    return isinstance(value, list | tuple) and len(value) == 2 and all(finite_number(v) for v in value)
