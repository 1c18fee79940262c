"""What is judged: graded relevance judgments ("qrels") of one chunk space.

A chunk is relevant when its grade is >= 1 (``ir_measures``' ``rel=1``). The runs they judge are
:class:`audit.runset.Run` (docs/definitions.md, *A team's own system*).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..runset import ByQuery

__all__ = ["MIN_REL", "ColumnarJudgments", "Qrels"]


#: Minimum grade of a relevant chunk (``ir_measures``' ``rel=1``).
MIN_REL = 1


class ColumnarJudgments(ByQuery):
    """Many queries' judgments held as arrays, read as the mapping query id → {chunk id: grade} a Qrels holds.

    Like :class:`audit.runset.ColumnarRankings` for a run: one array of chunk codes and one of grades for all
    judgments, query after query (file order within each), the distinct ids once; a query's dict is made when
    it is looked up (not kept). Evaluation reads the arrays (:func:`audit.evaluation.measures.evaluate_run`).

    Parameters
    ----------
    query_ids : sequence of str, shape (n_queries,)
        Order of first appearance in the file.
    offsets : int array, shape (n_queries + 1,)
        Query ``i``'s judgments are ``offsets[i]:offsets[i + 1]`` of the two arrays.
    chunk_codes : int array, shape (n_judgments,)
        Index into ``chunk_ids``.
    chunk_ids : sequence of str, shape (n_chunks,)
    grades : int array, shape (n_judgments,)
    """

    def __init__(self, query_ids: Sequence[str], offsets, chunk_codes, chunk_ids, grades):
        self.query_ids = tuple(query_ids)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.chunk_codes = np.asarray(chunk_codes)
        self.chunk_ids = chunk_ids if isinstance(chunk_ids, np.ndarray) else np.asarray(list(chunk_ids), dtype=object)
        self.grades = np.asarray(grades, dtype=np.int64)
        for a in (self.offsets, self.chunk_codes, self.chunk_ids, self.grades):
            a.flags.writeable = False

    def __getitem__(self, query_id: str) -> dict:
        i = self._index[query_id]
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return dict(zip(self.chunk_ids[self.chunk_codes[a:b]].tolist(), self.grades[a:b].tolist()))

    def judged_ids(self) -> list[str]:
        """The distinct judged chunk ids, in order of first appearance (query after query, file order)."""
        return self.chunk_ids.tolist()


@dataclass(frozen=True)
class Qrels:
    """Graded relevance judgments.

    Attributes
    ----------
    judgments : mapping query id -> mapping chunk id -> int grade
        File order; a large TREC file's are :class:`ColumnarJudgments` (the same mapping, held as arrays). A query may map to an empty mapping: it is evaluated and
        scores 0 (e.g. a needle that no chunk holds).
    source : str
        File the judgments came from, or how they were made.
    note : str
        What a judgment means when it is not plain (e.g. BEIR judges documents).
    repeated : tuple of (int, int)
        ``(line, first line)`` of each judgment the file repeats with the same grade (read once).
    complete : bool
        Every chunk not listed is judged non-relevant by a rule (needles: a chunk's text holds the
        needle or it does not), so no ranked chunk is a hole (``Hole@k`` = 0).
    """

    judgments: Mapping[str, Mapping]
    source: str = ""
    note: str = ""
    repeated: tuple = ()
    complete: bool = False

    @property
    def query_ids(self) -> tuple[str, ...]:
        """The evaluated queries, file order."""
        return tuple(self.judgments)

    def relevant(self, query_id: str) -> frozenset:
        """Chunk ids with grade >= 1 for ``query_id`` (empty when unknown)."""
        return frozenset(c for c, g in self.judgments.get(query_id, {}).items() if g >= MIN_REL)

    def to_frame(self):
        """``pandas.DataFrame`` with columns ``query_id``, ``chunk_id``, ``relevance``."""
        import pandas as pd

        rows = [(q, c, g) for q, js in self.judgments.items() for c, g in js.items()]
        return pd.DataFrame(rows, columns=["query_id", "chunk_id", "relevance"])
