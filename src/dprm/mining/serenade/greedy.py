"""The machinery SerenadeCS and SerenadeES share: validation, literals, data size, quality, initial pairs.

The budget, the scores and the privacy argument are derived in
:mod:`dprm.mining.serenade.private_miners`; the two miners' rounds are in
:mod:`.cs` and :mod:`.es`, their parameters in :mod:`.parameters`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from dprm.data.attributes import AttributeKind, TwoViewData, require_attributes
from dprm.engine import CountingEngine, as_engine
from dprm.errors import ParameterError
from dprm.mining.base import Miner, Progress, ProgressCallback, view_reasons
from dprm.mining.noisy_estimates import discrete_laplace_variance
from dprm.mining.private_grids import choose_grids, grid_note
from dprm.mining.pruning import greedy_pruned
from dprm.mining.serenade.auto import MAX_PAIRS, auto_split, es_sizes, grid_splits, initial_shares
from dprm.mining.serenade.compute_quality import QualityRelease
from dprm.mining.serenade.covariance import COVARIANCE_SENSITIVITY, CovarianceScore
from dprm.mining.serenade.extensions import Growing, extension_counts
from dprm.mining.serenade.literals import LiteralTable
from dprm.mining.serenade.pairs import check_pair_count, draw_initial_pairs
from dprm.mining.serenade.parameters import AUTO, DEFAULT_MIN_SUPPORT_SHARE, DEFAULT_SPLIT, parse_budget_split
from dprm.mining.serenade.quality import (
    JACCARD_ONE_SIDED,
    JACCARD_SENSITIVITY,
    LogisticQuality,
    choose_steepness,
    jaccard_quality,
)
from dprm.mining.serenade.union_cap import UnionCap
from dprm.params import as_generator
from dprm.privacy import Accountant, DiscreteLaplaceCount, split_budget
from dprm.privacy.accountant import run_accountant
from dprm.privacy.budget import as_epsilon, as_fraction
from dprm.queries import Redescription

__all__ = ["GreedyMiner", "initial_side"]


def initial_side(data: TwoViewData, tables: tuple[LiteralTable, LiteralTable]) -> int:
    """The view (0 left, 1 right) whose literals' row masks the initial pairs are counted from.

    The view with only Boolean and categorical attributes (the left one if both qualify,
    as in the paper); when both views have numeric attributes, the view with fewer
    candidate literals (the left one on a tie), so that fewer row masks are made.

    Which side this is changes only how the pairs are counted (:mod:`.pairs`), never the
    candidate set (every pair of one literal per side) nor the draws' distribution, and
    it is a function of the public schema (attribute kinds and the grid) only.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> def numeric(name, side):
    ...     return Attribute(name, side, AttributeKind.NUMERIC, np.array([0.0, 1.0, 2.0]),
    ...                      Domain(bounds=(0.0, 2.0), declared=True))
    >>> data = TwoViewData(View("left", [numeric("a", "left"), numeric("b", "left")]),
    ...                    View("right", [numeric("x", "right")]))
    >>> tables = tuple(LiteralTable(v, mode="private", max_splits=3) for v in data.views)
    >>> [len(t) for t in tables], initial_side(data, tables)
    ([18, 9], 1)
    """
    for side, view in enumerate(data.views):
        if len(view) and all(a.kind is not AttributeKind.NUMERIC for a in view):
            return side
    return 0 if len(tables[0]) <= len(tables[1]) else 1



class GreedyMiner(Miner):
    """What the greedy miners share: validation, literals, data size, quality, initial pairs."""

    private = True
    #: The miner counts only through a counting engine (:mod:`dprm.engine`), so it runs sharded too.
    counts_through_engine = True
    #: The ``"auto"`` rule of ``k`` and the rounds (:func:`.auto.cs_sizes` or :func:`.auto.es_sizes`).
    sizes_rule: ClassVar[Callable[..., tuple[int, int]]] = staticmethod(es_sizes)
    #: Whether an extension round draws once per alive pair (CS) or once in all (ES).
    draws_per_pair: ClassVar[bool] = False
    #: The minimum support (the logistic quality's centre) as a share of the rows when none is given.
    default_min_support_share: ClassVar[Fraction] = DEFAULT_MIN_SUPPORT_SHARE
    #: The smallest kept intersection's share of the rows where ``min_support`` is not given.
    default_kept_support_share: ClassVar[Fraction] = DEFAULT_MIN_SUPPORT_SHARE

    # -- parameters ---------------------------------------------------------------------

    def _check_combination(self) -> None:
        if self.data_size == "public" and self.rows is None:
            raise ParameterError("data-size 'public' needs the number of rows: give --rows N")
        if self.data_size != "public" and self.rows is not None:
            raise ParameterError("--rows applies only with --data-size public")
        if (self.data_size == "public" and self.rows is not None and self.min_support is not None
                and self.min_support > max(self.rows, 1)):
            raise ParameterError(f"min-support {self.min_support:g} rows is above --rows {self.rows}: no "
                                 "redescription can reach it")
        if self.data_size == "engine" and self.min_support is not None and self.min_support >= 1:
            raise ParameterError("data-size 'engine' needs min-support as a share of the rows (below 1)")

    def work(self) -> int:
        """The progress total of a run, in the miner's work units (data-independent)."""
        raise NotImplementedError

    def _finest_splits(self) -> int:
        """The grid the run starts from (and the finest the auto rule tries): ``max_splits``."""
        return int(self.max_splits)

    def _caps(self, rounds_cap: int) -> tuple[int, int]:
        """``k`` and the rounds as given, or the auto rule's largest values (progress units)."""
        k = MAX_PAIRS if self.initial_pairs == AUTO else int(self.initial_pairs)
        m = rounds_cap if self.extensions == AUTO else int(self.extensions)
        return k, m

    # -- the run ------------------------------------------------------------------------

    def fit(self, data: TwoViewData | CountingEngine, *, accountant: Accountant | None = None,
            rng: np.random.Generator | None = None, progress: ProgressCallback | None = None) -> "GreedyMiner":
        """Mine ``data``, spending at most ``epsilon`` of ``accountant`` (private miners).

        ``data`` is a dataset (counted in this process) or a counting engine
        (:mod:`dprm.engine`, e.g. the rows sharded on Ray): the miner asks it for
        counts only and draws all noise itself, so the output, the statistics and the
        ledger are the same for the same seed whatever the engine.

        Without an accountant, one holding ``epsilon`` with secure noise is made. ``rng``
        drives only the simulation of confidence intervals (post-processing).
        ``progress(done, total)`` is told the work done (:meth:`work` units: initial
        pairs and extensions).
        """
        self._forget_fit()
        self.check_parameters()
        engine = as_engine(data)
        data = engine.schema
        if self.private:
            # 'auto': the paper's split until the rule replaces it after the row count (_choose_sizes)
            self._split = parse_budget_split(DEFAULT_SPLIT if self.budget_split == AUTO else self.budget_split)
        self._progress = Progress(progress, self.work())
        rng = as_generator(rng)
        if self.private:
            accountant = run_accountant(accountant, self.epsilon)
            self._spent_before = accountant.spent()
            self._ledger_start = len(accountant.ledger)
        require_attributes(data.views)
        mode = "private" if self.private else "data"
        self._grid_epsilon, self._grid_notes = 0, []
        chosen = self._choose_grids(engine, accountant) if self.private else {}
        try:
            self._run(engine.schema if chosen else data, engine, mode, rng, accountant)
        finally:
            if chosen:  # an engine given by the caller may serve later runs: its public grids again
                engine.use_transforms({key: None for key in chosen})
        return self

    def _choose_grids(self, engine: CountingEngine, accountant: Accountant) -> dict[tuple[int, str], str]:
        """With ``numeric_grid="auto"``: the numeric columns' grids chosen privately, in use on ``engine``.

        Spends ``grid_share`` of ε first when some column has no declared transform
        (:mod:`dprm.mining.private_grids`); the rest of the run has the remainder.
        """
        if self.numeric_grid != "auto":
            return {}
        grid_epsilon = as_epsilon(self.epsilon, "epsilon") * as_fraction(self.grid_share, "grid-share")
        chosen = choose_grids(engine, grid_epsilon, accountant, max_splits=self._finest_splits())
        if chosen:
            engine.use_transforms(chosen)
            self._grid_epsilon, self._grid_notes = grid_epsilon, [grid_note(chosen)]
        return chosen

    def _run(self, data: TwoViewData, engine: CountingEngine, mode: str, rng: np.random.Generator,
             accountant: Accountant | None) -> None:
        """The run after the checks (and the grids): counts, mining, the privacy block."""
        self._data = data
        self._engine = engine
        self._use_grid(mode, self._finest_splits())
        for table, view in zip(self.tables_, data.views):
            if len(table) == 0:
                raise ParameterError(f"the {view.name} view ({view.source}) has no candidate literal (no attribute "
                                     "can be split, e.g. a declared domain of a single value)")
        self._side = initial_side(data, self.tables_)
        if self.private:
            check_pair_count(self.tables_, self.algorithm)  # public schema only, before any release
        self._rng = rng
        self._accountant = accountant
        self._notes: list[str] = list(self._grid_notes)
        self._mine(data)
        self.privacy_ = self._privacy_block(data)
        self.notes_ = self._notes
        self._data = self._engine = self._counts = None  # the miner keeps no reference to the rows after the run
        self._progress.finish()

    def _mine(self, data: TwoViewData) -> None:
        raise NotImplementedError

    def _use_grid(self, mode: str, max_splits: int) -> None:
        """Count over the engine's literal tables of this grid from now on."""
        self.tables_ = self._engine.literal_tables(mode, max_splits)
        self._counts = self._engine.counts(mode, max_splits)

    # -- building blocks ------------------------------------------------------------------

    def _prepare_private(self, data: TwoViewData) -> Fraction:
        """Data size, centre, quality; returns the budget left for the three phases."""
        accountant = self._accountant
        epsilon = as_epsilon(self.epsilon, "epsilon") - self._grid_epsilon  # the grids' share was spent first
        self._n_hat: float | None = None
        share = None
        if self.min_support is None:
            share = self.default_min_support_share
        elif self.min_support < 1:
            share = as_fraction(self.min_support, "min-support")
        if self.data_size == "noisy":
            size_share = as_fraction(self.size_share, "size-share")
            size_epsilon, epsilon = split_budget(epsilon, [size_share, 1 - size_share])
            count = DiscreteLaplaceCount(size_epsilon)
            self._n_hat = float(max(1, count.release(accountant, "data size", self._engine.n_rows)))
            self._n_variance = discrete_laplace_variance(count.scale)
            self._n_scale = float(count.scale)
            center = float(share * Fraction(self._n_hat)) if share is not None else float(self.min_support)
        elif self.data_size == "public":
            if self.rows != self._engine.n_rows:
                raise ParameterError(f"--rows {self.rows} is not the number of rows of the data "
                                     f"(data-size 'public' needs the true, public number)")
            self._n_hat = float(self.rows)
            self._n_variance = 0.0
            center = float(share * self.rows) if share is not None else float(self.min_support)
        else:
            if share is None:
                raise ParameterError("data-size 'engine' needs min-support as a share of the rows (below 1)")
            center = float(share * max(self._engine.n_rows, self.min_rows))  # private, inside the engine only
        self._min_support_rows = center
        bounded = self.score_range == "bounded" and self.data_size != "engine"
        damped = self.damping == "union" and self.data_size != "engine"
        needs_logistic = self.quality == "logistic" or damped or AUTO in (self.initial_pairs, self.extensions)
        logistic, logistic_range = None, None
        if not needs_logistic:  # NoSens with explicit numbers: no line search needed
            public_center = center if self.data_size != "engine" else float(share) * self.min_rows
        elif self.data_size == "engine":
            f = float(share)
            public_center = f * self.min_rows  # c₀: the public lower bound of the centre
            if self.steepness is None:
                steep = choose_steepness(center, center_share=f, min_rows=self.min_rows).steepness
            else:
                steep = float(self.steepness)
            logistic = LogisticQuality(center, steep, center_share=f, min_rows=self.min_rows)
            fixed = LogisticQuality(public_center, steep)  # datasets below min_rows: fixed centre
            logistic_range = 2 * max(logistic.sensitivity(), fixed.sensitivity())
        else:
            public_center = center
            if self.steepness is None:
                logistic = choose_steepness(center, objective="range" if bounded else "sensitivity")
            else:
                logistic = LogisticQuality(center, self.steepness)
            logistic_range = logistic.score_range() if bounded else 2 * logistic.sensitivity()
        if self.quality == "jaccard":
            self._quality = jaccard_quality
            score_range = float(sum(JACCARD_ONE_SIDED)) if bounded else 2 * JACCARD_SENSITIVITY
        else:
            self._quality, score_range = logistic, logistic_range
        if damped:
            # Damp near-tautologies (:mod:`.union_cap`): the cap is public (a share of n̂ or of the
            # public n) and the damped score's one-sided bounds are the base's plus tanh(μ/4).
            cap = float(self.max_union) * self._n_hat
            steepness = logistic.steepness / 2
            base_sides = JACCARD_ONE_SIDED if self.quality == "jaccard" else logistic.one_sided_sensitivity()
            self._quality = UnionCap(self._quality, cap, steepness, one_sided=base_sides)
            score_range = self._quality.score_range() if bounded else 2 * self._quality.sensitivity()
            capped_logistic = UnionCap(logistic, cap, steepness)
            logistic_range = capped_logistic.score_range() if bounded else 2 * capped_logistic.sensitivity()
            self._notes.append(f"near-tautologies damped: unions above {cap:.0f} rows (steepness {steepness:.4g})")
        elif self.damping == "union":
            self._notes.append("no damping of near-tautologies in data-size 'engine' (its cap would be private)")
        # Every mechanism samples ∝ exp(ε q / R); it is given the sensitivity R/2 (derivation in the
        # docstring of dprm.mining.serenade.private_miners: with the bounded range, q shifted by a per-dataset
        # constant has sensitivity R/2).
        self._sensitivity = score_range / 2
        self._score_range_value = score_range
        self._choose_sizes(epsilon, logistic_range, public_center)
        if self.quality == "logistic":
            self._notes.append(f"quality: logistic, steepness {logistic.steepness:.4g}, "
                               f"score range {score_range:.4g} ({'bounded' if bounded else '2 x sensitivity'})")
            if self.data_size != "engine":
                self._notes.append(f"minimum support (logistic centre): {center:.0f} rows"
                                   + (f"; results kept from {self._kept_support(self._n_hat):.0f} rows"
                                      if self.min_support is None and self._n_hat is not None else ""))
        if share is None and self._n_hat is not None and center > self._n_hat:
            # n̂ is public here (the public n, or released above): saying so costs nothing
            self._notes.append(f"minimum support {center:g} rows is above the data size ({self._n_hat:.0f} rows"
                               f"{', noisy' if self.data_size == 'noisy' else ''}): no redescription can reach it; "
                               "give it as a share of the rows (below 1)")
        return epsilon

    def _choose_sizes(self, epsilon: Fraction, logistic_range: float, public_center: float) -> None:
        """``k`` and ``m`` / ``M``: the given integers, or the ``"auto"`` rule on public values.

        :mod:`dprm.mining.serenade.auto`. It runs after the noisy row count is released
        and uses only ``ε``, the split, the logistic quality's score range (public: a
        function of ``n̂``, ``n`` or ``min_rows``) and the public minimum support, so it
        is post-processing. NoSens uses the logistic quality's range too, so that the
        ablation differs from ES in its score only.
        """
        if self.budget_split == AUTO and logistic_range is not None:  # auto.auto_split: public values only
            self._split = auto_split(logistic_range, public_center, min_sharpness=float(self.min_sharpness),
                                     quality_noise=float(self.quality_noise))
        init, ext, qual = (float(epsilon * s) for s in self._split)
        rule = self.sizes_rule
        if logistic_range is None:  # both numbers given
            auto_k = auto_m = 0
        else:
            auto_k, auto_m = rule(init, ext, qual, logistic_range, public_center,
                                  min_sharpness=float(self.min_sharpness), quality_noise=float(self.quality_noise))
        self._k = auto_k if self.initial_pairs == AUTO else int(self.initial_pairs)
        self._m = auto_m if self.extensions == AUTO else int(self.extensions)
        # CS without extension rounds, k by the rule: one sharp draw first (auto.initial_shares)
        sharp_first = self.draws_per_pair and self.initial_pairs == AUTO and self._m == 0
        self._pair_shares = initial_shares(self._k, sharp_first=sharp_first)
        self.chosen_ = {"budget_split": ",".join(str(float(share)) for share in self._split),
                        "initial_pairs": self._k, "extensions": self._m,
                        "score_range": self._score_range_value,
                        # the least sharp draw's (the grid must be resolved by every draw)
                        "initial_pair_sharpness": init * float(min(self._pair_shares)) / self._score_range_value}
        if self._pair_shares[0] != min(self._pair_shares):
            self.chosen_["first_pair_sharpness"] = init * float(self._pair_shares[0]) / self._score_range_value
        if self._m:
            per_draw = ext / self._m / (self._k if self.draws_per_pair else 1)
            self.chosen_["extension_sharpness"] = per_draw / self._score_range_value
        if self.grid == AUTO:  # the grid the draws can resolve (auto.grid_splits), public values only
            splits = grid_splits(self.chosen_["initial_pair_sharpness"], int(self.max_splits))
            self.chosen_["max_splits"] = splits
            if splits != int(self.max_splits) and any(t.numeric.any() for t in self.tables_):
                self._use_grid("private", splits)
                self._side = initial_side(self._data, self.tables_)
            self._notes.append(f"auto: numeric attributes cut at {splits} grid points")
        if AUTO in (self.initial_pairs, self.extensions):
            self._notes.append(f"auto: {self._k} initial pairs, {self._m} extension rounds "
                               f"(least sharpness {float(self.min_sharpness):g}, quality noise "
                               f"{float(self.quality_noise):g} of the minimum support)")
        if sharp_first and self._k > 1:
            self._notes.append(f"auto: the first initial pair is drawn with {self._pair_shares[0]} of their budget, "
                               f"the other {self._k - 1} share the rest")

    def _run_parameters(self) -> dict[str, Any]:
        """The document's ``parameters.chosen``: the (public) ``k``, ``m``/``M`` and ranges."""
        chosen = getattr(self, "chosen_", None)
        return {"chosen": chosen} if chosen else {}

    def _scores(self, intersection: np.ndarray, union: np.ndarray) -> np.ndarray:
        return np.asarray(self._quality(intersection, union), dtype=np.float64)

    def _initial_pairs(self, epsilon) -> list[Growing]:
        """Algorithm 4: ``k`` exponential-mechanism draws over all pairs (streamed: :mod:`.pairs`).

        Scored by the covariance count (``initial_score="covariance"``, sensitivity 1:
        :mod:`.covariance`) or by the quality (``"quality"``, the paper's, with its
        sensitivity).
        """
        part = self._progress.part(self._caps(0)[0], self._k)
        block_score, sensitivity = None, self._sensitivity
        if self.initial_score == "covariance":  # the rows beyond independence (sensitivity 1: .covariance)
            sizes = (self._counts.literal_sizes(0), self._counts.literal_sizes(1))
            block_score, sensitivity = CovarianceScore(sizes, self._engine.n_rows), COVARIANCE_SENSITIVITY
        chosen = draw_initial_pairs(self.tables_, self._side, self._scores, sensitivity,
                                    split_budget(epsilon, self._pair_shares), self._accountant,
                                    counts=self._counts, n_rows=self._engine.n_rows,
                                    distinct=self.pair_draws == "distinct", block_score=block_score)
        for _ in chosen:  # the draws finish together, after the last block
            part.advance()
        return [Growing.pair(self.tables_, left, right) for left, right in chosen]

    def _candidates(self, state: Growing):
        candidates = extension_counts(state, self.tables_, self.max_literals, self._counts)
        return candidates, self._scores(candidates.intersection, candidates.union)

    def _result(self, state: Growing, released: QualityRelease) -> Redescription:
        size_count = None
        if self.data_size == "noisy":  # the row count and the cells' sum, combined (post-processing)
            size_count = (self._n_hat, self._n_scale)
            n_rows = released.combined_size(*size_count)[0]
        else:
            n_rows = self._n_hat if self._n_hat is not None else released.data_size[0]
        stats = released.stats(n_rows)
        interval = released.interval(n_rows, self.confidence, self._rng, size_count=size_count)
        kept_support = self._kept_support(self._n_hat if self._n_hat is not None else n_rows)
        pruned = greedy_pruned(stats, interval, min_support=kept_support, min_jaccard=self.min_jaccard,
                               max_pvalue=self.max_pvalue, significance=self.significance)
        return Redescription(state.queries[0], state.queries[1], stats, pruned=pruned, extra={"interval": interval})

    def _kept_support(self, n_rows: float) -> float:
        if self.min_support is not None and self.min_support >= 1:
            return float(self.min_support)
        share = self.default_kept_support_share if self.min_support is None else as_fraction(self.min_support)
        return float(share) * max(n_rows, 0.0)

    def _privacy_block(self, data: TwoViewData) -> dict[str, Any]:
        """The spec's block: the label from the releases, ``none`` where it must be.

        Each release records its mechanism's label in the ledger: the initial pairs
        (:class:`~dprm.privacy.WeightedReservoir`) and SerenadeES's extension race draw
        float64 Gumbel keys instead of using an exact sampler, so a run that drew with
        them is ``pure-dp; floating-point selection``.
        """
        reasons = view_reasons(data.views, [table.private_domains for table in self.tables_], "literals")
        if self.data_size == "public":
            reasons.append("the number of rows was given as public (data-size 'public'): the guarantee holds "
                           "only among datasets of that size")
        block = self._accountant.privacy_block(reasons=reasons, since=self._ledger_start)
        unspent = as_epsilon(self.epsilon) - (self._accountant.spent() - self._spent_before)
        if unspent > 0:  # the spec: where a run stops early, the unspent rest is stated (beside the ledger)
            block["unspent"] = float(unspent)
            self._notes.append(f"epsilon {float(unspent):.4g} of {float(as_epsilon(self.epsilon)):g} was not spent "
                               f"(every pair stopped before the last round)")
        return block
