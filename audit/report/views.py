"""Tables the pages draw, one per view: strategies, query hits, chunk map, threshold, tokens, citations.

Units: offsets and lengths are characters of a document's canonical text (or of a chunk's
``text`` when stated); tokens are the encoder's word-pieces without special tokens unless stated;
distances are cosine distances in [0, 2]; times are milliseconds.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.citations import NoAnswer, PromptContext, verify_citation, verify_locator
from ..evaluation.metrics import KS, PairedTest
from ..ingest import Corpus
from ..retrieval import Ranking
from ..sources import AuditRun, StrategyRun
from .tables import chunks_frame

__all__ = ["chunk_spans_frame", "citations_frame", "hits_frame", "needles_frame",
           "over_window_frame", "needles_by_strategy", "overlap_only_frame", "refused_frame", "pair_matrix", "pairs_frame", "recall_chart_frame",
           "results_display", "token_lengths_frame", "token_share_frame"]


def results_display(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`audit.report.results_frame` formatted for reading: ``estimate [low, high]`` per k.

    Columns: ``column``, ``queries (n)``, ``R@K [Wilson 95%]`` (shares of
    queries), ``MRR@20``, ``destroyed (needles)``, ``overlap-only (needles)``,
    ``past window (needles)``, ``note``.
    """
    def iv(e, lo, hi):
        return "n/a" if not (isinstance(e, float) and math.isfinite(e)) else f"{e:.3f} [{lo:.3f}, {hi:.3f}]"

    rows = []
    for r in df.to_dict("records"):
        row = {"column": f"{r['strategy']}/{r['retriever']}", "queries (n)": r["n_queries"]}
        for k in KS:
            row[f"R@{k} [Wilson 95%]"] = iv(r[f"recall@{k}"], r[f"recall@{k}_low"], r[f"recall@{k}_high"])
        m = r["mrr"]
        row["MRR@20"] = "n/a" if not (isinstance(m, float) and math.isfinite(m)) else f"{m:.3f}"
        row["destroyed (needles)"] = r["destroyed"]
        row["overlap-only (needles)"] = r["overlap_only"]
        row["past window (needles)"] = r["past_window"]
        row["note"] = "" if r["available"] else f"unavailable: {r['reason']}"
        rows.append(row)
    return pd.DataFrame(rows)


def needles_by_strategy(df: pd.DataFrame) -> pd.DataFrame:
    """The needle counts of :func:`audit.report.results_frame`, one row per strategy (they do not depend on
    the retriever).

    Columns: ``strategy``, ``destroyed (needles)``, ``overlap-only (needles)``, ``past window (needles)``.
    """
    cols = ["strategy", "destroyed (needles)", "overlap-only (needles)", "past window (needles)"]
    if not len(df):
        return pd.DataFrame(columns=cols)
    out = df.drop_duplicates("strategy")[["strategy", "destroyed", "overlap_only", "past_window"]]
    out.columns = cols
    return out.reset_index(drop=True)


def recall_chart_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Long format of :func:`audit.report.results_frame` for a chart with error bars.

    Columns: ``column``, ``strategy``, ``retriever``, ``k``, ``recall``,
    ``low``, ``high`` (shares of queries); unavailable columns dropped.
    """
    rows = []
    for r in df.to_dict("records"):
        if not r["available"] or not r["n_queries"]:
            continue
        for k in KS:
            rows.append({"column": f"{r['strategy']}/{r['retriever']}", "strategy": r["strategy"],
                         "retriever": r["retriever"], "k": k, "recall": r[f"recall@{k}"],
                         "low": r[f"recall@{k}_low"], "high": r[f"recall@{k}_high"]})
    return pd.DataFrame(rows, columns=["column", "strategy", "retriever", "k", "recall", "low", "high"])


def pairs_frame(tests: Sequence[PairedTest]) -> pd.DataFrame:
    """Paired sign tests as a table.

    Columns: ``a``, ``b``, ``k``, ``wins (a hits, b misses)``, ``losses``,
    ``discordant``, ``p``, ``p (Holm)``, ``significant (Holm p < 0.05)``,
    ``queries needed`` (scaling of the observed ratio; "never" when wins equal
    losses).
    """
    rows = [{"a": t.a, "b": t.b, "k": t.k, "wins (a hits, b misses)": t.wins, "losses": t.losses,
             "discordant": t.wins + t.losses, "p": t.p, "p (Holm)": t.p_holm,
             "significant (Holm p < 0.05)": t.significant,
             "queries needed": str(t.queries_needed) if t.queries_needed else "never"} for t in tests]
    return pd.DataFrame(rows, columns=["a", "b", "k", "wins (a hits, b misses)", "losses", "discordant", "p",
                                       "p (Holm)", "significant (Holm p < 0.05)", "queries needed"])


def pair_matrix(tests: Sequence[PairedTest], columns: Sequence[str]) -> pd.DataFrame:
    """Square matrix: cell (row a, column b) = ``+wins/−losses p=… (Holm …)`` of a against b.

    The lower triangle mirrors the upper one (wins and losses swapped, same p).
    """
    m = pd.DataFrame("", index=pd.Index(list(columns), name="a \\ b"), columns=list(columns), dtype=object)
    for t in tests:
        if t.a in m.index and t.b in m.columns:
            m.loc[t.a, t.b] = f"+{t.wins}/−{t.losses} p={t.p:.3g} (Holm {t.p_holm:.3g})"
            m.loc[t.b, t.a] = f"+{t.losses}/−{t.wins} p={t.p:.3g} (Holm {t.p_holm:.3g})"
    for c in columns:
        m.loc[c, c] = "—"
    return m


def _locator_text(run: AuditRun, c) -> str:
    """A chunk's locators for a table cell: ``#char=…`` then its format's fragment and reading."""
    from ..ingest.locators import locator

    try:
        return locator(run.corpus.get(c.doc_id), c.start, c.end).display
    except KeyError:
        return c.locator


def hits_frame(run: AuditRun, s: StrategyRun, ranking: Ranking, distances: np.ndarray,
               needle_id: str | None = None, top: int = 5) -> pd.DataFrame:
    """The first ``top`` chunks of one ranking, one row each.

    Parameters
    ----------
    distances : float array, shape (n_chunks,)
        The query's cosine distance to every chunk of ``s``.
    needle_id : str or None
        Marks correct chunks (``text`` holds the needle) when given.

    Columns: ``strategy``, ``rank``, ``chunk_id``, ``doc_id``, ``section``,
    ``score`` (meaning in ``score kind``), ``score kind``, ``cosine distance``,
    ``correct``, ``locator`` (``#char=`` and the format's own, e.g. ``#page=3 (pages 3–4)``), ``content (chars)``.
    """
    correct = s.correct.get(needle_id, frozenset()) if needle_id else frozenset()
    rows = []
    for rank, (cid, sc) in enumerate(ranking.top(top), start=1):
        c = s.chunks[cid]
        rows.append({"strategy": s.strategy.name, "rank": rank, "chunk_id": cid, "doc_id": c.doc_id,
                     "section": c.label, "score": sc, "score kind": ranking.score_kind,
                     "cosine distance": float(distances[cid]) if len(distances) else math.nan,
                     "correct": cid in correct, "locator": _locator_text(run, c), "content (chars)": len(c.content)})
    return pd.DataFrame(rows, columns=["strategy", "rank", "chunk_id", "doc_id", "section", "score", "score kind",
                                       "cosine distance", "correct", "locator", "content (chars)"])


def needles_frame(run: AuditRun, doc_id: str | None = None) -> pd.DataFrame:
    """Accepted needles with their canonical location and, per strategy, whether they are destroyed.

    Columns: ``needle``, ``doc_id``, ``start (char)``, ``end (char)``, ``text``,
    ``destroyed in`` (comma-separated strategy names), ``overlap-only in``.
    """
    gt = run.ground_truth
    rows = []
    for n in gt.needles:
        loc = gt.locations.get(n.id)
        if loc is None or (doc_id is not None and loc.doc_id != doc_id):
            continue
        rows.append({"needle": n.id, "doc_id": loc.doc_id, "start (char)": loc.start, "end (char)": loc.end,
                     "text": n.needle,
                     "destroyed in": ",".join(s.strategy.name for s in run.strategies if n.id in s.destroyed),
                     "overlap-only in": ",".join(s.strategy.name for s in run.strategies
                                                 if n.id in s.overlap_only)})
    return pd.DataFrame(rows, columns=["needle", "doc_id", "start (char)", "end (char)", "text", "destroyed in",
                                       "overlap-only in"])


def chunk_spans_frame(run: AuditRun, doc_id: str) -> pd.DataFrame:
    """Every strategy's chunks of one document as canonical ranges.

    Columns: ``strategy``, ``chunk_id``, ``start (char)``, ``end (char)``,
    ``length (chars)``, ``band`` (0/1 alternating), ``tail from (char)``
    (start of the part copied into the next chunk, NaN without overlap),
    ``section``, ``embedded tokens``.
    """
    rows = []
    for s in run.strategies:
        chunks = s.chunks.of_document(doc_id)
        ov = s.strategy.overlap
        for i, c in enumerate(chunks):
            nxt = chunks[i + 1] if i + 1 < len(chunks) else None
            tail_from = (c.end - min(ov, len(c.content))) if (ov and nxt is not None and nxt.tail) else math.nan
            rows.append({"strategy": s.strategy.name, "chunk_id": c.chunk_id, "start (char)": c.start,
                         "end (char)": c.end, "length (chars)": c.end - c.start, "band": i % 2,
                         "tail from (char)": tail_from, "section": c.section,
                         "embedded tokens": int(s.tokens.text_tokens[c.chunk_id])})
    return pd.DataFrame(rows, columns=["strategy", "chunk_id", "start (char)", "end (char)", "length (chars)",
                                       "band", "tail from (char)", "section", "embedded tokens"])


def token_share_frame(run: AuditRun) -> pd.DataFrame:
    """Per strategy: header tokens as a share of embedded tokens (the token columns of :func:`chunks_frame`).

    Columns: ``strategy``, ``embedded tokens``, ``header tokens``,
    ``tail tokens``, ``header share (%)``, ``chunks``, ``over window (chunks)``.
    """
    cf = chunks_frame(run)
    return pd.DataFrame({"strategy": cf["strategy"], "embedded tokens": cf["embedded tokens"],
                         "header tokens": cf["header tokens"],
                         "tail tokens": [int(s.tokens.tail_tokens.sum()) for s in run.strategies],
                         "header share (%)": 100.0 * cf["header share"], "chunks": cf["chunks"],
                         "over window (chunks)": cf["over window"]},
                        columns=["strategy", "embedded tokens", "header tokens", "tail tokens", "header share (%)",
                                 "chunks", "over window (chunks)"])


def token_lengths_frame(run: AuditRun) -> pd.DataFrame:
    """One row per chunk: ``strategy``, ``chunk_id``, ``tokens (with special)`` — what the window is compared to."""
    parts = []
    for s in run.strategies:
        t = s.tokens
        parts.append(pd.DataFrame({"strategy": s.strategy.name, "chunk_id": np.arange(len(s.chunks)),
                                   "tokens (with special)": t.text_tokens + t.n_special}))
    if not parts:
        return pd.DataFrame(columns=["strategy", "chunk_id", "tokens (with special)"])
    return pd.concat(parts, ignore_index=True)


def over_window_frame(s: StrategyRun) -> pd.DataFrame:
    """Chunks of one strategy longer than the encoder window.

    Columns: ``chunk_id``, ``doc_id``, ``section``, ``tokens (with special)``,
    ``window (tokens)``, ``text (chars)``, ``read (chars)`` (= ``tokens.cut``),
    ``lost (chars)``, ``lost text`` (``text[cut:]``).
    """
    t = s.tokens
    rows = []
    for i in np.flatnonzero(t.over_window):
        c = s.chunks[int(i)]
        cut = int(t.cut[i])
        rows.append({"chunk_id": c.chunk_id, "doc_id": c.doc_id, "section": c.label,
                     "tokens (with special)": int(t.text_tokens[i] + t.n_special), "window (tokens)": t.window,
                     "text (chars)": len(c.text), "read (chars)": cut, "lost (chars)": len(c.text) - cut,
                     "lost text": c.text[cut:]})
    return pd.DataFrame(rows, columns=["chunk_id", "doc_id", "section", "tokens (with special)", "window (tokens)",
                                       "text (chars)", "read (chars)", "lost (chars)", "lost text"])


def citations_frame(ctx: PromptContext, corpus: Corpus) -> pd.DataFrame:
    """The citation table the server attaches, each quote checked against its locator.

    Columns: ``[n]``, ``doc_id``, ``document``, ``section``, ``locator`` (``#char=`` and the
    format's fragment: ``#page=N``, ``#sheet=…&range=…``, ``#row=…``, ``#t=…``), ``where`` (its
    reading: ``pages N–M``, the sheet and range, the times), ``cosine distance``, ``quote (chars)``,
    ``quote matches locator``, ``check``; then the documented locator fields that apply to at least
    one citation (:func:`audit.ingest.locators.locator_columns`: ``page``, ``page_end``, ``sheet``,
    ``range``, ``row``, ``row_end``, ``t_start``, ``t_end``, ``fragment``, ``locator_note``). A quote
    matches when it equals the canonical text at ``#char=`` and its format locator names the cells
    or cues it comes from (:func:`audit.ingest.locators.check_locator`).
    """
    from ..ingest.locators import Locator, locator_columns

    rows, wheres = [], []
    for c in ctx.citations:
        chk = verify_citation(c.doc_id, c.start, c.end, c.quote, corpus)
        w = c.where if c.where is not None else Locator(c.start, c.end)
        if chk.ok and c.where is not None:
            chk = verify_locator(c.doc_id, w, corpus)
        wheres.append(w)
        rows.append({"[n]": c.index, "doc_id": c.doc_id, "document": c.document_name, "section": c.locator_label,
                     "locator": c.fragment + (f" {w.fragment}" if w.fragment else ""), "where": w.where,
                     "cosine distance": c.cosine_distance, "quote (chars)": len(c.quote),
                     "quote matches locator": chk.ok, "check": chk.reason or "ok"})
    df = pd.DataFrame(rows, columns=["[n]", "doc_id", "document", "section", "locator", "where", "cosine distance",
                                     "quote (chars)", "quote matches locator", "check"])
    for name, values in locator_columns(wheres).items():
        df[name] = values
    return df


def refused_frame(res: NoAnswer, corpus: Corpus | None = None, excerpt: int = 160) -> pd.DataFrame:
    """The chunks nearest a refused question (:attr:`NoAnswer.nearest`), nearest first.

    Columns: ``cosine distance``, ``above the cut by`` (distance − cut, cosine distance; ≥ 0
    since the gate kept none), ``document`` (its title when ``corpus`` has it, else the id),
    ``section``, ``content`` (its first ``excerpt`` characters, "…" when cut), ``chunk``.
    """
    rows = []
    for n in res.nearest:
        try:
            title = corpus.get(n.doc_id).title if corpus is not None else n.doc_id
        except KeyError:
            title = n.doc_id
        text = n.content if len(n.content) <= excerpt else n.content[:excerpt] + "…"
        rows.append({"cosine distance": n.distance, "above the cut by": n.distance - res.threshold,
                     "document": title, "section": n.section, "content": text, "chunk": n.chunk_id})
    return pd.DataFrame(rows, columns=["cosine distance", "above the cut by", "document", "section", "content",
                                       "chunk"])


def overlap_only_frame(run: AuditRun, s: StrategyRun) -> pd.DataFrame:
    """Needles that strategy ``s`` reaches only through an overlap tail (not citable).

    Columns: ``needle``, ``text``, ``chunks holding it in text``, ``doc_id``,
    ``why``.
    """
    rows = []
    for nid in s.overlap_only:
        n = run.ground_truth.needle(nid)
        ids = sorted(s.correct.get(nid, ()))
        rows.append({"needle": nid, "text": n.needle, "chunks holding it in text": ", ".join(map(str, ids)),
                     "doc_id": s.chunks[ids[0]].doc_id if ids else "",
                     "why": "only the embedded text (with the copied tail) holds it; every chunk's own content "
                            "— the quote a citation shows — cuts it"})
    return pd.DataFrame(rows, columns=["needle", "text", "chunks holding it in text", "doc_id", "why"])
