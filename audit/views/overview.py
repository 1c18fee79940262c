"""The Overview page's view-model: what was loaded, what is counted, the headline findings, latency.

Works on any run set: the built-in pipelines show their corpus, chunks per strategy and build cost;
a team's runs their files and measures; a store or an endpoint its answers (and an endpoint its
request outcomes). Every count says what it counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..evaluation.paired import PairedTest, paired_test
from ..evaluation.threshold import gate_queries, separation
from ..report.formats import FORMATS_NOTE, formats_frame, not_read_frame
from ..report.tables import chunks_frame, latency_frame, runs_frame

__all__ = ["FORMATS_NOTE", "BestColumn", "Fact", "OverviewView", "best_column", "formats_frame", "headlines",
           "not_read_frame", "overview", "overview_chunks_frame", "rejected_frame"]


@dataclass(frozen=True)
class Fact:
    """One metric of the page: its short label, value (text), and help saying exactly what is counted."""

    label: str
    value: str
    help: str
    delta: str | None = None


@dataclass(frozen=True)
class BestColumn:
    """The best run at ``k`` and its paired sign test against the runner-up (raw p; ``significant``: p < 0.05)."""

    k: int
    best: str
    recall: float
    runner_up: str | None
    runner_recall: float
    test: PairedTest | None

    @property
    def significant(self) -> bool:
        return self.test is not None and self.test.p < 0.05


def best_column(results, k: int = 8) -> BestColumn | None:
    """Best available run by Success@k (ties: higher RR@20, then table order), and its runner-up; None without queries."""
    cols = [r for r in results if r.available and r.per_query]
    if not cols:
        return None
    order = sorted(range(len(cols)), key=lambda i: (-cols[i].success(k).estimate, -cols[i].mrr(), i))
    b = cols[order[0]]
    if len(order) < 2:
        return BestColumn(k, b.name, b.success(k).estimate, None, math.nan, None)
    r = cols[order[1]]
    return BestColumn(k, b.name, b.success(k).estimate, r.name, r.success(k).estimate, paired_test(b, r, k))


def headlines(runset, results, k: int = 8, threshold=None) -> list[str]:
    """Findings computed on the loaded data, as plain sentences.

    Destroyed answers per strategy, overlap-only and past-window needles (built-in strategies), the best run at
    ``k`` and whether a paired sign test separates it from the runner-up, and whether a cut can separate
    in-domain from out-of-domain questions (``threshold``: the document's ``threshold`` section, its primary run).
    """
    out: list[str] = []
    if not any(len(q.query_ids) for q in runset.judgments.values()):
        return ["No ground truth is loaded, so nothing can be measured yet: give a ground-truth JSONL."]
    gt = runset.ground_truth
    n = len(gt.needles) if gt is not None else 0
    spaces = [sp for sp in runset.spaces.values() if sp.strategy is not None and sp.needles is not None]
    for sp in spaces:
        st_, ns = sp.strategy, sp.needles
        if st_.cut == "blind":
            if ns.destroyed:
                out.append(f"Blind chunking ({st_.name}: {st_.description}) destroys {len(ns.destroyed)} of {n} "
                           "answers: the needle straddles a cut, so no chunk contains it and no retriever can find it.")
            else:
                out.append(f"Blind chunking ({st_.name}: {st_.description}) destroys none of the {n} answers"
                           + (" (its overlap tail carries every cut needle)." if st_.overlap else "."))
    for sp in spaces:
        if sp.strategy.cut != "blind" and sp.needles.destroyed:
            out.append(f"Strategy {sp.strategy.name} ({sp.strategy.description}) destroys {len(sp.needles.destroyed)} "
                       f"of {n} answers.")
    for sp in spaces:
        if sp.needles.overlap_only:
            out.append(f"Strategy {sp.strategy.name}: {len(sp.needles.overlap_only)} needle(s) are found only through "
                       "an overlap tail — retrieved, but the citation (the chunk's own content) would not show the "
                       "answer.")
    for sp in spaces:
        if sp.needles.past_window:
            out.append(f"Strategy {sp.strategy.name}: {len(sp.needles.past_window)} needle(s) sit past the encoder "
                       f"window ({runset.model.get('window')} tokens): the embedding never saw them.")
    bc = best_column(results, k)
    if bc is not None:
        line = f"Best run at Success@{k}: {bc.best} ({bc.recall:.3f})"
        if bc.test is None:
            line += "."
        else:
            t = bc.test
            verdict = "significantly better than" if bc.significant else "not significantly better than"
            line += (f", {verdict} the runner-up {bc.runner_up} ({bc.runner_recall:.3f}): paired sign test "
                     f"+{t.wins}/−{t.losses}, p = {t.p:.3g}")
            if not bc.significant:
                line += f"; {t.needed().sentence()}"
            line += "."
        out.append(line)
    sep_runs = [runset.run(name) for name in list(threshold or {})[:1]]
    for r in sep_runs:
        kind = r.gate_kind
        sep = separation(gate_queries(runset, r))
        if math.isfinite(sep.worst_in_domain) and math.isfinite(sep.best_out_of_domain):
            what = f"strategy {r.strategy}, {r.retriever}" if r.strategy else f"run {r.name}"
            unit = "distance" if not kind.higher_is_better else kind.label
            out.append(f"Threshold ({what}): worst in-domain {unit} to its answer "
                       f"{kind.from_gate(sep.worst_in_domain):.3f}, best out-of-domain {unit} "
                       f"{kind.from_gate(sep.best_out_of_domain):.3f} — "
                       + ("no threshold is right for both; choosing one is a product decision."
                          if sep.overlap else "a threshold between the two separates them."))
    return out


def overview_chunks_frame(runset) -> pd.DataFrame:
    """:func:`audit.report.tables.chunks_frame` with each count's unit in its header."""
    return chunks_frame(runset).rename(columns={
        "chunks": "chunks (n)", "oversize (> target)": "oversize (chunks > target)",
        "over window": "over window (chunks)", "destroyed": "destroyed (needles)",
        "overlap-only": "overlap-only (needles)", "past window": "past window (needles)",
        "header share": "header share (of embedded tokens)"})


def rejected_frame(runset) -> pd.DataFrame:
    """Ground-truth items or judged queries left out. Columns: ``id``, ``line`` (1-based, or None), ``reason``."""
    return pd.DataFrame([{"id": r.id, "line": r.line, "reason": r.reason} for r in runset.rejected],
                        columns=["id", "line", "reason"])


@dataclass
class OverviewView:
    """What the Overview page draws.

    Attributes
    ----------
    title, caption : str
    facts : list of Fact
        The metric row, each with what it counts.
    headlines : list of str
    chunks : pandas.DataFrame or None
        Chunks per strategy when their token costs are known (the ``tokens`` section; None otherwise).
    measures : pandas.DataFrame
        Every run's headline measures.
    latency : pandas.DataFrame
    files : pandas.DataFrame
        The files read (role, name, sha256).
    rejected : pandas.DataFrame
    failures, skipped : list of str
        Documents that failed to load (with the reason) and files of a type not read.
    not_shown : list of str
        What this source cannot show, one sentence each.
    embedded_now : str
        The build's embedding sentence (built-in), or "".
    """

    title: str
    caption: str
    facts: list
    headlines: list
    chunks: pd.DataFrame | None
    measures: pd.DataFrame
    latency: pd.DataFrame
    files: pd.DataFrame
    rejected: pd.DataFrame
    failures: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    not_shown: list = field(default_factory=list)
    embedded_now: str = ""


#: What the Language fact's help says of each way a language is decided (:data:`audit.language.LANGUAGE_FROM`).
LANGUAGE_HELP = {
    "given": "given: the ISO 639-1 code given for every document and question (the sidebar's Language, "
             "audit.toml's [ingest] language, --language)",
    "detected": "detected: the ISO 639-1 code py3langid reads: per document, each question told among its "
                "documents' languages; without documents, from the questions (200 spread over them, every one when "
                "they disagree)",
    "default": "by default: the built-in corpus is Python's English reference; und when no text had a letter",
}


def overview(runset, results, document=None) -> OverviewView:
    """The Overview of ``runset`` evaluated as ``results``, drawn from its audit document (``document``: already
    built, else built here: :func:`audit.report.sections.build_document`)."""
    from ..report.sections import build_document

    doc = document if document is not None else build_document(runset, results=results)
    c = runset.corpus
    facts = []
    if c is not None:
        facts += [Fact("Documents", f"{len(c.documents):,}", "documents read from the corpus (failed ones excluded)"),
                  Fact("Characters", f"{c.n_characters:,}", "characters of canonical text (code points)"),
                  Fact("Sections", f"{c.n_sections:,}", "## headings in the documents")]
    gt = runset.ground_truth
    if gt is not None:
        facts.append(Fact("Needles accepted", f"{len(gt.needles)}", "needles accepted (each asked twice: "
                          "documentation and ticket wording)", f"{len(gt.rejected)} rejected" if gt.rejected else None))
    facts.append(Fact("Queries", f"{len(runset.in_domain)} / {len(runset.out_of_domain)}",
                      "judged in-domain questions / out-of-domain questions (should get no answer)"))
    facts.append(Fact("Runs", f"{len(runset.runs)}", "systems compared: " + ", ".join(runset.run_names)))
    lang, how = runset.settings.get("language"), runset.settings.get("language_from")
    if lang:
        # how it was decided in the help (and in the provenance line the page ends with): "en (detected)" as the
        # value, or in the label, is cut at the metric's width at 1400 px
        facts.append(Fact("Language", lang, LANGUAGE_HELP.get(how, "ISO 639-1 code")))
    wall = doc["provenance"].data.get("wall_seconds")
    if wall is not None:
        facts.append(Fact("Build time (s)", f"{wall:.1f}",
                          "seconds to build this audit: chunk, embed (or read the cache), rank every query"))
    known = sum(len(sp.chunks) for sp in runset.spaces.values() if sp.chunks is not None)
    facts.append(Fact("Chunks known", f"{known:,}" if known else "—",
                      "distinct chunks whose text this source gave or cut (a store: the rows returned or judged "
                      "relevant, not the table's size)"))
    cit = doc["citations"]
    if cit is not None:
        facts.append(Fact("Offset errors", f"{len(cit.errors)}",
                          f"of {cit.checked:,} chunks with offsets, those whose quote differs from their document at "
                          "their offsets (see Citations)"))
    title = f"Retrieval audit: {runset.source.name}"
    caption = ("How the documents are chunked, how well each run finds the sentence that answers a question, where a "
               "threshold should refuse, and whether citations quote what sits at their locator. "
               f"Judged by {doc['questions'].judged_by}; scores in each run's own units.")
    embedded = ""
    if doc["retrieval"] is not None:
        n_enc = runset.settings.get("n_chunks_encoded", 0)
        lat = doc["latency"]
        q_ms = lat.query_embedding_ms if lat is not None else None
        embedded = (f"Embedded now: {n_enc:,} chunks (0 = everything came from the embedding cache). Query embedding: "
                    + ("cached (no model call)" if q_ms is None else f"{q_ms:.1f} ms/query") + ".")
    not_shown = [n.why for n in doc.not_shown if n.section in ("results", "threshold", "citations")]
    return OverviewView(
        title, caption, facts, headlines(runset, results, threshold=doc["threshold"]),
        overview_chunks_frame(runset) if doc["tokens"] is not None else None,
        runs_frame(results), latency_frame(runset),
        pd.DataFrame(list(runset.source.files), columns=["role", "name", "sha256"]), rejected_frame(runset),
        [f"{f.source}: {f.reason}" for f in c.failures] if c is not None else [],
        list(c.skipped) if c is not None else [], not_shown, embedded)
