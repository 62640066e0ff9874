"""``--engine ray://HOST:PORT``: dprm joins a Ray cluster started apart, with token authentication.

A real head node (``ray start --head --block``) on loopback, in its own short
temporary directory, with a token of this test; stopped at the end of the module.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dprm.datasets import make_planted

from test_cli import run

# One xdist worker runs the Ray modules (this, test_engine_ray.py and test_evaluate_engine.py; make test: --dist
# loadgroup), one after the other; this module's head is a Ray of its own beside the others' (conftest's ray_session).
pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]
psutil = pytest.importorskip("psutil")
if importlib.util.find_spec("ray") is None:  # not imported here: dprm imports it with its environment
    pytest.skip("Ray is not installed (the ray extra)", allow_module_level=True)

DPRM = [sys.executable, "-m", "dprm"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _cluster_processes(folder: str) -> list:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if any(folder in part for part in process.info["cmdline"] or []):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


@pytest.fixture(scope="module")
def cluster():
    """``(address, environment of a client holding the token, the head's temporary folder)``."""
    folder = tempfile.mkdtemp(prefix="dprm-ray-", dir="/tmp")  # short: Ray's Unix socket paths
    gcs_port, client_port = _free_port(), _free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="token",
               RAY_AUTH_TOKEN=secrets.token_hex(32),
               # the head gives each client's server this long to start (30 s by default: too short for
               # a loaded test machine; dprm also tries again, CLUSTER_JOIN_ATTEMPTS). A server that does
               # start answers within 3-20 s; one that died at its start is waited for this whole time.
               RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S="60")
    ray = str(Path(sys.executable).with_name("ray"))
    # gRPC's fork handlers off in the head's processes: its proxy forks each client's server while
    # other threads are in gRPC ("skipping fork() handlers" in ray_client_server.err), and now and
    # then (3 full runs in 5 here, beside the local Ray of test_engine_ray) the child then died in
    # gRPC ("Check failed: next_worker->state == KICKED", ev_epoll1_linux.cc) before it could exec
    # the server: the join waited the 60 s above and succeeded at dprm's next attempt (81-98 s
    # instead of 10-20 s). The child execs at once and uses no gRPC: it needs no fork handlers.
    head = subprocess.Popen([ray, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={gcs_port}",
                             f"--ray-client-server-port={client_port}", "--include-dashboard=false", "--num-cpus=2",
                             "--disable-usage-stats", f"--temp-dir={folder}"],
                            env=dict(env, GRPC_ENABLE_FORK_SUPPORT="false"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", client_port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("the Ray head did not start") from None
                time.sleep(0.5)
        yield f"ray://127.0.0.1:{client_port}", env, folder
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
        for process in _cluster_processes(folder):  # whatever outlived the head
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("planted")
    data = make_planted(1500, n_planted=2, random_state=4)
    data.left.to_csv(folder / "left.csv", index=False)
    data.right.to_csv(folder / "right.csv", index=False)
    (folder / "types.json").write_text(json.dumps(data.types))
    return [str(folder / "left.csv"), str(folder / "right.csv"), "--types", str(folder / "types.json")]


def test_mine_on_a_cluster_writes_what_mine_in_process_writes(cluster, planted, tmp_path: Path) -> None:
    address, env, folder = cluster
    arguments = ["mine", *planted, "--algorithm", "serenade-es", "--epsilon", "1", "--seed", "5"]
    # the cluster's client in a process of its own (the head's token in its environment); the
    # in-process run in this one, as test_cli's run does (an interpreter of its own added nothing)
    sharded = subprocess.run(DPRM + arguments + ["--engine", address, "--shards", "2", "-o",
                                                 str(tmp_path / "cluster.json")],
                             env=env, capture_output=True, text=True, timeout=600)
    assert sharded.returncode == 0, sharded.stderr
    code, _, err = run(arguments + ["-o", tmp_path / "local.json"])
    assert code == 0, err
    on_cluster, in_process = (json.loads((tmp_path / name).read_text()) for name in ("cluster.json", "local.json"))
    assert on_cluster["redescriptions"] and on_cluster == in_process


def test_every_socket_of_the_cluster_is_on_loopback(cluster) -> None:
    _, _, folder = cluster
    processes = _cluster_processes(folder)
    assert processes  # the GCS, the raylet, the client server, ...
    addresses = []
    for process in processes:
        try:
            connections = process.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for connection in connections:
            addresses += [a.ip for a in (connection.laddr, connection.raddr) if a]
    assert addresses and all(ipaddress.ip_address(ip.removeprefix("::ffff:")).is_loopback for ip in addresses)
