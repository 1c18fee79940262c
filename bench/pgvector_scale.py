"""Scale of the live-store audit: a pgvector table of 1M rows × 384 dims (issue: audit a live vector store, item 6).

Usage::

    .venv/bin/python bench/pgvector_scale.py                 # 1M rows (≈1.6 GB; HNSW build 20–40 min on 2 cores)
    .venv/bin/python bench/pgvector_scale.py --rows 100000   # the quick run
    .venv/bin/python bench/pgvector_scale.py --rows 20000 --json out.json
    .venv/bin/python bench/pgvector_scale.py --no-index      # 1M rows: health both ways and exact top-k only

What it does, on a throw-away PostgreSQL 16 + pgvector server started with
``pgserver`` in a temporary directory (or ``--uri`` of an existing database,
where it creates and drops the table ``audit_bench_scale``):

1. loads ``--rows`` random unit vectors (float32, seed 0) with binary COPY;
2. builds an HNSW index (``vector_cosine_ops``) with the stated ``m``,
   ``ef_construction``, ``maintenance_work_mem`` and
   ``max_parallel_maintenance_workers``;
3. health two ways: :func:`audit.stores.pgvector.check_health` (SQL aggregates; no
   vector leaves the server) against fetching every vector into numpy (binary
   ``real[]``, server-side cursor) and computing the same figures there
   (dims, NULLs, norms off unit, duplicate texts): wall time and peak RSS of
   this Python process above its baseline (polled every 10 ms), plus the
   server's peak RSS (postmaster and backends; it counts shared-buffer pages
   touched, so it is an upper bound);
4. top-k (``--k``) for ``--queries`` queries (stored vectors plus noise, so
   each has a known nearest row) through the HNSW index (``hnsw.ef_search``
   ``--ef-search``) and through an exact scan: p50 / p95 ms per query, and
   the approximate-vs-exact comparison (recall@1 of the source row, overlap@k).

Every figure is wall clock on this machine, shared with other work: the load
average before and after is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

TABLE = "audit_bench_scale"


class PeakRSS:
    """Peak RSS (bytes) of this process and optionally a server process tree, polled every 10 ms."""

    def __init__(self, server_pid: int | None = None) -> None:
        import psutil

        self._p = psutil.Process()
        self._srv = psutil.Process(server_pid) if server_pid else None
        self.base = self._p.memory_info().rss
        self.peak = self.base
        self.srv_base = self._server_rss()
        self.srv_peak = self.srv_base
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _server_rss(self) -> int:
        if self._srv is None:
            return 0
        total = 0
        try:
            for p in [self._srv, *self._srv.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except Exception:  # noqa: BLE001 - a backend that just exited
                    pass
        except Exception:  # noqa: BLE001
            return 0
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._p.memory_info().rss)
            self.srv_peak = max(self.srv_peak, self._server_rss())
            time.sleep(0.01)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self._p.memory_info().rss)

    @property
    def client_mib(self) -> float:
        return (self.peak - self.base) / 2**20

    @property
    def server_mib(self) -> float:
        return (self.srv_peak - self.srv_base) / 2**20


def _copy_binary(conn, rows: int, dims: int, batch: int = 20000) -> float:
    """Binary COPY of (id int4, body text, emb vector(dims)); returns seconds. Vectors: seed 0, unit length."""
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    vec_head = struct.pack(">ihh", 4 + 4 * dims, dims, 0)  # field length, then pgvector's dim / unused
    with conn.cursor().copy(f"COPY {TABLE} (id, body, emb) FROM STDIN WITH (FORMAT BINARY)") as cp:
        cp.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
        for lo in range(0, rows, batch):
            n = min(batch, rows - lo)
            v = rng.standard_normal((n, dims)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            be = v.astype(">f4")
            parts = []
            for j in range(n):
                i = lo + j
                text = f"synthetic chunk {i}: {i % 9973} {i % 7919}".encode()
                parts.append(struct.pack(">hii", 3, 4, i) + struct.pack(">i", len(text)) + text
                             + vec_head + be[j].tobytes())
            cp.write(b"".join(parts))
        cp.write(struct.pack(">h", -1))
    return time.perf_counter() - t0


def _fetch_health(uri: str, dims: int) -> dict:
    """The naive path: every vector into one float32 numpy array, then the same figures as the SQL health.

    Each batch of 2,000 rows is converted to float32 at once (a million rows as
    Python float lists would need ~20 GB), so the peak is the array itself
    (rows × dims × 4 bytes) plus one batch.
    """
    import psycopg

    texts, nulls, n = [], 0, 0
    with psycopg.connect(uri) as conn:
        total = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
        M = np.empty((total, dims), dtype=np.float32)
        with conn.cursor(name="audit_fetch", binary=True) as cur:
            cur.itersize = 2000
            cur.execute(f"SELECT body, emb::real[] FROM {TABLE}")
            while True:
                rows = cur.fetchmany(2000)
                if not rows:
                    break
                good = [emb for body, emb in rows if emb is not None]
                texts.extend(body for body, _ in rows)
                nulls += len(rows) - len(good)
                if good:
                    M[n:n + len(good)] = np.asarray(good, dtype=np.float32)
                    n += len(good)
    M = M[:n]
    norms = np.linalg.norm(M, axis=1)
    from collections import Counter

    dup = sum(c for c in Counter(texts).values() if c > 1)
    return {"rows": len(texts), "nulls": nulls, "dims": [dims] if n else [],
            "off_unit": int((np.abs(norms - 1) > 1e-4).sum()), "duplicate_texts": dup}


def _pct(xs, p) -> float:
    return float(np.percentile(np.asarray(xs), p)) if len(xs) else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--m", type=int, default=16, help="HNSW m (pgvector default 16)")
    ap.add_argument("--ef-construction", type=int, default=64, help="HNSW ef_construction (pgvector default 64)")
    ap.add_argument("--maintenance-work-mem", default="1GB", help="for the index build (PostgreSQL default 64MB)")
    ap.add_argument("--parallel-workers", type=int, default=1, help="max_parallel_maintenance_workers for the build")
    ap.add_argument("--ef-search", type=int, default=40, help="hnsw.ef_search for the queries (pgvector default 40)")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--no-index", action="store_true",
                    help="skip the HNSW build: health both ways and the exact scan only (a quick 1M run)")
    ap.add_argument("--uri", default=None, help="an existing database (default: a throw-away pgserver)")
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args(argv)

    import psycopg

    from audit.evaluation.approximate import compare_retrieval
    from audit.stores.pgvector import StoreSpec, check_health, search

    srv, tmp, server_pid = None, None, None
    if a.uri:
        uri = a.uri
    else:
        import pgserver

        tmp = Path(tempfile.mkdtemp(prefix="audit-pgbench-"))
        srv = pgserver.get_server(tmp / "pgdata", cleanup_mode="delete")
        uri = srv.get_uri()
        server_pid = srv.get_pid()
    out: dict = {"rows": a.rows, "dims": a.dims, "m": a.m, "ef_construction": a.ef_construction,
                 "maintenance_work_mem": a.maintenance_work_mem, "max_parallel_maintenance_workers": a.parallel_workers,
                 "ef_search": a.ef_search, "queries": a.queries, "k": a.k, "cores": os.cpu_count(),
                 "load_before": os.getloadavg()}
    try:
        with psycopg.connect(uri, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS vector")
            out["server"] = c.execute("SELECT current_setting('server_version'), "
                                      "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                                      "current_setting('shared_buffers')").fetchone()
            c.execute(f"DROP TABLE IF EXISTS {TABLE}")
            c.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, body text, emb vector({a.dims}))")
            out["load_s"] = _copy_binary(c, a.rows, a.dims)
            c.execute(f"ANALYZE {TABLE}")
            out["table_mib"] = c.execute("SELECT pg_total_relation_size(%s) / 1048576.0", (TABLE,)).fetchone()[0]
            print(f"loaded {a.rows} rows × {a.dims} dims in {out['load_s']:.1f} s ({out['table_mib']:.0f} MiB)",
                  flush=True)
            c.execute("SELECT set_config('maintenance_work_mem', %s, false)", (a.maintenance_work_mem,))
            c.execute("SELECT set_config('max_parallel_maintenance_workers', %s, false)", (str(a.parallel_workers),))
            if a.no_index:
                out["hnsw_build_s"], out["index_mib"] = float("nan"), 0.0
            else:
                t0 = time.perf_counter()
                c.execute(f"CREATE INDEX {TABLE}_hnsw ON {TABLE} USING hnsw (emb vector_cosine_ops) "
                          f"WITH (m = {int(a.m)}, ef_construction = {int(a.ef_construction)})")
                out["hnsw_build_s"] = time.perf_counter() - t0
                out["index_mib"] = c.execute("SELECT pg_relation_size(%s) / 1048576.0",
                                             (f"{TABLE}_hnsw",)).fetchone()[0]
                print(f"HNSW build {out['hnsw_build_s']:.1f} s ({out['index_mib']:.0f} MiB)", flush=True)
                out["index_mib"] = float(out["index_mib"])
            out["table_mib"] = float(out["table_mib"])

        spec = StoreSpec(uri, TABLE, "id", "body", "emb")
        with PeakRSS(server_pid) as mem:
            t0 = time.perf_counter()
            h = check_health(spec, model_dims=a.dims)
            sql_s = time.perf_counter() - t0
        out["health_sql"] = {"s": sql_s, "client_peak_mib": mem.client_mib, "server_peak_mib": mem.server_mib,
                             "healthy": h.healthy, "checks": {x.name: x.rows for x in h.checks}}
        with PeakRSS(server_pid) as mem:
            t0 = time.perf_counter()
            naive = _fetch_health(uri, a.dims)
            fetch_s = time.perf_counter() - t0
        out["health_fetch"] = {"s": fetch_s, "client_peak_mib": mem.client_mib, "server_peak_mib": mem.server_mib,
                               **naive}
        agree = (naive["rows"] == h.n_rows and naive["off_unit"] == h.check("norms").rows
                 and naive["duplicate_texts"] == h.check("duplicate_texts").rows)
        out["health_agree"] = agree

        rng = np.random.default_rng(1)
        src = rng.choice(a.rows, size=a.queries, replace=False)
        with psycopg.connect(uri) as c:
            got = dict(c.execute(f"SELECT id, emb::text FROM {TABLE} WHERE id = ANY(%s)", (src.tolist(),)).fetchall())
        Q = np.array([np.array(got[int(i)][1:-1].split(","), dtype=np.float32) for i in src])
        Q += 0.02 * rng.standard_normal(Q.shape).astype(np.float32)
        Q /= np.linalg.norm(Q, axis=1, keepdims=True)
        exact = search(spec, Q, a.k, mode="exact")
        # without an index "approximate" is the same exact scan (search() says so): not timed twice
        appr = exact if a.no_index else search(spec, Q, a.k, mode="approximate", ef_search=a.ef_search)
        cmp_ = compare_retrieval(appr, exact, [{str(int(i))} for i in src], ks=(1, a.k))
        out["topk"] = {"hnsw_index": appr.index, "hnsw_ms_p50": _pct(appr.ms, 50), "hnsw_ms_p95": _pct(appr.ms, 95),
                       "exact_ms_p50": _pct(exact.ms, 50), "exact_ms_p95": _pct(exact.ms, 95),
                       "recall@1_hnsw": cmp_.rows[0].recall_approximate, "recall@1_exact": cmp_.rows[0].recall_exact,
                       f"overlap@{a.k}": cmp_.rows[-1].overlap, "lost@1": len(cmp_.rows[0].lost)}
        out["load_after"] = os.getloadavg()
    finally:
        if a.uri:
            with psycopg.connect(uri, autocommit=True) as c:
                c.execute(f"DROP TABLE IF EXISTS {TABLE}")
        if srv is not None:
            srv.cleanup()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    hs, hf, tk = out["health_sql"], out["health_fetch"], out["topk"]
    print(f"\nPostgreSQL {out['server'][0]}, pgvector {out['server'][1]}, shared_buffers {out['server'][2]}; "
          f"{out['cores']} cores, load {out['load_before'][0]:.2f} → {out['load_after'][0]:.2f}")
    print(f"table {a.rows} rows × {a.dims} dims: {out['table_mib']:.0f} MiB; load (binary COPY) {out['load_s']:.1f} s")
    if a.no_index:
        print("no HNSW index (--no-index): the approximate search would be the exact scan")
    else:
        print(f"HNSW m={a.m} ef_construction={a.ef_construction} maintenance_work_mem={a.maintenance_work_mem} "
              f"max_parallel_maintenance_workers={a.parallel_workers}: build {out['hnsw_build_s']:.1f} s, "
              f"index {out['index_mib']:.0f} MiB")
    print(f"{'health':<34}{'wall s':>9}{'client peak MiB':>17}{'server peak MiB':>17}")
    print(f"{'SQL aggregates (check_health)':<34}{hs['s']:>9.2f}{hs['client_peak_mib']:>17.1f}"
          f"{hs['server_peak_mib']:>17.1f}")
    print(f"{'fetch every vector into numpy':<34}{hf['s']:>9.2f}{hf['client_peak_mib']:>17.1f}"
          f"{hf['server_peak_mib']:>17.1f}")
    print(f"  same figures both ways: {out['health_agree']} (rows {hf['rows']}, off-unit {hf['off_unit']}, "
          f"duplicate texts {hf['duplicate_texts']})")
    print(f"{'top-' + str(a.k) + ' per query':<34}{'p50 ms':>9}{'p95 ms':>9}")
    if not a.no_index:
        print(f"{'HNSW (ef_search ' + str(a.ef_search) + ')':<34}{tk['hnsw_ms_p50']:>9.2f}{tk['hnsw_ms_p95']:>9.2f}")
    print(f"{'exact scan':<34}{tk['exact_ms_p50']:>9.2f}{tk['exact_ms_p95']:>9.2f}")
    if a.no_index:
        print(f"  {a.queries} queries: recall@1 of the source row (exact) {tk['recall@1_exact']:.3f}")
    else:
        print(f"  {a.queries} queries: recall@1 of the source row HNSW {tk['recall@1_hnsw']:.3f} / exact "
              f"{tk['recall@1_exact']:.3f}; overlap@{a.k} {tk[f'overlap@{a.k}']:.3f}; lost@1 {tk['lost@1']}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
