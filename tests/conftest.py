"""Shared fixtures: random views, the real data folder, the local Ray of the Ray modules."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.privacy import Accountant, SeededNoise

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def random_view(rng: np.random.Generator, n_rows: int, side: str = "left", missing: float = 0.1) -> View:
    """A view with Boolean, categorical and numeric attributes and missing values."""
    attributes = []
    for j in range(3):
        values = (rng.random(n_rows) < rng.uniform(0.2, 0.8)).astype(np.int8)
        values[rng.random(n_rows) < missing] = -1
        attributes.append(Attribute(f"{side}_b{j}", side, AttributeKind.BOOLEAN, values, Domain(declared=True)))
    for j in range(2):
        n_categories = int(rng.integers(2, 5))
        values = rng.integers(0, n_categories, n_rows).astype(np.int32)
        values[rng.random(n_rows) < missing] = -1
        categories = tuple(f"c{k}" for k in range(n_categories))
        attributes.append(
            Attribute(f"{side}_c{j}", side, AttributeKind.CATEGORICAL, values, Domain(categories=categories))
        )
    for j in range(3):
        values = np.round(rng.normal(0, 1, n_rows), 1 + j)
        values[rng.random(n_rows) < missing] = np.nan
        attributes.append(Attribute(f"{side}_x{j}", side, AttributeKind.NUMERIC, values, Domain(bounds=(-4, 4))))
    return View(side, attributes)


def independent_two_view(n_boolean: int, n_numeric: int, seed: int, n_rows: int = 3000):
    """Two views drawn independently: ``n_boolean`` fair coins ``a0, a1, …`` against ``n_numeric``
    uniform values ``x0, x1, …`` in the declared bounds [0, 100] (no structure to find)."""
    import pandas as pd

    from dprm.data import load_two_view

    rng = np.random.default_rng(seed)
    left = pd.DataFrame({f"a{j}": rng.random(n_rows) < 0.5 for j in range(n_boolean)})
    right = pd.DataFrame({f"x{j}": np.round(rng.uniform(0, 100, n_rows), 1) for j in range(n_numeric)})
    types = {"columns": {**{f"a{j}": {"type": "boolean"} for j in range(n_boolean)},
                         **{f"x{j}": {"type": "numeric", "bounds": [0, 100]} for j in range(n_numeric)}}}
    return load_two_view(left, right, types=types)


@pytest.fixture(scope="session")
def independent_pairs_table():
    """Two views drawn independently (30 Boolean, 15 numeric attributes, 3,000 rows): no literal pair scores
    high among many (the pairs' tests: decisive counts, pairs first)."""
    return independent_two_view(30, 15, seed=4)


@pytest.fixture(scope="session")
def strong_pairs_table():
    """3,000 rows with two strong planted relations (``thresholds``, ``threshold-or``; 2 % of the rows broken),
    12 Boolean against 6 numeric attributes: the top literal pair explains about a fifth of the rows (the pairs'
    tests: decisive counts, pairs first, trees then pairs)."""
    from dprm.data import load_two_view
    from dprm.datasets import make_planted

    planted = make_planted(3000, n_left_boolean=12, n_right_numeric=6, relations=["thresholds", "threshold-or"],
                           noise=0.02, random_state=3)
    return load_two_view(planted.left, planted.right, types=planted.types)


@pytest.fixture
def trees_first(monkeypatch) -> None:
    """No released top score of the pairs counts as weak: MCMCTreePair's trees-then-pairs starts with its trees
    (:func:`dprm.mining.auto_trees.pairs_first`), so a test on independent views reaches the switch after them."""
    from dprm.mining import auto_trees

    monkeypatch.setattr(auto_trees, "WEAK_TOP_SCORE", float("-inf"))


def view_rows(view: View, rows) -> View:
    """``view`` on ``rows`` only (an index, a slice or a mask): a neighbouring dataset, or one shard's part."""
    return View(view.name, [replace(a, values=a.values[rows]) for a in view.attributes])


def without_row(view: View, row: int) -> View:
    """``view`` without row ``row``: the neighbouring dataset of a sensitivity check."""
    return view_rows(view, np.arange(view.attributes[0].n_rows) != row)


def neighbour_changes(views, scores_of, mechanism, rows) -> tuple[set, float]:
    """Remove each of ``rows`` in turn (from every view): the score drops seen (``scores_of(views)``
    before minus after) and the largest ``|log p − log p'|`` of ``mechanism``'s exact probabilities."""
    full = scores_of(views)
    drops, worst_ratio = set(), 0.0
    for row in rows:
        smaller = scores_of([without_row(v, int(row)) for v in views])
        drops |= set(np.unique(full - smaller).tolist())
        ratio = np.abs(np.log(mechanism.probabilities(full)) - np.log(mechanism.probabilities(smaller)))
        worst_ratio = max(worst_ratio, float(ratio.max()))
    return drops, worst_ratio


#: The local Ray of the xdist group "ray" (:func:`ray_session`): empty, or the started ``ray`` module.
_RAY: list = []


def spent_before_trials(accountant: Accountant) -> Fraction:
    """What a tree miner's run spent on its row count and grids (the budget its trials share is the rest)."""
    return sum((e.epsilon for e in accountant.ledger if e.step == "data size" or e.step.startswith("grid")),
               Fraction(0))


def _in_ray_group(node: pytest.Item | pytest.Module) -> bool:
    """Whether ``node`` (a test or its module) is of the xdist group ``"ray"`` (``pytest.mark.xdist_group("ray")``)."""
    return any((marker.args[:1] or (marker.kwargs.get("name"),))[0] == "ray"
               for marker in node.iter_markers("xdist_group"))


@pytest.fixture(scope="module")
def ray_session(request):
    """One local Ray on loopback (``start_ray``), shared by the modules of the xdist group ``"ray"``.

    Started when a module of the group first asks for it and stopped after the group's
    last test (:func:`pytest_runtest_teardown`: the next test is of no module of the
    group), so the group's modules (``make test``: one worker runs them one after the
    other) start Ray once, not once per module, and no other test runs beside a live
    Ray. Every engine starts its own shard actors on it.
    """
    if not _in_ray_group(request.node):
        pytest.fail("ray_session is for the modules of the xdist group 'ray' (it is stopped after the group)")
    ray_engine = pytest.importorskip("dprm.engine.ray_engine")
    if not _RAY:
        ray = ray_engine.import_ray()
        ray_engine.start_ray(num_cpus=4)
        _RAY.append(ray)
    return _RAY[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After the last test of the xdist group ``"ray"`` (and its fixtures' teardown): stop the group's Ray."""
    yield
    if _RAY and (nextitem is None or not _in_ray_group(nextitem)):
        _RAY.pop()
        import dprm.engine.ray_engine as ray_engine

        ray_engine.stop_ray()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


class RecordingNoise(SeededNoise):
    """Seeded noise that records how many charges the ledger held at each draw.

    Set ``.accountant`` after building the accountant with this source; ``draws`` then
    lists, per draw of any kind, the number of ledger entries at that moment.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng)
        self.accountant: Accountant | None = None
        self.draws: list[int] = []

    def _record(self) -> None:
        self.draws.append(len(self.accountant.ledger))

    def discrete_laplace(self, values, scale):
        self._record()
        return super().discrete_laplace(values, scale)

    def noisy_max(self, scores, scale, sampler="gumbel"):
        self._record()
        return super().noisy_max(scores, scale, sampler)

    def noisy_max_many(self, score_vectors, scale, sampler="gumbel"):
        self._record()
        return super().noisy_max_many(score_vectors, scale, sampler)

    def gumbel(self, size):
        self._record()
        return super().gumbel(size)

    def uniform(self, size):
        self._record()
        return super().uniform(size)


#: The kernel module whose numba cache entries ``warmed`` leaves out of the copy it starts from:
#: ``dprm warm-cache`` compiles its kernels (the split histograms, one of them ``parallel=True``;
#: about 3 CPU-seconds) and loads the rest.
UNCACHED_MODULE = "dprm.trees._histograms"


def seed_numba_cache(cache: Path, leave_out: str) -> dict[str, int]:
    """Copy this session's numba cache entries of dprm's kernel modules, all but ``leave_out``'s, into ``cache``.

    The session's cache is where numba keeps it for these sources (``$NUMBA_CACHE_DIR``
    when set, else ``__pycache__`` beside each kernel module: what the Makefile's
    ``dprm warm-cache`` filled); in ``cache`` each module's entries go where numba
    looks for them when ``NUMBA_CACHE_DIR`` is ``cache``. An entry is valid for its
    source file as it is (numba checks its stamp), so a copy is loaded as the original
    would be. Returns the number of index files (one per kernel) copied per module.
    """
    import importlib.util
    import shutil

    from dprm.kernel_cache import KERNEL_MODULES
    from numba.core.caching import _CacheLocator

    copied = {}
    for module in KERNEL_MODULES:
        source = Path(importlib.util.find_spec(module).origin)
        subpath = _CacheLocator.get_suitable_cache_subpath(str(source))
        session = (Path(os.environ["NUMBA_CACHE_DIR"]) / subpath if os.environ.get("NUMBA_CACHE_DIR")
                   else source.parent / "__pycache__")
        if module == leave_out:
            continue
        files = [f for f in session.glob(source.stem + ".*") if f.suffix in (".nbi", ".nbc")]
        copied[module] = sum(f.suffix == ".nbi" for f in files)
        (cache / subpath).mkdir(parents=True, exist_ok=True)
        for f in files:
            shutil.copy2(f, cache / subpath / f.name)
    return copied


def seed_precompiled_build(build_dir: Path) -> list[str]:
    """Copy this session's precompiled build for the current fingerprint, if there is one, into ``build_dir``.

    The build the Makefile's set-up (``dprm warm-cache``) made, looked for where runs
    look for it (:func:`dprm.precompiled.directories` without ``DPRM_PRECOMPILED_DIR``).
    ``dprm warm-cache`` then keeps it when the warm-up's kernels give the same manifest
    ("up to date": it is what compiling again would write) and builds afresh otherwise,
    as it does when there is none (a changed kernel source has another fingerprint).
    Returns the names copied.
    """
    import shutil

    from dprm import precompiled

    name = "_dprm_kernels_" + precompiled.fingerprint()
    saved = os.environ.pop(precompiled.DIRECTORY, None)
    try:
        places = precompiled.directories()
    finally:
        if saved is not None:
            os.environ[precompiled.DIRECTORY] = saved
    for place in places:
        files = sorted(place.glob(name + "*"))
        if any(f.suffix == ".json" for f in files) and any(f.suffix == ".so" for f in files):
            build_dir.mkdir(parents=True, exist_ok=True)
            for f in files:
                shutil.copy2(f, build_dir / f.name)
            return [f.name for f in files]
    return []


@pytest.fixture(scope="session")
def warmed(tmp_path_factory) -> tuple[dict[str, str], str]:
    """An environment whose numba cache and precompiled build ``dprm warm-cache`` has made this session; its output.

    The numba cache starts as a copy of the session's own (:func:`seed_numba_cache`)
    without :data:`UNCACHED_MODULE`'s entries: ``dprm warm-cache`` loads the others
    and compiles that module's kernels (compiling all of them from an empty cache,
    as the Makefile's set-up does on a fresh install, costs about 70 CPU-seconds more).
    The build directory starts with the set-up's precompiled build when it is current
    (:func:`seed_precompiled_build`; ``dprm warm-cache`` keeps it, the module it would
    compile again), else empty, and the build is made afresh (about 20 CPU-seconds).
    What was copied is in ``numba-cache-seeded.json`` beside the cache. Made once per
    test session, in temporary directories (``NUMBA_CACHE_DIR``,
    ``DPRM_PRECOMPILED_DIR``): under pytest-xdist the workers share the session's
    directory and take turns on a lock.
    """
    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session = session.parent  # .../pytest-N, shared by the workers gw0, gw1, ...
    cache, output = session / "numba-cache", session / "numba-cache-warmed.txt"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), DPRM_PRECOMPILED_DIR=str(session / "precompiled"))
    env.pop("DPRM_PRECOMPILED", None)
    with open(session / "numba-cache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not output.exists():
            copied = seed_numba_cache(cache, UNCACHED_MODULE)
            seed_precompiled_build(session / "precompiled")
            (session / "numba-cache-seeded.json").write_text(json.dumps({"left_out": UNCACHED_MODULE,
                                                                         "copied": copied}))
            done = subprocess.run([sys.executable, "-m", "dprm", "warm-cache"], env=env, capture_output=True,
                                  text=True, timeout=900)
            assert done.returncode == 0, done.stderr
            output.write_text(done.stdout)
    return env, output.read_text()
