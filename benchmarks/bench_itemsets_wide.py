"""Wide tables and many declared categories: ``dprm itemsets`` and ``dprm mine -a cartwheels``, timed with digests.

Tables, written to a temporary folder (seeded, the same on every run):

* **wide**: 2,000 rows × 500 categorical columns of 2 – 4 values (each column's shares
  drawn from a Dirichlet(0.7) distribution), every column's categories declared in a
  types file;
* **few**: 4 rows of 500 such columns, declared likewise;
* **categories**: 60 rows: a column ``big`` declared with 100,000 categories (30 rows share
  one, the others drawn at random) and four columns of 2 – 3 values, as one table
  (``dprm itemsets``) and as two views, ``big, a, c`` | ``b, d`` (``dprm mine``).

In-process phases, CPU seconds (the least of ``--repeat``):

* ``samples``: the non-private estimate of *wide* (3 chains) drawing its three
  100,000-row reference samples, with nanoseconds per cell (rows × columns);
* ``private fit``: ``fit_private_estimator`` of *wide*, *few* and *categories* at ε = 1,
  ``private_method="auto"`` (the command's default), seeded.

Whole processes (``python -m dprm``, ``os.wait4``: CPU seconds, user + system, and peak
MB; run first, while this process is small: a child's peak counts its parent's memory at
the fork), each with the first 16 hex digits of the SHA-256 of its JSON output (the terminal's
when it writes none), so that a run before a change and one after can be compared
line by line; with ``../shared/data`` beside the checkout, seeded runs on mushroom (θ =
0.3, non-private and at ε = 1 with its categories declared) are digested too. With ``--listing``,
also ``dprm itemsets wide.csv --min-support 0.9 --epsilon 1`` (seeded), a private listing of
1,982,463 itemsets (session 57: 425 CPU s and 6.8 GB before).

Usage::

    python benchmarks/bench_itemsets_wide.py [--repeat 3] [--skip-processes] [--listing]
    PYTHONPATH=OLD_CHECKOUT/src python benchmarks/bench_itemsets_wide.py   # before a change
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
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
LETTERS = "abcd"


def write_wide(folder: Path, name: str, rows: int, columns: int = 500, seed: int = 0) -> tuple[Path, Path]:
    """A table of ``rows`` × ``columns`` categorical columns of 2 – 4 values and its types file, written into
    ``folder`` (made if missing, as docs/itemsets.md's ``write_wide(Path('/tmp/w'), 'wide', 2000)`` needs)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    cells, declared = [], {}
    for j in range(columns):
        k = int(rng.integers(2, 5))
        values = rng.choice(k, size=rows, p=rng.dirichlet(np.full(k, 0.7)))
        cells.append(np.array(list(LETTERS))[values])
        declared[f"c{j:03d}"] = {"type": "categorical", "categories": list(LETTERS[:k])}
    lines = [",".join(declared)] + [",".join(column[r] for column in cells) for r in range(rows)]
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / f"{name}.csv"
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    types = folder / f"{name}-types.json"
    types.write_text(json.dumps({"columns": declared}), encoding="utf-8")
    return table, types


def write_categories(folder: Path, rows: int = 60, declared: int = 100_000, seed: int = 1) -> dict[str, Path]:
    """The *categories* table (one file and two views) and its types file."""
    import numpy as np

    rng = np.random.default_rng(seed)
    names = [f"k{i:05d}" for i in range(declared)]
    big = rng.integers(0, declared, rows)
    big[: rows // 2] = big[0]
    a = rng.choice(["x", "y"], rows)
    b = np.where(a == "x", "u", rng.choice(["u", "v"], rows))
    c, d = rng.choice(["p", "q", "r"], rows), rng.choice(["s", "t"], rows)
    columns = {"big": [names[i] for i in big], "a": a, "c": c, "b": b, "d": d}
    paths = {}
    for name, keys in (("all", ["big", "a", "c", "b", "d"]), ("left", ["big", "a", "c"]), ("right", ["b", "d"])):
        lines = [",".join(keys)] + [",".join(str(columns[k][r]) for k in keys) for r in range(rows)]
        paths[name] = folder / f"categories-{name}.csv"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    types = {"big": names, "a": ["x", "y"], "c": ["p", "q", "r"], "b": ["u", "v"], "d": ["s", "t"]}
    paths["types"] = folder / "categories-types.json"
    paths["types"].write_text(json.dumps({"columns": {k: {"type": "categorical", "categories": v}
                                                      for k, v in types.items()}}), encoding="utf-8")
    return paths


def least_cpu(repeat: int, work) -> tuple[float, Any]:
    """The least CPU seconds of ``repeat`` calls of ``work()``, and its last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.process_time()
        result = work()
        best = min(best, time.process_time() - started)
    return best, result


def private_fit(table: Path, types: Path) -> Any:
    """``fit_private_estimator`` of the table at ε = 1 (``auto``, seeded), every column's categories declared."""
    import pandas as pd

    from dprm.itemsets.private import fit_private_estimator

    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    declared = json.loads(types.read_text(encoding="utf-8"))["columns"]
    return fit_private_estimator(frame, epsilon=1.0, domains={c: declared[c]["categories"] for c in frame.columns},
                                 random_state=0, min_support=0.5, private_method="auto")


def fit_digest(fit: Any) -> str:
    """A digest of a private fit: its ledger, parameters and every released tree's probabilities."""
    digest = hashlib.sha256(json.dumps(fit.privacy["ledger"]).encode() + repr(fit.parameters).encode())
    if fit.estimator is not None:
        for chain in fit.estimator.chains_:
            for tree in chain.trees:
                digest.update(tree.node_proba.tobytes())
    return digest.hexdigest()[:16]


def phases(folder: Path, repeat: int) -> None:
    """The in-process phases of the module notes (the tables written by :func:`write_tables`)."""
    from dprm.itemsets import DensityEstimator

    wide, wide_types = folder / "wide.csv", folder / "wide-types.json"
    few, few_types = folder / "few.csv", folder / "few-types.json"
    categories = {"all": folder / "categories-all.csv", "types": folder / "categories-types.json"}
    estimator = DensityEstimator(n_chains=3, random_state=0).fit(str(wide))

    def samples() -> Any:
        estimator._samples = None
        return estimator._reference_samples()

    seconds, drawn = least_cpu(repeat, samples)
    cells = sum(s.n_rows for s in drawn) * len(estimator.variables_)
    digest = hashlib.sha256(b"".join(s.bitsets.tobytes() for s in drawn)).hexdigest()[:16]
    print(f"{'samples (wide, 3 x 100,000 rows)':<44} {seconds:8.2f} CPU s  {seconds / cells * 1e9:6.1f} ns a cell  "
          f"{digest}", flush=True)
    for name, (table, types) in (("wide", (wide, wide_types)), ("few", (few, few_types)),
                                 ("categories", (categories["all"], categories["types"]))):
        seconds, fit = least_cpu(repeat, lambda: private_fit(table, types))
        print(f"{'private fit, ' + name:<44} {seconds:8.2f} CPU s  {'':>16}  {fit_digest(fit)}", flush=True)


def run_process(arguments: list[str], output: Path) -> tuple[float, float, str, int]:
    """CPU s (user + system), peak MB, the output's digest and the exit status of one ``python -m dprm`` run.

    The digest is the JSON's, or the terminal's when no JSON was written, the temporary
    folder's path written ``OUT`` in either.
    """
    process = subprocess.Popen([sys.executable, "-m", "dprm", *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    out = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    data = output.read_bytes() if output.exists() else out
    data = data.replace(str(output.parent).encode(), b"OUT")
    output.unlink(missing_ok=True)
    return (usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, hashlib.sha256(data).hexdigest()[:16],
            os.waitstatus_to_exitcode(status))


def processes(folder: Path, repeat: int, listing: bool = False) -> None:
    """The whole processes of the module notes (with ``listing``, the private listing at θ = 0.9 too)."""
    wide, wide_types = folder / "wide.csv", folder / "wide-types.json"
    few, few_types = folder / "few.csv", folder / "few-types.json"
    categories = {name: folder / f"categories-{name}.csv" for name in ("all", "left", "right")}
    category_types = folder / "categories-types.json"
    out = folder / "out.json"
    itemsets = ["itemsets", "--seed", "0", "--top", "0", "-o", str(out)]
    runs = [
        ("itemsets wide", itemsets + [str(wide), "--min-support", "0.5", "--max-length", "2"]),
        ("itemsets wide --epsilon 1", itemsets + [str(wide), "--min-support", "0.5", "--max-length", "2",
                                                  "--epsilon", "1", "--types", str(wide_types)]),
        ("itemsets few --epsilon 1", itemsets + [str(few), "--min-support", "0.5", "--max-length", "2",
                                                 "--epsilon", "1", "--types", str(few_types)]),
        ("mine categories -a cartwheels", ["mine", str(categories["left"]), str(categories["right"]), "--types",
                                           str(category_types), "-a", "cartwheels", "--seed", "0", "-o", str(out)]),
        ("itemsets categories --epsilon 1 (basis)", itemsets + [str(categories["all"]), "--min-support", "0.3",
                                                                "--epsilon", "1", "--types", str(category_types),
                                                                "--private-method", "basis"]),
        ("itemsets categories --epsilon 1 (auto)", itemsets + [str(categories["all"]), "--min-support", "0.3",
                                                               "--epsilon", "1", "--types", str(category_types)]),
    ]
    if listing:  # session 57: a private listing of about two million itemsets (minutes)
        runs.append(("itemsets wide --epsilon 1, θ = 0.9", itemsets + [str(wide), "--min-support", "0.9",
                                                                     "--epsilon", "1", "--types", str(wide_types)]))
    mushroom = SHARED / "uci" / "mushroom.csv"
    digests_only = []
    if mushroom.exists():
        import pandas as pd

        frame = pd.read_csv(mushroom, dtype=str, keep_default_na=False)
        mushroom_types = folder / "mushroom-types.json"
        mushroom_types.write_text(json.dumps({"columns": {c: {"type": "categorical",
                                                              "categories": sorted(frame[c].unique())}
                                                          for c in frame.columns}}), encoding="utf-8")
        digests_only = [("itemsets mushroom", itemsets + [str(mushroom), "--min-support", "0.3"]),
                        ("itemsets mushroom --epsilon 1", itemsets + [str(mushroom), "--min-support", "0.3",
                                                                      "--epsilon", "1", "--types",
                                                                      str(mushroom_types)])]
    for name, arguments in runs + digests_only:
        times = []
        for _ in range(1 if (name, arguments) in digests_only else repeat):
            seconds, mb, digest, code = run_process(arguments, out)
            times.append(seconds)
        print(f"{name:<44} {min(times):8.2f} CPU s  {mb:6.0f} MB  exit {code}  {digest}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-processes", action="store_true", help="only the in-process phases")
    parser.add_argument("--listing", action="store_true",
                        help="also the private run of wide at θ = 0.9 (ε = 1, seeded: 1,982,463 itemsets; minutes)")
    args = parser.parse_args()
    import dprm

    print(f"dprm from {Path(dprm.__file__).parent}; load {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_itemsets_wide_") as name:
        folder = Path(name)
        write_wide(folder, "wide", 2000)
        write_wide(folder, "few", 4)
        write_categories(folder)
        if not args.skip_processes:  # first: a child's peak memory counts the parent's at the fork
            processes(folder, args.repeat, args.listing)
        phases(folder, args.repeat)


if __name__ == "__main__":
    main()
