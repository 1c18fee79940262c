"""Every input checked at the door (issue 10): BM25 tokens of any script, distances clipped to [0, 2],
unhealthy indexes refused, rerank pairs over the cross-encoder window counted, a closed stdout,
cosine-distance cuts checked wherever they are accepted, uploads that share a name."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from audit.chunking import PRESETS
from audit.cli import main
from audit.groundtruth import load_ground_truth
from audit.ingest import load_folder
from audit.models import load_encoder
from audit.retrieval import BM25, bm25_tokens, dense_ranking
from audit.sources import run_audit

RU_DOC = ("# Резервные копии\n\n## Хранение\n\nРезервные копии хранятся тридцать дней на отдельном диске.\n\n"
          "## Восстановление\n\nВосстановление занимает около двух часов.\n")
RU_GT = {"id": "r1", "needle": "Резервные копии хранятся тридцать дней на отдельном диске.",
         "questions": ["Сколько дней хранятся резервные копии?", "на каком диске лежат копии"]}


@pytest.fixture()
def russian(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backup.md").write_text(RU_DOC, encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps(RU_GT, ensure_ascii=False) + "\n", encoding="utf-8")
    return docs, gt


# --------------------------------------------------------------------------- BM25 tokens

def test_bm25_tokens_of_any_script():
    assert bm25_tokens("Сколько дней хранятся копии?") == ["сколько", "дней", "хранятся", "копии"]
    assert bm25_tokens("Сколько дней хранятся копии?", "ascii") == []           # the seed's rule sees nothing
    assert bm25_tokens("snake_case Straße") == ["snake", "case", "strasse"]      # _ separates; casefold ß → ss
    assert bm25_tokens("re\u00adlay cafe\u0301") == ["relay", "caf\u00e9"]       # Cf removed, NFC
    assert bm25_tokens("数据库 2024年") == ["数据库", "2024年"]
    # identical to the seed's [a-z0-9]+ on ASCII text, so English figures do not move
    text = "Hello, World 42! x_y ABC-def"
    assert bm25_tokens(text) == bm25_tokens(text, "ascii") == ["hello", "world", "42", "x", "y", "abc", "def"]
    with pytest.raises(ValueError, match="token rule 'latin'"):
        bm25_tokens("x", "latin")


def test_the_same_tokens_in_rank_bm25_bm25s_and_the_seed_port():
    sys.path.insert(0, str(ROOT / "bench"))
    import naive

    texts = ["Резервные копии хранятся тридцать дней", "Восстановление занимает два часа", "backup копии",
             "другой текст"]
    ref, fast, seed = BM25(texts, backend="rank-bm25"), BM25(texts, backend="bm25s"), naive.SeedBM25(texts)
    for q in ["копии", "Резервные КОПИИ", "часа backup"]:
        np.testing.assert_allclose(ref.scores(q), fast.scores(q), rtol=1e-9)
        np.testing.assert_allclose(ref.scores(q), seed.scores(q), rtol=1e-9)
    # "копии" is in 2 of 4 texts: idf = ln(1 + 2.5/2.5) = ln 2 > 0 for both that hold it
    assert (ref.scores("копии") > 0).tolist() == [True, False, True, False]
    assert BM25(texts, tokens="ascii").rank("копии").chunk_ids.tolist() == []


def test_russian_questions_get_bm25_and_the_ascii_rule_warns(russian, tmp_path, capsys):
    docs, gt = russian
    args = ["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "hashing", "--strategies", "C",
            "--retrievers", "dense,bm25", "--reranker", "none", "--quiet", "--no-cache"]
    assert main(args + ["--json", str(tmp_path / "u.json")]) == 0
    out = capsys.readouterr().out
    js = json.loads((tmp_path / "u.json").read_text(encoding="utf-8"))
    bm = next(r for r in js["results"] if r["retriever"] == "bm25")
    # C cuts one chunk per section: the needle's chunk shares "дней", "хранятся", "резервные", "копии" with the
    # first question, the second question shares "диске", "копии" with it and nothing with the other: 2 of 2
    assert bm["Success@1"] == 1.0
    assert js["warnings"] == [] and js["retrieval"]["bm25_no_token"] == [] and "warning:" not in out
    assert main(args + ["--bm25-tokens", "ascii", "--json", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    js = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert next(r for r in js["results"] if r["retriever"] == "bm25")["Success@1"] == 0.0
    assert js["retrieval"]["bm25_no_token"] == ["r1/doc", "r1/ticket"]
    assert "warning: 2 of 2 queries have no BM25 token under the 'ascii' rule" in out
    assert js["provenance"]["bm25_tokens"] == "ascii"


# --------------------------------------------------------------------------- distances

def test_dense_distances_are_clipped_to_0_2():
    x = np.full(384, 1 / np.sqrt(384), np.float32)
    v = np.stack([x, -x])
    assert 1.0 - float((v @ x)[0]) < 0 < 1.0 - float((v @ x)[0]) + 1e-6  # float32: -1.19e-07 unclipped
    r = dense_ranking(v, x)
    assert r.scores.tolist() == [0.0, 2.0]


def test_run_distances_are_clipped_and_a_zero_cut_refuses_an_identical_chunk(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Usage\n\nCall the tool with a path.\n\n## Other\n\nUnrelated words "
                                   "about the weather today.\n", encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n", "needle": "Unrelated words about the weather today.",
                              "questions": ["weather words"]}) + "\n", encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text("Call the tool with a path.\n", encoding="utf-8")
    corpus = load_folder(docs)
    enc = load_encoder("hashing")
    run = run_audit(corpus, load_ground_truth(corpus, gt, ood), [PRESETS["C"]], enc, ("dense",), reranker=None)
    s = run.spaces["C"]
    raw = 1.0 - run.query_vectors.astype(np.float32) @ s.vectors.T
    assert raw.min() < 0  # the hashing encoder's float32 unit vectors: 1 - v·v = -2.4e-07 for this text
    dense = run.column("C", "dense")
    distances = np.concatenate([r.scores for r in dense.rankings.values()])  # every query × chunk, all kept
    assert distances.size == raw.size and distances.min() == 0.0 and distances.max() <= 2.0
    assert min(r.nearest for r in dense.rankings.values()) == 0.0
    from audit.evaluation.threshold import counts_at, gate_queries, separation

    qs = gate_queries(run, dense)
    assert separation(qs).best_out_of_domain == 0.0
    # the gate keeps distances strictly below the cut: at 0 nothing is kept, so the query is refused
    assert counts_at(qs, 0.0).bluff == 0


# --------------------------------------------------------------------------- unhealthy index

def _corrupt(db, doc_id, vector):
    con = sqlite3.connect(db)
    con.execute("UPDATE chunk SET vector=? WHERE doc_id=? AND ordinal=0", (np.asarray(vector, np.float32).tobytes(),
                                                                          doc_id))
    con.commit()
    con.close()


def test_report_refuses_an_index_with_non_finite_or_non_unit_vectors(russian, tmp_path, capsys):
    docs, gt = russian
    db = tmp_path / "idx.sqlite"
    args = ["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "hashing", "--strategies", "C",
            "--retrievers", "dense", "--quiet", "--db", str(db)]
    assert main(args) == 0
    capsys.readouterr()
    _corrupt(db, "backup.md", np.full(256, np.nan))
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: index 'C' of ") and "1 non-finite vectors in backup.md" in err
    assert "--allow-unhealthy" in err and len(err.splitlines()) == 1
    _corrupt(db, "backup.md", np.full(256, 0.5))  # norm 8
    assert main(args) == 2
    assert "1 non-unit (|norm - 1| > 0.0001) vectors in backup.md" in capsys.readouterr().err
    assert main(args + ["--allow-unhealthy", "--json", str(tmp_path / "r.json")]) == 0
    assert "warning: unhealthy index 'C'" in capsys.readouterr().out
    warnings = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["warnings"]
    assert len(warnings) == 1 and "non-unit" in warnings[0]["message"] and "--allow-unhealthy" in warnings[0]["message"]


# --------------------------------------------------------------------------- rerank window

class WordCross:
    """A cross-encoder stand-in: one token per word, 3 special tokens per pair, window 12."""

    name = "word-cross"
    max_length = 12

    def pair_tokens(self, query, texts):
        return [3 + len(query.split()) + len(t.split()) for t in texts]

    def score(self, query, texts):
        return np.array([-float(len(t)) for t in texts])


def test_rerank_pairs_over_the_window_are_counted_and_flagged(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n## Short\n\nKeys rotate daily.\n\n## Long\n\n" + " ".join(["word"] * 20)
                               + " keys end here.\n", encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "k", "needle": "Keys rotate daily.", "questions": ["when do keys rotate",
                                                                                     "keys?"]}) + "\n")
    corpus = load_folder(docs)
    run = run_audit(corpus, load_ground_truth(corpus, gt), [PRESETS["C"]], load_encoder("hashing"),
                    ("dense", "hybrid", "rerank"), reranker=WordCross())
    s = run.spaces["C"]
    # C gives 3 chunks: "# A" (1 word), "Keys rotate daily." (3), the long one (23 words). Pairs: 3 + query words
    # + chunk words. "when do keys rotate" (4): 8, 10, 30 → only the long chunk is over 12; "keys?" (1): 5, 7, 27
    long_id = next(c.chunk_id for c in s.chunks.chunks if c.content.startswith("word"))
    assert s.rerank_over_window == {"k/doc": ((long_id, 30),), "k/ticket": ((long_id, 27),)}
    assert sum(len(x) for x in s.rerank_over_window.values()) == 2 and run.settings["rerank_window"] == 12
    from audit.report import build_report
    from audit.report.tables import rerank_window_frame

    report = build_report(run, saved_path=tmp_path / "threshold.json")
    js = report.to_json()
    row = next(r for r in js["results"] if r["retriever"] == "rerank")
    assert row["rerank_pairs_over_window"] == 2
    assert next(r for r in js["results"] if r["retriever"] == "dense")["rerank_pairs_over_window"] is None
    assert "rerank pairs over the cross-encoder window (12 tokens" in report.render_text()
    assert rerank_window_frame(run).to_dict("records") == [
        {"strategy": "C", "pairs reranked": 6, "pairs over window": 2, "queries with one": 2}]


@pytest.mark.model
def test_the_real_cross_encoder_counts_pairs_over_512_tokens():
    from audit.models import load_cross_encoder, resolve_model_path

    ce = load_cross_encoder(str(resolve_model_path(None)), num_labels=1)
    assert ce.max_length == 512
    long_text = " ".join(["configuration"] * 600)
    n_short, n_long = ce.pair_tokens("which file?", ["a short answer", long_text])
    assert n_short < 20 and n_long > 512


# --------------------------------------------------------------------------- a closed stdout

def test_a_closed_stdout_ends_quietly(russian):
    docs, gt = russian
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line: every write fails with EPIPE
    env = {**os.environ, "AUDIT_HOME": str(docs.parent / "home")}
    p = subprocess.run([sys.executable, "-m", "audit", "report", "--corpus", str(docs), "--ground-truth", str(gt),
                        "--model", "hashing", "--strategies", "C", "--retrievers", "dense", "--quiet", "--no-cache"],
                       cwd=ROOT, stdout=w, stderr=subprocess.PIPE, text=True, env=env)
    os.close(w)
    assert p.returncode == 141  # 128 + SIGPIPE, never 2 (bad input)
    assert p.stderr == ""


def test_report_piped_into_head_never_says_bad_input(russian):
    docs, gt = russian
    env = {**os.environ, "AUDIT_HOME": str(docs.parent / "home")}
    cmd = (f"'{sys.executable}' -m audit report --corpus '{docs}' --ground-truth '{gt}' --model hashing "
           "--strategies C --retrievers dense --quiet --no-cache | head -n 2; echo \"status ${PIPESTATUS[0]}\"")
    p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, env=env)
    lines = p.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("Corpus ") and lines[2] in ("status 0", "status 141")
    assert "error" not in p.stderr and "Traceback" not in p.stderr


# --------------------------------------------------------------------------- cosine-distance cuts

EXAMPLE = ROOT / "data" / "example"


@pytest.mark.parametrize("bad", ["nan", "-0.5", "7", "inf"])
def test_a_cosine_distance_cut_on_imported_runs_is_checked(bad, capsys):
    code = main(["report", "--queries", str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"),
                 "--run", f"before={EXAMPLE / 'before.trec'}", "--score", "before=cosine-distance",
                 "--threshold", bad])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"error: --threshold must be a cosine distance in [0, 2], got {float(bad)!r}"


@pytest.mark.parametrize("bad", ["nan", "-0.5", "7", "inf"])
def test_compare_and_the_saved_threshold_check_the_cut(tmp_path, monkeypatch, bad, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "g.md").write_text("# G\n\nThe relay keys rotate every ninety days.\n", encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "k", "needle": "The relay keys rotate every ninety days.",
                              "questions": ["how often do keys rotate"]}) + "\n", encoding="utf-8")
    db = tmp_path / "i.sqlite"
    assert main(["index", str(docs), "--db", str(db), "--model", "hashing", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(db), str(db), "--ground-truth", str(gt), "--threshold", bad]) == 2
    assert capsys.readouterr().err.strip() == f"error: --threshold must be a cosine distance in [0, 2], got {float(bad)!r}"
    from audit.evaluation.saved_cut import load_cuts

    saved = tmp_path / "threshold.json"
    saved.write_text('{"threshold": %s}' % {"nan": "NaN", "inf": "Infinity"}.get(bad, bad), encoding="utf-8")
    # an old file's cut was a cosine distance: outside [0, 2] it is never applied, nor even offered
    assert load_cuts(saved) == []
    key = {"corpus": "c", "model_digest": "d", "strategy": {"name": "E"}, "retriever": "dense",
           "score_kind": "cosine-distance"}
    saved.write_text(json.dumps({"version": 2, "cuts": [{"cut": float(bad), "key": key}]}), encoding="utf-8")
    assert load_cuts(saved) == []  # a cosine-distance cut outside [0, 2] (or not finite) is skipped


def test_a_similarity_cut_is_not_held_to_0_2(capsys):
    # a similarity run's cut is in its own units (a later issue checks those): 7 is accepted
    code = main(["report", "--queries", str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"),
                 "--run", f"before={EXAMPLE / 'before.trec'}", "--threshold", "7"])
    assert code == 0


# --------------------------------------------------------------------------- uploads

def test_two_uploads_with_the_same_name_do_not_collide():
    from audit.ingest import corpus_from_uploads
    from ui import cache

    corpus = corpus_from_uploads([("a.md", b"# A\n\nThe relay keys rotate every ninety days.\n")])
    gt = (json.dumps({"id": "k", "needle": "The relay keys rotate every ninety days.",
                      "questions": ["how often do keys rotate"]}) + "\n").encode()
    ood = b"# comment\nwhat is the capital of France\nbest pizza in town\n"
    g = cache.ground_truth.__wrapped__("c", "g", corpus, None, None, ("export.txt", gt), ("export.txt", ood))
    assert [n.id for n in g.needles] == ["k"]
    assert g.out_of_domain == ("what is the capital of France", "best pizza in town")
    with pytest.raises(ValueError) as e:
        cache.ground_truth.__wrapped__("c", "g2", corpus, None, None, ("export.txt", b"{bad\n"), ("export.txt", ood))
    assert str(e.value).startswith("export.txt:1: not valid JSON")
