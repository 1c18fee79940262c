"""retrieval audit: measure the retrieval half of a RAG system.

The package is plain Python (no Streamlit). Heavy libraries (torch, sentence-transformers, the store
clients) are imported only when first needed, so ``import audit`` stays cheap. No module imports one
that imports it back (``tests/test_package_map.py`` checks the whole import graph).

Where things come from, one concept a module:

- :mod:`audit.ingest` documents → canonical text: one loader per format, folders, uploads, the built-in corpus
- :mod:`audit.chunking` chunks with exact offsets, the strategies (presets A–F and custom ones)
- :mod:`audit.models` model resolution (offline package first), encoders, cross-encoders, token counts
- :mod:`audit.retrieval` dense, BM25, reciprocal rank fusion, cross-encoder rerank: the one query-time path
- :mod:`audit.groundtruth` needles, their questions, out-of-domain queries, validation; a BEIR folder's judgments
- :mod:`audit.authoring` writing a ground truth: checks as needles are picked, Q/A answers located, saving
- :mod:`audit.jsontext` text files read as lines and JSONL records: the one line rule, the one input-file error
- :mod:`audit.qrels` qrels files (TREC, BEIR) read into judgments
- :mod:`audit.textcolumns` TREC runs and qrels read as columns (pyarrow's CSV reader; the line readers' fields)
- :mod:`audit.memory` freed memory handed back to the system after a large step (glibc's ``malloc_trim``)
- :mod:`audit.matching` the matching view (normalised text, offsets back to the canonical text)
- :mod:`audit.language` the language of a document or question (ISO 639-1, py3langid) and its Snowball stemmer
- :mod:`audit.scores` the one door every score goes through (canonical values: no figure decided by last bits)
- :mod:`audit.secrets` the one redaction rule: every shape of every configured secret out of every output
- :mod:`audit.sqlitedb` the audit's own SQLite files (history, judgments) opened for several writers at once

What every source returns, and where sources live:

- :mod:`audit.runset` the one shape: queries, judgments, named runs with their score kind, chunks, provenance
- :mod:`audit.capabilities` what a run set can show (named for what the data can do, never for its source): the one
  registry the report's sections, the CLI and the pages ask
- :mod:`audit.sources` the sources that are not a vector store: the built-in pipelines, a team's system (its
  files), a team's endpoint, production traffic read alone
- :mod:`audit.stores` every place vectors live behind one protocol, one registry of engines: each live engine
  in its own package (pgvector, Chroma, Milvus Lite), the audit's own SQLite index files and Lance datasets;
  search, the store asked as a run set; :mod:`audit.health` the one health report every store gives;
  :mod:`audit.conninfo` connection strings (their fields, the name a store is shown by)
- :mod:`audit.index` the audit's own indexes: the SQLite index file (stamps, generations, the indexer, health
  checks, the embedding cache) and Lance datasets (:mod:`audit.index.lance`, one machine or a Ray job)
- :mod:`audit.traffic` production traffic read and put through the gate (estimates, drift, review)

What is computed and shown:

- :mod:`audit.evaluation` measures by ir_measures name, Wilson intervals, paired sign tests, the threshold gate,
  the one saved-threshold rule, citations, the upgrade diff: pure functions of a run set
- :mod:`audit.report` the one audit document: sections (:mod:`audit.report.sections`), each declaring what it
  needs, computing one frozen result and rendering it (text, strict JSON, the decision record); tables, escaped
  HTML, exports; never re-runs retrieval
- :mod:`audit.views` one Streamlit-free view-model per dashboard page
- :mod:`audit.history` every audit remembered: records, series, trends, the regression gate
- :mod:`audit.judging` the judging queue: versions of the judgments, pooling, reviewers' labels, agreement
- :mod:`audit.cli` the command line, one module per verb (``python -m audit …``, ``retrieval-audit …``)
- :mod:`audit.config` ``audit.toml`` (stores, endpoints, traffic, allowed roots, shared mode), :mod:`audit.home`
  (where ``.audit/`` lives), :mod:`audit.shownpaths` (a path shown as its name under its allowed root),
  :mod:`audit.uploads` (uploaded files, one session's own), :mod:`audit.words`
  (counts and durations in sentences), :mod:`audit.progress` (the two progress callbacks), :mod:`audit.timings`
  (the dashboard's server time per script run, for benchmarks), :mod:`audit.cluster` (Ray started here or
  joined: the ``[scale]`` extra's one door)
"""

__version__ = "0.1.0"

#: Version of the chunk/embedding pipeline; part of every stamp and cache key.
PIPELINE_VERSION = "1"
