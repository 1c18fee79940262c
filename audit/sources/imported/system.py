"""A team's own system, loaded and checked: queries, judgments, runs, chunks, documents, out-of-domain runs.

What ``python -m audit report --run NAME=FILE …`` and the dashboard's "your system" source read,
returned as one :class:`~audit.runset.RunSet` (:func:`team_runset`, which a store's and an
endpoint's answers go through too).
Every file is validated by its reader (one error naming the file and line); cross-file
consistency (a ``--score`` or ``--ood-run`` naming an unknown run, needles without chunks) is
checked here. Runs' scores keep their own units: the gate works on "gate values", lower is
better (a distance as it is, a similarity negated), and every cut is shown back in the run's units.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping, Sequence

from ... import __version__
from ...shownpaths import display_path
from ...evaluation.judgments import Qrels
from ...groundtruth import load_needles
from ...ingest import Corpus
from .checks import (drop_textless, repeats_warning, respell_judgments, rr_ties_warning, system_warnings,
                     unjudged_warning)
from .chunks import check_chunks, needle_qrels, read_chunks
from .readers import read_qrels, read_queries, read_run
from ...runset import Query, Run, RunSet, Source, Space, digest, file_sha256

__all__ = ["declare_pairs", "load_checked", "load_system", "parse_named", "team_runset"]


def parse_named(specs: Sequence[str] | None, option: str, values: Sequence[str] | None = None) -> dict[str, str]:
    """``["before=runs/b.trec", …]`` → ``{"before": "runs/b.trec", …}`` (order kept).

    Raises
    ------
    ValueError
        A spec without ``NAME=VALUE``, an empty name or value, a repeated name, or (with ``values``)
        a value that is not one of them; the message names the option and the spec.
    """
    out: dict[str, str] = {}
    for spec in specs or ():
        name, sep, value = spec.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ValueError(f"{option} {spec!r}: expected NAME=VALUE")
        if name in out:
            raise ValueError(f"{option} {spec!r}: {name!r} is given twice")
        if values is not None and value not in values:
            raise ValueError(f"{option} {spec!r}: {value!r} is not one of {', '.join(values)}")
        out[name] = value
    return out


def declare_pairs(runset: RunSet, reranked: Mapping[str, str], fuse: str | None) -> RunSet:
    """``runset`` with what ``--reranked RERANKED=FIRST`` and ``--fuse RUN_A,RUN_B`` declare of its runs
    (``settings["reranked"]``: reranked run → first stage; ``settings["fuse"]``: the pair to fuse); its source's
    identity then names the declaration too (caches key on it). Nothing declared: ``runset`` itself.

    Raises
    ------
    ValueError
        A name that is no run of the run set, a run reordering itself, or ``fuse`` not naming two runs; the message
        names the option and the runs.
    """
    from dataclasses import replace

    names = runset.run_names
    for r, f in reranked.items():
        for n in (r, f):
            if n not in names:
                raise ValueError(f"--reranked {r}={f}: {n!r} is no run of --run; runs: {', '.join(names)}")
        if r == f:
            raise ValueError(f"--reranked {r}={f}: a run cannot reorder itself")
    settings = dict(runset.settings)
    if reranked:
        settings["reranked"] = dict(reranked)
    if fuse is not None and fuse.strip():
        pair = tuple(x.strip() for x in fuse.split(","))
        if len(pair) != 2 or not all(pair) or pair[0] == pair[1]:
            raise ValueError(f"--fuse {fuse!r}: expected two different run names, RUN_A,RUN_B")
        for n in pair:
            if n not in names:
                raise ValueError(f"--fuse {fuse}: {n!r} is no run of --run; runs: {', '.join(names)}")
        settings["fuse"] = pair
    if settings == dict(runset.settings):
        return runset
    source = replace(runset.source, identity=digest(runset.source.identity, settings.get("reranked"),
                                                    settings.get("fuse")))
    return replace(runset, settings=settings, source=source)


def team_runset(queries: Mapping[str, str], qrels: Qrels, judged_by: str, runs: Sequence[Run],
                chunks: Sequence | None = None, chunk_errors: Sequence = (), corpus: Corpus | None = None,
                ood_queries: Mapping[str, str] | None = None, ood_runs: Mapping[str, Run] | None = None,
                files: Sequence[dict] = (), warnings: Sequence = (), rejected: Sequence = (),
                requests: Mapping | None = None, kind: str = "files", name: str | None = None,
                cut_keys: Mapping[str, dict] | None = None) -> RunSet:
    """A team's system as one :class:`~audit.runset.RunSet` (files, a store's answers, an endpoint's answers).

    The judged queries come first (phrasing ``in-domain``, judgments order), then the out-of-domain
    ones; each run holds its rankings of both (its out-of-domain run merged in); one space ``""``
    holds the team's chunks by id and the chunks whose quote differs from their document.

    Parameters
    ----------
    queries : mapping query id → text
    qrels : Qrels
    runs : sequence of Run
        In the order given; ``ood_runs[name]`` is merged into the run ``name``.
    files : sequence of dict
        ``role``, ``name``, ``sha256`` of each file read (provenance, the source's identity).
    requests : mapping run name → RequestLog, optional
        How each question put to a live endpoint ended (kept in ``settings["requests"]``).
    kind, name : str
        :class:`~audit.runset.Source` kind and name (default: ``files: <file names>``).
    cut_keys : mapping run name → dict, optional
        What a saved threshold must have been chosen on to apply to each run (default: the run's own
        files' sha256 and its score kind).

    Raises
    ------
    ValueError
        An out-of-domain query id is also a judged query's.
    """
    ood_queries = dict(ood_queries or {})
    ood_runs = dict(ood_runs or {})
    # every source's runs are checked alike: judged UUIDs matched whatever their spelling, and a run none of whose
    # returned ids is judged said (a run file's system_warnings already holds its own)
    qrels, spelt = respell_judgments(qrels, [*runs, *ood_runs.values()])
    warnings = list(warnings) + ([spelt] if spelt is not None else [])
    said = {(w.kind, w.subject) for w in warnings}
    repeats = repeats_warning(qrels)
    if repeats is not None and (repeats.kind, repeats.subject) not in said:
        warnings.insert(0, repeats)
    for r in runs:
        w = unjudged_warning(r, qrels) if ("unjudged-chunks", f"run {r.name}") not in said else None
        if w is not None and any(qrels.judgments.values()):
            warnings.append(w)
        w = rr_ties_warning(r, qrels)  # wherever a team's run is evaluated: files, a store, an endpoint
        if w is not None:
            warnings.append(w)
    clash = [q for q in ood_queries if q in qrels.judgments]
    if clash:
        raise ValueError(f"out-of-domain query {clash[0]!r} is also a judged query: give the two sets distinct ids")
    qs = [Query(qid, queries.get(qid, ""), "in-domain") for qid in qrels.query_ids]
    qs += [Query(qid, text, "out-of-domain") for qid, text in ood_queries.items()]
    sha = {f["role"]: f["sha256"] for f in files}
    merged = []
    for r in runs:
        ood = ood_runs.get(r.name)
        rankings = r.rankings if ood is None else {**r.rankings, **ood.rankings}  # a columnar run stays one
        key = (cut_keys or {}).get(r.name) or {"source": kind, "run_file": sha.get(f"run {r.name}", r.source),
                                               "ood_run_file": sha.get(f"out-of-domain run {r.name}"),
                                               "score_kind": r.score_kind}
        merged.append(Run(r.name, r.score_kind, rankings, "", rank_conflicts=r.rank_conflicts, source=r.source,
                          warnings=tuple(r.warnings) + (tuple(ood.warnings) if ood is not None else ()), cut_key=key,
                          latency_ms=r.latency_ms, requests=r.requests))
    by_id = {c.chunk_id: c for c in chunks} if chunks is not None else None
    label = name or ("files: " + ", ".join(f["name"] for f in files)) if files else (name or kind)
    prov = {"files": list(files), "corpus": display_path(corpus.name) if corpus else None,
            "corpus_sha256": corpus.sha256 if corpus else None, "audit_version": __version__}
    line = (f"{label} — " + " · ".join(f"{f['role']} {f['name']}" + (f" ({f['sha256'][:12]})" if f["sha256"] else "")
                                  for f in files)
            + (f" · corpus {display_path(corpus.name)} sha256:{corpus.sha256[:12]}" if corpus else "")
            + f" · retrieval-audit {__version__}")
    settings = {"chunks_checked": (sum(1 for c in chunks if c.start is not None)
                                   if chunks is not None and corpus is not None else None)}
    if requests:
        settings["requests"] = dict(requests)
    return RunSet(source=Source(kind, label, digest(kind, list(files)), tuple(files), prov, line),
                  queries=tuple(qs), judgments={"": qrels}, runs=tuple(merged),
                  spaces={"": Space("", by_id, chunk_errors=tuple(chunk_errors))}, corpus=corpus,
                  judged_by=judged_by, settings=settings, warnings=tuple(warnings), rejected=tuple(rejected))


def load_system(queries: str | Path, runs: Mapping[str, str], scores: Mapping[str, str] | None = None,
                qrels: str | Path | None = None, ground_truth: str | Path | None = None,
                chunks: str | Path | None = None, corpus: Corpus | None = None,
                ood_queries: str | Path | None = None, ood_runs: Mapping[str, str] | None = None) -> RunSet:
    """Read and cross-check every file of a team's system.

    Parameters
    ----------
    queries : path
        ``id<TAB>text`` lines or BEIR ``queries.jsonl``.
    runs : mapping name → path
        TREC or JSONL runs.
    scores : mapping name → score kind, optional
        What each run's score means (:data:`audit.runset.FILE_SCORE_KINDS`); default similarity.
    qrels, ground_truth : path
        Exactly one: TREC/BEIR qrels, or needle ground truth (JSONL) resolved against ``chunks``.
    chunks : path, optional
        The team's chunks (JSONL); checked against ``corpus`` when both are given.
    corpus : Corpus, optional
        The documents, ``doc_id`` = path relative to the corpus folder.
    ood_queries, ood_runs : optional
        Out-of-domain queries and, per run name, that system's run over them.

    Judged queries without a text in ``queries`` are left out (``rejected``); what the files hold that
    the audit goes on with is listed in ``warnings`` (:func:`.checks.system_warnings`).

    Raises
    ------
    ValueError
        Any file problem (file and line in the message), an inconsistency between options, or no
        judged query with a text.
    """
    scores = dict(scores or {})
    ood_runs = dict(ood_runs or {})
    if not runs:
        raise ValueError("give at least one --run NAME=FILE")
    for what, names in (("--score", scores), ("--ood-run", ood_runs)):
        unknown = [n for n in names if n not in runs]
        if unknown:
            raise ValueError(f"{what} names {unknown[0]!r}, which is not a --run (runs: {', '.join(runs)})")
    if (qrels is None) == (ground_truth is None):
        raise ValueError("give exactly one of --qrels FILE and --ground-truth FILE for the relevance judgments")
    if ground_truth is not None and chunks is None:
        raise ValueError("--ground-truth needs --chunks CHUNKS.jsonl: needles are resolved against your chunks")
    if ood_runs and ood_queries is None:
        raise ValueError("--ood-run needs --ood-queries FILE")
    files = []
    # the files read two at a time in worker threads (Arrow's parse, numpy and the digests release the GIL), each
    # with its sha256; taken in this order, so the first bad file named is the one the order reaches first
    pool = ThreadPoolExecutor(2, thread_name_prefix="load_system")
    try:
        def later(role: str, read, path, *args):
            return role, path, pool.submit(_read_and_digest, read, path, *args)

        q_read = later("queries", read_queries, queries)
        j_read = later("qrels", read_qrels, qrels) if qrels is not None else None
        r_reads = [later(f"run {name}", read_run, path, name, scores.get(name, "similarity"))
                   for name, path in runs.items()]

        def note(role: str, path, sha: str | None = None) -> None:
            files.append({"role": role, "name": Path(path).name, "sha256": sha or file_sha256(path)})

        def take(read):
            role, path, future = read
            value, sha = future.result()
            note(role, path, sha)
            return value

        q = take(q_read)
        user_chunks = read_chunks(chunks) if chunks is not None else None
        if chunks is not None:
            note("chunks", chunks)
        rejected: list = []
        if qrels is not None:
            judgments, judged_by = take(j_read), f"qrels {Path(qrels).name}"
            judgments, rejected = drop_textless(judgments, q, Path(queries).name)
        else:
            needles = load_needles(ground_truth)
            judgments = needle_qrels(needles, user_chunks, list(q))
            judged_by = f"needles {Path(ground_truth).name} resolved against the chunks (a chunk's text holds the needle)"
            note("ground truth", ground_truth)
        loaded = [take(r) for r in r_reads]
    finally:
        pool.shutdown(cancel_futures=True)
    ood_q = read_queries(ood_queries) if ood_queries is not None else {}
    if ood_queries is not None:
        note("out-of-domain queries", ood_queries)
    ood = {}
    for name, path in ood_runs.items():
        ood[name] = read_run(path, name, scores.get(name, "similarity"))
        note(f"out-of-domain run {name}", path)
    errors = check_chunks(user_chunks, corpus) if user_chunks is not None and corpus is not None else []
    judgments, spelt = respell_judgments(judgments, [*loaded, *ood.values()])
    warnings = system_warnings(loaded, judgments, q, rejected, ood, ood_q) + ([spelt] if spelt is not None else [])
    return team_runset(q, judgments, judged_by, loaded, user_chunks, errors, corpus, ood_q, ood, files,
                       warnings=warnings, rejected=rejected)


def _read_and_digest(read, path, *args):
    """``(read(path, *args), file_sha256(path))``: one worker's part of :func:`load_system`."""
    return read(path, *args), file_sha256(path)


def load_checked(files: Mapping, names: Mapping[str, str] | None = None) -> tuple[RunSet | None, list[str]]:
    """Read every file on its own, then the system from the good ones: ``(RunSet or None, errors)``.

    What the dashboard does with a team's files, where one broken file must not lose the others: a bad run
    or out-of-domain run is left out, a bad chunks file is left out, the rest is kept.

    Parameters
    ----------
    files : mapping
        ``queries``, ``qrels``, ``chunks``, ``ood_queries`` (paths or None), ``corpus`` (a Corpus or None),
        ``runs``, ``ood_runs`` (run name → path), ``scores`` (run name → score kind).
    names : mapping path → name, optional
        What to call a file in a message (an upload's own name instead of the server's temporary path).

    Returns
    -------
    (RunSet or None, list of str)
        None while queries, judgments or every run are missing or broken; each error names its file and line.
    """
    from .chunks import read_chunks

    errors: list[str] = []

    def said(msg: str) -> str:
        for path in sorted(names or {}, key=len, reverse=True):
            msg = msg.replace(path, (names or {})[path])
        return msg

    def ok(reader, *args) -> bool:
        try:
            reader(*args)
            return True
        except (ValueError, OSError) as e:
            errors.append(said(str(e)))
            return False

    if not files.get("queries") or not files.get("qrels") or not files.get("runs"):
        missing = [w for w, k in (("queries", "queries"), ("judgments", "qrels"), ("at least one run", "runs"))
                   if not files.get(k)]
        return None, ["Give " + ", ".join(missing) + "."]
    if not ok(read_queries, files["queries"]) or not ok(read_qrels, files["qrels"]):
        return None, errors
    scores = files.get("scores") or {}
    runs = {n: p for n, p in files["runs"].items() if ok(read_run, p, n, scores.get(n, "similarity"))}
    ood_q = files.get("ood_queries")
    if ood_q and not ok(read_queries, ood_q):
        ood_q = None
    ood_runs = {n: p for n, p in (files.get("ood_runs") or {}).items()
                if n in runs and ood_q and ok(read_run, p, n, scores.get(n, "similarity"))}
    chunks = files.get("chunks")
    if chunks and not ok(read_chunks, chunks):
        chunks = None
    if not runs:
        return None, errors
    try:
        runset = load_system(files["queries"], runs, {n: k for n, k in scores.items() if n in runs}, files["qrels"],
                             None, chunks, files.get("corpus"), ood_q, ood_runs)
    except (ValueError, OSError) as e:
        return None, errors + [said(str(e))]
    if names:
        from dataclasses import replace

        runset = replace(runset, runs=tuple(replace(r, source=names.get(r.source, r.source)) for r in runset.runs))
    return runset, errors
