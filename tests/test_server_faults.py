"""Faults of the secured server found by a fuzzing round, each pinned by a test.

- API processes of ``dprm serve --processes N`` end with their parent, even when it is
  killed by SIGKILL (they went on serving on the address for ever).
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from server_support import Served, alive, children, setup_server_db  # noqa: E402


def _wait_for(condition, seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` have passed (a bound, not a timing)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


# -- F1: API processes end with their parent -----------------------------------------------------


def test_api_processes_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    server = Served(url, workers=1, extra=["--processes", "2"]).start()
    apis: list[int] = []
    try:
        own = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        apis = [pid for pid in children(server.process.pid) if Path(f"/proc/{pid}/cmdline").read_bytes() == own]
        assert len(apis) == 2
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=30)
        assert _wait_for(lambda: not any(alive(pid) for pid in apis), 60), "the API processes outlived their parent"
        with socket.socket() as probe:  # the address is free for the next server
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", server.port))
    finally:
        for pid in apis:  # the old code's orphans: never leave them serving
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        server.stop()
