"""Pure helpers behind the dashboard pages: tables, headlines and escaped markup.

Nothing here imports Streamlit; every function takes an
:class:`~audit.pipeline.AuditRun` (or plain values) and returns DataFrames,
dataclasses or HTML strings, so a page only arranges widgets around them and a
test can check them without a browser.

Units: offsets and lengths are characters of a document's canonical text (or
of a chunk's ``text`` when stated); tokens are the encoder's word-pieces
without special tokens unless stated; distances are cosine distances in
[0, 2]; times are milliseconds.

Every HTML string is built from :func:`html.escape`-d text: document content is
shown as text, never interpreted (a document holding ``<script>`` shows the
characters ``<script>``).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .chunking import Chunk
from .citations import Context, verify_citation
from .corpus import TEXT_SUFFIXES, Corpus, Document, LoadFailure
from .corpus import document_from_bytes as corpus_document_from_bytes
from .evaluation import KS, ColumnResult, PairedTest, paired_test
from .groundtruth import collapse, collapse_with_map
from .pipeline import AuditRun, StrategyRun
from .retrieval import Ranking
from .threshold import KEEP, QueryDistances, gate

__all__ = [
    "BestColumn",
    "UPLOAD_TYPES",
    "best_column",
    "chunk_map_html",
    "chunk_spans_frame",
    "citations_frame",
    "corpus_from_uploads",
    "distance_frame",
    "document_from_bytes",
    "find_collapsed",
    "headlines",
    "hits_frame",
    "mark_html",
    "needles_frame",
    "outcomes_frame",
    "over_window_frame",
    "overlap_only_frame",
    "pair_matrix",
    "pairs_frame",
    "quote_in_document_html",
    "recall_chart_frame",
    "results_display",
    "token_lengths_frame",
    "token_share_frame",
    "truncated_text_html",
]

#: Text file endings accepted for an uploaded corpus, with the conversion to canonical text.
UPLOAD_SUFFIXES = dict(TEXT_SUFFIXES)
#: The same endings without the dot (for a file picker).
UPLOAD_TYPES = tuple(s.lstrip(".") for s in UPLOAD_SUFFIXES)

# Colours (light backgrounds readable in both themes' text colours is not
# guaranteed, so text colour is set explicitly).
_BANDS = ("#dbeafe", "#fef3c7")
_TAIL = ("background-image: repeating-linear-gradient(135deg, rgba(100,116,139,.45) 0 3px, "
         "transparent 3px 7px);")
_NEEDLE = "outline: 2px solid #16a34a; outline-offset: -1px; background-color: #bbf7d0;"
_NEEDLE_BAD = "outline: 2px solid #dc2626; outline-offset: -1px; background-color: #fecaca;"
#: A red vertical bar drawn at a cut (an empty inline block: no glyph a font could lack).
_CUT = ("display: inline-block; width: 3px; height: 1.3em; margin: 0 2px; vertical-align: text-bottom; "
        "background-color: #dc2626;")
_BOX = ("white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, SFMono-Regular, Menlo, "
        "monospace; font-size: 0.8rem; line-height: 1.45; color: #111827; background: #ffffff; "
        "border: 1px solid #d1d5db; border-radius: 6px; padding: 0.6rem;")


# --------------------------------------------------------------------------- uploads


def document_from_bytes(name: str, raw: bytes) -> Document:
    """A :class:`Document` from an uploaded file: :func:`audit.corpus.document_from_bytes` (``doc_id`` = name).

    Raises
    ------
    ValueError
        Unsupported ending, or unreadable bytes (empty, binary, not UTF-8,
        corrupt or image-only PDF), with the reason.
    """
    return corpus_document_from_bytes(name, raw)


def corpus_from_uploads(files: Sequence[tuple[str, bytes]], name: str = "uploaded files") -> Corpus:
    """A :class:`Corpus` from ``(file name, bytes)`` pairs.

    A file that cannot be read (bad type, empty, binary, not UTF-8, a repeated
    name) is listed in ``failures`` with its reason; the rest load. Documents
    are sorted by ``doc_id`` (the file name).
    """
    docs: dict[str, Document] = {}
    failures: list[LoadFailure] = []
    for fname, raw in files:
        if fname in docs:
            failures.append(LoadFailure(fname, "a file with this name was already uploaded"))
            continue
        try:
            docs[fname] = document_from_bytes(fname, raw)
        except ValueError as e:
            failures.append(LoadFailure(fname, str(e)))
    return Corpus(name=name, documents=tuple(docs[k] for k in sorted(docs)), failures=tuple(failures))


# --------------------------------------------------------------------------- markup


def find_collapsed(text: str, needle: str) -> tuple[int, int] | None:
    """Character range ``[start, end)`` of ``needle`` in ``text``, whitespace runs compared collapsed.

    The rule of a correct retrieval (docs/definitions.md, *Matching view*): both sides with runs of
    whitespace collapsed to one space. ``None`` when absent or empty.
    """
    key = collapse(needle)
    if not key:
        return None
    cm, origin = collapse_with_map(text)
    i = cm.find(key)
    if i < 0:
        return None
    return int(origin[i]), int(origin[i + len(key) - 1]) + 1


def mark_html(text: str, layers: Sequence[tuple[int, int, str]] = (),
              markers: Sequence[tuple[int, str]] = (), box: bool = True, max_height_px: int | None = None,
              title_of: Sequence[tuple[int, int, str]] = ()) -> str:
    """Escaped ``text`` with inline-styled spans.

    Parameters
    ----------
    layers : sequence of (start, end, css)
        Character ranges and the CSS declarations applied to them; where
        ranges overlap the declarations are concatenated in the given order.
    markers : sequence of (offset, html)
        Trusted markup (built by this module) inserted before character ``offset``.
    box : bool
        Wrap in a monospace, pre-wrapped box.
    max_height_px : int or None
        Scroll the box beyond this height (pixels).
    title_of : sequence of (start, end, text)
        Tooltips (escaped) for ranges.

    Returns
    -------
    str
        HTML in which every character of ``text`` is escaped.
    """
    n = len(text)
    cuts = {0, n}
    for s, e, _ in layers:
        cuts.update((max(0, min(n, s)), max(0, min(n, e))))
    for s, e, _ in title_of:
        cuts.update((max(0, min(n, s)), max(0, min(n, e))))
    mk: dict[int, list[str]] = {}
    for pos, m in markers:
        pos = max(0, min(n, pos))
        cuts.add(pos)
        mk.setdefault(pos, []).append(m)
    edges = sorted(cuts)
    out: list[str] = []
    for a, b in zip(edges, edges[1:] + [None]):
        if a in mk:
            out.extend(mk[a])
        if b is None or a >= b:
            continue
        seg = html.escape(text[a:b], quote=True)
        css = "".join(c for s, e, c in layers if s <= a and b <= e)
        tip = " / ".join(t for s, e, t in title_of if s <= a and b <= e)
        if css or tip:
            attrs = (f' style="{html.escape(css, quote=True)}"' if css else "") + (
                f' title="{html.escape(tip, quote=True)}"' if tip else "")
            out.append(f"<span{attrs}>{seg}</span>")
        else:
            out.append(seg)
    body = "".join(out)
    if not box:
        return body
    style = _BOX + (f" max-height: {int(max_height_px)}px; overflow-y: auto;" if max_height_px else "")
    return f'<div style="{style}">{body}</div>'


def legend_html(items: Sequence[tuple[str, str]]) -> str:
    """A one-line legend: ``(css, label)`` pairs, labels escaped."""
    parts = [f'<span style="{html.escape(css, quote=True)} padding: 0 0.4em; border-radius: 3px; '
             f'color: #111827;">{html.escape(label)}</span>' for css, label in items]
    return '<div style="font-size: 0.8rem; display: flex; gap: 0.8em; flex-wrap: wrap;">' + "".join(parts) + "</div>"


CHUNK_MAP_LEGEND = legend_html([
    (f"background-color: {_BANDS[0]};", "chunk (odd)"),
    (f"background-color: {_BANDS[1]};", "chunk (even)"),
    (f"background-color: {_BANDS[0]}; {_TAIL}", "copied into the next chunk as its overlap tail"),
    (_NEEDLE, "needle (answer)"),
    (_NEEDLE_BAD, "destroyed needle: no chunk holds it whole"),
    ("color: #dc2626; font-weight: bold;", "the cut that destroyed it"),
]).replace("the cut that destroyed it", f'<span style="{_CUT}"></span> the cut that destroyed it')


def chunk_text_html(chunk: Chunk, needle: str | None = None, cut: int | None = None,
                    max_height_px: int | None = 260) -> str:
    """A chunk's embedded ``text``: header grey, overlap tail striped, needle marked, text past ``cut`` struck.

    ``cut`` is the character offset in ``text`` where the encoder stops reading.
    """
    text = chunk.text
    layers: list[tuple[int, int, str]] = []
    hlen = len(chunk.header) + 1 if chunk.header else 0
    if hlen:
        layers.append((0, hlen, "color: #6b7280; font-style: italic;"))
    if chunk.tail:
        layers.append((hlen, hlen + len(chunk.tail), _TAIL))
    if needle:
        r = find_collapsed(text, needle)
        if r:
            layers.append((r[0], r[1], _NEEDLE))
    markers = []
    if cut is not None and cut < len(text):
        layers.append((cut, len(text), "color: #9ca3af; text-decoration: line-through;"))
        markers.append((cut, f'<span style="{_CUT}" title="the encoder window ends here"></span>'))
    return mark_html(text, layers, markers, max_height_px=max_height_px)


def truncated_text_html(text: str, cut: int, max_height_px: int | None = 260) -> str:
    """``text`` with ``text[cut:]`` (what the encoder never reads) struck through and marked."""
    return mark_html(text, [(cut, len(text), "color: #b91c1c; background-color: #fee2e2; "
                                             "text-decoration: line-through;")],
                     [(cut, f'<span style="{_CUT}" title="the encoder window ends here"></span>')]
                     if cut < len(text) else [], max_height_px=max_height_px)


def quote_in_document_html(doc: Document, start: int, end: int, context: int = 300,
                           max_height_px: int | None = 300) -> str:
    """The quote ``doc.text[start:end]`` marked inside its document, with ``context`` characters around it."""
    lo, hi = max(0, start - context), min(len(doc.text), end + context)
    body = mark_html(doc.text[lo:hi], [(start - lo, end - lo, _NEEDLE)], box=False)
    pre = "…" if lo > 0 else ""
    post = "…" if hi < len(doc.text) else ""
    style = _BOX + (f" max-height: {int(max_height_px)}px; overflow-y: auto;" if max_height_px else "")
    return f'<div style="{style}">{pre}{body}{post}</div>'


# --------------------------------------------------------------------------- chunk map


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


def chunk_map_html(doc: Document, s: StrategyRun, needles: Sequence[tuple[str, int, int]],
                   max_height_px: int | None = 600) -> str:
    """One document's canonical text with one strategy's chunks drawn over it.

    Chunks are alternating bands; the part of a chunk copied into the next
    chunk's overlap tail is striped; needles are outlined (red when the
    strategy destroys them) and every chunk boundary that falls strictly
    inside a destroyed needle gets a red bar: the cut that destroyed it.

    Parameters
    ----------
    needles : sequence of (needle id, start, end)
        Canonical ranges of the needles in this document.
    """
    chunks = s.chunks.of_document(doc.doc_id)
    ov = s.strategy.overlap
    layers: list[tuple[int, int, str]] = []
    tips: list[tuple[int, int, str]] = []
    for i, c in enumerate(chunks):
        layers.append((c.start, c.end, f"background-color: {_BANDS[i % 2]};"))
        tips.append((c.start, c.end, f"chunk {c.chunk_id} {c.locator}"))
        nxt = chunks[i + 1] if i + 1 < len(chunks) else None
        if ov and nxt is not None and nxt.tail:
            layers.append((c.end - min(ov, len(c.content)), c.end, _TAIL))
    markers: list[tuple[int, str]] = []
    destroyed = set(s.destroyed)
    for nid, a, b in needles:
        bad = nid in destroyed
        layers.append((a, b, _NEEDLE_BAD if bad else _NEEDLE))
        tips.append((a, b, f"needle {nid}" + (" — destroyed: no chunk holds it whole" if bad else "")))
        if bad:
            # one bar per gap between consecutive chunks that falls inside the needle
            cuts = sorted({(p.end if p.end > a else n.start) for p, n in zip(chunks, chunks[1:])
                           if p.end < b and n.start > a})
            for pos in cuts:
                markers.append((pos, f'<span style="{_CUT}" title="cut inside needle '
                                     f'{html.escape(nid, quote=True)}"></span>'))
    return mark_html(doc.text, layers, markers, max_height_px=max_height_px, title_of=tips)


# --------------------------------------------------------------------------- overview


@dataclass(frozen=True)
class BestColumn:
    """The best column at ``k`` and its paired sign test against the runner-up.

    ``recall`` and ``runner_recall`` are shares of in-domain queries;
    ``test`` is the sign test of best vs runner-up on hit@k (raw p);
    ``significant`` is ``test.p < 0.05``.
    """

    k: int
    best: str
    recall: float
    runner_up: str | None
    runner_recall: float
    test: PairedTest | None

    @property
    def significant(self) -> bool:
        return self.test is not None and self.test.p < 0.05


def _available(run: AuditRun, phrasing: str | None = None) -> list[ColumnResult]:
    return [c.subset(phrasing) for c in run.columns() if c.available and c.per_query]


def best_column(run: AuditRun, k: int = 8) -> BestColumn | None:
    """Best available column by recall@k (ties: higher MRR@20, then table order), and its runner-up.

    ``None`` when no column has queries (no ground truth).
    """
    cols = _available(run)
    if not cols:
        return None
    order = sorted(range(len(cols)), key=lambda i: (-cols[i].recall(k).estimate, -cols[i].mrr(), i))
    b = cols[order[0]]
    if len(order) < 2:
        return BestColumn(k, b.name, b.recall(k).estimate, None, math.nan, None)
    r = cols[order[1]]
    return BestColumn(k, b.name, b.recall(k).estimate, r.name, r.recall(k).estimate, paired_test(b, r, k))


def headlines(run: AuditRun, k: int = 8) -> list[str]:
    """Findings computed on the loaded data, as sentences (markdown-safe plain text).

    Destroyed answers per strategy, overlap-only and past-window needles, the
    best column at ``k`` and whether a paired sign test separates it from the
    runner-up, and whether a distance threshold can separate in-domain from
    out-of-domain queries.
    """
    out: list[str] = []
    n = len(run.ground_truth.needles)
    if n == 0:
        return ["No ground truth is loaded, so nothing can be measured yet: upload a ground-truth JSONL "
                "in the sidebar (Ground truth → upload)."]
    blind = [s for s in run.strategies if s.strategy.cut == "blind"]
    for s in blind:
        if s.destroyed:
            out.append(f"Blind chunking ({s.strategy.name}: {s.strategy.description}) destroys {len(s.destroyed)} "
                       f"of {n} answers: the needle straddles a cut, so no chunk contains it and no retriever can "
                       "find it.")
        else:
            out.append(f"Blind chunking ({s.strategy.name}: {s.strategy.description}) destroys none of the {n} "
                       "answers" + (" (its overlap tail carries every cut needle)." if s.strategy.overlap else "."))
    for s in run.strategies:
        if s.strategy.cut != "blind" and s.destroyed:
            out.append(f"Strategy {s.strategy.name} ({s.strategy.description}) destroys {len(s.destroyed)} of "
                       f"{n} answers.")
    for s in run.strategies:
        if s.overlap_only:
            out.append(f"Strategy {s.strategy.name}: {len(s.overlap_only)} needle(s) are found only through an "
                       "overlap tail — retrieved, but the citation (the chunk's own content) would not show "
                       "the answer.")
    for s in run.strategies:
        if s.past_window:
            out.append(f"Strategy {s.strategy.name}: {len(s.past_window)} needle(s) sit past the encoder window "
                       f"({run.encoder.window} tokens): the embedding never saw them.")
    bc = best_column(run, k)
    if bc is not None:
        line = f"Best column at R@{k}: {bc.best} ({bc.recall:.3f})"
        if bc.test is None:
            line += "."
        else:
            t = bc.test
            verdict = ("significantly better than" if bc.significant else "not significantly better than")
            line += (f", {verdict} the runner-up {bc.runner_up} ({bc.runner_recall:.3f}): paired sign test "
                     f"+{t.wins}/−{t.losses}, p = {t.p:.3g}")
            if not bc.significant:
                line += (f"; at this win/loss ratio about {t.queries_needed} queries would be needed"
                         if t.queries_needed else "; wins equal losses, more queries would not separate them")
            line += "."
        out.append(line)
    if "dense" in run.retrievers and run.ground_truth.out_of_domain and run.strategies:
        from .threshold import separation

        base = "E" if "E" in [s.strategy.name for s in run.strategies] else run.strategies[0].strategy.name
        sep = separation(run.threshold_queries(base))
        if math.isfinite(sep["worst_in_domain"]) and math.isfinite(sep["best_out_of_domain"]):
            out.append(f"Threshold (strategy {base}, dense): worst in-domain distance to its answer "
                       f"{sep['worst_in_domain']:.3f}, best out-of-domain distance {sep['best_out_of_domain']:.3f} — "
                       + ("no threshold is right for both; choosing one is a product decision (Threshold page)."
                          if sep["overlap"] else "a threshold between the two separates them."))
    return out


# --------------------------------------------------------------------------- strategies


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


# --------------------------------------------------------------------------- query explorer


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
    ``correct``, ``locator``, ``content (chars)``.
    """
    correct = s.correct.get(needle_id, frozenset()) if needle_id else frozenset()
    rows = []
    for rank, (cid, sc) in enumerate(ranking.top(top), start=1):
        c = s.chunks[cid]
        rows.append({"strategy": s.strategy.name, "rank": rank, "chunk_id": cid, "doc_id": c.doc_id,
                     "section": c.label, "score": sc, "score kind": ranking.score_kind,
                     "cosine distance": float(distances[cid]) if len(distances) else math.nan,
                     "correct": cid in correct, "locator": c.locator, "content (chars)": len(c.content)})
    return pd.DataFrame(rows, columns=["strategy", "rank", "chunk_id", "doc_id", "section", "score", "score kind",
                                       "cosine distance", "correct", "locator", "content (chars)"])


# --------------------------------------------------------------------------- threshold


def distance_frame(queries: Sequence[QueryDistances]) -> pd.DataFrame:
    """Distances for the two histograms.

    In-domain queries contribute their distance to the nearest correct chunk
    (``nearest_correct``; a query whose needle is destroyed has none and is
    left out); out-of-domain queries their distance to the nearest chunk.
    Columns: ``query_id``, ``query``, ``group``, ``cosine distance``.
    """
    rows = []
    for q in queries:
        if q.in_domain:
            if q.nearest_correct is None:
                continue
            rows.append({"query_id": q.query_id, "query": q.text, "group": "in-domain: distance to the answer",
                         "cosine distance": float(q.nearest_correct)})
        else:
            rows.append({"query_id": q.query_id, "query": q.text,
                         "group": "out-of-domain: distance to the nearest chunk", "cosine distance": float(q.nearest)})
    return pd.DataFrame(rows, columns=["query_id", "query", "group", "cosine distance"])


def outcomes_frame(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> pd.DataFrame:
    """Per query: what the gate does at ``cut`` (cosine distance).

    Columns: ``query_id``, ``query``, ``in domain``, ``outcome``,
    ``answerable (top-k held the answer)``, ``kept chunks``, ``first distance``.
    """
    rows = []
    for q in queries:
        g = gate(q, cut, keep)
        rows.append({"query_id": q.query_id, "query": q.text, "in domain": q.in_domain, "outcome": g.outcome,
                     "answerable (top-k held the answer)": g.answerable if q.in_domain else None,
                     "kept chunks": len(g.kept),
                     "first distance": float(q.distances[0]) if len(q.distances) else math.nan})
    return pd.DataFrame(rows, columns=["query_id", "query", "in domain", "outcome",
                                       "answerable (top-k held the answer)", "kept chunks", "first distance"])


# --------------------------------------------------------------------------- tokens


def token_share_frame(run: AuditRun) -> pd.DataFrame:
    """Per strategy: header tokens as a share of embedded tokens.

    Columns: ``strategy``, ``embedded tokens``, ``header tokens``,
    ``tail tokens``, ``header share (%)``, ``chunks``, ``over window (chunks)``.
    """
    rows = []
    for s in run.strategies:
        t = s.tokens
        rows.append({"strategy": s.strategy.name, "embedded tokens": int(t.text_tokens.sum()),
                     "header tokens": int(t.header_tokens.sum()), "tail tokens": int(t.tail_tokens.sum()),
                     "header share (%)": 100.0 * t.header_share, "chunks": len(s.chunks),
                     "over window (chunks)": int(t.over_window.sum())})
    return pd.DataFrame(rows, columns=["strategy", "embedded tokens", "header tokens", "tail tokens",
                                       "header share (%)", "chunks", "over window (chunks)"])


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


# --------------------------------------------------------------------------- citations


def citations_frame(ctx: Context, corpus: Corpus) -> pd.DataFrame:
    """The citation table the server attaches, each quote checked against its locator.

    Columns: ``[n]``, ``doc_id``, ``document``, ``section``, ``locator``,
    ``cosine distance``, ``quote (chars)``, ``quote matches locator``, ``check``.
    """
    rows = []
    for c in ctx.citations:
        chk = verify_citation(c.doc_id, c.start, c.end, c.quote, corpus)
        rows.append({"[n]": c.index, "doc_id": c.doc_id, "document": c.document_name, "section": c.locator_label,
                     "locator": c.fragment + (f" {c.page}" if c.page else ""), "cosine distance": c.cosine_distance,
                     "quote (chars)": len(c.quote),
                     "quote matches locator": chk.ok, "check": chk.reason or "ok"})
    return pd.DataFrame(rows, columns=["[n]", "doc_id", "document", "section", "locator", "cosine distance",
                                       "quote (chars)", "quote matches locator", "check"])


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
