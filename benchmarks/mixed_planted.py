"""``planted-mixed``: planted relations in mixed-type, heavy-tailed data, from a generator of its own.

:func:`dprm.datasets.make_planted` is the generator the miners' defaults were measured on
for many sessions; a default tuned to it could miss structure of another shape. This
table is written independently of it, as a data owner's table might look: 2,500 rows;
the left view holds 20 Boolean, 6 categorical (4 to 8 categories) and 14 numeric
columns, the right view 30 numeric and 4 categorical ones; a numeric column follows a
normal, lognormal or Pareto law (background columns also Poisson counts), bounds
declared as the column's range, every column declared complete. Five relations, each on
a hidden group of 18-35 % of the rows (planted true Jaccard about 0.76-0.88), broken on one
side for 5 % of the rows:

====  ==========================================  =======================================
k     left query                                  right query
====  ==========================================  =======================================
0     ``[l_cat_0 = c0]``                          ``[r_num_0 > t]`` (upper tail)
1     ``l_bool_0 ∧ l_bool_1``                     ``[r_num_1 ≤ t]`` (lower tail)
2     ``[l_num_0 > t]``                           ``[r_num_2 > t] ∧ [r_num_3 > t]``
3     ``l_bool_2 ∨ [l_num_1 ≤ t]``                ``[r_cat_0 = x0]``
4     ``[t1 < l_num_2 ≤ t2]``                     ``[r_num_4 > t]``
====  ==========================================  =======================================

Used by ``quality_weak_signal.py --datasets planted-mixed`` (judged like the other planted
tables: a relation is found by a kept redescription of true Jaccard ≥ 0.7 whose queries
use one of its attributes on each side).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm, poisson

from dprm.queries import And, BooleanLiteral, CategoricalLiteral, NumericLiteral, Or, Query

__all__ = ["planted_mixed"]

ROWS = 2500
BROKEN = 0.05


def _law(rng: np.random.Generator, counts: bool):
    """A strictly increasing map of (0, 1) onto a numeric column's values (or a count law, not strict)."""
    kind = int(rng.integers(4 if counts else 3))
    if kind == 0:
        scale, shift = rng.uniform(5, 20), rng.uniform(-50, 100)
        return lambda u: norm.ppf(u) * scale + shift
    if kind == 1:
        sigma, scale = rng.uniform(0.8, 2.0), float(rng.choice([1, 100, 10_000]))
        return lambda u: np.exp(sigma * norm.ppf(u)) * scale
    if kind == 2:
        alpha, scale = rng.uniform(1.1, 2.0), float(rng.choice([1, 10, 1000]))
        return lambda u: ((1 - u) ** (-1 / alpha) - 1) * scale
    rate = rng.uniform(0.5, 20)
    return lambda u: poisson.ppf(u, rate)


def _broken(rng: np.random.Generator, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The group as each view sees it: on a ``BROKEN`` share of the rows one view (at random) flips it."""
    flip = rng.random(group.size) < BROKEN
    left_side = rng.random(group.size) < 0.5
    return group ^ (flip & left_side), group ^ (flip & ~left_side)


def _two_literals(rng: np.random.Generator, holds: np.ndarray, both: bool) -> tuple[np.ndarray, np.ndarray]:
    """Truths of two literals: ``both`` → their conjunction equals ``holds``; else their disjunction does."""
    n = holds.size
    pick = rng.integers(0, 3, n)
    first, second = np.zeros(n, bool), np.zeros(n, bool)
    if both:
        first[holds] = second[holds] = True
        first[~holds], second[~holds] = pick[~holds] == 1, pick[~holds] == 2
    else:
        first[holds], second[holds] = pick[holds] != 1, pick[holds] != 0
    return first, second


def planted_mixed(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, dict, list[tuple[Query, Query]]]:
    """``(left, right, types, planted)``: the table of the module docstring for one data seed."""
    rng = np.random.default_rng(seed)
    n = ROWS

    def uniform() -> np.ndarray:
        return rng.uniform(0.0005, 0.9995, n)

    def above(holds: np.ndarray, share: float) -> np.ndarray:
        """Uniform scores above ``1 − share`` where ``holds``, below it elsewhere."""
        return np.where(holds, rng.uniform(1 - share, 0.9995, n), rng.uniform(0.0005, 1 - share, n))

    boolean = {f"l_bool_{i}": rng.random(n) < rng.uniform(0.2, 0.6) for i in range(20)}
    left_categories = {f"l_cat_{i}": int(rng.integers(4, 9)) for i in range(6)}
    right_categories = {f"r_cat_{i}": int(rng.integers(3, 7)) for i in range(4)}
    categorical = {name: rng.integers(0, k, n) for name, k in {**left_categories, **right_categories}.items()}
    scores = {f"l_num_{i}": uniform() for i in range(14)} | {f"r_num_{i}": uniform() for i in range(30)}
    cuts: dict[str, list[float]] = {}  # the planted thresholds, as uniform scores

    def group() -> tuple[np.ndarray, np.ndarray]:
        return _broken(rng, rng.random(n) < rng.uniform(0.18, 0.35))

    # 0: a category against an upper tail
    on_left, on_right = group()
    k = left_categories["l_cat_0"]
    categorical["l_cat_0"] = np.where(on_left, 0, rng.integers(1, k, n))
    share = on_right.mean()
    scores["r_num_0"], cuts["r_num_0"] = above(on_right, share), [1 - share]
    # 1: a conjunction of two Booleans against a lower tail
    on_left, on_right = group()
    boolean["l_bool_0"], boolean["l_bool_1"] = _two_literals(rng, on_left, both=True)
    share = on_right.mean()
    scores["r_num_1"], cuts["r_num_1"] = 1 - above(on_right, share), [share]
    # 2: an upper tail against two upper tails at once
    on_left, on_right = group()
    share = on_left.mean()
    scores["l_num_0"], cuts["l_num_0"] = above(on_left, share), [1 - share]
    x, y = _two_literals(rng, on_right, both=True)
    scores["r_num_2"], scores["r_num_3"] = above(x, 0.4), above(y, 0.4)
    cuts["r_num_2"] = cuts["r_num_3"] = [0.6]
    # 3: a Boolean or a lower tail against a category
    on_left, on_right = group()
    a, low = _two_literals(rng, on_left, both=False)
    boolean["l_bool_2"] = a
    scores["l_num_1"], cuts["l_num_1"] = 1 - above(low, 0.3), [0.3]
    k = right_categories["r_cat_0"]
    categorical["r_cat_0"] = np.where(on_right, 0, rng.integers(1, k, n))
    # 4: an interval against an upper tail
    on_left, on_right = group()
    share, start = on_left.mean(), rng.uniform(0.2, 0.5)
    outside = rng.uniform(0.0005, 0.9995 - share, n)
    scores["l_num_2"] = np.where(on_left, rng.uniform(start, start + share, n),
                                 np.where(outside > start, outside + share, outside))
    cuts["l_num_2"] = [start, start + share]
    share = on_right.mean()
    scores["r_num_4"], cuts["r_num_4"] = above(on_right, share), [1 - share]

    columns: dict = {"row_id": {"type": "id"}}
    frames = {"l": {"row_id": np.arange(n)}, "r": {"row_id": np.arange(n)}}
    for name, truth in boolean.items():
        frames["l"][name] = truth
        columns[name] = {"type": "boolean", "complete": True}
    thresholds: dict[str, list[float]] = {}
    for name, score in scores.items():
        law = _law(rng, counts=name not in cuts)
        values = np.round(law(score), 3)
        frames[name[0]][name] = values
        columns[name] = {"type": "numeric", "bounds": [float(np.floor(values.min())), float(np.ceil(values.max()))],
                         "complete": True}
        if name in cuts:  # the planted cut in the column's values: between the rows on either side of it
            thresholds[name] = [float(np.round(law(np.float64(c)), 3)) for c in cuts[name]]
    for name, codes in categorical.items():
        prefix = "c" if name.startswith("l") else "x"
        categories = [f"{prefix}{j}" for j in range(int(codes.max()) + 1)]
        frames[name[0]][name] = np.asarray(categories)[codes]
        columns[name] = {"type": "categorical", "categories": categories, "complete": True}
    left, right = pd.DataFrame(frames["l"]), pd.DataFrame(frames["r"])
    t = thresholds
    planted: list[tuple[Query, Query]] = [
        (CategoricalLiteral("l_cat_0", "c0"), NumericLiteral("r_num_0", gt=t["r_num_0"][0])),
        (And(BooleanLiteral("l_bool_0"), BooleanLiteral("l_bool_1")), NumericLiteral("r_num_1", le=t["r_num_1"][0])),
        (NumericLiteral("l_num_0", gt=t["l_num_0"][0]),
         And(NumericLiteral("r_num_2", gt=t["r_num_2"][0]), NumericLiteral("r_num_3", gt=t["r_num_3"][0]))),
        (Or(BooleanLiteral("l_bool_2"), NumericLiteral("l_num_1", le=t["l_num_1"][0])),
         CategoricalLiteral("r_cat_0", "x0")),
        (NumericLiteral("l_num_2", gt=t["l_num_2"][0], le=t["l_num_2"][1]), NumericLiteral("r_num_4", gt=t["r_num_4"][0])),
    ]
    return left, right, {"id_column": "row_id", "columns": columns}, planted
