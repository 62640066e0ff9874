"""ISON: frequent itemsets mined from the structure of a density estimate (Algorithms 2 and 3).

Geilke & Kramer (ICBK 2017) mine the itemsets whose estimated support reaches ``θ``
from an EDDO estimate (:mod:`dprm.itemsets.estimator`) without touching the data:

Iteration 1 (candidates from the trees)
    Every root-to-leaf path of every tree, with the tree's target set to each of its
    categories, is an itemset ``{(tested column, code), ..., (target, value)}``. Its
    subsets are enumerated by size with Apriori pruning (a subset is tried only if all
    its subsets one item smaller passed the filter), and those passing ``isFrequent``
    form the first iteration. If the estimate is accurate this already yields every
    frequent single item, since each variable is the target of a tree.
Later iterations (merging)
    Every itemset found in the previous iteration is merged (union of items; pairs
    that give one column two values are skipped) with every itemset of the first
    iteration; new unions passing ``isFrequent`` form the next iteration, until one
    finds nothing new. The paper merges with all earlier iterations; the first
    iteration holds every frequent single item, so merging with it keeps the
    completeness argument of Theorem 2 (each frequent itemset is a frequent itemset
    one item smaller plus a frequent item, if supports are monotone, as they are for
    an accurate estimate) while bounding each iteration's work by
    ``|previous| x |first|`` candidates.
``isFrequent`` (Algorithm 3)
    The support of a candidate is a weighted mean of the chains' densities
    (:meth:`DensityEstimator.chain_densities
    <dprm.itemsets.estimator.DensityEstimator.chain_densities>`), each chain weighted
    by where the candidate's variables stand in its order: with ``O`` their sorted
    positions (from 1) and ``m`` the number of variables,
    ``w = sum_i (m - O_i) + sum_{i>=2} (m - (O_i - O_{i-1}))``, normalised over the
    chains (uniform if all are 0). Chains that put the variables early and close
    together, where the density needs the least marginalisation, count more. (The
    paper writes ``|O|`` where ``m`` must be meant: with ``|O|`` the weights can be
    negative.) A candidate passes when its weighted support is ``>= θ``.
Stopping early
    ``max_seconds`` stops between candidate batches and returns the itemsets found
    so far, which already have several lengths after the first iteration;
    ``max_length`` leaves out longer candidates.

The time ISON takes depends on the estimate (its trees, domains and the number of
frequent itemsets), not on the number of rows learned. Supports are estimates; an
estimate with t-closeness gives t-close supports, not differential privacy.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from dprm.itemsets.estimator import DensityEstimator
>>> rng = np.random.default_rng(0)
>>> a = rng.choice(["x", "y"], p=[0.8, 0.2], size=5000)
>>> b = np.where(a == "x", "u", rng.choice(["u", "v"], size=5000))
>>> est = DensityEstimator(n_chains=2, grace_period=100, random_state=0).fit(pd.DataFrame({"a": a, "b": b}))
>>> [(s.items, round(s.support, 1)) for s in mine_itemsets(est, min_support=0.3)]
[({'b': 'u'}, 0.9), ({'a': 'x'}, 0.8), ({'a': 'x', 'b': 'u'}, 0.8)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.estimator import DensityEstimator

__all__ = ["Itemset", "IsonRun", "chain_weights", "mine_itemsets", "run_ison"]

#: Candidates evaluated per call of the estimate (bounds memory; time is checked between).
BATCH = 20000


@dataclass(frozen=True)
class Itemset:
    """An itemset and its estimated support.

    Attributes
    ----------
    items : dict of str to str
        Column -> value (as the text written in the file), in the estimator's column order.
    support : float
        The estimated share of rows holding all the items.
    """

    items: dict[str, str]
    support: float

    def __len__(self) -> int:
        return len(self.items)


@dataclass
class IsonRun:
    """What a run of ISON found and how it went.

    Attributes
    ----------
    itemsets : list of Itemset
        By length, then by decreasing support.
    found_per_iteration : list of int
        Itemsets found in each iteration (the first from the trees' paths).
    candidates : int
        Candidates whose support was estimated.
    stopped_early : bool
        Whether ``max_seconds`` stopped the run.
    seconds : float
        Wall-clock time.
    """

    itemsets: list[Itemset]
    found_per_iteration: list[int] = field(default_factory=list)
    candidates: int = 0
    stopped_early: bool = False
    seconds: float = 0.0


def chain_weights(estimator: DensityEstimator, codes: np.ndarray) -> np.ndarray:
    """Algorithm 3's weight of each chain for each candidate (rows normalised).

    Parameters
    ----------
    estimator : DensityEstimator
    codes : numpy.ndarray of int, shape (n, n_columns)
        Candidates as code rows (-1 where a column is not in the itemset).

    Returns
    -------
    numpy.ndarray of float64, shape (n, n_chains)

    Examples
    --------
    >>> from dprm.itemsets.estimator import DensityEstimator
    >>> from dprm.itemsets.tree_model import ConditionalTree
    >>> leaf = ConditionalTree.single_leaf
    >>> trees = [leaf(0, [1, 1]), leaf(1, [1, 1]), leaf(2, [1, 1])]
    >>> est = DensityEstimator.from_trees({"a": ["0", "1"], "b": ["0", "1"], "c": ["0", "1"]},
    ...     [([0, 1, 2], trees), ([2, 1, 0], trees[::-1])])
    >>> chain_weights(est, np.array([[0, -1, -1], [0, 0, -1]])).round(3).tolist()
    [[1.0, 0.0], [0.625, 0.375]]
    """
    codes = np.atleast_2d(codes)
    m = codes.shape[1]
    assigned = codes >= 0
    weights = np.empty((len(codes), len(estimator.chains_)))
    for c, chain in enumerate(estimator.chains_):
        position = chain.position() + 1
        positions = np.where(assigned, position[None, :], np.iinfo(np.int64).max)
        ordered = np.sort(positions, axis=1)
        k = assigned.sum(axis=1)
        first = np.where(assigned, m - position[None, :], 0).sum(axis=1)
        gaps = np.diff(ordered, axis=1)
        valid = np.arange(m - 1)[None, :] < (k - 1)[:, None]
        second = np.where(valid, m - gaps, 0).sum(axis=1)
        weights[:, c] = first + second
    totals = weights.sum(axis=1, keepdims=True)
    return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / weights.shape[1])


class _Miner:
    """The state of one run: the estimate, the threshold, what was tried and found."""

    def __init__(self, estimator: DensityEstimator, min_support: float, max_length: int | None,
                 max_seconds: float | None, method: str) -> None:
        self.estimator = estimator
        self.method = method
        self.min_support = min_support
        self.max_length = max_length
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        self.tried: set[bytes] = set()
        self.support: dict[bytes, float] = {}
        self.rows: dict[bytes, np.ndarray] = {}
        self.candidates = 0
        self.stopped = False

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.stopped = True
        return self.stopped

    def evaluate(self, rows: np.ndarray) -> list[bytes]:
        """Estimate the support of new candidate rows; return the keys of those that pass."""
        if len(rows) == 0:
            return []
        rows = _unique_rows(rows)
        if self.max_length is not None:
            rows = rows[(rows >= 0).sum(axis=1) <= self.max_length]
        keys = [row.tobytes() for row in rows]
        fresh = [i for i, key in enumerate(keys) if key not in self.tried]
        passed: list[bytes] = []
        for start in range(0, len(fresh), BATCH):
            if self.out_of_time():
                break
            chunk = rows[fresh[start:start + BATCH]]
            wide = chunk.astype(np.int64)
            supports = self.estimator.density_many(wide, chain_weights(self.estimator, wide), method=self.method)
            self.candidates += len(chunk)
            for row, value in zip(chunk, supports):
                key = row.tobytes()
                self.tried.add(key)
                if value >= self.min_support:
                    self.support[key] = float(value)
                    self.rows[key] = row
                    passed.append(key)
        return passed


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows (as int16 codes), sorted by their bytes: a 1-d sort, not numpy's row-wise one."""
    rows = np.ascontiguousarray(rows, dtype=np.int16)
    if len(rows) == 0:
        return rows
    as_bytes = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first = np.unique(as_bytes, return_index=True)
    return rows[np.sort(first)]


def _path_itemsets(estimator: DensityEstimator) -> np.ndarray:
    """Every tree path with its target set to each category, as code rows (deduplicated)."""
    m = len(estimator.columns_)
    rows = []
    for chain in estimator.chains_:
        for tree in chain.trees:
            for _, conditions in tree.paths():
                base = np.full(m, -1, dtype=np.int16)
                for column, code in conditions:
                    base[column] = code
                block = np.repeat(base[None, :], tree.n_classes, axis=0)
                block[:, tree.target] = np.arange(tree.n_classes)
                rows.append(block)
    return _unique_rows(np.vstack(rows))


def _first_iteration(miner: _Miner, paths: np.ndarray) -> list[bytes]:
    """Frequent subsets of the path itemsets, level by level with Apriori pruning."""
    m = paths.shape[1]
    found: list[bytes] = []
    # level 1: every item on some path
    columns, = np.nonzero((paths >= 0).any(axis=0))
    singles = []
    for column in columns:
        for code in np.unique(paths[paths[:, column] >= 0, column]):
            row = np.full(m, -1, dtype=np.int16)
            row[column] = code
            singles.append(row)
    level = miner.evaluate(np.array(singles))
    found += level
    frequent = set(level)
    size = 1
    while level and not miner.out_of_time():
        size += 1
        if miner.max_length is not None and size > miner.max_length:
            break
        # extend each frequent (size-1)-subset of a path by a later item of the same path
        candidates = []
        current = np.array([miner.rows[key] for key in level])
        for path in paths:
            if (path >= 0).sum() < size:
                continue
            inside = current[((current < 0) | (current == path[None, :])).all(axis=1)]
            if len(inside) == 0:
                continue
            for row in inside:
                last = int(np.flatnonzero(row >= 0).max())
                for column in np.flatnonzero(path >= 0):
                    if column > last:
                        extended = row.copy()
                        extended[column] = path[column]
                        candidates.append(extended)
        if not candidates:
            break
        candidates_array = _unique_rows(np.array(candidates))
        keep = [row for row in candidates_array if _all_subsets_in(row, frequent)]
        level = miner.evaluate(np.array(keep)) if keep else []
        found += level
        frequent.update(level)
    return found


def _all_subsets_in(row: np.ndarray, frequent: set[bytes]) -> bool:
    for column in np.flatnonzero(row >= 0):
        subset = row.copy()
        subset[column] = -1
        if subset.tobytes() not in frequent:
            return False
    return True


def _merge(current: np.ndarray, partners: np.ndarray) -> np.ndarray:
    """The consistent unions of every row of ``current`` with every row of ``partners``, new ones only."""
    out = []
    for start in range(0, len(current), 256):
        block = current[start:start + 256]
        a, b = block[:, None, :], partners[None, :, :]
        conflict = ((a >= 0) & (b >= 0) & (a != b)).any(axis=2)
        union = np.maximum(a, b)
        grows = ((union >= 0).sum(axis=2) > (a >= 0).sum(axis=2))
        ok = ~conflict & grows
        out.append(_unique_rows(union[ok]))
    return np.vstack(out) if out else np.zeros((0, current.shape[1]), dtype=np.int16)


def run_ison(
    estimator: DensityEstimator,
    min_support: float,
    max_length: int | None = None,
    max_seconds: float | None = None,
    *,
    method: str = "exact-or-sample",
) -> IsonRun:
    """ISON with ``isFrequent`` on ``estimator`` (see the module notes), with run details.

    Parameters
    ----------
    estimator : DensityEstimator
        A fitted estimate (or one built from trees).
    min_support : float
        ``θ`` in (0, 1]: the least estimated share of rows an itemset needs.
    max_length : int, optional
        Leave out itemsets with more items.
    max_seconds : float, optional
        Stop after about this long and return what was found.
    method : {"exact-or-sample", "paths"}
        How the estimate marginalises (:meth:`DensityEstimator.chain_densities
        <dprm.itemsets.estimator.DensityEstimator.chain_densities>`). The corrections
        of t-closeness to edge distributions matter only to ``"paths"``; those to class
        distributions matter to both.

    Returns
    -------
    IsonRun
    """
    if not (isinstance(min_support, int | float) and 0.0 < float(min_support) <= 1.0):
        raise ParameterError(f"min_support must lie in (0, 1], got {min_support!r}")
    if max_length is not None and max_length < 1:
        raise ParameterError("max_length must be at least 1")
    if max_seconds is not None and max_seconds <= 0:
        raise ParameterError("max_seconds must be positive")
    if method not in ("exact-or-sample", "paths"):
        raise ParameterError(f"method must be 'exact-or-sample' or 'paths', not {method!r}")
    started = time.perf_counter()
    miner = _Miner(estimator, float(min_support), max_length, max_seconds, method)
    first = _first_iteration(miner, _path_itemsets(estimator))
    per_iteration = [len(first)]
    partners = np.array([miner.rows[key] for key in first]) if first else None
    level = first
    while level and partners is not None and not miner.out_of_time():
        current = np.array([miner.rows[key] for key in level])
        level = miner.evaluate(_merge(current, partners))
        if level:
            per_iteration.append(len(level))
    columns = estimator.columns_
    categories = [estimator.variables_[name].categories for name in columns]
    itemsets = []
    for key, support in miner.support.items():
        row = miner.rows[key]
        items = {columns[j]: categories[j][row[j]] for j in np.flatnonzero(row >= 0)}
        itemsets.append(Itemset(items, support))
    itemsets.sort(key=lambda s: (len(s.items), -s.support, list(s.items.items())))
    return IsonRun(itemsets, per_iteration, miner.candidates, miner.stopped, time.perf_counter() - started)


def mine_itemsets(
    estimator: DensityEstimator,
    min_support: float,
    max_length: int | None = None,
    max_seconds: float | None = None,
    *,
    method: str = "exact-or-sample",
) -> list[Itemset]:
    """The itemsets ISON finds frequent in ``estimator`` (see :func:`run_ison`)."""
    return run_ison(estimator, min_support, max_length, max_seconds, method=method).itemsets
