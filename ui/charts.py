"""Altair charts of the Threshold page (and every outcome bar, the History page's trends, the Strategies page's recall
and depth curve): the gate's values, the outcomes at the cut, the sweep.

Every frame is computed in :mod:`audit.views.threshold`; these functions only choose marks and colours. The
Threshold page's charts (histograms, outcome bar, outcomes against the cut, sweep) are :class:`ui.vega.Chart`
values: their spec is built once per shape and a move of the slider only sends new data (:mod:`ui.vega`). One
palette for every chart of the dashboard: Okabe & Ito's colour-blind-safe eight (Okabe & Ito 2008), each
outcome always the same colour — a bluff is vermillion on every page.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from audit.views.threshold import DOMAIN_OUTCOMES, SWEEP_LINES, SweepView

from . import vega
from .vega import Chart

#: Okabe & Ito's palette (2008), the one palette of every chart.
OKABE_ITO = {"black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73",
             "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7"}
#: The cut's line: black, so it is never an outcome's colour.
CUT_RED = OKABE_ITO["black"]
#: One colour per outcome, the same on every chart: good outcomes blue and green, errors vermillion and orange.
OUTCOME_COLOURS = {"answered": OKABE_ITO["blue"], "answered without": OKABE_ITO["reddish purple"],
                   "abandoned": OKABE_ITO["orange"], "abandoned answerable": OKABE_ITO["sky blue"],
                   "bluff": OKABE_ITO["vermillion"], "refused": OKABE_ITO["bluish green"]}
#: Before and after (Upgrade diff), and the traffic's own colour.
BEFORE, AFTER, TRAFFIC = OKABE_ITO["sky blue"], OKABE_ITO["orange"], OKABE_ITO["black"]


def _colour(outcomes, title=None, legend=True, columns=None) -> alt.Color:
    legend = alt.Legend(orient="top", labelLimit=0, columns=columns or len(outcomes)) if legend else None
    return alt.Color("outcome:N", title=title, sort=list(outcomes), legend=legend,
                     scale=alt.Scale(domain=list(outcomes), range=[OUTCOME_COLOURS[o] for o in outcomes]))


def _cut_frame(cut: float) -> pd.DataFrame:
    """The one-row dataset ``cut`` every Threshold chart draws its rule (and label) from."""
    return pd.DataFrame({"cut": [float(cut)]})


def _cut_rule() -> alt.Chart:
    return alt.Chart(alt.NamedData("cut")).mark_rule(color=CUT_RED, strokeWidth=2).encode(
        x="cut:Q", tooltip=[alt.Tooltip("cut:Q", format=".3f", title="cut")])


def _histogram_spec(domain: str, extent: tuple[float, float], unit: str) -> alt.LayerChart:
    outcomes = DOMAIN_OUTCOMES[domain]
    hist = alt.Chart(alt.NamedData("bins")).mark_bar(binSpacing=1, clip=True).encode(
        x=alt.X("bin start:Q", bin="binned", scale=alt.Scale(domain=list(extent)),
                title=f"gate value ({unit} of the best chunk of the order)", axis=alt.Axis(format=".2f")),
        x2="bin end:Q",
        y=alt.Y("queries:Q", stack="zero", title=f"{domain} queries", axis=alt.Axis(format="d", tickMinStep=1)),
        color=_colour(outcomes, title=domain),
        order=alt.Order("outcome order:Q"),
        tooltip=["outcome:N", alt.Tooltip("queries:Q", title="queries"),
                 alt.Tooltip("bin start:Q", format=".3f", title="from"),
                 alt.Tooltip("bin end:Q", format=".3f", title="to")],
    )
    return (hist + _cut_rule()).properties(height=240)  # Streamlit fits legend and axes inside it


def distance_histogram(bins: pd.DataFrame, domain: str, extent: tuple[float, float], cut: float,
                       unit: str = "cosine distance") -> Chart:
    """Histogram of one domain's gate values, bars stacked by outcome at ``cut``
    (:func:`audit.views.threshold.histogram_bins`: bins anchored on the cut, so no bar straddles the line: bars
    left of it are kept — answered, answered without, bluff —, bars right of it refused or abandoned), on
    ``extent`` (the run's units, ``unit``), the cut a black rule. One chart per domain (a concatenated chart does
    not follow the page's width). Its spec is built once per (domain, extent, unit): a move of the cut is data."""
    return Chart(vega.spec(_histogram_spec, domain, (float(extent[0]), float(extent[1])), unit),
                 {"bins": bins, "cut": _cut_frame(cut)})


def _outcome_bar_spec(totals: tuple[int, ...]) -> alt.VConcatChart:
    order = [o for outs in DOMAIN_OUTCOMES.values() for o in outs]
    panels = []
    for i, (domain, total) in enumerate(zip(DOMAIN_OUTCOMES, totals)):
        last = i == len(DOMAIN_OUTCOMES) - 1
        base = alt.Chart(alt.NamedData(domain), title=alt.TitleParams(f"{domain}: {total} queries", anchor="start",
                                                                     fontSize=12, fontWeight="normal")).encode(
            x=alt.X("queries:Q", stack="zero", title="queries" if last else None,
                    axis=alt.Axis(format="d", tickMinStep=1) if last else alt.Axis(labels=False, ticks=False)),
            order=alt.Order("rank:Q"))
        bars = base.mark_bar().encode(color=_colour(order),
                                      tooltip=["domain:N", "outcome:N", "queries:Q", "share (%):Q"])
        text = base.mark_text(color="white", fontWeight="bold", align="right", dx=-4).encode(
            text="queries:Q").transform_filter("datum.queries > 0")
        panels.append((bars + text).properties(height=28))  # concatenated: not refitted by Streamlit
    return alt.vconcat(*panels, spacing=6).resolve_scale(x="shared")


def outcome_bar(counts: pd.DataFrame) -> Chart:
    """One horizontal bar per domain, stacked by outcome (:func:`audit.views.threshold.outcome_counts_frame`):
    each bar's length is the domain's number of queries (one shared axis), each segment labelled with its count.

    No discrete y axis: Streamlit's stretch sizing squeezes a banded axis to nothing, so each domain is its
    own short panel. The spec depends on the domains' totals only: a move of the cut is data."""
    order = [o for outs in DOMAIN_OUTCOMES.values() for o in outs]
    data, totals = {}, []
    for domain in DOMAIN_OUTCOMES:
        part = counts[counts["domain"] == domain][["domain", "outcome", "queries", "share (%)"]]
        data[domain] = part.assign(rank=[order.index(o) for o in part["outcome"]]).reset_index(drop=True)
        totals.append(int(part["queries"].sum()))
    return Chart(vega.spec(_outcome_bar_spec, tuple(totals)), data)


def _against_cut_spec(lo: float, hi: float, unit: str) -> alt.LayerChart:
    x = alt.X("threshold:Q", title=f"cut ({unit})", scale=alt.Scale(domain=[lo, hi], nice=False),
              axis=alt.Axis(format=".2f"))
    lines = alt.Chart(alt.NamedData("lines")).mark_line(interpolate="step-after", clip=True).encode(
        x=x, y=alt.Y("queries:Q", title="queries", axis=alt.Axis(format="d", tickMinStep=1)),
        color=_colour(SWEEP_LINES, columns=3),
        strokeDash=alt.condition("datum.outcome == 'abandoned answerable'", alt.value([4, 3]), alt.value([1, 0])),
        tooltip=[alt.Tooltip("threshold:Q", format=".3f", title="cut"), "outcome:N", "queries:Q"])
    here = alt.Chart(alt.NamedData("here")).encode(x="threshold:Q", y="queries:Q",
                                                  color=_colour(SWEEP_LINES, legend=False))
    points = here.mark_point(size=90, filled=True, stroke="black", strokeWidth=1).encode(
        tooltip=[alt.Tooltip("threshold:Q", format=".3f", title="cut"), "outcome:N", "queries:Q"])
    name = alt.Chart(alt.NamedData("cut")).mark_text(align="left", dx=5, color=CUT_RED, fontWeight="bold").encode(
        x="cut:Q", y=alt.value(8), text=alt.Text("cut:Q", format=".3f"))
    return (lines + _cut_rule() + points + name).properties(height=300)


def outcomes_against_cut(view: SweepView, cut: float, unit: str = "cosine distance") -> Chart:
    """The sweep's outcomes (queries) against the cut on [view.lo, view.hi]; the current cut a black rule, its
    value written at the top, and a highlighted point on each line (the counts in their tooltips). The spec is
    built once per axis range: a move of the cut inside it is data."""
    return Chart(vega.spec(_against_cut_spec, float(view.lo), float(view.hi), unit),
                 {"lines": view.lines, "here": view.here, "cut": _cut_frame(cut)})


def _sweep_spec() -> alt.LayerChart:
    tip = [alt.Tooltip("threshold:Q", format=".3f", title="cut"), "answered:Q", "answered without:Q", "abandoned:Q",
           "abandoned answerable:Q", "bluff:Q"]
    base = alt.Chart(alt.NamedData("curve")).encode(
        x=alt.X("abandoned:Q", title="abandoned in-domain queries", scale=alt.Scale(zero=False, nice=True)),
        y=alt.Y("bluff:Q", title="bluffs (out-of-domain answered)", scale=alt.Scale(zero=False, nice=True)))
    line = base.mark_line(point=alt.OverlayMarkDef(size=30), interpolate="step-after").encode(
        order="threshold:Q", tooltip=tip)
    text = base.mark_text(align="left", dx=6, dy=-6, fontSize=11, color="#374151").encode(
        text="label:N").transform_filter("datum.label != ''")
    cur = alt.Chart(alt.NamedData("current"))
    rules = (cur.mark_rule(color=CUT_RED, strokeDash=[3, 3]).encode(x="abandoned:Q")
             + cur.mark_rule(color=CUT_RED, strokeDash=[3, 3]).encode(y="bluff:Q"))
    here = cur.mark_point(size=220, filled=True, color=CUT_RED, stroke="black", strokeWidth=1).encode(
        x="abandoned:Q", y="bluff:Q", tooltip=[alt.Tooltip("threshold:Q", format=".3f", title="cut"), "abandoned:Q",
                                               "bluff:Q"])
    here_text = cur.mark_text(align="right", dx=-10, dy=12, color=CUT_RED, fontWeight="bold").encode(
        x="abandoned:Q", y="bluff:Q", text=alt.Text("threshold:Q", format=".3f"))
    return (rules + line + text + here + here_text).properties(height=300)


def sweep_chart(view: SweepView) -> Chart:
    """Bluffs against abandoned answers, one point per cut in [view.lo, view.hi], a few cuts written on their
    points; the current cut a large black point with dashed rules through it. One spec for every run: the
    curve and the current cut are data."""
    curve = view.curve[["threshold", "answered", "answered without", "abandoned", "abandoned answerable", "bluff",
                        "label"]]
    return Chart(vega.spec(_sweep_spec), {"curve": curve, "current": pd.DataFrame([view.current])})


def _recall_spec(k: int, by: str, runs: tuple[str, ...]) -> alt.LayerChart:
    colour = alt.Color(f"{by}:N", title=by, scale=alt.Scale(range=[OKABE_ITO[c] for c in (
        "blue", "orange", "bluish green", "reddish purple", "sky blue", "vermillion")]))
    base = alt.Chart(alt.NamedData("recall")).encode(x=alt.X("run:N", sort=list(runs), title="run"))
    chart = (base.mark_errorbar(ticks=True).encode(y=alt.Y("low:Q", title=f"Success@{k} (share of questions)",
                                                         scale=alt.Scale(domain=[0, 1])), y2="high:Q", color=colour)
             + base.mark_point(filled=True, size=70).encode(
                 y="recall:Q", color=colour,
                 tooltip=["run:N", alt.Tooltip("recall:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                          alt.Tooltip("high:Q", format=".3f")]))
    return chart.properties(height=320)


def recall_chart(frame: pd.DataFrame, k: int, by: str) -> Chart:
    """Success@k of each run with its Wilson 95% error bar (:func:`audit.views.strategies.recall_chart_frame` rows
    at one ``k``), coloured ``by`` ``retriever`` (built-in columns) or ``run``. The spec depends on k, the colouring
    and the runs' order only."""
    return Chart(vega.spec(_recall_spec, int(k), by, tuple(frame["run"])), {"recall": frame})


#: The sweep's reading, one colour each (Okabe & Ito).
READING_COLOURS = {"best": OKABE_ITO["blue"], "best and cheapest": OKABE_ITO["blue"],
                   "cheapest": OKABE_ITO["bluish green"], "not distinguishable": OKABE_ITO["sky blue"],
                   "worse": OKABE_ITO["vermillion"]}


def _pareto_spec(k: int, cost: str = "embedded tokens", readings: tuple = tuple(READING_COLOURS)) -> alt.LayerChart:
    base = alt.Chart(alt.NamedData("sweep")).encode(x=alt.X(f"{cost}:Q", title=f"{cost} (the bill)",
                                                            scale=alt.Scale(zero=False)))
    colour = alt.Color("reading:N", title="reading", scale=alt.Scale(domain=list(readings),
                                                                     range=[READING_COLOURS[r] for r in readings]))
    bars = base.mark_errorbar(opacity=0.4).encode(
        y=alt.Y("low:Q", title=f"Success@{k} (share of questions)", scale=alt.Scale(domain=[0, 1])), y2="high:Q",
        color=colour)
    points = base.mark_point(filled=True, size=80).encode(
        y=f"Success@{k}:Q", color=colour, shape=alt.Shape("pareto:N", title="on the Pareto front"),
        tooltip=["configuration:N", alt.Tooltip(f"Success@{k}:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                 alt.Tooltip("high:Q", format=".3f"), "embedded tokens:Q", "index bytes:Q", "reading:N"])
    front = alt.Chart(alt.NamedData("front")).mark_line(color=OKABE_ITO["black"], strokeDash=[4, 3]).encode(
        x=f"{cost}:Q", y=f"Success@{k}:Q")
    return (bars + front + points).properties(height=340)


def pareto_chart(frame: pd.DataFrame, k: int, cost: str = "embedded tokens") -> Chart:
    """A sweep's configurations, Success@k (Wilson 95% bars) against their cost (``embedded tokens`` or ``index
    bytes``: what the sweep's cheapest is ranked by, :func:`audit.views.strategies.sweep_cost`), coloured by the
    reading (the legend lists the readings present, each in its one colour), the Pareto front dashed
    (:func:`audit.views.strategies.sweep_frame`)."""
    front = frame[frame["pareto"]].sort_values(cost)
    readings = tuple(r for r in READING_COLOURS if r in set(frame["reading"]))
    return Chart(vega.spec(_pareto_spec, int(k), cost, readings), {"sweep": frame, "front": front})


def _depth_spec(marked: bool) -> alt.LayerChart:
    base = alt.Chart(alt.NamedData("depth")).encode(x=alt.X("d:Q", title="candidate depth d (the first stage's top d)"))
    band = base.mark_area(opacity=0.25, color=OKABE_ITO["sky blue"]).encode(
        y=alt.Y("low:Q", title="Success@d (the ceiling of any reranker at depth d)", scale=alt.Scale(domain=[0, 1])),
        y2="high:Q")
    line = base.mark_line(color=OKABE_ITO["blue"]).encode(
        y="Success@d:Q", tooltip=["d:Q", alt.Tooltip("Success@d:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                                  alt.Tooltip("high:Q", format=".3f"), "questions:Q",
                                  alt.Tooltip("reranking ms:Q", format=".1f")])
    chart = band + line
    if marked:
        rule = alt.Chart(alt.NamedData("marks")).mark_rule(color=CUT_RED, strokeDash=[4, 3]).encode(
            x="d:Q", tooltip=["d:Q", "mark:N"])
        chart = chart + rule
    return chart.properties(height=300)


def depth_chart(curve: pd.DataFrame, marks: pd.DataFrame) -> Chart:
    """A first stage's Success@d with its Wilson 95% band (:func:`audit.views.strategies.depth_frame`), the marked
    depths as dashed rules (:func:`audit.views.strategies.depth_marks`)."""
    data = {"depth": curve}
    if len(marks):
        data["marks"] = marks
    return Chart(vega.spec(_depth_spec, bool(len(marks))), data)


def _chunk_map_spec(doc_chars: int, strategies: tuple[str, ...], tails: bool, needles: bool) -> alt.LayerChart:
    bars = alt.Chart(alt.NamedData("spans")).mark_bar(height=14, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("start (char):Q", title="character offset in canonical text",
                scale=alt.Scale(domain=[0, max(1, doc_chars)])),
        x2="end (char):Q",
        y=alt.Y("strategy:N", title="strategy", sort=list(strategies)),
        color=alt.Color("band:N", scale=alt.Scale(domain=[0, 1], range=[OKABE_ITO["sky blue"], OKABE_ITO["yellow"]]),
                        legend=None),
        tooltip=["strategy:N", "chunk_id:Q", "start (char):Q", "end (char):Q", "length (chars):Q", "section:N",
                 "embedded tokens:Q"])
    layers = [bars]
    if tails:
        layers.append(alt.Chart(alt.NamedData("tails")).mark_bar(height=6, color="#334155", opacity=0.6).encode(
            x="tail from (char):Q", x2="end (char):Q",
            y=alt.Y("strategy:N", sort=list(strategies)),
            tooltip=["strategy:N", "chunk_id:Q", alt.Tooltip("tail from (char):Q", title="copied from (char)")]))
    if needles:
        layers.append(alt.Chart(alt.NamedData("needles")).mark_rect(opacity=0.35, color=OKABE_ITO["bluish green"]).encode(
            x="start (char):Q", x2="end (char):Q", tooltip=["needle:N", "text:N", "destroyed in:N"]))
    return alt.layer(*layers).properties(height=max(120, 34 * len(strategies)))


def chunk_map_chart(spans: pd.DataFrame, needles: pd.DataFrame, doc_chars: int, strategies: tuple[str, ...]) -> Chart:
    """Every strategy's chunks of one document as bars along its canonical text (alternating colours, ``band``),
    the overlap tails copied into the next chunk as dark strips, the needles as green boxes
    (:func:`audit.views.chunk_map.chunk_spans_frame`, :func:`~audit.views.chunk_map.needles_frame`). The spec depends
    on the document's length, the strategies and which layers there are."""
    tails = spans.dropna(subset=["tail from (char)"])
    data = {"spans": spans}
    if len(tails):
        data["tails"] = tails
    if len(needles):
        data["needles"] = needles
    return Chart(vega.spec(_chunk_map_spec, int(doc_chars), tuple(strategies), bool(len(tails)), bool(len(needles))),
                 data)


def _header_share_spec(strategies: tuple[str, ...]) -> alt.Chart:
    return alt.Chart(alt.NamedData("share")).mark_bar().encode(
        x=alt.X("header share (%):Q", title="header tokens as a share of embedded tokens (%)"),
        y=alt.Y("strategy:N", sort=list(strategies), title="strategy"),
        tooltip=["strategy:N", "embedded tokens:Q", "header tokens:Q", alt.Tooltip("header share (%):Q", format=".1f")]
    ).properties(height=max(120, 36 * len(strategies)))


def header_share_chart(share: pd.DataFrame) -> Chart:
    """Header tokens as a share of embedded tokens, one bar per strategy (:func:`audit.views.tokens.token_share_frame`)."""
    return Chart(vega.spec(_header_share_spec, tuple(share["strategy"])), {"share": share})


def _token_hist_spec(cap: int, step: int) -> alt.LayerChart:
    top = step * -(-(cap + 1) // step)  # the bins cover [0, cap + 1]: the axis ends where the last one does
    hist = alt.Chart(alt.NamedData("bins")).mark_bar(opacity=0.6, binSpacing=0).encode(
        x=alt.X("bin start:Q", bin="binned", scale=alt.Scale(domain=[0, top]),
                title="tokens per chunk (special tokens included)"),
        x2="bin end:Q",
        y=alt.Y("chunks:Q", stack=None, title="chunks"),
        color=alt.Color("strategy:N"),
        tooltip=["strategy:N", "chunks:Q", alt.Tooltip("bin start:Q", title="from (tokens)"),
                 alt.Tooltip("bin end:Q", title="to (tokens, excluded)")])
    rule = alt.Chart(alt.NamedData("window")).mark_rule(color=CUT_RED, strokeWidth=2).encode(
        x="window:Q", tooltip=[alt.Tooltip("window:Q", title="encoder window (tokens)")])
    return (hist + rule).properties(height=260)


def token_hist_chart(bins: pd.DataFrame, window: int, cap: int, step: int) -> Chart:
    """Chunk lengths in tokens per strategy (:func:`audit.views.tokens.token_bins` of width ``step``: lengths over
    ``cap`` counted at ``cap``), overlaid, the encoder window a black rule; the axis covers [0, cap + 1]."""
    return Chart(vega.spec(_token_hist_spec, int(cap), int(step)),
                 {"bins": bins, "window": pd.DataFrame({"window": [int(window)]})})


def before_after_bars(bins: pd.DataFrame, title: str, unit: str = "cosine distance") -> alt.Chart:
    """One group's before/after histogram (:func:`audit.evaluation.upgrade.side_by_side_bins` rows): the before
    bar on the left half of each bin, the after bar on the right, in :data:`BEFORE` and :data:`AFTER`."""
    return alt.Chart(bins, title=alt.TitleParams(title, anchor="start", fontSize=13)).mark_bar().encode(
        x=alt.X("x:Q", title=unit, scale=alt.Scale(zero=False)), x2="x2:Q",
        y=alt.Y("queries:Q", title="queries"), y2=alt.datum(0),
        # the legend on the right: one on top squeezed the plot to a few pixels in Streamlit
        color=alt.Color("when:N", title="side", scale=alt.Scale(domain=["before", "after"], range=[BEFORE, AFTER]),
                        legend=alt.Legend(labelLimit=0, titleLimit=0)),
        tooltip=["when", alt.Tooltip("start:Q", format=".3f", title="bin from"),
                 alt.Tooltip("end:Q", format=".3f", title="to"), "queries"],
    ).properties(height=240)


def tradeoff_curves(frame: pd.DataFrame, marks: pd.DataFrame | None = None) -> alt.LayerChart:
    """The two models' trade-off curves (:func:`audit.views.upgrade_diff.tradeoff_frame`): bluffs against abandoned
    in-domain questions, one point per grid cut, before in :data:`BEFORE` and after in :data:`AFTER`; ``marks``
    (``model``, ``bluffs``, ``abandoned``, ``label``) rings the old cut and the carried cut."""
    models = list(dict.fromkeys(frame["model"]))
    colour = alt.Color("model:N", title="model", scale=alt.Scale(domain=models, range=[BEFORE, AFTER][:len(models)]),
                       legend=alt.Legend(labelLimit=0, titleLimit=0))
    base = alt.Chart(frame).encode(
        x=alt.X("abandoned:Q", title="abandoned in-domain questions"), y=alt.Y("bluffs:Q", title="bluffs"),
        color=colour, tooltip=["model", alt.Tooltip("cut:Q", format=".3f"), "bluffs:Q", "abandoned:Q", "answered:Q"])
    chart = base.mark_line(interpolate="step-after", opacity=0.8) + base.mark_point(filled=True, size=30)
    if marks is not None and len(marks):
        ring = alt.Chart(marks).mark_point(size=220, strokeWidth=2, shape="circle").encode(
            x="abandoned:Q", y="bluffs:Q", color=colour, tooltip=["label", "model", "bluffs:Q", "abandoned:Q"])
        chart = chart + ring
    return chart.properties(height=300)


#: Vega-Lite's time unit that reads a timestamp in UTC, to the second (a tooltip in UTC, not the browser's zone).
UTC_SECONDS = "utcyearmonthdatehoursminutesseconds"


def _utc(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its naive-UTC ``when`` marked as UTC: sent as ``…+00:00``, so the browser reads the instant
    right (a naive time is read in the browser's zone) and a ``utc`` scale shows it in UTC, as the axis says."""
    if "when" not in frame or not len(frame) or getattr(frame["when"].dt, "tz", None) is not None:
        return frame
    return frame.assign(when=frame["when"].dt.tz_localize("UTC"))


#: History's time axis: 24-hour ISO time in UTC (Vega's default labels read 05 PM as "05:00" without AM/PM).
# The label expression wins over any theme's or Vega's own multi-format labels ("10:06", ":30"), which a newcomer
# still saw with format/formatType alone.
TIME_AXIS = alt.Axis(format="%Y-%m-%d %H:%M", formatType="utc", labelExpr="utcFormat(datum.value, '%Y-%m-%d %H:%M')",
                     labelAngle=-30, labelOverlap=True)


def trend_chart(trend: pd.DataFrame, changes: pd.DataFrame, measure: str) -> alt.LayerChart:
    """A measure over time (:func:`audit.views.history.trend_frame`): its Wilson band shaded, one line per
    ground-truth segment (a trend across a ground-truth change is never joined), a point per record, and a dashed
    rule labelled with what changed (:func:`audit.views.history.changes_frame`: model, chunking, ground truth)."""
    trend, changes = _utc(trend), _utc(changes)
    x = alt.X("when:T", title="audit time (UTC)", scale=alt.Scale(type="utc"), axis=TIME_AXIS)
    tip = ["label:N", alt.Tooltip("when:T", format="%Y-%m-%d %H:%M:%S UTC", timeUnit=UTC_SECONDS, title="when"),
           alt.Tooltip("value:Q", format=".3f"),
           alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f"), "n:Q", "model:N", "chunking:N",
           "ground truth:N"]
    y = alt.Y("value:Q", title=measure, scale=alt.Scale(domain=[0, 1]))
    band = alt.Chart(trend[trend["low"].notna()]).mark_area(opacity=0.25, color=BEFORE).encode(
        x=x, y=alt.Y("low:Q", title=measure, scale=alt.Scale(domain=[0, 1])), y2="high:Q", detail="segment:N",
        tooltip=tip)  # its own tooltip: Streamlit's default one read the time as "Dec 07, 2026", without the hour
    line = alt.Chart(trend).mark_line(color=OKABE_ITO["blue"], point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=x, y=y, detail="segment:N", tooltip=tip)
    layers = [band, line]
    if len(changes):
        rules = alt.Chart(changes).mark_rule(color=OKABE_ITO["vermillion"], strokeDash=[5, 3], strokeWidth=2).encode(
            x=x, tooltip=["change:N", "from:N", "to:N"])
        labels = alt.Chart(changes).mark_text(align="left", dx=4, y=8, color=OKABE_ITO["vermillion"],
                                              fontWeight="bold").encode(x=x, text="change:N")
        layers += [rules, labels]
    return alt.layer(*layers).properties(height=300)


def outcomes_over_time(frame: pd.DataFrame) -> alt.Chart:
    """The gate's outcomes at each audit's cut over time (:func:`audit.views.history.outcomes_frame`), one line
    per outcome in its colour."""
    outs = [o for o in OUTCOME_COLOURS if o in set(frame["outcome"])]
    return alt.Chart(_utc(frame)).mark_line(point=True).encode(
        x=alt.X("when:T", title="audit time (UTC)", scale=alt.Scale(type="utc"), axis=TIME_AXIS),
        y=alt.Y("queries:Q", title="queries"),
        color=_colour(outs, columns=3),
        tooltip=["record:Q", alt.Tooltip("cut:Q", format=".4g"), "how:N", "outcome:N", "queries:Q"],
    ).properties(height=260)
