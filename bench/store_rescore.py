"""What the store protocol's one distance rule costs on pgvector (issue 23): each returned row's own vector
fetched with it, and the rows re-scored by ``audit.scores.cosine_distances`` and re-ordered.

Usage::

    .venv/bin/python bench/store_rescore.py                    # 10,000 rows × 384 dims, 50 questions, k = 20
    .venv/bin/python bench/store_rescore.py --rows 50000 --json out.json

On a throw-away PostgreSQL + pgvector server (``pgserver``, a temporary folder): random unit vectors (float32,
seed 0) in a ``vector(dims)`` column with an HNSW index (``vector_cosine_ops``); each question a row plus
noise. Measured per question, each the median of the questions:

1. the statement the audit sent before the rule (id, ``<=>``, ``vector_norm``, text) and the same with
   ``emb::real[]`` (the row's vector) added, through the index, straight through psycopg;
2. :func:`audit.stores.base.rescore` alone over the ``k`` rows;
3. the audit's whole search (:meth:`audit.stores.pgvector.PgvectorStore.search`), approximate and exact.

Every figure is wall clock on this machine, shared with other work: the load average (``uptime``) before and
after is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f}/{b:.2f}/{c:.2f}"


def lit(v) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--json")
    a = ap.parse_args(argv)

    import pgserver
    import psycopg

    from audit.stores.pgvector import StoreSpec
    from audit.stores.base import rescore
    from audit.stores.registry import open_store

    print(f"load (1/5/15 min) at start: {load()}; {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    v = rng.standard_normal((a.rows, a.dims)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    pick = rng.choice(a.rows, size=a.queries, replace=False)
    qs = v[pick].astype(np.float64) + 0.05 * rng.standard_normal((a.queries, a.dims))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    tmp = Path(tempfile.mkdtemp(prefix="audit-bench-rescore-"))
    srv = pgserver.get_server(tmp / "pgdata", cleanup_mode="delete")
    out = {"rows": a.rows, "dims": a.dims, "queries": a.queries, "k": a.k, "load_start": load()}
    try:
        uri = srv.get_uri()
        with psycopg.connect(uri, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS vector")
            out["pgvector"] = c.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
            c.execute(f"CREATE TABLE t (id text PRIMARY KEY, body text, emb vector({a.dims}))")
            t0 = time.perf_counter()
            with c.cursor().copy("COPY t FROM STDIN") as cp:
                for i in range(a.rows):
                    cp.write_row((f"r{i}", f"row {i}", lit(v[i])))
            c.execute("CREATE INDEX t_hnsw ON t USING hnsw (emb vector_cosine_ops)")
            out["load_and_build_s"] = time.perf_counter() - t0
            base = "SELECT id, emb <=> %(q)s::vector AS d, vector_norm(emb), body{extra} FROM t ORDER BY d LIMIT %(k)s"
            times = {"without": [], "with": []}
            fetched = []
            with c.transaction(force_rollback=True):
                c.execute("SELECT set_config('enable_seqscan', 'off', true)")
                for q in qs:
                    for name, extra in (("without", ""), ("with", ", emb::real[]")):
                        t0 = time.perf_counter()
                        rows = c.execute(base.format(extra=extra), {"q": lit(q), "k": a.k}).fetchall()
                        times[name].append(1000 * (time.perf_counter() - t0))
                    fetched.append(rows)
            out["sql_ms_without_vectors"] = statistics.median(times["without"])
            out["sql_ms_with_vectors"] = statistics.median(times["with"])
        rs = []
        for q, rows in zip(qs, fetched):
            t0 = time.perf_counter()
            rescore(q, [r[0] for r in rows], [float(r[1]) for r in rows], [r[4] for r in rows])
            rs.append(1000 * (time.perf_counter() - t0))
        out["rescore_ms"] = statistics.median(rs)
        with open_store(StoreSpec(uri, "t", "id", "body", "emb")) as store:
            for mode in ("approximate", "exact"):
                r = store.search(qs, a.k, mode)
                out[f"search_ms_{mode}"] = statistics.median(r.ms)
    finally:
        srv.cleanup()
    out["load_end"] = load()
    print(f"{a.rows} rows × {a.dims} dims, k = {a.k}, {a.queries} questions, pgvector {out['pgvector']} "
          f"(build {out['load_and_build_s']:.1f} s)")
    print(f"statement through HNSW: {out['sql_ms_without_vectors']:.2f} ms without the rows' vectors, "
          f"{out['sql_ms_with_vectors']:.2f} ms with them")
    print(f"rescore of {a.k} rows: {out['rescore_ms']:.3f} ms")
    print(f"the audit's search: approximate {out['search_ms_approximate']:.2f} ms, exact "
          f"{out['search_ms_exact']:.2f} ms a question")
    print(f"load (1/5/15 min) at end: {out['load_end']}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
