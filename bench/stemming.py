"""What the BM25 token rules snowball and +stop cost over unicode: tokens per document, and language detection.

    python bench/stemming.py [--corpus python-reference|FOLDER] [--repeat 5]

Prints, per rule, the median over ``--repeat`` runs of the milliseconds to tokenise every document of the corpus,
and per document; then py3langid's detection of every document (docs/benchmarks.md, *Stemming*).
"""

from __future__ import annotations

import argparse
import statistics
import time

from audit.ingest import load_corpus
from audit.ingest.builtin import load_builtin
from audit.language import document_languages
from audit.retrieval import bm25_tokens


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default="python-reference")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    corpus = load_builtin() if a.corpus == "python-reference" else load_corpus(a.corpus)
    docs = corpus.documents
    t = time.perf_counter()
    langs = document_languages(docs)
    detect_ms = (time.perf_counter() - t) * 1000.0
    print(f"{len(docs)} documents, {corpus.n_characters:,} characters; languages {sorted(set(langs.values()))}")
    print(f"detection (py3langid, model load included): {detect_ms:.1f} ms, {detect_ms / len(docs):.2f} ms/document")
    for rule in ("unicode", "snowball", "unicode+stop", "snowball+stop"):
        times = []
        for _ in range(a.repeat):
            t = time.perf_counter()
            for d in docs:
                bm25_tokens(d.text, rule, langs[d.doc_id])
            times.append((time.perf_counter() - t) * 1000.0)
        ms = statistics.median(times)
        print(f"{rule:13s} {ms:8.1f} ms  {ms / len(docs):.3f} ms/document")


if __name__ == "__main__":
    main()
