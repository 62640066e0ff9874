"""The basis method's fit: the data's public domains, the bases' release, and the fit it returns.

``fit_private_estimator(private_method="basis")`` (and ``"auto"`` when the items' release
chooses the bases, :mod:`dprm.itemsets.private_chain`) releases no model: :func:`fit_basis`
reads the domains and codes of the rows (every value checked before anything is spent)
and makes the release of :func:`~dprm.itemsets.private_basis.release_bases`, whose module
notes derive every release's sensitivity and the split of ε; the
:class:`~dprm.itemsets.private_fit.PrivateFit` it returns holds the release as ``bases``
(no estimator) and its parameters and noise scales.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets import private_basis
from dprm.itemsets.private_basis import release_bases
from dprm.itemsets.private_fit import DOMAIN_REASON, PrivateFit, fit_accountant
from dprm.privacy import Accountant

__all__ = ["fit_basis"]


def fit_basis(data: pd.DataFrame, eps: Fraction, min_support: float | None, domains: Mapping[str, Sequence[object]] | None,
              bins: Mapping[str, Sequence[float]] | None, accountant: Accountant | None, random_state: int | None,
              source: str, categorical_integers: bool | Collection[str], prepared: tuple[Any, ...] | None = None,
              missing: Sequence[str] | None = None) -> PrivateFit:
    """``private_method="basis"``: items, pairs and bases (:func:`~dprm.itemsets.private_basis.release_bases`).

    Every release is charged to ``accountant`` before it reads a row (the items' one-way
    histograms, the pairs' two-way ones, the bases' histograms: their sensitivities and
    the split of ``eps`` are derived in :mod:`dprm.itemsets.private_basis`); they add up to
    ``eps`` exactly. The output is ``bases`` (no estimator). ``prepared``: ``"auto"``'s
    ``(variables, codes, since, selection, pair noise)``, the items already released.
    """
    declared = set(domains or {}) | set(bins or {})
    if prepared is None:
        variables = infer_domains(data, domains, bins, source=source, categorical_integers=categorical_integers,
                                  missing=missing)
        codes = encode_frame(data, variables, source=source)  # checks every value before anything is spent
        accountant = fit_accountant(accountant, eps, random_state is not None, np.random.default_rng(random_state))
        since, selection, noise = len(accountant.ledger), None, None
    else:
        variables, codes, since, selection, noise = prepared
    columns = list(variables)
    reasons = [DOMAIN_REASON] if any(c not in declared for c in columns) else []
    min_support = float(min_support or 0)  # checked by fit_private_estimator (given with this method)
    release = release_bases(codes, [variables[c].size for c in columns], eps, min_support, accountant, columns,
                            [variables[c].categories for c in columns], selection=selection,
                            n_items=[variables[c].n_items for c in columns])
    block = accountant.privacy_block(reasons=reasons, since=since)
    scale = release.bases[0].scale if release.bases else None
    parameters = {"epsilon": float(eps), "private_method": "basis" if prepared is None else "auto",
                  "min_support": min_support,
                  "bases": [[columns[j] for j in b.columns] for b in release.bases],
                  "basis_cells": [int(b.noisy.size) for b in release.bases], "edges": release.n_edges,
                  "cliques": release.n_cliques, "basis_rule": private_basis.BASES,
                  "noise": {"items": release.selection.scale, "pairs": release.pair_scale, "tables": scale}}
    if prepared is not None:
        parameters.update(auto_choice="basis", pair_noise=noise)
    return PrivateFit(None, block, parameters, bases=release)
