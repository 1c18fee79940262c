"""What writing a ground truth costs on the built-in corpus (issue 31): the Ground truth page's checks per keystroke
and ``groundtruth locate`` per answer.

Usage::

    .venv/bin/python bench/groundtruth.py            # ~1 minute on 2 cores
    .venv/bin/python bench/groundtruth.py --json out.json

On ``python-reference`` (79 documents, 461,261 characters) with presets A-F chunked once:

1. ``CorpusViews``: every document's matching view and offset map (once per corpus; cached by the page);
2. ``find_passages`` for a 3-word search (case-folded views; the first call folds every document);
3. ``check_needle`` of each of the 32 built-in needles with the six strategies (what the page runs after each
   change of the picked sentence or trim), p50 / p95 ms;
4. ``locate_answer`` of each built-in needle as an answer in four forms: its canonical text (exact), with its spaces
   doubled and a line break (matching view), with one letter changed (fuzzy, rapidfuzz partial ratio), and 10
   answers that are in no document (not found): p50 / p95 ms per answer and what was found.

Wall clock on this machine, shared with other work: the load average before and after is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f}/{b:.2f}/{c:.2f}"


def _ms(samples: list[float]) -> dict:
    s = sorted(samples)
    return {"n": len(s), "p50_ms": round(statistics.median(s), 2),
            "p95_ms": round(s[min(len(s) - 1, int(0.95 * len(s)))], 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the figures as JSON")
    a = ap.parse_args(argv)

    from audit.authoring.checks import CorpusViews, StrategyChunks, check_needle, find_passages
    from audit.authoring.locate import QAPair, locate_answer
    from audit.chunking import PRESETS, chunk_corpus
    from audit.groundtruth import load_ground_truth
    from audit.ingest import load_builtin

    out = {"cores": os.cpu_count(), "load_before": _load()}
    corpus = load_builtin()
    gt = load_ground_truth(corpus)
    strategies = [StrategyChunks(n, s.description, chunk_corpus(corpus, s)) for n, s in PRESETS.items()]
    t = time.perf_counter()
    views = CorpusViews(corpus)
    out["corpus_views_ms"] = round((time.perf_counter() - t) * 1000, 1)
    t = time.perf_counter()
    find_passages(views, "the default value")
    out["find_passages_first_ms"] = round((time.perf_counter() - t) * 1000, 1)
    searches = []
    for n in gt.needles:
        words = " ".join(n.key.split()[1:4])
        t = time.perf_counter()
        find_passages(views, words)
        searches.append((time.perf_counter() - t) * 1000)
    out["find_passages"] = _ms(searches)
    checks = []
    for n in gt.needles:
        t = time.perf_counter()
        c = check_needle(n.needle, views, strategies)
        checks.append((time.perf_counter() - t) * 1000)
        assert c.accepted, (n.id, c.reason)
    out["check_needle_6_strategies"] = _ms(checks)

    rng = random.Random(0)

    def typo(s: str) -> str:
        i = rng.randrange(len(s) // 3, 2 * len(s) // 3)
        return s[:i] + ("x" if s[i] != "x" else "y") + s[i + 1:]

    forms = {
        "exact": [corpus.get(gt.locations[n.id].doc_id).text[gt.locations[n.id].start:gt.locations[n.id].end]
                  for n in gt.needles],  # the canonical text itself, line breaks included
        "matching view": [n.key.replace(" ", "  ", 3).replace(" ", "\n", 1) for n in gt.needles],
        "fuzzy": [typo(n.key) for n in gt.needles],
        "not found": [f"Quarterly revenue of the bakery grew by {k} percent after the new oven arrived."
                      for k in range(10)],
    }
    for name, answers in forms.items():
        times, got, same = [], {}, 0
        for i, ans in enumerate(answers):
            t = time.perf_counter()
            loc = locate_answer(QAPair(i + 1, "", "q", "", ans), views)
            times.append((time.perf_counter() - t) * 1000)
            got[loc.method] = got.get(loc.method, 0) + 1
            same += i < len(gt.needles) and loc.needle == gt.needles[i].key and name != "not found"
        out[f"locate_{name.replace(' ', '_')}"] = {**_ms(times), "found_as": got,
                                                   "proposal_is_the_needle": same}
    out["load_after"] = _load()
    for k, v in out.items():
        print(f"{k:28} {v}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
