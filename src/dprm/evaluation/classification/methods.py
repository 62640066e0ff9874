"""The methods of the classifier comparison: the DP tree, scikit-learn's CART and diffprivlib's tree.

A :class:`Method` is a name and a factory ``factory(epsilon, max_depth,
random_state, schema)`` that returns a fresh, unfitted scikit-learn classifier which
accepts the DataFrame ``X``. :func:`dprm_tree_method` wraps
:class:`dprm.classifier.DPDecisionTreeClassifier` (embedding depth ``1, 2, 3`` or
``"whole"`` = ``max_depth``, variant ``"dprm"`` or ``"paper"``);
:func:`sklearn_cart_method` is scikit-learn's non-private CART and
:func:`diffprivlib_method` diffprivlib's random private tree (Fletcher & Islam), both
on the one-hot encoding of the public schema
(:func:`~dprm.evaluation.classification.data.one_hot`). Any other estimator plugs in
by building a :class:`Method`. The encoding of the diffprivlib baseline is discussed
in :mod:`dprm.evaluation.classification`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from dprm.errors import ParameterError
from dprm.evaluation.classification.data import Schema, one_hot

__all__ = [
    "WHOLE",
    "Method",
    "dprm_tree_method",
    "sklearn_cart_method",
    "diffprivlib_method",
    "diffprivlib_methods",
    "majority_method",
    "DIFFPRIVLIB_MODELS",
    "parse_embedding_depths",
    "default_methods",
]

#: The embedding depth that grows the whole tree in one computation (``= max_depth``).
WHOLE = "whole"
#: The estimator's own choice of embedding depth (``embedding_depth="auto"``).
AUTO = "auto"


#: ``factory(epsilon, max_depth, random_state, schema)`` -> a fresh unfitted classifier.
Factory = Callable[[float | None, int, int | None, Schema], Any]


@dataclass(frozen=True)
class Method:
    """A classifier configuration of the comparison.

    Attributes
    ----------
    name : str
        Its label in the table and the figures.
    factory : callable
        ``factory(epsilon, max_depth, random_state, schema)`` returns a fresh,
        unfitted scikit-learn classifier taking the DataFrame ``X`` (``epsilon`` is
        None for a non-private method).
    private : bool
        Whether it takes a budget (it then runs once per ε, else once).
    embedding_depth : int or "whole", optional
        For the DP tree: levels per private computation; the cell is skipped when it
        exceeds ``max_depth``.
    variant : str
        A free label (the DP tree's variant), shown in the table.
    """

    name: str
    factory: Factory
    private: bool = True
    embedding_depth: int | str | None = None
    variant: str = ""

    def applies(self, max_depth: int) -> bool:
        """Whether the method has a configuration at ``max_depth``."""
        return not isinstance(self.embedding_depth, int) or self.embedding_depth <= max_depth

    def embedding_at(self, max_depth: int) -> float:
        """The embedding depth used at ``max_depth`` (NaN when not a DP tree, or chosen by ε)."""
        if self.embedding_depth is None or self.embedding_depth == AUTO:
            return math.nan
        return float(max_depth if self.embedding_depth == WHOLE else self.embedding_depth)


def dprm_tree_method(embedding_depth: int | str = 1, variant: str = "dprm", name: str | None = None,
                     **options: Any) -> Method:
    """:class:`dprm.classifier.DPDecisionTreeClassifier` at one embedding depth (or ``"whole"``, ``"auto"``).

    ``options`` go to the estimator (``search``, ``mcmc_steps``, ...).

    Examples
    --------
    >>> method = dprm_tree_method(2, "paper")
    >>> method.name, method.applies(1), method.applies(3), method.embedding_at(3)
    ('paper d=2', False, True, 2.0)
    >>> clf = method.factory(0.5, 3, 7, Schema({"a": ["x"]}, ["p", "q"]))
    >>> clf.embedding_depth, clf.epsilon, clf.classes
    (2, 0.5, ['p', 'q'])
    """
    if embedding_depth not in (WHOLE, AUTO) and not (isinstance(embedding_depth, int) and embedding_depth >= 1):
        raise ParameterError(f"embedding depth must be a positive integer, {WHOLE!r} or {AUTO!r}, "
                             f"not {embedding_depth!r}")

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from dprm.classifier import DPDecisionTreeClassifier

        return DPDecisionTreeClassifier(
            epsilon=1.0 if epsilon is None else epsilon, max_depth=max_depth,
            embedding_depth=max_depth if embedding_depth == WHOLE else embedding_depth,
            categories={c: list(v) for c, v in schema.categories.items()}, classes=list(schema.classes),
            variant=variant, random_state=random_state, **options)

    label = name or f"{variant} d={embedding_depth}"
    return Method(label, factory, private=True, embedding_depth=embedding_depth, variant=variant)


def _encoded(model: Any, schema: Schema) -> Any:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    return make_pipeline(FunctionTransformer(one_hot, kw_args={"schema": schema}), model)


def sklearn_cart_method(name: str = "sklearn CART") -> Method:
    """scikit-learn's non-private ``DecisionTreeClassifier(max_depth)`` on :func:`one_hot`.

    Examples
    --------
    >>> schema = Schema({"a": ["x", "y"]}, ["p", "q"])
    >>> X, y = pd.DataFrame({"a": ["x", "y"] * 5}), np.array(["p", "q"] * 5)
    >>> sklearn_cart_method().factory(None, 2, 0, schema).fit(X, y).score(X, y)
    1.0
    """

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from sklearn.tree import DecisionTreeClassifier

        return _encoded(DecisionTreeClassifier(max_depth=max_depth, random_state=random_state), schema)

    return Method(name, factory, private=False, variant="non-private")


def majority_method(name: str = "majority class") -> Method:
    """The training folds' most frequent class for every test row (non-private, no features).

    Examples
    --------
    >>> schema = Schema({"a": ["x", "y"]}, ["p", "q"])
    >>> X, y = pd.DataFrame({"a": ["x", "y", "x"]}), np.array(["p", "q", "q"])
    >>> majority_method().factory(None, 2, 0, schema).fit(X, y).predict(X).tolist()
    ['q', 'q', 'q']
    """

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from sklearn.dummy import DummyClassifier

        return _encoded(DummyClassifier(strategy="most_frequent"), schema)

    return Method(name, factory, private=False, variant="non-private")


#: diffprivlib's models in the comparison (:func:`diffprivlib_method`).
DIFFPRIVLIB_MODELS = ("tree", "shallow-tree", "forest", "naive-bayes")


def diffprivlib_method(name: str = "diffprivlib", model: str = "tree") -> Method | None:
    """One of diffprivlib's private classifiers on :func:`one_hot`, with public bounds and classes.

    ``model``: ``"tree"`` (``DecisionTreeClassifier(max_depth)``, a random tree with
    noisy leaf counts), ``"shallow-tree"`` (the same at depth ``min(2, max_depth)``:
    fewer, fuller leaves), ``"forest"`` (``RandomForestClassifier``, 10 such trees of
    depth ``max_depth`` on disjoint rows) or ``"naive-bayes"`` (``GaussianNB`` with
    bounds ``[0, 1]``). None when diffprivlib is not installed. (diffprivlib 0.6.6's
    ``LogisticRegression`` passes ``multi_class`` to the installed scikit-learn, which
    no longer takes it, so it is not among them.)
    Each fit gets its own ``BudgetAccountant`` (diffprivlib's default one is global).

    Examples
    --------
    >>> method = diffprivlib_method(model="forest")
    >>> method is None or method.name == "diffprivlib"
    True
    """
    if model not in DIFFPRIVLIB_MODELS:
        raise ParameterError(f"diffprivlib model must be one of {', '.join(DIFFPRIVLIB_MODELS)}, not {model!r}")
    try:
        import diffprivlib.models  # noqa: F401
    except ImportError:
        return None

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from diffprivlib import BudgetAccountant
        from diffprivlib import models

        width = one_hot(pd.DataFrame({c: [] for c in schema.columns}), schema).shape[1]
        bounds = (np.zeros(width), np.ones(width))
        common = {"epsilon": 1.0 if epsilon is None else epsilon, "random_state": random_state,
                  "accountant": BudgetAccountant()}
        classes = np.asarray(schema.classes)
        if model == "tree":
            estimator = models.DecisionTreeClassifier(max_depth=max_depth, bounds=bounds, classes=classes, **common)
        elif model == "shallow-tree":
            estimator = models.DecisionTreeClassifier(max_depth=min(2, max_depth), bounds=bounds, classes=classes,
                                                      **common)
        elif model == "forest":
            estimator = models.RandomForestClassifier(n_estimators=10, max_depth=max_depth, bounds=bounds,
                                                      classes=classes, **common)
        else:
            estimator = models.GaussianNB(bounds=bounds, **common)
        return _encoded(estimator, schema)

    return Method(name, factory, private=True, variant="diffprivlib")


def diffprivlib_methods() -> list[Method]:
    """Every model of :data:`DIFFPRIVLIB_MODELS`, named ``"diffprivlib <model>"`` (empty when not installed).

    The comparison's "diffprivlib best" is, per dataset and ε, the best of their
    measured means (chosen on the test folds: an optimistic bar for diffprivlib).
    """
    methods = [diffprivlib_method(f"diffprivlib {model}", model) for model in DIFFPRIVLIB_MODELS]
    return [m for m in methods if m is not None]


def parse_embedding_depths(text: str) -> list[int | str]:
    """``"1,2,3,whole,auto"`` as ``[1, 2, 3, "whole", "auto"]`` (auto: the estimator's default).

    Examples
    --------
    >>> parse_embedding_depths("1, 3,whole,auto")
    [1, 3, 'whole', 'auto']
    """
    depths: list[int | str] = []
    for part in (p.strip() for p in text.split(",")):
        if part in (WHOLE, AUTO):
            depths.append(part)
            continue
        try:
            value = int(part)
        except ValueError:
            raise ParameterError(f"embedding depths: {part!r} is not a positive integer, {WHOLE!r} or {AUTO!r}") from None
        if value < 1:
            raise ParameterError(f"embedding depths: {value} is not a positive integer")
        depths.append(value)
    if not depths:
        raise ParameterError("embedding depths: none given")
    return depths


def default_methods(embedding_depths: Iterable[int | str] = (1, 2, 3, WHOLE),
                    variants: Iterable[str] = ("dprm", "paper"),
                    baselines: bool = True) -> tuple[list[Method], list[str]]:
    """The DP tree at each embedding depth and variant, then scikit-learn's CART and diffprivlib.

    Returns the methods and notes (e.g. diffprivlib is not installed).

    Examples
    --------
    >>> methods, notes = default_methods([1, "whole"], ["dprm"], baselines=False)
    >>> [m.name for m in methods], notes
    (['dprm d=1', 'dprm d=whole'], [])
    """
    methods = [dprm_tree_method(d, v) for v in variants for d in embedding_depths]
    notes: list[str] = []
    if baselines:
        methods.append(sklearn_cart_method())
        dpl = diffprivlib_method()
        if dpl is None:
            notes.append("diffprivlib is not installed: its baseline is skipped (pip install diffprivlib==0.6.6)")
        else:
            methods.append(dpl)
    return methods, notes
