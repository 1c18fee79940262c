"""One JSONL line, one JSON object of Unicode text: lone surrogates refused with the file and line, in every reader."""

from __future__ import annotations

import json

import pytest

from audit.cli import main
from audit.groundtruth import GroundTruthError, load_needles
from audit.jsontext import JsonLineError, json_object, lone_surrogate
from audit.sources.imported import InputFileError, read_chunks, read_queries, read_run

# "\ud83d" is the first half of the UTF-16 pair of 😀 (U+1F600 = \ud83d\ude00), written as JSON escapes:
# valid JSON, but not a character
LONE = '"rotate the keys \\ud83d"'
REASON = ("'text' holds a lone surrogate \\ud83d (half of a UTF-16 pair, not a character: the text was cut inside "
          "an emoji or another character beyond U+FFFF; write the whole character)")


def test_a_whole_pair_is_one_character_and_a_half_is_refused():
    assert json_object('{"text": "ok \\ud83d\\ude00"}') == {"text": "ok \U0001F600"}
    with pytest.raises(JsonLineError) as e:
        json_object('{"text": ' + LONE + "}")
    assert str(e.value) == REASON


def test_where_names_the_key_path():
    assert lone_surrogate({"questions": ["fine", "bad \udc00"]}) == "'questions'[1] holds a lone surrogate \\udc00"
    assert lone_surrogate({"a": {"b": "\ud800"}}) == "'a'['b'] holds a lone surrogate \\ud800"
    assert lone_surrogate({"\udbff": 1}) == "a key holds a lone surrogate \\udbff"
    assert lone_surrogate({"n": 1, "t": "\U0001F600", "l": [None, True]}) is None


def test_other_line_errors_are_unchanged():
    with pytest.raises(JsonLineError, match=r"^not valid JSON \(Expecting value at column 1\)$"):
        json_object("nope")
    with pytest.raises(JsonLineError, match=r"^expected a JSON object, got list$"):
        json_object("[1]")


def write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


def test_every_reader_names_the_file_and_line(tmp_path):
    q = write(tmp_path, "queries.jsonl", ['{"_id": "q1", "text": "fine"}', '{"_id": "q2", "text": ' + LONE + "}"])
    with pytest.raises(InputFileError) as e:
        read_queries(q)
    assert str(e.value) == f"{q}:2: {REASON}"
    c = write(tmp_path, "chunks.jsonl", ['{"chunk_id": "c1", "doc_id": "d", "text": ' + LONE + "}"])
    with pytest.raises(InputFileError, match=rf"^{c}:1: 'text' holds a lone surrogate \\ud83d"):
        read_chunks(c)
    r = write(tmp_path, "r.jsonl", ['{"query_id": "q\\udead", "chunk_id": "c1", "rank": 1, "score": 1}'])
    with pytest.raises(InputFileError, match=rf"^{r}:1: 'query_id' holds a lone surrogate \\udead"):
        read_run(r)
    g = write(tmp_path, "gt.jsonl", ['{"id": "n1", "needle": "x", "questions": ["a", "b \\ud83d"]}'])
    with pytest.raises(GroundTruthError, match=rf"^{g}:1: 'questions'\[1\] holds a lone surrogate \\ud83d"):
        load_needles(g)


def test_utf8_encoded_surrogates_are_not_utf8(tmp_path):
    # the three bytes a careless encoder writes for U+D83D (CESU-8 style): Python's UTF-8 decoder refuses them
    p = tmp_path / "queries.tsv"
    p.write_bytes(b"q1\trotate\nq2\tkeys \xed\xa0\xbd\n")
    with pytest.raises(InputFileError) as e:
        read_queries(p)
    # line 1 is 10 bytes, "q2<TAB>keys " 8 more: the first of the three bytes sits at offset 18
    assert str(e.value) == f"{p}:2: not UTF-8 text (byte 0xed at byte offset 18)"


def test_cli_exit_2_with_one_line(tmp_path, capsys):
    q = write(tmp_path, "queries.jsonl", ['{"_id": "q1", "text": ' + LONE + "}"])
    qrels = write(tmp_path, "qrels.trec", ["q1 0 c1 1"])
    run = write(tmp_path, "r.trec", ["q1 Q0 c1 1 0.9 r"])
    assert main(["report", "--queries", str(q), "--qrels", str(qrels), "--run", f"r={run}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{q}:1: 'text' holds a lone surrogate \\ud83d" in err


def test_cli_builtin_ground_truth_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nThe relay keys rotate every night.\n", encoding="utf-8")
    gt = write(tmp_path, "gt.jsonl", [json.dumps({"id": "n1", "needle": "The relay keys rotate every night.",
                                                  "questions": ["when do keys rotate"]}),
                                      '{"id": "n2", "needle": "x", "questions": ["when \\ud83d"]}'])
    assert main(["report", "--corpus", str(tmp_path / "docs"), "--ground-truth", str(gt), "--model", "hashing",
                 "--reranker", "none", "--no-cache", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{gt}:2: 'questions'[0] holds a lone surrogate \\ud83d" in err


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WITH_SURROGATES = st.lists(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=20).map("".join)


@pytest.mark.slow
@given(_WITH_SURROGATES, st.booleans())
def test_a_line_is_accepted_exactly_when_every_string_is_unicode_text(s, ascii_only):
    # ensure_ascii=False writes a raw surrogate: no UTF-8 file holds that line, but a str may
    line = json.dumps({"text": s, "list": [s]}, ensure_ascii=ascii_only)
    decoded = json.loads(line)["text"]  # escapes "\ud800\udc00" side by side are one character, U+10000
    try:
        decoded.encode("utf-8")  # what fails later, far from the line, when a string is not Unicode text
        bad = False
    except UnicodeEncodeError:
        bad = True
    if bad:
        with pytest.raises(JsonLineError, match=r"^'text' holds a lone surrogate \\ud[89a-f][0-9a-f]{2} "):
            json_object(line)
    else:
        assert json_object(line) == {"text": decoded, "list": [decoded]}
