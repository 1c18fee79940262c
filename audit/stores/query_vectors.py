"""Query vectors brought by the team, for a table embedded with a hosted model the audit cannot run.

Two formats:

- **JSONL**: one object a line, ``{"id": "q1", "vector": [0.12, -0.03, …]}`` (``id`` a string or an
  integer, read as its decimal string; other keys ignored). Blank lines are skipped; lines split on
  ``"\\n"`` only (the shared reader of :mod:`audit.sources.imported.readers`).
- **NumPy**: an ``.npy`` file of shape ``(n_queries, dims)`` (float16/32/64) with an ids file beside
  it, one query id a line, row ``i`` of the array is line ``i`` of the ids file (blank lines are not
  allowed there: they would shift the rows).

The ids are the query ids of the ground truth (``<needle id>/doc``, ``<needle id>/ticket``, or a needle
id alone for both questions) or of a queries file. Every problem raises
:class:`~audit.sources.imported.readers.InputFileError` naming the file and the line (JSONL, ids
file) or the row (``.npy``, 0-based as numpy counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..jsontext import InputFileError, json_records, lines, read_text
from ..sources.imported.readers import _json_id

__all__ = ["QueryVectors", "read_query_vectors"]


@dataclass(frozen=True)
class QueryVectors:
    """Query id → vector, as read from a file.

    Attributes
    ----------
    vectors : dict of str to numpy.ndarray
        Each of shape ``(dims,)``, float32, file order.
    dims : int
    source : str
        The file name (no folder), for provenance.
    where : dict of str to str
        Query id → ``"line N"`` / ``"row N"`` (for messages).
    """

    vectors: dict
    dims: int
    source: str
    where: dict

    def __len__(self) -> int:
        return len(self.vectors)

    @property
    def model_name(self) -> str:
        """What a health check calls the model behind these vectors (it is not known here, only its dims)."""
        return f"behind the query vectors {self.source}"

    def check_dims(self, dims: int | None, what: str) -> None:
        """Raise :class:`InputFileError` when the vectors' dimension is not ``dims`` (the table's)."""
        if dims is not None and dims != self.dims:
            first = next(iter(self.where.values()))
            raise InputFileError(self.source, 0, f"the query vectors have {self.dims} dimensions ({first} and "
                                                 f"every other), {what} has {dims}: they must come from the "
                                                 "model that embedded the table")

    def for_ids(self, ids: Sequence[str], aliases: Mapping[str, str] | None = None) -> np.ndarray:
        """The vectors of ``ids`` stacked, shape ``(len(ids), dims)``, float32.

        ``aliases`` maps a query id to a second id tried when the first is absent (a needle id for
        ``<needle id>/doc``).

        Raises
        ------
        InputFileError
            Ids without a vector (the first few named), so the audit never runs on part of the questions
            silently.
        """
        aliases = aliases or {}
        out, missing = [], []
        for q in ids:
            v = self.vectors.get(q)
            if v is None and q in aliases:
                v = self.vectors.get(aliases[q])
            if v is None:
                missing.append(q)
            else:
                out.append(v)
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                                                else "")
            raise InputFileError(self.source, 0, f"no vector for {len(missing)} of {len(ids)} questions: {shown}")
        return np.stack(out).astype(np.float32) if out else np.zeros((0, self.dims), np.float32)


def _jsonl(path: Path) -> QueryVectors:
    vectors: dict[str, np.ndarray] = {}
    where: dict[str, str] = {}
    dims = None
    for no, obj in json_records(path, "query vectors file"):
        qid = _json_id(path, no, obj, "id")
        raw = obj.get("vector")
        if not isinstance(raw, list) or not raw or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw):
            raise InputFileError(path, no, f"'vector' of {qid!r} must be a non-empty list of numbers")
        if any(isinstance(x, float) and not math.isfinite(x) for x in raw):
            i = next(i for i, x in enumerate(raw) if isinstance(x, float) and not math.isfinite(x))
            raise InputFileError(path, no, f"the vector of {qid!r} holds {raw[i]!r} at position {i} "
                                           "(NaN and ±Inf have no distance)")
        v = np.asarray(raw, dtype=np.float64)
        if dims is not None and v.size != dims:
            raise InputFileError(path, no, f"the vector of {qid!r} has {v.size} dimensions, the first "
                                           f"({next(iter(where.values()))}) has {dims}")
        with np.errstate(over="ignore"):
            v32 = v.astype(np.float32)
        if not np.isfinite(v32).all():
            i = int(np.flatnonzero(~np.isfinite(v32))[0])
            raise InputFileError(path, no, f"the vector of {qid!r} holds {raw[i]!r} at position {i}, beyond float32")
        if qid in vectors:
            raise InputFileError(path, no, f"duplicate id {qid!r} (first on {where[qid]})")
        dims = v.size
        vectors[qid], where[qid] = v32, f"line {no}"
    if not vectors:
        raise InputFileError(path, 0, "no query vector")
    return QueryVectors(vectors, int(dims), path.name, where)


def _npy(path: Path, ids_path: Path | None) -> QueryVectors:
    if ids_path is None:
        raise InputFileError(path, 0, "an .npy file of query vectors needs its ids file (one query id a line, "
                                      "row i = line i): --query-ids FILE")
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputFileError(path, 0, "query vectors file not found") from None
    except (ValueError, OSError) as e:
        raise InputFileError(path, 0, f"not a NumPy .npy array ({str(e).splitlines()[0]})") from None
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputFileError(path, 0, f"expected an array of shape (n_queries, dims), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating) and not np.issubdtype(arr.dtype, np.integer):
        raise InputFileError(path, 0, f"expected numbers, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):
        a32 = arr.astype(np.float32)
    bad = np.argwhere(~np.isfinite(a32))
    if bad.size:
        r, c = (int(x) for x in bad[0])
        raise InputFileError(path, 0, f"row {r} holds {float(arr[r, c])!r} at position {c} (NaN and ±Inf have no distance"
                                      + (", or beyond float32" if np.isfinite(float(arr[r, c])) else "") + ")")
    # Every line counts here (a blank line would shift the rows): read with the shared line rules, keep blanks.
    ids: list[str] = []
    first: dict[str, int] = {}
    records = lines(read_text(ids_path, "query ids file"))
    if records and records[-1] == "":
        records.pop()
    for no, line in enumerate(records, start=1):
        qid = line.strip()
        if not qid:
            raise InputFileError(ids_path, no, "empty query id (row i of the array is line i: no blank lines)")
        if qid in first:
            raise InputFileError(ids_path, no, f"duplicate id {qid!r} (first on line {first[qid]})")
        first[qid] = no
        ids.append(qid)
    if len(ids) != arr.shape[0]:
        raise InputFileError(ids_path, 0, f"{len(ids)} ids for the {arr.shape[0]} rows of {path.name}")
    return QueryVectors({q: a32[i] for i, q in enumerate(ids)}, int(arr.shape[1]), path.name,
                        {q: f"row {i}" for i, q in enumerate(ids)})


def read_query_vectors(path: str | Path, ids: str | Path | None = None) -> QueryVectors:
    """Read query vectors (see the module docstring for the two formats).

    Parameters
    ----------
    path : path
        ``.npy`` (with ``ids``) or JSONL (any other name).
    ids : path, optional
        The ids file of an ``.npy`` array (one id a line).

    Returns
    -------
    QueryVectors

    Raises
    ------
    InputFileError
        Missing or unreadable file, bad JSON, a missing id or vector, vectors of different
        dimensions, NaN/±Inf or a value beyond float32, a duplicate id, ids and rows not the same
        count, no vector at all; the message names the file and the line or row.
    """
    p = Path(path)
    if p.suffix.lower() == ".npy":
        return _npy(p, Path(ids) if ids is not None else None)
    if ids is not None:
        raise InputFileError(ids, 0, "an ids file goes with an .npy array only (JSONL lines carry their own id)")
    return _jsonl(p)
