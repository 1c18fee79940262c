"""A chunking sweep: a grid of configurations (target, overlap, header, cut, retriever), each with its bill, and
the reading (docs/definitions.md, *The sweep*).

Each configuration is a :class:`~audit.chunking.Strategy` (cut, header, overlap, target) searched by one retriever;
its figures come from the built-in pipelines (:mod:`audit.sources.sweep` runs them: one call of
:func:`audit.sources.builtin.run_audit` per strategy for all of its retrievers, the embedding cache embedding a text
once whichever configuration made it) and the one evaluation (:func:`audit.evaluation.measures.evaluate`). The reading: the best configuration at k, every other
configuration's paired sign test against it (:func:`audit.evaluation.paired.paired_on_hits`) Holm-adjusted over
that family (:func:`audit.evaluation.paired.holm_adjusted`), the configurations not distinguishable from the best
(Holm p ≥ 0.05, the best included) and, among them, the cheapest by embedded tokens (ties: index bytes, then row
order) or by index bytes (ties: embedded tokens, then row order); the choice, with what it costs and saves against
the best (:meth:`SweepReading.choice`), and its paragraph in words (:func:`why_configuration`), which the text
report, the decision record and the Strategies page all draw from the JSON.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..chunking import Strategy
from ..retrieval import RETRIEVERS
from ..words import format_p
from .paired import PairedTest, holm_adjusted, paired_on_hits
from .stats import Interval, wilson

__all__ = ["CHEAPEST_BY", "SWEEP_KS", "SWEEP_RETRIEVERS", "Config", "Figure", "SweepReading", "SweepRow",
           "SweepStore", "config_grid", "read_sweep", "sweep_key", "why_configuration"]

#: The cut-offs every row reports Success@k at (the reading's k is added when it is not one of them).
SWEEP_KS = (1, 4, 8, 20)

#: The retrievers a sweep can vary: every built-in one but the cross-encoder (a reranker is not a chunking choice).
SWEEP_RETRIEVERS = tuple(r for r in RETRIEVERS if r != "rerank")

#: Bytes per stored vector component (float32).
BYTES_PER_DIM = 4

#: What "cheapest" ranks by: the CLI's word (``--cheapest-by``) → the row's key (the JSON's ``cheapest_by``) and the
#: words a person reads.
CHEAPEST_BY = {"tokens": ("embedded_tokens", "embedded tokens"), "bytes": ("index_bytes", "index bytes")}


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
        Among ``indistinguishable``, the fewest embedded tokens (ties: fewest index bytes, then grid order); with
        ``cheapest_by="bytes"``, the fewest index bytes (ties: fewest embedded tokens, then grid order).
    ks : tuple of int
        The cut-offs every row reports.
    cheapest_by : {"tokens", "bytes"}
        What ``cheapest`` ranks by (:data:`CHEAPEST_BY`).
    """

    rows: tuple
    k: int
    best: int
    tests: tuple
    indistinguishable: tuple
    cheapest: int
    ks: tuple = field(default=SWEEP_KS)
    cheapest_by: str = "tokens"

    def choice(self) -> dict:
        """The chosen configuration (the cheapest not distinguishable from the best) and why: the JSON's
        ``choice``, which :func:`why_configuration` puts in words.

        Returns
        -------
        dict
            ``configuration`` (the configuration object), ``label``, ``cheapest_by`` (the row key it is cheapest
            by), ``k``, ``n`` (questions counted), ``answered`` (questions answered within the first k),
            ``Success``/``low``/``high`` (Success@k, Wilson 95%); ``best``: the same for the best configuration
            (``configuration``, ``label``, ``answered``, ``Success``, ``low``, ``high``); ``is_best``; ``wins``
            (questions the best answers at k and the chosen one misses), ``losses`` (the reverse), ``p``,
            ``p_holm`` (its sign test against the best: null when it is the best); ``indistinguishable`` and
            ``configurations`` (how many configurations are not distinguishable from the best, how many were
            swept); ``embedded_tokens``, ``index_bytes`` and the best's (``best_embedded_tokens``,
            ``best_index_bytes``); ``tokens_saved``, ``bytes_saved`` (the best's minus the chosen one's: negative
            when the chosen one costs more on that count) and their shares of the best's (null when the best's
            is 0).
        """
        c, b = self.rows[self.cheapest], self.rows[self.best]
        t = self.tests[self.cheapest]

        def side(r: SweepRow) -> dict:
            iv = r.success(self.k)
            return {"configuration": r.config.to_dict(), "label": r.config.label, "answered": iv.successes,
                    "Success": iv.estimate, "low": iv.low, "high": iv.high}

        def saved(best: int, chosen: int) -> tuple:
            return best - chosen, ((best - chosen) / best if best else None)

        ts, tshare = saved(b.embedded_tokens, c.embedded_tokens)
        bs, bshare = saved(b.index_bytes, c.index_bytes)
        own = side(c)
        return {"configuration": own.pop("configuration"), "label": own.pop("label"),
                "cheapest_by": CHEAPEST_BY[self.cheapest_by][0], "k": self.k, "n": len(c.query_ids), **own,
                "best": side(b), "is_best": self.cheapest == self.best,
                "wins": None if t is None else t.wins, "losses": None if t is None else t.losses,
                "p": None if t is None else t.p, "p_holm": None if t is None else t.p_holm,
                "indistinguishable": len(self.indistinguishable), "configurations": len(self.rows),
                "embedded_tokens": c.embedded_tokens, "index_bytes": c.index_bytes,
                "best_embedded_tokens": b.embedded_tokens, "best_index_bytes": b.index_bytes,
                "tokens_saved": ts, "tokens_saved_share": tshare, "bytes_saved": bs, "bytes_saved_share": bshare}

    def to_json(self) -> dict:
        """``k``, ``rows``, ``best``, ``indistinguishable`` (list), ``cheapest`` (each a configuration object),
        ``cheapest_by`` (the row key the cheapest ranks by: ``embedded_tokens`` or ``index_bytes``), ``tests`` (per
        row: ``wins``, ``losses``, ``p``, ``p_holm`` against the best; null for the best) and ``choice``
        (:meth:`choice`)."""
        cfg = lambda i: self.rows[i].config.to_dict()  # noqa: E731
        return {"k": self.k, "rows": [r.to_json(self.ks, self.k) for r in self.rows], "best": cfg(self.best),
                "indistinguishable": [cfg(i) for i in self.indistinguishable], "cheapest": cfg(self.cheapest),
                "cheapest_by": CHEAPEST_BY[self.cheapest_by][0],
                "tests": [None if t is None else {**cfg(i), "wins": t.wins, "losses": t.losses, "p": t.p,
                                                  "p_holm": t.p_holm}
                          for i, t in enumerate(self.tests)],
                "choice": self.choice()}

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
                 f"*): {len(self.indistinguishable)}; cheapest of those by {CHEAPEST_BY[self.cheapest_by][1]} ($): "
                 f"{self.rows[self.cheapest].config.label}")
        L.append("Why this configuration: " + "".join(
            x if isinstance(x, str) else x.shown for x in why_configuration(self.choice())))
        return L


def read_sweep(rows: Sequence[SweepRow], k: int = 8, ks: Sequence[int] = SWEEP_KS,
               cheapest_by: str = "tokens") -> SweepReading:
    """The reading of a sweep at ``k`` (docs/definitions.md, *The sweep*).

    The best row answers the most questions at ``k`` (the first in grid order on a tie). Every other row is
    compared with it by the exact two-sided sign test on the questions one answers and the other does not
    (:func:`audit.evaluation.paired.paired_on_hits`), the family of those tests Holm-adjusted (Holm 1979).
    Indistinguishable: Holm p ≥ 0.05, and the best itself. Cheapest (``cheapest_by="tokens"``, the default): the
    indistinguishable row with the fewest embedded tokens, ties broken by index bytes then grid order;
    (``"bytes"``): the fewest index bytes, ties broken by embedded tokens then grid order.

    Raises
    ------
    ValueError
        No row, ``k`` below 1, ``cheapest_by`` neither ``tokens`` nor ``bytes``, or rows that do not count the same
        questions.
    """
    rows = tuple(rows)
    if not rows:
        raise ValueError("no configuration to read")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if cheapest_by not in CHEAPEST_BY:
        raise ValueError(f"cheapest by {cheapest_by!r}: choose tokens (embedded tokens) or bytes (index bytes)")
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
    if cheapest_by == "tokens":
        cheapest = min(same, key=lambda i: (rows[i].embedded_tokens, rows[i].index_bytes, i))
    else:
        cheapest = min(same, key=lambda i: (rows[i].index_bytes, rows[i].embedded_tokens, i))
    ks = tuple(sorted(set(ks) | {int(k)}))
    return SweepReading(rows, int(k), best, tuple(tests), same, cheapest, ks, cheapest_by)


@dataclass(frozen=True)
class Figure:
    """One figure of a sentence: ``name`` (what it is: ``Success@8``, ``tokens_saved`` …), ``value`` (the JSON's
    value) and ``shown`` (as a person reads it). The decision record marks it (``data-figure``); text joins
    ``shown``."""

    name: str
    value: object
    shown: str


def _share(x) -> str:
    return "n/a" if x is None else f"{abs(x):.0%}"


def _saving(saved: int, share, unit: str) -> list:
    """``8,000 fewer than the best (40%)`` / ``1,200 more than the best (5%)`` / ``as many as the best``."""
    if saved == 0:
        return ["as many as the best"]
    word = "fewer" if saved > 0 else "more"
    return [Figure(f"{unit}_saved", saved, f"{abs(saved):,}"), f" {word} than the best (",
            Figure(f"{unit}_saved_share", share, _share(share)), ")"]


def why_configuration(choice) -> list:
    """The "why this configuration" paragraph, in words drawn from a sweep's ``choice`` (:meth:`SweepReading.choice`,
    the JSON's ``sweep.choice``): which configuration, that it is the cheapest of those the questions cannot tell
    apart from the best, what it answers against the best with the sign test between them, and what it embeds and
    stores against the best. Nothing is computed here but the words.

    Returns
    -------
    list
        Pieces in reading order: ``str`` (words) and :class:`Figure` (each figure, with its JSON value).
    """
    k, n, by = choice["k"], choice["n"], choice["cheapest_by"]
    cost = next((w for key, w in CHEAPEST_BY.values() if key == by), by)
    b = choice["best"]

    def interval(side: Mapping, who: str = "") -> list:
        return [Figure(f"{who}Success@{k}", side["Success"], f"{side['Success']:.3f}"), " [",
                Figure(f"{who}Success@{k}:low", side["low"], f"{side['low']:.3f}"), ", ",
                Figure(f"{who}Success@{k}:high", side["high"], f"{side['high']:.3f}"), "]"]

    answers = ["It answers ", Figure("answered", choice["answered"], f"{choice['answered']:,}"),
               f" of {n:,} questions within its first {k} chunks (Success@{k} ", *interval(choice), ", Wilson 95%)"]
    tokens = Figure("embedded_tokens", choice["embedded_tokens"], f"{choice['embedded_tokens']:,}")
    vectors = Figure("index_bytes", choice["index_bytes"], f"{choice['index_bytes']:,}")
    out: list = [Figure("configuration", choice["label"], choice["label"])]
    alike = (f" of the {choice['indistinguishable']:,} configurations (of {choice['configurations']:,} swept) that "
             f"the questions cannot tell apart from the best at k={k} (exact sign test, Holm-adjusted p ≥ 0.05: not "
             "a claim that they are equal). ")
    if choice["is_best"]:
        m = choice["configurations"]
        head = (" is the only configuration swept. " if m == 1 else
                f" is the best at k={k}, and the questions tell each of the other {m - 1:,} configurations swept apart "
                "from it (exact sign test, Holm-adjusted p < 0.05). " if choice["indistinguishable"] == 1 else
                f" is the best at k={k} and also the cheapest by {cost}" + alike)
        return out + [head, *answers, ". It embeds ", tokens, " tokens and its vectors take ", vectors, " bytes."]
    return out + [f" is the cheapest by {cost}", alike, *answers, "; the best, ",
                  Figure("best", b["label"], b["label"]), ", answers ",
                  Figure("best:answered", b["answered"], f"{b['answered']:,}"), " (", *interval(b, "best:"),
                  "). The best answers ", Figure("wins", choice["wins"], f"{choice['wins']:,}"),
                  " questions this one misses, this one ", Figure("losses", choice["losses"], f"{choice['losses']:,}"),
                  " that the best misses (Holm p ", Figure("p_holm", choice["p_holm"], format_p(choice["p_holm"])),
                  "). It embeds ", tokens, " tokens, ", *_saving(choice["tokens_saved"], choice["tokens_saved_share"],
                                                                  "tokens"),
                  ", and its vectors take ", vectors, " bytes, ",
                  *_saving(choice["bytes_saved"], choice["bytes_saved_share"], "bytes"), "."]


def sweep_key(corpus_sha256: str, ground_truth, model_digest: str, bm25_tokens: str, config: Config,
              language: str | None = None) -> str:
    """The resumable file's key of one configuration: a digest of the corpus, the ground truth (needles, their
    questions, the out-of-domain queries), the model, BM25's token rule, the configuration and the language when
    one is given (a detected one follows from the corpus; keys written without it stay valid)."""
    from ..runset import digest

    return digest(corpus_sha256, [(n.id, n.needle, n.questions) for n in ground_truth.needles],
                  list(ground_truth.out_of_domain), model_digest, bm25_tokens, config.to_dict(),
                  *((language,) if language else ()))


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
