"""Judgments in and out: TREC qrels, the judgments JSONL, a Label Studio JSON export.

- **TREC qrels** (``q1 0 c7 2``): read by :func:`audit.qrels.read_qrels` (BEIR's TSV too), written by
  :func:`write_trec_qrels` (the space's labels; query order, then chunk id).
- **Judgments JSONL**: one object a line, ``{"query_id": "q1", "chunk_id": "c7", "grade": 2}`` with an
  optional ``"space"`` (a built-in strategy; "" for a team's chunks) — the ground-truth file of a
  judgment set, lossless (every space, every grade).
- **Label Studio JSON export** (:func:`read_label_studio`): the list of tasks Label Studio's *Export → JSON*
  writes. Each task's ``data`` holds ``query_id`` (or ``question_id``) and ``chunk_id``; each annotation's
  ``result`` holds one ``choices`` result whose one choice names the grade: a digit (``"0"``–``"3"``) or
  TREC DL's names (``Irrelevant`` 0, ``Related`` 1, ``Highly relevant`` 2, ``Perfectly relevant`` 3,
  case-insensitive). Each annotation is one reviewer's label (``completed_by``: the annotator's id or
  e-mail); a cancelled annotation (``was_cancelled``) is skipped and counted. The labelling configuration
  that produces it is in docs/judging.md.

Every problem raises :class:`~audit.jsontext.InputFileError` with ``FILE:LINE: reason`` (a Label Studio task is
named by its position and id, line 0: a JSON export has no useful lines).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..jsontext import InputFileError, json_records, read_text
from .labels import Judgments
from .store import ReviewerLabel

__all__ = ["GRADE_NAMES", "read_judgments_jsonl", "read_label_studio", "write_judgments_jsonl", "write_trec_qrels"]

#: Label Studio choice names → grade (TREC DL's four-point scale; digits are read as themselves).
GRADE_NAMES = {"irrelevant": 0, "not relevant": 0, "related": 1, "highly relevant": 2, "perfectly relevant": 3,
               "relevant": 1}


def write_trec_qrels(judgments: Judgments, path: str | Path, space: str = "") -> int:
    """Write one space's labels as TREC qrels; returns the lines written.

    TREC qrels are fields split on whitespace, so an id holding whitespace (or nothing) cannot be written in a
    form that reads back as itself: it is refused, named, before the file is opened (the judgments JSONL holds
    any id).

    Raises
    ------
    ValueError
        A query or chunk id that is empty or holds whitespace (the first one, in the order written).
    """
    rows = [(q, c, g) for s, q, c, g in judgments.rows() if s == space]
    for q, c, _g in rows:
        for what, x in (("query id", q), ("chunk id", c)):
            if not x or any(ch.isspace() for ch in x):
                raise ValueError(f"{what} {x!r} (query {q!r}) holds whitespace or is empty: TREC qrels split "
                                 "fields on whitespace, so it would not read back; export --format jsonl "
                                 "keeps any id")
    order = {q: i for i, (s, q) in enumerate(judgments.queries) if s == space}
    rows.sort(key=lambda r: (order.get(r[0], len(order)), r[1]))
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for q, c, g in rows:
            fh.write(f"{q} 0 {c} {g}\n")
    return len(rows)


def write_judgments_jsonl(judgments: Judgments, path: str | Path) -> int:
    """Write every label as the judgments JSONL; returns the lines written."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for s, q, c, g in judgments.rows():
            fh.write(json.dumps({"space": s, "query_id": q, "chunk_id": c, "grade": g}, ensure_ascii=False) + "\n")
    return len(judgments)


def read_judgments_jsonl(path: str | Path) -> Judgments:
    """Read the judgments JSONL.

    Raises
    ------
    InputFileError
        Invalid JSON, a missing ``query_id``/``chunk_id``, a grade that is not an integer, a label given twice.
    """
    rows, seen = [], {}
    for no, obj in json_records(path, "judgments JSONL"):
        for key in ("query_id", "chunk_id"):
            if not isinstance(obj.get(key), (str, int)) or isinstance(obj.get(key), bool) or str(obj[key]) == "":
                raise InputFileError(path, no, f"{key!r} must be a non-empty string")
        g = obj.get("grade")
        if isinstance(g, bool) or not isinstance(g, int):
            raise InputFileError(path, no, f"'grade' must be an integer, got {g!r}")
        key = (str(obj.get("space", "")), str(obj["query_id"]), str(obj["chunk_id"]))
        if key in seen:
            raise InputFileError(path, no, f"chunk {key[2]!r} judged twice for query {key[1]!r} (first on line "
                                           f"{seen[key]})")
        seen[key] = no
        rows.append((*key, g))
    if not rows:
        raise InputFileError(path, 0, "no judgment line")
    return Judgments.of(rows)


def _grade(path, where: str, choice) -> int:
    s = str(choice).strip()
    if s.lstrip("-").isdigit():
        return int(s)
    g = GRADE_NAMES.get(s.lower())
    if g is None:
        raise InputFileError(path, 0, f"{where}: choice {choice!r} names no grade (use 0-3 or "
                                      f"{', '.join(n.capitalize() for n in GRADE_NAMES)})")
    return g


def read_label_studio(path: str | Path, queue: str = "label-studio", space: str = "") -> tuple[list[ReviewerLabel], int]:
    """The reviewers' labels of a Label Studio JSON export, and how many cancelled annotations were skipped.

    Raises
    ------
    InputFileError
        Not JSON, not a list of tasks, a task without ``query_id``/``chunk_id`` in its ``data``, an annotation
        without exactly one choice, a choice that names no grade.
    """
    try:
        tasks = json.loads(read_text(path, "Label Studio export"))
    except json.JSONDecodeError as e:
        raise InputFileError(path, e.lineno, f"not JSON ({e.msg})") from None
    if not isinstance(tasks, list):
        raise InputFileError(path, 0, "a Label Studio JSON export is a list of tasks (Export → JSON)")
    labels, cancelled = [], 0
    for i, t in enumerate(tasks, start=1):
        where = f"task {i}" + (f" (id {t.get('id')})" if isinstance(t, dict) and "id" in t else "")
        data = t.get("data") if isinstance(t, dict) else None
        if not isinstance(data, dict):
            raise InputFileError(path, 0, f"{where}: no 'data' object")
        qid = data.get("query_id", data.get("question_id"))
        cid = data.get("chunk_id")
        if qid in (None, "") or cid in (None, ""):
            raise InputFileError(path, 0, f"{where}: 'data' must hold 'query_id' and 'chunk_id' (see the labelling "
                                          "configuration in docs/judging.md)")
        for j, ann in enumerate(t.get("annotations") or (), start=1):
            if ann.get("was_cancelled"):
                cancelled += 1
                continue
            choices = [c for r in ann.get("result") or () if r.get("type") == "choices"
                       for c in (r.get("value") or {}).get("choices") or ()]
            if len(choices) != 1:
                raise InputFileError(path, 0, f"{where}, annotation {j}: expected one grade choice, got "
                                              f"{len(choices)}")
            who = ann.get("completed_by")
            who = who.get("email") or who.get("id") if isinstance(who, dict) else who
            labels.append(ReviewerLabel(queue, str(who if who not in (None, "") else f"annotator-{j}"), space,
                                        str(qid), str(cid), _grade(path, f"{where}, annotation {j}", choices[0])))
    if not labels:
        raise InputFileError(path, 0, f"no annotation in {len(tasks)} tasks ({cancelled} cancelled)")
    return labels, cancelled
