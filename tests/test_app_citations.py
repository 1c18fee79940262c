"""AppTest of issue 12's Citations and Strategies items: outcome badges and the NO ANSWER box (item 6),
column help on every column of the Strategies table (item 7). The small corpus of test_app."""

from __future__ import annotations

import json

import pytest
from conftest import shown
from test_app import N_ACCEPTED, N_OOD, _app, _table, test_env  # noqa: F401  (test_env: the corpus fixture)

pytestmark = pytest.mark.slow


def _help_of(at, *columns: str) -> dict:
    """Column → help of the first table holding ``columns`` (from the dataframe's column config JSON)."""
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            config = json.loads(d.proto.columns or "{}")
            return {c: (config.get(c) or config.get(f"col:{c}") or {}).get("help") for c in d.value.columns}
    raise KeyError(columns)


def test_strategies_table_has_help_on_every_column():
    at = _app("app_pages/2_Strategies.py")
    helps = _help_of(at, "run", "RR@20 (MRR@20)")
    # every column, the cut-off ones included, explains itself on hover
    s8 = "Success@8 (recall@8) [Wilson 95%]"
    assert s8 in helps and "queries (n)" in helps
    assert all(helps.values()), [c for c, h in helps.items() if not h]
    assert "first 8" in helps[s8] and "Wilson 95%" in helps[s8]
    # fewer columns: the needle counts (per strategy, not per retriever) are their own table
    assert not {"destroyed (needles)", "overlap-only (needles)", "past window (needles)"} & set(helps)
    needles = _table(at, "strategy", "overlap-only (needles)")
    # by construction (test_app): A's 512-character cut destroys n1; B's overlap tail alone holds it
    assert list(needles["strategy"]) == list("ABCDEF")
    assert list(needles["destroyed (needles)"]) == [1, 0, 0, 0, 0, 0]
    assert list(needles["overlap-only (needles)"]) == [0, 1, 0, 0, 0, 0]
    nhelp = _help_of(at, "strategy", "overlap-only (needles)")
    assert all(nhelp.values()) and "overlap tail" in nhelp["overlap-only (needles)"]
    assert "token window" in nhelp["past window (needles)"]
    # the definitions are in the captions too
    assert any("overlap tail" in shown(c) and "token window" in shown(c) for c in at.caption)
    # the pair and rank tables get help from the same dictionary
    assert all(_help_of(at, "a", "b", "p (Holm)").values())


def test_citations_badges_filter_and_no_answer_box():
    at = _app("app_pages/7_Citations.py")
    box = at.selectbox(key="cit_query")
    labels = list(box.options)  # AppTest gives the formatted labels
    # every in-domain question (two wordings per accepted needle) and every out-of-domain one is listed
    assert len(labels) == 2 * N_ACCEPTED + N_OOD
    assert sum("(out of domain)" in x for x in labels) == N_OOD
    assert all(x.startswith(("[answered]", "[NO ANSWER]", "[bluff]")) for x in labels), labels[:3]
    # the filter keeps only the chosen badge
    at.radio(key="cit_badge").set_value("NO ANSWER").run()
    assert not at.exception, [e.value for e in at.exception]
    listed = at.selectbox(key="cit_query").options
    assert listed and all(x.startswith("[NO ANSWER]") for x in listed), listed
    # the NO ANSWER box says the nearest distance and lists the nearest refused chunks, nearest first
    err = " ".join(shown(e) for e in at.error)
    assert "NO ANSWER" in err and "nearest chunk is at cosine distance" in err
    refused = _table(at, "cosine distance", "beyond the cut by")
    assert len(refused) == 3
    d = list(refused["cosine distance"])
    assert d == sorted(d) and all(x >= 0 for x in refused["beyond the cut by"])


def test_citation_table_is_narrow_and_every_column_has_help(test_env):  # noqa: F811
    from pathlib import Path

    from audit.evaluation.saved_cut import save_cut
    from test_app import _key_of

    path = Path(test_env["AUDIT_HOME"]) / "threshold.json"
    save_cut(2.0, _key_of("E"), "E/dense", path)  # every chunk passes
    try:
        at = _app("app_pages/7_Citations.py")
        helps = _help_of(at, "quote matches locator")
        # doc_id (the title names the document) and check (every quote matches) are left to the CSV
        assert "doc_id" not in helps and "check" not in helps
        assert all(helps.values()), [c for c, h in helps.items() if not h]
        assert {"quote holds the needle", "embedded text holds it", "locator"} <= set(helps)
    finally:
        path.unlink()
