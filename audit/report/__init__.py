"""Results rendered for people and programs: the report of a run set (text, JSON), its tables, escaped HTML.

:mod:`.report` (:func:`build_report` → :class:`Report`: ``render_text``, ``to_json``), :mod:`.tables`
(the DataFrames pages and the report share), :mod:`.serialize` (strict JSON), :mod:`.markup`
(document text as escaped HTML), :mod:`.columns` (column definitions), :mod:`.upgrade` (before/after
rendering), :mod:`.export` (TREC/BEIR files), :mod:`.endpoint` (a live endpoint's requests), :mod:`.traffic`
(the traffic section), :mod:`.stages` (where traced questions lost their answer), :mod:`.notices` (warnings as
lines), :mod:`.formats` (number formats), :mod:`.record` (the decision record: one self-contained HTML file and
its PDF). A module here
renders what it is given and never re-runs retrieval.
"""

from .report import Report, build_report
from .serialize import records, strict
from .tables import (
                     chunks_frame,
                     key_comparisons,
                     latency_frame,
                     needed_label,
                     phrasing_frame,
                     rank_matrix,
                     results_frame,
)

__all__ = ["Report", "build_report", "chunks_frame", "key_comparisons", "latency_frame",
           "needed_label", "phrasing_frame", "rank_matrix", "records", "results_frame", "strict"]
