"""The index stores each document's headings and sections (issue 26): read back, every format rebuilds the same
sections as a fresh run; an older index file gains the columns when opened for writing and is read as it is
when opened read-only. Also the two extraction fixes reported against similar tools (``<br>`` in ``<pre>``, a
BEIR record with only a title)."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest

import pdfdraw
from audit.chunking import PRESETS
from audit.index import IndexStore, index_corpus
from audit.index.store import IndexUnusable
from audit.ingest import Corpus, load_builtin, load_folder
from audit.models import HashingEncoder

FILES = {
    "guide.md": "# Guide\n\n## Install\n\nRun the installer.\n\n## Use\n\nStart it.\n",
    # reST: the title and one section level; its "   # comment" literal line is no heading
    "ops.rst": ("Operations\n==========\n\nBackups\n-------\n\nNightly::\n\n   # comment\n   run\n\n"
                "Restore\n-------\n\nBy hand.\n"),
    "plain.txt": "Notes\n=====\n\nSome plain text.\n\nMore\n----\n\nAnd more.\n",
    # HTML: a paragraph that reads like a markdown heading stays text on read-back too
    "page.html": "<html><head><title>Page</title></head><body><h2>Start</h2><p># step two</p>"
                 "<h3>Detail</h3><p>More.</p><h2>End</h2><p>Done.</p></body></html>",
}


def _fields(d):
    return (d.doc_id, d.title, d.text, d.sections, d.headings, d.pages, d.extractor, d.extractor_version,
            d.extraction)


def _folder(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "outlined.pdf").write_bytes(pdfdraw.outline_pdf())
    (folder / "layout.pdf").write_bytes(pdfdraw.columns_and_table_pdf())
    return folder


def test_an_index_read_back_gives_the_same_sections_as_a_fresh_run_for_every_format(tmp_path):
    fresh = load_folder(_folder(tmp_path))
    assert [d.extractor for d in fresh.documents] == ["markdown", "pdf", "rst", "pdf", "html", "text"]
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, fresh, PRESETS["E"], HashingEncoder(dims=16))
    back = store.load("E")
    assert back.reparsed == ()
    assert [_fields(d) for d in back.corpus.documents] == [_fields(d) for d in fresh.documents]
    # the cases a markdown re-parse got wrong: the PDF outline's sections, the HTML "# step two" paragraph
    pdf = back.corpus.get("outlined.pdf")
    assert [s.title for s in pdf.sections] == ["Rotation", "Backups"]
    html = back.corpus.get("page.html")
    assert [s.title for s in html.sections] == ["Start", "End"] and len(html.headings) == 4


def test_the_built_in_topics_read_back_the_same(tmp_path):
    topics = load_builtin()
    some = Corpus(topics.name, topics.documents[:6], python_version=topics.python_version)
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, some, PRESETS["C"], HashingEncoder(dims=16))
    assert [_fields(d) for d in store.load("C").corpus.documents] == [_fields(d) for d in some.documents]


def _old_file(tmp_path):
    """An index written before the structure and extraction columns: built, then the two columns dropped."""
    path = tmp_path / "old.sqlite"
    store = IndexStore(path)
    index_corpus(store, load_folder(_folder(tmp_path)), PRESETS["E"], HashingEncoder(dims=16))
    store.close()
    db = sqlite3.connect(str(path))
    for col in ("structure", "extraction"):
        db.execute(f"ALTER TABLE document DROP COLUMN {col}")
    db.commit()
    db.close()
    return path


def _columns(path) -> set[str]:
    db = sqlite3.connect(str(path))
    try:
        return {r[1] for r in db.execute("PRAGMA table_info(document)")}
    finally:
        db.close()


def test_an_old_index_is_read_as_it_is_read_only_and_gains_the_columns_when_opened_for_writing(tmp_path, caplog):
    path = _old_file(tmp_path)
    before = path.read_bytes()
    ro = IndexStore.open_readonly(path)  # not refused for lacking the new columns
    with caplog.at_level(logging.WARNING, logger="audit"):
        back = ro.load("E")
        ro.load("E")
    ro.close()
    assert path.read_bytes() == before and "structure" not in _columns(path)  # a read-only open never writes
    # without stored structure: today's re-parse, said once for the file
    assert len(back.reparsed) == 6
    said = [r.getMessage() for r in caplog.records if "written before headings were stored" in r.getMessage()]
    assert len(said) == 1 and "6 documents of index 'E'" in said[0]
    assert back.corpus.get("outlined.pdf").sections == ()  # what the re-parse loses: the outline
    # opened for writing, the file gets the missing columns (NULL in the old rows) and keeps its rows
    rw = IndexStore(path)
    assert {"structure", "extraction"} <= _columns(path)
    assert [d.doc_id for d in rw.documents("E")] == sorted([*FILES, "layout.pdf", "outlined.pdf"])
    rw.close()


def test_indexing_an_old_file_again_fills_the_structure_without_re_chunking_or_embedding(tmp_path):
    from dataclasses import replace

    path = _old_file(tmp_path)
    fresh = load_folder(tmp_path / "docs")
    store = IndexStore(path)
    gen = int(store.generation("E")["id"])
    guide = fresh.get("guide.md")
    # a row is only given the structure of the text it holds
    assert not store.fill_structure(gen, replace(guide, text=guide.text + "changed"))
    assert store.fill_structure(gen, guide) and store.without_structure(gen) == set(fresh._by_id) - {"guide.md"}
    result = index_corpus(store, fresh, PRESETS["E"], HashingEncoder(dims=16))
    assert result.reindexed == () and result.embedded == 0 and result.unchanged == 6  # no rebuild
    assert store.without_structure(gen) == set()
    back = store.load("E")
    assert back.reparsed == ()
    assert [_fields(d) for d in back.corpus.documents] == [_fields(d) for d in fresh.documents]


def test_a_table_with_other_columns_is_still_not_an_index(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(str(path))
    db.executescript("CREATE TABLE generation (x); CREATE TABLE document (x); CREATE TABLE chunk (x);")
    db.close()
    with pytest.raises(IndexUnusable, match="table .* lacks"):
        IndexStore.open_readonly(path)


# --------------------------------------------------------------------------- the two extraction fixes

def test_br_inside_pre_is_a_line_break():
    from audit.ingest import html_to_markdown

    text, _ = html_to_markdown("<pre>ls -la<br>cd /srv<br/>make</pre>", "x")
    assert "```\nls -la\ncd /srv\nmake\n```" in text


def test_a_beir_record_with_a_title_and_no_text_is_a_document_and_its_query_is_kept(tmp_path):
    from audit.groundtruth import load_ground_truth
    from audit.ingest import load_corpus

    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "Rotate relay keys monthly", "text": ""}) + "\n"
        + json.dumps({"_id": "d2", "title": "", "text": "  "}) + "\n"
        + json.dumps({"_id": "d3", "title": "Backups", "text": "Kept ninety days."}) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "how often are relay keys rotated"}) + "\n"
                                        + json.dumps({"_id": "q2", "text": "backup retention"}) + "\n",
                                        encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n", encoding="utf-8")
    corpus = load_corpus(root)
    assert [d.doc_id for d in corpus.documents] == ["d1", "d3"]
    assert corpus.get("d1").text == "# Rotate relay keys monthly"
    assert corpus.get("d1").title == "Rotate relay keys monthly"
    assert [(f.source, f.reason) for f in corpus.failures] == [("d2", "corpus.jsonl:2: empty text and no title")]
    gt = load_ground_truth(corpus)
    assert [n.relevant_docs for n in gt.needles] == [("d1",), ("d3",)] and not gt.rejected
