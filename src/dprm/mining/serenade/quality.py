r"""Serenade's lower-sensitivity quality: Jaccard times a logistic in the support.

Serenade (paper §3.4, eq. 4) scores a redescription ``(L, R)`` with

.. math::

    q(i, u) = \frac{i}{u}\,\sigma\bigl(\lambda (i - c)\bigr),\qquad
    \sigma(z) = \frac{1}{1 + e^{-z}},

where ``i = |supp L ∩ supp R|``, ``u = |supp L ∪ supp R|`` (``q = 0`` when ``u = 0``),
``c`` is the minimum support ("centre", by default 10 % of the data size) and ``λ`` the
steepness. Scores of redescriptions far above the minimum support barely move when one
row is added, and the logistic factor flattens the region of small supports, where the
plain Jaccard index jumps by up to 1. The exponential mechanism and the weighted
reservoir sample with ``exp(ε q / (2 Δ))``; a smaller ``Δ`` means less noise for the same
``ε``. The plain Jaccard index (:func:`jaccard_quality`, the paper's "NoSens"
ablation) has ``Δ = 1`` (:data:`JACCARD_SENSITIVITY`).

Sensitivity with a public centre (modes ``noisy`` and ``public``)
-----------------------------------------------------------------
Neighbouring datasets differ by one row, present in both views. For fixed queries,
adding the row moves ``(i, u)`` to ``(i+1, u+1)`` (row in both supports, move B),
``(i, u+1)`` (in exactly one, move A) or leaves it (in neither); removing it is the
reverse move, with the same absolute change. Write ``s_i = σ(λ(i - c))``, increasing
in ``i``. Then, for ``0 ≤ i ≤ u``:

* Move A, ``i ≥ 1``: ``q(i,u) - q(i,u+1) = i s_i / (u(u+1)) ≥ 0``, largest at the
  smallest ``u = i``: ``A_i = s_i / (i+1)``.
* Move B from ``(0, 0)``: the change is ``q(1,1) = s_1``; from ``(0, u ≥ 1)`` it is
  ``s_1/(u+1)``, smaller.
* Move B, ``i ≥ 1``: ``g_i(u) = a/(u+1) - b/u`` with ``a = (i+1) s_{i+1}``,
  ``b = i s_i``. Rewritten, ``g_i(u) = s_{i+1} (u - i)/(u(u+1)) + i (s_{i+1} - s_i)/u
  ≥ 0`` (both terms non-negative). ``g_i'(u) = b/u² - a/(u+1)²`` is positive exactly
  for ``u < u* = 1 / (\sqrt{a/b} - 1)``, so ``g_i`` rises up to ``u*`` and falls after
  it: over the integers ``u ∈ [i, U]`` its maximum ``B_i`` is at ``i``, ``⌊u*⌋``,
  ``⌈u*⌉`` or ``U`` (each clipped into the range). Computed with
  ``\sqrt{a/b} - 1 = expm1(½ log(a/b))`` and, without cancellation,
  ``s_{i+1} - s_i = s_{i+1} (1 - s_i) (1 - e^{-λ})``. (``u* ≥ i`` needs ``b ≥ a/4``, so
  rounding in ``b`` never moves a relevant ``u*``.)

So ``Δ = max(s_1, max_{i ≥ 1} max(A_i, B_i))``. Adding a row only ever *decreases*
``q`` by move A and *increases* it by move B, so every score's change lies in
``[-down, up]`` with ``down = max_i A_i`` and ``up = max(s_1, max_i B_i)``
(:meth:`LogisticQuality.one_sided_sensitivity`); removing a row mirrors the interval.
The bounded-range exponential mechanism needs only the width ``R = down + up ≤ 2Δ``
(:meth:`LogisticQuality.score_range`; measured ``R = 1.5 Δ`` at the line search's
``λ`` for every centre tried, ``down = up / 2``). Both need ``O(1)`` work per ``i``. (In every
setting tried, the interior ``u*`` of move B never decided ``Δ``; it is kept so the
value is the exact supremum, and tested on its own.) ``Δ`` is computed in float64, so
it is exact up to rounding of relative size ``~1e-15``; it is not padded.

*Restricted to a data size* (``sensitivity(n_max)``): the state after the move has
``u ≤ n_max``, i.e. ``i ≤ u ≤ U = n_max - 1`` before it; this is what the paper's
``O(n²)`` enumeration (and :func:`brute_force_sensitivity`) computes.

*Over all data sizes* (``sensitivity()``, what private runs use; it does not depend on
the data size at all): ``i`` and ``u`` are unbounded, but the tail is small. For
``i ≥ I``: ``A_i ≤ 1/(I+1)``; and ``(u-i)/(u(u+1)) ≤ t/(i+t)² ≤ 1/(4i)`` (``u = i + t``,
AM-GM) while ``s_{i+1} - s_i ≤ min(λ/4, λ e^{-λ(i-c)})`` (``σ' = λσ(1-σ) ≤ λ(1-σ)``,
``1 - σ(z) ≤ e^{-z}``), so ``B_i ≤ 1/(4I) + min(λ/4, λ e^{-λ(I-c)})``. The computation
evaluates ``i < I`` and doubles ``I`` (from 1024, or from the first power of two
above ``c``: the same result) until this tail bound ``T(I)`` is at most the maximum
found; then that maximum *is* the supremum. The ``i`` below ``2^16`` are evaluated one
by one; beyond, ``i`` is grouped into blocks (relative width ``10⁻³``, and at most
``10⁻³/λ`` wide within ``40/λ`` of the centre) and each block contributes a rigorous
bound from its end points, at most about 0.3 % above the block's true maximum (measured:
``1e-5`` relative at ``c = 10⁵``). So the result is exact whenever the supremum lies
below ``i = 2^16`` (``c`` up to a few ten thousand), otherwise a slight overstatement —
never an understatement. Time and memory are ``O(2^16 + K/δ)`` per cut, whatever the
centre: the line search takes under a second even for ``c = 10^18`` (the row count of
a tiny ε), where the former one-by-one evaluation took minutes and gigabytes.

The supremum over all sizes differs from the paper's per-``n`` value only by the
moves that need ``u > n``; for ``n`` a few times ``c + 1/λ`` they coincide.

Engine-private centre (mode ``engine``, ``center_share = f``)
------------------------------------------------------------
Here ``c = f n`` with the true ``n`` inside the engine, so the centre itself moves from
``f n`` to ``f (n+1)`` when a row is added, in addition to ``(i, u)``. The steepness
``λ`` and the sensitivity must be public, so they cannot use ``n``: they use a public
lower bound ``n ≥ min_rows`` (``c ≥ c₀ = f · min_rows``; ``min_rows = 0`` if none is
given, which is correct but gives ``Δ ≈ ½``). With ``x = i - c``, ``h = 1 - f``
(``0 < f ≤ 1``), ``D(x) = σ(λx) - σ(λ(x - f)) ≥ 0`` and ``E(x) = σ(λ(x+h)) - σ(λx) ≥ 0``
(both unimodal, peaks at ``x = f/2`` and ``x = -h/2``), the changes are

* neither support: ``J · D(x) ≤ D(x)``;
* move A: ``σ(λx)/(i+1) + (i/(i+1)) D(x)`` at its maximising ``u = i``, at most
  ``G_A(x, i) = σ(λx)/(i+1) + D(x)``;
* move B: ``g(u) = σ(λ(x+h)) (u-i)/(u(u+1)) + i E(x)/u ≥ 0``; from ``(0,0)`` it is
  ``σ(λ(1 - c - f)) ≤ σ(λ(1 - c₀ - f))``.

For fixed ``x`` each bound is non-increasing in ``i`` (for move B substitute ``u = t i``,
``t ≥ 1``: ``σ(λ(x+h)) (t-1)/(t(t i + 1)) + E(x)/t`` falls with ``i`` for every ``t``).
Since ``c ≥ c₀`` allows every integer ``i ≥ max(1, ⌈c₀ + x⌉) =: k``, the supremum for a
given ``x`` is at that smallest ``k``. Grouping the real ``x`` by ``k``
(``x ∈ (k - 1 - c₀, k - c₀]``, and ``x ≤ 1 - c₀`` for ``k = 1``) and bounding each
increasing ``σ`` by its value at the right end and each unimodal ``D``, ``E`` by its
maximum over the interval gives, per ``k``, an ``O(1)`` bound (move B then has the form
``a/(u+1) - b/u`` again, maximised over real ``u ≥ k`` as above). The tail ``k ≥ K`` is
bounded by ``max(1/(K+1) + D_K, 1/(4K) + E_K)`` with ``D_K``, ``E_K`` the suprema of
``D``, ``E`` on ``x > K - 1 - c₀``, and ``K`` doubles as before. The constraint
``u ≤ n`` is dropped (an upper bound; the maximising ``u`` are near ``2c ≤ n`` anyway).
The result is a rigorous upper bound on the change over all ``n ≥ min_rows``; it is
slightly above the exact supremum (it lets the centre vary continuously). The quality
object still evaluates ``q`` with its own ``center`` (``f n``, private); ``center`` is
never used for ``λ`` or ``Δ``. The miner must make sure ``min_rows`` really is a lower
bound of ``n`` (this module cannot check it without touching the data).

Choosing the steepness
----------------------
The paper line-searches ``λ`` to minimise the sensitivity (the authors' code has no
search; it defaults to ``λ = 0.1`` and uses ``λ = 0.02`` for MAMMAL, with
``c = 0.1 n``). Over all data sizes the range of ``q`` is ``[0, 1)`` for every
``λ > 0``, so minimising ``Δ`` and minimising ``Δ`` relative to the spread of ``q`` are
the same. :func:`choose_steepness` scans ``log λ`` on a fixed grid and refines the best
cell with ``scipy.optimize.minimize_scalar`` (bounded); it only sees public values
(``c`` or ``f`` and ``min_rows``).

Measured figures (``choose_steepness(c)``, public centre; run the module's
``_figures()``):

==============================  ============  ===========
setting                         chosen ``λ``  ``Δ``
==============================  ============  ===========
``c = 257.5`` (MAMMAL, 2,575)   0.02053       0.005133
``c = 988`` (RWAS, 9,881)       0.006504      0.001626
``c = 4000`` (40,000 rows)      0.001912      0.0004780
``c = 10000``                   0.0008462     0.0002115
engine, f = 0.1, n ≥ 36,000     0.002124      0.0004780
==============================  ============  ===========

With the authors' MAMMAL setting (``c = 257.5``, ``λ = 0.02``) ``Δ ≈ 0.00588``; with
their default ``λ = 0.1``, ``Δ ≈ 0.025``; with ``λ = 1``, ``Δ ≈ 0.245``. The paper's
"``Δ < 0.001``" is not reachable for ``c = 257.5`` or ``c = 988`` with any ``λ``: the
move ``(0,0) → (1,1)`` alone changes ``q`` by ``σ(λ(1 - c))`` and the move
``(i,i) → (i+1,i+1)`` near ``i = c`` by about ``λ/4``, so ``Δ ≳ max(σ(λ(1-c)), λ/4)``;
the optimum balances the two (there ``Δ = λ/4`` for large ``c``), and ``Δ < 0.001``
needs ``c`` of about 1,730 or more (17,300 rows at 10 %).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from dprm.errors import ParameterError

__all__ = [
    "LogisticQuality",
    "jaccard_quality",
    "JACCARD_SENSITIVITY",
    "JACCARD_ONE_SIDED",
    "choose_steepness",
    "brute_force_sensitivity",
]

#: Sensitivity of the plain Jaccard index (it takes values in ``[0, 1]``).
JACCARD_SENSITIVITY: float = 1.0
#: ``(largest decrease, largest increase)`` of the Jaccard index when a row is added:
#: move A lowers ``i/u`` by ``i/(u(u+1)) ≤ 1/2`` (at ``i = u = 1``), move B raises it by
#: ``(u-i)/(u(u+1)) ≤ 1/2`` for ``u ≥ 1`` and by 1 from ``(0, 0)`` to ``(1, 1)``.
JACCARD_ONE_SIDED: tuple[float, float] = (0.5, 1.0)

_FIRST_CUT = 1024
_LAST_CUT = 1 << 62
#: ``i`` below this are evaluated one by one (exactly); above it, in blocks.
_EXACT_HEAD = 1 << 16
#: Relative width of the blocks (``δ``): a block ``[a, b)`` has ``b ≤ (1 + δ) a``
#: and, within ``K/λ`` of the centre, ``b - a ≤ δ/λ``.
_BLOCK_WIDTH = 1e-3
#: ``K``: "near the centre" is ``|i - c| ≤ K/λ`` (``σ`` is within ``e^{-K}`` of 0 or 1 outside).
_BLOCK_WINDOW = 40.0


def _logistic_step(z: np.ndarray, step: float) -> np.ndarray:
    """``σ(z + step) - σ(z)`` for ``step ≥ 0``, without cancellation."""
    return expit(z + step) * expit(-z) * (-math.expm1(-step))


def _rise_fall_max(alpha, beta, k, u_max: float, integer: bool) -> np.ndarray:
    """Max over ``u ∈ [k, u_max]`` of ``alpha (u-k)/(u(u+1)) + k beta / u``.

    ``alpha > 0``, ``beta ≥ 0`` and ``k ≥ 1`` are arrays. The function equals
    ``a/(u+1) - b/u`` with ``a = alpha (k+1)``, ``b = k (alpha - beta)``; if ``b ≤ 0`` it
    decreases in ``u``; otherwise it rises up to ``u* = 1/(sqrt(a/b) - 1)`` and falls
    after it. ``integer`` restricts ``u`` to the integers (then ``⌊u*⌋`` and ``⌈u*⌉``
    are both tried).
    """
    k = k.astype(np.float64)

    def value(u):
        return alpha * (u - k) / (u * (u + 1.0)) + k * beta / u

    best = value(k)
    diff = alpha - beta
    rising = diff > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log1p(1.0 / k) + np.log(alpha) - np.log(np.where(rising, diff, 1.0))
        u_star = 1.0 / np.expm1(0.5 * log_ratio)
    u_star = np.where(rising & np.isfinite(u_star), u_star, k)
    top = np.minimum(u_star, u_max)
    candidates = [np.clip(np.floor(top), k, u_max), np.clip(np.ceil(top), k, u_max)] if integer else [np.maximum(top, k)]
    for u in candidates:
        best = np.maximum(best, value(u))
    return best


def _fixed_head(center: float, lam: float, i_stop: int, u_max: float) -> float:
    """Exact max of the one-row change over ``0 ≤ i < i_stop``, ``i ≤ u ≤ u_max``."""
    return max(_fixed_head_sides(center, lam, i_stop, u_max))


def _fixed_head_sides(center: float, lam: float, i_stop: int, u_max: float) -> tuple[float, float]:
    """``(largest decrease, largest increase)`` of ``q`` when a row is added, over
    ``0 ≤ i < i_stop``, ``i ≤ u ≤ u_max`` (move A decreases, move B increases).

    Exact for ``i < _EXACT_HEAD`` (and for any finite ``u_max``); the ``i`` beyond are
    bounded block by block (:func:`_blocked_head_sides`), so time and memory do not
    grow with the centre.
    """
    if u_max < 0:
        return 0.0, 0.0
    up = float(expit(lam * (1.0 - center)))  # (0, 0) -> (1, 1)
    stop = min(i_stop, int(min(u_max, i_stop)) + 1)
    exact_stop = stop if math.isfinite(u_max) else min(stop, _EXACT_HEAD)
    i = np.arange(1, exact_stop, dtype=np.float64)
    if i.size == 0:
        return 0.0, up
    x = lam * (i - center)
    s_i = expit(x)
    s_next = expit(x + lam)
    move_a = s_i / (i + 1.0)
    rise = _logistic_step(x, lam)
    move_b = _rise_fall_max(s_next, rise, i, u_max, integer=True)  # a = (i+1) s_{i+1}, b = i s_i
    down, up = float(move_a.max()), max(up, float(move_b.max()))
    if exact_stop < stop:
        block_down, block_up = _blocked_head_sides(center, lam, float(exact_stop), float(stop))
        down, up = max(down, block_down), max(up, block_up)
    return down, up


def _geometric_edges(start: float, stop: float) -> np.ndarray:
    """Edges ``start = e_0 < ... < e_m = stop`` with ``e_{j+1} ≤ (1 + δ) e_j``."""
    if stop <= start:
        return np.array([start])
    count = int(math.ceil(math.log(stop / start) / math.log1p(_BLOCK_WIDTH)))
    return np.append(start * np.exp(np.arange(count) * math.log1p(_BLOCK_WIDTH)), stop)


def _block_edges(start: float, stop: float, center: float, lam: float) -> np.ndarray:
    """Edges of the blocks that cover ``[start, stop)``: geometric (ratio ``1 + δ``),
    and no wider than ``δ/λ`` within ``K/λ`` of the centre (where ``σ`` changes)."""
    low, high = center - _BLOCK_WINDOW / lam, center + _BLOCK_WINDOW / lam
    near_from, near_to = min(max(start, low), stop), min(max(start, high), stop)
    parts = [_geometric_edges(start, near_from)]
    if near_to > near_from:
        steep = max(near_from, min(1.0 / lam, near_to))  # δ a < δ/λ below 1/λ: geometric there
        parts.append(_geometric_edges(near_from, steep))
        count = int(math.ceil((near_to - steep) * lam / _BLOCK_WIDTH))
        parts.append(np.linspace(steep, near_to, count + 1) if count else np.array([near_to]))
    parts.append(_geometric_edges(near_to, stop))
    return np.unique(np.concatenate(parts))


def _blocked_head_sides(center: float, lam: float, start: float, stop: float) -> tuple[float, float]:
    """Upper bounds on ``(max A_i, max B_i)`` over the real ``i ∈ [start, stop)``, block by block.

    For a block ``a ≤ i < b`` (``a ≥ 1``): ``s_i`` increases, so ``A_i = s_i/(i+1) ≤
    s(b)/(a+1)``; and ``g_i(u) = s_{i+1} (u-i)/(u(u+1)) + i β_i/u`` with ``β_i =
    s_{i+1} - s_i`` is at most ``s(b+1) (u-a)/(u(u+1)) + b β̄/u`` for every ``u ≥ i ≥
    a``, with ``β̄`` the largest ``β`` on the block (``β`` is unimodal in ``i``, with its
    peak at ``i = c - 1/2``); its maximum over real ``u ≥ a`` is
    :func:`_rise_fall_max` with ``k = a``. Over a block of relative width ``δ`` and
    width at most ``δ/λ`` near the centre, each bound exceeds the block's true
    maximum by a factor of at most about ``(1 + δ) e^{2δ}`` (≈ 0.3 % for ``δ = 1e-3``),
    so where the supremum lies beyond ``_EXACT_HEAD`` it is overstated by at most
    that (a conservative, never a smaller, sensitivity); where it lies below, the
    result is exact. ``O(log(stop/start)/δ + K/δ)`` blocks, whatever the centre.
    """
    edges = _block_edges(start, stop, center, lam)
    a, b = edges[:-1], edges[1:]
    move_a = expit(lam * (b - center)) / (a + 1.0)
    peak = np.clip(center - 0.5, a, b)
    rise = _logistic_step(lam * (peak - center), lam)
    move_b = _rise_fall_max(expit(lam * (b + 1.0 - center)), rise * b / a, a, math.inf, integer=False)
    return float(move_a.max()), float(move_b.max())


def _fixed_tail(center: float, lam: float, cut: int) -> float:
    """Upper bound on the change for all ``i ≥ cut`` (module docstring)."""
    return max(_fixed_tail_sides(center, lam, cut))


def _fixed_tail_sides(center: float, lam: float, cut: int) -> tuple[float, float]:
    """Upper bounds ``(decrease, increase)`` for all ``i ≥ cut`` (module docstring)."""
    rise = min(lam / 4.0, lam * math.exp(min(-lam * (cut - center), 700.0)))
    return 1.0 / (cut + 1.0), 1.0 / (4.0 * cut) + rise


def _first_cut(center: float) -> int:
    """Where the doubling of the cut starts: 1024, or the first power of two above ``c``.

    Starting later never changes the result: a cut ``I`` ends the doubling only when
    the tail bound ``T(I)``, which bounds every ``i ≥ I``, is at most the maximum over
    ``i < I``; then every larger cut finds the same maximum. It only saves the
    doublings below the centre (about 50 for ``c = 10^18``, a tiny ε's row count).
    """
    return max(_FIRST_CUT, 1 << max(0, math.ceil(math.log2(max(center, 1.0)))))


def _one_sided(center: float, lam: float, n_max: int | None) -> tuple[float, float]:
    """``(largest decrease, largest increase)`` of ``q`` when one row is added (public centre)."""
    if n_max is not None:
        down, up = _fixed_head_sides(center, lam, n_max, float(n_max - 1))
        return min(down, 1.0), min(up, 1.0)
    cut = _first_cut(center)
    while True:
        found = _fixed_head_sides(center, lam, cut, math.inf)
        bound = _fixed_tail_sides(center, lam, cut)
        if all(b <= f for b, f in zip(bound, found)) or cut >= _LAST_CUT:
            return tuple(min(max(f, b), 1.0) for f, b in zip(found, bound))  # type: ignore[return-value]
        cut *= 2


def _engine_head(c_low: float, lam: float, share: float, k_stop: int, u_max: float) -> float:
    """Upper bound on the engine-mode change for ``i < k_stop`` (module docstring)."""
    if u_max < 0:
        return 0.0
    rest = 1.0 - share
    best = float(expit(lam * (1.0 - c_low - share)))  # (0, 0) -> (1, 1)
    k = np.arange(1, min(k_stop, int(min(u_max, k_stop)) + 1), dtype=np.float64)
    if k.size == 0:
        return best
    x_right = k - c_low
    x_left = np.where(k == 1, -np.inf, k - 1.0 - c_low)
    d_max = _logistic_step(lam * (np.clip(share / 2.0, x_left, x_right) - share), lam * share)
    e_max = _logistic_step(lam * np.clip(-rest / 2.0, x_left, x_right), lam * rest)
    alpha = expit(lam * (x_right + rest))
    move_a = expit(lam * x_right) / (k + 1.0) + d_max
    move_b = _rise_fall_max(alpha, e_max, k, u_max, integer=False)
    return max(best, float(move_a.max()), float(move_b.max()))


def _engine_tail(c_low: float, lam: float, share: float, cut: int) -> float:
    x_low = cut - 1.0 - c_low
    rest = 1.0 - share
    d_tail = float(_logistic_step(np.float64(lam * (max(share / 2.0, x_low) - share)), lam * share))
    e_tail = float(_logistic_step(np.float64(lam * max(-rest / 2.0, x_low)), lam * rest))
    return max(1.0 / (cut + 1.0) + d_tail, 1.0 / (4.0 * cut) + e_tail)


def _check_center(center: Any, name: str = "center") -> float:
    try:
        value = float(center)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {center!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ParameterError(f"{name} must be a finite number >= 0, got {center!r}")
    return value


def _check_steepness(steepness: Any) -> float:
    try:
        value = float(steepness)
    except (TypeError, ValueError):
        raise ParameterError(f"steepness must be a number, got {steepness!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ParameterError(f"steepness must be a finite number > 0, got {steepness!r}")
    return value


def _check_share(share: Any) -> float | None:
    if share is None:
        return None
    try:
        value = float(share)
    except (TypeError, ValueError):
        raise ParameterError(f"center_share must be a number, got {share!r}") from None
    if not (0.0 < value <= 1.0):
        raise ParameterError(f"center_share must be in (0, 1], got {share!r}")
    return value


def _check_min_rows(min_rows: Any) -> int:
    if min_rows is None:
        return 0
    if isinstance(min_rows, bool) or not isinstance(min_rows, (int, np.integer)) or min_rows < 0:
        raise ParameterError(f"min_rows must be an integer >= 0, got {min_rows!r}")
    return int(min_rows)


def _sensitivity(center: float, lam: float, share: float | None, min_rows: int, n_max: int | None) -> float:
    """The supremum (public centre) or its upper bound (engine mode); see the module docstring."""
    if share is None:
        head, tail = (lambda stop, um: _fixed_head(center, lam, stop, um)), (lambda cut: _fixed_tail(center, lam, cut))
    else:
        c_low = share * min_rows
        head = lambda stop, um: _engine_head(c_low, lam, share, stop, um)  # noqa: E731
        tail = lambda cut: _engine_tail(c_low, lam, share, cut)  # noqa: E731
    if n_max is not None:
        return min(head(n_max, float(n_max - 1)), 1.0)
    cut = _FIRST_CUT if share is not None else _first_cut(center)
    while True:
        found = head(cut, math.inf)
        bound = tail(cut)
        if bound <= found or cut >= _LAST_CUT:
            return min(max(found, bound), 1.0)  # q lies in [0, 1]
        cut *= 2


class LogisticQuality:
    """Serenade's quality ``q(i, u) = (i/u) σ(λ(i - c))`` and its sensitivity.

    Parameters
    ----------
    center : float
        ``c``, the minimum support in rows (``>= 0``); used to evaluate ``q``. In engine
        mode it is ``f n`` with the true ``n`` and is never used for the sensitivity.
    steepness : float
        ``λ > 0``.
    center_share : float, optional
        ``f`` in ``(0, 1]``: engine mode, the centre is ``f n`` and moves with ``n``.
    min_rows : int, optional
        Engine mode only: a public lower bound on the number of rows (default 0).

    Attributes
    ----------
    center, steepness, center_share, min_rows

    Examples
    --------
    >>> q = LogisticQuality(center=10, steepness=0.5)
    >>> q([10, 0], [20, 0]).tolist()
    [0.25, 0.0]
    >>> round(q.sensitivity(), 4)
    0.1225
    >>> q.sensitivity(n_max=40) <= q.sensitivity()
    True
    """

    def __init__(
        self,
        center: float,
        steepness: float,
        *,
        center_share: float | None = None,
        min_rows: int | None = None,
    ) -> None:
        self.center: float = _check_center(center)
        self.steepness: float = _check_steepness(steepness)
        self.center_share: float | None = _check_share(center_share)
        if min_rows is not None and self.center_share is None:
            raise ParameterError("min_rows only applies with center_share (engine mode)")
        self.min_rows: int = _check_min_rows(min_rows)
        self._cache: dict[Any, Any] = {}

    def __repr__(self) -> str:
        extra = "" if self.center_share is None else f", center_share={self.center_share}, min_rows={self.min_rows}"
        return f"LogisticQuality(center={self.center}, steepness={self.steepness}{extra})"

    def __call__(self, intersection: ArrayLike, union: ArrayLike) -> np.ndarray:
        """``q`` for broadcast arrays of intersection and union sizes (float64; 0 where ``u = 0``)."""
        i = np.asarray(intersection, dtype=np.float64)
        u = np.asarray(union, dtype=np.float64)
        jac = np.divide(i, u, out=np.zeros(np.broadcast(i, u).shape), where=u > 0)
        return jac * expit(self.steepness * (i - self.center))

    def sensitivity(self, n_max: int | None = None) -> float:
        """Largest change of ``q`` when one row is added or removed (cached).

        Parameters
        ----------
        n_max : int, optional
            ``None`` (private runs): over every data size. An integer: only datasets of
            at most ``n_max`` rows (``i ≤ u ≤ n_max``), as in the paper.

        Returns
        -------
        float
            Public centre: the exact supremum. Engine mode: a rigorous upper bound over
            every data size ``n ≥ min_rows`` (module docstring).
        """
        if n_max is not None and (isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 0):
            raise ParameterError(f"n_max must be an integer >= 0, got {n_max!r}")
        key = None if n_max is None else int(n_max)
        if key not in self._cache:
            self._cache[key] = _sensitivity(self.center, self.steepness, self.center_share, self.min_rows, key)
        return self._cache[key]

    def one_sided_sensitivity(self, n_max: int | None = None) -> tuple[float, float]:
        """``(largest decrease, largest increase)`` of ``q`` when one row is *added*.

        Public centre only. Adding a row decreases ``q`` (move A) or increases it
        (move B) or leaves it, so every score's change lies in ``[-down, up]``; removing
        a row gives ``[-up, down]``. ``max(down, up)`` is :meth:`sensitivity`.

        Examples
        --------
        >>> q = LogisticQuality(center=10, steepness=0.5)
        >>> down, up = q.one_sided_sensitivity()
        >>> round(down, 4), round(up, 4), max(down, up) == q.sensitivity()
        (0.0587, 0.1225, True)
        """
        if self.center_share is not None:
            raise ParameterError("one-sided sensitivities need a public centre (not engine mode)")
        if n_max is not None and (isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 0):
            raise ParameterError(f"n_max must be an integer >= 0, got {n_max!r}")
        key = ("sides", None if n_max is None else int(n_max))
        if key not in self._cache:
            self._cache[key] = _one_sided(self.center, self.steepness, key[1])  # type: ignore[assignment]
        return self._cache[key]  # type: ignore[return-value]

    def score_range(self, n_max: int | None = None) -> float:
        """``R = down + up``: the width of the interval holding every score's one-row change.

        The bounded-range exponential mechanism samples ``∝ exp(ε q / R)``; with
        ``R < 2Δ`` it is sharper than ``exp(ε q / (2Δ))`` at the same ``ε``
        (:mod:`dprm.mining.serenade.private_miners`). Public centre only.

        Examples
        --------
        >>> q = LogisticQuality(center=10, steepness=0.5)
        >>> q.score_range() < 2 * q.sensitivity()
        True
        """
        return float(sum(self.one_sided_sensitivity(n_max)))


def jaccard_quality(intersection: ArrayLike, union: ArrayLike) -> np.ndarray:
    """Plain Jaccard index ``i/u`` (0 where ``u = 0``), sensitivity :data:`JACCARD_SENSITIVITY`.

    Examples
    --------
    >>> jaccard_quality([1, 3, 0], [2, 3, 0]).tolist()
    [0.5, 1.0, 0.0]
    """
    i = np.asarray(intersection, dtype=np.float64)
    u = np.asarray(union, dtype=np.float64)
    return np.divide(i, u, out=np.zeros(np.broadcast(i, u).shape), where=u > 0)


def choose_steepness(
    center: float,
    *,
    center_share: float | None = None,
    min_rows: int | None = None,
    grid_size: int = 41,
    objective: str = "sensitivity",
) -> LogisticQuality:
    """Line search for the steepness ``λ`` that minimises the sensitivity.

    Deterministic: ``λ · max(c, 1)`` is scanned on ``grid_size`` log-spaced points in
    ``[0.01, 100]`` (``c`` is the centre, or ``f · min_rows`` in engine mode), then the
    best cell is refined by bounded scalar minimisation over ``log λ``. Only public
    values enter: in engine mode ``center`` (private) is ignored for ``λ``.

    Parameters
    ----------
    center : float
        The centre stored in the returned quality.
    center_share, min_rows
        Engine mode (see :class:`LogisticQuality`).
    grid_size : int
        Points of the initial grid (``>= 3``).
    objective : {"sensitivity", "range"}
        Minimise ``Δ`` (the standard exponential mechanism's ``2Δ``), or the score
        range ``R = down + up`` of the bounded-range form (public centre only).

    Returns
    -------
    LogisticQuality

    Examples
    --------
    >>> q = choose_steepness(257.5)
    >>> round(q.steepness, 4), round(q.sensitivity(), 5)
    (0.0205, 0.00513)
    """
    center = _check_center(center)
    share = _check_share(center_share)
    if grid_size < 3:
        raise ParameterError(f"grid_size must be >= 3, got {grid_size!r}")
    if objective not in ("sensitivity", "range"):
        raise ParameterError(f"objective must be 'sensitivity' or 'range', got {objective!r}")
    if objective == "range" and share is not None:
        raise ParameterError("objective 'range' needs a public centre (not engine mode)")
    if share is None:
        if min_rows is not None:
            raise ParameterError("min_rows only applies with center_share (engine mode)")
        scale_center = center
    else:
        scale_center = share * _check_min_rows(min_rows)
    scale = max(scale_center, 1.0)

    def objective(log_lam: float) -> float:
        lam = math.exp(log_lam) / scale
        if objective == "range":
            return sum(_one_sided(scale_center, lam, None))
        return _sensitivity(scale_center, lam, share, _check_min_rows(min_rows) if share else 0, None)

    grid = np.linspace(math.log(0.01), math.log(100.0), grid_size)
    values = [objective(float(g)) for g in grid]
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid_size - 1)]
    from scipy.optimize import minimize_scalar  # 0.2 s to import: only choosing a steepness pays

    result = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    log_lam = float(result.x) if result.fun <= values[best] else float(grid[best])
    return LogisticQuality(
        center, math.exp(log_lam) / scale, center_share=share, min_rows=min_rows if share else None
    )


def brute_force_sensitivity(quality: LogisticQuality, n_max: int) -> float:
    """The paper's enumeration: max one-row change over all datasets of at most ``n_max`` rows.

    Public centre: all ``0 ≤ i ≤ u`` with ``u + 1 ≤ n_max`` and the three moves.
    Engine mode: additionally every size ``n`` with ``min_rows ≤ n ≤ n_max - 1`` and
    ``i ≤ u ≤ n``, centre ``f n`` before and ``f (n+1)`` after. ``O(n_max²)`` (public)
    or ``O(n_max³)`` (engine) work: for tests only.

    Examples
    --------
    >>> q = LogisticQuality(center=5, steepness=0.3)
    >>> abs(brute_force_sensitivity(q, 30) - q.sensitivity(30)) < 1e-12
    True
    """
    if n_max < 1:
        return 0.0
    lam = quality.steepness
    u = np.arange(0, n_max, dtype=np.float64)[:, None]
    i = np.arange(0, n_max, dtype=np.float64)[None, :]
    valid = i <= u

    def q(ii, uu, center):
        jac = np.divide(ii, uu, out=np.zeros(np.broadcast(ii, uu).shape), where=uu > 0)
        return jac * expit(lam * (ii - center))

    if quality.center_share is None:
        pairs = [(quality.center, quality.center, n_max - 1)]
    else:
        f = quality.center_share
        pairs = [(f * n, f * (n + 1), n) for n in range(quality.min_rows, n_max)]
    best = 0.0
    for before_c, after_c, n in pairs:
        ok = valid & (u <= n)
        before = q(i, u, before_c)
        for after in (q(i + 1, u + 1, after_c), q(i, u + 1, after_c), q(i, u, after_c)):
            change = np.abs(after - before)[ok]
            if change.size:
                best = max(best, float(change.max()))
    return best


def _figures() -> list[tuple[float, float, float]]:  # pragma: no cover - documentation helper
    """``(c, λ, Δ)`` for the MAMMAL-, RWAS- and 40,000-row-like centres of the docstring."""
    out = []
    for c in (257.5, 988.0, 4000.0):
        q = choose_steepness(c)
        out.append((c, q.steepness, q.sensitivity()))
    return out
