"""Server-side render time of each web page (/ui) on mammals.

Builds a fresh SQLite database in a temporary folder: mammals registered
(``../shared/data/mammals``, types in ``tests/data/mammals-types.json``), the owner
olga, the analyst alice with 10 ε, a few hundred audit records; runs one real
alt-expm job at ε = 0.5 through the pages (one worker process) and one real
statistics request, so that the result page has a real result. Then requests every
page ``--repeat`` times in-process (FastAPI's TestClient: no network) and reports,
per page, the server's own time from the audit log (``duration_ms``: from the
request's arrival in the ASGI middleware to the last byte of the answer) as median,
p95 and max in milliseconds.

The issue's target: no page above 200 ms.

Run: ``.venv/bin/python benchmarks/bench_web.py [--repeat 30]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAMMALS = ROOT.parent / "shared" / "data" / "mammals"
TYPES = ROOT / "tests" / "data" / "mammals-types.json"
TARGET_MS = 200.0


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    if match is None:
        raise SystemExit("no form token on the page")
    return match.group(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="requests per page")
    args = parser.parse_args()
    if not MAMMALS.is_dir():
        raise SystemExit(f"{MAMMALS}: the mammals data is missing")

    from fastapi.testclient import TestClient
    from sqlalchemy import select

    from dprm.server import accounts, budget
    from dprm.server.app import create_app
    from dprm.server.database import Database
    from dprm.server.datasets import register_dataset
    from dprm.server.owners import add_owner
    from dprm.server.tables import audit
    from dprm.server.units import epsilon_units

    folder = Path(tempfile.mkdtemp(prefix="dprm-bench-web-"))
    url = str(folder / "web.db")
    db = Database(url)
    db.migrate()
    register_dataset(db, "mammals", MAMMALS / "left.csv", MAMMALS / "right.csv", TYPES)
    with db.write() as connection:
        analyst_token = accounts.add_analyst(connection, "alice")
        owner_token = add_owner(connection, "olga")
        who = accounts.find_analyst(connection, "alice")
        budget.set_budget(connection, who.id, 1, epsilon_units("10"))
    app = create_app(url, workers=1, rate=10_000.0, burst=10_000)  # the rate limit is not what is measured
    owner = TestClient(app, base_url="http://127.0.0.1")  # the lifespan runs once, with the analyst's client
    with TestClient(app, base_url="http://127.0.0.1") as analyst:
        for client, token in ((analyst, analyst_token), (owner, owner_token)):
            page = client.get("/ui/signin")
            client.post("/ui/signin", data={"csrf": _csrf(page.text), "token": token})
        form_token = _csrf(analyst.get("/ui/datasets").text)
        job_form = {"csrf": form_token, "algorithm": "alt-expm", "epsilon": "0.5", "p_init_trials": "3",
                    "p_depth": "2"}
        answer = analyst.post("/ui/datasets/mammals/jobs", data={**job_form, "action": "run"}, follow_redirects=False)
        job = answer.headers["location"]
        deadline = time.monotonic() + 300
        while "status-done" not in analyst.get(job).text:
            if time.monotonic() > deadline:
                raise SystemExit("the job did not finish in 5 minutes")
            time.sleep(0.5)
        stats_form = {"csrf": form_token, "left": "[Moose] & ![Arctic Fox]", "right": "[tmin_01 < -5]",
                      "epsilon": "0.1"}
        analyst.post("/ui/datasets/mammals/statistics", data={**stats_form, "action": "run"})
        rows = len(re.findall(r"<tr>\s*<td data-label=\"#\">", analyst.get(job).text))
        print(f"mammals: one alt-expm job at epsilon 0.5 ({rows} redescriptions), one statistics request")

        pages = [
            ("GET  /ui/signin", lambda c: c.get("/ui/signin"), "analyst"),
            ("GET  /ui/datasets", lambda c: c.get("/ui/datasets"), "analyst"),
            ("GET  /ui/datasets/mammals", lambda c: c.get("/ui/datasets/mammals?algorithm=alt-expm"), "analyst"),
            ("POST /ui/datasets/mammals/cost", lambda c: c.post("/ui/datasets/mammals/cost", data=job_form),
             "analyst"),
            ("POST .../jobs (dry run)", lambda c: c.post("/ui/datasets/mammals/jobs",
                                                         data={**job_form, "action": "dry-run"}), "analyst"),
            ("POST .../statistics (dry run)", lambda c: c.post("/ui/datasets/mammals/statistics",
                                                               data={**stats_form, "action": "dry-run"}), "analyst"),
            ("GET  /ui/jobs", lambda c: c.get("/ui/jobs"), "analyst"),
            ("GET  /ui/jobs/{id} (result)", lambda c: c.get(job), "analyst"),
            ("GET  /ui/jobs/{id}?sort=jaccard", lambda c: c.get(job + "?sort=jaccard&order=desc"), "analyst"),
            ("GET  /ui/jobs/{id}/result.json", lambda c: c.get(job + "/result.json"), "analyst"),
            ("GET  /ui/jobs/{id}/queries.txt", lambda c: c.get(job + "/queries.txt"), "analyst"),
            ("GET  /ui/owner", lambda c: c.get("/ui/owner"), "owner"),
            ("GET  /ui/owner/audit", lambda c: c.get("/ui/owner/audit?limit=200"), "owner"),
            ("GET  /ui/owner/jobs", lambda c: c.get("/ui/owner/jobs"), "owner"),
        ]
        clients = {"analyst": analyst, "owner": owner}
        results = []
        for label, call, role in pages:
            app.state.audit.flush()
            with db.read() as connection:
                first = connection.execute(select(audit.c.id).order_by(audit.c.id.desc()).limit(1)).scalar() or 0
            for _ in range(args.repeat):
                answer = call(clients[role])
                if answer.status_code != 200:
                    raise SystemExit(f"{label}: HTTP {answer.status_code}")
            app.state.audit.flush()
            with db.read() as connection:
                times = connection.execute(select(audit.c.duration_ms).where(audit.c.id > first)
                                           .where(audit.c.path.like("/ui/%"))).scalars().all()
            results.append((label, times))
    print(f"{'page':36s} {'n':>4s} {'median':>8s} {'p95':>8s} {'max':>8s}"
          f"   (server-side ms, target <= {TARGET_MS:.0f})")
    worst = 0.0
    for label, times in results:
        times = sorted(times)
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        worst = max(worst, times[-1])
        print(f"{label:36s} {len(times):4d} {statistics.median(times):8.1f} {p95:8.1f} {times[-1]:8.1f}")
    print(f"slowest single render: {worst:.1f} ms ({'within' if worst <= TARGET_MS else 'ABOVE'} the target)")
    db.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
