"""BM25 with the specification's formula, on rank-bm25 or bm25s (the same scores).

``k1 = 1.2``, ``b = 0.75``, ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))`` (Robertson & Zaragoza
2009; docs/definitions.md, *BM25*). Only chunks of positive score are returned.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Iterable, Sequence

import numpy as np

from ..scores import canonical_scores
from .ranking import Ranking, order
from .scripts import cjk_bigram_tokens, has_unspaced

__all__ = ["BM25", "BM25S_MIN_DOCS", "POSTINGS_FORMAT", "STOP", "TOKEN_RULES", "bm25_index", "bm25_tokens",
           "check_token_rule", "postings_key", "reads_language", "stop_words", "unspaced_misses"]


_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_UNICODE_TOKEN = re.compile(r"[^\W_]+")

#: BM25 token rules: ``unicode`` (the default), ``ascii`` (the specification's), ``cjk-bigrams``
#: (``unicode`` with character bigrams over Han, Kana, Hangul and Thai runs: :mod:`audit.retrieval.scripts`) and
#: ``snowball`` (``unicode`` stemmed by the Snowball stemmer of the text's language: :mod:`audit.language`).
TOKEN_RULES = ("unicode", "ascii", "cjk-bigrams", "snowball")

#: The optional stop-word list: any rule + this suffix (``unicode+stop``, ``snowball+stop``) drops the stop words of
#: the text's language before stemming (:func:`stop_words`).
STOP = "+stop"

#: ISO 639-1 code → the stop-word list of bm25s (``bm25s.stopwords``, the package this project's BM25 runs on): the
#: Snowball project's lists as NLTK ships them, and Lucene's 33 English words. Every other language has none.
_STOP_LISTS = {"en": "STOPWORDS_EN", "da": "STOPWORDS_DANISH", "nl": "STOPWORDS_DUTCH", "fr": "STOPWORDS_FRENCH",
               "de": "STOPWORDS_GERMAN", "it": "STOPWORDS_ITALIAN", "no": "STOPWORDS_NORWEGIAN",
               "nb": "STOPWORDS_NORWEGIAN", "pt": "STOPWORDS_PORTUGUESE", "ru": "STOPWORDS_RUSSIAN",
               "es": "STOPWORDS_SPANISH", "sv": "STOPWORDS_SWEDISH", "tr": "STOPWORDS_TURKISH"}


def stop_words(language: str | None) -> frozenset:
    """The stop words of ``language`` (casefolded), from bm25s' lists (:data:`_STOP_LISTS`); empty for a language
    without one, or None."""
    name = _STOP_LISTS.get(language or "")
    if name is None:
        return frozenset()
    return _stop_list(name)


def _stop_list(name: str) -> frozenset:
    return _STOP_CACHE.get(name) or _STOP_CACHE.setdefault(name, _load_stop_list(name))


_STOP_CACHE: dict = {}


def _load_stop_list(name: str) -> frozenset:
    import bm25s.stopwords

    return frozenset(w.casefold() for w in getattr(bm25s.stopwords, name))


def reads_language(rule: str) -> bool:
    """Whether ``rule``'s tokens depend on the text's language (``snowball``, and any rule with :data:`STOP`)."""
    return rule.startswith("snowball") or rule.endswith(STOP)


def check_token_rule(rule: str) -> str:
    """``rule`` when it is a token rule (:data:`TOKEN_RULES`, each optionally with :data:`STOP`).

    Raises
    ------
    ValueError
        Another name, the message naming the choices.
    """
    base = rule[: -len(STOP)] if rule.endswith(STOP) else rule
    if base not in TOKEN_RULES:
        raise ValueError(f"BM25 token rule {rule!r} is unknown; choose one of {', '.join(TOKEN_RULES)}, each "
                         f"optionally with {STOP} (stop words dropped: unicode{STOP})")
    return rule


def bm25_tokens(text: str, rule: str = "unicode", language: str | None = None) -> list[str]:
    """BM25 tokens of ``text`` (docs/definitions.md, *BM25*).

    Parameters
    ----------
    text : str
    rule : {"unicode", "ascii", "cjk-bigrams", "snowball"}
        ``unicode``: the maximal runs of Unicode letters or digits
        (``[^\\W_]+``; the underscore separates) in the ``str.casefold()`` of the
        text's reader form (NFC, format characters of category ``Cf`` removed:
        :func:`audit.matching.reader_form`), so every script has tokens.
        Identical to ``ascii`` on ASCII text. ``ascii``: the specification's
        ``[a-z0-9]+`` of the lower-cased text. ``cjk-bigrams``: ``unicode``,
        except that runs of Han, Hiragana, Katakana, Hangul and Thai letters
        become their character bigrams
        (:func:`audit.retrieval.scripts.cjk_bigram_tokens`). ``snowball``: the
        ``unicode`` tokens stemmed by the Snowball stemmer of ``language``
        (PyStemmer, :func:`audit.language.stem_words`); unstemmed when
        Snowball has no stemmer for it or ``language`` is None. Before
        tokenising, ``i`` + U+0307 (what ``casefold`` makes of Turkish ``İ``)
        is ``i``, so ``İstanbul`` is one token (``unicode`` cuts it in two).
        Any rule + ``+stop`` (:data:`STOP`): its tokens less the stop words of ``language``
        (:func:`stop_words`), dropped before stemming; a language without a list keeps every token.
    language : str or None
        The text's ISO 639-1 code (``snowball`` and ``+stop``).

    Raises
    ------
    ValueError
        Unknown ``rule``.
    """
    if rule.endswith(STOP):
        check_token_rule(rule)
        base = rule[: -len(STOP)]
        stop = stop_words(language)
        if base == "snowball":
            from ..language import stem_words

            return stem_words([t for t in _snowball_words(text) if t not in stop], language)
        return [t for t in bm25_tokens(text, base, language) if t not in stop]
    if rule == "unicode":
        from ..matching import reader_form

        return _UNICODE_TOKEN.findall(reader_form(text).casefold())
    if rule == "ascii":
        return _ASCII_TOKEN.findall(text.lower())
    if rule == "cjk-bigrams":
        return cjk_bigram_tokens(text)
    if rule == "snowball":
        from ..language import stem_words

        return stem_words(_snowball_words(text), language)
    raise ValueError(f"BM25 token rule {rule!r} is unknown; choose one of {', '.join(TOKEN_RULES)}")


def _snowball_words(text: str) -> list[str]:
    """``snowball``'s tokens before stemming: ``unicode``'s, with Turkish ``İ`` read as ``i``."""
    from ..matching import reader_form

    # casefold turns Turkish İ into i + U+0307 (COMBINING DOT ABOVE), which no regex \w holds: i alone
    return _UNICODE_TOKEN.findall(reader_form(text).casefold().replace("i\u0307", "i"))


#: Corpus size (chunks) from which ``BM25(backend="auto")`` uses bm25s instead of
#: rank-bm25. Measured on the built-in corpus (docs/benchmarks.md): bm25s builds
#: in about twice rank-bm25's time but answers a query 9x (200 chunks) to 30x
#: (1,252 chunks) faster, so it is ahead after ~10 queries at any size; below
#: 200 chunks both answer in under half a millisecond and rank-bm25, the
#: reference the tests compute by hand, is kept.
BM25S_MIN_DOCS = 200


_BM25_BACKENDS = ("auto", "rank-bm25", "bm25s")


class BM25:
    """BM25 over chunk texts with the specification's idf.

    The specification's formula (k1, b, tokens of :func:`bm25_tokens`,
    ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, always positive, repeated
    query terms counted each time) on one of two engines that give the same
    scores (``tests/test_retrieval_bm25s.py``):

    - ``rank-bm25``: ``BM25Okapi`` with its idf replaced by the
      specification's (rank-bm25 floors ``ln((N - n + 0.5)/(n + 0.5))``, which
      is 0 for a term in half the documents, so ``"alpha report"`` against
      ``["alpha report", "beta manual"]`` would score 0). Scores a query with a
      Python loop over every chunk: linear in the corpus, seconds at 1M chunks.
    - ``bm25s``: ``method="lucene"`` (the same idf) precomputes every
      (term, chunk) weight into sparse posting lists, so a query touches only
      the chunks holding its terms. Lucene drops BM25's ``(k1 + 1)``
      numerator factor, a constant: scores are multiplied back by it.

    Parameters
    ----------
    texts : sequence of str
        The chunk texts (the embedded ``text``, header included).
    k1, b : float
        1.2 and 0.75 (specification).
    backend : {"auto", "rank-bm25", "bm25s"}
        ``auto``: bm25s from :data:`BM25S_MIN_DOCS` chunks on (when it is
        installed), rank-bm25 below.
    tokens : {"unicode", "ascii", "cjk-bigrams", "snowball"}
        The token rule of :func:`bm25_tokens`, for chunks and queries alike.
    languages : sequence of str, optional
        Each text's ISO 639-1 code (``snowball``: the stemmer of each chunk); None: no stemming.
    language : str or None
        The language a query is read in when :meth:`rank` is not told (``snowball``): the corpus's main one.

    Attributes
    ----------
    vocabulary : frozenset of str
        Every token of the chunks (what a query token must be to score).

    Raises
    ------
    ValueError
        Unknown ``backend`` or token rule.
    ImportError
        ``backend="bm25s"`` without the bm25s package (``pip install bm25s``).
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75, backend: str = "auto",
                 tokens: str = "unicode", languages: Sequence[str] | None = None,
                 language: str | None = None) -> None:
        if backend not in _BM25_BACKENDS:
            raise ValueError(f"BM25 backend {backend!r} is unknown; choose one of {', '.join(_BM25_BACKENDS)}")
        check_token_rule(tokens)
        self.tokens = tokens
        self.language = language
        self.k1, self.b = k1, b
        self.n_docs = len(texts)
        if backend == "auto":
            backend = "bm25s" if self.n_docs >= BM25S_MIN_DOCS and _bm25s_version() else "rank-bm25"
        self.backend = backend
        langs = list(languages) if languages is not None else [None] * len(texts)
        tokenized = [bm25_tokens(t, tokens, lang) for t, lang in zip(texts, langs)]
        self.vocabulary = frozenset(t for toks in tokenized for t in toks)
        self._empty = self.n_docs == 0 or not any(tokenized)
        self._impl = None
        self._post = None
        if self._empty:
            return
        if backend == "bm25s":
            import bm25s

            impl = bm25s.BM25(k1=k1, b=b, method="lucene", dtype="float64")
            impl.index(tokenized, show_progress=False)
            self._impl = impl
            self._post = (impl.vocab_dict, impl.scores["data"], impl.scores["indices"], impl.scores["indptr"])
            return
        from rank_bm25 import BM25Okapi

        class _SpecBM25(BM25Okapi):
            def _calc_idf(self, nd):  # the specification's idf, no floor needed
                for word, n in nd.items():
                    self.idf[word] = math.log(1.0 + (self.corpus_size - n + 0.5) / (n + 0.5))

        self._impl = _SpecBM25(tokenized, k1=k1, b=b)

    def postings(self) -> dict[str, np.ndarray] | None:
        """bm25s' posting lists, to store and restore (:meth:`from_postings`); None on rank-bm25 or no token.

        Returns
        -------
        dict or None
            ``terms`` (uint8: the UTF-8 of every vocabulary term, NUL-separated, in the order of their column;
            a term never holds NUL), ``data`` (float64, one weight per (term, chunk) posting), ``indices``
            (the postings' chunk positions) and ``indptr`` (each term's first posting), as bm25s holds them.
        """
        if self._post is None:
            return None
        vocab, data, indices, indptr = self._post
        terms = "\0".join(sorted(vocab, key=vocab.get)).encode("utf-8")
        return {"terms": np.frombuffer(terms, dtype=np.uint8), "data": data, "indices": indices, "indptr": indptr}

    @classmethod
    def from_postings(cls, n_docs: int, postings: dict[str, np.ndarray], k1: float = 1.2, b: float = 0.75,
                      tokens: str = "unicode", language: str | None = None) -> "BM25":
        """The index :meth:`postings` came from, without bm25s or the chunk texts: the same scores to the bit.

        ``n_docs`` is the number of chunks it was built over; ``k1``, ``b`` and ``tokens`` are the ones it was built
        with (:func:`postings_key` holds them in the key a cache stores it under); ``language`` is the queries'
        default language (``snowball``).
        """
        self = cls.__new__(cls)
        self.language = language
        self.tokens, self.k1, self.b, self.n_docs, self.backend = tokens, k1, b, int(n_docs), "bm25s"
        terms = bytes(np.asarray(postings["terms"], dtype=np.uint8)).decode("utf-8").split("\0")
        vocab = {t: j for j, t in enumerate(terms)}
        self.vocabulary = frozenset(t for t in terms if t)  # bm25s adds an empty term no text has
        self._empty, self._impl = False, None
        self._post = (vocab, postings["data"], postings["indices"], postings["indptr"])
        return self

    def scores(self, query: str, language: str | None = None) -> np.ndarray:
        """BM25 score of every chunk for ``query`` (read in ``language``, default :attr:`language`), float64,
        shape ``(n_chunks,)``."""
        if self._impl is None and self._post is None:
            return np.zeros(self.n_docs)
        toks = self.query_tokens(query, language)
        if not toks:
            return np.zeros(self.n_docs)
        if self.backend == "bm25s":
            return self._bm25s_scores(toks)
        return np.asarray(self._impl.get_scores(toks), dtype=np.float64)

    def query_tokens(self, query: str, language: str | None = None) -> list[str]:
        """The query's tokens under this index's rule, read in ``language`` (default :attr:`language`; empty: BM25
        cannot score it)."""
        return bm25_tokens(query, self.tokens, language or getattr(self, "language", None))

    def _bm25s_scores(self, toks: list[str]) -> np.ndarray:
        # bm25s' posting lists (CSC over terms): data = idf * tf / (tf + k1 * (1 - b + b * |d| / avg)).
        # One bincount per query term (a repeated term counts again, as in the specification's loop).
        vocab, data, indices, indptr = self._post
        out = np.zeros(self.n_docs)
        for t in toks:
            j = vocab.get(t)
            if j is None:
                continue
            lo, hi = indptr[j], indptr[j + 1]
            if hi > lo:
                out += np.bincount(indices[lo:hi], weights=data[lo:hi], minlength=self.n_docs)
        out *= self.k1 + 1.0
        return out

    def rank(self, query: str, k: int | None = None, language: str | None = None) -> Ranking:
        """Chunks with a positive score, best first (ties by chunk id).

        Scores equal to 9 decimals are ties: a sum of the same BM25 terms in
        another order can differ in its last bit, and which engine (or
        summation order) is used must not decide the order of a tie.
        ``k``: keep only the first ``k`` (the same chunks, in the same order,
        as the first ``k`` of the full ranking) without sorting the rest.
        ``language``: the query's (``snowball``; default :attr:`language`).
        """
        s = self.scores(query, language)
        ids = np.flatnonzero(s > 0).astype(np.int64)
        sub = canonical_scores(s[ids])  # 9 decimals: the engine's summation order never decides a tie
        key = sub
        if k is not None and 0 <= k < ids.size:
            # the k-th best key; everything strictly above it, then ties at it by chunk id
            kth = np.partition(key, ids.size - k)[ids.size - k] if k else np.inf
            above = key > kth
            tie = key == kth
            keep = above | (tie & (np.cumsum(tie) <= k - int(above.sum())))
            ids, sub, key = ids[keep], sub[keep], key[keep]
        o = order(key, ids, ascending=False)
        return Ranking(ids[o], sub[o], "BM25 score")


def _bm25s_version() -> str | None:
    """The installed bm25s's version, without importing it (0.24 s of scipy.sparse); None when absent."""
    from importlib import metadata

    try:
        return metadata.version("bm25s")
    except metadata.PackageNotFoundError:
        return None


#: Bump when what :meth:`BM25.postings` holds, or how it is scored, changes: older stored postings are then unused.
POSTINGS_FORMAT = 1


def postings_key(texts: Sequence[str], tokens: str = "unicode", k1: float = 1.2, b: float = 0.75,
                 languages: Sequence[str] | None = None) -> bytes | None:
    """32-byte key of the BM25 index of ``texts``: sha256 of (format, bm25s version, token rule, k1, b, the number of
    texts, each text's sha256 in order, and under ``snowball`` each text's language and PyStemmer's version). None
    when bm25s is absent (nothing to store).

    The same texts under another rule, k1, b or engine version never share a key, so a stored index is
    reused only where building it again would give the same postings (docs/definitions.md, *BM25*).
    """
    version = _bm25s_version()
    if version is None:
        return None
    h = hashlib.sha256(f"bm25\0{POSTINGS_FORMAT}\0{version}\0{tokens}\0{k1!r}\0{b!r}\0{len(texts)}\0".encode())
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    if reads_language(tokens):
        from importlib import metadata

        h.update(f"PyStemmer\0{metadata.version('PyStemmer')}\0".encode())
        for lang in (languages if languages is not None else [None] * len(texts)):
            h.update(f"{lang or ''}\0".encode())
    return h.digest()


def bm25_index(texts: Sequence[str], tokens: str = "unicode", cache=None, languages: Sequence[str] | None = None,
               language: str | None = None) -> BM25:
    """``BM25(texts, tokens=tokens, languages=languages, language=language)``, restored from ``cache`` when the same
    index was built before.

    Parameters
    ----------
    texts : sequence of str
        The chunk texts.
    tokens : str
        The token rule (:data:`TOKEN_RULES`).
    cache : EmbeddingCache or None
        Where postings are kept (:meth:`audit.index.EmbeddingCache.get_postings`, keyed by
        :func:`postings_key`). Only a bm25s index (:data:`BM25S_MIN_DOCS` chunks or more) is stored: a
        smaller one builds in milliseconds.
    languages, language : optional
        Each text's language and the queries' default one (:class:`BM25`; the key holds ``languages``).

    Returns
    -------
    BM25
        Scores, rankings and vocabulary equal to the ones a fresh build gives (``tests/test_bm25_postings.py``).
    """
    texts = list(texts)
    key = (postings_key(texts, tokens, languages=languages) if cache is not None and len(texts) >= BM25S_MIN_DOCS
           else None)
    if key is not None:
        got = cache.get_postings(key)
        if got is not None:
            return BM25.from_postings(len(texts), got, tokens=tokens, language=language)
    bm = BM25(texts, tokens=tokens, languages=languages, language=language)
    if key is not None and bm.postings() is not None:
        cache.put_postings(key, bm.postings())
    return bm


def unspaced_misses(texts: Sequence[str], vocabulary: Iterable[str] | frozenset, rule: str) -> list[int]:
    """Positions of the queries whose words in an unspaced script match no chunk token under ``rule``.

    Parameters
    ----------
    texts : sequence of str
        The queries.
    vocabulary : set of str
        Every token of the chunks under ``rule`` (:attr:`audit.retrieval.BM25.vocabulary`).
    rule : str
        The token rule in force (:data:`audit.retrieval.TOKEN_RULES`).

    Returns
    -------
    list of int
        Queries holding an unspaced letter none of whose tokens holding one is in ``vocabulary``
        (``ascii``: such letters make no token at all). Always empty under ``cjk-bigrams``: a miss
        there is a word the chunks do not hold, not its script. A query with no token at all is
        listed too; callers that already report it (``bm25_no_token``) leave it out.
    """
    if rule == "cjk-bigrams":
        return []
    vocab = vocabulary if isinstance(vocabulary, (set, frozenset)) else set(vocabulary)
    out = []
    for i, text in enumerate(texts):
        if not has_unspaced(text):
            continue
        if not any(t in vocab for t in bm25_tokens(text, rule) if has_unspaced(t)):
            out.append(i)
    return out
