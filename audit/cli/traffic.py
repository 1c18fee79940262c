"""``report --traffic FILE…``: what the threshold does to real traffic, alone or with the labelled runs of its system.

Alone, the traffic gives the exact figures (NO ANSWER share at the cut, chunks kept, the score's
distribution, the no-answer curve, the review list). With ``--run`` (a team's labelled runs; the traffic
belongs to ``--traffic-run NAME``, by default the only run with an out-of-domain run) it also gives the
estimate of how much of it is out of domain and the expected errors per thousand, refused with the reason
when the score kinds differ. The built-in pipelines serve no traffic, so ``--traffic`` is never read
against them here. Question text follows ``[traffic] show_questions`` of audit.toml (``--hide-questions``
hides it whatever the file says).

With ``--stages`` the traces of the exports are followed too (:mod:`audit.report.stages`): for each traced
question with a judgment, the stage where its relevant chunk was lost. The judgments are ``--queries Q --qrels
R`` or ``--ground-truth FILE`` when the traffic is read alone, or the judgments of ``--run``'s queries; then the
traffic's run (``--traffic-run``, or the only run) is the deeper run that tells a chunk cut by the retriever's k
apart. ``--judgments-version REF`` (``head``, ``v3``, a digest prefix: as ``judge diff`` names a version) judges
them on a version of the judging queue's store (``--judgments FILE``, as ``judge`` takes it), laid over the
qrels given (or alone, with ``--queries`` for matching by text), as the dashboard lays it over a run set.
"""

from __future__ import annotations

import argparse
import math

from .common import InputError, Loaded, corpus_arg

__all__ = ["add_traffic_options", "load_traffic"]

_BUILTIN_ONLY = ("strategies", "retrievers", "ground_truth", "out_of_domain", "db", "index", "fail_under")


def add_traffic_options(r: argparse.ArgumentParser) -> None:
    """The ``report`` options of production traffic."""
    from ..runset import FILE_SCORE_KINDS as SCORE_KINDS

    g = r.add_argument_group("production traffic")
    g.add_argument("--traffic", nargs="+", action="extend", metavar="FILE",
                   help="OTLP JSON exports of OpenInference retrieval spans (one request a line), query logs (JSONL) "
                        "or folders of them: what the cut does to real questions")
    g.add_argument("--traffic-score", choices=list(SCORE_KINDS), default=None,
                   help="what the traffic's scores are (default: the kind the file names — score_kind on a query-log "
                        "line, the retrieval.score_kind attribute in OTLP —, else the score kind of --traffic-run's "
                        "run, else similarity; the report says which was used)")
    g.add_argument("--traffic-engine", choices=["local", "ray"], default="local",
                   help="read the traffic's files in this process (local, default) or one Ray Data task a file (ray, "
                        "the [scale] extra): a day's shards; the same figures")
    g.add_argument("--ray-address", help="with --traffic-engine ray: an existing Ray cluster that sees the files at "
                                         "the same paths (default: Ray started locally)")
    g.add_argument("--traffic-run", metavar="NAME", help="with --run: the run of the system that served the traffic "
                                                         "(default: the only run with an --ood-run)")
    g.add_argument("--since", help="traffic from this time on (ISO 8601, UTC unless an offset is given)")
    g.add_argument("--until", help="traffic before this time (ISO 8601)")
    g.add_argument("--baseline-since", help="a baseline window of the traffic, for the drift between windows")
    g.add_argument("--baseline-until", help="end of the baseline window (exclusive)")
    g.add_argument("--review", type=int, default=10, metavar="N",
                   help="questions nearest the cut on each side, for review (default 10)")
    g.add_argument("--hide-questions", action="store_true",
                   help="no question text in the output, whatever [traffic] show_questions says")
    g.add_argument("--stages", action="store_true",
                   help="follow each traced question's spans (retriever, reranker, LLM prompt) and say where its "
                        "relevant chunk was lost; judgments from --queries and --qrels, --ground-truth, --run, or "
                        "--judgments-version")
    g.add_argument("--judgments-version", metavar="REF",
                   help="with --stages: judge the traced questions on this version of the judging queue's store "
                        "(head, v3, a digest prefix), laid over --qrels or --run's qrels when given")
    g.add_argument("--judgments", metavar="FILE", default=None,
                   help="with --judgments-version: the judging store (default $AUDIT_HOME/history.sqlite, as judge)")
    g.add_argument("--bootstrap", type=int, default=None, metavar="B", help="bootstrap resamplings (default 1000)")
    g.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 0)")


def _window(a, since: str, until: str):
    from ..traffic.records import parse_time
    from ..traffic.table import Window

    s, u = getattr(a, since), getattr(a, until)
    if s is None and u is None:
        return None
    try:
        w = Window(parse_time(s, "--" + since.replace("_", "-")) if s else None,
                   parse_time(u, "--" + until.replace("_", "-")) if u else None)
    except ValueError as e:
        raise InputError(str(e)) from None
    if w.since is not None and w.until is not None and w.until <= w.since:
        raise InputError(f"--{until.replace('_', '-')} {u!r} is not after --{since.replace('_', '-')} {s!r}")
    return w


def _show_questions(a) -> bool:
    from ..config import ConfigError, load_config
    from ..traffic.settings import show_questions

    try:
        cfg = load_config()
    except ConfigError as e:
        raise InputError(str(e)) from None
    return show_questions(cfg) and not a.hide_questions


def _kind(a, run=None) -> tuple[str, str]:
    """``(score kind, which rule chose it)`` of the traffic: ``--traffic-score``, else the dashboard's one rule
    (:func:`audit.traffic.kind.traffic_score_kind`: the file's declaration, else ``run``'s score kind, else
    similarity)."""
    from ..traffic.kind import traffic_score_kind

    if a.traffic_score:
        return a.traffic_score, "as given by --traffic-score"
    return traffic_score_kind(a.traffic, run.score_kind if run is not None else None,
                              run.name if run is not None else None)


def _table(a, corpus, stages=None, run=None):
    """The traffic read, in this process or on Ray (``--traffic-engine``); on Ray, what it cost goes to stderr.

    Its score kind is :func:`_kind`'s (``run``: the run of the system that served it, when known). With ``stages``
    (the traces followed, :class:`audit.report.stages.StagesReport`) that read a judged trace, a traffic without
    one scored retrieval (LangChain's retriever spans give ids and content only) is not an error: the stages need
    no score, and the traffic section says what it lacks. Returns ``(table, the score kind's rule in words)``."""
    import sys

    from ..traffic.shards import read_shards

    if a.ray_address and a.traffic_engine != "ray":
        raise InputError("--ray-address goes with --traffic-engine ray")
    kind, rule = _kind(a, run)
    try:
        got = read_shards(a.traffic, kind, corpus, a.traffic_engine, a.ray_address)
    except ValueError as e:
        raise InputError(str(e)) from None
    table = got.table
    if got.engine == "ray":
        print(got.summary(), file=sys.stderr)
    if not len(table) and not (stages is not None and stages.stages.n):
        first = f": {table.problems[0]}" if table.problems else ""
        more = f" (and {table.n_problems - 1} more)" if table.n_problems > 1 else ""
        raise InputError(f"no retrieval read from the traffic{first}{more}")
    return table, rule


def _options(a) -> dict:
    from ..traffic.mixture import BOOTSTRAP, SEED

    if a.review < 0:
        raise InputError(f"--review must be >= 0, got {a.review}")
    b = BOOTSTRAP if a.bootstrap is None else a.bootstrap
    if b < 100:
        raise InputError(f"--bootstrap must be at least 100, got {b}")
    return {"review_n": a.review, "bootstrap": b, "seed": SEED if a.seed is None else a.seed}


def _check_cut(kind: str, cut: float) -> float:
    from ..evaluation.threshold import check_cut
    from ..scores import known_kind

    k = known_kind(kind)
    if k is not None and k.bounded:  # a cut of a kind with a bounded range (cosine distance) must lie in it
        return check_cut(cut, "--threshold", k)
    if not math.isfinite(cut):
        raise ValueError(f"--threshold must be a finite number in the traffic's units, got {cut!r}")
    return cut


def load_traffic(a):
    """``report --traffic FILE… [--run …]``: the run set (a team's labelled runs, or the traffic's own empty one)
    with the traffic (and ``--stages``' traces) beside it, as :class:`audit.cli.common.Loaded`."""
    from ..report.sections import TrafficInput

    window, baseline = _window(a, "since", "until"), _window(a, "baseline_since", "baseline_until")
    show = _show_questions(a)
    opts = _options(a)
    if getattr(a, "store", None) or getattr(a, "index", None):
        raise InputError("--traffic is read alone or with --run (the labelled runs of the system that served it), "
                         "not with --store or --index")
    if a.run:
        from .runs import load_runs

        loaded = load_runs(a)
        system = loaded.runset
        try:
            name = a.traffic_run or _only_ood_run(system)
            stages = _stages_of_runs(a, system) if a.stages else None
            served = system.run(name) if name else (system.runs[0] if len(system.runs) == 1 else None)
            table, rule = _table(a, system.corpus, stages, served)
            cut = _check_cut(table.score_kind, a.threshold) if a.threshold is not None else None
        except ValueError as e:
            raise InputError(str(e)) from None
        beside = {"traffic": TrafficInput(table, cut, name, window, baseline, show, opts, rule), "stages": stages}
        return Loaded(system, beside, loaded.gates, loaded.where, loaded.skip_unavailable)
    judged = ("queries", "qrels", "ground_truth") if a.stages else ()
    given = [f"--{o.replace('_', '-')}" for o in _BUILTIN_ONLY if getattr(a, o, None) and o not in judged]
    given += [f"--{o.replace('_', '-')}" for o in ("traffic_run", "model", "queries", "qrels", "chunks", "score",
                                                   "ood_queries", "ood_run") if getattr(a, o, None) and o not in judged]
    if given:
        raise InputError(f"{', '.join(given)}: the built-in pipelines serve no traffic; --traffic is read alone, or "
                         "with --run NAME=FILE … (the labelled runs of the system that served it)"
                         + ("" if a.stages else "; judgments for traced questions go with --stages"))
    if getattr(a, "html", None) or getattr(a, "pdf", None):
        raise InputError("--html/--pdf: the decision record is of an audit of runs; give --run NAME=FILE … with "
                         "--traffic (the labelled runs of the system that served it)")
    from ..sources.traffic import traffic_runset

    stages = _stages_alone(a) if a.stages else None
    corpus = corpus_arg(a.corpus) if a.corpus else None
    table, rule = _table(a, corpus, stages)
    try:
        cut = _check_cut(table.score_kind, a.threshold) if a.threshold is not None else None
    except ValueError as e:
        raise InputError(str(e)) from None
    beside = {"traffic": TrafficInput(table, cut, None, window, baseline, show, opts, rule), "stages": stages}
    return Loaded(traffic_runset(table), beside, history=False)


def _stages(a, judgments, deeper=None, deeper_name: str = ""):
    from ..report.stages import build_stages_report
    from ..traffic.traces import TraceReader

    try:
        return build_stages_report(TraceReader(a.traffic), judgments, deeper, deeper_name)
    except ValueError as e:
        raise InputError(str(e)) from None


def _stages_alone(a):
    """``--stages`` with the traffic alone: the judgments of ``--queries``/``--qrels`` or ``--ground-truth``."""
    from ..evaluation.stages import Judgments

    if a.ground_truth and (a.qrels or a.queries or a.judgments_version):
        raise InputError("--stages takes one kind of judgment: --queries and --qrels (with --judgments-version laid "
                         "over them), or --ground-truth")
    try:
        if a.ground_truth:
            from ..groundtruth import load_needles

            judgments = Judgments.from_needles(load_needles(a.ground_truth), str(a.ground_truth))
        elif (a.qrels and a.queries) or a.judgments_version:
            from ..evaluation.judgments import Qrels
            from ..qrels import read_qrels
            from ..sources.imported.readers import read_queries

            if a.qrels and not a.queries:
                raise InputError("--qrels needs --queries FILE (the questions' text, to match traced questions)")
            qrels = _on_version(a, read_qrels(a.qrels) if a.qrels else Qrels({}))
            judgments = Judgments.from_qrels(read_queries(a.queries) if a.queries else {}, qrels)
        else:
            raise InputError("--stages needs judgments: --queries FILE --qrels FILE, --ground-truth FILE, "
                             "--judgments-version REF, or --run NAME=FILE with its --queries and --qrels")
    except ValueError as e:
        raise InputError(str(e)) from None
    return _stages(a, judgments)


def _stages_of_runs(a, system):
    """``--stages`` with ``--run``: the judgments of the runs' queries; the traffic's run is the deeper run."""
    from ..evaluation.stages import Judgments

    names = system.run_names
    name = a.traffic_run or (names[0] if len(names) == 1 else _only_ood_run(system))
    if name is None:
        raise ValueError(f"give --traffic-run NAME: which run is the traffic's system, run deeper? (runs: "
                         f"{', '.join(names)})")
    run = system.run(name)
    queries = {q.query_id: q.text for q in system.queries}
    deeper = {qid: run.ids(qid) for qid in run.rankings}
    return _stages(a, Judgments.from_qrels(queries, _on_version(a, system.qrels(run), run.space)), deeper, name)


def _on_version(a, qrels, space: str = ""):
    """``qrels`` with ``--judgments-version``'s labels of ``space`` laid over them (the store's label wins), its
    source naming the version; ``qrels`` itself without the option.

    Raises
    ------
    InputError
        The store cannot be opened, or names no such version.
    """
    if not a.judgments_version:
        return qrels
    from ..judging.labels import Judgments as Labels
    from ..judging.store import JudgmentsError, JudgmentsStore

    try:
        with JudgmentsStore(a.judgments) as store:
            v = store.version(a.judgments_version)
            labels = store.judgments(v.id)
    except JudgmentsError as e:
        raise InputError(str(e)) from None
    int_ids = any(isinstance(c, int) for js in qrels.judgments.values() for c in js)
    named = f"judgments version v{v.id} {v.digest}"
    return Labels.from_qrels(qrels, space).merged(labels).qrels(
        space, int_ids, f"{qrels.source} with {named}" if qrels.source else named)


def _only_ood_run(system) -> str | None:
    """The run the traffic belongs to when ``--traffic-run`` is not given: the only run with an out-of-domain run."""
    names = [r.name for r in system.runs if system.has_out_of_domain(r)]
    if len(names) > 1:
        raise ValueError(f"give --traffic-run NAME: which run served the traffic? (runs with an out-of-domain run: "
                         f"{', '.join(names)})")
    return names[0] if names else None
