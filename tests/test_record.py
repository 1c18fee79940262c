"""The decision record's HTML (audit.report.record) on data/example, without a browser: every text from a file or a
note is escaped, nothing points at a host, the figures are the report JSON's, and a PDF asked for where Chromium is
missing leaves the HTML and one line saying how to print it."""

from __future__ import annotations

import html
import json
import re

import pytest

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
    # the promise (issue 52): 4 out-of-domain questions certify no 5% at 95% (59 needed); the bound at the cut is
    # the JSON's, 1 − 0.05^(1/4) with no bluff; the questions needed of the comparison are its power N
    assert f[("certified:cut", "before")] == "" and int(f[("certified:needed", "before")]) == 59
    assert float(f[("certified:bound_at_cut", "before")]) == t["certified"]["bound_at_cut"] == \
        pytest.approx(1 - 0.05 ** 0.25)
    assert float(f[("auc", "before")]) == t["auc"]["value"]
    assert int(f[("questions_needed", "before|after|1")]) == c["questions_needed"]["N"]
    assert "The bounds rest on the labelled questions" in page


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
        f"warning: {pdf} not written, Playwright is installed but no Chromium was found (chromium, chromium-browser, "
        "google-chrome on the PATH, or $AUDIT_CHROMIUM): apt-get install chromium, or open the HTML file in any "
        f"browser and print it to PDF; the HTML is {tmp_path / 'record.html'}"]  # names what is missing
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
    # one sweep per run with out-of-domain rankings, and the comparison of every run, drawn in the file
    assert page.count("<svg") == 3 and page.count('aria-label="sweep of run') == 2
    assert page.count('aria-label="Success@k of every run"') == 1
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
    rows = re.findall(r"<tr><td>#(\d+)</td><td>[^<]*</td><td>([0-9.]+)</td>", trend)
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


def test_the_provenance_writes_the_strategies_as_a_person_reads_them():
    # issue 54: the record's provenance printed the strategies as raw JSON
    from audit.report.record import _provenance
    from audit.runset import RunSet, Source

    class _Report:
        runset = RunSet(Source("builtin", "docs"), (), {}, ())

    data = {"questions": {"judged_by": "needle"}, "provenance": {"strategies": [
        {"name": "A", "cut": "blind", "target": 512, "header": False, "overlap": 0},
        {"name": "F", "cut": "boundaries", "target": 512, "header": True, "overlap": 64}]}}
    page = _provenance(_Report(), data, "2026-12-07T00:00:00+00:00")
    assert ("A: blind, 512 characters, no header, no overlap; F: boundaries, 512 characters, header, "
            "64-character overlap") in page
    assert "&quot;" not in page


def test_a_pdf_where_chromium_exists_but_does_not_start(tmp_path, monkeypatch, capsys):
    # a Chromium that is there and executable but exits at once (a broken install): the same fallback as a missing
    # one (the HTML beside, one line, exit 0), never a traceback and exit 1 (which CI reads as a failed gate)
    import os

    import pytest

    pytest.importorskip("playwright")
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\necho 'error while loading shared libraries: libnss3.so' >&2\nexit 127\n")
    os.chmod(broken, 0o755)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    monkeypatch.setenv("AUDIT_CHROMIUM", str(broken))
    pdf = tmp_path / "record.pdf"
    assert main(["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run",
                 f"after={EX / 'after.trec'}", "--pdf", str(pdf)]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "not written" in ln]
    assert not pdf.exists() and (tmp_path / "record.html").exists()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {pdf} not written, Chromium ({broken}) did not start")
    assert "print it to PDF" in lines[0] and lines[0].endswith(f"the HTML is {tmp_path / 'record.html'}")
    assert "Traceback" not in err


def test_a_teams_runs_without_out_of_domain_questions_get_the_comparison_chart(tmp_path, monkeypatch):
    # no out-of-domain run: no sweep to draw, but the comparison is (issue 53: the record drew no chart at all)
    from audit.report.record import comparison_points

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    assert main(["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run",
                 f"before={EX / 'before.trec'}", "--run", f"after={EX / 'after.trec'}", "--json",
                 str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")]) == 0
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'aria-label="sweep of run' not in page and page.count("<svg") == 1
    chart = page[page.index('aria-label="Success@k of every run"'):]
    chart = chart[:chart.index("</figure>")]
    assert ">before<" in chart and ">after<" in chart  # the legend names each run
    # the chart's points are the JSON's results, read back independently: one per run and k, with its interval
    points = {(p["run"], p["k"]): (p["success"], p["low"], p["high"]) for p in comparison_points(data)}
    want = {(r["name"], int(key[8:])): (r[key], r[key + "_low"], r[key + "_high"]) for r in data["results"]
            for key in r if key.startswith("Success@") and key[8:].isdigit()}
    assert points == want and {run for run, _ in points} == {"before", "after"} and len(points) >= 4
    assert all(lo <= est <= hi for est, lo, hi in points.values())


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


def _decision_heads(page: str) -> list[str]:
    part = page.split("<h2>The decision</h2>", 1)[1].split("<h2>", 1)[0]
    return [html.unescape(h) for h in re.findall(r"<h3>(.*?)</h3>", part) if h.startswith("run ")]


def test_issue54_item1_the_dashboards_record_leads_with_the_sidebar_run_and_its_saved_cut(tmp_path):
    """The downloaded record stated the first run's computed default while the user had saved a cut, with a reason,
    for another run: the record now leads with the run the user is looking at, with its note and author."""
    from audit.views.record import record_html

    rs = _system()
    path = tmp_path / "threshold.json"
    save_cut(0.495, rs.run("after").cut_key, "run after", path, note="tickets cost more than silence", author="po")
    page = record_html(runset=rs, saved_path=path, focus="after")
    assert _decision_heads(page)[0] == "run after"
    f = _figures(page)
    assert float(f[("cut", "after")]) == 0.495 and f[("how", "after")] == "saved"
    assert f[("note", "after")] == "tickets cost more than silence" and f[("author", "after")] == "po"


def test_issue54_item1_beyond_four_runs_the_focused_run_is_detailed_even_unsaved():
    from audit.ingest import load_corpus
    from audit.views.record import record_html

    files = {f"r{i}": EX / ("before.trec" if i % 2 else "after.trec") for i in range(1, 6)}
    ood = {f"r{i}": EX / ("ood-before.trec" if i % 2 else "ood-after.trec") for i in range(1, 6)}
    rs = load_system(EX / "queries.tsv", files, {n: "cosine-distance" for n in files}, EX / "qrels.trec", None,
                     EX / "chunks.jsonl", load_corpus(str(EX / "docs")), EX / "ood-queries.tsv", ood)
    heads = _decision_heads(record_html(runset=rs, focus="r4"))
    assert heads == ["run r4"]  # the lead only (nothing saved): r1, the document's first, is among the other cuts
