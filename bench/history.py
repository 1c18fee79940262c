"""Cost of remembering an audit (issue 30): building a record, its size, appending it, reading it back, rebuilding
its run set, and the regression gate on it.

Usage::

    .venv/bin/python bench/history.py               # built-in corpus, strategies A-F × dense, bm25, hybrid
    .venv/bin/python bench/history.py --repeats 5

Wall clock on this machine, best of ``--repeats``; the load average (``os.getloadavg``, as ``uptime`` prints it)
is printed with the figures. The run set is made once with the fake ``hashing`` encoder (the record's cost does
not depend on the model); the history is a SQLite file in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def best(fn, repeats: int):
    out, t_best = None, float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t)
    return out, t_best * 1000.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args(argv)
    from audit.chunking import parse_strategies
    from audit.evaluation import evaluate
    from audit.evaluation.stats import wilson
    from audit.groundtruth import load_ground_truth
    from audit.history.gate import compare_to_baselines
    from audit.history.record import record_of, runset_of
    from audit.history.store import open_history
    from audit.ingest import load_builtin
    from audit.models import load_encoder
    from audit.sources import run_audit

    wilson(1, 2)  # its first call imports scipy: outside the timings
    corpus = load_builtin()
    rs = run_audit(corpus, load_ground_truth(corpus), parse_strategies("A,B,C,D,E,F"), load_encoder("hashing"),
                   ["dense", "bm25", "hybrid"], reranker=None)
    results = evaluate(rs)
    load_before = os.getloadavg()
    rec, t_rec = best(lambda: record_of(rs, results), a.repeats)
    body = json.dumps(rec.to_json()).encode()
    with tempfile.TemporaryDirectory() as d, open_history(os.path.join(d, "history.sqlite")) as h:
        rid, t_app = best(lambda: h.append(rec), a.repeats)
        got, t_get = best(lambda: h.get(rid), a.repeats)
    back, t_rs = best(lambda: runset_of(got), a.repeats)
    cur = got.with_id(rid + 1)
    _, t_gate = best(lambda: compare_to_baselines(cur, {s: got for s in cur.series}), a.repeats)
    print(f"load average before {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, after "
          + " / ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{len(rs.runs)} runs × {len(rs.queries)} queries")
    print(f"record_of: {t_rec:.0f} ms; record JSON {len(body) / 1e6:.2f} MB, stored (zlib 6) "
          f"{len(zlib.compress(body, 6)) / 1e6:.2f} MB")
    print(f"append: {t_app:.0f} ms; get: {t_get:.0f} ms; runset_of: {t_rs:.0f} ms; gate over {len(cur.series)} series: "
          f"{t_gate:.0f} ms")
    assert [r.aggregate() for r in evaluate(back)] == [r.aggregate() for r in results]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
