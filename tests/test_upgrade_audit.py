"""The upgrade audit of ``compare`` on two index files, each stamped with its model (issue 51): the JSON's models,
cut, tradeoff and cost sections, the bill's arithmetic, and the sentence that names a cut chosen under the old model
and applied to the new one's distances. The small corpus of tests/test_app.py, the hashing encoder at two sizes."""

from __future__ import annotations

import json

import pytest
from test_app import _write_corpus

from audit.cli import main
from audit.models import load_encoder
from audit.models.cost import BYTES_PER_DIM, SAMPLE_CHUNKS, index_bytes, measure_cost
from audit.evaluation.saved_cut import another_model


@pytest.fixture()
def two_indexes(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    env = _write_corpus(tmp_path)
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    assert main(["index", env["AUDIT_CORPUS"], "--db", str(old), "--model", "hashing", "--quiet"]) == 0
    assert main(["index", env["AUDIT_CORPUS"], "--db", str(new), "--model", "hashing:64", "--quiet"]) == 0
    return env, old, new


def _rows(db) -> int:
    """Vectors stored in index E of ``db`` (read back through the index store, not the compare under test)."""
    from audit.index import IndexStore

    store = IndexStore(db)
    try:
        return int(store.load("E").vectors.shape[0])
    finally:
        store.close()


def test_compare_json_holds_models_cut_tradeoff_and_cost(two_indexes, tmp_path, capsys):
    env, old, new = two_indexes
    out, page = tmp_path / "c.json", tmp_path / "c.html"
    assert main(["compare", str(old), str(new), "--ground-truth", env["AUDIT_GROUND_TRUTH"], "--out-of-domain",
                 env["AUDIT_OUT_OF_DOMAIN"], "--json", str(out), "--html", str(page), "--no-history"]) == 0
    text = capsys.readouterr().out
    js = json.loads(out.read_text(encoding="utf-8"))
    assert [(m["side"], m["name"], m["dims"], m["weights_digest"]) for m in js["models"]] == [
        ("before", "hashing", 256, "hashing-256"), ("after", "hashing:64", 64, "hashing-64")]
    cut = js["cut"]
    assert cut["chosen_under"]["model"] == "hashing" and cut["chosen_under"]["how"] == "balanced"
    carried = cut["carried"]
    assert carried["rule"] == "same bluffs, most answered"
    before, after = carried["outcomes"]["before"], carried["outcomes"]["after"]
    assert set(before) >= {"bluffs", "answered", "abandoned"} and set(after) >= {"bluffs", "answered", "abandoned"}
    assert after["bluffs"] <= before["bluffs"] and after["cut"] == carried["value"]
    # the carried cut is on the after model's curve, and no grid cut within the bluff budget answers more
    curve = js["tradeoff"]["curves"]["after"]
    assert {"cut": after["cut"], "bluffs": after["bluffs"], "answered": after["answered"],
            "abandoned": after["abandoned"]} in curve
    assert after["answered"] == max(p["answered"] for p in curve if p["bluffs"] <= before["bluffs"])
    assert cut["same_answered"]["rule"] == "same answered, fewest bluffs"
    t = js["tradeoff"]
    n_ood = t["out_of_domain"]
    assert [e["bluffs"] for e in t["envelope"]] == list(range(n_ood + 1))
    assert isinstance(t["dominates"], bool) and t["sentence"]
    # the bill: index bytes exactly dims × 4 × chunks of each index; the sample is bounded and said so
    chunks = _rows(old)
    assert chunks == _rows(new)
    for c, dims in zip(js["cost"], (256, 64)):
        assert set(c) >= {"model", "ms_per_chunk", "index_bytes", "query_ms_p50", "query_ms_p95"}
        assert c["index_bytes"] == dims * 4 * chunks
        assert c["corpus_chunks"] == chunks and c["sample_chunks"] == min(chunks, SAMPLE_CHUNKS)
        assert c["reembed_s"] == pytest.approx(c["ms_per_chunk"] * chunks / 1000)
        assert c["query_ms_p50"] <= c["query_ms_p95"]
        assert "measured on this machine at compare time" in c["sample"]
    # Success@k with Wilson intervals for both sides, sign tests with Holm
    up = js["upgrade"]
    assert {s["side"] for s in up["success"]} == {"before", "after"}
    assert all(s["low"] <= s["estimate"] <= s["high"] for s in up["success"])
    assert all(t["p_holm"] >= t["p"] for t in up["tests"])
    # checked against scipy: the Wilson interval of each side's successes, the exact sign test, Holm's step-down
    from scipy.stats import binomtest

    for r in up["success"]:
        ci = binomtest(r["successes"], r["n"]).proportion_ci(0.95, method="wilson")
        assert (r["low"], r["high"]) == (pytest.approx(ci.low, abs=1e-12), pytest.approx(ci.high, abs=1e-12))
    raw = [1.0 if t["wins"] + t["losses"] == 0 else binomtest(t["wins"], t["wins"] + t["losses"]).pvalue
           for t in up["tests"]]
    assert [t["p"] for t in up["tests"]] == pytest.approx(raw, abs=1e-12)
    order = sorted(range(len(raw)), key=lambda i: raw[i])
    holm, running = [0.0] * len(raw), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(raw) - rank) * raw[i]))
        holm[i] = running
    assert [t["p_holm"] for t in up["tests"]] == pytest.approx(holm, abs=1e-12)
    # said, not applied silently: the old side's cut counts as chosen under hashing and meets hashing:64's distances
    assert "counts as chosen under hashing (weights hashing-256) and applied to hashing:64's distances" in text
    assert "The cut carried across" in text and "The bill" in text
    html = page.read_text(encoding="utf-8")
    assert "The model upgrade" in html and f'data-value="{js["cost"][0]["index_bytes"]}"' in html


def test_measure_cost_arithmetic_with_a_fake_clock():
    enc = load_encoder("hashing")
    ticks = iter(range(0, 10_000, 1))  # every clock call advances one second

    def clock():
        return float(next(ticks))

    texts = [f"chunk {i}" for i in range(100)]
    c = measure_cost(enc, texts, ["q1", "q2", "q3"], batch_size=8, sample=10, clock=clock)
    # 10 chunks in one timed call of 1 s: 100 ms a chunk, 10 a second; re-embedding 100 chunks: 10 s
    assert (c.sample_chunks, c.corpus_chunks, c.batch_size) == (10, 100, 8)
    assert c.ms_per_chunk == 100.0 and c.chunks_per_second == 10.0 and c.reembed_s == 10.0
    assert c.query_sample == 3 and c.query_ms_p50 == c.query_ms_p95 == 1000.0
    assert c.index_bytes == index_bytes(enc.dims, 100) == enc.dims * BYTES_PER_DIM * 100
    with pytest.raises(ValueError, match="at least one chunk"):
        measure_cost(enc, [], ["q"])


def test_a_cut_of_another_model_is_named_not_applied():
    a = {"model_name": "all-MiniLM-L6-v2", "model_digest": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab5"}
    b = {"model_name": "hashing", "model_digest": "hashing-256"}
    s = another_model(a, b)
    assert s.startswith("chosen under all-MiniLM-L6-v2 (weights 53aa51172d14), not under this run's model hashing")
    assert "applied to hashing's distances" in another_model(a, b, applied=True)
    assert another_model(a, a) == "" and another_model(None, b) == "" and another_model({"run_file": "x"}, b) == ""
