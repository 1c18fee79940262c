"""What is judged: graded relevance judgments ("qrels") of one chunk space.

A chunk is relevant when its grade is >= 1 (``ir_measures``' ``rel=1``). The runs they judge are
:class:`audit.runset.Run` (docs/definitions.md, *A team's own system*).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ["MIN_REL", "Qrels"]


#: Minimum grade of a relevant chunk (``ir_measures``' ``rel=1``).
MIN_REL = 1


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
