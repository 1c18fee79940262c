"""The dashboard's shape (issue 22): one run set, one view-model per page, no page that asks which source it is.

Read from the source text (no Streamlit run): every page reads ``ui.context.context()`` and draws from
``audit.views`` (the Ground truth page from its own view-model, ``audit.authoring.view``); no page or ui
module but the sidebar reads the sidebar's source choice or a run set's ``source.kind``; ``audit/`` imports
no Streamlit anywhere in its tree; the old second implementation (``ui/system``) does not come back.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "app_pages").glob("*.py"))
UI = sorted((ROOT / "ui").glob("*.py"))
VIEW_MODEL = {"10_Ground_truth.py": "audit.authoring.view"}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)  # `from audit.authoring import view`
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
    want = VIEW_MODEL.get(page.name)
    if want:
        assert want in imports
    else:
        assert any(m.startswith("audit.views.") for m in imports), sorted(imports)


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
