"""Issue 57: BM25 that knows the language (the ``snowball`` token rule), the language of each document and
question, several token rules side by side, figures per language and the matching view in other writing habits."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import Stemmer
from conftest import ROOT

from audit.cli import main
from audit.ingest import load_corpus
from audit.language import SNOWBALL, detect_language, document_languages
from audit.matching import reader_form
from audit.retrieval import BM25, bm25_tokens
from audit.retrieval.bm25 import postings_key

GOLDEN = ROOT / "tests" / "golden"
FRENCH = ROOT / "data" / "french"


def _unicode_words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", reader_form(text).casefold())


@pytest.mark.parametrize("folder", [GOLDEN / "docs", FRENCH / "docs"], ids=["english", "french"])
def test_snowball_stems_equal_pystemmers_for_every_token_of_the_corpus(folder):
    corpus = load_corpus(folder)
    langs = document_languages(corpus.documents)
    for d in corpus.documents:
        stemmer = Stemmer.Stemmer(SNOWBALL[langs[d.doc_id]])
        words = _unicode_words(d.text)
        assert words
        assert bm25_tokens(d.text, "snowball", langs[d.doc_id]) == [stemmer.stemWord(w) for w in words]


def test_snowball_without_a_stemmer_is_unicode():
    text = "如何轮换密钥 and Ünïcode words"
    assert bm25_tokens(text, "snowball", None) == bm25_tokens(text, "unicode")
    assert bm25_tokens(text, "snowball", "ja") == bm25_tokens(text, "unicode")


def test_french_stemming_joins_the_forms_a_reader_joins():
    assert len(set(bm25_tokens("découpé découpe découper", "snowball", "fr"))) == 1
    assert bm25_tokens("chunks chunk", "snowball", "fr")[0] == bm25_tokens("chunk", "snowball", "fr")[0]
    bm = BM25(["Le découpage des documents en morceaux.", "La fenêtre du modèle."], tokens="snowball",
              languages=["fr", "fr"], language="fr")
    assert bm.rank("Comment découper un document ?").chunk_ids[0] == 0
    assert not BM25(["Le découpage des documents."], tokens="unicode").scores("découper").any()


def test_the_postings_key_holds_the_rule_and_the_languages():
    texts = ["un texte"] * 3
    u = postings_key(texts, "unicode")
    if u is None:
        pytest.skip("bm25s is not installed")
    assert postings_key(texts, "snowball", languages=["fr"] * 3) != u
    assert postings_key(texts, "snowball", languages=["fr"] * 3) != postings_key(texts, "snowball",
                                                                                 languages=["en"] * 3)
    assert postings_key(texts, "unicode") == u


def test_detected_languages_are_iso_639_1():
    assert detect_language("Comment découper les documents en morceaux avant de les indexer ?") == "fr"
    assert detect_language("Wie teilt man die Dokumente in Abschnitte, bevor man sie indiziert?") == "de"
    assert detect_language("ドキュメントをチャンクに分割する方法を説明します。") == "ja"
    assert detect_language("1234 — 5678") == "und"
