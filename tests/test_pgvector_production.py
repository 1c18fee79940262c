"""pgvector as teams run it (issue 33): expression indexes, filtered search, deleted rows, the extension's version,
and every store command as a read-only role (issue 24 item 4), against the real server of ``pgfixture.py``.

Each table is built so that its figure follows from its construction, whatever HNSW's random levels:

- ``tenants``: for each question, 1,200 rows of tenant ``big`` lie nearer to it (cosine distance < 0.02) than any
  row of tenant ``small`` (its needle row at 0.30, the others beyond 0.6). An exact scan under
  ``tenant = small`` ranks the needle first; HNSW's scan hands its ``ef_search`` (40) nearest rows, all of
  tenant ``big``, to the filter, which keeps none: every approximate list is short and every needle lost.
- ``deleted``: the same 1,200 near rows, deleted after the index was built (autovacuum off): the index still
  leads the scan to them, the heap drops them, the lists come back short; ``pg_stat_user_tables`` counts them.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from pgfixture import pg_server  # noqa: F401 - the session fixture

from audit.cli import main
from audit.evaluation.approximate import compare_retrieval
from audit.stores.pgvector import StoreError, StoreSpec, check_health, find_indexes, search
from audit.stores.pgvector.connection import key_cast
from audit.stores.pgvector.production import extension_version, unavailable
from audit.stores.filters import check_filters, parse_filter

DIMS = 16
N_NEAR = 1200
N_Q = 6


# --------------------------------------------------------------------------- pure parts (no server)


@pytest.mark.parametrize("expr, column, cast, unusable", [
    ("(emb::vector(384))", "emb", ("vector", 384), False),
    ("((emb)::vector(3))", "emb", ("vector", 3), False),
    ("(emb::halfvec(768))", "emb", ("halfvec", 768), False),
    ('("Weird"::vector(3))', "Weird", ("vector", 3), False),
    ("(arr::vector(8))", "arr", ("vector", 8), False),
    ("((emb + emb)::vector(3))", "emb", None, True),          # an expression of the column, not a cast
    ("(l2_normalize(emb)::vector(3))", "emb", None, True),
    ("(other::vector(3))", "emb", None, False),               # another column's index: not ours
    ('("EMB"::vector(3))', "emb", None, False),               # a quoted upper-case name is another column
])
def test_key_cast(expr, column, cast, unusable):
    got, why = key_cast(expr, column)
    assert got == cast
    assert bool(why) is unusable


def test_filters_parse_and_check():
    assert parse_filter("tenant=acme") == ("tenant", "acme")
    assert parse_filter("q=a=b") == ("q", "a=b")          # the first = separates
    assert parse_filter("lang=") == ("lang", "")          # an empty value is a value
    with pytest.raises(StoreError, match="expected COLUMN=VALUE"):
        parse_filter("tenant")
    with pytest.raises(StoreError, match="column name is empty"):
        parse_filter("=x")
    assert check_filters(["a=1", ("b", "2")]) == (("a", "1"), ("b", "2"))
    with pytest.raises(StoreError, match="NUL"):
        check_filters([("a", "x\x00y")])
    with pytest.raises(StoreError, match="must be text"):
        check_filters([("a", 1)])


def test_versions_say_what_is_missing():
    assert unavailable("hnsw.iterative_scan", (0, 6, 2)) == \
        "hnsw.iterative_scan needs pgvector 0.8.0 or later (this server has 0.6.2)"
    assert unavailable("halfvec", (0, 7, 0)) == ""
    assert unavailable("hnsw.iterative_scan", (0, 8, 1)) == ""
    assert "unknown" in unavailable("halfvec", None)


def test_spec_carries_filters_in_its_provenance_not_its_uri():
    spec = StoreSpec("postgresql://u:secret@h/db", "t", "id", "body", "emb", filters=("tenant=acme",))
    assert spec.filters == (("tenant", "acme"),)
    assert spec.to_dict()["filters"] == [["tenant", "acme"]]
    assert "filter tenant = 'acme'" in spec.provenance and "secret" not in spec.provenance


# --------------------------------------------------------------------------- tables on the real server


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _lit(v) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def _near(q, rng, angle):
    """A unit vector at ``angle`` (radians) from unit ``q``: cosine distance 1 − cos(angle)."""
    r = rng.standard_normal(q.shape)
    r -= r.dot(q) * q
    r /= np.linalg.norm(r)
    return _unit(np.cos(angle) * q + np.sin(angle) * r)


def _build(rng):
    """Questions, needle rows (tenant small, distance 0.30), near rows (tenant big, < 0.02), far rows."""
    qs = [_unit(rng.standard_normal(DIMS)) for _ in range(N_Q)]
    rows = []  # (id, tenant, body, vector)
    for j, q in enumerate(qs):
        rows.append((f"needle-{j}", "small", f"The answer to question {j} is here.", _near(q, rng, np.arccos(0.70))))
    for i in range(N_NEAR):
        q = qs[i % N_Q]
        rows.append((f"near-{i:04d}", "big", f"big tenant row {i}", _near(q, rng, np.arccos(0.98) * rng.random())))
    for i in range(40):
        rows.append((f"far-{i:02d}", "small", f"small tenant row {i}",  # distinct distances: no tie to break
                     _near(qs[i % N_Q], rng, np.arccos(0.35 - 0.01 * i))))
    return np.stack(qs), rows


@pytest.fixture(scope="module")
def prod(pg_server, tmp_path_factory):  # noqa: F811
    import psycopg

    rng = np.random.default_rng(33)
    qs, rows = _build(rng)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        for t in ("tenants", "deleted"):
            c.execute(f"CREATE TABLE {t} (id text PRIMARY KEY, tenant text, body text, emb vector({DIMS})) "
                      "WITH (autovacuum_enabled = false)")
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                for r in rows:
                    cp.write_row((*r[:3], _lit(r[3])))
            c.execute(f"CREATE INDEX {t}_hnsw ON {t} USING hnsw (emb vector_cosine_ops)")
        c.execute("DELETE FROM deleted WHERE tenant = 'big'")
        c.execute("SELECT pg_stat_force_next_flush()")
        # expression indexes: an untyped vector column and a real[] column, each cast in the index
        c.execute("CREATE TABLE untyped (id text PRIMARY KEY, body text, emb vector, arr real[])")
        with c.cursor().copy("COPY untyped FROM STDIN") as cp:
            for r in rows[:60]:
                cp.write_row((r[0], r[2], _lit(r[3]), "{" + ",".join(repr(float(x)) for x in r[3]) + "}"))
        c.execute(f"CREATE INDEX untyped_emb ON untyped USING hnsw ((emb::vector({DIMS})) vector_cosine_ops)")
        c.execute(f"CREATE INDEX untyped_arr ON untyped USING hnsw ((arr::vector({DIMS})) vector_cosine_ops)")
        c.execute("CREATE TABLE sums (id text PRIMARY KEY, body text, emb vector)")
        c.execute(f"INSERT INTO sums SELECT id, body, emb FROM untyped")
        c.execute(f"CREATE INDEX sums_twice ON sums USING hnsw (((emb + emb)::vector({DIMS})) vector_cosine_ops)")
        version = c.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
    folder = tmp_path_factory.mktemp("prod")
    gt = folder / "gt.jsonl"
    gt.write_text("".join(json.dumps({"id": f"n{j}", "needle": f"The answer to question {j} is here.",
                                      "questions": [f"question {j}?"]}) + "\n" for j in range(N_Q)))
    qv = folder / "qv.jsonl"
    qv.write_text("".join(json.dumps({"id": f"n{j}", "vector": [float(x) for x in qs[j]]}) + "\n"
                          for j in range(N_Q)))
    return {"uri": pg_server.uri, "qs": qs, "rows": rows, "gt": gt, "qv": qv, "version": version,
            "server": pg_server}


def _spec(prod, table, **kw):
    return StoreSpec(prod["uri"], table, "id", "body", kw.pop("vector_column", "emb"), **kw)


def _exact_numpy(rows, q, k, keep=lambda r: True):
    """Ids of the k nearest kept rows by cosine distance, ties by id (the exact scan's order)."""
    d = sorted((float(1 - np.dot(r[3].astype(np.float64), q.astype(np.float64))), r[0]) for r in rows if keep(r))
    return tuple(i for _, i in d[:k])


@pytest.mark.store
def test_filter_shows_the_loss_hnsw_makes_under_a_where(prod):
    spec = _spec(prod, "tenants", filters=(("tenant", "small"),))
    k = 8
    ex = search(spec, prod["qs"], k, "exact")
    ap = search(spec, prod["qs"], k, "approximate")
    for j in range(N_Q):  # exact under the filter: the small tenant's rows only, the needle first
        assert ex.ids[j] == _exact_numpy(prod["rows"], prod["qs"][j], k, lambda r: r[1] == "small")
        assert ex.ids[j][0] == f"needle-{j}"
    assert ap.index == "tenants_hnsw"
    assert all(len(ids) == 0 for ids in ap.ids)  # the 40 rows HNSW hands over are all tenant big
    assert "filtered: HNSW applies the WHERE after its scan (at most hnsw.ef_search rows reach the filter)" in ap.note
    relevant = [{f"needle-{j}"} for j in range(N_Q)]
    cmp_ = compare_retrieval(ap, ex, relevant, (1, 8))
    assert [(r.recall_exact, r.recall_approximate, len(r.short), len(r.lost)) for r in cmp_.rows] == \
        [(1.0, 0.0, N_Q, N_Q), (1.0, 0.0, N_Q, N_Q)]
    # Without the filter the same index serves the big tenant's near rows: nothing short.
    unfiltered = search(_spec(prod, "tenants"), prod["qs"], k, "approximate")
    assert all(len(ids) == k for ids in unfiltered.ids)


@pytest.mark.store
def test_filter_values_are_parameters_and_columns_are_checked(prod):
    spec = _spec(prod, "tenants", filters=(("tenant", "small' OR '1'='1"),))
    assert all(ids == () for ids in search(spec, prod["qs"], 4, "exact").ids)  # a value, never SQL
    with pytest.raises(StoreError, match=r"--filter nope=…: table 'tenants' has no column 'nope'; its columns: id, "
                                         r"tenant, body, emb"):
        search(_spec(prod, "tenants", filters=(("nope", "x"),)), prod["qs"], 4, "exact")
    # Two values of one column are OR-ed: big or small is every row.
    both = _spec(prod, "tenants", filters=(("tenant", "small"), ("tenant", "big")))
    assert search(both, prod["qs"][:1], 5, "exact").ids[0] == _exact_numpy(prod["rows"], prod["qs"][0], 5)


@pytest.mark.store
def test_iterative_scan_said_unavailable_on_an_older_extension(prod):
    spec = _spec(prod, "tenants", filters=(("tenant", "small"),))
    version = tuple(int(x) for x in prod["version"].split("."))
    r = search(spec, prod["qs"][:2], 4, "approximate", iterative_scan="strict_order")
    if version < (0, 8, 0):
        assert (f"hnsw.iterative_scan needs pgvector 0.8.0 or later (this server has {prod['version']}): "
                "--iterative-scan strict_order not applied") in r.note
        assert "hnsw.iterative_scan" not in r.settings
    else:  # a newer server scans on until the filter is satisfied
        assert r.settings["hnsw.iterative_scan"] == "strict_order"
    with pytest.raises(StoreError, match="iterative scan 'sideways'"):
        search(spec, prod["qs"][:1], 4, "approximate", iterative_scan="sideways")


@pytest.mark.store
def test_report_cli_under_a_filter(prod, capsys, tmp_path):
    out = tmp_path / "r.json"
    code = main(["report", "--store", prod["uri"], "--table", "tenants", "--id-column", "id", "--text-column", "body",
                 "--vector-column", "emb", "--ground-truth", str(prod["gt"]), "--query-vectors", str(prod["qv"]),
                 "--filter", "tenant=small", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "filter tenant = 'small'" in text
    assert f"short lists at k=1 (the approximate index returned fewer rows than the exact scan): {N_Q} of {N_Q}" in text
    rows = {r["k"]: r for r in json.loads(out.read_text())["approximate"]["comparison"]["rows"]}
    assert (rows[8]["recall_exact"], rows[8]["recall_approximate"], len(rows[8]["short"])) == (1.0, 0.0, N_Q)
    code = main(["report", "--store", prod["uri"], "--table", "tenants", "--id-column", "id", "--text-column", "body",
                 "--vector-column", "emb", "--ground-truth", str(prod["gt"]), "--query-vectors", str(prod["qv"]),
                 "--filter", "tenant"])
    assert code == 2 and "expected COLUMN=VALUE" in capsys.readouterr().err


@pytest.mark.store
def test_a_large_delete_is_measured(prod):
    spec = _spec(prod, "deleted")
    h = None
    for _ in range(50):  # the statistics reach shared memory when the deleting backend goes idle
        h = check_health(spec)
        if h.finding("dead_tuples").severity == "warning":
            break
        time.sleep(0.1)
    dead = h.finding("dead_tuples")
    assert dead.severity == "warning" and dead.count == N_NEAR
    assert dead.detail.startswith(f"{N_NEAR} dead tuples beside {N_Q + 40} live rows (")
    k = 8
    survivors = [r for r in prod["rows"] if r[1] == "small"]
    ex = search(spec, prod["qs"], k, "exact")
    ap = search(spec, prod["qs"], k, "approximate")
    assert ex.ids == tuple(_exact_numpy(survivors, q, k) for q in prod["qs"])
    cmp_ = compare_retrieval(ap, ex, [{f"needle-{j}"} for j in range(N_Q)], (8,))
    # The 40 candidates of the scan are deleted rows: every list short, every needle lost.
    assert (cmp_.rows[0].recall_exact, cmp_.rows[0].recall_approximate, len(cmp_.rows[0].short)) == (1.0, 0.0, N_Q)


@pytest.mark.store
def test_expression_indexes_are_found_and_queried_through(prod):
    for column, index in (("emb", "untyped_emb"), ("arr", "untyped_arr")):
        spec = _spec(prod, "untyped", vector_column=column)
        (idx,) = find_indexes(spec)
        assert (idx.name, idx.expression, idx.cast, idx.unusable) == (index, f"({column}::vector({DIMS}))",
                                                                      ("vector", DIMS), "")
        ap = search(spec, prod["qs"], 5, "approximate", ef_search=100)
        ex = search(spec, prod["qs"], 5, "exact")
        assert ap.index == index  # the plan used the expression index
        assert ex.ids == tuple(_exact_numpy(prod["rows"][:60], q, 5) for q in prod["qs"])
        assert ap.ids == ex.ids  # 60 rows, ef_search 100: HNSW visits them all
        h = check_health(spec)
        assert h.finding("approximate_index").detail == f"hnsw index {index} on ({column}::vector({DIMS})) " \
                                                      "(vector_cosine_ops)"
    spec = _spec(prod, "sums")
    (idx,) = find_indexes(spec)
    assert idx.cast is None and "only a cast of the column" in idx.unusable
    r = search(spec, prod["qs"][:1], 3, "approximate")
    assert r.index is None
    assert (f"index sums_twice (hnsw) is on the expression ((emb + emb)::vector({DIMS})), which the audit cannot "
            "query through") in r.note


@pytest.mark.store
def test_extension_finding_names_what_this_version_lacks(prod):
    import psycopg

    h = check_health(_spec(prod, "tenants"))
    ext = h.finding("extension")
    with psycopg.connect(prod["uri"]) as c:
        assert extension_version(c) == tuple(int(x) for x in prod["version"].split("."))
    assert ext.severity == "ok" and ext.detail.startswith(f"pgvector {prod['version']}")
    if extension_version(psycopg.connect(prod["uri"])) < (0, 7, 0):
        assert ext.detail.endswith("unavailable here: hnsw.iterative_scan (needs 0.8.0), halfvec (needs 0.7.0)")


@pytest.mark.store
def test_the_audit_session_is_read_only(prod):
    from audit.stores.pgvector import connect

    with connect(_spec(prod, "tenants")) as c:  # even a superuser's audit session cannot write
        assert c.execute("SHOW transaction_read_only").fetchone()[0] == "on"
        with pytest.raises(Exception, match="read-only transaction"):
            c.execute("CREATE TEMP TABLE t (x int)")


def test_filter_without_a_store_is_refused(capsys):
    assert main(["report", "--filter", "tenant=a"]) == 2
    assert capsys.readouterr().err.strip() == \
        "error: --filter and --iterative-scan go with --store and --table (a live vector store)"
