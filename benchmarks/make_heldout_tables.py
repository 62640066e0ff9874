"""Write the held-out real tables of the weak-signal benchmark from statsmodels' bundled data.

Weak structure in heavy-tailed real data (issue 27: health-care use, incomes), on tables the
project's miners were never tuned on. The data ship inside the ``statsmodels`` wheel (no
download at run time); install it in any environment (``pip install statsmodels``) and run::

    python benchmarks/make_heldout_tables.py            # writes benchmarks/data/<name>/{left,right}.csv

Tables (ids ``p0, p1, …``; types are inferred, or the ``-bounds`` names of
``quality_weak_signal.py`` declare every numeric column with its range):

* ``randhie-s``: the RAND Health Insurance Experiment (public domain), 3,000 person-years
  drawn at random (seed 7) from 20,190: left the person and plan (coinsurance, deductible,
  income, age, sex, education, family size, health indices; 15 columns), right the year's
  health-care use (outpatient, drug, supply, mental-health, inpatient and total dollars,
  admissions, visits; 10 columns, skewness 5–14, 20–97 % zeros);
* ``randhie1``: the same columns, every person's first year (5,638 rows);
* ``randhie3``: the third year, 3,000 of its 5,548 rows drawn at random (seed 11);
* ``fair``: Fair's affairs survey (6,366 rows; left marriage rating, age, years married,
  children, religiousness; right education, occupations, affairs).
"""

from __future__ import annotations

import argparse
import importlib.util
from importlib import resources
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
PERSON = ["coins", "idp", "lpi", "fmde", "income", "xage", "female", "educdec", "num", "mhi", "disea", "physlm",
          "ghindx", "child", "black"]
USE = ["outpdol", "drugdol", "suppdol", "mentdol", "inpdol", "meddol", "totadm", "mentvis", "mdvis", "notmdvis"]


def bundled(package: str, name: str) -> pd.DataFrame:
    """A CSV file of a statsmodels dataset package (``statsmodels.datasets.<package>``)."""
    return pd.read_csv(resources.files(f"statsmodels.datasets.{package}").joinpath(name))


def write(folder: Path, left: pd.DataFrame, right: pd.DataFrame) -> None:
    """``left.csv`` and ``right.csv`` with a common ``row_id`` column first."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = pd.Series([f"p{i}" for i in range(len(left))], name="row_id")
    for side, frame in (("left", left), ("right", right)):
        pd.concat([ids, frame.reset_index(drop=True)], axis=1).to_csv(folder / f"{side}.csv", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "data")
    args = parser.parse_args()
    if importlib.util.find_spec("statsmodels") is None:  # its bundled CSV files are the tables
        raise SystemExit("statsmodels is not installed (pip install statsmodels): no table written")
    rand = bundled("randhie", "src/randhie.csv")
    tables = {
        "randhie-s": rand.sample(3000, random_state=7),
        "randhie1": rand[rand.year == 1],
        "randhie3": rand[rand.year == 3].sample(3000, random_state=11),
    }
    for name, rows in tables.items():
        write(args.out / name, rows[PERSON], rows[USE])
    fair = bundled("fair", "fair.csv")
    write(args.out / "fair", fair[["rate_marriage", "age", "yrs_married", "children", "religious"]],
          fair[["educ", "occupation", "occupation_husb", "affairs"]])
    for name in [*tables, "fair"]:
        print(args.out / name)


if __name__ == "__main__":
    main()
