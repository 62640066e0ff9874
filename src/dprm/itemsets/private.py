"""A differentially private density estimate: chains of conditionals fitted in batch from DP releases.

The estimate of :mod:`dprm.itemsets.estimator` is made of exact counts of the rows,
and t-closeness (:mod:`dprm.itemsets.closeness`) is a syntactic property of it, not a
privacy guarantee. :func:`fit_private_estimator` builds the same kind of estimate — an
ensemble of classifier chains, one tree per variable predicting it from the variables
before it — from differentially private releases only, so that the estimate, every
density it gives and every itemset ISON mines from it are ε-DP by post-processing.

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
releases one by one, so that they add up to ``ε``.

From released trees to the estimate (post-processing)
-----------------------------------------------------
With ``"dp-trees"``, a released tree becomes a
:class:`~dprm.itemsets.tree_model.ConditionalTree`: the multiway split's children for
the public categories are kept (the tree's child for missing values too when the
feature's domain has the missing value, as the branch of that state; otherwise it is
dropped, the data having none), nodes the DP tree pruned on their noisy row count become leaves, and
every node's counts are its noisy counts (a leaf's as released, an inner node's the
sum of its leaves') made non-negative with their own total
(:func:`~dprm.itemsets.private_parents.nonnegative_counts`: the Euclidean projection,
"norm-sub", instead of the tree's clipping, which keeps every positive noise draw of
an empty category and so takes mass from the frequent ones). A first variable's
histogram, and every table of ``"parents"``, is made non-negative the same way. Edge
weights are the children's totals. The number of rows is private: the estimate's
``n_seen_`` is 0, and no count that is not noisy enters it.

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

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError
from dprm.itemsets.chain import Chain, chain_orders
from dprm.itemsets.domains import VariableDomain, encode_frame, infer_domains
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.parameters import RANDOM_STATE, Setting, check_settings, whole_number
from dprm.itemsets import private_basis
from dprm.itemsets.private_basis import BASIS_MAX_NOISE, BasisRelease, pair_noise, release_bases
from dprm.itemsets.private_items import ITEM_SHARE, MAX_EXPANDED_CELLS, ItemSelection, release_items
from dprm.itemsets.private_synthetic import (DEFAULT_DELTA, SEEDED_SYNTHETIC_REASON, SYNTHETIC_METHODS,
                                            release_synthetic)
from dprm.itemsets.private_parents import (MAX_CELLS, MAX_PARENTS, SELECT_SHARE, next_candidates,
                                          nonnegative_counts, release_conditional)
from dprm.itemsets.tree_model import ConditionalTree
from dprm.params import as_seed
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SecureNoise, SeededNoise, as_epsilon
from dprm.privacy.accountant import SEEDED_PROPOSALS_REASON, check_accountant, combine_guarantees
from dprm.privacy.budget import SMALLEST_EPSILON, check_epsilon_range

__all__ = ["PrivateFit", "fit_private_estimator", "released_tree", "COMPRESSED_MAX_CELLS", "COMPRESSED_MAX_PARENTS",
           "MAX_DEPTH", "PRIVATE_METHODS", "STRUCTURES"]

#: Default depth of the DP trees: the budget halves from level to level
#: (:data:`dprm.classifier.parameters.LEVEL_DECAY`), so deeper levels add little but noise.
MAX_DEPTH = 2
#: How a conditional is released (``fit_private_estimator(structure=)``).
STRUCTURES = ("parents", "dp-trees")
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
#: (:func:`~dprm.itemsets.private_basis.pair_noise`, read off the items' release:
#: post-processing) is at most ``BASIS_MAX_NOISE`` of ``θ·n̂``, the chain over the declared
#: domains with the rest of ε otherwise (``docs/itemsets.md``, seventh and eighth rounds).
PRIVATE_METHODS = ("chain", "frequent-items", "mst", "aim", "basis", "auto")
#: Most parents of a variable, and most cells of a table, over compressed domains.
COMPRESSED_MAX_PARENTS = 3
COMPRESSED_MAX_CELLS = 64
#: The ledger's description of one variable's release, by structure.
MECHANISMS = {"parents": "exponential-mechanism choice of (variable, parents) + table histogram",
              "dp-trees": "dp-tree (histogram or exponential-mechanism splits + leaf histogram)"}
#: Reason given when a column's categories are read off the data.
DOMAIN_REASON = "categories of some columns read off the data (declare them: types file or domains=)"


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
    Setting("n_chains", "an integer in [1, 100]", whole_number(1, 100)),
)}


@dataclass
class PrivateFit:
    """What :func:`fit_private_estimator` returns.

    Attributes
    ----------
    estimator : DensityEstimator or None
        The private estimate (frozen, built from released trees; ``n_seen_`` is 0);
        None with ``private_method="basis"``, which releases supports, not a model.
    privacy : dict
        ``{"epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"}``;
        the ledger lists every release (step names prefixed by chain and tree).
    parameters : dict
        The settings used (chains, orders, maximum depth, ε per tree).
    synthetic : pandas.DataFrame or None
        With ``private_method="mst"`` / ``"aim"``: the released synthetic rows (values as
        the declared categories' text), which FP-growth mines; the estimator is then the
        batch estimate of these rows (post-processing).
    bases : BasisRelease or None
        With ``private_method="basis"``: the released bases
        (:class:`~dprm.itemsets.private_basis.BasisRelease`; ``bases.named_itemsets()``
        lists the itemsets at ``min_support`` with their supports' noise).
    """

    estimator: DensityEstimator | None
    privacy: dict[str, Any]
    parameters: dict[str, Any] = field(default_factory=dict)
    synthetic: pd.DataFrame | None = None
    bases: BasisRelease | None = None


def _conditional_tree(fitted: Any, feature_columns: Sequence[int], n_categories: Sequence[int],
                              target: int, class_columns: Sequence[int] | None = None) -> ConditionalTree:
    """The ConditionalTree of a released :class:`~dprm.classifier.FittedTree` (see the module notes).

    ``class_columns``: for each of the target's codes, its column among the tree's class
    counts (the classifier's ``classes_`` are sorted); the same order by default.
    """
    noisy = np.asarray(fitted.noisy_counts, dtype=np.float64)
    if class_columns is not None:
        noisy = noisy[:, list(class_columns)]
    feature: list[int] = []
    child_offset: list[int] = []
    n_children: list[int] = []
    child: list[int] = []
    counts: list[np.ndarray] = []
    order = [0]  # released node numbers, in the new numbering
    k = 0
    while k < len(order):
        node = order[k]
        f = int(fitted.feature[node])
        counts.append(nonnegative_counts(noisy[node]))
        if f < 0:
            feature.append(-1)
            child_offset.append(0)
            n_children.append(0)
        else:
            # the public states: the categories, and the missing value's child (the tree's last) where the
            # domain has it; otherwise that child is dropped
            width = int(n_categories[f])
            start = int(fitted.child_start[node])
            feature.append(int(feature_columns[f]))
            child_offset.append(len(child))
            n_children.append(width)
            for j in range(width):
                child.append(len(order))
                order.append(int(fitted.children[start + j]))
        k += 1
    return ConditionalTree.from_arrays(target=target, feature=feature, child_offset=child_offset,
                                       n_children=n_children, child=child, counts=np.array(counts))


def released_tree(classifier: Any, feature_columns: Sequence[int], variables: Sequence[VariableDomain],
                  target: int, target_categories: Sequence[str] | None = None) -> ConditionalTree:
    """The :class:`ConditionalTree` of a fitted multiway :class:`~dprm.classifier.DPDecisionTreeClassifier`.

    Parameters
    ----------
    classifier : DPDecisionTreeClassifier
        Fitted with ``categorical_splits="multiway"`` and ``leaf_labels="noisy-counts"``.
    feature_columns : sequence of int
        The estimator's column index of each of the classifier's features.
    variables : sequence of VariableDomain
        The domains of the classifier's features (their categories in code order; a
        domain with the missing value keeps the tree's child for missing values).
    target : int
        The estimator's column index of the classifier's target.
    target_categories : sequence of str, optional
        The target's classes in code order (its categories, then the label the missing
        value was fitted as, if any), when they may differ from the classifier's (sorted)
        ``classes_``.
    """
    columns = None
    if target_categories is not None:
        where = {label: k for k, label in enumerate(classifier.classes_.tolist())}
        columns = [where[label] for label in target_categories]
    return _conditional_tree(classifier.tree_, feature_columns, [v.size for v in variables], target, columns)


def _charge(accountant: Accountant, budget: Fraction, step: str, mechanism: str) -> Accountant:
    """Charge ``budget`` to ``accountant`` under ``step``; the release's own accountant of ``budget``."""
    sub = Accountant(budget, accountant.noise)
    accountant.charge(budget, step, mechanism)
    return sub


def _record(sub: Accountant, budget: Fraction, step: str, prefix: str, ledger: list[dict[str, Any]],
            guarantees: list[str], *, inner: bool = False) -> None:
    """Check that a release spent its whole ``budget``; add its ledger entries (``PREFIX: ...``) and guarantees.

    With ``inner``, an entry's own step name is cut to what follows its first ``": "``.
    """
    if sub.spent() != budget:  # a release spends its whole share (a DP tree's leaves take what its levels leave)
        raise RuntimeError(f"{step}: spent {sub.spent()} of {budget}")  # pragma: no cover - invariant
    guarantees.extend(entry.guarantee for entry in sub.ledger)
    ledger.extend({"step": f"{prefix}: {entry.step.partition(': ')[2] if inner else entry.step}",
                   "mechanism": entry.mechanism, "epsilon": float(entry.epsilon)} for entry in sub.ledger)


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
        sub = _charge(accountant, per_variable, name, MECHANISMS["parents"])
        candidates = next_candidates(released, remaining, sizes, choose_order=choose_order, max_parents=max_parents,
                                     max_cells=max_cells, rng=rng)
        if selection is not None:  # public: the declared sizes and the released selection
            candidates = [(x, p) for x, p in candidates
                          if not p or selection.expanded_cells(x, p) <= MAX_EXPANDED_CELLS]
        release = release_conditional(codes, candidates, sizes, per_variable, sub, "table", dependences)
        _record(sub, per_variable, name, f"{name} ({columns[release.target]})", ledger, guarantees, inner=True)
        trees.append(release.tree if selection is None
                     else selection.expand(release.target, release.parents, release.counts))
        released.append(release.target)
        remaining.remove(release.target)
    trees += [ConditionalTree.single_leaf(j, [1.0]) if selection is None else selection.single_leaf(j)
              for j in order if sizes[j] < 2]
    return Chain(tuple(t.target for t in trees), tuple(trees))


def _dp_trees_chain(codes: np.ndarray, order: Sequence[int], variables: Mapping[str, VariableDomain],
                    per_tree: Fraction, accountant: Accountant, step: str, *, max_depth: int, seeded: bool,
                    ledger: list[dict[str, Any]], guarantees: list[str], rng: np.random.Generator,
                    reasons: list[str]) -> Chain:
    """One chain of ``structure="dp-trees"``: a histogram for its first variable, a DP tree for every later one.

    Before each release, ``per_tree`` is charged to ``accountant`` under ``STEP, tree
    K (COLUMN)``; the release spends exactly that. Constant variables (one category)
    are single leaves without a release. With ``seeded``, each DP tree's seed is drawn
    from ``rng``: with a given accountant of secure noise, a tree grown by MCMC then has
    known proposals, and its reason (``SEEDED_PROPOSALS_REASON``) is added to ``reasons``.
    """
    from dprm.classifier import DPDecisionTreeClassifier

    columns = list(variables)
    sizes = [variables[c].size for c in columns]
    trees = []
    for i, j in enumerate(order):
        name = columns[j]
        if sizes[j] < 2:
            trees.append(ConditionalTree.single_leaf(j, [1.0]))
            continue
        tree_step = f"{step}, tree {i + 1} ({name})"
        sub = _charge(accountant, per_tree, tree_step, MECHANISMS["dp-trees"])
        earlier = [f for f in order[:i] if sizes[f] >= 2]
        if not earlier:
            counts = np.bincount(codes[:, j], minlength=sizes[j])
            noisy = DiscreteLaplaceHistogram(per_tree).release(sub, "histogram", counts)
            trees.append(ConditionalTree.single_leaf(j, nonnegative_counts(noisy)))
        else:
            X = pd.DataFrame({columns[f]: variables[columns[f]].texts(codes[:, f]) for f in earlier})  # NaN: missing
            classes = _classes(variables[name])
            classifier = DPDecisionTreeClassifier(
                epsilon=per_tree, max_depth=max_depth, embedding_depth=1, search="auto",
                categorical_splits="multiway", leaf_labels="noisy-counts", variant="dprm",
                categories={columns[f]: list(variables[columns[f]].categories) for f in earlier},
                classes=classes, accountant=sub,
                random_state=int(rng.integers(2**31)) if seeded else None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # seeded noise: said in the privacy block
                classifier.fit(X, np.asarray(classes, dtype=object)[codes[:, j]])
            if SEEDED_PROPOSALS_REASON in classifier.privacy_reasons_ and SEEDED_PROPOSALS_REASON not in reasons:
                reasons.append(SEEDED_PROPOSALS_REASON)
            trees.append(released_tree(classifier, earlier, [variables[columns[f]] for f in earlier], j,
                                       target_categories=classes))
        _record(sub, per_tree, tree_step, tree_step, ledger, guarantees)
    return Chain(tuple(order), tuple(trees))


def _classes(domain: VariableDomain) -> list[str]:
    """A DP tree's classes for a target column: its categories, and a label of their own for the missing value.

    The label is public (it depends on the declared categories only) and is none of them.

    Examples
    --------
    >>> _classes(VariableDomain("a", ("x", "(missing)"), missing=True))
    ['x', '(missing)', "(missing)'"]
    """
    classes = list(domain.categories)
    if domain.missing:
        label = "(missing)"
        while label in classes:
            label += "'"
        classes.append(label)
    return classes


def _fit_accountant(accountant: Accountant | None, eps: Fraction, seeded: bool, rng: np.random.Generator
                    ) -> Accountant:
    """``accountant``, checked to afford ``eps``; else a new one (seeded noise drawn from ``rng`` if ``seeded``)."""
    check_accountant(accountant)
    if accountant is None:
        noise = SeededNoise(np.random.default_rng(rng.integers(2**63))) if seeded else SecureNoise()
        accountant = Accountant(eps, noise)
    if not accountant.can_afford(eps):
        raise ParameterError(f"the accountant's remaining budget {float(accountant.remaining()):g} "
                             f"does not cover epsilon {float(eps):g}")
    return accountant


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
    categorical_integers: bool = False,
    synthetic_timeout: float = 3600.0,
) -> PrivateFit:
    """An ε-differentially private density estimate of ``data`` (see the module notes).

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
        Chains of the ensemble (ignored when ``orders`` is given).
    orders : list of list of str, optional
        The chains' variable orders; default: random permutations.
    structure : {"parents", "dp-trees"}
        How each conditional is released (module notes): a table over parents chosen
        by the exponential mechanism (the default), or a DP decision tree.
    max_depth : int, default :data:`MAX_DEPTH`
        Maximum depth of the DP trees (``structure="dp-trees"``).
    max_parents : int, optional
        Most parents of a variable (``structure="parents"``); default
        :data:`COMPRESSED_MAX_PARENTS` (3) over compressed domains,
        :data:`~dprm.itemsets.private_parents.MAX_PARENTS` (2) otherwise.
    accountant : Accountant, optional
        Charged for the fit (must afford ``epsilon``); a new one otherwise, with secure
        noise, or seeded noise when ``random_state`` is given.
    min_support : float, optional
        The threshold ``θ`` the estimate will be mined at (public). With
        ``private_method="frequent-items"``, :data:`ITEM_SHARE` of ``epsilon`` releases
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
        The estimate's reference sample size (see :class:`DensityEstimator`).
    random_state : int, numpy.random.Generator or numpy.random.RandomState, optional
        Seeds the noise, the orders and the reference samples: reproducible and **not private**.
        A RandomState gives one seed drawn from it (:func:`dprm.params.as_seed`; it is
        advanced), and the fit is that seed's; a Generator is drawn from.
    source : str
        Names the data in messages.
    categorical_integers : bool
        Read an undeclared column of few integer codes as categorical
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
        A bad ε, depth or number of chains, a numeric column without bins, an
        accountant that cannot afford ε (all before anything is spent).
    DataError
        A value outside a declared domain, no rows (before anything is spent).
    """
    check_settings(SETTINGS, locals(), skip=() if orders is None else ("n_chains",))
    method = _resolve_method(private_method, min_support, structure)
    if max_parents is None:
        max_parents = COMPRESSED_MAX_PARENTS if method == "frequent-items" else MAX_PARENTS
    eps = as_epsilon(epsilon)
    check_epsilon_range(eps)  # the command line's range, before anything is read or spent
    if isinstance(random_state, np.random.RandomState):  # scikit-learn's: one seed drawn from it (advancing it)
        random_state = as_seed(random_state)
    if method == "basis":
        return _basis_fit(data, eps, min_support, domains, bins, accountant, random_state, source, categorical_integers,
                          missing=missing)
    if method in SYNTHETIC_METHODS:
        return _synthetic_fit(data, eps, method, domains, bins, accountant, n_samples, random_state, source,
                              categorical_integers, synthetic_timeout, missing)
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
    accountant = _fit_accountant(accountant, eps, random_state is not None, rng)
    since = len(accountant.ledger)
    ledger: list[dict[str, Any]] = []
    guarantees: list[str] = []
    selection, auto_noise, chain_eps, items_scale = _items_first(method, codes, sizes, eps, min_support, accountant,
                                                                 columns, ledger, guarantees, since,
                                                                 [variables[c].n_items for c in columns])
    if auto_noise is not None and auto_noise <= BASIS_MAX_NOISE:  # "auto": the bases follow the items
        return _basis_fit(data, eps, min_support, domains, bins, accountant, random_state, source,
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
            chains.append(_dp_trees_chain(codes, order, variables, per_tree, accountant, f"chain {c + 1}",
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
                  **({"auto_choice": "chain", "pair_noise": auto_noise} if auto_noise is not None else {})}
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
    noise (:func:`~dprm.itemsets.private_basis.pair_noise`, post-processing of the items)
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
        noise = pair_noise(selection, sizes, eps, float(min_support or 0))
        chosen = selection if noise <= BASIS_MAX_NOISE else None  # the chain: over the declared domains
        return chosen, noise, eps - items_eps, selection.scale
    sub = _charge(accountant, items_eps, "items", "one-way histograms (discrete Laplace), one per column")
    selection = release_items(codes, sizes, items_eps, float(min_support or 0), sub, columns, n_items)
    _record(sub, items_eps, "items", "items", ledger, guarantees, inner=True)
    return selection, None, eps - items_eps, selection.scale


def _synthetic_fit(data: pd.DataFrame, eps: Fraction, method: str, domains: Mapping[str, Sequence[object]] | None,
                   bins: Mapping[str, Sequence[float]] | None, accountant: Accountant | None, n_samples: int,
                   random_state: int | None, source: str, categorical_integers: bool, timeout: float,
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
    accountant = _fit_accountant(accountant, eps, random_state is not None, rng)
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


def _basis_fit(data: pd.DataFrame, eps: Fraction, min_support: float | None, domains: Mapping[str, Sequence[object]] | None,
               bins: Mapping[str, Sequence[float]] | None, accountant: Accountant | None, random_state: int | None,
               source: str, categorical_integers: bool, prepared: tuple[Any, ...] | None = None,
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
        accountant = _fit_accountant(accountant, eps, random_state is not None, np.random.default_rng(random_state))
        since, selection, noise = len(accountant.ledger), None, None
    else:
        variables, codes, since, selection, noise = prepared
    columns = list(variables)
    reasons = [DOMAIN_REASON] if any(c not in declared for c in columns) else []
    min_support = float(min_support or 0)  # checked by _resolve_method
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


def _resolve_method(private_method: str, min_support: float | None, structure: str) -> str:
    """``private_method``, checked against ``min_support`` and ``structure`` (see :data:`PRIVATE_METHODS`)."""
    if private_method == "frequent-items" and (min_support is None or structure != "parents"):
        raise ParameterError('private_method="frequent-items" needs min_support and structure="parents"')
    if private_method in ("basis", "auto") and min_support is None:
        raise ParameterError(f'private_method="{private_method}" needs min_support')
    return private_method


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
