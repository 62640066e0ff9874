"""The Examples in the docstrings of ``benchmarks/*.py`` run: pytest's ``--doctest-modules`` reaches ``tests`` and
``src/dprm`` only (pyproject's ``testpaths``), so the benchmark scripts' examples were never run."""

from __future__ import annotations

import doctest
import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
WITH_EXAMPLES = sorted(path.name for path in BENCHMARKS.glob("*.py") if ">>>" in path.read_text(encoding="utf-8"))


def test_some_benchmarks_have_examples() -> None:
    assert len(WITH_EXAMPLES) >= 4


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_examples_of_a_benchmark_script_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(Path(name).stem, BENCHMARKS / name)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # as an import does (dataclasses look their module up)
    spec.loader.exec_module(module)  # the scripts run their work under `if __name__ == "__main__"` only
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.attempted > 0
    assert results.failed == 0, f"{name}: {results.failed} of {results.attempted} examples failed (output above)"
