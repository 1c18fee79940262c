"""Overview of a team's own system: the files read, what was loaded, the headline measures."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from audit.report.system import runs_frame

from ..tables import table
from ..text import md
from ..traffic import draw_traffic_summary, traffic_input
from audit.traffic.labelled import from_imported
from . import footer, notices


def draw(sctx) -> None:
    """The Overview page for ``sctx`` (a :class:`~ui.context.SystemContext`)."""
    s, rep = sctx.system, sctx.report
    st.title("Retrieval audit: your system")
    notices(sctx)
    st.caption(md(f"{sctx.label}. Judged by {s.judged_by}. Nothing is re-ranked or re-embedded here: the pages "
                  "read your runs as they are, scores in each run's own units."))
    c = st.columns(5)
    c[0].metric("runs", len(s.runs))
    c[1].metric("judged queries", len(s.qrels.query_ids))
    c[2].metric("out-of-domain queries", len(s.ood_queries))
    c[3].metric("chunks", "—" if s.chunks is None else len(s.chunks))
    c[4].metric("chunks ≠ document", "—" if s.corpus is None or s.chunks is None else len(s.chunk_errors),
                help="chunks whose quote differs from their document at their offsets (see Citations)")
    st.subheader("Measures")
    df = runs_frame(rep)
    cols = ["run", "score kind", "queries", "Success@1", "Success@8", "Success@8 [Wilson 95%]", "nDCG@10", "RR"]
    table(df[cols], "sys_overview_table", "runs.csv", csv=df, formats={c: "%.3f" for c in cols[3:] if "[" not in c})
    if s.requests:  # a live endpoint: how each question ended, latency, measures over answered and all
        from ..endpoint_source import draw_requests

        draw_requests(sctx)
    st.subheader("Files read")
    table(pd.DataFrame(s.files, columns=["role", "name", "sha256"]), "sys_files_table", "files.csv")
    missing = []
    if s.chunks is None:
        missing.append("chunks (chunks.jsonl): the chunk text on Query explorer, the offset audit on Citations")
    if s.corpus is None:
        missing.append("the documents folder: the chunk-offset audit (Citations, Index health) and the Chunk map")
    if not s.ood_runs:
        missing.append("out-of-domain queries with a run of each system over them: the Threshold page")
    if missing:
        st.info("Not given, so not shown: " + "; ".join(missing) + ".")
    ti = traffic_input()
    if ti is not None:  # production traffic: read as the configured run (or the first with a threshold) served it
        t = next((x for x in rep.thresholds if x.run == ti.run), rep.thresholds[0] if rep.thresholds else None)
        if t is None:
            draw_traffic_summary(None, None, "", "none")
        else:
            draw_traffic_summary(from_imported(s, t.run), t.cut, f"the balanced cut of run {t.run}", f"{id(s)}:{t.run}")
    footer(sctx)
