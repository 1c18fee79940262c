"""The Lance dataset's layout: chunk and document schemas, the stamps on every row, and what a build returns."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from ... import PIPELINE_VERSION
from ...chunking import PRESETS, Strategy, chunk_document
from ...ingest import Corpus, Document, Section, load_corpus

#: Chunk fields stored per row (those of :class:`audit.chunking.Chunk`).
CHUNK_FIELDS = ("chunk_id", "doc_id", "title", "section", "text", "content", "start", "end", "header", "tail")


#: Stamps stored on every chunk row (and every document row).
STAMP_FIELDS = ("model", "model_digest", "dims", "window", "pipeline_version", "extractor", "extractor_version",
                "strategy")


#: Sub-folder of the dataset holding the document table.
DOCUMENTS_SUBDIR = "_documents.lance"



class LanceIndexError(ValueError):
    """A Lance index cannot be built or read as asked; the message names the dataset or value and the fix."""


def chunk_schema(dims: int):
    """Arrow schema of the chunk dataset for vectors of ``dims`` float32 values.

    Raises
    ------
    LanceIndexError
        ``dims`` is not a positive integer.
    """
    import pyarrow as pa

    if not isinstance(dims, (int, np.integer)) or dims < 1:
        raise LanceIndexError(f"vector dimensions must be a positive integer, got {dims!r}")
    s, i64, i32 = pa.string(), pa.int64(), pa.int32()
    return pa.schema([
        ("chunk_id", i64), ("doc_id", s), ("title", s), ("section", s), ("text", s), ("content", s),
        ("start", i64), ("end", i64), ("header", s), ("tail", s),
        ("vector", pa.list_(pa.float32(), int(dims))),
        ("model", s), ("model_digest", s), ("dims", i32), ("window", i32), ("pipeline_version", s),
        ("extractor", s), ("extractor_version", s), ("strategy", s),
    ])


def documents_schema():
    """Arrow schema of the document table (one row per document, failed files included)."""
    import pyarrow as pa

    s, i64, i32 = pa.string(), pa.int64(), pa.int32()
    return pa.schema([
        ("doc_id", s), ("position", i64), ("title", s), ("text", s), ("source", s), ("source_sha256", s),
        ("text_sha256", s),
        ("extractor", s), ("extractor_version", s), ("status", s), ("reason", s), ("chunk_count", i64),
        ("sections", s), ("headings", s), ("pages", pa.list_(i64)),
        ("corpus", s), ("python_version", s), ("indexed_at", s), ("engine", s),
        ("model", s), ("model_digest", s), ("dims", i32), ("window", i32), ("pipeline_version", s),
        ("strategy", s),
    ])


def documents_uri(uri: str | os.PathLike) -> str:
    """Where the document table of the chunk dataset at ``uri`` lives (``uri/_documents.lance``)."""
    return str(uri).rstrip("/") + "/" + DOCUMENTS_SUBDIR


def _stamp(encoder_meta: dict, strategy: Strategy) -> dict:
    return {"model": encoder_meta["model"], "model_digest": encoder_meta["model_digest"],
            "dims": int(encoder_meta["dims"]), "window": int(encoder_meta["window"]),
            "pipeline_version": PIPELINE_VERSION, "strategy": json.dumps(strategy.params(), sort_keys=True)}


def _encoder_meta(encoder) -> dict:
    return {"model": encoder.name, "model_digest": encoder.digest, "dims": int(encoder.dims),
            "window": int(encoder.window)}


def _document_row(doc: Document) -> dict:
    """A document as plain values (what crosses to Ray workers, and what the document table stores)."""
    return {"doc_id": doc.doc_id, "title": doc.title, "text": doc.text, "source": doc.source,
            "source_sha256": doc.source_sha256, "extractor": doc.extractor,
            "extractor_version": doc.extractor_version,
            "sections": json.dumps([[s.title, s.start, s.body_start, s.end] for s in doc.sections]),
            "headings": json.dumps([list(h) for h in doc.headings]), "pages": [int(p) for p in doc.pages]}


def _document_from_row(row: dict) -> Document:
    """Inverse of :func:`_document_row` (the same Document, field for field)."""
    pages = row.get("pages")
    return Document(doc_id=str(row["doc_id"]), title=str(row["title"]), text=str(row["text"]),
                    sections=tuple(Section(str(t), int(a), int(b), int(c)) for t, a, b, c in
                                   json.loads(row["sections"] or "[]")),
                    headings=tuple((int(a), int(b)) for a, b in json.loads(row["headings"] or "[]")),
                    source=str(row["source"]), extractor=str(row["extractor"]),
                    extractor_version=str(row["extractor_version"]),
                    pages=tuple(int(p) for p in (pages if pages is not None else ())),
                    source_sha256=str(row["source_sha256"] or ""))


def _chunk_columns(docs: Iterable[tuple[Document, int]], strategy: Strategy) -> dict[str, list]:
    """Chunk ``(document, first chunk id)`` pairs with :func:`chunk_document`; columns of :data:`CHUNK_FIELDS`
    plus ``extractor`` and ``extractor_version``."""
    cols: dict[str, list] = {k: [] for k in CHUNK_FIELDS + ("extractor", "extractor_version")}
    for doc, first in docs:
        for c in chunk_document(doc, strategy, first_id=int(first)):
            for k in CHUNK_FIELDS:
                cols[k].append(getattr(c, k))
            cols["extractor"].append(doc.extractor)
            cols["extractor_version"].append(doc.extractor_version)
    return cols


def _chunk_table(cols: dict[str, list]):
    import pyarrow as pa

    types = {"chunk_id": pa.int64(), "start": pa.int64(), "end": pa.int64()}
    return pa.table({k: pa.array(v, type=types.get(k, pa.string())) for k, v in cols.items()})


def _embed_table(table, encoder, stamp: dict, encode_batch: int):
    """Add ``vector`` and the stamps to a table of chunks; columns in :func:`chunk_schema` order."""
    import pyarrow as pa

    texts = table.column("text").to_pylist()
    vecs = np.ascontiguousarray(encoder.encode(texts, batch_size=encode_batch), dtype=np.float32)
    if vecs.shape != (len(texts), stamp["dims"]):
        raise LanceIndexError(f"encoder {stamp['model']!r} returned vectors of shape {vecs.shape}, expected "
                              f"({len(texts)}, {stamp['dims']}): its dims stamp is wrong")
    n = len(texts)
    schema = chunk_schema(stamp["dims"])
    cols = {k: table.column(k) for k in CHUNK_FIELDS + ("extractor", "extractor_version")}
    cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), type=pa.float32()), stamp["dims"])
    for k in ("model", "model_digest", "dims", "window", "pipeline_version", "strategy"):
        cols[k] = pa.array([stamp[k]] * n, type=schema.field(k).type)
    return pa.table([cols[f.name] for f in schema], schema=schema)


def _resolve(corpus_or_spec) -> Corpus:
    if isinstance(corpus_or_spec, Corpus):
        corpus = corpus_or_spec
    else:
        corpus = load_corpus(corpus_or_spec)
    if not corpus.documents:
        raise LanceIndexError(f"corpus {corpus.name!r} has no readable document"
                              + (f" ({len(corpus.failures)} failed to load)" if corpus.failures else ""))
    return corpus


def _strategy(strategy: Strategy | str) -> Strategy:
    if isinstance(strategy, Strategy):
        return strategy
    name = str(strategy).strip().upper()
    if name not in PRESETS:
        raise LanceIndexError(f"unknown strategy {strategy!r}; choose from {','.join(PRESETS)} or pass a Strategy")
    return PRESETS[name]


def _check_args(batch_size: int, actors: int) -> None:
    if not isinstance(batch_size, int) or batch_size < 1:
        raise LanceIndexError(f"batch_size must be a positive number of chunks, got {batch_size!r}")
    if not isinstance(actors, int) or actors < 1:
        raise LanceIndexError(f"actors must be a positive number of model replicas, got {actors!r}")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _write_documents(uri: str, corpus: Corpus, counts: dict[str, int], encoder_meta: dict, strategy: Strategy,
                     engine: str, storage_options: dict | None) -> None:
    """Write the document table: indexed documents then failed files, ``doc_id`` order."""
    import lance
    import pyarrow as pa

    stamp = _stamp(encoder_meta, strategy)
    common = {"corpus": corpus.name, "python_version": corpus.python_version or "", "indexed_at": _now(),
              "engine": engine, **stamp}
    rows = []
    for pos, d in enumerate(corpus.documents):
        r = _document_row(d)
        r.update(common, status="indexed", reason="", chunk_count=int(counts.get(d.doc_id, 0)), text_sha256=d.sha256,
                 position=pos)
        rows.append(r)
    for pos, f in enumerate(corpus.failures, start=len(corpus.documents)):
        rows.append({"doc_id": f.source, "position": pos, "title": Path(f.source).stem, "text": None,
                     "source": f.source,
                     "source_sha256": f.source_sha256, "text_sha256": None, "extractor": None,
                     "extractor_version": None, "status": "failed", "reason": f.reason, "chunk_count": 0,
                     "sections": "[]", "headings": "[]", "pages": [], **common})
    schema = documents_schema()
    table = pa.Table.from_pylist(rows, schema=schema)
    lance.write_dataset(table, documents_uri(uri), schema=schema, mode="overwrite",
                        storage_options=storage_options)


@dataclass(frozen=True)
class IndexBuildResult:
    """What one indexing run wrote.

    Attributes
    ----------
    uri : str
        The chunk dataset (the document table is at :func:`documents_uri`).
    engine : {"ray", "local"}
    n_documents, n_failed, n_chunks : int
        Documents indexed, files that failed to load (listed in the document
        table with their reason), chunks written.
    model, model_digest : str
    dims, window : int
    strategy : dict
        The strategy's parameters.
    wall_s : float
        Seconds from the call to the committed dataset (Ray start included when
        this call started Ray; see ``ray_start_s``).
    ray_start_s : float
        Seconds spent in ``ray.init`` (0 for the local engine or an existing Ray).
    actors, batch_size : int
        Model replicas (1 for the local engine) and chunks per model call.
    """

    uri: str
    engine: str
    n_documents: int
    n_failed: int
    n_chunks: int
    model: str
    model_digest: str
    dims: int
    window: int
    strategy: dict = field(default_factory=dict)
    wall_s: float = math.nan
    ray_start_s: float = 0.0
    actors: int = 1
    batch_size: int = 0

    @property
    def chunks_per_s(self) -> float:
        """Chunks written per second of wall time, Ray start excluded (NaN for an empty run)."""
        t = self.wall_s - self.ray_start_s
        return self.n_chunks / t if self.n_chunks and t > 0 else math.nan

    def to_dict(self) -> dict:
        """Plain values (JSON-ready), ``chunks_per_s`` included."""
        d = dict(self.__dict__)
        d["chunks_per_s"] = self.chunks_per_s
        return d
