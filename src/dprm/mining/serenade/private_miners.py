"""SerenadeCS (Algorithm 1), SerenadeES (Algorithm 2) and NoSens: greedy private miners.

Both grow redescriptions literal by literal from ``k`` initial pairs; they differ in
who decides what to extend. Budget (exact fractions; the ledger adds up to what is
spent, never more than ``epsilon``):

1. **Data size** (``data_size="noisy"``, the default): ``size_share · ε`` buys one
   discrete Laplace count of the rows; ``n̂`` then sets the logistic centre
   (``min_support``, default 10 % of ``n̂``) and the p-values, all public afterwards.
   ``"public"``: the user gives the true ``rows`` (the output says ``n`` is public:
   the guarantee then holds only among datasets of that size, so ``private`` is
   false). ``"engine"``: the centre is ``f · max(n, min_rows)`` from the true ``n``
   inside the engine; the sensitivity is a bound over every data size
   (:class:`~dprm.mining.serenade.quality.LogisticQuality` with ``center_share``),
   and p-values use ``n̂`` from the released cells.
2. The rest ``ε'`` is split by ``budget_split = (init, extend, quality)`` (the paper's
   d3 = 0.6, 0.3, 0.1, the default; must sum to 1 exactly); ``"auto"`` chooses it after
   the row count from public values (:func:`.auto.auto_split`; measured worse on weak
   data, so an option only).
3. **InitialPairs** (Algorithm 4): ``k`` independent size-1 weighted reservoirs
   (``WeightedReservoir(ε_init/k, Δ, k=1)``: each exactly one exponential-mechanism
   draw, ``ε_init/k``) over all (initial literal, other-side literal) pairs. The pairs
   are counted and scored block by block and every reservoir is fed each block
   (:mod:`.pairs`): the same Gumbel races, in memory bounded by a block, not by the
   number of pairs; a run with more than ``pairs.MAX_PAIRS`` pairs is refused before
   any release.
4. **ExtendOne** (Algorithm 3) and **ComputeQuality** (:mod:`.compute_quality`):

   * ES: ``M`` rounds of the memoised race (:mod:`.race`), ``ε_ext/M`` each; then
     one quality release per distinct final redescription, ``ε_qual/#distinct``.
   * CS: rounds ``ℓ = 0..m``. Round 0 measures every distinct initial pair; round
     ``ℓ ≥ 1`` extends every *alive* pair once (exponential mechanism) and measures
     it. Each round's share — ``ε_ext/m`` for extensions (rounds ≥ 1),
     ``ε_qual/(m+1)`` for qualities — is split equally among the pairs alive in it
     (which pairs are alive follows from released noisy Jaccards only). A pair
     stays alive while its noisy Jaccard exceeds ``min_jaccard``; its result is the
     last redescription that did. If every pair stops early, the later rounds'
     shares are not spent (the ledger says so; the authors' code spends
     ``(m+1)/m · ε_qual`` instead).

Scores: the lower-sensitivity quality ``q = J · σ(λ(I − c))`` (``quality="logistic"``;
``λ`` by line search on public values unless ``steepness`` is given) or the plain
Jaccard with ``Δ = 1`` (``quality="jaccard"``, the NoSens ablation).

**Bounded range** (``score_range="bounded"``, the default; ``"symmetric"`` is the
paper's ``exp(ε q / (2Δ))``). Adding a row changes every candidate's score by a value
in ``[-down, up]`` (the quality's :meth:`~.LogisticQuality.one_sided_sensitivity`; for
the Jaccard index ``(1/2, 1)``), removing one by a value in ``[-up, down]``. Let
``R = down + up`` and ``q̃_D = q_D − b |D|`` with ``b = (up − down)/2``: one row more
changes ``q̃`` by ``[-down − b, up − b] = [-R/2, R/2]``, so ``q̃`` has sensitivity
``R/2`` in the ordinary sense, and the exponential mechanism on ``q̃`` with
sensitivity ``R/2`` is ε-DP. ``q̃`` differs from ``q`` by a constant per dataset, which
the exponential mechanism (and every Gumbel race or reservoir built on it) ignores:
sampling ``∝ exp(ε q / R)`` is exactly that mechanism. So every draw is given the
sensitivity ``R/2`` (``R = 1.5 Δ`` at the line search's ``λ``: a third sharper at the
same ``ε``). Engine mode (the centre moves with ``n``) keeps ``R = 2Δ``.

**Numbers of draws** (``initial_pairs="auto"``, ``extensions="auto"``, the defaults):
after the noisy row count, ``k`` and ``m`` / ``M`` are the largest values up to the
paper's (20, and 4 / 80) such that every exponential-mechanism draw has sharpness
``ε_draw / R ≥ min_sharpness`` and every quality release noise of standard deviation at
most ``quality_noise · c`` on the intersection (:mod:`dprm.mining.serenade.auto`). The
rule reads only public values (``ε``, the split, ``R`` and ``c`` from ``n̂``), so it is
post-processing; integers keep the paper's numbers, and
``initial_pairs=20, extensions=80, score_range="symmetric"`` reproduces the paper's
ES (``extensions=4`` for CS). The chosen values are in ``chosen_`` and in the output's
``parameters.chosen``.

**Near-tautologies and significance** (issue 13). By default (``damping="union"``) every
score is damped by ``σ(μ(h − U))`` with the public cap ``h = 0.8 n̂``
(:mod:`.union_cap`: the one-sided bounds become ``(down + tanh(μ/4), up)``, derived
there, and ``R`` grows accordingly, so the draws stay ε-DP); ``damping="none"`` is the
paper's score. Results are judged on released values only: the row count for p-values
is the inverse-variance mean of ``n̂`` and the quality release's cell sum
(:meth:`.QualityRelease.combined_size`), and with ``significance="interval"`` (default)
a result is significant only if the upper end of its simulated p-value interval is at
most ``max_pvalue`` (``"point"``: the noisy p-value, the paper). ``grid="auto"``
(default) picks the grid after the row count (:func:`.auto.grid_splits`; ``"fixed"``:
``max_splits``).

Candidate literals: :mod:`.literals` (numeric thresholds on a grid over the declared
bounds, a data-independent candidate set; undeclared domains make the run not
private and the output says so). The initial pairs are counted from the row masks of
one view's literals (:func:`initial_side`: a view without numeric attributes, else the
one with fewer literals); the candidate set is all pairs either way.

**Numeric views on both sides** (derivation). Nothing in the privacy argument above
needs a Boolean or categorical view; with numeric attributes on both sides it holds
unchanged, for three reasons.

* *The candidate sets are public.* Every numeric literal is an interval
  ``(t_{lo-1}, t_hi]`` between points of the grid over the attribute's declared bounds
  (:func:`dprm.data.grid.rounded_grid`), so the initial pairs (all pairs of one literal
  per side, minus those on one attribute name) and the extensions of a released
  redescription (literals of attributes it does not use, by ``∧`` / ``∨``) are functions
  of the schema and of earlier outputs only: the same set on neighbouring datasets.
* *One row moves ``(I, U)`` by one of the moves the quality's sensitivity covers.*
  Whether a row satisfies a query depends on that row's values alone (an interval
  literal on its one value, ``∧`` / ``∨`` of such literals, a missing value satisfying
  no literal), whatever the kinds of the attributes. So adding a row to both views adds
  it to both supports, to one, or to none: ``(I, U) → (I+1, U+1)``, ``(I, U+1)`` or
  ``(I, U)`` — exactly the moves over which :mod:`.quality` takes its exact one-sided
  bounds ``(down, up)`` and ``Δ`` (over *all* ``0 ≤ I ≤ U``, so also over the supports
  that numeric half-intervals reach, up to all rows). Removing a row is the reverse
  move. Hence every pair and extension score changes within ``[-down, up]`` and the
  bounded-range draws with ``R = down + up`` are ε-DP as derived above.
* *The releases are the same mechanisms.* ComputeQuality releases the 2×2 cell table
  of the two supports (L1 sensitivity 1 for any pair of row sets) and the budget split
  (size count, ``init``, ``extend``, ``quality``) and the ``auto`` rule never look at
  attribute kinds: the ledger adds up exactly as before.

``tests/test_serenade_numeric.py`` checks the three facts by brute force on
neighbouring numeric datasets with missing values (one row added and removed).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from dprm.data.attributes import AttributeKind, TwoViewData, require_attributes
from dprm.engine import CountingEngine, as_engine
from dprm.errors import BudgetExceededError, ParameterError
from dprm.mining.base import (
    CONFIDENCE,
    EPSILON,
    MIN_JACCARD,
    Miner,
    Param,
    Progress,
    ProgressCallback,
    parameter_table,
)
from dprm.mining.private_extraction import discrete_laplace_variance
from dprm.mining.serenade.auto import (
    DEFAULT_MIN_SHARPNESS,
    DEFAULT_QUALITY_NOISE,
    DEFAULT_QUALITY_NOISE_CS,
    MAX_PAIRS,
    MAX_ROUNDS_CS,
    MAX_ROUNDS_ES,
    FINEST_SPLITS,
    auto_split,
    cs_sizes,
    es_sizes,
    grid_splits,
)
from dprm.mining.serenade.compute_quality import QualityRelease, release_cells
from dprm.mining.serenade.extensions import Growing, extend, extension_counts
from dprm.mining.serenade.literals import LiteralTable
from dprm.mining.serenade.pairs import check_pair_count, draw_initial_pairs
from dprm.mining.serenade.quality import (
    JACCARD_ONE_SIDED,
    JACCARD_SENSITIVITY,
    LogisticQuality,
    choose_steepness,
    jaccard_quality,
)
from dprm.mining.serenade.race import ExtensionRace
from dprm.mining.serenade.union_cap import UnionCap
from dprm.privacy import (
    Accountant,
    DiscreteLaplaceCount,
    ExponentialMechanism,
    SecureNoise,
    split_budget,
)
from dprm.privacy.accountant import FLOATING_POINT_SELECTION, check_accountant
from dprm.privacy.budget import as_epsilon, as_fraction
from dprm.queries import Redescription

__all__ = ["SerenadeCS", "SerenadeES", "parse_budget_split", "initial_side", "DATA_SIZES", "QUALITIES"]

DATA_SIZES = ("noisy", "public", "engine")
SCORE_RANGES = ("bounded", "symmetric")
AUTO = "auto"
QUALITIES = ("logistic", "jaccard")
DEFAULT_SPLIT = "0.6,0.3,0.1"
DEFAULT_MIN_SUPPORT_SHARE = Fraction(1, 10)
#: The union share above which scores are damped (ReReMi's maximum support, :mod:`.union_cap`).
DEFAULT_MAX_UNION = 0.8
SIGNIFICANCE = ("interval", "point")
DAMPINGS = ("union", "none")
GRIDS = ("auto", "fixed")


def parse_budget_split(split: Any) -> tuple[Fraction, Fraction, Fraction]:
    """Three positive exact shares (init, extend, quality) that sum to 1.

    Examples
    --------
    >>> parse_budget_split("0.6,0.3,0.1")
    (Fraction(3, 5), Fraction(3, 10), Fraction(1, 10))
    >>> parse_budget_split("0.5,0.5,0.1")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: budget-split must sum to 1 (init, extend, quality), not 0.5,0.5,0.1 (sum 1.1)
    """
    text = split if isinstance(split, str) else ",".join(str(s) for s in split)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise ParameterError(f"budget-split must be three shares 'init,extend,quality', not {text!r}")
    shares = tuple(as_fraction(p, "budget-split") for p in parts)
    if any(s <= 0 for s in shares):
        raise ParameterError(f"budget-split shares must be positive, not {text}")
    if sum(shares) != 1:
        raise ParameterError(f"budget-split must sum to 1 (init, extend, quality), not {text} "
                             f"(sum {float(sum(shares)):g})")
    return shares  # type: ignore[return-value]


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


#: Largest rows of the logistic quality's centre (and of the data-size parameters that
#: set it): the steepness search takes time linear in the centre, about 30 s at 10^6.
MAX_CENTER_ROWS = 1_000_000
_CENTER_WHY = "the logistic quality's steepness search takes time linear in its centre: about 30 s at 10^6 rows"
_ROWS_WHY = ("the logistic quality's centre, 10 % of the rows by default, takes a steepness search linear in "
             "its rows: about 30 s at 10^7 rows")

#: The parameters SerenadeCS and SerenadeES share (each class lists them in its
#: ``__init__`` with its defaults).
SERENADE_PARAMETERS: dict[str, Param] = parameter_table(
    EPSILON,
    Param("budget_split", "Shares 'init,extend,quality' of ε after the row count: for the initial pairs, the "
                          "extensions and the released qualities; they must sum to 1 (default the paper's d3); "
                          "'auto': extend 0.3, the rest split so that the draws and the quality releases afford "
                          "as many initial pairs",
          "text", check=lambda split: split == AUTO or parse_budget_split(split),
          allowed="'auto' or three positive shares that sum to 1"),
    Param("initial_pairs", "Initial pairs (the paper's k): pairs of one literal per side the search starts "
                           "from, each an exponential-mechanism draw; 'auto' picks up to 20 from the budget",
          "int", auto=True, unit="pairs", low=1, high=1000,
          why="each initial pair is a draw over every pair of literals and keeps two row masks"),
    Param("min_support", "Smallest intersection of a kept redescription and the logistic quality's centre: rows "
                         "if 1 or more, else a share of the (noisy) number of rows; none: 10 % of the rows",
          "float", unit="rows or share of rows", low=0, high=MAX_CENTER_ROWS, low_open=True, none=True,
          why=_CENTER_WHY),
    replace(MIN_JACCARD, help="Smallest noisy Jaccard index of a kept redescription (serenade-cs also stops "
                              "extending a pair below it)"),
    Param("max_pvalue", "Largest noisy p-value of a kept redescription (results above it are marked pruned)",
          "float", low=0, high=1),
    Param("max_literals", "Literals per query at most (the authors' max_var)", "int", unit="literals", low=1,
          high=100, why="a query uses an attribute at most once, and longer queries cannot be read"),
    Param("max_splits", "Thresholds per numeric attribute, equally spaced over its declared bounds; a numeric "
                        "literal is an interval between two of them (with grid 'auto', the finest grid tried)",
          "int", unit="thresholds", low=1, high=200,
          why="a numeric attribute has (s+1)(s+2)/2 interval literals, 20,301 at 200, and every pair of "
              "literals is scored"),
    Param("grid", "'auto': numeric attributes are cut on the finest of the nested grids of max-splits, about "
                  "half, a quarter, ... thresholds that the initial-pair draws resolve (default); 'fixed': on "
                  "max-splits thresholds (the paper)", "choice", choices=GRIDS),
    Param("data_size", "How the number of rows enters: 'noisy', a noisy count (default); 'public', given by "
                       "rows (the output is then not private); 'engine', never released (needs min-support as a "
                       "share)", "choice", choices=DATA_SIZES),
    Param("rows", "The true number of rows, with data-size public", "int", unit="rows", low=1,
          high=10 * MAX_CENTER_ROWS, none=True, why=_ROWS_WHY),
    Param("min_rows", "A public lower bound on the number of rows, with data-size engine", "int", unit="rows",
          low=0, high=10 * MAX_CENTER_ROWS, why=_ROWS_WHY),
    Param("size_share", "Share of ε for the noisy count of the rows, with data-size noisy", "float",
          unit="share of ε", low=0, high=1, low_open=True, high_open=True),
    Param("steepness", "Steepness λ of the logistic quality (none: the line search's choice)", "float", low=0,
          low_open=True, none=True),
    CONFIDENCE,
    Param("score_range", "Scale of the exponential mechanism: 'bounded', exp(ε q / R) with the quality's range R "
                         "(default), or 'symmetric', the paper's exp(ε q / 2Δ)", "choice", choices=SCORE_RANGES),
    Param("min_sharpness", "For 'auto': least sharpness ε/R of an exponential-mechanism draw (η₀)", "float",
          low=0, low_open=True),
    Param("quality_noise", "For 'auto': largest noise standard deviation of a released intersection, as a share "
                           "of the minimum support (α)", "float", low=0, low_open=True),
    Param("damping", "'union': scores are damped smoothly where the union of a redescription's supports "
                     "exceeds max-union of the (noisy) rows, so that near-tautologies lose (default); 'none': the "
                     "paper's score", "choice", choices=DAMPINGS),
    Param("max_union", "Share of the (noisy) number of rows above which damping 'union' lowers a score",
          "float", unit="share of rows", low=0, high=1, low_open=True),
    Param("significance", "When a result counts as significant: 'interval', the upper end of its noisy p-value's "
                          "interval (at the run's confidence) is at most max-pvalue (default); 'point', its noisy "
                          "p-value is (the paper)", "choice", choices=SIGNIFICANCE),
)


class _GreedyMiner(Miner):
    """What the greedy miners share: validation, literals, data size, quality, initial pairs."""

    private = True
    #: The miner counts only through a counting engine (:mod:`dprm.engine`), so it runs sharded too.
    counts_through_engine = True

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
            rng: np.random.Generator | None = None, progress: ProgressCallback | None = None) -> "_GreedyMiner":
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
        self.check_parameters()
        engine = as_engine(data)
        data = engine.schema
        if self.private:
            # 'auto': the paper's split until the rule replaces it after the row count (_choose_sizes)
            self._split = parse_budget_split(DEFAULT_SPLIT if self.budget_split == AUTO else self.budget_split)
        self._progress = Progress(progress, self.work())
        rng = np.random.default_rng(rng)
        if self.private:
            check_accountant(accountant)
            if accountant is None:
                accountant = Accountant(self.epsilon, SecureNoise())
            if not accountant.can_afford(self.epsilon):  # refuse the whole run before any release
                raise BudgetExceededError(
                    f"privacy budget exceeded: the run needs epsilon {float(as_epsilon(self.epsilon)):g}, "
                    f"{float(accountant.remaining()):g} of {float(accountant.total_epsilon):g} remain")
            self._spent_before = accountant.spent()
            self._ledger_start = len(accountant.ledger)
        require_attributes(data.views)
        mode = "private" if self.private else "data"
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
        self._notes: list[str] = []
        self._float_selection = False
        self._mine(data)
        self.privacy_ = self._privacy_block(data)
        self.notes_ = self._notes
        self._data = self._engine = self._counts = None  # the miner keeps no reference to the rows after the run
        self._progress.finish()
        return self

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
        epsilon = as_epsilon(self.epsilon, "epsilon")
        self._n_hat: float | None = None
        share = None
        if self.min_support is None:
            share = DEFAULT_MIN_SUPPORT_SHARE
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
        # module docstring: with the bounded range, q shifted by a per-dataset constant has sensitivity R/2).
        self._sensitivity = score_range / 2
        self._score_range_value = score_range
        self._choose_sizes(epsilon, logistic_range, public_center)
        if self.quality == "logistic":
            self._notes.append(f"quality: logistic, steepness {logistic.steepness:.4g}, "
                               f"score range {score_range:.4g} ({'bounded' if bounded else '2 x sensitivity'})")
            if self.data_size != "engine":
                self._notes.append(f"minimum support (logistic centre): {center:.0f} rows")
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
        rule = es_sizes if isinstance(self, SerenadeES) else cs_sizes
        if logistic_range is None:  # both numbers given
            auto_k = auto_m = 0
        else:
            auto_k, auto_m = rule(init, ext, qual, logistic_range, public_center,
                                  min_sharpness=float(self.min_sharpness), quality_noise=float(self.quality_noise))
        self._k = auto_k if self.initial_pairs == AUTO else int(self.initial_pairs)
        self._m = auto_m if self.extensions == AUTO else int(self.extensions)
        self.chosen_ = {"budget_split": ",".join(str(float(share)) for share in self._split),
                        "initial_pairs": self._k, "extensions": self._m,
                        "score_range": self._score_range_value,
                        "initial_pair_sharpness": init / self._k / self._score_range_value}
        if self._m:
            per_draw = ext / self._m / (1 if isinstance(self, SerenadeES) else self._k)
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

    def document(self, extra_parameters: dict[str, Any] | None = None) -> dict[str, Any]:
        """The output document; ``parameters.chosen`` holds the (public) ``k``, ``m``/``M`` and ranges."""
        chosen = getattr(self, "chosen_", None)
        return super().document({**({"chosen": chosen} if chosen else {}), **(extra_parameters or {})})

    def _scores(self, intersection: np.ndarray, union: np.ndarray) -> np.ndarray:
        return np.asarray(self._quality(intersection, union), dtype=np.float64)

    def _initial_pairs(self, epsilon) -> list[Growing]:
        """Algorithm 4: ``k`` independent exponential-mechanism draws over all pairs (streamed: :mod:`.pairs`)."""
        self._float_selection = True  # WeightedReservoir: float64 Gumbel keys, not an exact sampler
        part = self._progress.part(self._caps(0)[0], self._k)
        chosen = draw_initial_pairs(self.tables_, self._side, self._scores, self._sensitivity,
                                    split_budget(epsilon, [1] * self._k), self._accountant,
                                    counts=self._counts, n_rows=self._engine.n_rows)
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
        pruned = bool(stats.intersection < kept_support or stats.jaccard < self.min_jaccard
                      or (stats.p_value is not None and stats.p_value > self.max_pvalue)
                      or (self.significance == "interval" and interval["p_value"][1] > self.max_pvalue))
        return Redescription(state.queries[0], state.queries[1], stats, pruned=pruned, extra={"interval": interval})

    def _kept_support(self, n_rows: float) -> float:
        if self.min_support is not None and self.min_support >= 1:
            return float(self.min_support)
        share = DEFAULT_MIN_SUPPORT_SHARE if self.min_support is None else as_fraction(self.min_support)
        return float(share) * max(n_rows, 0.0)

    def _privacy_block(self, data: TwoViewData) -> dict[str, Any]:
        """The spec's block: the label from the releases, qualified and ``none`` where it must be.

        The initial pairs (:class:`~dprm.privacy.WeightedReservoir`) and SerenadeES's
        extension race draw float64 Gumbel keys instead of using an exact sampler:
        ``pure-dp; floating-point selection``.
        """
        reasons = []
        for table, view in zip(self.tables_, data.views):
            if not table.private_domains:
                reasons.append(f"literals of the {view.name} view come from undeclared types or domains "
                               f"(declare every column's type, bounds and categories in a types file)")
        for view in data.views:
            if view.constant:
                reasons.append(f"constant columns of the {view.name} view were left out, a choice made on the data")
        if self.data_size == "public":
            reasons.append("the number of rows was given as public (data-size 'public'): the guarantee holds "
                           "only among datasets of that size")
        qualifiers = [FLOATING_POINT_SELECTION] if self._float_selection else []
        block = self._accountant.privacy_block(reasons=reasons, qualifiers=qualifiers, since=self._ledger_start)
        unspent = as_epsilon(self.epsilon) - (self._accountant.spent() - self._spent_before)
        if unspent > 0:
            self._notes.append(f"epsilon {float(unspent):.4g} of {float(as_epsilon(self.epsilon)):g} was not spent "
                               f"(every pair stopped before the last round)")
        return block


_COMMON_DOC = """
    epsilon : float
        The budget of the run.
    budget_split : str or sequence
        Shares (init, extend, quality) of the budget after the data-size count, summing
        to 1 exactly (default the paper's d3, ``"0.6,0.3,0.1"``); ``"auto"``: extend 0.3
        and the rest split so that the draws and the quality releases afford as many
        initial pairs (:func:`dprm.mining.serenade.auto.auto_split`).
    initial_pairs : int or "auto"
        ``k``, the number of initial pairs (independent exponential-mechanism draws);
        ``"auto"`` (default): the rule of :mod:`dprm.mining.serenade.auto` (at most 20).
    min_support : float or None
        Logistic centre: rows (``>= 1``) or a share of the (noisy) data size
        (``< 1``); default 10 % of the data size. Redescriptions whose noisy
        intersection is below it are marked ``pruned``.
    min_jaccard : float
        CS: a pair is extended while its noisy Jaccard exceeds it. Both: results below
        it are marked ``pruned``.
    max_pvalue : float
        Results whose noisy p-value exceeds it are marked ``pruned``.
    max_literals : int
        Literals per query at most (the authors' ``max_var``: 4).
    max_splits : int
        Thresholds of the public grid per numeric attribute (19, the paper's); with
        ``grid="auto"`` the finest grid tried.
    grid : {"auto", "fixed"}
        ``"auto"`` (default): the finest of the nested grids ``max_splits``, about half,
        a quarter, ... (19, 9, 4, 1) that the initial-pair draws resolve
        (:func:`dprm.mining.serenade.auto.grid_splits`); ``"fixed"``: ``max_splits``.
    data_size : {"noisy", "public", "engine"}
        How the data size enters (module docstring).
    rows : int or None
        ``data_size="public"``: the true, public number of rows.
    min_rows : int
        ``data_size="engine"``: a public lower bound on the number of rows.
    size_share : float
        ``data_size="noisy"``: share of ``epsilon`` for the noisy row count.
    steepness : float or None
        ``λ``; default the line search's choice.
    confidence : float
        Level of the simulated intervals.
    score_range : {"bounded", "symmetric"}
        Sample ``∝ exp(ε q / R)`` with ``R = down + up`` (default) or ``R = 2Δ`` (paper).
    min_sharpness : float
        ``η₀`` of the auto rule: least ``ε_draw / R`` of a draw (default 8).
    quality_noise : float
        ``α`` of the auto rule: largest noise std of a released intersection relative to
        the minimum support (default 1/4 for ES, 1/10 for CS).
    damping : {"union", "none"}
        ``"union"`` (default): scores are damped smoothly where the union of the two
        supports exceeds ``max_union`` of the (noisy) row count
        (:mod:`dprm.mining.serenade.union_cap`); ``"none"``: the paper's score.
    max_union : float
        The damping's share of the rows (default 0.8, ReReMi's maximum support).
    significance : {"interval", "point"}
        A result is marked ``pruned`` unless its p-value is significant: ``"interval"``
        (default) asks the upper end of its simulated p-value interval (noise of the
        cells and of the row count) to be at most ``max_pvalue``; ``"point"`` (the
        paper) asks it of the noisy p-value only.
"""


class SerenadeCS(_GreedyMiner):
    __doc__ = """SerenadeCS (Algorithm 1): client-side decisions, each initial pair extended in turn.

    Parameters
    ----------
    extensions : int or "auto"
        ``m``: extension rounds per pair; ``"auto"`` (default): at most 4, by the rule.
    """ + _COMMON_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import load_two_view
    >>> from dprm.datasets import make_planted
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> planted = make_planted(600, n_planted=2, random_state=0)
    >>> data = load_two_view(planted.left, planted.right, types=planted.types)
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> miner = SerenadeCS(initial_pairs=4, extensions=2).fit(data, accountant=acc, rng=np.random.default_rng(0))
    >>> miner.privacy_["epsilon"] <= 1.0, miner.privacy_["guarantee"], miner.work()   # seeded: not private
    (True, 'none', 12)
    >>> from dprm.privacy import SecureNoise
    >>> miner = SerenadeCS(initial_pairs=4, extensions=2).fit(data, accountant=Accountant(1.0, SecureNoise()))
    >>> miner.privacy_["guarantee"], miner.privacy_["private"]
    ('pure-dp; floating-point selection', True)
    """

    algorithm = "serenade-cs"
    parameter_specs = {
        **SERENADE_PARAMETERS,
        "extensions": Param("extensions", "Extension rounds (the paper's m) of every initial pair, each adding one "
                                          "literal by the exponential mechanism; 'auto' picks up to 4 from the "
                                          "budget", "int", auto=True, unit="rounds", low=0, high=10_000,
                            why="each round counts every candidate literal on all rows for every pair"),
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        budget_split: str = DEFAULT_SPLIT,
        initial_pairs: int | str = AUTO,
        extensions: int | str = AUTO,
        min_support: float | None = None,
        min_jaccard: float = 0.3,
        max_pvalue: float = 0.01,
        max_literals: int = 4,
        max_splits: int = FINEST_SPLITS,
        grid: str = AUTO,
        data_size: str = "noisy",
        rows: int | None = None,
        min_rows: int = 0,
        size_share: float = 0.01,
        steepness: float | None = None,
        confidence: float = 0.95,
        score_range: str = "bounded",
        min_sharpness: float = DEFAULT_MIN_SHARPNESS,
        quality_noise: float = DEFAULT_QUALITY_NOISE_CS,
        damping: str = "union",
        max_union: float = DEFAULT_MAX_UNION,
        significance: str = "interval",
    ) -> None:
        self._store(locals())
        self.quality = "logistic"

    def work(self) -> int:
        """Progress total: ``k + k·m`` (initial pairs, then each pair's extensions; 20 and 4 for auto)."""
        k, rounds = self._caps(MAX_ROUNDS_CS)
        return k + k * rounds

    def _mine(self, data: TwoViewData) -> None:
        epsilon = self._prepare_private(data)
        init, ext, qual = (epsilon * s for s in self._split)
        m = self._m
        if m == 0:  # no extension rounds: the extension budget goes to the qualities (as in ES)
            qual, ext = qual + ext, ext * 0
        unique: dict[str, Growing] = {}
        for state in self._initial_pairs(init):
            unique.setdefault(state.key(), state)
        alive = list(unique.values())
        results: dict[int, Redescription] = {}
        ids = list(range(len(alive)))
        quality_round = qual / (m + 1)
        extension_round = ext / m if m else None
        k_cap, m_cap = self._caps(MAX_ROUNDS_CS)
        extended_done = self._progress.part(k_cap * m_cap, m * len(alive))  # each pair, each round
        for round_number in range(m + 1):
            extended_done.advance_to((round_number - 1) * len(unique))  # pairs that stopped count as done
            if not alive:
                break
            if round_number > 0:
                share = extension_round / len(alive)
                extended = []
                for pid, state in zip(ids, alive):
                    candidates, scores = self._candidates(state)
                    choice = ExponentialMechanism(share, self._sensitivity).release(
                        self._accountant, f"extension {round_number}.{pid + 1}", scores)
                    extended.append(extend(state, candidates, choice, self.tables_))
                    extended_done.advance()
                alive = extended
            share = quality_round / len(alive)
            next_alive, next_ids = [], []
            for pid, state in zip(ids, alive):
                released = release_cells(self._accountant, f"quality {round_number}.{pid + 1}", share,
                                         self._counts.cells(*state.supports))
                result = self._result(state, released)
                if result.stats.jaccard > self.min_jaccard:
                    results[pid] = result
                    next_alive.append(state)
                    next_ids.append(pid)
            alive, ids = next_alive, next_ids
        extended_done.finish()
        self.redescriptions_ = sorted(results.values(), key=lambda r: -r.stats.jaccard)


class SerenadeES(_GreedyMiner):
    __doc__ = """SerenadeES (Algorithm 2): the engine chooses which redescription to extend.

    Parameters
    ----------
    quality : {"logistic", "jaccard"}
        The score of the exponential mechanism: the lower-sensitivity quality, or the
        plain Jaccard (``"jaccard"``: the paper's NoSens ablation, ``Δ = 1``).
    extensions : int or "auto"
        ``M``: extension rounds in all; ``"auto"`` (default): at most 80, by the rule.
    max_age : int
        Rounds a memoised extension is kept (default 40; no effect on the output
        distribution or the budget, see :mod:`dprm.mining.serenade.race`).
    """ + _COMMON_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import load_two_view
    >>> from dprm.datasets import make_planted
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> planted = make_planted(600, n_planted=2, random_state=0)
    >>> data = load_two_view(planted.left, planted.right, types=planted.types)
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> miner = SerenadeES(initial_pairs=4, extensions=8).fit(data, accountant=acc, rng=np.random.default_rng(0))
    >>> acc.spent(), miner.work()
    (Fraction(1, 1), 12)
    """

    parameter_specs = {
        "quality": Param("quality", "Score of the exponential mechanism: 'logistic', the lower-sensitivity "
                                    "quality, or 'jaccard', the plain Jaccard index (the paper's NoSens ablation)",
                         "choice", choices=QUALITIES),
        **SERENADE_PARAMETERS,
        "extensions": Param("extensions", "Extension rounds (the paper's M) in all: each extends the best of the "
                                          "current redescriptions by one literal, drawn by the exponential "
                                          "mechanism; 'auto' picks up to 80 from the budget", "int", auto=True,
                            unit="rounds", low=0, high=10_000,
                            why="each round counts every candidate literal on all rows"),
        "max_age": Param("max_age", "Rounds a memoised extension is kept in the extension race before it is "
                                    "redrawn (no effect on the results or the budget, only on time)", "int",
                         unit="rounds", low=0, high=10_000, why="no run has more rounds"),
    }

    def __init__(
        self,
        *,
        quality: str = "logistic",
        epsilon: float = 1.0,
        budget_split: str = DEFAULT_SPLIT,
        initial_pairs: int | str = AUTO,
        extensions: int | str = AUTO,
        max_age: int = 40,
        min_support: float | None = None,
        min_jaccard: float = 0.3,
        max_pvalue: float = 0.01,
        max_literals: int = 4,
        max_splits: int = FINEST_SPLITS,
        grid: str = AUTO,
        data_size: str = "noisy",
        rows: int | None = None,
        min_rows: int = 0,
        size_share: float = 0.01,
        steepness: float | None = None,
        confidence: float = 0.95,
        score_range: str = "bounded",
        min_sharpness: float = DEFAULT_MIN_SHARPNESS,
        quality_noise: float = DEFAULT_QUALITY_NOISE,
        damping: str = "union",
        max_union: float = DEFAULT_MAX_UNION,
        significance: str = "interval",
    ) -> None:
        self._store(locals())

    @property
    def algorithm(self) -> str:  # type: ignore[override]
        return "serenade-es-nosens" if self.quality == "jaccard" else "serenade-es"

    def work(self) -> int:
        """Progress total: ``k + M`` (initial pairs, then extension rounds; 20 and 80 for auto)."""
        k, rounds = self._caps(MAX_ROUNDS_ES)
        return k + rounds

    def _mine(self, data: TwoViewData) -> None:
        epsilon = self._prepare_private(data)
        init, ext, qual = (epsilon * s for s in self._split)
        slots = self._initial_pairs(init)
        rounds = self._m
        rounds_done = self._progress.part(self._caps(MAX_ROUNDS_ES)[1], rounds)
        if rounds:
            self._float_selection = True  # the race draws float64 Gumbel keys (dprm.mining.serenade.race)
            race = ExtensionRace(ext / rounds, self._sensitivity, max_age=self.max_age)
            pending: dict[int, Any] = {}

            def scores_of(slot: int) -> np.ndarray:
                candidates, scores = self._candidates(slots[slot])
                pending[slot] = candidates
                return scores

            for round_number in range(1, rounds + 1):
                slot, choice = race.round(self._accountant, f"extension {round_number}",
                                          list(range(len(slots))), scores_of)
                slots[slot] = extend(slots[slot], pending.pop(slot), choice, self.tables_)
                rounds_done.advance()
            self._notes.append(f"extension race: {race.expansions} expansions in {rounds} rounds")
        else:  # no extension rounds: the extension budget goes to the qualities
            qual = qual + ext
        unique: dict[str, Growing] = {}
        for state in slots:
            unique.setdefault(state.key(), state)
        share = qual / len(unique)
        found = []
        for number, state in enumerate(unique.values(), start=1):
            released = release_cells(self._accountant, f"quality {number}", share, self._counts.cells(*state.supports))
            found.append(self._result(state, released))
        self.redescriptions_ = sorted(found, key=lambda r: -r.stats.jaccard)
