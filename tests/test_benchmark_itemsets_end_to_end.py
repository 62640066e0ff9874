"""``benchmarks/bench_itemsets_end_to_end.py`` as docs/itemsets.md runs it: it runs and cleans up after itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "bench_itemsets_end_to_end.py"


def test_the_small_table_run_prints_its_rows_and_leaves_no_temporary_folder(tmp_path: Path) -> None:
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, str(BENCHMARK), "--repeat", "1", "--tables", "small", "--learners", "auto"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["table", "run", "wall", "s", "cpu", "s", "MB", "result"]
    assert any("dprm itemsets --learner auto" in line and "itemsets with estimated support >= 0.3" in line
               for line in lines)
    assert any("FP-growth (all, counted)" in line for line in lines)
    assert [entry.name for entry in tmp_path.iterdir() if entry.name.startswith("bench_itemsets_")] == []
