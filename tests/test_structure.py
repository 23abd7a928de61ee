"""The structure the README and docs/ARCHITECTURE.md promise, beyond what
``lint-imports`` checks: nothing in ``engine``, ``telegram_bot`` or ``admin_api``
imports ``sandbox``, and the two adapters never import each other (every import
statement, at any depth, including ``TYPE_CHECKING`` ones -- which import-linter
may not see); the import contract for the pure rules names every module of
``engine`` but the table service; a class name means one thing in the whole
project; one clock type; product modules stay small (at most 400 lines)."""

from __future__ import annotations

import ast
import re
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("engine", "telegram_bot", "admin_api", "sandbox")

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


@pytest.mark.parametrize("package", PRODUCT)
def test_product_modules_are_at_most_400_lines(package: str) -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / package).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, long


def test_the_pure_rules_contract_names_every_rules_module() -> None:
    """A module added to ``engine/`` is pure unless it is part of the table
    service: the import contract must list it (it cannot say "all of engine but
    engine.live")."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}
    listed = set(contracts["rules-pure"]["source_modules"])
    engine = ROOT / "engine"
    modules = {
        f"engine.{p.stem if p.is_file() else p.name}"
        for p in engine.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py")
        or (p.is_dir() and (p / "__init__.py").is_file() and p.name != "live")
    }
    assert listed == modules
    # and the package's own __init__ (not a listed module) imports only rules
    assert "engine.live" not in imported_modules(engine / "__init__.py")


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_one_clock_type() -> None:
    """``engine.clock.Clock`` is the only definition of the clock type (clocks
    themselves, such as the fake API's ``ManualClock``, are callables of it)."""
    pattern = re.compile(r"^\s*(class\s+Clock\b|Clock\s*(:\s*[\w.]+\s*)?=)", re.M)
    found = [
        str(path.relative_to(ROOT))
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found == ["engine/clock.py"]


def test_no_benchmark_shadows_a_package() -> None:
    """``python bench/x.py`` puts ``bench/`` first on ``sys.path``."""
    packages = {"engine", "telegram_bot", "admin_api", "sandbox"}
    shadows = {p.name for p in (ROOT / "bench").iterdir() if p.stem in packages}
    assert not shadows, shadows
