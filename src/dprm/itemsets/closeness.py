"""t-closeness of a density estimate for quasi-identifiers (Algorithm 1), and its check.

t-closeness (Li, Li & Venkatasubramanian, ICDE 2007) asks that, within any group of
entities, the distribution of a sensitive attribute stays within a distance ``δ`` of
its global distribution. Geilke & Kramer (ICBK 2017) bring an EDDO estimate
(:mod:`dprm.itemsets.estimator`) to that property node by node: for each
quasi-identifier ``Q``, every distribution of ``Q`` the estimate stores is moved towards
the global distribution ``ĝ`` of ``Q`` until it is within ``δ``:

* the *edge distribution* of every split node that tests ``Q`` (in every tree of every
  chain): the weights of its edges, which the estimate's marginalisation by soft
  evidence uses (:meth:`ConditionalTree.predict_proba
  <dprm.itemsets.tree_model.ConditionalTree.predict_proba>`);
* the *class distribution* of every node of every tree whose target is ``Q``: the
  paper names the leaves; inner nodes are corrected too, because a row whose code has
  no child stops at an inner node and an empty leaf borrows its parent's distribution.

The correction is the paper's: ``d <- d + (ĝ - d) * step / 100`` while
``||ĝ - d|| >= δ``. Each step shrinks the distance by the factor ``1 - step/100``, so
the loop ends for ``δ > 0``; for ``δ = 0`` it would not, and ``d`` is set to its limit
``ĝ``. Counts and edge weights keep their totals (only their shares change).

How small a step may be
    A distance is at most 1, so a correction takes at most ``ln δ / ln(1 - step/100)``
    steps; ``step`` must be at least :func:`smallest_step` of ``δ``, the step for which
    that is :data:`MAX_STEPS` (100,000; rounded up to two significant digits): 0.0047 for
    ``δ = 0.01``, 0.021 for ``δ = 1e-9``, 0.69 for ``δ = 1e-300``. A smaller step would not
    finish the correction within the steps (a step of 1e-300 changes no float, and ran for
    ever). The loop also ends when a step changes nothing (rounding: ``d`` is as close to
    ``ĝ`` as floats get, below the check's slack), which leaves ``d`` as it was.

The global distribution
    ``ĝ`` is the estimate's own marginal of ``Q`` by EDDO's marginalisation (the mean
    over chains of :meth:`DensityEstimator.density_many
    <dprm.itemsets.estimator.DensityEstimator.density_many>` with ``method="paths"``,
    normalised), which is deterministic. Correcting one quasi-identifier's nodes can
    move another's global distribution (edge weights enter its marginal), so the
    correction is repeated until :func:`check_t_closeness` passes on the modified
    estimate, its globals recomputed each time; with ``δ = 0`` one round suffices.
    An edge distribution over fewer children than ``Q`` has categories is compared with
    ``ĝ`` restricted to those categories and renormalised.
Distances
    ``"emd"`` (the default, as Li et al. advise): the Earth Mover's distance with the
    categories ordered by their codes (the order of the domain, as the paper uses)
    and adjacent categories ``1/(K-1)`` apart, ``sum_i |cumsum(p - q)_i| / (K - 1)``;
    ``"variational"``: ``sum_i |p_i - q_i| / 2``. Both lie in [0, 1]. A
    quasi-identifier whose domain has the missing value (:mod:`dprm.itemsets.domains`)
    has it as one more state, the last: ``K`` counts it, and its share is brought
    to the global one like a category's.

t-closeness is a syntactic property of the estimate, not differential privacy: the
estimate and everything mined from it still depend on every row (see the DP variant
for a formal guarantee).

Examples
--------
>>> import numpy as np, pandas as pd
>>> from dprm.itemsets.estimator import DensityEstimator
>>> rng = np.random.default_rng(0)
>>> age = rng.choice(["young", "old"], size=3000)
>>> job = np.where(age == "old", "retired", rng.choice(["student", "retired"], size=3000))
>>> est = DensityEstimator(n_chains=2, grace_period=50, random_state=0).fit(pd.DataFrame({"age": age, "job": job}))
>>> check_t_closeness(est, ["job"], delta=0.05).ok
False
>>> private = apply_t_closeness(est, ["job"], delta=0.0)
>>> report = check_t_closeness(private, ["job"], delta=0.0)
>>> report.ok, report.nodes_checked > 0
(True, True)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dprm.errors import ParameterError, short_repr
from dprm.itemsets.estimator import Chain, DensityEstimator
from dprm.itemsets.tree_model import ConditionalTree

__all__ = ["DISTANCES", "MAX_STEPS", "ClosenessReport", "Violation", "apply_t_closeness", "check_t_closeness",
           "distribution_distance", "global_distribution", "smallest_step"]

DISTANCES = ("emd", "variational")
#: Slack of the check for floating-point rounding.
TOLERANCE = 1e-9
#: Rounds of correction before giving up (never reached in practice; see the module notes).
MAX_ROUNDS = 200
#: The most steps of one correction (Algorithm 1's loop for one distribution; see :func:`smallest_step`).
MAX_STEPS = 100_000


def smallest_step(delta: float) -> float:
    """The least ``step`` of :func:`apply_t_closeness` for ``delta``: a distance of 1 falls below ``delta`` in
    :data:`MAX_STEPS` steps.

    ``100 · (1 - δ^(1 / MAX_STEPS))``, rounded up to two significant digits (the bound the
    message names is the one checked); 0 for ``δ = 0`` (the distributions are set to the
    global one, no steps) and for ``δ >= 1`` (no distance exceeds 1, nothing is corrected).

    Examples
    --------
    >>> smallest_step(0.01), smallest_step(1e-9), smallest_step(1e-300), smallest_step(0), smallest_step(1)
    (0.0047, 0.021, 0.69, 0.0, 0.0)
    """
    if not 0.0 < delta < 1.0:
        return 0.0
    exact = -100.0 * math.expm1(math.log(delta) / MAX_STEPS)
    exponent = math.floor(math.log10(exact)) - 1
    mantissa = math.ceil(exact / 10.0 ** exponent)
    while float(f"{mantissa}e{exponent}") < exact:  # rounding of the division
        mantissa += 1
    return float(f"{mantissa}e{exponent}")


def distribution_distance(p: np.ndarray, q: np.ndarray, distance: str = "emd") -> float:
    """The distance between two distributions over the same ordered categories.

    Examples
    --------
    >>> distribution_distance(np.array([1.0, 0, 0]), np.array([0, 0, 1.0]))
    1.0
    >>> distribution_distance(np.array([0.5, 0.5, 0]), np.array([0, 0.5, 0.5]), "variational")
    0.5
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if distance == "variational":
        return float(np.abs(p - q).sum() / 2)
    if distance == "emd":
        if len(p) < 2:
            return 0.0
        return float(np.abs(np.cumsum(p - q)[:-1]).sum() / (len(p) - 1))
    raise ParameterError(f"distance must be one of {', '.join(DISTANCES)}, not {distance!r}")


@dataclass(frozen=True)
class Violation:
    """A node whose distribution of a quasi-identifier is farther than ``δ`` from the global one.

    ``kind`` is ``"edges"`` (a split on the quasi-identifier) or ``"class"`` (a node of
    the quasi-identifier's own tree); ``chain`` and ``position`` locate the tree.
    """

    quasi_identifier: str
    kind: str
    chain: int
    position: int
    node: int
    distance: float


@dataclass
class ClosenessReport:
    """The result of :func:`check_t_closeness`.

    Attributes
    ----------
    delta : float
    distance : str
    nodes_checked : int
        Node distributions compared with a global distribution.
    max_distance : dict of str to float
        The largest distance found per quasi-identifier.
    global_distributions : dict of str to list of float
    violations : list of Violation
    """

    delta: float
    distance: str
    nodes_checked: int = 0
    max_distance: dict[str, float] = field(default_factory=dict)
    global_distributions: dict[str, list[float]] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every node is within ``δ``."""
        return not self.violations


def global_distribution(estimator: DensityEstimator, column: str) -> np.ndarray:
    """The estimate's marginal distribution of ``column`` (EDDO's marginalisation; see the notes)."""
    variables = estimator.variables_
    j = estimator.columns_.index(column)
    rows = np.full((variables[column].size, len(variables)), -1, dtype=np.int64)
    rows[:, j] = np.arange(variables[column].size)
    values = estimator.density_many(rows, method="paths")
    total = values.sum()
    return values / total if total > 0 else np.full(len(values), 1.0 / len(values))


def _check_arguments(estimator: DensityEstimator, quasi_identifiers: Sequence[str], delta: float,
                     distance: str) -> list[str]:
    if isinstance(quasi_identifiers, str):
        quasi_identifiers = [quasi_identifiers]
    columns = estimator.columns_
    for name in quasi_identifiers:
        if name not in columns:
            raise ParameterError(f"no column named {name!r} to protect (columns: {', '.join(columns)})")
    if not quasi_identifiers:
        raise ParameterError("give at least one quasi-identifier")
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not np.isfinite(delta) or delta < 0:
        raise ParameterError(f"delta must be a number >= 0, got {short_repr(delta)}")
    if distance not in DISTANCES:
        raise ParameterError(f"distance must be one of {', '.join(DISTANCES)}, not {distance!r}")
    return list(dict.fromkeys(quasi_identifiers))


def _restricted(target: np.ndarray, width: int) -> np.ndarray:
    part = target[:width]
    total = part.sum()
    return part / total if total > 0 else np.full(width, 1.0 / width)


def _corrected(d: np.ndarray, target: np.ndarray, delta: float, distance: str, step: float) -> np.ndarray:
    """Algorithm 1's loop (lines 9-12) for one distribution."""
    if delta == 0.0:
        return target.copy()
    d = d.copy()
    for _ in range(MAX_STEPS):  # enough for a step of at least smallest_step(delta)
        if distribution_distance(target, d, distance) < delta:
            break
        moved = d + (target - d) * (step / 100.0)
        if np.array_equal(moved, d):  # as close as floats get: every further step gives d again
            break
        d = moved
    return d


def check_t_closeness(
    estimator: DensityEstimator,
    quasi_identifiers: Sequence[str],
    delta: float,
    distance: str = "emd",
) -> ClosenessReport:
    """Check every node distribution involving a quasi-identifier against its global distribution.

    Parameters
    ----------
    estimator : DensityEstimator
    quasi_identifiers : list of str
        Column names.
    delta : float
        The allowed distance (``>= 0``).
    distance : {"emd", "variational"}

    Returns
    -------
    ClosenessReport
        ``ok`` when every edge distribution of a split on a quasi-identifier and every
        class distribution of a node of a quasi-identifier's tree is within ``delta``
        (plus a rounding slack of 1e-9) of the global distribution.
    """
    names = _check_arguments(estimator, quasi_identifiers, delta, distance)
    report = ClosenessReport(float(delta), distance)
    columns = estimator.columns_
    for name in names:
        q = columns.index(name)
        target = global_distribution(estimator, name)
        report.global_distributions[name] = target.tolist()
        worst = 0.0
        for c, chain in enumerate(estimator.chains_):
            for position, tree in enumerate(chain.trees):
                for node in range(tree.n_nodes):
                    found: list[tuple[str, float]] = []
                    if tree.feature[node] == q:
                        edges = tree.edge_distribution(node)
                        found.append(("edges", distribution_distance(_restricted(target, len(edges)), edges,
                                                                     distance)))
                    if tree.target == q:
                        found.append(("class", distribution_distance(target, tree.class_distribution(node),
                                                                     distance)))
                    for kind, value in found:
                        report.nodes_checked += 1
                        worst = max(worst, value)
                        if value > delta + TOLERANCE:
                            report.violations.append(Violation(name, kind, c, position, node, value))
        report.max_distance[name] = worst
    return report


def _correct_tree(tree: ConditionalTree, q: int, target: np.ndarray, delta: float, distance: str,
                  step: float) -> ConditionalTree:
    counts = tree.counts.copy()
    weights = tree.child_weight.copy()
    changed = False
    for node in range(tree.n_nodes):
        if tree.feature[node] == q:
            o, width = tree.child_offset[node], tree.n_children[node]
            edges = tree.edge_distribution(node)
            goal = _restricted(target, width)
            if distribution_distance(goal, edges, distance) > (delta if delta > 0 else 0.0):
                total = weights[o:o + width].sum()
                weights[o:o + width] = _corrected(edges, goal, delta, distance, step) * (total if total > 0 else 1.0)
                changed = True
        if tree.target == q:
            d = tree.class_distribution(node)
            if distribution_distance(target, d, distance) > (delta if delta > 0 else 0.0):
                total = counts[node].sum()
                # an empty node (it borrows an ancestor's distribution) gets weight 1: edge weights are
                # stored apart from the counts, so this changes no other distribution
                counts[node] = _corrected(d, target, delta, distance, step) * (total if total > 0 else 1.0)
                changed = True
    return tree.with_changes(counts=counts, child_weight=weights) if changed else tree


def apply_t_closeness(
    estimator: DensityEstimator,
    quasi_identifiers: Sequence[str],
    delta: float,
    distance: str = "emd",
    step: float = 10.0,
) -> DensityEstimator:
    """A copy of ``estimator`` corrected to t-closeness for the quasi-identifiers (Algorithm 1).

    Parameters
    ----------
    estimator : DensityEstimator
        Left unchanged.
    quasi_identifiers : list of str
        Column names.
    delta : float
        The allowed distance from the global distribution (``>= 0``; 0 makes every
        node's distribution equal to the global one).
    distance : {"emd", "variational"}
    step : float
        The percentage of the remaining difference removed per correction, in (0, 100] and at
        least :func:`smallest_step` of ``delta`` (0.0047 for ``delta=0.01``: a correction ends
        within :data:`MAX_STEPS` steps; see the module notes).

    Returns
    -------
    DensityEstimator
        A frozen estimate (it cannot learn further) on which
        :func:`check_t_closeness` passes. A syntactic property, not differential privacy.
    """
    names = _check_arguments(estimator, quasi_identifiers, delta, distance)
    if isinstance(step, bool) or not isinstance(step, numbers.Real) or not 0.0 < step <= 100.0:  # NaN too
        raise ParameterError(f"step must lie in (0, 100], got {short_repr(step)}")
    least = smallest_step(float(delta))
    if step < least:
        raise ParameterError(f"step must lie in [{least:g}, 100] for delta={float(delta):g} (a correction must "
                             f"bring a distance of 1 below delta within {MAX_STEPS:,} steps), got {short_repr(step)}")
    current = estimator
    columns = estimator.columns_
    for _ in range(MAX_ROUNDS):
        for name in names:
            q = columns.index(name)
            target = global_distribution(current, name)
            chains = [Chain(chain.order, tuple(_correct_tree(tree, q, target, float(delta), distance, float(step))
                                               for tree in chain.trees))
                      for chain in current.chains_]
            current = current.with_chains(chains)
        if check_t_closeness(current, names, delta, distance).ok:
            return current
    # every correction ends (step >= smallest_step(delta)); the rounds converge in a few (under 10 measured)
    raise RuntimeError("t-closeness did not converge")  # pragma: no cover - see the module notes
