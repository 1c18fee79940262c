"""A FAISS index file audited where it lies, beside the file that maps its rows to ids and texts.

The engine code behind the store protocol (:class:`audit.stores.faiss.engine.FaissStore`): :func:`open_index`
reads the index (``faiss.read_index``, into this process's memory: the file is never written) and its rows
(:mod:`audit.stores.faiss.rows`: a JSONL or Parquet file of the team's, or the JSON stores LlamaIndex persists);
:func:`search` asks the index (``IndexFlat*``, ``IndexIVF*`` with ``nprobe``, ``IndexHNSW*`` with ``efSearch``,
PQ variants) or scans its own vectors exactly (reconstructed from the index, or the flat vectors of the rows
file); :func:`check_health` gives the store findings every engine gives. :class:`FaissSpec` names the store:
``faiss:PATH`` (the index file, or a folder holding it).

LangChain's ``FAISS.save_local`` folder keeps its ids in ``index.pkl``, a Python pickle: loading a pickle runs
code, so the audit never unpickles it and asks for the ids file instead. Runtime extra:
``pip install 'retrieval-audit[faiss]'``.
"""

from .store import FaissSpec, check_health, chunks, open_index, search, stream_rows, table_dims

__all__ = ["FaissSpec", "check_health", "chunks", "open_index", "search", "stream_rows", "table_dims"]
