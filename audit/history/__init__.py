"""Every audit remembered: a history of records across deploys, series, trends, and a regression gate.

Modules: :mod:`.record` (what one record holds, built from a run set and its report; :func:`~.record.runset_of`
rebuilds the run set, so two records go through :func:`audit.evaluation.upgrade.diff_runs` unchanged),
:mod:`.store` (the SQLite and PostgreSQL back ends behind one small interface), :mod:`.gate` (the
regression gate: a paired sign test against a baseline record, Holm over the series), :mod:`.recording`
(what the commands and the dashboard call: on/off, one ``warning:`` on a failed write), :mod:`.columns` (formats
3 and 4: a record's rankings and judgments as arrays, read back as the mappings format 2 held; format 4 writes them
narrower), :mod:`.digests` (the ground-truth and judgments digests streamed from those arrays, the same hex as the
JSON way). Definitions:
docs/definitions.md, *History*.
"""

from .record import FORMAT_VERSION, Record, RecordRun, record_of, runset_of
from .store import HistoryError, HistoryStore, open_history

__all__ = ["FORMAT_VERSION", "HistoryError", "HistoryStore", "Record", "RecordRun", "open_history", "record_of",
           "runset_of"]
