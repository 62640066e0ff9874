"""The papers' [inv] primitives, on the server's rows, and the task a pool process runs.

Two primitives an analyst can drive their own algorithm with (tree-based paper,
section 4: functions started on the client that compute on the server's data and
return differentially private results):

:func:`redescription_statistics`
    Noisy statistics of a query pair the analyst proposes. One
    ``DiscreteLaplaceHistogram(ε)`` over the four disjoint cells
    ``[[L∩R, L∖R], [R∖L, neither]]`` (every row in exactly one cell: L1 sensitivity 1,
    as :mod:`dprm.mining.serenade.compute_quality` releases a redescription's
    quality); supports, intersection, union, Jaccard index and p-value are sums and
    functions of the noisy cells (post-processing), the data size is their sum, and
    the intervals come from simulating the public noise law
    (:func:`dprm.mining.private_extraction.simulate_tables`, no budget).
:func:`leaf_pair_counts`
    Noisy counts of every (left leaf or residual) × (right leaf or residual) cell of a
    pair of trees the analyst sends (:mod:`dprm.server.tree_json`): disjoint cells,
    one ``DiscreteLaplaceHistogram(ε)``, exactly what the tree-based miners release
    for a tree pair (``counts="cells"``).

Both charge exactly ε to the accountant before any noise is drawn.
:func:`run_primitive` is what a pool process runs: it re-checks the dataset's files
(:func:`dprm.server.datasets.verify_files`), loads the rows (cached per file digest),
computes, and returns the answer with its releases; an error that may depend on the
rows is returned as a generic code, its text only for the owner's log.
"""

from __future__ import annotations

import traceback
from collections import OrderedDict
from fractions import Fraction
from typing import Any

import numpy as np

from dprm.privacy import Accountant, DiscreteLaplaceHistogram
from dprm.privacy.accountant import PURE_DP

__all__ = ["redescription_statistics", "leaf_pair_counts", "run_primitive", "PRIMITIVES"]

#: The primitives by the name used in the API and the ledger.
PRIMITIVES = ("redescription-statistics", "leaf-pair-counts")


def redescription_statistics(data: Any, left: Any, right: Any, epsilon: Fraction | float, accountant: Accountant,
                             *, confidence: float = 0.95, n_simulations: int = 1000,
                             rng: np.random.Generator) -> dict[str, Any]:
    """ε-DP statistics of the redescription ``(left, right)`` on ``data``.

    One discrete Laplace histogram of the four cells (L1 sensitivity 1); the statistics
    and their intervals are post-processing (:func:`~dprm.mining.interval_estimates.table_intervals`:
    intervals that hold their confidence however large the noise is against the counts).

    Examples
    --------
    >>> import pandas as pd
    >>> from dprm.data import load_two_view
    >>> from dprm.privacy import SeededNoise
    >>> from dprm.queries import BooleanLiteral
    >>> rows = 400
    >>> data = load_two_view(pd.DataFrame({"a": np.arange(rows) % 2}), pd.DataFrame({"b": np.arange(rows) % 2}),
    ...                      types={"columns": {"a": "boolean", "b": "boolean"}})
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> out = redescription_statistics(data, BooleanLiteral("a"), BooleanLiteral("b"), 1.0, acc,
    ...                                rng=np.random.default_rng(1))
    >>> acc.spent(), abs(out["noisy"]["jaccard"] - 1.0) < 0.05, sorted(out["cells"])
    (Fraction(1, 1), True, ['both', 'left_only', 'neither', 'right_only'])
    """
    from dprm.mining.interval_estimates import simulate_tables, table_intervals
    from dprm.queries import RedescriptionStats, query_to_json, to_text

    in_left = np.asarray(left.support(data.left), dtype=bool)
    in_right = np.asarray(right.support(data.right), dtype=bool)
    both = int(np.count_nonzero(in_left & in_right))
    only_left = int(np.count_nonzero(in_left)) - both
    only_right = int(np.count_nonzero(in_right)) - both
    exact = np.array([[both, only_left], [only_right, in_left.size - both - only_left - only_right]], dtype=np.int64)
    del in_left, in_right
    mechanism = DiscreteLaplaceHistogram(epsilon)
    table = mechanism.release(accountant, "redescription statistics: cell counts", exact)
    del exact
    # From here on only released values are used.
    t = table.astype(np.float64)
    n_hat = float(t.sum())
    stats = RedescriptionStats.from_counts(t[0, 0] + t[0, 1], t[0, 0] + t[1, 0], t[0, 0], n_hat)
    draws = simulate_tables(table, mechanism.scale, n_simulations, rng)
    interval = table_intervals(table, mechanism.scale, confidence, draws, stats)
    return {
        "left": query_to_json(left), "right": query_to_json(right),
        "left_text": to_text(left), "right_text": to_text(right),
        "noisy": stats.to_json(),
        "data_size": n_hat,
        "cells": {"both": int(table[0, 0]), "left_only": int(table[0, 1]), "right_only": int(table[1, 0]),
                  "neither": int(table[1, 1])},
        "scale": mechanism.scale,
        "interval": interval,
    }


def leaf_pair_counts(data: Any, left_tree: Any, right_tree: Any, epsilon: Fraction | float,
                     accountant: Accountant) -> dict[str, Any]:
    """ε-DP counts of the cells of a pair of trees (residual cells last).

    Examples
    --------
    >>> import pandas as pd
    >>> from dprm.data import load_two_view
    >>> from dprm.privacy import SeededNoise
    >>> from dprm.server.tree_json import tree_from_json
    >>> data = load_two_view(pd.DataFrame({"a": [0, 1] * 50}), pd.DataFrame({"b": [0, 1] * 50}),
    ...                      types={"columns": {"a": "boolean", "b": "boolean"}})
    >>> split = lambda name: {"split": {"attr": name, "eq": True}, "yes": {"leaf": True}, "no": {"leaf": True}}
    >>> trees = [tree_from_json(split(n), [{"name": n, "type": "boolean"}]) for n in "ab"]
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> out = leaf_pair_counts(data, trees[0], trees[1], 1.0, acc)
    >>> np.array(out["counts"]).shape, acc.spent()
    ((3, 3), Fraction(1, 1))
    """
    from dprm.mining.extraction import contingency_table
    from dprm.queries import query_to_json, to_text

    left_cells = left_tree.cells(data.left)
    right_cells = right_tree.cells(data.right)
    exact = contingency_table(left_cells, left_tree.n_leaves + 1, right_cells, right_tree.n_leaves + 1)
    del left_cells, right_cells
    mechanism = DiscreteLaplaceHistogram(epsilon)
    table = mechanism.release(accountant, "leaf-pair counts: cell counts", exact)
    del exact

    def leaves(tree: Any) -> list[dict[str, Any]]:
        return [{"query": None if q is None else query_to_json(q), "text": "(all rows)" if q is None else to_text(q)}
                for q in tree.leaf_queries()]

    return {
        "left_leaves": leaves(left_tree), "right_leaves": leaves(right_tree),
        "counts": table.astype(np.int64).tolist(),
        "data_size": int(table.sum()),
        "scale": mechanism.scale,
        "layout": "rows: left leaves then the left residual (rows dropped out of the left tree); "
                  "columns: right leaves then the right residual",
    }


# -- the task of a pool process ------------------------------------------------------

_DATA_CACHE: "OrderedDict[tuple, Any]" = OrderedDict()
_CACHE_SIZE = 4


def _rows(record: Any) -> Any:
    """The dataset's rows, loaded once per (dataset, file digests) in this process."""
    from dprm.server.datasets import load_registered

    key = (record.id, record.left_sha256, record.right_sha256)
    if key in _DATA_CACHE:
        _DATA_CACHE.move_to_end(key)
        return _DATA_CACHE[key]
    data = load_registered(record)
    _DATA_CACHE[key] = data
    while len(_DATA_CACHE) > _CACHE_SIZE:
        _DATA_CACHE.popitem(last=False)
    return data


def privacy_block(accountant: Accountant) -> dict[str, Any]:
    """The spec's privacy block of a primitive (exact mechanisms: ``pure-dp``; on dummy
    data :func:`dprm.server.dummy.dummy_privacy` makes it ``none``)."""
    block = accountant.privacy_block(PURE_DP)
    reasons = [block.pop("reason")] if "reason" in block else []
    block["private"] = not reasons
    if reasons:
        block["reasons"] = reasons
    return block


def run_primitive(task: dict[str, Any]) -> dict[str, Any]:
    """Compute one primitive (in a pool process); never raises.

    ``task``: ``kind`` (one of :data:`PRIMITIVES`), ``dataset`` (a
    :class:`~dprm.server.datasets.DatasetRecord` as JSON), ``epsilon_units``,
    ``request`` (the checked body), ``dummy``, ``dummy_rows``, ``dummy_seed``.

    Returns ``{"ok": True, "result", "releases"}`` or ``{"ok": False, "code",
    "message", "touched", "owner_error"}``; ``touched`` says whether rows were read
    (then the charge is kept).
    """
    from dprm.errors import DprmError
    from dprm.privacy import SecureNoise
    from dprm.server.datasets import DatasetRecord, verify_files
    from dprm.server.dummy import dummy_data, dummy_privacy
    from dprm.server.errors import ApiError
    from dprm.server.units import fraction_text, units_fraction
    from dprm.server.validation import check_query, check_tree

    touched = False
    try:
        record = DatasetRecord.from_json(task["dataset"])
        request = task["request"]
        epsilon = units_fraction(task["epsilon_units"])
        if task["kind"] == "redescription-statistics":
            left = check_query(request["left"], record.schema, "left", "left")
            right = check_query(request["right"], record.schema, "right", "right")
        else:
            left = check_tree(request["left_tree"], record.schema, "left", "left_tree")
            right = check_tree(request["right_tree"], record.schema, "right", "right_tree")
        if task["dummy"]:
            data = dummy_data(record, task["dummy_rows"], task.get("dummy_seed"))
        else:
            verify_files(record)
            touched = True
            data = _rows(record)
        accountant = Accountant(epsilon, SecureNoise())
        if task["kind"] == "redescription-statistics":
            result = redescription_statistics(data, left, right, epsilon, accountant,
                                              confidence=request.get("confidence", 0.95),
                                              rng=np.random.default_rng())
        else:
            result = leaf_pair_counts(data, left, right, epsilon, accountant)
        result["privacy"] = privacy_block(accountant)
        if task["dummy"]:  # no private row touched: not a DP release of the data (dummy.DUMMY_REASON)
            result["privacy"] = dummy_privacy(result["privacy"])
        releases = [(e.step, e.mechanism, fraction_text(e.epsilon)) for e in accountant.ledger]
        return {"ok": True, "result": result, "releases": releases}
    except ApiError as error:  # refusals decided before any row was read (files, request)
        return {"ok": False, "code": error.code, "message": error.message, "touched": touched,
                "owner_error": str(error)}
    except Exception as error:  # noqa: BLE001 - anything after the rows were read is generic
        owner = "".join(traceback.format_exception(error))[-8000:]
        if task.get("dummy") and isinstance(error, DprmError):
            # dummy rows are public: their errors may be shown as they are
            return {"ok": False, "code": "invalid_parameter", "message": str(error).splitlines()[0][:300],
                    "touched": False, "owner_error": owner}
        return {"ok": False, "code": "computation_failed", "message": None, "touched": touched,
                "owner_error": owner}


def warm() -> None:
    """Import what :func:`run_primitive` needs (a pool process's initializer)."""
    import dprm.data.loading  # noqa: F401 (dprm.data imports its loaders on first use)
    import dprm.mining.private_extraction  # noqa: F401
    import dprm.server.datasets  # noqa: F401
    import dprm.server.dummy  # noqa: F401
    import dprm.server.validation  # noqa: F401
    from dprm.privacy import SecureNoise

    SecureNoise()
