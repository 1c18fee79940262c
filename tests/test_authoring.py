"""Writing a ground truth (audit.authoring): passages, candidate sentences, a draft needle's checks, its questions,
out-of-domain questions, question/answer pairs located, the draft's ids, opening and saving (issue 31).

Every expected value is worked out by hand from the small documents built here (offsets counted in the
strings), or computed by the reference the rule names (rapidfuzz for the fuzzy score, numpy for a distance).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from audit.authoring.checks import (
    DESTROYED,
    TAIL_ONLY,
    WHOLE,
    CorpusViews,
    StrategyChunks,
    candidate_sentences,
    check_needle,
    check_question,
    find_passages,
    ood_key,
    ood_occurrences,
    picked_needle,
    question_overlap,
    quotes_needle,
)
from audit.authoring.draft import (
    AUTHORED,
    SHIPPED_DATA,
    Draft,
    SaveRefused,
    Target,
    home_target,
    home_targets,
    named_targets,
    open_draft,
    save_draft,
)
from audit.authoring.locate import EXACT, FUZZY, NOT_FOUND, VIEW, candidate_record, locate_pairs, read_qa
from audit.chunking import PRESETS, chunk_corpus
from audit.config import Config, ConfigError, load_config
from audit.groundtruth import GroundTruthError, load_needles, load_out_of_domain
from audit.ingest import Corpus, markdown_document

ROOT = Path(__file__).resolve().parent.parent

HEAD = "# Guide\n\n## Part\n\n"  # 18 characters
NEEDLE = "Keys rotate every ninety days unless the operator pins them."
FILLER = "Operators read this part before the first start of the relay. "


def _guide() -> str:
    """A needle starting at 490, across the blind cut at 512, alone in its paragraph after a 470-character one."""
    para1 = (FILLER * 8)[:469].rstrip() + "."
    para1 = para1 + "x" * (470 - len(para1)) if len(para1) < 470 else para1
    text = HEAD + para1 + "\n\n" + NEEDLE + " The pin lasts one year.\n\n## Capital\n\n" \
        "Some prompts ask what is the capital of France, which needs no reasoning.\n"
    assert text.index(NEEDLE) == 490 and text[511] != " " and text[512] != " "
    return text


def corpus() -> Corpus:
    guide = markdown_document("guide.md", _guide())
    keys = markdown_document("ops/keys.md", "# Relay keys\n\nA lost key cannot be recovered. Support can only "
                                            "confirm which messages became unreadable.\n\n## Rotation\n\nThe old "
                                            "key stays readable for seventy-two hours. After seventy-two hours "
                                            "the old key is shredded.\n")
    return Corpus("t", (guide, keys))


@pytest.fixture(scope="module")
def views():
    return CorpusViews(corpus())


def strategies(c: Corpus, names: str = "ABC") -> list[StrategyChunks]:
    return [StrategyChunks(n, PRESETS[n].description, chunk_corpus(c, PRESETS[n])) for n in names]


# --------------------------------------------------------------------------- passages and sentences


def test_passages_are_found_despite_case_whitespace_soft_hyphens_and_nfd(views):
    hits = find_passages(views, "SEVENTY-two\n  hours")
    # keys.md: "# Relay keys\n\n" (14) + 82 + "\n\n## Rotation\n\n" -> the section starts at 98, its body at 111
    text = corpus().get("ops/keys.md").text
    assert [h.where.start for h in hits] == [text.index("seventy-two"), text.rindex("seventy-two")]
    assert all(h.where.end - h.where.start == len("seventy-two hours") for h in hits)
    assert {h.where.section for h in hits} == {"Rotation"}
    doc = markdown_document("x.md", "# X\n\nThe re\u00adlay ke\u0301y is café.\n")
    v = CorpusViews(Corpus("x", (doc,)))
    (hit,) = find_passages(v, "relay kéy")  # typed composed, stored with a soft hyphen and a combining accent
    assert doc.text[hit.where.start:hit.where.end] == "re\u00adlay ke\u0301y"
    assert find_passages(v, "nothing like this") == [] and find_passages(v, "   ") == []
    assert find_passages(views, "the old key", doc_id="guide.md") == []


def test_candidate_sentences_are_the_specification_regex_inside_the_paragraph():
    doc = corpus().get("ops/keys.md")
    at = doc.text.index("shredded")
    got = candidate_sentences(doc, at, at + 8)
    assert [s.text for s in got] == ["The old key stays readable for seventy-two hours.",
                                     "After seventy-two hours the old key is shredded."]
    assert doc.text[got[1].start:got[1].end] == got[1].text


def test_picked_needle_trims_characters_of_its_view_and_maps_back():
    doc = markdown_document("x.md", "# X\n\nThe relay   keeps\nits journal.\n")
    a = doc.text.index("The")
    b = doc.text.index(".") + 1
    assert picked_needle(doc, a, b) == (a, b, "The relay keeps its journal.")
    s, e, text = picked_needle(doc, a, b, drop_start=4, drop_end=1)  # "relay keeps its journal"
    assert text == "relay keeps its journal" and doc.text[s:e] == "relay   keeps\nits journal"
    # dropping up to a space strips it: "The " dropped as 3 characters leaves " relay…" -> "relay…"
    assert picked_needle(doc, a, b, drop_start=3)[2] == "relay keeps its journal."
    assert picked_needle(doc, a, b, drop_start=20, drop_end=20) is None


# --------------------------------------------------------------------------- the draft needle


def test_a_needle_across_the_blind_cut_is_destroyed_by_a_held_by_overlap_whole_by_boundaries(views):
    c = views.corpus
    check = check_needle(NEEDLE.replace(" ", "\n", 1), views, strategies(c))  # typed with a line break: same view
    assert check.accepted and check.needle == NEEDLE and check.length == len(NEEDLE) == 60
    (occ,) = check.occurrences
    assert (occ.doc_id, occ.start, occ.end, occ.section) == ("guide.md", 490, 550, "Part")
    assert check.heading is False
    verdict = {v.strategy: v for v in check.strategies}
    # A: blind pieces [0, 512) and [512, 1024): the gap is at 512, inside [490, 550)
    assert verdict["A"].verdict == DESTROYED and verdict["A"].chunk_ids == ()
    assert verdict["A"].cut.startswith("cut at character 512: chunk 0 ends at 512 (#char=0,512), chunk 1 starts at "
                                       "512 (#char=512,")
    # B: chunk 1's tail is the last 64 characters of chunk 0, [448, 512), which holds the needle's start at 490
    assert verdict["B"].verdict == TAIL_ONLY and verdict["B"].chunk_ids == (1,)
    # C: chunk 0 is the preamble "# Guide" (the preamble fix); the 470-character paragraph and the needle's
    # paragraph together exceed 512, so they are chunks 1 and 2, the needle whole in 2
    assert verdict["C"].verdict == WHOLE and verdict["C"].chunk_ids == (2,)


def test_rejections_name_every_place_and_the_heading(views):
    twice = check_needle("seventy-two hours", views)
    assert not twice.accepted and twice.reason.startswith("found 2 times (must occur exactly once)")
    assert [o.doc_id for o in twice.occurrences] == ["ops/keys.md", "ops/keys.md"]
    assert twice.heading is None and twice.strategies == ()
    heading = check_needle("Rotation", views, strategies(views.corpus))
    assert heading.reason == "overlaps a heading line in ops/keys.md: '## Rotation'" and heading.heading is True
    assert heading.strategies == ()  # verdicts only for an accepted needle
    missing = check_needle("not in this corpus", views)
    assert missing.reason == "not found in the corpus" and missing.occurrences == ()


def test_question_overlap_counts_distinct_bm25_tokens():
    # question tokens {when, does, the, retry, budget, reset}; the needle has the, retry, budget: 3 of 6, not most
    needle = "The retry budget resets after exactly forty seconds of complete silence."
    assert question_overlap("When does the retry budget reset?", needle) == (3, 6)
    assert not quotes_needle(3, 6)
    # {after, how, many, seconds, of, complete, silence, does, the, retry, budget, reset}: all but how, many, does
    # and reset ("resets" is another token) are the needle's: 8 of 12, more than half
    assert question_overlap("After how many seconds of complete silence does the retry budget reset?", needle) == (8, 12)
    assert quotes_needle(8, 12) and not quotes_needle(0, 0) and quotes_needle(1, 1) and not quotes_needle(2, 4)


def test_question_distance_is_the_dense_distance_to_the_nearest_chunk_holding_the_needle(views):
    c = views.corpus
    chunks = chunk_corpus(c, PRESETS["C"])
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(len(chunks), 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    s = StrategyChunks("C", "", chunks, None, vecs)
    check = check_needle(NEEDLE, views, [s])
    q = vecs[0] + 0.1 * vecs[1]
    q = (q / np.linalg.norm(q)).astype(np.float32)
    qc = check_question("How often do keys rotate?", check, q, [s])
    held = check.strategies[0].chunk_ids
    expected = float(np.clip(1.0 - vecs[held[0]].astype(np.float64) @ q.astype(np.float64), 0, 2))
    rank = 1 + int((np.clip(1.0 - (vecs @ q).astype(np.float64), 0, 2) < expected).sum())
    assert qc.distances["C"][0] == pytest.approx(expected, abs=1e-6) and qc.distances["C"][1] == rank
    assert check_question("x", check, None, [s]).distances == {"C": None}


def test_out_of_domain_question_found_in_the_corpus_is_flagged(views):
    assert ood_key("What is the capital of France?!") == "What is the capital of France"
    (hit,) = ood_occurrences("What is the capital of France?", views)
    text = corpus().get("guide.md").text
    assert hit.doc_id == "guide.md" and text[hit.start:hit.end] == "what is the capital of France"
    assert ood_occurrences("What is the capital of Spain?", views) == []
    assert ood_occurrences("???", views) == []


# --------------------------------------------------------------------------- question/answer pairs


def _qa(tmp_path: Path, rows: list[str], name: str = "qa.csv") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return p


def test_whitespace_only_difference_is_a_proposal_and_an_absent_answer_is_not_found(tmp_path, views):
    # the case: one answer differs from the document only in whitespace, one is not in the corpus
    p = _qa(tmp_path, ["id,question,answer,question2",
                       'k1,How long does the old key stay readable?,"The old key  stays\nreadable for seventy-two '
                       'hours.",my old key stopped working',
                       "k2,What colour is the sky?,The sky is blue on a clear day.,"])
    pairs = read_qa(p)
    assert [(x.line, x.id, x.questions) for x in pairs] == [
        (2, "k1", ("How long does the old key stay readable?", "my old key stopped working")),
        (4, "k2", ("What colour is the sky?",))]  # the quoted answer spans lines 2-3: the next record is line 4
    got = locate_pairs(pairs, views)
    assert [x.method for x in got] == [VIEW, NOT_FOUND]
    keys = corpus().get("ops/keys.md").text
    w = got[0].where
    assert got[0].needle == "The old key stays readable for seventy-two hours." and got[0].problem is None
    assert (w.doc_id, keys[w.start:w.end]) == ("ops/keys.md", "The old key stays readable for seventy-two hours.")
    assert got[1].needle is None and got[1].score < 90
    rec = candidate_record(got[1])
    assert rec["located"] == "not found" and rec["proposed_needle"] is None and "needle" not in rec


def test_exact_then_fuzzy_with_the_rapidfuzz_score(tmp_path, views):
    from rapidfuzz import fuzz

    typo = "A lost key can not be recovered."  # the document says "cannot"
    p = _qa(tmp_path, ['{"question": "Can a lost key be recovered?", "answer": "A lost key cannot be recovered."}',
                       json.dumps({"id": 7, "question": "lost key?", "answer": typo}),
                       json.dumps({"question": "blank?", "answer": ""})], name="qa.jsonl")
    got = locate_pairs(read_qa(p), views)
    assert [x.method for x in got] == [EXACT, FUZZY, "no answer given"]
    assert got[1].pair.id == "7" and got[1].needle == "A lost key cannot be recovered."
    from audit.matching import view

    expected = fuzz.partial_ratio(typo, view(corpus().get("ops/keys.md").text))  # the rule: against the document's view
    assert got[1].score == pytest.approx(round(expected, 6)) and got[1].score >= 90
    assert got[0].score == 100.0 and got[0].where.start == corpus().get("ops/keys.md").text.index("A lost key")


def test_a_located_answer_keeps_its_problem_and_a_repeated_id_is_named(tmp_path, views):
    p = _qa(tmp_path, ["id,question,answer", "a,q1,seventy-two hours", "a,q2,Rotation"])
    got = locate_pairs(read_qa(p), views)
    assert got[0].method == EXACT and got[0].problem.startswith("found 2 times")
    assert got[1].problem.startswith("duplicate id (first on line 2); overlaps a heading line")


@pytest.mark.parametrize("rows,name,message", [
    (["q,a", "1,2"], "x.csv", "x.csv:1: no 'question' and no 'answer' column; the header has 'q', 'a'"),
    (["question,answer", ",alone"], "x.csv", "x.csv:2: empty question"),
    (['{"question": "q", "answer": "a"}', "{oops"], "x.jsonl", "x.jsonl:2: not valid JSON"),
    (['{"question": "q"}'], "x.jsonl", "x.jsonl:1: needs 'question' and 'answer'"),
    (['{"question": ["q"], "answer": "a"}'], "x.jsonl", "x.jsonl:1: 'question' must be a string"),
])
def test_malformed_pairs_are_one_error_naming_file_and_line(tmp_path, rows, name, message):
    p = _qa(tmp_path, rows, name)
    with pytest.raises(GroundTruthError) as e:
        read_qa(p, name)
    assert str(e.value).startswith(message)


# --------------------------------------------------------------------------- the draft: ids, opening, saving


def _gt(tmp_path: Path) -> Path:
    p = tmp_path / "gt.jsonl"
    p.write_text("".join(json.dumps({"id": f"n0{i}", "needle": f"needle {i}", "questions": [f"q{i}", f"t{i}"],
                                     AUTHORED: {"by": "ann", "at": "2026-01-01T00:00:00Z"}}) + "\n"
                         for i in (1, 2, 3)), encoding="utf-8")
    return p


def test_next_id_follows_the_file_and_never_reuses_a_removed_one():
    d = Draft()
    assert d.next_id() == "n01"
    d.add("a", ["q"])
    d.add("b", ["q"], "faq9")
    assert [n.id for n in d.needles] == ["n01", "faq9"]
    assert d.next_id() in ("n02", "faq10")  # a tie between prefixes: the first seen
    d.add("c", ["q"], "n07")
    assert d.next_id() == "n08"  # the commonest prefix (n), after its highest number, with its padding
    d.remove("n07")
    assert d.next_id() == "n08"  # n07 was removed in this edit: never given again
    with pytest.raises(ValueError, match="already in the ground truth"):
        d.add("d", ["q"], "n01")
    with pytest.raises(ValueError, match="at most two questions"):
        d.add("d", ["a", "b", "c"])


def test_edits_keep_ids_stable_and_stamp_only_what_changed(tmp_path):
    p = _gt(tmp_path)
    d = open_draft(p)
    d.replace("n02", "needle two, trimmed", ["q2 new", "t2"])
    d.remove("n01")
    nid = d.add("needle four", ["q4"])
    assert nid == "n04"
    target = Target("home:gt", "gt", p, None)
    save_draft(d, target, "bob@example.com", "2026-02-02T10:00:00Z")
    back = load_needles(p)  # the reader ignores "authored"
    assert [(n.id, n.needle, n.questions) for n in back] == [
        ("n02", "needle two, trimmed", ("q2 new", "t2")), ("n03", "needle 3", ("q3", "t3")), ("n04", "needle four", ("q4",))]
    stamps = [json.loads(line)[AUTHORED] for line in p.read_text(encoding="utf-8").splitlines()]
    assert stamps == [{"by": "bob@example.com", "at": "2026-02-02T10:00:00Z"},
                      {"by": "ann", "at": "2026-01-01T00:00:00Z"},
                      {"by": "bob@example.com", "at": "2026-02-02T10:00:00Z"}]
    assert d.changed == set() and d.opened.gt_path == p
    again = open_draft(p)
    assert [n.id for n in again.needles] == ["n02", "n03", "n04"] and again.needles[1].authored["by"] == "ann"


def test_any_edit_is_unsaved_until_saved_out_of_domain_and_removals_included(tmp_path):
    # the Ground truth page keeps a draft across a sidebar switch only while it holds unsaved work: a removal or an
    # out-of-domain question is such work though neither is in ``changed`` (which lists the needles to stamp)
    p = _gt(tmp_path)
    assert not open_draft(p).unsaved
    for edit in (lambda d: d.remove("n01"), lambda d: d.add_ood("Who won the cup?"),
                 lambda d: d.add("needle four", ["q4"]), lambda d: d.replace("n02", "needle two", ["q2"])):
        d = open_draft(p)
        edit(d)
        assert d.unsaved
    d = open_draft(p)
    d.add_ood("Who won the cup?")
    d.remove_ood("Who won the cup?")
    assert d.unsaved  # back to the file's content, but edited: the page still asks before dropping it
    save_draft(d, Target("home:gt", "gt", p, None), "bob", "2026-02-02T10:00:00Z")
    assert not d.unsaved


def test_saving_refuses_a_file_changed_since_it_was_opened_and_writes_nothing(tmp_path):
    p = _gt(tmp_path)
    mine, theirs = open_draft(p), open_draft(p)
    theirs.add("their needle", ["q"])
    save_draft(theirs, Target("home:gt", "gt", p, None), "ann", "2026-03-01T00:00:00Z")
    after_theirs = p.read_bytes()
    mine.add("my needle", ["q"])
    with pytest.raises(SaveRefused, match="gt.jsonl changed since you opened it"):
        save_draft(mine, Target("home:gt", "gt", p, None), "bob", "2026-03-01T00:01:00Z")
    assert p.read_bytes() == after_theirs and "n04" in mine.changed  # nothing written, the draft kept
    fresh = Draft()
    fresh.add("x", ["q"])
    with pytest.raises(SaveRefused, match="already exists and was not opened here"):
        save_draft(fresh, Target("home:gt", "gt", p, None), "bob", "2026-03-01T00:02:00Z")


def test_out_of_domain_file_round_trip_and_refusals(tmp_path):
    d = Draft()
    assert d.add_ood("  what is the   capital\nof France? ") == "what is the capital of France?"
    with pytest.raises(ValueError, match="already in the out-of-domain"):
        d.add_ood("what is the capital of France?")
    with pytest.raises(ValueError, match="reads such a line as a comment"):
        d.add_ood("#hashtag question")
    d.add("n", ["q"])
    target = home_target("team", tmp_path)
    save_draft(d, target, None, "2026-03-01T00:00:00Z")
    assert target.gt_path == tmp_path / "groundtruth" / "team.jsonl"
    assert load_out_of_domain(target.ood_path) == ["what is the capital of France?"]
    assert target.ood_path.read_text(encoding="utf-8").startswith("# out-of-domain questions, written by unnamed")
    assert [t.key for t in home_targets(tmp_path)] == ["home:team"]
    with pytest.raises(ValueError, match="use 1-80 letters"):
        home_target("../escape", tmp_path)


def test_shipped_files_and_unwritable_names_are_refused(tmp_path):
    cfg = Config(ground_truths={"builtin": str(SHIPPED_DATA / "python-reference" / "groundtruth.jsonl"),
                                "team": str(tmp_path / "team.jsonl"), "open": str(tmp_path / "open.jsonl")},
                 writable_ground_truths=("builtin", "open"))
    by = {t.key: t for t in named_targets(cfg)}
    assert "shipped with retrieval-audit" in by["named:builtin"].refused  # writable or not: never over data/
    assert "writable = true" in by["named:team"].refused
    assert by["named:open"].writable
    d = Draft()
    d.add("n", ["q"])
    before = (SHIPPED_DATA / "python-reference" / "groundtruth.jsonl").read_bytes()
    with pytest.raises(SaveRefused, match="never written over"):
        save_draft(d, Target("home:x", "x", SHIPPED_DATA / "python-reference" / "groundtruth.jsonl", None), "a", "t")
    assert (SHIPPED_DATA / "python-reference" / "groundtruth.jsonl").read_bytes() == before


def test_audit_toml_writable_ground_truth_table(tmp_path):
    toml = tmp_path / "audit.toml"
    toml.write_text('[ground_truths]\nplain = "p.jsonl"\n[ground_truths.team]\npath = "t.jsonl"\n'
                    'out_of_domain = "t.ood.txt"\nwritable = true\n', encoding="utf-8")
    cfg = load_config(env={"AUDIT_CONFIG": str(toml)})
    assert cfg.ground_truths == {"plain": str(tmp_path / "p.jsonl"), "team": str(tmp_path / "t.jsonl")}
    assert cfg.out_of_domain == {"team": str(tmp_path / "t.ood.txt")} and cfg.writable_ground_truths == ("team",)
    for body, message in [('[ground_truths.team]\npath = "t.jsonl"\nwriteable = true\n', r"unknown key\(s\) writeable"),
                          ('[ground_truths.team]\npath = "t.jsonl"\nwritable = "yes"\n', "writable must be true or false"),
                          ('[ground_truths.team]\nwritable = true\n', "path must be a path"),
                          ('[out_of_domain]\nteam = "a.txt"\n[ground_truths.team]\npath = "t.jsonl"\n'
                           'out_of_domain = "b.txt"\n', "name different files")]:
        toml.write_text(body, encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            load_config(env={"AUDIT_CONFIG": str(toml)})


# --------------------------------------------------------------------------- the CLI


def _cli(*args) -> tuple[int, str, str]:
    import contextlib
    import io

    from audit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_cli_check_lists_every_problem_with_its_line(tmp_path):
    docs = ROOT / "data" / "example" / "docs"
    gt = tmp_path / "gt.jsonl"
    ok = {"id": "n01", "needle": "A lost key cannot be recovered.", "questions": ["Can a lost key be recovered?"]}
    gt.write_text(json.dumps(ok) + "\n" + json.dumps({"id": "n02", "needle": "seventy-two hours", "questions": ["q"]})
                  + "\n\n" + json.dumps({"id": "n03", "needle": "Rotation", "questions": ["q"]}) + "\n", encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text("# comment\n\nLost keys?\nWhat is the capital of France?\n", encoding="utf-8")
    code, out, _ = _cli("groundtruth", "check", str(gt), "--corpus", str(docs), "--out-of-domain", str(ood),
                        "--strategies", "A,E")
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == f"{gt}:1: warning: n01: the documentation question shares 5 of its 6 words with the needle (a " \
                       "question that quotes its answer measures BM25, not understanding)"
    assert lines[1] == f"{gt}:2: rejected n02: found 2 times (must occur exactly once): ops/keys.md"
    assert lines[2] == f"{gt}:4: rejected n03: overlaps a heading line in ops/keys.md: '## Rotation'"
    assert lines[3].startswith(f"{ood}:3: warning: ood-1 occurs in the corpus (ops/keys.md #char=")
    assert lines[-1].startswith("3 needles: 1 accepted, 2 rejected; 2 warnings; 2 out-of-domain questions, 1 found")
    gt.write_text(json.dumps(ok) + "\n", encoding="utf-8")
    assert _cli("groundtruth", "check", str(gt), "--corpus", str(docs))[0] == 0
    gt.write_text(json.dumps(ok) + "\n{broken\n", encoding="utf-8")
    code, out, err = _cli("groundtruth", "check", str(gt), "--corpus", str(docs))
    assert code == 2 and err.startswith(f"error: {gt}:2: not valid JSON") and err.count("\n") == 1


def test_cli_locate_writes_proposals_that_are_not_a_ground_truth(tmp_path):
    docs = ROOT / "data" / "example" / "docs"
    qa = _qa(tmp_path, ["question,answer", 'How long is a message kept?,"Undelivered messages are kept for  seven '
                                           'days,\nthen moved to the dead-letter shelf"',
                        "Sky colour?,The sky is blue on a clear day."])
    out = tmp_path / "candidates.jsonl"
    code, printed, _ = _cli("groundtruth", "locate", str(qa), "--corpus", str(docs), "--out", str(out))
    assert code == 0
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], r["located"]) for r in recs] == [(2, "matching view"), (4, "not found")]
    assert recs[0]["proposed_needle"] == "Undelivered messages are kept for seven days, then moved to the dead-letter shelf"
    assert recs[0]["doc_id"] == "limits.md"
    assert f"{qa}:4: not found" in printed
    assert [p.question for p in read_qa(out)] == ["How long is a message kept?", "Sky colour?"]  # reads back as pairs
    code, _, err = _cli("groundtruth", "check", str(out), "--corpus", str(docs))
    assert code == 2 and err.startswith(f"error: {out}:1: ")  # never a ground truth until a person accepts
    rec = recs[0] | {"id": "n01"}
    out.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    code, _, err = _cli("groundtruth", "check", str(out), "--corpus", str(docs))
    assert code == 2 and "'needle' must be a string" in err  # even with an id: the proposal is not a needle
    assert _cli("groundtruth", "locate", str(qa), "--corpus", str(docs), "--out", str(out), "--min-score", "101")[0] == 2


def test_question_overlap_reads_the_audits_language_under_its_rule():
    # issue 57: the Ground truth page counts shared words under the audit's rule in the audit's language.
    # Snowball's French stemmer: les → le, documents → docu (découper → découp, découpage → découpag: not shared);
    # without the language nothing is stemmed and only "documents" is shared; +stop drops le/les/des/se/par.
    q, n = "Comment découper les documents ?", "Le découpage des documents se fait par section."
    assert question_overlap(q, n, "snowball") == (1, 4)
    assert question_overlap(q, n, "snowball", "fr") == (2, 4)
    assert question_overlap(q, n, "snowball+stop", "fr") == (1, 3)
