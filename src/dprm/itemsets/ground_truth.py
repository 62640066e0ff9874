"""Frequent itemsets of the data itself (the ground truth) and the paper's TPR / FPR.

An *item* is a pair ``(column, value)`` (``value`` the text written in the file) and an
itemset a set of items over distinct columns; its support is the share of rows that
hold every item. The truth is computed with Christian Borgelt's FP-growth
(``fim.fpgrowth`` of pyfim, the implementation the paper uses for Apriori).

Constant columns
----------------
pyfim leaves out an item that occurs in *every* transaction (and every itemset
holding it). :func:`frequent_itemsets` therefore mines the non-constant columns only
and adds the constant items back exactly: a constant item has support 1, so
``I ∪ C`` has the support of ``I`` for every frequent ``I`` (or ``I = ∅``, support 1)
and every set ``C`` of constant items.

Rates (the paper, Section VII-A)
--------------------------------
With ``F`` the true frequent itemsets and ``R`` the reported ones::

    TPR = |R ∩ F| / |F|            FPR = |R \\ F| / |F|

The paper divides the false positives by the number of *true* itemsets as well (not
by the number of infrequent candidates, which is not finite in a useful sense), so
the FPR can exceed 1. Both are ``nan`` when ``F`` is empty. :class:`ItemsetRates`
also gives the precision ``|R ∩ F| / |R|``.

Examples
--------
>>> import pandas as pd
>>> data = pd.DataFrame({"a": ["x", "x", "y", "x"], "b": ["u", "u", "u", "v"], "c": ["k"] * 4})
>>> truth = frequent_itemsets(data, 0.5)
>>> sorted((sorted(items), support) for items, support in truth.items())[:3]
[([('a', 'x')], 0.75), ([('a', 'x'), ('b', 'u')], 0.5), ([('a', 'x'), ('b', 'u'), ('c', 'k')], 0.5)]
>>> rates = itemset_rates([{"a": "x"}, {"a": "y"}], truth)
>>> rates.true_positives, rates.false_positives, rates.n_true
(1, 1, 7)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dprm.errors import ParameterError

__all__ = ["Item", "ItemsetKey", "ItemsetRates", "frequent_itemsets", "itemset_key", "itemset_rates"]

#: One item: ``(column, value text)``.
Item = tuple[str, str]
#: An itemset as a hashable key.
ItemsetKey = frozenset[Item]


def itemset_key(itemset: Any) -> ItemsetKey:
    """The hashable key of an itemset given as a mapping, an object with ``items``, or items.

    Examples
    --------
    >>> sorted(itemset_key({"a": "x", "b": 1}))
    [('a', 'x'), ('b', '1')]
    """
    items = getattr(itemset, "items", itemset)
    if callable(items):  # a Mapping's .items()
        items = items()
    elif isinstance(items, Mapping):
        items = items.items()
    return frozenset((str(column), str(value)) for column, value in items)


def _check_support(min_support: float) -> float:
    if not (isinstance(min_support, (int, float, np.floating)) and 0 < float(min_support) <= 1):
        raise ParameterError(f"the minimum support must be in (0, 1], not {min_support!r}")
    return float(min_support)


def frequent_itemsets(
    data: pd.DataFrame, min_support: float, max_length: int | None = None
) -> dict[ItemsetKey, float]:
    """All itemsets of ``data`` with support ≥ ``min_support``, by pyfim's FP-growth.

    Parameters
    ----------
    data : pandas.DataFrame
        Discrete columns; every value is an item's value as text (``str(value)``),
        undeclared missing markers (``"?"``) included as written. A missing cell
        (``None``, NaN, ``pd.NA``) is no item: the row holds no item of that column.
    min_support : float in (0, 1]
        Share of rows; an itemset is frequent when its count is at least
        ``ceil(min_support · n)`` (within 1e-9 against floating point).
    max_length : int, optional
        Largest number of items.

    Returns
    -------
    dict
        ``{frozenset of (column, value): support (share of rows)}``.

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["x", "x", None, "x"], "b": ["u", "u", "u", "v"]})
    >>> sorted((sorted(k), v) for k, v in frequent_itemsets(frame, 0.5).items())
    [([('a', 'x')], 0.75), ([('a', 'x'), ('b', 'u')], 0.5), ([('b', 'u')], 0.75)]
    """
    import fim

    theta = _check_support(min_support)
    n = len(data)
    if n == 0:
        raise ParameterError("no rows: frequent itemsets need at least one row")
    absent = data.isna()
    text = data.astype(str)
    # a column of one value in every row is an item of every row (not a missing value in it)
    constant = [c for c in text.columns if not absent[c].any() and text[c].nunique() == 1]
    varying = [c for c in text.columns if c not in constant]
    constant_items = [(str(c), str(text[c].iloc[0])) for c in constant]
    min_count = max(1, math.ceil(theta * n - 1e-9))
    zmax = None if max_length is None else int(max_length)
    result: dict[ItemsetKey, float] = {}
    found: list[tuple[frozenset[Item], int]] = [(frozenset(), n)]
    if varying and (zmax is None or zmax >= 1):
        # items as small integers: (column, value) pairs numbered per column; a missing cell is no item
        codes = []
        names: list[Item] = []
        for column in varying:
            values, uniques = pd.factorize(text[column].where(~absent[column]), sort=True)
            codes.append(np.where(values >= 0, values + len(names), -1))
            names.extend((str(column), str(u)) for u in uniques)
        rows = np.stack(codes, axis=1)
        transactions = [row[row >= 0].tolist() for row in rows] if (rows < 0).any() else rows.tolist()
        kwargs: dict[str, Any] = {"target": "s", "supp": -min_count, "zmin": 1, "report": "a"}
        if zmax is not None:
            kwargs["zmax"] = zmax
        for items, count in fim.fpgrowth(transactions, **kwargs):
            found.append((frozenset(names[i] for i in items), int(count)))
    for items, count in found:
        room = len(constant_items) if zmax is None else max(0, zmax - len(items))
        for size in range(0, min(room, len(constant_items)) + 1):
            for extra in itertools.combinations(constant_items, size):
                key = items | frozenset(extra)
                if key:
                    result[key] = count / n
    return result


@dataclass(frozen=True)
class ItemsetRates:
    """The paper's true and false positive rates of reported itemsets against the truth.

    Attributes
    ----------
    tpr : float
        ``true_positives / n_true`` (nan without true itemsets).
    fpr : float
        ``false_positives / n_true`` (the paper's denominator; nan without true itemsets).
    precision : float
        ``true_positives / n_reported`` (nan when nothing is reported).
    true_positives, false_positives, n_true, n_reported : int
    """

    tpr: float
    fpr: float
    precision: float
    true_positives: int
    false_positives: int
    n_true: int
    n_reported: int


def itemset_rates(reported: Iterable[Any], truth: Mapping[ItemsetKey, float] | Iterable[ItemsetKey]) -> ItemsetRates:
    """TPR and FPR of ``reported`` itemsets (mappings, ``Itemset`` objects or keys) against ``truth``.

    Duplicates among the reported itemsets count once.
    """
    true_keys = set(truth.keys() if isinstance(truth, Mapping) else truth)
    found = {itemset_key(r) for r in reported}
    tp = len(found & true_keys)
    fp = len(found - true_keys)
    n_true = len(true_keys)
    return ItemsetRates(
        tpr=tp / n_true if n_true else float("nan"),
        fpr=fp / n_true if n_true else float("nan"),
        precision=tp / len(found) if found else float("nan"),
        true_positives=tp,
        false_positives=fp,
        n_true=n_true,
        n_reported=len(found),
    )
