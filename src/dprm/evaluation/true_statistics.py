"""True statistics of released redescriptions, beside their noisy ones (issue 4, part 1).

For a redescriptions document (spec/redescriptions.md) and the data it was mined
from, :func:`true_statistics` re-evaluates every redescription's two queries on the
data and returns one row per redescription with the released (``noisy_*``) and the
true (``true_*``) statistics and the errors of the noisy ones. The true values are
exactly the spec's definitions:

* ``true_support_left = |supp(qL)|``, ``true_support_right = |supp(qR)|``;
* ``true_intersection = |supp(qL) ∩ supp(qR)|``, ``true_union = |supp(qL) ∪ supp(qR)|``;
* ``true_jaccard = intersection / union`` (0 when the union is empty);
* ``true_pvalue = P[X ≥ intersection]``, ``X ~ Binomial(n, (sL/n)(sR/n))`` with ``n``
  the number of rows (:func:`dprm.queries.p_value`);
* ``true_excess_jaccard = true_jaccard − J_ind``, ``J_ind = e / (sL + sR − e)``,
  ``e = sL·sR/n``: the excess over the Jaccard index of two independent queries of the
  same sizes (:func:`dprm.queries.excess_jaccard`), which tells real structure from
  large near-independent pairs.

Errors: ``abs_error_jaccard = |noisy_jaccard − true_jaccard|`` and
``error_intersection = noisy_intersection − true_intersection`` (positive when the
release over-states the overlap).

Confidence intervals. When a redescription carries an ``interval`` entry (an
``extra`` key beside the spec's keys), its Jaccard interval is read into
``jaccard_low`` / ``jaccard_high`` and ``true_jaccard_in_interval`` says whether the
true Jaccard lies inside (``low ≤ true ≤ high``). Accepted forms of the entry::

    {"jaccard": [low, high], ...}             # per statistic, a pair (what
                                              # dprm.mining.private_extraction writes)
    {"jaccard": {"low": l, "high": h}, ...}   # per statistic, named ends
    {"jaccard_low": l, "jaccard_high": h}     # flat
    [low, high]                               # the Jaccard interval alone

These columns appear when at least one redescription has an interval; rows without
one hold NaN (``true_jaccard_in_interval`` is a nullable Boolean, ``<NA>``).

Where the rows are counted. The data may be a :class:`~dprm.data.attributes.TwoViewData`
or a counting engine (:mod:`dprm.engine`). Either way the supports are evaluated by a
:class:`SupportCounts` worker beside the rows (:meth:`CountingEngine.workers
<dprm.engine.base.CountingEngine.workers>`): in-process one worker on all the rows,
called directly; on a :class:`~dprm.engine.ray_engine.RayEngine` one worker in every
shard, each counting its own rows. What crosses the network is the released queries
(public output) one way and three integer arrays (support sizes of the distinct left
and right queries, the intersection of each redescription's pair) the other way;
the driver adds the shards' arrays. The shards hold disjoint rows, so every sum is
the count over all rows, exactly, and every statistic below (Jaccard, p-value) is a
function of these counts and the number of rows: the same figures as in-process.

Speed: each distinct query (by its JSON text) is evaluated once, each distinct pair
of supports intersected once; the counts are vectorised numpy. This is a local tool
for people who may see the data: it uses the true number of rows.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dprm.data.attributes import TwoViewData
from dprm.data.literal_index import pack_rows, popcount
from dprm.engine import CountingEngine, as_engine
from dprm.errors import DprmError
from dprm.queries import document_redescriptions, excess_jaccard, p_value, read_document, to_text

__all__ = ["true_statistics", "SupportCounts", "STATISTICS_COLUMNS", "INTERVAL_COLUMNS"]

#: The columns of :func:`true_statistics`, in order (without the interval columns).
STATISTICS_COLUMNS: tuple[str, ...] = (
    "index",
    "pruned",
    "left_text",
    "right_text",
    "noisy_support_left",
    "noisy_support_right",
    "noisy_intersection",
    "noisy_union",
    "noisy_jaccard",
    "noisy_pvalue",
    "true_support_left",
    "true_support_right",
    "true_intersection",
    "true_union",
    "true_jaccard",
    "true_pvalue",
    "true_excess_jaccard",
    "abs_error_jaccard",
    "error_intersection",
)

#: The columns added when some redescription carries an ``interval``.
INTERVAL_COLUMNS: tuple[str, ...] = ("jaccard_low", "jaccard_high", "true_jaccard_in_interval")

_NOISY_KEYS = {
    "noisy_support_left": "support_left",
    "noisy_support_right": "support_right",
    "noisy_intersection": "intersection",
    "noisy_union": "union",
    "noisy_jaccard": "jaccard",
    "noisy_pvalue": "p_value",
}


def _number(value: Any) -> float:
    """A finite float, or NaN for anything else (None, text, booleans, infinities)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return math.nan
    value = float(value)
    return value if math.isfinite(value) else math.nan


def _jaccard_interval(interval: Any) -> tuple[float, float] | None:
    """The ``(low, high)`` Jaccard interval of an ``interval`` entry (see the module docstring)."""
    if interval is None:
        return None
    if isinstance(interval, dict):
        if "jaccard" in interval:
            return _jaccard_interval(interval["jaccard"])
        if "jaccard_low" in interval or "jaccard_high" in interval:
            return _number(interval.get("jaccard_low")), _number(interval.get("jaccard_high"))
        if "low" in interval or "high" in interval:
            return _number(interval.get("low")), _number(interval.get("high"))
        return None
    if isinstance(interval, (list, tuple)) and len(interval) == 2:
        return _number(interval[0]), _number(interval[1])
    return None


def _empty_frame(with_interval: bool = False) -> pd.DataFrame:
    columns = list(STATISTICS_COLUMNS) + (list(INTERVAL_COLUMNS) if with_interval else [])
    frame = pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    frame["index"] = frame["index"].astype(np.int64)
    frame["pruned"] = frame["pruned"].astype(bool)
    for c in ("left_text", "right_text"):
        frame[c] = frame[c].astype(object)
    for c in ("true_support_left", "true_support_right", "true_intersection", "true_union"):
        frame[c] = frame[c].astype(np.int64)
    if with_interval:
        frame["true_jaccard_in_interval"] = frame["true_jaccard_in_interval"].astype("boolean")
    return frame


def true_statistics(document: dict | str | os.PathLike, data: "TwoViewData | CountingEngine") -> pd.DataFrame:
    """Noisy and true statistics of every redescription of a document, one row each.

    Parameters
    ----------
    document : dict or path
        A redescriptions document (``dprm.redescriptions/1``): the decoded dict, or
        the path of its JSON file (read with :func:`dprm.queries.read_document`).
        Either way it is validated first.
    data : TwoViewData or CountingEngine
        The data the redescriptions were mined from (same attribute names), or an
        engine holding it (:mod:`dprm.engine`): the supports are then counted where
        the rows are (each shard of a :class:`~dprm.engine.ray_engine.RayEngine`
        counts its rows, the driver adds the counts; see :class:`SupportCounts`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`STATISTICS_COLUMNS` (``index`` is the position in the
        document's ``redescriptions`` list), plus :data:`INTERVAL_COLUMNS` when some
        redescription carries an ``interval``. A missing noisy p-value is NaN.
        An empty document gives an empty frame with these columns.

    Raises
    ------
    DprmError
        When the document is invalid, or a query names an attribute the data lacks
        (the message says which redescription).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import Attribute, AttributeKind, TwoViewData, View
    >>> from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats, make_document
    >>> left = View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, np.array([1, 1, 1, 0], np.int8))])
    >>> right = View("right", [Attribute("b", "right", AttributeKind.BOOLEAN, np.array([1, 1, 0, 0], np.int8))])
    >>> noisy = RedescriptionStats.from_counts(3.2, 2.6, 2.4)
    >>> privacy = {"epsilon": 1.0, "neighbouring": "add-remove-one-row", "guarantee": "pure-dp", "private": True,
    ...            "reasons": [], "ledger": [{"step": "counts", "mechanism": "discrete-laplace count", "epsilon": 1.0}]}
    >>> doc = make_document("example", {}, privacy, [Redescription(BooleanLiteral("a"), BooleanLiteral("b"), noisy)])
    >>> row = true_statistics(doc, TwoViewData(left, right)).iloc[0]
    >>> int(row.true_intersection), int(row.true_union), float(row.true_jaccard)
    (2, 3, 0.6666666666666666)
    >>> round(float(row.error_intersection), 6), round(float(row.abs_error_jaccard), 4)
    (0.4, 0.0392)
    """
    if isinstance(document, dict):
        doc = document
        redescriptions = document_redescriptions(doc, source="document")
    elif isinstance(document, (str, os.PathLike, Path)):
        doc, redescriptions = read_document(document)
    else:
        raise DprmError(f"true_statistics needs a document dict or a path, got {type(document).__name__}")
    raw = doc["redescriptions"]
    if not raw:
        return _empty_frame()

    engine = as_engine(data)
    n_rows = engine.n_rows
    size = len(raw)
    numbers: tuple[dict[str, int], dict[str, int]] = ({}, {})  # a distinct query (its JSON text) -> its number
    queries: tuple[list, list] = ([], [])
    labels: tuple[list[str], list[str]] = ([], [])
    pairs = np.empty((size, 2), dtype=np.int64)
    for i in range(size):
        for side, name in enumerate(("left", "right")):
            key = json.dumps(raw[i][name], sort_keys=True)
            if key not in numbers[side]:
                numbers[side][key] = len(queries[side])
                queries[side].append(getattr(redescriptions[i], name))
                labels[side].append(f"redescriptions[{i}].{name}")
            pairs[i, side] = numbers[side][key]
    workers = engine.workers(SupportCounts)
    try:
        sizes_left, sizes_right, intersections = workers.sum("counts", queries[0], queries[1], labels, pairs)
    finally:
        workers.close()
    sl = np.asarray(sizes_left, dtype=np.int64)[pairs[:, 0]]
    sr = np.asarray(sizes_right, dtype=np.int64)[pairs[:, 1]]
    inter = np.asarray(intersections, dtype=np.int64)
    union = sl + sr - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        jaccard = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
    pvalues = np.asarray(p_value(inter, sl, sr, n_rows), dtype=np.float64).reshape(size)

    columns: dict[str, Any] = {
        "index": np.arange(size, dtype=np.int64),
        "pruned": np.array([r.pruned for r in redescriptions], dtype=bool),
        "left_text": [raw[i].get("left_text") or to_text(r.left) for i, r in enumerate(redescriptions)],
        "right_text": [raw[i].get("right_text") or to_text(r.right) for i, r in enumerate(redescriptions)],
    }
    for column, key in _NOISY_KEYS.items():
        columns[column] = np.array([_number(obj["noisy"].get(key)) for obj in raw], dtype=np.float64)
    columns.update(
        true_support_left=sl,
        true_support_right=sr,
        true_intersection=inter,
        true_union=union,
        true_jaccard=jaccard,
        true_pvalue=pvalues,
        true_excess_jaccard=excess_jaccard(jaccard, sl, sr, n_rows),
    )
    columns["abs_error_jaccard"] = np.abs(columns["noisy_jaccard"] - jaccard)
    columns["error_intersection"] = columns["noisy_intersection"] - inter

    intervals = [_jaccard_interval(obj.get("interval")) for obj in raw]
    if any(interval is not None for interval in intervals):
        low = np.array([math.nan if iv is None else iv[0] for iv in intervals], dtype=np.float64)
        high = np.array([math.nan if iv is None else iv[1] for iv in intervals], dtype=np.float64)
        known = ~(np.isnan(low) & np.isnan(high))
        # a missing end is unbounded on that side
        inside = (np.isnan(low) | (low <= jaccard)) & (np.isnan(high) | (jaccard <= high))
        columns["jaccard_low"] = low
        columns["jaccard_high"] = high
        columns["true_jaccard_in_interval"] = pd.array(
            [bool(inside[i]) if known[i] else None for i in range(size)], dtype="boolean")
    return pd.DataFrame(columns)


class SupportCounts:
    """A worker beside the rows (one per shard): support sizes and intersections of queries.

    Built by :meth:`CountingEngine.workers <dprm.engine.base.CountingEngine.workers>`
    on the rows of one shard (or on all rows in-process); its answers are counts of
    these rows only, so the answers of disjoint shards add up to the counts over all
    rows (:meth:`~dprm.engine.workers.ShardWorkers.sum`).

    Parameters
    ----------
    data : TwoViewData
        The rows this worker counts.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import Attribute, AttributeKind, TwoViewData, View
    >>> from dprm.queries import BooleanLiteral
    >>> left = View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, np.array([1, 1, 1, 0], np.int8))])
    >>> right = View("right", [Attribute("b", "right", AttributeKind.BOOLEAN, np.array([1, 1, 0, 0], np.int8))])
    >>> worker = SupportCounts(TwoViewData(left, right))
    >>> sizes_left, sizes_right, both = worker.counts([BooleanLiteral("a")], [BooleanLiteral("b")],
    ...                                               (["q0"], ["q1"]), np.array([[0, 0]]))
    >>> sizes_left.tolist(), sizes_right.tolist(), both.tolist()
    ([3], [2], [2])
    """

    def __init__(self, data: TwoViewData) -> None:
        self._data = data

    def _supports(self, side: str, queries: list, labels: list[str]) -> list[np.ndarray]:
        """Each query's support on these rows, packed (:func:`~dprm.data.literal_index.pack_rows`)."""
        view, n_rows = self._data.view(side), self._data.n_rows
        masks = []
        for query, label in zip(queries, labels):
            try:
                mask = np.asarray(query.support(view), dtype=bool)
            except (DprmError, KeyError, TypeError, ValueError) as err:
                message = err.args[0] if err.args else str(err)
                raise DprmError(f"{label}: {message}") from None
            if mask.shape != (n_rows,):
                raise DprmError(f"{label}: support has shape {mask.shape}, expected ({n_rows},)")
            masks.append(pack_rows(mask))  # 64 rows a word: a document's supports in 1/8 of the bytes
        return masks

    def counts(self, left: list, right: list, labels: tuple[list[str], list[str]],
               pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows of this worker in each query's support, and in both supports of each pair.

        Parameters
        ----------
        left, right : list of Query
            The distinct queries of each side.
        labels : (list of str, list of str)
            How an error names each query (e.g. ``"redescriptions[3].left"``).
        pairs : ndarray of shape (n, 2)
            Numbers of a left and a right query.

        Returns
        -------
        (ndarray, ndarray, ndarray)
            ``|supp(left[i])|``, ``|supp(right[j])|`` and, per pair,
            ``|supp(left[i]) ∩ supp(right[j])|``, as ``int64``.
        """
        left_masks = self._supports("left", left, labels[0])
        right_masks = self._supports("right", right, labels[1])
        both: dict[tuple[int, int], int] = {}
        intersections = np.empty(len(pairs), dtype=np.int64)
        for row, (i, j) in enumerate(np.asarray(pairs, dtype=np.int64).reshape(-1, 2).tolist()):
            if (i, j) not in both:
                both[(i, j)] = int(popcount(left_masks[i] & right_masks[j]))
            intersections[row] = both[(i, j)]
        return (np.array([popcount(m) for m in left_masks], dtype=np.int64),
                np.array([popcount(m) for m in right_masks], dtype=np.int64), intersections)
