"""Reading python-clired's queries file (what a baseline run writes) into dprm queries.

``exec_clired`` writes its redescriptions into a tab-separated ``.queries`` file:
a header (``rid  query_LHS  query_RHS  acc  pval  card_Exo ...``) and one line per
redescription. :func:`read_clired_queries` reads it into :class:`CliredLine` objects:
the two queries, parsed with :func:`dprm.queries.clired_parser.parse_clired_query`
(the query syntax, and how its negations and intervals are read), and clired's own
figures as written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from dprm.errors import DprmError
from dprm.queries.base import Query
from dprm.queries.clired_parser import parse_clired_query

__all__ = ["read_clired_queries", "CliredLine"]


@dataclass(frozen=True)
class CliredLine:
    """One redescription of a queries file: its two queries and clired's own figures.

    ``fields`` holds the other columns of the line by header name (text as written),
    e.g. ``{"acc": "0.837", "card_Exx": "340"}``; ``line`` is the 1-based line number.
    """

    left: Query
    right: Query
    fields: dict[str, str] = field(default_factory=dict)
    line: int = 0


def read_clired_queries(
    path: str | os.PathLike,
    *,
    columns: tuple[Sequence[str], Sequence[str]] | None = None,
    categories: Mapping[str, Mapping[str, str]] | None = None,
) -> list[CliredLine]:
    """Read a clired queries file (tab-separated: left query, right query, statistics).

    The header names the columns; the queries are in ``query_LHS`` and
    ``query_RHS`` (clired's names). A file without such a header holds the left
    and right queries in its first two columns. Empty lines are skipped.

    Parameters
    ----------
    path : path-like
    columns : pair of sequences of str, optional
        Column names of the left and the right side (see :func:`parse_clired_query`).
    categories : mapping, optional
        Recoded categories, as in :func:`parse_clired_query` (attribute names of
        both sides).

    Raises
    ------
    DprmError
        When the file cannot be read, or a query cannot be parsed (the message
        names the file and the line).

    Examples
    --------
    >>> import tempfile, os
    >>> from dprm.queries import BooleanLiteral, NumericLiteral, Redescription, RedescriptionStats
    >>> from dprm.queries import write_clired_queries
    >>> r = Redescription(BooleanLiteral("smoker"), NumericLiteral("age", gt=40),
    ...                   RedescriptionStats.from_counts(10, 12, 8))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_clired_queries([r], os.path.join(d, "out.queries"))
    ...     [line] = read_clired_queries(os.path.join(d, "out.queries"))
    >>> line.left == r.left, line.right.support is not None, line.fields["card_Exx"]
    (True, True, '8')
    """
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as err:
        raise DprmError(f"{name}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise DprmError(f"{name}: not UTF-8 text") from None
    out: list[CliredLine] = []
    header: list[str] | None = None
    left_at, right_at = 0, 1
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if header is None and not out and "query_LHS" in cells and "query_RHS" in cells:
            header = cells
            left_at, right_at = cells.index("query_LHS"), cells.index("query_RHS")
            continue
        if len(cells) <= max(left_at, right_at):
            raise DprmError(f"{name}: line {number}: expected a left and a right query separated by a tab")
        try:
            left = parse_clired_query(cells[left_at], columns=None if columns is None else columns[0],
                                      categories=categories)
            right = parse_clired_query(cells[right_at], columns=None if columns is None else columns[1],
                                       categories=categories)
        except DprmError as err:
            raise DprmError(f"{name}: line {number}: {err}") from None
        names = header or [f"column{i}" for i in range(len(cells))]
        fields = {k: v for k, v, i in zip(names, cells, range(len(cells))) if i not in (left_at, right_at)}
        out.append(CliredLine(left, right, fields, number))
    return out
