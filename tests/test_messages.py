"""Messages people read (issue 24, item 12): counts agree with their noun, times have a useful precision,
corpus hints list every readable ending, a corrupt PDF gets one readable reason and pypdf stays quiet."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
from conftest import ROOT
from pdfmaker import make_pdf

import audit.ingest.folder as folder
from audit.index.stamp import IndexRunResult
from audit.ingest import LoadFailure, pdf_document
from audit.ingest.hints import corpus_hint, no_document, readable_endings
from audit.ingest.pdf import corrupt_reason
from audit.words import duration, plural


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "audit", *args], cwd=cwd, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "AUDIT_HOME": str(cwd)})


def test_plural_agrees_with_the_count():
    assert [plural(n, "bluff") for n in (0, 1, 2)] == ["0 bluffs", "1 bluff", "2 bluffs"]
    assert plural(1, "query") == "1 query" and plural(3, "query") == "3 queries"  # irregular, from the table
    assert plural(1252, "chunk") == "1,252 chunks" and plural(2, "child", "children") == "2 children"


@pytest.mark.parametrize("seconds, shown", [
    (0.0, "0 ms"), (0.0004, "0 ms"), (0.038, "38 ms"), (0.0996, "100 ms"), (0.42, "0.42 s"), (1.0, "1.0 s"),
    (1.04, "1.0 s"), (9.94, "9.9 s"), (25.4, "25 s"), (59.4, "59 s"), (61, "1 min 01 s"), (185.2, "3 min 05 s"),
    (3725, "1 h 02 min"), (float("nan"), "—"), (-1, "—"),
])
def test_duration_has_a_precision_that_says_something(seconds, shown):
    assert duration(seconds) == shown


def test_index_summary_counts_and_times():
    one = IndexRunResult("E", 1, False, 1, ("a.md",), 0, (), 1, 0, 38.0)
    assert one.summary() == ("index E: 1 document, re-indexed 1 document, 1 chunk embedded, 0 from the cache "
                             "in 38 ms")
    many = IndexRunResult("E", 2, True, 4, ("a", "b"), 2, (("c.pdf", "x"),), 12, 3, 1250.0)
    assert many.summary() == ("index E: 4 documents, re-indexed 2 documents, 12 chunks embedded, 3 from the "
                              "cache; 1 failed (new generation 2 swapped in) in 1.2 s")


def test_corpus_hints_are_built_from_the_readable_endings(monkeypatch):
    assert readable_endings() == ", ".join(folder.TEXT_SUFFIXES)
    for hint in (corpus_hint("folder"), corpus_hint("upload"), no_document("docs")):
        assert all(ending in hint for ending in (".md", ".txt", ".rst", ".pdf", ".html")), hint
    # a format registered in TEXT_SUFFIXES appears in every hint by itself
    monkeypatch.setitem(folder.TEXT_SUFFIXES, ".adoc", "asciidoc")
    assert ".adoc" in corpus_hint("upload") and ".adoc" in no_document("docs")
    failures = [LoadFailure(f"f{i}.pdf", "corrupt PDF (…)") for i in range(5)]
    assert no_document("docs", failures).endswith("f2.pdf: corrupt PDF (…) (and 2 more)")
    with pytest.raises(KeyError):
        corpus_hint("builtin")


def test_an_empty_folder_names_every_readable_ending(tmp_path):
    (tmp_path / "docs").mkdir()
    r = cli("index", "docs", "--model", "hashing", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == f"error: {no_document('docs')}"
    assert ".pdf" in r.stderr and ".html" in r.stderr


@pytest.mark.parametrize("raw, reason", [
    (b"hello world, not a pdf", "not a PDF: the file does not start with %PDF-"),
    (b"%PDF-1.4\n1 0 obj <<< broken", "truncated or damaged: no %%EOF marker at its end"),
])
def test_a_corrupt_pdf_gets_one_readable_reason(raw, reason):
    with pytest.raises(ValueError) as e:
        pdf_document("c.pdf", raw, "c")
    assert str(e.value) == f"corrupt PDF ({reason})"


def test_corrupt_reason_of_a_file_pypdf_does_not_name():
    class PdfReadError(Exception):
        pass

    err = PdfReadError("Invalid Elementary Object starting with b'>' @307: b'\\x00\\x00 5 0 R'")
    assert corrupt_reason(err) == "corrupt PDF (unreadable: Invalid Elementary Object starting with)"
    assert corrupt_reason(PdfReadError("startxref not found")) == \
        "corrupt PDF (damaged: its cross-reference table (startxref) is missing)"
    assert corrupt_reason(PdfReadError("")) == "corrupt PDF (unreadable: PdfReadError)"


def test_pypdf_warnings_stay_off_stderr_and_inside_the_reason(tmp_path, caplog):
    good = make_pdf(["Page one text here.", "Page two."], title="T")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "truncated.pdf").write_bytes(good[: len(good) // 2])
    (docs / "ok.md").write_text("# Ok\n\nSome text that loads.\n", encoding="utf-8")
    r = cli("index", "docs", "--model", "hashing", "--quiet", cwd=tmp_path)
    assert r.returncode == 0
    # one warning line for the file, in the audit's words; nothing pypdf printed itself
    assert r.stderr.strip() == ("warning: truncated.pdf: corrupt PDF (truncated or damaged: no %%EOF marker at "
                                "its end) (skipped; the rest is loaded)"), r.stderr
    assert "failed: truncated.pdf: corrupt PDF (truncated" in r.stdout and "1 failed in " in r.stdout
    h = cli("health", "--model", "hashing", cwd=tmp_path)
    assert h.returncode == 1 and "1 document failed to index" in h.stdout
    # an application that configures logging still receives pypdf's warnings
    with caplog.at_level(logging.WARNING, logger="pypdf"), pytest.raises(ValueError):
        pdf_document("t.pdf", good[: len(good) // 2], "t")
    assert any("EOF marker not found" in m for m in caplog.messages)
