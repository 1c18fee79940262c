"""BM25 on scripts written without spaces: the ``cjk-bigrams`` rule, ``unicode`` unchanged, the per-query warning."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.cli import main
from audit.retrieval import BM25, TOKEN_RULES, bm25_tokens
from audit.retrieval.bm25 import unspaced_misses
from audit.retrieval.scripts import cjk_bigram_tokens, has_unspaced


@pytest.mark.parametrize("text, want", [
    ("如何轮换中继密钥？", ["如何", "何轮", "轮换", "换中", "中继", "继密", "密钥"]),
    # a Latin run keeps its unicode token; the kana/kanji run becomes pairs
    ("python3の使い方", ["python3", "の使", "使い", "い方"]),
    # ー (prolonged sound mark, Common script but Katakana by Script_Extensions) stays in its run; 、 and 。 cut
    ("コーヒー、お茶。", ["コー", "ーヒ", "ヒー", "お茶"]),
    # Thai vowel and tone marks belong to the run (unicode splits the word at them)
    ("ง่าย", ["ง่", "่า", "าย"]),
    ("서울에서 만나요", ["서울", "울에", "에서", "만나", "나요"]),
    ("中", ["中"]),  # a run of one character is one token
    ("Relay KEYS, re\u00adlay_2", ["relay", "keys", "relay", "2"]),  # no unspaced letter: the unicode tokens
])
def test_cjk_bigram_tokens_by_hand(text, want):
    assert cjk_bigram_tokens(text) == want == bm25_tokens(text, "cjk-bigrams")


def test_unicode_is_unchanged_on_the_same_texts():
    # the rule the golden figures were computed with: one token per phrase, Thai cut at its marks
    assert bm25_tokens("如何轮换中继密钥？") == ["如何轮换中继密钥"]
    assert bm25_tokens("python3の使い方") == ["python3の使い方"]
    assert bm25_tokens("ง่าย") == ["ง", "าย"]
    assert TOKEN_RULES == ("unicode", "ascii", "cjk-bigrams", "snowball")


def test_bm25_scores_by_hand_under_both_rules():
    texts = ["轮换密钥", "备份数据"]
    # cjk-bigrams: chunk 0 is 轮换 换密 密钥 (3 tokens, as chunk 1): avgdl = |d| = 3, so each matching bigram
    # (f = 1) weighs idf · 1 · 2.2 / (1 + 1.2) = idf, idf = ln(1 + (2 − 1 + 0.5)/(1 + 0.5)) = ln 2; the query's
    # 如何 何轮 轮换 换密 密钥 match three of them: 3 ln 2
    for backend in ("rank-bm25", "bm25s"):
        got = BM25(texts, tokens="cjk-bigrams", backend=backend).scores("如何轮换密钥")
        np.testing.assert_allclose(got, [3 * math.log(2), 0.0], rtol=1e-12)
    # unicode: the query is one token, 如何轮换密钥, that no chunk holds
    assert BM25(texts).scores("如何轮换密钥").tolist() == [0.0, 0.0]


def test_unspaced_misses():
    vocab = BM25(["轮换密钥 backup", "备份数据"]).vocabulary
    assert vocab == {"轮换密钥", "backup", "备份数据"}
    texts = ["轮换密钥", "如何轮换密钥", "backup 如何轮换", "backup restore", "ภาษาไทย"]
    # 0 holds the chunk's exact phrase; 1 and 2 hold unspaced words no chunk has (2's "backup" does not help
    # them); 3 has no unspaced letter; 4's Thai tokens are nowhere
    assert unspaced_misses(texts, vocab, "unicode") == [1, 2, 4]
    assert unspaced_misses(texts, set(), "ascii") == [0, 1, 2, 4]  # ascii: such letters make no token at all
    assert unspaced_misses(texts, set(), "cjk-bigrams") == []  # under the bigram rule a miss is not the script's
    assert has_unspaced("a 中") and not has_unspaced("Ελληνικά русский 123")


DOC = "# 密钥\n\n## 轮换\n\n中继密钥每晚自动轮换一次。\n\n## 备份\n\n备份数据保留十四天。\n"


@pytest.fixture()
def chinese(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text(DOC, encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n1", "needle": "中继密钥每晚自动轮换一次。",
                              "questions": ["中继密钥多久轮换一次", "密钥什么时候轮换"]}, ensure_ascii=False) + "\n",
                  encoding="utf-8")
    return docs, gt


def test_chinese_questions_warn_per_query_and_cjk_bigrams_finds_them(chinese, tmp_path, capsys, monkeypatch):
    docs, gt = chinese
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    args = ["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "hashing", "--strategies", "C",
            "--retrievers", "bm25", "--reranker", "none", "--quiet", "--no-cache"]
    assert main(args + ["--json", str(tmp_path / "u.json")]) == 0
    out = capsys.readouterr().out
    js = json.loads((tmp_path / "u.json").read_text(encoding="utf-8"))
    # unicode: each question is one token, the needle's sentence another: BM25 scores 0 and finds nothing
    assert js["results"][0]["Success@20"] == 0.0 and js["retrieval"]["bm25_no_token"] == []
    assert [w["message"].split(" (")[0] for w in js["warnings"]] == ["query n1/doc", "query n1/ticket"]
    assert js["warnings"][0]["message"] == (
        "query n1/doc ('中继密钥多久轮换一次'): its words in a script written without spaces (Han, Kana, Hangul, "
        "Thai) match no chunk's BM25 token under the 'unicode' rule (a phrase without spaces is one token): BM25 "
        "ignores them; the rule cjk-bigrams (--bm25-tokens cjk-bigrams, sidebar: BM25 tokens) matches such text "
        "by character pairs")
    assert out.count("warning: query n1/") == 2
    assert main(args + ["--bm25-tokens", "cjk-bigrams", "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    js = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    # the needle's chunk shares 中继 继密 密钥 … 轮换 with the first question, 密钥 and 轮换 with the second;
    # the other chunk (备份数据保留十四天) shares none: both found first
    assert js["results"][0]["Success@1"] == 1.0 and js["warnings"] == [] and "warning:" not in out
    assert js["provenance"]["bm25_tokens"] == "cjk-bigrams"


def test_the_warning_is_on_the_run_for_the_pages(chinese):
    from audit.groundtruth import load_ground_truth
    from audit.ingest import load_folder
    from audit.chunking import PRESETS
    from audit.models import load_encoder
    from audit.sources import run_audit

    docs, gt = chinese
    corpus = load_folder(docs)
    truth = load_ground_truth(corpus, gt)
    run = run_audit(corpus, truth, [PRESETS["C"]], load_encoder("hashing"), retrievers=("dense",), reranker=None)
    assert run.settings["bm25_no_match"] == () and run.warnings == ()  # dense alone: BM25 is not asked
    run = run_audit(corpus, truth, [PRESETS["C"]], load_encoder("hashing"), retrievers=("dense", "hybrid"),
                    reranker=None)
    assert run.settings["bm25_no_match"] == ("n1/doc", "n1/ticket") and len(run.warnings) == 2


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.mark.slow
@given(st.text())
def test_without_unspaced_letters_cjk_bigrams_is_unicode(text):
    if not has_unspaced(text):
        assert cjk_bigram_tokens(text) == bm25_tokens(text, "unicode")


_MIXED = st.text(alphabet=st.sampled_from("ab1 中文日本語のカタカナー한국어ไทย่、。 -_\u00ad"), max_size=30)


@pytest.mark.slow
@given(_MIXED)
def test_cjk_bigram_invariants(text):
    toks = cjk_bigram_tokens(text)
    for t in toks:
        assert t and (not has_unspaced(t) or len(t) <= 2)  # pairs (or a lone character) of unspaced letters
        assert all(has_unspaced(c) for c in t) or not any(has_unspaced(c) for c in t)  # never across a script edge
    # every unspaced letter of the text is in some token: nothing of those scripts is lost
    letters = [c for c in text.casefold() if has_unspaced(c)]
    assert sorted(set(letters)) == sorted({c for t in toks for c in t if has_unspaced(c)})
