"""Speed and memory of the private tree-based miners on make-planted data of CMS-2-16 size.

Issue 16's targets, on 115,200 rows × 604 attributes (452 Boolean + 152 numeric) on
an idle 2-core machine, peak memory ≤ 1.5 GB each:

* ``mcmc-tree-pair`` with InTr = 20, 10,000 MCMC steps, d = 4: ≤ 10 s;
* ``alt-mcmc`` (defaults): ≤ 15 s;
* ``alt-expm`` with InTr = 1, RMIter = 20: ≤ 5 s.

Each run is a fresh child process (its own peak memory, which includes loading); the
time is that of ``fit`` (loading and the literal indexes are shown apart). Besides
the wall-clock seconds every line gives the process's user + system CPU seconds,
which other jobs on the machine disturb less. ``--profile`` adds where the time goes
(per phase: wall seconds, CPU seconds of the threads doing it, and the peak memory
when it ended); ``--scaling`` runs at ``7,200 · k`` rows (k = 1, 2, 4, 8, 16) and at
1,000,000 rows.

Usage::

    python benchmarks/bench_tree_miners.py [--rows 115200] [--only mcmc-tree-pair] [--profile]
    python benchmarks/bench_tree_miners.py --scaling [--only mcmc-tree-pair] [--sizes 7200,14400]
    python benchmarks/bench_tree_miners.py --data FOLDER   # left.csv, right.csv, types.json there
    python benchmarks/bench_tree_miners.py --data FOLDER --parameters '{"mcmc_nodes": "by-depth"}'
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

RUNS = {
    "mcmc-tree-pair": ({"init_trials": 20, "mcmc_iterations": 10_000, "depth": 4}, 10),
    "alt-mcmc": ({}, 15),
    "alt-expm": ({"init_trials": 1, "alternations": 20}, 5),
}
PEAK_MB = 1536
SCALING_ROWS = [7_200 * k for k in (1, 2, 4, 8, 16)] + [1_000_000]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _peak_mb() -> float:
    """Peak resident memory of this process in MB.

    Linux's ``ru_maxrss`` survives ``exec``: a child started by a parent that had just
    generated the data would report the parent's peak. ``VmHWM`` belongs to the
    process's own address space.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class Phases:
    """Wall and CPU seconds of the phases of a run, by wrapping their functions."""

    def __init__(self) -> None:
        self.spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.cpu: dict[str, float] = defaultdict(float)
        self.peak: dict[str, float] = {}
        self._lock = threading.Lock()
        self._depth = threading.local()

    @contextmanager
    def phase(self, name: str):
        outer = getattr(self._depth, "value", 0)
        self._depth.value = outer + 1
        # Phases run in the main thread take the process's CPU (numba's parallel loops
        # run in worker threads); the chains of a batch run in pool threads, each its own.
        clock = _cpu_seconds if threading.current_thread() is threading.main_thread() else time.thread_time
        wall, cpu = time.perf_counter(), clock()
        try:
            yield
        finally:
            self._depth.value = outer
            if outer == 0:  # nested phases count in the outer one only
                with self._lock:
                    self.spans[name].append((wall, time.perf_counter()))
                    self.cpu[name] += clock() - cpu
                    self.peak[name] = _peak_mb()

    def wrap(self, owner, attribute: str, name: str) -> None:
        function = getattr(owner, attribute)

        def wrapped(*args, **kwargs):
            with self.phase(name):
                return function(*args, **kwargs)

        setattr(owner, attribute, wrapped)

    def install(self) -> None:
        """Wrap the phases of the tree miners (import sites included)."""
        import dprm.mining.alternation as alternation
        import dprm.trees.private as private
        from dprm.data.literal_index import LiteralIndex
        from dprm.mining.private_trees import PrivateTreeMiner

        self.wrap(LiteralIndex, "__init__", "literal index")
        self.wrap(private._ChainSpace, "__init__", "chain arrays")
        self.wrap(private.ChainJob, "__init__", "chain preparation")
        self.wrap(private.ChainJob, "run", "chains")
        self.wrap(PrivateTreeMiner, "extract", "extraction")
        self.wrap(alternation, "grow_exponential_tree", "exponential trees")

    @staticmethod
    def _elapsed(spans: list[tuple[float, float]]) -> float:
        """Length of the union of time spans (threads running one phase overlap)."""
        total, reached = 0.0, float("-inf")
        for begin, end in sorted(spans):
            total += max(0.0, end - max(begin, reached))
            reached = max(reached, end)
        return total

    def table(self, fit_seconds: float) -> dict:
        """Per phase: elapsed wall seconds, CPU seconds of its threads, peak MB at its end."""
        rows = {name: {"wall": round(self._elapsed(spans), 2), "cpu": round(self.cpu[name], 2),
                       "peak_mb": self.peak[name]} for name, spans in self.spans.items()}
        in_fit = [span for name, spans in self.spans.items() if name != "load" for span in spans]
        rows["rest of fit"] = {"wall": round(fit_seconds - self._elapsed(in_fit), 2)}
        return rows


def child(left: str, right: str, types: str, algorithm: str, profile: bool, extra: dict | None = None) -> dict:
    import numpy as np

    from dprm.data import load_two_view
    from dprm.mining import make_miner
    from dprm.privacy import Accountant, SeededNoise

    phases = Phases()
    if profile:
        phases.install()
    start, cpu = time.perf_counter(), _cpu_seconds()
    with phases.phase("load"):
        data = load_two_view(left, right, types=types)
    load_seconds, load_cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    parameters = {**RUNS[algorithm][0], **(extra or {})}
    miner = make_miner(algorithm, **parameters)
    accountant = Accountant(miner.epsilon, SeededNoise(np.random.default_rng(0)))
    start, cpu = time.perf_counter(), _cpu_seconds()
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(0))
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    figures = {
        "algorithm": algorithm,
        "rows": data.n_rows,
        "parameters": parameters,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "load_seconds": round(load_seconds, 1),
        "load_cpu_seconds": round(load_cpu, 1),
        "redescriptions": len(miner.redescriptions_),
        "kept": sum(not r.pruned for r in miner.redescriptions_),
        "peak_mb": _peak_mb(),
        # same seeds, same redescriptions: compare this across versions of the code
        "digest": hashlib.sha256(json.dumps(miner.document()["redescriptions"], sort_keys=True,
                                            default=str).encode()).hexdigest()[:16],
    }
    if profile:
        figures["phases"] = phases.table(seconds)
    return figures


def run_child(folder: Path, algorithm: str, profile: bool, extra: str = "{}") -> dict:
    command = [sys.executable, __file__, "--child", str(folder / "left.csv"), str(folder / "right.csv"),
               str(folder / "types.json"), algorithm, "--parameters", extra] + (["--profile"] if profile else [])
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def write_data(rows: int, folder: str) -> None:
    """The planted table of ``rows`` rows; beyond what make-planted generates at once
    (``MAX_CELLS`` values: 827,814 rows of 604 attributes), the table of ``rows / k``
    rows ``k`` times over (the same rows repeated under new ids: the same relations,
    ``k`` times the counts).
    """
    from dprm.datasets import make_planted, write_planted
    from dprm.datasets.planted import MAX_CELLS

    repeats = -(-rows * 604 // MAX_CELLS)
    if rows % repeats:
        raise SystemExit(f"{rows:,} rows: not a multiple of the {repeats} repeats this size needs")
    data = make_planted(rows // repeats, n_left_boolean=452, n_right_numeric=152, n_planted=5, random_state=0)
    paths = write_planted(data, folder)
    block = rows // repeats
    for path in paths[:2]:  # left.csv, right.csv: the rows again, without the header, ids + k * block
        lines = path.read_bytes().split(b"\n", 1)[1].splitlines(keepends=True)
        with open(path, "ab") as out:
            for k in range(1, repeats):
                for line in lines:
                    row_id, rest = line.split(b",", 1)
                    out.write(b"%d,%s" % (int(row_id) + k * block, rest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=115_200)
    parser.add_argument("--only", choices=sorted(RUNS), action="append")
    parser.add_argument("--profile", action="store_true", help="also time the phases of each run")
    parser.add_argument("--scaling", action="store_true", help=f"run at {', '.join(map(str, SCALING_ROWS))} rows")
    parser.add_argument("--sizes", help="with --scaling: only these numbers of rows (comma-separated)")
    parser.add_argument("--data", help="a folder with left.csv, right.csv and types.json (instead of --rows)")
    parser.add_argument("--parameters", default="{}",
                        help="JSON object of miner parameters added to each run's, e.g. '{\"mcmc_nodes\": \"by-depth\"}'")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--write", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write_data(int(args.write[0]), args.write[1])
        return
    if args.child:
        print(json.dumps(child(*args.child, args.profile, json.loads(args.parameters))))
        return
    algorithms = args.only or list(RUNS)
    sizes = SCALING_ROWS if args.scaling else [args.rows]
    if args.scaling and args.sizes:
        sizes = [int(size) for size in args.sizes.split(",")]
    for rows in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(args.data) if args.data else Path(tmp)
            if not args.data:  # in a child process: the parent stays small while the runs start
                subprocess.run([sys.executable, __file__, "--write", str(rows), tmp], check=True)
            for algorithm in algorithms:
                figures = run_child(folder, algorithm, args.profile, args.parameters)
                target = RUNS[algorithm][1]
                verdict = "met" if figures["seconds"] <= target and figures["peak_mb"] <= PEAK_MB else "MISSED"
                note = f"  target <= {target} s, <= {PEAK_MB} MB: {verdict}" if figures["rows"] == 115_200 else ""
                print(f"{figures['rows']:,} rows: {json.dumps(figures)}{note}", flush=True)
            if args.data:
                break


if __name__ == "__main__":
    main()
