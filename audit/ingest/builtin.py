"""The built-in corpus: every topic of CPython's ``pydoc_data.topics``, converted to markdown."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import replace

from .document import Corpus
from .markdown import markdown_document
from .rst import rst_headings

__all__ = ["BUILTIN_CORPUS", "load_builtin"]


#: Name of the built-in corpus: every topic of ``pydoc_data.topics``.
BUILTIN_CORPUS = "python-reference"


def load_builtin(name: str = BUILTIN_CORPUS) -> Corpus:
    """Load the built-in corpus: every topic of ``pydoc_data.topics``.

    The topics ship with CPython (79 topics, about 465k characters on 3.11);
    each is converted with :func:`audit.ingest.rst.rst_headings` (its headings are the lines
    the conversion wrote). ``doc_id`` is the topic
    name. The Python version is recorded because topic wording differs
    between builds.

    Raises
    ------
    ValueError
        ``name`` is not a built-in corpus.
    """
    if name != BUILTIN_CORPUS:
        raise ValueError(f"unknown built-in corpus {name!r}; the built-in corpus is {BUILTIN_CORPUS!r}")
    from pydoc_data.topics import topics

    docs = []
    for key in sorted(topics):
        canonical, title, heads = rst_headings(topics[key], fallback_title=key)
        d = markdown_document(key, canonical, source=f"pydoc_data.topics:{key}", extractor="pydoc-topics",
                              fallback_title=title, headings=heads)
        docs.append(replace(d, source_sha256=hashlib.sha256(topics[key].encode("utf-8")).hexdigest()))
    return Corpus(name=BUILTIN_CORPUS, documents=tuple(docs), python_version=sys.version.split()[0])
