"""Indexing as a Ray Data job into a Lance dataset, and the same dataset built in one process.

documents → canonical text (:func:`audit.ingest.load_corpus`) → chunks
(:func:`audit.chunking.chunk_document`, the code every other path uses) →
embeddings (``map_batches`` with an actor pool, each actor holding one model
loaded by :func:`audit.models.load_encoder`) → a Lance dataset
(``Dataset.write_lance``: a local folder or an object-store URI).

Layout of what is written at ``out``:

- ``out`` itself, the **chunk dataset**: one row per chunk with
  :data:`CHUNK_FIELDS` (``chunk_id``, ``doc_id``, ``title``, ``section``,
  ``text``, ``content``, ``start``, ``end``, ``header``, ``tail``), the
  ``vector`` (``fixed_size_list<float32>[dims]``, unit rows) and the stamps on
  every row (:data:`STAMP_FIELDS`: model name, weights digest, dims, window,
  pipeline version, extractor and its version, strategy parameters as
  canonical JSON). Rows are in no particular order (parallel writers);
  ``chunk_id`` is the ordinal in (``doc_id``, ``start``) order, the order of
  :func:`audit.chunking.chunk_corpus`, assigned before embedding.
- ``out/_documents.lance``, the **document table** (a second Lance dataset in
  a sub-folder, so the index is one folder to copy): per document its
  position in ``Corpus.documents`` (the order chunk ids follow; a folder's
  path order is not always the string order of ``doc_id``), its
  canonical text, title, sections and heading ranges, PDF page offsets,
  source sha256, extractor, status (``indexed`` / ``failed``) and reason,
  chunk count, plus the corpus name and the same model stamps. Failed files
  (``Corpus.failures``) are rows with status ``failed`` and their reason.

``chunk_id`` needs each document's chunk count before the chunks of later
documents can be numbered: the Ray path chunks twice (a counting pass whose
only output is one ``(doc_id, n)`` row per document, then the real pass with
each document's first id), because chunking costs milliseconds a document
against tens of milliseconds a chunk for the model (docs/scaling.md).

Ray and pylance are imported inside the functions: ``import audit`` stays cheap.

Reading it back (:mod:`.dataset`): A Lance dataset (written by :func:`audit.index.lance.index_with_ray` or :func:`audit.index.lance.index_local`) opened as an index for the audit.
"""

from .build import index_local, index_with_ray
from .dataset import LanceIndex, build_ann_index, open_index
from .results import AnnComparison, LoadedLance, TopK
from .schema import (
           CHUNK_FIELDS,
           STAMP_FIELDS,
           IndexBuildResult,
           LanceIndexError,
           chunk_schema,
           documents_schema,
           documents_uri,
)

__all__ = ["CHUNK_FIELDS", "STAMP_FIELDS", "AnnComparison", "IndexBuildResult", "LanceIndex",
           "LanceIndexError", "LoadedLance", "TopK", "build_ann_index", "chunk_schema", "documents_schema",
           "documents_uri", "index_local", "index_with_ray", "open_index"]
