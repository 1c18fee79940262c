"""A run's stored rankings as columns: what a format-3 or 4 record holds instead of one JSON object per query.

:class:`RecordRankings` is the mapping query id → the stored ranking (:func:`audit.history.record._ranking_json`'s
dict) held as arrays: one row per stored position (its rank, chunk id as a code into one list of distinct ids, score
and cosine distance), query after query, and one value per query (length, gate value, first relevant rank and its
gate value). What a large team's run almost never has (judged chunks past its stored depth, nearest distances, a
cut depth) is kept per query only where present. A query's dict is made when it is looked up, never kept, so a
record read back costs the arrays, and :func:`rankings_of_columns` builds them for a
:class:`~audit.runset.ColumnarRankings` run without a dict per query (issue 58): the relevant lines found by
comparing each query's lines with its few relevant chunk codes, the judgment arrays matched to the run's ids by hash
(:func:`relevant_keys`), only the chunk ids and scores of stored rows kept, integers in narrow types.

:func:`pack` and :func:`unpack` turn it into named numpy arrays and a small JSON part, the form the history store
writes (:mod:`audit.history.store`; format 4: :func:`narrow` integers, counts instead of offsets, scores as codes into
their distinct values when the record holds them so); :func:`unpack` reads format 3's arrays too.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from ..runset import ByQuery

__all__ = ["RecordJudgments", "RecordRankings", "pack", "pack_judgments", "rankings_of_columns", "relevant_keys",
           "unpack", "unpack_judgments"]

#: The keys of one stored ranking, in the order :func:`audit.history.record._ranking_json` writes them.
KEYS = ("ids", "scores", "distances", "more", "length", "beyond", "nearest", "nearest_relevant", "depth", "gate",
        "answer")
#: Per-query fields kept only where they differ from these (a team's run file has none of them).
_SPARSE = {"beyond": [], "nearest": None, "nearest_relevant": None, "depth": None}
_ARRAYS = ("offsets", "top", "rank", "code", "score", "dist", "has_dist", "length", "gate", "answer_rank",
           "answer_value", "answer_none")


def _ints(a, dtype) -> np.ndarray:
    """``a`` as an integer array: its own integer type kept (a narrow one saves memory), else ``dtype``."""
    a = np.asarray(a)
    return a if a.dtype.kind in "iu" else a.astype(dtype)


def narrow(a) -> np.ndarray:
    """``a`` (integers) in the narrowest integer type that holds its values: what a column is written as."""
    a = np.asarray(a)
    if not len(a):
        return a.astype(np.uint8)
    lo, hi = int(a.min()), int(a.max())
    kinds = (np.uint8, np.uint16, np.uint32, np.uint64) if lo >= 0 else (np.int8, np.int16, np.int32, np.int64)
    t = next(np.dtype(k) for k in kinds if np.iinfo(k).min <= lo and hi <= np.iinfo(k).max)
    return a if a.dtype == t else a.astype(t)


class RecordRankings(ByQuery):
    """Stored rankings of many queries as arrays, read as the mapping query id → stored ranking dict.

    Parameters
    ----------
    query_ids : sequence of str, shape (n_queries,)
    ids : list, shape (n_ids,)
        The distinct chunk ids (JSON values: str or int) the codes index.
    offsets : int64 array, shape (n_queries + 1,)
        Query ``i``'s rows are ``offsets[i]:offsets[i + 1]``: its first ``top[i]`` positions, then the later ones
        kept (the dict's ``more``), rank order.
    top : int32 array, shape (n_queries,)
    rank, code : int arrays, shape (n_rows,)
        1-based rank and chunk-id code of each row (any integer type: a narrow one is kept).
    score : float64 array, or int array with ``score_values``, shape (n_rows,)
        The run's score of each row, or its code into ``score_values``.
    dist : float64 array, shape (n_rows,)
        The cosine distance (read only where ``has_dist``; may be empty when none has).
    has_dist : bool array, shape (n_queries,)
    length : int64 array, shape (n_queries,)
    gate : float64 array, shape (n_queries,)
    answer_rank : int64 array, shape (n_queries,)
        Rank of the first relevant chunk, 0 when none.
    answer_value : float64 array, shape (n_queries,)
        Its gate value (read unless ``answer_none``: past the stored ranking).
    answer_none : bool array, shape (n_queries,)
    sparse : dict
        Query index → the fields of ``beyond``, ``nearest``, ``nearest_relevant``, ``depth`` that are not empty.
    score_values : float64 array, optional
        The distinct scores ``score`` codes (a run file's scores repeat: a code is narrower than a float).
    """

    def __init__(self, query_ids, ids, offsets, top, rank, code, score, dist, has_dist, length, gate, answer_rank,
                 answer_value, answer_none, sparse: Mapping[int, Mapping] | None = None, score_values=None):
        self.query_ids = list(query_ids)
        self.ids = list(ids)
        self.offsets, self.top = np.asarray(offsets, dtype=np.int64), _ints(top, np.int32)
        self.rank, self.code = _ints(rank, np.int32), _ints(code, np.int32)
        self.score_values = None if score_values is None else np.asarray(score_values, dtype=np.float64)
        self.score_code = None if score_values is None else _ints(score, np.int64)
        self._score = np.asarray(score, dtype=np.float64) if score_values is None else None
        self.dist = np.asarray(dist, dtype=np.float64)
        self.has_dist = np.asarray(has_dist, dtype=bool)
        self.length, self.gate = _ints(length, np.int64), np.asarray(gate, dtype=np.float64)
        self.answer_rank = _ints(answer_rank, np.int64)
        self.answer_value = np.asarray(answer_value, dtype=np.float64)
        self.answer_none = np.asarray(answer_none, dtype=bool)
        self.sparse = {int(k): dict(v) for k, v in (sparse or {}).items()}

    @property
    def score(self) -> np.ndarray:
        """The score of each row (float64)."""
        return self._score if self._score is not None else self.score_values[self.score_code]

    def _scores(self, a: int, b: int) -> list:
        if self._score is not None:
            return self._score[a:b].tolist()
        return self.score_values[self.score_code[a:b]].tolist()

    def __getitem__(self, query_id) -> dict:
        i = self._index[query_id]
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        t = a + int(self.top[i])
        ids = self.ids
        hd = bool(self.has_dist[i])
        dists = self.dist[a:b].tolist() if hd else [None] * (b - a)
        scores = self._scores(a, b)
        more = [[r, ids[c], s, dv] for r, c, s, dv in zip(self.rank[t:b].tolist(), self.code[t:b].tolist(),
                                                          scores[t - a:], dists[t - a:])]
        sp = self.sparse.get(i, _SPARSE)
        answer = None
        if self.answer_rank[i] > 0:
            answer = [int(self.answer_rank[i]), None if self.answer_none[i] else float(self.answer_value[i])]
        return {"ids": [ids[c] for c in self.code[a:t].tolist()], "scores": scores[:t - a],
                "distances": dists[:t - a] if hd else None, "more": more, "length": int(self.length[i]),
                "beyond": [list(x) for x in sp.get("beyond", [])], "nearest": sp.get("nearest"),
                "nearest_relevant": sp.get("nearest_relevant"), "depth": sp.get("depth"),
                "gate": float(self.gate[i]), "answer": answer}

    def strings(self) -> list:
        """Every text it holds (query ids, chunk ids, the sparse fields), for a scan such as the secret scrub."""
        return [self.query_ids, self.ids, {str(k): v for k, v in self.sparse.items()}]

    @classmethod
    def from_dicts(cls, rankings: Mapping[str, Mapping]) -> "RecordRankings | None":
        """The columns of stored ranking dicts; None when one is not of the shape :data:`KEYS` describes (a record
        of an older format keeps its JSON form)."""
        if isinstance(rankings, RecordRankings):
            return rankings
        qids, ids, id_code = [], [], {}
        offsets, top, rank, code, score, dist = [0], [], [], [], [], []
        has_dist, length, gate, a_rank, a_val, a_none, sparse = [], [], [], [], [], [], {}
        try:
            for i, (q, js) in enumerate(rankings.items()):
                if tuple(js) != KEYS:
                    return None
                hd = js["distances"] is not None
                rows = [(r + 1, c, s, (js["distances"][r] if hd else None))
                        for r, (c, s) in enumerate(zip(js["ids"], js["scores"], strict=True))]
                if hd and len(js["distances"]) != len(rows):
                    return None
                rows += [tuple(m) for m in js["more"]]
                for r, c, s, dv in rows:
                    if (dv is not None) != hd:
                        return None
                    key = (type(c).__name__, c)
                    k = id_code.get(key)
                    if k is None:
                        k = id_code[key] = len(ids)
                        ids.append(c)
                    rank.append(int(r))
                    code.append(k)
                    score.append(float(s))
                    dist.append(float(dv) if hd else math.nan)
                qids.append(q)
                offsets.append(len(rank))
                top.append(len(js["ids"]))
                has_dist.append(hd)
                length.append(int(js["length"]))
                gate.append(float(js["gate"]))
                ans = js["answer"]
                a_rank.append(0 if ans is None else int(ans[0]))
                a_val.append(math.nan if ans is None or ans[1] is None else float(ans[1]))
                a_none.append(ans is not None and ans[1] is None)
                if ans is not None and int(ans[0]) <= 0:
                    return None
                extra = {k: js[k] for k, v in _SPARSE.items() if js[k] != v}
                if extra:
                    sparse[i] = extra
        except (TypeError, ValueError, KeyError, IndexError):
            return None
        return cls(qids, ids, offsets, top, rank, code, score, dist if any(has_dist) else [], has_dist, length, gate,
                   a_rank, a_val, a_none, sparse)


def pack(rr: RecordRankings) -> tuple[dict, dict[str, np.ndarray]]:
    """``(JSON part, named arrays)`` of ``rr`` as format 4 writes them (:func:`unpack` is the inverse): each query's
    number of rows (``counts``) instead of the offsets, integers in their narrowest type, the scores as codes into
    their distinct values when ``rr`` holds them so."""
    meta = {"query_ids": rr.query_ids, "ids": rr.ids, "sparse": {str(k): v for k, v in rr.sparse.items()}}
    arrays = {"counts": narrow(np.diff(rr.offsets)), "top": narrow(rr.top), "rank": narrow(rr.rank),
              "code": narrow(rr.code)}
    if rr.score_values is not None:
        arrays.update(score_code=narrow(rr.score_code), score_values=rr.score_values)
    else:
        arrays["score"] = rr.score
    arrays.update(dist=rr.dist, has_dist=rr.has_dist, length=narrow(rr.length), gate=rr.gate,
                  answer_rank=narrow(rr.answer_rank), answer_value=rr.answer_value, answer_none=rr.answer_none)
    return meta, arrays


def _offsets(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """A format-3 column's ``offsets``, or format 4's from its ``counts``."""
    if "offsets" in arrays:
        return arrays["offsets"]
    return np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(arrays["counts"], dtype=np.int64)])


def unpack(meta: Mapping, arrays: Mapping[str, np.ndarray]) -> RecordRankings:
    """The :class:`RecordRankings` :func:`pack` (or format 3's writer) gave ``meta`` and ``arrays`` for."""
    values = arrays.get("score_values")
    score = arrays["score"] if values is None else arrays["score_code"]
    return RecordRankings(meta["query_ids"], meta["ids"], _offsets(arrays), arrays["top"], arrays["rank"],
                          arrays["code"], score, *(arrays[n] for n in _ARRAYS[5:]),
                          {int(k): v for k, v in (meta.get("sparse") or {}).items()}, score_values=values)


def relevant_keys(rk, judgments, min_rel: int) -> np.ndarray | None:
    """``query index * n_ids + chunk code`` of every relevant judgment of a
    :class:`~audit.evaluation.judgments.ColumnarJudgments` in the run ``rk``'s own indexes, sorted and distinct: the
    keys :func:`rankings_of_columns` derives from (query id, chunk id) pairs, matched by hash in arrays instead of a
    dict of the run's ids (issue 58). None when the ids are not all ``str`` or the run's ids are not distinct (the
    pairs decide, with Python's equality)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids_r, ids_j = rk.chunk_ids, judgments.chunk_ids
    if not (set(map(type, ids_r.tolist())) <= {str} and set(map(type, ids_j.tolist())) <= {str}):
        return None
    run_ids = pa.array(ids_r.tolist(), pa.string())
    if len(run_ids) and pc.count_distinct(run_ids).as_py() != len(run_ids):
        return None
    n_ids = len(ids_r)
    run_code = pc.index_in(pa.array(ids_j.tolist(), pa.string()), value_set=run_ids).fill_null(-1)
    run_code = np.asarray(run_code.to_numpy(zero_copy_only=False), dtype=np.int64)
    index = rk._index
    row = np.array([index.get(q, -1) for q in judgments.query_ids], dtype=np.int64)
    ok = judgments.grades >= min_rel
    qi = np.repeat(np.arange(len(row), dtype=np.int64), np.diff(judgments.offsets))[ok]
    rows, codes = row[qi], run_code[np.asarray(judgments.chunk_codes)[ok]]
    keep = (rows >= 0) & (codes >= 0)
    return _distinct(rows[keep] * n_ids + codes[keep])


def _distinct(keys: np.ndarray) -> np.ndarray:
    """``np.unique(keys)`` (int64) by a sort: numpy 2's unique took ten times as long on 300k keys, measured."""
    keys = np.sort(np.asarray(keys, dtype=np.int64), kind="stable")  # mostly in order already: a run is fast
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys


#: Relevant chunks per query matched line by line with one comparison each (more: a binary search per line).
_PASSES = 8


def rankings_of_columns(rk, kind, relevant_pairs, ever_kept, depth: int, keep: int,
                        block: int = 1 << 12) -> RecordRankings:
    """The stored rankings of a :class:`~audit.runset.ColumnarRankings` run, every query at once.

    The same dicts as :func:`audit.history.record._ranking_json` query by query: its first ``depth`` positions,
    every later position the gate could ever keep (``ever_kept``, the scalar rule, decides for the queries whose
    gate values are not in ascending order; an ascending one keeps only its first ``keep``, all within ``depth``)
    and every later relevant chunk; the gate (the smallest gate value) and the first relevant rank.

    Parameters
    ----------
    rk : ColumnarRankings
        No distances, nothing past its lines (what a team's run file gives).
    kind : ScoreKind
        The run's (its ``to_gate`` is applied to the distinct scores, element by element).
    relevant_pairs : iterable of (str, chunk id), or int64 array
        Every (query id, relevant chunk id); or their keys in ``rk`` (:func:`relevant_keys`).
    ever_kept : callable
        ``ever_kept(d) -> positions`` (:func:`audit.history.record._ever_kept`).
    depth, keep : int
        :data:`~audit.history.record.DEPTH` and :data:`~audit.evaluation.threshold.KEEP` (``keep <= depth``).
    block : int
        Queries handled at a time (memory of one block's lines).
    """
    if keep > depth:
        raise ValueError(f"keep ({keep}) must not exceed the stored depth ({depth})")
    nq, n_ids = len(rk.query_ids), len(rk.chunk_ids)
    off = rk.offsets
    n = np.diff(off)
    gv = np.asarray(kind.to_gate(np.asarray(rk.score_values, dtype=np.float64)), dtype=np.float64)
    if isinstance(relevant_pairs, np.ndarray):
        rel = relevant_pairs
    else:
        code_of = {c: i for i, c in enumerate(rk.chunk_ids.tolist())}
        index = rk._index
        keys = [index[q] * n_ids + code_of[c] for q, c in relevant_pairs if q in index and c in code_of]
        rel = _distinct(np.asarray(keys, dtype=np.int64))
    # each query's relevant chunk codes: rel_code[rel_at[q]:rel_at[q + 1]]
    rel_code = (rel % max(n_ids, 1)).astype(np.int64)
    rel_at = np.searchsorted(rel, np.arange(nq + 1, dtype=np.int64) * n_ids) if n_ids else np.zeros(nq + 1, np.int64)
    rel_n = np.diff(rel_at)
    parts: dict[str, list] = {k: [] for k in ("rank", "code", "score")}
    # the rows' columns in the narrowest types that hold them (a 1M-query run stores some 20M rows)
    rank_type = np.min_scalar_type(int(n.max()) if nq else 0)
    code_type, score_type = np.min_scalar_type(max(n_ids - 1, 0)), np.min_scalar_type(max(len(rk.score_values) - 1, 0))
    counts = np.zeros(nq, dtype=np.int64)
    gate = np.full(nq, math.inf)
    a_rank = np.zeros(nq, dtype=np.int64)
    a_val = np.full(nq, math.nan)
    for qa in range(0, nq, block):
        qb = min(nq, qa + block)
        lo, hi = int(off[qa]), int(off[qb])
        nb = n[qa:qb]
        bounds = off[qa:qb + 1] - lo  # the block's queries' lines, from its first line
        pos = np.arange(hi - lo, dtype=np.int64) - np.repeat(bounds[:-1], nb)
        codes = np.asarray(rk.chunk_codes[lo:hi])
        wdt = codes.dtype if codes.dtype.kind == "i" else np.int64  # -1 (no relevant chunk) in the codes' own type
        d = gv[rk.score_codes[lo:hi]]
        # relevant lines: each query's line codes against its few relevant codes, one comparison a line per code
        isrel = np.zeros(hi - lo, dtype=bool)
        cnt, at = rel_n[qa:qb], rel_at[qa:qb]
        most = int(cnt.max()) if len(cnt) else 0
        for j in range(min(most, _PASSES)):
            want = np.where(cnt > j, rel_code[np.minimum(at + j, len(rel) - 1)], -1)
            isrel |= codes == np.repeat(want.astype(wdt, copy=False), nb)
        if most > _PASSES:  # a query with many relevant chunks: a binary search per line of its lines
            sel = np.flatnonzero(np.repeat(cnt > _PASSES, nb))
            k = (np.searchsorted(bounds, sel, side="right") - 1 + qa) * n_ids + codes[sel]
            hit = np.minimum(np.searchsorted(rel, k), len(rel) - 1)
            isrel[sel] = rel[hit] == k
        # the first relevant line of each query (a repeated id counts at its first rank: the first line anyway)
        lines = np.flatnonzero(isrel)
        if len(lines):
            rq = np.searchsorted(bounds, lines, side="right") - 1
            first = np.flatnonzero(np.concatenate([[True], rq[1:] != rq[:-1]]))
            uq, lines = rq[first] + qa, lines[first]
            a_rank[uq] = pos[lines] + 1
            a_val[uq] = d[lines]
        nonempty = np.flatnonzero(nb > 0)
        if len(nonempty):
            gate[qa + nonempty] = np.minimum.reduceat(d, bounds[:-1][nonempty])
        # ascending gate values keep only the first `keep`: no later position; the others go through the rule
        stored = (pos < depth) | isrel
        if hi - lo > 1:
            down = ~(d[1:] >= d[:-1])
            inner = bounds[1:-1]
            down[inner[(inner > 0) & (inner < hi - lo)] - 1] = False  # a step from one query to the next
            steps = np.flatnonzero(down)
            if len(steps):
                dq = np.searchsorted(bounds, steps + 1, side="right") - 1
                for q in (dq[np.concatenate([[True], dq[1:] != dq[:-1]])] + qa).tolist():
                    if n[q] <= depth:
                        continue
                    a = int(off[q]) - lo
                    kept = ever_kept(d[a:a + int(n[q])])
                    kept = kept[kept >= depth]
                    stored[a + kept] = True
        parts["rank"].append((pos[stored] + 1).astype(rank_type))
        parts["code"].append(codes[stored].astype(code_type, copy=False))
        parts["score"].append(rk.score_codes[lo:hi][stored].astype(score_type, copy=False))
        csum = np.concatenate([[0], np.cumsum(stored)])
        counts[qa:qb] = csum[bounds[1:]] - csum[bounds[:-1]]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    cat = {}
    for k in list(parts):  # one column at a time: its blocks are freed once joined
        v = parts.pop(k)
        cat[k] = np.concatenate(v) if v else np.zeros(0, dtype=np.uint8)
        del v
    # only the chunk ids and scores of stored rows, recoded in their order (a run returns many more than it stores)
    ids, code = _used(cat.pop("code"), n_ids)
    vals, score = _used(cat.pop("score"), len(rk.score_values))
    if len(vals) > len(score) // 2:  # a code and its distinct value take more room than the scores
        score, score_values = rk.score_values[vals[score]], None
    else:
        score_values = rk.score_values[vals]
    none = np.zeros(nq, dtype=bool)
    return RecordRankings(rk.query_ids, rk.chunk_ids[ids].tolist(), offsets, narrow(np.minimum(n, depth)),
                          cat["rank"], code, score, np.zeros(0), none, narrow(n), gate, narrow(a_rank), a_val, none,
                          score_values=score_values)


def _used(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(the distinct codes used, ascending; each code's position among them)``, the positions narrowed."""
    used = np.zeros(n, dtype=bool)
    used[codes] = True
    kept = np.flatnonzero(used)
    # the positions in narrow()'s type from the start (every kept code is used, so the largest is len(kept) - 1):
    # an int64 gather of 20M rows was 160 MB at a million queries
    at = np.zeros(n, dtype=narrow(np.array([0, max(len(kept) - 1, 0)])).dtype)
    at[kept] = np.arange(len(kept))
    return kept, at[codes] if len(kept) else codes.astype(np.uint8)


#: The judgment columns :func:`pack_judgments` writes, in order.
_JUDGMENT_ARRAYS = ("offsets", "codes", "grades")


class RecordJudgments(Sequence):
    """One space's stored judgments as arrays, read as the list a record keeps: ``[query id, [[chunk id, grade],
    …]]`` per query, the judgments' order (issue 58: a 1M-query record's judgments were 3M small lists).

    Parameters
    ----------
    query_ids : sequence of str, shape (n_queries,)
    offsets : int64 array, shape (n_queries + 1,)
        Query ``i``'s judgments are ``offsets[i]:offsets[i + 1]``.
    codes : int array, shape (n_judgments,)
        Index into ``chunk_ids``.
    chunk_ids : sequence, shape (n_chunks,)
        The distinct chunk ids (JSON values: str or int).
    grades : int64 array, shape (n_judgments,)
    """

    def __init__(self, query_ids, offsets, codes, chunk_ids, grades):
        self.query_ids = list(query_ids)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.codes = np.asarray(codes, dtype=np.int64)
        self.chunk_ids = list(chunk_ids)
        self.grades = np.asarray(grades, dtype=np.int64)

    @classmethod
    def from_columnar(cls, cj) -> "RecordJudgments":
        """The columns of a :class:`~audit.evaluation.judgments.ColumnarJudgments` (its arrays, no dict per query)."""
        return cls(cj.query_ids, cj.offsets, cj.chunk_codes, cj.chunk_ids.tolist(), cj.grades)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = range(len(self))[i]
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        ids = self.chunk_ids
        return [self.query_ids[i], [[ids[c], g] for c, g in zip(self.codes[a:b].tolist(), self.grades[a:b].tolist())]]

    def __len__(self) -> int:
        return len(self.query_ids)

    def __iter__(self):
        ids, off = self.chunk_ids, self.offsets.tolist()
        cs, gs = self.codes.tolist(), self.grades.tolist()
        for i, q in enumerate(self.query_ids):
            a, b = off[i], off[i + 1]
            yield [q, [[ids[c], g] for c, g in zip(cs[a:b], gs[a:b])]]

    def __eq__(self, other) -> bool:
        if isinstance(other, RecordJudgments) or isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == list(b) if isinstance(b, tuple) else a == b
                                                   for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def to_json(self) -> list:
        """The plain list it reads as."""
        return list(self)

    def strings(self) -> list:
        """Every text it holds (query ids, chunk ids), for a scan such as the secret scrub."""
        return [self.query_ids, self.chunk_ids]

    @classmethod
    def from_rows(cls, rows) -> "RecordJudgments":
        """The columns of a record's JSON form ``[[query id, [[chunk id, grade], …]], …]``."""
        qids, offsets, codes, grades, ids, code_of = [], [0], [], [], [], {}
        for q, js in rows:
            qids.append(q)
            for c, g in js:
                key = (type(c).__name__, c)
                k = code_of.get(key)
                if k is None:
                    k = code_of[key] = len(ids)
                    ids.append(c)
                codes.append(k)
                grades.append(int(g))
            offsets.append(len(codes))
        return cls(qids, offsets, codes, ids, grades)


def pack_judgments(rj: RecordJudgments) -> tuple[dict, dict[str, np.ndarray]]:
    """``(JSON part, named arrays)`` of ``rj`` as format 4 writes them (:func:`unpack_judgments` is the inverse):
    each query's number of judgments (``counts``) instead of the offsets, integers in their narrowest type."""
    return ({"query_ids": rj.query_ids, "ids": rj.chunk_ids},
            {"counts": narrow(np.diff(rj.offsets)), "codes": narrow(rj.codes), "grades": narrow(rj.grades)})


def unpack_judgments(meta: Mapping, arrays: Mapping[str, np.ndarray]) -> RecordJudgments:
    """The :class:`RecordJudgments` :func:`pack_judgments` (or format 3's writer) gave ``meta`` and ``arrays`` for."""
    return RecordJudgments(meta["query_ids"], _offsets(arrays), arrays["codes"], meta["ids"], arrays["grades"])
