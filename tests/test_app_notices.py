"""AppTest: every page for a team's system shows the warnings on its files, the same lines as the CLI's.

The files are the example's (data/example) with a third run written as teams hand runs over: fields after
the run tag, cosine distances without ``--score``, a judged query missing; and qrels judging a query the
queries file has no text for. Each page must show each ``warning:`` line of ``report --run`` once.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import shown

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "data" / "example"
APP = str(ROOT / "app.py")
PAGES = ["app_pages/1_Overview.py", "app_pages/2_Strategies.py", "app_pages/3_Query_explorer.py",
         "app_pages/4_Chunk_map.py", "app_pages/5_Threshold.py", "app_pages/6_Tokens.py",
         "app_pages/7_Citations.py", "app_pages/8_Index_health.py", "app_pages/9_Upgrade_diff.py"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    d = home / "handover"  # under $AUDIT_HOME: a folder the dashboard may read
    d.mkdir()
    qrels = d / "qrels.trec"
    qrels.write_text((EX / "qrels.trec").read_text(encoding="utf-8") + "q42 0 b1 1\n", encoding="utf-8")
    # the example's "before" run (cosine distances) written without --score, with a seventh field, q3 left out
    lines = [line.split() for line in (EX / "before.trec").read_text(encoding="utf-8").splitlines() if line.strip()]
    (d / "legacy.trec").write_text("".join(" ".join(f + ["extra"]) + "\n" for f in lines if f[0] != "q3"),
                                   encoding="utf-8")
    env = {"AUDIT_SOURCE": "system", "AUDIT_SYS_QUERIES": str(EX / "queries.tsv"), "AUDIT_SYS_QRELS": str(qrels),
           "AUDIT_SYS_RUNS": f"after={EX / 'after.trec'}\nlegacy={d / 'legacy.trec'}", "AUDIT_SYS_SCORES": "",
           "AUDIT_SYS_CHUNKS": "", "AUDIT_SYS_CORPUS": "", "AUDIT_SYS_OOD_QUERIES": "", "AUDIT_SYS_OOD_RUNS": "",
           "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(home)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield d, qrels
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def cli_warnings(d: Path, qrels: Path) -> list[str]:
    from audit.report.report import build_report
    from audit.sources.imported.system import load_system

    s = load_system(EX / "queries.tsv", {"after": EX / "after.trec", "legacy": d / "legacy.trec"}, qrels=qrels)
    text = build_report(s).render_text()
    return [line.removeprefix("warning: ") for line in text.splitlines() if line.startswith("warning: ")]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_every_warning_once(files, page):
    want = cli_warnings(*files)
    # rejected q42; the seventh field; the distances' rank order; q3 and q9 missing from the legacy run; and
    # each run's score tie at its first relevant chunk (after's q6, legacy's q4: the rr-ties note)
    assert [w.split(":")[0] for w in want] == ["qrels.trec", "legacy.trec", "run 'legacy' (legacy.trec)",
                                               "run 'legacy' (legacy.trec)", "run 'after' (after.trec)",
                                               "run 'legacy' (legacy.trec)"]
    assert "on 1 query (q6)" in want[4] and "on 1 query (q4)" in want[5]
    assert "--score legacy=cosine-distance" in want[2] and "(q3, q9)" in want[3]
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page != PAGES[0]:
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
    got = [shown(w) for w in at.warning]
    for line in want:
        assert got.count(line) == 1, (line, got)
    assert any(e.label.startswith("1 judged queries left out") for e in at.expander)
