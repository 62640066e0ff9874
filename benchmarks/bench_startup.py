"""Start-up cost of a run: ``dprm mine`` on MAMMAL, end to end from the shell, per private miner.

Each run is a fresh ``python -m dprm mine LEFT RIGHT --types ... --epsilon 1`` process
(so it pays for Python, the imports, numba's cache and the mining), measured with
``os.wait4``: wall time, the child's own CPU time (user + system: compare these
between runs made at the same moment on a shared machine) and its peak memory.

Three states of numba's cache (a temporary ``NUMBA_CACHE_DIR`` for the last two):

* **warm**: the cache in use (after one untimed run of each miner), ``--repeat`` runs;
  with the ahead-of-time build of the small-run kernels (:mod:`dprm.precompiled`,
  made by ``dprm warm-cache``) and again without it (``DPRM_PRECOMPILED=0``: numba's
  cache only);
* **fresh install**: an empty cache and no build (a temporary ``NUMBA_CACHE_DIR`` and
  ``DPRM_PRECOMPILED_DIR``), then ``dprm warm-cache`` (what the Makefile's set-up
  runs; its time is printed apart), then one run of each miner; the cache files are
  listed before and after the runs, and a run that had to compile anything (a new
  file) is flagged: the install step must leave nothing to compile;
* **cold**: an empty cache, no build and no warm-up (what a run cost before the cache).

And the import breakdown of the default miner's run (``python -X importtime``):
self time summed per top-level package. With ``--phases N``: the CPU seconds of each
phase of a run (``benchmarks/startup_phases.py``), medians of N runs per miner.

With ``--server``: the time from a job's submission to its result (an in-process
:class:`~dprm.server.supervisor.Supervisor` on SQLite, MAMMAL registered, the default
mcmc-tree-pair parameters), one job at a time, with the warm fork server and with a
new process per job.

Targets (issue 16): ≤ 1 s warm and ≤ 3 s on a fresh install, for every private miner.

Usage::

    python benchmarks/bench_startup.py [--repeat 5] [--miners default,alt-mcmc] [--skip-cold] [--phases 3]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAMMALS = ROOT.parent / "shared" / "data" / "mammals"
TYPES = ROOT / "tests" / "data" / "mammals-types.json"
MINERS = ("default", "mcmc-tree-pair", "alt-mcmc", "alt-expm", "serenade-cs", "serenade-es")


def mine_command(miner: str, out: Path, data: Path, types: Path) -> list[str]:
    command = [sys.executable, "-m", "dprm", "mine", str(data / "left.csv"), str(data / "right.csv"),
               "--types", str(types), "--epsilon", "1", "--output", str(out)]
    return command if miner == "default" else command + ["--algorithm", miner]


def timed(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command``; its wall seconds, own CPU seconds and peak memory (MB)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}\n{error}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "mb": usage.ru_maxrss / 1024}


def cache_files(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*") if p.suffix in (".nbi", ".nbc")}


def row(label: str, runs: list[dict[str, float]]) -> str:
    walls = [r["wall"] for r in runs]
    return (f"{label:<16} {statistics.median(walls):7.2f} {min(walls):7.2f} "
            f"{statistics.median(r['cpu'] for r in runs):8.2f} {max(r['mb'] for r in runs):8.0f}")


HEADER = f"{'miner':<16} {'wall s':>7} {'min s':>7} {'CPU s':>8} {'peak MB':>8}"


def import_breakdown(out: Path, data: Path, types: Path, top: int) -> None:
    command = [sys.executable, "-X", "importtime"] + mine_command("default", out, data, types)[1:]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    by_package: dict[str, float] = defaultdict(float)
    total = 0.0
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not match:
            continue
        self_us, cumulative_us, indent, name = match.groups()
        by_package[name.split(".")[0]] += int(self_us) / 1e6
        if len(indent) == 1:
            total += int(cumulative_us) / 1e6
    print(f"\nimports of the default miner's run: {total:.2f} s in all (self time per package, "
          f"python -X importtime)")
    for name, seconds in sorted(by_package.items(), key=lambda item: -item[1])[:top]:
        print(f"  {name:<20} {seconds:6.3f}")


def phases(miners: list[str], repeat: int, out: Path, data: Path, types: Path) -> None:
    """CPU seconds per phase of a run (benchmarks/startup_phases.py), medians of ``repeat`` runs."""
    script = str(Path(__file__).with_name("startup_phases.py"))
    table: dict[str, dict[str, float]] = {}
    for miner in miners:
        runs: dict[str, list[float]] = defaultdict(list)
        for _ in range(repeat):
            command = [sys.executable, script] + mine_command(miner, out, data, types)[3:]
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
            line = next(l for l in done.stderr.splitlines() if l.startswith("PHASES "))
            for part in line[len("PHASES "):].split(" | "):
                name, seconds = part.rsplit(" ", 1)
                runs[name].append(float(seconds))
        table[miner] = {name: statistics.median(values) for name, values in runs.items()}
    names = list(next(iter(table.values())))
    print(f"\nCPU seconds per phase (medians of {repeat} runs, benchmarks/startup_phases.py)")
    print(f"{'phase':<20}" + "".join(f"{m:>15}" for m in table))
    for name in names:
        print(f"{name:<20}" + "".join(f"{table[m].get(name, 0.0):15.3f}" for m in table))


def server_latency(jobs_per_mode: int, directory: Path) -> None:
    """Submission → result of one job at a time, forked from the warm fork server and in a new interpreter."""
    sys.path.insert(0, str(ROOT / "tests"))
    from server_support import setup_server_db
    from sqlalchemy import select

    from dprm.server import jobs
    from dprm.server.database import Database
    from dprm.server.supervisor import Supervisor
    from dprm.server.tables import jobs as jobs_table
    from dprm.server.units import epsilon_units

    url = str(directory / "server.db")
    setup_server_db(url, directory, budgets={"alice": "1000"}, mammals=True)
    db = Database(url)
    print(f"\nserver: submission to result of a mcmc-tree-pair job on mammals, one at a time ({jobs_per_mode} each)")
    try:
        for warm in (True, False):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            supervisor = Supervisor(db, workers=1, poll=0.05, warm=warm)
            supervisor.round()
            time.sleep(8.0)  # the fork server's warm-up happens before the first job on a server
            seconds = []
            for _ in range(jobs_per_mode):
                body = {"dataset": "mammals", "algorithm": "mcmc-tree-pair", "epsilon": "1", "parameters": {}}
                start = time.perf_counter()
                row, _ = jobs.submit(db, 1, 2, algorithm="mcmc-tree-pair", parameters={}, units=epsilon_units(1),
                                     dummy=False, dummy_rows=None, idempotency_key=None,
                                     digest=jobs.request_digest(body))
                while True:
                    supervisor.round()
                    with db.read() as connection:
                        status = connection.execute(select(jobs_table.c.status)
                                                    .where(jobs_table.c.id == row.id)).scalar()
                    if status != "running" and status != "queued":
                        break
                    time.sleep(0.05)
                seconds.append(time.perf_counter() - start)
                if status != "done":
                    raise SystemExit(f"job {row.id} ended {status}")
                time.sleep(8.0)
            server = supervisor.fork_server
            supervisor.stop()
            if server is not None:
                server.process.wait(timeout=60)  # reaped: its CPU and its children's count below
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / jobs_per_mode
            label = "forked" if warm else "new process"
            print(f"  {label:<12} median {statistics.median(seconds):5.2f} s  "
                  f"(each: {', '.join(f'{s:.2f}' for s in seconds)}); worker CPU {cpu:.2f} s per job "
                  f"(with the fork server's warm-up)", flush=True)
    finally:
        db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="Timed warm runs per miner.")
    parser.add_argument("--miners", default=",".join(MINERS), help="Comma-separated; 'default' = no --algorithm.")
    parser.add_argument("--data", type=Path, default=MAMMALS, help="Folder with left.csv and right.csv.")
    parser.add_argument("--types", type=Path, default=TYPES)
    parser.add_argument("--skip-cold", action="store_true", help="Only the warm runs and the imports.")
    parser.add_argument("--phases", type=int, default=0, metavar="N",
                        help="Also the CPU seconds per phase of a run, medians of N runs per miner.")
    parser.add_argument("--server", type=int, default=0, metavar="N",
                        help="Also time N server jobs forked from the warm fork server and in new interpreters.")
    args = parser.parse_args()
    miners = [m.strip() for m in args.miners.split(",") if m.strip()]
    with tempfile.TemporaryDirectory(prefix="dprm-bench-startup-") as temporary:
        out = Path(temporary) / "out.json"
        print(f"dprm mine on {args.data} (--epsilon 1), {args.repeat} warm runs per miner; "
              f"medians of wall and CPU (user + system) seconds")
        for title, env in (("warm cache and precompiled kernels", None),
                           ("warm cache, no precompiled kernels (DPRM_PRECOMPILED=0)",
                            dict(os.environ, DPRM_PRECOMPILED="0"))):
            print(f"\n{title}\n" + HEADER)
            for miner in miners:
                command = mine_command(miner, out, args.data, args.types)
                timed(command, env)  # warms the cache this process uses, untimed
                print(row(miner, [timed(command, env) for _ in range(args.repeat)]), flush=True)
        if not args.skip_cold:
            cache = Path(temporary) / "numba-cache"
            env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), DPRM_PRECOMPILED_DIR=str(Path(temporary) / "build"))
            install = timed([sys.executable, "-m", "dprm", "warm-cache"], env)
            warmed = cache_files(cache)
            print(f"\nfresh install: dprm warm-cache took {install['wall']:.1f} s wall, {install['cpu']:.1f} s CPU "
                  f"({len(warmed)} cache files)\n" + HEADER + "  compiled")
            for miner in miners:
                result = timed(mine_command(miner, out, args.data, args.types), env)
                new = cache_files(cache) - warmed
                print(row(miner, [result]) + f"  {len(new) or 'nothing'}", flush=True)
                warmed |= new
            print("\ncold cache, no warm-up (each miner alone)\n" + HEADER)
            for miner in miners:
                cold = Path(temporary) / f"cold-{miner}"
                result = timed(mine_command(miner, out, args.data, args.types),
                               dict(os.environ, NUMBA_CACHE_DIR=str(cold), DPRM_PRECOMPILED_DIR=str(cold)))
                print(row(miner, [result]), flush=True)
        import_breakdown(out, args.data, args.types, top=12)
        if args.phases:
            phases(miners, args.phases, out, args.data, args.types)
        if args.server:
            server_latency(args.server, Path(temporary))


if __name__ == "__main__":
    main()
