"""A chunking sweep's time per configuration with the packaged MiniLM (issue 56): ``python -m audit sweep``'s work on
the built-in corpus, cold (nothing in the embedding cache) and resumed (every configuration kept).

Usage::

    .venv/bin/python bench/sweep.py                       # 4 strategies × 2 retrievers, a few minutes on 2 cores
    .venv/bin/python bench/sweep.py --target 256,512 --overlap 0,64 --json out.json

A fresh ``$AUDIT_HOME`` (a temporary folder) so the embedding cache starts empty: every chunk text of every strategy
is embedded once (texts shared between configurations are embedded once). Printed: per configuration, its
strategy's build seconds (embedding and BM25, shared by its retrievers) and its median query milliseconds; the
sweep's wall seconds and seconds per configuration, cold and resumed; the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f}/{b:.2f}/{c:.2f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="256,512")
    p.add_argument("--overlap", default="0")
    p.add_argument("--header", default="on")
    p.add_argument("--cut", default="blind,boundaries")
    p.add_argument("--retrievers", default="dense,bm25")
    p.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    p.add_argument("--json")
    a = p.parse_args(argv)
    home = tempfile.mkdtemp(prefix="sweep-bench-")
    os.environ["AUDIT_HOME"] = home
    from audit.evaluation.sweep import SweepStore, config_grid, read_sweep
    from audit.groundtruth import load_ground_truth
    from audit.index import EmbeddingCache
    from audit.ingest import load_corpus
    from audit.models import load_encoder
    from audit.sources.sweep import run_sweep

    grid = config_grid([int(x) for x in a.target.split(",")], [int(x) for x in a.overlap.split(",")],
                       [h == "on" for h in a.header.split(",")], a.cut.split(","), a.retrievers.split(","))
    corpus = load_corpus("python-reference")
    gt = load_ground_truth(corpus, None, None)
    enc = load_encoder(a.model)
    out = {"model": enc.name, "configurations": len(grid), "load_before": _load()}
    cache = EmbeddingCache(Path(home) / "cache.sqlite")
    store = Path(home) / "sweep.json"
    t = time.perf_counter()
    rows = run_sweep(corpus, gt, grid, enc, cache=cache, store=SweepStore(store))
    out["cold_s"] = time.perf_counter() - t
    t = time.perf_counter()
    run_sweep(corpus, gt, grid, enc, cache=cache, store=SweepStore(store))
    out["resumed_s"] = time.perf_counter() - t
    out["load_after"] = _load()
    reading = read_sweep(rows, 8)
    out["rows"] = [{"configuration": r.config.label, "chunks": r.chunks, "embedded_tokens": r.embedded_tokens,
                    "build_s": round(r.build_s, 2), "query_ms": round(r.query_ms, 2),
                    "Success@8": str(r.success(8))} for r in rows]
    out["cheapest"] = rows[reading.cheapest].config.label
    out["best"] = rows[reading.best].config.label
    print(f"{enc.name}: {len(grid)} configurations; cold {out['cold_s']:.1f} s "
          f"({out['cold_s'] / len(grid):.1f} s per configuration), resumed {out['resumed_s']:.2f} s; "
          f"load {out['load_before']} → {out['load_after']}")
    for r in out["rows"]:
        print(f"  {r['configuration']:<34} chunks {r['chunks']:>5}  tokens {r['embedded_tokens']:>7}  "
              f"build {r['build_s']:>6.2f} s  query {r['query_ms']:>5.2f} ms  Success@8 {r['Success@8']}")
    print(f"best {out['best']}; cheapest not distinguishable from it: {out['cheapest']}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
