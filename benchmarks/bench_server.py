"""Latency of the secured server under concurrent analysts, on SQLite and PostgreSQL.

Starts ``dprm serve`` on loopback with a fresh database (a SQLite file; a throw-away
PostgreSQL cluster where the binaries exist), registers mammals
(``../shared/data/mammals``, types in ``tests/data/mammals-types.json``), creates 50
analysts with large budgets, and measures, per operation:

* ``budget``: ``GET /v1/budget`` (authentication, one read);
* ``dry-run``: ``POST /v1/jobs`` with ``dry_run`` (the miner's validation, no charge);
* ``statistics``: ``POST /v1/primitives/redescription-statistics`` on mammals
  (a charge, the files re-hashed, the 2×2 histogram in a pool process, the ledger).

Each operation is run twice: by 50 concurrent clients (one analyst each; every
client sends its next request ``--think-ms`` after the last answer, jittered; 0 is a
closed loop) for ``--seconds``, and by one client alone (the latency without
queueing). Reported: requests, throughput, p50 / p90 / p99 / max in milliseconds.

The issue's goals: budget p99 ≤ 20 ms on SQLite; statistics p50 ≤ 50 ms on mammals.

With ``--load wrk`` the 50 clients are wrk's connections (a C load generator, Debian
package ``wrk``; a Lua script gives each request the next analyst's token and waits a
uniform 0.5–1.5 × ``--think-ms`` between a connection's requests), so the figures are
not inflated by 50 Python clients sharing the server's two cores; latencies are wrk's
(its percentiles of the whole request, on loopback).

Run: ``.venv/bin/python benchmarks/bench_server.py [--seconds 10] [--think-ms 100]
[--clients 50] [--databases sqlite,postgresql] [--primitive-processes 2] [--load python|wrk]
[--processes N] [--operations budget,dry-run,statistics]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

MAMMALS = ROOT.parent / "shared" / "data" / "mammals"
TYPES = ROOT / "tests" / "data" / "mammals-types.json"

STATS_BODY = {"dataset": "mammals", "epsilon": "0.001", "left": {"attr": "Moose", "eq": True},
              "right": {"attr": "tmin_01", "le": -5}}
DRY_BODY = {"dataset": "mammals", "algorithm": "mcmc-tree-pair", "epsilon": 1, "dry_run": True,
            "parameters": {"depth": 3, "init_trials": 4}}
OPERATIONS = {
    "budget": ("GET", "/v1/budget", None),
    "dry-run": ("POST", "/v1/jobs", DRY_BODY),
    "statistics": ("POST", "/v1/primitives/redescription-statistics", STATS_BODY),
}


def setup(url: str, clients: int) -> list[str]:
    from dprm.server import accounts, budget
    from dprm.server.database import Database
    from dprm.server.datasets import register_dataset
    from dprm.server.units import epsilon_units

    db = Database(url)
    db.migrate()
    register_dataset(db, "mammals", MAMMALS / "left.csv", MAMMALS / "right.csv", TYPES)
    tokens = []
    with db.write() as connection:
        for i in range(clients):
            tokens.append(accounts.add_analyst(connection, f"analyst{i}"))
            budget.set_budget(connection, i + 1, 1, epsilon_units(100_000))
    db.dispose()
    return tokens


async def run_clients(base: str, tokens: list[str], operation: str, seconds: float, think: float) -> list[float]:
    import httpx

    method, path, body = OPERATIONS[operation]
    latencies: list[float] = []
    errors: list[int] = []
    deadline = time.perf_counter() + seconds

    async def client(token: str, seed: int) -> None:
        rng = random.Random(seed)
        async with httpx.AsyncClient(base_url=base, timeout=60, verify=False,
                                     headers={"Authorization": f"Bearer {token}"}) as http:
            await asyncio.sleep(rng.uniform(0, think or 0.01))
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                response = await http.request(method, path, json=body)
                latencies.append((time.perf_counter() - start) * 1000.0)
                if response.status_code >= 300:
                    errors.append(response.status_code)
                if think:
                    await asyncio.sleep(rng.uniform(0.5, 1.5) * think)

    await asyncio.gather(*(client(t, i) for i, t in enumerate(tokens)))
    if errors:
        print(f"    {len(errors)} errors: {sorted(set(errors))}")
    return latencies


def server_times(url: str, operation: str, start: float, end: float) -> list[float]:
    """The requests' durations inside the server (the audit log's, from the middleware)."""
    from sqlalchemy import and_, select

    from dprm.server.database import Database
    from dprm.server.tables import audit

    action = {"budget": "budget", "dry-run": "dry-run-job", "statistics": "redescription-statistics"}[operation]
    time.sleep(0.3)  # the audit log is written every 50 ms
    db = Database(url, pool_size=1)
    with db.read() as connection:
        values = list(connection.execute(select(audit.c.duration_ms).where(and_(
            audit.c.action == action, audit.c.at >= start, audit.c.at <= end))).scalars())
    db.dispose()
    return values or [float("nan")]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))]


def report(name: str, latencies: list[float], seconds: float) -> None:
    print(f"  {name:<28} n={len(latencies):>6}  {len(latencies) / seconds:7.1f}/s  "
          f"p50 {percentile(latencies, 50):7.1f}  p90 {percentile(latencies, 90):7.1f}  "
          f"p99 {percentile(latencies, 99):7.1f}  max {max(latencies):7.1f}  mean {statistics.fmean(latencies):6.1f} ms")


def _lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run_wrk(base: str, tokens: list[str], operation: str, seconds: float, think_ms: float) -> str:
    """wrk's latency distribution for ``operation`` by ``len(tokens)`` connections."""
    import json
    import subprocess

    method, path, body = OPERATIONS[operation]
    low, high = max(1, int(think_ms * 0.5)), max(1, int(think_ms * 1.5))
    script = "\n".join([
        "tokens = {" + ", ".join(_lua_string(t) for t in tokens) + "}",
        "local counter = 0",
        "request = function()",
        "  counter = counter + 1",
        "  local headers = {[\"Authorization\"] = \"Bearer \" .. tokens[(counter % #tokens) + 1],",
        "                   [\"Content-Type\"] = \"application/json\"}",
        f"  return wrk.format({_lua_string(method)}, {_lua_string(path)}, headers, "
        f"{_lua_string(json.dumps(body)) if body is not None else 'nil'})",
        "end",
        f"delay = function() return math.random({low}, {high}) end" if think_ms > 0 else "",
        "done = function(summary, latency, requests)",
        "  io.write(string.format(\"RESULT %d %d %d %.3f %.3f %.3f %.3f\\n\", summary.requests,",
        "    summary.errors.status, summary.duration, latency:percentile(50) / 1000, latency:percentile(90) / 1000,",
        "    latency:percentile(99) / 1000, latency.max / 1000))",
        "end",
    ])
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        done = subprocess.run(["wrk", "-t2", f"-c{len(tokens)}", f"-d{seconds:g}s", "-s", handle.name, base + "/"],
                              capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(handle.name)
    line = next((row for row in done.stdout.splitlines() if row.startswith("RESULT")), None)
    if line is None:
        return f"wrk failed: {done.stderr.strip() or done.stdout.strip()}"
    requests, bad, micros, p50, p90, p99, top = line.split()[1:]
    rate = int(requests) / (int(micros) / 1e6)
    return (f"n={int(requests):>6}  {rate:7.1f}/s  p50 {float(p50):7.1f}  p90 {float(p90):7.1f}  "
            f"p99 {float(p99):7.1f}  max {float(top):7.1f} ms  (non-2xx: {bad})")


def bench(label: str, url: str, args: argparse.Namespace) -> None:
    import httpx
    from server_support import Served

    tokens = setup(url, args.clients)
    extra = ["--rate", "100000", "--burst", "100000", "--primitive-processes", str(args.primitive_processes),
             "--processes", str(args.processes)]
    with Served(url, workers=0, extra=extra) as server:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {tokens[0]}"}) as warm:
            for name, (method, path, body) in OPERATIONS.items():  # warm caches: data loaded in the pool
                for _ in range(args.primitive_processes * 3):
                    warm.request(method, path, json=body)
        if args.load == "wrk":
            print(f"{label}: {args.clients} wrk connections, think {args.think_ms:g} ms (uniform ±50 %), "
                  f"{args.seconds:g} s per operation (latencies measured by wrk)")
            for name in OPERATIONS:
                start = time.time()
                print(f"  {name + f' ({args.clients} clients)':<28} "
                      + run_wrk(server.url, tokens, name, args.seconds, args.think_ms))
                report("  server side", server_times(url, name, start, time.time()), args.seconds)
            return
        print(f"{label}: {args.clients} clients, think {args.think_ms:g} ms, {args.seconds:g} s per operation "
              f"(latencies in ms, measured by the clients)")
        for name in args.operations.split(","):
            start = time.time()
            latencies = asyncio.run(run_clients(server.url, tokens, name, args.seconds, args.think_ms / 1000))
            report(f"{name} ({args.clients} clients)", latencies, args.seconds)
            report(f"  server side", server_times(url, name, start, time.time()), args.seconds)
            start = time.time()
            alone = asyncio.run(run_clients(server.url, tokens[:1], name, min(args.seconds, 5.0), 0.0))
            report(f"{name} (1 client)", alone, min(args.seconds, 5.0))
            report(f"  server side", server_times(url, name, start, time.time()), min(args.seconds, 5.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--think-ms", type=float, default=100.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--primitive-processes", type=int, default=2)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--processes", type=int, default=1, help="API processes (dprm serve --processes)")
    parser.add_argument("--operations", default=",".join(OPERATIONS), help="which of " + ", ".join(OPERATIONS))
    parser.add_argument("--load", choices=("python", "wrk"), default="python",
                        help="who sends the requests: 50 asyncio clients in this process, or wrk")
    args = parser.parse_args()
    if not (MAMMALS / "left.csv").is_file():
        sys.exit(f"mammals not found at {MAMMALS}")
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    for database in args.databases.split(","):
        if database == "sqlite":
            folder = Path(tempfile.mkdtemp(prefix="dprm-bench-"))
            try:
                bench("SQLite (WAL)", str(folder / "server.db"), args)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        elif database == "postgresql":
            from server_support import postgres_cluster

            try:
                with postgres_cluster() as url:
                    bench("PostgreSQL", url, args)
            except BaseException as error:  # pytest.skip outside pytest: no binaries
                if type(error).__name__ == "Skipped":
                    print(f"PostgreSQL: skipped ({error})")
                else:
                    raise


if __name__ == "__main__":
    main()
