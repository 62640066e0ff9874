"""A bounded soak test of the secured server: many clients, random worker kills, the books checked.

For each database (a SQLite file; a throw-away PostgreSQL cluster on loopback, as the
tests make one) it starts ``dprm serve`` on 127.0.0.1 with the small dataset ``tiny``
(200 rows, ``tests/server_support.tiny_views``) and ``--analysts`` analysts, then runs
``--phases`` phases of ``--phase-seconds`` each. In a phase ``--clients`` asyncio clients
(one analyst each, round robin) send, after a think time of 0-2x ``--think-ms``:

* 40 % ``GET /v1/budget`` (the latency reported: p50 / p99);
* 20 % ``POST /v1/primitives/redescription-statistics`` (ε = 0.001);
* 2 % ``POST /v1/jobs`` (alt-expm on tiny, ε = 0.01: a real job in a worker process);
* 18 % ``GET /v1/jobs`` or ``GET /v1/jobs/{id}`` of one of the client's jobs;
* 20 % a web page (``/ui/datasets``, ``/ui/jobs``) in the client's signed-in session.

Meanwhile a killer sends SIGKILL to a random job process of the server (else to its
fork server, which is then replaced) every
``--kill-every`` seconds on average (uniform 0.5-1.5x). After every phase the clients
stop, the queued and running jobs are waited for (at most 120 s), and the books are
checked straight in the database:

* for every budget, ``spent`` = the exact sum of its ledger rows plus the charges
  still reserved (jobs queued or running when the wait ended; with none left,
  ``spent`` = the ledger's sum);
* no answer was 500 or above (and none was lost: every request got an answer);
* no audit record was lost: the audit rows added in the phase = the requests sent.

It stops by itself after ``--phases x --phase-seconds`` per database (plus the waits);
everything listens on loopback only. Run:

    .venv/bin/python benchmarks/soak_server.py [--phase-seconds 60] [--phases 10] [--clients 40]
        [--databases sqlite,postgresql] [--workers 2] [--kill-every 10] [--think-ms 200]

Exit code 1 when a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

STATS = {"dataset": "tiny", "epsilon": "0.001", "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}}
JOB = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.01", "parameters": {"init_trials": 1, "depth": 1}}


def setup(url: str, folder: Path, analysts: int) -> list[str]:
    from server_support import setup_server_db

    return list(setup_server_db(url, folder, budgets={f"a{i}": "1000000" for i in range(analysts)}).values())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


class Phase:
    """What the clients of one phase saw."""

    def __init__(self) -> None:
        self.sent = 0
        self.statuses: Counter[int] = Counter()
        self.lost = 0  # requests without an answer
        self.failures: Counter[str] = Counter()  # why
        self.budget_ms: list[float] = []


async def client(base: str, token: str, seed: int, deadline: float, think: float, phase: Phase) -> None:
    import httpx

    rng = random.Random(seed)
    jobs: list[str] = []
    # Connections idle for 2 s are not reused: the server closes them after 5 s (a client, or
    # a proxy, that reuses one as it closes sees the request fail without an answer).
    # verify=False: plain HTTP on loopback, and no CA bundle loaded per client (seconds of CPU for 80
    # clients on a loaded machine, taken from the phase).
    limits = httpx.Limits(keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits, verify=False,
                                 headers={"Authorization": f"Bearer {token}"}) as api, \
            httpx.AsyncClient(base_url=base, timeout=120, limits=limits, verify=False) as web:

        async def ask(http: httpx.AsyncClient, method: str, path: str, **kw: object) -> httpx.Response | None:
            phase.sent += 1
            try:
                answer = await http.request(method, path, **kw)
            except httpx.HTTPError as error:
                phase.lost += 1
                phase.failures[f"{method} {path.split('?')[0][:30]}: {type(error).__name__}"] += 1
                return None
            phase.statuses[answer.status_code] += 1
            return answer

        page = await ask(web, "GET", "/ui/signin")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1) if page is not None else ""
        await ask(web, "POST", "/ui/signin", data={"csrf": csrf, "token": token})
        while time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(0, 2 * think))
            draw = rng.random()
            if draw < 0.40:
                start = time.perf_counter()
                answer = await ask(api, "GET", "/v1/budget")
                if answer is not None and answer.status_code == 200:
                    phase.budget_ms.append((time.perf_counter() - start) * 1000)
            elif draw < 0.60:
                await ask(api, "POST", "/v1/primitives/redescription-statistics", json=STATS)
            elif draw < 0.62:
                answer = await ask(api, "POST", "/v1/jobs", json=JOB)
                if answer is not None and answer.status_code in (200, 201):
                    jobs.append(answer.json()["id"])
            elif draw < 0.80:
                await ask(api, "GET", f"/v1/jobs/{rng.choice(jobs)}" if jobs and rng.random() < 0.7 else "/v1/jobs")
            else:
                await ask(web, "GET", rng.choice(["/ui/datasets", "/ui/jobs"]))


def worker_pids(server_pid: int) -> list[int]:
    """The server's job processes (forked by its fork server, or new interpreters), or else its fork server."""
    from server_support import children

    busy, servers = [], []
    for pid in children(server_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"dprm.server.fork_server" in command:
            servers.append(pid)
            busy.extend(children(pid))
        elif b"dprm.server.worker" in command:
            busy.append(pid)
    return busy or servers


async def killer(server_pid: int, every: float, deadline: float, rng: random.Random, kills: list[int]) -> None:
    while True:
        pause = rng.uniform(0.5, 1.5) * every
        if time.monotonic() + pause >= deadline:
            return
        await asyncio.sleep(pause)
        pids = worker_pids(server_pid)
        if pids:
            victim = rng.choice(pids)
            try:
                os.kill(victim, signal.SIGKILL)
                kills.append(victim)
            except ProcessLookupError:
                pass


def books(url: str) -> dict[str, int]:
    """The database's state: audit rows, budgets whose spent differs from their ledger sum,
    charges still reserved, jobs not finished."""
    from sqlalchemy import func, select

    from dprm.server.database import Database
    from dprm.server.tables import audit, budgets, charges, jobs, ledger

    db = Database(url, pool_size=1)
    with db.read() as connection:
        if not db.is_sqlite:  # one snapshot for every table: a job finishing between two reads is not a mismatch
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        sums: dict[tuple[int, int], Fraction] = {}
        for row in connection.execute(select(ledger.c.analyst_id, ledger.c.dataset_id, ledger.c.epsilon_exact)):
            key = (row.analyst_id, row.dataset_id)
            sums[key] = sums.get(key, Fraction(0)) + Fraction(row.epsilon_exact)
        for row in connection.execute(select(charges.c.analyst_id, charges.c.dataset_id, charges.c.epsilon_units)
                                      .where(charges.c.status == "reserved")):  # no ledger row yet
            key = (row.analyst_id, row.dataset_id)
            sums[key] = sums.get(key, Fraction(0)) + Fraction(row.epsilon_units, 10**9)
        wrong = sum(1 for row in connection.execute(select(budgets))
                    if Fraction(row.spent_units, 10**9) != sums.get((row.analyst_id, row.dataset_id), Fraction(0)))
        state = {
            "audit": connection.execute(select(func.count()).select_from(audit)).scalar(),
            "wrong_budgets": wrong,
            "reserved": connection.execute(select(func.count()).select_from(charges)
                                           .where(charges.c.status == "reserved")).scalar(),
            "unfinished": connection.execute(select(func.count()).select_from(jobs)
                                             .where(jobs.c.status.in_(["queued", "running"]))).scalar(),
            "spent_charges": connection.execute(select(func.count()).select_from(charges)
                                                .where(charges.c.status == "spent")).scalar(),
            "worker_died": connection.execute(select(func.count()).select_from(jobs)
                                              .where(jobs.c.error_code == "worker_died")).scalar(),
        }
    db.dispose()
    return state


def soak(label: str, url: str, folder: Path, args: argparse.Namespace) -> bool:
    from server_support import Served

    tokens = setup(url, folder, args.analysts)
    extra = ["--rate", "1000", "--burst", "1000", "--max-active-jobs", "1000"]
    ok = True
    all_budget: list[float] = []
    total_sent = 0
    total_seconds = 0.0
    with Served(url, workers=args.workers, extra=extra) as server:
        print(f"{label}: {args.phases} phases of {args.phase_seconds:g} s, {args.clients} clients, "
              f"{args.workers} workers, a kill every ~{args.kill_every:g} s; load {os.getloadavg()[0]:.1f}")
        rng = random.Random(args.seed)
        time.sleep(0.5)  # the start's /health requests are audited
        before = books(url)["audit"]
        for number in range(1, args.phases + 1):
            phase = Phase()
            kills: list[int] = []
            start = time.monotonic()
            deadline = start + args.phase_seconds

            async def run() -> None:
                await asyncio.gather(
                    killer(server.process.pid, args.kill_every, deadline, rng, kills),
                    *(client(server.url, tokens[i % len(tokens)], rng.randrange(2**32), deadline,
                             args.think_ms / 1000, phase) for i in range(args.clients)))

            asyncio.run(run())
            seconds = time.monotonic() - start
            wait_until = time.monotonic() + 120
            state = books(url)
            while (state["unfinished"] or state["reserved"]) and time.monotonic() < wait_until:
                time.sleep(1.0)
                state = books(url)
            time.sleep(0.5)  # the audit thread writes every 50 ms
            state = books(url)
            audited = state["audit"] - before
            before = state["audit"]
            errors = sum(n for status, n in phase.statuses.items() if status >= 500)
            good = errors == 0 and phase.lost == 0 and audited == phase.sent and state["wrong_budgets"] == 0
            ok &= good
            all_budget += phase.budget_ms
            total_sent += phase.sent
            total_seconds += seconds
            print(f"  phase {number}: {phase.sent} requests in {seconds:.0f} s ({phase.sent / seconds:.0f}/s), "
                  f"statuses {dict(sorted(phase.statuses.items()))}, {phase.lost} unanswered {dict(phase.failures)}, "
                  f"{len(kills)} workers killed ({state['worker_died']} jobs failed worker_died so far); audit rows {audited} (sent {phase.sent}); budgets off the ledger (+ reserved) "
                  f"{state['wrong_budgets']}, charges reserved {state['reserved']}, jobs unfinished "
                  f"{state['unfinished']}; budget read p50 {percentile(phase.budget_ms, 50):.1f} ms, "
                  f"p99 {percentile(phase.budget_ms, 99):.1f} ms; load {os.getloadavg()[0]:.1f}"
                  + ("" if good else "  <-- FAILED"))
    print(f"{label}: {total_sent} requests, {total_sent / total_seconds:.0f}/s; budget reads "
          f"{len(all_budget)}: p50 {percentile(all_budget, 50):.1f} ms, p99 {percentile(all_budget, 99):.1f} ms, "
          f"mean {statistics.fmean(all_budget) if all_budget else float('nan'):.1f} ms; "
          + ("every check held" if ok else "A CHECK FAILED"))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase-seconds", type=float, default=60.0)
    parser.add_argument("--phases", type=int, default=10)
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--analysts", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kill-every", type=float, default=10.0)
    parser.add_argument("--think-ms", type=float, default=200.0)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # SIGTERM (e.g. from `timeout`) unwinds like an error, so the server and the cluster stop
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; python {sys.version.split()[0]}")
    ok = True
    for database in args.databases.split(","):
        with tempfile.TemporaryDirectory(prefix="dprm-soak-") as folder:
            if database == "sqlite":
                ok &= soak("SQLite", str(Path(folder) / "server.db"), Path(folder), args)
            else:
                from server_support import postgres_cluster

                with postgres_cluster() as url:
                    ok &= soak("PostgreSQL", url, Path(folder), args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
