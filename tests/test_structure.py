"""The structure the README and docs/ARCHITECTURE.md promise, beyond what
``lint-imports`` checks: no package imports the ones above it and no module is
part of an import cycle (every import statement, at any depth, including
``TYPE_CHECKING`` ones -- which import-linter does not see); a class name means
one thing in the whole project; one clock type; no module outgrows the hard
limit of 800 lines (cohesion -- one concept a module -- is the rule below it;
ruff keeps each function's complexity at most 15)."""

from __future__ import annotations

import ast
import re
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("engine", "tables", "telegram_bot", "admin_api", "sandbox", "durak")
MAX_LINES = 800

FORBIDDEN = {
    "engine": {"tables", "sandbox", "telegram_bot", "admin_api", "durak"},
    "tables": {"sandbox", "telegram_bot", "admin_api", "durak"},
    "telegram_bot": {"sandbox", "admin_api", "durak"},
    "admin_api": {"sandbox", "telegram_bot", "durak"},
    "sandbox": {"durak"},
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
    for package in (*PRODUCT, "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    where[node.name].append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not clashes, clashes


@pytest.mark.parametrize("package", PRODUCT)
def test_no_module_outgrows_the_hard_limit(package: str) -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / package).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_the_pure_rules_contract_covers_all_of_engine() -> None:
    """The rules are the whole ``engine`` package (the table service is
    ``tables``): its purity contract names the package, not a list to keep in
    sync."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}
    assert contracts["rules-pure"]["source_modules"] == ["engine"]
    assert not (ROOT / "engine" / "live").exists()


@pytest.mark.parametrize("contract", ["handlers-thin", "views-pure"])
def test_the_upper_layers_contracts_count_indirect_imports(contract: str) -> None:
    """#39: a handler reached the delivery through a publishing module's
    attribute (``arena_boards.delivery.edit``) while ``handlers-thin`` counted
    only a module's own imports.  Both contracts of the upper layers count
    indirect imports; what they let through is a short list of named edges
    (the use cases, the locale middleware, the snapshot's type-only fields)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}
    assert not contracts[contract].get("allow_indirect_imports", False)
    assert len(contracts[contract].get("ignore_imports", [])) <= 4


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Every product module and the product modules it imports (any import
    statement at any depth, ``TYPE_CHECKING`` ones included; ``from a import b``
    counts ``a.b`` when that is a module, else ``a``)."""
    modules = {
        module_name(path): path for package in PRODUCT for path in (ROOT / package).rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for imported in imported_modules(path, with_names=True):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                found.add(imported)
        graph[name] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    """No module imports, through any chain, a module that imports it back --
    ``TYPE_CHECKING`` imports and imports inside functions included.  (A
    package's ``__init__`` re-exporting its own modules is a package, not a
    cycle: imports of a module's own package are not counted.)"""
    graph = import_graph()
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def imported_modules(path: Path, *, with_names: bool = False) -> set[str]:
    """The modules ``path`` imports (``with_names``: also ``a.b`` for each
    ``from a import b``, which may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            if with_names:
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
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
    packages = set(PRODUCT)
    shadows = {p.name for p in (ROOT / "bench").iterdir() if p.stem in packages}
    assert not shadows, shadows


def test_every_callback_data_lives_in_the_buttons_module() -> None:
    """Every inline button's ``CallbackData`` is declared in one module, so its
    64-byte budget and its prefix are reviewed in one place."""
    found = {
        f"{path.relative_to(ROOT)}:{node.name}"
        for path in sorted((ROOT / "telegram_bot").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "CallbackData" for b in node.bases)
    }
    assert found, "no CallbackData found: the check looks at the wrong place"
    assert {f.split(":")[0] for f in found} == {"telegram_bot/buttons/callbacks.py"}, found


def test_use_case_outcomes_are_data() -> None:
    """A use case's outcome names what changed (``telegram_bot.publishing.changes``);
    it never carries a closure for the handler to run."""
    for path in sorted((ROOT / "telegram_bot" / "usecases").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "Callable[[], Awaitable" not in text, path
        assert "then=" not in text, path


def test_example_counts_come_from_the_profiles() -> None:
    """#37: a random property's example count comes from the Hypothesis profile
    (``ci``, ``deep``: tests/conftest.py) as a share of it (tests/profiles.py);
    a count of its own would override every profile."""
    own = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name not in ("conftest.py", "profiles.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bmax_examples\s*=", line)
    ]
    assert not own, f"max_examples set in a test (use tests.profiles.budget): {own}"
