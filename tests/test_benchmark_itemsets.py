"""``benchmarks/bench_itemsets.py``: slopes of log time against log rows only where they can be computed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "bench_itemsets.py"


def test_one_rows_size_says_that_no_slope_is_computed_instead_of_printing_nan() -> None:
    pytest.importorskip("fim")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, str(BENCHMARK), "--rows", "2000", "--chains", "1"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2].split()[0] == "2,000"  # the size's row of figures
    assert lines[-1] == ("slope of log time vs log rows: not computed: it needs two or more different --rows "
                         "sizes (one given)")
    assert "nan" not in done.stdout


def test_the_slopes_of_two_or_more_sizes_are_printed_and_a_zero_time_is_said_in_words() -> None:
    pytest.importorskip("fim")
    spec = importlib.util.spec_from_file_location("bench_itemsets", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    line = module.slopes_line([1000, 10000, 100000], {"learn": [0.1, 1.0, 10.0], "ISON": [0.2, 0.2, 0.2],
                                                      "FP-growth": [0.0, 0.5, 5.0]})
    assert line == "slope of log time vs log rows: learn 1.00, ISON 0.00, FP-growth not computed (a time of 0 s)"
    assert module.slopes_line([1000, 1000], {"learn": [0.1, 0.2]}).endswith("(one given)")
