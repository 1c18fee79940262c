"""What a team brings instead of our built-in strategies: its runs, queries, judgments and chunks.

:mod:`.readers` reads runs (TREC, JSONL), qrels (TREC, BEIR), queries (TSV, BEIR); :mod:`.chunks`
reads the team's chunks, checks each against its document at its offsets (the citation audit of
their system) and resolves needles against them; :mod:`.checks` says what the files hold that the
audit goes on with (warnings) and leaves out judged queries without a text.
"""

from .chunks import ChunkError, UserChunk, check_chunks, needle_qrels, read_chunks
from .readers import (
                      BEIR_QRELS_HEADER,
                      InputFileError,
                      read_beir_qrels,
                      read_jsonl_run,
                      read_qrels,
                      read_queries,
                      read_run,
                      read_trec_qrels,
                      read_trec_run,
)

__all__ = ["BEIR_QRELS_HEADER", "ChunkError", "InputFileError", "UserChunk", "check_chunks", "needle_qrels",
           "read_beir_qrels", "read_chunks", "read_jsonl_run", "read_qrels", "read_queries", "read_run",
           "read_trec_qrels", "read_trec_run"]
