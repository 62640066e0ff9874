"""The tests' throw-away PostgreSQL clusters stop by themselves, also when the process that
started one dies without running its ``finally`` (SIGKILL, a crashed pytest-xdist worker)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server_support import postgres_bin


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_a_cluster_stops_by_itself_when_the_process_that_started_it_is_killed() -> None:
    if postgres_bin() is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    script = (f"import sys, time; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              "from server_support import postgres_cluster\n"
              "with postgres_cluster() as url:\n"
              "    print(url, flush=True)\n"
              "    time.sleep(600)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        url = child.stdout.readline().strip()
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert _listening(port)
    finally:
        child.kill()
        child.wait(timeout=30)
    deadline = time.monotonic() + 60
    while _listening(port):
        assert time.monotonic() < deadline, f"the cluster on port {port} still listens 60 s after its process died"
        time.sleep(0.5)
