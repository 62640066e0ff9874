"""Wall, CPU and peak memory of ``dprm mine`` at ε = 1 on larger tables, every private miner.

Runs the command line (``python -m dprm mine``) as a child process per run, with
``--seed 0`` so that a run's output can be compared across versions of the code: each
line gives the wall seconds, the child's user + system CPU seconds, its peak resident
memory (``ru_maxrss`` of that child, from ``wait4``) and a digest of the output
document's redescriptions and ledger (the parts a refactoring must not change).

Tables:

* generated (``--rows 10000,100000,1000000`` × ``--columns 10,50``): ``c`` columns in
  each view, half numeric with heavy tails (log-normal, Pareto, counts of a
  negative binomial) and half categorical (3 to 12 categories, skewed), with a few
  planted relations between the views (a right column that follows a left one), and a
  types file declaring every column's public domain (numeric bounds from the data, a
  ``log`` transform on the non-negative heavy-tailed ones; the declared categories);
* the real tables in ``../shared/data`` (``--real``): mammals, nmes1988, rwas, spi, with
  a types file made from the data the same way (a researcher's run, not the owner's
  declaration).

A run over ``--timeout`` seconds is stopped and shown as such; a peak over 4,096 MB is
flagged. Figures of session 58 (2 cores shared with a load of about 10, so CPU seconds,
not wall; the digests equal before and after the histogram counting of the initial
targets' scores, :mod:`dprm.mining.initial_targets`)::

    table          miner     CPU-s before → after   peak MB before → after
    100,000 × 10   default   17.2 → 16.6            504 → 508
    100,000 × 10   alt-mcmc  22.2 → 21.2            466 → 473
    100,000 × 50   default   39.5 → 16.8–20.4       511 → 557–563
    100,000 × 50   alt-mcmc  50.1 → 22.7            605 → 611
    1,000,000 × 10 default   (not run) → 81.1       (not run) → 941
    100,000 × 50   serenade-cs / -es: stopped after 900 s wall (68 / 76 CPU-s) at 3.3 GB

Serenade's initial-pair counts from joint code histograms instead of a (literals ×
rows) mask matrix (``TableCounter.pair_intersections``; digests equal where the old
code finished)::

    table          miner        CPU-s before → after   peak MB before → after
    20,000 × 50    serenade-cs  16.7 → 11.5            568 → 446
    20,000 × 50    serenade-es  22.3 → 13.2            582 → 432
    100,000 × 10   serenade-cs  12.0 → 3.7             796 → 334
    100,000 × 10   serenade-es  11.7 → 3.4             803 → 339
    100,000 × 50   serenade-cs  stopped (68) → 20.4    3,300 → 493
    100,000 × 50   serenade-es  stopped (76) → 19.7    3,300 → 503

Usage::

    python benchmarks/bench_mine_scale.py --rows 10000,100000 --columns 10,50
    python benchmarks/bench_mine_scale.py --rows 1000000 --columns 10 --only default
    python benchmarks/bench_mine_scale.py --real
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
REAL = ["mammals", "nmes1988", "rwas", "spi"]
ALGORITHMS = ["default", "alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-cs", "serenade-es"]
LIMIT_MB = 4096


def _numeric(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    kind = k % 3
    if kind == 0:
        return np.round(rng.lognormal(2.0, 1.5, n), 3)
    if kind == 1:
        return np.round(rng.pareto(1.5, n) * 10.0, 3)
    return rng.negative_binomial(1, 0.1, n).astype(float)


def generate(rows: int, columns: int, folder: Path, seed: int = 0) -> None:
    """Write left.csv, right.csv and types.json of a generated table into ``folder``."""
    rng = np.random.default_rng(seed)
    types: dict = {"id_column": "id", "columns": {}}
    views = {}
    latent = rng.random(rows)  # planted: a right column follows a left one through it
    for side in ("l", "r"):
        frame = {"id": np.arange(rows)}
        for k in range(columns):
            name = f"{side}{k}"
            if k % 2 == 0:
                values = _numeric(rng, rows, k // 2)
                if k < 4:  # planted numeric: ranks follow the latent variable, with noise
                    order = np.argsort(np.argsort(latent + 0.3 * rng.random(rows)))
                    values = np.sort(values)[order]
                frame[name] = values
                types["columns"][name] = {"type": "numeric", "bounds": [0.0, float(values.max())],
                                          "transform": "log"}
            else:
                levels = 3 + (k * 7) % 10
                weights = 1.0 / np.arange(1, levels + 1)
                codes = rng.choice(levels, size=rows, p=weights / weights.sum())
                if k < 4:  # planted categorical: the top level follows the latent variable
                    codes = np.where(latent + 0.2 * rng.random(rows) > 0.9, levels - 1, codes)
                categories = [f"c{j}" for j in range(levels)]
                frame[name] = np.array(categories, dtype=object)[codes]
                types["columns"][name] = {"type": "categorical", "categories": categories}
        views[side] = pd.DataFrame(frame)
    views["l"].to_csv(folder / "left.csv", index=False)
    views["r"].to_csv(folder / "right.csv", index=False)
    (folder / "types.json").write_text(json.dumps(types))


def real_types(name: str, folder: Path) -> Path:
    """A types file for a shared table, its domains taken from the data."""
    from dprm.data import load_two_view

    data = load_two_view(SHARED / name / "left.csv", SHARED / name / "right.csv", duplicate_names="rename")
    columns: dict = {}
    for attribute in list(data.left) + list(data.right):
        kind = str(attribute.kind)
        if kind == "numeric":
            values = np.asarray(attribute.values, dtype=float)
            low, high = float(np.nanmin(values)), float(np.nanmax(values))
            columns[attribute.name] = {"type": "numeric", "bounds": [low, high]}
        elif kind == "categorical":
            columns[attribute.name] = {"type": "categorical", "categories": list(attribute.domain.categories)}
        else:
            columns[attribute.name] = "boolean"
    path = folder / f"{name}-types.json"
    path.write_text(json.dumps({"columns": columns}))
    return path


def run(left: Path, right: Path, types: Path, algorithm: str, timeout: float, out: Path) -> dict:
    """One ``dprm mine`` child: wall, CPU and peak memory, and the output's digest."""
    command = [sys.executable, "-m", "dprm", "mine", str(left), str(right), "--types", str(types),
               "--epsilon", "1", "--seed", "0", "-o", str(out), "--duplicate-columns", "rename"]
    if algorithm != "default":
        command += ["-a", algorithm]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + timeout
    status, usage = 0, None
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            child.kill()
            pid, status, usage = os.wait4(child.pid, 0)
            child.returncode = -9
            return {"algorithm": algorithm, "timeout": timeout, "cpu": round(usage.ru_utime + usage.ru_stime, 1),
                    "peak_mb": round(usage.ru_maxrss / 1024)}
        time.sleep(0.05)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace").strip().splitlines() if child.stderr else []
    figures = {"algorithm": algorithm, "exit": child.returncode, "wall": round(wall, 1),
               "cpu": round(usage.ru_utime + usage.ru_stime, 1), "peak_mb": round(usage.ru_maxrss / 1024)}
    if child.returncode == 0:
        document = json.loads(out.read_text())
        kept = {"redescriptions": document.get("redescriptions"),
                "ledger": document.get("privacy", {}).get("ledger")}
        figures["redescriptions"] = len(document.get("redescriptions") or [])
        figures["digest"] = hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]
    else:
        figures["error"] = error[-1] if error else ""
    return figures


def report(label: str, figures: dict) -> None:
    flag = "  OVER 4 GB" if figures.get("peak_mb", 0) > LIMIT_MB else ""
    print(f"{label}: {json.dumps(figures)}{flag}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000,100000,1000000", help="rows of the generated tables")
    parser.add_argument("--columns", default="10,50", help="columns of each view of the generated tables")
    parser.add_argument("--only", action="append", choices=ALGORITHMS)
    parser.add_argument("--real", action="store_true", help="the shared real tables instead")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a run is stopped")
    parser.add_argument("--keep", help="keep the generated tables and outputs in this folder")
    args = parser.parse_args()
    algorithms = args.only or ALGORITHMS
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.real:
            for name in REAL:
                types = real_types(name, folder)
                for algorithm in algorithms:
                    figures = run(SHARED / name / "left.csv", SHARED / name / "right.csv", types, algorithm,
                                  args.timeout, folder / f"{name}-{algorithm}.json")
                    report(name, figures)
            return
        for rows in (int(r) for r in args.rows.split(",")):
            for columns in (int(c) for c in args.columns.split(",")):
                table = folder / f"{rows}x{columns}"
                table.mkdir(exist_ok=True)
                if not (table / "types.json").exists():
                    generate(rows, columns, table)
                for algorithm in algorithms:
                    figures = run(table / "left.csv", table / "right.csv", table / "types.json", algorithm,
                                  args.timeout, table / f"{algorithm}.json")
                    report(f"{rows:,} rows, {columns}+{columns} columns", figures)


if __name__ == "__main__":
    main()
