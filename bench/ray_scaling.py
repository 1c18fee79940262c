"""Indexing throughput: the Ray Data path against the single-process path (docs/scaling.md).

Usage::

    .venv/bin/python bench/ray_scaling.py                          # ~2,000 chunks, hashing encoder
    .venv/bin/python bench/ray_scaling.py --chunks 10000 --model all-MiniLM-L6-v2
    .venv/bin/python bench/ray_scaling.py --chunks 100000 --actors 2 --json out.json

A synthetic markdown corpus of about ``--chunks`` chunks (strategy E: 20
paragraphs of ~400 characters a document, a ``## `` section every 5, so about
one chunk a paragraph) is written to a temporary folder and indexed once by
each engine, each in its own Python process, into a temporary Lance dataset.
Reported per engine: wall seconds, Ray start seconds, chunks/s (Ray start
excluded, and included), and peak memory: the largest sum of RSS over the
engine's process and all its descendants (Ray's GCS, raylet and workers),
sampled every 0.2 s with psutil (a short peak between samples can be missed;
shared pages are counted once per process, so the Ray figure is an upper bound).

Then the streamed health check over the first engine's dataset is timed and,
with ``--query-rows N``, the streamed exact top-100 of 94 queries over N synthetic
384-dimension unit vectors (the audit's query side, docs/scaling.md; the peak
RSS growth is the parent process's ``ru_maxrss`` difference).

Everything is wall clock on this machine; the load average before and after
each run is printed because other work on a shared machine moves the figures.
Nothing is written into the working tree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PARAGRAPHS_PER_DOC = 20
WORDS = ("index chunk vector model query answer needle section corpus document retrieval distance cosine "
         "threshold cluster worker actor batch embedding token window header overlap stamp digest").split()


def make_corpus(folder: Path, n_chunks: int, seed: int = 0) -> int:
    """Write ``ceil(n_chunks / 20)`` markdown documents into ``folder``; returns the document count."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_docs = max(1, -(-n_chunks // PARAGRAPHS_PER_DOC))
    for d in range(n_docs):
        parts = [f"# Document {d}", ""]
        for p in range(PARAGRAPHS_PER_DOC):
            if p % 5 == 0:
                parts += [f"## Section {p // 5}", ""]
            words = rng.choice(WORDS, size=60)
            parts += [f"Paragraph {p} of document {d}: " + " ".join(words) + ".", ""]
        (folder / f"doc{d:06d}.md").write_text("\n".join(parts), encoding="utf-8")
    return n_docs


def _run_child(args) -> None:
    """In the child process: index with one engine and print the result as JSON."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from audit.index.lance import index_local, index_with_ray

    if args.run == "local":
        r = index_local(args.corpus, "E", args.model, args.out, batch_size=args.batch_size)
    else:
        r = index_with_ray(args.corpus, "E", args.model, args.out, batch_size=args.batch_size, actors=args.actors,
                           num_cpus=args.ray_cpus)
    print("RESULT " + json.dumps(r.to_dict()))


def _measure(cmd: list[str]) -> tuple[dict, float]:
    """Run ``cmd``; returns (its RESULT json, peak RSS of its process tree in MiB)."""
    import psutil

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [ps] + ps.children(recursive=True)
            rss = 0
            for p in tree:
                try:
                    rss += p.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    pass
            peak = max(peak, rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.2)
    out, err = proc.communicate()
    line = next((ln for ln in out.splitlines() if ln.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"{' '.join(cmd[:4])}… failed (exit {proc.returncode}):\n{err[-3000:]}")
    return json.loads(line[len("RESULT "):]), peak / 2**20


def _time_health(uri: Path) -> tuple[float, int]:
    """Seconds of :meth:`LanceIndex.health` over a dataset, and its rows."""
    from audit.index.lance import open_index

    ix = open_index(str(uri))
    t = time.perf_counter()
    h = ix.health()
    return time.perf_counter() - t, h.n_rows


def _time_scan(uri: Path, n: int) -> dict:
    """Write ``n`` synthetic unit vectors (384 dims) and time the streamed exact top-100 of 94 queries."""
    import resource

    import lance
    import numpy as np
    import pyarrow as pa
    from synthetic import (
        unit_vectors,  # bench/ is on sys.path when this file runs as a script
    )

    from audit.index.lance import LanceIndex

    step = 100_000

    def batches():
        for lo in range(0, n, step):
            m = min(step, n - lo)
            v = unit_vectors(m, 384, seed=lo)
            yield pa.record_batch([pa.array(np.arange(lo, lo + m), pa.int64()),
                                   pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), 384)],
                                  names=["chunk_id", "vector"])

    schema = pa.schema([("chunk_id", pa.int64()), ("vector", pa.list_(pa.float32(), 384))])
    lance.write_dataset(pa.RecordBatchReader.from_batches(schema, batches()), str(uri), schema=schema)
    q = unit_vectors(94, 384, seed=10**9)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    LanceIndex(str(uri)).exact_topk(q, 100)
    dt = time.perf_counter() - t
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return {"scan_rows": n, "scan_s": dt, "scan_ms_per_query": dt / 94 * 1000, "scan_rss_mib": grew}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=2000, help="approximate chunks of the synthetic corpus")
    ap.add_argument("--model", default="hashing", help="encoder (hashing, all-MiniLM-L6-v2, a path)")
    ap.add_argument("--actors", type=int, default=2, help="Ray actors (model replicas)")
    ap.add_argument("--batch-size", type=int, default=256, help="chunks per model call")
    ap.add_argument("--ray-cpus", type=int, default=2, help="logical CPUs of the local Ray")
    ap.add_argument("--engines", default="local,ray", help="comma list of local, ray")
    ap.add_argument("--query-rows", type=int, default=0,
                    help="also time the streamed exact top-100 of 94 queries over this many synthetic 384-dim rows")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run:
        _run_child(args)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="ray-scaling-"))
    try:
        corpus = tmp / "corpus"
        corpus.mkdir()
        n_docs = make_corpus(corpus, args.chunks)
        rows = []
        print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}; corpus {n_docs} documents "
              f"(~{args.chunks} chunks), model {args.model}, batch {args.batch_size}, actors {args.actors}")
        for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
            load0 = os.getloadavg()
            cmd = [sys.executable, str(Path(__file__).resolve()), "--run", engine, "--corpus", str(corpus),
                   "--out", str(tmp / f"{engine}.lance"), "--model", args.model, "--batch-size",
                   str(args.batch_size), "--actors", str(args.actors), "--ray-cpus", str(args.ray_cpus)]
            t = time.perf_counter()
            res, peak = _measure(cmd)
            process_s = time.perf_counter() - t
            load1 = os.getloadavg()
            incl = res["n_chunks"] / res["wall_s"] if res["wall_s"] else float("nan")
            rows.append({"engine": engine, "chunks": res["n_chunks"], "documents": res["n_documents"],
                         "wall_s": round(res["wall_s"], 2), "ray_start_s": round(res["ray_start_s"], 2),
                         "chunks_per_s": round(res["chunks_per_s"], 1), "chunks_per_s_incl_start": round(incl, 1),
                         "process_s": round(process_s, 2), "peak_rss_mib": round(peak, 1),
                         "actors": res["actors"], "load_before": [round(x, 2) for x in load0],
                         "load_after": [round(x, 2) for x in load1]})
        print()
        print("| engine | chunks | wall s | Ray start s | chunks/s (excl. start) | chunks/s (incl.) | "
              "process s | peak RSS MiB | load 1/5/15 before → after |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['engine']} ({r['actors']} actor{'s' if r['actors'] != 1 else ''}) | {r['chunks']} | "
                  f"{r['wall_s']} | {r['ray_start_s']} | {r['chunks_per_s']} | {r['chunks_per_s_incl_start']} | "
                  f"{r['process_s']} | {r['peak_rss_mib']} | {r['load_before']} → {r['load_after']} |")
        query = {}
        first = tmp / f"{rows[0]['engine']}.lance" if rows else None
        if first is not None and first.exists():
            query["health_s"], query["health_rows"] = _time_health(first)
            print(f"\nhealth over the {rows[0]['engine']} dataset ({query['health_rows']} chunks, streamed): "
                  f"{query['health_s']:.2f} s")
        if args.query_rows:
            query.update(_time_scan(tmp / "scan.lance", args.query_rows))
            print(f"exact top-100, 94 queries, {args.query_rows} rows × 384 dims, streamed in batches of 65,536: "
                  f"{query['scan_s']:.2f} s ({query['scan_ms_per_query']:.1f} ms a query), "
                  f"peak RSS +{query['scan_rss_mib']:.0f} MiB")
        if args.json:
            Path(args.json).write_text(json.dumps({"model": args.model, "chunks": args.chunks, "rows": rows,
                                                   "query": query}, indent=2), encoding="utf-8")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
