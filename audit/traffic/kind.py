"""Which score kind a traffic file's scores are: what the file says, else the labelled run's (issue 54 item 9).

A query log line may name it (``"score_kind": "cosine-distance"``), an OTLP export as an attribute of the resource,
the scope or a span (``retrieval.score_kind``). :func:`declared_score_kind` reads the first line of each file;
:func:`traffic_score_kind` applies the rule: the file's declaration, else the run set's score kind (the run the
traffic belongs to), else similarity, and says which was used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ..scores import FILE_SCORE_KINDS

__all__ = ["KIND_KEYS", "declared_score_kind", "traffic_score_kind"]

#: The keys (query log) and attribute keys (OTLP) that name the scores' kind.
KIND_KEYS = ("score_kind", "retrieval.score_kind")
_DEFAULT = FILE_SCORE_KINDS[0]


def _attributes(obj, out: list) -> None:
    """Every value of an OTLP attribute whose key is one of :data:`KIND_KEYS`, anywhere in ``obj``."""
    if isinstance(obj, dict):
        if obj.get("key") in KIND_KEYS and isinstance(obj.get("value"), dict):
            v = obj["value"].get("stringValue", obj["value"].get("string_value"))
            if isinstance(v, str):
                out.append(v)
        for k, v in obj.items():
            if k in KIND_KEYS and isinstance(v, str):
                out.append(v)
            elif isinstance(v, (dict, list)):
                _attributes(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _attributes(v, out)


def declared_score_kind(paths: Sequence[str | Path]) -> str | None:
    """The score kind the traffic files declare on their first line (None when none does, or they disagree).

    Parameters
    ----------
    paths : sequence of path
        Traffic files or folders (:func:`audit.traffic.read.traffic_files`); a file that cannot be read is
        skipped (the reader reports it).

    Returns
    -------
    str or None
        One of :data:`audit.scores.FILE_SCORE_KINDS`.
    """
    from .read import open_traffic, traffic_files

    found: set[str] = set()
    try:
        files = traffic_files(paths)
    except (OSError, ValueError):
        return None
    for f in files:
        try:
            with open_traffic(f) as fh:
                line = b""
                while not line.strip():
                    line = fh.readline()
                    if not line:
                        break
            obj = json.loads(line) if line.strip() else None
        except (OSError, ValueError, EOFError):
            continue
        seen: list = []
        _attributes(obj, seen)
        found.update(k for k in seen if k in FILE_SCORE_KINDS)
    return found.pop() if len(found) == 1 else None


def traffic_score_kind(paths: Sequence[str | Path], run_kind: str | None = None,
                       run_name: str | None = None) -> tuple[str, str]:
    """The score kind to read the traffic with, and which rule chose it, in words.

    Parameters
    ----------
    paths : sequence of path
        The traffic files.
    run_kind : str, optional
        The score kind of the run the traffic is set beside (the run set's); used when the files declare none and
        it is a kind a traffic file can hold (:data:`audit.scores.FILE_SCORE_KINDS`).
    run_name : str, optional
        That run's name, for the sentence.

    Returns
    -------
    tuple of str
        ``(kind, why)``: ``why`` is "as the file says", "the score kind of run NAME" or "the default: no file or run
        names one".
    """
    declared = declared_score_kind(paths)
    if declared is not None:
        return declared, "as the file says"
    if run_kind in FILE_SCORE_KINDS:
        return run_kind, f"the score kind of run {run_name}" if run_name else "the run set's score kind"
    return _DEFAULT, "the default: no file or run names one"
