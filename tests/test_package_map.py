"""The package's map is true (issues 23 and 50): no import circle anywhere in ``audit/`` or the dashboard's ``ui/``,
and every module a docstring of either names exists.

Both are read from the source with :mod:`ast`, nothing is imported:

- **Import graph**: one graph over ``audit/`` and ``ui/`` (a ``ui`` module's import of ``audit.*`` is an edge into
  the audit's part of it): every ``import`` / ``from … import`` of every module, at the top or inside a function
  (``if TYPE_CHECKING:`` blocks included), relative ones resolved against the module's package. An edge goes
  to the module named (``from .a import b`` → ``pkg.a.b`` when that is a module, else ``pkg.a``), and to every
  package above it that the importing module is not already inside (Python runs ``pkg/__init__.py`` first):
  that is how ``audit.sources.vectorstore → audit.sources.pgvector.connection`` came back to ``vectorstore``
  through ``pgvector/__init__.py``. A cycle fails the test, named module by module.
- **Docstring references**: in ``audit/`` and ``ui/``, every ``:mod:`` target (relative ones too) is a module, and
  every dotted ``audit.x.y`` or ``ui.x.y`` name in a docstring is a module or a name defined in one (a top-level
  name, or a class's member for ``Class.member``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "audit"
#: The packages whose modules make the graph: the audit, and the dashboard's ``ui`` on top of it.
PACKAGES = (PACKAGE, ROOT / "ui")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, whether it is a package's ``__init__``), over :data:`PACKAGES`."""
    out = {}
    for p in (p for pkg in PACKAGES for p in sorted(pkg.rglob("*.py"))):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return out


MODULES = _modules()


def _package_of(module: str, is_pkg: bool) -> list[str]:
    return module.split(".") if is_pkg else module.split(".")[:-1]


def _targets(module: str, is_pkg: bool, node) -> set[str]:
    """The modules an import statement names (the longest prefix of each name that is a module)."""
    names = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = _package_of(module, is_pkg)
            pkg = pkg[:len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([node.module] if node.module else []))
        names = [f"{base}.{a.name}" for a in node.names]
    out = set()
    for name in names:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in MODULES:
                out.add(".".join(parts[:i]))
                break
    return out


def import_graph() -> dict[str, set[str]]:
    """Module → the modules it imports (see the module docstring for the rule)."""
    graph = {}
    for module, (path, is_pkg) in MODULES.items():
        inside = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        if is_pkg:
            inside.add(module)
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(module, is_pkg, node):
                    parts = t.split(".")
                    for i in range(1, len(parts) + 1):  # the target and the packages above it Python runs first
                        above = ".".join(parts[:i])
                        if above in MODULES and (above == t or above not in inside):
                            edges.add(above)
        edges.discard(module)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a cycle through them."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(_a_cycle(graph, set(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _a_cycle(graph, comp: set[str]) -> list[str]:
    """One cycle inside a strongly connected component: start → … → start (breadth-first, shortest)."""
    start = min(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, v, start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(comp)


def test_the_rule_finds_a_circle_through_a_package():
    # the circle this issue found: vectorstore → pgvector.connection runs pgvector/__init__, which imports system,
    # which imports vectorstore
    g = {"a.vs": {"a.pg", "a.pg.conn"}, "a.pg": {"a.pg.sys"}, "a.pg.sys": {"a.vs"}, "a.pg.conn": set(), "a": set()}
    assert cycles(g) == [["a.pg", "a.pg.sys", "a.vs", "a.pg"]]
    assert cycles({"x": {"y"}, "y": set()}) == []


def test_no_import_circle():
    found = cycles(import_graph())
    assert not found, "import circles: " + "; ".join(" → ".join(c) for c in found)


def test_every_import_is_seen():
    g = import_graph()
    # a top-level import, a function-level one and a relative one, each as an edge
    assert "audit.jsontext" in g["audit.groundtruth"]
    assert "audit.stores.runsets" in g["audit.stores.protocol"]  # inside VectorStore.runset
    assert "audit.stores.base" in g["audit.stores.filters"]
    # the dashboard's modules are in the same graph: a relative import inside ui/, a function-level one, and an
    # import of the audit, each as an edge
    assert "ui.session" in g["ui.history"]
    assert "ui.text" in g["ui.context"]  # inside footer
    assert "audit.capabilities" in g["ui.context"]


# --------------------------------------------------------------------------- docstring references

_MOD_ROLE = re.compile(r":mod:`~?([A-Za-z_.]+)`")
_DOTTED = re.compile(r"(?<![\w.])((?:audit|ui)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _docstrings(tree) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append(doc)
    return out


def _defined(path: Path) -> tuple[set[str], dict[str, set[str]], dict[str, str]]:
    """The module's top-level names (definitions, assignments, imports), each class's members, and where each
    imported name comes from (name → the module it is imported from)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = next(m for m, (p, _) in MODULES.items() if p == path)
    is_pkg = MODULES[module][1]
    names, members, origin = set(), {}, {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                m = set()
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        m.add(sub.name)
                        m |= {t.attr for a in ast.walk(sub) if isinstance(a, ast.Assign) for t in a.targets
                              if isinstance(t, ast.Attribute) and getattr(t.value, "id", None) == "self"}
                    elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                        m.add(sub.target.id)
                    elif isinstance(sub, ast.Assign):
                        m |= {t.id for t in sub.targets if isinstance(t, ast.Name)}
                members[node.name] = m
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
            if isinstance(node, ast.ImportFrom):
                base = _relative(module, is_pkg, "." * node.level + (node.module or "")) if node.level else node.module
                origin.update({a.asname or a.name: f"{base}.{a.name}" for a in node.names})
    return names, members, origin


def _resolves(name: str, depth: int = 0) -> bool:
    """Whether ``name`` is a module, or a name (``Class.member`` too) defined in one, following re-exports."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if module in MODULES:
            rest = parts[i:]
            if not rest:
                return True
            names, members, origin = _defined(MODULES[module][0])
            if rest[0] not in names:
                return False
            if len(rest) == 1:
                return True
            if rest[0] in members:
                return len(rest) == 2 and rest[1] in members[rest[0]]
            # a name imported here (a package re-exporting it): look where it comes from
            return rest[0] in origin and depth < 5 and _resolves(".".join([origin[rest[0]], *rest[1:]]), depth + 1)
    return False


def _relative(module: str, is_pkg: bool, target: str) -> str:
    if not target.startswith("."):
        return target
    dots = len(target) - len(target.lstrip("."))
    pkg = _package_of(module, is_pkg)
    pkg = pkg[:len(pkg) - (dots - 1)]
    return ".".join(pkg + [target.lstrip(".")])


def test_every_module_a_docstring_names_exists():
    bad = []
    for module, (path, is_pkg) in MODULES.items():
        for doc in _docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _MOD_ROLE.findall(doc):
                full = _relative(module, is_pkg, target)
                if full not in MODULES:
                    bad.append(f"{module}: :mod:`{target}`")
            for name in _DOTTED.findall(doc):
                if name == "audit.toml":  # the configuration file
                    continue
                if not _resolves(name.rstrip(".")):
                    bad.append(f"{module}: {name}")
    assert not bad, "docstrings name what does not exist:\n" + "\n".join(sorted(set(bad)))


def test_the_package_docstring_is_a_map_of_every_top_level_module():
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8")))
    named = set(_MOD_ROLE.findall(doc))
    top = {m for m in MODULES if m.startswith("audit.") and m.count(".") == 1 and not m.split(".")[1].startswith("_")}
    assert top - named == set(), f"modules the map leaves out: {sorted(top - named)}"
    assert named - set(MODULES) == set(), f"modules the map names that do not exist: {sorted(named - set(MODULES))}"


# --------------------------------------------------------------------------- folders, and the engines' one door


def _unit(module: str) -> str:
    """The top-level part of ``audit`` a module belongs to: its folder (``audit.stores``) or itself
    (``audit.config``)."""
    return ".".join(module.split(".")[:2])


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Top-level part of ``audit`` → the top-level parts its modules import (function-level imports counted, as in
    :func:`import_graph`); ``audit/__init__.py`` itself is left out (it imports nothing), and so is ``ui`` (it sits
    on top of the audit, which never imports it)."""
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        if a == "audit" or not a.startswith("audit."):
            continue
        ua = _unit(a)
        out.setdefault(ua, set())
        out[ua] |= {_unit(b) for b in targets if b != "audit" and _unit(b) != ua}
    return out


#: Where each engine's code lives: a live engine's package, or the front of the audit's own index.
ENGINE_CODE = ("audit.stores.pgvector", "audit.stores.chroma", "audit.stores.milvus", "audit.stores.sqlite",
               "audit.stores.lance")
REGISTRY = "audit.stores.registry"


def engine_imports(graph: dict[str, set[str]]) -> list[str]:
    """``importer → engine module`` for every import of engine code from outside that engine, the registry aside."""
    def engine_of(m):
        return next((e for e in ENGINE_CODE if m == e or m.startswith(e + ".")), None)

    return sorted(f"{a} → {b}" for a, targets in graph.items() for b in targets
                  if engine_of(b) and engine_of(a) != engine_of(b) and a != REGISTRY)


def _ui_graph() -> dict[str, set[str]]:
    """The dashboard's modules (``ui/``, ``app_pages/``, ``app.py``) → the ``audit`` modules they import."""
    out = {}
    files = sorted((ROOT / "ui").rglob("*.py")) + sorted((ROOT / "app_pages").glob("*.py")) + [ROOT / "app.py"]
    for p in files:
        name = str(p.relative_to(ROOT))
        found = set()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("audit"):
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                found |= {m for m in names if m in MODULES}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in MODULES}
        out[name] = found
    return out


def test_the_folder_rule_finds_two_folders_through_a_function_level_import():
    # a.x imports b.y at the top; b.z imports a.w inside a function: the two folders import each other
    g = {"audit.a.x": {"audit.b.y"}, "audit.b.z": {"audit.a.w"}, "audit.a.w": set(), "audit.b.y": set(),
         "audit.c": {"audit.a.x"}}
    assert cycles(folder_graph(g)) == [["audit.a", "audit.b", "audit.a"]]
    # engine code reached from outside its package is named; the registry and the engine itself are not
    g = {"audit.cli.x": {"audit.stores.pgvector.search"}, REGISTRY: {"audit.stores.chroma.engine"},
         "audit.stores.pgvector.search": {"audit.stores.pgvector.connection"}}
    assert engine_imports(g) == ["audit.cli.x → audit.stores.pgvector.search"]


def test_no_two_folders_of_audit_import_each_other():
    found = cycles(folder_graph(import_graph()))
    assert not found, "folders that import each other: " + "; ".join(" → ".join(c) for c in found)


def test_engine_code_is_reached_only_through_the_registry():
    g = import_graph()
    outside = engine_imports(g) + engine_imports(_ui_graph())
    assert not outside, "engine code imported around the registry:\n" + "\n".join(outside)
    # the rule sees the registry's own imports of every engine, so it would see any other
    assert {"audit.stores.pgvector.engine", "audit.stores.chroma.engine", "audit.stores.milvus.engine",
            "audit.stores.sqlite", "audit.stores.lance"} <= g[REGISTRY]
