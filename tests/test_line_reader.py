"""One line reader (issue 23, ``audit/jsontext.py``): every reader of the package splits, decodes and names a
bad line the same way, with the error type of its own module."""

from __future__ import annotations

import pytest

from audit.cli import main
from audit.groundtruth import GroundTruthError, load_needles, load_out_of_domain
from audit.jsontext import (
    InputFileError,
    first_line,
    int_field,
    json_records,
    lines,
    read_text,
    stream_lines,
    text_lines,
)
from audit.qrels import read_qrels


def test_lines_split_on_newline_only():
    # U+2028 and U+0085 are characters a JSON string may hold: never a line break here; CRLF loses its CR
    assert lines("a\u2028b\r\nc\u0085d\n\ne") == ["a\u2028b", "c\u0085d", "", "e"]
    assert lines("") == [""]


def test_the_same_faults_the_same_words_in_every_reader(tmp_path):
    bad = tmp_path / "gt.jsonl"
    # line 1 is 43 bytes and its newline: line 2 starts at byte 44, and `{"id": "n` is 9 bytes: é (0xe9) is byte 53
    bad.write_bytes(b'{"id": "n1", "needle": "x", "questions": ["q"]}\n'[:43] + b'\n{"id": "n\xe9"}\n')
    want = f"{bad}:2: not UTF-8 text (byte 0xe9 at byte offset 53)"
    with pytest.raises(InputFileError) as e:
        read_text(bad, "ground-truth file")
    assert str(e.value) == want and (e.value.path, e.value.line) == (str(bad), 2)
    with pytest.raises(GroundTruthError) as g:  # the ground truth's own error, the same words
        load_needles(bad)
    assert str(g.value) == want
    with pytest.raises(GroundTruthError, match=r"gt.jsonl:2: not UTF-8 text"):
        load_out_of_domain(bad)
    with pytest.raises(InputFileError, match=r"qrels.trec: qrels file not found"):
        read_qrels(tmp_path / "qrels.trec")
    with pytest.raises(GroundTruthError, match=r"nothing.jsonl: ground-truth file not found"):
        load_needles(tmp_path / "nothing.jsonl")


def test_records_and_fields(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('\ufeff{"a": 1}\n\n   \n{"a": 2}\r\n', encoding="utf-8")  # a BOM, blank lines, CRLF
    assert list(text_lines(p, "file")) == [(1, '{"a": 1}'), (4, '{"a": 2}')]
    assert list(json_records(p, "file")) == [(1, {"a": 1}), (4, {"a": 2})]
    assert first_line(p, "file") == '{"a": 1}'
    assert int_field(p, 4, "7", "rank", 1) == 7
    with pytest.raises(InputFileError, match=r"r.jsonl:4: rank '0' must be >= 1"):
        int_field(p, 4, "0", "rank", 1)
    # streamed: the same records, with each line's byte offset (the BOM skipped) and nothing decoded
    assert [(no, off, raw) for no, off, raw in stream_lines(p)] == [(1, 3, b'{"a": 1}'), (2, 12, b""), (3, 13, b"   "),
                                                                  (4, 17, b'{"a": 2}')]


def test_a_ground_truth_not_utf8_is_one_line_naming_its_line(tmp_path, capsys):
    gt = tmp_path / "gt.jsonl"
    gt.write_bytes(b'{"id": "n1", "needle": "caf\xe9", "questions": ["q"]}\n')
    assert main(["groundtruth", "check", str(gt)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {gt}:1: not UTF-8 text (byte 0xe9 at byte offset 27)"


def test_first_line_reads_only_the_start(tmp_path):
    # a format is sniffed off the first line before the file is read once: a bad byte further on is the
    # reader's to name (FILE:LINE), and a file whose start is not UTF-8 is still refused here, with its line
    p = tmp_path / "big.trec"
    p.write_bytes(b"\n  \nq1 Q0 c1 1 0.5 t\n" + b"q1 Q0 c2 2 0.4 t\n" * 20_000 + b"q1 Q0 c\xe9 3 0.3 t\n")
    assert first_line(p, "run file") == "q1 Q0 c1 1 0.5 t"
    with pytest.raises(InputFileError, match=r"big.trec:20004: not UTF-8 text"):
        read_text(p, "run file")
    bad = tmp_path / "bad.trec"
    bad.write_bytes(b"\n\xe9 Q0 c1 1 0.5 t\n")
    with pytest.raises(InputFileError, match=r"bad.trec:2: not UTF-8 text"):
        first_line(bad, "run file")
    blank = tmp_path / "blank.trec"
    blank.write_bytes(b"\xef\xbb\xbf\n \n")
    assert first_line(blank, "run file") == ""
