"""A chunking sweep: a grid of configurations (target, overlap, header, cut, retriever), each with its bill, and
the reading (docs/definitions.md, *The sweep*).

Each configuration is a :class:`~audit.chunking.Strategy` (cut, header, overlap, target) searched by one retriever;
its figures come from the built-in pipelines (:mod:`audit.sources.sweep` runs them: one call of
:func:`audit.sources.builtin.run_audit` per strategy for all of its retrievers, the embedding cache embedding a text
once whichever configuration made it) and the one evaluation (:func:`audit.evaluation.measures.evaluate`). The reading: the best configuration at k, every other
configuration's paired sign test against it (:func:`audit.evaluation.paired.paired_on_hits`) Holm-adjusted over
that family (:func:`audit.evaluation.paired.holm_adjusted`), the configurations not distinguishable from the best
(Holm p ≥ 0.05, the best included) and, among them, the cheapest by embedded tokens (ties: index bytes, then row
order).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..chunking import Strategy
from ..retrieval import RETRIEVERS
from .paired import PairedTest, holm_adjusted, paired_on_hits
from .stats import Interval, wilson

__all__ = ["SWEEP_KS", "SWEEP_RETRIEVERS", "Config", "SweepReading", "SweepRow", "SweepStore", "config_grid",
           "read_sweep", "sweep_key"]

#: The cut-offs every row reports Success@k at (the reading's k is added when it is not one of them).
SWEEP_KS = (1, 4, 8, 20)

#: The retrievers a sweep can vary: every built-in one but the cross-encoder (a reranker is not a chunking choice).
SWEEP_RETRIEVERS = tuple(r for r in RETRIEVERS if r != "rerank")

#: Bytes per stored vector component (float32).
BYTES_PER_DIM = 4


@dataclass(frozen=True)
class Config:
    """One point of the grid.

    Attributes
    ----------
    target, overlap : int
        Target chunk size and overlap tail, characters.
    header : bool
        ``[title > section]`` line before the embedded text.
    cut : {"blind", "boundaries"}
    retriever : {"dense", "bm25", "hybrid"}
    """

    target: int
    overlap: int
    header: bool
    cut: str
    retriever: str

    @property
    def strategy(self) -> Strategy:
        """The chunking strategy of this point, named ``boundaries-512-header-64`` (cut, target, ``header`` when on,
        overlap): one name per strategy. Raises ``ValueError`` as :class:`~audit.chunking.Strategy` does."""
        name = f"{self.cut}-{self.target}{'-header' if self.header else ''}-{self.overlap}"
        return Strategy(name, self.cut, self.header, self.overlap, self.target)

    @property
    def label(self) -> str:
        """``boundaries+header 512/64 dense``."""
        return f"{self.cut}{'+header' if self.header else ''} {self.target}/{self.overlap} {self.retriever}"

    def to_dict(self) -> dict:
        """``target``, ``overlap``, ``header``, ``cut``, ``retriever`` (the JSON's configuration object)."""
        return {"target": self.target, "overlap": self.overlap, "header": self.header, "cut": self.cut,
                "retriever": self.retriever}


def config_grid(targets: Iterable[int], overlaps: Iterable[int], headers: Iterable[bool], cuts: Iterable[str],
                retrievers: Iterable[str]) -> list[Config]:
    """Every combination, in the order target, overlap, header, cut, retriever (the last varying fastest).

    Raises
    ------
    ValueError
        An empty axis; a bad cut, target or overlap (:class:`~audit.chunking.Strategy`'s message); an overlap
        not below its target; a retriever other than dense, bm25, hybrid.
    """
    axes = [list(dict.fromkeys(x)) for x in (targets, overlaps, headers, cuts, retrievers)]
    for name, ax in zip(("target", "overlap", "header", "cut", "retriever"), axes):
        if not ax:
            raise ValueError(f"the sweep's {name} axis is empty")
    bad = [r for r in axes[4] if r not in SWEEP_RETRIEVERS]
    if bad:
        raise ValueError(f"unknown sweep retriever {bad[0]!r}; choose from dense, bm25, hybrid")
    out = []
    for t, o, h, c, r in itertools.product(*axes):
        cfg = Config(int(t), int(o), bool(h), str(c), str(r))
        cfg.strategy  # validates
        if cfg.overlap >= cfg.target:
            raise ValueError(f"overlap {cfg.overlap} is not below target {cfg.target}")
        out.append(cfg)
    return out


@dataclass(frozen=True)
class SweepRow:
    """One configuration's figures.

    Attributes
    ----------
    config : Config
    query_ids : tuple of str
        The counted (in-domain) questions, judgments order.
    first : tuple of int
        Per question, the rank of its first relevant chunk in the full ranking (0: none).
    destroyed, overlap_only, past_window : tuple of str
        Needle ids (docs/definitions.md, *Destroyed needle*).
    chunks : int
    embedded_tokens, header_tokens, over_window : int
        Tokens of the embedded texts and of their headers (the encoder's tokenizer, special tokens excluded), and
        chunks longer than the encoder's window.
    dims : int
        Vector dimensions; ``index_bytes = dims × 4 × chunks`` (float32).
    build_s : float
        Seconds to embed (or read from the cache) and build BM25 for this strategy, this machine.
    query_ms : float
        Median wall milliseconds of one query's search by this retriever.
    """

    config: Config
    query_ids: tuple
    first: tuple
    destroyed: tuple
    overlap_only: tuple
    past_window: tuple
    chunks: int
    embedded_tokens: int
    header_tokens: int
    over_window: int
    dims: int
    build_s: float
    query_ms: float

    @property
    def index_bytes(self) -> int:
        """``dims × 4 × chunks`` bytes of float32 vectors."""
        return self.dims * BYTES_PER_DIM * self.chunks

    @property
    def header_share(self) -> float:
        """Header tokens over embedded tokens (NaN with no token)."""
        return self.header_tokens / self.embedded_tokens if self.embedded_tokens else math.nan

    def hits(self, k: int) -> list[bool]:
        """Per question: a relevant chunk within the first ``k``."""
        return [0 < f <= k for f in self.first]

    def found(self, k: int) -> list[str]:
        """The ids of the questions answered within the first ``k``, judgments order."""
        return [q for q, f in zip(self.query_ids, self.first) if 0 < f <= k]

    def success(self, k: int) -> Interval:
        """Success@k with its Wilson 95% interval (:func:`audit.evaluation.stats.wilson`)."""
        return wilson(sum(self.hits(k)), len(self.query_ids))

    def to_store(self) -> dict:
        """Everything, as the resumable file keeps it (:meth:`from_store` reads it back)."""
        return {"config": self.config.to_dict(), "query_ids": list(self.query_ids), "first": list(self.first),
                "destroyed": list(self.destroyed), "overlap_only": list(self.overlap_only),
                "past_window": list(self.past_window), "chunks": self.chunks,
                "embedded_tokens": self.embedded_tokens, "header_tokens": self.header_tokens,
                "over_window": self.over_window, "dims": self.dims, "build_s": self.build_s,
                "query_ms": self.query_ms}

    @classmethod
    def from_store(cls, d: dict) -> "SweepRow":
        return cls(Config(**d["config"]), tuple(d["query_ids"]), tuple(int(x) for x in d["first"]),
                   tuple(d["destroyed"]), tuple(d["overlap_only"]), tuple(d["past_window"]), int(d["chunks"]),
                   int(d["embedded_tokens"]), int(d["header_tokens"]), int(d["over_window"]), int(d["dims"]),
                   float(d["build_s"]) if d["build_s"] is not None else math.nan,
                   float(d["query_ms"]) if d["query_ms"] is not None else math.nan)

    def to_json(self, ks: Sequence[int], at: int) -> dict:
        """The JSON row: the configuration, ``Success@k`` with ``_low``/``_high`` for each k, ``destroyed`` (count)
        and the other bills, and ``found`` (question ids answered at ``at``)."""
        row = self.config.to_dict()
        for k in ks:
            iv = self.success(k)
            row[f"Success@{k}"], row[f"Success@{k}_low"], row[f"Success@{k}_high"] = iv.estimate, iv.low, iv.high
        row.update({"destroyed": len(self.destroyed), "overlap_only": len(self.overlap_only),
                    "past_window": len(self.past_window), "chunks": self.chunks,
                    "embedded_tokens": self.embedded_tokens, "header_share": self.header_share,
                    "over_window": self.over_window, "index_bytes": self.index_bytes, "build_s": self.build_s,
                    "query_ms": self.query_ms, "found": self.found(at)})
        return row


@dataclass(frozen=True)
class SweepReading:
    """The sweep read at one k.

    Attributes
    ----------
    rows : tuple of SweepRow
        Grid order.
    k : int
    best : int
        Index of the row with the most questions answered at k (the first such row).
    tests : tuple of PairedTest or None
        Per row, its sign test against the best (``a`` = the best), Holm-adjusted over every row but the best;
        None for the best itself.
    indistinguishable : tuple of int
        Rows whose Holm p ≥ 0.05 against the best, and the best, grid order.
    cheapest : int
        Among ``indistinguishable``, the fewest embedded tokens (ties: fewest index bytes, then grid order).
    """

    rows: tuple
    k: int
    best: int
    tests: tuple
    indistinguishable: tuple
    cheapest: int
    ks: tuple = field(default=SWEEP_KS)

    def to_json(self) -> dict:
        """``k``, ``rows``, ``best``, ``indistinguishable`` (list), ``cheapest`` (each a configuration object) and
        ``tests`` (per row: ``wins``, ``losses``, ``p``, ``p_holm`` against the best; null for the best)."""
        cfg = lambda i: self.rows[i].config.to_dict()  # noqa: E731
        return {"k": self.k, "rows": [r.to_json(self.ks, self.k) for r in self.rows], "best": cfg(self.best),
                "indistinguishable": [cfg(i) for i in self.indistinguishable], "cheapest": cfg(self.cheapest),
                "tests": [None if t is None else {**cfg(i), "wins": t.wins, "losses": t.losses, "p": t.p,
                                                  "p_holm": t.p_holm}
                          for i, t in enumerate(self.tests)]}

    def text(self) -> list[str]:
        """Lines of the text report: one per configuration, then the reading."""
        k = self.k
        L = [f"Sweep: {len(self.rows)} configurations, Success@{k} with its Wilson 95% interval, sign test against "
             "the best (Holm)",
             f"  {'configuration':<34} {'Success@' + str(k):>22} {'destroyed':>9} {'chunks':>7} {'tokens':>9} "
             f"{'index bytes':>12} {'build s':>8} {'query ms':>8} {'Holm p':>7}"]
        for i, r in enumerate(self.rows):
            t = self.tests[i]
            mark = "best" if i == self.best else f"{t.p_holm:.3f}"
            tag = ("*" if i in self.indistinguishable else " ") + ("$" if i == self.cheapest else " ")
            L.append(f"{tag}{r.config.label:<34} {str(r.success(k)):>22} {len(r.destroyed):>9} {r.chunks:>7} "
                     f"{r.embedded_tokens:>9} {r.index_bytes:>12} {r.build_s:>8.2f} {r.query_ms:>8.2f} {mark:>7}")
        L.append(f"best at k={k}: {self.rows[self.best].config.label}; not distinguishable from it (Holm p ≥ 0.05, "
                 f"*): {len(self.indistinguishable)}; cheapest of those by embedded tokens ($): "
                 f"{self.rows[self.cheapest].config.label}")
        return L


def read_sweep(rows: Sequence[SweepRow], k: int = 8, ks: Sequence[int] = SWEEP_KS) -> SweepReading:
    """The reading of a sweep at ``k`` (docs/definitions.md, *The sweep*).

    The best row answers the most questions at ``k`` (the first in grid order on a tie). Every other row is
    compared with it by the exact two-sided sign test on the questions one answers and the other does not
    (:func:`audit.evaluation.paired.paired_on_hits`), the family of those tests Holm-adjusted (Holm 1979).
    Indistinguishable: Holm p ≥ 0.05, and the best itself. Cheapest: the indistinguishable row with the fewest
    embedded tokens, ties broken by index bytes then grid order.

    Raises
    ------
    ValueError
        No row, ``k`` below 1, or rows that do not count the same questions.
    """
    rows = tuple(rows)
    if not rows:
        raise ValueError("no configuration to read")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    counts = [sum(r.hits(k)) for r in rows]
    best = max(range(len(rows)), key=lambda i: (counts[i], -i))
    b = rows[best]
    others = [i for i in range(len(rows)) if i != best]
    fam = holm_adjusted([paired_on_hits(b.config.label, rows[i].config.label, k, b.query_ids, rows[i].query_ids,
                                        b.hits(k), rows[i].hits(k), "configurations") for i in others])
    tests: list[PairedTest | None] = [None] * len(rows)
    for i, t in zip(others, fam):
        tests[i] = t
    same = tuple(i for i in range(len(rows)) if i == best or tests[i].p_holm >= 0.05)
    cheapest = min(same, key=lambda i: (rows[i].embedded_tokens, rows[i].index_bytes, i))
    ks = tuple(sorted(set(ks) | {int(k)}))
    return SweepReading(rows, int(k), best, tuple(tests), same, cheapest, ks)


def sweep_key(corpus_sha256: str, ground_truth, model_digest: str, bm25_tokens: str, config: Config) -> str:
    """The resumable file's key of one configuration: a digest of the corpus, the ground truth (needles, their
    questions, the out-of-domain queries), the model, BM25's token rule and the configuration."""
    from ..runset import digest

    return digest(corpus_sha256, [(n.id, n.needle, n.questions) for n in ground_truth.needles],
                  list(ground_truth.out_of_domain), model_digest, bm25_tokens, config.to_dict())


class SweepStore:
    """Finished configurations, kept in one JSON file (``{key: row}``) so a stopped sweep resumes.

    Parameters
    ----------
    path : path or None
        The file (created on the first save); None keeps nothing.
    """

    def __init__(self, path) -> None:
        self.path = Path(path) if path is not None else None
        self._rows: dict = {}
        if self.path is not None and self.path.exists():
            try:
                self._rows = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._rows = {}  # a damaged file is a sweep from scratch, never a crash

    def get(self, key: str) -> SweepRow | None:
        d = self._rows.get(key)
        return SweepRow.from_store(d) if d is not None else None

    def put(self, key: str, row: SweepRow) -> None:
        """Keep ``row`` and write the file at once (atomically: a temporary file renamed)."""
        self._rows[key] = row.to_store()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(self.path.suffix + ".tmp")
            tmp.write_text(json.dumps(self._rows, allow_nan=True), encoding="utf-8")
            tmp.replace(self.path)
