"""The live endpoint as a dashboard source ("Live endpoint"), and its requests on the Overview page.

- :func:`draw_endpoint_inputs` draws the endpoint's inputs (which endpoints, the questions, a model or query
  vectors for services that take ``{vector}``, the documents for the team's citations, k, concurrency,
  deadline, retries) and returns the answers as a :class:`~audit.runset.RunSet`, or None
  until the user presses **Ask the endpoint**. The questions are sent once: the result is kept in the session
  keyed by the inputs and returned on every rerun; nothing is sent again until the inputs change and the
  button is pressed.
- :func:`draw_endpoint_source` is the sidebar's source: the inputs in an expander, the run set the pages read.
- :func:`draw_requests` draws the outcome counts, latency per outcome and the measures over all and over the
  answered questions (Overview).

Shared mode offers only the endpoints named in ``audit.toml`` (``[endpoints.NAME]``): no URL can be typed,
and one that reaches the inputs anyway (``$AUDIT_ENDPOINTS``) is refused; redirects are never followed. Header
values (``env:VAR``) are sent, never shown.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from audit.sources.endpoint import MAPPINGS, EndpointError, resolve_endpoints

from . import paths
from .text import md

if TYPE_CHECKING:
    from audit.runset import RunSet

__all__ = ["draw_endpoint_inputs", "draw_endpoint_source", "draw_requests"]

_AS_NEEDLES, _AS_QRELS = "needles", "queries + qrels"
_SYSTEM = "_endpoint_system"      # session key: (inputs digest, RunSet, label)


def _lines(text: str) -> list[str]:
    return [x.strip() for x in (text or "").splitlines() if x.strip() and not x.strip().startswith("#")]


def _endpoints(key: str):
    """The chosen endpoints (EndpointSpec list), or None (nothing chosen, or refused: the reason is shown)."""
    cfg = paths.config()
    shared = cfg.shared
    named = dict(cfg.endpoints)
    st.session_state.setdefault(f"{key}_urls", os.environ.get("AUDIT_ENDPOINTS", ""))
    chosen = st.multiselect("Endpoints", list(named), key=f"{key}_names",
                            help="Named by the operator in audit.toml ([endpoints.NAME]); each is a run.")
    mapping = "plain"
    if not shared:
        st.text_area("Or URLs, one a line: URL or NAME=URL", key=f"{key}_urls", height=80,
                     help="Blue and green, before and after: each line is a run. A URL uses the mapping below.")
        mapping = st.selectbox("Their request and response", [*MAPPINGS, *named], key=f"{key}_mapping",
                               format_func=lambda m: f"{m}: {MAPPINGS[m][2]}" if m in MAPPINGS else
                               f"like the configured endpoint {m}")
    values = [*chosen, *_lines(st.session_state.get(f"{key}_urls", ""))]
    if not values:
        if not named and shared:
            st.info("This dashboard names no endpoint: its operator adds one under [endpoints.NAME] in audit.toml.")
        return None, values, mapping
    try:
        return resolve_endpoints(values, named, mapping=mapping, shared=shared), values, mapping
    except EndpointError as e:  # a URL in shared mode is refused here, whatever put it in the inputs
        st.error(md(e))
        return None, values, mapping


def _corpus(key: str):
    """``(Corpus or None, digest part)``: the documents the team's citations are checked against
    (:func:`ui.store_source._documents`: none, built-in, configured, or a folder in single-user mode)."""
    from .store_source import _documents

    return _documents(key, "Documents (the team's citations are checked against them)",
                      "The answers' chunks are matched to these documents for the Citations page.")


def _queries_qrels(key: str):
    """``(None, out-of-domain queries, digest part, queries, qrels)`` from typed paths (single-user mode), the
    readers ``report --endpoint --queries --qrels`` uses; None while missing or refused (said, nothing asked)."""
    from audit.qrels import read_qrels
    from audit.sources.imported import read_queries

    q = st.text_input("Queries (id, tab, text)", key=f"{key}_queries_path", placeholder="path/to/queries.tsv")
    r = st.text_input("Qrels (TREC: query 0 doc relevance)", key=f"{key}_qrels_path", placeholder="path/to/qrels.trec")
    o = st.text_input("Out-of-domain queries (optional, id, tab, text)", key=f"{key}_oodq_path",
                      placeholder="path/to/ood-queries.tsv")
    if not (q.strip() and r.strip()):
        return None
    try:  # PathRefused and the readers' FILE:LINE errors are ValueErrors: said, nothing asked
        qp, rp = paths.user_path(q, "queries"), paths.user_path(r, "qrels")
        op = paths.user_path(o, "out-of-domain queries") if o.strip() else None
        queries, qrels = read_queries(qp), read_qrels(rp)
        ood = read_queries(op) if op else {}
        raw = (qp.read_bytes(), rp.read_bytes(), op.read_bytes() if op else b"")
    except (ValueError, OSError) as e:
        st.error(md(e))
        return None
    st.caption(f"{len(queries)} queries · {len(qrels.query_ids)} judged · {len(ood)} out-of-domain")
    return None, ood, raw, queries, qrels


def draw_endpoint_inputs(key: str = "endpoint") -> RunSet | None:
    """Draw the endpoint's inputs; return its answers as an RunSet, or None until asked.

    Parameters
    ----------
    key : str
        Prefix of every widget key.

    Returns
    -------
    RunSet or None
        Runs named by endpoint (:func:`audit.sources.endpoint.endpoint_system`), with their request logs.
    """
    from audit.sources.endpoint import endpoint_system
    from audit.sources.imported import InputFileError

    from .progress import ProgressReporter
    from .store_source import _digest, _embedding, _questions

    specs, values, mapping = _endpoints(key)
    if specs is None:
        return None
    with tempfile.TemporaryDirectory(prefix="audit-endpoint-") as d:
        tmp = Path(d)
        as_qrels = (not paths.shared() and st.radio(
            "Questions as", [_AS_NEEDLES, _AS_QRELS], key=f"{key}_questions_as", horizontal=True,
            help="needles: a ground truth whose sentences are looked for in the returned text; queries + qrels: "
                 "your judged queries (TREC qrels on the ids the endpoint returns), as `report --endpoint` takes "
                 "them") == _AS_QRELS)
        q = _queries_qrels(key) if as_qrels else _questions(key, tmp)
        if q is None:
            return None
        e = (None, None, None)
        if any(s.uses_vector for s in specs):
            st.caption(md(f"{', '.join(s.name for s in specs if s.uses_vector)} take the question's vector: the "
                          "model your service embeds with, or its vectors."))
            e = _embedding(key, tmp)
            if e is None:
                return None
    needles, ood, q_digest = q[:3]
    queries, qrels = (q[3], q[4]) if len(q) > 3 else (None, None)
    encoder, vectors, e_digest = e
    corpus, c_digest = _corpus(key)
    c1, c2 = st.columns(2)  # two a row: four in the sidebar wrapped "concurrency" letter by letter
    c3, c4 = st.columns(2)
    k = c1.number_input("k", 1, 1000, 20, key=f"{key}_k", help="Results asked for a question")
    conc = c2.number_input("concurrency", 1, 256, 4, key=f"{key}_concurrency", help="Requests in flight at most")
    deadline = c3.number_input("deadline (s)", 0.1, 600.0, 10.0, key=f"{key}_deadline",
                               help="Seconds a request may take, everything included")
    retries = c4.number_input("retries", 0, 10, 2, key=f"{key}_retries",
                              help="After a timeout, a 5xx or a 429 only, with backoff")
    digest = _digest(values, mapping, [s.to_dict() for s in specs], q_digest, e_digest, c_digest, k, conc, deadline,
                     retries)
    held = st.session_state.get(_SYSTEM)
    if held is not None and held[0] == digest:
        return held[1]
    if not st.button("Ask the endpoint", key=f"{key}_go", type="primary"):
        if held is not None:
            st.caption("The inputs changed: ask the endpoint again to see them.")
        return None
    bar = st.progress(0.0, text="asking…")
    try:
        system = endpoint_system(specs, needles=needles, queries=queries, qrels=qrels, ood_queries=ood, k=int(k),
                                 encoder=encoder,
                                 query_vectors=vectors, corpus=corpus, concurrency=int(conc),
                                 deadline=float(deadline), retries=int(retries), shared=paths.shared(),
                                 progress=ProgressReporter(bar))
    except (EndpointError, InputFileError) as err:
        bar.empty()
        st.error(md(err))
        return None
    bar.empty()
    st.session_state[_SYSTEM] = (digest, system)
    return system


def draw_endpoint_source():
    """The sidebar's "Live endpoint" source: returns its answers' run set; stops the page until asked."""
    with st.sidebar.expander("Live endpoint", expanded=True):
        runset = draw_endpoint_inputs("endpoint")
    if runset is None:
        st.info("Live endpoint: choose the endpoints (and, for a service taking vectors, the model), the questions "
                "and the settings in the sidebar, then press **Ask the endpoint**. The questions are sent once; "
                "header values from `env:VAR` are sent, never shown.")
        st.stop()
    for name, log in (runset.settings.get("requests") or {}).items():  # failed requests only: every figure of
        if log.outcomes and not log.answered(None):                     # the run is a miss, said on every page
            from audit.sources.endpoint.log import OUTCOME_LABELS

            o = log.outcomes[0]
            why = OUTCOME_LABELS.get(o.outcome, o.outcome) + (f": {o.reason}" if o.reason else "")
            st.error(md(f"Endpoint {name} answered none of its {len(log.outcomes)} questions (the first, "
                        f"{o.query_id}: {why}); every figure of run {name} counts them as misses "
                        "(Overview → Requests)."))
    return runset


def draw_requests(ctx) -> None:
    """The requests of a run set asked over HTTP (Overview): outcomes, latency per outcome, measures both ways."""
    from audit.report.sections import Inputs
    from audit.report.endpoint import latency_frame, measures_frame, outcomes_frame
    from audit.sources.endpoint import OUTCOME_LABELS, OUTCOMES

    from .tables import table

    rs = ctx.runset
    requests = rs.settings.get("requests") or {}
    if not requests:
        return
    st.subheader("Requests")
    logs = list(requests.values())
    cols = st.columns(len(OUTCOMES))
    for c, o in zip(cols, OUTCOMES):
        c.metric(OUTCOME_LABELS[o], sum(log.counts()[o] for log in logs),
                 help={"answered": "a valid response, results or an empty list (an empty list is a miss in domain, "
                                   "a refusal out of domain)",
                       "timed_out": f"no complete response within the deadline ({logs[0].deadline_s:g} s), after "
                                    "the retries",
                       "http_error": "a status other than 2xx (by status below), or no response at all",
                       "malformed": "a 2xx response the mapping cannot read (the first reason below)"}[o])
    table(outcomes_frame(rs), "endpoint_outcomes_table", "endpoint-outcomes.csv",
          formats={"seconds": "%.2f", "requests/s": "%.1f"})
    for name, log in requests.items():
        for outcome, reason in log.first_reasons().items():
            st.caption(md(f"{name}, first {OUTCOME_LABELS[outcome]}: {reason}"))
    st.markdown("**Latency per outcome** (milliseconds, the attempt that decided it)")
    lf = latency_frame(rs)
    table(lf, "endpoint_latency_table", "endpoint-latency.csv", formats={c: "%.0f" for c in lf.columns if "(ms)" in c})
    st.markdown("**Measures over all questions and over the answered questions only** (`--fail-under` gates on "
                "all questions: a failed request counts as a miss)")
    mf = measures_frame(Inputs(rs, tuple(ctx.results)))
    table(mf, "endpoint_measures_table", "endpoint-measures.csv",
          formats={c: "%.3f" for c in ("Success@1", "Success@8", "nDCG@10", "RR")})
