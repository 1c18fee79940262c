"""Production traffic read alone as a run set: no run, no judged question, its files named in the provenance.

The traffic itself (millions of questions) is the ``traffic`` section's input (:mod:`audit.report.sections.live`);
the run set is what every source returns, so the document has one shape whatever was given: the sections of runs
are null, each with its reason.
"""

from __future__ import annotations

from pathlib import Path

from .. import __version__
from ..runset import RunSet, Source, digest

__all__ = ["traffic_runset"]


def traffic_runset(table) -> RunSet:
    """The run set of traffic read alone (``table``: :class:`audit.traffic.table.TrafficTable`): no query, no run;
    the source names the files (their names only, never a folder)."""
    names = [Path(f).name for f in table.files]
    files = tuple({"role": "traffic", "name": n, "sha256": None} for n in names)
    label = "traffic: " + ", ".join(names)
    prov = {"files": list(files), "corpus": None, "corpus_sha256": None, "audit_version": __version__}
    return RunSet(source=Source("traffic", label, digest("traffic", names), files, prov,
                                f"{label} · retrieval-audit {__version__}"),
                  queries=(), judgments={}, runs=())
