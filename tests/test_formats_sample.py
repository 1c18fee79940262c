"""The sample folder data/formats: its files, the figures its README gives, and every export of the locators.

Also: the index keeps the cell and cue maps (a new ``document.locators`` column, added to files
written before it), the CLI lists what it skipped, and ``chunks --jsonl`` writes each format's
locator fields.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import ROOT
from pdfmaker import make_pdf

from audit.chunking import PRESETS, chunk_corpus
from audit.cli import main
from audit.evaluation.citations import audit_citations, build_context
from audit.groundtruth import load_needles, validate
from audit.index import IndexStore, index_corpus
from audit.ingest import load_folder
from audit.ingest.locators import locator
from audit.models import HashingEncoder
from audit.report.formats import formats_frame, not_read_frame
from audit.views.citations import citations_frame

SAMPLE = ROOT / "data" / "formats"

#: The README's table: needle → (its own fragment, the fragment of the strategy-E chunk holding it).
EXPECTED = {"f1": ("#sheet=Escalation&range=C2", "#sheet=Escalation&range=A1:C4"),
            "f6": ("#sheet=Rota&range=A14:D15", "#sheet=Rota&range=A9:D15"),
            "f2": ("#row=2", "#row=1-4"),
            "f3": ("#t=16.5,22.5", "#t=1,38"),
            "f7": ("#t=54.5,59", "#t=38.5,64"),
            "f4": ("#t=12.5,18", "#t=2,3604"),
            "f5": ("", "")}


@pytest.fixture(scope="module")
def sample():
    return load_folder(SAMPLE / "docs")


def test_the_generator_writes_the_committed_bytes(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_samples", SAMPLE / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "DOCS", tmp_path)
    mod.main()
    for f in sorted((SAMPLE / "docs").iterdir()):
        assert (tmp_path / f.name).read_bytes() == f.read_bytes(), f.name


def test_every_needle_is_found_and_its_citation_names_the_readme_locators(sample):
    accepted, where, rejected = validate(load_needles(SAMPLE / "groundtruth.jsonl"), sample)
    assert rejected == [] and {n.id for n in accepted} == set(EXPECTED)
    chunks = chunk_corpus(sample, PRESETS["E"])
    for nid, (own, of_chunk) in EXPECTED.items():
        at = where[nid]
        doc = sample.get(at.doc_id)
        assert locator(doc, at.start, at.end).fragment == own, nid
        (chunk,) = [c for c in chunks.of_document(at.doc_id) if c.start <= at.start and at.end <= c.end]
        (cit,) = build_context("q", [(chunk, 0.3)], sample).citations
        assert cit.where.fragment == of_chunk, nid
    assert audit_citations(chunks, sample) == []  # every quote equals its #char= slice and its cells or cues


def test_the_citation_table_shows_the_locators(sample):
    chunks = chunk_corpus(sample, PRESETS["E"])
    pick = [c for c in chunks.chunks if c.section == "Escalation"] + \
           [c for c in chunks.chunks if c.doc_id == "standup.vtt"][1:]
    frame = citations_frame(build_context("q", [(c, 0.2) for c in pick], sample), sample)
    assert list(frame["locator"]) == [f"#char={pick[0].start},{pick[0].end} #sheet=Escalation&range=A1:C4",
                                      f"#char={pick[1].start},{pick[1].end} #t=38.5,64"]
    assert list(frame["where"]) == ["sheet Escalation, A1:C4", "0:38.5–1:04"]
    assert frame["range"].iloc[0] == "A1:C4" and frame["range"].isna().iloc[1]  # a transcript has no cells
    assert frame["t_start"].isna().iloc[0] and frame["t_start"].iloc[1] == 38.5
    assert (frame["quote matches locator"] == "yes").all()


def test_overview_frames_list_formats_and_what_was_not_read(sample):
    ff = formats_frame(sample)
    assert list(ff["format"]) == ["csv", "docx", "srt", "webvtt", "xlsx"] and ff["documents"].sum() == 5
    nr = not_read_frame(sample)
    assert list(nr["file"]) == ["standup.wav", "oncall.xlsx"]
    assert list(nr["what"]) == ["skipped", "left out"]
    assert nr["reason"].iloc[0] == ("media file, not a document: the Citations page plays it beside its "
                                    "transcript standup.vtt")
    assert nr["reason"].iloc[1] == "sheet 'Draft' is hidden: skipped"


def test_media_clip_plays_from_the_citation_start(sample):
    from audit.ingest.media import MediaClip, media_clip

    doc = sample.get("standup.vtt")
    where = locator(doc, doc.text.index("Jonas: For the drill"), doc.text.index("before anyone") + 5)
    assert where.fragment == "#t=16.5,28.25"
    clip = media_clip(sample, doc, where, max_bytes=10_000_000)
    assert isinstance(clip, MediaClip) and clip.mime == "audio/wav" and clip.name == "standup.wav"
    assert (clip.start_s, clip.end_s) == (16, 29)  # whole seconds holding 16.5-28.25
    assert clip.data == (SAMPLE / "docs" / "standup.wav").read_bytes()
    assert media_clip(sample, doc, where, max_bytes=1000) == (
        "standup.wav: 0.3 MB, over the 0.001 MB a file this dashboard serves ([uploads] max_file_mb in audit.toml)")
    assert media_clip(sample, sample.get("restore-drill.srt"), where, 10_000_000) == ""  # no media beside it


def test_media_linked_out_of_the_folder_is_not_served(tmp_path):
    from audit.ingest.media import media_clip

    outside = tmp_path / "outside.mp3"
    outside.write_bytes(b"ID3")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.vtt").write_text("WEBVTT\n\n00:01.000 --> 00:02.000\nhello\n", encoding="utf-8")
    (docs / "a.mp3").write_bytes(b"ID3 inside")
    corpus = load_folder(docs)
    doc = corpus.get("a.vtt")
    (docs / "a.mp3").unlink()
    (docs / "a.mp3").symlink_to(outside)  # replaced by a link after the folder was read
    assert media_clip(corpus, doc, locator(doc, 0, len(doc.text)), 10_000) == \
        "a.mp3: a link that leads out of the corpus folder; not served"


def test_chunks_jsonl_writes_every_format_locator(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for f in (SAMPLE / "docs").iterdir():
        (docs / f.name).write_bytes(f.read_bytes())
    # a PDF chunk crossing a page break: its first and last pages
    (docs / "two.pdf").write_bytes(make_pdf(["The restore runs from the", "snapshot of the night before."]))
    (docs / "budget.ods").write_bytes(b"PK")
    out = tmp_path / "c.jsonl"
    assert main(["chunks", "--strategy", "E", "--corpus", str(docs), "--jsonl", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "warning: budget.ods: OpenDocument spreadsheet: not read (no maintained reader keeps its cells and " \
           "merges); save it as .xlsx or .csv (skipped)" in err
    assert "warning: oncall.xlsx: sheet 'Draft' is hidden: skipped" in err
    recs = {(r["doc_id"], r["start"]): r for r in map(json.loads, out.read_text().splitlines())}
    pdf = [r for (d, _), r in recs.items() if d == "two.pdf" and "restore" in r["content"]]
    assert [(r["page"], r["page_end"], r["fragment"]) for r in pdf] == [(1, 2, "#page=1")]
    esc = [r for r in recs.values() if r["section"] == "Escalation"]
    assert [(r["sheet"], r["range"], r["fragment"]) for r in esc] == [("Escalation", "A1:C4",
                                                                     "#sheet=Escalation&range=A1:C4")]
    vtt = sorted((r["t_start"], r["t_end"]) for r in recs.values() if r["doc_id"] == "standup.vtt")
    assert vtt == [(1.0, 38.0), (38.5, 64.0)]
    csv_rec = [r for r in recs.values() if r["doc_id"] == "incidents.csv" and "row" in r]
    assert [(r["row"], r["row_end"], r["fragment"]) for r in csv_rec] == [(1, 4, "#row=1-4")]
    docx_rec = [r for r in recs.values() if r["doc_id"] == "runbook.docx"]
    assert docx_rec and all("fragment" not in r and "page" not in r for r in docx_rec)


def test_the_index_keeps_the_maps_and_old_files_gain_the_column(tmp_path, sample):
    db = tmp_path / "i.sqlite"
    store = IndexStore(db)
    index_corpus(store, sample, PRESETS["E"], HashingEncoder(dims=32))
    loaded = store.load("E")
    store.close()
    for d in sample.documents:  # the maps survive the read-back, field for field
        assert loaded.corpus.get(d.doc_id).locators == d.locators
    # a file written before the column existed: drop it (SQLite ≥ 3.35), read it read-only, then open for writing
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE document DROP COLUMN locators")
    con.commit()
    con.close()
    ro = IndexStore.open_readonly(db)
    old = ro.load("E")
    ro.close()
    doc = old.corpus.get("oncall.xlsx")
    assert doc.locators is None
    assert locator(doc, 0, 10).note == "no cell ranges stored with this document's index: #char= only"
    cols = {r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(document)")}
    assert "locators" not in cols  # a read-only open never writes
    IndexStore(db).close()
    cols = {r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(document)")}
    assert "locators" in cols


def test_report_json_bluffs_carry_their_locators(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    assert main(["report", "--corpus", str(SAMPLE / "docs"), "--ground-truth", str(SAMPLE / "groundtruth.jsonl"),
                 "--out-of-domain", str(SAMPLE / "out_of_domain.txt"), "--model", "hashing", "--reranker", "none",
                 "--strategies", "E", "--retrievers", "dense", "--threshold", "2", "--json", str(out),
                 "--quiet"]) == 0
    bluffs = next(iter(json.loads(out.read_text())["threshold"].values()))["bluffs"]
    assert len(bluffs) == 3  # at cut 2 every out-of-domain question bluffs
    sample = load_folder(SAMPLE / "docs")
    chunks = chunk_corpus(sample, PRESETS["E"])
    for n in (n for b in bluffs for n in b["nearest"]):
        c = chunks[n["chunk_id"]]
        expect = locator(sample.get(c.doc_id), c.start, c.end).fields()
        assert {k: n[k] for k in expect} == expect and (expect or "fragment" not in n)
    assert any("t_start" in n or "range" in n for b in bluffs for n in b["nearest"])


def test_a_lance_document_row_keeps_char_and_says_the_cells_are_not_stored(sample):
    from audit.index.lance.schema import _document_from_row, _document_row

    doc = sample.get("oncall.xlsx")
    back = _document_from_row(_document_row(doc))  # what a Lance dataset's _documents table gives back
    s = doc.text.index("Severity: SEV1")
    assert locator(doc, s, s + 10).fragment == ""  # "Severity: " is a label: no cell
    assert locator(doc, s, s + 14).fragment == "#sheet=Escalation&range=A2"
    degraded = locator(back, s, s + 14)
    assert degraded.char == f"#char={s},{s + 14}" and degraded.fragment == ""
    assert degraded.note == "no cell ranges stored with this document's index: #char= only"
