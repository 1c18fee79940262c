"""History: every ``report``, ``health`` and ``compare`` recorded; ``history list|show|baseline|prune``; the
regression gate ``report … --baseline NAME|latest --fail-if-worse`` (:mod:`audit.history`).

The commands call one function each after they print (:func:`after_report`, :func:`after_health`,
:func:`after_compare`): it records the audit (unless ``--no-history`` or ``AUDIT_HISTORY=off``; a failed write
is one ``warning:`` line, the exit code unchanged) and, for ``report`` with ``--baseline``, runs the gate:
exit 1 when a series is worse, 2 when the baseline cannot be compared (another ground truth, an unknown name).
"""

from __future__ import annotations

import argparse
import json
import sys

from .common import EXIT_GATE, EXIT_OK, InputError

__all__ = ["add_history_options", "add_history_parser", "after_compare", "after_health", "after_report",
           "check_history_options"]


def add_history_options(p: argparse.ArgumentParser, gate: bool = False) -> None:
    """``--no-history`` and ``--series NAME`` on a recording command; with ``gate``, the regression gate's options."""
    g = p.add_argument_group("history and the gate (every audit is recorded: python -m audit history list)" if gate else
                             "history (every audit is recorded: python -m audit history list)")
    g.add_argument("--no-history", action="store_true",
                   help="do not record this audit (also AUDIT_HISTORY=off)")
    g.add_argument("--series", metavar="NAME",
                   help="the series this audit belongs to when run names change per deploy (default: source name · run)")
    if gate:
        g.add_argument("--baseline", metavar="NAME|latest",
                       help="compare each series with a baseline record: latest (the latest record of the same series "
                            "and ground truth), a name set by `history baseline set`, or a record id")
        g.add_argument("--fail-if-worse", action="store_true",
                       help="with --baseline: exit 1 when a series is worse (losses > wins, Holm-adjusted sign-test "
                            "p < --level)")
        g.add_argument("--gate-measure", default="Success@8", metavar="MEASURE",
                       help="the measure the gate tests (ir_measures name or recall@k, mrr; default Success@8)")
        g.add_argument("--level", type=float, default=0.05, help="the gate's significance level (default 0.05)")


def check_history_options(a) -> None:
    """Bad gate options are bad input before the audit runs (InputError naming the option)."""
    if not hasattr(a, "fail_if_worse"):
        return
    from ..evaluation.measures import parse_measure

    if a.fail_if_worse and not a.baseline:
        raise InputError("--fail-if-worse needs --baseline NAME|latest (what this audit must not be worse than)")
    try:
        a.gate_measure = parse_measure(a.gate_measure)
    except ValueError as e:
        raise InputError(f"--gate-measure: {e}") from None
    if not 0 < a.level < 1:
        raise InputError(f"--level must be in (0, 1), got {a.level!r}")


def _team_uris(a) -> list[str]:
    import os

    uri = getattr(a, "store", None)
    out = [uri] if isinstance(uri, str) and "://" in uri else []
    return out + ([os.environ["AUDIT_STORE_URI"]] if os.environ.get("AUDIT_STORE_URI") else [])


def _record(a, record) -> int | None:
    from ..history.recording import enabled, save

    if not enabled(getattr(a, "no_history", False)):
        return None
    rid = save(record, team_uris=_team_uris(a))
    if rid is not None:
        print(f"(recorded in the history as #{rid}: python -m audit history show {rid}; on the dashboard, "
              f"history?record={rid})", file=sys.stderr)
    return rid


def after_report(a, report):
    """Record ``report`` (a :class:`audit.report.report.Report`) and run the regression gate when ``--baseline`` is
    given: the ``history`` section's input (:class:`audit.report.sections.Recorded`), or None when nothing was
    recorded nor compared. The record's id is also left on ``a.history_record`` for the decision record.

    Raises
    ------
    InputError
        The baseline is refused or the history cannot be read.
    """
    from ..evaluation.saved_cut import load_cuts
    from ..history.record import record_of_report
    from ..history.recording import enabled
    from ..report.sections import Recorded

    a.history_record = None
    if not enabled(getattr(a, "no_history", False)) and not getattr(a, "baseline", None):
        return None  # nothing to record, nothing to compare: no record built
    from ..memory import release_free_memory

    release_free_memory()  # the sections' freed temporaries, before the record's (a 1M-query run: see audit/memory.py)
    record = record_of_report(report, "report", getattr(a, "series", None), saved_cuts=load_cuts())
    release_free_memory()  # the record's build, before its encoding
    rid = a.history_record = _record(a, record)
    if not getattr(a, "baseline", None):
        return Recorded(rid)
    from ..history.gate import BaselineRefused, compare_to_baselines, resolve_baselines
    from ..history.recording import open_configured
    from ..history.store import HistoryError

    current = record.with_id(rid) if rid is not None else record
    try:
        with open_configured(team_uris=_team_uris(a)) as store:
            baselines = resolve_baselines(store, current, a.baseline, exclude=[rid] if rid is not None else [])
        result = compare_to_baselines(current, baselines, a.gate_measure, a.level, a.baseline)
    except (BaselineRefused, HistoryError, ValueError) as e:
        raise InputError(str(e)) from None
    return Recorded(rid, result)


def after_health(a, source_kind: str, source_name: str, reports, code: int, model=None) -> int:
    """Record a health check: its reports' JSON form (:meth:`audit.health.HealthReport.to_json`)."""
    from ..history.record import health_record

    _record(a, health_record(source_kind, source_name, list(reports), model, getattr(a, "series", None)))
    return code


def after_compare(a, runset, run: str, diff, code: int) -> int:
    """Record ``compare``'s after side (``runset``, the state after the upgrade; ``run`` the run compared) with the
    outcomes at the diff's cut."""
    from ..history.record import record_of
    from ..history.recording import enabled

    if not enabled(getattr(a, "no_history", False)):
        return code
    thresholds = []
    if diff is not None and diff.threshold is not None and diff.at_threshold is not None:
        from ..evaluation.threshold import run_threshold

        t = run_threshold(runset, run, diff.threshold, diff.how or "given")
        thresholds = [t] if t is not None else []
    _record(a, record_of(runset, thresholds=thresholds, command="compare", series=getattr(a, "series", None)))
    return code


# --------------------------------------------------------------------------- python -m audit history …


def add_history_parser(sub) -> None:
    """``history list|show|baseline set|baseline list|prune``."""
    h = sub.add_parser("history", help="every audit recorded: list, show, baselines, prune", allow_abbrev=False)
    hs = h.add_subparsers(dest="history_command", required=True)
    ls = hs.add_parser("list", help="the records, oldest first", allow_abbrev=False)
    ls.add_argument("--series", help="only the records of this series")
    form = ls.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="one JSON array of the records instead of a table")
    form.add_argument("--jsonl", action="store_true", help="JSON Lines: one record a line (for streaming tools)")
    ls.set_defaults(func=cmd_history_list)
    sh = hs.add_parser("show", help="one record", allow_abbrev=False)
    sh.add_argument("id", type=int)
    sh.add_argument("--json", action="store_true", help="the whole record as JSON")
    sh.set_defaults(func=cmd_history_show)
    b = hs.add_parser("baseline", help="name a record as a baseline (report --baseline NAME)", allow_abbrev=False)
    bs = b.add_subparsers(dest="baseline_command", required=True)
    bset = bs.add_parser("set", help="name record ID as the baseline NAME", allow_abbrev=False)
    bset.add_argument("name")
    bset.add_argument("id", type=int)
    bset.set_defaults(func=cmd_history_baseline_set)
    bl = bs.add_parser("list", help="the baselines", allow_abbrev=False)
    bl.set_defaults(func=cmd_history_baseline_list)
    pr = hs.add_parser("prune", help="delete old records (a baseline's record stays)", allow_abbrev=False)
    pr.add_argument("--keep", type=int, help="keep the latest N records of each series")
    pr.add_argument("--older-than", type=float, metavar="DAYS", help="delete records older than DAYS")
    pr.set_defaults(func=cmd_history_prune)


def _open():
    from ..config import ConfigError
    from ..history.recording import open_configured
    from ..history.store import HistoryError

    try:
        return open_configured()
    except (HistoryError, ConfigError) as e:
        raise InputError(str(e)) from None


def _guard(fn):
    from ..history.store import HistoryError

    try:
        return fn()
    except HistoryError as e:
        raise InputError(str(e)) from None


def cmd_history_list(a) -> int:
    import pandas as pd

    with _open() as store:
        rows = _guard(lambda: store.list(series=a.series))
        names = _guard(store.baselines)
    marks = {}
    for n, i in names.items():
        marks.setdefault(i, []).append(n)
    if a.json or a.jsonl:
        items = [{**r.to_dict(), "baselines": marks.get(r.id, [])} for r in rows]
        if a.json:  # one document (RFC 8259), an empty list when nothing is recorded
            print(json.dumps(items, ensure_ascii=False, indent=1))
        for item in items if a.jsonl else ():
            print(json.dumps(item, ensure_ascii=False))
        return EXIT_OK
    if not rows:
        print("no record yet: run `python -m audit report` (every report, health and compare is recorded)")
        return EXIT_OK
    df = pd.DataFrame([{"id": r.id, "when (UTC)": r.created_at[:19].replace("T", " "), "command": r.command,
                        "source": r.source_name, "ground truth": r.ground_truth[:12],
                        "series": (", ".join(r.series[:2]) + (f" (+{len(r.series) - 2})" if len(r.series) > 2 else "")),
                        "baseline": ", ".join(marks.get(r.id, []))} for r in rows])
    print(df.to_string(index=False))
    return EXIT_OK


def cmd_history_show(a) -> int:
    from ..report.serialize import strict

    with _open() as store:
        rec = _guard(lambda: store.get(a.id))
    if a.json:
        print(json.dumps(strict(rec.to_json()), ensure_ascii=False, indent=1))
        return EXIT_OK
    m = rec.model
    L = [f"record #{rec.id}: {rec.command} at {rec.created_at} UTC (format {rec.format_version})",
         f"source: {rec.source.get('kind')} {rec.source.get('name')} (identity {str(rec.source.get('identity'))[:12]})",
         f"model: {m.get('name') or '-'}" + (f" (weights {str(m.get('digest'))[:12]})" if m.get("digest") else ""),
         f"ground truth: {rec.ground_truth[:12] or '-'} · judgments version: {rec.judgments_version or '-'} · "
         f"{rec.code_version}"]
    if rec.source.get("provenance_line"):
        L.append(f"provenance: {rec.source['provenance_line']}")
    for r in rec.runs:
        if not r.available:
            L.append(f"  {r.series}: unavailable ({r.reason})")
            continue
        ivs = "; ".join(f"{k} {v[0]:.3f} [{v[1]:.3f},{v[2]:.3f}]" for k, v in r.intervals.items()
                        if k in ("Success@1", "Success@8", "Success@20"))
        line = f"  {r.series}: {ivs}; RR@20 {r.measures.get('RR@20', float('nan')):.3f}"
        if r.outcomes:
            c = r.outcomes["counts"]
            line += (f"; at {r.outcomes['how']} cut {r.outcomes['cut']:.4g}: answered {c['answered']}, abandoned "
                     f"{c['abandoned']}, bluffs {c['bluff']}/{c['out-of-domain']}")
        L.append(line)
    for h in rec.health:
        found = h.get("findings") or h.get("checks") or []
        bad = [f for f in found if f.get("severity") != "ok"]
        L.append(f"  {h.get('_series')}: {'healthy' if h.get('healthy') else 'UNHEALTHY'}, "
                 f"{len(bad)} finding(s) not ok" + (f" (generation {h['generation']})" if "generation" in h else ""))
    print("\n".join(L))
    return EXIT_OK


def cmd_history_baseline_set(a) -> int:
    with _open() as store:
        _guard(lambda: store.set_baseline(a.name, a.id))
    print(f"baseline {a.name!r} = record #{a.id} (report --baseline {a.name} compares with it)")
    return EXIT_OK


def cmd_history_baseline_list(a) -> int:
    with _open() as store:
        names = _guard(store.baselines)
    for n, i in names.items():
        print(f"{n}\t#{i}")
    if not names:
        print("no baseline set: python -m audit history baseline set NAME ID")
    return EXIT_OK


def cmd_history_prune(a) -> int:
    with _open() as store:
        gone = _guard(lambda: store.prune(a.keep, a.older_than))
    print(f"{len(gone)} record(s) deleted" + (f": {', '.join(f'#{i}' for i in gone)}" if gone else ""))
    return EXIT_OK
