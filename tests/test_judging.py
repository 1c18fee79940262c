"""The judging queue's store, versions, pool and assignment, on the example system (data/example) and by hand."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from conftest import ROOT

from audit.evaluation.judgments import Qrels
from audit.evaluation.measures import evaluate
from audit.judging.labels import Judgments, diff, judgments_of_runset, judgments_version
from audit.judging.queues import assign, pool
from audit.judging.store import JudgmentsError, JudgmentsStore, ReviewerLabel
from audit.judging.versions import settled, version_effect, with_judgments

EX = ROOT / "data" / "example"


@pytest.fixture(scope="module")
def example():
    from audit.ingest import load_corpus
    from audit.sources.imported.system import load_system

    return load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                       {"before": "cosine-distance"}, EX / "qrels.trec", None, EX / "chunks.jsonl",
                       load_corpus(str(EX / "docs")), EX / "ood-queries.tsv",
                       {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})


def test_digest_is_the_content_not_the_order():
    a = Judgments.of([("", "q1", "c1", 1), ("", "q1", "c2", 0)])
    b = Judgments.of([("", "q1", "c2", 0), ("", "q1", "c1", 1)])
    assert a.digest == b.digest and len(a.digest) == 16
    assert Judgments.of([("", "q1", "c1", 2), ("", "q1", "c2", 0)]).digest != a.digest  # a grade changes it
    assert Judgments.of([("", "q1", "c1", 1), ("", "q1", "c2", 0)], [("", "q2")]).digest != a.digest  # a query too
    with pytest.raises(ValueError, match="must be an integer"):
        Judgments.of([("", "q1", "c1", "2")])


def test_diff_counts_added_changed_removed():
    old = Judgments.of([("", "q1", "a", 1), ("", "q1", "b", 0), ("", "q2", "c", 2)])
    new = Judgments.of([("", "q1", "a", 1), ("", "q1", "b", 2), ("", "q2", "d", 1)])
    d = diff(old, new)
    # b 0 → 2 changed, c removed, d added; a the same
    assert (d.added, d.changed, d.removed) == (1, 1, 1) and d.summary() == "1 added, 1 changed, 1 removed"
    assert [(c.chunk_id, c.kind) for c in d.changes] == [("b", "changed"), ("c", "removed"), ("d", "added")]
    assert [c.now_relevant for c in d.changes] == [True, False, True]
    assert d.to_frame()["before"].tolist()[:2] == [0, 2]


def test_versions_chain_with_parent_who_and_counts(tmp_path):
    with JudgmentsStore(tmp_path / "h.sqlite") as st:
        v1 = st.save(Judgments.of([("", "q1", "a", 1), ("", "q1", "b", 0)]), "import")
        v2 = st.save(Judgments.of([("", "q1", "b", 2), ("", "q1", "c", 0)]), "ana")
        v3 = st.save(Judgments(), "ben")  # a save that changes nothing is still a version, its counts say so
        assert (v1.parent, v2.parent, v3.parent) == (None, v1.id, v2.id)
        assert (v2.who, v2.added, v2.changed, v2.removed, v2.n_labels) == ("ana", 1, 1, 0, 3)
        assert (v3.added, v3.changed, v3.removed) == (0, 0, 0) and v3.digest == v2.digest
        assert st.judgments("head").grade("", "q1", "b") == 2
        assert st.judgments(v1.id).grade("", "q1", "b") == 0
        # a digest names the content: v2 and v3 hold the same labels, the digest gives the latest of them
        assert st.version(v2.digest).id == st.version(v2.digest[:6]).id == v3.id
        assert st.version(f"v{v1.id}").digest == v1.digest
        d = diff(st.judgments(1), st.judgments(2))
        assert d.summary() == "1 added, 1 changed, 0 removed"
        with pytest.raises(JudgmentsError, match="no judgments version 'v9'"):
            st.version("v9")
        with pytest.raises(JudgmentsError, match="needs who saved it"):
            st.save(Judgments(), " ")
    # beside the history, in the audit's own tables; nothing else in the file
    names = {r[0] for r in sqlite3.connect(tmp_path / "h.sqlite").execute("SELECT name FROM sqlite_master")}
    assert {"audit_judgments_versions", "audit_judgments_labels", "audit_judgments_adjudications"} <= names


def test_two_reviewers_saving_at_once_make_two_versions_in_a_line(tmp_path):
    path = tmp_path / "h.sqlite"
    JudgmentsStore(path).close()
    errors = []

    def save(who, chunk):
        try:
            with JudgmentsStore(path) as st:
                for i in range(5):
                    st.save(Judgments.of([("", "q1", f"{chunk}{i}", 1)]), who)
        except Exception as e:  # pragma: no cover - the assertion says what
            errors.append(e)

    ts = [threading.Thread(target=save, args=(w, w[0])) for w in ("ana", "ben")]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors
    with JudgmentsStore(path) as st:
        vs = st.versions()
        assert len(vs) == 10 and [v.parent for v in vs] == [None] + [v.id for v in vs[:-1]]  # one line, no fork
        assert len(st.judgments()) == 10  # no label lost to the other writer


def test_pool_is_the_union_of_top_k_minus_what_is_judged(example):
    items = pool(example, depth=2)
    # by hand from data/example: q1 before b3 b2 / after b2 b3 → both judged, nothing pooled;
    # q2 before k1 k3 / after k2 k3 → k1 (unjudged, rank 1 of before)
    by_q = {}
    for it in items:
        by_q.setdefault(it.query_id, []).append(it.chunk_id)
    assert "q1" not in by_q and by_q["q2"] == ["k1"]
    it = next(i for i in items if i.query_id == "q2")
    assert it.runs == ("before",) and it.best_rank == 1 and it.question
    # depth 10 holds every run's five chunks: 34 unjudged pairs (every pair once, whichever run ranked it)
    assert len(pool(example)) == 34 == len({i.key for i in pool(example)})
    with pytest.raises(ValueError, match="depth must be >= 1"):
        pool(example, 0)


def test_needle_judgments_pool_nothing():
    from audit.runset import Query, Run, RunSet, Source

    qr = Qrels({"q": {1: 1}}, complete=True)
    rs = RunSet(Source("builtin", "x"), (Query("q", "?", "documentation"),), {"A": qr},
                (Run.from_scores("A/dense", {"q": {1: 0.9, 2: 0.8}}, space="A"),))
    assert pool(rs) == []


def test_assign_gives_a_seeded_share_to_two_reviewers(example):
    items = pool(example)
    a = assign(items, ["ana", "ben"], overlap=0.25, seed=7)
    twice = [k for k, r in a.items() if len(r) == 2]
    assert len(twice) == round(0.25 * 34) == 8 and set(a) == {i.key for i in items}
    assert assign(items, ["ana", "ben"], overlap=0.25, seed=7) == a  # the seed decides, nothing else
    assert sum(1 for r in a.values() if r[0] == "ana") == 17  # in turn: half each
    with pytest.raises(ValueError, match="needs two reviewers"):
        assign(items, ["ana"], overlap=0.1)
    with pytest.raises(ValueError, match="distinct"):
        assign(items, ["ana", "ana"])


def test_settled_keeps_agreement_and_adjudication_lists_the_rest():
    lbs = [ReviewerLabel("pool", "ana", "", "q1", "a", 2), ReviewerLabel("pool", "ben", "", "q1", "a", 2),
           ReviewerLabel("pool", "ana", "", "q1", "b", 1), ReviewerLabel("pool", "ben", "", "q1", "b", 0),
           ReviewerLabel("pool", "ana", "", "q1", "c", 3), ReviewerLabel("pool", "ben", "", "q1", "c", 0),
           ReviewerLabel("traffic", "ana", "", "t1", "", 1)]
    js, dis = settled(lbs, {("pool", "", "q1", "c"): {"grade": 1, "who": "lead", "settles": {"ana": 3, "ben": 0}}})
    # a agreed (2); b open (no grade saved); c adjudicated (1); the traffic question is not a chunk judgment
    assert js.rows() == [("", "q1", "a", 2), ("", "q1", "c", 1)]
    assert [(d.item[2], d.grades, d.adjudicated) for d in dis] == [("b", {"ana": 1, "ben": 0}, None),
                                                                   ("c", {"ana": 3, "ben": 0}, 1)]


def test_adjudication_is_kept_beside_the_labels_it_settles(tmp_path):
    with JudgmentsStore(tmp_path / "h.sqlite") as st:
        st.add_label(ReviewerLabel("pool", "ana", "", "q1", "c", 3))
        st.add_label(ReviewerLabel("pool", "ben", "", "q1", "c", 0))
        st.add_label(ReviewerLabel("pool", "ben", "", "q1", "c", 1))  # ben changes his mind: one label each
        st.adjudicate("pool", ("", "q1", "c"), 2, "lead")
        assert [(lb.reviewer, lb.grade) for lb in st.labels("pool")] == [("ana", 3), ("ben", 1)]
        assert st.adjudications() == {("pool", "", "q1", "c"): {"grade": 2, "who": "lead",
                                                                "settles": {"ana": 3, "ben": 1}}}
        with pytest.raises(JudgmentsError, match="nothing to adjudicate"):
            st.adjudicate("pool", ("", "q9", "x"), 1, "lead")


def test_a_new_version_recomputes_every_run_and_says_why(example):
    old = judgments_of_runset(example)
    assert judgments_version(example) == old.digest
    # before ranks k1 first for q2, k2 first for q3, l2 first for q4: three holes at rank 1 (pool above).
    # Judging k1 and k2 relevant and l2 not relevant lifts before's Success@1 from 3/9 (README) to 5/9;
    # after puts b2/k3/l1 (already judged) first on those questions: its Success@1 stays 7/9.
    new = old.merged(Judgments.of([("", "q2", "k1", 1), ("", "q3", "k2", 2), ("", "q4", "l2", 0)]))
    ch = {c.run: c for c in version_effect(example, old, new, "Success@1")}
    assert ch["before"].before == pytest.approx(3 / 9) and ch["before"].after == pytest.approx(5 / 9)
    assert ch["before"].sentence() == ("Success@1 of before 0.333 → 0.556 because 2 holes were judged relevant "
                                       "and 1 hole was judged not relevant")
    assert ch["after"].before == ch["after"].after == pytest.approx(7 / 9)
    assert ch["after"].sentence().endswith("(no label of its top k changed)")
    # Hole@1 of before loses exactly those three questions' holes: 3/9 less
    a, b = (evaluate(with_judgments(example, j)) for j in (old, new))
    assert b[0].mean("Hole@1") == pytest.approx(a[0].mean("Hole@1") - 3 / 9)
    assert b[1].mean("Hole@1") == a[1].mean("Hole@1")
    assert with_judgments(example, new).judgments[""].judgments["q2"]["k1"] == 1


def test_bluffs_at_the_saved_cut_are_a_question_level_queue():
    from audit.evaluation.saved_cut import SavedCut
    from audit.ingest import load_corpus
    from audit.judging.queues import bluffs_queue, queue_items, traffic_queue
    from audit.sources.imported.system import load_system

    s = load_system(EX / "queries.tsv", {"before": EX / "before.trec"}, {"before": "cosine-distance"},
                    EX / "qrels.trec", None, EX / "chunks.jsonl", load_corpus(str(EX / "docs")), EX / "ood-queries.tsv",
                    {"before": EX / "ood-before.trec"})
    assert bluffs_queue(s, cuts=[]) == []  # no saved cut: no bluff is "at the saved cut"
    cut = SavedCut(0.55, dict(s.run("before").cut_key))
    items = bluffs_queue(s, cuts=[cut])
    # by hand from ood-before.trec: the first chunk of o1 0.58, o2 0.81, o3 0.41, o4 0.52 (cosine distance);
    # the gate keeps a chunk strictly under 0.55: o3 (l1) and o4 (b2) are answered though out of domain
    assert [(i.query_id, i.chunk_id, i.shown_chunk) for i in items] == [("o3", "", "l1"), ("o4", "", "b2")]
    assert all(i.queue == "bluffs" and i.question and "saved cut 0.55" in i.note for i in items)
    assert queue_items(s, "bluffs", cuts=[cut]) == items
    assert traffic_queue(s, cuts=[cut]) == []  # no traffic in this run set
    with pytest.raises(ValueError, match="unknown queue 'nope'"):
        queue_items(s, "nope")


def test_traffic_nearest_the_saved_cut_on_each_side():
    from audit.evaluation.saved_cut import SavedCut
    from audit.judging.queues import traffic_queue
    from audit.runset import Query, Run, RunSet, Source

    # six real questions, best cosine distances 0.10, 0.48, 0.51, 0.53, 0.70, 0.49; saved cut 0.50
    best = {"t1": 0.10, "t2": 0.48, "t3": 0.51, "t4": 0.53, "t5": 0.70, "t6": 0.49}
    run = Run.from_scores("r", {q: {f"c{q}": d} for q, d in best.items()}, "cosine-distance",
                          cut_key={"run_file": "r"})
    rs = RunSet(Source("files", "x"), tuple(Query(q, f"question {q}", "traffic") for q in best), {"": Qrels({})},
                (run,))
    items = traffic_queue(rs, n=2, cuts=[SavedCut(0.5, {"run_file": "r"})])
    # answered (under 0.50), nearest first: t6 (0.01 away), t2 (0.02); no answer: t3 (0.01), t4 (0.03)
    assert [(i.query_id, i.note.split(",")[0]) for i in items] == [("t6", "answered"), ("t2", "answered"),
                                                                  ("t3", "no answer"), ("t4", "no answer")]
    assert items[0].shown_chunk == "ct6" and items[0].chunk_id == ""
    with pytest.raises(ValueError, match=">= 1"):
        traffic_queue(rs, n=0)


def test_a_disagreement_on_a_built_in_strategys_item_is_adjudicated_in_its_own_space(tmp_path):
    """The Judging page's Adjudicate settled every item in space "" (a team's one space): a built-in pool item
    (space = the strategy, here E) stayed open, and a stray adjudication was kept for an item nobody labelled."""
    from audit.judging.versions import settled
    from audit.views.judging import adjudication_choices, disagreements_frame

    with JudgmentsStore(tmp_path / "h.sqlite") as st:
        st.add_label(ReviewerLabel("pool", "ana", "E", "q1", "c7", 1))
        st.add_label(ReviewerLabel("pool", "ben", "E", "q1", "c7", 3))
        st.add_label(ReviewerLabel("pool", "ana", "", "q2", "k3", 0))
        st.add_label(ReviewerLabel("pool", "ben", "", "q2", "k3", 2))
        choices = adjudication_choices(disagreements_frame(st))
        # the strategy is named where there is one; a team's item reads as before
        assert choices == {"pool · E · q1 · c7": ("pool", ("E", "q1", "c7")),
                           "pool · q2 · k3": ("pool", ("", "q2", "k3"))}
        queue, item = choices["pool · E · q1 · c7"]
        st.adjudicate(queue, item, 2, "cleo")
        _, open_ = settled(st.labels(), st.adjudications())
        left = {d.item: d.adjudicated for d in open_}
        assert left[("E", "q1", "c7")] == 2 and left[("", "q2", "k3")] is None


def test_every_empty_queue_says_why_it_is_empty():
    """A newcomer's report: the traffic queue with no traffic loaded said "every chunk of every run's first k is
    judged" (the pool's reason). Each queue names its own missing input first, then the missing saved cut."""
    from audit.evaluation.saved_cut import SavedCut
    from audit.runset import Query, Run, RunSet, Source
    from audit.views.judging import empty_queue_reason

    run = Run.from_scores("r", {"q1": {"c1": 0.2}}, "cosine-distance", cut_key={"run_file": "r"})
    bare = RunSet(Source("files", "x"), (Query("q1", "question one", "in-domain"),), {"": Qrels({})}, (run,))
    cut = [SavedCut(0.5, {"run_file": "r"})]
    traffic = empty_queue_reason(bare, "traffic", cuts=cut)
    assert traffic.startswith("No production traffic is loaded") and "sidebar's Traffic" in traffic
    assert "read beside the runs, not ranked by them" in empty_queue_reason(bare, "traffic", cuts=cut,
                                                                            traffic_loaded=True)
    assert empty_queue_reason(bare, "bluffs", cuts=cut).startswith("No out-of-domain question is loaded")
    assert empty_queue_reason(bare, "proposals").startswith("No proposal yet")
    assert "every chunk of every run's first k is judged" in empty_queue_reason(bare, "pool")
    with_ood = RunSet(Source("files", "x"), (Query("q1", "question one", "in-domain"),
                                             Query("o1", "question two", "out-of-domain"),
                                             Query("t1", "question three", "traffic")), {"": Qrels({})}, (run,))
    # no saved cut applies to run r (the cut saved is another run's): both queues say so
    other = [SavedCut(0.5, {"run_file": "another"})]
    assert empty_queue_reason(with_ood, "bluffs", cuts=other).startswith("No run has a saved cut")
    assert empty_queue_reason(with_ood, "traffic", cuts=other).startswith("No run has a saved cut")
    assert empty_queue_reason(with_ood, "bluffs", cuts=cut).startswith("No bluff")
    with pytest.raises(ValueError, match="unknown queue"):
        empty_queue_reason(bare, "elsewhere")
