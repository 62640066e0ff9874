"""The parameters of :class:`~dprm.classifier.DPDecisionTreeClassifier`: one table, and their limits.

Each ``__init__`` keyword is a :class:`~dprm.params.KeywordParam` in :data:`PARAMETERS`
(its meaning, type and allowed values); :func:`checked_parameters` validates them all
before any data is read or any budget is spent, and returns the values ``fit`` uses.
The declared domains (``bounds``, ``categories``, ``classes``) are checked against the
data's columns in :func:`dprm.classifier.encoding.learn_domains`.

Examples
--------
>>> from dprm.classifier import DPDecisionTreeClassifier
>>> values = DPDecisionTreeClassifier(embedding_depth=2).get_params()
>>> checked_parameters(values)["d"]
2
>>> checked_parameters({**values, "embedding_depth": 9})
Traceback (most recent call last):
...
dprm.errors.ParameterError: embedding_depth (9) must not exceed max_depth (8)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

from dprm.errors import ParameterError
from dprm.params import RANDOM_STATE_KINDS, KeywordParam, check_random_state, parameter_table
from dprm.privacy import Accountant, as_epsilon

__all__ = [
    "PARAMETERS",
    "checked_parameters",
    "VARIANTS",
    "SEARCHES",
    "MCMC_STOPS",
    "CATEGORICAL_SPLITS",
    "LEAF_LABELS",
    "LEAF_SHARE",
    "LEVEL_DECAY",
    "LEAF_COST",
    "LEAF_PRIOR",
    "AUTO_EXACT_WORK",
    "MAX_EXACT_WORK",
    "MAX_DEPTH",
    "STEPS_PER_LEVEL",
    "MAX_NODES",
    "auto_embedding_depth",
    "auto_max_depth",
    "AUTO_MAX_DEPTH",
]

VARIANTS = ("dprm", "paper")
SEARCHES = ("auto", "exhaustive", "mcmc")
MCMC_STOPS = ("fixed", "variance")
CATEGORICAL_SPLITS = ("auto", "multiway", "binary", "both")
LEAF_LABELS = ("auto", "joint", "noisy-counts")
#: Share of ε for the leaves' noisy counts in ``variant="dprm"``.
LEAF_SHARE = Fraction(1, 3)
#: Ratio of the budgets of consecutive computations on a branch in ``variant="dprm"``.
LEVEL_DECAY = Fraction(1, 2)
#: Cost of a leaf in the dprm score, in units of the leaves' noise scale ``1/ε_leaves``.
LEAF_COST = 0.5
#: Base-measure weight of staying a leaf in the dprm variant.
LEAF_PRIOR = 0.8
#: ``search="auto"`` draws exactly up to this :func:`~dprm.classifier.subtree_search.exact_work`.
AUTO_EXACT_WORK = 5_000
#: ``search="exhaustive"`` is refused beyond this work (use MCMC).
MAX_EXACT_WORK = 200_000
#: Largest ``max_depth``.
MAX_DEPTH = 30
#: ``max_depth="auto"`` with ``variant="dprm"`` (:func:`auto_max_depth`).
AUTO_MAX_DEPTH = 8
#: MCMC steps per computation by default, per level of its subtree.
STEPS_PER_LEVEL = 2_000
#: Largest number of tree nodes (complete subtrees of ``variant="paper"`` grow fast).
MAX_NODES = 2_000_000


def _check_accountant(value: Any) -> None:
    if value is not None and not isinstance(value, Accountant):
        raise ParameterError("accountant must be a dprm.privacy.Accountant")


#: name → spec of every ``__init__`` keyword, in the order they are checked.
PARAMETERS: dict[str, KeywordParam] = parameter_table(
    KeywordParam("epsilon", "Privacy budget of the fit (an accountant given is charged instead)", "epsilon",
                 unit="ε"),
    KeywordParam("max_depth", "Levels of splits at most (root at depth 0; auto: 8 for dprm, 5 for paper)", "int",
                 unit="levels", low=1, high=MAX_DEPTH, auto=True),
    # its upper limit is max_depth (checked_parameters)
    KeywordParam("embedding_depth", "Levels grown by one private computation; max_depth grows the whole tree "
                 "in one (auto: the whole tree for dprm, 1 for paper)", "int", unit="levels", low=1,
                 high=MAX_DEPTH, auto=True),
    KeywordParam("search", "Exact draw over all subtrees, Metropolis-Hastings, or exact when its work bound is "
                 "small", "choice", choices=SEARCHES),
    KeywordParam("variant", "dprm's scores and budget split, or the paper's", "choice", choices=VARIANTS),
    KeywordParam("categorical_splits", "Split a categorical feature into all its categories, one category "
                 "against the others, or either", "choice", choices=CATEGORICAL_SPLITS),
    KeywordParam("leaf_labels", "Draw the leaves' labels in the structure's release, or release noisy class "
                 "counts of the leaves", "choice", choices=LEAF_LABELS),
    KeywordParam("mcmc_stop", "Stop each chain after its steps, or also once its scores' variance is small "
                 "(data-dependent)", "choice", choices=MCMC_STOPS),
    KeywordParam("mcmc_steps", "Steps of each MCMC chain (none: 2,000 per level of the subtree)", "int",
                 unit="steps", low=1, high=10_000_000, none=True),
    KeywordParam("min_samples_split", "With noisy-count leaves: an inner node whose noisy row count is below "
                 "this becomes a leaf (auto: the noise's standard deviation)", "float", unit="rows", low=0,
                 auto=True, allowed="'auto' or a number >= 0"),
    KeywordParam("n_thresholds", "Candidate thresholds per numeric feature, evenly inside its bounds", "int",
                 unit="thresholds", low=1, high=1024),
    KeywordParam("accountant", "Charged for the fit (its remaining budget must cover epsilon); a new one with "
                 "epsilon otherwise", "object", none=True, allowed="a dprm.privacy.Accountant or none",
                 check=_check_accountant),
    KeywordParam("random_state", "Seed of reproducible (not private) noise: an integer, or a Generator or "
                 "RandomState that the fit draws one seed from (advancing it); none: secure noise", "object",
                 none=True, allowed=RANDOM_STATE_KINDS, check=check_random_state),
    KeywordParam("bounds", "Public (low, high) of numeric features, by name or position", "object", none=True),
    KeywordParam("categories", "Public categories of categorical features, by name or position", "object",
                 none=True),
    KeywordParam("classes", "Public class labels (read off the target otherwise: then not private)", "object",
                 none=True),
)

def checked_parameters(values: Mapping[str, Any]) -> dict[str, Any]:
    """Validate every parameter (a :class:`~dprm.errors.ParameterError` names the first bad one).

    Parameters
    ----------
    values : mapping
        Every keyword of :data:`PARAMETERS` and its value.

    Returns
    -------
    dict
        What ``fit`` uses: ``epsilon`` (a Fraction), ``max_depth``, ``d`` (the
        embedding depth, :func:`auto_embedding_depth` for ``"auto"``), ``steps``
        (MCMC steps or None) and ``n_thresholds``.
    """
    for name, spec in PARAMETERS.items():
        value = values[name]
        if name == "embedding_depth":
            max_depth = _max_depth(values)  # valid: checked before
            if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > max_depth:
                raise ParameterError(f"embedding_depth ({value}) must not exceed max_depth ({max_depth})")
            spec = replace(spec, high=max_depth)
        spec.validate(value)
    steps = values["mcmc_steps"]
    max_depth = _max_depth(values)
    d = values["embedding_depth"]
    epsilon = as_epsilon(values["epsilon"])
    d = auto_embedding_depth(values["variant"], max_depth) if isinstance(d, str) else int(d)
    return {"epsilon": epsilon, "max_depth": max_depth, "d": d, "steps": None if steps is None else int(steps),
            "n_thresholds": int(values["n_thresholds"])}


def _max_depth(values: Mapping[str, Any]) -> int:
    depth = values["max_depth"]
    return auto_max_depth(values["variant"]) if isinstance(depth, str) else int(depth)


def auto_max_depth(variant: str) -> int:
    """The maximum depth of ``max_depth="auto"``: ``AUTO_MAX_DEPTH`` for dprm, 5 for the paper.

    Measured (docs/classifier.md, "The maximum depth"): on the 11 tables of the
    comparison at ε ∈ {0.1, 1, 10} (10-fold CV × 3) a cap of 8 was ahead of 5 on
    average at every ε (0.674 / 0.814 / 0.822 against 0.671 / 0.808 / 0.817), by more
    than a standard error in 13 cells and behind by more than one in 5, and met the
    bars (the majority class, diffprivlib's best, less a standard error) in the same
    32 of 33 cells; the whole-tree release chooses its size below the cap (its
    base measure keeps a node a leaf with ``LEAF_PRIOR`` and each split must pay for
    itself), so a higher cap costs little where the budget cannot pay for depth. No
    rule of ε, the row count and the classes separated the cells where 8 lost (a
    planted depth-3 tree at ε = 10 against tic-tac-toe, with the same rows, classes
    and ε, which gains 0.07 from it). The paper's complete subtrees keep 5 (their
    size grows as the widest split's children to the depth).

    Examples
    --------
    >>> auto_max_depth("dprm"), auto_max_depth("paper")
    (8, 5)
    """
    return 5 if variant == "paper" else AUTO_MAX_DEPTH


def auto_embedding_depth(variant: str, max_depth: int) -> int:
    """The embedding depth of ``embedding_depth="auto"``, from public parameters only.

    The rule reads no data and spends no budget: ``variant="dprm"`` grows the whole
    tree in one release (``max_depth``) at every ε, ``variant="paper"`` keeps the
    paper's (and dprm's earlier default) one level per computation. Chosen by
    measurement (docs/classifier.md, "Choosing the defaults": 10 tables,
    ε ∈ {0.1, 1, 10}): with the MCMC's change moves
    (:func:`dprm.classifier.subtree_mcmc.mcmc_subtree`) the whole tree was ahead
    of one level per computation on most tables at every ε, by much at ε ≤ 1. It
    also spends the whole budget: one release charged ε, where computations no
    branch reaches are never charged. (With ``leaf_labels="auto"`` too, the fit
    first spends a tenth of ε on a noisy row count that may choose one multiway root
    split, drawn with its labels, instead: :mod:`dprm.classifier.small_budget`; either gets the rest.)

    *Small budgets.* With joint labels the whole-tree release is never far below the
    majority class, because the single leaf labelled with the majority class is one
    of its candidates: the exponential mechanism's utility bound, with base measure
    ``μ(leaf, label) = LEAF_PRIOR / C`` and inverse temperature ``η = ε`` (score range
    1, the whole budget in one release), gives with probability at least ``1 − e^{−t}``
    ::

        right(T) ≥ n_majority − (ln(C / LEAF_PRIOR) + t) / ε

    training rows right (``C`` classes), since ``P(score ≤ s* − δ) ≤ e^{−εδ} / μ(T*)``.
    A tree grown one level per computation draws the labels of its deep leaves with a
    small share of ε and falls towards ``1/C`` when that share cannot tell the classes
    apart (19 classes at ε = 0.1: 0.066 against the majority class's 0.126).

    Examples
    --------
    >>> auto_embedding_depth("dprm", 5), auto_embedding_depth("paper", 5)
    (5, 1)
    """
    return 1 if variant == "paper" else max_depth
