"""The language of a document or a question, and the Snowball stemmer that goes with it.

Languages are ISO 639-1 codes (``fr``, ``de``, ``ja``). Detection is py3langid's (a maintained fork of
langid.py: a small naive-Bayes model shipped inside the wheel, 97 languages, offline, no network and no model
download, deterministic, ISO 639-1 codes out): :func:`detect_language` for one text, :func:`document_languages`
for a corpus and :func:`question_languages` for questions, which are read as one of the corpus's languages (a
ten-word question is too short to be told from every language of the world; it is told among the ones its
documents are written in). ``--language`` (:func:`document_languages`'s ``override``) replaces detection.

The BM25 token rule ``snowball`` stems each token with the Snowball stemmer of its text's language through
PyStemmer (:func:`stem_words`); :data:`SNOWBALL` lists the languages it has. A text of any other language keeps
its ``unicode`` tokens unstemmed (docs/definitions.md, *BM25*).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

__all__ = ["DETECT_CHARS", "ENGLISH_MODELS", "LANGUAGE_FROM", "MIN_SHARE", "SAMPLE", "SURE", "SNOWBALL", "LanguageDecision",
           "corpus_language", "decide_languages", "dense_language_notice", "detect_language", "document_languages",
           "language_words", "preload_identifier", "question_languages", "stamp_languages", "stem_words",
           "stemmer_name", "traffic_language"]

#: ISO 639-1 code → PyStemmer's Snowball algorithm (``Stemmer.algorithms()``).
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish", "nl": "dutch",
    "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french", "de": "german",
    "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian", "fa": "persian", "pl": "polish",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}

#: Dense models trained on English text only: a corpus in another language is out of their language.
ENGLISH_MODELS = ("all-MiniLM-L6-v2", "all-mpnet-base-v2", "sentence-transformers/all-MiniLM-L6-v2",
                  "sentence-transformers/all-mpnet-base-v2")


#: Characters of a text read to tell its language (its beginning): enough for py3langid to be sure, and a long
#: document costs no more than a short one (105 ms for a 6,000-character document read whole).
DETECT_CHARS = 2000


_MODEL_LOCK = threading.Lock()
_model = None


def _identifier():
    """py3langid's identifier, loaded once (its model is LZMA-compressed: ~0.3 s to decompress); a caller that
    comes while :func:`preload_identifier`'s thread loads it waits for that load instead of making its own."""
    global _model
    with _MODEL_LOCK:
        if _model is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            _model = LanguageIdentifier.from_model_file(MODEL_FILE)
        return _model


def release_identifier() -> None:
    """Drop py3langid's loaded model (about 70 MB): a one-shot command that has decided its languages calls this
    before its largest step (a 1M-query report's history record); a later detection loads it again."""
    global _model
    with _MODEL_LOCK:
        _model = None


def preload_identifier() -> threading.Thread:
    """Start loading py3langid's model (:func:`_identifier`) in a background thread and return it: a command that
    will detect languages after a long read starts this first, and the decompression (which releases the GIL)
    overlaps the read. A failure is left to the caller of :func:`_identifier`, which then loads and raises."""

    def load():
        try:
            _identifier()
        except Exception:  # noqa: BLE001 - the detection that needs the model raises it again
            pass

    t = threading.Thread(target=load, name="py3langid-model", daemon=True)
    t.start()
    return t


def detect_language(text: str, among: Iterable[str] | None = None) -> str:
    """The ISO 639-1 code of ``text``'s language.

    Parameters
    ----------
    text : str
        Its first :data:`DETECT_CHARS` characters are read.
    among : iterable of str, optional
        Codes to choose from (the best-ranked of them); None: any of py3langid's 97.

    Returns
    -------
    str
        The code; ``und`` (undetermined) for a text without a letter.
    """
    text = text[:DETECT_CHARS]
    if not any(ch.isalpha() for ch in text):
        return "und"
    ranked = _identifier().rank(text)
    if among is not None:
        allowed = set(among)
        ranked = [x for x in ranked if x[0] in allowed] or ranked
    return str(ranked[0][0])


def _reading(text: str) -> tuple[str, float]:
    """``text``'s language and py3langid's probability of it, normalised over its languages (softmax of its
    log-probabilities); ``("und", 0.0)`` for a text without a letter."""
    import math

    text = text[:DETECT_CHARS]
    if not any(ch.isalpha() for ch in text):
        return "und", 0.0
    ranked = _identifier().rank(text)
    top = ranked[0][1]
    return str(ranked[0][0]), 1.0 / sum(math.exp(v - top) for _, v in ranked)


def document_languages(documents, override: str | None = None) -> dict[str, str]:
    """``doc_id → language`` of each document (its ``text``), or ``override`` for every one."""
    return {d.doc_id: override or detect_language(d.text) for d in documents}


def corpus_language(languages: Mapping[str, str]) -> str:
    """The corpus's languages by number of documents, most first, comma-separated (``fr`` or ``fr,de``)."""
    counts = Counter(languages.values())
    return ",".join(code for code, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def question_languages(texts: Mapping[str, str], corpus_languages: Iterable[str],
                       override: str | None = None) -> dict[str, str]:
    """``query id → language`` of each question (``texts``: id → text), told among ``corpus_languages``."""
    among = [c for c in dict.fromkeys(corpus_languages) if c != "und"] or None
    if override:
        return {qid: override for qid in texts}
    if among is not None and len(among) == 1:
        return {qid: among[0] for qid in texts}
    return {qid: detect_language(t, among) for qid, t in texts.items()}


def stemmer_name(language: str | None) -> str | None:
    """PyStemmer's algorithm for ``language`` (:data:`SNOWBALL`), or None when Snowball has none."""
    return SNOWBALL.get(language or "")


@lru_cache(maxsize=None)
def _stemmer(algorithm: str):
    import Stemmer

    return Stemmer.Stemmer(algorithm)


def stem_words(words: Sequence[str], language: str | None) -> list[str]:
    """``words`` stemmed by the Snowball stemmer of ``language``; unchanged when Snowball has none for it."""
    algorithm = stemmer_name(language)
    if algorithm is None:
        return list(words)
    return _stemmer(algorithm).stemWords(list(words))


def dense_language_notice(model: str | None, corpus_language: str | None) -> str | None:
    """A sentence when ``model`` is English-trained (:data:`ENGLISH_MODELS`) and the corpus's main
    language (the first of ``corpus_language``, :func:`audit.language.corpus_language`) is not English; else None."""
    if not model or not corpus_language:
        return None
    main = corpus_language.split(",")[0]
    short = model.rstrip("/").split("/")[-1]
    if main in ("en", "und") or short not in {m.split("/")[-1] for m in ENGLISH_MODELS}:
        return None
    return (f"the dense model {model} was trained on English text only and this corpus is in {main}: its figures "
            "measure a model out of its language (a multilingual model, --model, measures one in it)")


#: How a language was decided: ``given`` (``--language``, audit.toml's ``[ingest] language``, the sidebar),
#: ``detected`` (py3langid over the documents, else the questions), ``default`` (nothing to read it from: the
#: built-in corpus, Python's English reference; or no text at all, ``und``).
LANGUAGE_FROM = ("given", "detected", "default")

#: Questions read to tell the language of a set without documents (evenly spread over it): when one language holds
#: :data:`MIN_SHARE` of them or more and no other does, every question is that language; when several do, every
#: question is read, told among those (a mixed set).
SAMPLE = 200
#: The share of the sample's sure readings a language must hold to be one of the set's.
MIN_SHARE = 0.1
#: A reading is sure when py3langid gives its language this probability or more (normalised over its languages).
SURE = 0.9


@dataclass(frozen=True)
class LanguageDecision:
    """The languages of one audit and how they were decided.

    Attributes
    ----------
    language : str
        The main languages, most documents (else questions) first, comma-separated (``fr``, ``fr,de``); ``und``
        when nothing had a letter.
    how : {"given", "detected", "default"}
        :data:`LANGUAGE_FROM`.
    documents : dict
        ``doc_id → code`` (empty without documents).
    questions : dict
        ``query id → code``.
    read : int
        Texts the detector read (0 when given or by default).
    """

    language: str
    how: str
    documents: dict = field(default_factory=dict)
    questions: dict = field(default_factory=dict)
    read: int = 0


def language_words(language: str | None, how: str | None) -> str:
    """``language fr (detected)``: the provenance line's words; '' with no language."""
    if not language:
        return ""
    return f"language {language}" + (f" ({how})" if how else "")


def _spread(n: int, k: int) -> list[int]:
    """``k`` indices evenly spread over ``range(n)`` (all of them when ``n <= k``)."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def decide_languages(documents: Sequence = (), questions: Mapping[str, str] | None = None, given: str | None = None,
                     default: str | None = None) -> LanguageDecision:
    """The languages of an audit's documents and questions, and how they were decided (:data:`LANGUAGE_FROM`).

    Parameters
    ----------
    documents : sequence of Document
        The corpus's documents (each with ``doc_id`` and ``text``); may be empty (a team's runs without a corpus,
        traffic).
    questions : mapping query id → text
        The questions (texts may be empty: a record without its question).
    given : str, optional
        An ISO 639-1 code for every document and question: ``how = "given"``.
    default : str, optional
        The code when nothing is to be read (the built-in corpus: ``en``): ``how = "default"``.

    Returns
    -------
    LanguageDecision
        With documents: each detected (:func:`document_languages`), each question told among their languages
        (:func:`question_languages`). Without: :data:`SAMPLE` questions spread over the set are read, and the
        readings py3langid is sure of (:data:`SURE`) count; when one language holds :data:`MIN_SHARE` of them and
        no other does, every question has it, else every question is read and told among the languages that do;
        none sure: ``und``, detected. No text with a letter: ``und``, ``default``.
    """
    questions = dict(questions or {})
    if given:
        return LanguageDecision(given, "given", {d.doc_id: given for d in documents}, dict.fromkeys(questions, given))
    if default:
        docs = {d.doc_id: default for d in documents}
        return LanguageDecision(default, "default", docs, question_languages(questions, [default]))
    docs = document_languages(documents)
    if docs and set(docs.values()) != {"und"}:
        return LanguageDecision(corpus_language(docs), "detected", docs, question_languages(questions, docs.values()),
                                len(docs) + (len(questions) if len(set(docs.values()) - {"und"}) > 1 else 0))
    ids = [q for q, t in questions.items() if t and any(map(str.isalpha, t))]  # map: no generator a question
    if not ids:
        return LanguageDecision("und", "default", docs, dict.fromkeys(questions, "und"))
    sample = [ids[i] for i in _spread(len(ids), SAMPLE)]
    # only sure readings count (py3langid's probability, normalised over its languages, SURE or more): a short
    # question is read as some language with little confidence ("question q17": French at 0.65, Occitan beside it)
    sure = [c for c, prob in (_reading(questions[q]) for q in sample) if prob >= SURE]
    if not sure:
        return LanguageDecision("und", "detected", docs, dict.fromkeys(questions, "und"), len(sample))
    counts = Counter(sure)
    codes = sorted(c for c, n in counts.items() if n >= MIN_SHARE * len(sure))
    if len(codes) == 1:
        (code,) = codes
        return LanguageDecision(code, "detected", docs, dict.fromkeys(questions, code), len(sample))
    rest = {q: detect_language(questions[q], codes) for q in ids}
    qs = {q: rest.get(q) or "und" for q in questions}
    return LanguageDecision(corpus_language(rest), "detected", docs, qs, len(sample) + len(ids))


def traffic_language(texts: Iterable[str], given: str | None = None) -> LanguageDecision:
    """The language of traffic from the texts of some of its questions (:meth:`audit.traffic.table.TrafficTable.
    sample_texts`), decided as a set of questions without documents is (:func:`decide_languages`)."""
    return decide_languages((), {str(i): x for i, x in enumerate(t for t in texts if t)}, given)


def stamp_languages(runset, given: str | None = None, traffic=None):
    """``runset`` with its languages decided (:func:`decide_languages` over its corpus's documents and its questions'
    texts) and stated: ``settings`` gains ``languages`` (document → code), ``question_languages``, ``language`` and
    ``language_from``; the source's provenance gains ``language`` and ``language_from`` and its line
    ``language fr (detected)``. A run set whose source decided already (the built-in pipelines: their BM25 reads
    the languages) keeps its decision.

    ``traffic``: texts of the traffic's questions (an iterable of str, e.g.
    :meth:`audit.traffic.table.TrafficTable.sample_texts`): their language is decided the same way and stated as
    ``traffic_language`` / ``traffic_language_from`` (and decides the run set's when it has no question of its own:
    traffic read alone).
    """
    done = bool(runset.settings.get("language_from"))
    if done and traffic is None:
        return runset
    stamp: dict = {}
    words: list[str] = []
    settings = dict(runset.settings)
    if not done:
        corpus = runset.corpus
        docs = [d for d in corpus.documents if getattr(d, "text", "")] if corpus is not None else []
        decided = decide_languages(docs, {q.query_id: q.text for q in runset.queries}, given)
        t = traffic_language(traffic, given) if traffic is not None else None
        if t is not None and not runset.queries and not docs:
            decided = LanguageDecision(t.language, t.how, {}, {}, t.read)
        stamp = {"language": decided.language, "language_from": decided.how}
        settings.update(languages=decided.documents, question_languages=decided.questions)
        words.append(language_words(decided.language, decided.how))
    else:
        t = traffic_language(traffic, given)
    if t is not None:
        stamp.update(traffic_language=t.language, traffic_language_from=t.how)
        words.append(f"traffic {language_words(t.language, t.how)}")
    settings.update(stamp)
    prov = {**runset.source.provenance, **stamp}
    line, said = runset.source.provenance_line, " · ".join(words)
    if " · retrieval-audit " in line:
        head, _, tail = line.rpartition(" · retrieval-audit ")
        line = f"{head} · {said} · retrieval-audit {tail}"
    else:
        line = f"{line} · {said}" if line else said
    return replace(runset, settings=settings, source=replace(runset.source, provenance=prov, provenance_line=line))
