"""A BEIR dataset folder as a corpus and its judgments for the built-in strategies (judged by document)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from audit.chunking import PRESETS, chunk_corpus
from audit.cli import main
from audit.groundtruth import GroundTruthError, load_ground_truth
from audit.ingest import load_corpus
from audit.models import load_encoder

DOCS = {"d1": ("Backups", "Daily backups are kept for fourteen days. " * 30),
        "d2": ("VPN", "The VPN client refuses to start on an unencrypted disk. Sessions last twelve hours."),
        "d3": ("", "Firewall rules without an expiry are removed at the monthly review.")}
QUERIES = {"q1": "how long are daily backups kept", "q2": "why does the vpn not start", "q3": "firewall expiry",
           "q4": "a query nobody judged relevant"}
QRELS = [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 1), ("q3", "d1", 0), ("q4", "d2", 0)]


@pytest.fixture()
def beir(tmp_path):
    root = tmp_path / "mini-beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": t, "text": x}) + "\n"
                                               for k, (t, x) in DOCS.items()), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in QUERIES.items()),
                                        encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                             + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in QRELS), encoding="utf-8")
    return root


def test_the_folder_is_a_corpus_and_its_qrels_judge_documents(beir):
    corpus = load_corpus(beir)
    assert [d.doc_id for d in corpus.documents] == ["d1", "d2", "d3"]
    assert corpus.get("d1").text.startswith("# Backups\n\nDaily backups") and corpus.get("d1").title == "Backups"
    assert corpus.get("d3").text.startswith("Firewall rules")  # no title: no heading line
    gt = load_ground_truth(corpus)
    assert gt.judged_by_document
    # q4 has no relevant document (score 0 only): not asked
    assert [(q.query_id, q.text) for q in gt.queries] == [(k, QUERIES[k]) for k in ("q1", "q2", "q3")]
    assert [n.relevant_docs for n in gt.needles] == [("d1",), ("d2",), ("d3",)]


def test_report_counts_every_chunk_of_a_relevant_document_as_correct(beir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    assert main(["report", "--corpus", str(beir), "--model", "hashing", "--reranker", "none", "--strategies", "C",
                 "--retrievers", "dense", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "judged by document (a chunk is relevant when its document is)" in text
    # one wording a question: no phrasing table of NaN (issue 41), a sentence instead
    assert "NaN" not in text and "nan" not in text.lower().split()
    assert "phrasing: every judged question is asked in one wording only" in text
    js = json.loads(out.read_text())
    assert js["questions"]["judged_by"].startswith("document")
    (row,) = js["results"]
    # independently: chunk the corpus the same way, rank by cosine distance with numpy, first chunk of a relevant doc
    chunks = chunk_corpus(load_corpus(beir), PRESETS["C"])
    enc = load_encoder("hashing")
    vecs, qv = enc.encode(chunks.texts), enc.encode([QUERIES[q] for q in ("q1", "q2", "q3")])
    ranks = []
    for v, doc in zip(qv, ("d1", "d2", "d3")):
        order = np.lexsort((np.arange(len(vecs)), 1.0 - vecs @ v))
        ranks.append(next(r for r, i in enumerate(order, start=1) if chunks[int(i)].doc_id == doc))
    assert len(chunks.of_document("d1")) > 1  # the long document is several chunks, all relevant
    for k in (1, 4, 8, 20):
        assert row[f"Success@{k}"] == pytest.approx(sum(r <= k for r in ranks) / 3)
    assert row["n_queries"] == 3


def test_a_broken_queries_file_names_its_line(beir):
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(GroundTruthError, match=r"queries.jsonl:2: not valid JSON"):
        load_ground_truth(load_corpus(beir))


def test_judged_queries_without_text_are_rejected_with_the_reason(beir, tmp_path, monkeypatch, capsys):
    # q5 is judged but absent from queries.jsonl, q6 has an empty text there; q4 only has a score 0
    with open(beir / "queries.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"_id": "q6", "text": " "}) + "\n")
    with open(beir / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
        f.write("q5\td2\t1\nq6\td3\t1\n")
    gt = load_ground_truth(load_corpus(beir))
    assert [q.query_id for q in gt.queries] == ["q1", "q2", "q3"]  # the rest is evaluated
    assert [(r.id, r.reason, r.line) for r in gt.rejected] == [
        ("q4", "no relevant document judged in qrels/test.tsv (every score is below 1)", 4),
        ("q5", "judged in qrels/test.tsv, but queries.jsonl has no query with this _id", 0),
        ("q6", "judged in qrels/test.tsv, but queries.jsonl has an empty text for it", 5)]
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    assert main(["report", "--corpus", str(beir), "--model", "hashing", "--reranker", "none", "--strategies", "C",
                 "--retrievers", "dense", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "3 BEIR queries judged by document" in text and "3 rejected" in text
    assert "  q5 (line 0): judged in qrels/test.tsv, but queries.jsonl has no query with this _id" in text
    js = json.loads(out.read_text())
    assert [r["id"] for r in js["questions"]["rejected"]] == ["q4", "q5", "q6"] and js["results"][0]["n_queries"] == 3
