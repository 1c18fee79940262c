"""``report --run NAME=FILE …``: the audit of a team's own runs, judgments and chunks."""

from __future__ import annotations

import math

from .common import InputError, corpus_arg, fail_under_arg, gates_failed, strip_arg, write_json


def cmd_report_runs(a, extend=None) -> int:
    """``report --run NAME=FILE …``: audit a team's own runs (issue: the system a team actually runs).

    ``extend(runset, report) -> (text, keys)``, when given, adds a section after the report's text and its
    keys (a dict: ``traffic``, ``stages``) to the JSON (``report --traffic``, :mod:`audit.cli.traffic`); its
    ValueError is bad input.
    """
    from ..report import build_report
    from ..runset import FILE_SCORE_KINDS
    from ..scores import known_kind
    from ..sources.imported.system import load_system, parse_named

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
        report = build_report(system, a.threshold)
        extra_text, extra_json = extend(system, report) if extend is not None else ("", None)
    except ValueError as e:
        raise InputError(str(e)) from None
    print(report.render_text() + extra_text)
    data = report.to_json()
    if a.json:
        write_json(a.json, data | (extra_json or {}))
    from .history import after_report
    from .record import write_record


    code = after_report(a, report, gates_failed(gates, report.results))
    write_record(a, report, data, (extra_json or {}).get("traffic"), (extra_json or {}).get("stages"))
    return code
