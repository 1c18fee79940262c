"""``health --store`` and ``report --store``: the CLI against a real PostgreSQL + pgvector (pgserver).

A table of the golden folder's chunks (strategy E) embedded with the hashing encoder (256 dims),
indexed with HNSW; the figures are checked against numpy on the same vectors.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT
from pgfixture import pg_server  # noqa: F401 - the session fixture

from audit.chunking import PRESETS, chunk_corpus
from audit.cli import main
from audit.groundtruth import load_needles
from audit.ingest import load_folder
from audit.matching import collapse
from audit.models import load_encoder

pytestmark = pytest.mark.store
GOLDEN = ROOT / "tests" / "golden"
COLUMNS = ["--table", "chunks", "--id-column", "id", "--text-column", "body", "--vector-column", "emb"]


@pytest.fixture(scope="module")
def table(pg_server):  # noqa: F811
    import psycopg

    chunks = chunk_corpus(load_folder(GOLDEN / "docs"), PRESETS["E"])
    vecs = load_encoder("hashing").encode(chunks.texts)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("CREATE TABLE chunks (id text PRIMARY KEY, doc_id text, body text, emb vector(256))")
        for ch, v in zip(chunks.chunks, vecs):
            c.execute("INSERT INTO chunks VALUES (%s, %s, %s, %s::vector)",
                      (f"c{ch.chunk_id}", ch.doc_id, ch.text, "[" + ",".join(f"{x:.8g}" for x in v) + "]"))
        c.execute("CREATE INDEX ON chunks USING hnsw (emb vector_cosine_ops)")
    return {"uri": pg_server.uri, "chunks": chunks, "vecs": vecs, "server": pg_server}


def test_health_of_a_clean_table_exits_0_and_lists_every_check(table, tmp_path, capsys):
    out = tmp_path / "h.json"
    code = main(["health", "--store", table["uri"], *COLUMNS, "--model", "hashing", "--json", str(out)])
    assert code == 0, capsys.readouterr().out
    js = json.loads(out.read_text())
    checks = {c["check"]: c for c in js["findings"]}  # the one JSON form of every engine's health
    assert checks["rows"]["count"] == len(table["chunks"]) == js["rows"]
    assert {"null_vectors", "dims", "norms", "model_dims"} <= set(checks)
    assert all(c["severity"] != "unhealthy" and c["concerns"] == "rows" for c in js["findings"])
    assert "postgres" in capsys.readouterr().out  # the table is named; the credentials never are


def test_a_non_unit_vector_makes_the_table_unhealthy(table, capsys):
    import psycopg

    with psycopg.connect(table["uri"], autocommit=True) as c:
        c.execute("CREATE TABLE chunks_bad AS SELECT * FROM chunks")
        half = "[" + ",".join(f"{x:.8g}" for x in table["vecs"][0] * 0.5) + "]"  # norm 0.5
        c.execute("UPDATE chunks_bad SET emb = %s::vector WHERE id = 'c0'", (half,))
    code = main(["health", "--store", table["uri"], "--table", "chunks_bad", "--id-column", "id", "--text-column",
                 "body", "--vector-column", "emb"])
    assert code == 1
    assert "norms" in capsys.readouterr().out


def test_report_store_compares_the_index_with_an_exact_scan(table, tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(["report", "--store", table["uri"], *COLUMNS, "--ground-truth", str(GOLDEN / "gt.jsonl"),
                 "--model", "hashing", "--json", str(out)])
    assert code == 0
    rows = {r["k"]: r for r in json.loads(out.read_text())["approximate"]["comparison"]["rows"]}
    # independent: numpy brute force over the same vectors, relevant = chunks whose text holds the needle
    enc, chunks, vecs = load_encoder("hashing"), table["chunks"], table["vecs"]
    needles = load_needles(GOLDEN / "gt.jsonl")
    questions = [(n, q) for n in needles for q in n.questions]
    qv = enc.encode([q for _, q in questions])
    for k in (1, 4, 8, 20):
        hits = 0
        for (n, _), v in zip(questions, qv):
            top = np.argsort(1.0 - vecs @ v, kind="stable")[:k]
            hits += any(collapse(n.needle) in collapse(chunks[int(i)].text) for i in top)
        assert rows[k]["recall_exact"] == pytest.approx(hits / len(questions))
        assert rows[k]["n_queries"] == len(questions)
    assert "Needle recall through the approximate index" in capsys.readouterr().out


def test_a_failed_connection_exits_2_with_one_line_and_no_password(capsys):
    code = main(["health", "--store", "postgresql://auditor:s3cret-pw@127.0.0.1:1/db", *COLUMNS])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "s3cret-pw" not in err and "auditor" not in err
    assert "cannot connect to 127.0.0.1/db: " in err  # the store by host/database


def test_store_options_must_name_the_columns(capsys):
    assert main(["health", "--store", "postgresql://u@localhost/db", "--table", "t"]) == 2
    assert "a store needs --id-column, --text-column, --vector-column" in capsys.readouterr().err


def test_compare_two_tables_before_and_after(table, capsys):
    import psycopg

    # "after": the same rows but the chunk holding needle g1 is gone (a lost document after an upgrade)
    with psycopg.connect(table["uri"], autocommit=True) as c:
        c.execute("CREATE TABLE chunks_after AS SELECT * FROM chunks")
        c.execute("DELETE FROM chunks_after WHERE body LIKE '%fourteen days, weekly backups%'")
    code = main(["compare", "pg:chunks", "pg:chunks_after", "--store", table["uri"], "--id-column", "id",
                 "--text-column", "body", "--vector-column", "emb", "--ground-truth", str(GOLDEN / "gt.jsonl"),
                 "--out-of-domain", str(GOLDEN / "ood.txt"), "--model", "hashing", "--exact", "--k", "20"])
    assert code == 0
    out = capsys.readouterr().out
    # g1's two questions found their answer in the top 20 before (20 of ~30 rows); after, no row holds it
    lost = next(line for line in out.splitlines() if line.startswith("Lost at k=20"))
    assert "g1/doc" in lost and "g1/ticket" in lost
    assert "Gained at k=20 (0): none" in out
