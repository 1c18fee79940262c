"""A store's health from its rows streamed in batches, for the engines without SQL aggregates (Chroma,
Milvus Lite): pgvector's checks (:func:`audit.stores.pgvector.check_health`), their names, severities and
examples, so the same fault gives the same finding in every engine; and the rule for a row and its document
(:func:`ends_with_slice`) that health's ``text_mismatch`` and the Citations quotes both read.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Iterable, Mapping

import numpy as np

from .report import NORM_TOLERANCE, OK, UNHEALTHY, WARNING, Finding, HealthReport, majority, store_report

__all__ = ["EXAMPLES", "ends_with_slice", "health_from_rows", "missing_documents"]

#: Ids listed per finding.
EXAMPLES = 20

#: A store's check over rows (titled by its id).
_rows = Finding.of_rows



def health_from_rows(spec, batches: Iterable[dict], *, kind: str, index_detail: str, spec_dict: dict | None = None,
                     corpus=None,
                     model_dims: int | None = None, model_name: str | None = None,
                     not_applicable: Mapping[str, str] | None = None, vector_type: str = "vector",
                     no_vector: str = "have no vector") -> HealthReport:
    """The store's health from its rows streamed in batches (engines without SQL aggregates).

    The checks, their names, severities, row counts and examples are those of
    :func:`audit.stores.pgvector.check_health` (read its Returns for the rules): the same fault gives
    the same finding in every engine.

    Parameters
    ----------
    spec
        The engine's spec: ``table``, ``to_dict()``, and the optional ``doc_column``, ``start_column``,
        ``model_column`` (metadata keys or fields).
    batches : iterable of dict
        Each ``{"ids": [str], "texts": [str or None], "vectors": [array or None], "docs", "starts",
        "ends", "models": [… or None]}`` (the last four may be absent).
    spec_dict : dict, optional
        :attr:`HealthReport.target` (default ``spec.to_dict()``), e.g. with the metric read from the store.
    kind : str
        What the store calls a table (``collection``), in messages.
    index_detail : str
        The ``approximate_index`` finding (always ``ok``: no index is no fault).
    not_applicable : mapping of check name → reason, optional
        Checks the engine makes impossible (``duplicate_ids`` in Chroma): reported ``ok`` with the reason.
    no_vector : str
        How the ``null_vectors`` finding says a row lacks its vector (Qdrant: ``have no vector named 'dense'``).

    Returns
    -------
    HealthReport
        Every finding counts rows; :attr:`HealthReport.engine` is ``spec_dict["engine"]``.
    """
    t0 = time.perf_counter()
    na = dict(not_applicable or {})
    ids: list[str] = []
    nulls: list[str] = []
    non_finite: list[str] = []
    dims: Counter = Counter()
    dim_of: dict[str, int] = {}
    off_unit: list[str] = []
    norms_seen: list[float] = []
    empty: list[str] = []
    texts: dict[str, list[str]] = {}
    models: Counter = Counter()
    model_of: dict[str, str | None] = {}
    docs: list[tuple[str, str | None, object, object, str | None]] = []
    for b in batches:
        bid = [str(x) for x in b["ids"]]
        n = len(bid)
        col = {k: (b.get(k) if b.get(k) is not None else [None] * n) for k in ("docs", "starts", "ends", "models")}
        for i, rid in enumerate(bid):
            ids.append(rid)
            v = b["vectors"][i]
            text = b["texts"][i]
            if v is None:
                nulls.append(rid)
            else:
                a = np.asarray(v, dtype=np.float64)
                dims[a.size] += 1
                dim_of[rid] = a.size
                if not np.isfinite(a).all():
                    non_finite.append(rid)
                else:
                    nrm = float(np.linalg.norm(a))
                    norms_seen.append(nrm)
                    if abs(nrm - 1.0) > NORM_TOLERANCE:
                        off_unit.append(rid)
            if text is None or not str(text).strip():
                empty.append(rid)
            if text is not None:
                texts.setdefault(text, []).append(rid)
            if spec.model_column:
                m = col["models"][i]
                m = None if m is None else str(m)
                models[m] += 1
                model_of[rid] = m
            if getattr(spec, "doc_column", None):
                d = col["docs"][i]
                docs.append((rid, None if d is None else str(d), col["starts"][i], col["ends"][i], text))
    n_rows = len(ids)
    checks: list[Finding] = []
    noun = kind

    def ex(lst) -> tuple[str, ...]:
        return tuple(sorted(lst)[:EXAMPLES])

    checks.append(_rows("rows", UNHEALTHY if n_rows == 0 else OK, n_rows,
                        f"the {noun} is empty" if n_rows == 0 else f"{n_rows} rows"))
    if "null_vectors" in na:
        checks.append(_rows("null_vectors", OK, 0, f"not applicable: {na['null_vectors']}"))
    else:
        checks.append(_rows("null_vectors", UNHEALTHY if nulls else OK, len(nulls),
                            f"{len(nulls)} rows {no_vector}" if nulls else "no NULL vector", examples=ex(nulls)))
    if "non_finite" in na:
        checks.append(_rows("non_finite", OK, 0, f"not applicable: {na['non_finite']}"))
    else:
        checks.append(_rows("non_finite", UNHEALTHY if non_finite else OK, len(non_finite),
                            f"{len(non_finite)} vectors hold NaN, ±Inf or NULL elements" if non_finite
                            else "every element finite", examples=ex(non_finite)))
    hist = tuple(sorted(((str(d), c) for d, c in dims.items()), key=lambda vc: (-vc[1], int(vc[0]))))
    if len(dims) > 1:
        major = majority([(d, c) for d, c in dims.items()])
        off = sum(c for d, c in dims.items() if d != major[0])
        checks.append(_rows("dims", UNHEALTHY, off, f"{len(dims)} dimensions: "
                            + ", ".join(f"{d} ({c} rows)" for d, c in hist)
                            + f"; {off} rows differ from the majority {major[0]}", hist,
                            ex([r for r, d in dim_of.items() if d != major[0]])))
    else:
        checks.append(_rows("dims", OK, 0, f"every vector has {hist[0][0]} dimensions" if hist else "no vector",
                            hist))
    if model_dims is not None:
        off = sum(c for d, c in dims.items() if d != model_dims)
        who = f"model {model_name}" if model_name else "the model"
        checks.append(_rows("model_dims", UNHEALTHY if off else OK, off,
                            f"{off} vectors do not have the {model_dims} dimensions of {who}" if off
                            else f"every vector has the {model_dims} dimensions of {who}", hist))
    rng = f" (norms {min(norms_seen):.6g} … {max(norms_seen):.6g})" if norms_seen else ""
    checks.append(_rows("norms", UNHEALTHY if off_unit else OK, len(off_unit),
                        (f"{len(off_unit)} vectors are not unit length (|norm − 1| > {NORM_TOLERANCE:g}){rng}: "
                         "L2 and inner-product distances are not cosine distances for them") if off_unit
                        else f"every vector unit length (|norm − 1| ≤ {NORM_TOLERANCE:g}){rng}", (), ex(off_unit)))
    checks.append(_rows("empty_texts", UNHEALTHY if empty else OK, len(empty),
                        f"{len(empty)} rows have an empty or NULL text" if empty else "no empty text",
                        examples=ex(empty)))
    if "duplicate_ids" in na:
        checks.append(_rows("duplicate_ids", OK, 0, f"not applicable: {na['duplicate_ids']}"))
    else:
        dup_ids = n_rows - len(set(ids))
        checks.append(_rows("duplicate_ids", UNHEALTHY if dup_ids else OK, dup_ids,
                            f"{dup_ids} rows repeat an id already used (results would be ambiguous)" if dup_ids
                            else "every id unique"))
    groups = [r for r in texts.values() if len(r) > 1]
    dup_rows = sum(len(r) for r in groups)
    checks.append(_rows("duplicate_texts", WARNING if dup_rows else OK, dup_rows,
                        f"{dup_rows} rows share their text with another row ({len(groups)} texts)" if dup_rows
                        else "no duplicate text", (), ex([i for r in groups for i in r])))
    not_checked: list[str] = []
    if spec.model_column:
        mh = sorted(models.items(), key=lambda vc: (-vc[1], "" if vc[0] is None else vc[0]))
        br = tuple(("(null)" if m is None else m, c) for m, c in mh)
        if len(mh) > 1:
            major = majority(mh)
            off = n_rows - major[1]
            checks.append(_rows("models", UNHEALTHY, off, f"{len(mh)} model stamps: "
                                + ", ".join(f"{m} ({c} rows)" for m, c in br)
                                + f"; {off} rows differ from the majority", br,
                                ex([r for r, m in model_of.items() if m != major[0]])))
        else:
            checks.append(_rows("models", OK, 0, f"one model stamp: {br[0][0]}" if br else "no row", br))
    else:
        not_checked.append("models: no model column given")
    doc_col = getattr(spec, "doc_column", None)
    if corpus is not None and doc_col:
        checks.extend(_document_checks(spec, corpus, docs))
    elif corpus is None:
        not_checked.append("missing_documents, text_mismatch: no corpus given")
    else:
        not_checked.append("missing_documents, text_mismatch: no document column given")
    if corpus is not None and doc_col and not getattr(spec, "start_column", None):
        not_checked.append("text_mismatch: no offset columns given")
    checks.append(_rows("approximate_index", OK, 0, index_detail))
    target = spec_dict or spec.to_dict()
    engine = {"milvus-lite": "milvus"}.get(target.get("engine"), target.get("engine", "store"))
    return store_report(engine, target, n_rows, vector_type, checks, (), not_checked, time.perf_counter() - t0)


def missing_documents(counts: Iterable[tuple[str | None, int]], corpus_name: str, examples: int = EXAMPLES) -> Finding:
    """``missing_documents``: rows whose document is not in the corpus, and rows that name no document.

    Parameters
    ----------
    counts : iterable of (doc id or None, rows)
        Rows per document id not found in the corpus; None for the rows whose document column is null.
    corpus_name : str
    examples : int
        Document ids named at most (never a stand-in for "no document": those rows are counted apart).

    Returns
    -------
    Finding
        Unhealthy when any row is counted; ``breakdown`` the documents by rows, then ``(no document)``;
        ``examples`` real document ids only.
    """
    counts = list(counts)
    by_doc = sorted(((d, int(n)) for d, n in counts if d is not None), key=lambda vc: (-vc[1], vc[0]))
    n_null = sum(int(n) for d, n in counts if d is None)
    n_miss = sum(n for _, n in by_doc)
    parts = []
    if n_miss:
        parts.append(f"{n_miss} rows belong to {len(by_doc)} documents not in corpus {corpus_name!r}")
    if n_null:
        parts.append(f"{n_null} rows name no document (the document column is null)")
    total = n_miss + n_null
    return Finding.of_rows("missing_documents", UNHEALTHY if total else OK, total,
                           "; ".join(parts) if parts else f"every row's document is in corpus {corpus_name!r}",
                           tuple(by_doc[:examples]) + ((("(no document)", n_null),) if n_null else ()),
                           tuple(d for d, _ in by_doc[:examples]))


def _document_checks(spec, corpus, docs) -> list[Finding]:
    """``missing_documents`` and ``text_mismatch`` as pgvector computes them (see its ``_document_checks``)."""
    by_id = {d.doc_id: d.text.replace("\x00", "") for d in corpus.documents}
    miss: Counter = Counter()
    bad: list[str] = []
    for rid, doc, start, end, text in docs:
        if doc is None or doc not in by_id:
            miss[doc] += 1  # None: the row names no document (counted apart, never an example)
            continue
        if not getattr(spec, "start_column", None):
            continue
        body = by_id[doc]
        s, e = _int(start), _int(end)
        if not ends_with_slice(text, body, s, e):
            bad.append(rid)
    out = [missing_documents(list(miss.items()), corpus.name)]
    if getattr(spec, "start_column", None):
        out.append(_rows("text_mismatch", UNHEALTHY if bad else OK, len(bad),
                         f"{len(bad)} rows' text no longer ends with doc.text[start:end] (or the offsets "
                         "fall outside the document)" if bad
                         else "every row's text ends with its source slice doc.text[start:end]", (),
                         tuple(sorted(bad)[:EXAMPLES])))
    return out


def _int(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return None


def ends_with_slice(text, body: str, start, end) -> bool:
    """The store's rule for a row and its document (``text_mismatch``): integer offsets with
    ``0 <= start <= end <= len(body)`` (code points, end exclusive) and ``text`` ending with ``body[start:end]``
    (the embedded text may begin with a header)."""
    return (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(body)
            and isinstance(text, str) and text.endswith(body[start:end]))
