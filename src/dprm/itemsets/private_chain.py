"""The chain estimate's private fit: one release per variable of each chain, ε split evenly over them.

:func:`~dprm.itemsets.private.fit_private_estimator` hands ``private_method="chain"``,
``"frequent-items"`` and ``"auto"`` to :func:`fit_chain`, which builds the estimate — an
ensemble of classifier chains, one conditional per variable predicting it from the
variables before it — from differentially private releases only. ``"frequent-items"``
and ``"auto"`` first release the items (:func:`_items_first`, which derives their share
of ε); ``"auto"`` may then release the bases instead of the chain
(:func:`~dprm.itemsets.private_basis_fit.fit_basis`).

The releases (``structure=``)
-----------------------------
A variable with a single public category needs no release (its distribution is 1);
every other variable ``X`` of a chain gets one release of ``ε_var`` (below):

``"parents"`` (the default; :mod:`dprm.itemsets.private_parents`)
    PrivBayes's network as a chain: each release draws, by the exponential mechanism
    (30 % of ``ε_var``), the chain's next variable *and* at most
    :data:`~dprm.itemsets.private_parents.MAX_PARENTS` parents among the variables
    already released, scored by how much dependence the table captures (``n·R``,
    sensitivity 3) minus the noise its extra cells bring; then the table of ``X``
    given its parents by a discrete Laplace histogram (the other 70 %). The chain's
    first variable is drawn at random, independently of the data, and released as a
    histogram with all of ``ε_var``. The order is thus chosen privately too (with
    ``orders=`` given, only the parents are chosen). The table becomes an oblivious
    tree (every node of a level tests the same parent).
``"dp-trees"`` (the design of the first version)
    The chain's order drawn at random; the first variable's histogram; every later
    variable a :class:`~dprm.classifier.DPDecisionTreeClassifier` on the variables before
    it, multiway splits on their public categories, the structure drawn level by level
    by the exponential mechanism, the leaves' class counts released by a discrete
    Laplace histogram (``leaf_labels="noisy-counts"``; its module docstring derives
    the split of the tree's budget between its levels and its leaves).

Why ``"parents"`` is the default: a classifier tree's split score is the number of
rows its majority labels get right, blind to a split that changes a distribution
without changing its majority (most of mushroom's near-constant attributes), while
``n·R`` sees any dependence; choosing the order lets each variable follow what it
depends on. With a large budget the chain models mushroom far better (ISON's TPR at
θ = 0.3, ε = 1000: 0.79 with two parents against 0.82 for DP trees of depth 2 and
0.61 for two parents on a random order), and at ε = 0.3 – 3 on mushroom, vote,
tic-tac-toe and IBM-like data its TPR is within the seeds' spread of the DP trees'
with a lower FPR (``docs/itemsets.md``, ``benchmarks/quality_itemsets_private.py``).

Budget split (sequential composition over releases and chains)
--------------------------------------------------------------
Every release reads all rows, so the releases compose sequentially: with ``K`` chains
and ``m'`` variables of at least two categories, there are ``R = K · m'`` releases
and each gets ``ε_var = ε / R``, the same for every variable, fixed before any row is
read (the domains are public; which variable a release of ``"parents"`` turns out to
be is part of its output, not of its cost). Neighbouring datasets (one row added or
removed) change each release's output distribution by at most ``e^{ε_var}`` (given
the earlier outputs), so the whole estimate by at most ``e^{R · ε_var} = e^ε``. (A
partition of the rows between the chains would allow parallel composition, ``ε / m'``
per release on ``n / K`` rows each: every count's noise is then as large relative to
its chain's rows, and averaging ``K`` chains cuts it by only ``√K``, so one chain on all
rows, the default, is better.)

Each release's budget is charged to the shared :class:`~dprm.privacy.Accountant`
under one step (``chain 1, variable 2`` or ``chain 1, tree 2 (odor)``) before it reads
a row; it then spends exactly that budget on its own ledger (the choice and the
counts, or the tree's levels and leaves), and the output's ledger lists those
releases one by one, so that they add up to ``ε``. With ``"frequent-items"`` and
``"auto"``, the items' one-way histograms are released first with their share of ε
(:data:`~dprm.itemsets.private_items.ITEM_SHARE`, or
:func:`~dprm.itemsets.private_basis.item_share` for ``"auto"``), and the ``R`` releases
split the rest (:func:`_items_first`); the unspent rest, when no column is left to
release, is charged as such so that the ledger still adds up to ``ε``.

From released conditionals to the estimate (post-processing)
------------------------------------------------------------
A first variable's histogram, and every table of ``"parents"``, is made non-negative
with its own total (:func:`~dprm.itemsets.private_parents.nonnegative_counts`: the
Euclidean projection, "norm-sub"), as a released DP tree's nodes are
(:mod:`dprm.itemsets.private_dp_trees`, which turns a released tree into a conditional).
The number of rows is private: the estimate's ``n_seen_`` is 0, and no count that is not
noisy enters it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError
from dprm.itemsets.chain import Chain, chain_orders
from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets import private_basis
from dprm.itemsets.private_basis_fit import fit_basis
from dprm.itemsets.private_basis_pairs import BASIS_MAX_NOISE
from dprm.itemsets.private_dp_trees import MECHANISM as DP_TREES_MECHANISM
from dprm.itemsets.private_dp_trees import dp_trees_chain
from dprm.itemsets.private_fit import DOMAIN_REASON, PrivateFit, charge, fit_accountant, record
from dprm.itemsets.private_items import ITEM_SHARE, MAX_EXPANDED_CELLS, ItemSelection, release_items
from dprm.itemsets.private_parents import (MAX_CELLS, MAX_PARENTS, SELECT_SHARE, draws_subset, next_candidates,
                                          release_conditional)
from dprm.itemsets.tree_model import ConditionalTree
from dprm.privacy import Accountant
from dprm.privacy.accountant import combine_guarantees
from dprm.privacy.budget import SMALLEST_EPSILON

__all__ = ["fit_chain", "STRUCTURES", "COMPRESSED_MAX_PARENTS", "COMPRESSED_MAX_CELLS", "MECHANISMS"]

#: How a conditional is released (``fit_private_estimator(structure=)``).
STRUCTURES = ("parents", "dp-trees")
#: Most parents of a variable, and most cells of a table, over compressed domains.
COMPRESSED_MAX_PARENTS = 3
COMPRESSED_MAX_CELLS = 64
#: The ledger's description of one variable's release, by structure.
MECHANISMS = {"parents": "exponential-mechanism choice of (variable, parents) + table histogram",
              "dp-trees": DP_TREES_MECHANISM}


def fit_chain(data: pd.DataFrame, eps: Fraction, method: str, *, domains: Mapping[str, Sequence[object]] | None,
              bins: Mapping[str, Sequence[float]] | None, missing: Sequence[str] | None, n_chains: int,
              orders: Sequence[Sequence[str]] | None, structure: str, max_depth: int, max_parents: int | None,
              accountant: Accountant | None, min_support: float | None, n_samples: int, random_state: int | None,
              source: str, categorical_integers: bool | Collection[str]) -> PrivateFit:
    """``private_method="chain"``, ``"frequent-items"`` or ``"auto"``: the releases of the module notes.

    The parameters are :func:`~dprm.itemsets.private.fit_private_estimator`'s, checked by it
    (``eps`` the budget as a fraction, ``method`` resolved, ``random_state`` an int or a
    Generator). Every release is charged to ``accountant`` (a new one by default) before it
    reads a row; nothing is spent before the data are read and checked. With ``"auto"``,
    when the items' release chooses the bases, the fit is
    :func:`~dprm.itemsets.private_basis_fit.fit_basis`'s.
    """
    if max_parents is None:
        max_parents = COMPRESSED_MAX_PARENTS if method == "frequent-items" else MAX_PARENTS
    declared = set(domains or {}) | set(bins or {})
    if len(data) == 0 and any(str(c) not in declared for c in data.columns):
        # No rows is a dataset like any other when every domain is declared: the release
        # is then noise only (refusing it would tell n = 0 from n = 1 with certainty).
        # With a domain read off the data the fit is not private, and no rows leave
        # nothing to read.
        raise DataError(f"{source}: no data rows to read the undeclared domains off", code="no_rows", file=source)
    variables = infer_domains(data, domains, bins, source=source, categorical_integers=categorical_integers,
                              missing=missing)
    codes = encode_frame(data, variables, source=source)  # checks every value before anything is spent
    columns = list(variables)
    reasons = [DOMAIN_REASON] if any(c not in declared for c in columns) else []
    rng = np.random.default_rng(random_state)
    chains_order = chain_orders(columns, orders, n_chains, rng)
    sizes = [variables[c].size for c in columns]
    if structure == "dp-trees":
        _check_tree_budget(eps, method, chains_order, sizes)
    accountant = fit_accountant(accountant, eps, random_state is not None, rng)
    since = len(accountant.ledger)
    ledger: list[dict[str, Any]] = []
    guarantees: list[str] = []
    selection, auto_noise, chain_eps, items_scale = _items_first(method, codes, sizes, eps, min_support, accountant,
                                                                 columns, ledger, guarantees, since,
                                                                 [variables[c].n_items for c in columns])
    if auto_noise is not None and auto_noise <= BASIS_MAX_NOISE:  # "auto": the bases follow the items
        return fit_basis(data, eps, min_support, domains, bins, accountant, random_state, source,
                         categorical_integers, prepared=(variables, codes, since, selection, auto_noise))
    if selection is not None:  # "frequent-items": the chain over the compressed domains
        codes, sizes = selection.compress(codes), selection.sizes
    releasing = sum(1 for order in chains_order for j in order if sizes[j] >= 2)
    per_tree = chain_eps / releasing if releasing else Fraction(0)
    chains = []
    for c, order in enumerate(chains_order):
        if structure == "parents":
            chains.append(_parents_chain(codes, order, sizes, per_tree, accountant, f"chain {c + 1}",
                                         choose_order=orders is None, max_parents=max_parents, columns=columns,
                                         ledger=ledger, guarantees=guarantees, rng=rng, selection=selection))
        else:
            chains.append(dp_trees_chain(codes, order, variables, per_tree, accountant, f"chain {c + 1}",
                                         max_depth=max_depth, seeded=random_state is not None, ledger=ledger,
                                         guarantees=guarantees, rng=rng, reasons=reasons))
    if releasing == 0 and chain_eps < eps and chain_eps > 0:  # after the items ("frequent-items", "auto")
        accountant.charge(chain_eps, "unspent (no column left to release)", "none")  # the ledger adds up to ε
        ledger.append({"step": "unspent (no column left to release)", "mechanism": "none",
                       "epsilon": float(chain_eps)})
    block = accountant.privacy_block(guarantee=combine_guarantees(guarantees) if guarantees else None,
                                     reasons=reasons, since=since)
    block["ledger"] = ledger
    estimator = DensityEstimator.from_trees(variables, chains, n_seen=0, n_samples=n_samples,
                                            random_state=None if random_state is None else int(rng.integers(2**63)))
    parameters = {"epsilon": float(eps), "chains": len(chains_order), "private_method": method,
                  "orders": [[columns[j] for j in chain.order] for chain in chains], "structure": structure,
                  "max_depth": int(max_depth), "max_parents": int(max_parents), "epsilon_per_tree": float(per_tree),
                  "releasing_trees": releasing,
                  "noise": _noise_summary(items_scale, per_tree, releasing if structure == "parents" else 0),
                  **({"auto_choice": "chain", "pair_noise": auto_noise if math.isfinite(auto_noise) else None}
                     if auto_noise is not None else {})}
    if selection is not None:
        parameters["items"] = {c: [variables[c].categories[int(k)] for k in selection.kept[j]]
                               for j, c in enumerate(columns)}
    return PrivateFit(estimator, block, parameters)


def _items_first(method: str, codes: np.ndarray, sizes: list[int], eps: Fraction, min_support: float | None,
                 accountant: Accountant, columns: list[str], ledger: list[dict[str, Any]], guarantees: list[str],
                 since: int, n_items: list[int] | None = None
                 ) -> tuple[ItemSelection | None, float | None, Fraction, float | None]:
    """The items' release of ``"frequent-items"`` (``ITEM_SHARE`` of ``eps``) and ``"auto"`` (``item_share()``).

    Returns the selection (None for ``"auto"``'s chain), for ``"auto"`` the predicted pair
    noise (:func:`~dprm.itemsets.private_basis.basis_noise`, post-processing of the items)
    that chooses the branch (the bases at most ``BASIS_MAX_NOISE``, the chain otherwise:
    adaptive sequential composition), the chain's budget (``eps`` less the items') and the
    items' noise scale (None when no item is released), which ``"auto"``'s chain reports too.
    ``"auto"`` charges the items to ``accountant`` itself, as ``"basis"`` does, and adds
    their entries to ``ledger`` (used by the chain). ``n_items``: each column's number of
    categories (the missing value, a state past them, is never a kept item).
    """
    if method not in ("frequent-items", "auto"):
        return None, None, eps, None
    items_eps = eps * (private_basis.item_share() if method == "auto" else ITEM_SHARE)  # as the bases expect
    if method == "auto":
        selection = release_items(codes, sizes, items_eps, float(min_support or 0), accountant, columns, n_items)
        ledger.extend(accountant.privacy_block(since=since)["ledger"])
        guarantees.extend(entry.guarantee for entry in accountant.ledger[since:])
        noise = private_basis.basis_noise(selection, sizes, eps, float(min_support or 0))
        chosen = selection if noise <= BASIS_MAX_NOISE else None  # the chain: over the declared domains
        return chosen, noise, eps - items_eps, selection.scale
    sub = charge(accountant, items_eps, "items", "one-way histograms (discrete Laplace), one per column")
    selection = release_items(codes, sizes, items_eps, float(min_support or 0), sub, columns, n_items)
    record(sub, items_eps, "items", "items", ledger, guarantees, inner=True)
    return selection, None, eps - items_eps, selection.scale


def _parents_chain(codes: np.ndarray, order: Sequence[int], sizes: Sequence[int], per_variable: Fraction,
                   accountant: Accountant, step: str, *, choose_order: bool, max_parents: int,
                   columns: Sequence[str], ledger: list[dict[str, Any]], guarantees: list[str],
                   rng: np.random.Generator, selection: ItemSelection | None = None) -> Chain:
    """One chain of ``structure="parents"`` (:mod:`dprm.itemsets.private_parents`).

    Before each release, ``per_variable`` is charged to ``accountant`` under
    ``STEP, variable K``; the release spends exactly that (its choice and its counts,
    listed in the ledger). Constant variables (one category) go last, as single leaves.
    ``rng`` draws the public subset of candidates of a wide table
    (:data:`~dprm.itemsets.private_parents.MAX_CANDIDATES`). With ``selection``
    (:mod:`dprm.itemsets.private_items`), ``codes`` and ``sizes`` are the compressed
    ones, tables have at most :data:`COMPRESSED_MAX_CELLS` cells (and
    :data:`~dprm.itemsets.private_items.MAX_EXPANDED_CELLS` over the declared
    categories), and each released table is expanded to the declared categories.
    """
    remaining = [j for j in order if sizes[j] >= 2]
    released: list[int] = []
    trees = []
    dependences: dict[tuple[int, tuple[int, ...]], float] = {}
    max_cells = MAX_CELLS if selection is None else COMPRESSED_MAX_CELLS
    while remaining:
        name = f"{step}, variable {len(released) + 1}"
        sub = charge(accountant, per_variable, name, MECHANISMS["parents"])
        candidates = next_candidates(released, remaining, sizes, choose_order=choose_order, max_parents=max_parents,
                                     max_cells=max_cells, rng=rng)
        if selection is not None:  # public: the declared sizes and the released selection
            candidates = [(x, p) for x, p in candidates
                          if not p or selection.expanded_cells(x, p) <= MAX_EXPANDED_CELLS]
        # a random subset's candidates seldom come back (14 % on 500 columns): remembering them all cost more
        # than scoring the few again (millions of dictionary entries); a complete list's mostly do
        subset = draws_subset(len(released), len(remaining), choose_order=choose_order, max_parents=max_parents)
        release = release_conditional(codes, candidates, sizes, per_variable, sub, "table",
                                      None if subset else dependences)
        record(sub, per_variable, name, f"{name} ({columns[release.target]})", ledger, guarantees, inner=True)
        trees.append(release.tree if selection is None
                     else selection.expand(release.target, release.parents, release.counts))
        released.append(release.target)
        remaining.remove(release.target)
    trees += [ConditionalTree.single_leaf(j, [1.0]) if selection is None else selection.single_leaf(j)
              for j in order if sizes[j] < 2]
    return Chain(tuple(t.target for t in trees), tuple(trees))



def _noise_summary(items_scale: float | None, per_tree: Fraction, releasing: int) -> dict[str, float | None]:
    """The noise scales (rows, discrete Laplace) of the fit's counts, for the user to see.

    ``items``: each one-way histogram's cells (``items_scale``, None when none was released);
    ``tables``: each released table's cells
    (``structure="parents"``: its counts get ``1 − SELECT_SHARE`` of a release's budget
    when the release also chooses, all of it otherwise; the larger scale is given; None
    for the DP trees, whose levels and leaves split a release's budget unevenly, and
    when no table is released).
    """
    tables = None if not releasing else float(1 / (per_tree * (1 - SELECT_SHARE)))
    return {"items": items_scale, "tables": tables}



def _check_tree_budget(eps: Fraction, method: str, orders: Sequence[Sequence[int]], sizes: Sequence[int]) -> None:
    """Refuse, before anything is spent, an ``eps`` that leaves a DP tree of ``structure="dp-trees"`` less than
    the least ε a tree takes (:data:`~dprm.privacy.budget.SMALLEST_EPSILON`).

    The chain's budget is ``eps`` less the items' share of ``"auto"``, split evenly over the
    trees that release (a column of one category releases nothing); public: ``eps``, the
    chains and the domains' sizes.
    """
    releasing = sum(1 for order in orders for j in order if sizes[j] >= 2)
    share = 1 - private_basis.item_share() if method == "auto" else Fraction(1)
    if releasing and eps * share / releasing < SMALLEST_EPSILON:
        least = SMALLEST_EPSILON * releasing / share
        raise ParameterError(f"epsilon = {float(eps):g} leaves each of the {releasing} DP trees of "
                             f"structure='dp-trees' {float(eps * share / releasing):.3g}, below the least a tree "
                             f"takes ({float(SMALLEST_EPSILON):g}): use epsilon >= {float(least):.3g}, fewer chains "
                             f"or structure='parents'")
