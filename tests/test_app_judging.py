"""AppTest of the Judging page on data/example ("Your system (files)"): two reviewers in two sessions label an
overlapping pool one item at a time; the agreement table equals the hand computation of tests/test_cli_judge.py;
the disagreement is adjudicated, a new version saved, and the page says what it does to every run."""

from __future__ import annotations

import json
import re

import pytest

from conftest import environment, open_app, shown
from test_cli_judge import ANA, BEN
from test_app_system import ENV, EX

pytestmark = pytest.mark.slow


@pytest.fixture()
def env(tmp_path):
    yield from environment({**ENV, "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none",
                            "AUDIT_HOME": str(tmp_path / "home"), "AUDIT_HISTORY": "off"})


def _session(who: str):
    at = open_app("app_pages/12_Judging.py")
    at.text_input(key="judge_who").input(who).run()
    at.number_input(key="judge_depth").set_value(1).run()
    at.text_input(key="judge_reviewers").input("ana,ben").run()
    at.slider(key="judge_overlap").set_value(1.0).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _current(at) -> tuple[str, str] | None:
    q = next((s.value for s in at.subheader if s.value.startswith("Question ")), None)
    if q is None:
        return None
    chunk = next(m for m in (shown(x) for x in at.markdown) if m.startswith("Chunk "))
    return q.split()[1], re.match(r"Chunk (\S+)", chunk).group(1)


def _label_all(at, grades) -> int:
    n = 0
    while (item := _current(at)) is not None:
        at.radio(key="judge_grade").set_value(grades[item])
        at.button(key="judge_save").click().run()
        assert not at.exception, [e.value for e in at.exception]
        n += 1
        assert n <= len(grades)
    return n


def test_two_reviewers_two_sessions_agreement_adjudication_version(env):
    ana, ben = _session("ana"), _session("ben")
    # the item shown is text at its locator, and the progress says how far the reviewer is
    assert _current(ana) in ANA and any("#char=" in shown(m) for m in ana.markdown)
    assert "0 of 6 items labelled by ana" in ana.get("progress")[0].proto.text
    assert _label_all(ana, ANA) == 6
    assert "6 of 6 items labelled by ana" in ana.get("progress")[0].proto.text
    assert _label_all(ben, BEN) == 6
    ben.run()
    ag = next(d.value for d in ben.dataframe if "statistic" in d.value.columns)
    kappa = ag[ag["statistic"] == "κ"].iloc[0]
    assert kappa["value"] == pytest.approx(0.75) and kappa["items"] == 6  # the hand computation of the CLI test
    dis = next(d.value for d in ben.dataframe if "grades" in d.value.columns)
    assert dis[["query_id", "chunk_id", "grades"]].values.tolist() == [["q7", "k3", "ana 1, ben 3"]]
    ben.selectbox(key="judge_adj_item").set_value("pool · q7 · k3")
    ben.number_input(key="judge_adj_grade").set_value(2)
    ben.button(key="judge_adjudicate").click().run()
    ben.button(key="judge_save_version").click().run()
    assert not ben.exception, [e.value for e in ben.exception]
    vs = next(d.value for d in ben.dataframe if "digest" in d.value.columns)
    assert vs["added"].tolist() == [6] and vs["who"].tolist() == ["ben"]
    ben.selectbox(key="judge_measure").set_value("Success@1").run()
    lines = [shown(m) for m in ben.markdown]
    assert any("Success@1 of before 0.333 → 0.556 because 2 holes were judged relevant" in x for x in lines)
    assert any("Success@1 of after 0.778 → 0.889 because 1 hole was judged relevant" in x for x in lines)


def test_the_new_version_moves_strategies_and_hole_at_10_as_counted_by_hand(env):
    from audit.judging.labels import Judgments
    from audit.judging.store import JudgmentsStore

    # the labels the first test settles (ana and ben agree but on q7/k3, adjudicated 2), saved as one version
    with JudgmentsStore() as st:
        st.save(Judgments.of([("", q, c, g) for (q, c), g in {**ANA, ("q7", "k3"): 2}.items()]), "qa-lead")
    at = open_app("app_pages/2_Strategies.py")
    before_rows = next(d.value for d in at.dataframe if "Hole@10" in d.value.columns).set_index("run")
    at.switch_page("app_pages/12_Judging.py").run()
    at.toggle(key="judge_use_version").set_value(True).run()
    at.switch_page("app_pages/2_Strategies.py").run()
    assert not at.exception, [e.value for e in at.exception]
    rows = next(d.value for d in at.dataframe if "Hole@10" in d.value.columns).set_index("run")
    # Success@1 of before 3/9 → 5/9 and after 7/9 → 8/9 (tests/test_cli_judge.py, by hand)
    point = {r: float(rows.loc[r, "Success@1 (recall@1) [Wilson 95%]"].split()[0]) for r in ("before", "after")}
    assert point == {"before": round(5 / 9, 3), "after": round(8 / 9, 3)}
    # Hole@10 by hand: each run returns 5 chunks per question, so each newly judged chunk in a run's list takes a
    # fifth off its question's hole share: the mean falls by (newly judged chunks in the run's lists) / 5 / 9.
    # Counted from the run files: each run's lists hold all six labelled pairs (q7 holds k2 and k3) → 6/45 = 2/15
    for run in ("before", "after"):
        pairs = {(f[0], f[2]) for f in (x.split() for x in (EX / f"{run}.trec").read_text().splitlines())}
        n = len(pairs & set(ANA))
        assert n == 6
        assert float(rows.loc[run, "Hole@10"]) == pytest.approx(
            float(before_rows.loc[run, "Hole@10"]) - n / 5 / 9, abs=1e-3), run
    assert any("judgments version v1" in shown(c) for c in at.main.caption)


def test_the_bluffs_queue_asks_answerable_or_not_in_the_corpus(env):
    from audit.evaluation.saved_cut import save_cut
    from audit.ingest import load_corpus
    from audit.sources.imported.system import load_system

    s = load_system(EX / "queries.tsv", {"before": EX / "before.trec"}, {"before": "cosine-distance"},
                    EX / "qrels.trec", None, EX / "chunks.jsonl", load_corpus(str(EX / "docs")), EX / "ood-queries.tsv",
                    {"before": EX / "ood-before.trec"})
    save_cut(0.55, dict(s.run("before").cut_key), "before")  # the run the sidebar's files name "before"
    at = open_app("app_pages/12_Judging.py")
    at.text_input(key="judge_who").input("ana").run()
    at.radio(key="judge_queue").set_value("bluffs").run()
    assert not at.exception, [e.value for e in at.exception]
    # o3's first chunk l1 is at 0.41, under the saved 0.55: an out-of-domain question answered (a bluff)
    assert _current(at) == ("o3", "l1")
    radio = at.radio(key="judge_grade")
    assert radio.label == "Can the corpus answer this?" and radio.options == ["answerable", "not in the corpus"]
    radio.set_value(0)
    at.button(key="judge_save").click().run()
    assert _current(at) == ("o4", "b2")


def test_the_ground_truth_pages_proposals_are_a_queue_whose_accepted_answers_become_needles(env, tmp_path):
    # the Ground truth page's import holds its located pairs in the session; the Judging page asks each one
    from audit.authoring.checks import CorpusViews
    from audit.authoring.locate import locate_pairs, read_qa
    from audit.ingest import load_corpus

    corpus = load_corpus(str(EX / "docs"))
    text = corpus.get("limits.md").text
    sentence = next(s.strip() + "." for s in text.split(".") if len(s.strip()) > 30 and "#" not in s)
    qa = tmp_path / "faq.jsonl"
    qa.write_text(json.dumps({"id": "f1", "question": "what are the limits?", "answer": sentence}) + "\n"
                  + json.dumps({"id": "f2", "question": "sky?", "answer": "The sky is a pale shade of green today."})
                  + "\n", encoding="utf-8")
    located = locate_pairs(read_qa(qa), CorpusViews(corpus))
    at = open_app("app_pages/12_Judging.py")
    at.session_state["gt_located"] = ("faq", located, None)
    at.text_input(key="judge_who").input("ana").run()
    at.radio(key="judge_queue").set_value("proposals").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "0 of 1 item labelled by ana" in at.get("progress")[0].proto.text  # f2 is not in the corpus: not asked
    assert [s.value for s in at.subheader if s.value.startswith("Question ")] == ["Question f1"]
    start = text.index(sentence)
    assert any(f"Passage at limits.md#char={start},{start + len(sentence)}" in shown(m) for m in at.markdown)
    at.radio(key="judge_grade").set_value(1)
    at.button(key="judge_save").click().run()
    at.button(key="judge_to_draft").click().run()
    assert not at.exception, [e.value for e in at.exception]
    draft = at.session_state["_gt_draft"]
    assert [(n.needle, n.questions) for n in draft.needles] == [(sentence, ("what are the limits?",))]


def test_issue54_item4_an_empty_pool_with_needles_says_why_and_opens_the_other_queues(tmp_path):
    """The built-in pipelines judge by needles, so every chunk is judged and the pool is empty: the page says so in
    one sentence and its buttons open the other queues."""
    for _ in environment({"AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"),
                          "AUDIT_HISTORY": "off", "AUDIT_SOURCE": "builtin"}):
        at = open_app("app_pages/12_Judging.py")
        at.text_input(key="judge_who").input("ana").run()
        assert not at.exception, [e.value for e in at.exception]
        said = [shown(i) for i in at.info if "pool is empty because the ground truth is needles" in shown(i)]
        assert len(said) == 1 and "bluffs at the saved cut" in said[0] and "Q/A proposals" in said[0]
        at.button(key="judge_go_bluffs").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.radio(key="judge_queue").value == "bluffs"


def test_the_traffic_queue_without_traffic_says_none_is_loaded_and_where_to_add_it(tmp_path):
    """A newcomer's report: with no traffic loaded, the traffic queue said "every chunk of every run's first k is
    judged" (the pool's sentence)."""
    for _ in environment({"AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"),
                          "AUDIT_HISTORY": "off", "AUDIT_SOURCE": "builtin"}):
        at = open_app("app_pages/12_Judging.py")
        at.text_input(key="judge_who").input("ana").run()
        at.radio(key="judge_queue").set_value("traffic").run()
        assert not at.exception, [e.value for e in at.exception]
        said = [shown(i) for i in at.info] + [shown(s) for s in at.success]
        assert any("No production traffic is loaded" in s and "sidebar's Traffic" in s for s in said), said
        assert not any("first k is judged" in s for s in said)


def test_an_empty_queue_draws_no_progress_and_controls_apply_only_where_they_are_read(tmp_path):
    """A newcomer's report: an empty queue showed a full progress bar for "0 of 0 items labelled", and the pool's
    depth and the overlap stayed offered where nothing reads them."""
    for _ in environment({"AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"),
                          "AUDIT_HISTORY": "off", "AUDIT_SOURCE": "builtin"}):
        at = open_app("app_pages/12_Judging.py")
        at.text_input(key="judge_who").input("ana").run()
        assert not at.exception, [e.value for e in at.exception]
        assert not at.get("progress")  # the needles' pool is empty: no bar
        assert not at.number_input(key="judge_depth").disabled  # the pool reads its depth
        assert at.slider(key="judge_overlap").disabled  # one reviewer: no overlap to give
        at.text_input(key="judge_reviewers").input("ana,ben").run()
        assert not at.slider(key="judge_overlap").disabled
        at.radio(key="judge_queue").set_value("traffic").run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.number_input(key="judge_depth").disabled and not at.get("progress")
