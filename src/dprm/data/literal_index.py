"""The literal index: every candidate literal of a view, encoded for fast counting.

Every miner spends its time counting rows: how many rows of tree node ``l`` and class
``c`` satisfy literal ``a ≤ t``; how many rows lie in ``supp(p) ∩ supp(q)``. The index
prepares both forms once per view:

* **codes** — a ``(n_attributes, n_rows)`` matrix of small unsigned integers. For a
  Boolean attribute the code is its value (0/1); for a categorical one the category
  code; for a numeric one the number of thresholds strictly below the value, so that
  ``a ≤ t_j`` holds exactly where ``code ≤ j``. Missing values get the code
  :attr:`LiteralIndex.missing_code`. One ``np.bincount`` over
  ``code * n_groups + group`` then counts every threshold of an attribute for every
  (node, class) group at once, in one pass over the rows.
* **bitsets** — the support of every literal as packed bits (``uint64`` words, computed
  on first use), for intersections by ``np.bitwise_count``.

Split candidates (:class:`Split`) are binary tests on one attribute: ``a`` (Boolean),
``a = v`` (categorical), ``a ≤ t`` (numeric). Rows where the attribute is missing
satisfy neither branch of a split.

Where thresholds come from (``mode``):

``"data"`` (non-private miners)
    at the distinct values of the attribute when there are at most ``max_splits + 1``
    of them, else at ``max_splits`` quantile cut points (data values;
    :func:`data_thresholds`). A sharded run merges the same cut points exactly from
    its shards (:mod:`dprm.data.cut_points`) and passes them as ``thresholds``.
``"private"`` (private miners)
    on a grid of ``max_splits`` equally spaced points strictly inside the attribute's
    *public* bounds, never at data values. When the bounds were not declared by the
    data owner they are inferred from the data, and :attr:`LiteralIndex.private_domains`
    is False: the run is then not private, and its output must say so. The same holds
    for a column whose *type* was inferred, Boolean ones included (one more row could
    make it numeric).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind, View
from dprm.data.grid import public_grid
from dprm.errors import ParameterError

__all__ = ["Split", "LiteralIndex", "data_thresholds", "pack_rows", "popcount"]

#: Codes (rows × attributes) from which a view's attributes get their thresholds and
#: codes on all cores (numpy releases the GIL in the quantiles, ``searchsorted`` and
#: the copies): measured at 115,200 × 604 on two cores, 0.26 s instead of 0.45
#: (``mode="private"``); a small view is not worth the threads.
PARALLEL_ENCODING_CODES = 1 << 22

DEFAULT_MAX_SPLITS = 32


@dataclass(frozen=True)
class Split:
    """A binary test on one attribute, as found in a decision-tree node.

    ``attribute`` is the attribute's position in the view. ``code`` is the category
    code (categorical), 1 (Boolean) or the threshold number ``j`` (numeric: the test
    is ``a ≤ thresholds[j]``). The true branch is the literal; the false branch is the
    opposite literal (``¬a``, ``a ≠ v``, ``a > t``); rows with a missing value satisfy
    neither.
    """

    attribute: int
    kind: AttributeKind
    code: int


def data_thresholds(values: np.ndarray, max_splits: int) -> np.ndarray:
    """The thresholds of a numeric attribute in ``mode="data"`` (NaN: missing).

    Its distinct values but the largest when there are at most ``max_splits + 1``,
    else the distinct ``inverted_cdf`` quantiles at ``j / (max_splits + 1)`` below the
    largest value (:mod:`dprm.data.cut_points` merges the same from parts of the rows).

    Examples
    --------
    >>> data_thresholds(np.array([3.0, 1.0, np.nan, 3.0]), 4).tolist()
    [1.0]
    >>> data_thresholds(np.arange(10.0), 2).tolist()
    [3.0, 6.0]
    """
    values = values[~np.isnan(values)]
    distinct = np.unique(values)
    if distinct.size <= max_splits + 1:
        return distinct[:-1]
    probabilities = np.arange(1, max_splits + 1) / (max_splits + 1)
    cuts = np.unique(np.quantile(values, probabilities, method="inverted_cdf"))
    return cuts[cuts < distinct[-1]]


def pack_rows(mask: np.ndarray) -> np.ndarray:
    """Pack Boolean rows (last axis) into ``uint64`` words.

    Examples
    --------
    >>> words = pack_rows(np.array([True, False, True]))
    >>> int(popcount(words))
    2
    """
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[-1]
    n_words = max(1, -(-n // 64))
    padded = np.zeros(mask.shape[:-1] + (n_words * 64,), dtype=bool)
    padded[..., :n] = mask
    packed = np.packbits(padded, axis=-1, bitorder="little")
    return packed.view(np.uint64)


def popcount(words: np.ndarray, axis: int | None = -1) -> np.ndarray:
    """Number of set bits along ``axis`` of packed ``uint64`` words."""
    return np.bitwise_count(words).sum(axis=axis, dtype=np.int64)


class LiteralIndex:
    """Candidate literals and splits of one view, with their encodings.

    Parameters
    ----------
    view : View
        The typed attributes of one side of the data.
    mode : {"data", "private"}
        Where numeric thresholds come from (see the module docstring).
    max_splits : int
        Maximum number of thresholds per numeric attribute.
    thresholds : sequence of ndarray, optional
        With ``mode="data"``: the thresholds of every attribute (one array per
        attribute, empty for non-numeric ones), computed elsewhere over all the rows
        (a sharded run's shards get the cut points merged by
        :mod:`dprm.data.cut_points`). Default: computed from this view's rows.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> age = Attribute("age", "left", AttributeKind.NUMERIC,
    ...                 np.array([20.0, 35.0, np.nan, 60.0]), Domain(bounds=(0.0, 100.0), declared=True))
    >>> index = LiteralIndex(View("left", [age]), mode="private", max_splits=3)
    >>> index.thresholds[0].tolist()
    [25.0, 50.0, 75.0]
    >>> index.codes[0].tolist()   # number of thresholds below each value; 255 = missing
    [0, 1, 255, 2]
    >>> index.private_domains
    True
    """

    def __init__(self, view: View, *, mode: str = "data", max_splits: int = DEFAULT_MAX_SPLITS,
                 thresholds: "Sequence[np.ndarray] | None" = None) -> None:
        if mode not in ("data", "private"):
            raise ParameterError(f"mode must be 'data' or 'private', not {mode!r}")
        if max_splits < 1:
            raise ParameterError(f"max-splits must be at least 1, not {max_splits}")
        self.view = view
        self.mode = mode
        self.max_splits = max_splits
        self.attributes: list[Attribute] = list(view.attributes)
        if thresholds is not None and mode != "data":
            raise ParameterError("given thresholds are data cut points: mode must be 'data'")
        if thresholds is not None and len(thresholds) != len(self.attributes):
            raise ParameterError(f"thresholds for {len(thresholds)} attributes, the view has {len(self.attributes)}")
        n_rows = self.attributes[0].n_rows if self.attributes else 0
        parallel = n_rows * len(self.attributes) >= PARALLEL_ENCODING_CODES and (os.cpu_count() or 1) > 1
        # numpy releases the GIL in the quantiles' partitions, searchsorted and the copies
        pool = ThreadPoolExecutor(max_workers=os.cpu_count()) if parallel else None
        each = map if pool is None else pool.map
        try:
            self._construct(thresholds, n_rows, each)
        finally:
            if pool is not None:
                pool.shutdown()
        self.private_domains = all(a.domain.declared for a in self.attributes)
        self.splits = self._enumerate_splits()

    # -- construction ---------------------------------------------------------------

    def _construct(self, thresholds: "Sequence[np.ndarray] | None", n_rows: int, each) -> None:
        """:attr:`thresholds`, :attr:`n_codes`, :attr:`codes`; ``each`` maps over the attributes."""
        self.thresholds: list[np.ndarray] = (
            list(each(self._thresholds, self.attributes)) if thresholds is None
            else [np.asarray(t, dtype=np.float64) if a.kind is AttributeKind.NUMERIC else np.empty(0)
                  for a, t in zip(self.attributes, thresholds)])
        self.n_codes = np.array(
            [self._n_codes(a, t) for a, t in zip(self.attributes, self.thresholds)], dtype=np.int64
        )
        widest = int(self.n_codes.max()) if len(self.n_codes) else 0
        dtype = np.uint8 if widest < 255 else np.uint16
        self.missing_code = int(np.iinfo(dtype).max)
        self.n_rows = n_rows
        self.codes = np.empty((len(self.attributes), self.n_rows), dtype=dtype)
        list(each(self._encode, range(len(self.attributes))))

    def _thresholds(self, attribute: Attribute) -> np.ndarray:
        if attribute.kind is not AttributeKind.NUMERIC:
            return np.empty(0)
        if self.mode == "private":
            # Readable points, a function of the public bounds (and declared transform)
            # only; overflow-safe for any finite bounds (see dprm.data.grid).
            low, high = self._bounds(attribute)
            return public_grid(low, high, self.max_splits, attribute.domain.transform)
        return data_thresholds(attribute.values, self.max_splits)

    @staticmethod
    def _bounds(attribute: Attribute) -> tuple[float, float]:
        if attribute.domain.bounds is not None:
            return attribute.domain.bounds
        values = attribute.values[~np.isnan(attribute.values)]
        return (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)

    @staticmethod
    def _n_codes(attribute: Attribute, thresholds: np.ndarray) -> int:
        if attribute.kind is AttributeKind.BOOLEAN:
            return 2
        if attribute.kind is AttributeKind.CATEGORICAL:
            categories = attribute.domain.categories
            if categories is not None:
                return len(categories)
            return int(attribute.values.max()) + 1 if attribute.values.size else 0
        return len(thresholds) + 1

    def _encode(self, position: int) -> None:
        """Write the codes of attribute ``position`` into its row of :attr:`codes`."""
        attribute, row = self.attributes[position], self.codes[position]
        values = attribute.values
        if attribute.kind is AttributeKind.NUMERIC:
            row[:] = np.searchsorted(self.thresholds[position], values, side="left")
            row[np.isnan(values)] = self.missing_code
        else:
            np.copyto(row, values, casting="unsafe")  # the codes, and -1 (missing) wrapped: set below
            row[values < 0] = self.missing_code

    def _enumerate_splits(self) -> list[Split]:
        splits: list[Split] = []
        for position, attribute in enumerate(self.attributes):
            if attribute.kind is AttributeKind.BOOLEAN:
                splits.append(Split(position, attribute.kind, 1))
            elif attribute.kind is AttributeKind.CATEGORICAL:
                n = int(self.n_codes[position])
                # With two categories, "a = v0" and "a = v1" make the same partition.
                splits.extend(Split(position, attribute.kind, c) for c in range(1 if n == 2 else n))
            else:
                splits.extend(
                    Split(position, attribute.kind, j) for j in range(len(self.thresholds[position]))
                )
        return splits

    # -- literals -------------------------------------------------------------------

    @cached_property
    def literals(self) -> list[tuple[int, str, int]]:
        """Every candidate literal as ``(attribute position, operator, code)``.

        Operators: ``"is"`` (Boolean ``a``), ``"is-not"`` (``¬a``), ``"eq"``
        (``a = v``), ``"le"`` (``a ≤ t_j``), ``"gt"`` (``a > t_j``).
        """
        out: list[tuple[int, str, int]] = []
        for position, attribute in enumerate(self.attributes):
            if attribute.kind is AttributeKind.BOOLEAN:
                out += [(position, "is", 1), (position, "is-not", 0)]
            elif attribute.kind is AttributeKind.CATEGORICAL:
                out += [(position, "eq", c) for c in range(int(self.n_codes[position]))]
            else:
                n = len(self.thresholds[position])
                out += [(position, "le", j) for j in range(n)] + [(position, "gt", j) for j in range(n)]
        return out

    def literal_support(self, literal: tuple[int, str, int]) -> np.ndarray:
        """Boolean support (one entry per row) of a literal from :attr:`literals`."""
        position, operator, code = literal
        codes = self.codes[position]
        present = codes != self.missing_code
        if operator in ("is", "eq"):
            return codes == code
        if operator == "is-not":
            return codes == 0
        if operator == "le":
            return codes <= code
        return present & (codes > code)

    @cached_property
    def bitsets(self) -> np.ndarray:
        """Packed supports of all :attr:`literals`, shape ``(n_literals, n_words)``."""
        n_words = max(1, -(-self.n_rows // 64))
        out = np.empty((len(self.literals), n_words), dtype=np.uint64)
        start = 0
        for position, attribute in enumerate(self.attributes):
            codes = self.codes[position]
            present = codes != self.missing_code
            if attribute.kind is AttributeKind.BOOLEAN:
                block = np.stack([codes == 1, codes == 0])
            elif attribute.kind is AttributeKind.CATEGORICAL:
                block = codes[None, :] == np.arange(int(self.n_codes[position]))[:, None]
            else:
                steps = np.arange(len(self.thresholds[position]))[:, None]
                below = codes[None, :] <= steps
                block = np.concatenate([below, present[None, :] & ~below])
            out[start : start + len(block)] = pack_rows(block)
            start += len(block)
        return out

    # -- splits ---------------------------------------------------------------------

    def split_branches(self, split: Split, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Masks of the true and false branch of ``split`` (over ``rows`` if given)."""
        codes = self.codes[split.attribute] if rows is None else self.codes[split.attribute, rows]
        present = codes != self.missing_code
        if split.kind is AttributeKind.NUMERIC:
            true = codes <= split.code
        else:
            true = codes == split.code
        return true, present & ~true

    def threshold(self, split: Split) -> float:
        """The numeric threshold ``t`` of a split ``a ≤ t``."""
        return float(self.thresholds[split.attribute][split.code])

    def __repr__(self) -> str:
        return (
            f"LiteralIndex(view={self.view.name!r}, attributes={len(self.attributes)}, "
            f"splits={len(self.splits)}, rows={self.n_rows}, mode={self.mode!r})"
        )
