"""Production traffic on the dashboard: the sidebar's Traffic inputs, and the one drawing of the traffic section.

:func:`draw_traffic_inputs` (called by the sidebar for every source) reads the traffic chosen: a configured
``[traffic.NAME]``, uploaded files (within the upload limits, kept in this session's folder) or, in
single-user mode, paths under the allowed roots. :func:`draw_traffic_section` is the only code that draws
it; both Threshold implementations call it with their labelled questions (:mod:`audit.traffic.labelled`)
and their cut, and both Overviews call :func:`draw_traffic_summary`. Every figure comes from
:mod:`audit.report.traffic`; question text reaches the page only when ``[traffic] show_questions`` allows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from audit.language import language_words, traffic_language
from audit.runset import FILE_SCORE_KINDS as SCORE_KINDS
from audit.scores import score_kind
from audit.report.traffic import SOURCES, TrafficReport, build_traffic_report
from audit.traffic.kind import traffic_score_kind
from audit.traffic.labelled import Labelled
from audit.traffic.records import parse_time
from audit.traffic.settings import show_questions
from audit.traffic.table import TrafficTable, Window, read_traffic

from . import cache, paths, session
from .charts import CUT_RED
from .tables import table
from .text import md

__all__ = ["TrafficInput", "draw_traffic_inputs", "draw_traffic_section", "draw_traffic_stages", "draw_traffic_summary",
           "traffic_input"]

_KEY = "_traffic_input"
_HELD = "_traffic_table"
_REPORTS = "_traffic_reports"
_STAGES = "_traffic_stages"
#: The Traffic radio's choices; labels unlike the other sidebar radios' (a page test finds options by their text).
HOW = {"none": "no traffic", "named": "configured traffic", "upload": "traffic from this browser",
       "path": "traffic files on disk"}
SOURCE_COLOURS = {"traffic": "#0f766e", "labelled in-domain": "#2563eb", "labelled out-of-domain": "#dc2626"}


@dataclass
class TrafficInput:
    """The traffic chosen in the sidebar: the table read, the windows, what to call it, its configured run."""

    table: TrafficTable
    window: Window | None
    baseline: Window | None
    label: str
    run: str | None = None
    kind_rule: str = ""  #: the score kind read and which rule chose it ("cosine-distance (as the file says)")
    language: str = ""  #: its questions' language and how it was decided ("language en (detected)")


def _run_kind(runs, configured: str | None) -> tuple[str | None, str | None]:
    """``(score kind, run name)`` of the run the traffic is set beside: its configured run, else the focused one."""
    if runs is None:
        return None, None
    rs, focused = runs
    run = next((r for r in rs.runs if r.name == configured), None) if configured else None
    run = run or focused
    return (run.score_kind, run.name) if run is not None else (None, None)


def traffic_input() -> TrafficInput | None:
    """The traffic the sidebar read in this script run, or None."""
    return st.session_state.get(_KEY)


def _window(prefix: str, errors: list[str]) -> Window | None:
    s, u = (st.session_state.get(f"{prefix}_since") or "").strip(), (st.session_state.get(f"{prefix}_until") or "").strip()
    if not s and not u:
        return None
    try:
        return Window(parse_time(s, "since") if s else None, parse_time(u, "until") if u else None)
    except ValueError as e:
        errors.append(str(e))
        return None


#: The "Its scores are" choice that reads the kind from the file, else the run set's (:mod:`audit.traffic.kind`).
AUTO = "auto"
_KIND_LABELS = {AUTO: "as the file says, else the runs' kind"}


def _files(how: str, cfg, errors: list[str]) -> tuple[list[str], str, str | None, str]:
    """``(paths, score kind, configured run, label)`` of the chosen traffic (empty paths: nothing chosen); the kind
    is :data:`AUTO` when the sidebar leaves it to the file and the run set."""
    if how == "named":
        name = st.selectbox("Traffic", list(cfg.traffic.sources), key="traffic_name")
        src = cfg.traffic.sources[name]
        return list(src.files), src.score, src.run, f"traffic {name}"
    st.selectbox("Its scores are", [AUTO, *SCORE_KINDS], key="traffic_score", format_func=lambda k: _KIND_LABELS.get(k, k),
                 help="What the traffic's scores mean: similarity (higher is better) or a distance (lower is "
                      "better). By default the kind the file names (`score_kind` on a query-log line, the "
                      "`retrieval.score_kind` attribute in OTLP), else the sidebar run's. An estimate needs the same "
                      "kind as the labelled runs.")
    kind = st.session_state["traffic_score"]
    if how == "upload":
        up = st.file_uploader("OTLP JSON exports or query logs (JSONL)", type=["json", "jsonl", "ndjson"],
                              accept_multiple_files=True, key="traffic_files")
        if not up:
            return [], kind, None, ""
        try:
            cfg.uploads.check([(f.name, f.size) for f in up])
        except ValueError as e:
            errors.append(str(e))
            return [], kind, None, ""
        d = session.folder() / "traffic"
        d.mkdir(parents=True, exist_ok=True)
        out = []
        for f in up:
            p = d / Path(f.name).name
            p.write_bytes(f.getvalue())
            out.append(str(p))
        return out, kind, None, "uploaded traffic (" + ", ".join(Path(p).name for p in out) + ")"
    st.text_area("Files or folders, one a line", key="traffic_paths", height=70,
                 help="OTLP JSON exports (one ExportTraceServiceRequest a line) or query logs; under the working "
                      "directory or a folder the operator allowed (AUDIT_ROOTS).")
    out = []
    for line in (st.session_state.get("traffic_paths") or "").splitlines():
        if line.strip():
            try:
                out.append(str(paths.user_path(line.strip(), "traffic file")))
            except ValueError as e:
                errors.append(str(e))
    return out, kind, None, "traffic (" + ", ".join(Path(p).name for p in out) + ")"


def draw_traffic_inputs(box=None, runs=None) -> TrafficInput | None:
    """The sidebar's Traffic expander; reads the chosen traffic (kept in the session) and returns it, or None.

    Parameters
    ----------
    box : streamlit container, optional
        Where the expander is drawn (default: the sidebar).
    runs : tuple, optional
        ``(run set, focused run)``: the run set's score kind is the traffic's when the file names none (the traffic's
        configured run's kind, else the focused run's).

    Returns
    -------
    TrafficInput or None
        The traffic read, with its score kind and the rule that chose it in :attr:`TrafficInput.kind_rule`.
    """
    cfg = paths.config()
    st.session_state.setdefault("traffic_paths", os.environ.get("AUDIT_TRAFFIC", "").replace(os.pathsep, "\n"))
    st.session_state.setdefault("traffic_score", os.environ.get("AUDIT_TRAFFIC_SCORE", AUTO))
    for k in ("traffic_since", "traffic_until", "traffic_base_since", "traffic_base_until"):
        st.session_state.setdefault(k, "")
    how = ["none"] + (["named"] if cfg.traffic and cfg.traffic.sources else []) + (
        ["upload"] if cfg.uploads.enabled else []) + ([] if cfg.shared else ["path"])
    if "traffic_how" not in st.session_state:
        st.session_state["traffic_how"] = "path" if os.environ.get("AUDIT_TRAFFIC") and "path" in how else "none"
    if st.session_state["traffic_how"] not in how:
        st.session_state["traffic_how"] = "none"
    errors: list[str] = []
    chosen = None
    with (box if box is not None else st.sidebar).expander("Traffic (production questions)", expanded=False):
        st.radio("Traffic", how, key="traffic_how", horizontal=True,
                 format_func=HOW.get,
                 help="Real questions and what the retriever returned (OpenInference retrieval spans or a query "
                      "log): what the cut does to them, on the Threshold and Overview pages.")
        how_now = st.session_state["traffic_how"]
        if how_now != "none":
            files, kind, run, label = _files(how_now, cfg, errors)
            rule = "as audit.toml says" if how_now == "named" else "as chosen"
            if kind == AUTO:
                kind, rule = traffic_score_kind(files, *_run_kind(runs, run))
            st.text_input("From (ISO 8601, UTC unless an offset is given)", key="traffic_since")
            st.text_input("Until (exclusive)", key="traffic_until")
            st.text_input("Baseline from (drift between windows)", key="traffic_base_since")
            st.text_input("Baseline until", key="traffic_base_until")
            window, baseline = _window("traffic", errors), _window("traffic_base", errors)
            if files:
                sig = (tuple((p, cache.file_sha256(p) if os.path.isfile(p) else "") for p in files), kind)
                held = st.session_state.get(_HELD)
                if held is None or held[0] != sig:
                    try:
                        t = read_traffic(files, kind)
                        d = traffic_language(t.sample_texts(), st.session_state.get("language") or None)
                        held = (sig, t, None, language_words(d.language, d.how))
                    except ValueError as e:
                        held = (sig, None, str(e), "")
                    st.session_state[_HELD] = held
                t, err = held[1], held[2]
                if err:
                    errors.append(err)
                elif t is not None:
                    words = held[3] if len(held) > 3 else ""
                    st.caption(f"{len(t):,} questions read · scores read as {kind} ({rule})"
                               + (f" · {words}" if words else "")
                               + (f" · {t.n_problems:,} lines or spans not read" if t.n_problems else ""))
                    chosen = (TrafficInput(t, window, baseline, label, run, f"{kind} ({rule})", words) if len(t)
                              else None)
                    if not len(t):
                        errors.append("no retrieval read from the traffic" + (f": {t.problems[0]}" if t.problems else ""))
        for e in errors:
            st.error(md(e))
    st.session_state[_KEY] = chosen
    return chosen


def _report(ti: TrafficInput, labelled: Labelled | None, cut: float | None, cut_source: str,
            labelled_key: str) -> TrafficReport:
    """The traffic report for this page, kept in the session for the same inputs (the estimate takes a second)."""
    key = (id(ti.table), ti.window, ti.baseline, labelled_key, None if cut is None else round(float(cut), 9),
           show_questions(paths.config()))
    held = st.session_state.setdefault(_REPORTS, {})
    if key not in held:
        if len(held) > 8:
            held.clear()
        held[key] = build_traffic_report(ti.table, cut, cut_source, labelled, ti.window, ti.baseline,
                                         show_questions(paths.config()))
    return held[key]


def page_traffic_report(labelled: Labelled | None, cut: float | None, cut_source: str,
                        labelled_key: str) -> TrafficReport | None:
    """The sidebar's traffic read at the page's cut (None without traffic): what the Overview's lines and the
    decision record's NO ANSWER share show (kept in the session as :func:`draw_traffic_summary`'s)."""
    ti = traffic_input()
    if ti is None:
        return None
    return _report(ti, labelled, _cut_for_traffic(ti, labelled, cut), cut_source, labelled_key)


def _cut_for_traffic(ti: TrafficInput, labelled: Labelled | None, cut: float | None) -> float | None:
    """The page's cut applies to the traffic only in the same units (score kind)."""
    if cut is None or labelled is None or labelled.score_kind == ti.table.score_kind:
        return cut
    return None


def overlay_chart(rep: TrafficReport, cut: float | None) -> alt.LayerChart:
    """The traffic's best scores drawn over the labelled in-domain and out-of-domain ones, on one axis.

    Each source's bars are the share of its own questions (they have different sizes), so the shapes compare;
    the black line is the cut.
    """
    df = rep.overlay_frame()
    kind = rep.table.score_kind
    counts = df.groupby("source")["score"].transform("size")
    df = df.assign(weight=100.0 / counts)
    lo, hi = float(df["score"].min()), float(df["score"].max())
    width = score_kind(kind).bin_width  # declared (cosine distance), else a 30th of the observed range
    step = width if width is not None else max((hi - lo) / 30, 1e-6)
    present = [s for s in SOURCES if s in set(df["source"])]
    bars = alt.Chart(df).mark_bar(opacity=0.45, binSpacing=0).encode(
        x=alt.X("score:Q", bin=alt.Bin(step=step), title=f"best score per question ({kind}: the value the gate "
                                                          "decides on)"),
        y=alt.Y("sum(weight):Q", stack=None, title="share of its questions (%)"),
        color=alt.Color("source:N", sort=present, title=None, legend=alt.Legend(orient="top", labelLimit=0),
                        scale=alt.Scale(domain=present, range=[SOURCE_COLOURS[s] for s in present])),
        tooltip=["source:N", alt.Tooltip("sum(weight):Q", format=".1f", title="share (%)")])
    layers = [bars]
    mix = rep.mixture_frame()
    if len(mix):  # the fitted mixture, as the share of traffic a bar of this width would hold
        fitted = mix[(mix["part"] == "fitted mixture") & mix["score"].between(lo - step, hi + step)]
        fitted = fitted.assign(share=fitted["density"] * step * 100)
        layers.append(alt.Chart(fitted).mark_line(color=SOURCE_COLOURS["traffic"], strokeDash=[4, 3]).encode(
            x="score:Q", y="share:Q", tooltip=[alt.Tooltip("share:Q", format=".1f", title="fitted mixture (%)")]))
    if cut is not None:
        layers.append(alt.Chart(pd.DataFrame({"cut": [cut]})).mark_rule(color=CUT_RED, strokeWidth=2).encode(x="cut:Q"))
    return alt.layer(*layers).properties(height=260)


def _curve_chart(rep: TrafficReport, cut: float | None) -> alt.LayerChart:
    df = rep.curve_frame()
    lines = alt.Chart(df).mark_line().encode(
        x=alt.X("cut:Q", title=f"cut ({rep.table.score_kind})"), y=alt.Y("share (%):Q", title="share (%)"),
        color=alt.Color("series:N", title=None, legend=alt.Legend(orient="top", labelLimit=0)),
        tooltip=["series:N", alt.Tooltip("cut:Q", format=".3f"), "share (%):Q"])
    layers = [lines]
    if cut is not None:
        layers.append(alt.Chart(pd.DataFrame({"cut": [cut]})).mark_rule(color=CUT_RED, strokeWidth=2).encode(x="cut:Q"))
    return alt.layer(*layers).properties(height=240)


def draw_traffic_section(labelled: Labelled | None, cut: float | None, cut_source: str, labelled_key: str,
                         key: str = "traffic") -> TrafficReport | None:
    """Draw what the cut does to the sidebar's traffic, against ``labelled`` (the page's system), at ``cut``.

    Parameters
    ----------
    labelled : Labelled or None
        The page's labelled questions (a built-in strategy × retriever, or a team's run).
    cut : float or None
        The page's cut in ``labelled``'s units; applied to the traffic only when its score kind is the same.
    cut_source : str
        Where the cut comes from, for people.
    labelled_key : str
        Identifies ``labelled`` for the session's cache (e.g. the run's digest, strategy and retriever).
    key : str
        Prefix of the widgets' and tables' keys.

    Returns the report drawn, or None when no traffic is chosen.
    """
    ti = traffic_input()
    if ti is None:
        return None
    st.subheader("Real traffic at this cut")
    t_cut = _cut_for_traffic(ti, labelled, cut)
    rep = _report(ti, labelled, t_cut, cut_source, labelled_key)
    k, n = rep.no_answer()
    c = st.columns(4)
    c[0].metric("Real questions", f"{n:,}", help="questions of the traffic in the window chosen in the sidebar")
    c[1].metric("NO ANSWER at the cut", f"{100 * k / n:.1f}%" if n and t_cut is not None else "—",
                help="exact, from the traffic alone: questions for which the gate keeps nothing at this cut")
    c[2].metric("No result at all", f"{rep.no_result:,}", help="the retriever returned nothing: NO ANSWER at every cut")
    e = rep.estimate
    c[3].metric("Out of domain (estimate)", f"{100 * e.share_out_of_domain.estimate:.0f}%" if e else "—",
                delta=(f"[{100 * e.share_out_of_domain.low:.0f}%, {100 * e.share_out_of_domain.high:.0f}%]"
                       if e else None), delta_color="off", delta_arrow="off",
                help="an estimate, under the assumption stated below: the maximum-likelihood mixing weight of the "
                     "labelled in-domain and out-of-domain distributions, with its 95% percentile-bootstrap interval")
    st.caption(md(f"{ti.label}: {len(ti.table):,} questions read"
                  + (f", scores read as {ti.kind_rule}" if ti.kind_rule else "")
                  + (f", {ti.language}" if ti.language else "")
                  + (f", {ti.table.n_problems:,} lines or spans not read (listed below)" if ti.table.n_problems else "")
                  + (f"; compared with {labelled.system}" if labelled is not None else "")
                  + (f". Cut {t_cut:.4g} ({cut_source})." if t_cut is not None else ".")))
    for note in rep.reading_notes():  # files of a folder not read, spans exported twice
        st.info(md(note))
    if labelled is not None and rep.refused:
        st.warning(md(f"No estimate from the labelled questions: {rep.refused}."))  # the reason names the system
    st.altair_chart(overlay_chart(rep, t_cut), width="stretch", key=f"{key}_overlay")
    st.caption("Each bar is the share of its own questions with that best score; the traffic is exact, the labelled "
               "questions are the page's system. Bars on the refused side of the black line get NO ANSWER."
               + (" Dashed: the fitted mixture of the two labelled distributions (the estimate's model)."
                  if rep.estimate is not None else ""))
    for s in rep.estimate_sentences():
        (st.warning if s.startswith("Fit FAILS") else st.info)(md(s))
    with st.expander("NO ANSWER at every cut, and chunks kept per question"):
        st.altair_chart(_curve_chart(rep, t_cut), width="stretch", key=f"{key}_curve")
        if t_cut is not None:
            table(rep.kept_frame(), f"{key}_kept_table", "traffic_kept.csv", "Download chunks kept (CSV)")
    d = rep.drift_labelled
    w = rep.drift_window
    if d is not None or w is not None:
        lines = []
        if d is not None and d.n_a and d.n_b:
            lines.append(f"traffic against the labelled in-domain questions: Kolmogorov–Smirnov D = {d.statistic:.3f}, "
                         f"p = {d.p_value:.4g}")
        if w is not None:
            lines.append(f"window ({w.n_window:,}) against baseline ({w.n_baseline:,}): D = {w.ks.statistic:.3f}, "
                         f"p = {w.ks.p_value:.4g}; NO ANSWER {100 * w.no_answer_window:.1f}% against "
                         f"{100 * w.no_answer_baseline:.1f}% ({100 * w.shift:+.1f} points)")
        st.markdown("**Drift**: " + "; ".join(lines) + ".")
    if rep.review:
        st.markdown("**For review**: the questions nearest the cut on either side (a small change of cut flips them)"
                    + ("" if rep.show_questions else "; question text hidden by this dashboard's configuration "
                                                     "([traffic] show_questions)") + ".")
        table(rep.review_frame(), f"{key}_review_table", "traffic_review.csv", "Download review list (CSV)",
              formats={"score": "%.4f", "margin": "%.4f"},
              help={"margin": "how far the best score is from the cut", "kept": "chunks the gate keeps at the cut"})
    cf = rep.content_frame()
    if ti.table.content is not None and len(cf):
        st.markdown(f"**Returned contents not what their document holds**: {ti.table.content.failed:,} results.")
        table(cf, f"{key}_content_table", "traffic_content.csv", "Download (CSV)")
    if ti.table.n_problems:
        with st.expander(f"{ti.table.n_problems:,} lines or spans not read"):
            table(rep.problems_frame(), f"{key}_problems_table", "traffic_problems.csv", "Download (CSV)")
    return rep


def draw_traffic_stages(runset, run: str, version: str, key: str = "traffic") -> None:
    """Where each traced question lost its relevant chunk (:mod:`audit.views.stages`), under the traffic section.

    ``version`` identifies ``runset`` for the session's cache (the run set's digest); nothing is drawn without
    traffic, and only a caption when the traffic holds no judged trace.
    """
    from audit.report.stages import LABELS
    from audit.views.stages import stages_view

    ti = traffic_input()
    if ti is None:
        return
    held = st.session_state.setdefault(_STAGES, {})
    k = (id(ti.table), version, run)
    if k not in held:
        held.clear()
        held[k] = stages_view(ti.table.files, runset, run)
    view = held[k]
    st.subheader("Where the answer was lost")
    st.caption("Over every judged question, what a reranker rescued and pushed out and how deep its candidates "
               "should be: [Strategies → Candidate depth, fusion and the reranker](./strategies#reranker).")
    if view.report is None or not view.report.stages.n:
        st.caption(md(f"No stages: {view.reason}."))
        return
    rep = view.report
    st.caption(md(f"{rep.stages.n:,} traced questions with a judgment ({rep.judgments}) of {rep.n_traces:,} traces"
                  + (f"; the run {rep.deeper} tells a chunk cut by the retriever's k apart" if rep.deeper else "")
                  + ". Each question is counted at the last stage its relevant chunk reached; shares with their "
                    "95% Wilson interval."))
    table(view.table, f"{key}_stages_table", "traffic_stages.csv", "Download stages (CSV)",
          formats={"share": "%.3f", "low": "%.3f", "high": "%.3f"},
          help={"stage": "; ".join(f"{s}: {m}" for s, m in LABELS.items() if s in set(view.table["stage"]))})
    if len(rep.stages.by_version) > 1:
        st.markdown("**Per service.version** (the resource attribute of the traces): where an upgrade lost it.")
        table(view.versions, f"{key}_stages_versions", "traffic_stages_versions.csv", "Download (CSV)")
    with st.expander("Every judged traced question's stage"):
        table(view.verdicts, f"{key}_stages_verdicts", "traffic_stages_questions.csv", "Download (CSV)",
              help={"rank_before": "in the reranker's input (the retriever's rank without a reranker; the deeper "
                                   "run's for cut_by_k)", "rank_after": "in the reranker's output"})


def draw_traffic_summary(labelled: Labelled | None, cut: float | None, cut_source: str, labelled_key: str) -> None:
    """The Overview's lines on the sidebar's traffic: questions, NO ANSWER at the page's cut, the estimate."""
    ti = traffic_input()
    if ti is None:
        return
    t_cut = _cut_for_traffic(ti, labelled, cut)
    rep = _report(ti, labelled, t_cut, cut_source, labelled_key)
    k, n = rep.no_answer()
    st.subheader("Real traffic")
    parts = [f"{n:,} real questions — {md(ti.label)}" + (f", scores read as {md(ti.kind_rule)}" if ti.kind_rule else "")
             + (f", {md(ti.language)}" if ti.language else "")]
    if t_cut is not None and n:
        parts.append(f"**{100 * k / n:.1f}%** get NO ANSWER at the cut {t_cut:.4g} ({md(cut_source)}; exact)")
    e = rep.estimate
    if e is not None:
        s = e.share_out_of_domain
        parts.append(f"an estimated **{100 * s.estimate:.0f}%** are out of domain [{100 * s.low:.0f}%, "
                     f"{100 * s.high:.0f}%] (estimate: assumes each is like the labelled in-domain or out-of-domain "
                     "questions" + ("" if e.fit.explained else "; the fit FAILS, see Threshold") + ")")
    elif rep.refused:
        parts.append(f"no estimate: {md(rep.refused)}")
    st.markdown("; ".join(parts) + ". Details on the Threshold page.")
