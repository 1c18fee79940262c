"""One health report for every place vectors live, with one finding type and one JSON form.

A SQLite index (:mod:`audit.index.health`), a Lance dataset (:mod:`audit.index.lance.health`) and a live
store (:func:`audit.stores.pgvector.check_health`, and Chroma and Milvus Lite through
:func:`audit.health.rows.health_from_rows`) each run their own checks, and each returns a
:class:`HealthReport` of :class:`Finding`: what every report, page and exit code reads.

- A **finding** names its check (a stable id), its severity (``unhealthy``, ``warning`` or ``ok``), a
  title and the result in one sentence, and what it concerns: ``documents`` (a SQLite index's checks,
  which list each document with why) or ``rows`` (a store's or a Lance dataset's, which count rows), how
  many, and its evidence: the documents with why, up to 20 example ids, a breakdown (value → rows).
- **Severity**: a report is healthy when no finding is ``unhealthy``; ``exit_code`` is 1 otherwise (the
  CLI's ``health`` contract: exit 1 when unhealthy, for CI).
- **One JSON form** (:meth:`HealthReport.to_json`), whatever the engine: ``engine``, ``subject``,
  ``target`` (what was checked: the index file and index, the dataset, the store and table), ``healthy``,
  ``rows``, ``documents``, ``stamp``, ``figures`` (the engine's own figures), ``findings``, ``pages``,
  ``not_checked``, ``indexes``, ``seconds``.

The text form (:meth:`HealthReport.render`) is the CLI's: the subject and HEALTHY/UNHEALTHY, a line a
finding, its documents or its example ids below it, the PDF pages line, the checks that could not run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

__all__ = ["CONCERNS", "NORM_TOLERANCE", "OK", "SEVERITIES", "UNHEALTHY", "WARNING", "Finding", "HealthReport",
           "majority", "render_findings", "render_pages", "store_report"]

#: A vector is unit length when ``|‖v‖ − 1| ≤ NORM_TOLERANCE`` (docs/definitions.md, *Health severities*).
NORM_TOLERANCE = 1e-4

UNHEALTHY, WARNING, OK = "unhealthy", "warning", "ok"
#: The severities, worst first.
SEVERITIES = (UNHEALTHY, WARNING, OK)
#: What a finding counts: the documents it lists, or the rows (chunks) it concerns.
CONCERNS = ("documents", "rows")

#: Documents listed under a finding in the text form; example ids shown on its ``e.g.`` line.
_SHOW_DOCUMENTS, _SHOW_EXAMPLES = 20, 10


@dataclass(frozen=True)
class Finding:
    """One check's result.

    Attributes
    ----------
    check : str
        Stable id (the checks of each engine: docs/definitions.md, *Health severities*).
    severity : {"unhealthy", "warning", "ok"}
    title : str
        What the check looks at, for people (a store's findings are titled by their check id, as
        ``health --store`` prints them).
    detail : str
        The result in one sentence (counts, the max deviation …).
    concerns : {"documents", "rows"}
        What :attr:`count` counts.
    count : int
        Documents or rows the finding concerns (0 when it passes; for a store's ``rows`` check, the row count).
    documents : tuple of dict
        One row per concerned document: ``doc_id`` and ``why`` (the extraction checks add ``pages``,
        1-based, and ``chunks``, the chunks it reaches).
    examples : tuple of str
        Up to 20 ids of concerned rows (chunk ids; document ids for ``missing_documents``).
    breakdown : tuple of (str, int)
        Value → rows, where a histogram says more (dims, model stamps, missing documents).

    Raises
    ------
    ValueError
        An unknown severity or ``concerns``.
    """

    check: str
    severity: str
    title: str
    detail: str
    concerns: str = "documents"
    count: int = 0
    documents: tuple[dict, ...] = ()
    examples: tuple[str, ...] = ()
    breakdown: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} is not one of {', '.join(SEVERITIES)}")
        if self.concerns not in CONCERNS:
            raise ValueError(f"a finding concerns {' or '.join(CONCERNS)}, not {self.concerns!r}")

    @classmethod
    def of_documents(cls, check: str, severity_if_any: str, title: str, documents: Sequence[dict], detail_ok: str,
                     detail_bad: str) -> "Finding":
        """A check over documents: ``severity_if_any`` and ``detail_bad`` when ``documents`` is not empty, else ok."""
        docs = tuple(documents)
        return cls(check, severity_if_any if docs else OK, title, detail_bad if docs else detail_ok, "documents",
                   len(docs), docs)

    @classmethod
    def of_rows(cls, check: str, severity: str, count: int, detail: str, breakdown: Sequence = (),
                examples: Sequence[str] = ()) -> "Finding":
        """A store's check over rows: titled by its id (as ``health --store`` prints it), ``count`` rows concerned."""
        return cls(check, severity, check, detail, "rows", int(count), (), tuple(examples),
                   tuple(tuple(b) for b in breakdown))

    def to_json(self) -> dict:
        """The finding in the one JSON form (every key always present)."""
        return {"check": self.check, "severity": self.severity, "title": self.title, "detail": self.detail,
                "concerns": self.concerns, "count": self.count, "documents": [dict(d) for d in self.documents],
                "examples": list(self.examples), "breakdown": [list(b) for b in self.breakdown]}


@dataclass(frozen=True)
class HealthReport:
    """Every check of one place vectors live; ``exit_code`` 1 when any finding is unhealthy.

    Attributes
    ----------
    engine : str
        ``sqlite``, ``lance``, ``pgvector``, ``chroma``, ``milvus`` or ``faiss`` (:data:`audit.stores.registry.ENGINES`).
    subject : str
        What was checked, in words: the first line of :meth:`render`, before its verdict.
    target : dict
        What was checked, as data: a SQLite index ``{"db", "index", "generation"}``; a Lance dataset
        ``{"uri"}``; a store its spec (``store`` redacted, ``engine``, ``table``, ``metric``, ``columns``…).
    findings : tuple of Finding
        In check order.
    n_rows : int
        Rows (chunks) checked.
    n_documents : int or None
        Documents checked (None where the place holds rows only: a store).
    stamp : object or None
        The index's own stamp (:class:`audit.index.stamp.Stamp`: model, weights digest, dims, window,
        pipeline version, strategy) where it has one.
    figures : dict
        The engine's own figures (a SQLite index's ``identity_max_deviation``; a Lance dataset's ``dims``,
        ``failed``, ``stamps`` and ``counts``; a store's ``vector_type``).
    pages : tuple of dict
        The extraction audit's figures per PDF page (:func:`audit.index.health.page_rows`).
    not_checked : tuple of str
        Checks that could not run, with the reason (no corpus, no offset columns…).
    indexes : tuple of dict
        The approximate indexes found (a store's).
    seconds : float
        Wall time of the checks (NaN when not measured).
    """

    engine: str
    subject: str
    target: dict
    findings: tuple[Finding, ...]
    n_rows: int
    n_documents: int | None = None
    stamp: object = None
    figures: dict = field(default_factory=dict)
    pages: tuple[dict, ...] = ()
    not_checked: tuple[str, ...] = ()
    indexes: tuple[dict, ...] = ()
    seconds: float = math.nan

    @property
    def healthy(self) -> bool:
        """No finding is unhealthy."""
        return all(f.severity != UNHEALTHY for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0 healthy, 1 unhealthy (the CLI's ``health`` contract)."""
        return 0 if self.healthy else 1

    def finding(self, check: str) -> Finding:
        """The finding of one check.

        Raises
        ------
        KeyError
            No such check; the message names the checks present.
        """
        for f in self.findings:
            if f.check == check:
                return f
        raise KeyError(f"no check {check!r}; checks: {', '.join(f.check for f in self.findings)}")

    def to_json(self) -> dict:
        """The report in the one JSON form (strict JSON once written: NaN becomes null)."""
        stamp = getattr(self.stamp, "__dict__", self.stamp)
        return {"engine": self.engine, "subject": self.subject, "target": dict(self.target), "healthy": self.healthy,
                "rows": self.n_rows, "documents": self.n_documents, "stamp": dict(stamp) if stamp else None,
                "figures": dict(self.figures), "findings": [f.to_json() for f in self.findings],
                "pages": [dict(p) for p in self.pages], "not_checked": list(self.not_checked),
                "indexes": [dict(i) for i in self.indexes],
                "seconds": None if math.isnan(self.seconds) else self.seconds}

    def to_frame(self):
        """One row per finding: ``check``, ``severity``, ``title``, ``detail``, ``concerns``, ``count``."""
        import pandas as pd

        cols = ["check", "severity", "title", "detail", "concerns", "count"]
        return pd.DataFrame([{c: getattr(f, c) for c in cols} for f in self.findings], columns=cols)

    def render(self) -> str:
        """Plain text for the CLI."""
        head = f"{self.subject} — {'HEALTHY' if self.healthy else 'UNHEALTHY'}"
        return "\n".join([head] + render_findings(self.findings) + render_pages(self.pages)
                         + [f"  [skip] {n}" for n in self.not_checked])


def store_report(engine: str, target: dict, n_rows: int, vector_type: str, findings: Sequence[Finding],
                 indexes: Sequence = (), not_checked: Sequence[str] = (), seconds: float = math.nan) -> HealthReport:
    """The health report of a live store's table or collection.

    Parameters
    ----------
    engine : str
        ``pgvector``, ``chroma`` or ``milvus``.
    target : dict
        The store's spec as data (``store`` redacted, ``table``, ``metric``, ``columns``…; its ``to_dict()``).
    n_rows : int
    vector_type : {"vector", "array"}
        pgvector ``vector``, or a ``real[]``/``double precision[]`` column (``figures["vector_type"]``).
    findings : sequence of Finding
    indexes : sequence of IndexInfo or dict
        The approximate indexes found (their fields).
    not_checked : sequence of str
    seconds : float

    Returns
    -------
    HealthReport
        Subject ``TABLE in STORE: N rows, metric M``.
    """
    subject = f"{target['table']} in {target['store']}: {n_rows} rows, metric {target['metric']}"
    return HealthReport(engine, subject, dict(target), tuple(findings), int(n_rows), None, None,
                        {"vector_type": vector_type}, (), tuple(not_checked),
                        tuple(dict(getattr(i, "__dict__", i)) for i in indexes), seconds)


def render_findings(findings: Sequence[Finding], show: int = _SHOW_DOCUMENTS) -> list[str]:
    """Text lines: ``[FAIL]``/``[warn]``/``[ ok ]``, title and detail, then up to ``show`` documents (and
    ``… N more``) or the first example ids (``e.g. …``)."""
    lines = []
    for f in findings:
        mark = {UNHEALTHY: "FAIL", WARNING: "warn", OK: " ok "}[f.severity]
        lines.append(f"  [{mark}] {f.title}: {f.detail}")
        lines += [f"         {d['doc_id']}: {d['why']}" for d in f.documents[:show]]
        if len(f.documents) > show:
            lines.append(f"         … {len(f.documents) - show} more")
        if f.examples:
            lines.append(f"         e.g. {', '.join(f.examples[:_SHOW_EXAMPLES])}")
    return lines


def render_pages(rows: Sequence[dict]) -> list[str]:
    """One line on the PDF pages' characters: how many, the emptiest page, the median, the worst garbled share."""
    if not rows:
        return []
    chars = sorted(r["own_characters"] for r in rows)
    low = min(rows, key=lambda r: (r["own_characters"], r["doc_id"], r["page"]))
    worst = max(rows, key=lambda r: (r["garbled_share"], r["doc_id"], -r["page"]))
    docs = len({r["doc_id"] for r in rows})
    return [f"  PDF pages: {len(rows)} in {docs} documents; characters of their own per page: median "
            f"{chars[len(chars) // 2]}, fewest {low['own_characters']} ({low['doc_id']} page {low['page']}); "
            + (f"largest garbled share {worst['garbled_share']:.2%} ({worst['doc_id']} page {worst['page']})"
               if worst["garbled_share"] > 0 else "no garbled character")]


def majority(hist: Sequence[tuple]) -> tuple:
    """The ``(value, count)`` with most rows; ties → the smallest value as text (deterministic)."""
    return sorted(hist, key=lambda vc: (-vc[1], str(vc[0])))[0]
