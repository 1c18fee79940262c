"""The judging queue's fourth queue: the Ground truth page's Q/A proposals, judged "does this passage answer the
question?", the accepted ones becoming needles (never chunk judgments)."""

from __future__ import annotations

import pytest

from audit.authoring.checks import CorpusViews
from audit.authoring.locate import EXACT, FUZZY, NOT_FOUND, VIEW, locate_pairs, read_qa
from audit.ingest import Corpus, markdown_document
from audit.groundtruth import validate
from audit.judging.queues import QUEUES, proposals_queue, queue_items
from audit.judging.store import JudgmentsStore, ReviewerLabel
from audit.judging.versions import accepted_needles, save_settled
from audit.views.judging import ANSWERS, item_view, my_items

KEYS = ("# Relay keys\n\nA lost key cannot be recovered. Support can only confirm which messages became "
        "unreadable.\n\n## Rotation\n\nThe old key stays readable for seventy-two hours. After seventy-two hours "
        "the old key is shredded.\n")


@pytest.fixture(scope="module")
def corpus():
    return Corpus("t", (markdown_document("ops/keys.md", KEYS),))


@pytest.fixture(scope="module")
def located(tmp_path_factory, corpus):
    p = tmp_path_factory.mktemp("qa") / "faq.csv"
    p.write_text("id,question,answer\n"
                 "k1,Can a lost key be recovered?,A lost key cannot be recovered.\n"  # exact
                 'k2,How long is the old key readable?,"The old key  stays\nreadable for seventy-two hours."\n'  # view
                 ",lost key?,A lost key can not be recovered.\n"  # fuzzy ("cannot"), no id: keyed by its line
                 "k4,What colour is the sky?,The sky is blue on a clear day.\n", encoding="utf-8")  # not found
    return locate_pairs(read_qa(p), CorpusViews(corpus))


def test_each_located_answer_is_one_item_at_its_locator(located, corpus):
    assert "proposals" in QUEUES
    assert [x.method for x in located] == [EXACT, VIEW, FUZZY, NOT_FOUND]
    items = proposals_queue(located)
    # the answer not found asks nothing; the pair without an id is keyed by its line (header 1, k2 spans 3-4)
    assert [it.query_id for it in items] == ["k1", "k2", "line 5"]
    assert queue_items(None, "proposals", located=located) == items
    text = corpus.get("ops/keys.md").text
    for it, needle in zip(items, ["A lost key cannot be recovered.",
                                  "The old key stays readable for seventy-two hours.",
                                  "A lost key cannot be recovered."]):
        doc, rng = it.chunk_id.split("#char=")
        a, b = map(int, rng.split(","))
        # the locator is the canonical range: the document's own characters there are the passage
        assert (doc, text[a:b], it.passage, it.space, it.queue) == ("ops/keys.md", needle, needle, "", "proposals")
    assert items[0].chunk_id == f"ops/keys.md#char={text.index('A lost')},{text.index('A lost') + 31}"
    assert items[2].note.startswith("fuzzy, score ")
    v = item_view(None, items[1])
    assert (v.question, v.chunk_text, v.locator, v.grades) == ("How long is the old key readable?", items[1].passage,
                                                               items[1].chunk_id, ANSWERS)


def test_accepted_proposals_are_needles_and_no_version_holds_them(tmp_path, located, corpus):
    with JudgmentsStore(tmp_path / "j.sqlite") as st:
        mine, todo = my_items(None, st, "ana", queue="proposals", located=located)
        assert len(mine) == len(todo) == 3
        k1, k2, l5 = proposals_queue(located)
        for who, grades in {"ana": (1, 1, 1), "ben": (1, 0, 0)}.items():
            for it, g in zip((k1, k2, l5), grades):
                st.add_label(ReviewerLabel("proposals", who, it.space, it.query_id, it.chunk_id, g))
        assert my_items(None, st, "ana", queue="proposals", located=located)[1] == []
        st.adjudicate("proposals", l5.key, 1, "cy")  # k2 stays open: 1 against 0
        needles = accepted_needles(located, st.labels(), st.adjudications())
        # k1: both said 1; line 5: adjudicated 1; k2: open, so not accepted
        assert [(n.id, n.needle, n.questions) for n in needles] == [
            ("k1", "A lost key cannot be recovered.", ("Can a lost key be recovered?",)),
            ("line 5", "A lost key cannot be recovered.", ("lost key?",))]
        ok, _, rejected = validate(needles[:1], corpus, CorpusViews(corpus).docs)
        assert [n.id for n in ok] == ["k1"] and not rejected  # usable as a needle of this corpus
        v, waiting = save_settled(st, "ana")
        assert len(st.judgments(v.id)) == 0  # a proposal is a needle to accept, not a chunk judgment
        assert [d.item for d in waiting] == [k2.key]
