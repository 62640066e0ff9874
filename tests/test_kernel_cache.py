"""numba's cache of the compiled kernels: warmed once, then found by every later process.

Each test runs real processes on one cache directory (``NUMBA_CACHE_DIR``) that
``dprm warm-cache`` fills first (the ``warmed`` fixture of ``conftest.py``): it starts
as a copy of the session's own cache without one kernel module's entries, so the
warm-up both compiles and loads; from an empty cache it is the Makefile's set-up.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_cli import run

DPRM = [sys.executable, "-m", "dprm"]

# One xdist worker runs this module and test_precompiled.py (make test: --dist loadgroup): both
# wait for the session's `dprm warm-cache` build, which would otherwise hold up both workers.
pytestmark = pytest.mark.xdist_group("warm-cache")


def _cache_files(directory: Path) -> set[Path]:
    return {p for p in directory.rglob("*") if p.suffix in (".nbi", ".nbc")}


def _numbers(text: str) -> tuple[int, int, int]:
    match = re.search(r"(\d+) kernels: (\d+) loaded from the cache, (\d+) compiled", " ".join(text.split()))
    assert match, text
    kernels, loaded, compiled = (int(g) for g in match.groups())
    return kernels, loaded, compiled


def test_warm_cache_compiles_what_the_cache_lacks_and_loads_the_rest(warmed) -> None:
    """The cache started as the session's without one module's entries (``warmed``): those are compiled
    and written, the copied ones loaded. (From an empty cache, compiling everything, is the Makefile's
    set-up on a fresh install.)"""
    env, output = warmed
    cache = Path(env["NUMBA_CACHE_DIR"])
    seeded = json.loads((cache.parent / "numba-cache-seeded.json").read_text())
    kernels, loaded, compiled = _numbers(output)
    assert kernels >= 20 and compiled > 0
    assert (loaded > 0) == (sum(seeded["copied"].values()) > 0)  # 0 only when the session's cache was empty
    stem = seeded["left_out"].rsplit(".", 1)[1]
    assert {p for p in _cache_files(cache) if p.name.startswith(stem + ".")}  # compiled into the cache
    assert len(_cache_files(cache)) > 2 * sum(seeded["copied"].values())


def test_a_second_process_loads_everything_and_compiles_nothing(warmed) -> None:
    env, _ = warmed
    done = subprocess.run(DPRM + ["warm-cache", "--check"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    kernels, loaded, compiled = _numbers(done.stdout)
    assert loaded > 0 and compiled == 0


def test_load_cached_loads_without_running(warmed) -> None:
    env, _ = warmed
    script = ("import json; from dprm.kernel_cache import kernels, load_cached; r = load_cached(); "
              "k = {n: d for n, d in kernels().items() if n.startswith('dprm.trees.')}; "
              "print(json.dumps([r.loaded, r.compiled, {n: len(d.overloads) for n, d in k.items()}, "
              "sum(sum(d.stats.cache_misses.values()) for d in k.values())]))")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    loaded, compiled, overloads, misses = json.loads(done.stdout)
    assert loaded > 0 and compiled == 0 and misses == 0
    assert max(overloads.values()) >= 2  # the chain kernels at both widths of the literal codes: 1 and 2 bytes


@pytest.fixture(scope="module")
def planted_files(tmp_path_factory) -> Path:
    """The runs' data, made once for the module (``dprm datasets make-planted`` in-process: no kernel)."""
    data = tmp_path_factory.mktemp("kernel-cache") / "data"
    code, _, err = run(["datasets", "make-planted", data, "--rows", "1500", "--seed", "3", "--left-numeric", "3",
                        "--right-boolean", "2"])
    assert code == 0, err
    return data


@pytest.mark.parametrize("algorithm", ["mcmc-tree-pair", "alt-mcmc", "alt-expm"])
def test_a_run_after_the_warm_up_compiles_nothing(warmed, planted_files, tmp_path: Path, algorithm: str) -> None:
    env, _ = warmed
    cache = Path(env["NUMBA_CACHE_DIR"])
    data = planted_files
    before = _cache_files(cache)
    done = subprocess.run(DPRM + ["mine", str(data / "left.csv"), str(data / "right.csv"), "--types",
                                  str(data / "types.json"), "--algorithm", algorithm, "--epsilon", "1",
                                  "--max-splits", "300" if algorithm == "alt-mcmc" else "32",
                                  "--output", str(tmp_path / "out.json")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert _cache_files(cache) == before  # nothing new: every kernel came from the cache


def test_the_evaluation_fork_server_hands_loaded_kernels_to_each_run(warmed, tmp_path: Path) -> None:
    env, _ = warmed
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent("""
        import json

        def report(connection):
            from dprm.kernel_cache import kernels
            connection.send({name: len(k.overloads) for name, k in kernels().items()})

        if __name__ == "__main__":
            from dprm.evaluation.workers import _context

            context = _context()
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(target=report, args=(writer,))
            process.start()
            print(json.dumps(reader.recv()))
            process.join()
    """))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    overloads = json.loads(done.stdout)
    script = ("import json; from dprm.kernel_cache import kernels; "
              "print(json.dumps({n: bool(d.targetoptions.get('parallel')) for n, d in kernels().items()}))")
    parallel = json.loads(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                         timeout=300, check=True).stdout)
    trees = [name for name in overloads if name.startswith("dprm.trees.")]
    assert max(overloads[n] for n in trees if not parallel[n]) >= 2  # loaded in the server, before the fork
    assert all(overloads[n] == 0 for n in overloads if parallel[n])  # left to the run (OpenMP and fork)


_CALLEE = "from numba import njit\n\n\n@njit(cache=True)\ndef step(x):\n    return x + {increment}\n"
_CALLER = ("from numba import njit\n\nfrom kernels_callee import step\n\n\n@njit(cache=True)\ndef scaled(x):\n"
           "    return 10 * step(x)\n{tie}")
_TIE = "\nfrom dprm.kernel_cache import tie_to_sources\n\ntie_to_sources(globals(), 'kernels_callee')\n"


def _caller_result(folder: Path) -> tuple[int, int]:
    """``scaled(1)`` in a fresh process on ``folder``'s modules and numba cache, and its cache hits."""
    code = "import kernels_caller as k; print(k.scaled(1), sum(k.scaled.stats.cache_hits.values()))"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{folder}:{Path(__file__).resolve().parents[1] / 'src'}",
           "NUMBA_CACHE_DIR": str(folder / "cache")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    value, hits = done.stdout.split()
    return int(value), int(hits)


@pytest.mark.parametrize("tied", [False, True])
def test_a_kernel_calling_another_module_is_compiled_again_when_that_module_changes(tmp_path: Path,
                                                                                      tied: bool) -> None:
    """numba checks a cached kernel against its own file only: the callee's edit leaves the caller's
    entry in use, with the old callee inside it (the hazard), unless :func:`tie_to_sources` ties it."""
    (tmp_path / "kernels_caller.py").write_text(_CALLER.format(tie=_TIE if tied else ""))
    (tmp_path / "kernels_callee.py").write_text(_CALLEE.format(increment=1))
    assert _caller_result(tmp_path) == (20, 0)  # compiled and cached
    assert _caller_result(tmp_path) == (20, 1)  # loaded from the cache
    (tmp_path / "kernels_callee.py").write_text(_CALLEE.format(increment=2))
    if tied:
        assert _caller_result(tmp_path) == (30, 0)  # compiled again with the new callee
    else:
        assert _caller_result(tmp_path) == (20, 1)  # stale: numba's own check misses the callee's edit


def test_every_kernel_module_calling_another_is_tied_to_its_text() -> None:
    """Each kernel module that imports from another kernel module is in ``KERNEL_DEPENDENCIES`` with it,
    and its cached kernels carry the digest of those modules' text."""
    import ast
    import hashlib
    import importlib
    import importlib.util

    from dprm.kernel_cache import KERNEL_DEPENDENCIES, KERNEL_MODULES, kernels

    for name in KERNEL_MODULES:
        tree = ast.parse(Path(importlib.util.find_spec(name).origin).read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert set(KERNEL_DEPENDENCIES.get(name, ())) == imported & set(KERNEL_MODULES), name
    for name, dependencies in KERNEL_DEPENDENCIES.items():
        digest = hashlib.sha256(b"".join(Path(importlib.util.find_spec(d).origin).read_bytes()
                                         for d in dependencies)).hexdigest()
        tied = [d for key, d in kernels().items() if key.startswith(name + ".")]
        assert tied
        for dispatcher in tied:
            assert dispatcher._cache._cache_file._source_stamp[2] == digest
