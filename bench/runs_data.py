"""Synthetic TREC files for the runs benchmark (``bench/runs.py``): queries, qrels and two runs.

Every query has 3 graded judgments (grades 1, 2, 3) among 5,000 documents and 100 ranked results per run;
about half the queries rank a judged document somewhere in their 100. Drawn from ``seed`` with numpy and
written in blocks of queries, so a 1M-query file is written in bounded memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

N_DOCS = 5_000
DEPTH = 100
N_JUDGED = 3
BLOCK = 10_000


def _doc_names() -> np.ndarray:
    return np.array([f"d{i}" for i in range(N_DOCS)], dtype=object)


def _write_run(f, qids, names, docs, scores, order, tag: str) -> None:
    """One block of run lines ``qid Q0 doc rank score tag`` written by pyarrow's CSV writer (no quoting)."""
    import pyarrow as pa
    from pyarrow import csv

    q = order // DEPTH
    table = pa.table({
        "qid": pa.DictionaryArray.from_arrays(pa.array(q.astype(np.int32)), pa.array(list(qids))).cast(pa.string()),
        "q0": pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(q), np.int32)), pa.array(["Q0"])).cast(pa.string()),
        "doc": pa.DictionaryArray.from_arrays(pa.array(docs.astype(np.int32)), pa.array(list(names))).cast(pa.string()),
        "rank": pa.array(order % DEPTH + 1),
        "score": pa.array(scores).cast(pa.string()),
        "tag": pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(q), np.int32)), pa.array([tag])).cast(pa.string()),
    })
    sink = pa.BufferOutputStream()
    csv.write_csv(table, sink, csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
    f.write(sink.getvalue().to_pybytes())


def write_files(folder: str | Path, n_queries: int, seed: int = 0, shuffle: bool = False) -> dict[str, Path]:
    """Write ``queries.tsv``, ``qrels.txt``, ``a.trec`` and ``b.trec`` for ``n_queries`` queries into ``folder``.

    ``shuffle``: the lines of each block of queries of the runs in random order (a run not grouped by query).
    Returns the four paths by role (``queries``, ``qrels``, ``a``, ``b``).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"queries": folder / "queries.tsv", "qrels": folder / "qrels.txt", "a": folder / "a.trec",
             "b": folder / "b.trec"}
    rng = np.random.default_rng(seed)
    names = _doc_names()
    handles = {k: open(p, "wb") for k, p in paths.items()}
    try:
        for lo in range(0, n_queries, BLOCK):
            n = min(BLOCK, n_queries - lo)
            qids = np.array([f"q{i}" for i in range(lo, lo + n)], dtype=object)
            handles["queries"].write("".join(f"{q}\tquestion {q}\n" for q in qids).encode())
            # 3 distinct judged documents a query, grades 1..3
            # a + j·b (mod N_DOCS), 0 < b < N_DOCS / 2: three distinct documents
            judged = (rng.integers(0, N_DOCS, size=(n, 1))
                      + rng.integers(1, N_DOCS // 2, size=(n, 1)) * np.arange(N_JUDGED)) % N_DOCS
            grades = rng.integers(1, 4, size=(n, N_JUDGED))
            handles["qrels"].write("".join(f"{qids[i]} 0 {names[judged[i, j]]} {grades[i, j]}\n"
                                           for i in range(n) for j in range(N_JUDGED)).encode())
            for run in ("a", "b"):
                # 100 distinct documents a query (a random window of a random permutation), with a judged one
                # placed at a random rank for about half the queries
                # (a + b·i) mod N_DOCS with b coprime to N_DOCS = 2^3·5^4: 100 distinct documents, no sort
                b = rng.integers(0, N_DOCS // 10, size=(n, 1)) * 10 + rng.choice([1, 3, 7, 9], size=(n, 1))
                docs = (rng.integers(0, N_DOCS, size=(n, 1)) + b * np.arange(DEPTH)) % N_DOCS
                put = rng.random(n) < 0.5
                where = rng.integers(0, DEPTH, size=n)
                pick = judged[np.arange(n), rng.integers(0, N_JUDGED, size=n)]
                present = (docs == pick[:, None]).any(axis=1)
                rows = np.nonzero(put & ~present)[0]
                docs[rows, where[rows]] = pick[rows]
                # scores descending with ties now and then (4 decimals)
                scores = np.round(np.sort(rng.random((n, DEPTH)), axis=1)[:, ::-1], 4)
                order = rng.permutation(n * DEPTH) if shuffle else np.arange(n * DEPTH)
                _write_run(handles[run], qids, names, docs.ravel()[order], scores.ravel()[order], order, run)
    finally:
        for h in handles.values():
            h.close()
    return paths
