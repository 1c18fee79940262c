"""``report --run NAME=FILE …``: a team's own runs, judgments and chunks, loaded as a run set for the report."""

from __future__ import annotations

import math

from .common import InputError, Loaded, corpus_arg, fail_under_arg, strip_arg


def load_runs(a):
    """``report --run NAME=FILE …``: a team's own runs, judgments and chunks as a run set
    (:class:`audit.cli.report.Loaded`, gated on ``--fail-under``)."""
    from ..runset import FILE_SCORE_KINDS
    from ..scores import known_kind
    from ..sources.imported.system import declare_pairs, load_system, parse_named

    given = [f"--{o}" for o, v in (("strategies", a.strategies), ("retrievers", a.retrievers), ("db", a.db))
             if v is not None]
    if given:
        raise InputError(f"{', '.join(given)} is for the built-in strategies; with --run the rankings are yours")
    if not a.queries:
        raise InputError("--run needs --queries FILE (id<TAB>text lines or BEIR queries.jsonl)")
    gates = fail_under_arg(a.fail_under or [])
    try:
        runs = parse_named(a.run, "--run")
        scores = parse_named(a.score, "--score", FILE_SCORE_KINDS)
        ood_runs = parse_named(a.ood_run, "--ood-run")
        kinds = [known_kind(scores.get(n)) for n in runs]
        if a.threshold is not None and runs and all(k is not None and k.bounded for k in kinds):
            from ..evaluation.threshold import check_cut

            check_cut(a.threshold, "--threshold", kinds[0])  # every run's kind is bounded (cosine distance)
        if a.threshold is not None and not math.isfinite(a.threshold):
            raise ValueError(f"--threshold must be a finite number in the runs' own units, got {a.threshold!r}")
        corpus = corpus_arg(a.corpus, strip_arg(a)) if a.corpus else None
        system = load_system(a.queries, runs, scores, a.qrels, a.ground_truth, a.chunks, corpus, a.ood_queries,
                             ood_runs)
        system = declare_pairs(system, parse_named(getattr(a, "reranked", None), "--reranked"),
                               getattr(a, "fuse", None))
    except ValueError as e:
        raise InputError(str(e)) from None
    return Loaded(system, gates=gates)

