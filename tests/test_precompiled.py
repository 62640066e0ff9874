"""The ahead-of-time build of the small runs' kernels (dprm.precompiled): same results, no numba.

The build is made once per test session by ``dprm warm-cache`` on an empty numba
cache and build directory (the ``warmed`` fixture of ``conftest.py``), as the
Makefile's set-up does: it holds the types of the warm-up's runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dprm import precompiled
from dprm.trees import compiled
from test_cli import run

DPRM = [sys.executable, "-m", "dprm"]

# One xdist worker runs this module and test_kernel_cache.py (make test: --dist loadgroup): both
# wait for the session's `dprm warm-cache` build, which would otherwise hold up both workers.
pytestmark = pytest.mark.xdist_group("warm-cache")


@pytest.fixture
def built(warmed) -> Path:
    """The directory of this session's build (``warmed``: the set-up's when current, else made afresh)."""
    env, output = warmed
    line = " ".join(output.split())
    assert "precompiled kernels:" in line, output
    if "precompiled kernels: none" in line:  # the build's own report says why (e.g. no Python headers)
        pytest.skip(line[line.index("precompiled kernels: none"):].split(")")[0] + ")")
    return Path(env["DPRM_PRECOMPILED_DIR"])


@pytest.fixture
def use_build(built, monkeypatch) -> Path:
    """This process's kernels called through the session's build."""
    monkeypatch.setenv(precompiled.DIRECTORY, str(built))
    monkeypatch.delenv(precompiled.SWITCH, raising=False)
    _forget()
    yield built
    _forget()


def _forget() -> None:
    precompiled.forget()


def test_the_build_exports_every_kernel_for_the_cached_types(built) -> None:
    modules = list(built.glob("_dprm_kernels_*.so"))
    assert len(modules) == 1
    manifest = json.loads(modules[0].with_name(modules[0].name.split(".")[0] + ".json").read_text())
    exported = {(entry["module"], entry["function"]) for entry in manifest["kernels"]}
    assert exported == {(module, name) for module, names in precompiled.KERNELS.items() for name in names}
    assert manifest["fingerprint"] == modules[0].name.split(".")[0].removeprefix("_dprm_kernels_")
    # both widths of the literal codes (the warm-up's max_splits 300)
    routes = [e["arguments"][0] for e in manifest["kernels"] if e["function"] == "_route_rows_serial"]
    assert {"|u1:2C", "<u2:2C"} <= set(routes)


def _random_tree_input(rng: np.random.Generator, dtype, n_rows: int, depth: int):
    n_attributes, missing = 5, np.iinfo(dtype).max
    codes = rng.integers(0, 4, size=(n_attributes, n_rows)).astype(dtype)
    codes[rng.random(codes.shape) < 0.1] = missing
    internal = 2**depth - 1
    attribute = rng.integers(0, n_attributes, size=internal)
    code = rng.integers(0, 4, size=internal)
    numeric = rng.random(internal) < 0.5
    return codes, int(missing), attribute, code, numeric


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_each_kernel_gives_numba_s_result(use_build, dtype) -> None:
    rng = np.random.default_rng(11)
    for trial in range(20):
        n_rows, depth = int(rng.integers(1, 300)), int(rng.integers(1, 5))
        codes, missing, attribute, code, numeric = _random_tree_input(rng, dtype, n_rows, depth)
        rows = np.sort(rng.choice(n_rows, size=int(rng.integers(0, n_rows + 1)), replace=False)).astype(np.int64)
        route = precompiled.kernel("dprm.trees._kernels", "_route_rows_serial")
        arguments = (codes, missing, attribute, code, numeric, rows, 0, 2**depth - 1)
        assert route.precompiled(*arguments) is not None
        assert np.array_equal(route(*arguments), route.numba()(*arguments))

        splits = np.array([[a, c, 1 if a % 2 else 0] for a in range(5) for c in range(3)], dtype=np.int64)
        starts, sizes = np.arange(0, 15, 3, dtype=np.int64), np.full(5, 3, dtype=np.int64)
        bitsets = precompiled.kernel("dprm.trees._bit_kernels", "split_bitsets")
        arguments = (codes, missing, splits, starts, sizes)
        assert bitsets.precompiled(*arguments) is not None
        for ours, numba_s in zip(bitsets(*arguments), bitsets.numba()(*arguments)):
            assert np.array_equal(ours, numba_s)

        n_codes = np.full(5, 4, dtype=np.int64)
        width, histogram_starts = 6, np.arange(0, 5 * 5 * 6, 5 * 6, dtype=np.int64)
        key = rng.integers(0, width, size=rows.size).astype(np.int64)
        histogram = precompiled.kernel("dprm.trees._histograms", "code_histograms_serial")
        ours, numba_s = np.zeros(5 * 5 * 6, dtype=np.int64), np.zeros(5 * 5 * 6, dtype=np.int64)
        histogram(codes, missing, n_codes, histogram_starts, rows, key, width, ours)
        histogram.numba()(codes, missing, n_codes, histogram_starts, rows, key, width, numba_s)
        assert np.array_equal(ours, numba_s) and ours.sum() == 5 * rows.size


def test_argument_types_the_build_lacks_go_to_numba(use_build) -> None:
    codes, missing, attribute, code, numeric = _random_tree_input(np.random.default_rng(3), np.uint8, 50, 2)
    rows = np.arange(50, dtype=np.int32)  # the warm-up routes int64 rows only
    route = precompiled.kernel("dprm.trees._kernels", "_route_rows_serial")
    assert route.precompiled(codes, missing, attribute, code, numeric, rows, 0, 3) is None
    expected = route.numba()(codes, missing, attribute, code, numeric, rows.astype(np.int64), 0, 3)
    assert np.array_equal(route(codes, missing, attribute, code, numeric, rows, 0, 3), expected)
    strided = np.repeat(np.arange(50, dtype=np.int64), 2)[::2]  # rows 0..49 in layout A: another numba type
    assert route.precompiled(codes, missing, attribute, code, numeric, strided, 0, 3) is None
    assert np.array_equal(route(codes, missing, attribute, code, numeric, strided, 0, 3), expected)


def test_a_build_of_another_fingerprint_is_ignored(built, tmp_path, monkeypatch) -> None:
    (module,) = built.glob("_dprm_kernels_*.so")
    name = module.name.split(".")[0]
    other = "_dprm_kernels_" + "0" * 16
    shutil.copy(module, tmp_path / module.name.replace(name, other))
    shutil.copy(module.with_name(name + ".json"), tmp_path / (other + ".json"))
    monkeypatch.setenv(precompiled.DIRECTORY, str(tmp_path))
    _forget()
    try:
        assert precompiled.loaded_build() is None
        assert precompiled.kernel("dprm.trees._kernels", "run_chain").precompiled() is None
    finally:
        _forget()


@pytest.mark.parametrize("damage", ["not a library", "manifest"])
def test_a_damaged_build_is_ignored(built, tmp_path, monkeypatch, damage) -> None:
    (module,) = built.glob("_dprm_kernels_*.so")
    name = module.name.split(".")[0]
    shutil.copy(module.with_name(name + ".json"), tmp_path / (name + ".json"))
    shutil.copy(module, tmp_path / module.name)
    if damage == "not a library":
        (tmp_path / module.name).write_bytes(b"\0" * 4096)
    else:
        (tmp_path / (name + ".json")).write_text('{"kernels": [{"module": "dprm.trees._kernels"')
    monkeypatch.setenv(precompiled.DIRECTORY, str(tmp_path))
    _forget()
    try:
        assert precompiled.loaded_build() is None
        codes, missing, attribute, code, numeric = _random_tree_input(np.random.default_rng(5), np.uint8, 40, 2)
        route = precompiled.kernel("dprm.trees._kernels", "_route_rows_serial")
        arguments = (codes, missing, attribute, code, numeric, np.arange(40, dtype=np.int64), 0, 3)
        assert route.precompiled(*arguments) is None
        assert np.array_equal(route(*arguments), route.numba()(*arguments))
    finally:
        _forget()


def test_the_switch_turns_the_build_off(use_build, monkeypatch) -> None:
    assert precompiled.loaded_build() is not None
    monkeypatch.setenv(precompiled.SWITCH, "0")
    _forget()
    assert precompiled.loaded_build() is None


def test_large_chains_run_on_numba_s_kernels_which_release_the_gil(use_build) -> None:
    small = compiled.chain_kernel(True, compiled.THREADED_CHAIN_ROWS - 1)
    assert isinstance(small, precompiled.Kernel) and small.name == "run_bit_chain"
    large = compiled.chain_kernel(False, compiled.THREADED_CHAIN_ROWS)
    assert not isinstance(large, precompiled.Kernel) and large.targetoptions.get("nogil")


@pytest.fixture(scope="module")
def planted_files(tmp_path_factory) -> Path:
    """The runs' data, made once for the module (``dprm datasets make-planted`` in-process)."""
    data = tmp_path_factory.mktemp("precompiled") / "data"
    code, _, err = run(["datasets", "make-planted", data, "--rows", "1200", "--seed", "4", "--left-numeric", "3",
                        "--right-boolean", "2", "--missing", "0.05"])
    assert code == 0, err
    return data


def _mine(tmp_path: Path, data: Path, algorithm: str, env: dict[str, str], name: str, *extra: str) -> tuple[bytes, str]:
    script = ("import sys; from dprm.cli.app import main\n"
              "try:\n    main(sys.argv[1:])\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
              "print('NUMBA', 'numba' in sys.modules)\n")
    out = tmp_path / f"{name}.json"
    done = subprocess.run([sys.executable, "-c", script, "mine", str(data / "left.csv"), str(data / "right.csv"),
                           "--types", str(data / "types.json"), "--algorithm", algorithm, "--epsilon", "1",
                           "--seed", "5", "--output", str(out), *extra],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out.read_bytes(), done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("algorithm, extra", [("mcmc-tree-pair", ()), ("alt-mcmc", ("--max-splits", "300")),
                                              ("alt-expm", ()), ("mcmc-tree-pair", ("--mcmc-stop", "variance"))])
def test_a_run_gives_the_same_document_without_importing_numba(warmed, built, planted_files, tmp_path, algorithm,
                                                               extra) -> None:
    data = planted_files
    env = warmed[0]
    with_build, imported = _mine(tmp_path, data, algorithm, env, "built", *extra)
    assert imported == "NUMBA False"
    without, imported = _mine(tmp_path, data, algorithm, dict(env, DPRM_PRECOMPILED="0"), "numba", *extra)
    assert imported == "NUMBA True"
    assert with_build == without
    assert json.loads(with_build)["redescriptions"]


def test_without_a_c_compiler_warm_cache_says_so_and_runs_keep_numba_s_cache(warmed, tmp_path) -> None:
    env = dict(warmed[0], DPRM_PRECOMPILED_DIR=str(tmp_path / "build"), CC="/bin/false", LDSHARED="/bin/false")
    done = subprocess.run(DPRM + ["warm-cache"], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    line = " ".join(done.stdout.split())
    assert "precompiled kernels: none (compiling failed" in line and "runs use numba's cache" in line
    assert not list((tmp_path / "build").glob("_dprm_kernels_*"))  # nothing half-written
