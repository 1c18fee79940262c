"""``make bench``: what every stage of the audit costs on this machine, next to the naive way.

Usage::

    .venv/bin/python bench/run.py            # everything, ~9 minutes on 2 cores
    .venv/bin/python bench/run.py --quick    # smaller samples, no 1M corpus, E only for the report: ~3 minutes
    .venv/bin/python bench/run.py --only build,query --json out.json

Sections (``--only``, run in this order by default): ``report`` (``python -m
audit report`` cold and warm in a private ``AUDIT_HOME``: wall time, peak
memory, whether torch was imported), ``build`` (index build per chunk, naive
one-by-one vs batched, threads, length buckets, ONNX / int8; warm; query
embedding; each backend's top-k agreement with the default on the built-in
ground truth), ``query`` (per query on the built-in corpus: dense, BM25,
hybrid, rerank, each beside its naive baseline),
``scaling`` (synthetic 10k / 100k / 1M chunks), ``dashboard``
(``streamlit run`` to the Strategies page, with Playwright).

Every figure is wall clock on this machine; the machine line (cores, threads,
load average before and after each section) is printed with the tables,
because on a shared 2-core machine the load of other processes moves the
numbers. Competing encoder variants are interleaved (the sample is cut in four
slices and every variant runs on each slice in turn) so a burst of load hits
them alike; per-chunk costs are total time / chunks, per-query costs p50 / p95
over the queries.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's audit package, whatever the venv installed
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benchmark's own helpers (naive, synthetic)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

import naive  # noqa: E402
import synthetic  # noqa: E402

SEED_MS = {"index build (ms/chunk)": 22.0, "query embedding (ms)": 13.0, "bm25 (ms/query, 940 chunks)": 1.14,
           "dense scan (ms/query)": 0.3, "rerank 25 pairs (ms/query)": 569.0}

RESULTS: dict = {"sections": {}}
BUILD_SAMPLE = 0  # --build-chunks


# --------------------------------------------------------------------------- helpers


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f}/{b:.2f}/{c:.2f}"


def machine() -> dict:
    """Cores, CPU, threads of each library, versions: printed with every table."""
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"cores": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "load_avg_1/5/15_at_start": load()}
    try:
        from threadpoolctl import threadpool_info

        info["blas_threads"] = ", ".join(f"{p['internal_api']}={p['num_threads']}" for p in threadpool_info())
    except Exception:
        pass
    from importlib.metadata import PackageNotFoundError, version

    vers = {}
    for dist in ("numpy", "torch", "sentence-transformers", "onnxruntime", "bm25s", "rank-bm25"):
        try:
            vers[dist] = version(dist)
        except PackageNotFoundError:
            vers[dist] = "not installed"
    info["versions"] = vers
    return info


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def pct(xs, q) -> float:
    return float(np.percentile(np.asarray(xs, dtype=float), q)) if len(xs) else math.nan


def timed_each(fn, items) -> list[float]:
    """Milliseconds of ``fn(item)`` for each item."""
    out = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def fmt(v, nd=2) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{nd}f}"


def table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(x if isinstance(x, str) else fmt(x) for x in r) + " |")
    return "\n".join(lines)


def builtin():
    from audit.chunking import chunk_corpus, parse_strategies
    from audit.ingest import load_builtin
    from audit.groundtruth import load_ground_truth

    corpus = load_builtin()
    gt = load_ground_truth(corpus)
    (e,) = parse_strategies("E")
    return corpus, gt, chunk_corpus(corpus, e)


# --------------------------------------------------------------------------- build


def section_build(quick: bool, home: Path | None = None) -> str:
    """Index build ms/chunk: naive one-by-one vs batched, threads, length buckets, ONNX / int8; warm;
    query embedding; agreement of each backend with the default on the built-in ground truth."""
    from audit.models import TOKEN_BUDGET, load_encoder
    from audit.index import EmbeddingCache, cache_key, embed

    corpus, gt, chunks = builtin()
    all_texts = list(chunks.texts)
    rng = np.random.default_rng(0)
    size = BUILD_SAMPLE or (64 if quick else 192)
    texts = [all_texts[i] for i in sorted(rng.choice(len(all_texts), size, replace=False))]
    queries = [q.text for q in gt.queries + gt.ood_queries]
    onnx_home = Path(tempfile.mkdtemp(prefix="audit-bench-onnx-"))
    t = time.perf_counter()
    cores = os.cpu_count() or 1
    encs = {"torch": load_encoder(None),  # the default: packed, one worker thread (one torch thread) per core
            "torch-1": load_encoder(None, threads=1),  # packed, one worker
            "st": load_encoder(None, threads=cores, packing=False),  # previous default: s-t on length buckets
            "st-fixed": load_encoder(None, threads=cores, token_budget=None)}  # sentence-transformers' batches
    encs["torch"].model  # load once: loading the model is not index building
    for k in ("torch-1", "st", "st-fixed"):
        encs[k]._model = encs["torch"].model  # same weights, one copy
    old_home = os.environ.get("AUDIT_HOME")
    os.environ["AUDIT_HOME"] = str(onnx_home)  # ONNX exports go to a private folder
    for be in ("onnx", "onnx-int8"):
        try:
            e = load_encoder(None, backend=be, threads=cores)
            e.encode(["warm up"])  # export (once per weights digest) and load the session
            encs[be] = e
        except Exception as ex:  # onnxruntime missing: say so, measure the rest
            log(f"backend {be} unavailable: {ex}")
    if "onnx" in encs:
        try:
            encs["onnx-opt"] = _onnx_optimized(encs["onnx"], cores)
        except Exception as ex:
            log(f"onnxruntime transformer optimizer unavailable: {type(ex).__name__}: {ex}")
    export_s = time.perf_counter() - t
    tb = f"{TOKEN_BUDGET:,}"
    cfg = encs["torch"].model[0].auto_model.config
    lens = {t: n for t, n in zip(texts, [len(e.ids) for e in encs["torch"]._padding_tokenizer().encode_batch(texts)])}

    def gflop(sl) -> float:
        return sum(model_flops(cfg, lens[t]) for t in sl) / 1e9

    variants = [("naive: sentence-transformers, one chunk at a time", lambda sl: naive.encode_one_by_one(
                    encs["st-fixed"], sl)),
                ("sentence-transformers, batches of 32 sorted by length", lambda sl: encs["st-fixed"].encode(sl)),
                (f"sentence-transformers, length buckets ≤ {tb} padded tokens (previous default)",
                 lambda sl: encs["st"].encode(sl)),
                (f"packed (no padding, QKV fused), 1 worker × {cores} torch threads",
                 lambda sl: packed_intra(encs["torch"], sl, cores)),
                ("packed, 1 worker × 1 torch thread", lambda sl: encs["torch-1"].encode(sl)),
                (f"packed, {cores} workers × 1 torch thread (default)", lambda sl: encs["torch"].encode(sl))]
    if "onnx" in encs:
        variants += [(f"onnx fp32, length buckets ≤ {tb} padded tokens", lambda sl: encs["onnx"].encode(sl))]
    if "onnx-opt" in encs:
        variants += [("onnx fp32 + onnxruntime transformer optimizer (fused attention, GELU, layer norm)",
                      lambda sl: encs["onnx-opt"].encode(sl))]
    if "onnx-int8" in encs:
        variants += [("onnx int8, one text a call (different vectors)", lambda sl: encs["onnx-int8"].encode(sl))]
    n_slices = 4
    slices = [texts[i::n_slices] for i in range(n_slices)]
    load_before = load()
    spent, ceil_s, vecs, gfs = _interleaved(variants, slices, gflop, cores, "build")
    n = len(texts)
    per_chunk = {k: v / n * 1000.0 for k, v in spent.items()}
    x_ceiling = {k: spent[k] / ceil_s[k] for k in spent}
    naive_ms = per_chunk[variants[0][0]]
    ceiling_ms = gflop(texts) / max(gfs) * 1000.0 / n
    load_idle = [load_before, load()]
    # the same under a background load: a second process busy on one core (what a report does to a dashboard)
    bg_labels = [variants[2][0], variants[3][0], variants[4][0], variants[5][0]] + (
        [variants[6][0]] if "onnx" in encs else [])
    bg_variants = [v for v in variants if v[0] in bg_labels]
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        load_bg0 = load()
        bg_spent, bg_ceil, _, bg_gfs = _interleaved(bg_variants, slices[:2], gflop, cores, "build, busy core")
    finally:
        busy.kill()
        busy.wait()
    n_bg = sum(len(s) for s in slices[:2])
    load_bg = [load_bg0, load()]
    # warm: every vector from an on-disk cache (what a second run does)
    cache = EmbeddingCache(onnx_home / "warm.sqlite")
    cache.put_many([cache_key(encs["torch"], t) for t in texts], np.vstack(_unslice(vecs[variants[5][0]], n_slices, n)))
    t = time.perf_counter()
    _, n_enc = embed(encs["torch"], texts, cache)
    warm_ms = (time.perf_counter() - t) * 1000.0 / n
    cache.close()
    # query embedding: one query, one model call
    qsample = queries[:8] if quick else queries[:20]
    q_ms = {}
    for key, label in (("torch", "packed (default: one bucket → one thread)"),
                       ("st", f"sentence-transformers, torch {cores} threads (previous default)"),
                       ("onnx", "onnx fp32"), ("onnx-opt", "onnx fp32, optimized"), ("onnx-int8", "onnx int8")):
        if key in encs:
            ms = timed_each(lambda q, e=encs[key]: e.encode([q], batch_size=1), qsample)
            q_ms[label] = (pct(ms, 50), pct(ms, 95))
    rows = [[label, per_chunk[label], naive_ms / per_chunk[label], x_ceiling[label]] for label, _ in variants]
    rows.append(["warm: every vector from the SQLite cache", warm_ms, naive_ms / warm_ms, "–"])
    bg_rows = [[label, bg_spent[label] / n_bg * 1000.0, bg_spent[label] / bg_ceil[label],
                bg_spent[label] / n_bg / (spent[label] / n)] for label, _ in bg_variants]
    toks = sum(lens.values())
    out = [f"Index build on {n} chunks of strategy E (random sample, seed 0; 4 interleaved slices; {toks:,} tokens "
           f"with the special ones, {toks / n:.1f} a chunk), onnxruntime threads = cores, load {load_idle[0]} → "
           f"{load_idle[1]} (ONNX export, optimisation and session load {export_s:.0f} s, once, not counted).", "",
           f"Ceiling: torch fp32 matrix products of the model's own shapes (4800×{cfg.hidden_size} @ "
           f"{cfg.hidden_size}×{cfg.intermediate_size}, 4800×{cfg.intermediate_size} @ {cfg.intermediate_size}×"
           f"{cfg.hidden_size}, 4800×{cfg.hidden_size} @ {cfg.hidden_size}×{cfg.hidden_size}), torch {cores} threads, "
           f"measured before every variant on every slice: best {max(gfs):.0f} GFLOP/s, median "
           f"{float(np.median(gfs)):.0f}; the model costs {gflop(texts) / n:.2f} GFLOP a chunk here "
           f"({cfg.num_hidden_layers} layers × (4·d² + 2·d·ff) × 2 per token, plus attention 4·n·d per token and "
           f"layer), so the ceiling is {ceiling_ms:.1f} ms/chunk at the best rate. \"× ceiling\" divides each "
           "variant's time by the time the ceiling's rate, measured just before it on the same slice, needs for "
           "the same FLOPs (1.00 = the matrix unit's speed; below 1 is possible when the variant's threads "
           "beat the 2-thread products).", "",
           table(["variant", "ms/chunk", "× naive", "× ceiling"], rows), "",
           f"Under a background load (a second process busy on one core, `while True: pass`), {n_bg} of the "
           f"chunks (2 slices), the ceiling measured under the same load (best {max(bg_gfs):.0f} GFLOP/s, median "
           f"{float(np.median(bg_gfs)):.0f}); load {load_bg[0]} → {load_bg[1]}:", "",
           table(["variant", "ms/chunk", "× ceiling (busy)", "× its idle ms/chunk"], bg_rows), "",
           table(["query embedding (one query a call)", "p50 ms", "p95 ms"], [[k, a, b] for k, (a, b) in q_ms.items()])]
    # agreement of each variant with the previous default on the built-in ground truth (dense, strategy E)
    agree = {}
    if quick:
        out += ["", "Agreement of the backends on the built-in ground truth: not run with --quick."]
    else:
        log("agreement: the previous default over every E chunk and query ...")
        # sentence-transformers on its buckets, torch 1 thread: robust to a busy machine (2 threads can be 10x
        # slower then); the thread count moves a vector by float32 rounding only
        st1 = load_encoder(None, threads=1, packing=False)
        st1._model = encs["torch"].model
        ref = st1.encode(all_texts + queries)
        ref_v, ref_q = ref[:len(all_texts)], ref[len(all_texts):]
        rows = []
        for key, label in (("torch", "packed, 2 workers × 1 thread (default)"), ("onnx", "onnx fp32"),
                           ("onnx-opt", "onnx fp32, optimized"), ("onnx-int8", "onnx int8")):
            if key not in encs:
                continue
            allv = _cached_vectors(home, encs[key], all_texts + queries) if key == "torch" else None
            if allv is None:
                allv = encs[key].encode(all_texts + queries)
            a = _agreement(chunks, gt, ref_v, ref_q, allv[:len(all_texts)], allv[len(all_texts):])
            agree[label] = a
            rows.append([label, f"{a['max_abs_diff']:.1e}", f"{a['min_cos']:.7f}", f"{a['same_top10']}/{a['n']}",
                         f"{a['same_hits_at_20']}/{a['n_in']}",
                         " / ".join(f"{a['recall'][k]:.3f}" for k in (1, 4, 8, 20)),
                         " / ".join(f"{a['recall_ref'][k]:.3f}" for k in (1, 4, 8, 20))])
        out += ["", f"Agreement with the previous default (sentence-transformers, length buckets, torch 1 thread) on the built-in "
                f"ground truth, strategy E ({len(all_texts)} chunks), dense: identical top-10 lists over all "
                f"{len(queries)} queries, identical hit@1..20 over the in-domain queries, recall@1/4/8/20:", "",
                table(["variant", "max |Δv|", "min cos", "same top-10", "same hits@1-20", "R@1/4/8/20",
                       "previous R@1/4/8/20"], rows)]
    import torch

    torch.set_num_threads(cores)  # the 1-thread variants changed the process-wide setting
    RESULTS["sections"]["build"] = {"chunks": n, "ms_per_chunk": per_chunk, "x_ceiling": x_ceiling,
                                    "ceiling_gflops": gfs, "ceiling_ms_per_chunk": ceiling_ms,
                                    "warm_ms_per_chunk": warm_ms, "query_ms": q_ms, "agreement": agree,
                                    "background": {"chunks": n_bg, "ms_per_chunk": {k: v / n_bg * 1000.0
                                                                                    for k, v in bg_spent.items()},
                                                   "x_ceiling": {k: bg_spent[k] / bg_ceil[k] for k in bg_spent},
                                                   "ceiling_gflops": bg_gfs, "load": load_bg},
                                    "load": [load_before, load()]}
    if old_home is None:
        os.environ.pop("AUDIT_HOME", None)
    else:
        os.environ["AUDIT_HOME"] = old_home
    shutil.rmtree(onnx_home, ignore_errors=True)
    return "\n".join(out)


def model_flops(cfg, n: int) -> float:
    """FLOPs of one BERT forward over ``n`` tokens: per layer the four d×d projections and the two
    d×ff ones (2 FLOPs a multiply-add), plus attention's two n×n×d products."""
    d, ff = cfg.hidden_size, cfg.intermediate_size
    return cfg.num_hidden_layers * (2.0 * n * (4 * d * d + 2 * d * ff) + 4.0 * n * n * d)


_CEIL: dict = {}


def ceiling_gflops(cfg, threads: int, m: int = 4800) -> float:
    """GFLOP/s of torch fp32 products of the model's shapes (m×d @ d×ff, m×ff @ ff×d, m×d @ d×d), one pass."""
    import torch

    key = (cfg.hidden_size, cfg.intermediate_size, m)
    if key not in _CEIL:
        g = torch.Generator().manual_seed(0)
        d, ff = cfg.hidden_size, cfg.intermediate_size
        _CEIL[key] = (torch.randn(m, d, generator=g), torch.randn(d, ff, generator=g), torch.randn(ff, d, generator=g),
                      torch.randn(d, d, generator=g), torch.empty(m, ff), torch.empty(m, d), torch.empty(m, d))
    a, w1, w2, w3, h, o, q = _CEIL[key]
    d, ff = cfg.hidden_size, cfg.intermediate_size
    torch.set_num_threads(threads)
    with torch.inference_mode():
        t = time.perf_counter()
        torch.mm(a, w1, out=h)
        torch.mm(h, w2, out=o)
        torch.mm(a, w3, out=q)
        dt = time.perf_counter() - t
    return 2.0 * m * (d * ff * 2 + d * d) / dt / 1e9


def _interleaved(variants, slices, gflop, cores: int, what: str):
    """Each variant on each slice in turn, the ceiling measured just before each run.

    Returns seconds spent per variant, the seconds the ceiling's rate needs for
    the same FLOPs, the vectors per slice, and every ceiling rate measured.
    """
    import torch

    spent = {v[0]: 0.0 for v in variants}
    ceil_s = {v[0]: 0.0 for v in variants}
    vecs = {v[0]: [None] * len(slices) for v in variants}
    cfg = None
    gfs = []
    for si, sl in enumerate(slices):
        for label, fn in variants:
            if cfg is None:
                from audit.models import load_encoder

                cfg = load_encoder(None).model[0].auto_model.config
            ceiling_gflops(cfg, cores)  # warm the products' buffers and threads
            g = max(ceiling_gflops(cfg, cores), ceiling_gflops(cfg, cores))
            gfs.append(g)
            torch.set_num_threads(cores)
            t = time.perf_counter()
            vecs[label][si] = fn(sl)
            spent[label] += time.perf_counter() - t
            ceil_s[label] += gflop(sl) / g
        log(f"{what}: slice {si + 1}/{len(slices)} done")
    return spent, ceil_s, vecs, gfs


def torch_set_threads(n: int) -> None:
    import torch

    torch.set_num_threads(n)


def packed_intra(enc, texts: list[str], threads: int) -> np.ndarray:
    """The packed encoder's buckets in the calling thread with ``threads`` torch threads (intra-op)."""
    import torch

    ids, buckets = enc._packed_buckets(list(texts))
    packed = enc._packed_model()
    out = np.zeros((len(texts), enc.dims), dtype=np.float32)
    torch.set_num_threads(threads)
    for b in buckets:
        out[b] = packed.mean_normalised([ids[i] for i in b])
    return out


def _onnx_optimized(enc, threads: int):
    """A copy of an onnx-backend encoder whose session runs onnxruntime's BERT optimizer's graph."""
    import copy

    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    from audit.models import onnx_export

    src = onnx_export(enc.path, enc.weights_digest)
    dst = src.with_name("model.opt.onnx")
    cfg = __import__("json").loads((enc.path / "config.json").read_text())
    m = optimize_model(str(src), model_type="bert", num_heads=int(cfg["num_attention_heads"]),
                       hidden_size=int(cfg["hidden_size"]))
    log(f"onnxruntime optimizer fused: {m.get_fused_operator_statistics()}")
    m.save_model_to_file(str(dst))
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    opt = copy.copy(enc)
    opt._lock = threading.Lock()
    opt._session = ort.InferenceSession(str(dst), so, providers=["CPUExecutionProvider"])
    opt.encode(["warm up"])
    return opt


def _cached_vectors(home: Path | None, encoder, texts: list[str]):
    """The default model's vectors for ``texts`` from a cache a report run filled (read-only), or None."""
    import sqlite3

    from audit.home import default_home
    from audit.index import cache_key

    keys = [cache_key(encoder, t) for t in texts]
    for h in [h for h in (home, default_home()) if h is not None]:
        found = {}  # the report keeps query vectors in cache.sqlite and chunk vectors in the index file
        for f in sorted(Path(h).glob("*.sqlite")):
            try:
                # immutable: read without the WAL's shared-memory file (no writer runs at this point)
                db = sqlite3.connect(f"file:{f}?immutable=1", uri=True)
                for lo in range(0, len(keys), 500):
                    part = keys[lo:lo + 500]
                    q = "SELECT key, vec FROM embedding WHERE key IN (%s)" % ",".join("?" * len(part))
                    found.update((bytes(k), np.frombuffer(v, dtype=np.float32)) for k, v in db.execute(q, part))
                db.close()
            except sqlite3.Error:
                continue
        if len(found) == len(set(keys)):  # duplicate texts share a key
            return np.vstack([found[k] for k in keys])
    return None


def _unslice(parts, n_slices, n):
    """Rows back in the original order from ``texts[i::n_slices]`` slices."""
    out = [None] * n
    for s, part in enumerate(parts):
        for j, row in enumerate(np.asarray(part)):
            out[s + j * n_slices] = row
    return out


def _agreement(chunks, gt, ref_vecs, ref_q, vecs, qv) -> dict:
    from audit.matching import collapse
    from audit.retrieval import dense_ranking

    texts = [collapse(c.text) for c in chunks.chunks]
    correct = {nd.id: frozenset(i for i, t in enumerate(texts) if nd.key in t) for nd in gt.needles}
    queries = gt.queries + gt.ood_queries
    same10, same_hits, n_in = 0, 0, 0
    rec = {k: 0 for k in (1, 4, 8, 20)}
    rec_ref = {k: 0 for k in (1, 4, 8, 20)}
    for qi, q in enumerate(queries):
        a = dense_ranking(ref_vecs, ref_q[qi])
        b = dense_ranking(vecs, qv[qi])
        same10 += a.chunk_ids[:10].tolist() == b.chunk_ids[:10].tolist()
        if q.in_domain:
            n_in += 1
            ra, rb = a.first_rank(correct[q.needle_id]), b.first_rank(correct[q.needle_id])
            hit = [ra is not None and ra <= k for k in range(1, 21)]
            hitb = [rb is not None and rb <= k for k in range(1, 21)]
            same_hits += hit == hitb
            for k in rec:
                rec[k] += rb is not None and rb <= k
                rec_ref[k] += ra is not None and ra <= k
    return {"n": len(queries), "n_in": n_in, "same_top10": same10, "same_hits_at_20": same_hits,
            "max_abs_diff": float(np.abs(vecs - ref_vecs).max()), "min_cos": float((vecs * ref_vecs).sum(1).min()),
            "recall": {k: v / n_in for k, v in rec.items()}, "recall_ref": {k: v / n_in for k, v in rec_ref.items()}}


# --------------------------------------------------------------------------- per query


def section_query(quick: bool, home: Path | None = None) -> str:
    """Per query on the built-in corpus (strategy E): each retriever beside its naive baseline."""
    from audit.models import load_cross_encoder, load_encoder, resolve_model_path
    from audit.retrieval import BM25, dense_ranking, rerank, rrf
    corpus, gt, chunks = builtin()
    texts = list(chunks.texts)
    queries = [q.text for q in gt.queries + gt.ood_queries]
    # real vectors when the user's cache has them (any run of the report fills it); else random unit
    # vectors of the same shape: the scan's cost does not depend on the values
    vectors, note = None, ""
    allv = _cached_vectors(home, load_encoder(None), texts + queries)
    if allv is not None:
        vectors, qvecs = allv[:len(texts)], allv[len(texts):]
        note = "real all-MiniLM-L6-v2 vectors (from the report's cache)"
    if vectors is None:
        vectors = synthetic.unit_vectors(len(texts), 384, seed=3)
        qvecs = synthetic.unit_vectors(len(queries), 384, seed=4)
        note = "random unit vectors of the real shape (no warm cache here; the scan's cost is the same)"
    rows = []
    load_before = load()
    idx = list(range(len(queries)))
    # dense
    d_fast = timed_each(lambda i: dense_ranking(vectors, qvecs[i]), idx)
    d_naive = timed_each(lambda i: naive.dense_loop(vectors, qvecs[i]), idx[: 20 if quick else len(idx)])
    # BM25
    t = time.perf_counter()
    b_rank = BM25(texts, backend="rank-bm25")
    build_rank = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    b_s = BM25(texts, backend="bm25s")
    build_s = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    seed = naive.SeedBM25(texts)
    build_seed = (time.perf_counter() - t) * 1000
    bm_rank = timed_each(lambda i: b_rank.rank(queries[i]), idx)
    bm_s = timed_each(lambda i: b_s.rank(queries[i]), idx)
    bm_seed = timed_each(lambda i: seed.rank(queries[i]), idx)
    same_bm25 = sum(b_rank.rank(q).chunk_ids.tolist() == b_s.rank(q).chunk_ids.tolist()
                    == [c for c, _ in seed.rank(q)] for q in queries)
    # hybrid = dense + BM25 + fusion, as the pipeline composes it
    default_bm25 = BM25(texts)
    h_fast = timed_each(lambda i: rrf([dense_ranking(vectors, qvecs[i]), default_bm25.rank(queries[i])]), idx)
    h_naive = timed_each(lambda i: naive.rrf_loop([[c for c, _ in naive.dense_loop(vectors, qvecs[i])],
                                                    [c for c, _ in seed.rank(queries[i])]]),
                         idx[: 20 if quick else len(idx)])
    rows += [["dense scan (exact, full ranking)", pct(d_fast, 50), pct(d_fast, 95), "Python loop over chunks",
              pct(d_naive, 50), pct(d_naive, 95), pct(d_naive, 50) / pct(d_fast, 50)],
             [f"BM25 rank-bm25 (default below {BM25_MIN()} chunks)", pct(bm_rank, 50), pct(bm_rank, 95),
              "seed's per-document loop", pct(bm_seed, 50), pct(bm_seed, 95), pct(bm_seed, 50) / pct(bm_rank, 50)],
             ["BM25 bm25s", pct(bm_s, 50), pct(bm_s, 95), "seed's per-document loop", pct(bm_seed, 50),
              pct(bm_seed, 95), pct(bm_seed, 50) / pct(bm_s, 50)],
             ["hybrid (dense + BM25 + RRF)", pct(h_fast, 50), pct(h_fast, 95), "loops + dict RRF",
              pct(h_naive, 50), pct(h_naive, 95), pct(h_naive, 50) / pct(h_fast, 50)]]
    # rerank: 25 pairs with a cross-encoder of the real one's architecture (untrained head: cost only)
    rr_note = ""
    try:
        path = str(resolve_model_path(None))
        ce = {None: load_cross_encoder(path, num_labels=1)}  # default: length buckets
        ce_len = getattr(ce[None].model, "max_seq_length", None) or getattr(ce[None].model, "max_length", None)
        # the head is untrained and random at each load: every variant gets the default's weights
        ce[128] = load_cross_encoder(path, num_labels=1, max_length=128)
        ce[128].model.load_state_dict(ce[None].model.state_dict())
        ce["fixed"] = load_cross_encoder(path, num_labels=1, token_budget=None)
        ce["fixed"].model = ce[None].model
        ce["st"] = load_cross_encoder(path, num_labels=1, packing=False)  # previous default: predict per bucket
        ce["st"].model = ce[None].model
        # the packed path before equal-cost buckets and the [CLS]-only last layer, and with the buckets only
        import copy

        ce["prev"] = copy.copy(ce[None])
        ce["prev"]._balanced, ce["prev"]._cls_only = False, False
        ce["bal"] = copy.copy(ce[None])
        ce["bal"]._cls_only = False
        cfg = ce[None].model.model.config
        cores = os.cpu_count() or 1
        nq = 4 if quick else 12
        heads = [rrf([dense_ranking(vectors, qvecs[i]), default_bm25.rank(queries[i])]) for i in range(nq)]
        ms = {"batch": [], "one": [], "128": [], "fixed": [], "st": [], "prev": [], "bal": []}
        ceil_ms = {k: [] for k in ms}
        same_128, same_bucket, same_st, same_prev, trunc = 0, 0, 0, 0, 0
        diff_prev = 0.0
        tok = load_encoder(None).tokenizer
        for i in range(nq):
            head = heads[i]
            pair_texts = [texts[int(c)] for c in head.chunk_ids[:25]]
            res = {}
            for key, model in (("batch", ce[None]), ("prev", ce["prev"]), ("bal", ce["bal"]), ("st", ce["st"]),
                               ("128", ce[128]), ("fixed", ce["fixed"]), ("one", None)):
                lim = 128 if key == "128" else int(ce_len)
                plens = [len(x) for x in ce[None].model.tokenizer([queries[i]] * 25, pair_texts, truncation=True,
                                                                  max_length=lim)["input_ids"]]
                g = max(ceiling_gflops(cfg, cores), ceiling_gflops(cfg, cores))
                ceil_ms[key].append(sum(model_flops(cfg, n) for n in plens) / g / 1e6)
                torch_set_threads(cores)
                t = time.perf_counter()
                if key == "one":
                    naive.rerank_one_by_one(ce["fixed"], queries[i], pair_texts)
                else:
                    res[key] = rerank(head, queries[i], texts, model, depth=25)
                ms[key].append((time.perf_counter() - t) * 1000)
            same_128 += res["batch"].chunk_ids[:25].tolist() == res["128"].chunk_ids[:25].tolist()
            same_bucket += (res["batch"].chunk_ids[:25].tolist() == res["fixed"].chunk_ids[:25].tolist()
                            and np.allclose(res["batch"].scores[:25], res["fixed"].scores[:25], atol=1e-4))
            same_st += (res["batch"].chunk_ids[:25].tolist() == res["st"].chunk_ids[:25].tolist()
                        and np.allclose(res["batch"].scores[:25], res["st"].scores[:25], atol=1e-5))
            same_prev += (res["batch"].chunk_ids[:25].tolist() == res["prev"].chunk_ids[:25].tolist()
                          and np.allclose(res["batch"].scores[:25], res["prev"].scores[:25], atol=1e-4))
            diff_prev = max(diff_prev, float(np.abs(np.sort(res["batch"].scores[:25])
                                                    - np.sort(res["prev"].scores[:25])).max()))
            qn = len(tok.encode(queries[i], add_special_tokens=False).ids)
            trunc += sum(len(e.ids) + qn + 3 > 128 for e in tok.encode_batch(pair_texts, add_special_tokens=False))
        seed_ms = SEED_MS["rerank 25 pairs (ms/query)"]
        from audit.models import TOKEN_BUDGET

        def xc(key):
            return sum(ms[key]) / sum(ceil_ms[key])

        tb = f"{TOKEN_BUDGET:,}"
        rows += [[f"rerank 25 pairs, one batch (sentence-transformers), max_length {ce_len}", pct(ms["fixed"], 50),
                  pct(ms["fixed"], 95), "one pair per call", pct(ms["one"], 50), pct(ms["one"], 95),
                  pct(ms["one"], 50) / pct(ms["fixed"], 50), xc("fixed")],
                 [f"rerank 25 pairs, sentence-transformers on length buckets ≤ {tb} tokens (previous default), "
                  f"max_length {ce_len}", pct(ms["st"], 50), pct(ms["st"], 95), "one pair per call",
                  pct(ms["one"], 50), pct(ms["one"], 95), pct(ms["one"], 50) / pct(ms["st"], 50), xc("st")],
                 [f"rerank 25 pairs, packed, buckets ≤ {tb} tokens, {cores} workers × 1 thread (previous default), "
                  f"max_length {ce_len}", pct(ms["prev"], 50), pct(ms["prev"], 95), "one pair per call",
                  pct(ms["one"], 50), pct(ms["one"], 95), pct(ms["one"], 50) / pct(ms["prev"], 50), xc("prev")],
                 [f"rerank 25 pairs, packed, equal-cost buckets (a multiple of {cores} workers), max_length {ce_len}",
                  pct(ms["bal"], 50), pct(ms["bal"], 95), "one pair per call", pct(ms["one"], 50),
                  pct(ms["one"], 95), pct(ms["one"], 50) / pct(ms["bal"], 50), xc("bal")],
                 [f"rerank 25 pairs, packed, equal-cost buckets + last layer for [CLS] only (default), "
                  f"max_length {ce_len}",
                  pct(ms["batch"], 50), pct(ms["batch"], 95), "one pair per call", pct(ms["one"], 50),
                  pct(ms["one"], 95), pct(ms["one"], 50) / pct(ms["batch"], 50), xc("batch")],
                 ["rerank 25 pairs, packed, max_length 128", pct(ms["128"], 50), pct(ms["128"], 95),
                  "seed (1 thread, its CPU)", seed_ms, "–", seed_ms / pct(ms["128"], 50), xc("128")]]
        RESULTS.setdefault("rerank", {}).update({"x_ceiling": {k: xc(k) for k in ms}, "ms": ms, "ceil_ms": ceil_ms,
                                                 "same_as_previous_packed": same_prev,
                                                 "max_score_diff_previous_packed": diff_prev})
        rr_note = (f"Rerank over the first {nq} queries' hybrid top 25 (a cross-encoder built from the packaged "
                   f"MiniLM weights: the real one's architecture and cost, untrained head). The packed default gives "
                   f"the same order and scores (within 1e-5) as sentence-transformers on the same buckets for "
                   f"{same_st}/{nq} queries, and as the previous packed default (within 1e-4; largest score difference "
                   f"{diff_prev:.1e}) for {same_prev}/{nq}. × ceiling (the whole model's FLOPs, also for the "
                   f"default that skips ~14% of them in the last layer): the time over what the ceiling's rate (torch products of the "
                   f"model's shapes, {cores} threads, measured before each call) needs for the pairs' FLOPs. "
                   f"Length buckets give the "
                   f"same order and scores (within 1e-4) as one batch for {same_bucket}/{nq} queries. At max_length "
                   f"128, {trunc}/{nq * 25} pairs are cut (query + chunk over 128 tokens) and the 25-chunk order "
                   f"matched the default's for {same_128}/{nq} queries: truncation changes the scores; whether it "
                   "hurts the trained ms-marco model's ranking cannot be measured without it.")
    except Exception as ex:
        rr_note = f"rerank not measured: {ex}"
    rows = [r + ["–"] * (8 - len(r)) for r in rows]
    out = [f"Per query on the built-in corpus, strategy E ({len(texts)} chunks), {len(queries)} queries; {note}; "
           f"torch threads {torch_threads()}, load {load_before} → {load()}; BM25 build: rank-bm25 "
           f"{build_rank:.0f} ms, bm25s {build_s:.0f} ms, seed port {build_seed:.0f} ms; the three BM25 give the same "
           f"ranking for {same_bm25}/{len(queries)} queries.", "",
           table(["stage", "p50 ms", "p95 ms", "naive baseline", "naive p50 ms", "naive p95 ms", "× faster",
                  "× ceiling"], rows),
           "", rr_note]
    RESULTS["sections"]["query"] = {"rows": [[str(x) if isinstance(x, str) else x for x in r] for r in rows],
                                    "note": rr_note, "load": [load_before, load()]}
    return "\n".join(out)


def BM25_MIN() -> str:
    from audit.retrieval import BM25S_MIN_DOCS

    return f"{BM25S_MIN_DOCS:,}"


# --------------------------------------------------------------------------- report


_PROBE = ("import atexit, sys, runpy\n"
          "atexit.register(lambda: print('BENCH-TORCH-IMPORTED', 'torch' in sys.modules, file=sys.stderr))\n"
          "sys.argv = ['audit'] + sys.argv[1:]\n"
          "runpy.run_module('audit', run_name='__main__', alter_sys=True)\n")


def run_measured(args: list[str], env: dict) -> dict:
    """Run a child Python; wall seconds, peak RSS (MiB, polled every 20 ms), torch imported or not."""
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", _PROBE] + args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    peak = [0]

    def poll():
        import psutil

        try:
            pr = psutil.Process(p.pid)
            while p.poll() is None:
                rss = pr.memory_info().rss + sum(c.memory_info().rss for c in pr.children(recursive=True))
                peak[0] = max(peak[0], rss)
                time.sleep(0.02)
        except Exception:
            pass

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    out, err = p.communicate()
    wall = time.perf_counter() - t
    th.join(1)
    torch_imported = "BENCH-TORCH-IMPORTED True" in err
    if p.returncode != 0:
        log(f"child failed ({p.returncode}): {err[-800:]}")
    return {"wall_s": wall, "peak_mib": peak[0] / 2**20, "torch_imported": torch_imported, "rc": p.returncode,
            "stdout": out}


def section_report(quick: bool, home: Path) -> str:
    """``python -m audit report`` cold (empty AUDIT_HOME) then warm twice."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIT_")}
    env["AUDIT_HOME"] = str(home)
    args = ["report", "--quiet"] + (["--strategies", "E"] if quick else [])
    load_before = load()
    log(f"report cold ({'strategy E' if quick else 'strategies A-F'}) in {home} ...")
    cold = run_measured(args, env)
    log(f"report cold: {cold['wall_s']:.1f} s; warm ...")
    warm = [run_measured(args, env) for _ in range(2)]
    cold_ms_chunk = _ms_per_chunk(cold["stdout"])
    rows = [["cold (nothing cached)", cold["wall_s"], cold["peak_mib"], str(cold["torch_imported"]), cold["rc"]]]
    rows += [[f"warm #{i + 1}", w["wall_s"], w["peak_mib"], str(w["torch_imported"]), w["rc"]]
             for i, w in enumerate(warm)]
    what = "strategy E only (--quick)" if quick else "all six strategies A–F"
    out = [f"`python -m audit report` on the built-in corpus, {what}, reranker default (not installed here: the "
           f"column says why), torch threads {torch_threads()}, load {load_before} → {load()}:", "",
           table(["run", "wall s", "peak RSS MiB", "torch imported", "exit"], rows)]
    if cold_ms_chunk:
        out += ["", "index build as the cold report measured it (ms/chunk, its chunks table): "
                + ", ".join(f"{k} {v:.1f}" for k, v in cold_ms_chunk.items())]
    RESULTS["sections"]["report"] = {"cold": {k: v for k, v in cold.items() if k != "stdout"},
                                     "warm": [{k: v for k, v in w.items() if k != "stdout"} for w in warm],
                                     "strategies": what, "load": [load_before, load()],
                                     "cold_ms_per_chunk": cold_ms_chunk}
    return "\n".join(out)


def _ms_per_chunk(report_text: str) -> dict:
    """The ``index build (ms/chunk)`` column of the report's chunks table."""
    lines = report_text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("strategy") and "index build (ms/chunk)" in line:
            out = {}
            for row in lines[i + 1:]:
                parts = row.split()
                if not parts or len(parts[0]) != 1:
                    break
                try:
                    out[parts[0]] = float(parts[-1])
                except ValueError:
                    break
            return out
    return {}


# --------------------------------------------------------------------------- scaling


def _rss_mib() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def dense_topk(vectors: np.ndarray, query: np.ndarray, k: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` of the exact scan, same order as ``dense_ranking``, without sorting the rest.

    ``argpartition`` finds the k-th smallest distance; every chunk at or below
    it (ties included) is sorted by (distance, chunk id) and cut at ``k``. Distances are the
    canonical ones (:func:`audit.scores.cosine_distances`), as the audit's.
    """
    from audit.scores import cosine_distances

    dist = cosine_distances(query, vectors)
    if k < dist.shape[0]:
        kth = np.partition(dist, k - 1)[k - 1]
        cand = np.flatnonzero(dist <= kth)
    else:
        cand = np.arange(dist.shape[0])
    o = np.lexsort((cand, dist[cand]))[:k]
    return cand[o], dist[cand[o]]


def section_scaling(quick: bool, sizes: list[int]) -> str:
    """Dense and BM25 ms/query and memory on synthetic corpora; the naive ways where they finish."""
    from audit.retrieval import BM25, dense_ranking

    rows = []
    nq = 20
    queries = synthetic.queries(nq)
    load_before = load()
    detail = {}
    for n in sizes:
        log(f"scaling {n:,} chunks ...")
        gc.collect()
        r0 = _rss_mib()
        vecs = synthetic.unit_vectors(n, seed=n)
        qv = synthetic.unit_vectors(nq, seed=1)
        qn = nq if n < 1_000_000 else 10
        d_full = timed_each(lambda i: dense_ranking(vecs, qv[i]), range(qn))
        d_top = timed_each(lambda i: dense_topk(vecs, qv[i], 100), range(qn))
        # the float32 product and difference alone, as before the canonical rule (issue 21): its cost
        d_raw = timed_each(lambda i: 1.0 - (vecs @ qv[i]).astype(np.float64), range(qn))
        try:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1):
                d_top1 = timed_each(lambda i: dense_topk(vecs, qv[i], 100), range(qn))
        except ImportError:
            d_top1 = []
        # same first 100 as the full ranking (the top-k path is only an optimisation)
        for i in range(3):
            assert dense_topk(vecs, qv[i], 100)[0].tolist() == dense_ranking(vecs, qv[i]).chunk_ids[:100].tolist()
        d_naive = (timed_each(lambda i: naive.dense_loop(vecs, qv[i]), range(2)) if n <= 10_000 else [])
        dense_mib = vecs.nbytes / 2**20
        del vecs
        gc.collect()
        t = time.perf_counter()
        texts = synthetic.texts(n, seed=n)
        gen_s = time.perf_counter() - t
        r1 = _rss_mib()
        t = time.perf_counter()
        b = BM25(texts, backend="bm25s")
        build_s = time.perf_counter() - t
        gc.collect()
        bm_mib = _rss_mib() - r1
        s_scores = timed_each(lambda q: b.scores(q), queries)
        s_full = timed_each(lambda q: b.rank(q), queries)
        s_top = timed_each(lambda q: b.rank(q, k=100), queries)
        positives = int(np.mean([int((b.scores(q) > 0).sum()) for q in queries[:5]]))
        del b
        gc.collect()
        rank_q, rank_build, rank_mib, seed_q = [], math.nan, math.nan, []
        if n <= 100_000:
            r2 = _rss_mib()
            t = time.perf_counter()
            rb = BM25(texts, backend="rank-bm25")
            rank_build = time.perf_counter() - t
            rank_mib = _rss_mib() - r2
            rank_q = timed_each(lambda q: rb.rank(q), queries[: 10 if n > 10_000 else nq])
            del rb
            gc.collect()
            sd = naive.SeedBM25(texts)
            seed_q = timed_each(lambda q: sd.rank(q), queries[:5])
            del sd
        del texts
        gc.collect()
        detail[n] = {"dense_full": (pct(d_full, 50), pct(d_full, 95)), "dense_top100": (pct(d_top, 50), pct(d_top, 95)),
                     "dense_raw_float32": pct(d_raw, 50),
                     "dense_top100_blas1": (pct(d_top1, 50), pct(d_top1, 95)),
                     "dense_naive": pct(d_naive, 50), "dense_mib": dense_mib, "bm25s_build_s": build_s,
                     "bm25s_mib": bm_mib, "bm25s_scores": pct(s_scores, 50),
                     "bm25s_rank": (pct(s_full, 50), pct(s_full, 95)), "bm25s_top100": (pct(s_top, 50), pct(s_top, 95)),
                     "rank_bm25": pct(rank_q, 50), "rank_bm25_build_s": rank_build, "rank_bm25_mib": rank_mib,
                     "seed": pct(seed_q, 50), "positives": positives, "texts_gen_s": gen_s, "rss0": r0}
        rows.append([f"{n:,}", pct(d_raw, 50), pct(d_full, 50), pct(d_top, 50), pct(d_top, 95), pct(d_top1, 50),
                     pct(d_naive, 50),
                     dense_mib,
                     pct(s_full, 50), pct(s_top, 50), pct(s_top, 95), build_s, bm_mib,
                     pct(rank_q, 50), pct(seed_q, 50), positives])
        log(f"scaling {n:,}: dense top-100 {pct(d_top, 50):.1f} ms, bm25s top-100 {pct(s_top, 50):.1f} ms")
    out = [f"Scaling on synthetic corpora (random unit vectors, 384 dims; Zipf texts, 64 tokens a chunk, "
           f"dense distances canonical (float64 sums, exactly rounded to 9 decimals, audit.scores) beside the "
           f"float32 product alone; "
           f"50,000 words; 6-word Zipf queries, so most chunks hold a query word), {nq} queries "
           f"(10 for the dense scan at 1M), ms/query p50 unless marked, memory in MiB; torch not involved; "
           f"load {load_before} → {load()}:", "",
           table(["chunks", "float32 distances (before the rule)", "dense full ranking", "dense top-100", "dense top-100 p95", "dense top-100, BLAS 1 thread",
                  "dense Python loop",
                  "vectors MiB", "bm25s full ranking", "bm25s top-100", "bm25s top-100 p95", "bm25s build s",
                  "bm25s MiB (RSS Δ)", "rank-bm25", "seed loop", "chunks scored > 0"], rows)]
    RESULTS["sections"]["scaling"] = {"detail": {str(k): v for k, v in detail.items()},
                                      "load": [load_before, load()]}
    return "\n".join(out)


# --------------------------------------------------------------------------- dashboard


def section_dashboard(home: Path) -> str:
    """``streamlit run app.py`` to the Strategies page showing numbers: first start on an empty
    ``AUDIT_HOME`` (every index built: the encoder's cost), then on the report's warm home, and a reload."""
    if not (ROOT / "tests" / "test_browser.py").is_file() or not (ROOT / "app.py").is_file():
        return "Dashboard: not measured yet (no app.py / tests/test_browser.py)."
    import dashboard

    cold_home = Path(tempfile.mkdtemp(prefix="audit-bench-cold-"))
    out = []
    try:
        load_before = load()
        log("dashboard, first start on an empty AUDIT_HOME ...")
        cold = dashboard.measure(cold_home, timeout=1500)
        RESULTS["sections"]["dashboard_cold"] = cold
        out += [f"Dashboard first start on an empty `AUDIT_HOME` (`streamlit run app.py`, {cold['setting']}: "
                f"every index built before the page shows numbers), load {load_before} → {cold['load']}:", "",
                table(["step", "seconds"], [[k, v] for k, v in cold["seconds"].items()]), ""]
    except Exception as ex:
        out += [f"Dashboard first start: not measured ({type(ex).__name__}: "
                f"{str(ex).splitlines()[0] if str(ex) else ''}).", ""]
    finally:
        shutil.rmtree(cold_home, ignore_errors=True)
    try:
        res = dashboard.measure(home, timeout=300)
    except Exception as ex:
        return "\n".join(out + [f"Dashboard: not measured ({type(ex).__name__}: "
                                f"{str(ex).splitlines()[0] if str(ex) else ''})."])
    RESULTS["sections"]["dashboard"] = res
    rows = [[k, v] for k, v in res["seconds"].items()]
    return "\n".join(out + [f"Dashboard (`streamlit run app.py`, {res['setting']}, AUDIT_HOME warmed by "
                            f"the report runs above; Chromium via Playwright), load {res['load']}:", "",
                            table(["step", "seconds"], rows)])


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller samples, no 1M corpus, strategy E for the report")
    ap.add_argument("--only", default="report,build,query,scaling,dashboard",
                    help="comma-separated sections (build, query, report, scaling, dashboard)")
    ap.add_argument("--sizes", default=None, help="scaling sizes, default 10000,100000,1000000 (quick: 10k,100k)")
    ap.add_argument("--json", default=None, help="also write every figure as JSON here")
    ap.add_argument("--build-chunks", type=int, default=0,
                    help="chunks the build section samples (default 192, quick 64; a multiple of 4)")
    a = ap.parse_args(argv)
    global BUILD_SAMPLE
    BUILD_SAMPLE = a.build_chunks
    only = [s.strip() for s in a.only.split(",") if s.strip()]
    sizes = [int(x) for x in (a.sizes or ("10000,100000" if a.quick else "10000,100000,1000000")).split(",")]
    t0 = time.perf_counter()
    info = machine()
    info["torch_threads"] = torch_threads()
    try:
        import onnxruntime  # noqa: F401

        info["onnxruntime_threads"] = "default (one per core)"
    except ImportError:
        pass
    RESULTS["machine"] = info
    head = (f"Machine: {info['cores']} cores ({info['cpu']}), torch threads {info['torch_threads']}, "
            f"BLAS {info.get('blas_threads', '?')}, Python {info['python']}, "
            + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
            + f"; load average at start {info['load_avg_1/5/15_at_start']}.")
    print(f"# retrieval-audit benchmarks ({time.strftime('%Y-%m-%d %H:%M')}{', --quick' if a.quick else ''})\n")
    print(head + "\n", flush=True)
    home = Path(tempfile.mkdtemp(prefix="audit-bench-home-"))
    try:
        for name in only:
            log(f"section {name} ...")
            if name == "build":
                text = section_build(a.quick, home)
            elif name == "query":
                text = section_query(a.quick, home)
            elif name == "report":
                text = section_report(a.quick, home)
            elif name == "scaling":
                text = section_scaling(a.quick, sizes)
            elif name == "dashboard":
                text = ("Dashboard: measured in the full run only (--quick indexes strategy E only, so the "
                        "dashboard would first build the other five)." if a.quick else section_dashboard(home))
            else:
                raise SystemExit(f"unknown section {name!r}: choose from build, query, report, scaling, dashboard")
            print(f"## {name}\n\n{text}\n", flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    RESULTS["total_s"] = time.perf_counter() - t0
    RESULTS["load_at_end"] = load()
    print(f"Total {RESULTS['total_s']:.0f} s; load average at end {RESULTS['load_at_end']}.")
    if a.json:
        Path(a.json).write_text(json.dumps(RESULTS, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
