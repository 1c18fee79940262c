"""Write traffic.jsonl: a synthetic query log of the `before` system, made from this example's own questions.

Nothing here is real traffic. Each line is one of the example's questions (in domain: queries.tsv;
out of domain: ood-queries.tsv) asked at a time on 2024-05-01 or 2024-05-02 (UTC), and its results are
the `before` run's ranking for that question (before.trec, ood-before.trec: cosine distances) with each
distance moved by a seeded normal noise (standard deviation 0.02, clipped to [0, 2], 3 decimals) and the
chunk's content, document and offsets from chunks.jsonl — so the two wrong chunks (b2, k4) show up in the
content check. The true mixture is known: 60 of 200 questions (30 %) are out of domain, 18 of 100 on the
first day and 42 of 100 on the second (a drift). q9 has no ranking in before.trec: its lines have no result.

Run from the repository's root: ``python data/example/make_traffic.py`` (the standard library only; the
output is the same on every machine: ``random.Random(29)``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 29
PER_DAY = 100
OOD_PER_DAY = (18, 42)
NOISE = 0.02


def _tsv(path: Path) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def _run(path: Path) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, cid, _, score, _ = line.split()
        out.setdefault(qid, []).append((cid, float(score)))
    return out


def main() -> None:
    rng = random.Random(SEED)
    queries, ood = _tsv(HERE / "queries.tsv"), _tsv(HERE / "ood-queries.tsv")
    run = {**_run(HERE / "before.trec"), **_run(HERE / "ood-before.trec")}
    chunks = {c["chunk_id"]: c for c in map(json.loads, (HERE / "chunks.jsonl").read_text(encoding="utf-8").splitlines())}
    lines = []
    n = 0
    for day, n_ood in zip((1, 2), OOD_PER_DAY):
        kinds = [True] * n_ood + [False] * (PER_DAY - n_ood)
        rng.shuffle(kinds)
        seconds = sorted(rng.randrange(86400) for _ in kinds)
        for is_ood, s in zip(kinds, seconds):
            n += 1
            qid = rng.choice(sorted(ood) if is_ood else sorted(queries))
            results = []
            for cid, d in run.get(qid, []):
                c = chunks[cid]
                d = round(min(2.0, max(0.0, d + rng.gauss(0.0, NOISE))), 3)
                results.append({"chunk_id": cid, "score": d, "content": c.get("content", c["text"]),
                                "doc_id": c["doc_id"], "start": c["start"], "end": c["end"]})
            results.sort(key=lambda r: (r["score"], r["chunk_id"]))
            lines.append({"query_id": f"t{n:03d}", "query": (ood if is_ood else queries)[qid],
                          "time": f"2024-05-0{day}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z",
                          "results": results, "system": "larkspur-before"})
    (HERE / "traffic.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines),
                                        encoding="utf-8")


if __name__ == "__main__":
    main()
