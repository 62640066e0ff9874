"""docs/architecture.md keeps in step with the code: its list names every package and top-level module."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _code_names() -> set[str]:
    package = ROOT / "src" / "dprm"
    packages = {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return packages | modules


def _listed_names() -> set[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- packages -->(.*?)<!-- /packages -->", text, re.S)
    assert block is not None, "docs/architecture.md has lost its <!-- packages --> list"
    return set(re.findall(r"^- (\w+)$", block.group(1), re.M))


def test_the_architecture_picture_names_exactly_the_packages_and_modules() -> None:
    code, listed = _code_names(), _listed_names()
    assert not code - listed, f"add to docs/architecture.md (picture and list): {sorted(code - listed)}"
    assert not listed - code, f"remove from docs/architecture.md (no such package or module): {sorted(listed - code)}"


def test_every_listed_name_is_also_in_the_picture() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    picture = text.split("<!-- packages -->")[0]
    missing = [name for name in _listed_names() if not re.search(rf"\b{name}(/|\.py)", picture)]
    assert missing == [], f"draw these in the picture of docs/architecture.md: {missing}"
