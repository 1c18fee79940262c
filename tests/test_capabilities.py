"""What a run set can show (issue 37): :func:`audit.capabilities.can` read from what each run set holds.

Two run sets, built by independent routes: the built-in pipelines over the hand-made corpus of
``test_pipeline`` (chunks, vectors, token counts, needles, an out-of-domain question), and a team's two run
files over qrels made by hand (rankings only). Each capability is checked against what the run set visibly holds.
"""

from __future__ import annotations

import numpy as np
import pytest

from audit.chunking import Strategy
from audit.evaluation.judgments import Qrels
from audit.models import HashingEncoder
from audit.runset import Query, Ranked, RequestOutcome, Run, RunSet, Source
from audit.sources import run_audit
from audit.capabilities import CANNOT, can, capabilities, missing
from test_pipeline import corpus, gt


@pytest.fixture(scope="module")
def builtin():
    c = corpus()
    return run_audit(c, gt(c), [Strategy("blind50", "blind", target=50), Strategy("whole", "boundaries", target=2000)],
                     HashingEncoder(dims=64), retrievers=("dense", "bm25"), reranker=None)


def team(requests=False, second=True):
    """A team's runs: q1 judged (relevant c1), q2 judged, one traffic query; no chunks, vectors or documents."""
    queries = (Query("q1", "first", "documentation"), Query("q2", "second", "documentation"),
               Query("t1", "a user's query", "traffic"))
    ranked = {"q1": Ranked(("c1", "c2"), np.array([0.9, 0.5])), "q2": Ranked(("c3",), np.array([0.7]))}
    outcome = {"q1": RequestOutcome("answered", 12.0)} if requests else {}
    runs = [Run("before", "similarity", ranked, requests=outcome)]
    if second:
        runs.append(Run("after", "similarity", ranked))
    return RunSet(Source("runs", "team"), queries, {"": Qrels({"q1": {"c1": 1}, "q2": {"c9": 1}})}, tuple(runs))


def test_the_built_in_pipelines_hold_chunks_vectors_tokens_needles_and_documents(builtin):
    # run_audit cut both strategies here, embedded every chunk (vectors), counted tokens, located the two
    # needles in the corpus and ranked gt()'s two out-of-domain questions: all four runs are available. Its dense
    # and BM25 columns are the pair fusion is tuned on; no rerank column was asked for, so no reranked pair.
    assert capabilities(builtin) == {"judgments", "needles", "out_of_domain", "chunks", "offsets", "corpus",
                                     "chunk_cuts", "query_time_search", "tokens", "vectors", "two_runs",
                                     "phrasings", "latency", "fusion_pair", "languages"}
    assert not can(builtin, "requests") and not can(builtin, "traffic")


def test_the_index_file_is_no_capability_but_what_its_store_offers(builtin, tmp_path):
    # The audit's own index is a store like every engine (issue 50): the run set's capabilities do not name it, and
    # "store_health" is what any store beside the run set gives; a manifest, a retry or an upgrade preview is what
    # the store declares it offers, whichever source holds it.
    from audit.stores.registry import ENGINES, open_store

    assert "index_file" not in CANNOT
    with pytest.raises(KeyError, match="unknown capability 'index_file'"):
        can(builtin, "index_file")
    with pytest.raises(TypeError):
        can(builtin, "judgments", index_file="index.sqlite")  # the keyword is gone with it
    store = open_store(f"sqlite:{tmp_path / 'index.sqlite'}")  # nothing is opened before its first call
    assert can(builtin, "store_health", store_health=store) and not can(builtin, "store_health")
    assert all(store.supports(o) for o in ("manifest", "retry", "upgrade_preview", "extraction", "index_pair"))
    assert not any(ENGINES[e].supports("manifest") for e in ("pgvector", "chroma", "milvus", "lance"))
    with pytest.raises(KeyError, match="unknown offer 'index_file'"):
        store.supports("index_file")


def test_a_teams_runs_hold_their_rankings_and_judgments_only():
    rs = team()
    assert capabilities(rs) == {"judgments", "two_runs", "traffic"}
    assert capabilities(team(second=False)) == {"judgments", "traffic"}
    assert can(team(requests=True), "requests")  # one question's request outcome is enough
    assert capabilities(rs, store_health=print) == {"judgments", "two_runs", "traffic", "store_health"}
    # missing() keeps the order asked and words each one as CANNOT does
    assert missing(rs, "chunks", "judgments", "corpus") == [CANNOT["chunks"], CANNOT["corpus"]]


def test_out_of_domain_is_asked_of_one_run_when_given(builtin):
    # gt() holds out-of-domain questions: every built-in run ranked them; the team's runs ranked none.
    assert all(can(builtin, "out_of_domain", r) for r in builtin.runs)
    assert not can(team(), "out_of_domain", "before")


def test_an_unknown_capability_names_the_known_ones():
    with pytest.raises(KeyError, match="unknown capability 'index'.*judgments.*store_health"):
        can(team(), "index")
