"""The package's shape: layers depend downwards only, and no module imports itself back.

Read from the source with :mod:`ast` (nothing is imported): every ``import`` of a
``dprm`` module, at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"

#: Every package and top-level module of dprm but the entry points.
_ALL_LAYERS = {"data", "privacy", "queries", "engine", "trees", "classifier", "itemsets", "mining", "evaluation",
               "cli", "server", "client", "datasets", "params", "errors", "files", "file_sets", "input_files",
               "json_values", "kernel_cache", "precompiled"}

#: Each layer and the layers it must never import (DESIGN.md: dependencies point down).
FORBIDDEN: dict[str, set[str]] = {
    # parameter tables (Param): below every layer that declares parameters; reads only errors and privacy.budget
    "params": {"data", "queries", "trees", "mining", "evaluation", "cli", "server", "client", "itemsets", "engine",
               "classifier"},
    "data": {"privacy", "queries", "trees", "mining", "evaluation", "cli", "server", "client", "itemsets", "engine",
             "classifier"},
    "privacy": {"data", "queries", "trees", "mining", "evaluation", "cli", "server", "client", "itemsets",
                "engine", "classifier"},
    "queries": {"privacy", "trees", "mining", "evaluation", "cli", "server", "client", "itemsets", "engine",
                "classifier"},
    # where the rows live and are counted: below the miners, above the data; never draws noise
    "engine": {"privacy", "trees", "mining", "evaluation", "cli", "server", "client", "itemsets", "classifier"},
    "trees": {"mining", "evaluation", "cli", "server", "client", "itemsets", "classifier"},
    # the DP tree classifier, an estimator of its own beside the trees (the itemsets' estimate uses it)
    "classifier": {"mining", "evaluation", "cli", "server", "client", "itemsets"},
    "itemsets": {"mining", "evaluation", "cli", "server", "client"},
    "mining": {"evaluation", "cli", "server", "client"},
    "evaluation": {"cli", "server", "client"},
    "server": {"cli"},
    # example data with known answers: over the data layer, below everything that mines
    "datasets": {"privacy", "trees", "mining", "evaluation", "cli", "server", "client", "itemsets", "engine",
                 "classifier", "params"},
    # the analysts' HTTP client: the queries' JSON form, nothing of the miners or the server
    "client": {"privacy", "trees", "mining", "evaluation", "cli", "server", "itemsets", "engine", "classifier",
               "params", "datasets"},
    # top-level modules below every layer: they import only the standard library, numpy, numba and errors
    "errors": _ALL_LAYERS,
    "files": _ALL_LAYERS - {"errors"},
    "file_sets": _ALL_LAYERS - {"errors", "files"},
    "input_files": _ALL_LAYERS - {"errors"},
    "json_values": _ALL_LAYERS - {"errors"},
    "kernel_cache": _ALL_LAYERS - {"errors"},
    "precompiled": _ALL_LAYERS - {"errors"},
}

#: Where every module of the package stands: the layers above and the top-level modules
#: (``__main__`` and the package's ``__init__`` only start the command line).
ENTRY_POINTS = {"__main__", ""}

#: CLI modules every command may use; a command's own module imports no other command.
CLI_SHARED = {"dprm.cli", "dprm.cli.app", "dprm.cli.console", "dprm.cli.views", "dprm.cli.outputs",
              "dprm.cli.display", "dprm.cli.progress", "dprm.cli.miner_options", "dprm.cli.seeds",
              "dprm.cli.eval_options", "dprm.cli.coercion", "dprm.cli.itemsets_declarations", "dprm.cli.interrupts"}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in (SOURCE / "dprm").rglob("*.py"):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(path: Path, modules: dict[str, Path], *, module_level_only: bool) -> set[str]:
    """The dprm modules ``path`` imports (the longest known prefix of each name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = []
    if module_level_only:  # statements run at import, TYPE_CHECKING blocks left out
        def walk(body):
            for node in body:
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                nodes.append(node)
                if isinstance(node, (ast.If, ast.Try)):
                    walk(node.body)
                    walk(getattr(node, "orelse", []))
                    for handler in getattr(node, "handlers", []):
                        walk(handler.body)
        walk(tree.body)
    else:
        nodes = list(ast.walk(tree))
    names = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("dprm"):
            names += [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.startswith("dprm")]
    found = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return components


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return _modules()


def test_no_import_cycle_at_import_time(modules) -> None:
    graph = {m: _imports(p, modules, module_level_only=True) - {m} for m, p in modules.items()}
    assert _cycles(graph) == []


def test_no_cycle_through_deferred_imports_outside_the_query_operators(modules) -> None:
    """Deferred imports count too; the one exception is Query's operators (``a & b`` builds an And)."""
    graph = {m: _imports(p, modules, module_level_only=False) - {m} for m, p in modules.items()}
    allowed = {"dprm.queries.base": {"dprm.queries.literals", "dprm.queries.operators", "dprm.queries.text"}}
    for source, targets in allowed.items():
        graph[source] -= targets
    assert _cycles(graph) == []


def test_layers_depend_downwards_only(modules) -> None:
    wrong = []
    for module, path in modules.items():
        for target in _imports(path, modules, module_level_only=False):
            if _layer(target) in FORBIDDEN.get(_layer(module), set()):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_cli_commands_do_not_import_each_other(modules) -> None:
    wrong = []
    for module, path in modules.items():
        if module.startswith("dprm.cli.") and module not in CLI_SHARED:
            for target in _imports(path, modules, module_level_only=False):
                if target.startswith("dprm.cli.") and target not in CLI_SHARED and target != module:
                    wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_every_package_and_top_level_module_has_a_rule(modules) -> None:
    """A new package or top-level module gets its place in FORBIDDEN (or is an entry point)."""
    layers = {_layer(m) for m in modules}
    unruled = sorted(layers - set(FORBIDDEN) - ENTRY_POINTS - {"cli"})  # cli: the top, may import anything
    assert unruled == [], f"add a FORBIDDEN rule for {unruled} in tests/test_architecture.py"
    assert layers - ENTRY_POINTS == _ALL_LAYERS, f"_ALL_LAYERS differs from the code: {layers ^ _ALL_LAYERS}"
