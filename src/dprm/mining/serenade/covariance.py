r"""Serenade's initial pairs scored by the covariance count (dprm's default, ``initial_score="covariance"``).

Serenade draws its initial literal pairs by the exponential mechanism on its quality
(:mod:`.quality`: the Jaccard index times a logistic in the support). Two large,
nearly independent literals have a Jaccard index of 0.3–0.4 whatever they say, and a
table holds hundreds of thousands of such pairs against the few dozen of a real
relation, so at ε = 1 the draws land on near-independent pairs (measured on a table
of five planted relations, ``planted-mixed``: every draw of SerenadeCS on unrelated
columns, nothing kept in 5 of 5 runs). The covariance count

.. math::

    C(L, R) = |L ∩ R| - \frac{|L|\,|R|}{n}

(``n`` the rows) is what a pair holds beyond independence, in rows: about 0 for
independent literals however large, up to ``n·g(1 − g)`` for a relation on a share
``g`` of the rows. It is the score the default tree miner's targets were measured with
(docs/mining-sessions.md, session 33, where it was derived).

Sensitivity 1
-------------
Neighbouring datasets differ by one row. With ``a = |L|``, ``b = |R|``, ``i = |L ∩ R|``
and ``n`` rows, adding a row changes ``C`` by

* ``1 − (n(a + b + 1) − ab) / (n(n + 1))`` if the row is in both supports: in
  ``[0, 1)``, since ``(n − a)(n − b) ≥ 0`` gives ``n(a + b) − ab ≤ n²`` and
  ``n(a + b + 1) − ab > 0`` (``a, b ≤ n``);
* ``−b(n − a) / (n(n + 1))`` if it is in ``L`` only (``−a(n − b)/(n(n + 1))`` in ``R``
  only): in ``(−1, 0]``;
* ``ab / (n(n + 1))`` if it is in neither: in ``[0, 1)``;

and removing a row reverses a change of the same form. So every pair's score moves by
less than 1 in absolute value: sensitivity ``Δ = 1`` (:data:`COVARIANCE_SENSITIVITY`),
and the draws sample ``∝ exp(ε C / 2)``. ``tests/test_serenade_pairs.py`` checks it on
random neighbouring datasets. The score reads the true ``n`` (a function of the data
like the counts; the bound holds whatever ``n`` is), never a released value.
"""

from __future__ import annotations

import numpy as np

from dprm.mining.serenade.pairs import PairBlock

__all__ = ["COVARIANCE_SENSITIVITY", "CovarianceScore", "covariance_counts"]

#: The sensitivity of the covariance count (module docstring).
COVARIANCE_SENSITIVITY = 1


def covariance_counts(intersection: np.ndarray, size_left: np.ndarray, size_right: np.ndarray,
                      n_rows: float) -> np.ndarray:
    """``|L ∩ R| − |L|·|R| / n`` for arrays of pairs.

    Examples
    --------
    >>> covariance_counts(np.array([40, 10]), np.array([50, 50]), np.array([50, 20]), 100).tolist()
    [15.0, 0.0]
    """
    return np.asarray(intersection, dtype=np.float64) - (np.asarray(size_left, dtype=np.float64)
                                                          * np.asarray(size_right, dtype=np.float64) / float(n_rows))


class CovarianceScore:
    """The covariance count of every pair of a :class:`~dprm.mining.serenade.pairs.PairBlock`.

    Parameters
    ----------
    sizes : (ndarray, ndarray)
        ``|supp|`` of every literal of the left and the right view's table.
    n_rows : int
        The number of rows.
    """

    def __init__(self, sizes: tuple[np.ndarray, np.ndarray], n_rows: int) -> None:
        self.sizes = (np.asarray(sizes[0], dtype=np.float64), np.asarray(sizes[1], dtype=np.float64))
        self.n_rows = max(int(n_rows), 1)

    def __call__(self, block: PairBlock) -> np.ndarray:
        left, right = np.divmod(block.pair, self.sizes[1].size)
        return covariance_counts(block.intersection, self.sizes[0][left], self.sizes[1][right], self.n_rows)
