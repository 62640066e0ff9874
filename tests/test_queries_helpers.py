"""Shared helpers of the tests of dprm.queries: random views and random query trees.

(No tests here; the other test_queries_* modules import these helpers.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.queries import And, BooleanLiteral, CategoricalLiteral, Not, NumericLiteral, Or, Query

CATEGORIES = ("red", "green", "blue")
GRID = np.arange(0.0, 3.5, 0.5)  # numeric values and bounds share a grid: ties on bounds happen


def random_view(
    rng: np.random.Generator,
    n_rows: int = 60,
    missing: float = 0.2,
    names: dict[str, list[str]] | None = None,
) -> View:
    """A view with Boolean, categorical and numeric attributes (names per kind)."""
    names = names or {"boolean": ["b0", "b1"], "categorical": ["c0", "c1"], "numeric": ["x0", "x1"]}
    attrs = []
    for name in names["boolean"]:
        values = rng.integers(0, 2, n_rows).astype(np.int8)
        values[rng.random(n_rows) < missing] = -1
        attrs.append(Attribute(name, "left", AttributeKind.BOOLEAN, values))
    for name in names["categorical"]:
        values = rng.integers(0, len(CATEGORIES), n_rows).astype(np.int32)
        values[rng.random(n_rows) < missing] = -1
        attrs.append(Attribute(name, "left", AttributeKind.CATEGORICAL, values, Domain(categories=CATEGORIES)))
    for name in names["numeric"]:
        values = rng.choice(GRID, n_rows)
        values[rng.random(n_rows) < missing] = np.nan
        attrs.append(Attribute(name, "left", AttributeKind.NUMERIC, values, Domain(bounds=(0.0, 3.0))))
    return View("left", attrs)


def random_literal(rng: np.random.Generator, view: View) -> Query:
    a = view.attributes[rng.integers(len(view.attributes))]
    if a.kind is AttributeKind.BOOLEAN:
        return BooleanLiteral(a.name, bool(rng.integers(2)))
    if a.kind is AttributeKind.CATEGORICAL:
        return CategoricalLiteral(a.name, str(rng.choice([*CATEGORIES, "purple"])))
    keys = [k for k in ("gt", "ge", "lt", "le") if rng.random() < 0.4] or [str(rng.choice(["ge", "lt"]))]
    return NumericLiteral(a.name, **{k: float(rng.choice(GRID)) for k in keys})


def random_query(rng: np.random.Generator, view: View, depth: int = 3) -> Query:
    """A random query tree of at most ``depth`` operator levels over ``view``."""
    if depth == 0 or rng.random() < 0.3:
        return random_literal(rng, view)
    kind = rng.integers(3)
    if kind == 0:
        return Not(random_query(rng, view, depth - 1))
    parts = [random_query(rng, view, depth - 1) for _ in range(rng.integers(2, 4))]
    return And(*parts) if kind == 1 else Or(*parts)


def view_frame(view: View) -> pd.DataFrame:
    """The view as a DataFrame with pandas' own missing values (pd.NA / NaN)."""
    columns = {}
    for a in view:
        if a.kind is AttributeKind.BOOLEAN:
            columns[a.name] = pd.array([None if v < 0 else bool(v) for v in a.values], dtype="boolean")
        elif a.kind is AttributeKind.CATEGORICAL:
            columns[a.name] = pd.Categorical.from_codes(a.values, categories=list(a.domain.categories))
        else:
            columns[a.name] = pd.Series(a.values, dtype="float64")
    return pd.DataFrame(columns)


def pandas_support(q: Query, df: pd.DataFrame) -> np.ndarray:
    """An independent evaluation of ``q`` with pandas (the oracle)."""
    if isinstance(q, BooleanLiteral):
        return df[q.attr].eq(q.value).fillna(False).to_numpy(dtype=bool)
    if isinstance(q, CategoricalLiteral):
        return (df[q.attr].astype(object) == q.category).to_numpy(dtype=bool)
    if isinstance(q, NumericLiteral):
        col = df[q.attr]
        mask = col.notna()
        for key, bound in q.bounds().items():
            mask &= getattr(col, key)(bound)
        return mask.to_numpy(dtype=bool)
    if isinstance(q, Not):
        return ~pandas_support(q.query, df)
    parts = [pandas_support(c, df) for c in q.queries]
    return np.all(parts, axis=0) if isinstance(q, And) else np.any(parts, axis=0)


def test_a_compound_query_hashed_once_stays_usable_in_another_process(tmp_path) -> None:
    """``hash_once`` keeps an And/Or/Not's hash on the node; a pickled query must not carry it
    into a process whose string hashes differ (there it would be found in no set or dict)."""
    import os
    import pickle
    import subprocess
    import sys

    from dprm.queries import BooleanLiteral, NumericLiteral

    query = (BooleanLiteral("smoker") & ~NumericLiteral("age", le=40)) | BooleanLiteral("old")
    assert hash(query) == hash(query) == hash(pickle.loads(pickle.dumps(query)))
    assert {query} == {(BooleanLiteral("smoker") & ~NumericLiteral("age", le=40)) | BooleanLiteral("old")}
    (tmp_path / "q.pickle").write_bytes(pickle.dumps(query))
    script = ("import pickle, sys; from dprm.queries import BooleanLiteral as B, NumericLiteral as N; "
              f"q = pickle.loads(open({str(tmp_path / 'q.pickle')!r}, 'rb').read()); "
              "fresh = (B('smoker') & ~N('age', le=40)) | B('old'); "
              "sys.exit(0 if hash(q) == hash(fresh) and q in {fresh} else 1)")
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0
