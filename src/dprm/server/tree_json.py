"""The JSON form of a decision tree the analyst sends (the [inv] leaf-pair counts).

A tree over one view is a JSON object of one of two forms::

    {"leaf": true}
    {"split": LITERAL, "yes": TREE, "no": TREE}

``LITERAL`` is a literal of dprm's query JSON (spec/redescriptions.md) that splits
the rows: ``{"attr": "A", "eq": true}`` (Boolean), ``{"attr": "A", "eq": "red"}``
(categorical), or a numeric literal with exactly one comparison
(``{"attr": "A", "le": 3.5}``; ``gt``, ``ge``, ``lt`` alike). A row goes ``yes`` where
the literal holds, ``no`` where the attribute has a value and the literal does not
hold, and drops out of the tree where the attribute is missing (as in
:class:`dprm.trees.tree.Tree`). Leaves are numbered depth first, ``yes`` before
``no``; the rows that dropped out form one more cell, the *residual*, numbered
``n_leaves``. So the cells partition the rows and a pair of trees gives the
``(n_L + 1) × (n_R + 1)`` table of disjoint cells that the miners release with one
discrete-Laplace histogram (:mod:`dprm.mining.private_extraction`, ``counts="cells"``).

Each leaf's query is the conjunction of the literals on its path, with the ``no``
branch written as the complementary literal (``A = false``; the other categories;
``A > 3.5`` for ``A ≤ 3.5``), so that, like every literal, it is false where the
attribute is missing: the query's support is exactly the leaf's rows.

Examples
--------
>>> schema = [{"name": "a", "type": "boolean"}, {"name": "x", "type": "numeric", "bounds": [0, 10]}]
>>> tree = tree_from_json({"split": {"attr": "a", "eq": True},
...                        "yes": {"split": {"attr": "x", "le": 3}, "yes": {"leaf": True}, "no": {"leaf": True}},
...                        "no": {"leaf": True}}, schema)
>>> tree.n_leaves, [str(q) for q in tree.leaf_queries()]
(3, ['a ∧ [x ≤ 3]', 'a ∧ [x > 3]', '[a = false]'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dprm.errors import DprmError
from dprm.queries import And, BooleanLiteral, CategoricalLiteral, NumericLiteral, Or, Query, query_from_json
from dprm.queries.implication import disjoint
from dprm.server.public_domain import OutsideDomainError, split_problem

__all__ = ["MAX_TREE_DEPTH", "JsonTree", "tree_from_json"]

#: The deepest tree accepted (at most 2**8 = 256 leaves per tree).
MAX_TREE_DEPTH = 8

_COMPLEMENT = {"le": "gt", "gt": "le", "lt": "ge", "ge": "lt"}


@dataclass(frozen=True)
class _Node:
    split: Any  # a Literal, or None for a leaf
    yes: "_Node | None" = None
    no: "_Node | None" = None


def _schema_entry(schema: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((entry for entry in schema if entry["name"] == name), None)


def _complement(literal: Any, entry: dict[str, Any]) -> Query:
    if isinstance(literal, BooleanLiteral):
        return BooleanLiteral(literal.attr, not literal.value)
    if isinstance(literal, CategoricalLiteral):
        others = [CategoricalLiteral(literal.attr, c) for c in entry["categories"] if c != literal.category]
        return others[0] if len(others) == 1 else Or(*others)
    (key, value), = literal.bounds().items()
    return NumericLiteral(literal.attr, **{_COMPLEMENT[key]: value})


def _check_split(literal: Any, schema: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """The split's schema entry, after checking the literal fits the attribute."""
    entry = _schema_entry(schema, literal.attr)
    if entry is None:
        raise DprmError(f"{where}: this view has no attribute {literal.attr!r}")
    kind = entry["type"]
    if isinstance(literal, BooleanLiteral) and kind != "boolean":
        raise DprmError(f"{where}: {literal.attr!r} is {kind}, not boolean")
    if isinstance(literal, CategoricalLiteral):
        if kind != "categorical":
            raise DprmError(f"{where}: {literal.attr!r} is {kind}, not categorical")
    if isinstance(literal, NumericLiteral):
        if kind != "numeric":
            raise DprmError(f"{where}: {literal.attr!r} is {kind}, not numeric")
        if len(literal.bounds()) != 1:
            raise DprmError(f"{where}: a numeric split has exactly one of gt, ge, lt, le")
    # an undeclared category, a one-category attribute, [x > 100] on [0, 100]: a branch empty whatever the rows
    problem = split_problem(literal, entry, where)
    if problem is not None:
        raise OutsideDomainError(problem)
    return entry


class JsonTree:
    """A validated tree over one view (see the module docstring).

    Attributes
    ----------
    n_leaves : int
        Number of leaves; the residual cell is number ``n_leaves``.
    """

    def __init__(self, root: _Node, schema: list[dict[str, Any]]) -> None:
        self._root = root
        self._schema = schema
        self._paths: list[list[tuple[Any, bool]]] = []
        self._collect(root, [])
        self.n_leaves = len(self._paths)

    def _collect(self, node: _Node, path: list[tuple[Any, bool]]) -> None:
        if node.split is None:
            self._paths.append(path)
            return
        self._collect(node.yes, path + [(node.split, True)])
        self._collect(node.no, path + [(node.split, False)])

    def leaf_queries(self) -> list[Query | None]:
        """The query of each leaf (None for a tree that is a single leaf: all rows)."""
        out: list[Query | None] = []
        for path in self._paths:
            literals: list[Query] = []
            intervals: dict[str, dict[str, float]] = {}
            for literal, holds in path:
                entry = _schema_entry(self._schema, literal.attr)
                query = literal if holds else _complement(literal, entry)
                if isinstance(query, NumericLiteral):
                    bounds = intervals.setdefault(query.attr, {})
                    for key, value in query.bounds().items():
                        tighter = max if key in ("gt", "ge") else min
                        bounds[key] = tighter(bounds.get(key, value), value)
                    continue
                if query not in literals:
                    literals.append(query)
            literals += [NumericLiteral(name, **bounds) for name, bounds in intervals.items()]
            out.append(None if not literals else literals[0] if len(literals) == 1 else And(*literals))
        return out

    def cells(self, view: Any) -> np.ndarray:
        """The cell of every row of ``view``: its leaf number, or ``n_leaves`` (dropped out)."""
        n = view.attributes[0].n_rows if len(view) else 0
        cells = np.full(n, self.n_leaves, dtype=np.int64)
        counter = [0]

        def route(node: _Node, rows: np.ndarray) -> None:
            if node.split is None:
                cells[rows] = counter[0]
                counter[0] += 1
                return
            holds = node.split.support(view)[rows]
            present = ~view[node.split.attr].missing[rows]
            route(node.yes, rows[holds])
            route(node.no, rows[present & ~holds])

        route(self._root, np.arange(n))
        return cells


def tree_from_json(obj: Any, schema: list[dict[str, Any]], *, where: str = "tree") -> JsonTree:
    """Read and check a tree against one view's public schema (attribute entries).

    Raises
    ------
    DprmError
        Naming where in the tree the problem is (the message depends only on the
        request and the public schema).
    """

    def parse(node: Any, at: str, depth: int, path: tuple[Query, ...]) -> _Node:
        if not isinstance(node, dict):
            raise DprmError(f"{at}: a tree node must be a JSON object")
        if "leaf" in node:
            if set(node) != {"leaf"} or node["leaf"] is not True:  # not 1 or 1.0, which equal True
                raise DprmError(f"{at}: a leaf is exactly {{\"leaf\": true}}")
            return _Node(None)
        unknown = sorted(set(node) - {"split", "yes", "no"})
        if unknown:
            raise DprmError(f"{at}: unknown key {unknown[0]!r} (a node has 'split', 'yes', 'no')")
        for key in ("split", "yes", "no"):
            if key not in node:
                raise DprmError(f"{at}: missing key {key!r}")
        if depth >= MAX_TREE_DEPTH:
            raise DprmError(f"{at}: the tree is deeper than {MAX_TREE_DEPTH}")
        split = node["split"]
        if not isinstance(split, dict) or "attr" not in split:
            raise DprmError(f"{at}.split: must be a literal such as {{\"attr\": \"A\", \"le\": 3}}")
        literal = query_from_json(split, where=f"{at}.split")
        entry = _check_split(literal, schema, f"{at}.split")
        complement = _complement(literal, entry)
        # the splits above decide this one (a repeated split, [x ≤ 5] under [x ≤ 3]): a branch empty whatever
        # the rows, as a split outside the declared domain (the request alone says so)
        above = And(*path) if len(path) > 1 else path[0] if path else None
        if above is not None and (disjoint(above, literal) or disjoint(above, complement)):
            raise OutsideDomainError(f"{at}.split: the splits above it leave one of its branches empty whatever "
                                     f"the rows")
        return _Node(literal, parse(node["yes"], f"{at}.yes", depth + 1, path + (literal,)),
                     parse(node["no"], f"{at}.no", depth + 1, path + (complement,)))

    return JsonTree(parse(obj, where, 0, ()), schema)
