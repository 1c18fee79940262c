"""``languages``: the corpus's languages, Success@k with its Wilson interval and RR@20 per run and per question
language (as ``phrasing`` splits by wording), and a notice when the dense model was trained on English only and
the corpus is not English (docs/definitions.md, *BM25*, languages and stemming)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...evaluation.measures import QueryTable, SPEC_KS
from ...language import dense_language_notice
from .base import Section

__all__ = ["LanguagesSection"]


def _only(result, ids: set):
    """``result`` over the queries of ``ids`` only."""
    t = result.per_query
    if isinstance(t, QueryTable):
        kept = t.take(np.array([q in ids for q in t.query_ids], dtype=bool))
    else:
        kept = tuple(q for q in t if q.query_id in ids)
    return replace(result, per_query=kept)


@dataclass(frozen=True)
class Languages:
    corpus: str
    documents: dict
    questions: dict
    notice: str | None
    rows: tuple


class LanguagesSection(Section):
    """Per run and per question language: ``n_queries``, ``Success@k`` with ``_low``/``_high`` (Wilson 95%) for the
    specification's k, and ``RR@20``; with the documents and questions per language and the dense model's notice."""

    name = "languages"
    needs = ("judgments", "languages")

    def compute(self, inputs, done):
        rs = inputs.runset
        q_lang = rs.settings.get("question_languages") or {}
        doc_lang = rs.settings.get("languages") or {}
        judged = {q.query_id for q in rs.queries if q.in_domain}
        codes = [q_lang.get(qid, "und") for qid in judged]
        by_lang: dict[str, set] = {}
        if len(set(codes)) == 1:  # one language, the common case: the judged set itself, not one built an id a time
            by_lang[codes[0]] = judged
        else:
            for qid, code in zip(judged, codes):  # the set's order both times (it is not changed in between)
                by_lang.setdefault(code, set()).add(qid)
        rows = []
        for r in inputs.results:
            for lang in sorted(by_lang):
                # one language holds every judged question: the run's own result (no copy of a 1M-question table)
                sub = r if len(by_lang) == 1 else _only(r, by_lang[lang])
                row = {"name": r.name, "language": lang, "n_queries": sub.n_queries}
                for k in SPEC_KS:
                    iv = sub.success(k)
                    row[f"Success@{k}"] = iv.estimate if sub.available and sub.n_queries else math.nan
                    row[f"Success@{k}_low"], row[f"Success@{k}_high"] = iv.low, iv.high
                row["RR@20"] = sub.mean("RR@20")
                rows.append(row)
        counts = Counter(doc_lang.values())
        return Languages(rs.settings.get("language") or ",".join(sorted(counts)), dict(sorted(counts.items())),
                         {k: len(v) for k, v in sorted(by_lang.items())},
                         dense_language_notice(rs.model.get("name"), rs.settings.get("language")), tuple(rows))

    def to_json(self, x):
        return {"corpus": x.corpus, "documents": x.documents, "questions": x.questions, "dense_notice": x.notice,
                "rows": list(x.rows)}

    def text(self, x):
        docs = ", ".join(f"{k} {v}" for k, v in x.documents.items()) or "none read"
        qs = ", ".join(f"{k} {v}" for k, v in x.questions.items())
        lines = [f"By language (documents: {docs}; judged questions: {qs}): Success@k with Wilson 95% intervals, RR@20"]
        show = []
        for r in x.rows:
            row = {"run": r["name"], "language": r["language"], "queries": r["n_queries"]}
            for k in SPEC_KS:
                est = r[f"Success@{k}"]
                row[f"Success@{k}"] = ("n/a" if not math.isfinite(est) else
                                       f"{est:.3f} [{r[f'Success@{k}_low']:.3f},{r[f'Success@{k}_high']:.3f}]")
            row["RR@20"] = "n/a" if not math.isfinite(r["RR@20"]) else f"{r['RR@20']:.3f}"
            show.append(row)
        lines.append(pd.DataFrame(show).to_string(index=False))
        if x.notice:
            lines.append(f"Notice: {x.notice}")
        return lines
