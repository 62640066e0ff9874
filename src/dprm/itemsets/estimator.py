"""An online density estimate over discrete variables: an ensemble of classifier chains (EDDO).

EDDO (Geilke et al., ICDM 2013) writes a joint density by the product rule,
``f(x_1..x_m) = prod_i f_i(x_i | x_1..x_{i-1})``, and models each conditional by a
classifier that returns class probabilities, here a Hoeffding tree
(:mod:`dprm.itemsets.hoeffding`). Several chains, each with its own order of the
variables, form an ensemble whose density is the mean of the chains' densities.

Learning
    One row at a time (:meth:`DensityEstimator.learn_one`), a DataFrame
    (:meth:`~DensityEstimator.learn_many`), or a whole source (:meth:`~DensityEstimator.fit`:
    a DataFrame, a CSV file read in chunks, or any iterable of mappings). A table held
    whole (a DataFrame, a CSV file of fewer than 200,000 rows) has its trees grown from
    all its rows at once (:mod:`dprm.itemsets.batch_tree`, the default); otherwise every
    tree learns the rows in stream order, one at a time, in compiled code; rows given to
    :meth:`~DensityEstimator.learn_one` are buffered and learned before anything reads
    the estimate, so the estimate after any sequence of calls is exactly the one that
    learning the same rows one by one gives, whatever the batches.
Domains
    Every variable is discrete with a public domain (:mod:`dprm.itemsets.domains`):
    declared (``domains=``, ``bins=`` for numeric columns) or, for a DataFrame or a CSV
    file, the distinct values found in it (a CSV file is read twice: once to collect
    and check the values, then to learn, so that a bad value is reported before
    anything is learned). Online learning of rows of unknown categories needs the
    domains declared (or a first :meth:`~DensityEstimator.fit`).
Missing values
    A missing value (an empty cell, ``None``, NaN) is no item. A column that may hold
    one (named in ``missing=``, or undeclared and holding one) has one more state, the
    missing value (:attr:`VariableDomain.missing
    <dprm.itemsets.domains.VariableDomain.missing>`), which the trees model like a
    category: the chains' density is a distribution over complete rows whose states
    include it, and the density of a partial assignment of categories sums over every
    other column's states, the missing value included, so it is the share of rows
    holding those items, rows missing one of the columns excluded, as an itemset's
    support is defined. ISON never names the missing value in an itemset.
Inference on partial assignments
    A chain's density of an assignment of some variables ``S`` is the marginal of its
    joint, ``sum over the other variables of prod_i f_i``. Two methods
    (``method=``):

    ``"exact-or-sample"`` (the default)
        Exact, as ``prod_{i in S} f_i(x_i | x_{S before i})``, when the tree of every
        assigned variable tests only assigned variables (for example when ``S`` is a
        prefix of the chain's order, or a full assignment). Otherwise the share of
        the chain's *reference sample* that holds the assignment: ``n_samples`` rows
        drawn once from the chain (ancestral sampling, a generator seeded from
        ``random_state``) and indexed as bitsets, so a support costs a few AND and
        popcount operations. This is an unbiased estimate of the chain's exact
        marginal with standard error at most ``0.5 / sqrt(n_samples)`` (0.0016 for
        the default 100,000), independent of how many rows were learned.
    ``"paths"``
        EDDO's marginalisation by soft evidence: ``prod_{i in S} P(x_i | ...)``, each
        factor read from variable ``i``'s tree with the unassigned variables it tests
        summed out by the tree's edge distributions
        (:meth:`ConditionalTree.predict_proba
        <dprm.itemsets.tree_model.ConditionalTree.predict_proba>`). Deterministic and
        exact in the same cases as above, but otherwise biased: an edge weight is the
        share of the node's rows, not conditioned on the assigned variables off the
        path (on mushroom it underestimates supports of 3- to 5-itemsets by about a
        quarter).
Sampling
    Each row picks a chain uniformly at random and draws its variables in that chain's
    order, each from its tree's prediction given the values drawn before (ancestral
    sampling of the mixture).

Where the parts live: the parameters' defaults and checks in
:mod:`~dprm.itemsets.parameters`, a chain in :mod:`~dprm.itemsets.chain`, the reading
of CSV files and streams in :mod:`~dprm.itemsets.sources`, the queries (densities,
conditionals, samples) in :mod:`~dprm.itemsets.density` with the reference samples of
:mod:`~dprm.itemsets.reference_sample`; this module holds the estimator and its learning.

The estimate is not differentially private (it is made of counts of the rows); its
t-closeness (:mod:`dprm.itemsets.closeness`) is a syntactic property, not DP.

Examples
--------
>>> import pandas as pd
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> a = rng.choice(["x", "y"], size=4000)
>>> b = np.where(a == "x", "same", rng.choice(["same", "other"], size=4000))
>>> table = pd.DataFrame({"a": a, "b": b})
>>> estimator = DensityEstimator(n_chains=2, random_state=0).fit(table)   # trees grown from the whole table
>>> estimator.columns_, estimator.domains_["b"], estimator.learner_, estimator.n_seen_
(['a', 'b'], ('other', 'same'), 'batch', 4000)
>>> round(estimator.density({"a": "x", "b": "same"}), 1), round(estimator.density({"b": "other"}), 1)
(0.5, 0.3)
>>> {k: round(v, 1) for k, v in estimator.conditional("b", {"a": "y"}).items()}
{'other': 0.5, 'same': 0.5}
>>> estimator.sample(3, np.random.default_rng(1)).shape
(3, 2)
>>> online = DensityEstimator(n_chains=2, grace_period=100, learner="hoeffding", random_state=0).fit(table)
>>> online.learner_, online.passes_, online.n_seen_                 # 50 shuffled passes
('hoeffding', 50, 200000)
>>> round(online.density({"a": "x", "b": "same"}), 1)
0.5
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dprm.errors import DataError, ParameterError
from dprm.itemsets.batch_tree import grow_batch_tree
from dprm.itemsets.chain import Chain, chain_orders
from dprm.itemsets.density import DensityQueries
from dprm.itemsets.domains import VariableDomain, declared_domains, encode_frame, infer_domains
from dprm.itemsets.hoeffding import HoeffdingTreeLearner
from dprm.itemsets.parameters import (BATCH_WORK, ESTIMATOR_SETTINGS, MAX_NODES, MAX_PASSES, ROWS_TO_LEARN,
                                      SPLIT_SIGNIFICANCE, TIE_THRESHOLD, WIDTH_TO_LEARN, check_random_state,
                                      check_settings, parse_passes, passes_for, store_parameters)
from dprm.itemsets.reference_sample import ReferenceSample
from dprm.itemsets.sources import csv_codes, row_codes, scan_csv, table_codes
from dprm.itemsets.tree_model import ConditionalTree
from dprm.params import as_generator

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_NODES", "ROWS_TO_LEARN", "MAX_PASSES", "WIDTH_TO_LEARN", "TIE_THRESHOLD", "Chain", "DensityEstimator",
           "check_random_state", "parse_passes", "passes_for"]


class DensityEstimator(DensityQueries):
    """An ensemble of classifier chains of trees (Hoeffding, or grown from a whole table): a joint density.

    Parameters
    ----------
    n_chains : int
        Number of chains, 1 to :data:`~dprm.itemsets.parameters.MAX_CHAINS` (100, as the
        private estimate and ``dprm itemsets --chains``); ignored when ``orders`` is given
        (at most as many orders).
    orders : list of list of str, optional
        The variable order of each chain, by column name; default: random orders drawn
        from ``random_state``.
    grace_period, split_confidence, tie_threshold : number
        The Hoeffding trees' parameters (:class:`~dprm.itemsets.hoeffding.HoeffdingTreeLearner`).
    leaf_prediction : {"mc"}
        Leaves predict by their class counts (the density needs class probabilities;
        river's naive-Bayes leaves are not offered).
    domains : mapping of str to list, optional
        Declared categories of some or all columns (public).
    bins : mapping of str to list of float, optional
        Public bin edges of numeric columns.
    missing : list of str, optional
        Columns whose domain has the missing value whatever the rows hold (public): their
        missing values are no item. An undeclared column's domain also has it when the
        data hold a missing value; a declared one not named here refuses a missing value.
    categorical_integers : bool or collection of str
        Read an undeclared column of at most 20 distinct integer codes as categorical
        (:func:`~dprm.itemsets.domains.infer_domains`) instead of refusing it; a list of
        column names reads those columns as categorical whatever numbers they hold.
    max_depth : int, optional
        Maximum depth of every tree.
    max_nodes : int or None
        The size budget of every tree, in nodes (:data:`MAX_NODES` by default; ``None``
        for no bound): a split that would exceed it is not made and the leaf stops
        growing (:class:`~dprm.itemsets.hoeffding.HoeffdingTreeLearner`). It plays the
        role of river's and MOA's memory budget and is public and data-independent;
        once every tree has spent it, the estimate's size, and so the time of ISON
        and of sampling, no longer grows with the stream, and learning a row costs a
        fixed amount.
    batch_size : int
        Rows buffered by :meth:`learn_one` and rows per chunk of a CSV file.
    n_samples : int
        Rows of each chain's reference sample (see *Inference on partial assignments*), 1 to
        :data:`~dprm.itemsets.parameters.MAX_SAMPLES` (1,000,000: the sample is drawn in memory).
    random_state : int, numpy.random.Generator or numpy.random.RandomState, optional
        Seeds the chain orders and the reference samples (nothing else is random). A
        Generator is drawn from; a (scikit-learn's) RandomState gives one seed drawn
        from it (:func:`dprm.params.as_seed`); either is advanced by the fit.

    Attributes
    ----------
    columns_ : list of str
    domains_ : dict of str to tuple of str
        Each column's categories, as the text written in the file (bin labels for
        binned columns); a value's code is its position (the missing value, where a
        domain has it, is the code after the last category, and not listed).
    variables_ : dict of str to VariableDomain
    chains_ : list of Chain
        A snapshot of the trees as learned so far.
    n_seen_ : int
        Rows learned.

    passes : "auto" or int
        How many times :meth:`fit` learns a finite table with the Hoeffding learner
        (a DataFrame or a CSV file; see *Passes* below); a stream of mappings,
        :meth:`learn_one` and :meth:`learn_many` are learned once, as they come.
    learner : {"auto", "batch", "hoeffding"}
        How :meth:`fit` learns a finite table. ``"batch"``: every tree grown from the
        whole table at once (:func:`~dprm.itemsets.batch_tree.grow_batch_tree`: split
        decisions from the table's exact statistics, no Hoeffding bound, no passes).
        ``"hoeffding"``: the online Hoeffding trees over ``passes`` shuffled passes
        (the first rounds' default). ``"auto"`` (the default): batch for a table held
        whole (a DataFrame or a CSV file of fewer than :data:`ROWS_TO_LEARN` rows) whose
        ``rows x columns x (columns - 1)`` is at most :data:`BATCH_WORK` (5e7: 20
        columns up to 130,000 rows, 50 up to 20,000, 100 up to 5,000; beyond, the batch
        trees cost more than the passes rule), unless ``passes`` is set to a number;
        Hoeffding otherwise, for a longer file (a stream, read in chunks) and for rows
        given online. A batch estimate cannot learn more rows.
    split_significance : float
        The batch trees' split test level (:data:`SPLIT_SIGNIFICANCE`; see *Batch* below).

    Notes
    -----
    *Batch.* When the whole table is at hand its statistics are exact, so the trees
    need no Hoeffding bound and no passes: :func:`~dprm.itemsets.batch_tree.grow_batch_tree`
    splits leaves best first (largest drop of log-loss first) while the G test of the
    split's contingency table rejects independence at ``split_significance`` and the
    node budget has room. The table is read once per tree level instead of
    ``ceil(200,000 / n)`` times (mushroom: 0.1 – 0.4 CPU s for three chains instead of
    several seconds) with the same quality: ISON's TPR at θ = 0.3 is 1.00 on mushroom,
    0.99 on vote, 1.00 on tic-tac-toe (``docs/itemsets.md``). The level 0.9 is
    lenient on purpose: the estimate should reproduce the table's itemsets, and on
    vote (435 rows) stricter tests leave too few splits (TPR 0.36 – 0.51 at 1e-7, 0.76
    – 0.81 at 0.05, 0.95 – 0.99 at 0.5, 0.99 at 0.9).

    *Passes.* A Hoeffding tree splits a leaf once the leaf has seen enough rows for
    the Hoeffding bound to separate the best attribute from the others (or to fall
    below the tie threshold): about ``R² ln(1/δ) / (2 τ²)`` rows, 3,200 for a binary
    target with the default ``δ = 1e-7``, ``τ = 0.1``. A table of a few thousand rows
    learned once leaves the trees nearly flat (mushroom, 8,124 rows: ISON's TPR at
    θ = 0.3 is 0.39 in a random order, 0.24 in the file's sorted order), however the
    Hoeffding parameters are set for a stream. :meth:`fit` therefore learns a table of
    ``n`` rows ``passes_for(n) = ceil(ROWS_TO_LEARN / n)`` times (``passes="auto"``,
    at most :data:`MAX_PASSES`), each pass in a new random order (seeded from
    ``random_state``): a stationary stream of at least :data:`ROWS_TO_LEARN` = 200,000
    rows drawn from the table's own distribution, which is what the estimate is
    meant to describe. A table of 200,000 rows or more is learned once, in its own
    order, like any stream. A table of more than :data:`WIDTH_TO_LEARN` = 50 columns
    learns fewer rows, in proportion to its pairs of columns (each row costs every
    chain one update per pair), so its trees stay shallower. The rule reads only the
    numbers of rows and columns (this estimate is not private anyway; the DP estimate
    of :mod:`dprm.itemsets.private` reads the rows once).

    *Hoeffding parameters.* Grace period 200 and split confidence 1e-7 are river's and
    MOA's (the paper's EDDO); the tie threshold is 0.1 (:data:`TIE_THRESHOLD`) instead
    of their 0.05, so a leaf whose best attributes are near-equal (correlated
    attributes, common in categorical tables) splits after a quarter of the rows: with
    the passes rule, ISON's TPR at θ = 0.3 goes from 0.90 – 0.97 to 0.95 – 1.00 on
    mushroom and from 0.92 to 0.96 on vote (``docs/itemsets.md``), and on long streams
    the trees reach their size budget sooner, so ISON's time stops growing earlier. On
    long streams, small grace periods or large split confidences would make trees of
    tens of thousands of nodes (46,000 per chain after 200,000 rows of the benchmark's
    planted data without a budget), which ``max_nodes`` prevents. The budget of
    :data:`MAX_NODES` = 200 nodes per tree (at most ``200 x n_columns`` per chain) caps
    the work of ISON and of sampling however long the stream.
    """

    def __init__(
        self,
        n_chains: int = 3,
        orders: Sequence[Sequence[str]] | None = None,
        grace_period: int = 200,
        split_confidence: float = 1e-7,
        tie_threshold: float = TIE_THRESHOLD,
        leaf_prediction: str = "mc",
        domains: Mapping[str, Sequence[object]] | None = None,
        bins: Mapping[str, Sequence[float]] | None = None,
        missing: Sequence[str] | None = None,
        categorical_integers: bool | Collection[str] = False,
        max_depth: int | None = None,
        max_nodes: int | None = MAX_NODES,
        passes: int | str = "auto",
        learner: str = "auto",
        split_significance: float = SPLIT_SIGNIFICANCE,
        batch_size: int = 2000,
        n_samples: int = 100_000,
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
    ) -> None:
        store_parameters(self, locals())
        self._reset()

    # -- state ---------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._variables: dict[str, VariableDomain] | None = None
        self._learners: list[list[HoeffdingTreeLearner]] | None = None
        self._orders: list[tuple[int, ...]] = []
        self._buffer: list[np.ndarray] = []
        self._chains: list[Chain] | None = None
        self._n_seen = 0
        self._frozen = False
        self._samples: list[ReferenceSample] | None = None
        self._sample_seed: int | None = None
        self._shuffle_seed: int | None = None
        self._passes_made = 0
        self._batch = False

    def _check_parameters(self) -> None:
        """Every parameter by its :data:`~dprm.itemsets.parameters.ESTIMATOR_SETTINGS` entry."""
        check_settings(ESTIMATOR_SETTINGS, vars(self), skip=() if self.orders is None else ("n_chains",))

    def _start(self, variables: dict[str, VariableDomain]) -> None:
        """Fix the columns and domains, draw the orders, create the learners."""
        self._check_parameters()
        rng = as_generator(self.random_state, "random_state")
        orders = chain_orders(list(variables), self.orders, self.n_chains, rng)
        self._sample_seed = int(rng.integers(2**63))
        self._shuffle_seed = int(rng.integers(2**63))
        sizes = [domain.size for domain in variables.values()]
        self._variables = dict(variables)
        self._orders = orders
        self._learners = [
            [HoeffdingTreeLearner(order[i], order[:i], sizes, grace_period=self.grace_period,
                                  split_confidence=self.split_confidence, tie_threshold=self.tie_threshold,
                                  max_depth=self.max_depth, max_nodes=self.max_nodes)
             for i in range(len(order))]
            for order in orders
        ]

    def _start_declared(self) -> None:
        declared = dict(self.domains or {})
        declared.update({name: None for name in (self.bins or {})})
        variables = declared_domains(list(declared), self.domains, self.bins, self.missing)
        if not variables:
            raise ParameterError("online learning needs the columns' domains: give domains= (and bins=) "
                                 "for every column, or fit a DataFrame or a CSV file first")
        self._start(variables)

    def _require_learning(self) -> None:
        if self._frozen:
            raise ParameterError("this estimate was built from trees (or modified); it cannot learn")
        if self._batch:
            raise ParameterError("this estimate was grown from a whole table (learner='batch'); it cannot learn "
                                 "more rows: fit with learner='hoeffding' to keep learning online")

    def _flush(self) -> None:
        if self._buffer:
            codes = np.vstack(self._buffer)
            self._buffer = []
            self._learn_codes(codes)

    def _learn_codes(self, codes: np.ndarray) -> None:
        assert self._learners is not None
        for chain in self._learners:
            for learner in chain:
                learner.learn(codes)
        self._n_seen += len(codes)
        self._chains = None
        self._samples = None

    def _fitted(self) -> None:
        if self._variables is None:
            raise ParameterError("the estimator has learned nothing yet: call fit, learn_many or learn_one first")
        self._flush()
        if self._n_seen == 0 and not self._frozen:
            raise ParameterError("the estimator has learned no rows yet")

    # -- learning ------------------------------------------------------------------------------

    def learn_one(self, row: Mapping[str, object]) -> DensityEstimator:
        """Learn one row (a mapping from column name to value; extra keys are ignored).

        A value outside its column's domain, or a missing column, is a
        :class:`~dprm.errors.DataError` and nothing is learned from the row.
        """
        if not isinstance(row, Mapping):
            raise ParameterError(f"a row must be a mapping from column name to value, not {type(row).__name__}")
        self._require_learning()
        if self._variables is None:
            self._start_declared()
        assert self._variables is not None
        codes = row_codes(self._variables, row, number=self._n_seen + len(self._buffer) + 1)
        self._buffer.append(codes[None, :])
        if len(self._buffer) >= self.batch_size:
            self._flush()
        return self

    def learn_many(self, frame: pd.DataFrame, *, source: str = "the DataFrame") -> DensityEstimator:
        """Learn the rows of a DataFrame in order (all or none: a bad value learns nothing)."""
        self._require_learning()
        if self._variables is None:
            if len(frame) == 0:
                raise DataError(f"{source}: no rows", code="no_rows", file=source)
            self._start(infer_domains(frame, self.domains, self.bins, source=source,
                                      categorical_integers=self.categorical_integers, missing=self.missing))
        assert self._variables is not None
        codes = encode_frame(frame, self._variables, source=source, first_row=self._n_seen + 1)
        self._flush()
        self._learn_codes(codes)
        return self

    def fit(self, source: pd.DataFrame | str | os.PathLike[str] | Iterable[Mapping[str, Any]], *,
            name: str | None = None) -> DensityEstimator:
        """Learn a new estimate from a DataFrame, a CSV file (read in chunks) or an iterable of mappings.

        Whatever was learned before is discarded. A DataFrame or a CSV file is a finite
        table: held whole (fewer than :data:`ROWS_TO_LEARN` rows, or any DataFrame with
        ``learner="batch"``) its trees are grown from it at once (see *Batch* in the
        class notes); otherwise (``learner="hoeffding"``, a number of ``passes``, or a
        longer file) it is learned ``passes`` times by the Hoeffding trees (see
        *Passes*): with more than one pass, each pass in a new random order; with one,
        in the table's own order. An iterable of mappings is a stream and is learned once, as it comes.
        An empty source is a :class:`~dprm.errors.DataError`; so is a value outside its
        domain, found before anything is learned from a DataFrame or a file (a stream of
        mappings is learned as it comes and stops at the bad row).

        Parameters
        ----------
        source : pandas.DataFrame, path or iterable of mappings
            The rows.
        name : str, optional
            Names a DataFrame in messages (the file it was read from, say); default
            ``"the DataFrame"``. A file is named by its path.

        Returns
        -------
        DensityEstimator
            ``self``.
        """
        self._reset()
        self._check_parameters()
        if _is_frame(source):
            name = "the DataFrame" if name is None else str(name)
            if len(source) == 0:
                raise DataError(f"{name} has no rows", code="no_rows")
            self._start(infer_domains(source, self.domains, self.bins, source=name,
                                      categorical_integers=self.categorical_integers, missing=self.missing))
            assert self._variables is not None
            self._learn_table(encode_frame(source, self._variables, source=name, first_row=1))
            return self
        if isinstance(source, str | os.PathLike):
            return self._fit_csv(Path(source), str(source))
        if isinstance(source, Mapping) or not isinstance(source, Iterable):
            raise ParameterError("fit needs a DataFrame, a CSV file path or an iterable of rows (mappings)",
                                 code="bad_source")
        for row in source:
            self.learn_one(row)
        if self._n_seen + sum(len(b) for b in self._buffer) == 0:
            raise DataError("the stream has no rows", code="no_rows")
        self._flush()
        self._passes_made = 1
        return self

    def passes_for(self, n_rows: int, n_columns: int | None = None) -> int:
        """The passes :meth:`fit` makes over a table of ``n_rows`` rows (``passes``, or :func:`passes_for`)."""
        return passes_for(n_rows, n_columns=n_columns) if self.passes == "auto" else int(self.passes)

    def uses_batch(self, n_rows: int, n_columns: int) -> bool:
        """Whether :meth:`fit` grows the trees of a table of ``n_rows`` x ``n_columns`` in batch (``learner``)."""
        if self.learner == "auto":
            return (self.passes == "auto" and n_rows < ROWS_TO_LEARN
                    and n_rows * n_columns * (n_columns - 1) <= BATCH_WORK)
        return self.learner == "batch"

    def _learn_table(self, codes: np.ndarray) -> None:
        """Learn a finite table's code rows: in batch, or ``passes_for(len(codes))`` times (new order each pass)."""
        if self.uses_batch(len(codes), codes.shape[1]):
            self._grow_batch(codes)
            return
        passes = self.passes_for(len(codes), codes.shape[1])
        if passes == 1:
            self._learn_codes(codes)
        else:
            rng = np.random.default_rng(self._shuffle_seed)
            for _ in range(passes):
                self._learn_codes(codes[rng.permutation(len(codes))])
        self._passes_made = passes

    def _grow_batch(self, codes: np.ndarray) -> None:
        """Every tree of every chain grown from the whole table (:func:`~dprm.itemsets.batch_tree.grow_batch_tree`)."""
        assert self._variables is not None
        sizes = [domain.size for domain in self._variables.values()]
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        self._chains = [Chain(order, tuple(
            grow_batch_tree(codes, order[i], order[:i], sizes, max_nodes=self.max_nodes, max_depth=self.max_depth,
                            significance=self.split_significance) for i in range(len(order))))
            for order in self._orders]
        self._learners = None
        self._batch = True
        self._n_seen = len(codes)
        self._samples = None
        self._passes_made = 1

    def _fit_csv(self, path: Path, name: str) -> DensityEstimator:
        """Read the file once for its domains and values (:func:`~dprm.itemsets.sources.scan_csv`), then learn it.

        A small file of categories is read once, without pandas
        (:func:`~dprm.itemsets.sources.table_codes`: the same domains and codes).
        """
        small = table_codes(path, name, ROWS_TO_LEARN - 1, self.domains, self.bins, self.missing)
        if small is not None:
            self._start(small[0])
            codes = small[1]
            if not self.uses_batch(len(codes), codes.shape[1]) and self.passes_for(len(codes), codes.shape[1]) == 1:
                for start in range(0, len(codes), self.batch_size):  # a stream: the chunks scan_csv would give
                    self._learn_codes(codes[start:start + self.batch_size])
                self._passes_made = 1
            else:
                self._learn_table(codes)
            return self
        scan = scan_csv(path, name, self.batch_size, self.domains, self.bins, self.categorical_integers,
                        self.missing)
        self._start(scan.variables)
        assert self._variables is not None
        chunks = csv_codes(path, name, self.batch_size, self._variables)
        width = len(scan.variables)
        if not self.uses_batch(scan.n_rows, width) and self.passes_for(scan.n_rows, width) == 1:
            # a stream: learned as it is read
            for codes in chunks:
                self._learn_codes(codes)
            self._passes_made = 1
        else:  # held as codes: fewer than ROWS_TO_LEARN rows unless passes or learner was set by hand
            self._learn_table(np.vstack(list(chunks)))
        return self

    # -- attributes ----------------------------------------------------------------------------

    @property
    def columns_(self) -> list[str]:
        self._fitted()
        assert self._variables is not None
        return list(self._variables)

    @property
    def variables_(self) -> dict[str, VariableDomain]:
        self._fitted()
        assert self._variables is not None
        return dict(self._variables)

    @property
    def domains_(self) -> dict[str, tuple[str, ...]]:
        return {name: d.categories for name, d in self.variables_.items()}

    @property
    def n_seen_(self) -> int:
        """Rows learned (a row learned in several passes counts once per pass)."""
        self._fitted()
        return self._n_seen

    @property
    def learner_(self) -> str:
        """How the trees were learned: ``"batch"`` (from the whole table) or ``"hoeffding"`` (online)."""
        self._fitted()
        return "batch" if self._batch else "hoeffding"

    @property
    def passes_(self) -> int:
        """Passes the last :meth:`fit` made over its source (0 before any fit or for rows given by hand)."""
        self._fitted()
        return self._passes_made

    @property
    def chains_(self) -> list[Chain]:
        self._fitted()
        if self._chains is None:  # a batch estimate always has its chains
            assert self._learners is not None
            self._chains = [Chain(order, tuple(learner.to_tree() for learner in chain))
                            for order, chain in zip(self._orders, self._learners)]
        return list(self._chains)

    @classmethod
    def from_trees(
        cls,
        variables: Mapping[str, VariableDomain | Sequence[str]],
        chains: Sequence[Chain | tuple[Sequence[int], Sequence[ConditionalTree]]],
        *,
        n_seen: int = 0,
        n_samples: int = 100_000,
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
    ) -> DensityEstimator:
        """An estimate made of given chains of trees (another learner's, or a modified estimate's).

        Parameters
        ----------
        variables : mapping of str to VariableDomain or list of category texts
            The columns, in the order the trees' column indices refer to.
        chains : list of Chain or (order, trees)
            Each tree ``trees[i]`` predicts column ``order[i]`` with as many classes as
            that column has categories.
        n_seen : int
            Rows the trees were learned from (informative only).
        n_samples, random_state
            The reference samples' size and seed (see the class).

        Examples
        --------
        >>> leaf = ConditionalTree.single_leaf
        >>> est = DensityEstimator.from_trees({"a": ["0", "1"]}, [([0], [leaf(0, [1.0, 3.0])])])
        >>> est.density({"a": "1"})
        0.75
        """
        domains = {str(name): (d if isinstance(d, VariableDomain) else VariableDomain(str(name), tuple(d)))
                   for name, d in variables.items()}
        built = [c if isinstance(c, Chain) else Chain(tuple(int(j) for j in c[0]), tuple(c[1])) for c in chains]
        if not built:
            raise ParameterError("an estimate needs at least one chain")
        sizes = [d.size for d in domains.values()]
        for chain in built:
            if len(chain.order) != len(sizes):
                raise ParameterError("every chain needs one tree per column")
            for tree in chain.trees:
                if tree.n_classes != sizes[tree.target]:
                    raise ParameterError(f"the tree for column {tree.target} has {tree.n_classes} classes, "
                                         f"the column {sizes[tree.target]} categories")
        estimator = cls(n_chains=len(built), n_samples=n_samples, random_state=random_state)
        estimator._check_parameters()
        estimator._sample_seed = int(as_generator(random_state, "random_state").integers(2**63))
        estimator._variables = domains
        estimator._orders = [c.order for c in built]
        estimator._chains = built
        estimator._n_seen = int(n_seen)
        estimator._frozen = True
        return estimator

    def with_chains(self, chains: Sequence[Chain]) -> DensityEstimator:
        """A frozen estimate with the same columns, domains, row count and sampling seed, but other trees.

        Used by modifications of the estimate (:func:`dprm.itemsets.closeness.apply_t_closeness`).
        """
        self._fitted()
        assert self._variables is not None
        other = DensityEstimator.from_trees(self._variables, list(chains), n_seen=self._n_seen,
                                            n_samples=self.n_samples)
        other._sample_seed = self._sample_seed
        return other

    def __repr__(self) -> str:
        state = "unfitted" if self._variables is None else f"{len(self._variables)} columns, {self._n_seen} rows"
        return f"DensityEstimator({len(self._orders) or self.n_chains} chains, {state})"


def _is_frame(source: object) -> bool:
    """Whether ``source`` is a pandas DataFrame (pandas is not imported to tell: a file's fit never needs it)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(source, pandas.DataFrame)
