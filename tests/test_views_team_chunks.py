"""What the Chunk map and Tokens view-models show of a team's own chunks (issue 37: computed in ``audit/views``,
not in the pages), over the example system of ``data/example`` (README: 12 chunks, b2 and k4 wrong on purpose).

The expected values are read from ``chunks.jsonl`` directly with :mod:`json`, not through the run set."""

from __future__ import annotations

import json
import statistics

import pytest

from audit.ingest import load_corpus
from audit.sources.imported.system import load_system
from audit.views.chunk_map import team_span_documents, team_spans_frame
from audit.views.tokens import chunk_lengths_line
from conftest import ROOT

EX = ROOT / "data" / "example"


@pytest.fixture(scope="module")
def system():
    return load_system(EX / "queries.tsv", {"before": EX / "before.trec"}, {"before": "cosine-distance"},
                       EX / "qrels.trec", None, EX / "chunks.jsonl", load_corpus(str(EX / "docs")))


def _lines():
    return [json.loads(x) for x in (EX / "chunks.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def test_the_spans_of_a_teams_chunks_per_document(system):
    lines = _lines()
    assert team_span_documents(system) == sorted({x["doc_id"] for x in lines if "start" in x})
    doc = "ops/backups.md"
    want = sorted((x["start"], x["chunk_id"], x["end"]) for x in lines if x["doc_id"] == doc)
    df = team_spans_frame(system, doc)
    assert list(zip(df["start (char)"], df["chunk_id"], df["end (char)"])) == want
    assert (df["length (chars)"] == df["end (char)"] - df["start (char)"]).all()
    # b2's text differs from the document at its offsets (data/example/README.md); b1 and b3 match
    assert dict(zip(df["chunk_id"], df["quote matches"]))["b2"] == "no"
    assert set(df.loc[df["chunk_id"] != "b2", "quote matches"]) == {"yes"}


def test_without_a_tokenizer_a_teams_chunks_are_measured_in_characters(system):
    lengths = [len(x["text"]) for x in _lines()]
    assert chunk_lengths_line(system) == (f"Your {len(lengths)} chunks' lengths in characters (no tokenizer here): "
                                          f"median {int(statistics.median(lengths)):,}, longest {max(lengths):,}.")
