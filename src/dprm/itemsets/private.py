"""A differentially private density estimate: chains of conditionals fitted in batch from DP releases.

The estimate of :mod:`dprm.itemsets.estimator` is made of exact counts of the rows,
and t-closeness (:mod:`dprm.itemsets.closeness`) is a syntactic property of it, not a
privacy guarantee. :func:`fit_private_estimator` builds the same kind of estimate — an
ensemble of classifier chains, one tree per variable predicting it from the variables
before it — from differentially private releases only, so that the estimate, every
density it gives and every itemset ISON mines from it are ε-DP by post-processing.

The methods (``private_method=``) and where they live
-----------------------------------------------------
This module checks the parameters (:data:`SETTINGS`) and hands each method of
:data:`PRIVATE_METHODS` to its fit; the releases, their sensitivities and the split of
ε are derived in the module that spends the budget:

``"chain"`` (the default), ``"frequent-items"``, ``"auto"``
    :mod:`dprm.itemsets.private_chain` (the releases, why ``structure="parents"`` is the
    default, the budget split over releases and chains, the items released first); a
    conditional of ``"parents"`` is released by :mod:`dprm.itemsets.private_parents`, one
    of ``"dp-trees"`` by :mod:`dprm.itemsets.private_dp_trees`, the items by
    :mod:`dprm.itemsets.private_items`.
``"basis"`` (and ``"auto"`` when its items choose the bases)
    :mod:`dprm.itemsets.private_basis_fit`, releasing with :mod:`dprm.itemsets.private_basis`
    (its pairs' route :mod:`dprm.itemsets.private_basis_pairs`, the reading of its cells
    :mod:`dprm.itemsets.private_basis_supports`).
``"mst"`` / ``"aim"``
    :mod:`dprm.itemsets.private_synthetic_fit`, releasing with
    :mod:`dprm.itemsets.private_synthetic`.

Every fit returns a :class:`~dprm.itemsets.private_fit.PrivateFit` and keeps its ledger
with the helpers of :mod:`dprm.itemsets.private_fit`. ``PrivateFit``, ``DOMAIN_REASON``,
``released_tree``, ``MAX_DEPTH``, ``STRUCTURES``, ``COMPRESSED_MAX_PARENTS`` and
``COMPRESSED_MAX_CELLS`` are importable from here too.

Missing values
--------------
An item is a ``(column, value)`` pair, so a missing value is no item: a row missing
column ``c`` holds no item of ``c``. A column named in ``missing=`` (a public
declaration: the command line names every column not declared ``complete`` when the run
declares missing values, docs/itemsets.md) has one more state in its public domain, the
missing value (:class:`~dprm.itemsets.domains.VariableDomain`, code ``len(categories)``),
fixed before any row is read. The releases treat it as one more category:

* every row still has exactly one state per column, so each histogram and table (the
  items' one-way histograms, a chain's tables, a DP tree's leaves, a basis's cells)
  still puts each row in exactly one cell: L1 sensitivity 1, unchanged; the choice's
  score ``n·R`` is over the same cells and keeps its sensitivity 3 (its derivation does
  not depend on the number of categories); each release's budget is the same;
* the noisy number of rows ``n̂`` (the items' and the bases' totals) counts the rows
  missing a column in that column's extra cell, so it stays an unbiased count of all
  rows;
* the estimate is a distribution over complete rows whose states include the missing
  value, and an itemset's support, the density of its items with every other column's
  states summed out (the missing value included), is the share of rows holding all its
  items, rows missing one of its columns excluded: the support's definition. ISON, the
  basis release and FP-growth on synthetic rows never name the missing value (the items
  of :func:`~dprm.itemsets.private_items.release_items` leave it out: it is merged into
  *other*). A DP tree (``"dp-trees"``) sends a missing feature value to its multiway
  split's child for missing values, which becomes the branch of the missing state, and
  learns the missing value as one more class.

A missing value in a declared column not named in ``missing=`` is an error before
anything is spent (its public domain has no missing value); an undeclared column's
domain has it when the rows hold one (read off the data, like its categories: not
private anyway).

What is private
---------------
``privacy["guarantee"]`` is the weakest label of the mechanisms
(``pure-dp; floating-point selection`` for exact exponential-mechanism draws; the
DP trees use ``search="auto"``, so a schema too wide for an exact draw of one level
falls back to MCMC and the label says ``pure-dp-on-mcmc-convergence``; refusing it
instead would happen after the tree's budget was charged). It is
``none``, with reasons, when the noise is seeded (``random_state`` given) or when a
column's categories are read off the data instead of declared (``domains=``/``bins=``
for every column).

Examples
--------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> a = rng.choice(["x", "y"], p=[0.7, 0.3], size=5000)
>>> b = np.where(a == "x", "u", rng.choice(["u", "v"], size=5000))
>>> fit = fit_private_estimator(pd.DataFrame({"a": a, "b": b}), epsilon=1.0,
...                             domains={"a": ["x", "y"], "b": ["u", "v"]}, random_state=0)
>>> round(fit.estimator.density({"a": "x"}), 1), fit.privacy["epsilon"], fit.privacy["private"]
(0.7, 1.0, False)
>>> fit.privacy["reasons"][0].startswith("seeded noise")
True
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dprm.errors import ParameterError
from dprm.itemsets.parameters import (N_CHAINS, N_SAMPLES, RANDOM_STATE, Setting, check_settings, finite_number,
                                      whole_number)
from dprm.itemsets.private_basis_fit import fit_basis
from dprm.itemsets.private_chain import COMPRESSED_MAX_CELLS, COMPRESSED_MAX_PARENTS, STRUCTURES, fit_chain
from dprm.itemsets.private_dp_trees import MAX_DEPTH, released_tree
from dprm.itemsets.private_fit import DOMAIN_REASON, PrivateFit
from dprm.itemsets.private_synthetic import SYNTHETIC_METHODS
from dprm.itemsets.private_synthetic_fit import fit_synthetic
from dprm.params import as_seed
from dprm.privacy import Accountant, as_epsilon
from dprm.privacy.budget import check_epsilon_range

# The fits and their constants live in their own modules (module notes); the public names
# are named here too, where users import them.
__all__ = ["PrivateFit", "fit_private_estimator", "released_tree", "COMPRESSED_MAX_CELLS", "COMPRESSED_MAX_PARENTS",
           "MAX_DEPTH", "PRIVATE_METHODS", "STRUCTURES", "DOMAIN_REASON"]

#: What the fit releases (``fit_private_estimator(private_method=)``): ``"chain"`` (the
#: default) the chain over the declared domains; ``"frequent-items"`` the one-way
#: histograms first, then the chain over the domains of the items that can reach
#: ``min_support`` (:mod:`dprm.itemsets.private_items`); ``"mst"`` / ``"aim"`` one synthetic
#: table from dpmm's MST / AIM in its own environment, (ε, δ)-DP, mined by FP-growth
#: (:mod:`dprm.itemsets.private_synthetic`). Measured side by side (θ = 0.3,
#: ``docs/itemsets.md``, fifth round) ``"mst"``'s TPR at ε = 1 is higher on nmes and vote,
#: level on mushroom and tic-tac-toe (one or two seeds), but the default stays the chain: it is
#: pure ε-DP and needs no separate environment, MST's table is (ε, δ)-DP, and at ε = 0.1
#: on vote (435 rows) MST reports 16 times as many false itemsets as true ones. ``"basis"``
#: releases no model: noisy histograms of a few item sets covering the frequent itemsets
#: (PrivBasis-style, :mod:`dprm.itemsets.private_basis`), supports summed from their cells
#: with their noise scale; the fit's ``bases`` lists the itemsets (no estimator, no ISON).
#: ``"auto"`` releases the items first (``item_share()`` of ε), then ``"basis"``'s bases (one
#: large basis by default, eighth round) when the predicted noise of the pairs' route
#: (:func:`~dprm.itemsets.private_basis_pairs.pair_noise`, read off the items' release:
#: post-processing) is at most ``BASIS_MAX_NOISE`` of ``θ·n̂``, the chain over the declared
#: domains with the rest of ε otherwise (``docs/itemsets.md``, seventh and eighth rounds).
PRIVATE_METHODS = ("chain", "frequent-items", "mst", "aim", "basis", "auto")


def _is_epsilon(value: Any) -> bool:
    try:
        as_epsilon(value)
    except Exception:  # noqa: BLE001 - one message for every bad value
        return False
    return True


#: The checks of :func:`fit_private_estimator`'s parameters, in the order they are made
#: (``n_chains`` is skipped when ``orders`` is given).
SETTINGS: dict[str, Setting] = {setting.name: setting for setting in (
    Setting("epsilon", "a positive finite number", _is_epsilon),
    RANDOM_STATE,
    Setting("max_depth", "an integer in [1, 10]", whole_number(1, 10)),
    Setting("structure", f"one of {', '.join(STRUCTURES)}", lambda v: v in STRUCTURES),
    Setting("max_parents", "an integer in [0, 4] or None", lambda v: v is None or whole_number(0, 4)(v)),
    Setting("private_method", f"one of {', '.join(PRIVATE_METHODS)}", lambda v: v in PRIVATE_METHODS),
    Setting("min_support", "None or a number in (0, 1]",
            lambda v: v is None or (not isinstance(v, bool) and isinstance(v, int | float) and 0 < v <= 1)),
    N_CHAINS,
    N_SAMPLES,  # checked before anything is spent (the estimate built at the end checks it again)
    # dpmm's run is charged before it starts: a timeout of -1 or NaN would spend the budget on a run that fails at once
    Setting("synthetic_timeout", "a positive finite number of seconds", finite_number(lambda v: v > 0)),
)}


def fit_private_estimator(
    data: pd.DataFrame,
    epsilon: float,
    *,
    domains: Mapping[str, Sequence[object]] | None = None,
    bins: Mapping[str, Sequence[float]] | None = None,
    missing: Sequence[str] | None = None,
    n_chains: int = 1,
    orders: Sequence[Sequence[str]] | None = None,
    structure: str = "parents",
    max_depth: int = MAX_DEPTH,
    max_parents: int | None = None,
    accountant: Accountant | None = None,
    min_support: float | None = None,
    private_method: str = "chain",
    n_samples: int = 100_000,
    random_state: int | np.random.Generator | np.random.RandomState | None = None,
    source: str = "the data",
    categorical_integers: bool | Collection[str] = False,
    synthetic_timeout: float = 3600.0,
) -> PrivateFit:
    """An ε-differentially private density estimate of ``data`` (see the module notes and each method's module).

    Parameters
    ----------
    data : pandas.DataFrame
        The rows (discrete columns, or numeric ones binned by ``bins``).
    epsilon : float
        The whole budget, split equally over the releasing trees.
    domains, bins : mapping, optional
        The public categories / bin edges of the columns; columns left out have their
        categories read off the data (then the estimate is not private).
    missing : list of str, optional
        The columns whose public domain has the missing value (no item; module notes,
        *Missing values*). A missing value in another declared column is a
        :class:`~dprm.errors.DataError` before anything is spent.
    n_chains : int, default 1
        Chains of the ensemble, 1 to :data:`~dprm.itemsets.parameters.MAX_CHAINS` (100; ignored
        when ``orders`` is given, at most as many orders).
    orders : list of list of str, optional
        The chains' variable orders; default: random permutations.
    structure : {"parents", "dp-trees"}
        How each conditional is released (module notes): a table over parents chosen
        by the exponential mechanism (the default), or a DP decision tree.
    max_depth : int, default :data:`~dprm.itemsets.private_dp_trees.MAX_DEPTH`
        Maximum depth of the DP trees (``structure="dp-trees"``).
    max_parents : int, optional
        Most parents of a variable (``structure="parents"``); default
        :data:`~dprm.itemsets.private_chain.COMPRESSED_MAX_PARENTS` (3) over compressed domains,
        :data:`~dprm.itemsets.private_parents.MAX_PARENTS` (2) otherwise.
    accountant : Accountant, optional
        Charged for the fit (must afford ``epsilon``); a new one otherwise, with secure
        noise, or seeded noise when ``random_state`` is given.
    min_support : float, optional
        The threshold ``θ`` the estimate will be mined at (public). With
        ``private_method="frequent-items"``, :data:`~dprm.itemsets.private_items.ITEM_SHARE` of ``epsilon`` releases
        every column's one-way histogram, the categories that cannot reach ``θ`` are merged
        per column, and the chain is released over those compressed domains
        (:mod:`dprm.itemsets.private_items`); the estimate still covers every category.
    private_method : {"chain", "frequent-items", "mst", "aim", "basis", "auto"}
        See :data:`PRIVATE_METHODS`; ``"auto"`` (``min_support``) returns ``bases`` or an estimator;
        ``"frequent-items"`` needs ``min_support`` and
        ``structure="parents"``; ``"basis"`` needs ``min_support`` and returns ``bases``
        (:mod:`dprm.itemsets.private_basis`); ``"mst"`` / ``"aim"`` release a synthetic table with
        dpmm's MST / AIM in its own environment (:mod:`dprm.itemsets.private_synthetic`:
        (ε, δ)-DP, δ = 1e-9), returned as ``synthetic`` for FP-growth to mine.
    n_samples : int
        The estimate's reference sample size, 1 to :data:`~dprm.itemsets.parameters.MAX_SAMPLES`
        (see :class:`~dprm.itemsets.estimator.DensityEstimator`).
    random_state : int, numpy.random.Generator or numpy.random.RandomState, optional
        Seeds the noise, the orders and the reference samples: reproducible and **not private**.
        A RandomState gives one seed drawn from it (:func:`dprm.params.as_seed`; it is
        advanced), and the fit is that seed's; a Generator is drawn from.
    source : str
        Names the data in messages.
    categorical_integers : bool or collection of str
        Read an undeclared column of few integer codes (or the columns named) as categorical
        (:func:`~dprm.itemsets.domains.infer_domains`; its categories are then read
        off the data, so the estimate is not private).
    synthetic_timeout : float
        Seconds dpmm may run (``"mst"`` / ``"aim"``); past them the fit fails, its budget spent.

    Returns
    -------
    PrivateFit

    Raises
    ------
    ParameterError
        A bad ε, depth, number of chains, reference sample size or ``synthetic_timeout``, a numeric
        column without bins, an accountant that cannot afford ε (all before anything is spent).
    DataError
        A value outside a declared domain, no rows (before anything is spent).
    """
    check_settings(SETTINGS, locals(), skip=() if orders is None else ("n_chains",))
    method = _resolve_method(private_method, min_support, structure)
    eps = as_epsilon(epsilon)
    check_epsilon_range(eps)  # the command line's range, before anything is read or spent
    if isinstance(random_state, np.random.RandomState):  # scikit-learn's: one seed drawn from it (advancing it)
        random_state = as_seed(random_state)
    if method == "basis":
        return fit_basis(data, eps, min_support, domains, bins, accountant, random_state, source, categorical_integers,
                         missing=missing)
    if method in SYNTHETIC_METHODS:
        return fit_synthetic(data, eps, method, domains, bins, accountant, n_samples, random_state, source,
                             categorical_integers, synthetic_timeout, missing)
    return fit_chain(data, eps, method, domains=domains, bins=bins, missing=missing, n_chains=n_chains, orders=orders,
                     structure=structure, max_depth=max_depth, max_parents=max_parents, accountant=accountant,
                     min_support=min_support, n_samples=n_samples, random_state=random_state, source=source,
                     categorical_integers=categorical_integers)


def _resolve_method(private_method: str, min_support: float | None, structure: str) -> str:
    """``private_method``, checked against ``min_support`` and ``structure`` (see :data:`PRIVATE_METHODS`)."""
    if private_method == "frequent-items" and (min_support is None or structure != "parents"):
        raise ParameterError('private_method="frequent-items" needs min_support and structure="parents"')
    if private_method in ("basis", "auto") and min_support is None:
        raise ParameterError(f'private_method="{private_method}" needs min_support')
    return private_method
