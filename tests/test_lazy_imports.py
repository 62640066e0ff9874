"""What a run does not use, it does not import: the heavy libraries stay out of a plain import.

Each check runs in a fresh interpreter (``sys.modules`` of this one is full).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: Libraries no command pays for unless it uses them (about 0.1–1 s of import each).
HEAVY = ("scipy.stats", "scipy.optimize", "scipy.sparse", "sklearn", "matplotlib", "pandas", "numba", "jinja2",
         "fastapi", "sqlalchemy", "opendp.extras")


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
                            "parameter_specs; from dprm.classifier import DPDecisionTreeClassifier; from dprm.trees import sample_tree_pair")
    assert "sklearn" in names  # the classifier, asked for by name, brings scikit-learn with it


def test_a_serenade_run_does_not_import_numba(tmp_path) -> None:
    """Only the tree miners' kernels need numba (0.15 s to import, 0.3 s to start)."""
    script = ("import numpy as np; from dprm.datasets.planted import make_planted; from dprm.data import "
              "load_two_view; from dprm.mining import make_miner; from dprm.privacy import Accountant, SeededNoise; "
              "p = make_planted(300, random_state=0); d = load_two_view(p.left, p.right, types=p.types); "
              "make_miner('serenade-es', epsilon=1.0).fit(d, accountant=Accountant(1.0, "
              "SeededNoise(np.random.default_rng(0))), rng=np.random.default_rng(0))")
    assert "numba" not in _imported_after(script)


def _modules_of_a_cli_run(arguments: list[str], tmp_path) -> set[str]:
    """The modules a ``dprm`` command has imported when it ends (run in a fresh interpreter)."""
    listing = tmp_path / "modules.json"
    script = ("import json, runpy, sys\n"
              f"sys.argv = ['dprm'] + {arguments!r}\n"
              "try:\n    runpy.run_module('dprm', run_name='__main__', alter_sys=True)\n"
              "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
              f"open({str(listing)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n")
    subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=True)
    return set(json.loads(listing.read_text()))


@pytest.mark.parametrize("algorithm", [None, "mcmc-tree-pair", "alt-mcmc", "alt-expm", "serenade-cs", "serenade-es"])
def test_a_mine_run_on_mammals_never_imports_pandas(algorithm, shared_data, tmp_path) -> None:
    """pyarrow imports pandas on its first conversion to numpy or of Python values (~0.2 s);
    the data layer converts through :mod:`dprm.data.arrow_arrays` instead.

    SerenadeCS runs at ε = 3: it keeps only pairs whose noisy Jaccard passes min-jaccard, and at
    ε = 1 the unseeded run kept a single redescription in about one run of ten (none empty in
    1,400 measured, but the best first pair's Jaccard reached 0.39 against the 0.3 bar); at ε = 3
    its first pair's Jaccard stayed at 0.66 or more in 150 runs, so the release is never empty."""
    from pathlib import Path

    types = Path(__file__).parent / "data" / "mammals-types.json"
    epsilon = "3" if algorithm == "serenade-cs" else "1"
    arguments = ["mine", str(shared_data / "mammals" / "left.csv"), str(shared_data / "mammals" / "right.csv"),
                 "--types", str(types), "--epsilon", epsilon, "--output", str(tmp_path / "out.json")]
    modules = _modules_of_a_cli_run(arguments + (["--algorithm", algorithm] if algorithm else []), tmp_path)
    assert "dprm.data.loading" in modules and "pandas" not in modules
    assert json.loads((tmp_path / "out.json").read_text())["redescriptions"]


def test_loading_every_kind_of_column_from_text_never_imports_pandas(tmp_path) -> None:
    """Ids (text and numbers), Booleans as words and as 0/1, categories, numbers with NaN and
    missing markers, numbers written as text: every path of reading and encoding a CSV file."""
    (tmp_path / "left.csv").write_text(
        "id,smoker,flag,colour,age,score\n"
        "a,yes,1,red,30.5,NaN\n"
        "b,no,0,blue,?,2\n"
        "c,?,1,?,41,x\n"
        "d,YES,,green,50,3\n")
    (tmp_path / "right.csv").write_text("id,income,rank\nd,1.5,1\nc,2.5,2\nb,,3\na,4.0,\n")
    statement = (f"from dprm.data import load_two_view; d = load_two_view({str(tmp_path / 'left.csv')!r}, "
                 f"{str(tmp_path / 'right.csv')!r}, id_column='id', na_values=['?']); "
                 "assert d.ids.tolist() == ['a', 'b', 'c', 'd'], d.ids; "
                 "income = d.right['income'].values.tolist(); assert income[0] == 4.0 and income[2:] == [2.5, 1.5]; "
                 "assert d.left['smoker'].values.tolist() == [1, 0, -1, 1]; "
                 "assert [a.kind.value for a in d.left.attributes] == "
                 "['boolean', 'boolean', 'categorical', 'numeric', 'categorical'], d.left.attributes")
    assert "pandas" not in _imported_after(statement)


def test_warm_cache_leaves_the_bytecode_of_every_module_written(tmp_path) -> None:
    """``dprm warm-cache`` also writes dprm's bytecode, so that a run where Python may not
    write it (PYTHONDONTWRITEBYTECODE) does not compile the sources again: a fresh
    interpreter that imports the mine command then finds a valid cache for each module."""
    from dprm.cli.warm_cache import compile_bytecode

    assert "up to date" in compile_bytecode()
    script = ("import os, sys, dprm.cli.mine; "
              "mods = [m for n, m in sys.modules.items() if n.startswith('dprm') and getattr(m, '__file__', None)]; "
              "stale = [m.__name__ for m in mods if m.__spec__.cached is None or not m.__spec__.has_location "
              "or m.__spec__.loader.path_stats(m.__file__)['mtime'] > os.stat(m.__spec__.cached).st_mtime]; "
              "print(len(mods), stale)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    count, stale = done.stdout.split(" ", 1)
    assert int(count) > 50 and stale.strip() == "[]"


def test_an_itemsets_run_on_a_small_file_of_categories_imports_neither_pandas_nor_opendp(tmp_path) -> None:
    """The file is read by pyarrow and encoded without pandas (dprm.itemsets.sources.table_codes), the not-private
    block needs no OpenDP, the kernels come from the ahead-of-time build when there is one (numba otherwise).
    Nor pyarrow.compute (0.07 s): the cells are dictionary-encoded as they are read, and dprm.data imports its
    loaders on first use."""
    rng = __import__("random").Random(0)
    rows = ["a,b,c"] + [",".join(rng.choice("xyz") for _ in range(3)) for _ in range(300)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    modules = _modules_of_a_cli_run(["itemsets", str(tmp_path / "t.csv"), "--min-support", "0.3", "--seed", "0",
                                     "--output", str(tmp_path / "out.json")], tmp_path)
    assert "dprm.itemsets.estimator" in modules
    assert sorted(set(HEAVY) - {"numba"} & modules) == [] and "opendp" not in modules
    assert "pyarrow.compute" not in modules and "dprm.data.loading" not in modules
    assert "pydantic" not in modules  # the options' plain values are converted without it (dprm.cli.coercion)
    assert json.loads((tmp_path / "out.json").read_text())["itemsets"]


def _blas_threads_after(statement: str, environment: dict[str, str]) -> tuple[str, int]:
    """``OPENBLAS_NUM_THREADS`` and the process's threads once ``statement`` and ``import numpy`` ran."""
    script = (f"import importlib, os, sys; {statement}; import numpy; "
              "print(os.environ.get('OPENBLAS_NUM_THREADS', '-'), len(os.listdir('/proc/self/task')))")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")} | environment
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True,
                          env=env)
    setting, threads = done.stdout.split()
    return setting, int(threads)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_the_command_line_starts_numpy_with_one_blas_thread_unless_the_user_chose() -> None:
    """OpenBLAS's threads cost a short run about 0.1 CPU s and dprm calls no BLAS routine."""
    entry = "importlib.import_module('dprm.cli.app')._one_blas_thread()"
    assert _blas_threads_after(entry, {}) == ("1", 1)
    assert _blas_threads_after(entry, {"OPENBLAS_NUM_THREADS": "2"})[0] == "2"  # the user's choice is kept
    # a process that imported numpy first (a test calling main) is left as it was
    setting, _ = _blas_threads_after("import numpy; " + entry, {})
    assert setting == "-"
