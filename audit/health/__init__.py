"""One health report for every place vectors live, and the checks every live store without SQL aggregates shares.

- :mod:`.report` — the one report (:class:`~audit.health.report.HealthReport`) with one finding type
  (:class:`~audit.health.report.Finding`), its severities, its text and JSON forms.
- :mod:`.rows` — a store's health from its rows streamed in batches (Chroma, Milvus Lite), with pgvector's
  checks and names, and the rule for a row and its document that health and Citations both read.

Each engine's own checks stay with the engine (a SQLite index file: :mod:`audit.index.health`; a Lance
dataset: :mod:`audit.index.lance.health`; pgvector's SQL aggregates: :mod:`audit.stores.pgvector.health`); all
of them return this report.
"""

from .report import (
                     CONCERNS,
                     NORM_TOLERANCE,
                     OK,
                     SEVERITIES,
                     UNHEALTHY,
                     WARNING,
                     Finding,
                     HealthReport,
                     majority,
                     render_findings,
                     render_pages,
                     store_report,
)
from .rows import EXAMPLES, ends_with_slice, health_from_rows

__all__ = ["CONCERNS", "EXAMPLES", "NORM_TOLERANCE", "OK", "SEVERITIES", "UNHEALTHY", "WARNING", "Finding",
           "HealthReport", "ends_with_slice", "health_from_rows", "majority", "render_findings", "render_pages",
           "store_report"]
