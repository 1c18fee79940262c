"""Ground-truth files and validation."""

from __future__ import annotations

import json

import pytest

from audit.groundtruth import (
    GroundTruthError,
    Needle,
    load_needles,
    load_out_of_domain,
    validate,
)
from audit.ingest import Corpus, markdown_document
from audit.matching import collapse, collapse_with_map


def corpus():
    a = markdown_document("a.md", "# Alpha guide\n\nThe quick brown fox\njumps over the lazy dog.\n\n"
                                  "## Setup steps\n\nRepeat me. Repeat me.\n")
    b = markdown_document("b.md", "# Beta\n\nUnique sentence about beta things lives here.\n")
    return Corpus("t", (a, b))


def test_builtin_ground_truth_is_valid(builtin_gt):
    assert len(builtin_gt.needles) == 32 and not builtin_gt.rejected
    assert len(builtin_gt.queries) == 64
    assert len(builtin_gt.out_of_domain) == 30
    assert len({builtin_gt.locations[n.id].doc_id for n in builtin_gt.needles}) >= 20
    for n in builtin_gt.needles:
        assert 40 <= len(n.key) <= 200


def test_validation_accepts_across_line_break_and_rejects_with_reasons():
    needles = [
        Needle("ok", "brown fox jumps   over the lazy"),  # crosses the line break
        Needle("twice", "Repeat me."),
        Needle("heading", "Setup steps"),
        Needle("title", "Alpha guide"),
        Needle("missing", "not in the corpus at all"),
        Needle("ok", "Unique sentence"),  # duplicate id
    ]
    acc, loc, rej = validate(needles, corpus())
    assert [n.id for n in acc] == ["ok"]
    a = corpus().get("a.md").text
    assert a[loc["ok"].start:loc["ok"].end] == "brown fox\njumps over the lazy"
    reasons = {r.id: r.reason for r in rej}
    assert reasons["twice"].startswith("found 2 times")
    assert "heading" in reasons["heading"] and "heading" in reasons["title"]
    assert reasons["missing"] == "not found in the corpus"
    assert [r.reason for r in rej if r.id == "ok"] == ["duplicate id"]


def test_collapse_map_points_back_to_the_original():
    text = "a \n\t b  c"
    col, origin = collapse_with_map(text)
    assert col == "a b c"
    assert [text[i] for i in origin[:-1]] == ["a", " ", "b", " ", "c"]
    assert origin[-1] == len(text)
    assert collapse("  x\n y ") == "x y"


def test_malformed_jsonl_names_file_and_line(tmp_path):
    p = tmp_path / "gt.jsonl"
    good = json.dumps({"id": "n1", "needle": "x" * 40, "questions": ["q1", "q2"]})
    p.write_text(good + "\n\n{not json}\n", encoding="utf-8")
    with pytest.raises(GroundTruthError, match=r"gt\.jsonl:3: not valid JSON"):
        load_needles(p)
    p.write_text(good + "\n" + json.dumps({"id": "n2", "needle": "y", "questions": []}) + "\n", encoding="utf-8")
    with pytest.raises(GroundTruthError, match=r"gt\.jsonl:2: 'questions'"):
        load_needles(p)
    with pytest.raises(GroundTruthError, match="not found"):
        load_needles(tmp_path / "absent.jsonl")


def test_out_of_domain_skips_comments_and_blank_lines(tmp_path):
    p = tmp_path / "ood.txt"
    p.write_text("# header\n\nhow do I boil an egg\n   \n  # indented comment\nvisa rules\n", encoding="utf-8")
    assert load_out_of_domain(p) == ["how do I boil an egg", "visa rules"]


def test_a_question_holding_a_line_separator_is_one_record(tmp_path):
    # U+2028 is valid inside a JSON string; str.splitlines() would cut the record there
    from audit.groundtruth import load_needles, load_out_of_domain

    p = tmp_path / "gt.jsonl"
    p.write_text(json.dumps({"id": "n1", "needle": "x", "questions": ["a\u2028b", "c\u0085d"]}, ensure_ascii=False)
                 + "\r\n", encoding="utf-8")
    (n,) = load_needles(p)
    assert n.questions == ("a\u2028b", "c\u0085d") and n.line == 1
    o = tmp_path / "ood.txt"
    o.write_text("first\u2028still first\r\nsecond\n", encoding="utf-8")
    assert load_out_of_domain(o) == ["first\u2028still first", "second"]
