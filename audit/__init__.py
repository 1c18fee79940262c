"""retrieval audit: measure the retrieval half of a RAG system.

The package is plain Python (no Streamlit). Heavy libraries (torch,
sentence-transformers) are imported only when a model is first needed, so
``import audit`` stays cheap.

Modules, one concept each:

- :mod:`audit.corpus` documents, loaders and canonical text
- :mod:`audit.chunking` chunks with exact offsets, presets A-F
- :mod:`audit.embedding` model resolution, encoding, token counts
- :mod:`audit.retrieval` dense, BM25, reciprocal rank fusion, cross-encoder rerank
- :mod:`audit.groundtruth` needles, questions, out-of-domain queries
- :mod:`audit.authoring` writing a ground truth: checks as needles are picked, Q/A answers located, saving
- :mod:`audit.evaluation` recall@k, MRR, Wilson intervals, paired sign tests
- :mod:`audit.threshold` distance distributions and the threshold sweep
- :mod:`audit.citations` context building, locators, citation verification
- :mod:`audit.store` on-disk embedding cache
- :mod:`audit.pipeline` the end-to-end audit run behind the CLI and the pages
"""

__version__ = "0.1.0"

#: Version of the chunk/embedding pipeline; part of every stamp and cache key.
PIPELINE_VERSION = "1"
