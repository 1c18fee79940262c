"""Issue 57: BM25 that knows the language (the ``snowball`` token rule), the language of each document and
question, several token rules side by side, figures per language and the matching view in other writing habits."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import Stemmer
from conftest import ROOT

from audit.cli import main
from audit.chunking import PRESETS
from audit.ingest import load_corpus
from audit.language import SNOWBALL, detect_language, document_languages
from audit.matching import reader_form
from audit.retrieval import BM25, bm25_tokens
from audit.retrieval.bm25 import postings_key

GOLDEN = ROOT / "tests" / "golden"
FRENCH = ROOT / "data" / "french"


def _unicode_words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", reader_form(text).casefold().replace("i\u0307", "i"))


@pytest.mark.parametrize("folder", [GOLDEN / "docs", FRENCH / "docs"], ids=["english", "french"])
def test_snowball_stems_equal_pystemmers_for_every_token_of_the_corpus(folder):
    corpus = load_corpus(folder)
    langs = document_languages(corpus.documents)
    for d in corpus.documents:
        stemmer = Stemmer.Stemmer(SNOWBALL[langs[d.doc_id]])
        words = _unicode_words(d.text)
        assert words
        assert bm25_tokens(d.text, "snowball", langs[d.doc_id]) == [stemmer.stemWord(w) for w in words]


def test_snowball_without_a_stemmer_is_unicode():
    text = "如何轮换密钥 and Ünïcode words"
    assert bm25_tokens(text, "snowball", None) == bm25_tokens(text, "unicode")
    assert bm25_tokens(text, "snowball", "ja") == bm25_tokens(text, "unicode")


def test_french_stemming_joins_the_forms_a_reader_joins():
    assert len(set(bm25_tokens("découpé découpe découper", "snowball", "fr"))) == 1
    assert bm25_tokens("chunks chunk", "snowball", "fr")[0] == bm25_tokens("chunk", "snowball", "fr")[0]
    bm = BM25(["Le découpage des documents en morceaux.", "La fenêtre du modèle."], tokens="snowball",
              languages=["fr", "fr"], language="fr")
    assert bm.rank("Comment découper un document ?").chunk_ids[0] == 0
    assert not BM25(["Le découpage des documents."], tokens="unicode").scores("découper").any()


def test_the_postings_key_holds_the_rule_and_the_languages():
    texts = ["un texte"] * 3
    u = postings_key(texts, "unicode")
    if u is None:
        pytest.skip("bm25s is not installed")
    assert postings_key(texts, "snowball", languages=["fr"] * 3) != u
    assert postings_key(texts, "snowball", languages=["fr"] * 3) != postings_key(texts, "snowball",
                                                                                 languages=["en"] * 3)
    assert postings_key(texts, "unicode") == u


def test_detected_languages_are_iso_639_1():
    assert detect_language("Comment découper les documents en morceaux avant de les indexer ?") == "fr"
    assert detect_language("Wie teilt man die Dokumente in Abschnitte, bevor man sie indiziert?") == "de"
    assert detect_language("ドキュメントをチャンクに分割する方法を説明します。") == "ja"
    assert detect_language("1234 — 5678") == "und"


def _mixed(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir(exist_ok=True)
    (d / "fr.md").write_text("# Sauvegardes\n\nLes sauvegardes quotidiennes sont conservées quatorze jours, puis "
                             "elles sont supprimées automatiquement.\n", encoding="utf-8")
    (d / "de.md").write_text("# Sicherungen\n\nDie täglichen Sicherungen werden vierzehn Tage lang aufbewahrt und "
                             "danach automatisch gelöscht.\n", encoding="utf-8")
    (d / "ja.md").write_text("# バックアップ\n\n毎日のバックアップは十四日間保存され、その後自動的に削除されます。\n",
                             encoding="utf-8")
    return d


def test_a_mixed_folder_is_split_per_document_and_each_gets_its_rule(tmp_path):
    corpus = load_corpus(_mixed(tmp_path))
    langs = document_languages(corpus.documents)
    assert langs == {"fr.md": "fr", "de.md": "de", "ja.md": "ja"}
    de = next(d for d in corpus.documents if d.doc_id == "de.md")
    assert "sicher" in bm25_tokens(de.text, "snowball", "de")  # German Snowball: Sicherungen → sicher
    ja = next(d for d in corpus.documents if d.doc_id == "ja.md")
    # Snowball has no Japanese stemmer: the unicode tokens, unstemmed (cjk-bigrams is the rule for such text)
    assert bm25_tokens(ja.text, "snowball", "ja") == bm25_tokens(ja.text, "unicode")
    assert document_languages(corpus.documents, "fr") == {"fr.md": "fr", "de.md": "fr", "ja.md": "fr"}


def test_corpus_jsonl_carries_each_documents_language(tmp_path):
    out = tmp_path / "c.jsonl"
    assert main(["corpus", "--corpus", str(_mixed(tmp_path)), "--jsonl", str(out)]) == 0
    rows = {r["doc_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert {k: r["language"] for k, r in rows.items()} == {"fr.md": "fr", "de.md": "de", "ja.md": "ja"}
    assert main(["corpus", "--corpus", str(_mixed(tmp_path)), "--jsonl", str(out), "--language", "de"]) == 0
    assert {r["language"] for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())} == {"de"}


def french_report(tmp_path, monkeypatch, *extra: str) -> dict:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    shutil.copytree(FRENCH / "docs", tmp_path / "docs")
    code = main(["report", "--corpus", "docs", "--ground-truth", str(FRENCH / "gt.jsonl"), "--out-of-domain",
                 str(FRENCH / "ood.txt"), "--model", "hashing", "--reranker", "none", "--strategies", "E",
                 "--retrievers", "dense,bm25,hybrid", "--json", "r.json", "--quiet", "--no-history", *extra])
    assert code == 0
    return json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))


def test_french_corpus_three_token_rules_three_columns_compared(tmp_path, monkeypatch):
    js = french_report(tmp_path, monkeypatch, "--bm25-tokens", "unicode,snowball,ascii")
    assert js["provenance"]["language"] == "fr"
    assert js["provenance"]["bm25_tokens"] == "unicode,snowball,ascii"
    rows = {r["name"]: r for r in js["results"]}
    assert {n: rows[n]["token_rule"] for n in ("E/dense", "E/bm25", "E/bm25-snowball", "E/bm25-ascii", "E/hybrid")} \
        == {"E/dense": None, "E/bm25": "unicode", "E/bm25-snowball": "snowball", "E/bm25-ascii": "ascii",
            "E/hybrid": "unicode"}
    assert all(rows[n]["n_queries"] == 18 for n in ("E/bm25", "E/bm25-snowball", "E/bm25-ascii"))
    compared = {(t["a"], t["b"]) for t in js["comparisons"]}
    assert {("E/bm25-snowball", "E/bm25"), ("E/bm25-ascii", "E/bm25")} <= compared
    # stemming finds at least what the unstemmed rule finds on these questions
    assert rows["E/bm25-snowball"]["Success@8"] >= rows["E/bm25"]["Success@8"]


def test_the_golden_reports_language_and_rules(tmp_path, monkeypatch):
    from test_golden import golden_report  # noqa: F401  (the golden corpus: English, the unicode rule)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    shutil.copytree(GOLDEN / "docs", tmp_path / "docs")
    assert main(["report", "--corpus", "docs", "--ground-truth", str(GOLDEN / "gt.jsonl"), "--model", "hashing",
                 "--reranker", "none", "--strategies", "E", "--json", "r.json", "--quiet", "--no-history"]) == 0
    js = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert js["provenance"]["language"] == "en"
    assert {r["token_rule"] for r in js["results"] if r["retriever"] != "dense"} == {"unicode"}


def test_figures_per_language_and_the_dense_models_notice(tmp_path, monkeypatch):
    from audit.language import dense_language_notice

    js = french_report(tmp_path, monkeypatch, "--bm25-tokens", "unicode,snowball")
    lang = js["languages"]
    assert lang["corpus"] == "fr" and lang["documents"] == {"fr": 3} and lang["questions"] == {"fr": 18}
    rows = {r["name"]: r for r in lang["rows"]}
    main_rows = {r["name"]: r for r in js["results"]}
    for name in ("E/dense", "E/bm25", "E/bm25-snowball"):
        assert rows[name]["language"] == "fr" and rows[name]["n_queries"] == 18
        assert rows[name]["Success@8"] == main_rows[name]["Success@8"]
        assert rows[name]["Success@8_low"] == main_rows[name]["Success@8_low"]
    assert lang["dense_notice"] is None  # the hashing encoder is no English-trained model
    assert "English" in dense_language_notice("sentence-transformers/all-MiniLM-L6-v2", "fr")
    assert "English" in dense_language_notice("all-mpnet-base-v2", "de,fr")
    assert dense_language_notice("all-MiniLM-L6-v2", "en,fr") is None
    assert dense_language_notice("paraphrase-multilingual-MiniLM-L12-v2", "fr") is None


def test_team_runs_and_traffic_state_their_language_and_how_it_was_decided(tmp_path, monkeypatch):
    ex = ROOT / "data" / "example"
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    team = ["--queries", str(ex / "queries.tsv"), "--qrels", str(ex / "qrels.trec"), "--run",
            f"before={ex / 'before.trec'}", "--quiet", "--no-history"]

    def report(*extra):
        out = tmp_path / "r.json"
        assert main(["report", *extra, "--json", str(out)]) == 0
        return json.loads(out.read_text(encoding="utf-8"))

    # a team's runs: no documents, so the language is told from its questions (English), and figures per language
    js = report(*team)
    assert (js["provenance"]["language"], js["provenance"]["language_from"]) == ("en", "detected")
    assert js["languages"]["questions"] == {"en": 9} and js["languages"]["documents"] == {}
    assert {r["language"] for r in js["languages"]["rows"]} == {"en"}
    # given on the command line: stated as given, every question in it
    js = report(*team, "--language", "fr")
    assert (js["provenance"]["language"], js["provenance"]["language_from"]) == ("fr", "given")
    assert js["languages"]["questions"] == {"fr": 9}
    # traffic read alone: its questions' language, stated for the traffic and for the audit
    js = report("--traffic", str(ex / "traffic.jsonl"))
    p = js["provenance"]
    assert (p["language"], p["language_from"], p["traffic_language"], p["traffic_language_from"]) == \
        ("en", "detected", "en", "detected")
    # the built-in corpus is English by default (no detection model loaded for it)
    from audit.groundtruth import load_ground_truth
    from audit.ingest import load_corpus
    from audit.models import load_encoder
    from audit.sources.builtin import run_audit

    corpus = load_corpus("python-reference")
    rs = run_audit(corpus, load_ground_truth(corpus, None, None), [PRESETS["E"]], load_encoder("hashing"),
                   ["bm25"], reranker=None)
    assert (rs.settings["language"], rs.settings["language_from"]) == ("en", "default")
    assert "language en (default)" in rs.source.provenance_line
    # traffic beside it: the built-in decision kept, the traffic's own stated beside it
    from audit.language import stamp_languages

    both = stamp_languages(rs, traffic=["Comment découper un long document en morceaux ?"] * 3)
    assert (both.settings["language"], both.settings["language_from"]) == ("en", "default")
    assert (both.source.provenance["traffic_language"], both.source.provenance["traffic_language_from"]) == \
        ("fr", "detected")
    assert "language en (default) · " in both.source.provenance_line
    assert both.source.provenance_line.count("traffic language fr (detected)") == 1


def test_a_bad_language_code_is_one_line(capsys):
    ex = ROOT / "data" / "example"
    assert main(["report", "--queries", str(ex / "queries.tsv"), "--qrels", str(ex / "qrels.trec"), "--run",
                 f"before={ex / 'before.trec'}", "--language", "French", "--no-history"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == \
        ["error: --language 'French': an ISO 639-1 code such as fr, de or ja"]


def test_a_set_without_documents_reads_a_sample_and_every_question_when_they_disagree():
    from audit.language import SAMPLE, decide_languages

    en = {f"e{i}": "How long are undelivered messages kept before they are deleted?" for i in range(3 * SAMPLE)}
    d = decide_languages((), en)
    assert (d.language, d.how, d.read) == ("en", "detected", SAMPLE)  # they agree: the sample decides
    assert set(d.questions.values()) == {"en"} and len(d.questions) == 3 * SAMPLE
    mixed = {**en, **{f"f{i}": "Combien de temps les messages non distribués sont-ils conservés avant suppression ?"
                      for i in range(SAMPLE)}}
    d = decide_languages((), mixed)
    assert d.read == SAMPLE + len(mixed) and d.language == "en,fr"  # two languages of 10%+: every question read
    assert d.questions["f0"] == "fr" and d.questions["e0"] == "en"
    # only sure readings count: 2,000 synthetic "question qN" (a benchmark's questions) are read as French or
    # Occitan with little confidence, so the set is undetermined after 200 readings, never 2,000
    from audit.language import SURE, _reading

    synthetic = {f"q{i}": f"question q{i}" for i in range(2000)}
    assert {c for c, _ in (_reading(synthetic[f"q{i}"]) for i in range(0, 2000, 10))} >= {"fr", "oc"}
    assert all(prob < SURE for _, prob in (_reading(synthetic[f"q{i}"]) for i in range(0, 2000, 10)))
    d = decide_languages((), synthetic)
    assert (d.language, d.how, d.read) == ("und", "detected", SAMPLE) and set(d.questions.values()) == {"und"}
    # a minority language under MIN_SHARE of the sure readings is not one of the set's: 5 in 200 French
    few = {**{f"e{i}": en["e0"] for i in range(195)}, **{f"f{i}": mixed["f0"] for i in range(5)}}
    assert decide_languages((), few).language == "en"
    assert decide_languages((), {"q": "12 34"}).how == "default"  # no letter: und, by default
    assert decide_languages((), en, given="de").questions["e1"] == "de"


# The matching view (needles) and BM25's tokens in other writing habits (docs/definitions.md, *Matching view*).
NB, NNB = "\u00a0", "\u202f"  # no-break space, narrow no-break space


def test_french_no_break_spaces_before_punctuation_match_a_typed_space_not_its_absence():
    from audit.matching import find_view

    doc = f"Pourquoi découper{NNB}? Voici l’en-tête{NB}: il aide{NB}; enfin{NNB}!"
    assert find_view(doc, "Pourquoi découper ?") is not None  # any whitespace is one space
    assert find_view(doc, "l’en-tête : il aide ; enfin !") is not None
    assert find_view(doc, "Pourquoi découper?") is None  # stated: a space and no space differ
    assert bm25_tokens(doc) == bm25_tokens("Pourquoi découper? Voici l’en-tête: il aide; enfin!")


def test_apostrophes_differ_in_the_view_and_separate_alike_in_bm25():
    from audit.matching import find_view

    doc = "c’est ce qu’on appelle l’en-tête"
    assert find_view(doc, "qu’on appelle l’en-tête") is not None
    assert find_view(doc, "qu'on appelle l'en-tête") is None  # stated: copy the needle as the document writes it
    for rule in ("unicode", "snowball"):
        assert bm25_tokens(doc, rule, "fr") == bm25_tokens(doc.replace("’", "'"), rule, "fr")


def test_guillemets_with_their_spaces_match_typed_spaces_not_straight_quotes():
    from audit.matching import find_view

    doc = f"ouvre un ticket «{NB}restauration{NB}» et attend"
    assert find_view(doc, "ouvre un ticket « restauration »") is not None
    assert find_view(doc, 'ouvre un ticket "restauration"') is None  # stated
    assert bm25_tokens(doc) == bm25_tokens('ouvre un ticket "restauration" et attend')


def test_german_sharp_s_is_kept_in_the_view_and_folded_to_ss_by_bm25():
    from audit.matching import find_view

    assert find_view("die Straße ist gesperrt", "Straße") is not None
    assert find_view("die Straße ist gesperrt", "Strasse") is None  # stated: the view does not fold case or ß
    for rule in ("unicode", "snowball"):
        assert bm25_tokens("Straße", rule, "de") == bm25_tokens("STRASSE", rule, "de") \
            == bm25_tokens("strasse", rule, "de")


def test_turkish_dotted_and_dotless_i_under_case_folding():
    from audit.matching import find_view

    assert find_view("İstanbul'da", "istanbul") is None  # stated: the view is case-sensitive
    assert bm25_tokens("İSTANBUL", "snowball", "tr") == bm25_tokens("istanbul", "snowball", "tr")
    assert bm25_tokens("İstanbul") == ["i", "stanbul"]  # stated: unicode keeps its tokens (i + U+0307 splits)
    # stated: casefold is not Turkish-aware: I folds to i, not to ı, so ISPARTA and ısparta differ
    assert bm25_tokens("ISPARTA", "snowball", "tr") != bm25_tokens("ısparta", "snowball", "tr")
    assert bm25_tokens("ılık", "snowball", "tr") == bm25_tokens("ILIK".replace("I", "ı"), "snowball", "tr")


def test_a_typed_query_is_read_in_one_of_the_documents_languages():
    from types import SimpleNamespace

    from audit.views.query_explorer import typed_language

    assert typed_language(SimpleNamespace(settings={}), "découper") is None
    assert typed_language(SimpleNamespace(settings={"languages": {"a": "fr"}}), "chunking") == "fr"
    mixed = SimpleNamespace(settings={"languages": {"a": "fr", "b": "de"}})
    assert typed_language(mixed, "Wie werden die täglichen Sicherungen aufbewahrt?") == "de"


def test_language_detection_reads_the_beginning_only():
    from audit.language import DETECT_CHARS

    text = "Les sauvegardes quotidiennes sont conservées quatorze jours. " * 40
    assert detect_language(text + "The daily backups are kept for fourteen days. " * 400) == "fr"
    assert len(text) > DETECT_CHARS


def test_audit_toml_sets_the_language_and_the_option_wins(tmp_path, monkeypatch):
    out = tmp_path / "c.jsonl"
    (tmp_path / "audit.toml").write_text('[ingest]\nlanguage = "de"\n', encoding="utf-8")
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    assert main(["corpus", "--corpus", str(_mixed(tmp_path)), "--jsonl", str(out)]) == 0
    assert {r["language"] for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())} == {"de"}
    assert main(["corpus", "--corpus", str(_mixed(tmp_path)), "--jsonl", str(out), "--language", "fr"]) == 0
    assert {r["language"] for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())} == {"fr"}
    (tmp_path / "audit.toml").write_text('[ingest]\nlanguage = "French"\n', encoding="utf-8")
    assert main(["corpus", "--corpus", str(_mixed(tmp_path)), "--jsonl", str(out)]) == 2


def test_each_token_rules_column_is_exported_as_its_own_run(tmp_path, monkeypatch):
    js = french_report(tmp_path, monkeypatch, "--bm25-tokens", "unicode,snowball")
    assert js["provenance"]["bm25_tokens"] == "unicode,snowball"
    from audit.groundtruth import load_ground_truth
    from audit.models import load_encoder
    from audit.chunking import parse_strategies
    from audit.report.export import export_trec
    from audit.sources.builtin import run_audit

    corpus = load_corpus(FRENCH / "docs")
    rs = run_audit(corpus, load_ground_truth(corpus, FRENCH / "gt.jsonl"), parse_strategies("E"),
                   load_encoder("hashing"), ("dense", "bm25"), reranker=None, bm25_tokens="unicode,snowball")
    files = {p.name for p in export_trec(rs, tmp_path / "trec")}
    assert {"E-dense.run", "E-bm25.run", "E-bm25-snowball.run"} <= files
    manifest = json.loads((tmp_path / "trec" / "runs.json").read_text(encoding="utf-8"))["runs"]
    assert [m.get("token_rule") for m in manifest] == [None, None, "snowball"]
    lines = (tmp_path / "trec" / "E-bm25-snowball.run").read_text(encoding="utf-8").splitlines()
    assert lines and all(line.endswith(" E-bm25-snowball") for line in lines)


def test_every_needle_of_the_french_ground_truth_is_accepted_french_typography_included():
    from audit.groundtruth import load_ground_truth

    corpus = load_corpus(FRENCH / "docs")
    gt = load_ground_truth(corpus, FRENCH / "gt.jsonl")
    assert len(gt.needles) == 9 and not gt.rejected
    text = "".join(d.text for d in corpus.documents)
    assert {"\u00a0", "\u202f", "’", "«", "»"} <= set(text)


# The optional stop-word list (issue 57): any token rule + "+stop" drops the stop words of the text's language first.
def test_stop_words_are_bm25s_lists_per_language_and_dropped_before_stemming():
    import bm25s.stopwords

    from audit.retrieval.bm25 import check_token_rule, stop_words

    assert stop_words("fr") == frozenset(bm25s.stopwords.STOPWORDS_FRENCH) and {"le", "des", "et"} <= stop_words("fr")
    assert stop_words("de") >= {"der", "und"} and stop_words("ja") == frozenset() == stop_words(None)
    text = "Le découpage des documents et les chunks"
    fr = Stemmer.Stemmer("french")
    # by hand: le, des, et, les are French stop words; the rest is stemmed by Snowball's French stemmer
    assert bm25_tokens(text, "snowball+stop", "fr") == fr.stemWords(["découpage", "documents", "chunks"])
    assert bm25_tokens(text, "unicode+stop", "fr") == ["découpage", "documents", "chunks"]
    assert bm25_tokens("The chunk of a document", "ascii+stop", "en") == ["chunk", "document"]
    assert bm25_tokens(text, "unicode+stop", "ja") == bm25_tokens(text, "unicode")  # no list: every token kept
    assert bm25_tokens(text, "unicode+stop", None) == bm25_tokens(text, "unicode")
    with pytest.raises(ValueError, match=r"each optionally with \+stop"):
        check_token_rule("unicode+stems")


def test_a_stop_word_column_is_compared_and_keyed_apart(tmp_path, monkeypatch):
    from audit.retrieval.bm25 import postings_key

    texts = ["le chunk"] * 3
    assert postings_key(texts, "unicode") != postings_key(texts, "unicode+stop", languages=["fr"] * 3)
    assert postings_key(texts, "unicode+stop", languages=["fr"] * 3) != \
        postings_key(texts, "unicode+stop", languages=["en"] * 3)  # the list read depends on the language
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    fr = ROOT / "data" / "french"
    assert main(["report", "--corpus", str(fr / "docs"), "--ground-truth", str(fr / "gt.jsonl"), "--model", "hashing",
                 "--reranker", "none", "--strategies", "E", "--retrievers", "bm25", "--bm25-tokens",
                 "unicode,snowball+stop", "--no-cache", "--quiet", "--no-history", "--json", str(out)]) == 0
    js = json.loads(out.read_text(encoding="utf-8"))
    assert {r["name"]: r["token_rule"] for r in js["results"]} == {"E/bm25": "unicode",
                                                                    "E/bm25-snowball+stop": "snowball+stop"}
    assert any(c["a"] == "E/bm25-snowball+stop" and c["b"] == "E/bm25" for c in js["comparisons"])
    assert js["provenance"]["bm25_tokens"] == "unicode,snowball+stop"


def test_the_model_loaded_in_a_thread_is_the_one_detection_uses():
    """``report`` starts decompressing py3langid's model in a thread while a source loads: detection then finds
    that one model (a caller arriving during the load waits for it rather than loading a second)."""
    import audit.language as language

    language.preload_identifier().join()
    first = language._identifier()
    language.preload_identifier().join()  # a second preload keeps the loaded model
    assert language._identifier() is first
    assert detect_language("Le chat est assis sur le tapis et regarde la fenêtre.") == "fr"
