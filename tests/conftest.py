"""Shared fixtures: random views, the real data folder."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
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


@pytest.fixture(scope="session")
def warmed(tmp_path_factory) -> tuple[dict[str, str], str]:
    """An environment whose numba cache and precompiled build ``dprm warm-cache`` has made this session; its output.

    Made once per test session (about 25 CPU-seconds), in temporary directories
    (``NUMBA_CACHE_DIR``, ``DPRM_PRECOMPILED_DIR``): under pytest-xdist the workers
    share the session's directory and take turns on a lock.
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
            done = subprocess.run([sys.executable, "-m", "dprm", "warm-cache"], env=env, capture_output=True,
                                  text=True, timeout=900)
            assert done.returncode == 0, done.stderr
            output.write_text(done.stdout)
    return env, output.read_text()
