"""The synthetic table's fit: dpmm's MST / AIM release, and the batch estimate of its rows.

``fit_private_estimator(private_method="mst" | "aim")`` releases one synthetic table over
the public domains (:func:`~dprm.itemsets.private_synthetic.release_synthetic`, run by dpmm
in its own environment; (ε, δ)-DP, its module notes give the guarantee) with the whole ε
in one step; :func:`fit_synthetic` reads the domains and codes of the rows (every value
checked before anything is spent), makes that release, and returns the rows with the
batch estimate fitted to them (post-processing), which FP-growth or ISON mine.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.private_dp_trees import MAX_DEPTH
from dprm.itemsets.private_fit import DOMAIN_REASON, PrivateFit, fit_accountant
from dprm.itemsets.private_synthetic import DEFAULT_DELTA, SEEDED_SYNTHETIC_REASON, release_synthetic
from dprm.privacy import Accountant

__all__ = ["fit_synthetic"]


def fit_synthetic(data: pd.DataFrame, eps: Fraction, method: str, domains: Mapping[str, Sequence[object]] | None,
                  bins: Mapping[str, Sequence[float]] | None, accountant: Accountant | None, n_samples: int,
                  random_state: int | None, source: str, categorical_integers: bool | Collection[str], timeout: float,
                  missing: Sequence[str] | None = None) -> PrivateFit:
    """``private_method="mst"`` / ``"aim"``: one synthetic table from dpmm, all of ``eps`` charged before it.

    The budget is the whole ``eps`` in one step (``synthetic table``), charged by
    :func:`~dprm.itemsets.private_synthetic.release_synthetic` before the worker starts;
    the guarantee is (ε, δ) with δ = :data:`~dprm.itemsets.private_synthetic.DEFAULT_DELTA`
    (``approx-dp; floating-point selection``), ``none`` when seeded or with a domain read
    off the data. The estimator is a batch estimate of the synthetic rows (post-processing). A
    synthetic row's missing value (a state of the released table like any other) is NaN: no item.
    """
    declared = set(domains or {}) | set(bins or {})
    variables = infer_domains(data, domains, bins, source=source, categorical_integers=categorical_integers,
                              missing=missing)
    codes = encode_frame(data, variables, source=source)  # checks every value before anything is spent
    columns = list(variables)
    reasons = [DOMAIN_REASON] if any(c not in declared for c in columns) else []
    if random_state is not None:
        reasons.append(SEEDED_SYNTHETIC_REASON)
    rng = np.random.default_rng(random_state)
    accountant = fit_accountant(accountant, eps, random_state is not None, rng)
    since = len(accountant.ledger)
    seed = None if random_state is None else int(rng.integers(2**31))
    release = release_synthetic(codes, [variables[c].size for c in columns], eps, method, accountant, seed=seed,
                                timeout=timeout)
    block = accountant.privacy_block(reasons=reasons, since=since)
    block["delta"] = DEFAULT_DELTA
    for entry in block["ledger"]:
        entry["delta"] = DEFAULT_DELTA
    synthetic = pd.DataFrame({c: variables[c].texts(release.codes[:, j]) for j, c in enumerate(columns)})
    estimator = DensityEstimator(n_chains=1, domains={c: list(variables[c].categories) for c in columns},
                                 missing=[c for c in columns if variables[c].missing], learner="batch",
                                 n_samples=n_samples,
                                 random_state=None if random_state is None else int(rng.integers(2**63)))
    estimator.fit(synthetic)
    parameters = {"epsilon": float(eps), "delta": DEFAULT_DELTA, "chains": 1, "private_method": method,
                  "orders": [[columns[j] for j in chain.order] for chain in estimator.chains_],
                  "structure": f"dpmm {method}", "max_depth": MAX_DEPTH, "max_parents": 0, "epsilon_per_tree": 0.0,
                  "releasing_trees": 0, "synthetic_rows": int(len(synthetic)),
                  "synthesizer_seconds": release.facts.get("seconds"),
                  "marginals": [[columns[int(str(c)[1:])] for c in clique] for clique in release.facts["cliques"]],
                  "noise": {"items": None, "tables": None, **release.noise}}
    return PrivateFit(estimator, block, parameters, synthetic)
