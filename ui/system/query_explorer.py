"""Query explorer for a team's own system: one judged question across runs (rank, score, text, judgments)."""

from __future__ import annotations

import streamlit as st

from audit.report.system import judged_hits_frame

from ..tables import table
from ..text import md
from . import footer, notices


def draw(sctx) -> None:
    s = sctx.system
    st.title("Query explorer: your runs")
    notices(sctx)
    st.caption("A judged question as each run ranked it: rank, score in the run's own units, the chunk's text "
               "(from your chunks.jsonl) and its judgment (grade ≥ 1 = relevant).")
    qids = list(s.qrels.query_ids)
    qid = st.selectbox("Judged question", qids, key="sys_query",
                       format_func=lambda q: f"{q}: {s.queries.get(q, '')}")
    top = st.slider("Chunks per run", 1, 20, 5, key="sys_top")
    st.markdown("**" + md(s.queries.get(qid, "")) + "**")
    grades = s.qrels.judgments.get(qid, {})
    st.caption(md("judged relevant: " + (", ".join(f"{c} (grade {g})" for c, g in grades.items() if g >= 1)
                                         or "none")))
    df = judged_hits_frame(s, qid, top)
    if s.chunks is None:
        st.info("No chunk text: give your chunks (chunks.jsonl) to see what each run returned.")
    for r in s.runs:
        st.subheader(r.name)
        part = df[df["run"] == r.name].drop(columns=["run"])
        table(part.assign(relevant=part["relevant"].map({True: "judged relevant", False: ""})),
              f"sys_hits_{r.name}", f"hits_{qid}_{r.name}.csv", csv=part,
              help={"score": f"{r.score_kind}, as in the run file", "grade": "your judgment; empty: not judged"})
    st.info("Typed questions need a model to embed them, and your system's index to search: this page shows the "
            "judged questions as your runs ranked them.")
    footer(sctx)
