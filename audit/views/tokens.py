"""The Tokens page's view-model: what the header costs, the chunks the encoder silently truncates, rerank pairs.

Needs token counts of the chunks (the built-in pipelines count them with the embedding model's own
tokenizer). Tokens are the model's word-pieces without special tokens unless stated.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..report.markup import truncated_text_html
from ..report.tables import chunks_frame, rerank_window_frame

__all__ = ["chunk_lengths_line", "over_window_frame", "rerank_window_frame", "special_tokens", "token_bins",
           "token_hist_frame", "token_lengths_frame", "token_share_frame", "truncated_text_html"]


def chunk_lengths_line(runset) -> str | None:
    """Without token counts, what a team's chunks allow: their lengths in characters, median and longest
    (``Your 12 chunks' lengths in characters (no tokenizer here): median 150, longest 210.``); None without chunks."""
    sp = runset.spaces.get("")
    if sp is None or sp.chunks is None:
        return None
    lengths = pd.Series([len(c.text) for c in sp.chunks.values()])
    if lengths.empty:
        return None
    return (f"Your {len(lengths):,} chunks' lengths in characters (no tokenizer here): median "
            f"{int(lengths.median()):,}, longest {int(lengths.max()):,}.")


def special_tokens(runset) -> int:
    """How many special tokens the encoder adds to every chunk (counted on the first strategy's chunks).

    Raises
    ------
    IndexError
        The run set holds no built-in strategy (``can(runset, "tokens")`` is false: the page says so first).
    """
    return runset.spaces[runset.strategies[0]].tokens.n_special


def token_share_frame(runset) -> pd.DataFrame:
    """Per strategy: ``strategy``, ``embedded tokens``, ``header tokens``, ``tail tokens``, ``header share (%)``,
    ``chunks``, ``over window (chunks)``."""
    cf = chunks_frame(runset)
    return pd.DataFrame({"strategy": cf["strategy"], "embedded tokens": cf["embedded tokens"],
                         "header tokens": cf["header tokens"],
                         "tail tokens": [int(runset.spaces[n].tokens.tail_tokens.sum()) for n in runset.strategies],
                         "header share (%)": 100.0 * cf["header share"], "chunks": cf["chunks"],
                         "over window (chunks)": cf["over window"]},
                        columns=["strategy", "embedded tokens", "header tokens", "tail tokens", "header share (%)",
                                 "chunks", "over window (chunks)"])


def token_lengths_frame(runset) -> pd.DataFrame:
    """One row per chunk: ``strategy``, ``chunk_id``, ``tokens (with special)`` — what the window is compared to."""
    parts = []
    for n in runset.strategies:
        t = runset.spaces[n].tokens
        parts.append(pd.DataFrame({"strategy": n, "chunk_id": np.arange(len(t.text_tokens)),
                                   "tokens (with special)": t.text_tokens + t.n_special}))
    if not parts:
        return pd.DataFrame(columns=["strategy", "chunk_id", "tokens (with special)"])
    return pd.concat(parts, ignore_index=True)


def token_hist_frame(lengths: pd.DataFrame, strategies: Sequence[str], cap: int) -> tuple[pd.DataFrame, int]:
    """Rows of :func:`token_lengths_frame` for ``strategies`` with ``tokens (drawn)`` clipped at ``cap`` tokens;
    returns ``(frame, number of chunks longer than cap)``."""
    sel = lengths[lengths["strategy"].isin(list(strategies))]
    beyond = int((sel["tokens (with special)"] > cap).sum())
    return sel.assign(**{"tokens (drawn)": sel["tokens (with special)"].clip(upper=cap)}), beyond


def token_bins(drawn: pd.DataFrame, step: int) -> pd.DataFrame:
    """The histogram of :func:`token_hist_frame`'s ``tokens (drawn)`` per strategy: what its chart draws, at most one
    row per (strategy, bin) instead of one per chunk.

    Bins are ``[k·step, (k + 1)·step)`` tokens from 0 (integers: no rounding involved). Columns: ``strategy``,
    ``bin start``, ``bin end`` (tokens), ``chunks`` (> 0); sorted by strategy (in ``drawn``'s order) then bin.

    Raises
    ------
    ValueError
        ``step`` is not a positive integer.
    """
    if int(step) != step or step < 1:
        raise ValueError(f"the token histogram's bin width must be a positive integer, got {step!r}")
    cols = ["strategy", "bin start", "bin end", "chunks"]
    if not len(drawn):
        return pd.DataFrame(columns=cols)
    k = drawn["tokens (drawn)"].to_numpy(dtype=np.int64) // int(step)
    g = pd.DataFrame({"strategy": pd.Categorical(drawn["strategy"], categories=list(dict.fromkeys(drawn["strategy"]))),
                      "k": k}).value_counts(sort=False).reset_index(name="chunks")
    g = g[g["chunks"] > 0].sort_values(["strategy", "k"]).reset_index(drop=True)
    return pd.DataFrame({"strategy": g["strategy"].astype(str), "bin start": g["k"] * int(step),
                         "bin end": (g["k"] + 1) * int(step), "chunks": g["chunks"].astype(np.int64)}, columns=cols)


def over_window_frame(space) -> pd.DataFrame:
    """Chunks of one strategy's space longer than the encoder window.

    Columns: ``chunk_id``, ``doc_id``, ``section``, ``tokens (with special)``, ``window (tokens)``,
    ``text (chars)``, ``read (chars)`` (where the encoder stops), ``lost (chars)``, ``lost text``.
    """
    t = space.tokens
    rows = []
    for i in np.flatnonzero(t.over_window):
        c = space.chunks[int(i)]
        cut = int(t.cut[i])
        rows.append({"chunk_id": c.chunk_id, "doc_id": c.doc_id, "section": c.label,
                     "tokens (with special)": int(t.text_tokens[i] + t.n_special), "window (tokens)": t.window,
                     "text (chars)": len(c.text), "read (chars)": cut, "lost (chars)": len(c.text) - cut,
                     "lost text": c.text[cut:]})
    return pd.DataFrame(rows, columns=["chunk_id", "doc_id", "section", "tokens (with special)", "window (tokens)",
                                       "text (chars)", "read (chars)", "lost (chars)", "lost text"])
