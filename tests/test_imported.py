"""Readers of the user's files: good files, each kind of bad line with its exact message, chunk offsets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.groundtruth import Needle
from audit.ingest import Corpus, load_folder, markdown_document
from audit.sources.imported import (
    ChunkError,
    InputFileError,
    UserChunk,
    check_chunks,
    needle_qrels,
    read_beir_qrels,
    read_chunks,
    read_jsonl_run,
    read_qrels,
    read_queries,
    read_run,
    read_trec_qrels,
    read_trec_run,
)
from audit.runset import ScoreKindError

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "example"


def write(tmp_path, name, text, encoding="utf-8"):
    p = tmp_path / name
    p.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return p


def raises(fn, *args, **kw) -> str:
    with pytest.raises(InputFileError) as e:
        fn(*args, **kw)
    assert isinstance(e.value, ValueError)
    return str(e.value)


# --------------------------------------------------------------------------- runs


def test_trec_run_good(tmp_path):
    p = write(tmp_path, "sys.trec", "q1 Q0 c1 1 0.9 sys\nq1 Q0 c2 2 0.9 sys\n\nq2\tQ0\tc3 1 -1.5e-1 sys\r\n")
    run = read_trec_run(p)
    assert run.name == "sys" and run.score_kind == "similarity" and run.source == str(p)
    # c1 and c2 tie at 0.9: evaluated order is chunk id descending (trec_eval), so c2 first,
    # which contradicts the file's rank column for q1
    assert run.ids("q1") == ("c2", "c1") and run.rank_conflicts == ("q1",)
    assert run.rankings["q2"].top(5) == [("c3", -0.15)]  # tabs split like spaces, CRLF stripped
    d = read_trec_run(p, name="old", score_kind="cosine-distance")
    assert d.name == "old" and d.ids("q1") == ("c2", "c1")  # a tie stays a tie after negation


@pytest.mark.parametrize("text, line, reason", [
    ("q1 Q0 c1 1 0.9 t\nq1 Q0 c2 2 0.8\n", 2, "expected 6 fields 'qid Q0 docid rank score tag', got 5"),
    ("q1 Q0 c1 x 0.9 t\n", 1, "rank 'x' is not an integer"),
    ("q1 Q0 c1 0 0.9 t\n", 1, "rank '0' must be >= 1"),
    ("q1 Q0 c1 1 high t\n", 1, "score 'high' is not a number"),
    ("q1 Q0 c1 1 nan t\n", 1, "score 'nan' is not a finite number"),
    ("q1 Q0 c1 1 0.9 t\n\nq1 Q0 c1 2 0.8 t\n", 3, "chunk 'c1' ranked twice for query 'q1' (first on line 1)"),
])
def test_trec_run_bad_lines(tmp_path, text, line, reason):
    p = write(tmp_path, "bad.trec", text)
    assert raises(read_trec_run, p) == f"{p}:{line}: {reason}"


def test_whole_file_problems(tmp_path):
    empty = write(tmp_path, "empty.trec", "\n  \n")
    assert raises(read_trec_run, empty) == f"{empty}: empty run: no ranking line"
    missing = tmp_path / "nope.trec"
    assert raises(read_run, missing) == f"{missing}: run file not found"
    # byte 0xe9 (Latin-1 é) on line 2: line 1 is 17 bytes, so it sits at byte 17 + 7 = 24
    latin = write(tmp_path, "latin.trec", "q1 Q0 c1 1 0.9 t\nq1 Q0 cé 2 0.8 t\n", encoding="latin-1")
    assert raises(read_trec_run, latin) == f"{latin}:2: not UTF-8 text (byte 0xe9 at byte offset 24)"
    with pytest.raises(ScoreKindError, match="unknown score kind 'cos'"):
        read_trec_run(write(tmp_path, "ok.trec", "q1 Q0 c1 1 0.9 t\n"), score_kind="cos")


def test_jsonl_run_good_and_dispatch(tmp_path):
    rows = [{"query_id": 1, "chunk_id": "a", "rank": 1, "score": 0.2},
            {"query_id": "1", "chunk_id": "b", "rank": 2, "score": 0.4, "extra": True}]
    p = write(tmp_path, "sys.run", "".join(json.dumps(r) + "\n" for r in rows))
    run = read_run(p, score_kind="l2")  # not named .jsonl: recognised by its first character
    assert run.ids("1") == ("a", "b") and run.rank_conflicts == ()  # integer id read as "1"; lower l2 first
    assert read_jsonl_run(p).ids("1") == ("b", "a")  # the same file as similarities
    t = write(tmp_path, "sys.txt", "1 Q0 a 1 3 x\n")
    assert read_run(t).ids("1") == ("a",)


@pytest.mark.parametrize("line, reason", [
    ('{"query_id": "q1", "chunk_id": "a", "rank": 1 "score": 1}', "not valid JSON (Expecting ',' delimiter at column 47)"),
    ('["q1", "a", 1, 0.5]', "expected a JSON object, got list"),
    ('{"chunk_id": "a", "rank": 1, "score": 1}', "'query_id' must be a string or an integer (missing)"),
    ('{"query_id": "q1", "chunk_id": [1], "rank": 1, "score": 1}', "'chunk_id' must be a string or an integer (got [1])"),
    ('{"query_id": "q1", "chunk_id": "a", "rank": true, "score": 1}', "'rank' must be an integer >= 1 (got true)"),
    ('{"query_id": "q1", "chunk_id": "a", "rank": 1}', "'score' must be a finite number (missing)"),
    ('{"query_id": "q1", "chunk_id": "a", "rank": 1, "score": "0.5"}', "'score' must be a finite number (got \"0.5\")"),
    ('{"query_id": " ", "chunk_id": "a", "rank": 1, "score": 1}', "'query_id' must not be empty"),
])
def test_jsonl_run_bad_lines(tmp_path, line, reason):
    good = '{"query_id": "q0", "chunk_id": "a", "rank": 1, "score": 1}'
    p = write(tmp_path, "bad.jsonl", good + "\n" + line + "\n")
    assert raises(read_jsonl_run, p) == f"{p}:2: {reason}"


# --------------------------------------------------------------------------- qrels


def test_trec_and_beir_qrels_good(tmp_path):
    p = write(tmp_path, "q.qrels", "q1 0 c1 2\nq1 0 c2 0\nq2 0 c3 -1\n")
    q = read_qrels(p)
    assert q.judgments == {"q1": {"c1": 2, "c2": 0}, "q2": {"c3": -1}} and q.query_ids == ("q1", "q2")
    assert q.relevant("q1") == {"c1"} and q.relevant("q2") == frozenset()
    b = write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\r\nq1\tdoc 1\t1\nq2\td2\t0\n")
    qb = read_qrels(b)  # recognised by its header; ids may hold spaces (tab-separated)
    assert qb.judgments == {"q1": {"doc 1": 1}, "q2": {"d2": 0}}
    assert read_beir_qrels(b, note="BEIR judges documents").note == "BEIR judges documents"
    assert list(qb.to_frame().columns) == ["query_id", "chunk_id", "relevance"]


@pytest.mark.parametrize("text, line, reason", [
    ("q1 0 c1 1\nq1 0 c2\n", 2, "expected 4 fields 'qid 0 docid relevance', got 3"),
    ("q1 0 c1 1.5\n", 1, "relevance '1.5' is not an integer"),
    ("q1 0 c1 1\nq1 0 c1 2\n", 2, "chunk 'c1' judged twice for query 'q1' (first on line 1) with another grade "
                                   "(1 there, 2 here): keep the one that holds"),
])
def test_trec_qrels_bad_lines(tmp_path, text, line, reason):
    p = write(tmp_path, "bad.qrels", text)
    assert raises(read_trec_qrels, p) == f"{p}:{line}: {reason}"


@pytest.mark.parametrize("text, line, reason", [
    ("qid\tdocid\tscore\nq1\td1\t1\n", 1, "expected the header 'query-id<TAB>corpus-id<TAB>score', got 'qid\\tdocid\\tscore'"),
    ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, "expected 3 tab-separated fields 'query-id corpus-id score', got 2"),
    ("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", 2, "score 'yes' is not an integer"),
    ("query-id\tcorpus-id\tscore\n\tdoc\t1\n", 2, "empty query-id or corpus-id"),
])
def test_beir_qrels_bad_lines(tmp_path, text, line, reason):
    p = write(tmp_path, "bad.tsv", text)
    assert raises(read_beir_qrels, p) == f"{p}:{line}: {reason}"


def test_header_only_qrels_is_empty(tmp_path):
    p = write(tmp_path, "h.tsv", "query-id\tcorpus-id\tscore\n")
    assert raises(read_qrels, p) == f"{p}: empty qrels: no judgment line"


# --------------------------------------------------------------------------- queries


def test_queries_tsv_and_jsonl(tmp_path):
    p = write(tmp_path, "q.tsv", "q1\tWhat is\ta tab?\r\nq2\tSecond\u2028line\n")
    # text is everything after the first tab; CRLF stripped; U+2028 is not a line break
    assert read_queries(p) == {"q1": "What is\ta tab?", "q2": "Second\u2028line"}
    rows = [{"_id": "q1", "text": "first\u2028still first", "metadata": {}}, {"_id": 7, "text": "seven"}]
    j = write(tmp_path, "queries.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    assert "\u2028" in j.read_text(encoding="utf-8")  # the raw character, not an escape
    assert read_queries(j) == {"q1": "first\u2028still first", "7": "seven"}


@pytest.mark.parametrize("name, text, line, reason", [
    ("q.tsv", "q1\tok\nq2 no tab\n", 2, "expected 'id<TAB>text' (no tab on the line)"),
    ("q.tsv", "q1\tok\nq1\tagain\n", 2, "duplicate query id 'q1' (first on line 1)"),
    ("q.tsv", "q1\t  \n", 1, "query 'q1' has an empty text"),
    ("q.tsv", "\tno id\n", 1, "empty query id"),
    ("q.jsonl", '{"_id": "q1", "text": "a\u2028b"}\n{"_id": "q2"}\n', 2, "'text' must be a string (query 'q2')"),
])
def test_queries_bad_lines(tmp_path, name, text, line, reason):
    p = write(tmp_path, name, text)
    assert raises(read_queries, p) == f"{p}:{line}: {reason}"


# --------------------------------------------------------------------------- chunks


def test_chunks_good(tmp_path):
    rows = [{"chunk_id": "c1", "doc_id": "a.md", "text": "H\n\nbody\u2028more", "content": "body\u2028more",
             "start": 3, "end": 12, "page": 2, "section": "S"},
            {"chunk_id": 2, "doc_id": "a.md", "text": "plain", "start": None, "end": None}]
    p = write(tmp_path, "chunks.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    c1, c2 = read_chunks(p)
    assert c1 == UserChunk("c1", "a.md", "H\n\nbody\u2028more", "body\u2028more", 3, 12, 2, "S", 1)
    assert c1.quote == "body\u2028more" and c2.quote == "plain"
    assert c2.chunk_id == "2" and c2.start is None and c2.line == 2


@pytest.mark.parametrize("obj, reason", [
    ({"doc_id": "a.md", "text": "t"}, "'chunk_id' must be a string or an integer (missing)"),
    ({"chunk_id": "c", "text": "t"}, "'doc_id' must be a non-empty string (chunk 'c')"),
    ({"chunk_id": "c", "doc_id": "a.md"}, "'text' must be a string (chunk 'c')"),
    ({"chunk_id": "c", "doc_id": "a.md", "text": "t", "content": 3}, "'content' must be a string or absent (chunk 'c')"),
    ({"chunk_id": "c", "doc_id": "a.md", "text": "t", "start": 1}, "'start' and 'end' go together: give both or neither (chunk 'c')"),
    ({"chunk_id": "c", "doc_id": "a.md", "text": "t", "start": -1, "end": 3}, "'start' must be an integer >= 0 (got -1)"),
    ({"chunk_id": "c", "doc_id": "a.md", "text": "t", "start": 5, "end": 3}, "'end' (3) is before 'start' (5) (chunk 'c')"),
    ({"chunk_id": "c", "doc_id": "a.md", "text": "t", "page": 0}, "'page' must be an integer >= 1 (got 0)"),
    ({"chunk_id": "c", "doc_id": "a.md", "text": "t", "section": ["S"]}, "'section' must be a string or absent (chunk 'c')"),
    ({"chunk_id": "c0", "doc_id": "a.md", "text": "t"}, "duplicate chunk_id 'c0' (first on line 1)"),
])
def test_chunks_bad_lines(tmp_path, obj, reason):
    # line 1 holds U+2028 inside a string: it must not shift the line count
    first = json.dumps({"chunk_id": "c0", "doc_id": "a.md", "text": "x\u2028y"}, ensure_ascii=False)
    p = write(tmp_path, "chunks.jsonl", first + "\n" + json.dumps(obj) + "\n")
    assert raises(read_chunks, p) == f"{p}:2: {reason}"


def test_check_chunks_example_finds_exactly_the_two_wrong_chunks():
    corpus = load_folder(EXAMPLE / "docs")
    chunks = read_chunks(EXAMPLE / "chunks.jsonl")
    errors = check_chunks(chunks, corpus)
    assert [e.chunk_id for e in errors] == ["b2", "k4"] and all(isinstance(e, ChunkError) for e in errors)
    # b2 is stale: it says "fifteen days" where the document says "fourteen days"
    backups = corpus.get("ops/backups.md").text
    assert backups[219 - 1:219 + 7] == "fourteen"
    assert errors[0].reason == ("content differs from ops/backups.md[135:299] at document offset 219 "
                                "(chunk offset 84): chunk has 'i', document has 'o'")
    # k4's offsets are one character late: its first character 'A' sits at 391, 392 is the space after it
    keys = corpus.get("ops/keys.md").text
    assert keys[391:393] == "A "
    assert errors[1].reason == ("content differs from ops/keys.md[392:505] at document offset 392 "
                                "(chunk offset 0): chunk has 'A', document has ' '")
    assert errors[1].to_dict() == {"chunk_id": "k4", "reason": errors[1].reason}


def test_check_chunks_other_reasons():
    doc = markdown_document("a.md", "# A\n\nhello world\n")
    corpus = Corpus("mem", (doc,))
    chunks = [UserChunk("ok", "a.md", "hello", start=5, end=10),
              UserChunk("noff", "a.md", "anything"),  # no offsets: not checked
              UserChunk("gone", "b.md", "x", start=0, end=1),
              UserChunk("past", "a.md", "x", start=5, end=99),
              UserChunk("short", "a.md", "H\n\nhell", content="hell", start=5, end=10),
              UserChunk("long", "a.md", "hello!", start=5, end=10),
              UserChunk("uni", "a.md", "hello\u00a0world", start=5, end=16)]
    errs = {e.chunk_id: e.reason for e in check_chunks(chunks, corpus)}
    assert set(errs) == {"gone", "past", "short", "long", "uni"}
    assert errs["gone"] == "document 'b.md' is not in the corpus"
    assert errs["past"] == "end 99 is past the end of 'a.md' (17 characters)"  # '# A\n\nhello world\n'
    assert errs["short"] == ("content differs from a.md[5:10] at document offset 9 (chunk offset 4): "
                             "chunk has the end of the chunk, document has 'o'")
    assert errs["long"] == ("text differs from a.md[5:10] at document offset 10 (chunk offset 5): "
                            "chunk has '!', document has the end of the slice")
    assert errs["uni"].endswith("chunk has '\\xa0', document has ' '")  # repr shows the invisible space


# --------------------------------------------------------------------------- needles


def test_needle_qrels_against_the_example_chunks():
    chunks = read_chunks(EXAMPLE / "chunks.jsonl")
    needles = [Needle("n1", "Snapshots older than fourteen days are pruned", ("doc q", "ticket q")),
               Needle("n2", "The previous key stays readable\n   for seventy-two hours", ("doc q",)),
               Needle("n3", "dead-letter shelf", ("doc q",))]
    q = needle_qrels(needles, chunks)
    # n1: b2 is stale ("fifteen"), so no chunk holds it: counted with no relevant chunk.
    # n2: whitespace collapsed on both sides, held by k2 only. n3: held by k3 and l3.
    assert q.judgments == {"n1/doc": {}, "n1/ticket": {}, "n2/doc": {"k2": 1}, "n3/doc": {"k3": 1, "l3": 1}}
    q2 = needle_qrels(needles, chunks, ["n2", "n3/x", "zz"])
    assert q2.judgments == {"n2": {"k2": 1}, "n3/x": {"k3": 1, "l3": 1}}  # zz asks no needle
    assert needle_qrels(needles, chunks, {"a": "n3"}).judgments == {"a": {"k3": 1, "l3": 1}}
    with pytest.raises(ValueError, match="unknown needles: 'n9'"):
        needle_qrels(needles, chunks, {"a": "n9"})


def test_the_provenance_line_names_a_store_without_an_empty_digest():
    """A live store (or an endpoint) has no file digest: its provenance line names it without "()"."""
    from audit.evaluation.judgments import Qrels
    from audit.sources.imported.system import team_runset

    files = [{"role": "store", "name": "pgvector table t in store s", "sha256": ""},
             {"role": "run a", "name": "a.trec", "sha256": "ab" * 32}]
    line = team_runset({"q": "x"}, Qrels({"q": {"c": 1}}), "qrels", [], files=files, kind="store",
                       name="live store s").source.provenance_line
    assert "()" not in line and "store pgvector table t in store s · run a a.trec (abababababab)" in line
