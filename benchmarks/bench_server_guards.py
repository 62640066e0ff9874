"""Speed of the server's guards against pathological input (they must answer at once).

Prints the seconds each guard takes on the inputs that once took minutes or hours: the
request guard's JSON depth check on 300,000 escaped quotes (linear, not quadratic),
epsilon texts with huge exponents (refused without expanding ``1e999999999``), and the
same through the API (a served app in-process, SQLite): an unauthenticated body of
200,000 escaped quotes, a huge exponent in ε and in a parameter. The tests check the
answers (tests/test_server_review.py); this measures the time (a guard that is quadratic
again shows here in seconds, not in a test's timeout).

Usage::

    python benchmarks/bench_server_guards.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def timed(label: str, call) -> None:
    started = time.perf_counter()
    call()
    print(f"{label:<62} {time.perf_counter() - started:8.4f} s", flush=True)


def main() -> None:
    from dprm.errors import ParameterError
    from dprm.server.guard import json_depth
    from dprm.server.units import epsilon_units

    timed("json_depth, 300,000 escaped quotes", lambda: json_depth(b"[" + b'\\"' * 300_000))
    timed("json_depth, a string of 300,000 characters", lambda: json_depth(b'[["' + b"a" * 300_000))

    def huge() -> None:
        for text in ("1e999999999", "1E+999999999", "-1e999999999", "0.5e-99999999", "1/1e999999999"):
            try:
                epsilon_units(text)
            except ParameterError:
                pass
    timed("epsilon_units, five huge exponents (refused)", huge)

    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fastapi.testclient import TestClient
    from server_support import setup_server_db

    from dprm.server.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        url = str(Path(tmp) / "s.db")
        tokens = setup_server_db(url, Path(tmp))
        with TestClient(create_app(url, workers=0, background=False, rate=1000.0, burst=1000)) as api:
            api.headers.update({"Authorization": f"Bearer {tokens['alice']}"})
            body = b"[" + b'\\"' * 200_000
            timed("API: unauthenticated body of 200,000 escaped quotes (400)",
                  lambda: api.post("/v1/jobs", content=body, headers={"Content-Type": "application/json",
                                                                      "Authorization": ""}))
            timed("API: epsilon 1e99999999 (422)", lambda: api.post(
                "/v1/primitives/redescription-statistics",
                json={"dataset": "tiny", "epsilon": "1e99999999", "left": {"attr": "a", "eq": True},
                      "right": {"attr": "b", "eq": True}, "dry_run": True}))
            timed("API: budget_split 1e999999999,1,1 (422)", lambda: api.post(
                "/v1/jobs", json={"dataset": "tiny", "algorithm": "serenade-cs", "epsilon": 1,
                                  "parameters": {"budget_split": "1e999999999,1,1"}, "dry_run": True}))


if __name__ == "__main__":
    main()
