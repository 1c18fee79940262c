"""What is judged and what is ranked: relevance judgments ("qrels"), a system's rankings ("runs") and the
order a run is evaluated in (trec_eval's: best score first, ties by chunk id descending).

Score kinds: ``similarity`` (default, as TREC: higher is better), ``ip`` (higher is better),
``cosine-distance`` (in [0, 2]) and ``l2`` (lower is better); lower-is-better scores are negated
before sorting, so ties stay ties (docs/definitions.md, *A team's own system*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

__all__ = ["MIN_REL", "SCORE_KINDS", "Qrels", "Run", "ScoreKindError", "order", "passes_cut"]


#: Score kind -> +1 when higher is better, -1 when lower is better.
SCORE_KINDS = {"similarity": 1, "ip": 1, "cosine-distance": -1, "l2": -1}


#: Minimum grade of a relevant chunk (``ir_measures``' ``rel=1``).
MIN_REL = 1


class ScoreKindError(ValueError):
    """An unknown score kind; the message lists the known ones."""


def _direction(kind: str) -> int:
    try:
        return SCORE_KINDS[kind]
    except KeyError:
        raise ScoreKindError(f"unknown score kind {kind!r}; use one of {', '.join(SCORE_KINDS)}") from None


def order(scores: Mapping[str, float], kind: str = "similarity", origin: str = "run file") -> tuple[str, ...]:
    """Chunk ids in evaluated order: best canonical score first, ties by chunk id descending (trec_eval).

    Parameters
    ----------
    scores : mapping chunk id -> score
        In the run's own units.
    kind : str
        One of :data:`SCORE_KINDS`.
    origin : {"run file", "computed"}
        How the scores are made canonical before they are compared (:func:`audit.scores.canonical_scores`):
        ``run file`` at trec_eval's float32 precision (two scores equal as float32 tie), ``computed``
        at 9 decimals (distances the product computed itself).

    Raises
    ------
    ScoreKindError
        Unknown ``kind``.
    ValueError
        A score is NaN (it has no place in an order).
    """
    from ..scores import canonical_scores

    sign = _direction(kind)
    for cid, s in scores.items():
        if isinstance(s, float) and math.isnan(s):
            raise ValueError(f"score of {cid!r} is NaN; a ranking needs comparable scores")
    ids = list(scores)
    keys = canonical_scores([scores[c] for c in ids], origin).tolist() if ids else []
    # (key, chunk id) sorted descending: key desc, then chunk id desc. Python compares
    # str by code point, which is the byte order of UTF-8, i.e. trec_eval's strcmp.
    return tuple(cid for _, cid in sorted(zip((sign * k for k in keys), ids), reverse=True))


def passes_cut(score: float, cut: float, kind: str = "similarity") -> bool:
    """Whether a score survives a refusal cut in the run's own units.

    A cut on a higher-is-better score (``similarity``, ``ip``) keeps scores
    strictly above it; on a distance (``cosine-distance``, ``l2``) strictly
    below it (as the built-in gate on cosine distance).
    """
    return score > cut if _direction(kind) > 0 else score < cut


@dataclass(frozen=True)
class Qrels:
    """Graded relevance judgments.

    Attributes
    ----------
    judgments : mapping query id -> mapping chunk id -> int grade
        File order. A query may map to an empty mapping: it is evaluated and
        scores 0 (e.g. a needle that no chunk holds).
    source : str
        File the judgments came from, or how they were made.
    note : str
        What a judgment means when it is not plain (e.g. BEIR judges documents).
    """

    judgments: Mapping[str, Mapping[str, int]]
    source: str = ""
    note: str = ""

    @property
    def query_ids(self) -> tuple[str, ...]:
        """The evaluated queries, file order."""
        return tuple(self.judgments)

    def relevant(self, query_id: str) -> frozenset[str]:
        """Chunk ids with grade >= 1 for ``query_id`` (empty when unknown)."""
        return frozenset(c for c, g in self.judgments.get(query_id, {}).items() if g >= MIN_REL)

    def to_frame(self):
        """``pandas.DataFrame`` with columns ``query_id``, ``chunk_id``, ``relevance``."""
        import pandas as pd

        rows = [(q, c, g) for q, js in self.judgments.items() for c, g in js.items()]
        return pd.DataFrame(rows, columns=["query_id", "chunk_id", "relevance"])


@dataclass(frozen=True)
class Run:
    """One system's rankings, already in evaluated order.

    Build it with :meth:`from_scores` (or the readers of :mod:`audit.sources.imported`).

    Attributes
    ----------
    name : str
    score_kind : str
        One of :data:`SCORE_KINDS`.
    rankings : mapping query id -> tuple of (chunk id, score)
        Evaluated order (see :func:`order`); scores in the run's own units.
    rank_conflicts : tuple of str
        Queries whose file ``rank`` column orders the chunks differently from
        their scores (the scores win, as in trec_eval).
    source : str
        The file read.
    warnings : tuple
        What the reader accepted but says once (e.g. fields after the run tag, a rank column that
        contradicts the scores): :class:`audit.sources.imported.checks.InputWarning` objects.
    """

    name: str
    score_kind: str
    rankings: Mapping[str, tuple[tuple[str, float], ...]]
    rank_conflicts: tuple[str, ...] = ()
    source: str = ""
    warnings: tuple = ()

    @classmethod
    def from_scores(cls, name: str, scores: Mapping[str, Mapping[str, float]], score_kind: str = "similarity",
                    *, rank_conflicts: Iterable[str] = (), source: str = "", origin: str = "run file",
                    warnings: Iterable = ()) -> "Run":
        """Order each query's ``{chunk id: score}`` (see :func:`order`); the scores kept are the canonical ones
        (:func:`audit.scores.canonical_scores` with ``origin``), so every later comparison (the gate, the
        sweep, a tie) reads what the order read.

        Raises
        ------
        ScoreKindError, ValueError
            As :func:`order`.
        """
        from ..scores import canonical_scores

        rankings = {}
        for q, s in scores.items():
            ids = list(s)
            canon = dict(zip(ids, canonical_scores([s[c] for c in ids], origin).tolist())) if ids else {}
            rankings[q] = tuple((c, canon[c]) for c in order(canon, score_kind, origin))
        return cls(name, score_kind, rankings, tuple(rank_conflicts), source, tuple(warnings))

    def ranking(self, query_id: str) -> tuple[str, ...]:
        """Chunk ids for ``query_id`` in evaluated order (empty when absent)."""
        return tuple(c for c, _ in self.rankings.get(query_id, ()))

    def to_frame(self):
        """``pandas.DataFrame``: ``query_id``, ``rank`` (1-based, evaluated order), ``chunk_id``, ``score``."""
        import pandas as pd

        rows = [(q, i, c, s) for q, r in self.rankings.items() for i, (c, s) in enumerate(r, start=1)]
        return pd.DataFrame(rows, columns=["query_id", "rank", "chunk_id", "score"])
