"""The dashboard's shape (issues 22, 37): one run set, one view-model per page, pages that only draw and never
ask which source they hold.

Read from the source text (no Streamlit run): every page reads ``ui.context.context()`` and draws from its
view-model in ``audit.views``, importing nothing else of ``audit`` (only ``audit.views.*``, the capabilities
registry the CLI and the pages share ``audit.capabilities``, ``ui``,
streamlit, pandas, numpy and the standard library); no page tests a stand-in for the source kind (a strategy
list, an index file, a store's health drawing, the corpus or the ground truth being there) — it asks the
capabilities (:mod:`audit.capabilities`); no page or ui module but the sidebar reads the sidebar's
source choice or a run set's ``source.kind``; ``audit/`` imports no Streamlit anywhere in its tree; the old
second implementation (``ui/system``) does not come back.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "app_pages").glob("*.py"))
UI = sorted((ROOT / "ui").glob("*.py"))
VIEW_MODEL = {"1_Overview.py": "audit.views.overview", "2_Strategies.py": "audit.views.strategies",
              "3_Query_explorer.py": "audit.views.query_explorer", "4_Chunk_map.py": "audit.views.chunk_map",
              "5_Threshold.py": "audit.views.threshold", "6_Tokens.py": "audit.views.tokens",
              "7_Citations.py": "audit.views.citations", "8_Index_health.py": "audit.views.index_health",
              "9_Upgrade_diff.py": "audit.views.upgrade_diff", "10_Ground_truth.py": "audit.views.ground_truth",
              "11_History.py": "audit.views.history", "12_Judging.py": "audit.views.judging"}
#: What a page may import besides ``audit.views.*`` and ``ui``: it draws (streamlit), holds tables (pandas, numpy
#: for a finite mask) and uses the standard library.
PAGE_LIBRARIES = {"streamlit", "pandas", "numpy"}
#: Attributes whose presence stands in for the source kind (``rs.strategies`` = "built-in", ``ctx.index_file``,
#: ``ctx.health``, ``ctx.store`` (a page asks ``ctx.can("store_health")`` or ``ctx.supports(…)``), ``rs.corpus``,
#: ``rs.ground_truth``, a space's ``chunks``/``tokens``/``vectors``); and the names pages gave such a stand-in
#: (``builtin = bool(rs.strategies)``, ``corpus = rs.corpus``).
STAND_IN_ATTRS = {"strategies", "index_file", "health", "store", "corpus", "ground_truth", "chunks", "tokens",
                  "vectors", "requests"}
STAND_IN_NAMES = {"builtin", "corpus", "index_file", "ground_truth"}
#: The objects a page holds the source through: the context, the run set, a space.
HOLDERS = {"ctx", "rs", "runset", "sp", "s", "space"}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)  # `from audit.views import ground_truth`
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_there_are_twelve_pages():
    assert [p.name for p in PAGES] == sorted(["1_Overview.py", "2_Strategies.py", "3_Query_explorer.py",
                                              "4_Chunk_map.py", "5_Threshold.py", "6_Tokens.py", "7_Citations.py",
                                              "8_Index_health.py", "9_Upgrade_diff.py", "10_Ground_truth.py",
                                              "11_History.py", "12_Judging.py"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_reads_the_context_and_draws_its_view_model(page):
    text = page.read_text(encoding="utf-8")
    imports = _imports(page)
    assert "context()" in text, "a page reads the run set the sidebar built"
    assert VIEW_MODEL[page.name] in imports, sorted(imports)


def _top_imports(path: Path) -> set[str]:
    """Every module a file imports, as written (``from X import y`` gives ``X``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _allowed_in_a_page(module: str) -> bool:
    root = module.split(".")[0]
    return (module == "audit.views" or module.startswith("audit.views.") or module == "ui" or module.startswith("ui.")
            or module == "audit.capabilities" or module.startswith("audit.capabilities.")
            or root in PAGE_LIBRARIES or root in sys.stdlib_module_names)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_imports_only_its_view_model_ui_and_libraries(page):
    offenders = sorted(m for m in _top_imports(page) if not _allowed_in_a_page(m))
    assert not offenders, f"{page.name} imports {offenders}: re-export from its view-model, or compute there"


def test_the_import_rule_catches_what_it_must():
    # The rule, checked on names a page used to import (issue 37): each of these is refused, the allowed kinds pass.
    for bad in ("audit", "audit.index.health", "audit.sources.builtin", "audit.report.markup", "audit.models"):
        assert not _allowed_in_a_page(bad), bad
    for good in ("audit.views.tokens", "ui", "ui.context", "streamlit", "pandas", "numpy", "pathlib", "math"):
        assert _allowed_in_a_page(good), good


def _is_holder(node) -> bool:
    """``ctx``, ``rs``, ``sp`` … or ``ctx.runset``: what a page reaches the source through."""
    if isinstance(node, ast.Name):
        return node.id in HOLDERS
    return isinstance(node, ast.Attribute) and node.attr == "runset" and _is_holder(node.value)


def _is_stand_in(node) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in STAND_IN_ATTRS and _is_holder(node.value)
    return isinstance(node, ast.Name) and node.id in STAND_IN_NAMES


def stand_in_tests(source: str) -> list[tuple[int, str]]:
    """Where ``source`` branches on a stand-in for the source kind: ``(line, code)`` of every truth test
    (``if``/``while``/ternary/``and``/``or``/``not``/``bool()``/``assert``) of a stand-in, and every comparison of
    one with ``None``."""
    tree = ast.parse(source)
    tests = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests.extend(node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tests.append(node.operand)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" and node.args:
            tests.append(node.args[0])
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(isinstance(x, ast.Constant) and x.value is None for x in sides):
                tests.extend(x for x in sides if _is_stand_in(x))
    return sorted({(t.lineno, ast.unparse(t)) for t in tests if _is_stand_in(t)})


#: The ui modules that build a source's run set from the sidebar's inputs: they know which source they build.
SOURCE_FORMS = {"sidebar.py", "files_source.py", "store_source.py", "endpoint_source.py"}


@pytest.mark.parametrize("page", PAGES + [p for p in UI if p.name not in SOURCE_FORMS], ids=lambda p: p.name)
def test_no_page_branches_on_a_stand_in_for_the_source_kind(page):
    # The ui modules a page draws through (notices, live, threshold, diff …) follow the pages' rule.
    found = stand_in_tests(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: ask the capabilities (ctx.can / audit.capabilities.can) instead: {found}"


def test_the_stand_in_rule_catches_what_it_must():
    # The branches the pages held before issue 37, one of each shape, then what replaces them.
    caught = stand_in_tests("builtin = bool(rs.strategies)\n"
                            "if ctx.index_file is None: pass\n"
                            "x = 1 if rs.strategies else 2\n"
                            "if not ctx.runset.strategies: pass\n"
                            "if corpus is None or c.start is None: pass\n"
                            "if sp.chunks is None: pass\n"
                            "if ctx.health is not None: pass\n"
                            "if builtin and retriever != 'dense': pass\n"
                            "if ctx.store is None: pass\n")
    assert [line for line, _ in caught] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert not stand_in_tests("if ctx.can('store_health'): pass\n"
                              "if ctx.supports('manifest'): pass\n"
                              "if ctx.store.supports('retry'): pass\n"
                              "if not can(rs, 'strategies'): pass\n"
                              "if check.strategies: pass\n"  # a needle check's verdicts, not the source
                              "if c.start is None: pass\n")


@pytest.mark.parametrize("path", PAGES + [p for p in UI if p.name != "sidebar.py"], ids=lambda p: p.name)
def test_no_page_asks_which_source_it_is(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"""session_state(\.get\(|\[)\s*["']source["']""", text), "reads the sidebar's source"
    assert "source.kind" not in text, "dispatches on the run set's source kind"
    assert not any(m.startswith(("ui.system", "audit.report.system", "audit.report.runs")) for m in _imports(path))


def test_the_second_implementation_is_gone():
    assert not (ROOT / "ui" / "system").exists()


def test_audit_imports_no_streamlit_anywhere():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "audit").rglob("*.py")
                 if any(m == "streamlit" or m.startswith("streamlit.") for m in _imports(p))]
    assert not offenders


def test_no_page_writes_a_count_with_a_hedged_plural():
    """A newcomer's report: "7 chunk(s)", "1 place(s)", "1 bluffs". A count on a page agrees with its noun through
    audit.words.plural; "word(s)" is never written (a unit such as "deadline (s)", seconds, is not one)."""
    import re

    root = Path(__file__).resolve().parent.parent
    hedged = [f"{p.relative_to(root)}:{i}" for folder in ("app_pages", "ui")
              for p in sorted((root / folder).glob("*.py"))
              for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
              if re.search(r"[a-z]\(s\)[ \"'.,:;]", line)]
    assert hedged == []
