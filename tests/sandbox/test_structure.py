"""The sandbox sits on top: nothing in ``engine``, ``telegram_bot`` or
``admin_api`` imports ``sandbox``, and the two adapters never import each other
(every import statement, at any depth, including ``TYPE_CHECKING`` ones); and
a class name means one thing in the whole project; the sandbox's modules stay
small (at most 400 lines)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "engine": {"sandbox", "telegram_bot", "admin_api"},
    "telegram_bot": {"sandbox", "admin_api"},
    "admin_api": {"sandbox", "telegram_bot"},
}


def imported_tops(path: Path) -> set[str]:
    tops: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_the_layers_above(package: str) -> None:
    found = {
        f"{path.relative_to(ROOT)}: {top}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for top in imported_tops(path) & FORBIDDEN[package]
    }
    assert not found, sorted(found)


def test_class_names_are_unique_across_the_project() -> None:
    where: defaultdict[str, list[str]] = defaultdict(list)
    for package in ("engine", "telegram_bot", "admin_api", "sandbox", "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    where[node.name].append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not clashes, clashes


def test_sandbox_modules_are_at_most_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "sandbox").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, long


def test_no_benchmark_shadows_a_package() -> None:
    """``python bench/x.py`` puts ``bench/`` first on ``sys.path``."""
    packages = {"engine", "telegram_bot", "admin_api", "sandbox"}
    shadows = {p.name for p in (ROOT / "bench").iterdir() if p.stem in packages}
    assert not shadows, shadows
