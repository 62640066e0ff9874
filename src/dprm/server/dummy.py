"""Dummy data: rows synthesised from a dataset's public schema only (no budget).

Every attribute is drawn independently and uniformly over its declared domain:
Boolean 0/1, a categorical attribute's declared categories, a numeric attribute's
declared bounds (two decimals). Nothing comes from the rows, so dummy data costs
no budget and may be shown in full; it has the private dataset's shape (names,
types, domains) and none of its structure. Analysts run a job or a primitive on it
first (``"dummy": true``) to check their requests, as Lomas' dummy datasets allow.

An answer computed on dummy rows is no differentially private release of the data:
it touches no private row, and of its own rows (public) it may show anything. Its
privacy block says so in the spec's terms (:func:`dummy_privacy`): ``"guarantee":
"none"``, ``"private": false`` and the reason :data:`DUMMY_REASON`; the rest (the
ε the run's mechanisms used, their ledger) stays as the run wrote it. A ``pure-dp``
label there read as if the real rows had been used under ε-DP.

Examples
--------
>>> schema = {"format": "dprm.schema/1", "id_column": "id", "views": {
...     "left": [{"name": "smoker", "type": "boolean"},
...              {"name": "state", "type": "categorical", "categories": ["CA", "NY"]}],
...     "right": [{"name": "age", "type": "numeric", "bounds": [0, 120]}]}}
>>> left, right = dummy_frames(schema, 5, seed=0)
>>> list(left.columns), list(right.columns), len(left)
(['id', 'smoker', 'state'], ['id', 'age'], 5)
>>> bool(right["age"].between(0, 120).all()), set(left["state"]) <= {"CA", "NY"}
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dprm.json_values import plain_json

__all__ = ["MAX_DUMMY_ROWS", "DEFAULT_DUMMY_ROWS", "DUMMY_REASON", "dummy_frames", "dummy_data", "dummy_rows_json",
           "dummy_privacy"]

#: The reason of a dummy answer's privacy block (its guarantee is ``none``).
DUMMY_REASON = ("computed on dummy data (rows synthesised from the public schema, nothing from the private rows): "
                "not a differentially private release of the data, and none is needed")

#: Bounds of the number of dummy rows a request may ask for.
MAX_DUMMY_ROWS = 20_000
DEFAULT_DUMMY_ROWS = 1_000


def dummy_frames(schema: dict[str, Any], rows: int, seed: int | None = None,
                 ignored: dict[str, list[str]] | None = None) -> tuple[Any, Any]:
    """The two views as pandas DataFrames (id column first when the schema has one).

    ``ignored`` lists, per view, columns the types file ignores (filled with empty
    text so that the types file's names all exist).
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    frames = []
    for view in ("left", "right"):
        columns: dict[str, Any] = {}
        if schema.get("id_column"):
            columns[schema["id_column"]] = [f"d{i + 1}" for i in range(rows)]
        for entry in schema["views"][view]:
            kind = entry["type"]
            if kind == "boolean":
                columns[entry["name"]] = rng.integers(0, 2, size=rows).astype(np.int64)
            elif kind == "categorical":
                categories = np.asarray(entry["categories"], dtype=object)
                columns[entry["name"]] = categories[rng.integers(0, len(categories), size=rows)]
            else:
                low, high = (float(b) for b in entry["bounds"])
                columns[entry["name"]] = np.round(rng.uniform(low, high, size=rows), 2).clip(low, high)
        for name in (ignored or {}).get(view, []):
            columns[name] = [""] * rows
        frames.append(pd.DataFrame(columns))
    return frames[0], frames[1]


def _ignored(types: dict[str, Any], schema: dict[str, Any]) -> dict[str, list[str]]:
    """Columns the types file ignores (they are in neither view of the schema)."""
    names = {entry["name"] for view in schema["views"].values() for entry in view}
    ignored = []
    for name, entry in (types.get("columns") or {}).items():
        kind = entry if isinstance(entry, str) else entry.get("type")
        if str(kind).lower() == "ignore" and name not in names:
            ignored.append(name)
    return {"left": ignored, "right": []}


def dummy_data(record: Any, rows: int, seed: int | None = None) -> Any:
    """Dummy :class:`~dprm.data.TwoViewData` of a registered dataset, loaded like the real one."""
    from dprm.data import TypesSpec, load_two_view

    left, right = dummy_frames(record.schema, rows, seed, _ignored(record.types, record.schema))
    spec = TypesSpec.from_mapping(record.types, source=f"types of dataset {record.name}")
    return load_two_view(left, right, types=spec, id_column=record.schema.get("id_column"))


def dummy_rows_json(schema: dict[str, Any], rows: int, seed: int | None = None) -> dict[str, Any]:
    """Dummy rows as JSON: per view, the column names and the rows as lists."""
    left, right = dummy_frames(schema, rows, seed)
    out: dict[str, Any] = {"rows": rows, "seed": seed, "views": {}}
    for view, frame in (("left", left), ("right", right)):
        out["views"][view] = {"columns": list(frame.columns),
                              "rows": [[plain_json(v) for v in row] for row in frame.itertuples(index=False)]}
    return out


def dummy_privacy(block: dict[str, Any]) -> dict[str, Any]:
    """The privacy block of an answer computed on dummy data: ``block`` (the run's own,
    in the spec's key order) with ``guarantee`` ``none``, ``private`` false and
    :data:`DUMMY_REASON` first among its reasons; every other key as it was.

    Examples
    --------
    >>> block = {"epsilon": 0.5, "neighbouring": "add-remove-one-row", "guarantee": "pure-dp", "private": True,
    ...          "reasons": [], "ledger": [{"step": "cells", "mechanism": "discrete-laplace histogram",
    ...                                     "epsilon": 0.5}]}
    >>> out = dummy_privacy(block)
    >>> out["guarantee"], out["private"], out["reasons"] == [DUMMY_REASON], out["ledger"] == block["ledger"]
    ('none', False, True, True)
    >>> list(out) == list(block)
    True
    """
    from dprm.privacy.accountant import NO_GUARANTEE

    reasons = [DUMMY_REASON] + [r for r in block.get("reasons", []) if r != DUMMY_REASON]
    out = {}
    for key, value in block.items():
        out[key] = {"guarantee": NO_GUARANTEE, "private": False, "reasons": reasons}.get(key, value)
    for key, value in (("guarantee", NO_GUARANTEE), ("private", False), ("reasons", reasons)):
        out.setdefault(key, value)
    return out
