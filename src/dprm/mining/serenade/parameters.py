"""The greedy miners' parameters: constants, the budget split, the shared specs and signature.

SerenadeCS, SerenadeES (:mod:`dprm.mining.serenade.private_miners`) and ReReMi
(:mod:`dprm.mining.serenade.reremi`) read their parameters' meanings and limits from
:data:`SERENADE_PARAMETERS`; CS and ES take their own parameters first, then those of
:func:`shared_serenade_parameters` (:func:`dprm.mining.base.keyword_init`).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from dprm.errors import ParameterError
from dprm.mining.base import CONFIDENCE, EPSILON, MIN_JACCARD, Param, parameter_table
from dprm.mining.private_grids import GRID_SHARE, NUMERIC_GRID
from dprm.mining.serenade.auto import DEFAULT_MIN_SHARPNESS, DEFAULT_QUALITY_NOISE, FINEST_SPLITS
from dprm.mining.tree_miner_defaults import VARIANTS
from dprm.privacy.budget import as_fraction, check_budget_share

__all__ = ["AUTO", "COMMON_DOC", "DATA_SIZES", "DEFAULT_MIN_SUPPORT_SHARE", "DEFAULT_SPLIT", "ES_SPLIT", "PAPER_SPLIT",
           "INITIAL_SCORES", "MIN_STEEPNESS", "QUALITIES", "SERENADE_KEPT_SUPPORT_SHARE", "SERENADE_MIN_SUPPORT_SHARE", "SERENADE_PARAMETERS", "SERENADE_PAPER_VALUES",
           "SERENADE_SIZE_SHARE", "parse_budget_split", "shared_serenade_parameters"]

DATA_SIZES = ("noisy", "public", "engine")
SCORE_RANGES = ("bounded", "symmetric")
AUTO = "auto"
QUALITIES = ("logistic", "jaccard")
#: The paper's split d3 (init, extend, quality).
PAPER_SPLIT = "0.6,0.3,0.1"
DEFAULT_SPLIT = PAPER_SPLIT
#: SerenadeES's default split: its outputs are its initial pairs, so less for the extension race
#: (measured, docs/serenade.md "More significant redescriptions per run").
ES_SPLIT = "0.7,0.1,0.2"
DEFAULT_MIN_SUPPORT_SHARE = Fraction(1, 10)
#: SerenadeCS's and SerenadeES's default minimum support (the logistic quality's centre; ReReMi and the
#: paper: :data:`DEFAULT_MIN_SUPPORT_SHARE`): twice the paper's, so their draws are twice as sharp
#: (``R ∝ 1/c``; measured, docs/serenade.md "SerenadeCS: a higher centre, three sharp pairs" and
#: "SerenadeES: the same centre, 24-sharp draws").
SERENADE_MIN_SUPPORT_SHARE = Fraction(1, 5)
#: SerenadeCS's and SerenadeES's smallest kept intersection, as a share of the (noisy) rows, where
#: ``min_support`` is not given: the centre above is the quality's shape (its sharpness), not a
#: limit on what a user is shown; at 20 % it pruned relations on 15–20 % of the rows whatever
#: their evidence (session 41, docs/serenade.md). Significance still decides what is kept.
SERENADE_KEPT_SUPPORT_SHARE = Fraction(1, 20)
#: SerenadeCS's and SerenadeES's share of ε for the noisy row count (``data_size="noisy"``); the paper
#: variant keeps the earlier 1 %. Every public rule of a run (the centre, ``k``, ``m``, the grid) reads
#: the count, so its noise moves the rules' outcomes: MAMMAL at ε = 1 sits near one of CS's boundaries,
#: and the 1 % count (scale 100 rows) put ``k`` at 2 instead of 3 in 2 of 40 seeded runs, the 3 % count
#: (scale 33 rows) in none (measured, docs/serenade.md "A steadier row count").
SERENADE_SIZE_SHARE = 0.03
#: The union share above which scores are damped (ReReMi's maximum support, :mod:`.union_cap`).
DEFAULT_MAX_UNION = 0.8
#: The least steepness λ a user may give the logistic quality, per row: flatter, its scores differ by
#: less than float64 can tell over any table (and the damping's λ/2 fell to 0 below 1e-323, refused
#: only after the row count was charged).
MIN_STEEPNESS = 1e-9
SIGNIFICANCE = ("interval", "point")
DAMPINGS = ("union", "none")
PAIR_DRAWS = ("distinct", "independent")
#: What the initial pairs are drawn by: the covariance count (:mod:`.covariance`) or the quality (the paper).
INITIAL_SCORES = ("covariance", "quality")
GRIDS = ("auto", "fixed")

#: What ``variant="paper"`` sets unless given (:func:`dprm.mining.tree_miner_defaults.variant_init`): the
#: paper's configuration, k = 20 initial pairs, the paper's split d3, the symmetric range exp(ε q / 2Δ),
#: the undamped score, the noisy p-value as the test, the 19-threshold grid over the bounds, the 1 % row
#: count (dprm's earlier default, so that a seeded paper run writes what it wrote before). Each miner adds
#: its rounds (ES 80, CS 4).
SERENADE_PAPER_VALUES: dict[str, Any] = {"initial_pairs": 20, "budget_split": PAPER_SPLIT, "score_range": "symmetric",
                                         "damping": "none", "significance": "point", "grid": "fixed",
                                         "pair_draws": "independent", "initial_score": "quality", "size_share": 0.01,
                                         "max_splits": FINEST_SPLITS, "numeric_grid": "equal-width"}


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
    >>> parse_budget_split("0.7,0.1,0.2000000001")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: budget-split must sum to 1 (init, extend, quality), not 0.7,0.1,0.2000000001 \
(sum 1.0000000001)
    """
    text = split if isinstance(split, str) else ",".join(str(s) for s in split)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise ParameterError(f"budget-split must be three shares 'init,extend,quality', not {text!r}")
    shares = tuple(as_fraction(p, "budget-split") for p in parts)
    if any(s <= 0 for s in shares):
        raise ParameterError(f"budget-split shares must be positive, not {text}")
    for share in shares:
        check_budget_share(share, "each budget-split share", may_be_zero=False)
    if sum(shares) != 1:
        raise ParameterError(f"budget-split must sum to 1 (init, extend, quality), not {text} "
                             f"(sum {_exact_text(sum(shares))})")
    return shares  # type: ignore[return-value]


def _exact_text(value: Fraction, limit: int = 40) -> str:
    """``value`` written exactly: a decimal when it has one of at most ``limit`` characters, else ``p/q``, else
    (both too long) ``1 + d`` or ``1 - d`` with the difference ``d`` from 1 to three digits.

    A sum that misses 1 by 1e-10 reads ``1.0000000001``, not ``1`` (a float's ``:g`` rounded it).

    Examples
    --------
    >>> _exact_text(Fraction(11, 10)), _exact_text(Fraction(7, 6)), _exact_text(1 + Fraction(1, 10**400))
    ('1.1', '7/6', '1 + 1.00e-400')
    """
    twos = fives = 0
    rest = value.denominator
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest == 1:  # a terminating decimal of max(twos, fives) digits after the point
        digits = max(twos, fives)
        whole, fraction = divmod(abs(value.numerator) * 10**digits // value.denominator, 10**digits)
        text = ("-" if value < 0 else "") + str(whole) + (f".{fraction:0{digits}d}".rstrip("0") if fraction else "")
        if len(text) <= limit:
            return text
    text = f"{value.numerator}/{value.denominator}"
    if len(text) <= limit:
        return text
    with localcontext() as context:
        context.prec = 3
        difference = Decimal((value - 1).numerator) / Decimal((value - 1).denominator)
    return f"1 {'+' if difference > 0 else '-'} {abs(difference):.2e}"


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
                          "extensions and the released qualities; they must sum to 1 (default 0.7,0.1,0.2 for "
                          "serenade-es, the paper's d3 0.6,0.3,0.1 for serenade-cs); "
                          "'auto': extend 0.3, the rest split so that the draws and the quality releases afford "
                          "as many initial pairs",
          "text", check=lambda split: split == AUTO or parse_budget_split(split),
          allowed="'auto' or three positive shares that sum to 1"),
    Param("initial_pairs", "Initial pairs (the paper's k): pairs of one literal per side the search starts "
                           "from, each an exponential-mechanism draw; 'auto' picks up to 20 from the budget",
          "int", auto=True, unit="pairs", low=1, high=1000,
          why="each initial pair is a draw over every pair of literals and keeps two row masks"),
    Param("min_support", "Smallest intersection of a kept redescription and the logistic quality's centre: rows "
                         "if 1 or more, else a share of the (noisy) number of rows; none: the centre at 20 % of "
                         "the rows and results kept from 5 % (both 10 % with variant paper)",
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
    NUMERIC_GRID,
    GRID_SHARE,
    Param("data_size", "How the number of rows enters: 'noisy', a noisy count (default); 'public', given by "
                       "rows (the output is then not private); 'engine', never released (needs min-support as a "
                       "share)", "choice", choices=DATA_SIZES),
    Param("rows", "The true number of rows, with data-size public", "int", unit="rows", low=1,
          high=10 * MAX_CENTER_ROWS, none=True, why=_ROWS_WHY),
    Param("min_rows", "A public lower bound on the number of rows, with data-size engine", "int", unit="rows",
          low=0, high=10 * MAX_CENTER_ROWS, why=_ROWS_WHY),
    Param("size_share", "Share of ε for the noisy count of the rows, with data-size noisy", "float",
          unit="share of ε", low=0, high=1, low_open=True, high_open=True),
    Param("steepness", "Steepness λ of the logistic quality (none: the line search's choice)", "float",
          low=MIN_STEEPNESS, none=True, why_low="a flatter logistic scores every candidate alike"),
    CONFIDENCE,
    Param("score_range", "Scale of the exponential mechanism: 'bounded', exp(ε q / R) with the quality's range R "
                         "(default), or 'symmetric', the paper's exp(ε q / 2Δ)", "choice", choices=SCORE_RANGES),
    Param("min_sharpness", "For 'auto': least sharpness ε/R of an exponential-mechanism draw (η₀)", "float",
          low=0.01, why_low="a blunter draw is close to uniform over its candidates"),
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
    Param("pair_draws", "'distinct': each initial-pair draw chooses among the pairs the draws before it did not "
                        "choose (default); 'independent': every draw among all pairs, a pair drawn twice counting "
                        "once (the paper)", "choice", choices=PAIR_DRAWS),
    Param("initial_score", "What the initial pairs are drawn by: 'covariance', |L∩R| − |L|·|R|/n, the rows a pair "
                           "holds beyond independence (sensitivity 1; default), or 'quality', the quality the "
                           "extensions use (the paper)", "choice", choices=INITIAL_SCORES),
    Param("variant", "'dprm', the measured-best settings (the auto rule's numbers of draws, damping, "
                     "significance over the interval, the auto grid; docs/serenade.md), or 'paper', the paper's "
                     "configuration (20 initial pairs, 80 extension rounds for ES and 4 for CS, the split "
                     "0.6,0.3,0.1, the symmetric range, no damping, the point p-value, 19 thresholds, independent "
                     "pair draws by the quality, the 10 % centre); options given explicitly win", "choice",
          choices=VARIANTS),
)


def shared_serenade_parameters(
    *,
    min_support: float | None = None,
    min_jaccard: float = 0.3,
    max_pvalue: float = 0.01,
    max_literals: int = 4,
    max_splits: int = FINEST_SPLITS,
    grid: str = AUTO,
    numeric_grid: str = "equal-width",
    grid_share: float = 0.05,
    data_size: str = "noisy",
    rows: int | None = None,
    min_rows: int = 0,
    size_share: float = SERENADE_SIZE_SHARE,
    steepness: float | None = None,
    confidence: float = 0.95,
    score_range: str = "bounded",
    min_sharpness: float = DEFAULT_MIN_SHARPNESS,
    quality_noise: float = DEFAULT_QUALITY_NOISE,
    damping: str = "union",
    max_union: float = DEFAULT_MAX_UNION,
    significance: str = "interval",
    pair_draws: str = "distinct",
    initial_score: str = "covariance",
    variant: str = "dprm",
) -> None:
    """The shared tail of SerenadeCS's and SerenadeES's ``__init__`` (a signature only, never called)."""


#: The Parameters section the two miners' docstrings share.
COMMON_DOC = """
    epsilon : float
        The budget of the run.
    budget_split : str or sequence
        Shares (init, extend, quality) of the budget after the data-size count, summing
        to 1 exactly (default ``"0.7,0.1,0.2"`` for ES, the paper's d3 ``"0.6,0.3,0.1"``
        for CS); ``"auto"``: extend 0.3
        and the rest split so that the draws and the quality releases afford as many
        initial pairs (:func:`dprm.mining.serenade.auto.auto_split`).
    initial_pairs : int or "auto"
        ``k``, the number of initial pairs (exponential-mechanism draws, ``pair_draws``);
        ``"auto"`` (default): the rule of :mod:`dprm.mining.serenade.auto` (at most 20).
    min_support : float or None
        Logistic centre: rows (``>= 1``) or a share of the (noisy) data size
        (``< 1``); default 20 % of the data size (the paper's 10 % with
        ``variant="paper"``; sharper draws, ``R ∝ 1/c``; docs/serenade.md).
        Redescriptions whose noisy intersection is below it are marked ``pruned``.
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
    numeric_grid, grid_share : {"equal-width", "auto"}, float
        ``"equal-width"`` (default): equally wide between the bounds (the paper);
        ``"auto"``: each numeric column without a declared transform gets its grid
        (equally wide or log-spaced) chosen privately from ``grid_share`` of
        ``epsilon`` (default 0.05, spent first; :mod:`dprm.mining.private_grids`).
    data_size : {"noisy", "public", "engine"}
        How the data size enters (:mod:`dprm.mining.serenade.private_miners`).
    rows : int or None
        ``data_size="public"``: the true, public number of rows.
    min_rows : int
        ``data_size="engine"``: a public lower bound on the number of rows.
    size_share : float
        ``data_size="noisy"``: share of ``epsilon`` for the noisy row count (default
        3 %; 1 % with ``variant="paper"``).
    steepness : float or None
        ``λ``; default the line search's choice.
    confidence : float
        Level of the simulated intervals.
    score_range : {"bounded", "symmetric"}
        Sample ``∝ exp(ε q / R)`` with ``R = down + up`` (default) or ``R = 2Δ`` (paper).
    min_sharpness : float
        ``η₀`` of the auto rule: least ``ε_draw / R`` of a draw (default 8 for CS,
        whose draws after the first must be ``3η₀``-sharp; 24 for ES).
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
    pair_draws : {"distinct", "independent"}
        ``"distinct"`` (default): initial-pair draw ``j`` is the exponential mechanism
        over the pairs draws ``1..j-1`` did not choose (no draw is spent on a repeat;
        :func:`dprm.mining.serenade.pairs.draw_initial_pairs`); ``"independent"``: the
        paper's independent draws.
    initial_score : {"covariance", "quality"}
        ``"covariance"`` (default): the initial pairs are drawn by ``|L ∩ R| − |L|·|R| / n``,
        the rows a pair holds beyond independence (sensitivity 1,
        :mod:`dprm.mining.serenade.covariance`), so large near-independent pairs lose;
        ``"quality"``: by the quality the extensions use (the paper).
    variant : {"dprm", "paper"}
        ``"dprm"`` (default): the defaults above, the measured best; ``"paper"``: the
        paper's configuration (:data:`~dprm.mining.serenade.parameters.SERENADE_PAPER_VALUES`:
        20 initial pairs, 80 extension rounds for ES and 4 for CS, the split d3, the
        symmetric range, no damping, the point p-value, the fixed 19-threshold grid,
        independent pair draws by the quality, and the 10 % centre).
        Parameters given explicitly win over the variant's values.
"""
