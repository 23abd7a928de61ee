"""The docs stay true (#39): every module path and every Redis key that
docs/ARCHITECTURE.md names exists in the code, every module of the layers it
maps is named, and every key the code spells is in its key tables; every
benchmark script is listed in bench/README.md; the docs' links resolve; the
README stays a front door.

The keys are read from the source, not from a list kept here: every f-string
(and every ``kv.key(...)`` / ``kv.table_key(...)`` call) of a product module
that starts with the service's key prefix is rendered into a template, with
``<name>`` for each value put in (``f"{self.prefix}{{t:{table_id}}}:table"``
-> ``P{t:<table_id>}:table``).  Attributes, methods and module functions of the
same class or module are followed (``self.base``, ``self.key(id)``,
``beside(...)``), and ``<obj>.<attr>`` through the class named like ``obj``
(``self.ratings.base`` -> ``Ratings``), so a key spelled in a keys module or
anywhere else is seen wherever it moves.  A placeholder's name is not compared
(``<id>`` in the doc matches ``<table_id>`` in the code)."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGES = ("engine", "tables", "telegram_bot", "admin_api", "sandbox", "durak")
KEY_PACKAGES = ("tables", "telegram_bot", "admin_api", "sandbox")
"""Where Redis keys may be spelled (engine has no Redis, durak only starts)."""

PREFIX = "\x00"
"""Stands for the service's key prefix (``P`` in the doc) while rendering."""
HOLE = "\x01"
"""A value the renderer could not follow: a template holding it is dropped."""
MAX_ALTERNATIVES = 16


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# --------------------------------------------------------------------- paths
PATH_RE = re.compile(r"(?<![\w./<-])((?:[A-Za-z_][\w]*/)*[A-Za-z_]\w*\.(?:py|md|toml|po))(?![\w/])")
DIR_RE = re.compile(r"`((?:[A-Za-z_][\w]*/)+)`")
DOTTED_RE = re.compile(r"`((?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)`")


def resolves(token: str, files: list[str]) -> bool:
    """A path the doc names is a file of the repository, named from its root
    or from any folder above it (``delivery/held.py`` is
    ``telegram_bot/delivery/held.py``)."""
    return any(f == token or f.endswith("/" + token) for f in files)


def repo_files() -> list[str]:
    skip = (".venv", ".git", ".run", "build", "dist", "node_modules")
    return [
        rel(p)
        for p in ROOT.rglob("*")
        if p.is_file()
        and not any(
            part in skip or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts
        )
    ]


def missing_paths(text: str, files: list[str]) -> list[str]:
    dirs = {f.rsplit("/", 1)[0] + "/" for f in files if "/" in f}
    dirs |= {"/".join(f.split("/")[:i]) + "/" for f in files for i in range(1, f.count("/") + 1)}
    bad = [t for t in sorted(set(PATH_RE.findall(text))) if not resolves(t, files)]
    bad += [
        d
        for d in sorted(set(DIR_RE.findall(text)))
        if not any(x == d or x.endswith("/" + d) for x in dirs)
    ]
    return bad


def missing_dotted(text: str) -> list[str]:
    """``tables.keys`` or ``telegram_bot.buttons.moves.stamp``: a module, and
    at most the names defined at its top level or in its classes after it."""
    bad = []
    for token in sorted(set(DOTTED_RE.findall(text))):
        if PATH_RE.fullmatch(token):
            continue  # `tables.py`: a path, not a module
        parts = token.split(".")
        for cut in range(len(parts), 0, -1):
            base = ROOT.joinpath(*parts[:cut])
            module = (
                base.with_suffix(".py")
                if base.with_suffix(".py").is_file()
                else base / "__init__.py"
            )
            if module.is_file():
                break
        else:
            bad.append(token)
            continue
        rest = parts[cut:]
        if rest and rest[0] not in defined_names(module):
            bad.append(token)
    return bad


def defined_names(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


# ---------------------------------------------------------------------- keys
@dataclass
class Scope:
    """What a name means where an f-string stands: the function's parameters
    and locals, its class, its module."""

    module: ModuleInfo
    cls: ast.ClassDef | None
    fn: ast.FunctionDef | ast.AsyncFunctionDef | None
    bound: dict[str, list[str]] = field(default_factory=dict)
    depth: int = 0


@dataclass
class ModuleInfo:
    path: Path
    tree: ast.Module
    classes: dict[str, ast.ClassDef]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]


class Renderer:
    """Renders an expression into the key templates it may stand for."""

    def __init__(self, modules: list[ModuleInfo]) -> None:
        self.modules = modules
        self.classes: dict[str, tuple[ModuleInfo, ast.ClassDef]] = {}
        for m in modules:
            for name, c in m.classes.items():
                self.classes.setdefault(name.lower(), (m, c))

    def render(self, node: ast.expr, scope: Scope) -> list[str]:
        if scope.depth > 12:
            return [HOLE]
        out = self._render(node, scope)
        return out[:MAX_ALTERNATIVES]

    def _render(self, node: ast.expr, scope: Scope) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            parts = [self.render(v, scope) for v in node.values]
            return ["".join(p) for p in itertools.product(*parts)]
        if isinstance(node, ast.FormattedValue):
            return self.render(node.value, scope)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pairs = itertools.product(self.render(node.left, scope), self.render(node.right, scope))
            return [a + b for a, b in pairs]
        if isinstance(node, ast.IfExp):
            return self.render(node.body, scope) + self.render(node.orelse, scope)
        if isinstance(node, ast.Name):
            return self._name(node.id, scope)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, scope)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        return [HOLE]

    def _name(self, name: str, scope: Scope) -> list[str]:
        if name in scope.bound:
            return scope.bound[name]
        if scope.fn is not None:
            params = {a.arg for a in scope.fn.args.args + scope.fn.args.kwonlyargs}
            if name == "prefix" and name in params:
                return [PREFIX]
            if name in params:
                return [f"<{name}>"]
            for node in ast.walk(scope.fn):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets
                ):
                    return self.render(node.value, self._deeper(scope))
            for node in ast.walk(scope.fn):  # unpacked, a loop's or a comprehension's
                targets: list[ast.expr] = []
                if isinstance(node, ast.Assign):
                    targets = [e for t in node.targets if isinstance(t, ast.Tuple) for e in t.elts]
                elif isinstance(node, (ast.For, ast.comprehension)):
                    targets = [node.target, *getattr(node.target, "elts", [])]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return [f"<{name}>"]
        return [HOLE]

    @staticmethod
    def _deeper(scope: Scope) -> Scope:
        return Scope(scope.module, scope.cls, scope.fn, scope.bound, scope.depth + 1)

    def _attribute(self, node: ast.Attribute, scope: Scope) -> list[str]:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and scope.cls is not None:
            return self._member(scope.module, scope.cls, node.attr, scope)
        owner = self._owner(node.value)
        if owner is not None:
            return self._member(owner[0], owner[1], node.attr, scope)
        return [HOLE]

    def _owner(self, value: ast.expr) -> tuple[ModuleInfo, ast.ClassDef] | None:
        """The class an object is named after: ``ratings`` or ``self.ratings``
        -> ``Ratings``."""
        name = value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", None)
        if name is None or name == "self":
            return None
        return self.classes.get(name.lower())

    def _member(self, module: ModuleInfo, cls: ast.ClassDef, attr: str, scope: Scope) -> list[str]:
        for item in cls.body:  # a property
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == attr:
                return self._returns(module, cls, item, {}, scope)
        for item in cls.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(item):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and t.attr == attr
                    for t in node.targets
                ):
                    return self.render(node.value, Scope(module, cls, item, depth=scope.depth + 1))
        return [HOLE]

    def _returns(
        self,
        module: ModuleInfo,
        cls: ast.ClassDef | None,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        bound: dict[str, list[str]],
        scope: Scope,
    ) -> list[str]:
        inner = Scope(module, cls, fn, bound, scope.depth + 1)
        out: list[str] = []
        for node in ast.walk(fn):
            if isinstance(node, ast.Return) and node.value is not None:
                out += self.render(node.value, inner)
        return out or [HOLE]

    def _call(self, node: ast.Call, scope: Scope) -> list[str]:
        func = node.func
        args = [self.render(a, scope) for a in node.args]
        if isinstance(func, ast.Attribute) and self._is_kv(func.value):
            if func.attr == "key" and len(args) == 1:
                return [PREFIX + a for a in args[0]]
            if func.attr == "table_key" and len(args) == 2:
                return [f"{PREFIX}{{t:{a}}}:{b}" for a, b in itertools.product(*args)]
        target: (
            tuple[ModuleInfo, ast.ClassDef | None, ast.FunctionDef | ast.AsyncFunctionDef] | None
        ) = None
        if isinstance(func, ast.Name) and func.id in scope.module.functions:
            target = (scope.module, None, scope.module.functions[func.id])
        elif isinstance(func, ast.Attribute):
            if (
                isinstance(func.value, ast.Name)
                and func.value.id == "self"
                and scope.cls is not None
            ):
                owner: tuple[ModuleInfo, ast.ClassDef] | None = (scope.module, scope.cls)
            else:
                owner = self._owner(func.value)
            if owner is not None:
                for item in owner[1].body:
                    if (
                        isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and item.name == func.attr
                    ):
                        target = (owner[0], owner[1], item)
        if target is None:
            return [HOLE]
        module, cls, fn = target
        params = [a.arg for a in fn.args.args if a.arg != "self"]
        out: list[str] = []
        for values in itertools.islice(itertools.product(*args), MAX_ALTERNATIVES):
            bound = {
                p: [v if HOLE not in v else f"<{p}>"] for p, v in zip(params, values, strict=False)
            }
            out += self._returns(module, cls, fn, bound, scope)
        return out

    @staticmethod
    def _is_kv(value: ast.expr) -> bool:
        name = value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", "")
        return name == "kv"


@dataclass(frozen=True)
class Spelled:
    template: str
    where: str

    @property
    def shown(self) -> str:
        return self.template.replace(PREFIX, "P ").replace("P {", "P{")


def load_modules(packages: tuple[str, ...]) -> list[ModuleInfo]:
    out = []
    for pkg in packages:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
            functions = {
                n.name: n
                for n in tree.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
            out.append(ModuleInfo(path, tree, classes, functions))
    return out


def spelled_keys(modules: list[ModuleInfo]) -> list[Spelled]:
    """Every key template the code builds from the service's prefix."""
    renderer = Renderer(modules)
    found: dict[str, Spelled] = {}
    for m in modules:
        for scope, node in key_roots(m):
            for t in renderer.render(node, scope):
                rest = t[len(PREFIX) :].lstrip()
                if (
                    not t.startswith(PREFIX)
                    or HOLE in t
                    or "*" in t
                    or not rest
                    or rest.startswith("<")
                ):
                    continue  # not built from the prefix; a SCAN pattern
                where = f"{rel(m.path)}:{node.lineno}"
                found.setdefault(t, Spelled(t, where))
    return sorted(found.values(), key=lambda s: s.template)


def is_key_call(call: ast.Call, m: ModuleInfo, cls: ast.ClassDef | None) -> bool:
    """``kv.key(...)``, ``kv.table_key(...)``, or a call of a function of the
    module or a method of the class (``beside(self.tables, "exp")``)."""
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ("key", "table_key")
        and Renderer._is_kv(func.value)
    ):
        return True
    if isinstance(func, ast.Name):
        return func.id in m.functions
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and cls is not None
        and any(getattr(item, "name", None) == func.attr for item in cls.body)
    )


def key_roots(m: ModuleInfo) -> Iterator[tuple[Scope, ast.expr]]:
    """f-strings and ``kv.key(...)`` calls, each with the scope it stands in."""

    def visit(
        node: ast.AST, cls: ast.ClassDef | None, fn: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> Iterator[tuple[Scope, ast.expr]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                if child.name != "KeyValueStore":  # the API that builds keys, not a key
                    yield from visit(child, child, None)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, cls, child)
            else:
                if isinstance(child, ast.JoinedStr) or (
                    isinstance(child, ast.Call) and is_key_call(child, m, cls)
                ):
                    yield Scope(m, cls, fn), child
                yield from visit(child, cls, fn)

    yield from visit(m.tree, None, None)


def normal(template: str) -> str:
    """Compared without the leading prefix and the placeholders' names
    (``P{t:<id>}:table`` -> ``{t:<>}:table``; a prefix inside a hash tag stays:
    ``P tables:exp{P tables}`` -> ``tables:exp{P tables}``)."""
    t = template.replace(PREFIX, "P ").replace("P {", "P{")
    t = re.sub(r"^P\s*", "", t.strip())
    return re.sub(r"<[^<>]*>", "<>", t)


KEY_CELL_RE = re.compile(r"`(P[ {][^`]*)`")


def documented_keys(text: str) -> list[str]:
    """The keys the doc's key tables name: every `P ...` in a row's first cell."""
    keys = []
    for line in text.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            keys += KEY_CELL_RE.findall(first)
    return keys


def documented_in_prose(text: str) -> list[str]:
    """Keys the doc names outside its tables (`P rl:{c:<chat>}:fly:<id>`)."""
    return [k for k in KEY_CELL_RE.findall(text) if "<" in k or "{" in k]


def undocumented(spelled: list[Spelled], documented: list[str]) -> list[Spelled]:
    """A template is documented when a key table names it, or names a key it
    is the start of (``P{rt}`` is the base of ``P{rt}:top:<variant>``)."""
    docs = {normal(d) for d in documented}
    return [
        s
        for s in spelled
        if normal(s.template) not in docs
        and not any(d.startswith(normal(s.template) + ":") for d in docs)
    ]


def unspelled(documented: list[str], spelled: list[Spelled]) -> list[str]:
    code = {normal(s.template) for s in spelled}
    return [d for d in documented if normal(d) not in code]


# ---------------------------------------------------------------------- tests
@pytest.fixture(scope="module")
def architecture() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def keys_in_code() -> list[Spelled]:
    return spelled_keys(load_modules(KEY_PACKAGES))


def test_every_path_the_architecture_names_exists(architecture: str) -> None:
    bad = missing_paths(architecture, repo_files()) + missing_dotted(architecture)
    assert not bad, (
        f"docs/ARCHITECTURE.md names paths or modules that do not exist: {bad}; "
        "rename them in the doc to where the code lives now, or drop them"
    )


def layer_rows(text: str) -> dict[str, str]:
    """The bot's layer table: first cell (`handlers/`) -> the row."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| `([\w/]+/)` ", line)
        if m:
            rows[m.group(1)] = line
    return rows


def test_every_bot_module_is_in_its_layer_row(architecture: str) -> None:
    """The layer table lists each layer's modules whole (#39: `held.py`,
    `hints.py`, `poll_lease.py` and the arena modules were missing)."""
    rows = layer_rows(architecture)
    bot = ROOT / "telegram_bot"
    problems = []
    for folder in sorted(p for p in bot.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        for sub in [folder, *sorted(q for q in folder.iterdir() if (q / "__init__.py").exists())]:
            name = sub.relative_to(bot).as_posix() + "/"
            row = rows.get(name)
            if row is None:
                problems.append(f"no row for `{name}` in the bot's layer table")
                continue
            named = set(PATH_RE.findall(row))
            for module in sorted(sub.glob("*.py")):
                if module.name != "__init__.py" and module.name not in named:
                    problems.append(f"telegram_bot/{name}{module.name} is not in the `{name}` row")
    assert not problems, "docs/ARCHITECTURE.md, the bot's layers: " + "; ".join(problems)


def test_every_table_service_module_is_named(architecture: str) -> None:
    """Each module of `tables/` is named in the service's section (its parts
    table, or the text around it)."""
    section = architecture.split("### The table service", 1)[1].split("### The bot", 1)[0]
    named = set(PATH_RE.findall(section))
    missing = [
        p.name
        for p in sorted((ROOT / "tables").glob("*.py"))
        if p.name not in ("__init__.py", "__main__.py")
        and p.name not in named
        and f"tables/{p.name}" not in named
    ]
    assert not missing, (
        f"tables/ modules not named in docs/ARCHITECTURE.md's 'The table service' section: {missing}; "
        "add each to the parts table (module, what it does)"
    )


def test_every_key_the_code_spells_is_in_the_key_tables(
    architecture: str, keys_in_code: list[Spelled]
) -> None:
    assert len(keys_in_code) > 40, "the key scan found too few keys: is the renderer broken?"
    bad = undocumented(keys_in_code, documented_keys(architecture))
    assert not bad, "\n".join(
        [
            f"{len(bad)} Redis key(s) spelled in the code are not in docs/ARCHITECTURE.md's key tables:"
        ]
        + [f"  `{s.shown}`  (spelled at {s.where})" for s in bad]
        + [
            "add a row `| `<key>` | <type> | <what it holds> |` to 'Written by the table service' "
            "(a key of tables/) or 'Written by the bot' (a key of telegram_bot/) in ## Redis keys"
        ]
    )


def test_every_key_the_architecture_names_is_spelled(
    architecture: str, keys_in_code: list[Spelled]
) -> None:
    named = documented_keys(architecture) + documented_in_prose(architecture)
    assert len(documented_keys(architecture)) > 40
    bad = sorted(set(unspelled(named, keys_in_code)))
    assert not bad, (
        f"docs/ARCHITECTURE.md names Redis keys no module spells: {bad}; "
        "write them as the keys module builds them (a placeholder's name is free: <id>)"
    )


def test_every_benchmark_is_listed_in_bench_readme() -> None:
    text = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `bench/(\w+\.py)`", text, re.M))
    scripts = {p.name for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_")}
    assert scripts <= listed, (
        f"bench/README.md's list of scripts lacks {sorted(scripts - listed)}: "
        "add a line `- `bench/<name>.py` -- what it measures` to its 'The scripts' list"
    )
    assert listed <= scripts, (
        f"bench/README.md lists scripts that are gone: {sorted(listed - scripts)}"
    )


LINK_RE = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize(
    "doc",
    [
        "README.md",
        "bench/README.md",
        "docs/ARCHITECTURE.md",
        "docs/ADMIN_API.md",
        "docs/PLAYING.md",
        "docs/ENGINE.md",
    ],
)
def test_links_between_docs_resolve(doc: str) -> None:
    path = ROOT / doc
    text = path.read_text(encoding="utf-8")
    bad = [
        link
        for link in LINK_RE.findall(text)
        if "://" not in link and not (path.parent / link).exists()
    ]
    assert not bad, f"{doc} links to files that do not exist: {bad}"


def test_readme_is_a_front_door() -> None:
    """#39: the README is the way in (what it is, the two commands, the
    sandbox, configuration, links), about 200 lines; the rest lives in docs/."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, "README.md grew past a front door: move detail to docs/"
    for command in ("bash .ci/dev run", "bash .ci/dev test"):
        assert command in text
    assert "bash .ci/dev test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_checks_catch_planted_stale_claims(
    architecture: str, keys_in_code: list[Spelled]
) -> None:
    """The checks above can fail: a path, a module and a key that do not
    exist, planted in the doc, are found; a key row taken out is missed; a key
    spelled in a new module (a class of its own, no keys module) is seen."""
    planted = (
        architecture
        + "\n`telegram_bot/delivery/ghost.py`, `tables.ghost`\n| `P ghost:{c:<chat>}` | string | planted |\n"
    )
    assert "telegram_bot/delivery/ghost.py" in missing_paths(planted, repo_files())
    assert "tables.ghost" in missing_dotted(planted)
    assert unspelled(documented_keys(planted), keys_in_code) == ["P ghost:{c:<chat>}"]
    without = re.sub(r"^\| `P budget:.*$", "", architecture, flags=re.M)
    assert [s.shown for s in undocumented(keys_in_code, documented_keys(without))] == [
        "P budget:{c:<chat>}"
    ]
    source = (
        "class Ghosts:\n"
        "    def __init__(self, prefix: str) -> None:\n"
        "        self.base = f'{prefix}{{gh}}'\n"
        "    def key(self, user: int) -> str:\n"
        "        return f'{self.base}:u:{user}'\n"
    )
    tree = ast.parse(source)
    ghost = ModuleInfo(ROOT / "tables" / "ghost.py", tree, {"Ghosts": tree.body[0]}, {})  # type: ignore[dict-item]
    found = [s.shown for s in spelled_keys([ghost])]
    assert found == ["P{gh}", "P{gh}:u:<user>"]
    assert [
        s.shown for s in undocumented(spelled_keys([ghost]), documented_keys(architecture))
    ] == found
