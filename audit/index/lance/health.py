"""Health of a Lance dataset index, streamed in batches: never every vector in memory at once."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...health import NORM_TOLERANCE, OK, UNHEALTHY, WARNING, Finding, HealthReport
from ..stamp import Stamp
from .results import _h64, _vectors
from .schema import documents_uri

__all__ = ["dataset_health"]


def dataset_health(self, batch_rows: int = 8192, tolerance: float = NORM_TOLERANCE) -> HealthReport:
    """Every check, over the dataset streamed ``batch_rows`` rows at a time.

    Two passes: the chunk rows (vectors checked and dropped batch by batch),
    then the document table a batch of documents at a time. What is kept
    between batches: per chunk its document number, ``start``, ``end``,
    ``chunk_id`` and two 64-bit hashes (content, text): 44 bytes a chunk,
    about 440 MB at 10M chunks; never the vectors or the texts.

    Unhealthy (exit 1): failed documents; mixed model stamps (model, weights
    digest, dims, window); a dims stamp ≠ the vector size; non-finite
    vectors; norms off unit (``|norm − 1| > tolerance``, 1e-4 as
    :mod:`audit.index.health`); empty chunks; ``canonical[start:end] ≠ content``;
    chunks whose document is missing from the table; ``chunk_count`` ≠
    rows; ``chunk_id`` not exactly 0..n-1; no document table. Warnings:
    duplicate texts; rows not covered by the vector index (``ann_coverage``).

    Returns
    -------
    HealthReport
        ``engine`` ``lance``, ``target`` ``{"uri"}``; the findings count rows (chunks) or documents and list
        each concerned document with why; ``stamp`` the one stamp of every row (None when mixed or empty);
        ``figures``: ``dims``, ``failed``, ``stamps`` (each distinct stamp with its ``rows``) and ``counts``
        (``rows``, ``non_finite``, ``off_unit``, ``max_norm_deviation``, ``empty``, ``duplicate_rows``,
        ``duplicate_groups``, ``model_stamps``, ``failed``, ``offset_mismatch``, ``missing_documents``,
        ``count_mismatch``, ``bad_chunk_ids``, ``unindexed_rows``).
    """
    nb = max(1, int(batch_rows))
    doc_index: dict[str, int] = {}
    per_doc: Counter = Counter()
    stamps: Counter = Counter()
    n_nonfinite = n_off = n_empty = 0
    max_dev = 0.0
    bad_docs: dict[str, dict[str, list]] = {}
    di, st, en, ch, cid, th = [], [], [], [], [], []

    def flag(check, doc_id, why):
        lst = bad_docs.setdefault(check, {}).setdefault(doc_id, [])
        if len(lst) < 3:
            lst.append(why)

    cols = ["chunk_id", "doc_id", "start", "end", "content", "text", "vector", "model", "model_digest", "dims",
            "window", "pipeline_version", "strategy"]
    for b in self.dataset.to_batches(columns=cols, batch_size=nb):
        if b.num_rows == 0:
            continue
        d = b.to_pydict()
        v = _vectors(b, self.dims)
        finite = np.isfinite(v).all(axis=1)
        norms = np.linalg.norm(np.where(finite[:, None], v, 0).astype(np.float64), axis=1)
        dev = np.abs(norms - 1.0)
        off = finite & (dev > tolerance)
        n_nonfinite += int((~finite).sum())
        n_off += int(off.sum())
        if finite.any():
            max_dev = max(max_dev, float(dev[finite].max()))
        for r in range(b.num_rows):
            doc = d["doc_id"][r]
            if doc not in doc_index:
                doc_index[doc] = len(doc_index)
            per_doc[doc] += 1
            stamps[tuple(d[k][r] for k in ("model", "model_digest", "dims", "window", "pipeline_version",
                                           "strategy"))] += 1
            content = d["content"][r] or ""
            if not content.strip():
                n_empty += 1
                flag("empty", doc, f"chunk {d['chunk_id'][r]} is empty")
            if not finite[r]:
                flag("non_finite", doc, f"chunk {d['chunk_id'][r]} has NaN or infinite values")
            elif off[r]:
                flag("norms", doc, f"chunk {d['chunk_id'][r]} norm {norms[r]:.6f}")
            di.append(doc_index[doc])
            st.append(d["start"][r])
            en.append(d["end"][r])
            ch.append(_h64(content))
            cid.append(d["chunk_id"][r])
            th.append(_h64(d["text"][r] or ""))
    n = len(cid)
    di_a, st_a, en_a = np.array(di, np.int64), np.array(st, np.int64), np.array(en, np.int64)
    ch_a, th_a = np.array(ch, np.uint64), np.array(th, np.uint64)
    cid_a = np.array(cid, np.int64)
    del di, st, en, ch, th, cid
    bad_ids = int(n - np.unique(cid_a).size) + int(((cid_a < 0) | (cid_a >= n)).sum()) if n else 0
    _, inverse, cnt = np.unique(th_a, return_inverse=True, return_counts=True) if n else (None, None, np.zeros(0))
    dup_rows = int((cnt - 1).sum()) if n else 0
    dup_groups = int((cnt > 1).sum()) if n else 0
    model_keys = Counter()
    for s, c in stamps.items():
        model_keys[s[:4]] += c
    dims_stamps = sorted({s[2] for s in stamps})

    # pass 2: document table
    n_docs = n_failed = n_offset = n_count = 0
    failed_rows, seen = [], set()
    docs = self.documents
    if docs is not None:
        order = np.lexsort((st_a, di_a)) if n else np.zeros(0, np.int64)
        sorted_di = di_a[order] if n else di_a
        for b in docs.to_batches(columns=["doc_id", "text", "status", "reason", "chunk_count"], batch_size=256):
            dd = b.to_pydict()
            for doc, text, status, reason, cc in zip(dd["doc_id"], dd["text"], dd["status"], dd["reason"],
                                                     dd["chunk_count"]):
                if status == "failed":
                    n_failed += 1
                    failed_rows.append({"doc_id": doc, "why": reason or "failed"})
                    continue
                n_docs += 1
                seen.add(doc)
                rows_here = per_doc.get(doc, 0)
                if int(cc or 0) != rows_here:
                    n_count += 1
                    flag("count", doc, f"chunk_count stamp {cc} but {rows_here} rows")
                if doc not in doc_index:
                    continue
                k = doc_index[doc]
                lo, hi = np.searchsorted(sorted_di, k), np.searchsorted(sorted_di, k, side="right")
                text = text or ""
                for j in order[lo:hi]:
                    s, e = int(st_a[j]), int(en_a[j])
                    if not (0 <= s <= e <= len(text)) or _h64(text[s:e]) != int(ch_a[j]):
                        n_offset += 1
                        flag("offsets", doc, f"chunk {int(cid_a[j])}: canonical[{s}:{e}] is not its content")
    missing = [doc for doc in doc_index if doc not in seen]
    for doc in missing:
        flag("missing", doc, f"{per_doc[doc]} chunks, no document row")

    def docs_of(check):
        return tuple({"doc_id": k, "why": "; ".join(v)} for k, v in sorted(bad_docs.get(check, {}).items()))

    F = []

    def add(check, bad, title, ok_text, bad_text, documents=(), severity=UNHEALTHY, count=0, concerns="rows"):
        F.append(Finding(check, severity if bad else OK, title, bad_text if bad else ok_text, concerns,
                         int(count) if bad else 0, documents if bad else ()))

    add("rows", n == 0, "chunks in the dataset", f"{n} chunks",
        "no chunk: every row was deleted (or none was written), so nothing can be retrieved")
    add("documents", docs is None, "document table", f"{n_docs} documents with canonical text",
        f"no document table at {documents_uri(self.uri)}: offsets cannot be checked and the audit needs --corpus",
        concerns="documents")
    add("failed", n_failed > 0, "failed documents", "none", f"{n_failed} documents failed to load",
        tuple(sorted(failed_rows, key=lambda r: r["doc_id"])), count=n_failed, concerns="documents")
    mixed_rows = sum(model_keys.values()) - max(model_keys.values()) if model_keys else 0
    add("mixed", len(model_keys) > 1, "one model for every vector",
        (f"{next(iter(model_keys))[0]} ({next(iter(model_keys))[1][:12]})" if model_keys else "no rows"),
        "mixed: " + "; ".join(f"{m} ({dg[:12]}, {dm} dims, window {w}): {c} rows"
                              for (m, dg, dm, w), c in sorted(model_keys.items())), count=mixed_rows)
    add("dims", bool(dims_stamps) and dims_stamps != [self.dims], "dims stamp = vector size",
        f"{self.dims}", f"stamped {dims_stamps}, vectors hold {self.dims} values",
        count=sum(c for s_, c in stamps.items() if s_[2] != self.dims))
    add("non_finite", n_nonfinite > 0, "finite vectors", "every value finite",
        f"{n_nonfinite} vectors with NaN or infinite values", docs_of("non_finite"), count=n_nonfinite)
    add("norms", n_off > 0, f"unit vectors (|norm − 1| ≤ {tolerance:g})", f"max deviation {max_dev:.2e}",
        f"{n_off} vectors off unit length (max deviation {max_dev:.2e})", docs_of("norms"), count=n_off)
    add("empty", n_empty > 0, "empty chunks", "none", f"{n_empty} chunks with empty content", docs_of("empty"),
        count=n_empty)
    add("offsets", n_offset > 0, "canonical[start:end] = content", f"all {n} chunks quote their document",
        f"{n_offset} chunks whose offsets do not land on their content", docs_of("offsets"), count=n_offset)
    add("missing", bool(missing), "documents of every chunk", "present",
        f"{len(missing)} documents have chunks but no row in the document table", docs_of("missing"),
        count=len(missing), concerns="documents")
    add("count", n_count > 0, "chunk_count stamp = rows", "match",
        f"{n_count} documents whose chunk count differs from their rows", docs_of("count"), count=n_count,
        concerns="documents")
    add("chunk_ids", bad_ids > 0, "chunk_id is 0..n-1", "exactly once each",
        f"{bad_ids} chunk ids duplicated or out of range", count=bad_ids)
    add("duplicates", dup_rows > 0, "duplicate chunk texts", "none",
        f"{dup_rows} rows repeat the text of another ({dup_groups} distinct texts)", severity=WARNING, count=dup_rows)
    unindexed = 0
    vix = self.vector_indices()
    for ix in vix:
        try:
            unindexed = max(unindexed, int(self.dataset.stats.index_stats(ix["name"]).get("num_unindexed_rows", 0)))
        except (ValueError, OSError, RuntimeError, TypeError):
            pass
    add("ann_coverage", unindexed > 0, "rows covered by the vector index",
        (f"{vix[0]['type']} covers every row" if vix else "no vector index (exact search only)"),
        f"{unindexed} rows written after the {vix[0]['type'] if vix else ''} index was built: approximate search"
        " scans them flat; rebuild the index", severity=WARNING, count=unindexed)
    # the extraction audit (pages without text, running lines, tables, columns) reads what the extractor saw
    add("extraction", False, "extraction audit", "not made: a Lance dataset holds the chunks and canonical texts, "
        "not the source files its extractor read (`health --db` on an index built from the folder audits them)", "",
        severity=WARNING)
    counts = {"rows": n, "non_finite": n_nonfinite, "off_unit": n_off, "max_norm_deviation": max_dev,
              "empty": n_empty, "duplicate_rows": dup_rows, "duplicate_groups": dup_groups,
              "model_stamps": len(model_keys), "failed": n_failed, "offset_mismatch": n_offset,
              "missing_documents": len(missing), "count_mismatch": n_count, "bad_chunk_ids": bad_ids,
              "unindexed_rows": unindexed}
    st_rows = tuple({"model": s[0], "model_digest": s[1], "dims": s[2], "window": s[3], "pipeline_version": s[4],
                     "strategy": s[5], "rows": c} for s, c in sorted(stamps.items()))
    stamp = Stamp(*next(iter(stamps))) if len(stamps) == 1 else None
    subject = f"Lance index {self.uri}: {n} chunks, {n_docs} documents ({n_failed} failed), {self.dims} dims"
    return HealthReport("lance", subject, {"uri": self.uri}, tuple(F), n, n_docs, stamp,
                        {"dims": self.dims, "failed": n_failed, "stamps": [dict(r) for r in st_rows], "counts": counts})
