"""Where the answer was lost, at scale: 200,000 whole traces (retriever, reranker, LLM) through ``report --stages``.

Usage::

    .venv/bin/python bench/stages.py                     # 200,000 traces in batches of 1,000
    .venv/bin/python bench/stages.py --traces 20000 --json out.json

1. makes one batch of ``--batch`` traces with the OpenTelemetry SDK and OpenInference's names
   (``tests/otlpmaker.py``: a CHAIN root over a RETRIEVER with 3 documents, a RERANKER keeping 2, an LLM span
   whose prompt template variables hold the kept texts), a fifth of them losing their relevant chunk at each of
   not_retrieved, dropped_by_reranker, not_in_prompt, truncated and reached_prompt (half on service.version
   1.0, half on 2.0); encodes it with the SDK's OTLP encoder and writes it as ``--traces / --batch`` request
   lines, each batch's trace and span ids rewritten so no two traces share an id;
2. reads the file in a fresh process (:func:`audit.report.stages.build_stages_report` over qrels judging the
   batch's 1,000 questions) and prints its wall time and peak resident memory (``ru_maxrss``) beside the file's
   size, with the load average before and after (a shared 2-core machine: other processes move the numbers),
   and checks that every stage holds exactly a fifth of the traces.
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
_TRACE_ID = re.compile(r'"traceId": "([0-9a-f]{32})"')
_SPAN_ID = re.compile(r'"(spanId|parentSpanId)": "([0-9a-f]{16})"')
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
STAGES = ("not_retrieved", "dropped_by_reranker", "not_in_prompt", "truncated", "reached_prompt")
T0 = 1_714_557_600 * 10**9


def _text(c: str) -> str:
    return f"Chunk {c}: how the {c} setting is changed, and what it does to the service, step by step."


def batch_turns(n: int) -> list:
    """``n`` traces, trace ``i`` losing its relevant chunk ``r{i}`` at ``STAGES[i % 5]``."""
    from otlpmaker import Doc, Retrieval, Turn

    out = []
    for i in range(n):
        stage, rel, x1, x2 = STAGES[i % 5], f"r{i}", f"x{i}a", f"x{i}b"
        retrieved = [x1, x2, "y"] if stage == "not_retrieved" else [x1, rel, x2]
        kept = [x1, x2] if stage in ("not_retrieved", "dropped_by_reranker") else [rel, x1]
        prompt = {"not_in_prompt": [x1], "truncated": [x1]}.get(stage, kept)
        texts = [_text(c) for c in prompt] + ([_text(rel)[:50]] if stage == "truncated" else [])
        out.append(Turn(Retrieval(f"question {i}", [Doc(c, 0.9 - 0.1 * j, _text(c)) for j, c in enumerate(retrieved)],
                                  T0 + i * 10**9),
                        [Doc(c, 5.0 - j) for j, c in enumerate(kept)], top_k=2,
                        prompt={"context": "\n\n".join(texts), "question": f"question {i}"}))
    return out


def make_export(path: Path, n_traces: int, batch: int = 1000) -> Path:
    """Write ``n_traces`` traces as ``ceil(n_traces / batch)`` request lines (SDK-made, ids rewritten per batch)."""
    from otlpmaker import request_dict, trace_spans

    turns = batch_turns(batch)
    half = batch // 2
    finished = trace_spans(turns[:half], version="1.0") + trace_spans(turns[half:], version="2.0")
    template = json.dumps(request_dict(finished))
    made = 0
    with open(path, "w", encoding="utf-8") as f:
        while made < n_traces:
            k = made // batch
            line = _TRACE_ID.sub(lambda m: f'"traceId": "{k:08x}{m[1][8:]}"', template)
            f.write(_SPAN_ID.sub(lambda m: f'"{m[1]}": "{k:06x}{m[2][6:]}"', line) + "\n")
            made += batch
    return path


def _child(path: str, batch: int) -> None:
    """Runs in a fresh process: read every trace, name the stages, print one JSON line of figures."""
    import resource

    from audit.evaluation.judgments import Qrels
    from audit.evaluation.stages import Judgments
    from audit.report.stages import build_stages_report
    from audit.traffic.traces import TraceReader

    queries = {f"q{i}": f"question {i}" for i in range(batch)}
    judgments = Judgments.from_qrels(queries, Qrels({f"q{i}": {f"r{i}": 1} for i in range(batch)}))
    rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    rep = build_stages_report(TraceReader([path]), judgments)
    read_s = time.perf_counter() - t
    print(json.dumps({"traces": rep.n_traces, "judged": rep.stages.n, "problems": rep.n_problems,
                      "counts": {s: c.share.successes for s, c in rep.stages.counts.items()},
                      "versions": {v: c.n for v, c in rep.stages.by_version.items()}, "read_s": read_s,
                      "rss_before_mib": rss_start,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def measure(path: Path, batch: int) -> dict:
    """Read ``path`` in a fresh interpreter; the child's figures plus the file's size (MiB)."""
    out = subprocess.run([sys.executable, __file__, "--child", str(path), str(batch)], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    d = json.loads(out.stdout.strip().splitlines()[-1])
    d["file_mib"] = path.stat().st_size / 2**20
    return d


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--traces", type=int, default=200_000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--json")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        _child(a.child[0], int(a.child[1]))
        return 0
    if a.traces % a.batch or a.batch % 10:
        p.error("--traces must be a multiple of --batch, and --batch of 10 (a fifth per stage, half per version)")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "traces.json"
        t = time.perf_counter()
        make_export(path, a.traces, a.batch)
        made_s = time.perf_counter() - t
        r = measure(path, a.batch)
    r.update({"traces_made": a.traces, "batch": a.batch, "generate_s": made_s, "cores": os.cpu_count(),
              "load_before": load_before, "load_after": os.getloadavg()})
    expected = {s: a.traces // 5 for s in STAGES}
    print(f"{a.traces:,} traces (4 spans each) in {a.traces // a.batch} request lines: {r['file_mib']:.0f} MiB "
          f"(generated in {made_s:.1f} s)")
    print(f"read and staged {r['traces']:,} traces in {r['read_s']:.1f} s "
          f"({1e6 * r['read_s'] / max(1, r['traces']):.0f} µs a trace); peak resident memory {r['peak_rss_mib']:.0f} MiB "
          f"(after imports {r['rss_before_mib']:.0f} MiB)")
    print(f"stages: {r['counts']} — {'as placed' if r['counts'] == expected else 'NOT as placed: ' + str(expected)}")
    print(f"machine: {r['cores']} cores, load {load_before[0]:.2f} → {r['load_after'][0]:.2f} (1-minute average)")
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1), encoding="utf-8")
    return 0 if r["counts"] == expected else 1


if __name__ == "__main__":
    raise SystemExit(main())
