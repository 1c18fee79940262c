"""``results``: one row per run under ir_measures names (Success@k with its Wilson 95% interval beside it), what
each run is and, where its chunks' cut rule is known, its needles; and ``comparisons``: the paired sign tests."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ...evaluation.measures import KS
from ...evaluation.paired import holm_adjusted, paired_test, paired_tests
from ...evaluation.power import questions_for_half_width
from ...words import format_p
from ..serialize import records
from ..tables import needed, result, result_rows, tests_frame
from .base import Section

__all__ = ["ComparisonsSection", "ResultsSection", "spec_pairs"]


def _cell(est: float, lo: float, hi: float) -> str:
    return "n/a" if not math.isfinite(est) else f"{est:.3f} [{lo:.3f},{hi:.3f}]"


@dataclass(frozen=True)
class Results:
    rows: tuple
    over: str
    half_width: float = 0.05


def success_needed(row: dict, half_width: float) -> dict:
    """The questions a 95% Wilson interval of ``half_width`` needs at each Success@k of ``row``
    (:func:`audit.evaluation.power.questions_for_half_width` at the observed estimate; None where there is none)."""
    return {"half_width": half_width,
            **{f"Success@{k}": questions_for_half_width(row[f"Success@{k}"], half_width) for k in KS}}


class ResultsSection(Section):
    """Every run's measures (:func:`result_rows`)."""

    name = "results"
    needs = ("judgments",)

    def compute(self, inputs, done):
        requests = inputs.runset.settings.get("requests")
        return Results(tuple(result_rows(inputs.runset, inputs.results)),
                       ", over all questions: a failed request counts as a miss" if requests else "",
                       inputs.targets.half_width)

    def to_json(self, r):
        return [{**x, "questions_needed": success_needed(x, r.half_width)} for x in r.rows]

    def text(self, r):
        rows = r.rows
        made_here = any(x["strategy"] is not None for x in rows)
        show = []
        for x in rows:
            row = {"run": x["name"], "queries": x["n_queries"]}
            for k in KS:
                row[f"Success@{k}"] = _cell(x[f"Success@{k}"], x[f"Success@{k}_low"], x[f"Success@{k}_high"])
            for n in ("RR@20", "nDCG@10"):
                row[n] = "n/a" if not math.isfinite(x[n]) else f"{x[n]:.3f}"
            if made_here:
                row["destroyed"] = "" if x["destroyed"] is None else x["destroyed"]
            show.append(row)
        L = ["Success@k (the specification's recall@k) with Wilson 95% intervals, RR@20 (its MRR@20), nDCG@10: "
             f"ir_measures names{r.over}"]
        L.append(pd.DataFrame(show).to_string(index=False))
        for x in rows:
            if not x["available"]:
                L.append(f"{x['name']} unavailable: {x['reason']}")
        need = [f"{x['name']} " + ", ".join(f"@{k} {n:,}" for k, n in
                                             ((k, success_needed(x, r.half_width)[f"Success@{k}"]) for k in KS)
                                             if n is not None)
                for x in rows if x["available"]]
        if need:
            L.append(f"Questions a 95% Wilson interval of half-width ±{r.half_width:g} needs at the observed "
                     "Success@k: " + "; ".join(need))
        return L


#: The specification's comparisons between strategies (on their dense column) and between retrievers (on the base
#: strategy): ("B", "A") reads "B against A".
SPEC_STRATEGY_PAIRS = (("B", "A"), ("D", "C"), ("F", "E"), ("E", "A"), ("E", "C"))
SPEC_RETRIEVER_PAIRS = (("bm25", "dense"), ("hybrid", "dense"), ("hybrid", "bm25"), ("rerank", "hybrid"))


def spec_pairs(runset, results) -> list[tuple[str, str]]:
    """The specification's pairs among runs made here by strategy × retriever (empty when none is), and each BM25
    column of another token rule against the base strategy's ``bm25`` (``E/bm25-snowball`` against ``E/bm25``)."""
    names, retrievers = runset.strategies, runset.retrievers
    if not names:  # no run made here (a team's runs): no pair, and the built-in pipelines are not imported
        return []
    from ...sources.builtin import base_strategy, column_name

    ok = {r.name for r in results if r.available}
    pairs = []
    for a, b in SPEC_STRATEGY_PAIRS:
        if a in names and b in names and "dense" in retrievers:
            pairs.append((column_name(a, "dense"), column_name(b, "dense")))
    if names:
        base = base_strategy(names)
        for a, b in SPEC_RETRIEVER_PAIRS:
            pa, pb = column_name(base, a), column_name(base, b)
            if pa in ok and pb in ok:
                pairs.append((pa, pb))
        bm25 = column_name(base, "bm25")
        for run in runset.runs:  # a BM25 column of another token rule: its cut key names the rule
            if run.strategy == base and run.cut_key.get("token_rule") and run.name in ok and bm25 in ok:
                pairs.append((run.name, bm25))
    return pairs


@dataclass(frozen=True)
class Comparisons:
    """The paired tests, the family Holm adjusted over, and the targets their "questions needed" use."""

    tests: tuple
    holm: str
    targets: object = None


class ComparisonsSection(Section):
    """Paired sign tests on Success@k (wins: questions ``a`` finds in the top k and ``b`` misses). Runs made here by
    strategy × retriever: the specification's pairs at k = 1, 8, 20, Holm over the table; other runs: every pair
    at every k, Holm within each k."""

    name = "comparisons"
    needs = ("judgments", "two_runs")

    def compute(self, inputs, done):
        rs, results = inputs.runset, inputs.results
        pairs = spec_pairs(rs, results)
        if pairs:
            tests = holm_adjusted([paired_test(result(results, a), result(results, b), k)
                                   for a, b in pairs for k in (1, 8, 20)])
            return Comparisons(tuple(tests), "over this table", inputs.targets)
        tests = [t for k in KS for t in paired_tests(list(results), k)]
        return Comparisons(tuple(tests), "per k", inputs.targets) if tests else None

    def why_not(self, inputs, done):
        return "no two available runs of the same questions to compare"

    def to_json(self, c):
        rows = records(tests_frame(c.tests, c.targets))
        for row, t in zip(rows, c.tests):
            row["questions_needed"] = needed(t, c.targets).to_dict()
        return rows

    def text(self, c):
        tf = tests_frame(c.tests, c.targets)
        q = needed(c.tests[0], c.targets)
        return ["Paired sign tests on Success@k (wins = questions a finds and b misses), p Holm-adjusted "
                f"{c.holm}; 'questions needed': the smallest number of questions whose exact sign test "
                f"(α = {q.alpha:g}) detects a difference like the one observed with {q.power:.0%} power",
                tf.assign(p=tf["p"].map(format_p), **{"p (Holm)": tf["p (Holm)"].map(format_p)})
                .to_string(index=False)]



