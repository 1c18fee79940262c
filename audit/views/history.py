"""The History page's view-model: series, a measure over time with its Wilson band, change markers, outcomes at
the saved cut over time, health findings per index generation, and two records compared.

Every frame comes from stored records (:mod:`audit.history`); nothing is re-run. Two records are compared by the
Upgrade diff's own computation, :func:`audit.evaluation.upgrade.diff_runs`, on the run sets the records rebuild
(:func:`audit.history.record.runset_of`). Definitions: docs/definitions.md, *History*.
"""

from __future__ import annotations

import json
import math
from typing import Sequence

import pandas as pd

from ..evaluation.measures import KS, measure_label, measure_names, parse_measure
from ..evaluation.saved_cut import load_cuts
from ..evaluation.threshold import OUTCOMES
from ..history.recording import open_configured
from ..history.store import HistoryError
from ..judging.versions import STORE_VERSION

__all__ = ["CHANGE_KINDS", "DEFAULT_MEASURE", "EMPTY", "KS", "HistoryError", "changes_frame", "comparable_pair",
           "default_series", "health_frame", "load_cuts", "measure_label", "open_configured", "outcomes_frame",
           "outcomes_title", "record_frame", "record_id", "records_diff", "series_frame", "store_version", "trend_frame"]

#: What a change marker names, in this order.
CHANGE_KINDS = ("model", "chunking", "ground truth")
DEFAULT_MEASURE = "Success@8"
#: What the page says when there is no record.
EMPTY = ("No audit recorded yet: run `python -m audit report` or open Overview: each audit is recorded here "
         "(unless `--no-history` or AUDIT_HISTORY=off).")
#: Outcome rows drawn over time (the gate's, and the answers the cut lost).
OUTCOME_ROWS = (*OUTCOMES, "abandoned answerable")


def series_frame(summaries: Sequence) -> pd.DataFrame:
    """One row per series of ``summaries`` (:class:`audit.history.store.RecordSummary`): ``series``, ``records``,
    ``first`` and ``last`` (ISO 8601 UTC), ``source``; most recently recorded first."""
    rows: dict[str, dict] = {}
    for s in summaries:
        for name in s.series:
            r = rows.setdefault(name, {"series": name, "records": 0, "first": s.created_at, "last": s.created_at,
                                       "source": s.source_name, "_last_id": s.id, "command": s.command})
            r["records"] += 1
            r["last"], r["_last_id"] = s.created_at, s.id
    df = pd.DataFrame(list(rows.values()), columns=["series", "records", "first", "last", "source", "_last_id",
                                                    "command"])
    return df.sort_values("_last_id", ascending=False).drop(columns=["_last_id"]).reset_index(drop=True)


def _short(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, dict):
        keys = ("name", "cut", "target", "overlap", "header")
        return " ".join(f"{k}={v[k]}" for k in keys if k in v) or json.dumps(v, sort_keys=True)
    return str(v)[:12]


def _model(rec) -> str:
    m = rec.model or {}
    return f"{m.get('name')} ({str(m.get('digest'))[:12]})" if m.get("digest") else str(m.get("name") or "-")


def _when(created_at: str) -> pd.Timestamp:
    return pd.Timestamp(created_at).tz_convert("UTC").tz_localize(None)


def store_version(rec) -> str:
    """The judging store's version a record was judged on (``v3 1a2b3c4d5e6f7a8b``: the dashboard judged on a saved
    version, :data:`audit.judging.versions.STORE_VERSION` of its source's provenance); "" when on the source's own
    judgments."""
    return str((rec.source.get("provenance") or {}).get(STORE_VERSION) or "")


def trend_frame(records: Sequence, series: str, measure: str = DEFAULT_MEASURE) -> pd.DataFrame:
    """One point per record of ``series``: ``record``, ``when`` (UTC, naive), ``label`` (``#id``), ``value``,
    ``low``, ``high`` (Wilson 95% for ``Success@k``; NaN for other measures, which have no binomial interval),
    ``n`` (queries counted), ``segment`` (a new one at every ground-truth change: the line is drawn per segment,
    never joined across), ``model``, ``chunking``, ``ground truth``, ``judgments version`` (the digest it was
    judged on), ``judging store version`` (:func:`store_version`); oldest first. Records whose run of the series was
    unavailable, or counted no query (an audit without a ground truth: 0 questions is no point of a trend), are left
    out.

    Raises
    ------
    ValueError
        ``measure`` is not a reported measure.
    """
    measure = parse_measure(measure)
    rows, segment, last_gt = [], 0, None
    for rec in sorted(records, key=lambda r: r.id):
        try:
            run = rec.run(series)
        except KeyError:
            continue
        if not run.available:
            continue
        if last_gt is not None and rec.ground_truth != last_gt:
            segment += 1
        last_gt = rec.ground_truth
        iv = run.intervals.get(measure) if measure.startswith("Success@") else None
        value = iv[0] if iv else run.measures.get(measure, math.nan)
        n = iv[3] if iv else (run.intervals.get("Success@1") or [0, 0, 0, 0])[3]
        if not n:
            continue
        rows.append({"record": rec.id, "when": _when(rec.created_at), "label": f"#{rec.id}", "value": value,
                     "low": iv[1] if iv else math.nan, "high": iv[2] if iv else math.nan, "n": n,
                     "segment": segment, "model": _model(rec), "chunking": _short(run.chunking),
                     "ground truth": rec.ground_truth[:12], "judgments version": rec.judgments_version,
                     "judging store version": store_version(rec), "command": rec.command})
    return pd.DataFrame(rows, columns=["record", "when", "label", "value", "low", "high", "n", "segment", "model",
                                       "chunking", "ground truth", "judgments version", "judging store version",
                                       "command"])


def default_series(names: Sequence[str], preferred: Sequence[str]) -> int:
    """Index in ``names`` of the first of ``preferred`` it holds (the sidebar's run, as a series name), else 0 (the
    most recently recorded series)."""
    for p in preferred:
        if p in names:
            return list(names).index(p)
    return 0


def comparable_pair(trend: pd.DataFrame) -> tuple[int, int] | None:
    """``(before, after)`` record ids the page compares first: the last record and the latest one before it judged
    on the same ground truth (a paired comparison needs the same questions), or None when no two share one."""
    if len(trend) < 2:
        return None
    last = trend.iloc[-1]
    same = trend[(trend["ground truth"] == last["ground truth"]) & (trend["record"] != last["record"])]
    return (int(same.iloc[-1]["record"]), int(last["record"])) if len(same) else None


def changes_frame(trend: pd.DataFrame) -> pd.DataFrame:
    """Where the model, the chunking or the ground truth changed between two consecutive points of a trend:
    ``record``, ``when``, ``change`` (the kinds, ``model, chunking``), ``from``, ``to``; one row per record."""
    rows = []
    prev = None
    for _, r in trend.iterrows():
        if prev is not None:
            kinds = [k for k in CHANGE_KINDS if r[k] != prev[k]]
            if kinds:
                rows.append({"record": r["record"], "when": r["when"], "change": ", ".join(kinds),
                             "from": "; ".join(str(prev[k]) for k in kinds), "to": "; ".join(str(r[k]) for k in kinds)})
        prev = r
    return pd.DataFrame(rows, columns=["record", "when", "change", "from", "to"])


def outcomes_frame(records: Sequence, series: str) -> pd.DataFrame:
    """The gate's outcomes at the cut each audit applied (its saved cut, else the balanced one), over time:
    ``record``, ``when``, ``cut`` (the run's units), ``how``, ``outcome``, ``queries``; records without outcomes
    (a run without out-of-domain questions, a built-in column whose threshold was not reported) are left out."""
    rows = []
    for rec in sorted(records, key=lambda r: r.id):
        try:
            run = rec.run(series)
        except KeyError:
            continue
        if not run.outcomes:
            continue
        c = run.outcomes["counts"]
        for o in OUTCOME_ROWS:
            rows.append({"record": rec.id, "when": _when(rec.created_at), "cut": run.outcomes["cut"],
                         "how": run.outcomes["how"], "outcome": o, "queries": int(c.get(o, 0))})
    return pd.DataFrame(rows, columns=["record", "when", "cut", "how", "outcome", "queries"])


def outcomes_title(outcomes: pd.DataFrame) -> str:
    """The title of :func:`outcomes_frame`'s chart, by the cuts its audits applied: a saved cut is named only when
    every audit applied one (an audit with nothing saved applies the balanced cut, or a cut given to it)."""
    hows = list(dict.fromkeys(outcomes["how"])) if len(outcomes) else []
    if len(hows) == 1:
        return {"saved": "Outcomes at the saved cut over time",
                "balanced": "Outcomes at the balanced cut over time (no cut was saved)",
                "given": "Outcomes at the given cut over time (no cut was saved)"}.get(
                    hows[0], f"Outcomes at the {hows[0]} cut over time")
    if not hows:
        return "Outcomes at each audit's cut over time"
    order = [h for h in ("saved", "given", "balanced") if h in hows] + [h for h in hows if h not in
                                                                         ("saved", "given", "balanced")]
    kinds = ", ".join(order[:-1]) + " or " + order[-1]
    return f"Outcomes at each audit's cut over time ({kinds}: see 'how')"


def health_frame(records: Sequence) -> pd.DataFrame:
    """Health findings per index generation, newest first: ``record``, ``when``, ``series``, ``generation`` (an
    index file's generation; ``-`` for a dataset or a store), ``healthy``, ``check``, ``severity``, ``detail``.

    Reads both JSON forms a health check writes: an index's (``findings`` with ``check``, ``title``) and a
    dataset's or store's (``checks`` with ``name``)."""
    rows = []
    for rec in sorted(records, key=lambda r: r.id, reverse=True):
        for h in rec.health:
            found = h.get("findings") if h.get("findings") is not None else h.get("checks") or []
            for f in found:
                rows.append({"record": rec.id, "when": _when(rec.created_at), "series": h.get("_series", ""),
                             "generation": str(h.get("generation", "-")), "healthy": bool(h.get("healthy")),
                             "check": f.get("check") or f.get("name") or "", "severity": f.get("severity", ""),
                             "detail": f.get("detail", "")})
    return pd.DataFrame(rows, columns=["record", "when", "series", "generation", "healthy", "check", "severity",
                                       "detail"])


def measures_offered() -> list[str]:
    """The measures the page offers (the registry's names, report order)."""
    return list(measure_names())


def records_diff(before, after, series: str, k: int = 8, given: float | None = None, cuts=None):
    """Two records of ``series`` compared by the Upgrade diff (:func:`audit.evaluation.upgrade.diff_runs`) on their
    rebuilt run sets; the cut by the one saved-threshold rule (a given cut, else the one saved for the before
    run's configuration, else its balanced cut).

    Raises
    ------
    ValueError
        A record holds no run of ``series``, or the two runs do not count the same queries (another ground truth).
    """
    from ..evaluation.saved_cut import choose
    from ..evaluation.upgrade import diff_runs
    from ..history.record import runset_of

    try:
        rb, ra = before.run(series), after.run(series)
    except KeyError as e:
        raise ValueError(str(e).strip("'\"")) from None
    if before.ground_truth != after.ground_truth:
        raise ValueError(f"records #{before.id} and #{after.id} were judged on different ground truths "
                         f"({before.ground_truth[:12]}, {after.ground_truth[:12]}): a paired comparison needs the same "
                         "questions and judgments")
    sb, sa = runset_of(before), runset_of(after)
    choice = choose(rb.cut_key, given, cuts=cuts)
    return diff_runs(sb, rb.name, sa, ra.name, k, choice.cut, choice.how, labels=(before.label(), after.label()),
                     signed=choice.saved.signed() if choice.saved else "")


def record_id(value) -> int:
    """A link's ``?record=N`` as a record id.

    Raises
    ------
    ValueError
        ``value`` is not a positive whole number (the message names it).
    """
    text = str(value).strip().lstrip("#")
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"record={value!r} in the link is not a history record number (a whole number from 1)")
    return int(text)


def record_frame(record, measure: str = DEFAULT_MEASURE) -> pd.DataFrame:
    """One row per run of ``record``: ``series``, ``run``, ``score kind``, ``measure`` (its value, and for Success@k
    its Wilson 95% ``low`` and ``high`` as recorded), ``cut``, ``how`` (the cut the audit applied), and the
    outcomes at it (``answered``, ``answered without``, ``abandoned``, ``bluff``, ``refused``; NaN without one)."""
    measure = parse_measure(measure)
    rows = []
    for r in record.runs:
        iv = r.intervals.get(measure) if measure.startswith("Success@") else None
        o = r.outcomes or {}
        counts = o.get("counts") or {}
        rows.append({"series": r.series, "run": r.name, "score kind": r.score_kind,
                     measure: r.measures.get(measure, math.nan) if r.available else math.nan,
                     "low": iv[1] if iv else math.nan, "high": iv[2] if iv else math.nan,
                     "cut": o.get("cut", math.nan), "how": o.get("how", ""),
                     **{k: counts.get(k, math.nan) for k in ("answered", "answered without", "abandoned", "bluff",
                                                              "refused")}})
    return pd.DataFrame(rows, columns=["series", "run", "score kind", measure, "low", "high", "cut", "how",
                                       "answered", "answered without", "abandoned", "bluff", "refused"])
