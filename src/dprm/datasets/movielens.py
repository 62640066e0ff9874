"""The paper's movielens table for density-estimate itemset mining (Geilke & Kramer 2017).

Built from MovieLens 100K (``users.csv``, ``movies.csv``, ``ratings.csv``; GroupLens
terms: research use, no redistribution, so the files are read from where the user keeps
them and nothing is shipped). As in the paper's evaluation (Section VII):

* one row per **rating** (100,000 rows; the paper's supports of 0.00001 are single
  rows of 100,000 instances, and it notes that every user gave at least 20 ratings);
* the user's **age group**, binned into the paper's four groups ``0-25``, ``26-50``,
  ``51-75``, ``76-100``, and the user's **occupation** (21 values): the
  quasi-identifiers of the paper's t-closeness experiment;
* the rated movie's **genres**: one column per genre (19, named as in ``movies.csv``)
  holding ``"1"`` when the movie has the genre and ``"0"`` otherwise (the paper's
  ``¬genre`` items are the ``"0"`` values).

``genres=`` keeps a subset of the genre columns (the paper's variants mov02 / mov03
have fewer variables). :func:`movielens_types` gives the public domains as a dprm
types file (the age groups, the 21 occupations of ``u.occupation``, ``0``/``1``).

Examples
--------
>>> from pathlib import Path
>>> root = Path("../shared/data/movielens")
>>> if root.is_dir():
...     table = load_movielens(root, genres=["Action", "Comedy"])
...     print(table.shape, list(table.columns))
... else:
...     print((100000, 4), ['age_group', 'occupation', 'Action', 'Comedy'])
(100000, 4) ['age_group', 'occupation', 'Action', 'Comedy']
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError

__all__ = ["AGE_GROUPS", "OCCUPATIONS", "GENRES", "QUASI_IDENTIFIERS", "load_movielens", "movielens_types"]

#: The paper's age groups (inclusive bounds).
AGE_GROUPS: tuple[str, ...] = ("0-25", "26-50", "51-75", "76-100")
_AGE_EDGES = (25, 50, 75, 100)
#: MovieLens 100K's occupations (``u.occupation``; public).
OCCUPATIONS: tuple[str, ...] = (
    "administrator", "artist", "doctor", "educator", "engineer", "entertainment", "executive",
    "healthcare", "homemaker", "lawyer", "librarian", "marketing", "none", "other", "programmer",
    "retired", "salesman", "scientist", "student", "technician", "writer",
)
#: The 19 genres (``u.genre``), as the columns of ``movies.csv``.
GENRES: tuple[str, ...] = (
    "unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary",
    "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller",
    "War", "Western",
)
#: The paper's quasi-identifiers.
QUASI_IDENTIFIERS: tuple[str, ...] = ("age_group", "occupation")


def _read(path: Path, columns: Sequence[str]) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"{path}: no such file (MovieLens 100K: users.csv, movies.csv, ratings.csv)",
                        code="file_not_found", file=str(path), data_dependent=False)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise DataError(f"{path}: no column {missing[0]!r}", file=str(path), column=missing[0], data_dependent=False)
    return table


def load_movielens(directory: str | Path, *, genres: Sequence[str] | None = None,
                   with_user: bool = False) -> pd.DataFrame:
    """The ratings table: ``age_group``, ``occupation`` and one ``0``/``1`` column per genre.

    Parameters
    ----------
    directory : path
        Folder with ``users.csv``, ``movies.csv`` and ``ratings.csv``.
    genres : sequence of str, optional
        Genre columns to keep (default: all 19, in :data:`GENRES` order).
    with_user : bool, default False
        Also keep ``user_id`` (first): who rated, to count the people an itemset
        describes in an evaluation (not a variable to learn).

    Returns
    -------
    pandas.DataFrame
        One row per rating, in the order of ``ratings.csv``; every value a string.
    """
    chosen = list(GENRES if genres is None else genres)
    unknown = [g for g in chosen if g not in GENRES]
    if unknown:
        raise ParameterError(f"unknown genre {unknown[0]!r}; genres: {', '.join(GENRES)}")
    root = Path(directory)
    users = _read(root / "users.csv", ["user_id", "age", "occupation"])
    movies = _read(root / "movies.csv", ["movie_id", *chosen])
    ratings = _read(root / "ratings.csv", ["user_id", "movie_id"])
    age = pd.to_numeric(users["age"], errors="coerce")
    if age.isna().any() or (age < 0).any() or (age > _AGE_EDGES[-1]).any():
        raise DataError(f"{root / 'users.csv'}: column 'age' holds a value outside 0-100", column="age")
    group = np.searchsorted(np.asarray(_AGE_EDGES), age.to_numpy(), side="left")
    users = pd.DataFrame({"user_id": users["user_id"], "age_group": np.asarray(AGE_GROUPS, dtype=object)[group],
                          "occupation": users["occupation"]})
    table = ratings[["user_id", "movie_id"]].merge(users, on="user_id", how="left", validate="many_to_one")
    table = table.merge(movies[["movie_id", *chosen]], on="movie_id", how="left", validate="many_to_one")
    if table[["age_group", *chosen]].isna().any().any():
        raise DataError(f"{root / 'ratings.csv'}: a rating names a user or movie that is not listed", file=str(root))
    keep = (["user_id"] if with_user else []) + ["age_group", "occupation", *chosen]
    return table[keep].reset_index(drop=True)


def movielens_types(genres: Sequence[str] | None = None) -> dict[str, Any]:
    """The public domains of :func:`load_movielens`'s columns as a dprm types file (JSON-able).

    Examples
    --------
    >>> types = movielens_types(["Drama"])
    >>> types["columns"]["age_group"]["categories"], types["columns"]["Drama"]["categories"]
    (['0-25', '26-50', '51-75', '76-100'], ['0', '1'])
    """
    columns: dict[str, Any] = {
        "age_group": {"type": "categorical", "categories": list(AGE_GROUPS)},
        "occupation": {"type": "categorical", "categories": list(OCCUPATIONS)},
    }
    for genre in (GENRES if genres is None else genres):
        columns[genre] = {"type": "categorical", "categories": ["0", "1"]}
    return {"columns": columns}
