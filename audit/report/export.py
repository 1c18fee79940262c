"""The built-in strategies' rankings and judgments in the formats the IR world reads: TREC and BEIR.

``python -m audit export --format trec|beir --out DIR`` writes what :func:`export_trec` and
:func:`export_beir` write. Chunk ids differ by strategy (each strategy cuts the corpus its own
way), so the judgments are written per strategy. Reading the files back with
``report --run NAME=FILE --qrels …`` gives the same figures where scores are not tied (trec_eval
breaks ties by chunk id descending, the audit by chunk id ascending) and for cut-offs within the
exported depth.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..retrieval import STORED_DEPTH

__all__ = ["SCORE_KIND_OF", "export_beir", "export_trec"]

#: What each retriever's exported score means (``report --score NAME=KIND`` when reading it back).
SCORE_KIND_OF = {"dense": "cosine-distance", "bm25": "similarity", "hybrid": "similarity", "rerank": "similarity"}


def _run_lines(runset, run) -> list[str]:
    tag = run.name.replace("/", "-")  # E/dense → E-dense; a further BM25 rule's column: E-bm25-snowball
    out = []
    for q in runset.in_domain:
        r = run.ranking(q.query_id)
        rank = 0
        for cid, score in zip(r.ids, r.scores.tolist()):
            if not math.isfinite(score):  # rerank: below its depth the hybrid order continues without a logit
                break
            rank += 1
            out.append(f"{q.query_id} Q0 {cid} {rank} {score!r} {tag}")
    return out


def _qrels_lines(runset, strategy: str) -> list[str]:
    qrels = runset.judgments[strategy]
    return [f"{q.query_id} 0 {cid} 1" for q in runset.in_domain for cid in sorted(qrels.relevant(q.query_id))]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def export_trec(runset, out: str | Path) -> list[Path]:
    """Write one TREC run per (strategy, retriever) and the judgments per strategy.

    Files: ``<strategy>-<retriever>.run`` (``E-bm25-snowball.run`` for a further BM25 token rule's column;
    ``qid Q0 chunk_id rank score tag``, the first
    :data:`~audit.retrieval.STORED_DEPTH` ranks; scores in their own units, see
    :data:`SCORE_KIND_OF`), ``<strategy>.qrels`` (``qid 0 chunk_id 1`` for every chunk whose text
    holds the query's needle; none for a destroyed needle), ``queries.tsv`` (``id<TAB>text``) and
    ``runs.json`` (each run's file, strategy, retriever and score kind). Returns the files written.
    """
    out = Path(out)
    written, manifest = [], []
    for name in runset.strategies:
        for x in [x for x in runset.runs if x.strategy == name and x.available]:
            r = x.retriever
            p = out / f"{x.name.replace('/', '-')}.run"
            _write(p, _run_lines(runset, x))
            manifest.append({"file": p.name, "strategy": name, "retriever": r, "score": SCORE_KIND_OF[r],
                             "depth": STORED_DEPTH if r != "rerank" else "rerank depth"}
                            | ({"token_rule": x.token_rule} if x.cut_key.get("token_rule") else {}))
            written.append(p)
        p = out / f"{name}.qrels"
        _write(p, _qrels_lines(runset, name))
        written.append(p)
    _write(out / "queries.tsv", [f"{q.query_id}\t{' '.join(q.text.split())}" for q in runset.in_domain])
    (out / "runs.json").write_text(json.dumps({"runs": manifest, "provenance": dict(runset.source.provenance)}, indent=1,
                                              default=str), encoding="utf-8")
    return written + [out / "queries.tsv", out / "runs.json"]


def _chunk_locator(runset, c) -> dict:
    """Where a chunk's quote sits: ``doc_id``, ``start``, ``end`` and its format's locator fields (``page``…)."""
    from ..ingest.locators import locator

    out = {"doc_id": c.doc_id, "start": c.start, "end": c.end}
    try:
        out.update(locator(runset.corpus.get(c.doc_id), c.start, c.end).fields())
    except KeyError:
        pass
    return out


def export_beir(runset, out: str | Path) -> list[Path]:
    """Write the BEIR layout per strategy: ``<strategy>/corpus.jsonl`` (one chunk a line: ``_id``,
    ``title``, ``text``, and ``metadata`` with ``doc_id``, ``start``, ``end`` and the locator fields
    of :meth:`audit.ingest.locators.Locator.fields`: ``page``/``page_end``, ``sheet``/``range``,
    ``t_start``/``t_end``…), ``queries.jsonl`` (``_id``, ``text``), ``qrels/test.tsv`` (header
    ``query-id corpus-id score``), and the strategy's runs as TREC files in ``runs/``. Returns the files."""
    out = Path(out)
    written = []
    for name in runset.strategies:
        d = out / name
        _write(d / "corpus.jsonl", [json.dumps({"_id": str(c.chunk_id), "title": c.title, "text": c.text,
                                                "metadata": _chunk_locator(runset, c)},
                                               ensure_ascii=False) for c in runset.spaces[name].chunks.chunks])
        _write(d / "queries.jsonl", [json.dumps({"_id": q.query_id, "text": q.text}, ensure_ascii=False)
                                     for q in runset.in_domain])
        _write(d / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore"]
               + [line.replace(" 0 ", "\t", 1).replace(" ", "\t") for line in _qrels_lines(runset, name)])
        written += [d / "corpus.jsonl", d / "queries.jsonl", d / "qrels" / "test.tsv"]
        for x in [x for x in runset.runs if x.strategy == name and x.available]:
            p = d / "runs" / f"{x.name.split('/', 1)[-1]}.run"
            _write(p, _run_lines(runset, x))
            written.append(p)
    return written
