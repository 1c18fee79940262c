"""Corpus loading and canonical text."""

from __future__ import annotations

import pytest

from audit.ingest import load_builtin, load_folder, markdown_document, rst_to_markdown


def test_builtin_corpus_shape(builtin_corpus):
    c = builtin_corpus
    assert len(c.documents) == 79
    assert 440_000 < c.n_characters < 490_000
    assert c.python_version and c.python_version.startswith("3.")
    d = c.get("compound")
    assert d.title == "Compound statements"
    assert d.text.startswith("# Compound statements\n\n")
    assert d.sections[0].title == 'The "if" statement'
    # every section heading line is a "## " line of the canonical text
    for doc in c.documents:
        for s in doc.sections:
            assert doc.text[s.start:s.body_start].startswith("## ")


def test_rst_conversion_levels():
    text = "Title\n*****\n\nIntro.\n\nFirst\n=====\n\nBody.\n\nDeeper\n------\n\nMore.\n\nSecond\n======\n\nEnd.\n"
    md, title = rst_to_markdown(text, "fallback")
    assert title == "Title"
    assert md == "# Title\n\nIntro.\n\n## First\n\nBody.\n\n### Deeper\n\nMore.\n\n## Second\n\nEnd.\n"


def test_rst_without_single_title_gets_fallback_title():
    text = "One\n===\n\na\n\nTwo\n===\n\nb\n"
    md, title = rst_to_markdown(text, "notes")
    assert title == "notes"
    assert md.startswith("# notes\n\n## One\n\na\n\n## Two\n")


def test_markdown_canonical_text_only_fixes_bom_and_line_endings():
    d = markdown_document("x.md", "\ufeff# T\r\n\r\nline one\rline two\r\n## S\r\nbody")
    assert d.text == "# T\n\nline one\nline two\n## S\nbody"
    assert d.title == "T" and [s.title for s in d.sections] == ["S"]


def test_markdown_without_title_uses_file_stem():
    assert markdown_document("guides/setup.md", "no heading here").title == "setup"


def test_folder_loads_good_files_and_lists_broken_ones(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    (tmp_path / "sub" / "b.rst").write_text("Bee\n===\n\nbeta\n", encoding="utf-8")
    (tmp_path / "c.txt").write_text("plain text", encoding="utf-8")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "binary.md").write_bytes(b"\x00\x01\x02PNG")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    c = load_folder(tmp_path)
    assert [d.doc_id for d in c.documents] == ["a.md", "c.txt", "sub/b.rst"]
    reasons = {f.source: f.reason for f in c.failures}
    assert reasons["empty.md"] == "empty file"
    assert "not UTF-8" in reasons["latin1.md"] and "0xe9" in reasons["latin1.md"]
    assert "binary" in reasons["binary.md"]
    assert c.skipped == ("image.png",)
    assert c.get("c.txt").text == "# c\n\nplain text"
    assert c.get("sub/b.rst").title == "Bee"


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_folder(tmp_path / "nope")


def test_corpus_hash_changes_with_text(tmp_path):
    (tmp_path / "a.md").write_text("one", encoding="utf-8")
    h1 = load_folder(tmp_path).sha256
    (tmp_path / "a.md").write_text("two", encoding="utf-8")
    assert load_folder(tmp_path).sha256 != h1


def test_unknown_builtin_name():
    with pytest.raises(ValueError, match="python-reference"):
        load_builtin("nope")
