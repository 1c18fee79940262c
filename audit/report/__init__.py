"""Results rendered for people and programs: tables (DataFrames), the text report, JSON, page views,
findings, escaped HTML, the before/after upgrade diff, and the extraction audit's section of Index health
(:mod:`.extraction`).

Pages and the CLI render the same objects, so they always say the same thing.
"""

from .serialize import to_json
from .tables import (
                     chunks_frame,
                     format_p,
                     key_comparisons,
                     latency_frame,
                     needed_label,
                     phrasing_frame,
                     rank_matrix,
                     results_frame,
)
from .text import render_text

__all__ = ["chunks_frame", "format_p", "key_comparisons", "latency_frame", "needed_label", "phrasing_frame",
           "rank_matrix", "render_text", "results_frame", "to_json"]
