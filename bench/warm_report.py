"""Warm ``python -m audit report``: wall and CPU seconds, heavy imports, and where the time goes (a benchmark).

Fills a private ``AUDIT_HOME`` once (the cold run, not timed unless asked), then runs the report
``--runs`` times in fresh processes and prints, for each: wall seconds, CPU seconds (user + system
of the child: on a shared machine the wall clock carries the other processes, the CPU time much
less), peak RSS, the 1-minute load average before and after, and which heavy libraries the run
imported (torch, scipy.stats, sklearn, pandas...). ``--profile`` adds one run under pyinstrument
and prints its top frames. ``HF_HUB_OFFLINE=1`` is set so an absent cross-encoder fails at once
instead of retrying the network (the rerank column then says why).

    python bench/warm_report.py [--model hashing] [--runs 3] [--profile] [--home DIR] [--json OUT]
                                [-- extra report arguments]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Libraries a warm report should not need (or need only for a part of it): reported per run.
HEAVY = ("torch", "transformers", "sentence_transformers", "scipy", "scipy.stats", "scipy.sparse", "sklearn",
         "pandas", "bm25s", "huggingface_hub", "onnxruntime", "altair", "pyarrow")

_PROBE = ("import atexit, json, sys, runpy\n"
          "atexit.register(lambda: print('BENCH-MODULES ' + json.dumps(sorted(m for m in {heavy!r} "
          "if m in sys.modules)), file=sys.stderr))\n"
          "sys.argv = ['audit'] + sys.argv[1:]\n"
          "runpy.run_module('audit', run_name='__main__', alter_sys=True)\n")


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def run_once(args: list[str], env: dict) -> dict:
    """One report in a child process: wall s, CPU s (user + sys), peak RSS MiB, heavy modules, exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = _load()
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY)] + args, cwd=ROOT, env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    mods = []
    for line in p.stderr.splitlines():
        if line.startswith("BENCH-MODULES "):
            mods = json.loads(line.split(" ", 1)[1])
    if p.returncode not in (0, 1):
        print(p.stderr[-2000:], file=sys.stderr)
    return {"wall_s": round(wall, 2),
            "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
            "peak_rss_mib": round(after.ru_maxrss / 1024, 0), "imported": mods, "exit": p.returncode,
            "load_before": load0, "load_after": _load(), "stdout": p.stdout}


def profile_once(args: list[str], env: dict, top: int) -> str:
    """One report under pyinstrument (sampling, 1 ms); its text report, the first ``top`` lines."""
    p = subprocess.run([sys.executable, "-m", "pyinstrument", "-i", "0.001", "-m", "audit", *args], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    start = next((i for i, x in enumerate(lines) if "Recorded:" in x), 0)
    return "\n".join(lines[start:start + top])


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="hashing")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="one more run under pyinstrument, its top frames")
    ap.add_argument("--top", type=int, default=90, help="lines of the profile to print")
    ap.add_argument("--home", help="an AUDIT_HOME to use (default: a new temporary one, filled by a cold run)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("extra", nargs="*", help="more report arguments (after --)")
    a = ap.parse_args(argv)
    home = Path(a.home) if a.home else Path(tempfile.mkdtemp(prefix="audit-warm-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIT_")}
    env.update(AUDIT_HOME=str(home), HF_HUB_OFFLINE="1")
    args = ["report", "--model", a.model, "--quiet", *a.extra]
    cold = None
    if not any(home.glob("index-*.sqlite")):
        print(f"[warm_report] cold run to fill {home} ...", file=sys.stderr)
        cold = run_once(args, env)
    runs = [run_once(args, env) for _ in range(a.runs)]
    res = {"model": a.model, "args": args, "cpus": os.cpu_count(),
           "cold": {k: v for k, v in cold.items() if k != "stdout"} if cold else None,
           "warm": [{k: v for k, v in r.items() if k != "stdout"} for r in runs]}
    print("| run | wall s | CPU s | peak RSS MiB | load before → after | heavy libraries imported | exit |")
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(runs, 1):
        print(f"| warm #{i} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['peak_rss_mib']:.0f} | "
              f"{r['load_before']} → {r['load_after']} | {', '.join(r['imported']) or 'none'} | {r['exit']} |")
    if a.profile:
        load0 = _load()
        res["profile"] = profile_once(args, env, a.top)
        res["profile_load"] = [load0, _load()]
        print(f"\npyinstrument, load {load0} → {_load()}:\n\n" + res["profile"])
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    main()
