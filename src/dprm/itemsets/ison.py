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
    that give one column two values are skipped) with every frequent *single item* of
    the first iteration; new unions passing ``isFrequent`` form the next iteration,
    until one finds nothing new. The paper merges with all earlier iterations' itemsets.
    Merging with the single items is complete by the argument of the paper's Theorem 2
    (each frequent itemset is a frequent itemset one item smaller plus a frequent item,
    if supports are monotone, as they are for an accurate estimate), and the first
    iteration holds every frequent single item (each variable is the target of a
    tree). Merging with the first iteration's longer itemsets too only re-forms unions
    that single items form as well: on mushroom at θ = 0.2 it finds 53,497 itemsets
    from 1,266,057 candidates in 15.4 CPU s, the single items 53,495 (TPR 0.9971
    against 0.9972) from 633,024 in 4.7 s; on vote 13,246 both, in 13.8 and 1.3 s. Each
    iteration's work is then bounded by ``|previous| x |frequent items|`` candidates. A
    merged candidate one of whose subsets one item smaller was already tried and found
    infrequent is skipped without estimating its support (Apriori's pruning, sound
    when supports are monotone).
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
Refusing a listing too large (:data:`MAX_ITEMSETS`)
    A few rows of many columns have astronomically many frequent itemsets (four rows of
    500 two-valued columns, two rows sharing about 250 items: about ``2^250`` at
    θ = 0.5), and ISON, which lists them level by level, ran for hours. A complete run
    (no ``max_seconds``, no ``max_itemsets``) is refused instead, one line
    (:class:`~dprm.errors.ParameterError`), when it would list more than
    :data:`MAX_ITEMSETS` itemsets: right after the single items are estimated, an
    itemset is grown greedily from them, one frequent item at a time (the union of
    largest support; :func:`_refuse_explosion`, at most
    ``explosive_length(...) x |frequent items|`` supports estimated and not recorded,
    so the run's itemsets, counts and supports are those of a run without it). An
    itemset of ``m`` items whose support reaches θ has ``2^m - 1`` non-empty subsets,
    every one frequent when supports are monotone, as ISON's completeness assumes (a
    support read off a reference sample is; the weights of the chains, which depend
    on the candidate's variables, can make a subset's support differ by the estimate's
    error): once the greedy itemset has :func:`explosive_length` items, those subsets
    (of at most ``max_length`` items) number more than :data:`MAX_ITEMSETS`. A table of
    at most 25 columns can never have that many, and is not probed. A wide table at a
    high θ has millions of frequent itemsets none of them long (2,000 rows of 500 columns
    at θ = 0.9: about 10^7, of at most 16 items), which the greedy probe cannot see; so
    the frequent single items' *deficits* then bound from below how many sets of them
    reach θ whatever the estimate does between them (a union bound,
    :mod:`dprm.itemsets.near_certain`; no support estimated), and more than the limit is
    refused too (:func:`_refuse_certain`). The limit is :data:`MAX_ITEMSETS`, or fewer
    itemsets when each takes more than ``MAX_LISTING_BYTES / MAX_ITEMSETS`` bytes
    (:func:`listing_limit`: 4,194,304 itemsets of 500 columns). Missed by both probes, a
    listing is still refused once it holds more than the limit (counted, exact). The
    estimate is all the checks read: on a differentially private estimate they are
    post-processing.

Bookkeeping
    The single items (every item on a path) are estimated first, from code rows; the
    candidates are then item bitsets over the single items that reach θ only (a longer
    candidate holding any other is pruned anyway), so a column declared with 32,767
    categories costs its frequent ones (:meth:`_PathIndex.cover`).
    Candidates are item bitsets (:mod:`dprm.itemsets.candidates`): every candidate
    ever generated goes into an exact hash set, so none is estimated or pruned twice,
    and the rejected ones into another, so Apriori's pruning costs one lookup per
    subset. Merging runs over all pairs of a block of the previous iteration and the
    first iteration in compiled code, writing out only the new, unpruned unions.

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

import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dprm.data.literal_index import pack_rows
from dprm.errors import ParameterError, short_repr
from dprm.itemsets.candidates import ItemCodec, KeySet, merge_new, without_rejected_subsets
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.near_certain import certain_subsets, deficits
from dprm.itemsets.parameters import Setting, check_settings, finite_number, whole_number
from dprm.precompiled import kernel

__all__ = ["Itemset", "IsonRun", "LIMITS", "MAX_COLUMN_ITEMS", "MAX_ITEMSETS", "MAX_LISTING_BYTES", "chain_weights",
           "check_fitted", "check_item_codes", "check_limits", "explosive_length", "listing_bytes", "listing_limit",
           "listing_order", "mine_itemsets", "run_ison"]

#: Candidates evaluated per call of the estimate (bounds memory; time is checked between).
BATCH = 20000
#: Itemsets found decoded to code rows at a time when they are made :class:`Itemset` objects (bounds memory).
DECODE_BATCH = 65536
#: The most bytes one level's candidates may take, bounded before they are made
#: (:meth:`_PathIndex._check_room`).
MAX_CANDIDATE_BYTES = 4 << 30
#: The least batch of a run capped by ``max_itemsets`` (:meth:`_Miner._chunk`).
CAPPED_BATCH = 1024
#: The most itemsets a complete run lists (public, a constant): a run that would list more is refused
#: (module notes, *Refusing a listing too large*). ``2^25``: the dense 683 x 35 table lists 6.3 million at
#: θ = 0.3, and a listing takes about 2 KB per itemset (1.26 GB for its first 569,280), so one of more than
#: ``2^25`` would need some 70 GB.
MAX_ITEMSETS = 1 << 25
#: The most bytes a complete run's listing may hold (public, a constant): a listing of itemsets over many
#: columns is refused at fewer than :data:`MAX_ITEMSETS` itemsets (:func:`listing_limit`). 4 GiB, as
#: :data:`MAX_CANDIDATE_BYTES`: at least 1,024 bytes an itemset on the wide 500-column table, whose 10^7
#: itemsets frequent at θ = 0.9 took more than 6 GB within 9 minutes, far from done.
MAX_LISTING_BYTES = 4 << 30
#: The most codes of a column ISON takes (categories, and a missing value): its code rows are ``int16``
#: (:func:`check_item_codes`).
MAX_COLUMN_ITEMS = int(np.iinfo(np.int16).max)


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
    pruned : int
        Candidates skipped because a subset one item smaller was found infrequent
        (a merged candidate formed again is skipped, and counted, again).
    stopped_early : bool
        Whether ``max_seconds`` stopped the run.
    too_many : bool
        Whether ``max_itemsets`` stopped it (the itemsets are then incomplete).
    seconds : float
        Wall-clock time.
    """

    itemsets: list[Itemset]
    found_per_iteration: list[int] = field(default_factory=list)
    candidates: int = 0
    pruned: int = 0
    stopped_early: bool = False
    seconds: float = 0.0
    too_many: bool = False


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
    # The second sum telescopes: sum_{i>=2} (m - (O_i - O_{i-1})) = (k - 1) m - (O_k - O_1), so a candidate's
    # weight is k m - sum O + (k - 1) m - (max O - min O): whole numbers, read off its k items (no sort of
    # every column's position: that was most of ISON's estimating on a table of 500 columns).
    rows, columns = np.nonzero(codes >= 0)  # each candidate's items, candidate by candidate
    k = np.bincount(rows, minlength=len(codes))
    has = np.flatnonzero(k)
    starts = np.concatenate([[0], np.cumsum(k[has])[:-1]]).astype(np.int64)
    weights = np.zeros((len(codes), len(estimator.chains_)))
    for c, chain in enumerate(estimator.chains_):
        position = (chain.position() + 1)[columns]
        total = np.zeros(len(codes), dtype=np.int64)
        spread = np.zeros(len(codes), dtype=np.int64)
        if len(has):
            total[has] = np.add.reduceat(position, starts)
            spread[has] = np.maximum.reduceat(position, starts) - np.minimum.reduceat(position, starts)
        weights[:, c] = np.where(k > 0, k * m - total + (k - 1) * m - spread, 0)
    totals = weights.sum(axis=1, keepdims=True)
    return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / weights.shape[1])


class _Miner:
    """The state of one run: the estimate, the threshold, what was generated, rejected and found.

    Itemsets are item bitsets (:mod:`dprm.itemsets.candidates`); ``seen`` holds every
    candidate generated so far (estimated, pruned or too long), so none is looked at twice.
    """

    def __init__(self, estimator: DensityEstimator, min_support: float, max_length: int | None,
                 max_seconds: float | None, method: str, max_itemsets: int | None = None,
                 memo: dict[bytes, float] | None = None) -> None:
        self.max_itemsets = max_itemsets
        self.memo = memo
        self.n_found = 0
        self.too_many = False
        self.estimator = estimator
        self.method = method
        self.min_support = min_support
        # no itemset has more items than the estimate has columns (a larger limit, 10**30 say, is none)
        self.max_length = None if max_length is None else min(max_length, len(estimator.variables_))
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        # the bitsets' items: until the single items are estimated every item (the missing value is no item),
        # then only those that can be frequent (:meth:`hold`)
        self.hold(ItemCodec([d.n_items for d in estimator.variables_.values()]))
        self.pruned = 0
        self.found: list[np.ndarray] = []
        self.supports: list[np.ndarray] = []
        self.candidates = 0
        self.stopped = False

    def hold(self, codec: ItemCodec) -> None:
        """Write candidates with ``codec`` from now on: the seen and rejected sets start again, empty.

        Called before any candidate is recorded (the single items' supports are estimated
        from code rows): ISON's candidates after the single items are made of frequent
        single items only (Apriori's pruning drops any other), so a codec holding those
        (:meth:`_PathIndex.cover`) writes every one; the rejected single items, which the
        codec need not hold, prune nothing (no later candidate holds one).
        """
        self.codec = codec
        self.seen = KeySet(codec.n_words)
        self.rejected = KeySet(codec.n_words)
        self.limit = listing_limit(codec.n_columns, codec.n_words)

    def limit_reason(self) -> str:
        """Why the listing's limit is below :data:`MAX_ITEMSETS` (empty when it is that)."""
        if self.limit >= MAX_ITEMSETS:
            return ""
        return (f" (at least {listing_bytes(self.codec.n_columns, self.codec.n_words):,} bytes an itemset of "
                f"{self.codec.n_columns:,} columns: at most {MAX_LISTING_BYTES / 2**30:g} GiB)")

    @property
    def complete(self) -> bool:
        """Whether the run lists every frequent itemset (neither ``max_seconds`` nor ``max_itemsets`` stops it),
        so that a listing beyond :data:`MAX_ITEMSETS` is refused rather than cut."""
        return self.deadline is None and self.max_itemsets is None

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.stopped = True
        if self.max_itemsets is not None and self.n_found > self.max_itemsets:
            self.stopped = self.too_many = True
        if self.max_itemsets is None and self.n_found > self.limit:
            raise ParameterError(f"more than {self.limit:,} itemsets reach support {self.min_support:g} in the "
                                 f"estimate, more than a run lists{self.limit_reason()}; {REMEDY}")
        return self.stopped

    def evaluate(self, rows: np.ndarray) -> np.ndarray:
        """Estimate the support of the candidate code rows not seen before; return those that pass (rows)."""
        items, _ = self.codec.encode(rows)
        items = items[self.seen.add(items)]
        if self.max_length is not None:
            items = items[_lengths(items) <= self.max_length]
        keep = without_rejected_subsets(items, self.rejected)
        self.pruned += int((~keep).sum())
        return self.codec.decode(self.evaluate_items(items[keep]))

    def found_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The itemsets found, as code rows in the order found, and their supports."""
        if not self.found:
            return np.zeros((0, self.codec.n_columns), dtype=np.int16), np.zeros(0)
        return self.codec.decode(np.vstack(self.found)), np.concatenate(self.supports)

    def found_itemsets(self) -> list[Itemset]:
        """The itemsets found, in the order found, made :data:`DECODE_BATCH` at a time from their bitsets.

        :meth:`found_rows` of a listing of millions of itemsets of a wide table is gigabytes
        (an ``int16`` code row of every column an itemset: 1,000 bytes on 500 columns, 2 GB
        for the 1,982,463 itemsets of session 57's table, held while every itemset was made).
        """
        if not self.found:
            return []
        items, supports = np.vstack(self.found), np.concatenate(self.supports)
        itemsets: list[Itemset] = []
        for start in range(0, len(items), DECODE_BATCH):
            itemsets += itemsets_of_rows(self.estimator, self.codec.decode(items[start:start + DECODE_BATCH]),
                                         supports[start:start + DECODE_BATCH])
        return itemsets

    def _chunk(self) -> int:
        """Candidates to estimate before the next check: :data:`BATCH`, or with ``max_itemsets`` no more than
        could still pass before it is exceeded (at least :data:`CAPPED_BATCH`).

        A capped run gives up as soon as it has found more than ``max_itemsets`` (a check
        follows every batch that finds one, so giving up depends only on how many the
        whole run would find: the same whatever the batches), so it estimates no batch of
        :data:`BATCH` candidates past that point.
        """
        if self.max_itemsets is None:
            return BATCH
        return min(BATCH, max(CAPPED_BATCH, self.max_itemsets + 1 - self.n_found))

    def evaluate_items(self, items: np.ndarray) -> np.ndarray:
        """Estimate the support of new candidates (item bitsets); return those that pass."""
        passed = [np.zeros((0, self.codec.n_words), dtype=np.uint64)]
        start = 0
        while start < len(items):
            if self.out_of_time():
                break
            chunk = items[start:start + self._chunk()]
            start += len(chunk)
            supports = self.supports_of(chunk)
            self.candidates += len(chunk)
            ok = supports >= self.min_support
            self.rejected.add(chunk[~ok])
            passed.append(self._record(chunk[ok], supports[ok]))
        return np.vstack(passed)

    def evaluate_singles(self, rows: np.ndarray, supports: np.ndarray) -> np.ndarray:
        """Record the single items (code rows) whose supports were estimated already, batch by batch as
        :meth:`evaluate_items` records candidates (the same stops and counts); return those that pass (rows).

        Only the passing ones are written as bitsets (the codec need hold no other:
        :meth:`hold`); the failing ones go to no set (they prune nothing).
        """
        passed = [np.zeros((0, self.codec.n_columns), dtype=np.int16)]
        start = 0
        while start < len(rows):
            if self.out_of_time():
                break
            stop = min(len(rows), start + self._chunk())
            ok = supports[start:stop] >= self.min_support
            self.candidates += stop - start
            items, _ = self.codec.encode(rows[start:stop][ok])
            self.seen.add(items)
            self._record(items, supports[start:stop][ok])
            passed.append(np.asarray(rows[start:stop][ok], dtype=np.int16))
            start = stop
        return np.vstack(passed)

    def _record(self, items: np.ndarray, supports: np.ndarray) -> np.ndarray:
        """Record candidates found frequent (item bitsets) with their supports; return them."""
        self.found.append(items)
        self.n_found += len(items)
        self.supports.append(supports)
        return items


    def supports_of(self, items: np.ndarray) -> np.ndarray:
        """The estimated supports of item bitsets; with a ``memo`` (code row bytes -> support), those
        estimated before are recalled and the others estimated and remembered.

        A support depends on its candidate alone (the chains' densities row by row, the
        reference samples drawn once), so a recalled one is the number estimating it again gives.
        The key is the itemset's code row (``int16``), not its bitset: searches sharing a memo may
        write their bitsets with different codecs (:meth:`hold`).
        """
        if self.memo is None:
            return self._estimate(items)
        rows = np.ascontiguousarray(self.codec.decode(items))
        keys = rows.view(np.dtype((np.void, 2 * self.codec.n_columns))).ravel().tolist()
        known = [self.memo.get(key) for key in keys]
        new = np.array([support is None for support in known], dtype=bool)
        supports = np.array([0.0 if support is None else support for support in known])
        if new.any():
            supports[new] = self.estimate_rows(rows[new])
            self.memo.update(zip((key for key, is_new in zip(keys, new) if is_new), supports[new].tolist()))
        return supports

    def _estimate(self, items: np.ndarray) -> np.ndarray:
        return self.estimate_rows(self.codec.decode(items))

    def estimate_rows(self, rows: np.ndarray) -> np.ndarray:
        """The estimated supports of itemsets given as code rows (-1 where a column is absent)."""
        wide = np.asarray(rows).astype(np.int64)
        return self.estimator.density_many(wide, chain_weights(self.estimator, wide), method=self.method)


def _lengths(items: np.ndarray) -> np.ndarray:
    """The number of items of each item bitset."""
    return np.bitwise_count(items).sum(axis=1) if items.size else np.zeros(len(items), dtype=np.int64)


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows (as int16 codes), sorted by their bytes: a 1-d sort, not numpy's row-wise one."""
    rows = np.ascontiguousarray(rows, dtype=np.int16)
    if len(rows) == 0:
        return rows
    as_bytes = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first = np.unique(as_bytes, return_index=True)
    return rows[np.sort(first)]


def _path_itemsets(estimator: DensityEstimator) -> np.ndarray:
    """Every tree path with its target set to each category, as code rows (in tree order; a path of several
    trees is there several times).

    A tree's branch or target state that is a column's missing value (its code past the
    last category) is no item: it is left out of the row, which is then a subset of the
    path's itemset (subsets are ISON's candidates anyway).
    """
    m = len(estimator.columns_)
    check_item_codes(estimator)
    n_items = np.array([d.n_items for d in estimator.variables_.values()], dtype=np.int16)
    rows = []
    for chain in estimator.chains_:
        for tree in chain.trees:
            paths = tree.paths()
            block = np.full((len(paths), tree.n_classes, m), -1, dtype=np.int16)  # path, target's category, column
            at, columns, codes = [], [], []
            for i, (_, conditions) in enumerate(paths):
                for column, code in conditions:
                    at.append(i)
                    columns.append(column)
                    codes.append(code)
            block[at, :, columns] = np.array(codes, dtype=np.int16)[:, None]
            block[:, :, tree.target] = np.arange(tree.n_classes)
            rows.append(block.reshape(-1, m))
    paths = np.vstack(rows)
    paths[paths >= n_items[None, :]] = -1  # the missing value of a column is no item
    return paths  # duplicates kept: a path twice in the index extends a row as once (0.02 s less)


def path_index(estimator: DensityEstimator) -> _PathIndex:
    """The estimate's path itemsets, indexed for ISON's first iteration (:class:`_PathIndex`)."""
    return _PathIndex(_path_itemsets(estimator))


def _keys(rows: np.ndarray) -> np.ndarray:
    """Each int16 row as one opaque value (its bytes), for sorting and lookups."""
    rows = np.ascontiguousarray(rows, dtype=np.int16)
    return rows.view(np.dtype((np.void, 2 * rows.shape[1]))).ravel()


def _members(rows: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Which rows are among the (sorted) keys."""
    if len(sorted_keys) == 0 or len(rows) == 0:
        return np.zeros(len(rows), dtype=bool)
    keys = _keys(rows)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


class _PathIndex:
    """The path itemsets (:func:`_path_itemsets`), their single items, and one bitset over the paths per item
    that can be frequent (column, code).

    Built once per estimate and search (and shared by the probes of a top-k search, whose
    thresholds only rise from the first probe's). The single items are every item on some
    path; their supports are estimated once per ``method`` (a support depends on its
    itemset alone). The bitsets (:meth:`cover`) hold only the items whose single support
    reaches the threshold of the search that built them: the later levels' candidates are
    made of frequent items only (Apriori's pruning drops a candidate holding any other), so
    an item never frequent need not be indexed, and the paths are kept with their lengths
    but without such items (the same paths twice are one: a path extends a row once). A
    column declared with 32,767 categories put 32,767 rows per leaf of its tree among the
    paths and as many items in every bitset; now its frequent categories only.
    """

    def __init__(self, paths: np.ndarray) -> None:
        self.rows = paths
        m = paths.shape[1]
        singles = []
        for column in np.flatnonzero((paths >= 0).any(axis=0)):
            for code in np.flatnonzero(np.bincount(paths[paths[:, column] >= 0, column])):  # not np.unique: numpy.ma
                row = np.full(m, -1, dtype=np.int16)
                row[column] = code
                singles.append(row)
        self.singles = np.array(singles, dtype=np.int16).reshape(-1, m)
        self.single_supports: dict[str, np.ndarray] = {}  # method -> the singles' supports
        self.codec: ItemCodec | None = None  # the items indexed (None: not built yet)

    def supports_of_singles(self, miner: _Miner) -> np.ndarray:
        """The single items' supports (estimated once per ``miner.method``, in batches of :data:`BATCH`)."""
        if miner.method not in self.single_supports:
            self.single_supports[miner.method] = np.concatenate(
                [np.zeros(0)] + [miner.estimate_rows(self.singles[start:start + BATCH])
                                 for start in range(0, len(self.singles), BATCH)])
        return self.single_supports[miner.method]

    def cover(self, frequent: np.ndarray, sizes: Sequence[int]) -> None:
        """Index (at least) the items of ``frequent`` (single items as code rows), building the index anew unless
        it holds them already (a top-k search's later probes, whose thresholds are higher).

        ``sizes``: every column's number of items (the codec's domains).
        """
        rows = np.asarray(frequent)
        columns = np.argmax(rows >= 0, axis=1)
        codes = rows[np.arange(len(rows)), columns]
        if self.codec is not None and self.codec.holds(rows).sum() == len(rows):
            return  # every one indexed already
        held = [np.sort(codes[columns == j]).astype(np.int64) for j in range(len(sizes))]
        self.codec = ItemCodec(sizes, held)
        paths = self.rows.astype(np.int64)
        indexed = self.codec.ranks(np.where(self.codec.holds_cells(paths), paths, -1))
        lengths = (self.rows >= 0).sum(axis=1)  # of the whole paths: the paths long enough for a level
        # the same (indexed items, length) twice is one path: it extends a row as once
        distinct = _unique_rows(np.column_stack([indexed, lengths]).astype(np.int16))
        self.paths, self.lengths = distinct[:, :-1].astype(np.int64), distinct[:, -1].astype(np.int64)
        self.sizes, self.offsets = self.codec.sizes, self.codec.offsets
        self.item_column = self.codec.item_column
        self.item_code = (np.arange(self.codec.n_items) - self.offsets[self.item_column]).astype(np.int64)  # ranks
        holds = np.zeros((self.codec.n_items, len(self.paths)), dtype=bool)
        p, c = np.nonzero(self.paths >= 0)
        holds[self.offsets[c] + self.paths[p, c], p] = True
        self.bits = np.ascontiguousarray(pack_rows(holds))

    def extensions(self, level: np.ndarray, size: int) -> np.ndarray:
        """Every row of ``level`` extended by one item of a path of at least ``size`` items holding it, at a
        column after its last one (of the items indexed: :meth:`cover`).

        The paths holding a row are the AND of its items' bitsets over the paths (here only
        those of ``size`` items or more); an item extends the row when its own bitset meets
        that AND (compiled: ``_candidate_kernels._extend``, on the items' ranks in the index).
        Rows in order, each row's extensions in item order, duplicates dropped (the first kept).
        """
        m = self.rows.shape[1]
        if len(level) == 0 or len(self.paths) == 0:
            return np.zeros((0, m), dtype=np.int16)
        self._check_room(level, size)
        longer = pack_rows((self.lengths >= size)[None, :])[0]
        grown = kernel("dprm.itemsets._candidate_kernels", "_extend")(
            np.ascontiguousarray(self.codec.ranks(level), dtype=np.int16),
            np.ascontiguousarray(self.bits & longer[None, :]), self.offsets, self.sizes, self.item_column,
            self.item_code)
        if len(grown) == 0:
            return np.zeros((0, m), dtype=np.int16)
        return _unique_rows(self.codec.codes_of_ranks(grown))

    def _check_room(self, level: np.ndarray, size: int) -> None:
        """Refuse a level whose candidates could need more than :data:`MAX_CANDIDATE_BYTES`, before making them.

        The bound: every row extended by every item of a column after its last one (the
        compiled extension allocates what it finds). Measured (session 52): at most 0.02 GiB
        listing every itemset of the dense 683 × 35 table at θ = 0.3, 0.001 GiB for mushroom
        at θ = 0.1; 89 GiB at the second level of 3,000 columns of four rows, where every
        itemset of a row is frequent (12,000 such columns were killed at 24 GB instead of told).
        """
        present = level >= 0
        has = present.any(axis=1)
        last = level.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
        after = int(self.sizes.sum()) - (self.offsets + self.sizes)[last[has]]
        needed = int(after.sum()) * level.shape[1] * 2  # int16 codes
        if needed > MAX_CANDIDATE_BYTES:
            raise ParameterError(f"itemsets of {size} items could take {needed / 2**30:,.0f} GiB as candidates "
                                 f"(at most {MAX_CANDIDATE_BYTES / 2**30:g} GiB): too many itemsets are frequent at "
                                 f"this support; raise --min-support or bound --max-length")


#: What to do instead of listing too many itemsets (the command line's options; the library's are
#: :func:`dprm.itemsets.top_k.run_top_k`, ``min_support`` and ``max_length``).
REMEDY = "use --top-k K (the K itemsets of largest support), a higher --min-support or --max-length L"


def listing_bytes(n_columns: int, n_words: int) -> int:
    """The least bytes ISON holds for each itemset it lists: its bitset (``n_words`` words) found and in the
    set of those seen (at most half full: two slots a key), and its code row (``int16`` a column).

    Public quantities only (the columns, and the items that reach θ in the estimate).

    Examples
    --------
    >>> listing_bytes(500, 1), listing_bytes(35, 2)
    (1024, 118)
    """
    return 8 * n_words + 2 * 8 * n_words + 2 * n_columns


def listing_limit(n_columns: int, n_words: int) -> int:
    """The most itemsets a complete run lists: :data:`MAX_ITEMSETS`, or fewer when :func:`listing_bytes` of
    that many exceed :data:`MAX_LISTING_BYTES`.

    Examples
    --------
    >>> listing_limit(35, 2) == MAX_ITEMSETS, listing_limit(500, 1)
    (True, 4194304)
    """
    return min(MAX_ITEMSETS, MAX_LISTING_BYTES // listing_bytes(n_columns, n_words))


def explosive_length(n_columns: int, max_length: int | None, limit: int | None = None) -> int | None:
    """The fewest items of an itemset whose non-empty subsets of at most ``max_length`` items number more than
    ``limit`` (default :data:`MAX_ITEMSETS`); None when no itemset of at most ``n_columns`` items has that many.

    A function of public quantities only (the number of columns, the options, the constant).

    Examples
    --------
    >>> explosive_length(500, None), explosive_length(25, None), explosive_length(1000, 3), explosive_length(500, 2)
    (26, None, 587, None)
    """
    limit = MAX_ITEMSETS if limit is None else limit
    longest = n_columns if max_length is None else max_length
    count = 0  # the non-empty subsets of m items of at most max_length items
    for m in range(1, n_columns + 1):
        # C(m, j) = C(m-1, j) + C(m-1, j-1): the count for m is twice that of m - 1, plus one, less C(m-1, longest)
        count = 2 * count + 1 - (math.comb(m - 1, longest) if m - 1 >= longest else 0)
        if count > limit:
            return m
    return None


def _refuse_explosion(miner: _Miner, singles: np.ndarray, supports: np.ndarray) -> None:
    """Refuse a run whose listing would exceed its limit (:func:`listing_limit`), seen in many sets of nearly
    certain items (:func:`_refuse_certain`) or in a long frequent itemset (:func:`_refuse_long`, tried first)."""
    _refuse_long(miner, singles, supports)
    _refuse_certain(miner, singles)


def _refuse_certain(miner: _Miner, singles: np.ndarray) -> None:
    """Refuse a run when more sets of the frequent single items ``singles`` (code rows) than its limit reach θ
    by a union bound (:mod:`dprm.itemsets.near_certain`: a lower bound of the listing, read off the
    estimate's trees and reference samples without estimating a support).

    Not probed when the columns of those items cannot hold more sets than the limit (a
    narrow table: its run is the one before this check).
    """
    columns = np.argmax(singles >= 0, axis=1)
    n_columns = len(np.unique(columns))
    if n_columns < 64 and (1 << n_columns) - 1 <= miner.limit:
        return
    deficit = deficits(miner.estimator, singles, miner.method)
    count = certain_subsets(deficit, columns, miner.min_support, miner.max_length, miner.limit + 1)
    if count > miner.limit:
        near = int((deficit <= 1.0 - miner.min_support).sum())
        longest = "" if miner.max_length is None else f" of at most {miner.max_length} items"
        raise ParameterError(f"more than {miner.limit:,} itemsets reach support {miner.min_support:g} in the "
                             f"estimate, more than a run lists{miner.limit_reason()}: every set{longest} of its "
                             f"{near:,} nearly certain items whose shares of the estimate missing them add up to at "
                             f"most {1.0 - miner.min_support:g} does (a union bound); {REMEDY}")


def _refuse_long(miner: _Miner, singles: np.ndarray, supports: np.ndarray) -> None:
    """Refuse a run whose listing would exceed its limit, seen in a long frequent itemset grown greedily.

    ``singles`` are the frequent single items as code rows, ``supports`` theirs. From the
    single item of largest support, each step adds the item whose union with the
    itemset has the largest support among those reaching θ (the items of the itemset's
    columns and those whose union failed are dropped, which monotone supports would
    drop anyway); once the itemset has :func:`explosive_length` items, a
    :class:`~dprm.errors.ParameterError` (module notes). Nothing is recorded: the supports
    estimated here are not the run's candidates. It stops as soon as the items left
    cannot reach that length (fewer columns than items missing).
    """
    need = explosive_length(miner.codec.n_columns, miner.max_length, miner.limit)
    if need is None or len(np.unique(np.nonzero(singles >= 0)[1])) < need:
        return
    pool, _ = miner.codec.encode(singles)
    pool_columns = np.argmax(singles >= 0, axis=1)
    best = int(np.argmax(supports))
    itemset, size = pool[best], 1
    while size < need:
        keep = pool_columns != pool_columns[best]
        pool, pool_columns = pool[keep], pool_columns[keep]
        if len(np.unique(pool_columns)) < need - size:
            return
        unions = pool | itemset[None, :]
        supports = np.concatenate([miner._estimate(unions[start:start + BATCH])
                                   for start in range(0, len(unions), BATCH)])
        passed = supports >= miner.min_support
        if not passed.any():
            return
        best = int(np.argmax(np.where(passed, supports, -np.inf)))
        itemset, size = unions[best], size + 1
        keep = passed
        keep[best] = True  # dropped with its column at the next step
        pool, pool_columns, best = pool[keep], pool_columns[keep], int(np.cumsum(keep)[best] - 1)
    longest = need if miner.max_length is None else min(need, miner.max_length)
    count = sum(math.comb(need, j) for j in range(1, longest + 1))
    subsets = "subsets" if miner.max_length is None else f"subsets of at most {miner.max_length} items"
    raise ParameterError(f"an itemset of {need} items reaches support {miner.min_support:g} in the estimate, so its "
                         f"{count:,} {subsets} are frequent too (supports are monotone): more than the "
                         f"{miner.limit:,} itemsets a run lists at most{miner.limit_reason()}; {REMEDY}")


def _with_all_subsets(candidates: np.ndarray, frequent_sorted: np.ndarray) -> np.ndarray:
    """The candidates all of whose subsets one item smaller are frequent (Apriori pruning)."""
    keep = np.ones(len(candidates), dtype=bool)
    for column in range(candidates.shape[1]):
        has = np.flatnonzero(keep & (candidates[:, column] >= 0))
        if len(has) == 0:
            continue
        subsets = candidates[has].copy()
        subsets[:, column] = -1
        keep[has] &= _members(subsets, frequent_sorted)
    return candidates[keep]


def _first_iteration(miner: _Miner, index: _PathIndex) -> np.ndarray:
    """Frequent subsets of the path itemsets, level by level with Apriori pruning."""
    # level 1: every item on some path, estimated once per index; the candidates are then written with the
    # items that reach θ only (the index's codec: Apriori's pruning leaves no other in a longer candidate)
    supports = index.supports_of_singles(miner)
    index.cover(index.singles[supports >= miner.min_support], miner.codec.sizes)
    miner.hold(index.codec)
    level = miner.evaluate_singles(index.singles, supports)
    if miner.complete:
        _refuse_explosion(miner, *miner.found_rows())
    found = [level]
    size = 1
    while len(level) and not miner.out_of_time():
        size += 1
        if miner.max_length is not None and size > miner.max_length:
            break
        candidates = index.extensions(level, size)
        if len(candidates) == 0:
            break
        candidates = _with_all_subsets(candidates, np.sort(_keys(np.vstack(found))))
        level = miner.evaluate(candidates)
        found.append(level)
    return np.vstack(found)


def run_ison(
    estimator: DensityEstimator,
    min_support: float,
    max_length: int | None = None,
    max_seconds: float | None = None,
    *,
    method: str = "exact-or-sample",
    max_itemsets: int | None = None,
) -> IsonRun:
    """ISON with ``isFrequent`` on ``estimator`` (see the module notes), with run details.

    Parameters
    ----------
    estimator : DensityEstimator
        A fitted estimate (or one built from trees).
    min_support : float
        ``θ`` in (0, 1]: the least estimated share of rows an itemset needs.
    max_length : int, optional
        Leave out itemsets with more items (an integer >= 1).
    max_seconds : float, optional
        Stop after about this long (a positive finite number) and return what was found.
    max_itemsets : int, optional
        Stop once more itemsets than this (an integer >= 0) were found (``IsonRun.too_many``; used by
        :func:`dprm.itemsets.top_k.run_top_k` to give up on a threshold too low).
    method : {"exact-or-sample", "paths"}
        How the estimate marginalises (:meth:`DensityEstimator.chain_densities
        <dprm.itemsets.estimator.DensityEstimator.chain_densities>`). The corrections
        of t-closeness to edge distributions matter only to ``"paths"``; those to class
        distributions matter to both.

    Returns
    -------
    IsonRun
    """
    check_fitted(estimator)
    started = time.perf_counter()
    miner, per_iteration = ison_search(estimator, min_support, max_length, max_seconds, method, max_itemsets)
    itemsets = miner.found_itemsets()
    counts = (miner.candidates, miner.pruned, miner.stopped and not miner.too_many, miner.too_many)
    del miner  # its sets of the candidates seen and rejected, before the listing is sorted
    itemsets = listing_order(itemsets)
    return IsonRun(itemsets, per_iteration, counts[0], counts[1], counts[2], time.perf_counter() - started, counts[3])


def listing_order(itemsets: list[Itemset]) -> list[Itemset]:
    """The itemsets by number of items, then by decreasing support, then by their items (column, value) in
    order, ties in the given order: ``sorted(itemsets, key=lambda s: (len(s.items), -s.support,
    list(s.items.items())))``, without a key of every itemset's items at once.

    The lengths and supports are sorted as two arrays (a stable sort); only a run of itemsets of
    one length and one support is sorted by its items. The keys of a listing of two million
    itemsets of session 57's wide table were about 570 bytes an itemset, the peak of its run.

    Examples
    --------
    >>> listing = [Itemset({"a": "x"}, 0.5), Itemset({"b": "y", "a": "x"}, 0.5), Itemset({"a": "w"}, 0.5),
    ...            Itemset({"c": "z"}, 0.75)]
    >>> [(s.items, s.support) for s in listing_order(listing)]
    [({'c': 'z'}, 0.75), ({'a': 'w'}, 0.5), ({'a': 'x'}, 0.5), ({'b': 'y', 'a': 'x'}, 0.5)]
    """
    n = len(itemsets)
    lengths = np.fromiter((len(s.items) for s in itemsets), dtype=np.int64, count=n)
    supports = np.fromiter((s.support for s in itemsets), dtype=np.float64, count=n)
    if np.isnan(supports).any():  # no order of arrays is Python's among NaNs
        return sorted(itemsets, key=lambda s: (len(s.items), -s.support, list(s.items.items())))
    order = np.lexsort((-supports, lengths))
    # runs of one (length, support): where either changes along the order
    change = np.flatnonzero((np.diff(lengths[order]) != 0) | (np.diff(-supports[order]) != 0)) + 1
    starts = np.concatenate([[0], change]).tolist()
    ends = np.concatenate([change, [n]]).tolist() if n else []
    order = order.tolist()
    result = []
    for start, end in zip(starts, ends):
        run = [itemsets[i] for i in order[start:end]]
        if len(run) > 1:
            run.sort(key=lambda s: list(s.items.items()))
        result += run
    return result


def ison_search(estimator: DensityEstimator, min_support: float, max_length: int | None, max_seconds: float | None,
            method: str, max_itemsets: int | None, paths: _PathIndex | None = None,
            memo: dict[bytes, float] | None = None) -> tuple[_Miner, list[int]]:
    """ISON's search (:func:`run_ison`'s arguments, checked here): the miner holding what it found, and the
    itemsets found per iteration. ``paths``: :func:`path_index` of the estimate, and ``memo``: the
    supports estimated so far (filled in), when the caller runs the search several times on one
    estimate with one ``method`` (:func:`dprm.itemsets.top_k.run_top_k`)."""
    min_support, max_length, max_seconds, max_itemsets = check_limits(min_support, max_length, max_seconds,
                                                                      max_itemsets)
    if method not in ("exact-or-sample", "paths"):
        raise ParameterError(f"method must be 'exact-or-sample' or 'paths', not {method!r}")
    miner = _Miner(estimator, min_support, max_length, max_seconds, method, max_itemsets, memo)
    first_rows = _first_iteration(miner, _PathIndex(_path_itemsets(estimator)) if paths is None else paths)
    per_iteration = [len(first_rows)]
    found_first, found_first_columns = miner.codec.encode(first_rows)
    level, level_columns = found_first, found_first_columns
    single = _lengths(found_first) == 1  # later iterations merge with the frequent single items
    first, first_columns = found_first[single], found_first_columns[single]
    block = max(1, 1_000_000 // max(1, len(first)))  # merges per block: about a million unions
    while len(level) and len(first) and not miner.out_of_time():
        grown = [np.zeros((0, miner.codec.n_words), dtype=np.uint64)]
        for start in range(0, len(level), block):
            if miner.out_of_time():
                break
            candidates, pruned = merge_new(miner.codec, level[start:start + block],
                                           level_columns[start:start + block], first, first_columns, miner.seen,
                                           miner.rejected, miner.max_length)
            miner.pruned += pruned
            grown.append(miner.evaluate_items(candidates))
        level = np.vstack(grown)
        level_columns = miner.codec.columns_of(level)
        if len(level):
            per_iteration.append(len(level))
    return miner, per_iteration


#: The checks of a search's limits (:func:`check_limits`): integers refuse a bool and a fraction
#: (``max_length=True`` was one item, ``2.5`` two), numbers refuse text and NaN.
LIMITS: dict[str, Setting] = {setting.name: setting for setting in (
    Setting("max_length", "None or an integer >= 1", lambda v: v is None or whole_number(1)(v)),
    Setting("max_seconds", "None or a positive finite number",
            lambda v: v is None or finite_number(lambda x: x > 0)(v)),
    Setting("max_itemsets", "None or an integer >= 0", lambda v: v is None or whole_number(0)(v)),
)}


def check_limits(min_support: float, max_length: int | None, max_seconds: float | None,
                 max_itemsets: int | None = None) -> tuple[float, int | None, float | None, int | None]:
    """A search's threshold and limits checked (one-line :class:`ParameterError`) and as Python numbers.

    ``min_support`` is a number in (0, 1] (not a bool); ``max_length`` and ``max_itemsets``
    Python or numpy integers, returned as ``int``; ``max_seconds`` a positive finite number,
    returned as ``float``; each limit may be None (no limit).

    Examples
    --------
    >>> import numpy as np
    >>> check_limits(np.float64(0.5), np.int64(2), 1, None)
    (0.5, 2, 1.0, None)
    >>> check_limits(0.2, "2", None)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: max_length must be None or an integer >= 1, not '2'
    >>> check_limits(True, None, None)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: min_support must lie in (0, 1], got True
    """
    if (isinstance(min_support, bool) or not isinstance(min_support, numbers.Real)
            or not 0.0 < float(min_support) <= 1.0):  # NaN fails the comparison
        raise ParameterError(f"min_support must lie in (0, 1], got {short_repr(min_support)}")
    check_settings(LIMITS, {"max_length": max_length, "max_seconds": max_seconds, "max_itemsets": max_itemsets})
    return (float(min_support), None if max_length is None else int(max_length),
            None if max_seconds is None else float(max_seconds), None if max_itemsets is None else int(max_itemsets))


def itemsets_of_rows(estimator: DensityEstimator, rows: np.ndarray, supports: np.ndarray) -> list[Itemset]:
    """The code rows (-1: column not in the itemset) and their supports as itemsets, in the rows' order."""
    columns = estimator.columns_
    categories = [estimator.variables_[name].categories for name in columns]
    at, column = np.nonzero(np.asarray(rows) >= 0)  # each row's items in column order, row by row
    codes = np.asarray(rows)[at, column].tolist()
    ends = np.cumsum(np.bincount(at, minlength=len(rows))).tolist()
    column = column.tolist()
    itemsets, start = [], 0
    for end, support in zip(ends, np.asarray(supports, dtype=float).tolist()):
        itemsets.append(Itemset({columns[j]: categories[j][code] for j, code in zip(column[start:end],
                                                                                   codes[start:end])}, support))
        start = end
    return itemsets


def check_item_codes(estimator: DensityEstimator) -> None:
    """Refuse an estimate with a column of more than :data:`MAX_COLUMN_ITEMS` categories: ISON writes an item's
    code in 16 bits (``int16`` code rows, here and in its compiled kernels).

    A public check (the domains' sizes), made before any itemset is formed; such a column
    was an internal error (an overflow) once the estimate was made.
    """
    for name, domain in estimator.variables_.items():
        if domain.size > MAX_COLUMN_ITEMS:  # codes 0 .. size - 1 (the missing value's the last)
            raise ParameterError(f"column {name!r} has {domain.n_items:,} categories, more than ISON's 16-bit codes "
                                 f"hold ({MAX_COLUMN_ITEMS:,} a column, a missing value's included): declare fewer "
                                 "(or, with --epsilon, --private-method basis, whose supports are read off its "
                                 "released cells)")


def check_fitted(estimator: object) -> None:
    """Raise :class:`ParameterError` unless ``estimator`` is a fitted :class:`DensityEstimator`.

    Examples
    --------
    >>> import pandas as pd
    >>> check_fitted(pd.DataFrame({"a": ["x"]}))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: estimator must be a fitted DensityEstimator (DensityEstimator().fit(data)), not DataFrame
    """
    if not isinstance(estimator, DensityEstimator):
        raise ParameterError(f"estimator must be a fitted DensityEstimator (DensityEstimator().fit(data)), "
                             f"not {type(estimator).__name__}")
    estimator.chains_  # a ParameterError when it has learned nothing yet


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
