"""Scale-out: the in-process engine against the Ray engine with N shards, on make-planted data.

For each number of rows (default 1 M and 10 M: ``make_planted`` data, 30 Boolean left
and 20 numeric right attributes, written once as Parquet with row groups of 250,000
rows in ``--data-dir``) and each miner, one run in-process and one per ``--shards``
value on a local Ray (loopback only), each in a fresh process so that its peak memory
is its own. Every run uses the same seeded noise, so the outputs must be identical:
the script prints each output's digest and says if they differ.

Prints one line per run: load (or engine start) time, mining time, the driver's peak
resident memory and each shard actor's, the Ray engine's round trips, and the output
digest; then the Ray engine's time as a multiple of the in-process time. Issue 15's goals: at 10 M rows the Ray
engine takes at most 1.5 × the in-process mining time, and the driver's memory does not
grow with the rows.

Usage (lean first, the big one with ``nice``; 10 M rows need about 6 GB per process)::

    python benchmarks/bench_scale_out.py --rows 1000000 --shards 2,4
    nice -n 10 python benchmarks/bench_scale_out.py --rows 1000000,10000000 --shards 2,4
    python benchmarks/bench_scale_out.py --rows 1000000 --shards 2 --miners mcmc-tree-pair
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

#: Rows per Parquet row group: the unit a shard reads.
ROW_GROUP = 250_000
MINERS = {
    "serenade-es": {},
    # issue 15's tree miner: InTr 4 chains of 10,000 steps, depth 4 (uniform targets: the chains in lock-step)
    "mcmc-tree-pair": {"init_trials": 4, "mcmc_iterations": 10_000, "depth": 4},
    # the non-private baselines (not run by default): thresholds at data values merged from the shards
    "reremi": {},
    "cartwheels": {"init_trials": 10},
}
#: Run unless --miners says otherwise.
DEFAULT_MINERS = ("serenade-es", "mcmc-tree-pair")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def make_data(rows: int, folder: Path) -> Path:
    """``make_planted`` data of ``rows`` rows as Parquet (kept for later runs)."""
    target = folder / f"planted-{rows}"
    if (target / "types.json").is_file():
        return target
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dprm.datasets import make_planted

    target.mkdir(parents=True, exist_ok=True)
    planted = make_planted(rows, n_planted=3, random_state=15)
    for side, frame in (("left", planted.left), ("right", planted.right)):
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), target / f"{side}.parquet",
                       row_group_size=ROW_GROUP)
    (target / "types.json").write_text(json.dumps(planted.types))
    return target


class RssSampler:
    """The largest resident size of this process, sampled every 50 ms (from /proc: Linux)."""

    def __init__(self) -> None:
        import threading

        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.is_set():
            with open("/proc/self/statm") as handle:
                self.peak = max(self.peak, int(handle.read().split()[1]) * page)
            self._stop.wait(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def one_run(data: Path, miner_name: str, shards: int) -> dict:
    """One run in this process: ``shards`` 0 is in-process."""
    sampler = RssSampler()
    from dprm.mining import make_miner
    from dprm.privacy import Accountant, SeededNoise

    left, right, types = data / "left.parquet", data / "right.parquet", data / "types.json"
    start = time.perf_counter()
    if shards == 0:
        from dprm.data import load_two_view

        engine = load_two_view(left, right, types=types)
        close = None
    else:
        from dprm.engine.ray_engine import RayEngine
        from dprm.engine.sharding import ShardSpec

        engine = RayEngine(ShardSpec.of(left, right, types=types), shards=shards)
        close = engine.close
    loaded = time.perf_counter() - start
    private = miner_name not in ("reremi", "cartwheels")
    miner = make_miner(miner_name, **({"epsilon": 1.0} if private else {}), **MINERS[miner_name])
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    start = time.perf_counter()
    miner.fit(engine, accountant=accountant, rng=np.random.default_rng(0))
    mined = time.perf_counter() - start
    actors = engine.shard_resources() if shards else []
    if close is not None:
        close()
    document = json.dumps({"document": miner.document(), "ledger": [str(e) for e in accountant.ledger]},
                          sort_keys=True, default=str)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sampled = sampler.stop()
    return {"load_s": loaded, "mine_s": mined, "driver_peak_mb": _peak_rss() / 2**20, "driver_sampled_mb": sampled / 2**20,
            "driver_cpu_s": usage.ru_utime + usage.ru_stime,
            "round_trips": getattr(engine, "round_trips", None),
            "actor_peak_mb": [a["peak_rss"] / 2**20 for a in actors],
            "actor_cpu_s": [a["cpu_s"] for a in actors],
            "digest": hashlib.sha256(document.encode()).hexdigest()[:12],
            "redescriptions": len(miner.redescriptions_)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000", help="comma-separated row counts")
    parser.add_argument("--shards", default="2,4", help="comma-separated shard counts of the Ray runs")
    parser.add_argument("--miners", default=",".join(DEFAULT_MINERS), help=f"among {', '.join(MINERS)}")
    parser.add_argument("--data-dir", default=os.environ.get("TMPDIR", "/tmp") + "/dprm-scale-out")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="OPENBLAS_NUM_THREADS of every run (Ray's actors use 1 unless told otherwise; on a "
                             "busy machine more threads than free cores slow the products down many times)")
    parser.add_argument("--no-in-process", action="store_true", help="only the Ray runs")
    parser.add_argument("--make", nargs=2, metavar=("ROWS", "DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--one", nargs=3, metavar=("DATA", "MINER", "SHARDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make:  # a child: make the data
        make_data(int(args.make[0]), Path(args.make[1]))
        return
    if args.one:  # a child: one run, one JSON line
        print(json.dumps(one_run(Path(args.one[0]), args.one[1], int(args.one[2]))), flush=True)
        return
    environment = dict(os.environ)
    if args.blas_threads is not None:
        environment.update(OPENBLAS_NUM_THREADS=str(args.blas_threads), OMP_NUM_THREADS=str(args.blas_threads))
    print(f"BLAS threads: {environment.get('OPENBLAS_NUM_THREADS', 'library default')}", flush=True)
    for rows in (int(r) for r in args.rows.split(",")):
        start = time.perf_counter()
        # made in a child process: a child inherits its parent's resident size into its peak (ru_maxrss
        # survives exec), so this process must stay small for the runs' peaks to be their own
        subprocess.run([sys.executable, __file__, "--make", str(rows), args.data_dir], check=True, env=environment)
        data = Path(args.data_dir) / f"planted-{rows}"
        print(f"{rows:,} rows: data in {data} ({time.perf_counter() - start:.0f} s)", flush=True)
        for miner in args.miners.split(","):
            results = {}
            for shards in [*([] if args.no_in_process else [0]), *(int(s) for s in args.shards.split(","))]:
                child = subprocess.run([sys.executable, __file__, "--one", str(data), miner, str(shards)],
                                       capture_output=True, text=True, env=environment)
                if child.returncode != 0:
                    print(f"  {miner} shards={shards}: failed: {child.stderr.strip().splitlines()[-1:]}", flush=True)
                    continue
                result = json.loads(child.stdout.strip().splitlines()[-1])
                results[shards] = result
                engine = "in-process" if shards == 0 else f"ray x{shards}"
                actors = ", ".join(f"{m:.0f}" for m in result["actor_peak_mb"])
                cpu = ", ".join(f"{c:.0f}" for c in result["actor_cpu_s"])
                print(f"  {miner} {engine}: load/start {result['load_s']:.1f} s, mine {result['mine_s']:.1f} s, "
                      f"driver peak {result['driver_peak_mb']:.0f} MB (sampled "
                      f"{result.get('driver_sampled_mb', float('nan')):.0f} MB), driver CPU {result['driver_cpu_s']:.0f} s"
                      + (f", actors peak [{actors}] MB, actors CPU [{cpu}] s" if actors else "")
                      + (f", {result['round_trips']:,} round trips" if result.get("round_trips") else "")
                      + f", {result['redescriptions']} redescriptions, output {result['digest']}", flush=True)
            if 0 in results:
                for shards, result in results.items():
                    if shards:
                        same = "same output" if result["digest"] == results[0]["digest"] else "DIFFERENT OUTPUT"
                        print(f"  {miner} ray x{shards} / in-process mining time: "
                              f"{result['mine_s'] / results[0]['mine_s']:.2f} ({same})", flush=True)


if __name__ == "__main__":
    main()
