"""``--query-vectors``: the CLI's store commands for a team whose questions were embedded by a hosted model.

The questions' vectors are written to a file from the hashing encoder; every figure must then equal the
run with ``--model hashing`` (the same vectors, embedded here), which test_cli_store checks against numpy.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT
from pgfixture import pg_server  # noqa: F401 - the session fixture

from audit.chunking import PRESETS, chunk_corpus
from audit.cli import main
from audit.groundtruth import load_needles, load_out_of_domain
from audit.ingest import load_folder
from audit.models import load_encoder

pytestmark = pytest.mark.store
GOLDEN = ROOT / "tests" / "golden"
COLUMNS = ["--table", "qv_chunks", "--id-column", "id", "--text-column", "body", "--vector-column", "emb"]


@pytest.fixture(scope="module")
def table(pg_server, tmp_path_factory):  # noqa: F811
    import psycopg

    chunks = chunk_corpus(load_folder(GOLDEN / "docs"), PRESETS["E"])
    enc = load_encoder("hashing")
    vecs = enc.encode(chunks.texts)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("CREATE TABLE qv_chunks (id text PRIMARY KEY, body text, emb vector(256))")
        for ch, v in zip(chunks.chunks, vecs):
            c.execute("INSERT INTO qv_chunks VALUES (%s, %s, %s::vector)",
                      (f"c{ch.chunk_id}", ch.text, "[" + ",".join(repr(float(x)) for x in v) + "]"))
        c.execute("CREATE INDEX ON qv_chunks USING hnsw (emb vector_cosine_ops)")
        c.execute("CREATE TABLE qv_after AS SELECT * FROM qv_chunks")
        c.execute("DELETE FROM qv_after WHERE body LIKE '%fourteen days, weekly backups%'")
    # The questions' vectors, as a hosted model's export would hold them: JSONL by query id, and .npy + ids.
    d = tmp_path_factory.mktemp("qv")
    needles = load_needles(GOLDEN / "gt.jsonl")
    ids = [f"{n.id}/{p}" for n in needles for p, _ in zip(("doc", "ticket"), n.questions)]
    texts = [q for n in needles for q in n.questions]
    ood = load_out_of_domain(GOLDEN / "ood.txt")
    ids += [f"ood-{i}" for i in range(1, len(ood) + 1)]
    V = enc.encode(texts + ood)
    (d / "q.jsonl").write_text("".join(json.dumps({"id": i, "vector": [float(x) for x in v]}) + "\n"
                                       for i, v in zip(ids, V)), encoding="utf-8")
    np.save(d / "q.npy", V)
    (d / "ids.txt").write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    (d / "short.jsonl").write_text(json.dumps({"id": ids[0], "vector": [0.5] * 4}) + "\n", encoding="utf-8")
    return {"uri": pg_server.uri, "dir": d}


def _report(table, tmp_path, *how):
    out = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
    code = main(["report", "--store", table["uri"], *COLUMNS, "--ground-truth", str(GOLDEN / "gt.jsonl"),
                 "--json", str(out), *how])
    assert code == 0
    return json.loads(out.read_text())


def test_report_with_query_vectors_equals_the_model(table, tmp_path, capsys):
    d = table["dir"]
    model = _report(table, tmp_path, "--model", "hashing")
    jsonl = _report(table, tmp_path, "--query-vectors", str(d / "q.jsonl"))
    npy = _report(table, tmp_path, "--query-vectors", str(d / "q.npy"), "--query-ids", str(d / "ids.txt"))
    # Same vectors → same top-k both ways → the same comparison, row for row.
    assert (jsonl["approximate"]["comparison"]["rows"] == model["approximate"]["comparison"]["rows"]
            == npy["approximate"]["comparison"]["rows"])
    assert model["approximate"]["comparison"]["rows"][0]["n_queries"] > 0
    assert jsonl["approximate"]["model"] == "query vectors q.jsonl" and model["approximate"]["model"] == "hashing"


def test_query_vectors_errors_exit_2_naming_the_file(table, capsys):
    d = table["dir"]
    base = ["report", "--store", table["uri"], *COLUMNS, "--ground-truth", str(GOLDEN / "gt.jsonl")]
    assert main([*base, "--query-vectors", str(d / "short.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "short.jsonl: the query vectors have 4 dimensions (line 1 and every other), column 'emb' of " \
           "'qv_chunks' has 256" in err
    assert main([*base, "--query-vectors", str(d / "q.jsonl"), "--model", "hashing"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main([*base, "--query-vectors", str(d / "q.npy")]) == 2
    assert "needs its ids file" in capsys.readouterr().err


def test_health_with_query_vectors_checks_their_dimension(table, tmp_path):
    d, out = table["dir"], tmp_path / "h.json"
    assert main(["health", "--store", table["uri"], *COLUMNS, "--query-vectors", str(d / "q.jsonl"),
                 "--json", str(out)]) == 0
    check = {c["check"]: c for c in json.loads(out.read_text())["findings"]}["model_dims"]
    assert (check["count"], check["detail"]) == (0, "every vector has the 256 dimensions of model behind the query vectors q.jsonl")
    # 4-dimensional questions cannot be compared with any of the table's 10 rows of 256 dimensions: exit 1.
    assert main(["health", "--store", table["uri"], *COLUMNS, "--query-vectors", str(d / "short.jsonl"),
                 "--json", str(out)]) == 1
    assert {c["check"]: c for c in json.loads(out.read_text())["findings"]}["model_dims"]["count"] == 10


def test_compare_tables_with_query_vectors_equals_the_model(table, capsys):
    args = ["compare", "pg:qv_chunks", "pg:qv_after", "--store", table["uri"], "--id-column", "id", "--text-column",
            "body", "--vector-column", "emb", "--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain",
            str(GOLDEN / "ood.txt"), "--exact", "--k", "20", "--threshold", "0.6"]
    assert main([*args, "--model", "hashing"]) == 0
    by_model = capsys.readouterr().out
    assert main([*args, "--query-vectors", str(table["dir"] / "q.jsonl")]) == 0
    by_file = capsys.readouterr().out
    body = lambda s: [x for x in s.splitlines() if not x.startswith("before:")]  # noqa: E731 - header names the source
    assert body(by_file) == body(by_model)
    assert "query vectors q.jsonl (256 dims)" in by_file
    assert any(x.startswith("Lost at k=20") and "g1/doc" in x for x in by_file.splitlines())
    # vectors of another dimension than the tables': the same one line as health and report, exit 2
    assert main([*args, "--query-vectors", str(table["dir"] / "short.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "short.jsonl: the query vectors have 4 dimensions" in err
