"""The tables of docs/reproduction.md, printed as Markdown from experiment directories.

Reads the ``summary.csv``, ``mann_whitney.csv`` and ``runs.csv`` that ``dprm evaluate``
wrote (benchmarks/reproduce.sh runs them all) and puts the tree paper's published
MAMMAL figures beside dprm's where the paper gives them.

Usage::

    python benchmarks/reproduction_tables.py [--root out/reproduction]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

# The tree-based paper on MAMMAL: Table 3 (% significant among kept), Table 2 (ρ, at
# ε = 1), Tables 7-8 (runs with results; InTr = 1). Keys: (setting, algorithm, ε).
# "stable" = InTr 4, RMIter 1 (dprm's default for the alternation miners),
# "regular" = InTr 1, RMIter 4, "balanced" = ω 0.5.
PAPER_SIGNIFICANT = {
    ("regular", "alt-mcmc", 1.0): 91.1, ("regular", "alt-expm", 1.0): 87.8,
    ("stable", "alt-mcmc", 1.0): 82.8, ("stable", "alt-expm", 1.0): 75.0,
    ("default", "mcmc-tree-pair", 1.0): 74.3, ("balanced", "mcmc-tree-pair", 1.0): 84.1,
    ("regular", "alt-mcmc", 0.1): 17.8, ("regular", "alt-expm", 0.1): 22.7,
    ("stable", "alt-mcmc", 0.1): 17.1, ("stable", "alt-expm", 0.1): 25.4,
    ("default", "mcmc-tree-pair", 0.1): 32.7, ("balanced", "mcmc-tree-pair", 0.1): 21.2,
    ("regular", "alt-mcmc", 0.01): 28.0, ("regular", "alt-expm", 0.01): 28.3,
    ("stable", "alt-mcmc", 0.01): 27.7, ("stable", "alt-expm", 0.01): 29.3,
    ("default", "mcmc-tree-pair", 0.01): 27.3, ("balanced", "mcmc-tree-pair", 0.01): 25.4,
}
PAPER_SPEARMAN = {("regular", "alt-mcmc", 1.0): 0.82, ("regular", "alt-expm", 1.0): 0.88,
                  ("default", "mcmc-tree-pair", 1.0): 0.90}
PAPER_RUNS = {("regular", "alt-mcmc", 0.1): "10/10", ("regular", "alt-expm", 0.1): "9/10",
              ("default", "mcmc-tree-pair", 0.1): "10/10", ("regular", "alt-mcmc", 0.01): "98/100",
              ("regular", "alt-expm", 0.01): "100/100", ("default", "mcmc-tree-pair", 0.01): "100/100"}
SETTINGS = {"mammals-trees": "stable", "mammals-alt-regular": "regular", "mammals-pair-balanced": "balanced"}


def _setting(experiment: str, algorithm: str) -> str:
    setting = SETTINGS.get(experiment, "default")
    return "default" if algorithm == "mcmc-tree-pair" and setting == "stable" else setting


def _number(value: float, digits: int = 3) -> str:
    return "–" if pd.isna(value) else f"{value:.{digits}f}"


def _before_pruning(directory: Path) -> pd.DataFrame:
    """Per (algorithm, ε): runs that returned anything and the share of all returned
    redescriptions that are significant, before dprm's pruning (the paper prunes by
    noisy support only)."""
    runs = pd.read_csv(directory / "runs.csv")
    runs = runs[runs.status == "ok"]
    reds = pd.read_csv(directory / "redescriptions.csv", usecols=["algorithm", "epsilon", "true_pvalue", "true_jaccard"])
    key = ["algorithm", "epsilon"]
    returned = runs.assign(any=runs.returned > 0).groupby(key, dropna=False)["any"].agg(["sum", "size"])
    grouped = reds.assign(sig=reds.true_pvalue < 0.01).groupby(key, dropna=False)
    quality = pd.DataFrame({"sig": grouped["sig"].mean(), "jaccard": grouped["true_jaccard"].median()})
    return returned.join(quality, how="left").reset_index()


def summary_table(directory: Path, paper: bool) -> str:
    """One Markdown table: a row per (algorithm, ε) of the experiment's summary."""
    summary = pd.read_csv(directory / "summary.csv")
    before = _before_pruning(directory)
    header = ["algorithm", "ε", "runs returning any", "significant % of returned", "true J median of returned",
              "runs with kept", "kept", "significant % of kept", "Spearman ρ",
              "true J median [q1, q3]", "median abs. error J", "interval coverage", "median s"]
    if paper:
        header[8:8] = ["paper: significant %", "paper: ρ", "paper: runs with results"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in summary.itertuples(index=False):
        eps = None if pd.isna(row.epsilon) else float(row.epsilon)
        with_results = round(row.runs_with_results * row.runs_ok)
        match = before[(before.algorithm == row.algorithm)
                       & (before.epsilon.isna() if eps is None else before.epsilon == eps)].iloc[0]
        cells = [
            row.algorithm, "none" if eps is None else f"{eps:g}", f"{int(match['sum'])}/{int(match['size'])}",
            _number(100 * match["sig"], 1), _number(match["jaccard"]), f"{with_results}/{row.runs_ok}", str(row.kept),
            _number(100 * row.share_significant, 1), _number(row.spearman_rho),
            f"{_number(row.true_jaccard_median)} [{_number(row.true_jaccard_q1, 2)}, {_number(row.true_jaccard_q3, 2)}]",
            _number(row.abs_error_jaccard_median), _number(row.interval_coverage, 2), _number(row.seconds_median, 1),
        ]
        if paper:
            key = (_setting(directory.name, row.algorithm), row.algorithm, eps)
            cells[8:8] = [_number(PAPER_SIGNIFICANT.get(key, float("nan")), 1),
                          _number(PAPER_SPEARMAN.get(key, float("nan")), 2), PAPER_RUNS.get(key, "–")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mann_whitney_table(directory: Path) -> str:
    """The one-sided Mann-Whitney U tests of the best method against each other one."""
    path = directory / "mann_whitney.csv"
    if not path.exists():
        return ""
    tests = pd.read_csv(path)
    lines = ["| ε | measure | best | other | median best | median other | p |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in tests.itertuples(index=False):
        eps = "none" if pd.isna(row.epsilon) else f"{float(row.epsilon):g}"
        lines.append(f"| {eps} | {row.value} | {row.best} | {row.other} | {_number(row.median_best)} | "
                     f"{_number(row.median_other)} | {row.pvalue:.2g} |")
    return "\n".join(lines)


def scalability_table(root: Path) -> str:
    """Median seconds and peak memory per algorithm and data size (make-planted data)."""
    frames = [pd.read_csv(path) for path in sorted(root.glob("planted-*/experiment/runs.csv"))]
    if not frames:
        return ""
    runs = pd.concat(frames)
    runs = runs[runs.status == "ok"]
    table = runs.groupby(["rows", "algorithm"]).agg(seconds=("seconds", "median"), peak_mb=("peak_mb", "max"),
                                                    runs=("run", "size")).reset_index()
    lines = ["| rows | algorithm | runs | median seconds | peak MB |", "| --- | --- | --- | --- | --- |"]
    for row in table.itertuples(index=False):
        lines.append(f"| {row.rows:,} | {row.algorithm} | {row.runs} | {row.seconds:.1f} | {row.peak_mb:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("out/reproduction"))
    args = parser.parse_args()
    for directory in sorted(p for p in args.root.iterdir() if p.is_dir() and (p / "summary.csv").exists()):
        print(f"### {directory.name}\n")
        print(summary_table(directory, paper=directory.name.startswith("mammals-") and "greedy" not in directory.name))
        tests = mann_whitney_table(directory)
        if tests:
            print(f"\nMann–Whitney U (one-sided, best against each other):\n\n{tests}")
        print()
    scalability = scalability_table(args.root)
    if scalability:
        print(f"### scalability\n\n{scalability}\n")


if __name__ == "__main__":
    main()
