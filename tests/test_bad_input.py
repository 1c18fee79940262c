"""Every input in the bad-input table (docs/bad-input.md), and what it gets. One test a row."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from pdfmaker import make_pdf

from audit.chunking import PRESETS, chunk_corpus
from audit.groundtruth import (
    GroundTruthError,
    load_needles,
    load_out_of_domain,
    validate,
)
from audit.index import IndexStore, index_corpus
from audit.ingest import load_folder
from audit.models import HashingEncoder


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "audit", *args], cwd=cwd or ROOT, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})


def test_empty_folder(tmp_path):
    r = cli("index", str(tmp_path), "--db", str(tmp_path / "i.sqlite"), "--model", "hashing")
    assert r.returncode == 2 and "has no readable document" in r.stderr


def test_empty_file_fails_alone(tmp_path):
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "ok.md").write_text("# Ok\n\ntext", encoding="utf-8")
    c = load_folder(tmp_path)
    assert [d.doc_id for d in c.documents] == ["ok.md"]
    assert c.failures[0].reason == "empty file"


def test_bom_and_crlf_markdown_offsets_land_on_the_file(tmp_path):
    (tmp_path / "w.md").write_bytes("\ufeff# Win\r\n\r\nFirst line.\r\nSecond line.\r\n".encode("utf-8"))
    d = load_folder(tmp_path).get("w.md")
    assert d.text == "# Win\n\nFirst line.\nSecond line.\n"
    c = chunk_corpus(load_folder(tmp_path), PRESETS["C"]).chunks[0]
    assert d.text[c.start:c.end] == c.content


def test_hash_inside_code_block_is_not_a_heading(tmp_path):
    (tmp_path / "c.md").write_text("# T\n\n```bash\n# install\n## not a section\n```\n\n## Real\n\nx\n",
                                   encoding="utf-8")
    d = load_folder(tmp_path).get("c.md")
    assert [s.title for s in d.sections] == ["Real"]


@pytest.mark.slow
def test_twenty_megabyte_text_file_with_fake_encoder(tmp_path):
    para = ("This is a long plain text file used to check that a big document indexes. " * 6).strip()
    text = "\n\n".join(f"{i}: {para}" for i in range(20 * 1024 * 1024 // len(para) + 1))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "big.txt").write_text(text, encoding="utf-8")
    assert (tmp_path / "docs" / "big.txt").stat().st_size >= 20 * 1024 * 1024
    store = IndexStore(tmp_path / "i.sqlite")
    r = index_corpus(store, load_folder(tmp_path / "docs"), PRESETS["C"], HashingEncoder(dims=16))
    loaded = store.load("C")
    assert r.failed == () and len(loaded.chunks) > 40_000
    d = loaded.corpus.get("big.txt")
    last = loaded.chunks.chunks[-1]
    assert d.text[last.start:last.end] == last.content


def test_corrupt_and_scanned_pdf_fail_with_reasons_rest_indexed(tmp_path):
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<< broken")
    (tmp_path / "scan.pdf").write_bytes(make_pdf([None]))
    (tmp_path / "good.pdf").write_bytes(make_pdf(["Real text layer here."]))
    r = cli("index", str(tmp_path), "--db", str(tmp_path / "i.sqlite"), "--model", "hashing", "--quiet")
    assert r.returncode == 0
    assert "failed: corrupt.pdf: corrupt PDF" in r.stdout and "failed: scan.pdf: no text layer (needs OCR)" in r.stdout
    h = cli("health", "--db", str(tmp_path / "i.sqlite"), "--model", "hashing")
    assert h.returncode == 1 and "2 documents failed to index" in h.stdout


def test_binary_named_md_and_non_utf8_text(tmp_path):
    (tmp_path / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tmp_path / "latin.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (tmp_path / "ok.md").write_text("# ok\n\nfine", encoding="utf-8")
    c = load_folder(tmp_path)
    reasons = {f.source: f.reason for f in c.failures}
    assert reasons["image.md"] == "binary content (NUL bytes), not text"
    assert reasons["latin.txt"] == "not UTF-8 text (byte 0xe9 at byte offset 3)"
    assert [d.doc_id for d in c.documents] == ["ok.md"]


def test_ground_truth_with_a_malformed_line(tmp_path):
    p = tmp_path / "gt.jsonl"
    p.write_text(json.dumps({"id": "a", "needle": "x", "questions": ["q"]}) + "\n{\"id\": \"b\",\n", encoding="utf-8")
    with pytest.raises(GroundTruthError, match=r"gt\.jsonl:2: not valid JSON"):
        load_needles(p)


def test_needle_twice_and_needle_inside_heading(tmp_path):
    (tmp_path / "a.md").write_text("# Title words\n\n## Setup guide\n\nrepeat me please. repeat me please.\n",
                                   encoding="utf-8")
    from audit.groundtruth import Needle

    acc, loc, rej = validate([Needle("twice", "repeat me please."), Needle("head", "Setup guide"),
                              Needle("title", "Title words")], load_folder(tmp_path))
    reasons = {r.id: r.reason for r in rej}
    assert reasons["twice"].startswith("found 2 times")
    assert reasons["head"].startswith("overlaps a heading line") and "## Setup guide" in reasons["head"]
    assert reasons["title"].startswith("overlaps a heading line")


def test_out_of_domain_file_with_blank_lines_and_comments(tmp_path):
    p = tmp_path / "ood.txt"
    p.write_text("# comment\n\n  \nfirst query\n# another\nsecond query\n\n", encoding="utf-8")
    assert load_out_of_domain(p) == ["first query", "second query"]


def test_script_and_img_onerror_stay_text_in_markdown(tmp_path):
    payload = "<script>alert('x')</script> <img src=x onerror=alert(1)>"
    (tmp_path / "x.md").write_text(f"# X\n\n{payload}\n", encoding="utf-8")
    c = load_folder(tmp_path)
    # kept verbatim as text in markdown (offsets land on the file); the pages escape it (test_app/test_browser)
    assert payload in c.get("x.md").text
    ch = chunk_corpus(c, PRESETS["E"]).chunks[0]
    assert payload in ch.content
