"""The decision record: one self-contained HTML file (and its PDF) that a product owner can forward.

:func:`render_html` renders a :class:`~audit.report.report.Report` and the JSON built from it
(:meth:`~audit.report.report.Report.to_json`, the very dict ``--json`` writes) in the order a reader needs:

1. what was audited (source, corpus, model, stamps, ground-truth digest, files with their sha256, the date);
   after a chunking sweep (``python -m audit sweep --html``), why this configuration: the paragraph of
   :func:`audit.evaluation.sweep.why_configuration` over the ``sweep`` section's ``choice``;
2. the decision: the cut of each reported run, where it comes from (saved, with its note, author and date, and
   the configuration it was chosen on; given; balanced), and what it does — in-domain answered / answered
   without / abandoned, out-of-domain bluffs / refused, each with its Wilson 95% interval — with the sweep
   drawn, and the traffic's NO ANSWER share when traffic was given;
3. the comparison: Success@k with Wilson intervals (drawn per run for every source that has results, and in a
   table), the paired sign tests with Holm-adjusted p, the questions lost and gained;
4. the citations audit (returned contents against their documents; needles only an overlap tail holds);
5. the health findings recorded in the history, when there are any;
6. a live endpoint's outcomes and latency;
7. a trend from the history, when there is one;
8. a model upgrade (``compare`` of two index files): both models, Success@k and sign tests, the cut carried across,
   the trade-off curves compared and the bill.

No figure is computed here: every number is read from the report's JSON (or, for the lists of questions lost
and gained, from the same :class:`~audit.evaluation.paired.PairedTest` objects the JSON's ``comparisons`` are
built from). Every figure a reader may quote is marked with ``data-figure`` (what it is), ``data-run`` (the run
or column) and ``data-value`` (the JSON value, ``repr`` of the float), so a test reads the page against the JSON.

**Self-contained.** No script, stylesheet, font or image is fetched: the style is inline and the charts are SVG
rendered in-process from Vega-Lite specs by ``vl-convert-python`` (the Vega-Lite compiler and the Vega renderer
in one wheel, no browser and no network: the charts match the dashboard's, which are Vega-Lite too). Without
that package the charts are left out and the file says so; the figures stay. **Escaped.** Text that comes from
documents, questions, file names, notes and run names is data: every piece goes through :func:`html.escape`.

:func:`to_pdf` prints the HTML with Chromium through Playwright (``page.pdf``) with every request blocked.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
from typing import Any, Iterable, Mapping, Sequence

from ..shownpaths import display_path
from ..evaluation.saved_cut import describe_key
from ..evaluation.threshold import KEEP
from ..words import format_p

__all__ = ["OUTCOMES", "comparison_points", "render_html"]

#: The five outcomes at a cut, in reading order: (JSON key, label, domain).
OUTCOMES = (("answered", "answered with the answer", "in-domain"),
            ("answered without", "answered without it", "in-domain"),
            ("abandoned", "abandoned", "in-domain"),
            ("bluff", "bluffs", "out-of-domain"),
            ("refused", "refused", "out-of-domain"))

def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def _num(v: Any, fmt: str = ".3f") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return format(v, fmt) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _fig(name: str, value: Any, shown: str | None = None, run: str | None = None, tag: str = "span") -> str:
    """One figure: ``<span data-figure=… data-run=… data-value=…>shown</span>`` (``shown`` escaped)."""
    raw = "" if value is None else (repr(value) if isinstance(value, float) else str(value))
    attrs = f' data-figure="{_e(name)}"' + (f' data-run="{_e(run)}"' if run is not None else "")
    return f'<{tag}{attrs} data-value="{_e(raw)}">{_e(shown if shown is not None else raw)}</{tag}>'


def _needed_cell(q: Mapping | None, pair: str) -> str:
    """A comparison's ``questions_needed`` (``{N, power, alpha, note}``) as one figure: ``N (80%)`` or its note."""
    if not q:
        return "n/a"
    shown = (f"{q['N']:,} ({q.get('power', 0):.0%})" if q.get("N") is not None else str(q.get("note")))
    return _fig("questions_needed", q.get("N") if q.get("N") is not None else q.get("note"), shown, pair)


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table whose cells are already HTML (each built with :func:`_e` or :func:`_fig`)."""
    h = "".join(f"<th>{_e(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>'


_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1b1f24;
max-width:1000px;margin:24px auto;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;
padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}th,td{border:1px solid #d0d7de;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}td{font-variant-numeric:tabular-nums}
.decision{border:2px solid #0969da;border-radius:6px;padding:8px 14px;margin:10px 0;break-inside:avoid}
.note{background:#fff8c5;padding:4px 8px;border-radius:4px;white-space:pre-wrap}
.muted{color:#57606a}dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}
dt{color:#57606a}dd{margin:0;word-break:break-all}svg{max-width:100%;height:auto}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}table{break-inside:avoid}}
"""


# --------------------------------------------------------------------------- sections

def _provenance(report, data: Mapping, generated_at: str, record_id: int | None = None) -> str:
    from ..history.record import ground_truth_hash

    rs = report.runset
    src = rs.source
    source = src.name if src.name.startswith(src.kind) else f"{src.kind}: {src.name}"
    items: list[tuple[str, str]] = [("source", source)]
    if rs.corpus is not None:
        items.append(("corpus", f"{display_path(rs.corpus.name)} (sha256 {rs.corpus.sha256})"))
    if rs.model and "model" not in (data.get("provenance") or {}):  # the built-in provenance names it already
        items.append(("model", ", ".join(f"{k} {v}" for k, v in rs.model.items() if v not in (None, ""))))
    items.append(("ground truth", f"{(data.get('questions') or {}).get('judged_by') or ''}; digest "
                                  f"{ground_truth_hash(rs)}"))
    if src.identity:
        items.append(("run set digest", src.identity))
    for k, v in (data.get("provenance") or {}).items():
        if k in ("files", "wall_seconds") or v in (None, "", [], {}) or (
                rs.corpus is not None and k in ("corpus", "corpus_sha256")):
            continue
        if k == "strategies" and isinstance(v, list):
            items.append(("strategies", "; ".join(_strategy_words(x) for x in v)))
            continue
        items.append((k.replace("_", " "), json.dumps(v, ensure_ascii=False, sort_keys=True)
                      if isinstance(v, (dict, list)) else str(v)))
    items.append(("written", generated_at))
    if record_id is not None:
        items.append(("history record", f"#{record_id}: python -m audit history show {record_id}; on the dashboard, "
                                        f"history?record={record_id}"))
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items)
    files = list(src.files) or list((data.get("provenance") or {}).get("files") or [])
    out = f"<h2>What was audited</h2><dl>{dl}</dl>"
    if files:
        out += _table(["role", "file", "sha256"], ([_e(f.get("role")), _e(f.get("name")), _e(f.get("sha256"))]
                                                 for f in files))
    return out


def _label(name: str, entry: Mapping) -> str:
    if entry.get("strategy") is not None:
        return f"strategy {entry.get('strategy')}, retriever {entry.get('retriever')}"
    return f"run {name}"


#: Up to this many runs with a threshold, the record details each; beyond, the first (the document's primary run)
#: and every run whose cut was saved, the others in one table.
DETAILED = 4


def _strategy_words(p: Mapping) -> str:
    """A strategy's parameters as a person reads them: ``A: blind, 512 characters, no header, no overlap``."""
    if not isinstance(p, Mapping):
        return str(p)
    overlap = p.get("overlap") or 0
    return (f"{p.get('name')}: {p.get('cut')}, {p.get('target')} characters, "
            f"{'header' if p.get('header') else 'no header'}, "
            f"{f'{overlap}-character overlap' if overlap else 'no overlap'}")


def _thresholds(report, data: Mapping, focus: str | None = None) -> list[tuple[str, str, Mapping]]:
    """(run name, label for people, JSON entry) of each threshold the record details (:data:`DETAILED`).

    ``focus`` (the run the user is looking at: the dashboard's sidebar run) comes first and is always detailed, so
    the record states the decision on that run; then the document's order. Without a focus in the document, the
    document's first run leads. Beyond :data:`DETAILED` runs, only the lead and the saved cuts are detailed."""
    thr = data.get("threshold") or {}
    lead = focus if focus in thr else next(iter(thr), None)
    order = ([lead] if lead is not None else []) + [n for n in thr if n != lead]
    return [(name, _label(name, thr[name]), thr[name]) for name in order
            if len(thr) <= DETAILED or name == lead or thr[name].get("how") == "saved"]


def _other_cuts(data: Mapping, detailed: set) -> str:
    """One row per other run's cut (run, cut, how, outcomes): what the same rule gives elsewhere."""
    rows = []
    for name, t in (data.get("threshold") or {}).items():
        if name in detailed:
            continue
        at = t.get("at_cut") or {}
        rows.append([_e(name), _fig("cut", t.get("cut"), _num(t.get("cut"), ".4g"), name), _e(t.get("how")),
                     *(_fig(f"count:{key}", at.get(key), run=name) for key, _, _ in OUTCOMES)])
    if not rows:
        return ""
    return ("<h3>The same rule on the other runs</h3>"
            + _table(["run", "cut", "how", *(label for _, label, _ in OUTCOMES)], rows))


def _why_configuration(data: Mapping) -> str:
    """The chunking sweep's "why this configuration" paragraph (the ``sweep`` section's ``choice``, put in words by
    :func:`audit.evaluation.sweep.why_configuration`), every figure marked ``data-figure="why:<name>"`` with
    ``data-run`` the chosen configuration's label; '' without a sweep (or a sweep written before the choice was
    kept)."""
    from ..evaluation.sweep import why_configuration

    choice = (data.get("sweep") or {}).get("choice")
    if not choice:
        return ""
    run = choice["label"]
    words = "".join(_e(x) if isinstance(x, str) else _fig(f"why:{x.name}", x.value, x.shown, run) for x in
                    why_configuration(choice))
    return ("<h2>Why this configuration</h2>"
            f'<p data-section="why-this-configuration">{words}</p>'
            f'<p class="muted">Of the {_e(choice["configurations"])} configurations swept, read at '
            f"k={_e(choice['k'])} (docs/definitions.md, <i>The sweep</i>). The audit below is of the best "
            f"configuration, {_e(choice['best']['label'])}.</p>")


def _sweep_svg(entry: Mapping, run: str) -> str:
    """The sweep as SVG (bluffs and abandoned against the cut, a rule at the cut); '' without vl-convert."""
    try:
        import vl_convert as vlc
    except ImportError:
        return ('<p class="muted">Chart left out: pip install vl-convert-python to draw the sweep '
                '(the figures above are complete).</p>')
    rows = []
    for c in entry.get("sweep") or []:
        t = c.get("threshold")
        if t is None or not math.isfinite(t):
            continue
        for key, label in (("bluff", "bluffs"), ("abandoned", "abandoned"),
                           ("abandoned answerable", "abandoned answerable")):
            rows.append({"cut": t, "outcome": label, "queries": c.get(key)})
    if not rows:
        return ""
    cut = entry.get("cut")
    unit = entry.get("score_kind")
    step = "step-after" if entry.get("keep") == "above" else "step-before"
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 640, "height": 220,
        "title": f"Run {run}: what each cut costs", "background": "white",
        "layer": [
            # a count at a swept cut holds up to it from the previous cut when the gate keeps scores strictly below
            # the cut (distances), and from it up to the next when it keeps those strictly above (similarities)
            {"data": {"values": rows}, "mark": {"type": "line", "interpolate": step},
             "encoding": {"x": {"field": "cut", "type": "quantitative", "title": f"cut ({unit})"},
                          "y": {"field": "queries", "type": "quantitative", "title": "queries"},
                          "color": {"field": "outcome", "type": "nominal", "title": None,
                                    "legend": {"orient": "top"},
                                    "scale": {"domain": ["bluffs", "abandoned", "abandoned answerable"],
                                              "range": ["#cf222e", "#0969da", "#8c959f"]}}}},
            *([{"data": {"values": [{"cut": cut}]}, "mark": {"type": "rule", "color": "black"},
                "encoding": {"x": {"field": "cut", "type": "quantitative"}}}] if cut is not None else []),
        ],
    }
    svg = vlc.vegalite_to_svg(spec)
    return f'<figure aria-label="sweep of run {_e(run)}">{svg}</figure>'


def _why_not(side: Mapping, needed: str, noun: str, verb: str, run: str, figure: str = "certified_abandoned") -> str:
    """Why one side of the promise cannot be certified (the words of
    :meth:`audit.evaluation.guarantee.Certified.sentence`), with the questions still needed marked."""
    n = int(side.get("n") or 0)
    need = (side.get("questions_needed") or {}).get(needed)
    if not n:
        return f"there are no {noun} to bound this rate with."
    more = max(0, int(need or 0) - n)
    if more:
        return (f"{_e(n)} {noun} are too few, it takes at least {_fig(f'{figure}:needed', need, f'{need:,}', run)}"
                f" with none {verb} ({_e(f'{more:,}')} more needed).")
    return f"even the strictest cut tested has {_e(side.get('errors'))} of {_e(n)} {verb}."


def _promise(t: Mapping, run: str) -> str:
    """What the run's sweep can promise (``certified``, ``certified_abandoned``, ``certified_range``, ``auc`` of its
    threshold entry), in sentences with each figure marked."""
    c, a, rng, auc = (t.get("certified"), t.get("certified_abandoned"), t.get("certified_range"), t.get("auc"))
    if not c:
        return ""
    from ..evaluation.guarantee import range_footnote

    conf = f"{1 - c['delta']:.0%}"
    out = ["<h4>The promise</h4>"]
    alpha = _e(format(c["alpha"], ".0%"))
    bluff_promise = f"the system answers an out-of-domain question at most {alpha} of the time"
    if c.get("cut") is not None:
        out.append(f"<p>The bluff promise alone holds at cut {_fig('certified:cut', c['cut'], _num(c['cut'], '.4g'), run)}"
                   f" (and every stricter cut): there {bluff_promise}, with {conf} confidence (exact upper bound "
                   f"{_fig('certified:bound', c['bound'], _num(c['bound'], '.1%'), run)}, {_e(c['errors'])} of "
                   f"{_e(c['n'])} seen).</p>")
    else:
        need = c["questions_needed"]["at_zero_bluffs"]
        more = max(0, need - int(c.get("n") or 0))
        head = (f"<p>The bluff promise ({bluff_promise}) "
                f"{_fig('certified:cut', None, 'cannot be certified', run)} at {conf} confidence: ")
        if not c.get("n"):
            out.append(head + "there are no out-of-domain questions to bound this rate with.</p>")
        elif more:
            out.append(head + f"{_e(c['n'])} out-of-domain questions are too few, it takes at least "
                       f"{_fig('certified:needed', need, f'{need:,}', run)} with none bluffed "
                       f"({_e(f'{more:,}')} more needed).</p>")
        else:
            out.append(head + f"even the strictest cut tested has {_e(c['errors'])} of {_e(c['n'])} bluffed.</p>")
    bound = c.get("bound_at_cut")
    out.append(f"<p>At the cut applied, the bluff rate is at most "
               f"{_fig('certified:bound_at_cut', bound, _num(bound, '.1%'), run)} with {conf} confidence.</p>")
    if a:
        cut_a = a.get("cut")
        beta = _e(format(a["beta"], ".0%"))
        out.append("<p>" + (
            f"The abandoned-answers promise alone holds at cut "
            f"{_fig('certified_abandoned:cut', cut_a, _num(cut_a, '.4g'), run)} (and every looser cut, to no "
            f"threshold): there the system abandons at most {beta} of the answerable questions, with {conf} "
            f"confidence ({_e(a.get('answerable'))} answerable seen)." if cut_a is not None else
            f"The abandoned-answers promise (the system abandons an answerable question at most {beta} of the "
            f"time) {_fig('certified_abandoned:cut', None, 'cannot be certified', run)} at {conf} confidence: "
            + _why_not(a, "at_zero_abandoned", "answerable questions", "abandoned", run)) + "</p>")
    if rng:
        if rng.get("empty"):
            why = ("the bluff promise cannot be certified at any cut" if rng.get("bluff_bound") is None else
                   "the abandoned-answers promise cannot be certified at any cut" if rng.get("abandoned_bound") is None
                   else "every cut strict enough for the bluffs abandons too many answerable questions")
            out.append(f"<p>{_fig('certified_range:empty', True, 'No cut', run)} meets both promises together "
                       f"(bluffs ≤ {alpha} and abandoned answerable ≤ {_e(format(a['beta'], '.0%')) if a else '?'}, "
                       f"with {conf} confidence on these questions): {why}.<sup>*</sup></p>")
        else:
            out.append(f"<p>Every cut from "
                       f"{_fig('certified_range:strictest', rng['strictest'], _num(rng['strictest'], '.4g'), run)}"
                       f" to {_fig('certified_range:loosest', rng['loosest'], _num(rng['loosest'], '.4g'), run)}"
                       f" meets both promises together, with {conf} confidence.<sup>*</sup></p>")
        out.append(f'<p class="muted"><sup>*</sup> {_e(range_footnote(rng.get("delta", c["delta"])))}</p>')
    if auc:
        out.append(f"<p>ROC AUC of the gate value (in-domain against out-of-domain questions): "
                   f"{_fig('auc', auc.get('value'), _num(auc.get('value')), run)} "
                   f"[{_fig('auc:low', auc.get('low'), _num(auc.get('low')), run)}, "
                   f"{_fig('auc:high', auc.get('high'), _num(auc.get('high')), run)}] ({_e(auc.get('method'))} "
                   "95%).</p>")
    out.append(f'<p class="muted">The bounds rest on {_e(c.get("sample"))}.</p>')
    return "".join(out)


def _stages(stages: Mapping | None) -> str:
    """Where the traced questions lost their answer (``stages`` of the JSON, :mod:`audit.report.stages`)."""
    if not stages:
        return ""
    rows = [[_e(name), _fig(f"stages:{name}", c.get("n")), _fig(f"stages:share:{name}", c.get("share"),
                                                                 _num(c.get("share"))),
             _fig(f"stages:low:{name}", c.get("low"), _num(c.get("low"))),
             _fig(f"stages:high:{name}", c.get("high"), _num(c.get("high")))]
            for name, c in (stages.get("counts") or {}).items()]
    out = ["<h3>Where the answer was lost (traced questions)</h3>",
           f"<p>{_fig('stages:n', stages.get('n'))} of {_fig('stages:traces', stages.get('traces'))} traces have a "
           f"judgment ({_e(stages.get('judgments'))}); each is counted at the last stage its relevant chunk "
           "reached.</p>", _table(["stage", "questions", "share", "Wilson 95% low", "high"], rows)]
    versions = stages.get("by_version") or {}
    if len(versions) > 1:
        names = list((stages.get("counts") or {}))
        out.append(_table(["service.version", "judged", *names],
                          [[_e(v), _fig(f"stages:{v}:n", c.get("n"), run=v),
                            *(_fig(f"stages:{v}:{s}", (c.get("counts") or {}).get(s, {}).get("n", 0), run=v)
                              for s in names)] for v, c in versions.items()]))
    return "".join(out)


def _decision(report, data: Mapping, traffic: Mapping | None, charts: bool, focus: str | None = None) -> str:
    out = ["<h2>The decision</h2>"]
    ths = _thresholds(report, data, focus)
    if not ths:
        out.append('<p class="muted">No threshold: the audit had no out-of-domain questions (give them to see '
                   "what a cut buys).</p>")
    for run, label, t in ths:
        how = t.get("how")
        saved = t.get("saved")
        kind = t.get("score_kind")
        keep = t.get("keep")
        cut = t.get("cut")
        head = (f"<h3>{_e(label)}</h3><p>Cut {_fig('cut', cut, _num(cut, '.4g'), run)} ({_e(kind)}; the gate keeps "
                f"at most {_e(t.get('kept_at_most', KEEP))} chunks scoring strictly {_e(keep)} it) — "
                f"{_fig('how', how, run=run)}</p>")
        block = [head]
        if saved:
            note, author = saved.get("note") or "", saved.get("author") or ""
            block.append("<dl>"
                         f"<dt>why</dt><dd>{_fig('note', note, note or '(no note)', run)}</dd>"
                         f"<dt>saved by</dt><dd>{_fig('author', author, author or '(not recorded)', run)}</dd>"
                         f"<dt>saved at</dt><dd>{_fig('saved_at', saved.get('saved_at') or '', run=run)}</dd>"
                         f"<dt>chosen on</dt><dd>{_e(saved.get('label'))}{': ' if saved.get('label') else ''}"
                         f"{_e(describe_key(saved.get('key')))}</dd></dl>")
        elif how == "given":
            block.append('<p class="muted">A cut given for this audit (not saved): no note, no author.</p>')
        else:
            block.append('<p class="muted">No threshold saved for this configuration: this is the balanced cut '
                         "(fewest bluffs + abandoned answerable), a computed default, not a decision.</p>")
        at, wil = t.get("at_cut") or {}, t.get("at_cut_wilson") or {}
        rows = []
        for key, name, domain in OUTCOMES:
            iv = wil.get(key) or {}
            rows.append([_e(domain), _e(name), _fig(f"count:{key}", at.get(key), run=run),
                         _fig(f"n:{key}", iv.get("n"), run=run),
                         _fig(f"share:{key}", iv.get("estimate"), _num(iv.get("estimate")), run),
                         _fig(f"low:{key}", iv.get("low"), _num(iv.get("low")), run),
                         _fig(f"high:{key}", iv.get("high"), _num(iv.get("high")), run)])
        block.append(_table(["domain", "outcome", "queries", "of", "share", "Wilson 95% low", "high"], rows))
        answerable = _fig("count:abandoned answerable", at.get("abandoned answerable"), run=run)
        block.append(f'<p class="muted">Of the abandoned, {answerable} were answerable (with no threshold the top '
                     f"{KEEP} held the answer).</p>")
        sep = t.get("separation") or {}
        if sep:
            block.append(f"<p>Worst in-domain score of the answer {_e(_num(sep.get('worst_in_domain'), '.4g'))}; best "
                         f"out-of-domain {_e(_num(sep.get('best_out_of_domain'), '.4g'))} → "
                         + ("no cut is right for both: a product decision." if sep.get("overlap")
                            else "a cut separates them.") + "</p>")
        block.append(_promise(t, run))
        for o in t.get("offered") or []:
            block.append(f'<p class="muted">Saved for another configuration, not applied here: '
                         f"{_e(_num(o.get('cut'), '.4g'))} ({_e(o.get('label'))}{': ' if o.get('label') else ''}"
                         f"{_e(describe_key(o.get('key')))})</p>")
        if charts:
            block.append(_sweep_svg(t, run))
        out.append('<div class="decision">' + "".join(block) + "</div>")
    out.append(_other_cuts(data, {run for run, _, _ in ths}))
    if traffic:
        na = traffic.get("no_answer") or {}
        c = traffic.get("cut") or {}
        share = na.get("share")
        shown = _num(share, ".1%") if share is not None else "n/a"
        out.append("<h3>Production traffic</h3>"
                   f"<p>At the cut {_e(_num(c.get('value'), '.4g'))} ({_e(c.get('source'))}): "
                   f"{_fig('traffic:no_answer', na.get('questions'))} of "
                   f"{_fig('traffic:questions', traffic.get('questions'))} real questions get NO ANSWER "
                   f"({_fig('traffic:no_answer_share', share, shown)}).</p>")
    return "".join(out)


def _success_ks(rows: Sequence[Mapping]) -> list[str]:
    if not rows:
        return []
    return [k for k in rows[0].keys() if k.startswith("Success@") and k[8:].isdigit()]


def comparison_points(data: Mapping) -> list[dict]:
    """The comparison chart's data, read from the document's JSON (``results``): one point per run and k with
    ``run``, ``k``, ``success``, ``low``, ``high`` (rows whose estimate is null are left out)."""
    rows = data.get("results") or []
    out = []
    for r in rows:
        for k in _success_ks(rows):
            est = r.get(k)
            if est is None or (isinstance(est, float) and not math.isfinite(est)):
                continue
            out.append({"run": r.get("name"), "k": int(k[8:]), "success": est, "low": r.get(f"{k}_low"),
                        "high": r.get(f"{k}_high")})
    return out


def _comparison_svg(data: Mapping) -> str:
    """Success@k with its Wilson interval per run, side by side at each k, as SVG; '' without results, a line
    saying how to draw it without vl-convert."""
    points = comparison_points(data)
    if not points:
        return ""
    try:
        import vl_convert as vlc
    except ImportError:
        return ('<p class="muted">Chart left out: pip install vl-convert-python to draw the comparison '
                '(the figures below are complete).</p>')
    enc = {"x": {"field": "k", "type": "ordinal", "title": "k"},
           "xOffset": {"field": "run", "type": "nominal"},
           "color": {"field": "run", "type": "nominal", "title": None, "legend": {"orient": "top"}}}
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 640, "height": 240,
        "title": "Success@k with its Wilson 95% interval, per run", "background": "white",
        "data": {"values": points},
        "layer": [
            {"mark": {"type": "rule"}, "encoding": {**enc, "y": {"field": "low", "type": "quantitative",
                                                                  "title": "Success@k", "scale": {"domain": [0, 1]}},
                                                     "y2": {"field": "high"}}},
            {"mark": {"type": "point", "filled": True, "size": 50},
             "encoding": {**enc, "y": {"field": "success", "type": "quantitative"}}},
        ],
    }
    svg = vlc.vegalite_to_svg(spec)
    return f'<figure aria-label="Success@k of every run">{svg}</figure>'


def _comparison(report, data: Mapping, charts: bool = True) -> str:
    out = ["<h2>The comparison</h2>"]
    rows = data.get("results") or []
    ks = _success_ks(rows)
    if charts:
        out.append(_comparison_svg(data))
    if rows and ks:
        head = ["run"] + [k + " [Wilson 95%]" for k in ks]
        body = []
        for r in rows:
            name = r.get("name")
            cells = [_e(name)]
            for k in ks:
                label = k
                est, lo, hi = r.get(k), r.get(f"{k}_low"), r.get(f"{k}_high")
                cells.append(f"{_fig(label, est, _num(est), name)} [{_fig(label + ':low', lo, _num(lo), name)}, "
                             f"{_fig(label + ':high', hi, _num(hi), name)}]")
            body.append(cells)
        out.append("<p>Success@k (the specification's recall@k): share of questions with a relevant chunk in the "
                   "top k, with its Wilson 95% interval.</p>" + _table(head, body))
    comps = data.get("comparisons") or []
    if comps:
        body = []
        for c in comps:
            pair = f"{c['a']}|{c['b']}|{c['k']}"
            body.append([_e(c["a"]), _e(c["b"]), _e(c["k"]), _fig("wins", c.get("wins"), run=pair),
                         _fig("losses", c.get("losses"), run=pair),
                         _fig("p", c.get("p"), format_p(c["p"]) if c.get("p") is not None else "n/a", pair),
                         _fig("p_holm", c.get("p (Holm)"),
                              format_p(c["p (Holm)"]) if c.get("p (Holm)") is not None else "n/a", pair),
                         _needed_cell(c.get("questions_needed"), pair)])
        out.append("<p>Paired sign tests on Success@k (wins: questions <i>a</i> finds in the top k and <i>b</i> "
                   "misses; exact two-sided binomial test on the discordant questions), p Holm-adjusted "
                   + ("over this table" if any(r.get("strategy") for r in rows) else "per k") + ".</p>"
                   + _table(["a", "b", "k", "wins", "losses", "p", "p (Holm)", "questions needed (power)"], body)
                   + "<p>Questions needed: the smallest number of questions whose exact two-sided sign test detects a "
                     "difference like the one observed (same discordance rate and win share) with the stated power "
                     "(docs/definitions.md, <i>Questions needed</i>).</p>")
    lost = [t for t in report.tests if t.win_ids or t.loss_ids]
    if lost:
        body = [[_e(t.a), _e(t.b), _e(t.k), _e(", ".join(t.win_ids) or "—"), _e(", ".join(t.loss_ids) or "—")]
                for t in lost]
        out.append("<h3>Questions lost and gained</h3>"
                   + _table(["a", "b", "k", "a finds, b misses", "b finds, a misses"], body))
    return "".join(out)


#: Depths the record shows of each depth curve (with the run's length and the specification's 25).
RECORD_DEPTHS = (1, 4, 8, 10, 20, 25, 50, 100)


def _candidates(data: Mapping) -> str:
    """The reranker's account, the depth curve and the cross-validated fusion, from the document's JSON (empty when
    none of the three is shown)."""
    acc, depth, fusion = data.get("reranker"), data.get("depth"), data.get("fusion")
    if not (acc or depth or fusion):
        return ""
    out = ["<h2>The reranker and its candidates</h2>"]
    if acc:
        body = []
        for e in acc:
            pair = f"{e['reranked']}|{e['first']}|{e['k']}"
            body.append([_e(e["reranked"]), _e(e["first"]), _e(e["k"]), _fig("rescued", e["rescued"], run=pair),
                         _fig("pushed_out", e["pushed_out"], run=pair), _fig("unchanged", e["unchanged"], run=pair),
                         _fig("p", e["p"], format_p(e["p"]), pair), _fig("p_holm", e["p_holm"], format_p(e["p_holm"]),
                                                                       pair)])
        out.append("<p>A reranker's account: per k, questions rescued (a relevant chunk in the reranked top k, none in "
                   "the first stage's) and pushed out (the reverse); exact sign test of rescued against pushed out, "
                   "Holm-adjusted across the k of a pair.</p>"
                   + _table(["reranked", "first stage", "k", "rescued", "pushed out", "unchanged", "p", "p (Holm)"],
                            body))
    if depth:
        body = []
        for run, points in depth.items():
            n = len(points)
            for p in points:
                if p["d"] in RECORD_DEPTHS or p["d"] == n:
                    fig = f"Success@{p['d']}"
                    body.append([_e(run), _e(p["d"]),
                                 f"{_fig(fig, p['Success'], _num(p['Success']), run)} "
                                 f"[{_fig(fig + ':low', p['low'], _num(p['low']), run)}, "
                                 f"{_fig(fig + ':high', p['high'], _num(p['high']), run)}]",
                                 "—" if p.get("ms") is None else _fig("reranking_ms", p["ms"], _num(p["ms"], ".0f"),
                                                                       run)])
        out.append("<p>The depth curve: the first stage's Success@d, the most any reranker over its top d can reach "
                   "(Wilson 95%); the specification reranks the top 25.</p>"
                   + _table(["first stage", "depth d", "Success@d [Wilson 95%]", "reranking ms a question"], body))
    if fusion:
        runs = "|".join(fusion["runs"])
        tuned = fusion["tuned"]
        setting = (f"RRF k={tuned['k']:g}" if "k" in tuned else
                   " + ".join(f"{n} {w:.1f}" for n, w in tuned["weights"].items()))
        k = fusion["k"]
        out.append(f"<p>Fusion of {_e(' and '.join(fusion['runs']))} tuned by {_e(fusion['folds'])}-fold "
                   f"cross-validation over {_e(fusion['n'])} questions (seed {_e(fusion['seed'])}); tuned on all "
                   f"questions: {_e(setting)}. Success@{_e(k)} in-sample "
                   f"{_fig('in_sample', fusion['in_sample'], _num(fusion['in_sample']), runs)}, held-out "
                   f"{_fig('held_out', fusion['held_out'], _num(fusion['held_out']), runs)}, gap "
                   f"{_fig('gap', fusion['gap'], format(fusion['gap'], '+.3f'), runs)}; untuned RRF k=60 "
                   f"{_fig('baseline', fusion['baseline'][f'Success@{k}'], _num(fusion['baseline'][f'Success@{k}']), runs)}"
                   f"; held-out against it +{_e(fusion['sign_test']['wins'])}/−{_e(fusion['sign_test']['losses'])}, "
                   f"p {_fig('fusion_p', fusion['sign_test']['p'], format_p(fusion['sign_test']['p']), runs)}.</p>")
    return "".join(out)


def _citations(report, data: Mapping) -> str:
    out = ["<h2>Citations</h2>"]
    needles = data.get("needles")
    if needles:
        cols = ["strategy", "destroyed", "overlap_only", "past_window"]
        out.append("<p>A citation quotes a chunk's own content at its locator. Needles no chunk holds whole "
                   "(destroyed) cannot be cited; needles only an overlap tail holds cannot be shown in a "
                   "quote; needles only past the encoder window were never embedded (needles per strategy)."
                   "</p>" + _table(cols, ([_e(r.get("strategy"))] + [_fig(c.replace("_", "-"), len(r.get(c) or ()),
                                                                          run=r.get("strategy")) for c in cols[1:]]
                                          for r in needles.get("rows") or [])))
    cit = data.get("citations")
    if cit is None:
        if not needles:
            out.append('<p class="muted">Returned contents were not checked against documents (give the corpus and '
                       "the chunks).</p>")
        return "".join(out)
    errors, checked = cit.get("errors") or [], cit.get("checked")
    out.append(f"<p>{_fig('chunk_errors', len(errors))} of {_fig('chunks_checked', checked)} chunks quote text "
               "that differs from their document at their offsets.</p>")
    if errors:
        out.append(_table(["chunk", "reason"], ([_e(e.get("chunk_id")), _e(e.get("reason"))] for e in errors[:50])))
    heads = cit.get("heading_only") or []
    if heads:
        out.append(f"<p>{_fig('heading_only', len(heads))} chunks quote only a heading: cited, they are never a "
                   "source of substance.</p>")
    return "".join(out)


def _frame_table(df, limit: int = 60) -> str:
    cols = [str(c) for c in df.columns]
    rows = ([_e(_num(v, ".3f") if isinstance(v, float) else v) for v in row] for row in
            df.head(limit).itertuples(index=False))
    return _table(cols, rows)


def _health(health) -> str:
    out = ["<h2>Index health</h2>"]
    if health is None or not len(health):
        out.append('<p class="muted">No health check recorded with this audit: <code>python -m audit health</code> '
                   "checks an index and records its findings.</p>")
    else:
        out.append(_frame_table(health))
    return "".join(out)


def _endpoint(data: Mapping) -> str:
    req = (data.get("endpoint") or {}).get("requests")
    if not req:
        return ""
    out = ["<h2>The endpoint</h2>"]
    for name, log in req.items():
        counts = log.get("counts") or {}
        every = counts.get("all") or {}
        out.append(f"<h3>{_e(name)}</h3><p>{_e(log.get('k'))} chunks asked per question, concurrency "
                   f"{_e(log.get('concurrency'))}, deadline {_e(log.get('deadline_s'))} s, {_e(log.get('retries'))} "
                   f"retries; {_e(_num(log.get('seconds'), '.2f'))} s in all.</p>")
        if every:
            parts = ("all", "in_domain", "out_of_domain")
            out.append(_table(["outcome", "all questions", "in domain", "out of domain"],
                              ([_e(o)] + [_fig(f"requests:{o}:{part}", (counts.get(part) or {}).get(o), run=name)
                                          for part in parts] for o in every)))
        lat = log.get("latency") or {}
        stats = sorted({k for v in lat.values() if isinstance(v, Mapping) for k in v})
        if stats:
            out.append("<p>Latency per outcome, milliseconds (the attempt that decided it; wall clock):</p>"
                       + _table(["outcome", *stats], ([_e(o)] + [_e(_num((v or {}).get(k), ".1f")) for k in stats]
                                                      for o, v in lat.items())))
    return "".join(out)


def _upgrade(data: Mapping) -> str:
    """The upgrade audit (``compare`` of two models): the models, Success@k of both sides with the sign tests, the cut
    chosen under the old model and carried to the new one, the trade-off curves compared, and the bill; from the
    document's ``upgrade``, ``models``, ``cut``, ``tradeoff`` and ``cost`` sections (empty when not shown)."""
    up, models = data.get("upgrade"), data.get("models")
    if not up or not models:
        return ""
    out = ["<h2>The model upgrade</h2>",
           _table(["side", "model", "dims", "weights", "chunking"],
                  ([_e(m["side"]), _fig("model", m["name"], run=m["side"]), _fig("dims", m["dims"], run=m["side"]),
                    _e(str(m["weights_digest"])[:12]), _e(m.get("chunking"))] for m in models))]
    tests = {t["k"]: t for t in up.get("tests") or []}
    rows = []
    for k in sorted(tests):
        cells = [_e(k)]
        for side in ("before", "after"):
            s = next((x for x in up.get("success") or [] if x["side"] == side and x["k"] == k), None)
            cells.append(_fig(f"success:{side}", s["estimate"], f"{_num(s['estimate'])} [{_num(s['low'])}, "
                              f"{_num(s['high'])}]", str(k)) if s else "n/a")
        t = tests[k]
        cells += [_fig("wins", t["wins"], run=str(k)), _fig("losses", t["losses"], run=str(k)),
                  _fig("p", t["p"], format_p(t["p"]), str(k)), _fig("p_holm", t["p_holm"], format_p(t["p_holm"]),
                                                                    str(k))]
        rows.append(cells)
    out.append("<p>Success@k with Wilson 95% intervals on both sides; exact sign test after against before (wins: "
               "answered only after), Holm-adjusted over the ks.</p>"
               + _table(["k", "before", "after", "wins", "losses", "p", "p (Holm)"], rows))
    out.append(f"<p>Lost at k={_e(up.get('k'))}: {_e(', '.join(up.get('lost') or []) or 'none')}. Gained: "
               f"{_e(', '.join(up.get('gained') or []) or 'none')}.</p>")
    cut = data.get("cut")
    if cut:
        c = cut["chosen_under"]
        out.append(f"<h3>The cut carried across</h3><p>The cut {_fig('cut:chosen', c['value'], _num(c['value'], '.4g'))}"
                   f" ({_e(c['how'])}) counts as chosen under {_e(c['model'])} (weights "
                   f"{_e(str(c['weights_digest'])[:12])}).</p>")
        body = []
        for key in ("carried", "same_answered"):
            e = cut[key]
            for side in ("before", "after"):
                o = (e.get("outcomes") or {}).get(side)
                body.append([_e(e["rule"]), _e(side), _fig(f"{key}:{side}:cut", o["cut"] if o else None,
                                                           _num(o["cut"], ".4g") if o else "n/a"),
                             *(_fig(f"{key}:{side}:{f}", o[f] if o else None) for f in ("bluffs", "answered",
                                                                                         "abandoned"))])
        out.append(_table(["rule", "side", "cut", "bluffs", "answered", "abandoned"], body))
        out.append(f"<p class='muted'>Carried cut: {_e(cut['carried']['rule_stated'])}.</p>")
    t = data.get("tradeoff")
    if t:
        out.append(f"<p>Trade-off curves (bluffs against abandoned over every grid cut): {_e(t['sentence'])}.</p>")
    cost = data.get("cost")
    if cost:
        out.append("<h3>The bill</h3><p class='muted'>" + _e(cost[0]["sample"]) + ".</p>"
                   + _table(["model", "ms per chunk", "chunks/s", "re-embedding (s)", "index bytes", "query p50 (ms)",
                             "query p95 (ms)"],
                            ([_e(c["model"]), _fig("ms_per_chunk", c["ms_per_chunk"], _num(c["ms_per_chunk"], ".2f"),
                                                   c["model"]),
                              _e(_num(c["chunks_per_second"], ".0f")), _e(_num(c["reembed_s"], ".1f")),
                              _fig("index_bytes", c["index_bytes"], f"{c['index_bytes']:,}", c["model"]),
                              _e(_num(c["query_ms_p50"], ".2f")), _e(_num(c["query_ms_p95"], ".2f"))] for c in cost)))
    return "".join(out)


def _minute(v: Any) -> str:
    """A record's time for people: ``2026-12-07 22:05`` (24-hour, UTC, to the minute; naive times are UTC)."""
    if isinstance(v, str):
        try:
            v = _dt.datetime.fromisoformat(v)
        except ValueError:
            return v
    if hasattr(v, "to_pydatetime"):
        v = v.to_pydatetime()
    if not isinstance(v, _dt.datetime):
        return str(v)
    if v.tzinfo is not None:
        v = v.astimezone(_dt.timezone.utc)
    return v.strftime("%Y-%m-%d %H:%M")


def _same_figures(row) -> tuple:
    """What a trend row says (value, band, questions), NaN-safe: consecutive rows equal here are one row."""
    def one(x):
        try:
            x = float(x)
        except (TypeError, ValueError):
            return x
        return None if math.isnan(x) else round(x, 12)
    return tuple(one(row.get(k)) for k in ("value", "low", "high", "n"))


def _stretches(rows: list) -> list[list]:
    """Consecutive rows with identical figures, grouped (oldest first)."""
    out: list[list] = []
    for r in rows:
        if out and _same_figures(out[-1][-1]) == _same_figures(r):
            out[-1].append(r)
        else:
            out.append([r])
    return out


def _records_cell(group: list) -> str:
    first, last = group[0], group[-1]
    if len(group) == 1:
        return f"#{_e(first['record'])}"
    return f"records #{_e(first['record'])}–#{_e(last['record'])} ({len(group)} audits), unchanged"


def _when_cell(group: list) -> str:
    a, b = _minute(group[0]["when"]), _minute(group[-1]["when"])
    return _e(a if a == b else f"{a} – {b}")


def _band(r) -> str:
    low, high = r.get("low"), r.get("high")
    if low is None or high is None or (isinstance(low, float) and math.isnan(low)):
        return "n/a"
    return f"[{_num(low)}, {_num(high)}]"


def _trend(trend) -> str:
    """The trend a forwarded decision needs: the series of the run the record leads with (``trend.attrs['lead']``,
    else the frame's first series), consecutive records with identical figures in one row, times to the minute;
    every other series in at most one line, and only when its figures changed."""
    if trend is None or not len(trend):
        return ""
    measure = _e(trend.attrs.get("measure") or "value")
    series = list(dict.fromkeys(trend["series"])) if "series" in trend else [None]
    lead = trend.attrs.get("lead")
    lead = lead if lead in series else series[0]

    def rows_of(name):
        part = trend if name is None else trend[trend["series"] == name]
        return [r._asdict() for r in part.sort_values("record").itertuples(index=False)] if len(part) else []

    out = [f"<h2>Trend</h2><p>{measure} of <strong>{_e(lead)}</strong> (the run this record leads with) over the "
           "audits recorded in the history, Wilson 95% band; times are UTC. Consecutive audits with the same figures "
           "are one row.</p>"]
    lead_rows = rows_of(lead)
    if lead_rows:
        out.append(_table(["records", "when (UTC)", measure, "Wilson 95%", "questions"],
                          ([_records_cell(g), _when_cell(g), _e(_num(g[-1]["value"])), _e(_band(g[-1])),
                            _e(g[-1]["n"])] for g in _stretches(lead_rows))))
    else:
        out.append('<p class="muted">No audit of this series is recorded in the history yet.</p>')
    changed, unchanged = [], 0
    for name in series:
        if name == lead:
            continue
        groups = _stretches(rows_of(name))
        if len(groups) < 2:
            unchanged += 1
            continue
        a, b = groups[0][0], groups[-1][-1]
        changed.append(f"<li>{_e(name)}: {measure} {_e(_num(a['value']))} (#{_e(a['record'])}, "
                       f"{_e(_minute(a['when']))}) → {_e(_num(b['value']))} (#{_e(b['record'])}, "
                       f"{_e(_minute(b['when']))}); {len(groups) - 1} change{'s' if len(groups) > 2 else ''} over "
                       f"{sum(len(g) for g in groups)} audits</li>")
    if changed:
        out.append("<p>Other series of this audit whose figures changed:</p><ul>" + "".join(changed) + "</ul>")
    if unchanged:
        out.append(f"<p class='muted'>{unchanged} other series of this audit: unchanged across their recorded audits "
                   "(not listed).</p>")
    return "".join(out)


def render_html(report, data: Mapping | None = None, *, traffic: Mapping | None = None, health=None, trend=None,
                generated_at: str | None = None, charts: bool = True, record_id: int | None = None,
                stages: Mapping | None = None, focus: str | None = None) -> str:
    """The decision record of ``report`` as one self-contained HTML page.

    Parameters
    ----------
    report : Report
        :func:`audit.report.build_report`'s result.
    data : mapping, optional
        ``report.to_json()`` when already built (the figures are read from it; default: built here, once).
    traffic : mapping, optional
        Default: the document's ``traffic`` section. The traffic section's JSON (:meth:`audit.report.traffic.TrafficReport.to_json`): its NO ANSWER share.
    stages : mapping, optional
        Default: the document's ``stages`` section. ``--stages``' JSON (:meth:`audit.report.stages.StagesReport.to_json`): the counts per stage with their
        Wilson intervals, and per ``service.version``.
    health, trend : DataFrame, optional
        From the history: :func:`audit.views.history.health_frame` and :func:`audit.views.history.trend_frame`.
    generated_at : str, optional
        ISO 8601 UTC (default: now).
    charts : bool
        Draw the sweep and the comparison (Success@k with its interval per run, whatever the source) as SVG
        (vl-convert-python); False leaves them out.
    record_id : int, optional
        This audit's history record: named with its stable link (``history?record=N`` on the dashboard).
    focus : str, optional
        The run the user is looking at (the dashboard's sidebar run): its decision leads the record and is always
        detailed (default: the document's first run).

    Returns
    -------
    str
        The HTML document (UTF-8 text); it requests nothing from any host.
    """
    data = report.to_json() if data is None else data
    traffic = traffic if traffic is not None else data.get("traffic")
    stages = stages if stages is not None else data.get("stages")
    when = generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    rs = report.runset
    title = f"Retrieval audit: {rs.source.name}"
    warnings = data.get("warnings") or []
    warn = ""
    if warnings:
        warn = "<h3>Warnings</h3><ul>" + "".join(
            f"<li>{_e(w.get('message') if isinstance(w, Mapping) else w)}</li>" for w in warnings[:30]) + "</ul>"
    body = "".join([
        f"<h1>{_e(title)}</h1><p class='muted'>A decision record of the retrieval audit, written {_e(when)}. "
        "Every figure comes from the audit's report (the same as its JSON).</p>",
        _provenance(report, data, when, record_id),
        _why_configuration(data),
        _decision(report, data, traffic, charts, focus),
        _stages(stages),
        _comparison(report, data, charts),
        _upgrade(data),
        _candidates(data),
        _citations(report, data),
        _health(health),
        _endpoint(data),
        _trend(trend),
        warn,
    ])
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>{body}</body></html>\n")
