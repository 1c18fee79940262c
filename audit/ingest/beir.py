"""A BEIR dataset folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``) as a corpus and its judgments.

BEIR (Thakur et al., NeurIPS 2021 Datasets and Benchmarks) judges **documents**: with the built-in
strategies a chunk is relevant when its document is, and the report says so. Each document
becomes ``# title`` (when it has one), a blank line and its text (only ``# title`` when its text is empty);
its ``doc_id`` is the BEIR ``_id``.
The judgments are read from ``qrels/test.tsv`` (else the only ``.tsv`` in ``qrels/``); only
queries with a text and at least one relevant document (score ≥ 1) are asked, the other judged
queries are listed as rejected with the reason (:func:`audit.groundtruth.beir_judged`, the ground truth a BEIR
folder brings).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from ..jsontext import ErrorFactory, InputFileError, json_records
from .document import Corpus, Document, LoadFailure
from .markdown import markdown_document

__all__ = ["SOURCE_PREFIX", "beir_records", "current_sha256", "is_beir_folder", "load_beir_corpus"]

#: A BEIR document's ``source``: ``corpus.jsonl#<_id>`` (its sha256 is that of its canonical text).
SOURCE_PREFIX = "corpus.jsonl#"


def is_beir_folder(path) -> bool:
    """Whether ``path`` is a folder holding ``corpus.jsonl`` and ``queries.jsonl``."""
    p = Path(str(path))
    return p.is_dir() and (p / "corpus.jsonl").is_file() and (p / "queries.jsonl").is_file()


def beir_records(path: Path, error: ErrorFactory = InputFileError):
    """``(line, object)`` of a BEIR JSONL file (``corpus.jsonl``, ``queries.jsonl``).

    Every object needs an ``_id`` (string or integer) and a string ``text`` (absent: empty).

    Raises
    ------
    InputFileError (or what ``error`` makes)
        The file cannot be read (:func:`audit.jsontext.json_records`); a line that is not such an object
        (``FILE:LINE: reason``).
    """
    for no, obj in json_records(path, path.name, error):
        if not isinstance(obj.get("_id"), (str, int)) or not isinstance(obj.get("text", ""), str):
            raise error(path, no, "expected an object with a string '_id' and 'text'")
        yield no, obj


def load_beir_corpus(folder) -> Corpus:
    """The documents of ``folder/corpus.jsonl`` (``_id``, ``title``, ``text``), sorted by ``doc_id``.

    A record with an empty text but a title is a document whose text is its title (``# title``); one
    with neither is listed as failed, and so is a repeated ``_id``.

    Raises
    ------
    InputFileError
        A line that is not a JSON object with ``_id`` and ``text`` (file and line named).
    """
    root = Path(str(folder))
    docs: dict[str, Document] = {}
    failures = []
    for no, obj in beir_records(root / "corpus.jsonl"):
        doc_id, title, text = str(obj["_id"]), " ".join(str(obj.get("title") or "").split()), obj.get("text", "")
        if doc_id in docs:
            failures.append(LoadFailure(doc_id, f"corpus.jsonl:{no}: repeated _id"))
        elif not text.strip() and not title:
            failures.append(LoadFailure(doc_id, f"corpus.jsonl:{no}: empty text and no title"))
        else:
            # a record with a title and an empty text is a document: its title is all it says
            canonical = (f"# {title}\n\n" if title else "") + text if text.strip() else f"# {title}"
            # BEIR text is plain text: its only heading is the "# title" line the conversion wrote
            doc = markdown_document(doc_id, canonical, source=f"{SOURCE_PREFIX}{doc_id}", extractor="beir",
                                    fallback_title=title or doc_id, headings=[(0, 1, title)] if title else [])
            docs[doc_id] = replace(doc, source_sha256=hashlib.sha256(canonical.encode("utf-8")).hexdigest())
    return Corpus(name=str(folder), documents=tuple(docs[k] for k in sorted(docs)), failures=tuple(failures))


def current_sha256(folder, source: str) -> str | None:
    """sha256 of a BEIR document as ``corpus.jsonl`` holds it now (None when it is gone): what index health
    compares to find stale or missing documents."""
    if not source.startswith(SOURCE_PREFIX):
        return None
    path = Path(str(folder)) / "corpus.jsonl"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _shas(str(folder), stamp).get(source[len(SOURCE_PREFIX):])


@lru_cache(maxsize=4)
def _shas(folder: str, mtime_ns: int) -> dict:
    return {d.doc_id: d.source_sha256 for d in load_beir_corpus(folder).documents}
