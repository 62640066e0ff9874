"""Candidate literals of one view and the vectorised counts the greedy miners need.

Every attribute of a view is coded into **bins** by a :class:`~dprm.data.LiteralIndex`:
a Boolean attribute has the bins 0 and 1, a categorical one one bin per category,
a numeric one ``m + 1`` bins between its ``m`` thresholds (bin ``j`` holds
``t_{j-1} < x ≤ t_j``). A candidate literal is a run of consecutive bins
``lo..hi`` of one attribute:

=========== ============================== ===============================
kind        literals                       query
=========== ============================== ===============================
Boolean     bin 1                          ``a`` (``BooleanLiteral(a)``)
categorical each single bin ``c``          ``[a = c]``
numeric     every ``lo ≤ hi`` except the   ``[t_{lo-1} < a ≤ t_hi]``; a
            whole range                    half-interval at either end
=========== ============================== ===============================

Where the thresholds come from is the index's ``mode``: ``"private"`` puts them on a
grid over the *declared* public bounds (never at data values), so the set of
candidate literals is a function of the public schema only — the exponential
mechanism's candidate set must not depend on the data. ``"data"`` (the non-private
ReReMi baseline) puts them at data values.

Counting (ReReMi's cut-point idea, made vectorised): for a labelling of the rows
into ``G`` groups, one ``np.bincount`` gives the number of rows of every
(attribute, bin, group); a cumulative sum over the bins then gives the count of
every interval of every attribute as a difference of two entries, so all literals of
a view are counted in one pass over the rows (:meth:`LiteralTable.group_counts`).
The table is a function of the public schema (names, kinds, declared domains) and of
the rows it encodes; a table built on a view without rows (a sharded run's driver)
has the same literals, positions and queries as one built on all the rows.
Rows where an attribute is missing fall in no bin: a literal over a missing value
is false.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.data.attributes import AttributeKind, View
from dprm.data.literal_index import LiteralIndex
from dprm.queries import BooleanLiteral, CategoricalLiteral, NumericLiteral, Query

__all__ = ["LiteralTable"]


class LiteralTable:
    """The candidate literals of one view, with their counting positions.

    Parameters
    ----------
    view : View
        The attributes of one side.
    mode : {"private", "data"}
        Where numeric thresholds come from (see :class:`~dprm.data.LiteralIndex`).
    max_splits : int
        Thresholds per numeric attribute.
    thresholds : sequence of ndarray, optional
        With ``mode="data"``: every attribute's thresholds, merged over all rows
        (:class:`~dprm.data.LiteralIndex`); default: from this view's rows.

    Attributes
    ----------
    attribute, lo, hi : ndarray of int64
        Each literal's attribute position and its first and last bin.
    names : list of str
        Each literal's attribute name.
    private_domains : bool
        Whether every non-Boolean attribute's domain was declared.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> age = Attribute("age", "right", AttributeKind.NUMERIC, np.array([10.0, 40.0, 80.0, np.nan]),
    ...                 Domain(bounds=(0.0, 90.0), declared=True))
    >>> table = LiteralTable(View("right", [age]), mode="private", max_splits=2)
    >>> [str(table.query(i)) for i in range(len(table))]
    ['[age ≤ 30]', '[age ≤ 60]', '[30 < age ≤ 60]', '[age > 30]', '[age > 60]']
    >>> table.group_counts(np.zeros(4, dtype=np.int64), 1).ravel().tolist()   # rows per literal
    [1, 2, 1, 2, 1]
    """

    def __init__(self, view: View, *, mode: str, max_splits: int,
                 thresholds: "Sequence[np.ndarray] | None" = None) -> None:
        self.view = view
        self.index = LiteralIndex(view, mode=mode, max_splits=max_splits, thresholds=thresholds)
        self.private_domains = self.index.private_domains
        n_bins = self.index.n_codes.astype(np.int64)
        # padded layout: per attribute one leading zero slot, then its bins
        self._offsets = np.concatenate(([0], np.cumsum(n_bins + 1)[:-1])).astype(np.int64)
        self.n_positions = int((n_bins + 1).sum()) + 1  # the last slot collects missing values
        codes = self.index.codes.astype(np.int64)
        positions = self._offsets[:, None] + 1 + codes
        positions[codes == self.index.missing_code] = self.n_positions - 1
        # int32 where it fits: this (attributes × rows) matrix is the table's largest part
        self._positions = positions.astype(np.int32) if self.n_positions < 2**31 else positions
        attribute, lo, hi = [], [], []
        for position, a in enumerate(self.index.attributes):
            n = int(n_bins[position])
            if a.kind is AttributeKind.BOOLEAN:
                runs = [(1, 1)]
            elif a.kind is AttributeKind.CATEGORICAL:
                runs = [(c, c) for c in range(n)]
            else:
                runs = [(i, j) for i in range(n) for j in range(i, n) if not (i == 0 and j == n - 1)]
            attribute += [position] * len(runs)
            lo += [r[0] for r in runs]
            hi += [r[1] for r in runs]
        self.attribute = np.asarray(attribute, dtype=np.int64)
        self.lo = np.asarray(lo, dtype=np.int64)
        self.hi = np.asarray(hi, dtype=np.int64)
        self.names = [self.index.attributes[a].name for a in self.attribute]
        self._name_array = np.asarray(self.names, dtype=object)
        self._upper = self._offsets[self.attribute] + 1 + self.hi  # cumulative position of the last bin
        self._lower = self._offsets[self.attribute] + self.lo  # cumulative position before the first bin
        self.numeric = np.array([a.kind is AttributeKind.NUMERIC for a in self.index.attributes], dtype=bool)

    def __len__(self) -> int:
        return int(self.attribute.size)

    @property
    def n_rows(self) -> int:
        return self.index.n_rows

    # -- counting ---------------------------------------------------------------------

    def group_counts(self, groups: np.ndarray, n_groups: int) -> np.ndarray:
        """Rows of each group in the support of each literal, shape ``(n_literals, n_groups)``.

        ``groups`` holds one group label in ``0..n_groups-1`` per row. One bincount over
        (attribute, bin, group) and a cumulative sum over the bins.
        """
        flat = (self._positions.astype(np.int64) * n_groups + np.asarray(groups, dtype=np.int64)[None, :]).ravel()
        counts = np.bincount(flat, minlength=self.n_positions * n_groups).reshape(self.n_positions, n_groups)
        counts[-1] = 0  # missing values
        cumulative = np.cumsum(counts, axis=0)
        return cumulative[self._upper] - cumulative[self._lower]

    def pair_counts(self, supports: np.ndarray) -> np.ndarray:
        """Rows in ``supports[a] ∩ supp(literal)`` for every row mask ``a`` and literal.

        ``supports`` is a Boolean matrix ``(n_masks, n_rows)``; returns int64
        ``(n_masks, n_literals)``, from one sparse product (one-hot bins × masks) and a
        cumulative sum over the bins.
        """
        import scipy.sparse as sparse  # 0.05-0.1 s: only the runs that take pair counts pay for it

        masks = np.asarray(supports, dtype=np.float64)
        n_attributes, n_rows = self._positions.shape
        rows = np.repeat(np.arange(n_rows), n_attributes)
        columns = self._positions.T.ravel()
        onehot = sparse.csr_matrix((np.ones(columns.size), (columns, rows)), shape=(self.n_positions, n_rows))
        counts = np.asarray(onehot @ masks.T)  # (positions, masks)
        counts[-1] = 0
        cumulative = np.rint(np.cumsum(counts, axis=0)).astype(np.int64)
        return (cumulative[self._upper] - cumulative[self._lower]).T

    def support(self, literal: int) -> np.ndarray:
        """Boolean support (one entry per row) of literal number ``literal``."""
        codes = self.index.codes[self.attribute[literal]].astype(np.int64)
        present = codes != self.index.missing_code
        return present & (codes >= self.lo[literal]) & (codes <= self.hi[literal])

    def supports(self) -> np.ndarray:
        """Boolean supports of all literals, shape ``(n_literals, n_rows)``."""
        return np.stack([self.support(i) for i in range(len(self))]) if len(self) else np.zeros((0, self.n_rows), bool)

    def allowed(self, excluded: frozenset[str] | set[str]) -> np.ndarray:
        """Mask of the literals whose attribute name is not in ``excluded``."""
        if not excluded:
            return np.ones(len(self), dtype=bool)
        return ~np.isin(self._name_array, list(excluded))

    # -- queries ----------------------------------------------------------------------

    def query(self, literal: int) -> Query:
        """The query of literal number ``literal`` (thresholds from the index)."""
        position = int(self.attribute[literal])
        attribute = self.index.attributes[position]
        lo, hi = int(self.lo[literal]), int(self.hi[literal])
        if attribute.kind is AttributeKind.BOOLEAN:
            return BooleanLiteral(attribute.name, True)
        if attribute.kind is AttributeKind.CATEGORICAL:
            categories = attribute.domain.categories
            name = categories[lo] if categories is not None and lo < len(categories) else str(lo)
            return CategoricalLiteral(attribute.name, name)
        thresholds = self.index.thresholds[position]
        bounds = {}
        if lo > 0:
            bounds["gt"] = float(thresholds[lo - 1])
        if hi < len(thresholds):
            bounds["le"] = float(thresholds[hi])
        return NumericLiteral(attribute.name, **bounds)
