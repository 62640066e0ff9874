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
    "parse_embedding_depths",
    "default_methods",
]

#: The embedding depth that grows the whole tree in one computation (``= max_depth``).
WHOLE = "whole"


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
        """The embedding depth used at ``max_depth`` (NaN when not a DP tree)."""
        if self.embedding_depth is None:
            return math.nan
        return float(max_depth if self.embedding_depth == WHOLE else self.embedding_depth)


def dprm_tree_method(embedding_depth: int | str = 1, variant: str = "dprm", name: str | None = None,
                     **options: Any) -> Method:
    """:class:`dprm.classifier.DPDecisionTreeClassifier` at one embedding depth (or ``"whole"``).

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
    if embedding_depth != WHOLE and not (isinstance(embedding_depth, int) and embedding_depth >= 1):
        raise ParameterError(f"embedding depth must be a positive integer or {WHOLE!r}, not {embedding_depth!r}")

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


def diffprivlib_method(name: str = "diffprivlib") -> Method | None:
    """diffprivlib's ``DecisionTreeClassifier`` on :func:`one_hot` with public bounds and classes.

    None when diffprivlib is not installed. Each fit gets its own
    ``BudgetAccountant`` (diffprivlib's default one is global).
    """
    try:
        import diffprivlib.models  # noqa: F401
    except ImportError:
        return None

    def factory(epsilon: float | None, max_depth: int, random_state: int | None, schema: Schema) -> Any:
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import DecisionTreeClassifier

        width = one_hot(pd.DataFrame({c: [] for c in schema.columns}), schema).shape[1]
        model = DecisionTreeClassifier(
            max_depth=max_depth, epsilon=1.0 if epsilon is None else epsilon,
            bounds=(np.zeros(width), np.ones(width)), classes=np.asarray(schema.classes),
            random_state=random_state, accountant=BudgetAccountant())
        return _encoded(model, schema)

    return Method(name, factory, private=True, variant="diffprivlib")


def parse_embedding_depths(text: str) -> list[int | str]:
    """``"1,2,3,whole"`` as ``[1, 2, 3, "whole"]``.

    Examples
    --------
    >>> parse_embedding_depths("1, 3,whole")
    [1, 3, 'whole']
    """
    depths: list[int | str] = []
    for part in (p.strip() for p in text.split(",")):
        if part == WHOLE:
            depths.append(WHOLE)
            continue
        try:
            value = int(part)
        except ValueError:
            raise ParameterError(f"embedding depths: {part!r} is neither a positive integer nor {WHOLE!r}") from None
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
