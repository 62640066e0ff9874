"""ComputeQuality: noisy intersection, union, supports and Jaccard of one redescription.

The paper adds Laplace noise to the intersection and to the union size separately.
Those two counts have L1 sensitivity 2 together (a row in both supports changes
both by one), so each would need ``ε/2``. dprm releases instead the histogram of the
four disjoint cells

    ``[L ∩ R, L ∖ R, R ∖ L, neither]``

(every row is in exactly one cell: L1 sensitivity 1) with one
``DiscreteLaplaceHistogram(ε)``. Then ``I = c₀`` has noise of scale ``1/ε`` (instead of
``2/ε``), ``U = c₀ + c₁ + c₂`` has three such noises (variance ``3·2/ε²`` instead of
``8/ε²``), the supports come for free, and so does an estimate of the data size
(the sum of all four). Noisy ``J = Î / Û`` as in the paper; the statistics are
clipped into their consistent range (post-processing, :class:`RedescriptionStats`).

Confidence intervals cost no budget: the noise distribution is public, so tables
``released + fresh noise of the same scale`` are simulated
(:func:`dprm.mining.private_extraction.simulate_tables`) and percentile intervals of
each statistic are read off (:func:`~dprm.mining.private_extraction.combination_intervals`).
"""

from __future__ import annotations

import numpy as np

from dprm.mining.private_extraction import combination_intervals, discrete_laplace_variance, simulate_tables
from dprm.privacy import Accountant, DiscreteLaplaceHistogram
from dprm.privacy.budget import EpsilonLike
from dprm.queries import RedescriptionStats

__all__ = ["QualityRelease", "release_quality", "release_cells", "cells_of"]

_LEFT = np.array([True, False])
_RIGHT = np.array([True, False])


def cells_of(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Exact cell counts ``[[L∩R, L∖R], [R∖L, neither]]`` (rows: in L; columns: in R).

    Examples
    --------
    >>> cells_of(np.array([1, 1, 0, 0], bool), np.array([1, 0, 1, 0], bool)).tolist()
    [[1, 1], [1, 1]]
    """
    left, right = np.asarray(left, bool), np.asarray(right, bool)
    both = int(np.count_nonzero(left & right))
    only_left = int(np.count_nonzero(left)) - both
    only_right = int(np.count_nonzero(right)) - both
    return np.array([[both, only_left], [only_right, left.size - both - only_left - only_right]], dtype=np.int64)


class QualityRelease:
    """The released 2×2 table of one redescription and what follows from it.

    Attributes
    ----------
    table : ndarray of int64, shape (2, 2)
        Noisy ``[[L∩R, L∖R], [R∖L, neither]]``.
    scale : float
        Its discrete Laplace scale.
    """

    def __init__(self, table: np.ndarray, scale: float) -> None:
        self.table = np.asarray(table, dtype=np.int64)
        self.scale = float(scale)

    @property
    def data_size(self) -> tuple[float, float]:
        """``(n̂, variance)`` from the sum of the four cells."""
        return float(self.table.sum()), 4 * discrete_laplace_variance(self.scale)

    def combined_size(self, count: float, count_scale: float) -> tuple[float, float]:
        """``(n̂, w)``: a separate noisy row count and the cells' sum, weighted by inverse variance.

        ``count`` was released with discrete Laplace noise of scale ``count_scale``; the
        four cells' sum is another unbiased estimate of the number of rows, with variance
        ``4 Var(cell)``. Their inverse-variance mean ``w · count + (1 − w) · Σ cells``,
        ``w = v_cells / (v_count + v_cells)``, has the smaller variance
        ``v_count v_cells / (v_count + v_cells)``: the p-value of a redescription whose
        supports cover most rows depends steeply on ``n``. Post-processing of released
        values.

        Examples
        --------
        >>> released = QualityRelease(np.array([[40, 10], [10, 40]]), scale=1.0)
        >>> n, w = released.combined_size(120.0, 1.0)   # equal scales: the count weighs 4/5
        >>> round(n, 6), round(w, 6)
        (116.0, 0.8)
        """
        cells, cells_variance = self.data_size
        count_variance = discrete_laplace_variance(count_scale)
        if not np.isfinite(count_variance):
            return cells, 0.0
        if count_variance == 0 or not np.isfinite(cells_variance):
            return float(count), 1.0
        weight = cells_variance / (count_variance + cells_variance)
        return float(weight * count + (1 - weight) * cells), float(weight)

    def stats(self, n_rows: float | None) -> RedescriptionStats:
        """Noisy statistics; the p-value uses ``n_rows`` (an estimate, or None for none)."""
        t = self.table.astype(np.float64)
        return RedescriptionStats.from_counts(t[0, 0] + t[0, 1], t[0, 0] + t[1, 0], t[0, 0], n_rows)

    def interval(self, n_rows: float | None, confidence: float, rng: np.random.Generator,
                 n_simulations: int = 1000, size_count: tuple[float, float] | None = None) -> dict:
        """Simulated intervals of the statistics (no budget: public noise law).

        Each interval holds posterior mass ``confidence`` and contains the
        statistic :meth:`stats` reports for the same ``n_rows``
        (:func:`~dprm.mining.private_extraction.credible_interval`: the Jaccard
        index of a clipped noisy table can otherwise lie above all but a few draws).
        ``size_count = (count, scale)``: ``n_rows`` is :meth:`combined_size` of that
        separately released row count, and each draw combines a draw of the count
        with its simulated table in the same way (the p-value's interval then holds
        the uncertainty of ``n``).

        Examples
        --------
        >>> released = QualityRelease(np.array([[9, -4], [1, 30]]), scale=4.0)
        >>> stats = released.stats(36.0)
        >>> interval = released.interval(36.0, 0.95, np.random.default_rng(0))
        >>> interval["jaccard"][0] <= stats.jaccard <= interval["jaccard"][1]
        True
        """
        tables = simulate_tables(self.table, self.scale, n_simulations, rng)
        sizes = None if n_rows is None else np.full(n_simulations, float(n_rows))
        if size_count is not None:  # n_rows is the combined estimate: draw it as it was made
            count, count_scale = size_count
            _, weight = self.combined_size(count, count_scale)
            counts = simulate_tables(np.array([int(round(count))]), count_scale, n_simulations, rng)[:, 0]
            sizes = weight * counts + (1 - weight) * tables.sum(axis=(1, 2))
        return combination_intervals(tables, _LEFT[None, :], _RIGHT[None, :], confidence, sizes,
                                     estimates=[self.stats(n_rows)])[0]


def release_quality(accountant: Accountant, step: str, epsilon: EpsilonLike,
                    left: np.ndarray, right: np.ndarray) -> QualityRelease:
    """Charge ``epsilon`` and release the noisy 2×2 cell table of a redescription.

    Examples
    --------
    >>> from dprm.privacy import SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> left, right = np.arange(100) < 60, np.arange(100) < 50
    >>> released = release_quality(acc, "quality 1", 1.0, left, right)
    >>> released.table.shape, acc.spent()
    ((2, 2), Fraction(1, 1))
    """
    return release_cells(accountant, step, epsilon, cells_of(left, right))


def release_cells(accountant: Accountant, step: str, epsilon: EpsilonLike, cells: np.ndarray) -> QualityRelease:
    """Charge ``epsilon`` and release the noisy 2×2 table from its exact cells (:func:`cells_of`).

    The cells are exact counts (an engine's, summed over its shards); the noise is
    drawn here, once, after the sum: the histogram's L1 sensitivity is 1 whatever the
    shards (one row is in exactly one shard and one cell).

    Examples
    --------
    >>> from dprm.privacy import SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> released = release_cells(acc, "quality 1", 1.0, np.array([[50, 10], [0, 40]]))
    >>> released.table.shape, acc.spent()
    ((2, 2), Fraction(1, 1))
    """
    mechanism = DiscreteLaplaceHistogram(epsilon)
    table = mechanism.release(accountant, step, np.asarray(cells, dtype=np.int64))
    return QualityRelease(table, mechanism.scale)
