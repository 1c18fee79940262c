"""``groundtruth check`` and ``groundtruth locate``: the Ground truth page's rules on files.

- ``check FILE --corpus DOCS [--out-of-domain F] [--strategies A,…]``: every problem with its line —
  rejected needles (``FILE:LINE: rejected ID: reason``), then warnings (a strategy that destroys a
  needle or holds it only through a tail, a question that quotes its needle, an out-of-domain question
  found in the corpus). Exit 1 when a needle is rejected, 2 for a malformed file, 0 otherwise.
- ``locate QA --corpus DOCS --out CANDIDATES.jsonl [--min-score 90]``: each answer of a CSV/JSONL of
  question/answer pairs located (:mod:`audit.authoring.locate`) and written as a proposal for a person
  to accept, trim or reject (never as a ground truth). Exit 0 once written, 2 for a malformed file.
"""

from __future__ import annotations

import json
import sys

from .common import EXIT_GATE, EXIT_OK, InputError, corpus_arg, needles_arg, strategies_arg

__all__ = ["add_groundtruth_parser", "cmd_groundtruth_check", "cmd_groundtruth_locate"]


def add_groundtruth_parser(sub) -> None:
    """The ``groundtruth`` verb and its ``check``/``locate`` sub-commands, on the CLI's sub-parsers."""
    g = sub.add_parser("groundtruth", help="check a ground truth, or locate the answers of question/answer pairs",
                       allow_abbrev=False)
    gs = g.add_subparsers(dest="gt_command", required=True)
    c = gs.add_parser("check", help="every problem of a ground-truth JSONL, with its line (exit 1 when a needle "
                                    "is rejected)", allow_abbrev=False)
    c.add_argument("file", help="ground truth JSONL of {id, needle, questions: [doc, ticket]}")
    c.add_argument("--corpus", default="python-reference", help="python-reference (built in, the default) or a folder")
    c.add_argument("--out-of-domain", help="out-of-domain questions (one a line, # comments) to check too")
    c.add_argument("--strategies", default="A,B,C,D,E,F", help="presets whose verdicts are checked (default A-F)")
    c.add_argument("--bm25-tokens", choices=["unicode", "ascii"], default="unicode",
                   help="token rule of the quotes-its-needle hint (default unicode)")
    c.set_defaults(func=cmd_groundtruth_check)
    loc = gs.add_parser("locate", help="locate each answer of a CSV/JSONL of question/answer pairs and write the "
                                       "proposed needles", allow_abbrev=False)
    loc.add_argument("qa", help="CSV (.csv, .tsv) or JSONL with question, answer[, id, question2]")
    loc.add_argument("--corpus", default="python-reference", help="python-reference (built in, the default) or a folder")
    loc.add_argument("--out", required=True, help="CANDIDATES.jsonl to write (one proposal a line)")
    loc.add_argument("--min-score", type=float, default=None,
                     help="least rapidfuzz partial ratio (0-100) of a fuzzy proposal (default 90)")
    loc.set_defaults(func=cmd_groundtruth_locate)


def _ood_lines(path: str) -> list[int]:
    """The line number of each question :func:`audit.groundtruth.load_out_of_domain` returns, in its order."""
    from ..jsontext import lines, read_text

    text = read_text(path, "out-of-domain file")
    return [no for no, s in enumerate(lines(text), start=1) if s.strip() and not s.strip().startswith("#")]


def cmd_groundtruth_check(a) -> int:
    """``groundtruth check``: print every problem with its line; exit 1 when a needle is rejected."""
    from ..authoring.checks import CorpusViews, StrategyChunks, check_needle, check_question, ood_occurrences
    from ..views.ground_truth import check_messages
    from ..chunking import chunk_corpus
    from ..groundtruth import validate

    corpus = corpus_arg(a.corpus)
    strategies = strategies_arg(a.strategies)
    needles, ood = needles_arg(a.file, a.out_of_domain)
    views = CorpusViews(corpus)
    chunked = [StrategyChunks(s.name, s.description, chunk_corpus(corpus, s)) for s in strategies]
    accepted, _, rejected = validate(needles, corpus, views.docs)
    problems = [(r.line, f"rejected {r.id}: {r.reason}") for r in rejected]
    warnings = 0
    ok = {n.id for n in accepted}
    seen: set = set()
    for n in needles:
        if n.id not in ok or n.id in seen:
            continue
        seen.add(n.id)
        check = check_needle(n.needle, views, chunked)
        for level, text in check_messages(check, chunked)[1:]:
            if level == "warning":
                warnings += 1
                problems.append((n.line, f"warning: {n.id}: {text}"))
        for phrasing, q in zip(("documentation", "ticket"), n.questions):
            qc = check_question(q, check, None, (), a.bm25_tokens)
            if qc.quotes:
                warnings += 1
                problems.append((n.line, f"warning: {n.id}: the {phrasing} question shares {qc.shared} of its "
                                         f"{qc.total} words with the needle (a question that quotes its answer "
                                         "measures BM25, not understanding)"))
    for line, text in sorted(problems, key=lambda p: p[0]):  # file order; a line's rejection before its warnings
        print(f"{a.file}:{line}: {text}")
    flagged = 0
    if ood:
        for no, (i, q) in zip(_ood_lines(a.out_of_domain), enumerate(ood, start=1)):
            hits = ood_occurrences(q, views)
            if hits:
                flagged += 1
                warnings += 1
                print(f"{a.out_of_domain}:{no}: warning: ood-{i} occurs in the corpus ("
                      + "; ".join(f"{h.doc_id} {h.locator}" for h in hits)
                      + "): a literal match is not an answer; check it is out of domain")
    print(f"{len(needles)} needles: {len(accepted)} accepted, {len(rejected)} rejected; {warnings} warnings"
          + (f"; {len(ood)} out-of-domain questions, {flagged} found in the corpus" if a.out_of_domain else "")
          + f" (corpus {corpus.name}, {len(corpus.documents)} documents)")
    return EXIT_GATE if rejected else EXIT_OK


def cmd_groundtruth_locate(a) -> int:
    """``groundtruth locate``: write one proposal a line to ``--out``; print the answers not found."""
    from ..authoring.checks import CorpusViews
    from ..authoring.locate import FUZZY_MIN, NOT_FOUND, candidate_record, locate_pairs, read_qa
    from ..groundtruth import GroundTruthError

    min_score = FUZZY_MIN if a.min_score is None else a.min_score
    if not 0 <= min_score <= 100:
        raise InputError(f"--min-score must be a partial ratio in [0, 100], got {a.min_score}")
    corpus = corpus_arg(a.corpus)
    try:
        pairs = read_qa(a.qa)
    except GroundTruthError as e:
        raise InputError(str(e)) from None
    located = locate_pairs(pairs, CorpusViews(corpus), min_score)
    with open(a.out, "w", encoding="utf-8", newline="\n") as fh:
        for x in located:
            fh.write(json.dumps(candidate_record(x), ensure_ascii=False) + "\n")
    counts: dict = {}
    for x in located:
        counts[x.method] = counts.get(x.method, 0) + 1
        if x.method == NOT_FOUND:
            best = f"best partial ratio {x.score:.1f}" if x.score is not None else "no document has text"
            print(f"{a.qa}:{x.pair.line}: not found: {x.pair.id or x.pair.question!r} ({best}, below {min_score:g})")
        elif x.problem:
            print(f"{a.qa}:{x.pair.line}: {x.method}, but {x.problem}")
    summary = ", ".join(f"{v} {k}" for k, v in counts.items()) or "no pair"
    print(f"{len(located)} answers: {summary} → {a.out} (proposals: a person accepts, trims or rejects each)")
    sys.stdout.flush()
    return EXIT_OK
