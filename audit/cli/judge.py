"""``judge``: the judging queue without the dashboard — pool, label, save, adjudicate, agreement, versions, diff,
import, export.

Everything is kept in the audit's own SQLite (``--judgments FILE``, default ``$AUDIT_HOME/history.sqlite``,
beside the history; :mod:`audit.judging.store`); nothing is written to a team's store.

- ``judge pool --queries Q --run NAME=FILE … [--qrels QRELS] [--depth 10] [--reviewers a,b --overlap 0.2
  --seed 0] [--out POOL.jsonl]``: the unjudged chunks of every run's top k per judged question (judged: the
  head version, else ``--qrels``), each with the reviewers asked; ``--queue bluffs`` the out-of-domain
  questions answered at the saved cut; ``--queue proposals --qa QA --corpus DOCS`` the located answers of
  question/answer pairs (no run), "does this passage answer the question?";
- ``judge label --who NAME (--items POOL.jsonl | --from LABELS.tsv) [--chunks CHUNKS.jsonl]``: one item at a
  time on the terminal (a grade key, ``s`` skip, ``q`` quit), or ``query chunk grade`` lines from a file;
- ``judge save --who NAME``: the reviewers' labels settled into a new version (agreed or adjudicated;
  the open disagreements listed);
- ``judge adjudicate QUERY CHUNK GRADE --who NAME``;
- ``judge agreement [QRELS_A QRELS_B …] [--json]``: κ per pair and ordinal α over all, with bootstrap
  intervals (``--seed``, ``--n-boot`` echoed), per queue when no file is given;
- ``judge needles --qa QA --corpus DOCS --out GT.jsonl``: the proposals accepted (settled at 1), as a ground truth;
- ``judge versions``, ``judge diff A B [--queries Q --run NAME=FILE … --measure Success@8]``;
- ``judge import FILE --format trec|jsonl|label-studio --who NAME``, ``judge export --format trec|jsonl --out F``.
"""

from __future__ import annotations

import json
import sys

from .common import EXIT_OK, InputError, corpus_arg, write_json

__all__ = ["add_judge_parser", "cmd_judge"]

JUDGE_EXAMPLES = """examples:
  python -m audit judge import data/example/qrels.trec --format trec --who qa-lead
  python -m audit judge pool --queries data/example/queries.tsv --run before=data/example/before.trec --run after=data/example/after.trec --score before=cosine-distance --reviewers ana,ben --overlap 0.25 --out pool.jsonl
  python -m audit judge label --who ana --items pool.jsonl --chunks data/example/chunks.jsonl
  python -m audit judge agreement ana.qrels ben.qrels --json agreement.json
  python -m audit judge save --who qa-lead
  python -m audit judge diff v1 head --queries data/example/queries.tsv --run before=data/example/before.trec --score before=cosine-distance
"""


def add_judge_parser(sub, formatter_class=None) -> None:
    """The ``judge`` verb and its sub-commands, on the CLI's sub-parsers."""
    j = sub.add_parser("judge", help="the judging queue: pool unjudged chunks, label, measure agreement, version "
                                     "the judgments", allow_abbrev=False, epilog=JUDGE_EXAMPLES,
                       **({"formatter_class": formatter_class} if formatter_class else {}))
    js = j.add_subparsers(dest="judge_command", required=True)

    def common(p):
        p.add_argument("--judgments", default=None,
                       help="the audit's own SQLite file of judgments (default $AUDIT_HOME/history.sqlite)")

    def runs(p):
        p.add_argument("--queries", help="id<TAB>text lines or BEIR queries.jsonl")
        p.add_argument("--run", action="append", metavar="NAME=FILE", help="a TREC or JSONL run (repeatable)")
        p.add_argument("--score", action="append", metavar="NAME=KIND", help="a run's score kind (default similarity)")
        p.add_argument("--qrels", help="TREC or BEIR qrels judging the runs (default: the head version)")
        p.add_argument("--ood-queries", help="out-of-domain questions (id<TAB>text): the bluffs queue needs them")
        p.add_argument("--ood-run", action="append", metavar="NAME=FILE", help="a run's out-of-domain rankings")

    def qa_options(p):
        p.add_argument("--qa", help="question/answer pairs (CSV or JSONL, as groundtruth locate reads them)")
        p.add_argument("--corpus", default="python-reference",
                       help="with --qa: the documents its answers are located in (python-reference or a folder)")

    p = js.add_parser("pool", help="every run's unjudged top-k chunks per judged question", allow_abbrev=False)
    common(p)
    runs(p)
    p.add_argument("--queue", choices=["pool", "bluffs", "proposals"], default="pool",
                   help="pool: every run's unjudged top k; bluffs: out-of-domain questions answered at the saved cut; "
                        "proposals: the located answers of --qa's question/answer pairs")
    qa_options(p)
    p.add_argument("--depth", type=int, default=10, help="pooling depth k (default 10)")
    p.add_argument("--reviewers", help="comma-separated reviewers to assign the items to, in turn")
    p.add_argument("--overlap", type=float, default=0.2, help="share of items given to two reviewers (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the overlap's draw (default 0)")
    p.add_argument("--out", help="POOL.jsonl to write (one item a line, with its reviewers)")
    p.add_argument("--json", help="write the pool as JSON to this file")

    lb = js.add_parser("label", help="label items one at a time, or from a file", allow_abbrev=False)
    common(lb)
    lb.add_argument("--who", required=True, help="the reviewer's name")
    lb.add_argument("--queue", default="pool", help="the queue the labels belong to (default pool)")
    src = lb.add_mutually_exclusive_group(required=True)
    src.add_argument("--items", help="POOL.jsonl written by judge pool: asked one at a time")
    src.add_argument("--from", dest="from_file", help="'query chunk grade' lines (TREC qrels accepted)")
    lb.add_argument("--chunks", help="chunks JSONL, to show each chunk's text at its locator")
    lb.add_argument("--scale", choices=["graded", "binary"], default="graded",
                    help="graded 0-3 (TREC DL, TREC RAG) or binary 0/1 (default graded)")

    s = js.add_parser("save", help="settle the reviewers' labels into a new version", allow_abbrev=False)
    common(s)
    s.add_argument("--who", required=True)
    s.add_argument("--note", default="")

    ad = js.add_parser("adjudicate", help="settle an item two reviewers graded differently", allow_abbrev=False)
    common(ad)
    ad.add_argument("query_id")
    ad.add_argument("chunk_id")
    ad.add_argument("grade", type=int)
    ad.add_argument("--who", required=True)
    ad.add_argument("--queue", default="pool")
    ad.add_argument("--space", default="")

    ag = js.add_parser("agreement", help="Cohen's kappa and Krippendorff's alpha with bootstrap intervals",
                       allow_abbrev=False)
    common(ag)
    ag.add_argument("qrels", nargs="*", help="each reviewer's judgments as TREC qrels (none: the stored labels)")
    ag.add_argument("--names", help="comma-separated reviewer names of the files (default the file names)")
    ag.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    ag.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default 1000)")
    ag.add_argument("--json", help="write kappa and alpha (each with its interval) to this file")

    n = js.add_parser("needles", help="the Q/A proposals reviewers accepted, as a ground-truth JSONL",
                      allow_abbrev=False)
    common(n)
    qa_options(n)
    n.add_argument("--out", required=True, help="the ground-truth JSONL to write (id, needle, questions)")

    v = js.add_parser("versions", help="every version of the judgments", allow_abbrev=False)
    common(v)
    v.add_argument("--json", help="write the versions as JSON to this file")

    d = js.add_parser("diff", help="what changed between two versions, and what it does to every run",
                      allow_abbrev=False)
    common(d)
    d.add_argument("old", help="a version: v3, a digest (prefix), head")
    d.add_argument("new", help="a version: v3, a digest (prefix), head")
    runs(d)
    d.add_argument("--measure", default="Success@8", help="the measure whose change is said (default Success@8)")
    d.add_argument("--json", help="write the diff as JSON to this file")

    im = js.add_parser("import", help="a new version from TREC qrels, a judgments JSONL or a Label Studio export",
                       allow_abbrev=False)
    common(im)
    im.add_argument("file")
    im.add_argument("--format", required=True, choices=["trec", "jsonl", "label-studio"])
    im.add_argument("--who", required=True)
    im.add_argument("--space", default="", help="the chunk space the labels judge (default: a team's chunks)")
    im.add_argument("--replace", action="store_true", help="the file is the whole set (default: laid over the head)")

    ex = js.add_parser("export", help="a version as TREC qrels or a judgments JSONL", allow_abbrev=False)
    common(ex)
    ex.add_argument("--format", required=True, choices=["trec", "jsonl"])
    ex.add_argument("--out", required=True)
    ex.add_argument("--version", default="head")
    ex.add_argument("--space", default="")
    j.set_defaults(func=cmd_judge)


def _store(a):
    from ..judging.store import JudgmentsStore

    return JudgmentsStore(a.judgments)


def _system(a, st):
    """The team's runs of ``--run`` judged on ``--qrels``, else on the head version."""
    from ..runset import FILE_SCORE_KINDS
    from ..sources.imported.system import load_system, parse_named

    if not a.queries or not a.run:
        raise InputError(f"judge {a.judge_command} needs --queries FILE and at least one --run NAME=FILE")
    runs, scores = parse_named(a.run, "--run"), parse_named(a.score, "--score", FILE_SCORE_KINDS)
    ood = getattr(a, "ood_queries", None)
    ood_runs = parse_named(getattr(a, "ood_run", None), "--ood-run")
    if a.qrels is not None:
        return load_system(a.queries, runs, scores, a.qrels, None, None, None, ood, ood_runs)
    if st.head() is None:
        raise InputError("no judgments yet: give --qrels FILE, or `judge import` one first")
    import tempfile
    from pathlib import Path

    from ..judging.formats import write_trec_qrels

    with tempfile.TemporaryDirectory(prefix="judge-") as tmp:  # the head version read as the qrels file it exports
        path = Path(tmp) / "head.qrels"
        try:
            write_trec_qrels(st.judgments(), path)
        except ValueError as e:  # an id TREC's fields cannot hold
            raise InputError(f"the judgments' head version: {e}") from None
        return load_system(a.queries, runs, scores, str(path), None, None, None, ood, ood_runs)


def _located(a) -> list:
    """``--qa``'s pairs located in ``--corpus`` (:func:`audit.authoring.locate.locate_pairs`)."""
    from ..authoring.checks import CorpusViews
    from ..authoring.locate import locate_pairs, read_qa
    from ..groundtruth import GroundTruthError

    if not a.qa:
        raise InputError(f"judge {a.judge_command}{' --queue proposals' if a.judge_command == 'pool' else ''} needs "
                         "--qa FILE (question/answer pairs) and its --corpus")
    try:
        return locate_pairs(read_qa(a.qa), CorpusViews(corpus_arg(a.corpus)))
    except GroundTruthError as e:
        raise InputError(str(e)) from None


def _pool(a, st) -> int:
    from ..judging.labels import Judgments
    from ..judging.queues import assign, proposals_queue, queue_items
    from ..judging.versions import with_judgments

    if a.queue == "proposals":
        if a.run or a.qrels:
            raise InputError("judge pool --queue proposals asks the located answers of --qa: it takes no --run or "
                             "--qrels")
        located = _located(a)
        items = proposals_queue(located)
        system = None
    else:
        system = _system(a, st)
        if a.qrels and st.head() is not None:  # what the queue has judged since counts as judged too
            system = with_judgments(system, Judgments.from_qrels(system.judgments[""]).merged(st.judgments()))
        items = queue_items(system, a.queue, a.depth)
    who = assign(items, a.reviewers.split(","), a.overlap, a.seed) if a.reviewers else {}
    rows = [{**it.to_dict(), "reviewers": list(who.get(it.key, ()))} for it in items]
    n_q = len({it.query_id for it in items})
    twice = sum(1 for r in rows if len(r["reviewers"]) == 2)
    what = {"pool": f"pool at depth {a.depth}: {len(items)} unjudged chunks over {n_q} questions",
            "bluffs": f"bluffs at the saved cut: {len(items)} out-of-domain questions answered"}.get(a.queue)
    if system is None:
        what = f"Q/A proposals: {len(items)} answers of {len(located)} pairs located ({a.qa})"
    else:
        what += f" ({', '.join(r.name for r in system.runs)})"
    print(what + (f"; {twice} items to two reviewers (overlap {a.overlap:g}, seed {a.seed})" if who else ""))
    if a.out:
        with open(a.out, "w", encoding="utf-8", newline="\n") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"wrote {a.out}")
    if a.json:
        write_json(a.json, {"depth": a.depth, "seed": a.seed, "overlap": a.overlap, "items": rows})
    return EXIT_OK


def _read_items(path: str) -> list[dict]:
    from ..jsontext import InputFileError, json_records

    out = []
    for no, obj in json_records(path, "pool JSONL"):
        if not obj.get("query_id") or "chunk_id" not in obj:
            raise InputFileError(path, no, "an item needs 'query_id' and 'chunk_id' (write it with judge pool)")
        out.append(obj)
    return out


def _label(a, st) -> int:
    from ..jsontext import int_field, text_lines
    from ..judging.store import ReviewerLabel

    scale = (0, 1, 2, 3) if a.scale == "graded" else (0, 1)
    n = 0
    if a.from_file:
        for no, line in text_lines(a.from_file, "labels file"):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            f = line.split()
            if len(f) == 4:  # TREC qrels: qid 0 docid grade
                f = [f[0], f[2], f[3]]
            if len(f) != 3:
                raise InputError(f"{a.from_file}:{no}: expected 'query chunk grade', got {len(f)} fields")
            g = int_field(a.from_file, no, f[2], "grade")
            if g not in scale:
                raise InputError(f"{a.from_file}:{no}: grade {g} is not on the {a.scale} scale {scale}")
            st.add_label(ReviewerLabel(a.queue, a.who, "", f[0], f[1], g))
            n += 1
        print(f"{n} labels by {a.who} in queue {a.queue}")
        return EXIT_OK
    items = _read_items(a.items)
    mine = [it for it in items if not it.get("reviewers") or a.who in it["reviewers"]]
    done = {(lb.queue, lb.item) for lb in st.labels() if lb.reviewer == a.who}
    todo = [it for it in mine
            if (it.get("queue", a.queue), (it.get("space", ""), it["query_id"], it["chunk_id"])) not in done]
    chunks = {}
    if a.chunks:
        from ..sources.imported.chunks import read_chunks

        chunks = {c.chunk_id: c for c in read_chunks(a.chunks)}
    keys = "/".join(str(g) for g in scale)
    print(f"{len(todo)} of your {len(mine)} items left in {a.items} (grade {keys}, s skip, q quit)")
    for i, it in enumerate(todo, start=1):
        question_level = it["chunk_id"] == ""  # traffic and bluffs: can the corpus answer this?
        if it.get("queue") == "proposals":  # a located answer: does this passage answer the question?
            print(f"\n[{len(mine) - len(todo) + i}/{len(mine)}] {it['query_id']}: {it.get('question', '')}")
            print(f"passage at {it['chunk_id']}:" + (f" ({it['note']})" if it.get("note") else ""))
            print("  " + str(it.get("passage", "")).replace("\n", "\n  "))
            ans = _ask((0, 1), "1 answers the question, 0 does not")
            if ans == "q":
                break
            if ans != "s":
                st.add_label(ReviewerLabel("proposals", a.who, "", it["query_id"], it["chunk_id"], int(ans)))
                n += 1
            continue
        c = chunks.get(it.get("shown_chunk", "") if question_level else it["chunk_id"])
        where = ""
        if c is not None:
            where = f" at {c.doc_id}" + (f"#char={c.start},{c.end}" if c.start is not None else "")
        print(f"\n[{len(mine) - len(todo) + i}/{len(mine)}] {it['query_id']}: {it.get('question', '')}")
        shown = it.get("shown_chunk", "") if question_level else it["chunk_id"]
        print(f"chunk {shown}{where}:" + (f" ({it['note']})" if it.get("note") else ""))
        print("  " + (c.text.replace("\n", "\n  ") if c is not None else "(text unknown: give --chunks)"))
        allowed, prompt = ((0, 1), "1 answerable, 0 not in the corpus") if question_level else (scale, f"grade {keys}")
        ans = _ask(allowed, prompt)
        if ans == "q":
            break
        if ans == "s":
            continue
        st.add_label(ReviewerLabel(it.get("queue", a.queue), a.who, it.get("space", ""), it["query_id"],
                                   it["chunk_id"], int(ans)))
        n += 1
    print(f"{n} labels by {a.who} in queue {a.queue}")
    return EXIT_OK


def _ask(allowed, prompt: str) -> str:
    """One answer typed: a grade of ``allowed``, ``s`` (skip) or ``q`` (quit; also the end of the input)."""
    while True:
        try:
            ans = input(f"{prompt}, s, q > ").strip().lower()
        except EOFError:
            return "q"
        if ans in ("s", "q") or (ans.isdigit() and int(ans) in allowed):
            return ans
        print(f"  type one of {'/'.join(map(str, allowed))}, s or q")


def _needles(a, st) -> int:
    from ..judging.versions import accepted_needles

    located = _located(a)
    needles = accepted_needles(located, st.labels("proposals"), st.adjudications("proposals"))
    with open(a.out, "w", encoding="utf-8", newline="\n") as fh:
        for nd in needles:
            fh.write(json.dumps({"id": nd.id, "needle": nd.needle, "questions": list(nd.questions)},
                                ensure_ascii=False) + "\n")
    asked = sum(1 for x in located if x.proposed)
    print(f"{len(needles)} of {asked} proposals accepted → {a.out} (a ground truth: check it with groundtruth check)")
    return EXIT_OK


def _save(a, st) -> int:
    from ..judging.versions import save_settled

    v, waiting = save_settled(st, a.who, a.note)
    print(f"saved {v.label()}")
    if waiting:
        print(f"{len(waiting)} disagreements wait for `judge adjudicate` (not in this version):")
        for d in waiting:
            print(f"  {d.queue}: {d.item[1]} {d.item[2]}: " + ", ".join(f"{r} {g}" for r, g in d.grades.items()))
    return EXIT_OK


def _agreement(a, st) -> int:
    from ..judging.agreement import agreement
    from ..qrels import read_qrels

    reports = []
    if a.qrels:
        if len(a.qrels) < 2:
            raise InputError("judge agreement needs two qrels files or more (one per reviewer)")
        names = a.names.split(",") if a.names else list(a.qrels)
        if len(names) != len(a.qrels) or len(set(names)) != len(names):
            raise InputError(f"--names must name each of the {len(a.qrels)} files once, got {a.names!r}")
        grades = {}
        for n, path in zip(names, a.qrels):
            q = read_qrels(path)
            grades[n] = {("", qid, str(c)): int(g) for qid, js in q.judgments.items() for c, g in js.items()}
        reports.append(agreement(grades, "files", a.n_boot, a.seed))
    else:
        by: dict = {}
        for lb in st.labels():
            by.setdefault(lb.queue, {}).setdefault(lb.reviewer, {})[lb.item] = lb.grade
        for queue, grades in by.items():
            if len(grades) >= 2:
                reports.append(agreement(grades, queue, a.n_boot, a.seed))
        if not reports:
            raise InputError("no queue has two reviewers' labels yet: give qrels files, or label with two --who")
    for r in reports:
        print("\n".join(r.lines()))
    if a.json:
        write_json(a.json, reports[0].to_dict() if len(reports) == 1 else {"queues": [r.to_dict() for r in reports]})
    return EXIT_OK


def _versions(a, st) -> int:
    vs = st.versions()
    for v in vs:
        print(v.label() + (f" — {v.note}" if v.note else ""))
    if not vs:
        print(f"no judgments version in {st.where}")
    if a.json:
        write_json(a.json, [v.to_dict() for v in vs])
    return EXIT_OK


def _diff(a, st) -> int:
    from ..judging.labels import diff
    from ..judging.versions import version_effect

    va, vb = st.version(a.old), st.version(a.new)
    old, new = st.judgments(va.id), st.judgments(vb.id)
    d = diff(old, new)
    print(f"v{va.id} {va.digest} → v{vb.id} {vb.digest}: {d.summary()}")
    for c in d.changes:
        print(f"  {c.kind}: {c.query_id} {c.chunk_id} {'' if c.before is None else c.before}"
              f"→{'' if c.after is None else c.after}")
    effect = []
    if a.run:
        a.qrels = None
        system = _system(a, st)
        effect = version_effect(system, old, new, a.measure)
        for e in effect:
            print(e.sentence())
    if a.json:
        write_json(a.json, {"old": va.to_dict(), "new": vb.to_dict(), "added": d.added, "changed": d.changed,
                            "removed": d.removed, "changes": [c.__dict__ for c in d.changes],
                            "runs": [e.to_dict() for e in effect]})
    return EXIT_OK


def _import(a, st) -> int:
    from ..judging.formats import read_judgments_jsonl, read_label_studio
    from ..judging.labels import Judgments
    from ..judging.versions import settled
    from ..qrels import read_qrels

    note = f"imported from {a.file} ({a.format})"
    if a.format == "trec":
        js = Judgments.from_qrels(read_qrels(a.file), a.space)
    elif a.format == "jsonl":
        js = read_judgments_jsonl(a.file)
    else:
        labels, cancelled = read_label_studio(a.file, space=a.space)
        for lb in labels:
            st.add_label(lb)
        js, dis = settled(labels)
        waiting = [d for d in dis if d.adjudicated is None]
        note += f"; {len(labels)} annotations, {cancelled} cancelled, {len(waiting)} disagreements left out"
        if waiting:
            print(f"{len(waiting)} items the annotators graded differently wait for `judge adjudicate --queue "
                  "label-studio`")
    v = st.save(js, a.who, note, replace=a.replace)
    print(f"saved {v.label()}")
    return EXIT_OK


def _export(a, st) -> int:
    from ..judging.formats import write_judgments_jsonl, write_trec_qrels

    v = st.version(a.version)
    js = st.judgments(v.id)
    try:
        n = write_trec_qrels(js, a.out, a.space) if a.format == "trec" else write_judgments_jsonl(js, a.out)
    except ValueError as e:  # an id TREC's fields cannot hold
        raise InputError(f"{a.out}: {e}") from None
    print(f"wrote {n} judgments of v{v.id} {v.digest} to {a.out}")
    return EXIT_OK


def _adjudicate(a, st) -> int:
    st.adjudicate(a.queue, (a.space, a.query_id, a.chunk_id), a.grade, a.who)
    print(f"{a.query_id} {a.chunk_id} settled at {a.grade} by {a.who} (queue {a.queue}); `judge save` makes the "
          "version")
    return EXIT_OK


_COMMANDS = {"pool": _pool, "label": _label, "save": _save, "adjudicate": _adjudicate, "agreement": _agreement,
             "versions": _versions, "diff": _diff, "import": _import, "export": _export, "needles": _needles}


def cmd_judge(a) -> int:
    """Run one ``judge`` sub-command; bad input and an unusable judgments file are exit 2 with one line."""
    from ..judging.store import JudgmentsError

    try:
        with _store(a) as st:
            return _COMMANDS[a.judge_command](a, st)
    except (JudgmentsError, ValueError) as e:
        raise InputError(str(e)) from None
    finally:
        sys.stdout.flush()
