"""Evaluation: statistics, per-column metrics and paired tests, needles in chunks, the threshold, citations.

Modules: :mod:`.stats` (Wilson, sign test, Holm, queries needed), :mod:`.metrics` (columns of
first-correct ranks, Success@k, MRR@20, paired tests), :mod:`.judgments` (qrels, runs, the evaluated order), :mod:`.measures` (ir_measures names over runs),
:mod:`.needles` (which chunks hold each
needle; destroyed / overlap-only / past-the-window), :mod:`.threshold` (the gate, sweep, balanced
cut, bluffs, the saved cut), :mod:`.citations` (context, NO ANSWER, quote checks).
"""

from .metrics import (
           KS,
           MRR_DEPTH,
           ColumnResult,
           PairedTest,
           QueryResult,
           paired_test,
           paired_tests,
           summary_rows,
)
from .stats import Interval, holm, queries_needed, sign_test, wilson

__all__ = ["KS", "MRR_DEPTH", "ColumnResult", "Interval", "PairedTest", "QueryResult", "holm", "paired_test",
           "paired_tests", "queries_needed", "sign_test", "summary_rows", "wilson"]
