"""Evaluation: pure functions of a :class:`~audit.runset.RunSet`.

Modules: :mod:`.stats` (Wilson, sign test, Holm), :mod:`.power` (questions needed: the sign test's exact power,
the Wilson interval's half-width), :mod:`.guarantee` (exact bounds, the certified cut), :mod:`.auc` (ROC AUC with
DeLong's interval), :mod:`.targets` (what a decision is asked to meet), :mod:`.judgments` (qrels),
:mod:`.measures` (the one measure engine: ir_measures names, the specification's beside them, one
set of k), :mod:`.paired` (paired sign tests), :mod:`.needles` (which chunks hold each needle;
destroyed / overlap-only / past-the-window), :mod:`.threshold` (the gate, sweep, balanced cut,
bluffs), :mod:`.saved_cut` (the one rule for a saved threshold), :mod:`.citations` (context,
NO ANSWER, quote checks), :mod:`.stages` (the stage of a traced question where its relevant chunk was lost).
"""

from .measures import KS, MRR_DEPTH, RunResult, evaluate, measure_names
from .paired import PairedTest, paired_test, paired_tests
from .stats import Interval, holm, sign_test, wilson

__all__ = ["KS", "MRR_DEPTH", "Interval", "PairedTest", "RunResult", "evaluate", "holm", "measure_names",
           "paired_test", "paired_tests", "sign_test", "wilson"]
