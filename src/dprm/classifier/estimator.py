"""``DPDecisionTreeClassifier``: a differentially private decision tree (Bai et al. 2017).

Algorithm (the paper's Algorithm 1)
-----------------------------------
The tree of depth at most ``max_depth = D`` is grown in *computations*: each grows
the subtree of depth at most ``embedding_depth = d`` below every open node with one
exponential-mechanism release over all such subtrees (:mod:`dprm.classifier.subtree_search`,
exact or by MCMC). ``d = 1`` is the one-step algorithm of Friedman & Schuster; ``d = D``
embeds the whole tree in one computation (the paper counts layers of nodes, so its
"whole tree" ``d + 1 = D`` is ``d = max_depth`` here, with the same ``ε/2`` split).

Budget (parallel composition over disjoint branches)
----------------------------------------------------
A branch meets at most ``k = ⌈D/d⌉`` computations. All nodes grown by the ``j``-th
computation have disjoint rows, so one release covers them all (charged once,
``ε_j``): one row more or less changes the candidates' scores of one node only. A
fit costs at most ε: a computation that no branch reaches (every node above it
stayed a leaf) is not run and not charged; with noisy-count leaves its share goes
to the leaves instead.

* ``variant="paper"``: the paper's Algorithm 1. Every computation and the leaves
  get ``ε / (k + 1)``; the score is the paper's Gini quality (2) with sensitivity 2
  (``exp(ε' q / 4)``); each computation chooses among complete subtrees (a node
  stops only where no feature is left), exhaustively (the exact draw) or by MCMC;
  categorical features split multiway; the leaves' class counts are released as one
  histogram over disjoint cells (discrete Laplace, L1 sensitivity 1) and each leaf
  predicts its noisy majority. The paper's other stopping rules (fewer rows than a
  threshold, a pure node) read exact counts, which is not differentially private:
  dprm applies ``min_samples_split`` to the *noisy* counts instead (below).
  ``Σ_j ε_j + ε_leaves = ε`` along a branch.
* ``variant="dprm"`` (default) differs where the paper is weak:

  - the leaves' labels are part of the candidates (``leaf_labels="joint"``): the
    score of a labelled subtree is the number of rows its labels get right
    (:mod:`dprm.classifier.subtree_search`), whose change between neighbours lies in
    ``[0, 1]`` for every candidate, so the release is ``exp(ε_j score)``: a quarter
    of the paper's temperature, and no separate leaf budget (each computation gets
    ``ε / k``). ``leaf_labels="noisy-counts"`` keeps a leaf release with
    ``LEAF_SHARE`` of ε and the majority score with a leaf cost;
  - nodes may stay leaves, under a prior (``LEAF_PRIOR``) that keeps the tree small
    where the data cannot tell splits apart;
  - the budget halves from one computation to the next (``LEVEL_DECAY``): the first
    splits decide most of the accuracy, and at small ε equal shares leave every
    computation too little to tell good splits from bad (vote at ε = 0.1, one-step,
    10-fold CV × 2: 0.62 with equal shares, 0.82 halving);
  - categorical features are tested one category against the others (the feature
    may be tested again below), which keeps leaves large.

Small budgets (dprm's defaults)
-------------------------------
With ``embedding_depth="auto"`` and ``leaf_labels="auto"`` (``variant="dprm"``) the
fit first releases the row count with ``COUNT_SHARE`` of ε (discrete Laplace, L1
sensitivity 1), then a public rule of ``ε − ε_rows``, the noisy count, the classes
and the schema (:func:`~dprm.classifier.small_budget.prefers_root_split`) chooses
the whole tree above (with ``ε − ε_rows``) or one multiway root split whose feature
and children's labels are drawn jointly by one exponential-mechanism release with
``ε − ε_rows`` (:func:`~dprm.classifier.small_budget.chosen_split_tree`). Sequential composition of the count
and the chosen release: ε on every path (:mod:`dprm.classifier.small_budget`).

Prediction
----------
``leaf_labels="joint"``: each leaf predicts its released label (``predict_proba`` is
that label's indicator). ``"noisy-counts"`` (post-processing, free): an inner node's
noisy counts are the sums of its leaves' noisy counts; an inner node whose noisy
row count is below ``min_samples_split`` (``"auto"``: the standard deviation
``√(2C)/ε_leaves`` of one leaf's noisy row count) becomes a leaf, and each node's
class probabilities are its clipped noisy counts shrunk towards its parent's with
that many pseudo-rows.

A value outside a feature's *declared* categories is an error at prediction as at
fitting (a ``ValueError`` naming the column and the value; scikit-learn's encoders'
``handle_unknown="error"``): the declaration says which values exist. Where the
categories were read off the training data (the fit is then not private), a category
the training rows did not hold goes, at a test ``a = v``, to the branch of the other
categories (it is not ``v``), and at a multiway split, which has no branch for it, to
the branch of missing values (as scikit-learn's histogram gradient boosting maps
unknown categories to missing). Numbers outside their bounds are refused by ``fit``
and clipped into them at prediction (they fall into the first or last bin).

What is private
---------------
Everything released (the structure, the labels or noisy counts) comes from the mechanisms
above, charged to an :class:`~dprm.privacy.Accountant` before any noise is drawn.
The guarantee is ``pure-dp; floating-point selection`` for exact draws and
``pure-dp-on-mcmc-convergence`` with MCMC (``; data-dependent stop`` with the paper's
variance stop), with ``; floating-point selection`` as well where the leaves' labels are
joint (drawn in the chain's release, given its structure, by float64 Gumbel keys). It is ``none``, with reasons, when ``random_state`` is given (the noise
is then seeded, and so are the MCMC chains' proposals: with a given ``accountant`` of
secure noise an MCMC fit is ``none`` as well, with a warning, where exact draws take
all their randomness from the accountant), and with reasons and a warning when
feature domains or classes are read off the data instead of declared.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from dprm.classifier.encoding import CATEGORICAL, FeatureEncoding, check_labels, encode, learn_domains
from dprm.classifier.fitted_tree import FittedTree
from dprm.classifier.small_budget import (
    COUNT_SHARE,
    chosen_split_tree,
    prefers_root_split,
    root_options,
)
from dprm.classifier.parameters import (
    AUTO_EXACT_WORK,
    LEAF_COST,
    LEAF_PRIOR,
    LEAF_SHARE,
    LEVEL_DECAY,
    MAX_EXACT_WORK,
    MAX_NODES,
    PARAMETERS,
    STEPS_PER_LEVEL,
    KeywordParam,
    checked_parameters,
)
from dprm.classifier.subtree_mcmc import CHANGE_SHARE, mcmc_subtree
from dprm.classifier.subtree_search import GrowNode, SubtreeSpace, exact_subtree, exact_work
from dprm.errors import ParameterError, short_repr
from dprm.params import as_seed
from dprm.privacy import (
    Accountant,
    DiscreteLaplaceCount,
    DiscreteLaplaceHistogram,
    MetropolisChain,
    MetropolisHastings,
    SecureNoise,
    SeededNoise,
    StructuredDraw,
    StructuredExponentialMechanism,
)
from dprm.privacy.accountant import SEEDED_PROPOSALS_REASON, check_affordable, combine_guarantees

__all__ = ["DPDecisionTreeClassifier"]


class DPDecisionTreeClassifier(ClassifierMixin, BaseEstimator):
    """Differentially private decision tree with embedding depths (Bai et al. 2017).

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy budget of the fit; with a given ``accountant`` it is charged there
        (whose remaining budget must cover it).
    max_depth : int or "auto", default "auto"
        Levels of splits at most (root at depth 0). ``"auto"``: 8 for
        ``variant="dprm"`` (the whole-tree release chooses its size below it), 5 for
        ``"paper"`` (:func:`~dprm.classifier.parameters.auto_max_depth`).
    embedding_depth : int or "auto", default "auto"
        Levels grown by one private computation; ``max_depth`` grows the whole tree
        in one. ``"auto"``: the whole tree for ``variant="dprm"``, 1 for ``"paper"``
        (:func:`~dprm.classifier.parameters.auto_embedding_depth`). With dprm's
        defaults (``"auto"`` here and for ``leaf_labels``) a noisy row count
        (``COUNT_SHARE`` of ε) and a public rule choose between that tree (with the
        rest of ε) and, where ``ε · n̂`` cannot pay for several splits, one multiway
        root split and its children's labels drawn by one exponential-mechanism release
        (:mod:`dprm.classifier.small_budget`).
    search : {"auto", "exhaustive", "mcmc"}, default "auto"
        Exact draw over all subtrees (refused when its work bound exceeds
        ``MAX_EXACT_WORK``), Metropolis–Hastings, or exact when the bound is at most
        ``AUTO_EXACT_WORK``.
    mcmc_steps : int, optional
        Steps of each MCMC chain (default ``STEPS_PER_LEVEL`` per level of the
        subtree).
    mcmc_stop : {"fixed", "variance"}, default "fixed"
        ``"variance"``: also stop once the variance of the last ``mcmc_buffer`` scores
        is at most ``mcmc_threshold`` (the paper; a data-dependent stop, which the
        guarantee says).
    min_samples_split : "auto" or float, default "auto"
        With ``leaf_labels="noisy-counts"``: an inner node whose noisy row count is
        below this becomes a leaf (module docstring).
    bounds : dict or list, optional
        Public ``(low, high)`` of numeric features, by name (DataFrames) or position.
    categories : dict or list, optional
        Public categories of categorical features.
    classes : sequence, optional
        Public class labels (``classes_`` holds them sorted, as scikit-learn's estimators
        do, in the target's type: ``[False, True]`` on a 0/1 target gives ``[0, 1]``, so
        predictions are of ``y``'s type); read off ``y`` otherwise (then not private).
    n_thresholds : int, default 16
        Candidate thresholds per numeric feature, evenly inside its bounds.
    categorical_splits : {"auto", "multiway", "binary", "both"}, default "auto"
        Split a categorical feature into all its categories (the paper), or test one
        category against the others, or offer both kinds of split (a two-category
        feature's one test is its multiway split); ``"auto"``: multiway for
        ``variant="paper"``, binary for ``"dprm"``.
    leaf_labels : {"auto", "joint", "noisy-counts"}, default "auto"
        Draw the leaves' labels in the structure's release, or release noisy class
        counts of the leaves; ``"auto"``: joint for ``"dprm"``, noisy counts for
        ``"paper"``.
    variant : {"dprm", "paper"}, default "dprm"
        The paper's budget split, score and complete subtrees, or dprm's
        (module docstring).
    accountant : Accountant, optional
        Charged for the fit (its remaining budget must cover ``epsilon``); a new one
        with ``epsilon`` otherwise.
    random_state : int, numpy.random.Generator or numpy.random.RandomState, optional
        Seed of reproducible (not private) noise and MCMC proposals; ``None``: secure
        noise. A Generator or a (scikit-learn's) RandomState gives one integer seed
        drawn from it at each fit (the object is advanced by that draw), and the fit is
        then that seed's, labelled as any seeded fit. With a given ``accountant`` it
        still seeds the chains' proposals, so an MCMC fit is labelled not private
        (``guarantee_`` ``"none"``).

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input only)
    domains_ : list of FeatureEncoding
    tree_ : FittedTree
    ledger_ : list of dict
    privacy_spent_ : float
    guarantee_ : str
    private_ : bool
    privacy_reasons_ : list of str
    search_ : str
        The search actually used ("exhaustive" or "mcmc"; "exhaustive" for the chosen split).
    embedding_depth_ : int
        The embedding depth actually used.
    max_depth_ : int
        The maximum depth used.
    release_ : str
        ``"tree"``, or ``"chosen split"`` where the small-budget rule chose it.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice(["a", "b", "c"], size=(600, 3)).astype(object)
    >>> y = np.where(X[:, 0] == "a", "yes", "no")
    >>> clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=2, random_state=0,
    ...     categories=[["a", "b", "c"]] * 3, classes=["no", "yes"]).fit(X, y)
    >>> round(clf.score(X, y), 2)
    1.0
    >>> clf.privacy_spent_, clf.guarantee_, clf.release_
    (1.0, 'none', 'tree')
    >>> [entry["step"] for entry in clf.ledger_]
    ['rows', 'structure#1']
    """

    #: name → :class:`~dprm.params.KeywordParam` of every ``__init__`` parameter.
    parameter_specs: ClassVar[dict[str, KeywordParam]] = PARAMETERS

    def __init__(
        self,
        epsilon: float = 1.0,
        max_depth: int | str = "auto",
        embedding_depth: int | str = "auto",
        search: str = "auto",
        mcmc_steps: int | None = None,
        mcmc_stop: str = "fixed",
        min_samples_split: str | float = "auto",
        bounds: Mapping[Any, tuple[float, float]] | Sequence[Any] | None = None,
        categories: Mapping[Any, Sequence[Any]] | Sequence[Any] | None = None,
        classes: Sequence[Any] | None = None,
        n_thresholds: int = 16,
        categorical_splits: str = "auto",
        leaf_labels: str = "auto",
        variant: str = "dprm",
        accountant: Accountant | None = None,
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
    ) -> None:
        values = locals()
        for name in self.parameter_specs:  # stored as given (scikit-learn), checked by fit
            setattr(self, name, values[name])

    def __sklearn_tags__(self):  # noqa: D105 - scikit-learn protocol
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.non_deterministic = self.random_state is None
        return tags

    # -- parameters -------------------------------------------------------------------
    def _checked_parameters(self) -> dict[str, Any]:
        """Every parameter validated from :data:`~dprm.classifier.parameters.PARAMETERS`."""
        return checked_parameters({name: getattr(self, name) for name in self.parameter_specs})

    # -- fitting --------------------------------------------------------------------
    def _checked_data(self, X: Any, y: Any, params: dict[str, Any]) -> tuple[
            np.ndarray, list[FeatureEncoding], list[str], np.ndarray, np.ndarray, np.ndarray]:
        """``X`` and ``y`` checked and encoded, nothing spent: what ``fit`` reads before its first charge.

        Sets ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame), as
        scikit-learn's ``validate_data`` does. :class:`~dprm.classifier.ensemble.DPTreeEnsembleClassifier`
        calls it on every part before any part is fitted, so that a bad row in a later
        part is refused before the first part is charged.

        Returns
        -------
        X, domains, reasons, codes, classes, y_index
            The rows as an array, the columns' domains, why the fit is not private (so
            far), the rows' codes, the classes and each row's class index.
        """
        _check_target_complete(y)
        _check_target_kinds(y)
        # No rows is a dataset like any other when classes and domains are declared: the
        # release is then noise only, and refusing it would tell n = 0 from n = 1 (a
        # certain event on one of two neighbouring datasets). With anything read off the
        # data the fit is not private anyway and scikit-learn's rule holds: at least a row.
        may_be_empty = self.classes is not None
        if getattr(X, "ndim", None) == 2 and X.shape[1] == 0:  # a DataFrame: "at least one array or dtype ..."
            raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required: "
                             f"X has no feature column, and a tree needs one to split on")  # scikit-learn's words
        _check_column_names(X)
        _check_not_complex(X)
        _check_no_dates(X)
        dtype_categories = _dtype_categories(X)
        y = plain_target(y)
        try:
            X, y = validate_data(self, _plain_frame(X), y, dtype=None, ensure_all_finite=False,
                                 ensure_min_samples=0 if may_be_empty else 1)
        except ValueError as error:  # a list of rows that numpy reads as complex: scikit-learn's message shows them all
            _complex_refusal(error, X)
            raise
        if len(y):
            check_classification_targets(y)
        X = np.asarray(X, dtype=object) if X.dtype.kind not in "fiub" else np.asarray(X, dtype=np.float64)
        names = (
            [str(n) for n in self.feature_names_in_]
            if hasattr(self, "feature_names_in_")
            else [f"x{i}" for i in range(X.shape[1])]
        )
        _check_no_complex_values(X, names)
        _check_hashable_values(X, names)
        domains, reasons = learn_domains(
            X, names, categories=self.categories, bounds=self.bounds, n_thresholds=params["n_thresholds"],
            dtype_categories=dtype_categories,
        )
        if X.shape[0] == 0 and reasons:
            raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while the domains of "
                             f"{len(reasons)} column(s) are read off the data: declare them to fit on no rows")
        codes = encode(X, domains, strict=True)
        classes, y_index, class_reasons = self._classes(y)
        reasons += class_reasons
        return X, domains, reasons, codes, classes, y_index

    def fit(self, X: Any, y: Any) -> DPDecisionTreeClassifier:
        """Grow the private tree on ``X``, ``y`` and release it.

        Raises
        ------
        ValueError
            Bad parameters, a column name that occurs twice, a column of complex numbers,
            non-finite features, a value outside its declared domain, a target with fewer
            than two classes (all before any budget is spent).
        """
        params = self._checked_parameters()
        return self._fit_checked(params, self._checked_data(X, y, params))

    def _fit_checked(self, params: dict[str, Any], checked: tuple) -> DPDecisionTreeClassifier:
        """:meth:`fit` of the parameters and data already checked (:meth:`_checked_parameters`,
        :meth:`_checked_data`): the ensemble checks every part first, then fits each once."""
        X, domains, reasons, codes, classes, y_index = checked
        D, d = params["max_depth"], params["d"]
        search = self._search(domains, d)
        self._check_size(domains, D)
        # A Generator or RandomState gives one seed drawn from it (advanced), and the fit is that seed's.
        seed = as_seed(self.random_state)
        if self.accountant is not None:
            accountant = self.accountant
        else:
            noise = SecureNoise() if seed is None else SeededNoise(np.random.default_rng(seed))
            accountant = Accountant(params["epsilon"], noise)
        since = len(accountant.ledger)
        check_affordable(accountant, params["epsilon"])  # a BudgetExceededError and a ParameterError
        for reason in reasons:
            warnings.warn(f"DPDecisionTreeClassifier: not private: {reason}", UserWarning, stacklevel=3)
        rng = np.random.default_rng(seed)
        epsilon, release = params["epsilon"], "tree"
        if self._small_budget_rule():
            epsilon, release = self._choose_release(accountant, codes.shape[0], len(classes), domains, epsilon)
        if release == "tree" and search == "mcmc" and seed is not None and accountant.noise.secure:
            # The chains' proposals come from random_state (the accountant draws only the
            # acceptances): a chain whose proposals are known is not the mechanism whose
            # convergence the label claims, so a given accountant's secure noise does not
            # make the fit private. (Exact draws take all their randomness from the accountant.)
            reasons.append(SEEDED_PROPOSALS_REASON)
            warnings.warn(f"DPDecisionTreeClassifier: not private: {SEEDED_PROPOSALS_REASON}", UserWarning,
                          stacklevel=3)
        if release == "chosen split":
            tree = self._chosen_split(codes, y_index, len(classes), domains, accountant, epsilon)
            search, d = "exhaustive", 1
        else:
            tree = self._grow(codes, y_index, classes, domains, params, accountant, rng, epsilon, search)
        self.classes_ = classes
        self.domains_ = domains
        self.tree_ = tree
        self.search_ = search
        self.embedding_depth_ = d
        self.max_depth_ = D
        self.release_ = release
        block = accountant.privacy_block(reasons=reasons, since=since)
        self.ledger_ = block["ledger"]
        self.privacy_spent_ = block["epsilon"]
        self.guarantee_ = block["guarantee"]
        self.private_ = block["private"]
        self.privacy_reasons_ = block["reasons"]
        return self

    def _small_budget_rule(self) -> bool:
        """Whether the release is chosen by the small-budget rule (:mod:`dprm.classifier.small_budget`).

        Only for dprm's defaults (``embedding_depth="auto"``, ``leaf_labels="auto"``);
        explicit settings and ``variant="paper"`` keep their releases.
        """
        return self.variant == "dprm" and self.embedding_depth == "auto" and self.leaf_labels == "auto"

    def _choose_release(self, accountant: Accountant, n_rows: int, n_classes: int,
                        domains: Sequence[FeatureEncoding], epsilon: Fraction) -> tuple[Fraction, str]:
        """Release the noisy row count (``COUNT_SHARE`` of ε) and apply the public rule.

        Returns the budget left for the model (``ε − ε_rows``: sequential composition)
        and the release the rule chose from ``n̂``, the classes and the schema.
        """
        rows = DiscreteLaplaceCount(epsilon * COUNT_SHARE)  # L1 sensitivity 1: one row moves n by 1
        n_hat = rows.release(accountant, "rows", int(n_rows))
        rest = epsilon - rows.epsilon
        options = root_options(domains, self._categorical_splits())
        return rest, "chosen split" if prefers_root_split(float(rest), n_hat, n_classes, options, LEAF_PRIOR) else "tree"

    def _chosen_split(self, codes: np.ndarray, y_index: np.ndarray, n_classes: int,
                      domains: Sequence[FeatureEncoding], accountant: Accountant, epsilon: Fraction) -> FittedTree:
        """The root split and its children's labels in one release with ``epsilon`` (:func:`chosen_split_tree`)."""
        # score = training rows the labels get right: every change between neighbours in [0, 1]
        # (one row lands in one child of every candidate), so sensitivity 1, range 1: exp(ε score)
        draw = StructuredExponentialMechanism(epsilon, 1, 1).start(accountant, "split")
        root = chosen_split_tree(codes, y_index, n_classes, domains, draw)
        nodes = root.nodes()
        tree = FittedTree(nodes, {id(node): i for i, node in enumerate(nodes)})
        tree.set_labels(np.array([nodes[i].label for i in tree.leaves]), n_classes)
        return tree

    def _grow(self, codes: np.ndarray, y_index: np.ndarray, classes: np.ndarray,
              domains: Sequence[FeatureEncoding], params: Mapping[str, Any], accountant: Accountant,
              rng: np.random.Generator, epsilon: Fraction, search: str) -> FittedTree:
        """Grow the tree in computations of depth ``d`` with ``epsilon`` (module docstring) and release it."""
        D, d = params["max_depth"], params["d"]
        k = -(-D // d)
        joint = self._leaf_labels() == "joint"
        histogram = None
        if joint:
            structure_total = epsilon
        elif self.variant == "paper":
            structure_total = epsilon * k / (k + 1)
            histogram = DiscreteLaplaceHistogram(epsilon / (k + 1))
        else:
            histogram = DiscreteLaplaceHistogram(epsilon * LEAF_SHARE)
            structure_total = epsilon * (1 - LEAF_SHARE)
        # computation j's share: equal (the paper), or halving with each computation
        decay = Fraction(1) if self.variant == "paper" else LEVEL_DECAY
        weights = [decay**j for j in range(k)]
        structure_epsilons = [structure_total * w / sum(weights) for w in weights]
        if self.variant == "paper":
            space_kwargs: dict[str, Any] = {"score": "gini", "allow_leaves": False}
        else:
            space_kwargs = {
                "score": "majority",
                "allow_leaves": True,
                "leaf_prior": LEAF_PRIOR,
                "joint_labels": joint,
                "leaf_cost": 0.0 if joint else LEAF_COST * histogram.scale,
            }
        sensitivity, score_range = (2, 4) if self.variant == "paper" else (1, 1)
        space = SubtreeSpace(
            codes, y_index, len(classes), domains, categorical_splits=self._categorical_splits(), **space_kwargs
        )
        spent_before = accountant.spent()
        row_type = np.int32 if codes.shape[0] < 2**31 else np.int64
        root = GrowNode(rows=np.arange(codes.shape[0], dtype=row_type), depth=0)
        frontier = [root]
        for j in range(k):
            frontier = [node for node in frontier if not node.final and node.depth < D]
            if not frontier:
                break
            depth = min(d, D - j * d)
            step = f"structure#{j + 1}"
            parts = len(frontier)
            if search == "exhaustive":
                mechanism = StructuredExponentialMechanism(structure_epsilons[j], sensitivity, score_range)
                draw = mechanism.start(accountant, step, parts=parts)
                space.eta = draw.eta
                space._empty.clear()
                for node in frontier:
                    exact_subtree(space, node, depth, draw)
                label_draw = draw
            else:
                chain_mechanism = MetropolisHastings(
                    structure_epsilons[j], sensitivity, score_range, data_dependent_stop=self.mcmc_stop == "variance"
                )
                if joint:
                    # The joint labels are drawn in this release too, given the chain's structure, by
                    # float64 Gumbel keys on each leaf's class counts (StructuredDraw): a floating-point
                    # selection on the rows, which the label names. (A node without rows is drawn by them
                    # as well, from a data-independent target: nothing of the rows to leak.)
                    chain_mechanism.guarantee = combine_guarantees(
                        [chain_mechanism.guarantee, StructuredExponentialMechanism.guarantee])
                name = chain_mechanism.name if parts == 1 else f"{chain_mechanism.name}, parallel over {parts} disjoint parts"
                chain_mechanism.charge(accountant, step, name)
                chain = MetropolisChain(accountant.noise, chain_mechanism.scale)
                # the chain compares log-weights already scaled by eta (<= 1/scale)
                exact_draw = StructuredDraw(accountant.noise, chain.scale)
                space.eta = exact_draw.eta
                space._empty.clear()
                steps = params["steps"] or STEPS_PER_LEVEL * depth
                buffer = max(10, steps // 20) if self.mcmc_stop == "variance" else None
                # A node without rows has a data-independent target whose exact draw is
                # cheap (:func:`exact_subtree`); it is the chain's limit, so nothing changes
                # in what the release may depend on, and no chain runs for nothing.
                for node in frontier:
                    if node.rows.size == 0:
                        exact_subtree(space, node, depth, exact_draw)
                    else:
                        mcmc_subtree(space, node, depth, chain, rng, steps, buffer=buffer,
                                     change_share=0.0 if self.variant == "paper" else CHANGE_SHARE)
                label_draw = exact_draw
            if joint:
                # the labels of the leaves this computation closes, drawn from their
                # conditional in the same release (given the structure)
                for node in frontier:
                    for u in node.nodes():
                        if u.option is None and (u.final or u.depth >= D):
                            u.label = space.draw_label(u, label_draw)
            frontier = [u for node in frontier for u in node.nodes() if u.option is None]
        nodes = root.nodes()
        index = {id(node): i for i, node in enumerate(nodes)}
        tree = FittedTree(nodes, index)
        if histogram is not None and accountant.spent() - spent_before < epsilon - histogram.epsilon:
            # No branch reached the computations not run: the leaves may use their
            # budget too (every branch spent at most what was charged so far).
            histogram = DiscreteLaplaceHistogram(epsilon - (accountant.spent() - spent_before))
        if histogram is None:
            tree.set_labels(np.array([nodes[i].label for i in tree.leaves]), len(classes))
        else:
            exact_counts = np.stack([space.counts(nodes[i].rows) for i in tree.leaves])
            noisy = histogram.release(accountant, "leaves", exact_counts)
            # the standard deviation of a node's noisy row count from one leaf's noise
            noise_sd = math.sqrt(2.0 * len(classes)) * histogram.scale
            min_rows = noise_sd if self.min_samples_split == "auto" else float(self.min_samples_split)
            tree.set_counts(noisy, min_rows, prior_weight=noise_sd)
        return tree

    def _classes(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
        if self.classes is None:
            present = classes_of_target(y)
            return present, np.searchsorted(present, y), ["classes read off the data (declare classes)"]
        labels = check_labels(self.classes, "classes")
        if len(labels) < 2:
            raise ParameterError(f"classes must hold at least two labels, not {len(labels)}")
        if len({isinstance(label, str) for label in labels}) > 1:
            shown = short_repr(tuple(label.item() if isinstance(label, np.generic) else label for label in labels))
            raise ParameterError(f"classes must be labels of one kind (all text or all numbers), not {shown}")
        text_labels = isinstance(labels[0], str)
        text_target = y.dtype.kind in "US" or (y.dtype.kind == "O" and any(isinstance(v, str) for v in y.tolist()))
        if y.size and text_target != text_labels:  # else numpy fails comparing them, deep in a sort
            raise ParameterError(f"the target's labels are {'text' if text_target else 'numbers'} but the declared "
                                 f"classes are {'text' if text_labels else 'numbers'}: declare them as the target "
                                 f"writes them")
        if y.size and not text_labels:
            labels = _labels_as_target_writes(labels, y)
        # sorted, as scikit-learn's classes_: its scorers (roc_auc, log_loss) read predict_proba's columns so
        classes = np.sort(np.asarray(labels), kind="stable")
        if classes.ndim != 1 or np.unique(classes).size != classes.size:
            raise ParameterError("classes must be distinct labels of one kind (all text or all numbers)")
        position = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
        found = classes[position] == y
        if not np.all(found):
            label = y[~found][0]
            shown = short_repr(label.item() if isinstance(label, np.generic) else label)  # 'yes', not np.str_('yes')
            raise ParameterError(f"the target holds a label outside the declared classes: {shown}")
        return classes, position, []

    def _leaf_labels(self) -> str:
        if self.leaf_labels != "auto":
            return self.leaf_labels
        return "noisy-counts" if self.variant == "paper" else "joint"

    def _categorical_splits(self) -> str:
        if self.categorical_splits != "auto":
            return self.categorical_splits
        return "multiway" if self.variant == "paper" else "binary"

    def _search(self, domains: Sequence[FeatureEncoding], d: int) -> str:
        work = exact_work(domains, d, self._categorical_splits())
        if self.search == "exhaustive":
            if work > MAX_EXACT_WORK:
                raise ParameterError(
                    f"an exhaustive search of depth {d} over this schema visits about {work:.3g} nodes "
                    f"(more than {MAX_EXACT_WORK:,}); use search='mcmc' or a smaller embedding_depth"
                )
            return "exhaustive"
        if self.search == "mcmc":
            return "mcmc"
        return "exhaustive" if work <= AUTO_EXACT_WORK else "mcmc"

    def _check_size(self, domains: Sequence[FeatureEncoding], max_depth: int) -> None:
        if self.variant != "paper":
            return
        widest = max((d.n_codes + 1 if d.kind == CATEGORICAL else 3) for d in domains)
        if float(widest) ** max_depth > MAX_NODES:
            raise ParameterError(
                f"variant='paper' grows complete trees: up to {widest}^{max_depth} leaves here "
                f"(more than {MAX_NODES:,}); use a smaller max_depth or variant='dprm'"
            )

    # -- prediction -------------------------------------------------------------------
    def _end_nodes(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "tree_")
        _check_column_names(X)
        names = [domain.name for domain in self.domains_]
        _check_not_complex(X, names)
        _check_no_dates(X, names)
        try:
            X = validate_data(self, _plain_frame(X), dtype=None, ensure_all_finite=False, reset=False)
        except ValueError as error:
            _complex_refusal(error, X, names)
            raise
        X = np.asarray(X, dtype=object) if X.dtype.kind not in "fiub" else np.asarray(X, dtype=np.float64)
        _check_no_complex_values(X, names)
        _check_hashable_values(X, names)
        codes = encode(X, self.domains_, strict=False)
        return self.tree_.apply(codes, self.domains_)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of the node each row ends at (:meth:`FittedTree.set_counts`).

        Raises
        ------
        ValueError
            A value outside its feature's declared categories (naming the column and
            the value), a non-finite or complex number, a column name that occurs twice,
            or columns other than the fit's.
        """
        nodes = self._end_nodes(X)
        return self.tree_.proba[nodes].copy()

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class at the node each row ends at.

        Raises
        ------
        ValueError
            As :meth:`predict_proba`.
        """
        nodes = self._end_nodes(X)
        return self.classes_[np.argmax(self.tree_.proba[nodes], axis=1)]


def classes_of_target(y: np.ndarray) -> np.ndarray:
    """The classes read off the target ``y`` (sorted, as scikit-learn's ``classes_``); at least two.

    Examples
    --------
    >>> classes_of_target(np.array(["b", "a", "b"]))
    array(['a', 'b'], dtype='<U1')
    >>> classes_of_target(np.array([0, 0]))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: the target has only one class (0); a classifier needs at least two classes
    """
    present = np.unique(y)
    if present.size == 0:
        raise ParameterError("the target has no labels; a classifier needs at least two classes")
    if present.size < 2:
        label = present[0].item() if isinstance(present[0], np.generic) else present[0]
        raise ParameterError(f"the target has only one class ({label!r}); a classifier needs at least two classes")
    return present


def _is_boolean(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _labels_as_target_writes(labels: Sequence[Any], y: np.ndarray) -> Sequence[Any]:
    """Declared number or Boolean ``labels`` written as the target ``y`` writes them: ``classes_``'s labels.

    scikit-learn's classifiers predict labels of the target's type (``classes_`` are
    the values of ``y``). Python takes ``True`` for 1, so a 0/1 target fits with
    ``classes=[False, True]`` and a Boolean one with ``classes=[0, 1]``; then the
    labels are converted to the target's kind (the same classes, the same order):
    Booleans for a Boolean target, the target's numbers otherwise. A declared label
    that has no Boolean form (``2`` beside a Boolean target) is refused. Labels of the
    target's own kind are returned as they are.

    Examples
    --------
    >>> np.array(_labels_as_target_writes((False, True), np.array([0.0, 1.0, 1.0])))
    array([0., 1.])
    >>> _labels_as_target_writes((1, 0), np.array([True, False]))
    [True, False]
    >>> _labels_as_target_writes((0, 1, 2), np.array([True, False]))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: the target's labels are Booleans but the declared class 2 is not 0 or 1: declare the classes as the target writes them ([False, True])
    """
    target_boolean = y.dtype.kind == "b" or (y.dtype.kind == "O" and all(_is_boolean(v) for v in y.tolist()))
    labels_boolean = all(_is_boolean(label) for label in labels)
    if target_boolean == labels_boolean:
        return labels
    if labels_boolean:  # a number target: the Booleans as its numbers (False 0, True 1)
        kind = y.dtype.type if y.dtype.kind in "iuf" else int
        return [kind(int(label)) if kind is int else kind(label) for label in labels]
    for label in labels:
        if label not in (0, 1):
            shown = short_repr(label.item() if isinstance(label, np.generic) else label)
            raise ParameterError(f"the target's labels are Booleans but the declared class {shown} is not 0 or 1: "
                                 f"declare the classes as the target writes them ([False, True])")
    return [bool(label) for label in labels]


def plain_target(y: Any) -> Any:
    """A pandas nullable integer or Boolean target (``Int64``, ``UInt8``, ``boolean``) as numpy's
    ``int64``, ``uint8`` or ``bool``; anything else as it is.

    scikit-learn's validation reads such a target as floats (``classes_`` ``[0., 1.]``,
    predictions ``0.0``), as it must where labels may be missing; here every label is
    present (:func:`_check_target_complete` refuses a missing one first), so the labels
    keep the target's own type, as for a numpy integer or Boolean target.

    Examples
    --------
    >>> import pandas as pd
    >>> plain_target(pd.Series([0, 1], dtype="Int64")).dtype, plain_target(pd.array([True], dtype="boolean")).dtype
    (dtype('int64'), dtype('bool'))
    >>> plain_target(pd.Series([0.5], dtype="Float64")).dtype, plain_target([1, 0])
    (Float64Dtype(), [1, 0])
    >>> plain_target(pd.DataFrame({"t": pd.array([1, 0], dtype="Int64")})).dtypes.tolist()
    [dtype('int64')]
    """
    if "pandas" not in sys.modules or not hasattr(y, "dtype") and not hasattr(y, "dtypes"):
        return y
    import pandas as pd

    if isinstance(y, pd.DataFrame):  # a column of one label a row, as scikit-learn takes it (with a warning)
        if y.shape[1] != 1:
            return y
        first = y.iloc[:, 0]
        column = plain_target(first)
        return y if column is first else column.to_frame()
    dtype = y.dtype
    if not (isinstance(y, pd.Series | pd.api.extensions.ExtensionArray) and pd.api.types.is_extension_array_dtype(dtype)
            and (pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))):
        return y
    if bool(pd.isna(y).any()):
        return y  # refused by _check_target_complete, naming the row
    plain = y.to_numpy(dtype=dtype.numpy_dtype)
    return pd.Series(plain, index=y.index, name=y.name) if isinstance(y, pd.Series) else plain


def _dtype_categories(X: Any) -> dict[int, list[Any]]:
    """The categories of each pandas ``category`` column of a DataFrame ``X`` (by position), used or not.

    :func:`_plain_frame` turns such a column into objects, which hold its values only:
    a category no row holds was then no value of the feature's domain (read off the
    data), and a row of it at prediction was an unknown category.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": pd.Categorical(["x"], categories=["x", "z"]), "b": [1.0]})
    >>> _dtype_categories(X), _dtype_categories(X.to_numpy())
    ({0: ['x', 'z']}, {})
    """
    if type(X).__name__ != "DataFrame" or "pandas" not in sys.modules:
        return {}
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        return {}
    return {position: list(dtype.categories) for position, dtype in enumerate(X.dtypes)
            if isinstance(dtype, pd.CategoricalDtype)}


def _plain_frame(X: Any) -> Any:
    """A DataFrame with pandas extension columns (category, string, nullable) as object columns.

    scikit-learn's validation looks for one common dtype and fails on such a mix (a
    category column beside a bool one: "Cannot cast object dtype to float64"); as
    objects, every value keeps its own type and a missing one stays missing. Anything
    else is returned as it is.
    """
    if type(X).__name__ != "DataFrame" or "pandas" not in sys.modules:
        return X
    import pandas as pd  # already imported by whoever made the DataFrame

    if isinstance(X, pd.DataFrame) and any(pd.api.types.is_extension_array_dtype(t) for t in X.dtypes):
        return X.astype(object)
    return X


def _check_column_names(X: Any) -> None:
    """A :class:`ParameterError` naming the first column name of a DataFrame ``X`` that occurs twice.

    scikit-learn takes repeated names as they are (``feature_names_in_`` ``['a', 'a']``), and a
    declaration by name (``categories={"a": ...}``) would then hold for both columns; the data
    loader refuses them in the same words (:func:`dprm.data.reading.check_column_names`).
    Anything but a DataFrame passes.
    """
    if type(X).__name__ != "DataFrame" or "pandas" not in sys.modules:
        return
    first: dict[Any, int] = {}
    for i, name in enumerate(X.columns):
        if name in first:
            shown = short_repr(name.item() if isinstance(name, np.generic) else name)
            raise ParameterError(f"column name {shown} occurs more than once (columns {first[name] + 1} and {i + 1}); "
                                 f"rename one", code="duplicate_column", column=str(name))
        first[name] = i


#: How a message refusing complex numbers begins: scikit-learn's words (its estimator check
#: ``check_complex_data`` looks for them), then the column in the data loader's words.
_COMPLEX = "Complex data not supported: column"
#: What it advises (the data loader's words).
_COMPLEX_REMEDY = "use numbers, text or Booleans"


def _check_not_complex(X: Any, names: Sequence[str] = ()) -> None:
    """A :class:`ParameterError` naming the first column of ``X`` whose type is complex.

    The data loader refuses such columns (``dprm.data``); here a DataFrame's complex
    column became a categorical feature of one category per value, and a complex array
    was refused by scikit-learn in a message that holds the whole array. ``names`` are
    the columns' names where ``X`` has none (the fit's, at prediction; else ``x0``, ``x1``, ...).
    """
    if type(X).__name__ == "DataFrame" and "pandas" in sys.modules:
        import pandas as pd  # already imported by whoever made the DataFrame

        own = all(isinstance(label, str) for label in X.columns)  # else scikit-learn names them by position
        for i, dtype in enumerate(X.dtypes):
            if isinstance(dtype, pd.CategoricalDtype):
                dtype = dtype.categories.dtype
            if getattr(dtype, "kind", "") == "c":
                name = X.columns[i] if own else _column_name(names, i)
                raise ParameterError(f"{_COMPLEX} {name!r} holds values of pandas type {dtype}; {_COMPLEX_REMEDY}",
                                     code="unsupported_column", column=name)
        return
    dtype = getattr(X, "dtype", None)
    if getattr(dtype, "kind", "") != "c":
        return
    column = 0
    if isinstance(X, np.ndarray) and X.ndim == 2:  # the first column with a value off the real line
        off = np.flatnonzero(np.any(X.imag != 0, axis=0))
        column = int(off[0]) if off.size else 0
    name = _column_name(names, column)
    raise ParameterError(f"{_COMPLEX} {name!r} holds values of numpy type {dtype}; {_COMPLEX_REMEDY}",
                         code="unsupported_column", column=name)


def _check_no_dates(X: Any, names: Sequence[str] = ()) -> None:
    """A :class:`ParameterError` naming the first column of ``X`` whose type is a date, a time or a duration.

    Such a column had no kind of its own: alone it became a numeric feature (nanoseconds
    since 1970), beside a text column a categorical one (one category per date), and
    beside a number or Boolean column numpy stopped with ``DTypePromotionError``, naming
    no column. ``names`` as for :func:`_check_not_complex`.

    Examples
    --------
    >>> import pandas as pd
    >>> _check_no_dates(pd.DataFrame({"a": [1.0], "b": ["x"]}))
    >>> _check_no_dates(pd.DataFrame({"a": [1.0], "when": pd.to_datetime(["2020-01-01"])}))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: column 'when' holds values of pandas type datetime64[ns]; use numbers, text or Booleans (.astype(str) makes them categories, .astype('int64') numbers)
    """
    if type(X).__name__ == "DataFrame" and "pandas" in sys.modules:
        import pandas as pd  # already imported by whoever made the DataFrame

        own = all(isinstance(label, str) for label in X.columns)  # else scikit-learn names them by position
        types = [(i, t.categories.dtype if isinstance(t, pd.CategoricalDtype) else t, "pandas")
                 for i, t in enumerate(X.dtypes)]
    else:
        own, dtype = False, getattr(X, "dtype", None)
        types = [(0, dtype, "numpy")] if getattr(dtype, "kind", "") in ("m", "M") else []
    for i, dtype, library in types:
        if getattr(dtype, "kind", "") in ("m", "M"):
            name = X.columns[i] if own else _column_name(names, i)
            raise ParameterError(f"column {name!r} holds values of {library} type {dtype}; {_COMPLEX_REMEDY} "
                                 f"(.astype(str) makes them categories, .astype('int64') numbers)",
                                 code="unsupported_column", column=name)


def _complex_refusal(error: ValueError, X: Any, names: Sequence[str] = ()) -> None:
    """:func:`_check_not_complex` of ``X`` as numpy reads it, where scikit-learn's ``error`` refused complex data."""
    if str(error).startswith("Complex data not supported"):
        _check_not_complex(np.asarray(X), names)


def _check_no_complex_values(X: np.ndarray, names: Sequence[str]) -> None:
    """A :class:`ParameterError` naming the first column of the object array ``X`` that holds a complex number.

    :func:`_check_not_complex` reads the columns' types; a complex number in an object
    column (among text, say) has none of its own, and the column would become
    categorical, one category per value.
    """
    if X.dtype != object:
        return
    from pandas.api.types import infer_dtype  # pandas is imported by dprm.classifier.encoding

    for j in range(X.shape[1]):
        column = X[:, j]
        kind = infer_dtype(column, skipna=True)
        if kind != "complex" and not kind.startswith("mixed"):
            continue
        value = next((v for v in column if isinstance(v, complex | np.complexfloating)), None)
        if value is not None:
            shown = short_repr(value.item() if isinstance(value, np.generic) else value)
            raise ParameterError(f"{_COMPLEX} {names[j]!r} holds the complex number {shown}; {_COMPLEX_REMEDY}",
                                 code="unsupported_column", column=names[j], data_dependent=True)


def _check_hashable_values(X: np.ndarray, names: Sequence[str]) -> None:
    """A :class:`ParameterError` naming the first column of the object array ``X`` that holds an unhashable value.

    A list, a dict or a set in a cell is no number and cannot be a category (categories
    are looked up by hashing): pandas would stop with ``TypeError: unhashable type``,
    naming no column.

    Examples
    --------
    >>> _check_hashable_values(np.array([["a", (1, 2)]], dtype=object), ["p", "q"])
    >>> _check_hashable_values(np.array([["a", None], ["b", None]], dtype=object)[:, :1], ["p"])
    >>> X = np.empty((1, 2), dtype=object); X[0, 0], X[0, 1] = "a", [1]
    >>> _check_hashable_values(X, ["p", "q"])
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: column 'q' holds a value of type list, which is neither a number nor a category; use numbers, text or Booleans
    """
    if X.dtype != object:
        return
    import pandas as pd  # imported by dprm.classifier.encoding

    for j in range(X.shape[1]):
        try:
            pd.unique(X[:, j])  # hashes every value at C speed; the slow search below only on a failure
        except TypeError:
            for value in X[:, j]:
                try:
                    hash(value)
                except TypeError:
                    raise ParameterError(f"column {names[j]!r} holds a value of type {type(value).__name__}, which "
                                         f"is neither a number nor a category; {_COMPLEX_REMEDY}",
                                         code="unsupported_column", column=names[j],
                                         data_dependent=True) from None
            raise


def _column_name(names: Sequence[str], position: int) -> str:
    """The name of column ``position``: ``names[position]``, else scikit-learn's ``x<position>``."""
    return names[position] if position < len(names) else f"x{position}"


def _check_target_kinds(y: Any) -> None:
    """A :class:`ParameterError` naming the first text label and the first other label of a target
    that mixes them (``["a", 1]``): before, numpy's sort failed deep in scikit-learn's checks with
    ``TypeError: '<' not supported between instances of 'int' and 'str'``.

    Examples
    --------
    >>> _check_target_kinds(np.array(["a", "b"], dtype=object)), _check_target_kinds([1, 2.5, True])
    (None, None)
    >>> _check_target_kinds(np.array([1, 2.5, True], dtype=object)), _check_target_kinds(["a", 1])
    (None, None)
    >>> _check_target_kinds(np.array(["a", 1], dtype=object))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: the target y mixes text and other labels ('a' at row 0, 1 at row 1); a classifier's labels are all text or all numbers
    """
    if y is None or getattr(np.asarray(y), "dtype", None) != np.dtype(object):
        return  # labels of one numpy kind (a list ["a", 1] is read as text, '1')
    labels = np.asarray(y, dtype=object).reshape(-1)
    text = np.fromiter((isinstance(v, str) for v in labels.tolist()), dtype=bool, count=labels.size)
    if text.any() and not text.all():
        first_text, first_other = int(np.flatnonzero(text)[0]), int(np.flatnonzero(~text)[0])
        other = labels[first_other]
        shown = short_repr(other.item() if isinstance(other, np.generic) else other)
        raise ParameterError(f"the target y mixes text and other labels ({short_repr(labels[first_text])} at row "
                             f"{first_text}, {shown} at row {first_other}); a classifier's labels are all text or "
                             "all numbers")


def _check_target_complete(y: Any) -> None:
    """A :class:`ParameterError` naming the first row whose label is missing (None, NaN, ``pd.NA``)."""
    if y is None:
        return  # scikit-learn's validation says that y is required
    labels = np.asarray(y, dtype=object).reshape(-1)
    if "pandas" in sys.modules:
        import pandas as pd

        missing = np.asarray(pd.isna(labels), dtype=bool)
    else:
        missing = np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in labels], dtype=bool)
    if missing.any():
        raise ParameterError(f"the target y has missing labels (first at row {int(np.flatnonzero(missing)[0])}); "
                             "a classifier needs a label for every row")
