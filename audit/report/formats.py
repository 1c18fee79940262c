"""What a corpus folder turned into, for the Overview page: documents by format, files not read, what loaders left out.

Pure functions over a :class:`~audit.ingest.Corpus` (no Streamlit); the page draws the frames.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from ..ingest import Corpus
from ..ingest.skipped import document_notes, skipped_files

__all__ = ["FORMATS_NOTE", "formats_frame", "not_read_frame"]

#: Said wherever a folder is loaded: adding formats changes what an existing folder loads.
FORMATS_NOTE = ("Spreadsheets (.xlsx, .csv), transcripts (.vtt, .srt) and Word files (.docx) are read as documents "
                "too: a folder that held such files beside its text now loads them (a data.csv beside the docs is a "
                "document), so its counts, chunks and corpus hash change.")


def formats_frame(corpus: Corpus) -> pd.DataFrame:
    """Documents per format. Columns: ``format`` (the extractor), ``documents``, ``characters``, ``extractor version``."""
    n, chars, version = Counter(), Counter(), {}
    for d in corpus.documents:
        n[d.extractor] += 1
        chars[d.extractor] += len(d.text)
        version[d.extractor] = d.extractor_version
    return pd.DataFrame([{"format": k, "documents": n[k], "characters": chars[k], "extractor version": version[k]}
                         for k in sorted(n)], columns=["format", "documents", "characters", "extractor version"])


def not_read_frame(corpus: Corpus) -> pd.DataFrame:
    """Files not read and parts of documents left out, each with its reason.

    Columns: ``file`` (corpus-relative), ``what`` (``skipped``: a type the product does not read;
    ``left out``: a part a loader skipped, e.g. a hidden sheet or a formula without a cached
    value), ``reason``.
    """
    rows = [{"file": f.source, "what": "skipped", "reason": f.reason} for f in skipped_files(corpus)]
    rows += [{"file": doc_id, "what": "left out", "reason": note} for doc_id, note in document_notes(corpus)]
    return pd.DataFrame(rows, columns=["file", "what", "reason"])
