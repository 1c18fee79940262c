"""The decision record's HTML (audit.report.record) on data/example, without a browser: every text from a file or a
note is escaped, nothing points at a host, the figures are the report JSON's, and a PDF asked for where Chromium is
missing leaves the HTML and one line saying how to print it."""

from __future__ import annotations

import html
import json
import re

from conftest import ROOT

from audit.cli import main
from audit.evaluation.saved_cut import save_cut
from audit.report import build_report
from audit.report.record import render_html
from audit.sources.imported.system import load_system

EX = ROOT / "data" / "example"
NOTE = "<script>alert('x')</script> & a bluff costs a ticket"


def _system():
    from audit.ingest import load_corpus

    return load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                       {"before": "cosine-distance"}, EX / "qrels.trec", None, EX / "chunks.jsonl",
                       load_corpus(str(EX / "docs")),
                       EX / "ood-queries.tsv", {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})


def _figures(page: str) -> dict:
    """(figure, run) → data-value, from the attributes the renderer writes (each unescaped once)."""
    out = {}
    for m in re.finditer(r'data-figure="([^"]*)"(?: data-run="([^"]*)")? data-value="([^"]*)"', page):
        out[(html.unescape(m[1]), html.unescape(m[2] or ""))] = html.unescape(m[3])
    return out


def test_the_record_escapes_the_note_and_reads_every_figure_from_the_json(tmp_path):
    rs = _system()
    path = tmp_path / "threshold.json"
    save_cut(0.37, rs.run("before").cut_key, "run before", path, note=NOTE, author="Ana <ana@example.org>")
    report = build_report(rs, None, path)
    data = report.to_json()
    page = render_html(report, data, charts=False)
    assert "<script>" not in page and html.escape(NOTE) in page  # data, never markup
    assert "Ana &lt;ana@example.org&gt;" in page
    # nothing fetched: no src= or href= anywhere (the only URL is the Vega-Lite schema, inside no chart here)
    assert not re.search(r"\b(src|href)\s*=", page, re.I)
    f = _figures(page)
    t = data["threshold"]["before"]
    assert (t["cut"], t["how"]) == (0.37, "saved") and float(f[("cut", "before")]) == 0.37
    assert f[("note", "before")] == NOTE and f[("author", "before")] == "Ana <ana@example.org>"
    # data/example's README: at 0.37 before answers 5, answers 2 without, abandons 2 of 9; refuses all 4 out of domain
    assert [int(f[(f"count:{o}", "before")]) for o in ("answered", "answered without", "abandoned", "bluff",
                                                       "refused")] == [5, 2, 2, 0, 4]
    assert float(f[("low:answered", "before")]) == t["at_cut_wilson"]["answered"]["low"]
    # the sign test after vs before at k=1: +4/−0, p = 0.125 (README), Holm over one test per k: the same
    c = next(c for c in data["comparisons"] if c["k"] == 1)
    assert (c["wins"], c["losses"], c["p"]) == (0, 4, 0.125)
    assert float(f[("p_holm", "before|after|1")]) == c["p (Holm)"] == 0.125
    # the questions lost and gained are the test's own ids (q2–q5 are found at rank 1 by after only)
    assert "q2, q3, q4, q5" in page
    # the returned contents that differ from their documents (b2 stale, k4 one character late)
    assert int(f[("chunk_errors", "")]) == 2 and int(f[("chunks_checked", "")]) == 12


def test_report_html_and_a_pdf_without_chromium(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    monkeypatch.setenv("AUDIT_CHROMIUM", str(tmp_path / "no-chromium-here"))  # Chromium missing
    pdf = tmp_path / "record.pdf"
    assert main(["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run",
                 f"after={EX / 'after.trec'}", "--json", str(tmp_path / "r.json"), "--pdf", str(pdf)]) == 0
    err = capsys.readouterr().err
    assert not pdf.exists() and (tmp_path / "record.html").exists()  # the HTML beside, and one line saying so
    assert [ln for ln in err.splitlines() if "not written" in ln] == [
        f"warning: {pdf} not written, no Chromium here to print the PDF: open the HTML file in any browser and "
        "print it to PDF (or install Chromium and Playwright: apt-get install chromium; pip install playwright); "
        f"the HTML is {tmp_path / 'record.html'}"]
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    page = (tmp_path / "record.html").read_text(encoding="utf-8")
    assert f'data-figure="Success@1" data-run="after" data-value="{data["results"][0]["Success@1"]!r}"' in page


def test_html_needs_runs_with_traffic(tmp_path, capsys):
    code = main(["report", "--traffic", str(EX / "traffic.jsonl"), "--traffic-score", "cosine-distance", "--html",
                 str(tmp_path / "r.html")])
    assert code == 2 and "--html/--pdf: the decision record is of an audit of runs" in capsys.readouterr().err


def test_the_sweep_is_inline_svg():  # vl-convert-python is in requirements.txt: no skip
    rs = _system()
    page = render_html(build_report(rs), charts=True)
    assert page.count("<svg") == 2  # one sweep per run with out-of-domain rankings, drawn in the file
    assert not re.search(r"<(img|script|link|iframe)\b", page, re.I)


def test_the_upgrade_diff_says_who_saved_its_cut_and_why(tmp_path):
    from audit.evaluation.saved_cut import choose
    from audit.evaluation.upgrade import diff_runs
    from audit.views.upgrade_diff import cut_caption

    rs = _system()
    path = tmp_path / "threshold.json"
    saved = save_cut(0.37, rs.run("before").cut_key, "run before", path, note="fewer bluffs", author="Ana")
    choice = choose(rs.run("before").cut_key, path=path)
    diff = diff_runs(rs, "before", rs, "before", 8, choice.cut, choice.how, signed=choice.saved.signed())  # one kind
    assert cut_caption(diff) == ("Outcomes at the cut 0.37 cosine distance (the threshold saved for before; the same "
                                 f"cut on both sides), saved by Ana on {saved.saved_at}: “fewer bluffs”")
    typed = diff_runs(rs, "before", rs, "before", 8, 0.37, "given", signed="ignored: not a saved cut")
    assert typed.signed == ""


def test_the_record_carries_the_trend_of_its_series_from_the_history(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    args = ["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--series", "relay"]
    first = tmp_path / "first.json"
    assert main([*args, "--run", f"sys={EX / 'before.trec'}", "--score", "sys=cosine-distance", "--json",
                 str(first)]) == 0  # record 1
    second = tmp_path / "second.json"
    assert main([*args, "--run", f"sys={EX / 'after.trec'}", "--json", str(second), "--html",
                 str(tmp_path / "r.html")]) == 0  # record 2
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    trend = page[page.index("<h2>Trend</h2>"):]
    rows = re.findall(r"<tr><td>relay</td><td>(\d+)</td><td>[^<]*</td><td>([0-9.]+)</td>", trend)
    # the record is written once the audit is recorded: the trend holds both audits, each with the Success@8 its
    # own report gave, and the file names its record with the link that opens it
    want = [json.loads(f.read_text(encoding="utf-8"))["results"][0]["Success@8"] for f in (first, second)]
    assert rows == [("1", f"{want[0]:.3f}"), ("2", f"{want[1]:.3f}")]
    assert "#2: python -m audit history show 2; on the dashboard, history?record=2" in page


def test_html_is_refused_not_ignored_for_a_stores_index_comparison(tmp_path, capsys):
    code = main(["report", "--store", "postgresql://nobody@127.0.0.1:1/none", "--table", "chunks", "--html",
                 str(tmp_path / "r.html")])
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert "--html/--pdf: a store's approximate index against its exact scan has no decision" in capsys.readouterr().err


def test_the_record_carries_the_reranker_the_depth_curve_and_the_fusion_from_the_json():
    from dataclasses import replace

    rs = _system()
    rs = replace(rs, settings={**rs.settings, "reranked": {"after": "before"}, "fuse": ("before", "after")})
    report = build_report(rs)
    data = report.to_json()
    page = render_html(report, data, charts=False)
    f = _figures(page)
    for e in data["reranker"]:
        pair = f"after|before|{e['k']}"
        assert (int(f[("rescued", pair)]), int(f[("pushed_out", pair)])) == (e["rescued"], e["pushed_out"])
        assert float(f[("p_holm", pair)]) == e["p_holm"]
    # data/example's README: after finds 4 questions at rank 1 that before does not, and loses none
    assert next(e for e in data["reranker"] if e["k"] == 1)["rescued"] == 4
    points = data["depth"]["before"]
    assert float(f[("Success@1", "before")]) == points[0]["Success"]
    assert float(f[(f"Success@{len(points)}:high", "before")]) == points[-1]["high"]
    fu = data["fusion"]
    assert float(f[("gap", "before|after")]) == fu["gap"] == fu["in_sample"] - fu["held_out"]
