"""A private ensemble of dprm's trees on disjoint row partitions (issue 29): measured, not the default.

Why
---
A single whole-tree release pays for naming its structure with the whole budget;
an ensemble of ``k`` trees fitted on ``k`` disjoint parts of the rows keeps the
whole ε for every tree (parallel composition: one row is in one part, so the
neighbouring datasets of the ensemble differ in one part only). Each tree sees
``n / k`` rows, so it can pay for less structure; averaging ``k`` trees may win that
back. docs/classifier.md ("A private ensemble") measures it against the single
tree on the 11 tables of the comparison: it is kept as an option
(:class:`DPTreeEnsembleClassifier`), not made the default.

Privacy
-------
* The partition: every row is sent to a part by its own uniform draw from ``rng``
  (independent of the data and of the other rows), so adding or removing a row
  changes one part by that row and leaves the others' rows as they were
  (with ``numpy.array_split`` of a permutation, one row more would shift rows
  between parts: not a parallel composition).
* Each part is fitted by :class:`~dprm.classifier.DPDecisionTreeClassifier` with ``ε``
  on a :class:`PartAccountant`, which holds the part's own budget ``ε`` and, before a
  release of the part goes ahead, charges the ensemble's accountant for whatever that
  release adds to the *largest* total spent by any part so far. The ensemble's
  charges thus add up to ``max_i spent_i ≤ ε`` (parallel composition: the cost of
  disjoint parts is the largest part's cost), every one before the draw it pays for.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d, validate_data

from dprm.classifier.estimator import (DPDecisionTreeClassifier, _check_target_complete, _check_target_kinds,
                                      classes_of_target, plain_target)
from dprm.classifier.parameters import PARAMETERS
from dprm.params import KeywordParam, as_seed, parameter_table
from dprm.privacy import Accountant, SecureNoise, SeededNoise
from dprm.privacy.accountant import PURE_DP, check_affordable, combine_guarantees
from dprm.privacy.budget import EpsilonLike, as_epsilon

__all__ = ["DPTreeEnsembleClassifier", "ENSEMBLE_PARAMETERS", "PartAccountant", "ParallelParts", "partition_rows"]

#: The ensemble's own keywords (the schema's are checked by each tree).
ENSEMBLE_PARAMETERS: dict[str, KeywordParam] = parameter_table(
    KeywordParam("n_estimators", "Trees, one per disjoint part of the rows", "int", unit="trees", low=1,
                 high=10_000, why="each tree sees about 1/n_estimators of the rows"),
    PARAMETERS["epsilon"],
    PARAMETERS["max_depth"],
    PARAMETERS["random_state"],
)


class ParallelParts:
    """The ensemble's accountant and the largest total any part has spent (shared by the parts)."""

    def __init__(self, parent: Accountant, n_parts: int) -> None:
        self.parent = parent
        self.n_parts = n_parts
        self.charged = Fraction(0)


class PartAccountant(Accountant):
    """One part's accountant: its own budget, and the ensemble's charged for the parts' maximum.

    Examples
    --------
    >>> parent = Accountant(1, SeededNoise(np.random.default_rng(0)))
    >>> shared = ParallelParts(parent, 2)
    >>> a, b = PartAccountant(1, shared), PartAccountant(1, shared)
    >>> a.charge("0.1", "rows", "discrete-laplace count")
    >>> b.charge("0.1", "rows", "discrete-laplace count")   # covered: parallel parts
    >>> b.charge("0.9", "leaves", "discrete-laplace histogram")
    >>> a.charge("0.9", "structure#1", "exponential")        # covered by b's 1.0
    >>> [(e.step, e.epsilon) for e in parent.ledger]
    [('rows (parallel over 2 parts)', Fraction(1, 10)), ('leaves (parallel over 2 parts)', Fraction(9, 10))]
    """

    def __init__(self, total_epsilon: EpsilonLike, parts: ParallelParts) -> None:
        super().__init__(total_epsilon, parts.parent.noise)
        self.parts = parts

    def charge(self, epsilon: EpsilonLike, step: str, mechanism: str, guarantee: str = PURE_DP) -> None:
        """Charge this part, and before that the ensemble for what the part adds to the maximum."""
        exact = as_epsilon(epsilon)
        if not self.can_afford(exact):
            super().charge(exact, step, mechanism, guarantee)  # raises: the part's own budget
        total = self.spent() + exact
        if total > self.parts.charged:
            # parallel composition: the parts' rows are disjoint, so the ensemble has
            # spent the largest part's total; charge the excess before the release
            self.parts.parent.charge(total - self.parts.charged, f"{step} (parallel over {self.parts.n_parts} parts)",
                                     mechanism, guarantee)
            self.parts.charged = total
        super().charge(exact, step, mechanism, guarantee)


def partition_rows(n_rows: int, n_parts: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Row indices of each part: every row's part drawn uniformly and independently (data-independent).

    Examples
    --------
    >>> [part.tolist() for part in partition_rows(6, 2, np.random.default_rng(0))]
    [[3, 4, 5], [0, 1, 2]]
    """
    labels = rng.integers(n_parts, size=n_rows)
    return [np.flatnonzero(labels == i) for i in range(n_parts)]


class DPTreeEnsembleClassifier(ClassifierMixin, BaseEstimator):
    """``n_estimators`` default DP trees on disjoint random parts of the rows, soft vote (ε each, ε in all).

    Parameters
    ----------
    n_estimators : int, default 3
        Trees, one per part of the rows.
    epsilon : float, default 1.0
        Budget of the fit; every tree is fitted with all of it (parallel composition).
    max_depth : int or "auto", default "auto"
        Of every tree (:class:`~dprm.classifier.DPDecisionTreeClassifier`).
    bounds, categories, classes
        The public schema, as for :class:`~dprm.classifier.DPDecisionTreeClassifier`.
    accountant : Accountant, optional
        Charged for the fit; a new one with ``epsilon`` otherwise.
    random_state : int, numpy.random.Generator or numpy.random.RandomState, optional
        Seed of reproducible (not private) noise, partition and trees; ``None``: secure.
        A Generator or RandomState gives one seed drawn from it at each fit (advancing
        it), as for :class:`~dprm.classifier.DPDecisionTreeClassifier`.

    Attributes
    ----------
    estimators_ : list of DPDecisionTreeClassifier
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input only)
    ledger_ : list of dict
    privacy_spent_ : float
    guarantee_ : str
    private_ : bool
    privacy_reasons_ : list of str

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice(["a", "b", "c"], size=(900, 3)).astype(object)
    >>> y = np.where(X[:, 0] == "a", "yes", "no")
    >>> clf = DPTreeEnsembleClassifier(n_estimators=3, epsilon=1.0, random_state=0,
    ...     categories=[["a", "b", "c"]] * 3, classes=["no", "yes"]).fit(X, y)
    >>> round(clf.score(X, y), 2), clf.privacy_spent_
    (1.0, 1.0)
    >>> [entry["step"] for entry in clf.ledger_]
    ['rows (parallel over 3 parts)', 'structure#1 (parallel over 3 parts)']
    """

    def __init__(self, n_estimators: int = 3, epsilon: float = 1.0, max_depth: int | str = "auto",
                 bounds: Mapping[Any, tuple[float, float]] | Sequence[Any] | None = None,
                 categories: Mapping[Any, Sequence[Any]] | Sequence[Any] | None = None,
                 classes: Sequence[Any] | None = None, accountant: Accountant | None = None,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None) -> None:
        self.n_estimators = n_estimators
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.bounds = bounds
        self.categories = categories
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):  # noqa: D105 - scikit-learn protocol
        tags = super().__sklearn_tags__()  # the trees': missing values and text are features
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.non_deterministic = self.random_state is None
        return tags

    def fit(self, X: Any, y: Any) -> DPTreeEnsembleClassifier:
        """Partition the rows, fit one default tree per part with ε on its part, release them all."""
        for name, spec in ENSEMBLE_PARAMETERS.items():  # before any data is read or budget spent
            spec.validate(getattr(self, name))
        epsilon = as_epsilon(self.epsilon, "epsilon")
        _check_target_complete(y)
        _check_target_kinds(y)
        if issparse(X):  # scikit-learn's words (np.asarray would make it an array of one object)
            raise TypeError("Sparse data was passed for X, but dense data is required. Use '.toarray()' to convert "
                            "to a dense numpy array.")
        if X is not None and not hasattr(X, "iloc"):
            X = np.asarray(X)  # a list of rows, or an object numpy reads through __array__ only
        check_consistent_length(X, y)  # else the parts of y's rows would index X's silently
        if X is None or np.ndim(X) != 2:
            raise ValueError(f"Expected a 2D array or a DataFrame of features, got {type(X).__name__} "
                             f"of {np.ndim(X)} dimension(s)")
        # Int64 labels as ints (as the tree reads them); a (n, 1) column as scikit-learn takes it; else its
        # shape named, not a part's
        y = column_or_1d(plain_target(y), warn=True)
        reasons: list[str] = []
        classes = self.classes
        present = None
        if classes is None:
            present = classes_of_target(y)  # the tree's classes_ of this target
            classes = present.tolist()  # one class named as the tree names it (no classes declared)
            reasons.append("classes read off the data (declare classes)")
        seed = as_seed(self.random_state)  # a Generator or RandomState: one seed drawn from it (advanced)
        rng = np.random.default_rng(seed)
        if self.accountant is not None:
            parent = self.accountant
        else:
            noise = SecureNoise() if seed is None else SeededNoise(rng)
            parent = Accountant(epsilon, noise)
        check_affordable(parent, epsilon)  # a BudgetExceededError and a ParameterError
        since = len(parent.ledger)
        shared = ParallelParts(parent, int(self.n_estimators))
        parts = partition_rows(len(y), int(self.n_estimators), rng)
        rows = X.iloc if hasattr(X, "iloc") else X
        estimators = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the parts' reasons are collected below
            trees = [DPDecisionTreeClassifier(
                epsilon=float(epsilon), max_depth=self.max_depth, bounds=self.bounds,
                categories=self.categories, classes=classes, accountant=PartAccountant(epsilon, shared))
                for _ in parts]
            # Every part's rows checked before the first part is charged: a value outside its
            # domain in the last part must not leave the budget of the first ones spent.
            checked = []
            for i, (tree, part) in enumerate(zip(trees, parts)):
                params = tree._checked_parameters()
                try:
                    checked.append((params, tree._checked_data(rows[part], y[part], params)))
                except ValueError as error:
                    if part.size or type(error) is not ValueError:  # a ParameterError names its column
                        raise
                    # the tree's words are about its own rows ("shape=(0, 2)"), not the caller's
                    raise ValueError(f"part {i + 1} of the rows (n_estimators={len(parts)}) drew no row: {error}; "
                                     f"or fit fewer parts") from None
            for tree, (params, data) in zip(trees, checked):
                # each part's seed drawn just before its fit, as before the checks: a seed's fits stay the same
                tree.set_params(random_state=None if seed is None else int(rng.integers(2**31)))
                estimators.append(tree._fit_checked(params, data))
        for tree in estimators:
            # a part's accountant belongs to the run (its charges are in the ensemble's ledger); kept, it
            # made every fitted ensemble unpicklable ("an Accountant cannot be pickled") and tied to this process
            tree.accountant = None
        for tree in estimators:
            reasons += [r for r in tree.privacy_reasons_ if r not in reasons and not r.startswith("seeded")]
        block = parent.privacy_block(reasons=reasons, since=since)
        self.estimators_ = estimators
        # read off y: the labels as the tree's classes_ of the whole target hold them (its dtype: object
        # labels of a string target, uint8 ones of a uint8 target), not as the parts' declared list made them
        self.classes_ = estimators[0].classes_ if present is None else present
        # scikit-learn's fitted attributes of the input (the parts' validation set them on each tree)
        self.n_features_in_ = estimators[0].n_features_in_
        if hasattr(estimators[0], "feature_names_in_"):
            self.feature_names_in_ = estimators[0].feature_names_in_
        elif hasattr(self, "feature_names_in_"):  # an earlier fit's, on a DataFrame
            del self.feature_names_in_
        self.ledger_ = block["ledger"]
        self.privacy_spent_ = block["epsilon"]
        self.private_ = block["private"]
        # a part whose charges were covered by another's still ran its own mechanisms
        self.guarantee_ = (combine_guarantees([block["guarantee"]] + [t.guarantee_ for t in estimators])
                           if block["private"] else block["guarantee"])
        self.privacy_reasons_ = block["reasons"]
        for reason in reasons:
            warnings.warn(f"DPTreeEnsembleClassifier: not private: {reason}", UserWarning, stacklevel=2)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """The trees' class probabilities averaged (a joint-label tree's are its label's indicator)."""
        check_is_fitted(self, "estimators_")
        # X's column names and count checked once, in the ensemble's name: each tree's own check warned
        # "... but DPDecisionTreeClassifier was fitted with feature names" once a tree
        # an array or a DataFrame of rows; else the trees' own checks answer (how to reshape a 1-d X,
        # in scikit-learn's words; a list of rows, an object numpy reads through __array__ only)
        if getattr(X, "ndim", None) == 2:
            validate_data(self, X, reset=False, skip_check_array=True)
            if X.shape[0] == 0:  # refused here, else the first tree's check named DPDecisionTreeClassifier
                raise ValueError(f"Found array with 0 sample(s) (shape={tuple(X.shape)}) while a minimum of 1 "
                                 f"is required by {type(self).__name__}.")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"X (does not have valid|has) feature names", category=UserWarning)
            return np.mean([tree.predict_proba(X) for tree in self.estimators_], axis=0)

    def predict(self, X: Any) -> np.ndarray:
        """The class with the largest averaged probability (the first in ``classes_`` on a tie)."""
        check_is_fitted(self, "estimators_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
