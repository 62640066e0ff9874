"""What a run does not use, it does not import: the heavy libraries stay out of a plain import.

Each check runs in a fresh interpreter (``sys.modules`` of this one is full).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Libraries no command pays for unless it uses them (about 0.1–1 s of import each).
HEAVY = ("scipy.stats", "scipy.optimize", "sklearn", "matplotlib", "pandas", "numba", "jinja2", "fastapi",
         "sqlalchemy", "opendp.extras")


def _imported_after(statement: str) -> set[str]:
    script = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("statement", [
    "import dprm.mining",
    "from dprm.mining import make_miner, ALGORITHMS, MCMCTreePair, SerenadeES",
    "import dprm.cli.mine",
    "from dprm.data import load_two_view",
    "from dprm.queries import p_value",
    "from dprm.privacy import Accountant, SecureNoise",
])
def test_the_miners_and_the_mine_command_import_no_heavy_library(statement: str) -> None:
    assert sorted(set(HEAVY) & _imported_after(statement)) == []


def test_the_public_names_are_importable_as_before() -> None:
    names = _imported_after("from dprm.mining import AlternatingTrees, CartWheels, ReReMi, default_algorithm, "
                            "parameter_specs; from dprm.trees import DPDecisionTreeClassifier, sample_tree_pair")
    assert "sklearn" in names  # the classifier, asked for by name, brings scikit-learn with it


def test_a_serenade_run_does_not_import_numba(tmp_path) -> None:
    """Only the tree miners' kernels need numba (0.15 s to import, 0.3 s to start)."""
    script = ("import numpy as np; from dprm.datasets.planted import make_planted; from dprm.data import "
              "load_two_view; from dprm.mining import make_miner; from dprm.privacy import Accountant, SeededNoise; "
              "p = make_planted(300, random_state=0); d = load_two_view(p.left, p.right, types=p.types); "
              "make_miner('serenade-es', epsilon=1.0).fit(d, accountant=Accountant(1.0, "
              "SeededNoise(np.random.default_rng(0))), rng=np.random.default_rng(0))")
    assert "numba" not in _imported_after(script)
