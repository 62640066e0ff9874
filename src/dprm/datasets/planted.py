"""Synthetic two-view data with planted redescriptions (``make_planted``).

In the style of scikit-learn's ``make_*`` generators: the data is random background
plus ``n_planted`` relations. Relation ``k`` has a hidden group of rows (15–35 % of
them); on the left view the group is described by a conjunction of two Boolean
attributes (or a numeric interval when the left view has no Boolean attribute), on
the right view by a numeric threshold ``x > 60`` (or a Boolean attribute when the
right view has no numeric one). Each planted attribute disagrees with its group on a
``noise`` share of the rows. Numeric values lie in ``[0, 100]``, the public bounds
written in the returned types.

Relations of other kinds (``relations=``, issue 13): each kind of
:data:`RELATION_KINDS` names a shape for the view of Boolean attributes and one for
the numeric view, e.g. ``"disjunction"`` plants ``(a ∧ b) ∨ c`` against ``x > 60``
and ``"interval"`` plants ``a ∧ ¬b`` against ``40 < x ≤ 70``. A shape is a formula
over *literals*; on a view without Boolean attributes a Boolean literal becomes a
threshold ``x > 60`` on a numeric attribute, so both views may be numeric. On a
``noise`` share of the rows the relation is broken: the row's membership of the
group is flipped on one of the two views (chosen at random per row). Then, for every
row and view, the literals' truth values are drawn uniformly among the assignments
on which the view's formula equals that membership, and the attribute values are
written from the truths. So the planted queries hold exactly on the group up to the
flipped rows, whatever the number of literals (a true Jaccard of about 0.8 at 5 %
noise and groups of 15–35 % of the rows). The returned queries are the true
(planted) ones, for evaluation.
"""

from __future__ import annotations

import errno
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
from dprm.file_sets import naming, write_all

__all__ = ["PlantedData", "PLANTED_FILES", "RELATION_KINDS", "make_planted", "write_planted"]

#: The files :func:`write_planted` writes, in order.
PLANTED_FILES: tuple[str, ...] = ("left.csv", "right.csv", "types.json", "planted.json")

NUMERIC_BOUNDS = (0.0, 100.0)
PLANTED_THRESHOLD = 60.0
#: The planted interval ``40 < x ≤ 70`` of the ``"interval"`` shape.
PLANTED_INTERVAL = (40.0, 70.0)

#: Shapes of a planted query: the formula over literals ``L0, L1, ...`` as a nested
#: tuple (``("lit", i)``, ``("not", i)``, ``("and", ...)``, ``("or", ...)``,
#: ``("interval", i)``: a numeric literal ``40 < x ≤ 70``).
SHAPES: dict[str, tuple] = {
    "literal": ("lit", 0),
    "and": ("and", ("lit", 0), ("lit", 1)),
    "or": ("or", ("lit", 0), ("lit", 1)),
    "and-or": ("or", ("and", ("lit", 0), ("lit", 1)), ("lit", 2)),
    "and-not": ("and", ("lit", 0), ("not", 1)),
    "interval": ("interval", 0),
}

#: Kinds of planted relations: ``kind → (shape on the Boolean view, shape on the numeric view)``.
#: On a view of the other type the shape is written with that view's literals
#: (a Boolean literal as ``x > 60``; an interval on a Boolean-only view as ``a ∧ ¬b``).
RELATION_KINDS: dict[str, tuple[str, str]] = {
    "conjunction": ("and", "literal"),        # a ∧ b            vs  x > 60 (the default kind)
    "disjunction": ("and-or", "literal"),     # (a ∧ b) ∨ c      vs  x > 60
    "interval": ("and-not", "interval"),      # a ∧ ¬b           vs  40 < x ≤ 70
    "thresholds": ("literal", "and"),         # a                vs  x > 60 ∧ y > 60
    "threshold-or": ("or", "literal"),        # a ∨ b            vs  x > 60
}


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
    relations: list[str] | tuple[str, ...] | None = None,
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
        Share of values (of every attribute) replaced by a missing value. With none
        (``0``, the default) the types file declares every column ``complete`` (a
        public fact the data owner, here the generator, knows), so private runs print
        queries in their shortest form (docs/data.md).
    relations : list of str, optional
        Kinds of planted relations (keys of :data:`RELATION_KINDS`), one relation
        each; when given, they replace ``n_planted`` relations of the default kind
        (``n_planted`` is not used). Each relation uses its own attributes: the
        first unused ones of each view and type, in order.
    random_state : int, Generator or None
        Seed or generator for reproducible output.

    Examples
    --------
    >>> data = make_planted(500, n_planted=2, random_state=0)
    >>> data.left.shape, data.right.shape
    ((500, 31), (500, 21))
    >>> data.planted[0][1]
    {'attr': 'r_num_0', 'gt': 60.0}
    >>> data = make_planted(500, n_left_boolean=20, relations=["disjunction", "interval"], random_state=0)
    >>> data.planted[0][0]["or"][1], data.planted[1][1]
    ({'attr': 'l_bool_2', 'eq': True}, {'attr': 'r_num_1', 'gt': 40.0, 'le': 70.0})
    """
    if relations is not None:
        if isinstance(relations, str) or not all(isinstance(kind, str) for kind in relations):
            raise ParameterError(f"relations must be a list of kinds, not {relations!r}")
        unknown = [kind for kind in relations if kind not in RELATION_KINDS]
        if unknown:
            raise ParameterError(f"unknown planted relation {unknown[0]!r}; choose from: {', '.join(RELATION_KINDS)}")
        n_planted = len(relations)
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
    if relations is not None:
        return _make_relations(rng, n_rows, (n_left_boolean, n_left_numeric), (n_right_boolean, n_right_numeric),
                               list(relations), noise, missing)
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

    return _finish(rng, n_rows, left, right, planted, missing)


def _finish(rng: np.random.Generator, n_rows: int, left: pd.DataFrame, right: pd.DataFrame,
            planted: list, missing: float) -> PlantedData:
    """Missing values, the types file and the id column."""
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
            if missing == 0:
                types["columns"][name]["complete"] = True
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
        if name == "rows" and value < 1:  # one message for 0 and -5
            raise ParameterError(f"rows must be at least 1, not {value}")
        if value < 0:
            raise ParameterError(f"{name} must be non-negative, not {value}")
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


def _make_relations(rng: np.random.Generator, n_rows: int, left_sizes: tuple[int, int],
                    right_sizes: tuple[int, int], relations: list[str], noise: float, missing: float) -> PlantedData:
    """Background plus one relation per kind of ``relations`` (module docstring)."""
    views = []
    for prefix, (n_boolean, n_numeric) in (("l", left_sizes), ("r", right_sizes)):
        views.append(_View(_background(rng, n_rows, prefix, n_boolean, n_numeric), prefix, n_boolean, n_numeric))
    needs = [_View.needs(views[side], [RELATION_KINDS[kind][side] for kind in relations]) for side in (0, 1)]
    for side, (need, view) in enumerate(zip(needs, views)):
        for kind, count in need.items():
            have = view.n_boolean if kind == "bool" else view.n_numeric
            if count > have:
                name = ("left", "right")[side]
                raise ParameterError(f"the {name} view needs at least {count} "
                                     f"{'Boolean' if kind == 'bool' else 'numeric'} attributes for the planted "
                                     f"relations {', '.join(relations)}, not {have}")
    planted = []
    for kind in relations:
        group = rng.random(n_rows) < rng.uniform(0.15, 0.35)
        broken = rng.random(n_rows) < noise
        on_left = rng.random(n_rows) < 0.5
        members = (group ^ (broken & on_left), group ^ (broken & ~on_left))
        queries = [views[side].plant(rng, RELATION_KINDS[kind][side], members[side]) for side in (0, 1)]
        planted.append((queries[0], queries[1]))
    return _finish(rng, n_rows, views[0].frame, views[1].frame, planted, missing)


@dataclass
class _View:
    """One view being planted into: its frame and the next unused attribute of each type."""

    frame: pd.DataFrame
    prefix: str
    n_boolean: int
    n_numeric: int
    used_boolean: int = 0
    used_numeric: int = 0

    def shape(self, shape: str) -> tuple:
        """The formula of ``shape`` as written on this view (module docstring)."""
        if shape == "interval" and self.n_numeric == 0:
            shape = "and-not"
        return SHAPES[shape]

    def needs(self, shapes: list[str]) -> dict[str, int]:
        """Attributes of each type (``"bool"``, ``"num"``) the shapes take on this view."""
        need = {"bool": 0, "num": 0}
        for shape in shapes:
            formula = self.shape(shape)
            n_literals = len(_literal_numbers(formula))
            if formula[0] == "interval" or self.n_boolean == 0:
                need["num"] += n_literals
            else:
                need["bool"] += n_literals
        return need

    def plant(self, rng: np.random.Generator, shape: str, group: np.ndarray) -> dict[str, Any]:
        """Write attributes whose query (returned, in the spec's JSON) holds exactly on ``group``."""
        formula = self.shape(shape)
        n_literals = len(_literal_numbers(formula))
        truths = _truths(rng, formula, n_literals, group)
        numeric = formula[0] == "interval" or self.n_boolean == 0
        names = []
        for j in range(n_literals):
            if numeric:
                names.append(f"{self.prefix}_num_{self.used_numeric}")
                self.used_numeric += 1
            else:
                names.append(f"{self.prefix}_bool_{self.used_boolean}")
                self.used_boolean += 1
        negated = _negated_literals(formula)
        literals = {}
        low, high = NUMERIC_BOUNDS
        n = len(group)
        for j, name in enumerate(names):
            holds = truths[:, j]
            value_true = not (j in negated)  # the attribute's own test, before any negation
            attribute_test = holds if value_true else ~holds
            if formula[0] == "interval":
                a, b = PLANTED_INTERVAL
                inside = rng.uniform(a + 0.1, b, n)
                below = rng.uniform(low, a, n)
                above = rng.uniform(b + 0.1, high, n)
                outside = np.where(rng.random(n) < (a - low) / ((a - low) + (high - b)), below, above)
                self.frame[name] = np.round(np.where(attribute_test, inside, outside), 1)
                literals[j] = {"attr": name, "gt": a, "le": b}
            elif numeric:
                values = np.where(attribute_test, rng.uniform(PLANTED_THRESHOLD + 0.1, high, n),
                                  rng.uniform(low, PLANTED_THRESHOLD, n))
                self.frame[name] = np.round(values, 1)
                literals[j] = {"attr": name, "gt": PLANTED_THRESHOLD}
            else:
                self.frame[name] = attribute_test.astype(float)
                literals[j] = {"attr": name, "eq": True}
        return _json(formula, literals)


def _literal_numbers(formula: tuple) -> set[int]:
    if formula[0] in ("lit", "not", "interval"):
        return {formula[1]}
    return set().union(*(_literal_numbers(part) for part in formula[1:]))


def _negated_literals(formula: tuple) -> set[int]:
    if formula[0] == "not":
        return {formula[1]}
    if formula[0] in ("lit", "interval"):
        return set()
    return set().union(*(_negated_literals(part) for part in formula[1:]))


def _evaluate(formula: tuple, truths: np.ndarray) -> np.ndarray:
    """The formula on literal truths (a negated literal's truth is that of ``¬a``)."""
    if formula[0] in ("lit", "not", "interval"):
        return truths[..., formula[1]]
    parts = [_evaluate(part, truths) for part in formula[1:]]
    return np.logical_and.reduce(parts) if formula[0] == "and" else np.logical_or.reduce(parts)


def _truths(rng: np.random.Generator, formula: tuple, n_literals: int, group: np.ndarray) -> np.ndarray:
    """Literal truths, each row uniform among the assignments on which the formula
    equals the row's group membership (every shape has assignments of both values)."""
    assignments = (np.arange(2**n_literals)[:, None] >> np.arange(n_literals)[None, :]) & 1 == 1
    value = _evaluate(formula, assignments)
    chosen = np.empty((len(group), n_literals), dtype=bool)
    for member in (True, False):
        rows = np.flatnonzero(group == member)
        options = assignments[value == member]
        chosen[rows] = options[rng.integers(0, len(options), rows.size)]
    return chosen


def _json(formula: tuple, literals: dict[int, dict[str, Any]]) -> dict[str, Any]:
    if formula[0] in ("lit", "interval"):
        return literals[formula[1]]
    if formula[0] == "not":
        return {"not": literals[formula[1]]}
    return {formula[0]: [_json(part, literals) for part in formula[1:]]}


def write_planted(data: PlantedData, outdir: str | Path) -> list[Path]:
    """Write ``left.csv``, ``right.csv``, ``types.json`` and ``planted.json``.

    Returns the paths written. Boolean columns are written as 0/1. Every file is
    rendered in memory first and then the four are written all or none
    (:func:`dprm.file_sets.write_all`: a full disk leaves none of them); ``OSError`` is
    raised as it comes, naming the file. A path of the
    four that is taken by a directory (or anything but a file) raises ``OSError``
    naming it before any file is written.
    """
    outdir = Path(outdir)
    for name in PLANTED_FILES:
        target = outdir / name
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(target))
        if target.exists() and not target.is_file():
            raise FileExistsError(errno.EEXIST, "is not a regular file", str(target))
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
    made = not outdir.exists()
    with naming(outdir):
        outdir.mkdir(parents=True, exist_ok=True)
    try:
        return write_all({outdir / name: payload for name, payload in contents.items()})
    except BaseException:
        if made and not any(outdir.iterdir()):
            outdir.rmdir()  # none of the files: not the folder made for them either
        raise
