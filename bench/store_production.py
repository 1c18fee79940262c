"""pgvector as teams run it, measured (issue 33): a filtered search and a large delete through HNSW.

Usage::

    .venv/bin/python bench/store_production.py                   # 20,000 rows × 64 dims (about a minute)
    .venv/bin/python bench/store_production.py --rows 100000 --json out.json

On a throw-away PostgreSQL + pgvector server (``pgserver``, a temporary folder; autovacuum off on the table so
the dead tuples stay until the bench vacuums):

1. ``--rows`` random unit vectors (float32, seed 0), 2% of them tenant ``small``, the rest ``big``; an HNSW
   index (``vector_cosine_ops``, m 16, ef_construction 64);
2. ``--queries`` questions: a ``small`` row plus noise (σ 0.05 a dimension, renormalised), whose needle is that
   row;
3. with ``--filter tenant=small`` (the audit's own :func:`audit.stores.pgvector.search`): exact and approximate
   recall@10 of the needle, the short lists, at ``hnsw.ef_search`` 40 and 400; and the same without the filter;
4. ``DELETE`` of 90% of the ``big`` rows (never a needle): dead tuples from ``check_health``, recall@10 and short
   lists through the index; then ``VACUUM`` and the same again.

Every figure is wall clock on this machine, shared with other work: the load average (``uptime``) before and
after is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f}/{b:.2f}/{c:.2f}"


def measure(spec, qs, needles, k, ef):
    from audit.evaluation.approximate import compare_retrieval
    from audit.stores.pgvector import search

    t0 = time.perf_counter()
    ap = search(spec, qs, k, "approximate", ef_search=ef)
    t1 = time.perf_counter()
    ex = search(spec, qs, k, "exact")
    t2 = time.perf_counter()
    row = compare_retrieval(ap, ex, [{n} for n in needles], (k,)).rows[0]
    return {"ef_search": ef, "recall_exact": row.recall_exact, "recall_approximate": row.recall_approximate,
            "short": len(row.short), "mean_rows_approximate": float(np.mean([len(i) for i in ap.ids])),
            "approximate_ms": 1000 * (t1 - t0) / len(qs), "exact_ms": 1000 * (t2 - t1) / len(qs)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--dims", type=int, default=64)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--json")
    a = ap.parse_args(argv)

    import pgserver
    import psycopg

    from audit.stores.pgvector import StoreSpec, check_health

    print(f"load (1/5/15 min) at start: {load()}; {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    v = rng.standard_normal((a.rows, a.dims)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    small = rng.random(a.rows) < 0.02
    small_ids = np.flatnonzero(small)
    pick = rng.choice(small_ids, size=min(a.queries, small_ids.size), replace=False)
    qs = v[pick].astype(np.float64) + 0.05 * rng.standard_normal((pick.size, a.dims))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    needles = [f"r{i}" for i in pick]
    tmp = Path(tempfile.mkdtemp(prefix="audit-bench-prod-"))
    srv = pgserver.get_server(tmp / "pgdata", cleanup_mode="delete")
    out = {"rows": a.rows, "dims": a.dims, "queries": int(pick.size), "load_start": load()}
    try:
        uri = srv.get_uri()
        with psycopg.connect(uri, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS vector")
            out["pgvector"] = c.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
            c.execute(f"CREATE TABLE t (id text PRIMARY KEY, tenant text, body text, emb vector({a.dims})) "
                      "WITH (autovacuum_enabled = false)")
            t0 = time.perf_counter()
            with c.cursor().copy("COPY t FROM STDIN") as cp:
                for i in range(a.rows):
                    cp.write_row((f"r{i}", "small" if small[i] else "big", f"r{i}",
                                  "[" + ",".join(repr(float(x)) for x in v[i]) + "]"))
            c.execute("CREATE INDEX t_hnsw ON t USING hnsw (emb vector_cosine_ops)")
            out["load_and_build_s"] = time.perf_counter() - t0
        plain = StoreSpec(uri, "t", "id", "body", "emb")
        filtered = StoreSpec(uri, "t", "id", "body", "emb", filters=(("tenant", "small"),))
        out["unfiltered"] = [measure(plain, qs, needles, 10, ef) for ef in (40, 400)]
        out["filtered"] = [measure(filtered, qs, needles, 10, ef) for ef in (40, 400)]
        keep = set(pick.tolist())
        gone = [f"r{i}" for i in np.flatnonzero(~small) if rng.random() < 0.9 and i not in keep]
        with psycopg.connect(uri, autocommit=True) as c:
            c.execute("DELETE FROM t WHERE id = ANY(%s)", (gone,))
            c.execute("SELECT pg_stat_force_next_flush()")
        out["deleted"] = len(gone)
        dead = None
        for _ in range(50):
            dead = check_health(plain).check("dead_tuples")
            if dead.severity == "warning":
                break
            time.sleep(0.1)
        out["dead_tuples"] = dead.detail
        out["after_delete"] = [measure(plain, qs, needles, 10, ef) for ef in (40, 400)]
        with psycopg.connect(uri, autocommit=True) as c:
            t0 = time.perf_counter()
            c.execute("VACUUM t")
            out["vacuum_s"] = time.perf_counter() - t0
        out["after_vacuum"] = [measure(plain, qs, needles, 10, ef) for ef in (40, 400)]
    finally:
        srv.cleanup()
    out["load_end"] = load()
    for name in ("unfiltered", "filtered", "after_delete", "after_vacuum"):
        for r in out[name]:
            print(f"{name:13s} ef_search {r['ef_search']:3d}: recall@10 exact {r['recall_exact']:.2f}, approximate "
                  f"{r['recall_approximate']:.2f}; short lists {r['short']}/{out['queries']} (mean rows "
                  f"{r['mean_rows_approximate']:.1f}); {r['approximate_ms']:.1f} / {r['exact_ms']:.1f} ms a query")
    print(f"deleted {out['deleted']} rows; dead_tuples: {out['dead_tuples']}; VACUUM {out['vacuum_s']:.1f} s; "
          f"build {out['load_and_build_s']:.1f} s; pgvector {out['pgvector']}")
    print(f"load (1/5/15 min) at end: {out['load_end']}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
