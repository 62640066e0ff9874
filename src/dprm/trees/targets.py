"""Targets (class labels) for the trees of the alternation scheme.

The first tree of an alternation predicts classes made from one attribute of the
other view (tree-based paper, section 4.2): Boolean and categorical values are
classes; numeric values are binned equal-width with the Freedman–Diaconis rule. Later
trees predict the leaves of the previous tree. Rows without a class get ``-1``.
"""

from __future__ import annotations

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind
from dprm.data.grid import grid_points

__all__ = ["freedman_diaconis_bins", "freedman_diaconis_rule", "target_from_attribute", "target_from_leaves"]


def freedman_diaconis_bins(values: np.ndarray, *, max_bins: int = 16) -> int:
    """Number of equal-width bins by the Freedman–Diaconis rule, in ``[2, max_bins]``.

    The bin width is ``2 * IQR * n ** (-1/3)``.

    Examples
    --------
    >>> freedman_diaconis_bins(np.arange(1000.0))
    10
    """
    values = values[~np.isnan(values)]
    if values.size < 2:
        return 2
    # Halves throughout, so that values near ±1.8e308 cannot overflow a difference.
    q75, q25 = np.percentile(values / 2, [75, 25])
    return freedman_diaconis_rule(values.size, q75, q25, values.min(), values.max(), max_bins=max_bins)


def freedman_diaconis_rule(n: int, half_q75: float, half_q25: float, low: float, high: float, *,
                           max_bins: int = 16) -> int:
    """:func:`freedman_diaconis_bins` from its statistics: ``n ≥ 2`` present values, the
    quartiles of the halved values, the smallest and the largest value (a sharded run
    merges them exactly, :mod:`dprm.engine.value_statistics`).

    Examples
    --------
    >>> freedman_diaconis_rule(1000, 749.25 / 2, 249.75 / 2, 0.0, 999.0)
    10
    """
    half_width = 2.0 * float(half_q75 - half_q25) * n ** (-1.0 / 3.0)
    half_span = float(high / 2 - low / 2)
    if not half_width > 0 or not half_span > 0:
        return 2
    bins = np.ceil(half_span / half_width)
    return int(np.clip(bins, 2, max_bins)) if np.isfinite(bins) else max_bins


def target_from_attribute(attribute: Attribute, *, max_bins: int = 16) -> tuple[np.ndarray, int]:
    """Classes from one attribute: ``(class per row, number of classes)``.

    Examples
    --------
    >>> a = Attribute("t", "right", AttributeKind.NUMERIC, np.array([0.0, 1.0, 9.0, 10.0, np.nan]))
    >>> target_from_attribute(a, max_bins=2)
    (array([ 0,  0,  1,  1, -1]), 2)
    """
    if attribute.kind is AttributeKind.NUMERIC:
        values = attribute.values
        present = ~np.isnan(values)
        n_bins = freedman_diaconis_bins(values, max_bins=max_bins)
        low, high = float(values[present].min()), float(values[present].max())
        edges = grid_points(low, high, n_bins - 1)  # overflow-safe np.linspace(low, high, n_bins + 1)[1:-1]
        classes = np.full(values.shape, -1, dtype=np.int64)
        classes[present] = np.searchsorted(edges, values[present], side="right")
        return classes, n_bins
    classes = attribute.values.astype(np.int64)
    n = int(classes.max()) + 1 if classes.size else 0
    return classes, max(n, 2)


def target_from_leaves(leaf: np.ndarray, n_leaves: int) -> tuple[np.ndarray, int]:
    """Classes from the leaves of a tree (``-1`` where a row fell out of the tree)."""
    return np.asarray(leaf, dtype=np.int64), max(n_leaves, 2)
