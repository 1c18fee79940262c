"""all-mpnet-base-v2, the second real model (issue 51): `report --model all-mpnet-base-v2` offline, checked against
an independent computation on a ground truth no other test has seen (tests/two_models.py).

The independent side reads nothing of the audit's models or retrieval: the chunks' text as `python -m audit chunks`
writes them, encoded by sentence-transformers itself from the same folder (``SentenceTransformer(folder)``), ranked
by cosine with numpy (ties by chunk id), and judged by the needle rule (a question is answered within k when one of
the first k chunks' text contains its whole needle; these needles are plain ASCII with single spaces, so the
matching view is the plain substring).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from two_models import cli, mpnet_home, write_corpus  # noqa: F401  (mpnet_home: a fixture)

from audit.models.split import MPNET

pytestmark = pytest.mark.model

KS = (1, 4, 8, 20)


def _independent_success(folder, chunks: list[dict], gt: list[dict]) -> dict[int, int]:
    """Questions answered within k, per k: sentence-transformers + numpy + the needle rule."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    texts = [c["text"] for c in chunks]
    questions = [(q, g["needle"]) for g in gt for q in g["questions"]]
    c = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, batch_size=8)
    q = model.encode([x for x, _ in questions], normalize_embeddings=True, convert_to_numpy=True, batch_size=8)
    cos = q.astype(np.float64) @ c.astype(np.float64).T  # unit vectors: the dot product is the cosine
    ids = np.array([ch["chunk_id"] for ch in chunks])
    found = {k: 0 for k in KS}
    for row, (_, needle) in zip(cos, questions):
        order = np.lexsort((ids, -row))  # best cosine first, ties by chunk id
        first = next((r for r, i in enumerate(order) if needle in texts[i]), None)
        for k in KS:
            found[k] += first is not None and first < k
    return found


def test_report_with_mpnet_runs_offline_and_matches_an_independent_computation(mpnet_home, tmp_path):
    home, folder = mpnet_home
    docs, gt_path, _ = write_corpus(tmp_path)
    out = tmp_path / "report.json"
    r = cli("report", "--corpus", str(docs), "--ground-truth", str(gt_path), "--model", "all-mpnet-base-v2",
            "--strategies", "E", "--retrievers", "dense", "--reranker", "none", "--no-cache", "--quiet",
            "--json", str(out), home=home)
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    prov = report["provenance"]
    # stamped like MiniLM: the name as given, the hub's weights digest, its dims and window
    assert (prov["model"], prov["model_digest"], prov["dims"], prov["window"]) == (
        "all-mpnet-base-v2", MPNET.sha256, 768, 384)
    (row,) = [x for x in report["results"] if x["name"] == "E/dense"]
    assert row["n_queries"] == 36 and row["destroyed"] == 0

    chunks_file = tmp_path / "chunks.jsonl"
    c = cli("chunks", "--strategy", "E", "--corpus", str(docs), "--jsonl", str(chunks_file), home=home)
    assert c.returncode == 0, c.stderr[-2000:]
    chunks = [json.loads(line) for line in chunks_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(chunks) == 24  # 18 sections + each runbook's title span: small enough for mpnet on 2 cores
    gt = [json.loads(line) for line in gt_path.read_text(encoding="utf-8").splitlines()]
    theirs = _independent_success(folder, chunks, gt)
    ours = {k: round(row[f"Success@{k}"] * row["n_queries"]) for k in KS}
    assert all(abs(ours[k] - theirs[k]) <= 1 for k in KS), (ours, theirs)  # to within one question
    assert theirs[20] == 36  # every needle sits whole in one of the 24 chunks


def test_the_hub_name_resolves_to_the_same_verified_folder(mpnet_home, monkeypatch):
    from audit.models import load_encoder

    home, folder = mpnet_home
    monkeypatch.setenv("AUDIT_HOME", str(home))
    enc = load_encoder("sentence-transformers/all-mpnet-base-v2")
    assert enc.path == folder and (enc.digest, enc.dims, enc.window) == (MPNET.sha256, 768, 384)
    assert (folder / "model.safetensors").stat().st_size == MPNET.size
