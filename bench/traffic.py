"""Reading production traffic at scale: a 200,000-span OTLP export through ``read_traffic`` and the report.

Usage::

    .venv/bin/python bench/traffic.py                    # 200,000 RETRIEVER spans in batches of 1,000
    .venv/bin/python bench/traffic.py --spans 200000 2000000   # then 2,000,000 (2.8 GB): `make bench-traffic`
    .venv/bin/python bench/traffic.py --spans 20000 --json out.json
    .venv/bin/python bench/traffic.py --spans 200000 --shards 8   # 8 shards of 25,000: one process, then Ray

1. makes one batch of ``--batch`` retrievals with the OpenTelemetry SDK (OpenInference names, 4 documents
   each with id, score and metadata, scores seeded), encodes it with the SDK's OTLP encoder and writes it as
   ``--spans / --batch`` request lines (each batch's span ids rewritten, so no two spans share an id);
2. reads the file in a fresh process (``read_traffic`` of the checkout this script is in, then the report at a
   cut with the estimate against synthetic labelled sets of 64 and 30 questions) and prints its wall time and
   peak resident memory (``ru_maxrss``) beside the file's size, with the load average before and after (a shared
   2-core machine: other processes move the numbers);
3. with several ``--spans``, does the same for each size in turn (one file on disk at a time) and prints how much
   resident memory each size added to the previous one.

With ``--shards N`` the spans are written as N files of ``--spans / N`` each (a day's shards, each its own
SDK batch and scores) and read three ways, each in a fresh process, one after the other: in one process
(``read_shards`` with the local engine, i.e. ``read_traffic``), on a local Ray (``--ray-cpus``, default 2; one
Ray Data task a shard), and on Ray again with N shards of one span each, whose wall time is the **fixed cost**
(Ray's start, the job's scheduling and its workers' first imports, for no work). The two reads of the shards must
give the same table (a digest of every column, problem and counter is compared; the run fails otherwise).
The memory printed is the driver's (Ray's workers, raylet and object store are other processes).

No figure here is a test: ``tests/test_traffic_scale.py`` (slow tier) checks only that memory does not
grow with the file; ``tests/test_traffic_shards.py`` that Ray gives the one process's table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPAN_ID = re.compile(r'"spanId": "([0-9a-f]{16})"')
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # this checkout's package, not whichever one the environment installed


def make_export(path: Path, n_spans: int, batch: int = 1000, seed: int = 0) -> Path:
    """Write ``n_spans`` RETRIEVER spans as ``ceil(n_spans / batch)`` OTLP request lines (SDK-made, see above)."""
    import numpy as np
    from otlpmaker import Doc, Retrieval, request_dict, spans

    rng = np.random.default_rng(seed)
    t0 = 1_714_557_600 * 10**9
    made = 0
    with open(path, "w", encoding="utf-8") as f:
        template = None
        while made < n_spans:
            b = min(batch, n_spans - made)
            if template is None or b != batch:
                rs = [Retrieval(f"question {i}", [Doc(f"c{j}", float(np.round(rng.uniform(0.1, 0.9), 4)),
                                                      metadata={"doc_id": f"d{j}.md"}) for j in range(4)],
                                t0 + i * 10**9) for i in range(b)]
                template = json.dumps(request_dict(spans(rs, parents=False)))
            # a fresh span-id prefix per batch: the same spans under other ids (16 hex digits)
            k = made // batch
            f.write(_SPAN_ID.sub(lambda m: f'"spanId": "{k % 65536:04x}{m[1][4:]}"', template) + "\n")
            made += b
    return path


def _child(path: str, score: str) -> None:
    """Runs in a fresh process: read, report, print one JSON line of figures."""
    import resource

    sys.path.insert(0, str(ROOT))  # the checkout this script is in, whatever the environment's editable install

    import numpy as np

    from audit.report.traffic import build_traffic_report
    from audit.traffic.labelled import Labelled, query_distances_from_gate
    from audit.traffic.table import read_traffic

    t = time.perf_counter()
    table = read_traffic([path], score)
    read_s = time.perf_counter() - t
    rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rng = np.random.default_rng(1)
    qs = [query_distances_from_gate(f"i{i}", True, [float(-g)]) for i, g in enumerate(rng.uniform(0.5, 0.9, 64))]
    qs += [query_distances_from_gate(f"o{i}", False, [float(-g)]) for i, g in enumerate(rng.uniform(0.1, 0.6, 30))]
    t = time.perf_counter()
    rep = build_traffic_report(table, 0.5, "given", Labelled("synthetic", "similarity", tuple(qs)))
    report_s = time.perf_counter() - t
    print(json.dumps({"questions": len(table), "problems": table.n_problems, "read_s": read_s,
                      "rss_after_read_mib": rss_read, "report_s": report_s,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "no_answer": rep.no_answer()[0], "share_ood": rep.estimate.share_out_of_domain.estimate}))


def measure(path: Path, score: str = "similarity") -> dict:
    """Read ``path`` in a fresh interpreter; the child's figures plus the file's size (MiB)."""
    out = subprocess.run([sys.executable, __file__, "--child", str(path), score], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    d = json.loads(out.stdout.strip().splitlines()[-1])
    d["file_mib"] = path.stat().st_size / 2**20
    return d


def _digest(table) -> str:
    """SHA-256 of every column, problem and counter of a TrafficTable: two reads equal exactly when it is."""
    import hashlib

    h = hashlib.sha256()
    for name in ("time_ns", "gate", "n_results", "has_text", "bad_content", "file", "offset", "item", "line"):
        a = getattr(table, name)
        h.update(f"{name}{a.dtype}{a.shape}".encode() + a.tobytes())
    h.update(repr([str(p) for p in table.problems]).encode())
    h.update(repr((table.n_problems, sorted(table.skipped.items()), sorted(table.formats.items()), table.duplicates,
                   table.duplicate_examples, sorted(table.compressed), sorted(map(repr, table.systems.items())))).encode())
    return h.hexdigest()


def _shards_child(folder: str, engine: str, cpus: int) -> None:
    """Runs in a fresh process: read the folder's shards with ``engine``, print one JSON line of figures."""
    import resource

    sys.path.insert(0, str(ROOT))  # the checkout this script is in, whatever the environment's editable install
    from audit.traffic.shards import read_shards

    load = os.getloadavg()
    got = read_shards([folder], "similarity", engine=engine, num_cpus=cpus)
    print(json.dumps({"engine": engine, "shards": got.shards, "questions": len(got.table), "wall_s": got.wall_s,
                      "ray_start_s": got.ray_start_s, "digest": _digest(got.table), "load_before": load,
                      "load_after": os.getloadavg(),
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def measure_shards(folder: Path, engine: str, cpus: int) -> dict:
    """Read ``folder``'s shards in a fresh interpreter with ``engine``; the child's figures."""
    out = subprocess.run([sys.executable, __file__, "--shards-child", str(folder), engine, str(cpus)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def shards_main(a) -> int:
    """``--shards N``: N files of spans / N each, read in one process and on Ray, and the fixed cost (see above)."""
    per = a.spans[0] // a.shards
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        day, empty = Path(d) / "day", Path(d) / "tiny"
        day.mkdir()
        empty.mkdir()
        t = time.perf_counter()
        for i in range(a.shards):
            make_export(day / f"traces-{i:04d}.json", per, min(a.batch, per), seed=i)
            make_export(empty / f"traces-{i:04d}.json", 1, 1, seed=i)
        made_s = time.perf_counter() - t
        mib = sum(p.stat().st_size for p in day.iterdir()) / 2**20
        runs = [measure_shards(day, "local", a.ray_cpus), measure_shards(day, "ray", a.ray_cpus),
                measure_shards(empty, "ray", a.ray_cpus)]
    local, ray, fixed = runs
    if local["digest"] != ray["digest"]:
        print(f"Ray read another table than one process: {local['digest']} != {ray['digest']}", file=sys.stderr)
        return 1
    print(f"{a.shards} shards of {per:,} RETRIEVER spans ({a.shards * per:,} in all, {mib:.0f} MiB; generated in "
          f"{made_s:.1f} s); Ray: a local Ray with {a.ray_cpus} logical CPUs, one Ray Data task a shard")
    print("| read | wall s | of which Ray start s | questions | driver peak RSS MiB | 1-min load before → after |")
    print("|---|---|---|---|---|---|")
    for label, r in (("one process", local), (f"Ray, {a.shards} tasks", ray),
                     (f"Ray, {a.shards} shards of 1 span (the fixed cost)", fixed)):
        print(f"| {label} | {r['wall_s']:.1f} | {r['ray_start_s']:.1f} | {r['questions']:,} | "
              f"{r['peak_rss_mib']:.0f} | {r['load_before'][0]:.2f} → {r['load_after'][0]:.2f} |")
    print(f"same table: yes (digest {local['digest'][:12]}); fixed cost of Ray {fixed['wall_s']:.1f} s "
          f"({fixed['ray_start_s']:.1f} s starting it); Ray minus its fixed cost {ray['wall_s'] - fixed['wall_s']:.1f} s "
          f"against {local['wall_s']:.1f} s in one process")
    print(f"machine: {os.cpu_count()} cores, load {load_before[0]:.2f} → {os.getloadavg()[0]:.2f} (1-minute average)")
    if a.json:
        Path(a.json).write_text(json.dumps({"shards": a.shards, "spans_per_shard": per, "mib": mib,
                                            "generate_s": made_s, "runs": runs}, indent=1), encoding="utf-8")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spans", type=int, nargs="+", default=[200_000], help="sizes, in turn (default 200,000)")
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--json")
    p.add_argument("--shards", type=int, default=0, help="write the spans as this many files and read them in one "
                                                           "process and on Ray (see above)")
    p.add_argument("--ray-cpus", type=int, default=2, help="with --shards: logical CPUs of the local Ray (default 2)")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--shards-child", nargs=3, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        _child(*a.child)
        return 0
    if a.shards_child:
        folder, engine, cpus = a.shards_child
        _shards_child(folder, engine, int(cpus))
        return 0
    if a.shards:
        return shards_main(a)
    runs = []
    for n in a.spans:
        load_before = os.getloadavg()
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "traces.json"
            t = time.perf_counter()
            make_export(path, n, a.batch)
            made_s = time.perf_counter() - t
            r = measure(path)
        r.update({"spans": n, "batch": a.batch, "generate_s": made_s, "cores": os.cpu_count(),
                  "load_before": load_before, "load_after": os.getloadavg()})
        print(f"{n:,} RETRIEVER spans in {-(-n // a.batch):,} request lines: {r['file_mib']:,.0f} MiB "
              f"(generated in {made_s:.1f} s)")
        print(f"read {r['questions']:,} questions in {r['read_s']:.1f} s ({1e6 * r['read_s'] / r['questions']:.0f} µs "
              f"a span); resident memory after reading {r['rss_after_read_mib']:.0f} MiB")
        print(f"report with the estimate (B = 1000): {r['report_s']:.1f} s; peak resident memory "
              f"{r['peak_rss_mib']:.0f} MiB")
        if runs:
            prev = runs[-1]
            grown = r["rss_after_read_mib"] - prev["rss_after_read_mib"]
            more = r["questions"] - prev["questions"]
            print(f"memory after reading grew {grown:.0f} MiB for {more:,} more questions "
                  f"({grown * 2**20 / more:.0f} bytes a question) and {r['file_mib'] - prev['file_mib']:,.0f} MiB more "
                  "on disk")
        print(f"machine: {r['cores']} cores, load {load_before[0]:.2f} → {r['load_after'][0]:.2f} (1-minute average)")
        runs.append(r)
    if a.json:
        Path(a.json).write_text(json.dumps(runs if len(runs) > 1 else runs[0], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
