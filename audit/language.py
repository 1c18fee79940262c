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

from collections import Counter
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

__all__ = ["DETECT_CHARS", "ENGLISH_MODELS", "SNOWBALL", "corpus_language", "dense_language_notice", "detect_language",
           "document_languages", "question_languages", "stem_words", "stemmer_name"]

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


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)


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
