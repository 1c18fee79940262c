"""Scripts written without spaces between words, for BM25: the ``cjk-bigrams`` token rule and the warning.

Chinese, Japanese and Thai put no space between words, and Korean attaches particles to its words:
under the ``unicode`` rule a whole phrase is one token (``如何轮换密钥``), which matches no chunk
token unless the chunk holds that exact phrase between two non-letters, so BM25 scores the query 0.

- :func:`cjk_bigram_tokens`: the rule ``cjk-bigrams``. The maximal runs of **unspaced letters** become
  their overlapping character bigrams (a run of one character stays one token), as Lucene's
  ``CJKBigramFilter`` does for Han, Hiragana, Katakana and Hangul (here Thai too); the text between
  runs gets the ``unicode`` rule's tokens unchanged.
- :func:`has_unspaced`: whether a text holds such a letter; the queries whose unspaced words match no
  chunk token under the rule in force (the per-query warning of the report and the pages) are
  :func:`audit.retrieval.bm25.unspaced_misses`.

An **unspaced letter** is a character whose Unicode ``Script_Extensions`` include Han, Hiragana,
Katakana, Hangul or Thai and whose general category is a letter, mark or number (so ``ー``, ``々``,
the combining kana voicing marks and Thai vowel and tone marks belong to their run; ``、`` and ``。``
do not). Both rules read the same text as ``unicode``: the NFC form without ``Cf`` characters,
casefolded (:func:`audit.matching.reader_form`).
"""

from __future__ import annotations

import re

import regex

__all__ = ["UNSPACED_SCRIPTS", "cjk_bigram_tokens", "has_unspaced"]

#: The scripts whose runs ``cjk-bigrams`` cuts into character bigrams (Unicode script names).
UNSPACED_SCRIPTS = ("Han", "Hiragana", "Katakana", "Hangul", "Thai")

_UNSPACED = ("[[" + "".join(rf"\p{{scx={s}}}" for s in UNSPACED_SCRIPTS) + r"]&&[\p{L}\p{M}\p{N}]]")
_RUN = regex.compile(rf"(?V1){_UNSPACED}+")
_ANY = regex.compile(rf"(?V1){_UNSPACED}")
_UNICODE_TOKEN = re.compile(r"[^\W_]+")  # the unicode rule's tokens (audit.retrieval.bm25), with re's \w


def _reader(text: str) -> str:
    from ..matching import reader_form

    return reader_form(text).casefold()


def cjk_bigram_tokens(text: str) -> list[str]:
    """BM25 tokens of ``text`` under the rule ``cjk-bigrams``.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
        In text order: each run of unspaced letters as its overlapping bigrams (``如何轮换`` →
        ``如何``, ``何轮``, ``轮换``; a one-character run as itself), and between runs the ``unicode``
        rule's tokens (maximal runs of ``[^\\W_]``), so text without unspaced letters gets exactly
        the ``unicode`` tokens. ``python3の使い方`` → ``python3``, ``の使``, ``使い``, ``い方``.

    Notes
    -----
    Bigrams are of code points (a Thai consonant and its vowel mark are two), over the casefolded
    NFC form; the bigram approach is Lucene's ``CJKBigramFilter`` (without its unigram output).
    """
    t = _reader(text)
    out: list[str] = []
    pos = 0
    for m in _RUN.finditer(t):
        out += _UNICODE_TOKEN.findall(t[pos:m.start()])
        run = m.group()
        out += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
        pos = m.end()
    out += _UNICODE_TOKEN.findall(t[pos:])
    return out


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds an unspaced letter (module docstring)."""
    return _ANY.search(text) is not None
