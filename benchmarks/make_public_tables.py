"""Two-view tables from public data shipped with Python packages, for `quality_weak_signal.py`.

Writes ``benchmarks/data/<name>/left.csv`` and ``right.csv`` (a ``row_id`` column
first, no types file: the benchmark reads them as a user would without one):

* ``h-bcancer``: scikit-learn's breast-cancer table (569 rows): the 10 mean and 10
  standard-error measurements against the 10 worst ones;
* ``h-digits``: scikit-learn's 8 × 8 digits (1,797 rows): the pixels of the left half
  against those of the right half (pixels with more than two values);
* ``h-vote`` (435 rows: the party and 8 votes against the other 8) and ``h-mushroom``
  (8,124 rows: edibility and the first 11 attributes against the other 11), from the
  UCI files in ``../shared/data/uci`` (categorical: every value a category);
* ``h-anes96`` (944 rows: demographics against political positions) and ``h-star98``
  (303 rows: a school district's make-up against its test results), where statsmodels
  is installed (it is not one of dprm's dependencies; its CSV files are read directly).

Usage::

    python benchmarks/make_public_tables.py
    python benchmarks/quality_weak_signal.py --datasets h-bcancer,h-star98,h-anes96 --epsilons 1,0.3,0.1 --runs 5
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "data"
UCI = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci"


def write(name: str, left: pd.DataFrame, right: pd.DataFrame) -> None:
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    ids = np.arange(len(left))
    for frame, file in ((left.copy(), "left.csv"), (right.copy(), "right.csv")):
        frame.insert(0, "row_id", ids)
        frame.to_csv(folder / file, index=False)
    print(f"{folder}: {len(left)} rows, {left.shape[1]} + {right.shape[1]} columns")


def statsmodels_csv(name: str, **read) -> pd.DataFrame | None:
    spec = importlib.util.find_spec("statsmodels")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "datasets" / name / f"{name}.csv"
    return pd.read_csv(path, **read) if path.exists() else None


def main() -> None:
    # Only -h/--help: the script takes no options (--help used to write every table).
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    from sklearn.datasets import load_breast_cancer, load_digits

    cancer = load_breast_cancer(as_frame=True).frame.drop(columns="target")
    write("h-bcancer", cancer[[c for c in cancer if c.startswith("mean") or c.endswith("error")]],
          cancer[[c for c in cancer if c.startswith("worst")]])
    pixels = pd.DataFrame(load_digits().data.astype(int), columns=[f"p{r}{c}" for r in range(8) for c in range(8)])
    pixels = pixels[[c for c in pixels if pixels[c].nunique() > 2]]
    write("h-digits", pixels[[c for c in pixels if int(c[2]) < 4]], pixels[[c for c in pixels if int(c[2]) >= 4]])
    for name, file, split in (("h-vote", "vote.csv", 9), ("h-mushroom", "mushroom.csv", 12)):
        table = pd.read_csv(UCI / file, dtype=str, keep_default_na=False)
        write(name, table.iloc[:, :split], table.iloc[:, split:])
    anes = statsmodels_csv("anes96", sep="\t")
    if anes is None:
        print("statsmodels is not installed: h-anes96 and h-star98 not written")
        return
    anes.columns = [c.strip("'") for c in anes.columns]
    write("h-anes96", anes[["popul", "TVnews", "age", "educ", "income"]],
          anes[["selfLR", "ClinLR", "DoleLR", "PID", "vote"]])
    star = statsmodels_csv("star98")
    write("h-star98", star[["LOWINC", "PERASIAN", "PERBLACK", "PERHISP", "PERMINTE", "AVYRSEXP", "AVSALK", "PERSPENK",
                            "PTRATIO", "PCTAF", "PCTCHRT", "PCTYRRND"]], star[["MATHTOT", "PR50M"]])


if __name__ == "__main__":
    main()
