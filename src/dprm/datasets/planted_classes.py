"""Synthetic classification data with a planted decision tree (``make_planted_classification``).

In the style of scikit-learn's ``make_*`` generators, for the DP tree classifier:
``n_features`` categorical features with ``n_categories`` values each, uniform and
independent; the class of a row is given by a random decision tree of depth
``depth`` whose inner nodes test one category of a feature against the others and
whose leaves have random classes (both occurring), with a ``noise`` share of the
labels flipped. The tree's own accuracy on the rows (the
best any classifier can expect) is returned with the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dprm.errors import ParameterError

__all__ = ["PlantedClassification", "make_planted_classification"]

CLASSES = ("negative", "positive")


@dataclass
class PlantedClassification:
    """What :func:`make_planted_classification` returns.

    Attributes
    ----------
    X : pandas.DataFrame
        Categorical features ``f0, f1, ...`` with values ``v0, v1, ...``.
    y : numpy.ndarray of object (str)
        The labels (``"negative"`` / ``"positive"``).
    categories : dict
        The public schema: each feature's categories.
    classes : list of str
    rules : list of (list of (str, str, bool), str)
        The planted tree's leaves: the tests on the path (feature, category, whether
        it is equal) and the leaf's class.
    planted_accuracy : float
        Accuracy of the planted tree on these rows (``1 − noise`` up to sampling).
    """

    X: pd.DataFrame
    y: np.ndarray
    categories: dict[str, list[str]]
    classes: list[str]
    rules: list[tuple[list[tuple[str, str, bool]], str]] = field(default_factory=list)
    planted_accuracy: float = 1.0


def make_planted_classification(
    n_rows: int,
    *,
    n_features: int = 20,
    n_categories: int = 3,
    depth: int = 3,
    noise: float = 0.05,
    rng: np.random.Generator,
) -> PlantedClassification:
    """Random categorical data whose class follows a planted decision tree.

    Parameters
    ----------
    n_rows : int
        Rows (1 to 100,000,000).
    n_features : int, default 20
        Categorical features (at least ``depth``).
    n_categories : int, default 3
        Categories per feature (2 to 50).
    depth : int, default 3
        Depth of the planted tree (1 to 10); its leaves get random classes, both
        occurring.
    noise : float, default 0.05
        Share of labels flipped, in [0, 0.5).
    rng : numpy.random.Generator

    Returns
    -------
    PlantedClassification

    Examples
    --------
    >>> data = make_planted_classification(1000, n_features=5, depth=2, noise=0.1,
    ...                                    rng=np.random.default_rng(0))
    >>> data.X.shape, sorted(set(data.y))
    ((1000, 5), ['negative', 'positive'])
    >>> 0.85 < data.planted_accuracy < 0.95
    True
    """
    if not 1 <= n_rows <= 100_000_000:
        raise ParameterError(f"n_rows must be in [1, 100,000,000], got {n_rows}")
    if not 1 <= depth <= 10:
        raise ParameterError(f"depth must be in [1, 10], got {depth}")
    if not depth <= n_features <= 10_000:
        raise ParameterError(f"n_features must be in [depth, 10,000], got {n_features}")
    if not 2 <= n_categories <= 50:
        raise ParameterError(f"n_categories must be in [2, 50], got {n_categories}")
    if not 0.0 <= noise < 0.5:
        raise ParameterError(f"noise must be in [0, 0.5), got {noise}")
    codes = rng.integers(0, n_categories, size=(n_rows, n_features), dtype=np.int8)
    # the planted tree: complete, depth `depth`; node i tests (feature, category)
    n_inner = 2**depth - 1
    tests = [
        (int(rng.integers(n_features)), int(rng.integers(n_categories))) for _ in range(n_inner)
    ]
    leaf_class = rng.integers(0, 2, size=2**depth)
    leaf_class[rng.choice(2**depth, size=2, replace=False)] = [0, 1]  # both classes occur
    node = np.zeros(n_rows, dtype=np.int64)
    for _ in range(depth):
        feature = np.array([tests[i][0] for i in range(n_inner)])[node]
        category = np.array([tests[i][1] for i in range(n_inner)])[node]
        equal = codes[np.arange(n_rows), feature] == category
        node = 2 * node + np.where(equal, 1, 2)
    truth = leaf_class[node - n_inner]
    flip = rng.random(n_rows) < noise
    label = np.where(flip, 1 - truth, truth)
    names = [f"f{i}" for i in range(n_features)]
    values = np.array([f"v{c}" for c in range(n_categories)], dtype=object)
    X = pd.DataFrame({name: values[codes[:, i]] for i, name in enumerate(names)})
    rules = []
    for leaf in range(2**depth):
        path, i = [], leaf + n_inner
        while i > 0:
            parent = (i - 1) // 2
            f, c = tests[parent]
            path.append((names[f], str(values[c]), i == 2 * parent + 1))
            i = parent
        rules.append((path[::-1], CLASSES[int(leaf_class[leaf])]))
    return PlantedClassification(
        X=X,
        y=np.array(CLASSES, dtype=object)[label],
        categories={name: list(values) for name in names},
        classes=list(CLASSES),
        rules=rules,
        planted_accuracy=float(np.mean(label == truth)),
    )
