"""Synthetic two-view data with planted redescriptions (``make_planted``).

In the style of scikit-learn's ``make_*`` generators: the data is random background
plus ``n_planted`` relations. Relation ``k`` has a hidden group of rows (15–35 % of
them); on the left view the group is described by a conjunction of two Boolean
attributes (or a numeric interval when the left view has no Boolean attribute), on
the right view by a numeric threshold ``x > 60`` (or a Boolean attribute when the
right view has no numeric one). Each planted attribute disagrees with its group on a
``noise`` share of the rows. Numeric values lie in ``[0, 100]``, the public bounds
written in the returned types.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from dprm.errors import ParameterError
from dprm.files import write_atomic

__all__ = ["PlantedData", "make_planted", "write_planted"]

NUMERIC_BOUNDS = (0.0, 100.0)
PLANTED_THRESHOLD = 60.0


@dataclass
class PlantedData:
    """What :func:`make_planted` returns.

    Attributes
    ----------
    left, right : pandas.DataFrame
        The two views; the first column ``row_id`` is the entity id.
    planted : list of (dict, dict)
        The planted (left, right) queries in the JSON form of the spec.
    types : dict
        A types file declaring every attribute's type and public domain.
    """

    left: pd.DataFrame
    right: pd.DataFrame
    planted: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    types: dict[str, Any] = field(default_factory=dict)


def make_planted(
    n_rows: int = 1000,
    *,
    n_left_boolean: int = 30,
    n_left_numeric: int = 0,
    n_right_boolean: int = 0,
    n_right_numeric: int = 20,
    n_planted: int = 3,
    noise: float = 0.05,
    missing: float = 0.0,
    random_state: int | np.random.Generator | None = None,
) -> PlantedData:
    """Generate a two-view dataset with planted redescriptions.

    Parameters
    ----------
    n_rows : int
        Number of entities.
    n_left_boolean, n_left_numeric, n_right_boolean, n_right_numeric : int
        Number of attributes of each type in each view.
    n_planted : int
        Number of planted relations (each uses its own attributes).
    noise : float
        Share of rows on which a planted attribute disagrees with its hidden group.
    missing : float
        Share of values (of every attribute) replaced by a missing value.
    random_state : int, Generator or None
        Seed or generator for reproducible output.

    Examples
    --------
    >>> data = make_planted(500, n_planted=2, random_state=0)
    >>> data.left.shape, data.right.shape
    ((500, 31), (500, 21))
    >>> data.planted[0][1]
    {'attr': 'r_num_0', 'gt': 60.0}
    """
    _check_sizes(n_rows, n_left_boolean, n_left_numeric, n_right_boolean, n_right_numeric, n_planted)
    if isinstance(random_state, (bool, float)) or (
            random_state is not None and not isinstance(random_state, (int, np.integer, np.random.Generator))):
        raise ParameterError(f"seed must be a non-negative integer, not {random_state!r}")
    if isinstance(random_state, (int, np.integer)) and random_state < 0:
        raise ParameterError(f"seed must be a non-negative integer, not {random_state}")
    rng = np.random.default_rng(random_state)
    if not 0 <= noise < 0.5:
        raise ParameterError(f"noise must be in [0, 0.5), not {noise}")
    if not 0 <= missing < 1:
        raise ParameterError(f"missing must be in [0, 1), not {missing}")
    left_needs = 2 * n_planted if n_left_boolean else n_planted
    right_needs = n_planted
    if (n_left_boolean or n_left_numeric) < left_needs and n_left_numeric < n_planted:
        raise ParameterError(f"the left view needs at least {left_needs} attributes for {n_planted} relations")
    if max(n_right_numeric, n_right_boolean) < right_needs:
        raise ParameterError(f"the right view needs at least {right_needs} attributes for {n_planted} relations")

    left = _background(rng, n_rows, "l", n_left_boolean, n_left_numeric)
    right = _background(rng, n_rows, "r", n_right_boolean, n_right_numeric)
    planted = []
    for k in range(n_planted):
        group = rng.random(n_rows) < rng.uniform(0.15, 0.35)
        if n_left_boolean >= 2 * n_planted:
            names = [f"l_bool_{2 * k}", f"l_bool_{2 * k + 1}"]
            left_query = _plant_conjunction(rng, left, names, group, noise)
        else:
            left_query = _plant_threshold(rng, left, f"l_num_{k}", group, noise)
        if n_right_numeric >= n_planted:
            right_query = _plant_threshold(rng, right, f"r_num_{k}", group, noise)
        else:
            right_query = _plant_conjunction(rng, right, [f"r_bool_{k}"], group, noise)
        planted.append((left_query, right_query))

    types: dict[str, Any] = {"columns": {"row_id": {"type": "id"}}}
    for frame in (left, right):
        if missing > 0:
            for name in frame.columns:
                frame.loc[rng.random(n_rows) < missing, name] = np.nan
        for name in frame.columns:
            if "_num_" in name:
                types["columns"][name] = {"type": "numeric", "bounds": list(NUMERIC_BOUNDS)}
            else:
                types["columns"][name] = {"type": "boolean"}
    ids = pd.Series(np.arange(1, n_rows + 1), name="row_id")
    left.insert(0, "row_id", ids)
    right.insert(0, "row_id", ids)
    return PlantedData(left=left, right=right, planted=planted, types=types)


#: At most this many rows: a 64-bit row index and the CSV writer stay far from any limit.
MAX_ROWS = 100_000_000
#: At most this many values (rows × attributes): about 4 GB as float64 while generating.
MAX_CELLS = 500_000_000
#: At most this many attributes per view type.
MAX_ATTRIBUTES = 100_000


def _check_sizes(n_rows: int, n_left_boolean: int, n_left_numeric: int, n_right_boolean: int,
                 n_right_numeric: int, n_planted: int) -> None:
    """Refuse sizes that are not counts or that this machine could not hold, before any work."""
    counts = {"rows": n_rows, "left-boolean": n_left_boolean, "left-numeric": n_left_numeric,
              "right-boolean": n_right_boolean, "right-numeric": n_right_numeric, "planted": n_planted}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ParameterError(f"{name} must be an integer, not {value!r}")
        if value < 0:
            raise ParameterError(f"{name} must be non-negative, not {value}")
    if n_rows < 1:
        raise ParameterError(f"rows must be at least 1, not {n_rows}")
    if n_rows > MAX_ROWS:
        raise ParameterError(f"rows must be at most {MAX_ROWS:,}, not {n_rows:,}")
    for name in ("left-boolean", "left-numeric", "right-boolean", "right-numeric"):
        if counts[name] > MAX_ATTRIBUTES:
            raise ParameterError(f"{name} must be at most {MAX_ATTRIBUTES:,}, not {counts[name]:,}")
    columns = n_left_boolean + n_left_numeric + n_right_boolean + n_right_numeric
    if n_rows * columns > MAX_CELLS:
        raise ParameterError(f"rows × attributes must be at most {MAX_CELLS:,} (the values are generated in "
                             f"memory), not {n_rows * columns:,}")


def _background(rng: np.random.Generator, n_rows: int, prefix: str, n_boolean: int, n_numeric: int) -> pd.DataFrame:
    columns: dict[str, np.ndarray] = {}
    for j in range(n_boolean):
        columns[f"{prefix}_bool_{j}"] = (rng.random(n_rows) < rng.uniform(0.05, 0.5)).astype(float)
    for j in range(n_numeric):
        values = rng.normal(rng.uniform(30, 70), rng.uniform(5, 20), n_rows)
        columns[f"{prefix}_num_{j}"] = np.round(np.clip(values, *NUMERIC_BOUNDS), 1)
    return pd.DataFrame(columns)


def _flip(rng: np.random.Generator, group: np.ndarray, noise: float) -> np.ndarray:
    return group ^ (rng.random(group.shape[0]) < noise)


def _plant_conjunction(
    rng: np.random.Generator, frame: pd.DataFrame, names: list[str], group: np.ndarray, noise: float
) -> dict[str, Any]:
    """Rows of the group get every attribute 1; the others miss at least one."""
    values = np.ones((len(group), len(names)), dtype=bool)
    outside = np.flatnonzero(~group)
    values[outside] = rng.random((outside.size, len(names))) < 0.4
    all_on = values[outside].all(axis=1)
    values[outside[all_on], rng.integers(0, len(names), all_on.sum())] = False
    for j, name in enumerate(names):
        frame[name] = _flip(rng, values[:, j], noise).astype(float)
    literals = [{"attr": name, "eq": True} for name in names]
    return literals[0] if len(literals) == 1 else {"and": literals}


def _plant_threshold(
    rng: np.random.Generator, frame: pd.DataFrame, name: str, group: np.ndarray, noise: float
) -> dict[str, Any]:
    """Rows of the (noisy) group lie above the threshold, the others below it."""
    above = _flip(rng, group, noise)
    low, high = NUMERIC_BOUNDS
    values = np.where(
        above,
        rng.uniform(PLANTED_THRESHOLD + 0.1, high, len(group)),
        rng.uniform(low, PLANTED_THRESHOLD, len(group)),
    )
    frame[name] = np.round(values, 1)
    return {"attr": name, "gt": PLANTED_THRESHOLD}


def write_planted(data: PlantedData, outdir: str | Path) -> list[Path]:
    """Write ``left.csv``, ``right.csv``, ``types.json`` and ``planted.json``.

    Returns the paths written. Boolean columns are written as 0/1. Every file is
    rendered in memory first and then written atomically (:func:`dprm.files.write_atomic`),
    so an error leaves no partial file; ``OSError`` is raised as it comes.
    """
    outdir = Path(outdir)
    contents: dict[str, bytes] = {}
    for side, frame in (("left", data.left), ("right", data.right)):
        out = frame.copy()
        for name in out.columns:
            if "_bool_" in name:
                out[name] = out[name].astype("Int8")
        table = pa.Table.from_pandas(out, preserve_index=False)
        buffer = io.BytesIO()  # plain header: the generated names need no quotes
        buffer.write((",".join(out.columns) + "\n").encode())
        pa_csv.write_csv(table, buffer, pa_csv.WriteOptions(include_header=False))
        contents[f"{side}.csv"] = buffer.getvalue()
    contents["types.json"] = (json.dumps(data.types, indent=2) + "\n").encode()
    planted = [{"left": left, "right": right} for left, right in data.planted]
    contents["planted.json"] = (json.dumps({"planted": planted}, indent=2) + "\n").encode()
    outdir.mkdir(parents=True, exist_ok=True)
    return [write_atomic(outdir / name, payload) for name, payload in contents.items()]
