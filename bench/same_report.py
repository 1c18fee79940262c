"""Compare two ``python -m audit report --json`` files, leaving out what the clock decides.

Usage: ``python bench/same_report.py BEFORE.json AFTER.json`` → prints ``same`` and exits 0, or
lists every differing path (at most 50) and exits 1. Left out: ``latency``, ``wall_seconds``,
``query_embedding_ms`` and the ``chunks`` columns "chunks embedded now" and "index build
(ms/chunk)" (issue 9's definition of "the same report").
"""

from __future__ import annotations

import json
import math
import sys

VOLATILE = ("latency", "wall_seconds", "query_embedding_ms")
VOLATILE_CHUNK_COLUMNS = ("chunks embedded now", "index build (ms/chunk)")


def normalised(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k not in VOLATILE}
    out["chunks"] = [{k: v for k, v in r.items() if k not in VOLATILE_CHUNK_COLUMNS} for r in out.get("chunks", [])]
    return out


def differences(a, b, path="") -> list[str]:
    """Paths where ``a`` and ``b`` differ (floats compared exactly; NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'after' if k not in a else 'before'}")
            else:
                out += differences(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items before, {len(b)} after"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b else [f"{path}: {a!r} → {b!r}"]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    a, b = (normalised(json.load(open(p, encoding="utf-8"))) for p in argv)
    diff = differences(a, b)
    if not diff:
        print("same")
        return 0
    print("\n".join(diff[:50]) + (f"\n… {len(diff) - 50} more" if len(diff) > 50 else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
