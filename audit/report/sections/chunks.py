"""The sections of chunks whose cut rule is known: ``phrasing`` (the two wordings side by side), ``needles``
(destroyed, overlap-only, past the encoder window), ``tokens`` (what the chunks cost to embed, and what the
encoder silently cuts), ``latency`` and ``retrieval`` (the settings of runs made here)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..serialize import records
from ..tables import PHRASINGS, chunks_frame, latency_frame, phrasing_frame
from .base import Section

__all__ = ["LatencySection", "NeedlesSection", "PhrasingSection", "RetrievalSection", "TokensSection"]

class PhrasingSection(Section):
    """Per run, each measure of :data:`audit.report.tables.PHRASING_MEASURES` over the documentation wording and over
    the ticket wording (``documentation Success@8``, ``ticket RR@20`` …)."""

    name = "phrasing"
    needs = ("judgments", "phrasings")

    def compute(self, inputs, done):
        return tuple(records(phrasing_frame(inputs.runset, inputs.results)))

    def to_json(self, rows):
        return list(rows)

    def text(self, rows):
        avail = [r for r in rows if any(v is not None and math.isfinite(v) for k, v in r.items()
                                          if k.startswith(PHRASINGS))]
        cols = ["name", *(f"{p} {m}" for m in ("Success@8", "RR@20") for p in PHRASINGS)]
        return ["By phrasing (documentation vs ticket wording): Success@8 and RR@20",
                pd.DataFrame(avail)[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}")]


@dataclass(frozen=True)
class Needles:
    rows: tuple
    n: int


class NeedlesSection(Section):
    """Per chunk space with a known cut rule: the needles no chunk holds whole (``destroyed``), those only an overlap
    tail holds (``overlap_only``: retrieved, never quotable), those only past the encoder window (``past_window``:
    never embedded); each a list of needle ids."""

    name = "needles"
    needs = ("needles", "chunk_cuts")

    def compute(self, inputs, done):
        rs = inputs.runset
        rows = tuple({"strategy": name, "destroyed": list(sp.needles.destroyed),
                      "overlap_only": list(sp.needles.overlap_only), "past_window": list(sp.needles.past_window)}
                     for name, sp in rs.spaces.items() if sp.strategy is not None and sp.needles is not None)
        return Needles(rows, len(rs.ground_truth.needles)) if rows else None

    def why_not(self, inputs, done):
        return "no needle was looked for in chunks whose cut rule is known"

    def to_json(self, n):
        return {"needles": n.n, "rows": [dict(r) for r in n.rows]}

    def text(self, n):
        L = [f"Needles ({n.n}): destroyed (no chunk holds it whole), overlap-only (not quotable), past the encoder "
             "window (never embedded)"]
        for r in n.rows:
            L.append(f"  {r['strategy']}: destroyed {len(r['destroyed'])}, overlap-only {len(r['overlap_only'])}, "
                     f"past window {len(r['past_window'])}"
                     + (f" ({', '.join(r['destroyed'][:8])}{' …' if len(r['destroyed']) > 8 else ''} destroyed)"
                        if r["destroyed"] else ""))
        return L


@dataclass(frozen=True)
class Tokens:
    rows: tuple
    window: int | None
    special: int


class TokensSection(Section):
    """Per chunk space with token counts: chunks, sizes, embedded and header tokens, the header's share, chunks over
    the encoder window (silently truncated), the build's cost; ``window`` and ``special_tokens`` of the encoder."""

    name = "tokens"
    needs = ("tokens", "chunk_cuts")

    def compute(self, inputs, done):
        rs = inputs.runset
        ch = chunks_frame(rs).drop(columns=["destroyed", "overlap-only", "past window"])
        first = next(sp.tokens for sp in rs.spaces.values() if sp.tokens is not None)
        return Tokens(tuple(records(ch)), rs.model.get("window"), int(first.n_special))

    def to_json(self, t):
        return {"window": t.window, "special_tokens": t.special, "rows": list(t.rows)}

    def text(self, t):
        df = pd.DataFrame(list(t.rows))
        df["index build (ms/chunk)"] = ["cached" if v is None or not math.isfinite(v) else f"{v:.1f}"
                                        for v in df["index build (ms/chunk)"]]
        return ["Chunks and tokens (tokens: the embedding model's word-pieces, special tokens excluded)",
                df.drop(columns=["recipe"]).to_string(index=False, float_format=lambda v: f"{v:.3f}"),
                f"encoder window: {t.window} tokens including {t.special} special tokens; 'over window' chunks are "
                "silently truncated by the encoder"]


@dataclass(frozen=True)
class Latency:
    rows: tuple
    query_embedding_ms: float | None


class LatencySection(Section):
    """p50 / p95 milliseconds per query of each run (wall clock, this machine), and the query embedding's."""

    name = "latency"
    needs = ("latency",)

    def compute(self, inputs, done):
        q = inputs.runset.settings.get("query_embed_ms")
        return Latency(tuple(records(latency_frame(inputs.runset))),
                       None if q is None or not math.isfinite(q) else float(q))

    def to_json(self, lat):
        return {"rows": list(lat.rows), "query_embedding_ms": lat.query_embedding_ms}

    def text(self, lat):
        q = lat.query_embedding_ms
        return ["Latency, wall clock on this machine (dense = scan only; hybrid includes dense and BM25)",
                pd.DataFrame(list(lat.rows)).to_string(index=False, float_format=lambda v: f"{v:.2f}"),
                f"query embedding: {'cached (no model call)' if q is None else f'{q:.1f} ms/query'}"]


class RetrievalSection(Section):
    """The settings of runs made here: ``bm25_tokens`` (the token rule), ``rerank_unavailable`` (why no
    cross-encoder ran), ``rerank_window`` (its window, tokens), ``bm25_no_token`` (questions BM25 found no token
    in), ``rerank_pairs_over_window`` (per chunk space, the reranked pairs cut at the cross-encoder's window)."""

    name = "retrieval"
    needs = ("query_time_search",)

    def compute(self, inputs, done):
        rs = inputs.runset
        st = rs.settings
        over = {name: sum(len(x) for x in sp.rerank_over_window.values())
                for name, sp in rs.spaces.items() if sp.rerank_over_window}
        return {"bm25_tokens": st.get("bm25_tokens"), "rerank_unavailable": st.get("rerank_error"),
                "rerank_window": st.get("rerank_window"), "bm25_no_token": list(st.get("no_bm25_token", ())),
                "rerank_pairs_over_window": over}

    def to_json(self, r):
        return dict(r)

    def text(self, r):
        L = []
        if r["rerank_unavailable"]:
            L.append(f"rerank unavailable: {r['rerank_unavailable']}")
        elif r["rerank_window"] and r["rerank_pairs_over_window"]:
            over = ", ".join(f"{n} {v}" for n, v in r["rerank_pairs_over_window"].items())
            L.append(f"rerank pairs over the cross-encoder window ({r['rerank_window']} tokens; cut before scoring, "
                     f"their last words never count): {over}")
        if r["bm25_no_token"]:
            L.append(f"BM25 found no token in {len(r['bm25_no_token'])} questions: {', '.join(r['bm25_no_token'][:10])}")
        return L
