"""Paging of the analyst's own lists (``/v1/ledger``, ``/v1/jobs``): newest first, by a cursor.

A page is the newest ``limit`` rows of the list older than the cursor. The cursor is
a row's *ordinal* in the analyst's own list (1 for its oldest row, counted with the
request's filters), not the row's id: ids are shared by all analysts, so an id would
tell how many rows the others made meanwhile. An answer says where the next, older,
page starts (``"next"``: send it as ``?before=``), or ``null`` when it holds the
oldest row; ``"truncated"`` is true when there are more. Rows are never deleted and
new rows are newer than every shown one, so a cursor stays valid while the list grows:
following ``next`` from the first page reads every row once.

Examples
--------
>>> page_bounds(total=2500, limit=1000, before=None)
(1501, 2500, 1501)
>>> page_bounds(total=2500, limit=1000, before=501)
(1, 500, None)
>>> page_bounds(total=0, limit=1000, before=None)
(1, 0, None)
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

__all__ = ["newest_page", "page_bounds"]


def page_bounds(total: int, limit: int, before: int | None) -> tuple[int, int, int | None]:
    """``(first, last, next)``: the ordinals of a page's oldest and newest rows, and the next cursor.

    Parameters
    ----------
    total : int
        The rows of the list.
    limit : int
        The most rows of a page (≥ 1).
    before : int or None
        The cursor: only rows with an ordinal below it; None for the newest page.
    """
    last = total if before is None else min(before - 1, total)
    first = max(last - limit + 1, 1)
    return first, last, (first if first > 1 and last >= first else None)


def newest_page(connection: Any, query: Any, key: Any, limit: int, before: int | None) -> tuple[list[Any], int | None]:
    """A page of ``query``'s rows, newest (highest ``key``) first, and the next cursor.

    Parameters
    ----------
    connection : sqlalchemy.engine.Connection
    query : sqlalchemy.sql.Select
        The list: its columns and filters, without order or limit.
    key : sqlalchemy.sql.ColumnElement
        The column that orders the rows from oldest to newest (an increasing id).
    limit, before : int, int or None
        As :func:`page_bounds`.
    """
    total = connection.execute(select(func.count()).select_from(query.subquery())).scalar_one()
    first, last, following = page_bounds(int(total), limit, before)
    if last < first:
        return [], None
    rows = connection.execute(query.order_by(key.asc()).offset(first - 1).limit(last - first + 1)).all()
    return rows[::-1], following
