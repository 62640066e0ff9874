"""Attributes, views and two-view datasets: the in-memory form every miner reads.

A :class:`TwoViewData` holds two :class:`View` objects over the same rows. Each view
holds typed :class:`Attribute` columns with a uniform encoding of missing values:

========== ======================= ============================================
kind       ``values`` dtype        missing value
========== ======================= ============================================
boolean    ``int8`` (0 / 1)        ``-1``
categorical ``int32`` codes into   ``-1``
           ``domain.categories``
numeric    ``float64``             ``NaN``
========== ======================= ============================================

A literal over a missing value is false (so is its negation's literal: ``a`` and
``¬a`` both exclude rows where ``a`` is missing; the query operator ``not`` is the
plain complement, see :mod:`dprm.queries`).

Each attribute carries a :class:`Domain`: the public description of the values it
may take (bounds of a numeric attribute, the categories of a categorical one). A
domain is *declared* when the data owner wrote it in the types file and *inferred*
when it was read off the data; a private run over an inferred domain is not private,
and its output says so.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Iterator

import numpy as np

from dprm.errors import ParameterError

__all__ = ["AttributeKind", "Domain", "Attribute", "View", "TwoViewData", "VIEW_NAMES", "require_attributes"]

VIEW_NAMES: tuple[str, str] = ("left", "right")


class AttributeKind(StrEnum):
    """The type of an attribute; the string values are those of the types file."""

    BOOLEAN = "boolean"
    CATEGORICAL = "categorical"
    NUMERIC = "numeric"


@dataclass(frozen=True)
class Domain:
    """The public domain of an attribute.

    Parameters
    ----------
    bounds : tuple of float, optional
        ``(low, high)`` of a numeric attribute.
    categories : tuple of str, optional
        The categories of a categorical attribute, in code order.
    declared : bool
        True when the data owner declared it (public), False when it was inferred
        from the data (then a private run over it is not private).
    complete : bool
        True when the data owner declared that the attribute has no missing value
        (checked when the data are read): then ``[x ≤ t]`` is exactly ``¬[x > t]``
        and the normal form may simplify with it, in private runs too.
    transform : {None, "log", "linear", "integers"} or a member of :data:`dprm.data.grid.GRID_FAMILY`
        The grid of a numeric attribute's thresholds in private runs
        (:func:`dprm.data.grid.public_grid`): declared by the data owner (``"log"``:
        equally spaced in ``log(1 + x)``, for heavy-tailed values; ``"linear"``), or
        chosen privately at the start of a run (:mod:`dprm.mining.private_grids`;
        None until then: equally wide).
    """

    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    declared: bool = False
    complete: bool = False
    transform: str | None = None


def valid_bounds(low: float, high: float) -> bool:
    """Whether ``(low, high)`` may be a numeric domain's bounds: finite, with ``low <= high``.

    The rule of a types file's ``bounds`` (docs/data.md), for every reader of declared
    bounds: ``low == high`` declares a column of one value.

    Examples
    --------
    >>> valid_bounds(0.0, 1.0), valid_bounds(2.0, 2.0), valid_bounds(1.0, 0.0), valid_bounds(0.0, float("inf"))
    (True, True, False, False)
    """
    return math.isfinite(low) and math.isfinite(high) and low <= high


@dataclass
class Attribute:
    """One typed column of a view.

    Examples
    --------
    >>> import numpy as np
    >>> a = Attribute("smoker", "left", AttributeKind.BOOLEAN, np.array([1, 0, -1], dtype=np.int8))
    >>> a.missing.tolist()
    [False, False, True]
    """

    name: str
    view: str
    kind: AttributeKind
    values: np.ndarray = field(repr=False)  # the rows: never in a repr (a log line, a traceback)
    domain: Domain = field(default_factory=Domain)

    @property
    def missing(self) -> np.ndarray:
        """Boolean mask of the rows where this attribute has no value."""
        if self.kind is AttributeKind.NUMERIC:
            return np.isnan(self.values)
        return self.values < 0

    @property
    def n_rows(self) -> int:
        return int(self.values.shape[0])


@dataclass
class View:
    """The attributes of one side (``"left"`` or ``"right"``) of a two-view dataset.

    ``constant`` lists the columns that were left out of the search because they
    hold a single value (or none); ``renamed`` maps each renamed duplicate column to
    its original name; ``source`` names where the view was read from.

    ``notes`` says, one self-contained line each, every change the loader made
    without being asked: a first column that looks like an id mined as an attribute
    (the rows matched by position), a duplicate column renamed, a column read as
    categorical because not all its values are numbers, ``NaN`` read as missing,
    values clamped into their declared domain, empty and constant columns left out.
    Notes name files, columns and at most a row number, never a value; they are for
    the data owner (the command line prints each as ``note: ...``).

    ``spellings``: for a shard of a sharded engine (``load_two_view(...,
    boolean_spellings=True)``), each inferred Boolean column's
    :func:`~dprm.data.inference.boolean_spellings`, with which the shards tell whether
    it is Boolean in all the rows (empty otherwise).
    """

    name: str
    attributes: list[Attribute]
    source: str = "<memory>"
    constant: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    spellings: dict[str, tuple[bool, frozenset[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_name = {a.name: a for a in self.attributes}

    def __getitem__(self, name: str) -> Attribute:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"{self.name} view has no attribute {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.attributes]

    def __repr__(self) -> str:
        """A summary: the view's name, source and attributes by kind; no value of the rows.

        Examples
        --------
        >>> import numpy as np
        >>> View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, np.zeros(3, dtype=np.int8))])
        View('left', source='<memory>', 1 attribute: 1 boolean)
        """
        kinds = Counter(a.kind.value for a in self.attributes)
        parts = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        count = len(self.attributes)
        return (f"View({self.name!r}, source={self.source!r}, {count} attribute{'s' if count != 1 else ''}"
                + (f": {parts})" if parts else ")"))


@dataclass
class TwoViewData:
    """Two views over the same, row-aligned entities.

    ``ids`` holds the entity ids when an id column was given or detected, and
    ``id_column`` where they were read: the view's number (0 left, 1 right) and the
    column's name. ``rows_read`` is the number of rows the loader read, which says
    ``n_rows`` where neither an attribute nor the ids hold them (every column left
    out as constant).
    ``n_rows`` is private in a private run: miners never release it.
    """

    left: View
    right: View
    ids: np.ndarray | None = None
    id_column: tuple[int, str] | None = None
    rows_read: int | None = None

    def __post_init__(self) -> None:
        sizes = {a.n_rows for a in self.left} | {a.n_rows for a in self.right}
        if len(sizes) > 1:
            raise ValueError(f"attributes have differing row counts: {sorted(sizes)}")
        if sizes:
            self._n_rows = sizes.pop()
        else:  # every column left out: the ids, else the loader's count
            self._n_rows = len(self.ids) if self.ids is not None else self.rows_read or 0

    @property
    def n_rows(self) -> int:
        return self._n_rows

    def __repr__(self) -> str:
        """A summary of both views and the row count; no value of the rows (a 600-row table printed 1,800 lines).

        Examples
        --------
        >>> a = Attribute("a", "left", AttributeKind.BOOLEAN, np.zeros(3, dtype=np.int8))
        >>> b = Attribute("b", "right", AttributeKind.NUMERIC, np.zeros(3))
        >>> TwoViewData(View("left", [a]), View("right", [b]))
        TwoViewData(3 rows, left=View('left', source='<memory>', 1 attribute: 1 boolean), right=View('right', source='<memory>', 1 attribute: 1 numeric))
        """
        return f"TwoViewData({self.n_rows:,} rows, left={self.left!r}, right={self.right!r})"

    @property
    def notes(self) -> list[str]:
        """The notes of both views (see :attr:`View.notes`), left first."""
        return [*self.left.notes, *self.right.notes]

    @property
    def views(self) -> tuple[View, View]:
        return (self.left, self.right)

    def with_transforms(self, transforms: Mapping[tuple[int, str], str]) -> "TwoViewData":
        """The same rows with the grid ``transforms[(side, name)]`` in those attributes' domains.

        The values are shared, not copied. For the grids a private run chose
        (:mod:`dprm.mining.private_grids`): the literal index then cuts each such
        attribute on that grid (:func:`dprm.data.grid.public_grid`).

        Examples
        --------
        >>> x = Attribute("x", "left", AttributeKind.NUMERIC, np.array([1.0, 50.0]), Domain((0.0, 100.0), declared=True))
        >>> y = Attribute("y", "right", AttributeKind.BOOLEAN, np.array([0, 1], dtype=np.int8))
        >>> data = TwoViewData(View("left", [x]), View("right", [y]))
        >>> data.with_transforms({(0, "x"): "log:100"}).left["x"].domain.transform
        'log:100'
        """
        views = []
        for side, view in enumerate(self.views):
            attributes = [a if (side, a.name) not in transforms else
                          replace(a, domain=replace(a.domain, transform=transforms[(side, a.name)]))
                          for a in view.attributes]
            views.append(replace(view, attributes=attributes))
        return TwoViewData(views[0], views[1], self.ids, self.id_column, self.rows_read)

    def view(self, side: str | int) -> View:
        """The view named ``"left"``/``"right"`` or numbered 0/1."""
        if side in (0, "left"):
            return self.left
        if side in (1, "right"):
            return self.right
        raise ValueError(f"no view {side!r}: use 'left' or 'right'")

    @property
    def domains_declared(self) -> bool:
        """True when every attribute's domain was declared by the data owner."""
        return all(a.domain.declared for v in self.views for a in v)


def require_attributes(views: Iterator[View] | list[View] | tuple[View, ...]) -> None:
    """A :class:`~dprm.errors.ParameterError` naming the first view without a usable attribute.

    Examples
    --------
    >>> require_attributes([View("left", [], source="l.csv")])
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: the left view (l.csv) has no usable attribute (constant and empty columns are left out)
    """
    for view in views:
        if len(view) == 0:
            raise ParameterError(f"the {view.name} view ({view.source}) has no usable attribute "
                                 "(constant and empty columns are left out)")
