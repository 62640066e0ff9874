"""The chain estimate's ``structure="dp-trees"``: a DP decision tree per variable, and a released tree as a conditional.

``fit_private_estimator(structure="dp-trees")`` (the design of the first version; the
chain's fit, its releases and its split of ε are :mod:`dprm.itemsets.private_chain`'s):
every chain's order drawn at random; the first variable's histogram; every later
variable a :class:`~dprm.classifier.DPDecisionTreeClassifier` on the variables before
it, multiway splits on their public categories, the structure drawn level by level
by the exponential mechanism, the leaves' class counts released by a discrete
Laplace histogram (``leaf_labels="noisy-counts"``; its module docstring derives
the split of the tree's budget between its levels and its leaves). Each release is
charged its ``ε_var`` before it reads a row and spends exactly that
(:func:`dp_trees_chain`); a missing value is one more state of its column
(:mod:`dprm.itemsets.private`, *Missing values*).

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
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dprm.itemsets.chain import Chain
from dprm.itemsets.domains import VariableDomain
from dprm.itemsets.private_fit import charge, record
from dprm.itemsets.private_parents import nonnegative_counts
from dprm.itemsets.tree_model import ConditionalTree
from dprm.privacy import Accountant, DiscreteLaplaceHistogram
from dprm.privacy.accountant import SEEDED_PROPOSALS_REASON

__all__ = ["MAX_DEPTH", "MECHANISM", "dp_trees_chain", "released_tree"]

#: Default depth of the DP trees: the budget halves from level to level
#: (:data:`dprm.classifier.parameters.LEVEL_DECAY`), so deeper levels add little but noise.
MAX_DEPTH = 2
#: The ledger's description of one variable's release.
MECHANISM = "dp-tree (histogram or exponential-mechanism splits + leaf histogram)"


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


def dp_trees_chain(codes: np.ndarray, order: Sequence[int], variables: Mapping[str, VariableDomain],
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
        sub = charge(accountant, per_tree, tree_step, MECHANISM)
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
        record(sub, per_tree, tree_step, tree_step, ledger, guarantees)
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
