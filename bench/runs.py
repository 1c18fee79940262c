"""A team's runs at the scale of a benchmark: this project's ``report`` beside ir_measures and ranx (issue 42).

Usage::

    make bench-runs                                   # 10k and 100k with the reference tools, then 1M alone
    .venv/bin/python bench/runs.py --sizes 10000      # one size
    .venv/bin/python bench/runs.py --sizes 100000 --million 0 --no-line

For each size it writes synthetic TREC files (``bench/runs_data.py``: 3 graded judgments among 5,000
documents and 100 ranked results a query, two runs) into a temporary folder, then runs, each in a fresh
process, one after the other:

- **this project**: ``python -m audit report --queries --qrels --run a= --run b= --json --no-history``
  (read, evaluate, Wilson intervals, the paired tests between the two runs, the JSON);
- **the line reader**: the same command with the columnar path refusing every file, whose JSON must be
  the same (``same JSON`` in the table);
- **ir_measures** (requirements-dev.txt): read the qrels and both runs, the same measures for each run (``Judged@k`` for our ``Hole@k``);
- **ranx** (``requirements-bench.txt``, when installed): read, evaluate once (numba compiles), again.

Then 1M queries (one run, 3 GB of text) with this project alone, the history record written as a team's
``report`` writes it (into the temporary folder; ``--no-million-history``: without), its figures checked against a
streamed computation written here (pandas' C parser in chunks, independent of the project's reader and engine).

Each line prints the child's wall time (from its start to its exit, imports included), its peak resident
memory (``ru_maxrss``) and the 1-minute load average (``os.getloadavg``) before it: the machine is shared.
Speed targets live here, not in the tests.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

KS = (1, 4, 8, 10, 20)

_OURS = """
import json, resource, sys
sys.argv = ["audit"] + {argv!r}
if {line!r}:
    from audit.sources.imported import columnar
    columnar.read_trec_columns = lambda *a, **k: None   # the line reader alone
from audit.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({{"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "code": code}}))
"""

_IR_MEASURES = """
import json, resource, time
import ir_measures
names = {names!r}
# Hole@k is ours: 1 - ir_measures' Judged@k (audit/evaluation/measures.py)
ms = [ir_measures.parse_measure("Judged" + n[4:] if n.startswith("Hole@") else n) for n in names]
t = time.perf_counter()
qrels = list(ir_measures.read_trec_qrels({qrels!r}))
out = {{}}
for run in {runs!r}:
    agg = ir_measures.calc_aggregate(ms, qrels, list(ir_measures.read_trec_run(run)))
    out[run] = {{n: (1 - agg[m] if n.startswith("Hole@") else agg[m]) for n, m in zip(names, ms)}}
print(json.dumps({{"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "figures": out,
                  "in_process_s": time.perf_counter() - t}}))
"""

_RANX = """
import json, resource, time
from ranx import Qrels, Run, evaluate
metrics = [f"hit_rate@{{k}}" for k in {ks!r}] + [f"ndcg@{{k}}" for k in {ks!r}] + ["mrr@20"]
t = time.perf_counter()
qrels = Qrels.from_file({qrels!r}, kind="trec")
runs = [Run.from_file(r, kind="trec") for r in {runs!r}]
read = time.perf_counter() - t
t = time.perf_counter()
first = [evaluate(qrels, r, metrics) for r in runs]
first_s = time.perf_counter() - t
t = time.perf_counter()
again = [evaluate(qrels, r, metrics) for r in runs]
again_s = time.perf_counter() - t
print(json.dumps({{"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "read_s": read,
                  "first_s": first_s, "again_s": again_s}}))
"""


def _child(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; its last stdout line is JSON. Adds ``wall_s`` and ``load``."""
    load = os.getloadavg()[0]
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"child failed ({p.returncode}): {p.stderr[-2000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return {**out, "wall_s": wall, "load": load}


def ours(paths: dict, json_out: Path, line: bool = False, runs=("a", "b"), history: Path | None = None) -> dict:
    """This project's ``report`` in a fresh process; ``history``: the folder (``AUDIT_HOME``) whose history.sqlite
    receives the record (the record is built and written in the same process), else ``--no-history``."""
    argv = ["report", "--queries", str(paths["queries"]), "--qrels", str(paths["qrels"])]
    for r in runs:
        argv += ["--run", f"{r}={paths[r]}"]
    argv += ["--json", str(json_out)] + ([] if history else ["--no-history"])
    env = {"PYTHONPATH": str(ROOT)} | ({"AUDIT_HOME": str(history), "AUDIT_HISTORY": "on"} if history else
                                        {"AUDIT_HISTORY": "off"})
    return _child(_OURS.format(argv=argv, line=line), env)


def names() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from audit.evaluation.measures import measure_names

    return list(measure_names())


def streamed_figures(qrels: Path, run: Path, chunk_lines: int = 2_000_000) -> dict:
    """Success@k, RR@20 and nDCG@10 means of a run file grouped by query, streamed (independent check).

    pandas' C parser reads ``chunk_lines`` lines at a time (the last query of a chunk is carried to the
    next); each query is ordered as trec_eval orders it (float32 score descending, docid descending) and
    scored against the qrels (grade >= 1 relevant, gain = grade). The means are ``math.fsum`` / n over the
    qrels' queries (a judged query the run misses scores 0).
    """
    import numpy as np
    import pandas as pd

    qr = pd.read_csv(qrels, sep=r"\s+", header=None, names=["q", "it", "d", "g"], dtype={"q": str, "d": str})
    judged = {(q, d): g for q, d, g in zip(qr.q, qr.d, qr.g)}
    ideal = {}
    for q, g in qr.groupby("q").g:
        gains = sorted((max(int(x), 0) for x in g), reverse=True)
        ideal[q] = [sum(v / math.log2(r + 2) for r, v in enumerate(gains[:k])) for k in (10,)]
    per = {f"Success@{k}": [] for k in KS} | {"RR@20": [], "nDCG@10": []}
    seen: set = set()

    def score(c: pd.DataFrame) -> None:
        # trec_eval's order within each query: float32 score descending, docid descending (sort is stable)
        c = c.sort_values(["q", "s32", "d"], ascending=[True, False, False], kind="mergesort")
        c["rank"] = c.groupby("q", sort=False).cumcount() + 1
        c["g"] = [judged.get(k) for k in zip(c.q, c.d)]
        seen.update(c.q.unique())
        hits = c[c.g.notna()]
        first = hits[hits.g >= 1].groupby("q")["rank"].min()
        top = hits[hits["rank"] <= 10]
        dcg = {}
        for q, g, r in zip(top.q, top.g, top["rank"]):  # rank order within a query: summed as trec_eval sums
            dcg[q] = dcg.get(q, 0) + max(int(g), 0) / math.log2(r + 1)
        for q in c.q.unique():
            if q not in ideal:
                continue
            f = first.get(q)
            for k in KS:
                per[f"Success@{k}"].append(1.0 if f is not None and f <= k else 0.0)
            per["RR@20"].append(1.0 / f if f is not None and f <= 20 else 0.0)
            per["nDCG@10"].append(dcg.get(q, 0) / ideal[q][0] if ideal[q][0] > 0 else 0.0)

    carry = None
    for chunk in pd.read_csv(run, sep=r"\s+", header=None, names=["q", "q0", "d", "r", "s", "t"],
                             dtype={"q": str, "d": str, "s": np.float64}, chunksize=chunk_lines,
                             usecols=["q", "d", "s"]):
        chunk["s32"] = chunk.s.astype(np.float32)
        if carry is not None:
            chunk = pd.concat([carry, chunk])
        last = chunk.q.iat[-1]
        carry = chunk[chunk.q == last]
        score(chunk[chunk.q != last].copy())
    if carry is not None and len(carry):
        score(carry.copy())
    missing = [q for q in ideal if q not in seen]
    for q in missing:  # a judged query the run misses scores 0
        for v in per.values():
            v.append(0.0)
    n = len(ideal)
    return {name: math.fsum(v) / n for name, v in per.items()} | {"missing": len(missing)}


def _row(label: str, r: dict, base: float | None = None) -> str:
    ratio = f"{base / r['wall_s']:.1f}×" if base else ""
    return f"| {label} | {r['wall_s']:.1f} s | {r['rss_mb']:,.0f} MB | {r['load']:.1f} | {ratio} |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="query counts run with the reference tools")
    ap.add_argument("--million", type=int, default=1_000_000, help="queries of the last case, this project alone "
                    "(0: skip)")
    ap.add_argument("--no-line", action="store_true", help="skip the line reader (slow at 100k)")
    ap.add_argument("--million-history", action=argparse.BooleanOptionalAction, default=True,
                    help="the last case writes its history record (into the temporary folder), as a team's report does")
    ap.add_argument("--ranx-sizes", default=None, help="the sizes ranx runs at (default every size of --sizes)")
    ap.add_argument("--keep", default=None, help="folder for the files (default a temporary one, removed)")
    a = ap.parse_args(argv)
    from runs_data import write_files

    tmp = tempfile.TemporaryDirectory() if a.keep is None else None
    base = Path(a.keep or tmp.name)
    print(f"# runs benchmark · {os.cpu_count()} CPUs · Python {sys.version.split()[0]} · load at start "
          f"{os.getloadavg()[0]:.1f}\n")
    for n in [int(x) for x in a.sizes.split(",") if x]:
        folder = base / f"q{n}"
        t = time.perf_counter()
        paths = write_files(folder, n)
        size = sum(paths[r].stat().st_size for r in ("a", "b")) / 1e6
        print(f"## {n:,} queries × 100, two runs ({size:,.0f} MB of run text; written in "
              f"{time.perf_counter() - t:.0f} s)\n")
        print("| work | wall | peak memory | load before | ir_measures ÷ this |")
        print("|---|---|---|---|---|")
        ir = _child(_IR_MEASURES.format(names=names(), qrels=str(paths["qrels"]),
                                        runs=[str(paths["a"]), str(paths["b"])]))
        print(_row(f"ir_measures 0.4.3: read, {len(names())} measures × 2 runs", ir), flush=True)
        fast = ours(paths, folder / "fast.json")
        print(_row("this project: `report` (columnar reader)", fast, ir["wall_s"]), flush=True)
        if not a.no_line:
            line = ours(paths, folder / "line.json", line=True)
            same = (folder / "fast.json").read_bytes() == (folder / "line.json").read_bytes()
            print(_row(f"this project, line reader (same JSON: {same})", line, ir["wall_s"]), flush=True)
        try:
            import ranx  # noqa: F401  (requirements-bench.txt)
        except ImportError:
            print("| ranx | not installed (pip install -r requirements-bench.txt) | | | |")
        else:
            if a.ranx_sizes is None or str(n) in a.ranx_sizes.split(","):
                rx = _child(_RANX.format(ks=list(KS), qrels=str(paths["qrels"]),
                                         runs=[str(paths["a"]), str(paths["b"])]))
                print(_row(f"ranx 0.3.21 (read {rx['read_s']:.1f} s, first evaluate {rx['first_s']:.1f} s, "
                           f"again {rx['again_s']:.2f} s)", rx, ir["wall_s"]), flush=True)
        data = json.loads((folder / "fast.json").read_text())
        worst, tied, compared = 0.0, 0.0, 0
        for res in data["results"]:
            theirs = ir["figures"][str(paths[res["name"]])]
            for m, v in theirs.items():
                if m.startswith(("RR@", "Hole@")):  # ir_measures breaks ties the other way there (definitions.md)
                    tied = max(tied, abs(res[m] - v))
                else:
                    worst = max(worst, abs(res[m] - v))
                    compared += 1
        print(f"\nlargest |ours − ir_measures| over the {compared} figures but RR@k and Hole@k: {worst:.1e}; "
              f"RR@k and Hole@k (against 1 − Judged@k; ties ordered by chunk id ascending there): {tied:.1e}\n",
              flush=True)
    if a.million:
        n = a.million
        folder = base / f"q{n}"
        t = time.perf_counter()
        paths = write_files(folder, n)
        print(f"## {n:,} queries × 100, one run ({paths['a'].stat().st_size / 1e9:.1f} GB; written in "
              f"{time.perf_counter() - t:.0f} s)\n")
        home = folder / "home" if a.million_history else None
        big = ours(paths, folder / "fast.json", runs=("a",), history=home)
        print("| work | wall | peak memory | load before | |\n|---|---|---|---|---|")
        print(_row("this project: `report` (columnar reader" + (", history record written)" if home else ")"), big),
              flush=True)
        t = time.perf_counter()
        ref = streamed_figures(paths["qrels"], paths["a"])
        res = json.loads((folder / "fast.json").read_text())["results"][0]
        diffs = {m: abs(res[m] - v) for m, v in ref.items() if m != "missing"}
        print(f"\nstreamed check ({time.perf_counter() - t:.0f} s): " +
              ", ".join(f"{m} {res[m]:.6f} (Δ {d:.0e})" for m, d in diffs.items()))
        print(f"equal to the streamed computation: {all(d == 0.0 for d in diffs.values())}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
