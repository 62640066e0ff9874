"""``benchmarks/bench_itemsets_wide.py``'s table writer, as docs/itemsets.md calls it to rerun one of its runs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "bench_itemsets_wide.py"


def test_write_wide_makes_its_folder(tmp_path: Path) -> None:
    """docs/itemsets.md: ``write_wide(Path('/tmp/w'), 'wide', 2000)`` on a machine without /tmp/w (it stopped
    with FileNotFoundError), then ``dprm itemsets /tmp/w/wide.csv ...``."""
    spec = importlib.util.spec_from_file_location("bench_itemsets_wide", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = tmp_path / "not" / "there"
    table, types = module.write_wide(folder, "wide", 20, columns=3)
    assert table == folder / "wide.csv" and types == folder / "wide-types.json"
    lines = table.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "c000,c001,c002" and len(lines) == 21
    assert list(json.loads(types.read_text(encoding="utf-8"))["columns"]) == ["c000", "c001", "c002"]
