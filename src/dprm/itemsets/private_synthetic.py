"""A DP synthetic table (dpmm's MST or AIM) over the itemsets' public domains, for FP-growth to mine.

``fit_private_estimator(private_method="mst" | "aim")`` (:mod:`dprm.itemsets.private_synthetic_fit`)
releases, instead of a chain of noisy tables, one synthetic table drawn from a graphical
model fitted to noisy marginals: MST (McKenna et al. 2021: every one-way marginal, then
the two-way marginals of a maximum spanning tree chosen by the exponential mechanism)
or AIM (McKenna et al. 2022: marginals of up to three columns chosen adaptively, each
measured with Gaussian noise, the model re-estimated by Private-PGM after each). Every
frequent itemset of the synthetic rows, and its support there, is post-processing.

How it runs
-----------
dpmm pins numpy 1.26, pandas 2.1 and OpenDP 0.12, which cannot be installed beside
dprm's, so the release runs in the separate environment of the synthetic-data baseline
(:func:`dprm.privacy.dpmm_runner.dpmm_python`: ``$DPRM_DPMM_PYTHON`` or
``.venv-dpmm``) through :mod:`dprm.privacy.dpmm_worker`. The worker is given the
codes of the rows (one column per variable, a value's code its position among the
variable's **declared** categories) and the domain sizes (public); it is never given
the number of rows, and draws as many synthetic rows as the model's own noisy total.

The guarantee (what holds, honestly)
------------------------------------
dpmm's mechanisms compose in zero-concentrated DP: the ρ of the whole fit is dpmm's
``cdp_rho(ε, δ)``, so the synthetic table is **(ε, δ)-DP** under add-remove-one-row
neighbours (δ = :data:`DEFAULT_DELTA` unless given). This is weaker than the chain's
pure ε-DP: with probability up to δ the guarantee may fail. The exponential
mechanism's draws use floating-point probabilities from numpy's ``RandomState``, so the
label is ``approx-dp; floating-point selection`` (``none`` when seeded or with a domain
read off the data). The whole ε is charged to the accountant, in one step, before the
worker starts; the privacy block carries ``delta``. This module adds no mechanism of
its own (no sensitivity to derive here: dpmm calibrates its Gaussian noise to the
L2 sensitivity 1 of a marginal's counts under add-remove-one-row, and its selection's
score to sensitivity 1 (MST) / its own bound (AIM)); what it guarantees is what dpmm
0.1.9 guarantees.

Noise the user can see: a support read off the synthetic rows is the model's, not a
noisy count, and has no interval. What is released with a known noise scale is the
set of marginals dpmm measured: :func:`noise_scales` gives their Gaussian σ in rows
(MST: every marginal the same σ, :func:`mst_sigma`; AIM: each round's σ as dpmm
records it, smallest and largest) and how many there were; the fit's
``parameters["noise"]`` carries them and the command line prints them.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dprm.privacy import Accountant, dpmm_runner

__all__ = ["SYNTHETIC_METHODS", "DEFAULT_DELTA", "SYNTHETIC_GUARANTEE", "SEEDED_SYNTHETIC_REASON",
           "SyntheticRelease", "release_synthetic", "cdp_delta", "cdp_rho", "mst_sigma", "noise_scales"]

#: ``private_method`` name -> dpmm model.
SYNTHETIC_METHODS: dict[str, str] = {"mst": "mst", "aim": "aim"}
#: δ of the (ε, δ) guarantee unless told otherwise (as the synthetic-data baseline's).
DEFAULT_DELTA = 1e-9
#: The guarantee label of an unseeded release over declared domains.
SYNTHETIC_GUARANTEE = "approx-dp; floating-point selection"
#: Why a seeded release is not private (dpmm's own randomness is then reproducible).
SEEDED_SYNTHETIC_REASON = ("seeded: dpmm's selection, noise and sampling use numpy's RandomState seeded from "
                           "the run's seed")
#: dpmm's iterations of Private-PGM (fewer than the baseline's 1,000, to bound the time:
#: MST on tic-tac-toe at ε = 1 gave TPR 0.88 / FPR 0.00 with 1,000 and with 300; not
#: compared further).
N_ITERS = 300


@dataclass
class SyntheticRelease:
    """What :func:`release_synthetic` returns: the synthetic codes and the run's facts.

    Attributes
    ----------
    codes : numpy.ndarray
        ``(rows, variables)`` int64 codes into the declared categories.
    facts : dict
        dpmm's version, seconds, rows drawn, the marginals (cliques) the model measured.
    noise : dict
        :func:`noise_scales` of the run.
    """

    codes: np.ndarray
    facts: dict[str, Any] = field(default_factory=dict)
    noise: dict[str, Any] = field(default_factory=dict)


def cdp_delta(rho: float, epsilon: float) -> float:
    """The δ of (ε, δ)-DP that ρ-zCDP implies (Canonne, Kamath & Steinke 2020, Proposition 12).

    ``δ = inf_{α > 1} exp((α − 1)(αρ − ε) + α log(1 − 1/α)) / (α − 1)``; the infimum is
    where the exponent's derivative ``(2α − 1)ρ − ε + log(1 − 1/α)`` is 0, found by
    bisection on ``α`` in ``[1.01, (ε + 1)/(2ρ) + 2]`` (any α gives a valid bound).

    Examples
    --------
    >>> cdp_delta(0.01, 1.0) < 1e-6
    True
    """
    low, high = 1.01, (epsilon + 1) / (2 * rho) + 2
    for _ in range(200):
        alpha = (low + high) / 2
        if (2 * alpha - 1) * rho - epsilon + math.log1p(-1 / alpha) < 0:
            low = alpha
        else:
            high = alpha
    exponent = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha)
    return min(math.exp(exponent) / (alpha - 1), 1.0)


def cdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose ρ-zCDP implies (ε, δ)-DP by :func:`cdp_delta` (bisection, as dpmm computes it).

    Examples
    --------
    >>> round(cdp_rho(1.0, 1e-9), 5), round(cdp_rho(0.1, 1e-9), 7)
    (0.01497, 0.0001771)
    """
    low, high = 0.0, epsilon + 1
    for _ in range(200):
        mid = (low + high) / 2
        if cdp_delta(mid, epsilon) <= delta:
            low = mid
        else:
            high = mid
    return low


def mst_sigma(epsilon: float, delta: float, n_columns: int) -> float:
    """The Gaussian σ (rows) of each marginal MST measures.

    MST splits ρ in three: a third for the one-way marginals, a third for selecting
    the tree, a third for its ``n − 1`` two-way marginals. The ``n`` one-way
    marginals share ρ/3 equally (dpmm weights them ``1/√n`` each; a marginal has L2
    sensitivity 1 under add-remove-one-row: one row changes one cell by 1), and a
    Gaussian of σ on a sensitivity-1 query costs ``1 / (2σ²)`` of ρ, so
    ``σ = sqrt(n / (2 · ρ/3))`` (dpmm's ``sqrt(3 / (2ρ))`` divided by the weight).
    dpmm 0.1.9 weighs the ``n − 1`` two-way marginals by ``1/√n`` as well (its weights
    are sized by the cliques measured so far), so they get the same σ and spend
    ``(n − 1)/n`` of their third: less than allowed, never more.

    Examples
    --------
    >>> round(mst_sigma(1.0, 1e-9, 22), 1)
    46.9
    """
    rho = cdp_rho(epsilon, delta)
    return math.sqrt(n_columns / (2 * rho / 3))


def noise_scales(method: str, facts: dict[str, Any], epsilon: float, delta: float, n_columns: int
                 ) -> dict[str, Any]:
    """The Gaussian noise scales (rows) of the marginals the synthesizer measured.

    ``{"gaussian_min", "gaussian_max", "marginals"}``: MST's from :func:`mst_sigma`
    (every marginal the same); AIM's as dpmm records them with each measurement
    (``facts["measured"]``: a round's σ; the one-way marginals of its first round and
    each later marginal get their own). ``None`` where the worker recorded none.

    Examples
    --------
    >>> noise_scales("mst", {"cliques": [[0], [1], [0, 1]]}, 1.0, 1e-9, 2)["marginals"]
    3
    """
    measured = [float(m[1]) for m in facts.get("measured", [])]
    if method == "mst":
        sigma = mst_sigma(epsilon, delta, n_columns)
        return {"gaussian_min": sigma, "gaussian_max": sigma, "marginals": len(facts.get("cliques", []))}
    return {"gaussian_min": min(measured) if measured else None, "gaussian_max": max(measured) if measured else None,
            "marginals": len(measured)}


def release_synthetic(codes: np.ndarray, sizes: Sequence[int], epsilon: Fraction, method: str,
                      accountant: Accountant, *, delta: float = DEFAULT_DELTA, seed: int | None = None,
                      n_iters: int = N_ITERS, timeout: float = 3600.0, step: str = "synthetic table",
                      guarantee: str = SYNTHETIC_GUARANTEE) -> SyntheticRelease:
    """Charge ``epsilon`` to ``accountant``, then release a synthetic table of ``codes`` with dpmm's ``method``.

    Parameters
    ----------
    codes : numpy.ndarray
        ``(rows, variables)`` codes into the public domains of ``sizes``.
    sizes : sequence of int
        Each variable's number of declared categories.
    epsilon : Fraction
        The budget of the release (charged whole, before the worker starts).
    method : {"mst", "aim"}
    accountant : Accountant
        Charged ``epsilon`` under ``step``.
    delta : float
        δ of the (ε, δ) guarantee.
    seed : int, optional
        Seeds dpmm's selection and sampling (reproducible, not private).
    n_iters, timeout
        dpmm's Private-PGM iterations; the seconds the worker may run.

    Returns
    -------
    SyntheticRelease

    Raises
    ------
    dprm.privacy.dpmm_runner.SyntheticUnavailable
        dpmm's environment is missing (before anything is charged).
    dprm.errors.DprmError
        dpmm failed or ran out of time (the budget is then spent).
    """
    model = SYNTHETIC_METHODS[method]
    python = dpmm_runner.dpmm_python(f"private_method={method!r}")  # refuses with a one-line error before anything is charged
    accountant.charge(epsilon, step, f"dpmm {model.upper()} (Gaussian marginals, exponential selection; "
                                     f"zCDP converted to (ε, δ = {delta:g}))", guarantee=guarantee)
    frame = pd.DataFrame(np.asarray(codes, dtype=np.int64), columns=[f"c{j}" for j in range(len(sizes))])
    domain = {f"c{j}": int(s) for j, s in enumerate(sizes)}
    with tempfile.TemporaryDirectory(prefix="dprm-itemsets-") as work:
        synthetic, facts = dpmm_runner.run_dpmm(model, frame, domain, python=python, work=Path(work), epsilon=float(epsilon),
                                       delta=delta, seed=seed, n_iters=n_iters, timeout=timeout)
    noise = noise_scales(model, facts, float(epsilon), delta, len(sizes))
    return SyntheticRelease(synthetic[list(frame.columns)].to_numpy(np.int64), facts, noise)
