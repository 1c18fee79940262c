"""A BERT encoder run without padding, on one torch thread per worker: the default fp32 path.

sentence-transformers pads every batch to its longest text and runs each operation with torch's
intra-op thread pool. Both cost time here (docs/benchmarks.md): padding multiplies tokens that are
thrown away, and a pool of two threads waits at a barrier after every operation, which is cheap on
an idle machine and catastrophic when another process holds one of the cores. This module runs the
same weights with the same operations in the same order, but

- on the real tokens only: the dense layers see the batch's tokens as one ``(tokens, hidden)``
  matrix, attention runs per group of equal-length texts (no mask, no padding);
- with the query, key and value projections fused into one matrix product;
- on ``workers`` Python threads, each with one torch thread, taking length buckets from a shared
  queue (data parallelism: a worker that loses its core delays only its own bucket).

The vectors equal sentence-transformers' to float32 rounding (~1e-7, ``tests/test_embedding.py``).
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Sequence

import numpy as np

__all__ = ["PackedBert", "balanced_buckets", "packable", "run_buckets", "usable_cores"]


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` where unknown)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def packable(model) -> bool:
    """Whether a loaded ``SentenceTransformer`` is a plain BERT + mean pooling (+ normalise) pipeline.

    Only then does :class:`PackedBert` compute what ``model.encode`` computes; anything else
    (CLS pooling, another architecture, relative positions, a dense head) keeps sentence-transformers.
    """
    try:
        mods = list(model)
        first, pool = mods[0], mods[1]
        bert = first.auto_model
        cfg = bert.config
        ok = (type(bert).__name__ == "BertModel"
              and getattr(cfg, "position_embedding_type", "absolute") == "absolute"
              and cfg.hidden_act == "gelu" and not getattr(cfg, "is_decoder", False)
              and type(pool).__name__ == "Pooling"
              and getattr(pool, "pooling_mode", None) in ("mean", None)
              and all(type(m).__name__ == "Normalize" for m in mods[2:]))
        if ok and getattr(pool, "pooling_mode", None) is None:  # older sentence-transformers: flags
            ok = bool(getattr(pool, "pooling_mode_mean_tokens", False)) and not any(
                getattr(pool, f, False) for f in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                                   "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
                                                   "pooling_mode_lasttoken"))
        return ok and len(mods) >= 2
    except Exception:
        return False


class PackedBert:
    """The forward pass of a ``transformers`` ``BertModel`` over unpadded texts.

    Parameters
    ----------
    bert : transformers.BertModel
        The loaded model (its weights are shared, not copied, except the fused
        query/key/value matrices: 3 × hidden² floats a layer).
    """

    def __init__(self, bert) -> None:
        import torch

        self.bert = bert
        cfg = bert.config
        self.heads, self.hidden = int(cfg.num_attention_heads), int(cfg.hidden_size)
        self.layers = []
        with torch.no_grad():
            for layer in bert.encoder.layer:
                s = layer.attention.self
                wqkv = torch.cat([s.query.weight, s.key.weight, s.value.weight]).contiguous()
                bqkv = torch.cat([s.query.bias, s.key.bias, s.value.bias]).contiguous()
                self.layers.append((wqkv, bqkv, layer.attention.output.dense, layer.attention.output.LayerNorm,
                                    layer.intermediate.dense, layer.output.dense, layer.output.LayerNorm))

    def hidden_states(self, ids: Sequence[Sequence[int]], token_types: Sequence[Sequence[int]] | None = None,
                      first_only: bool = False):
        """Last hidden states of every real token, ``(sum of lengths, hidden)`` float32 torch tensor.

        ``ids`` are token ids with the special tokens, already cut to the
        window; texts of any lengths, in any order (equal lengths are grouped
        for attention). ``token_types`` defaults to zeros.

        ``first_only=True``: only each text's first token ([CLS]), ``(len(ids),
        hidden)`` in the order of ``ids``. The last layer then computes the
        keys and values of every token but the query, attention output,
        feed-forward and layer norms of the first token alone: what a pooler
        that reads position 0 needs, the same numbers to float32 rounding,
        about 10/12 of a layer's products saved (≈ 14% of a 6-layer model).
        """
        import torch
        import torch.nn.functional as F

        lens = [len(s) for s in ids]
        flat = torch.as_tensor(np.concatenate([np.asarray(s, dtype=np.int64) for s in ids]))
        pos = torch.as_tensor(np.concatenate([np.arange(n, dtype=np.int64) for n in lens]))
        e = self.bert.embeddings
        if token_types is None:
            types = e.token_type_embeddings.weight[0]
        else:
            types = e.token_type_embeddings(torch.as_tensor(
                np.concatenate([np.asarray(t, dtype=np.int64) for t in token_types])))
        x = e.LayerNorm(e.word_embeddings(flat) + types + e.position_embeddings(pos))
        starts = np.concatenate([[0], np.cumsum(lens)]).astype(int)
        groups: dict[int, list[int]] = {}
        for i, n in enumerate(lens):
            groups.setdefault(n, []).append(int(starts[i]))
        runs = []  # (length, row starts, contiguous?)
        for n, st in groups.items():
            runs.append((n, st, all(b - a == n for a, b in zip(st, st[1:]))))
        h, d = self.heads, self.hidden
        hd = d // h
        last = len(self.layers) - 1
        for li, (wqkv, bqkv, out_dense, ln1, inter, out2, ln2) in enumerate(self.layers):
            if first_only and li == last:
                return self._first_token_layer(x, starts[:-1], runs, self.layers[li])
            qkv = F.linear(x, wqkv, bqkv)
            ctx = torch.empty_like(x)
            for n, st, contiguous in runs:
                b = len(st)
                blk = qkv[st[0]:st[0] + b * n] if contiguous else torch.cat([qkv[s:s + n] for s in st])
                blk = blk.view(b, n, 3, h, hd).permute(2, 0, 3, 1, 4)
                o = F.scaled_dot_product_attention(blk[0], blk[1], blk[2]).transpose(1, 2).reshape(b * n, d)
                if contiguous:
                    ctx[st[0]:st[0] + b * n] = o
                else:
                    for j, s in enumerate(st):
                        ctx[s:s + n] = o[j * n:(j + 1) * n]
            x = ln1(out_dense(ctx) + x)
            x = ln2(out2(F.gelu(inter(x))) + x)
        if first_only:  # a model without layers: the embeddings' first rows
            return x[torch.as_tensor(starts[:-1])]
        return x

    def _first_token_layer(self, x, text_starts, runs, layer):
        """One encoder layer for each text's first token only: ``(texts, hidden)`` in text order."""
        import torch
        import torch.nn.functional as F

        wqkv, bqkv, out_dense, ln1, inter, out2, ln2 = layer
        h, d = self.heads, self.hidden
        hd = d // h
        row = {int(s): i for i, s in enumerate(text_starts)}  # first row of a text → its index
        kv = F.linear(x, wqkv[d:], bqkv[d:])  # keys and values of every token
        first = torch.as_tensor(np.asarray(text_starts, dtype=np.int64))
        q = F.linear(x[first], wqkv[:d], bqkv[:d])  # queries of the first tokens only
        ctx = torch.empty((len(text_starts), d), dtype=x.dtype)
        for n, st, contiguous in runs:
            b = len(st)
            blk = kv[st[0]:st[0] + b * n] if contiguous else torch.cat([kv[s:s + n] for s in st])
            blk = blk.view(b, n, 2, h, hd).permute(2, 0, 3, 1, 4)
            who = torch.as_tensor([row[int(s)] for s in st])
            qb = q[who].view(b, 1, h, hd).transpose(1, 2)
            ctx[who] = F.scaled_dot_product_attention(qb, blk[0], blk[1]).transpose(1, 2).reshape(b, d)
        y = ln1(out_dense(ctx) + x[first])
        return ln2(out2(F.gelu(inter(y))) + y)

    def mean_normalised(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """Mean of each text's token states, L2-normalised: ``(len(ids), hidden)`` float32."""
        import torch
        import torch.nn.functional as F

        with torch.inference_mode():
            x = self.hidden_states(ids)
            lens = torch.as_tensor([len(s) for s in ids])
            seg = torch.repeat_interleave(torch.arange(len(ids)), lens)
            sums = torch.zeros((len(ids), x.shape[1]), dtype=x.dtype).index_add_(0, seg, x)
            means = sums / lens.clamp(min=1).to(x.dtype)[:, None]
            return F.normalize(means, p=2, dim=1, eps=1e-12).numpy()


def greedy_buckets(lens: Sequence[int], token_budget: int) -> list[list[int]]:
    """Index buckets of at most ``token_budget`` real tokens (a text longer than the budget is a bucket of its
    own), filled by ascending length (ties by index), returned costliest (longest texts) first; no empty bucket.

    ``lens`` are token counts per text (special tokens included). The default of the bi-encoder, and the
    cross-encoder's previous default (:func:`balanced_buckets` replaced it there).
    """
    buckets, cur, used = [], [], 0
    for i in sorted(range(len(lens)), key=lambda i: (lens[i], i)):
        if cur and used + lens[i] > token_budget:
            buckets.append(cur)
            cur, used = [], 0
        cur.append(i)
        used += lens[i]
    if cur:
        buckets.append(cur)
    return buckets[::-1]


def balanced_buckets(lens: Sequence[int], workers: int, token_budget: int, hidden: int = 384) -> list[list[int]]:
    """Index buckets of about equal cost, a multiple of ``workers`` of them, costliest first.

    For a small job (the reranker's 25 pairs, ~3,000 tokens) buckets of
    ``token_budget`` tokens leave a worker idle: three buckets for two workers
    means one runs two while the other waits. Here the texts, sorted by
    length (so equal lengths stay together for attention), are cut into
    ``k = workers × ceil(total / (workers × token_budget))`` contiguous runs
    of about ``1/k`` of the total cost each, a text's cost taken as
    ``n × (6 × hidden + n)`` for ``n`` tokens (products ∝ 24·hidden·n FLOPs a
    layer, attention ∝ 4·n² : the same ratio). No bucket is empty; with
    fewer texts than ``k`` every text is its own bucket. ``lens`` in tokens.
    """
    n = len(lens)
    if n == 0:
        return []
    workers = max(int(workers), 1)
    total = sum(lens)
    k = workers * max(1, -(-total // (workers * max(int(token_budget), 1))))
    order = sorted(range(n), key=lambda i: (lens[i], i))
    if k >= n:
        return [[i] for i in order][::-1]
    cost = [lens[i] * (6 * hidden + lens[i]) for i in order]
    whole = float(sum(cost))
    buckets, cur, acc = [], [], 0.0
    for pos, (i, c) in enumerate(zip(order, cost)):
        left_texts, left_buckets = n - pos, k - len(buckets)
        # close the bucket at its share of the cost, or when the remaining texts are just enough for the rest
        if cur and (acc + c / 2 > whole * (len(buckets) + 1) / k or left_texts < left_buckets):
            buckets.append(cur)
            cur = []
        cur.append(i)
        acc += c
    buckets.append(cur)
    return buckets[::-1]


def run_buckets(fn: Callable[[list[int]], None], buckets: list[list[int]], workers: int,
                done: Callable[[list[int]], None] | None = None) -> None:
    """Call ``fn(bucket)`` for every bucket on ``workers`` threads, each with one torch thread.

    Buckets are taken from a shared queue in the given order (give the
    costliest first, so the threads finish together); a thread that loses its
    core delays only the bucket it holds. ``done(bucket)`` is called in the
    calling thread after each bucket (Streamlit's progress bar must be updated
    from the script's thread). With one worker (or one bucket) everything runs
    in the calling thread. torch's thread count is restored afterwards. The
    first exception raised by ``fn`` is raised here after every thread has
    stopped.
    """
    import queue

    import torch

    before = torch.get_num_threads()
    n = min(max(int(workers), 1), len(buckets))
    try:
        if n <= 1:
            torch.set_num_threads(1)
            for b in buckets:
                fn(b)
                if done:
                    done(b)
            return
        todo = list(buckets)
        lock = threading.Lock()
        finished: queue.Queue = queue.Queue()
        stop = threading.Event()

        def work() -> None:
            torch.set_num_threads(1)
            while not stop.is_set():
                with lock:
                    if not todo:
                        break
                    b = todo.pop(0)
                try:
                    fn(b)
                    finished.put(("ok", b))
                except BaseException as ex:  # re-raised in the caller
                    stop.set()
                    finished.put(("error", ex))
                    break
            finished.put(("exit", None))

        threads = [threading.Thread(target=work, name=f"audit-encode-{k}", daemon=True) for k in range(n)]
        for t in threads:
            t.start()
        error, running = None, n
        while running:
            kind, val = finished.get()
            if kind == "exit":
                running -= 1
            elif kind == "error":
                error = error or val
            elif done and error is None:
                done(val)
        for t in threads:
            t.join()
        if error is not None:
            raise error
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
