"""What README.md and docs/*.md point at exists: the project's files they name, and the ``dprm.x.y`` modules
and names they give (docs/mining-sessions.md, a log of past measurements, is left out)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md"] + [path for path in sorted((ROOT / "docs").glob("*.md")) if path.name != "mining-sessions.md"]

#: A path in the checkout: src/..., tests/..., benchmarks/..., docs/... with a file's extension.
FILE = re.compile(r"(?<![\w/.-])((?:src|tests|benchmarks|docs)/[A-Za-z0-9_./-]+\.(?:py|md|json|sh|csv|toml|in|lock))\b")
#: A dotted name under dprm (not a format name such as ``dprm.redescriptions/1``).
NAME = re.compile(r"(?<![\w/.-])(dprm(?:\.[A-Za-z_]\w*)+)(?![\w/])")
#: Files named like a module: the Ray run's lock file (docs/scale-out.md).
FILE_NAMES = {"dprm.lock"}


def named(pattern: re.Pattern[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in DOCS:
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(match.group(1), []).append(path.name)
    return found


def resolves(dotted: str) -> bool:
    """``dotted`` is a module, or a module followed by names it has (``dprm.trees.compiled.route_rows``)."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        for part in parts[k:]:
            if not hasattr(target, part):
                return False
            target = getattr(target, part)
        return True
    return False


def test_every_file_the_docs_name_exists() -> None:
    files = named(FILE)
    assert len(files) > 50
    missing = [f"{name} (in {', '.join(sorted(set(pages)))})" for name, pages in sorted(files.items())
               if not (ROOT / name).exists()]
    assert missing == [], "files the docs name that the checkout lacks:\n" + "\n".join(missing)


def test_every_dprm_name_the_docs_give_exists() -> None:
    names = named(NAME)
    assert len(names) > 50
    missing = [f"{name} (in {', '.join(sorted(set(pages)))})" for name, pages in sorted(names.items())
               if name not in FILE_NAMES and not resolves(name)]
    assert missing == [], "modules or names the docs give that dprm lacks:\n" + "\n".join(missing)
