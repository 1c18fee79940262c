"""A LanceDB table as a team builds it (audit/stores/lancedb): its IVF-PQ index swept over nprobes and
refine_factor rises to the exact scan, which is numpy's brute force; the folder is only read.

The shared contract (findings, one report form, exact = numpy, canonical distances, the store as a system, the
commands only read) runs on a LanceDB table in tests/test_store_protocol.py.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pytest

from audit.evaluation.approximate import setting_sweep
from audit.stores.base import StoreError
from audit.stores.registry import ENGINES, make_spec, open_store

lancedb = pytest.importorskip("lancedb", reason=ENGINES["lancedb"].install)

D, N, NQ, K = 16, 2000, 20, 10


def _digest(folder):
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(37)
    v = rng.standard_normal((N, D)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q = rng.standard_normal((NQ, D)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    folder = tmp_path_factory.mktemp("lancedb") / "rag"
    db = lancedb.connect(str(folder))
    import pyarrow as pa

    schema = pa.schema([("chunk", pa.string()), ("body", pa.string()), ("emb", pa.list_(pa.float32(), D))])
    t = db.create_table("docs", [{"chunk": f"r{i:04d}", "body": f"row {i}", "emb": v[i].tolist()} for i in range(N)],
                        schema=schema)  # a vector column not named "vector" needs its fixed size said
    from lancedb.index import IvfPq

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.create_index("emb", config=IvfPq(distance_type="cosine", num_partitions=8, num_sub_vectors=4))
    return folder, v, q


def test_ivf_pq_rises_to_the_exact_scan_which_is_numpys_brute_force(table):
    folder, v, q = table
    before = _digest(folder)
    spec = make_spec(f"lancedb:{folder}", "docs", id_column="chunk", text_column="body", vector_column="emb")
    settings = [{"nprobes": 1}, {"nprobes": 2}, {"nprobes": 8, "refine_factor": 10},
                {"nprobes": 8, "refine_factor": 200}]  # 8 partitions; 200 × k = every row re-ranked exactly
    with open_store(spec) as s:
        exact = s.search(q, K, "exact")
        sweep = [s.search(q, K, "approximate", **st) for st in settings]
        h = s.health()
    # numpy's brute force: the largest cosines (unit vectors), ties cannot occur in random floats
    brute = [tuple(f"r{j:04d}" for j in np.argsort(-(q[i].astype(np.float64) @ v.astype(np.float64).T))[:K])
             for i in range(NQ)]
    assert list(exact.ids) == brute
    rows = setting_sweep(exact, sweep, ks=(K,))
    assert [r.settings for r in rows] == settings
    recall = [r.recall for r in rows]
    assert recall[0] < 0.9 and recall[0] < recall[2], recall  # one partition of PQ codes loses rows
    assert recall[-1] == 1.0 and rows[-1].exact and sweep[-1].cosine == exact.cosine  # to the last bit
    assert "IvfPq" in sweep[0].index and sweep[0].metric == "cosine"
    assert h.finding("approximate_index").detail.startswith("IvfPq")
    assert _digest(folder) == before  # connect, open_table, search, health: nothing written


def test_a_missing_column_or_table_is_one_error(table):
    folder, _, q = table
    with pytest.raises(StoreError, match="has no id column 'id' \\(columns: chunk, body, emb\\)"):
        with open_store(make_spec(f"lancedb:{folder}", "docs")) as s:
            s.dims()
    with pytest.raises(StoreError, match="no table 'nope'"):
        with open_store(make_spec(f"lancedb:{folder}", "nope")) as s:
            s.dims()
    spec = make_spec(f"lancedb:{folder}", "docs", id_column="chunk", text_column="body", vector_column="emb")
    with open_store(spec) as s, pytest.raises(StoreError, match="query vectors have 8 dimensions"):
        s.search(q[:, :8].copy(), K)
