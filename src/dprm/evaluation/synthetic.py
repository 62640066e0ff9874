"""The DP synthetic-data baseline: dpmm's MST or AIM, then non-private cartwheels on the synthetic table.

What a differential-privacy practitioner would do instead of a private miner:
release a synthetic table from noisy marginals, then mine it with any non-private
miner. :func:`run_synthetic` does exactly that, as the algorithms
``mst-cartwheels`` and ``aim-cartwheels`` of ``dprm evaluate``:

1. **Codes on a grid of public facts.** Every attribute becomes small integer codes:
   a Boolean its value, a categorical column its category code (the categories of
   its domain), a numeric column its cell among the ``cells`` cells of a grid inside
   its bounds, ``(t[k-1], t[k]]``. The grid is :func:`dprm.data.grid.public_grid` of
   the bounds: the declared transform, or (``numeric_grid="auto"``, the default of
   the private miners too) a member of the public family chosen privately by
   :func:`dprm.mining.private_grids.choose_grids` with ``grid_share`` of ε (pure
   ε-DP releases, in the ledger), or equally wide (``"equal-width"``). Every attribute
   has one more code for a missing value unless the types file declares it
   ``"complete"`` (whether a column has missing values is not otherwise assumed
   public; the synthesizer's noisy counts give that code some rows).
2. **The synthesizer**, in its own environment: dpmm 0.1.9 pins numpy 1.26, pandas
   2.1 and OpenDP 0.12, which cannot be installed beside dprm's (and dpmm does not
   run on OpenDP 0.16: ``atom_domain`` now needs ``nan=False``, and on SciPy 1.17 its
   ``lsmr`` call fails). ``make`` builds ``.venv-dpmm`` from ``requirements-dpmm.lock``
   (hashes); :func:`dpmm_python` finds it. The codes go there as a CSV file and
   :mod:`dprm.privacy.dpmm_worker` (run as a script; :mod:`dprm.privacy.dpmm_runner`) fits ``MSTGM`` or ``AIMGM``
   with the rest of ε and δ, and draws as many synthetic rows as the model's own
   noisy total.
3. **Back to values**: a numeric code ``k`` becomes the cell's upper end ``t[k]``
   (the last cell's, the upper bound), so that cartwheels' thresholds, which are
   data values, fall on the grid: ``x ≤ t[k]`` on the real rows holds exactly the
   cells up to ``k``. Other codes map back to themselves.
4. **Non-private cartwheels** (:func:`dprm.mining.make_miner`) on the synthetic table.
   Its redescriptions' statistics (the document's ``noisy`` block) are computed on
   the synthetic rows: released, but synthetic, with no interval. ``dprm evaluate``
   computes the true statistics on the real rows, as for every algorithm.

The guarantee: the grids' choice (ε_grid, pure) and the synthesizer ((ε − ε_grid,
δ) through dpmm's zCDP accounting) compose to **(ε, δ)-DP** under
add-remove-one-row neighbours, with δ = 1e-9 by default; cartwheels, the synthetic
statistics and everything after the synthetic table are post-processing. It covers
the codes as defined above, hence only public facts: the declared bounds,
transforms and categories, ``cells``, ``grid_share``. With a domain inferred from the
data, or a seed (an experiment's runs are reproducible: the grid noise and dpmm's
selection and sampling then come from the seed), the document says
``guarantee: none`` and why, as for every run of ``dprm evaluate``. Unseeded, the
label is ``approx-dp; floating-point selection``: dpmm's exponential mechanism draws
with floating-point probabilities from numpy's ``RandomState``.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from dprm.data import AttributeKind, TwoViewData, load_two_view
from dprm.data.attributes import View
from dprm.data.grid import public_grid
from dprm.engine import InProcessEngine
from dprm.errors import ParameterError
from dprm.mining.private_grids import GRID_CHOICES, choosable, choose_grids, grid_bounds, grid_note
from dprm.params import Param
from dprm.privacy import Accountant, SecureNoise, SeededNoise
from dprm.privacy.dpmm_runner import DPMM_PYTHON_VARIABLE, DPMM_VERSION, SyntheticUnavailable, dpmm_python, run_dpmm
from dprm.privacy.dpmm_runner import INSTALL as _INSTALL
from dprm.privacy.accountant import NEIGHBOURING, SEEDED_REASON
from dprm.privacy.budget import as_epsilon, as_fraction
from dprm.queries import make_document

__all__ = [
    "SYNTHETIC_ALGORITHMS",
    "DPMM_VERSION",
    "DEFAULT_DELTA",
    "SYNTHETIC_PARAMETERS",
    "SyntheticUnavailable",
    "dpmm_python",
    "synthetic_available",
    "check_synthetic_parameters",
    "encode_codes",
    "decode_codes",
    "run_synthetic",
]

#: The baselines' names in ``dprm evaluate`` (``dprm.evaluation.algorithms.SYNTHETIC_BASELINES``) and their dpmm model.
SYNTHETIC_ALGORITHMS: dict[str, str] = {"mst-cartwheels": "mst", "aim-cartwheels": "aim"}

#: δ of the (ε, δ) guarantee unless ``delta`` says otherwise.
DEFAULT_DELTA = 1e-9

#: The baseline's own parameters (the others go to cartwheels).
SYNTHETIC_PARAMETERS: dict[str, Param] = {p.name: p for p in (
    Param("delta", "δ of the (ε, δ) guarantee of the synthesizer", "float", low=0, high=1e-3, low_open=True,
          why="a larger δ allows a small chance of revealing rows outright"),
    Param("cells", "Cells of each numeric column's grid (codes the synthesizer sees)", "int", low=2, high=33,
          why="cartwheels keeps every threshold of at most 33 distinct values, so its thresholds stay on the grid"),
    Param("numeric_grid", "Grid of numeric columns without a declared transform: 'auto', chosen privately from "
                          "the public family with grid-share of ε; 'equal-width', equally wide", "choice",
          choices=GRID_CHOICES),
    Param("grid_share", "Share of ε for choosing the grids (numeric-grid auto)", "float", unit="share of ε", low=0,
          high=1, low_open=True, high_open=True),
    Param("n_iters", "Iterations of dpmm's estimation of the model from the noisy marginals", "int", low=1,
          high=100_000, why="each iteration is a pass of belief propagation"),
    Param("timeout", "Seconds the synthesizer may run", "float", low=0, high=1e6, low_open=True),
)}

_DEFAULTS: dict[str, Any] = {"delta": DEFAULT_DELTA, "cells": 16, "numeric_grid": "auto", "grid_share": 0.1,
                             "n_iters": 1000, "timeout": 3600.0}


def synthetic_available() -> bool:
    """True when dpmm's environment is there and imports dpmm.

    Examples
    --------
    >>> isinstance(synthetic_available(), bool)
    True
    """
    try:
        python = dpmm_python()
    except SyntheticUnavailable:
        return False
    done = subprocess.run([str(python), "-c", "import dpmm.models.mst, dpmm.models.aim"], capture_output=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    return done.returncode == 0


def check_synthetic_parameters(algorithm: str, parameters: Mapping[str, Any]) -> tuple[dict, dict]:
    """Split and check a baseline's parameters: ``(its own with defaults, cartwheels')``.

    Examples
    --------
    >>> own, cartwheels = check_synthetic_parameters("mst-cartwheels", {"delta": 1e-6, "depth": 3})
    >>> own["delta"], own["cells"], cartwheels
    (1e-06, 16, {'depth': 3})
    >>> check_synthetic_parameters("mst-cartwheels", {"colour": 1})
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: colour does not apply to mst-cartwheels
    """
    from dprm.mining import ALGORITHMS, make_miner

    if algorithm not in SYNTHETIC_ALGORITHMS:
        raise ParameterError(f"unknown synthetic-data baseline {algorithm!r}; "
                             f"choose among {', '.join(SYNTHETIC_ALGORITHMS)}")
    cartwheel_names = set(ALGORITHMS["cartwheels"][0].parameter_names())
    own, cartwheels = dict(_DEFAULTS), {}
    for name, value in parameters.items():
        if name in SYNTHETIC_PARAMETERS:
            SYNTHETIC_PARAMETERS[name].validate(value)
            own[name] = value
        elif name in cartwheel_names:
            cartwheels[name] = value
        else:
            raise ParameterError(f"{name} does not apply to {algorithm}")
    make_miner("cartwheels", **cartwheels)  # cartwheels checks its own values
    return own, cartwheels


# -- codes ------------------------------------------------------------------------------


def _thresholds(attribute, cells: int, transform: str | None) -> np.ndarray:
    low, high = grid_bounds(attribute)
    if not low < high:
        return np.empty(0)
    points = public_grid(low, high, cells - 1, transform)
    return points[(points > low) & (points < high)]


def encode_codes(data: TwoViewData, cells: int, transforms: Mapping[tuple[int, str], str] | None = None
                 ) -> tuple[pd.DataFrame, dict[str, int], list[tuple[int, str, np.ndarray | None]]]:
    """Every attribute as codes ``0 .. size-1`` (the last: missing, unless declared complete), on public grids.

    Returns the codes (columns ``c0, c1, ...``), the domain ``{column: size}`` and, per
    column, ``(side, name, thresholds)`` (None for a non-numeric attribute).

    Examples
    --------
    >>> import pandas as pd
    >>> data = load_two_view(pd.DataFrame({"x": [1.0, 4.0, None, 9.0]}), pd.DataFrame({"b": [1, 0, 1, 0]}),
    ...                      types={"columns": {"x": {"type": "numeric", "bounds": [0, 10]}}})
    >>> codes, domain, columns = encode_codes(data, 4)
    >>> codes["c0"].tolist(), codes["c1"].tolist(), domain, columns[0][2].tolist()
    ([0, 1, 4, 3], [1, 0, 1, 0], {'c0': 5, 'c1': 3}, [2.5, 5.0, 7.5])
    """
    transforms = dict(transforms or {})
    frame: dict[str, np.ndarray] = {}
    domain: dict[str, int] = {}
    columns: list[tuple[int, str, np.ndarray | None]] = []
    for side, view in enumerate(data.views):
        for attribute in view:
            key = f"c{len(columns)}"
            missing = attribute.missing
            if attribute.kind is AttributeKind.NUMERIC:
                thresholds = _thresholds(attribute, cells, transforms.get((side, attribute.name),
                                                                          attribute.domain.transform))
                size = len(thresholds) + 1
                codes = np.searchsorted(thresholds, np.where(missing, 0.0, attribute.values), side="left")
            else:
                thresholds = None
                size = 2 if attribute.kind is AttributeKind.BOOLEAN else len(attribute.domain.categories or ())
                codes = attribute.values.astype(np.int64)
            frame[key] = np.where(missing, size, codes).astype(np.int64)
            # a missing code unless the owner declared the column complete (the loader checked it)
            domain[key] = size + (0 if attribute.domain.complete else 1)
            columns.append((side, attribute.name, thresholds))
    return pd.DataFrame(frame), domain, columns


def decode_codes(codes: pd.DataFrame, data: TwoViewData,
                 columns: list[tuple[int, str, np.ndarray | None]]) -> TwoViewData:
    """The synthetic table as a :class:`TwoViewData` with ``data``'s attributes and domains.

    A numeric code ``k`` becomes its cell's upper end (the last cell's: the upper bound);
    the missing code becomes missing.
    """
    views: list[list] = [[], []]
    for position, (side, name, thresholds) in enumerate(columns):
        attribute = data.views[side][name]
        code = codes[f"c{position}"].to_numpy(np.int64)
        if thresholds is not None:
            high = grid_bounds(attribute)[1]
            ends = np.append(thresholds, high)
            values = np.where(code < len(ends), ends[np.minimum(code, len(ends) - 1)], np.nan)
        else:
            size = 2 if attribute.kind is AttributeKind.BOOLEAN else len(attribute.domain.categories or ())
            values = np.where(code < size, code, -1).astype(attribute.values.dtype)
        views[side].append(replace(attribute, values=values))
    return TwoViewData(*(View(view.name, attributes, source="synthetic")
                         for view, attributes in zip(data.views, views)))


# -- the run ----------------------------------------------------------------------------


def _privacy(model: str, accountant: Accountant, epsilon: Fraction, synthesizer_epsilon: Fraction, delta: float,
             reasons: list[str], version: str) -> dict[str, Any]:
    """The document's privacy block: the grids' releases, dpmm's, and the (ε, δ) guarantee or why not."""
    block = accountant.privacy_block(reasons=reasons)
    ledger = [*block["ledger"], {
        "step": f"synthetic table: dpmm {version} {model.upper()} (noisy 1- and 2-way marginals, their selection, "
                "the model and its noisy total; zCDP converted to (ε, δ))",
        "mechanism": f"dpmm {model.upper()} (Gaussian marginals, exponential selection)",
        "epsilon": float(synthesizer_epsilon), "delta": delta}]
    reasons = list(block["reasons"])
    guarantee = "none" if reasons else "approx-dp; floating-point selection"
    return {"epsilon": float(epsilon), "delta": delta, "neighbouring": NEIGHBOURING, "guarantee": guarantee,
            "private": not reasons, "reasons": reasons, "ledger": ledger}


def _reasons(data: TwoViewData, seed: int | None) -> list[str]:
    reasons = []
    inferred = [a.name for view in data.views for a in view if not a.domain.declared]
    if inferred:
        reasons.append(f"domains inferred from the data, not declared ({len(inferred)} columns, e.g. "
                       f"{inferred[0]!r}): the codes' grid and categories depend on the rows")
    if seed is not None:
        reasons.append("seeded: dpmm's selection and sampling use numpy's RandomState seeded from the run's seed")
    return reasons


def run_synthetic(
    algorithm: str,
    left_path: str | os.PathLike | TwoViewData,
    right_path: str | os.PathLike | None = None,
    *,
    epsilon: float | str | Fraction,
    work_dir: str | os.PathLike,
    seed: int | None = None,
    types: str | os.PathLike | None = None,
    id_column: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    duplicate_names: str = "rename",
    python: str | os.PathLike | None = None,
) -> dict:
    """DP synthetic data (dpmm's MST or AIM), then cartwheels on it; the spec's document.

    Parameters
    ----------
    algorithm : {"mst-cartwheels", "aim-cartwheels"}
    left_path, right_path : path-like, or a TwoViewData and None
        The views, as :func:`dprm.data.load_two_view` reads them.
    epsilon : float, str or Fraction
        The whole budget: the grids' choice and the synthesizer.
    work_dir : path-like
        Where the codes and the synthetic table are written (created if missing).
    seed : int, optional
        Makes the run reproducible (then ``guarantee: none``, module docstring).
    types, id_column, duplicate_names
        As for :func:`~dprm.data.load_two_view`.
    parameters : mapping, optional
        :data:`SYNTHETIC_PARAMETERS` (``delta``, ``cells``, ``numeric_grid``,
        ``grid_share``, ``n_iters``, ``timeout``) and cartwheels' parameters.
    python : path-like, optional
        The Python of dpmm's environment (default :func:`dpmm_python`).

    Returns
    -------
    dict
        ``dprm.redescriptions/1``: cartwheels' redescriptions with statistics on the
        synthetic rows (``noisy``; no interval), ``privacy`` with ε, δ, the ledger and
        the guarantee, ``notes``.

    Raises
    ------
    SyntheticUnavailable
        dpmm's environment is missing (one line, how to make it).
    ParameterError, DataError, DprmError
        A bad parameter or data; dpmm failed or timed out.
    """
    from dprm.mining import make_miner

    model = SYNTHETIC_ALGORITHMS.get(algorithm)
    own, cartwheel_parameters = check_synthetic_parameters(algorithm, dict(parameters or {}))
    total = as_epsilon(epsilon, "epsilon")
    python = dpmm_python() if python is None else Path(python)
    if not python.is_file():
        raise SyntheticUnavailable(f"the synthetic-data baseline needs dpmm in its own environment "
                                   f"({python} is missing): {_INSTALL}")
    data = left_path if isinstance(left_path, TwoViewData) else load_two_view(
        left_path, right_path, types=types, id_column=id_column, duplicate_names=duplicate_names)
    seeds = np.random.SeedSequence(seed).spawn(3) if seed is not None else [None] * 3
    noise = SeededNoise(np.random.default_rng(seeds[0])) if seed is not None else SecureNoise()
    accountant = Accountant(total, noise)
    chosen: dict[tuple[int, str], str] = {}
    if own["numeric_grid"] == "auto" and any(choosable(a) for view in data.views for a in view):
        grid_epsilon = total * as_fraction(own["grid_share"], "grid-share")
        chosen = choose_grids(InProcessEngine(data), grid_epsilon, accountant, max_splits=own["cells"] - 1)
    synthesizer_epsilon = total - sum((entry.epsilon for entry in accountant.ledger), Fraction(0))
    codes, domain, columns = encode_codes(data, own["cells"], chosen)
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    dpmm_seed = None if seed is None else int(seeds[1].generate_state(1)[0])
    synthetic_codes, facts = run_dpmm(model, codes, domain, python=python, work=work, epsilon=float(synthesizer_epsilon),
                                         delta=float(own["delta"]), seed=dpmm_seed, n_iters=own["n_iters"],
                                         timeout=float(own["timeout"]))
    synthetic = decode_codes(synthetic_codes, data, columns)
    start = time.perf_counter()
    miner = make_miner("cartwheels", **cartwheel_parameters)
    miner.fit(synthetic, rng=np.random.default_rng(seeds[2]))
    for redescription in miner.redescriptions_:
        redescription.extra["statistics"] = "synthetic"
    privacy = _privacy(model, accountant, total, synthesizer_epsilon, float(own["delta"]), _reasons(data, seed),
                       facts.get("dpmm_version", "?"))
    parameters_out = {**own, "epsilon": float(total), "seed": seed, "synthesizer": f"dpmm {model}",
                      "dpmm_version": facts.get("dpmm_version"), "dpmm_python": str(python),
                      "synthetic_rows": facts.get("rows"), "dpmm_seconds": facts.get("seconds"),
                      "cartwheels_seconds": round(time.perf_counter() - start, 3),
                      "marginals": facts.get("cliques"), "cartwheels": miner.get_params(),
                      "grids": {f"{('left', 'right')[side]}:{name}": grid for (side, name), grid in chosen.items()}}
    notes = [f"(ε, δ)-DP synthetic data (dpmm {facts.get('dpmm_version')} {model.upper()}, δ = {own['delta']:g}) "
             "mined by non-private cartwheels: the statistics ('noisy') are those of the synthetic rows, "
             "without intervals"]
    if chosen:
        notes.append(grid_note(chosen))
    document = make_document(algorithm, parameters_out, privacy, miner.redescriptions_)
    document["notes"] = notes
    return document
