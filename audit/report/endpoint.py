"""The requests part of a runs report: how each question put to a live endpoint ended, how long it took,
and the measures over the answered questions beside those over all questions.

For a run set with request logs (``RunSet.settings["requests"]``, filled by
:func:`audit.sources.endpoint.endpoint_system`): outcome counts per run (answered, timed out, HTTP error
by status, malformed with the first reason), p50/p95/p99 latency per outcome (milliseconds, the attempt that
decided the outcome), and the measures twice, both labelled: **over all questions** (the report's ``results``:
a question whose request failed has no ranking and scores 0, a failure counted as a miss; ``--fail-under``
gates on these) and **over the answered questions** (``results_answered``: the judged questions whose
request was answered, an empty answer included). The frames here are what the Overview page shows.
"""

from __future__ import annotations

import pandas as pd

from ..evaluation.measures import KS, evaluate_run
from ..sources.endpoint.log import OUTCOME_LABELS, OUTCOMES, PERCENTILES

__all__ = ["ALL_LABEL", "ANSWERED_LABEL", "answered_results", "latency_frame", "measures_frame", "outcomes_frame",
           "over_which_questions", "requests_json", "requests_text"]

#: The labels of the two sets of measures.
ALL_LABEL = "over all questions (a failed request counts as a miss)"
ANSWERED_LABEL = "over the answered questions only"


def answered_results(report) -> list:
    """Per run with a request log: its :class:`~audit.evaluation.measures.RunResult` over the judged questions
    that were answered (input order; runs without a log are left out)."""
    rs = report.runset
    out = []
    for run in rs.runs:
        log = _logs(rs).get(run.name)
        if log is None:
            continue
        answered = set(log.answered(True))
        qrels = rs.qrels(run)
        out.append(evaluate_run(run, qrels, KS, [q for q in qrels.query_ids if q in answered]))
    return out


def _logs(runset) -> dict:
    return runset.settings.get("requests") or {}


def outcomes_frame(runset) -> pd.DataFrame:
    """One row per endpoint run: ``run``, ``questions``, one column per outcome (its label), ``in domain
    answered``, ``out of domain answered``, ``HTTP errors by status``, ``retries``, ``max in flight``,
    ``seconds``, ``requests/s``."""
    rows = []
    for name, log in _logs(runset).items():
        c, ci, co = log.counts(), log.counts(True), log.counts(False)
        row = {"run": name, "questions": len(log.outcomes)}
        row.update({OUTCOME_LABELS[o]: c[o] for o in OUTCOMES})
        row["in domain answered"] = f"{ci['answered']}/{sum(ci.values())}"
        row["out of domain answered"] = f"{co['answered']}/{sum(co.values())}"
        row["HTTP errors by status"] = ", ".join(f"{k}: {v}" for k, v in log.http_errors().items()) or "—"
        row["retries"] = sum(max(o.attempts - 1, 0) for o in log.outcomes)
        row["max in flight"] = log.max_in_flight
        row["seconds"] = log.seconds
        row["requests/s"] = log.requests_per_s
        rows.append(row)
    return pd.DataFrame(rows)


def latency_frame(runset) -> pd.DataFrame:
    """One row per endpoint run and outcome that occurred (and ``all``): ``run``, ``outcome``, ``questions``,
    ``p50 (ms)``, ``p95 (ms)``, ``p99 (ms)``, ``max (ms)``."""
    rows = []
    for name, log in _logs(runset).items():
        for o in (None, *OUTCOMES):
            lat = log.latency(o)
            if not lat["n"]:
                continue
            rows.append({"run": name, "outcome": "all" if o is None else OUTCOME_LABELS[o], "questions": lat["n"],
                         **{f"p{p} (ms)": lat[f"p{p}_ms"] for p in PERCENTILES}, "max (ms)": lat["max_ms"]})
    return pd.DataFrame(rows, columns=["run", "outcome", "questions", *[f"p{p} (ms)" for p in PERCENTILES],
                                       "max (ms)"])


def measures_frame(report) -> pd.DataFrame:
    """The headline measures of every endpoint run twice: ``run``, ``over`` (:data:`ALL_LABEL` or
    :data:`ANSWERED_LABEL`), ``queries``, ``Success@1``, ``Success@8``, ``Success@8 [Wilson 95%]``,
    ``nDCG@10``, ``RR``."""
    rows = []
    answered = {r.name: r for r in answered_results(report)}
    for r in report.results:
        if r.name not in answered:
            continue
        for label, res in ((ALL_LABEL, r), (ANSWERED_LABEL, answered[r.name])):
            iv = res.success(8)
            rows.append({"run": r.name, "over": label, "queries": res.n_queries, "Success@1": res.mean("Success@1"),
                         "Success@8": res.mean("Success@8"),
                         "Success@8 [Wilson 95%]": "n/a" if not iv.n else f"[{iv.low:.3f}, {iv.high:.3f}]",
                         "nDCG@10": res.mean("nDCG@10"), "RR": res.mean("RR")})
    return pd.DataFrame(rows, columns=["run", "over", "queries", "Success@1", "Success@8", "Success@8 [Wilson 95%]",
                                       "nDCG@10", "RR"])


def requests_json(report) -> dict:
    """``requests`` (run name → :meth:`~audit.sources.endpoint.log.RequestLog.to_dict`), ``results_over`` (what
    ``results`` counts), ``results_answered`` (one row per run, the keys of ``results``) and its label."""
    return {"requests": {n: log.to_dict() for n, log in _logs(report.runset).items()},
            "results_over": ALL_LABEL,
            "results_answered": [r.to_dict() for r in answered_results(report)],
            "results_answered_over": ANSWERED_LABEL}


def _fmt(v: float) -> str:
    return "—" if v != v else f"{v:.0f}"


def requests_text(report) -> list[str]:
    """The text lines of the requests part (empty without request logs)."""
    s = report.runset
    logs = _logs(s)
    if not logs:
        return []
    any_log = next(iter(logs.values()))
    L = ["", f"Requests (deadline {any_log.deadline_s:g} s a request, concurrency {any_log.concurrency}, "
             f"{any_log.retries} retries on timeouts, 5xx and 429; total time bound {any_log.total_time_s:g} s)"]
    of = outcomes_frame(s)
    L.append(of.drop(columns=["seconds", "requests/s"]).to_string(index=False))
    for name, log in logs.items():
        L.append(f"{name}: {len(log.outcomes)} questions in {log.seconds:.2f} s ({log.requests_per_s:.1f} requests/s, "
                 f"at most {log.max_in_flight} in flight)")
        for outcome, reason in log.first_reasons().items():
            L.append(f"  first {OUTCOME_LABELS[outcome]}: {reason}")
    L += ["", "Latency per outcome, milliseconds (the attempt that decided it; wall clock on this machine)"]
    lf = latency_frame(s)
    L.append(lf.to_string(index=False, formatters={c: _fmt for c in lf.columns if "(ms)" in c}))
    L += ["", "Measures over all questions and over the answered questions only"]
    mf = measures_frame(report)
    L.append(mf.to_string(index=False, formatters={c: (lambda v: f"{v:.3f}") for c in
                                                   ("Success@1", "Success@8", "nDCG@10", "RR")}))
    return L


def over_which_questions(runset) -> str | None:
    """Over which questions an endpoint's figures are computed, in one sentence (None without a request log).

    Every page's figures (Strategies, Query explorer, Threshold …) are over all judged questions, a failed request
    counting as a miss, as the CLI's ``results`` are; this sentence says so and names the failures, so a figure is
    never read as if every question had been answered.

    Parameters
    ----------
    runset : audit.runset.RunSet

    Returns
    -------
    str or None
        e.g. "Endpoint blue: figures over all 6 judged questions; 3 requests failed (timed out 1, HTTP error 1,
        malformed response 1) and count as misses (Overview: the measures over the 3 answered only)."
    """
    logs = _logs(runset)
    if not logs:
        return None
    parts = []
    for name, log in logs.items():
        c = log.counts(True)
        n = sum(c.values())
        failed = {OUTCOME_LABELS[o]: c[o] for o in OUTCOMES if o != "answered" and c[o]}
        k = sum(failed.values())
        head = f"Endpoint run {name}: figures over all {n} judged questions"
        if not k:
            parts.append(head + " (every request answered).")
        else:
            parts.append(head + f"; {k} request{'s' if k != 1 else ''} failed ("
                         + ", ".join(f"{lab} {v}" for lab, v in failed.items())
                         + f") and count as misses (Overview: the measures over the {c['answered']} answered only).")
    return " ".join(parts)

