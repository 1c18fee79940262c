"""What a team's files say that is not an error but changes the figures: warnings, and judged queries left out.

Readers and :func:`~audit.sources.imported.system.load_system` accept files that trec_eval accepts and
say, once, what they did with what is odd in them (docs/definitions.md, *A team's own system*):

- ``extra-fields``: TREC run lines with more than 6 fields; the fields after the run tag are ignored
  (trec_eval: "Any field following run_id is ignored"). One warning per file.
- ``rank-order``: a run whose ``rank`` column contradicts its scores (a chunk with a strictly better
  score ranked below a worse one) on some queries; the score order is evaluated, as in trec_eval. When
  on every such query the ranks follow the scores the other way round, the warning names the ``--score``
  that would agree with them (typically cosine distances written as similarities).
- ``unknown-queries``: run query ids that are neither judged nor in the queries file (``1, 2, 3`` against
  ``q1, q2, q3``): not counted.
- ``unanswered``: judged queries a run has no ranking for: each counts as a miss, 0 on every measure
  (trec_eval ``-c``, ir_measures' default); all their ids are listed.
- ``unjudged-chunks``: a run none of whose returned chunk ids is judged for the query it answers (chunk
  ids against document-level qrels: the warning says when every returned id starts with a judged id).
- ``repeated-judgments``: a qrels file that repeats a judgment with the same grade (as some public collections
  ship): read once (ir_measures and trec_eval read them); two grades for one chunk and query stay refused.
- ``rr-ties``: queries whose ``RR@k`` differs from ir_measures' because a score tie surrounds the first relevant
  chunk (ties by chunk id descending here, as trec_eval; ascending in ir_measures' ``RR@k``), named.
- ``id-spelling``: judged ids that are UUIDs the runs return in another spelling (hyphenated against 32 hex
  digits): matched as the same ids (:func:`respell_judgments`); ids are shown as each file or service gives them.
- ``rejected-query``: judged queries without a text in the queries file, dropped from the evaluation
  (listed as :class:`~audit.groundtruth.Rejected` with the reason, as rejected needles are).

Every warning is an :class:`InputWarning`; the text report prints ``warning: <message>``, the JSON lists
:meth:`InputWarning.to_dict`, and the dashboard draws each once per page for the team's system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

from ...evaluation.judgments import ColumnarJudgments, Qrels
from ...runset import Run, answered_ids, returned_id_set, returned_ids, score_kind as _kind
from ...words import plural

__all__ = ["InputWarning", "SHOWN_IDS", "drop_textless", "ood_run_warnings", "rank_order_message",
           "rank_order_warning", "rejected_warning", "repeats_warning", "respell_judgments", "rr_ties_warning",
           "run_warnings", "system_warnings", "unjudged_warning", "uuid_key"]

#: How many ids a warning's message names (its ``ids`` holds them all).
SHOWN_IDS = 10

#: What joins a document id to a chunk number in chunk ids commonly seen (``doc7#3``, ``doc7_3``, ``doc7-3``,
#: ``doc7:3``, ``doc7/3``, ``doc7.3``).
_CHUNK_SEPARATORS = "#_-:/."


@dataclass(frozen=True)
class InputWarning:
    """Something odd in a team's files that the audit went on with, said once.

    Attributes
    ----------
    kind : str
        ``extra-fields``, ``rank-order``, ``unknown-queries``, ``unanswered``, ``unjudged-chunks``, ``id-spelling``, ``repeated-judgments``, ``rr-ties`` or
        ``rejected-query`` (module docstring).
    subject : str
        What it is about: ``run NAME`` or a file name (never a full path).
    message : str
        One line for people, naming the subject, the counts and up to :data:`SHOWN_IDS` examples.
    ids : tuple of str
        Every query id concerned, file order (``unjudged-chunks``: the first :data:`SHOWN_IDS` chunk ids
        returned).
    """

    kind: str
    subject: str
    message: str
    ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        """``kind``, ``subject``, ``message``, ``ids`` (a list)."""
        return {"kind": self.kind, "subject": self.subject, "message": self.message, "ids": list(self.ids)}


def _examples(ids: Sequence[str], n: int = SHOWN_IDS) -> str:
    shown = ", ".join(ids[:n])
    return shown + (f" … (+{len(ids) - n})" if len(ids) > n else "")


def _name(path) -> str:
    return Path(str(path)).name


def rank_order_warning(run_name: str, path, score_kind: str, scores: Mapping[str, Mapping[str, float]],
                       ranks: Mapping[str, Mapping[str, int]]) -> InputWarning | None:
    """The ``rank-order`` warning of one run, or None when its ``rank`` column agrees with its scores.

    Parameters
    ----------
    run_name : str
    path : the run's file (its name is shown)
    score_kind : str
        One of :data:`~audit.runset.FILE_SCORE_KINDS`.
    scores, ranks : mapping query id → mapping chunk id → score (run's units) / rank (the file's column)

    A query *contradicts* when, in the file's rank order (lines of the same rank taken best score
    first), a chunk has a strictly better score than one ranked above it, scores compared in their
    canonical form (:func:`audit.scores.canonical_scores`, ``run file``: trec_eval's float32); ties
    never contradict (trec_eval breaks them by chunk id, whatever the ranks say). *Reversed*: every
    contradicting query's ranks follow its scores in the other direction (non-decreasing): then the
    message names the opposite ``--score``.
    """
    from ...scores import canonical_scores

    sign = _kind(score_kind).sign
    contradicting, reversed_all = [], True
    for q, raw in scores.items():
        r = ranks[q]
        s = dict(zip(raw, canonical_scores(list(raw.values()), "run file").tolist()))
        keys = [sign * s[c] for c in sorted(s, key=lambda c: (r[c], -sign * s[c]))]
        if any(a < b for a, b in zip(keys, keys[1:])):
            contradicting.append(q)
            reversed_all = reversed_all and all(a <= b for a, b in zip(keys, keys[1:]))
    if not contradicting:
        return None
    return rank_order_message(run_name, path, score_kind, len(scores), contradicting, reversed_all)


def rank_order_message(run_name: str, path, score_kind: str, n_queries: int, contradicting: Sequence[str],
                       reversed_all: bool) -> InputWarning:
    """The ``rank-order`` warning of :func:`rank_order_warning` from what it found (a columnar reader finds it
    with arrays): ``contradicting`` query ids in file order, of ``n_queries``; ``reversed_all``: each of them
    has its ranks follow its scores the other way."""
    sign = _kind(score_kind).sign
    better = "higher" if sign > 0 else "lower"
    msg = (f"run {run_name!r} ({_name(path)}): on {len(contradicting)} of {n_queries} queries the rank column "
           f"contradicts the score order ({_examples(contradicting)}); the order evaluated is the score order, "
           f"{better} first ({score_kind}), as trec_eval's")
    if reversed_all:
        other = "cosine-distance" if sign > 0 else "similarity"
        what = "distances (lower is better)" if sign > 0 else "similarities (higher is better)"
        msg += (f". On all of them the ranks follow the scores the other way: if the scores are {what}, give "
                f"--score {run_name}={other}" + (" (or l2)" if sign > 0 else " (or ip)"))
    return InputWarning("rank-order", f"run {run_name}", msg, tuple(contradicting))


def drop_textless(qrels: Qrels, queries: Mapping[str, str], queries_file: str = "the queries file"):
    """Judged queries without a text, left out: ``(kept Qrels, list of Rejected)``.

    Parameters
    ----------
    qrels : Qrels
    queries : mapping query id → text
    queries_file : str
        Its name, for the reason.

    Returns
    -------
    Qrels
        The same judgments without the queries ``queries`` has no (non-blank) text for; same
        ``source`` and ``note``.
    list of Rejected
        One per dropped query (``line`` 0), reason ``judged in <qrels>, but <queries_file> has no text
        for it``.

    Raises
    ------
    ValueError
        No judged query has a text: the message gives examples of both sides' ids.
    """
    from ...groundtruth import Rejected

    qrels_name = _name(qrels.source) if qrels.source else "the judgments"
    ids = qrels.query_ids
    blank = {q for q, text in queries.items() if not (text or "").strip()}
    if not blank and queries.keys() >= set(ids):  # every judged query has a text: set operations in C
        return qrels, []
    missing = [q for q in ids if q not in queries or q in blank]
    if not missing:
        return qrels, []
    gone = set(missing)
    kept = {q: js for q, js in qrels.judgments.items() if q not in gone}
    if not kept:
        raise ValueError(f"none of the {len(missing)} queries judged in {qrels_name} has a text in {queries_file}: "
                         f"judged ids {_examples(list(qrels.query_ids), 5)}; query ids "
                         f"{_examples(list(queries), 5) or 'none'} (do the two files name queries the same way?)")
    rejected = [Rejected(q, f"judged in {qrels_name}, but {queries_file} has no text for it: left out", 0)
                for q in missing]
    return replace(qrels, judgments=kept, complete=qrels.complete), rejected


def _document_level(returned: Sequence[str], judged: set[str]) -> bool:
    """Every returned chunk id is a judged id followed by a separator and more (``doc7#3`` for ``doc7``)."""
    if not returned or not judged:
        return False
    for c in returned:
        if not any(c[:i] in judged for i, ch in enumerate(c) if ch in _CHUNK_SEPARATORS and i):
            return False
    return True


def run_warnings(run: Run, qrels: Qrels, queries: Mapping[str, str]) -> list[InputWarning]:
    """The cross-file warnings of one run: ``unknown-queries``, ``unanswered``, ``unjudged-chunks``.

    Parameters
    ----------
    run : Run
    qrels : Qrels
        The judgments evaluated (after :func:`drop_textless`).
    queries : mapping query id → text
        The queries file.

    Returns
    -------
    list of InputWarning
        In that order; empty when the run's ids meet the judgments'.
    """
    out = []
    judged = set(qrels.query_ids)
    subject = f"run {run.name}"
    where = f"run {run.name!r}" + (f" ({_name(run.source)})" if run.source else "")
    unknown = [q for q in run.rankings if q not in judged and q not in queries]
    if unknown:
        out.append(InputWarning(
            "unknown-queries", subject,
            f"{where}: {len(unknown)} of {len(run.rankings)} query ids match no query of the queries file nor of "
            f"the judgments ({_examples(unknown)}); not counted. Judged ids look like "
            f"{_examples(list(qrels.query_ids), 3)}", tuple(unknown)))
    ranked = answered_ids(run.rankings)
    unanswered = [q for q in qrels.query_ids if q not in ranked]
    if unanswered:
        out.append(InputWarning(
            "unanswered", subject,
            f"{where}: {len(unanswered)} of {len(judged)} judged queries have no ranking in the run "
            f"({_examples(unanswered)}); each counts as a miss, 0 on every measure (as trec_eval -c)",
            tuple(unanswered)))
    w = unjudged_warning(run, qrels)
    if w is not None:
        out.append(w)
    return out


def unjudged_warning(run: Run, qrels: Qrels) -> InputWarning | None:
    """``unjudged-chunks``: none of the chunk ids ``run`` returns for the judged queries it answers is judged for
    that query (every measure is 0), or None. Every source's runs get it (a run file, a store, an endpoint)."""
    where = f"run {run.name!r}" + (f" ({_name(run.source)})" if run.source else "")
    ranked = answered_ids(run.rankings)
    answered = [q for q in qrels.query_ids if q in ranked]
    # the distinct returned ids are listed only when no judged one is returned (a large run finds one at once)
    if not answered or any(c in qrels.judgments[q] for q in answered for c in run.rankings[q].ids):
        return None
    returned = list(dict.fromkeys(c for q in answered for c in run.rankings[q].ids))
    if not returned:
        return None
    all_judged = {c for js in qrels.judgments.values() for c in js}
    msg = (f"{where}: none of the {len(returned)} chunk ids it returns for the {len(answered)} judged queries it "
           f"answers is judged for that query ({_examples(returned, 3)}; the judgments name ids like "
           f"{_examples(sorted(all_judged), 3)}): every measure is 0")
    if _document_level(returned, all_judged):
        msg += (". Every returned id starts with a judged id: the judgments look document-level; judge the "
                "chunks, or give --chunks with doc_id and needles (--ground-truth) instead")
    return InputWarning("unjudged-chunks", f"run {run.name}", msg, tuple(returned[:SHOWN_IDS]))


_UUID = re.compile(r"(?i)^(?:urn:uuid:)?\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?$")


def uuid_key(chunk_id: str) -> str | None:
    """The UUID ``chunk_id`` spells, as 32 lower-case hex digits, or None when it is no UUID.

    One UUID has several spellings (RFC 9562 §4: 8-4-4-4-12 hyphenated; 32 hex digits as Qdrant and Milvus
    accept them; upper case; ``{…}``; ``urn:uuid:…``): a service may answer in another spelling than the one its
    points were written with. Used for matching only: every id is printed as given.
    """
    m = _UUID.match(chunk_id.strip()) if isinstance(chunk_id, str) else None
    return "".join(m.groups()).lower() if m else None


def rr_ties_warning(run: Run, qrels: Qrels) -> InputWarning | None:
    """``rr-ties``: the queries of ``run`` whose ``RR@k`` differs from ir_measures' because of a score tie around
    the first relevant chunk (:func:`audit.evaluation.measures.rr_tie_differences`), or None."""
    from ...evaluation.measures import rr_tie_differences

    qs = rr_tie_differences(run.rankings, qrels)
    if not qs:
        return None
    where = f"run {run.name!r}" + (f" ({_name(run.source)})" if run.source else "")
    return InputWarning("rr-ties", f"run {run.name}",
                        f"{where}: RR@k may differ from ir_measures' on {plural(len(qs), 'query')} ({_examples(list(qs))}): "
                        "the first relevant chunk ties in score with one that is not relevant, and ties are ordered "
                        "by chunk id descending here (trec_eval's order, every measure) but ascending by "
                        "ir_measures' RR@k (by the scores' last bits when they differ there); the other measures "
                        "agree", qs)


def repeats_warning(qrels: Qrels) -> InputWarning | None:
    """``repeated-judgments``: the judgments file repeats some judgments with the same grade (read once, as
    ir_measures and trec_eval read them), or None. The ids are the queries concerned."""
    if not qrels.repeated:
        return None
    name = _name(qrels.source) if qrels.source else "the judgments"
    shown = ", ".join(f"line {a} repeats line {b}" for a, b in qrels.repeated[:3])
    return InputWarning("repeated-judgments", name,
                        f"{name}: {len(qrels.repeated)} judgments repeated with the same grade ({shown}"
                        f"{', …' if len(qrels.repeated) > 3 else ''}); each is counted once, as ir_measures and "
                        "trec_eval read them", ())


def respell_judgments(qrels: Qrels, runs: Sequence[Run]) -> tuple[Qrels, InputWarning | None]:
    """The judgments with each judged UUID spelt as the runs return it, when they spell it otherwise; a warning.

    A judged id that some run returns verbatim is kept. One that no run returns verbatim but that some run
    returns in another spelling of the same UUID (:func:`uuid_key`) is keyed by the first such spelling (runs
    in order, then ranking order), so the measures match it; the runs' ids stay as the service gave them.

    Returns
    -------
    (Qrels, InputWarning or None)
        The judgments (the same object when nothing is respelt) and an ``id-spelling`` warning naming how many
        judged ids were matched in another spelling, with examples (``judged → returned``).
    """
    verbatim = set().union(*(returned_id_set(r.rankings) for r in runs))  # from the codes: no order needed here
    judged = qrels.judgments.judged_ids() if isinstance(qrels.judgments, ColumnarJudgments) else \
        dict.fromkeys(c for js in qrels.judgments.values() for c in js)  # first appearance, each once
    unmatched = [c for c in judged if c not in verbatim]
    keys = {c: k for c in unmatched if (k := uuid_key(c)) is not None}
    returned: dict[str, str] = {}
    if keys:  # only then is a returned id's spelling looked at, in order of first appearance
        for run_ids in (returned_ids(r.rankings) for r in runs):
            for c in run_ids:
                k = uuid_key(c)
                if k is not None:
                    returned.setdefault(k, c)
    pairs = {c: returned[k] for c, k in keys.items() if k in returned}
    if not pairs:
        return qrels, None
    judgments = {q: {pairs.get(c, c): g for c, g in js.items()} for q, js in qrels.judgments.items()}
    shown = ", ".join(f"{a!r} → {b!r}" for a, b in list(pairs.items())[:3])
    name = _name(qrels.source) if qrels.source else "the judgments"
    w = InputWarning("id-spelling", name,
                     f"{name}: {len(pairs)} judged ids are UUIDs the answers spell otherwise ({shown}); matched as the "
                     "same ids (ids are shown as each source gives them)", tuple(list(pairs)[:SHOWN_IDS]))
    return replace(qrels, judgments=judgments), w


def ood_run_warnings(run: Run, ood_queries: Mapping[str, str]) -> list[InputWarning]:
    """The cross-file warnings of one out-of-domain run: ``unknown-queries`` (ids not in the out-of-domain
    queries file, ignored) and ``unanswered`` (out-of-domain queries without a ranking: each counts as
    refused by every cut, which flatters the gate)."""
    out = []
    subject = f"out-of-domain run {run.name}"
    where = f"out-of-domain run {run.name!r}" + (f" ({_name(run.source)})" if run.source else "")
    unknown = [q for q in run.rankings if q not in ood_queries]
    if unknown:
        out.append(InputWarning(
            "unknown-queries", subject,
            f"{where}: {len(unknown)} of {len(run.rankings)} query ids match no out-of-domain query "
            f"({_examples(unknown)}); ignored. The out-of-domain queries' ids look like "
            f"{_examples(list(ood_queries), 3)}", tuple(unknown)))
    unanswered = [q for q in ood_queries if q not in run.rankings]
    if unanswered:
        out.append(InputWarning(
            "unanswered", subject,
            f"{where}: {len(unanswered)} of {len(ood_queries)} out-of-domain queries have no ranking in the run "
            f"({_examples(unanswered)}); each counts as refused at every cut (never a bluff)", tuple(unanswered)))
    return out


def rejected_warning(rejected: Sequence, qrels_name: str) -> InputWarning | None:
    """One ``rejected-query`` warning summing up the judged queries left out (None when there is none)."""
    if not rejected:
        return None
    ids = tuple(r.id for r in rejected)
    return InputWarning("rejected-query", qrels_name,
                        f"{qrels_name}: {len(ids)} judged queries have no text in the queries file and are left out "
                        f"({_examples(list(ids))}); the rest is evaluated", ids)


def system_warnings(runs: Sequence[Run], qrels: Qrels, queries: Mapping[str, str], rejected: Sequence = (),
                    ood_runs: Mapping[str, Run] | None = None,
                    ood_queries: Mapping[str, str] | None = None) -> list[InputWarning]:
    """Every warning of a team's system, in the order shown: rejected judged queries, then per run its
    reader's warnings and :func:`run_warnings`, then per out-of-domain run its reader's warnings and
    :func:`ood_run_warnings`."""
    out: list[InputWarning] = []
    w = rejected_warning(rejected, _name(qrels.source) if qrels.source else "the judgments")
    if w is not None:
        out.append(w)
    for r in runs:
        out += [*r.warnings, *run_warnings(r, qrels, queries)]
    for r in (ood_runs or {}).values():
        out += [*r.warnings, *ood_run_warnings(r, ood_queries or {})]
    return out
