"""The data of the classifier comparison: categorical UCI files and their public schema.

:func:`load_dataset` reads a UCI CSV as categorical strings (``?`` and empty cells
are missing, NaN) and its target column. The *public schema* (each column's
categories, the class labels, which columns may be missing) is read from the whole
file: it stands for the declaration the data owner would publish (the categories
are the UCI ``.names`` files' values), so every method gets it for free and none
reads a domain off its training folds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError, printable_text

__all__ = [
    "UCI_TARGETS",
    "MISSING_MARKERS",
    "Schema",
    "Dataset",
    "load_dataset",
    "resolve_dataset",
    "dataset_name",
    "one_hot",
]

#: The UCI datasets of the paper and their class columns.
UCI_TARGETS: dict[str, str] = {"vote": "class", "mushroom": "edibility", "tic-tac-toe": "class"}


#: Texts that mark a missing value in the UCI files (besides the empty cell).
MISSING_MARKERS: tuple[str, ...] = ("?",)


@dataclass(frozen=True)
class Schema:
    """The public schema of a categorical dataset: what every method may know.

    Attributes
    ----------
    categories : dict of str to list of str
        Each feature's declared categories (sorted), in column order.
    classes : list of str
        The declared class labels.
    nullable : tuple of str
        The features that may be missing.
    """

    categories: dict[str, list[str]]
    classes: list[str]
    nullable: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        return list(self.categories)


@dataclass(frozen=True)
class Dataset:
    """Categorical features, class labels and their public schema.

    ``X`` holds strings with NaN for missing values; ``y`` the labels as strings.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    schema: Schema
    source: str = "<memory>"

    @property
    def n_rows(self) -> int:
        return int(len(self.y))

    def sample_rows(self, n: int, rng: np.random.Generator) -> "Dataset":
        """``n`` rows drawn at random: without replacement up to the dataset's size, with beyond.

        Examples
        --------
        >>> data = Dataset("t", pd.DataFrame({"a": ["x", "y", "x"]}), np.array(["p", "q", "p"]),
        ...                Schema({"a": ["x", "y"]}, ["p", "q"]))
        >>> data.sample_rows(7, np.random.default_rng(0)).n_rows
        7
        """
        index = rng.choice(self.n_rows, size=n, replace=n > self.n_rows)
        return Dataset(self.name, self.X.iloc[index].reset_index(drop=True), self.y[index], self.schema,
                       self.source)


def load_dataset(path: str | Path, target: str, *, name: str | None = None,
                 missing: Sequence[str] = MISSING_MARKERS) -> Dataset:
    """Read a CSV of categorical columns, its class column and the schema of the whole file.

    The schema read from the whole file stands for the data owner's public
    declaration (module docstring).

    Raises
    ------
    DataError
        A missing, empty or unreadable file, a row with more or fewer fields than the
        header, an unknown target column, no other column, missing class labels, fewer
        than two classes.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "toy.csv"
    >>> _ = path.write_text("class,a,b\\nyes,x,?\\nno,y,u\\nyes,x,v\\n")
    >>> data = load_dataset(path, "class")
    >>> data.name, data.schema.classes, data.schema.categories, data.schema.nullable
    ('toy', ['no', 'yes'], {'a': ['x', 'y'], 'b': ['u', 'v']}, ('b',))
    >>> data.X["b"].isna().tolist()
    [True, False, False]
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file", code="file_not_found", file=str(path), data_dependent=False)
    from dprm.itemsets.text_table import read_text_frame

    # the reader of `dprm itemsets` and `dprm classify`: an empty or undecodable file, a row with
    # more or fewer fields than the header, each one line naming the file (and the row)
    frame = read_text_frame(path, str(path))
    frame = frame.where(~frame.isin(list(missing)), np.nan)  # the empty cell is missing already
    if target not in frame.columns:
        raise DataError(f"{path}: no target column {target!r}; columns: {', '.join(map(str, frame.columns))}",
                        file=str(path), data_dependent=False)
    labels = frame.pop(target)
    if frame.shape[1] == 0:
        raise DataError(f"{path}: no feature column besides the target {target!r}", file=str(path),
                        data_dependent=False)
    if labels.isna().any():
        raise DataError(f"{path}: the target column {target!r} has missing values", file=str(path))
    y = labels.to_numpy(dtype=object).astype(str)
    classes = sorted(set(y.tolist()))
    if len(classes) < 2:
        raise DataError(f"{path}: the target column {target!r} has only one class", file=str(path))
    categories = {str(c): sorted(frame[c].dropna().unique().tolist()) for c in frame.columns}
    nullable = tuple(str(c) for c in frame.columns if frame[c].isna().any())
    frame.columns = [str(c) for c in frame.columns]
    # a name that is not UTF-8 is shown with its bytes as \xNN: tables, reports and seeds are UTF-8 text
    return Dataset(name or printable_text(path.stem), frame, y, Schema(categories, classes, nullable),
                   printable_text(path))


def resolve_dataset(spec: str, data_dir: str | Path) -> Dataset:
    """A dataset by name (``vote``, ``mushroom``, ``tic-tac-toe`` in ``data_dir``) or ``FILE.csv[:TARGET]``.

    A file's target defaults to ``class``.

    Examples
    --------
    >>> import tempfile
    >>> directory = Path(tempfile.mkdtemp())
    >>> _ = (directory / "toy.csv").write_text("label,a\\nyes,x\\nno,y\\n")
    >>> resolve_dataset(f"{directory}/toy.csv:label", directory).schema.classes
    ['no', 'yes']
    """
    if spec in UCI_TARGETS:
        path = Path(data_dir) / f"{spec}.csv"
        if not path.is_file():  # a named dataset: say where it was looked for and how to point elsewhere
            raise DataError(f"{path}: no such file (--data-dir DIR, or DPRM_UCI_DIR, names the folder holding "
                            f"{spec}.csv)", code="file_not_found", file=str(path), data_dependent=False)
        return load_dataset(path, UCI_TARGETS[spec], name=spec)
    path, target = _file_and_target(spec)
    return load_dataset(path, target)


def _file_and_target(spec: str) -> tuple[str, str]:
    path, _, target = spec.rpartition(":") if spec.rpartition(":")[0].endswith(".csv") else (spec, "", "")
    if not path.endswith(".csv"):
        raise ParameterError(f"unknown dataset {spec!r}: use {', '.join(UCI_TARGETS)} or FILE.csv[:TARGET]")
    return path, target or "class"


def dataset_name(spec: str) -> str:
    """The name :func:`resolve_dataset` gives ``spec``, without reading anything.

    Examples
    --------
    >>> dataset_name("vote"), dataset_name("data/toy.csv:label"), dataset_name("toy.csv")
    ('vote', 'toy', 'toy')
    """
    return spec if spec in UCI_TARGETS else printable_text(Path(_file_and_target(spec)[0]).stem)


def one_hot(X: pd.DataFrame | np.ndarray, schema: Schema) -> np.ndarray:
    """One 0/1 column per declared category, and one "missing" column per nullable feature.

    A value outside the schema gives zeros. The encoding depends on the schema only
    (it is fitted on nothing), so it can sit in front of a private model.

    Examples
    --------
    >>> schema = Schema({"a": ["x", "y"], "b": ["u"]}, ["p", "q"], nullable=("b",))
    >>> one_hot(pd.DataFrame({"a": ["x", "z"], "b": [np.nan, "u"]}), schema).tolist()
    [[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    """
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X, columns=schema.columns)
    parts = []
    for column, categories in schema.categories.items():
        values = frame[column].to_numpy(dtype=object)
        parts.append(np.stack([values == c for c in categories], axis=1) if categories
                     else np.zeros((len(values), 0), dtype=bool))
        if column in schema.nullable:
            parts.append(pd.isna(frame[column]).to_numpy()[:, None])
    return np.concatenate(parts, axis=1).astype(np.float64) if parts else np.zeros((len(frame), 0))
