r"""The ``"auto"`` numbers of initial pairs and extensions: sharp draws, accurate qualities.

Why the paper's fixed ``k = 20``, ``M = 80`` (``m = 4``) fail on small data
--------------------------------------------------------------------------
An exponential-mechanism draw with budget ``ε_d`` over scores whose one-row changes
lie in an interval of width ``R`` (``R = 2Δ`` for the standard mechanism, ``R =
down + up`` for the bounded-range form) picks candidate ``c`` with probability
``∝ exp(η q_c)``, ``η = ε_d / R``: the **sharpness** of the draw. The scores lie in
``[0, 1]``, so a draw with ``η ≲ 1`` is close to uniform over its candidates (tens of
thousands of extensions, millions of initial pairs). On MAMMAL (``n̂ ≈ 2,575``,
``c = 257.5``, ``Δ = 0.00513``, ``R = 0.0077``) the paper's split d3 at ``ε = 1`` gives
``η ≈ 3.9`` per initial pair (``k = 20``) and ``η ≈ 0.48`` per extension round
(``M = 80``); on 40,000 rows ``Δ`` is ten times smaller and the same ``k``, ``M`` are
workable. The quality releases have the same problem: ES releases up to ``k`` noisy
2×2 tables with ``ε_qual/k`` each, CS up to ``k (m+1)``.

The rule (public values only)
-----------------------------
Every input is public when the rule runs: ``ε`` and the budget split, the score
range ``R`` (a function of the centre ``c`` and the steepness, themselves functions
of the released noisy row count ``n̂``, of the public ``n`` in ``public`` mode, or of
the public ``min_rows`` in ``engine`` mode), and the minimum support ``c`` (again
``c₀ = f · min_rows`` in ``engine`` mode). The noisy count is released before the
rule runs, so the choice is post-processing and costs nothing; it is the same on
any two datasets with the same released count. With ``η₀`` the minimum sharpness
(``min_sharpness``) and ``α`` the largest relative noise of a quality release at the
minimum support (``quality_noise``):

* an initial-pair draw has ``ε_init / k``: sharp enough iff ``k ≤ ε_init / (η₀ R)``;
* a quality release (discrete Laplace on the four cells, ``ε_q`` each) gives the
  intersection a noise of standard deviation ``≈ √2 / ε_q``; it is at most ``α c``
  iff ``ε_q ≥ √2 / (α c)``;
* **SerenadeES**: ``M`` rounds of ``ε_ext / M``, at most ``k`` quality releases of
  ``ε_q' / k``, ``ε_q' = ε_qual`` (or ``ε_qual + ε_ext`` when ``M = 0``: the run then
  moves the extension budget to the qualities, and the rule counts it)::

      M = clamp(⌊ε_ext / (η₀ R)⌋, 0, 80)
      k = clamp(⌊min(ε_init / (η₀ R), ε_q' α c / √2)⌋, 1, 20)

* **SerenadeCS**: each of the ``m`` rounds extends up to ``k`` pairs (``ε_ext /
  (m k)`` each) and round ``ℓ = 0..m`` measures up to ``k`` pairs (``ε_qual /
  ((m+1) k)`` each). Feasible ``(k, m)``: ``k ≤ ε_init / (η₀ R)``,
  ``m k ≤ ε_ext / (η₀ R)``, ``(m+1) k ≤ ε_qual α c / √2``. The rule takes the
  largest ``k ≤ 20`` for which some ``m ≥ 1`` is feasible and then the largest such
  ``m ≤ 4``, provided that ``k`` is at least :data:`MIN_EXTENDED_PAIRS` ``= 3`` or at
  least the ``k`` below (each pair is one result: extending one or two pairs returns
  one or two, where drawing more pairs returns more). Otherwise ``m = 0``, and **one
  sharp draw first** (issue 28): the run moves the extension budget to the
  qualities, so ``k`` releases of ``(ε_qual + ε_ext) / k`` each; the first draw keeps
  :data:`SHARP_SHARE` ``= 1/2`` of ``ε_init`` (on weak data its one sharp draw is what
  finds a relation, as CS's single pair did before) and the other ``k − 1`` draws
  share the rest, each at least :data:`LATER_DRAW_SHARPNESS` ``· η₀ = 24``-sharp (a draw
  over ``N`` pairs whose best scores lead the bulk by about one half needs ``η / 2``
  well above ``ln N``, 10–12 on MAMMAL's or the planted data's ``10⁴``–``10⁵`` pairs;
  :func:`initial_shares`)::

      k − 1 = clamp(min(⌊ε_init / (2 · 3 η₀ R)⌋, ⌊(ε_qual + ε_ext) α c / √2⌋ − 1), 0, 19)

  The centre is 20 % of the rows by default (the paper's 10 % with ``variant="paper"``):
  ``R`` is about ``1/c``, so the draws are twice as sharp, for pairs of at least a fifth
  of the rows (measured: docs/serenade.md, "SerenadeCS: a higher centre, three sharp
  pairs").

  Privacy: the ``k`` draws are exponential mechanisms of budgets fixed by public
  values (the shares are a function of ``k``), composed sequentially; they sum to
  ``ε_init`` exactly (exact fractions), each charged before it is drawn.

**The grid** (``grid="auto"``, the default; ``max_splits`` is the finest grid tried). After ``k`` is chosen (with the
shares above, for the least sharp draw), the grid of
every numeric attribute is the finest of the nested grids ``s = 19, 9, 4, 1``
(thresholds ``(s_max+1)/2^j - 1``: each grid's points are points of the finer ones)
whose number of interval literals ``L(s) = (s+1)(s+2)/2 - 1`` (209, 54, 14, 2) satisfies

    ``GRID_COST · ln L(s) ≤ η_init = ε_init / (k R)``

(:func:`grid_splits`). Why: an exponential-mechanism draw over ``N`` candidates of
sharpness ``η`` loses about ``ln N / η`` in score against the best (the standard
utility bound), and each numeric attribute contributes ``L(s)`` nearly interchangeable
literals to ``N``: a grid finer than the draw can resolve only spreads the draw's mass
over more near-duplicates and useless intervals (on a public grid, many of them empty
or near-empty). ``GRID_COST = 5`` asks the draw to afford the choice within one
attribute five times over. Measured (``benchmarks/quality_serenade.py``, 3 seeds per
setting, MAMMAL, spi, nmes1988 and numeric planted data at ε = 0.3 and 1): a coarser
grid never lost a kept redescription for ES (whose ``k > 1`` draws are each about
15-sharp at ε = 1) and recovered planted relations that the 19-point grid missed
(planted numeric data: runs with a kept result 0-1/3 → 3/3), while CS (one draw about
60-sharp) kept its best median true Jaccard on the finest grid. It is a function of
public values only (like ``k``, ``M``), so post-processing of the released count.

**The split** (``budget_split="auto"``, an option; the default is the paper's d3). With the paper's d3 (0.6, 0.3,
0.1) the two bounds on ``k`` above are far apart on MAMMAL at ε = 1: the draws afford
``k ≈ 7``, the quality releases ``k ≈ 4`` (ES; ``≈ 1.8`` releases for CS). The rule keeps
the extension share ``3/10`` and splits the other ``7/10`` between the initial pairs
(share ``x``) and the qualities so that the two bounds meet:

    ``x ε' / (η₀ R) = (7/10 − x) ε' α c / √2``, i.e. ``x = 7/10 · b / (a + b)``

with ``a = 1 / (η₀ R)`` draws and ``b = α c / √2`` releases per unit of ε
(:func:`auto_split`; ``x`` clipped into ``[1/10, 13/20]`` and rounded to hundredths, so
the shares are exact and sum to 1). On MAMMAL at ε = 1 this
is ``(0.55, 0.3, 0.15)``: ES gets ``k = 6`` instead of 4 at the same sharpness and
accuracy, CS ``k = 2, m = 1`` instead of ``1, 0``. Public values only, like ``k``. Measured
(``benchmarks/quality_serenade.py --runs 5 --parameters '{"budget_split": "auto"}'``):
more kept on MAMMAL (CS at ε = 1: 10 instead of 5) but a lower median true Jaccard
(0.61 instead of 0.77; ES 0.46 instead of 0.59), and on the weaker data the smaller
initial share loses the decisive draw (nmes1988 CS at ε = 1: kept in 0/5 runs instead of
5/5; spi 1/5 instead of 4/5), so d3 stays the default.

The bounds are floors of public reals, so the rule is a deterministic function of
public values. ``k = 1`` and ``M = 0`` are the fall-backs when even one draw cannot
be sharp: the run then still returns a redescription (ES with ``M = 0`` moves the
extension budget to the quality release).

Calibration of ``η₀`` and ``α`` (``benchmarks/quality_serenade.py``; figures in
``docs/serenade.md``): ``η₀ = 8``; ``α = 1/4`` for ES and ``α = 1/10`` for CS. On
MAMMAL and RWAS (ε = 1, d3) ES's median true Jaccard rises with ``η₀`` from 0.44 /
0.32 (``η₀ = 2``) over 0.72 / 0.51 (4) to 0.76 / 0.55 (8); the quality constraint
binds before ``η₀ = 16`` matters. CS's releases also decide which pairs go on, and
its noisy Jaccards order its (closely spaced) results well only with ``α = 1/10``
(Spearman 0.80 / 0.86, against 0.70 / 0.66 with ``α = 1/4``).

Since session 25 ES's default ``η₀`` is :data:`DEFAULT_MIN_SHARPNESS_ES` ``= 24``, with
the centre at 20 % of the rows (CS's too): at ``η₀ = 8`` and the 10 % centre ES kept
nothing in 9–10 of 10 runs at ε = 1 on nmes1988, latent-heavy and the planted data
(its draws near uniform there) and one to two per run on some MAMMAL seeds; with both
it keeps on all of these and at least four per run on MAMMAL (docs/serenade.md,
"SerenadeES: the same centre, 24-sharp draws").
"""

from __future__ import annotations

import math

from fractions import Fraction

from dprm.errors import ParameterError

__all__ = ["auto_split", "FINEST_SPLITS", "GRID_COST", "grid_splits", "DEFAULT_MIN_SHARPNESS",
           "DEFAULT_MIN_SHARPNESS_ES", "DEFAULT_QUALITY_NOISE", "DEFAULT_QUALITY_NOISE_CS", "LATER_DRAW_SHARPNESS",
           "MAX_PAIRS", "MAX_ROUNDS_ES", "MAX_ROUNDS_CS", "MIN_EXTENDED_PAIRS", "SHARP_SHARE", "es_sizes", "cs_sizes",
           "initial_shares"]

#: ``η₀``: the least ``ε_draw / R`` of an exponential-mechanism draw.
DEFAULT_MIN_SHARPNESS = 8.0
#: ``α``: the largest noise standard deviation of a released intersection, relative to ``c`` (ES).
DEFAULT_QUALITY_NOISE = 0.25
#: ``α`` for SerenadeCS, whose releases also decide which pairs go on (see the calibration).
DEFAULT_QUALITY_NOISE_CS = 0.1
#: How many times over an initial-pair draw's sharpness must pay ``ln`` of a numeric attribute's literals.
GRID_COST = 5.0
#: The finest grid of the auto rule (ReReMi's ``max_seg`` of 20 segments, the paper's).
FINEST_SPLITS = 19
#: The paper's values, the largest the rule picks.
MAX_PAIRS, MAX_ROUNDS_ES, MAX_ROUNDS_CS = 20, 80, 4
#: SerenadeCS without extension rounds: the share of ``ε_init`` its first initial-pair draw keeps.
SHARP_SHARE = Fraction(1, 2)
#: SerenadeCS extends its pairs only if it can extend at least this many, or as many as it would
#: draw without extension rounds (extension rounds for one or two pairs return one or two
#: redescriptions; drawing more pairs instead returns more).
MIN_EXTENDED_PAIRS = 3
#: SerenadeCS without extension rounds: each draw after the first is at least this many times ``η₀``
#: sharp (``η`` times a score gap of about one half must pay ``ln N`` for ``N`` pairs, about 10–12).
LATER_DRAW_SHARPNESS = 3
#: ``η₀`` of SerenadeES: every draw as sharp as CS's later ones (measured, docs/serenade.md
#: "SerenadeES: the same centre, 24-sharp draws").
DEFAULT_MIN_SHARPNESS_ES = LATER_DRAW_SHARPNESS * DEFAULT_MIN_SHARPNESS


def _check(score_range: float, min_support: float, min_sharpness: float, quality_noise: float) -> None:
    if not (math.isfinite(score_range) and score_range > 0):
        raise ParameterError(f"score range must be a positive number, not {score_range}")
    if not (math.isfinite(min_support) and min_support >= 0):
        raise ParameterError(f"minimum support must be a number >= 0, not {min_support}")
    if not (math.isfinite(min_sharpness) and min_sharpness > 0):
        raise ParameterError(f"min-sharpness must be a positive number, not {min_sharpness}")
    if not (math.isfinite(quality_noise) and quality_noise > 0):
        raise ParameterError(f"quality-noise must be a positive number, not {quality_noise}")


def _releases(eps_qual: float, min_support: float, quality_noise: float) -> float:
    """How many quality releases ``ε_qual`` affords with noise at most ``α c`` each."""
    return eps_qual * quality_noise * min_support / math.sqrt(2.0)


def es_sizes(eps_init: float, eps_ext: float, eps_qual: float, score_range: float, min_support: float, *,
             min_sharpness: float = DEFAULT_MIN_SHARPNESS,
             quality_noise: float = DEFAULT_QUALITY_NOISE) -> tuple[int, int]:
    """``(k, M)`` for SerenadeES (module docstring).

    Examples
    --------
    >>> es_sizes(0.594, 0.297, 0.099, 0.0077, 257.5)   # MAMMAL, ε = 1, d3
    (4, 4)
    >>> es_sizes(5.94, 2.97, 0.99, 0.00072, 4000.0)     # 40,000 rows, ε = 10
    (20, 80)
    """
    _check(score_range, min_support, min_sharpness, quality_noise)
    draws = eps_init / (min_sharpness * score_range)
    rounds = min(MAX_ROUNDS_ES, max(0, math.floor(eps_ext / (min_sharpness * score_range))))
    # M = 0 moves the extension budget to the quality releases (SerenadeES._mine): they afford more
    quality = eps_qual if rounds else eps_qual + eps_ext
    k = min(MAX_PAIRS, max(1, math.floor(min(draws, _releases(quality, min_support, quality_noise)))))
    return k, rounds


def cs_sizes(eps_init: float, eps_ext: float, eps_qual: float, score_range: float, min_support: float, *,
             min_sharpness: float = DEFAULT_MIN_SHARPNESS,
             quality_noise: float = DEFAULT_QUALITY_NOISE_CS) -> tuple[int, int]:
    """``(k, m)`` for SerenadeCS (module docstring).

    Examples
    --------
    >>> cs_sizes(0.594, 0.297, 0.099, 0.0077, 257.5)   # MAMMAL, ε = 1, d3, centre 10 %: no sharp round
    (2, 0)
    >>> cs_sizes(0.594, 0.297, 0.099, 0.00427, 515.0)  # centre 20 % (CS's default): one pair extends
    (3, 0)
    >>> cs_sizes(0.594, 0.297, 0.099, 0.00244, 988.0)  # RWAS
    (3, 1)
    >>> cs_sizes(5.94, 2.97, 0.99, 0.00072, 4000.0)
    (20, 4)
    """
    _check(score_range, min_support, min_sharpness, quality_noise)
    unit = min_sharpness * score_range
    init_pairs = eps_init / unit
    ext_draws = eps_ext / unit
    releases = _releases(eps_qual, min_support, quality_noise)

    def largest_m(k: int) -> int:
        m = MAX_ROUNDS_CS
        while m >= 0 and not (m * k <= ext_draws and (m + 1) * k <= releases):
            m -= 1
        return m

    extending = next((k for k in range(min(MAX_PAIRS, math.floor(init_pairs)), 0, -1) if largest_m(k) >= 1), 0)
    # m = 0: the extension budget goes to the quality releases (SerenadeCS._mine), and the first draw
    # keeps SHARP_SHARE of ε_init; the others share the rest (initial_shares), each at least
    # LATER_DRAW_SHARPNESS · η₀-sharp; every pair measured with noise at most α c
    later = float(1 - SHARP_SHARE) * init_pairs / LATER_DRAW_SHARPNESS
    measured = math.floor(_releases(eps_qual + eps_ext, min_support, quality_noise)) - 1
    rest = min(MAX_PAIRS - 1, math.floor(later), measured)
    unextended = 1 + max(0, rest)
    if extending and extending >= min(MIN_EXTENDED_PAIRS, unextended):
        return extending, largest_m(extending)
    return unextended, 0


def initial_shares(k: int, *, sharp_first: bool = False) -> list[Fraction]:
    """The shares of ``ε_init`` of the ``k`` initial-pair draws (module docstring: "One sharp draw first").

    Equal shares, or with ``sharp_first`` (SerenadeCS without extension rounds, ``k``
    chosen by :func:`cs_sizes`) :data:`SHARP_SHARE` for the first draw and the rest in
    equal parts. Public: a function of ``k`` only. They sum to 1 exactly.

    Examples
    --------
    >>> [str(share) for share in initial_shares(3)]
    ['1/3', '1/3', '1/3']
    >>> [str(share) for share in initial_shares(5, sharp_first=True)]
    ['1/2', '1/8', '1/8', '1/8', '1/8']
    >>> initial_shares(1, sharp_first=True)
    [Fraction(1, 1)]
    """
    if k < 1:
        raise ParameterError(f"initial pairs must be at least 1, not {k}")
    if not sharp_first or k == 1:
        return [Fraction(1, k)] * k
    return [SHARP_SHARE] + [(1 - SHARP_SHARE) / (k - 1)] * (k - 1)


def interval_literals(splits: int) -> int:
    """Interval literals of a numeric attribute cut at ``splits`` thresholds: ``(s+1)(s+2)/2 - 1``.

    Examples
    --------
    >>> [interval_literals(s) for s in (19, 9, 4, 1)]
    [209, 54, 14, 2]
    """
    return (splits + 1) * (splits + 2) // 2 - 1


def grid_splits(sharpness: float, max_splits: int, *, cost: float = GRID_COST) -> int:
    """The finest nested grid an initial-pair draw of this sharpness affords (module docstring).

    Parameters
    ----------
    sharpness : float
        ``η_init = ε_init / (k R)`` of one initial-pair draw.
    max_splits : int
        The finest grid (19 by default); the coarser ones halve its segments.
    cost : float
        ``GRID_COST``.

    Examples
    --------
    >>> grid_splits(61.0, 19), grid_splits(15.3, 19), grid_splits(20.0, 19), grid_splits(3.0, 19)
    (19, 4, 9, 1)
    """
    if not (math.isfinite(sharpness) and sharpness >= 0):
        raise ParameterError(f"sharpness must be a number >= 0, not {sharpness}")
    splits = max_splits
    while splits > 1:
        if cost * math.log(interval_literals(splits)) <= sharpness:
            return splits
        splits = max(1, (splits + 1) // 2 - 1)
    return 1


#: The extension share the auto split keeps (the paper's d3).
EXTENSION_SHARE = Fraction(3, 10)


def auto_split(score_range: float, min_support: float, *, min_sharpness: float = DEFAULT_MIN_SHARPNESS,
               quality_noise: float = DEFAULT_QUALITY_NOISE) -> tuple[Fraction, Fraction, Fraction]:
    """``(init, extend, quality)`` shares where the draw and release bounds on ``k`` meet (module docstring).

    Examples
    --------
    >>> [str(share) for share in auto_split(0.0104, 257.5)]     # MAMMAL-like, ES
    ['11/20', '3/10', '3/20']
    >>> [str(share) for share in auto_split(0.0104, 257.5, quality_noise=0.1)]   # CS
    ['21/50', '3/10', '7/25']
    """
    _check(score_range, min_support, min_sharpness, quality_noise)
    draws = 1.0 / (min_sharpness * score_range)
    releases = quality_noise * min_support / math.sqrt(2.0)
    rest = 1 - EXTENSION_SHARE
    share = float(rest) * releases / (draws + releases)
    init = Fraction(round(100 * min(max(share, 0.1), float(rest) - 0.05)), 100)
    return init, EXTENSION_SHARE, rest - init
