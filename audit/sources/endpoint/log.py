"""How each question ended and how long it took: the request log of one endpoint run.

Each question ends as exactly one of :data:`OUTCOMES`:

- ``answered``: a valid response, with results or an empty list (in domain an empty list is a miss, out of
  domain a refusal);
- ``timed_out``: no complete response within the per-request deadline (after the retries), or the run's
  total time ran out before the question was answered;
- ``http_error``: a status other than 2xx (by status; a redirect that is not followed counts here), or no
  response at all (connection refused, reset: status ``None``);
- ``malformed``: a 2xx response that the mapping cannot read, with the first reason.

A failure is not a miss: measures are given over the answered questions and over all questions (failures
counted as misses), both labelled. Latency is the wall-clock time of the attempt that decided the outcome,
in milliseconds (retries are counted in ``attempts``); percentiles are numpy's default (linear
interpolation between closest ranks, the same as the built-in latency table).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["OUTCOMES", "OUTCOME_LABELS", "PERCENTILES", "Outcome", "RequestLog"]

#: Every outcome, in report order.
OUTCOMES = ("answered", "timed_out", "http_error", "malformed")
#: How each outcome is written for people.
OUTCOME_LABELS = {"answered": "answered", "timed_out": "timed out", "http_error": "HTTP error",
                  "malformed": "malformed response"}
#: Latency percentiles reported.
PERCENTILES = (50, 95, 99)


@dataclass(frozen=True)
class Outcome:
    """How one question ended.

    Attributes
    ----------
    query_id : str
    in_domain : bool
    outcome : str
        One of :data:`OUTCOMES`.
    status : int or None
        The HTTP status of the deciding attempt (None: timed out, or no response).
    reason : str
        ``""`` when answered; else one sentence (the first malformation, the status and a short body, the
        deadline that passed), secrets redacted.
    ms : float
        Wall-clock milliseconds of the deciding attempt.
    attempts : int
        Requests sent for this question (1 + retries); 0 when the total time ran out before it was sent.
    n_results : int
        Chunks returned (answered only).
    """

    query_id: str
    in_domain: bool
    outcome: str
    status: int | None = None
    reason: str = ""
    ms: float = 0.0
    attempts: int = 1
    n_results: int = 0

    @property
    def failed(self) -> bool:
        return self.outcome != "answered"

    @property
    def error_key(self) -> str:
        """How an HTTP error is counted: its status, or ``no response``."""
        return str(self.status) if self.status is not None else "no response"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RequestLog:
    """Every question one endpoint was asked, with its outcome and latency.

    Attributes
    ----------
    endpoint : dict
        :meth:`~audit.sources.endpoint.spec.EndpointSpec.to_dict` (URL redacted, header names only).
    outcomes : tuple of Outcome
        In-domain questions first, then out-of-domain, each in the order given.
    k : int
    concurrency : int
    deadline_s : float
    retries : int
    total_time_s : float
        The bound on the whole run, seconds.
    seconds : float
        Wall-clock time of the whole run.
    max_in_flight : int
        The most requests in flight at once, as the harness counted them.
    """

    endpoint: dict
    outcomes: tuple
    k: int
    concurrency: int
    deadline_s: float
    retries: int
    total_time_s: float
    seconds: float
    max_in_flight: int

    def select(self, in_domain: bool | None = None) -> list[Outcome]:
        """The outcomes of in-domain (True), out-of-domain (False) or all (None) questions."""
        return [o for o in self.outcomes if in_domain is None or o.in_domain == in_domain]

    def answered(self, in_domain: bool | None = True) -> tuple[str, ...]:
        """Query ids of the answered questions (in domain by default)."""
        return tuple(o.query_id for o in self.select(in_domain) if not o.failed)

    def counts(self, in_domain: bool | None = None) -> dict[str, int]:
        """Outcome -> number of questions (every outcome of :data:`OUTCOMES`, zeros included)."""
        out = dict.fromkeys(OUTCOMES, 0)
        for o in self.select(in_domain):
            out[o.outcome] += 1
        return out

    def http_errors(self) -> dict[str, int]:
        """HTTP errors by status (``"500"``, ``"429"``, ``"no response"``), most frequent first."""
        out: dict[str, int] = {}
        for o in self.outcomes:
            if o.outcome == "http_error":
                out[o.error_key] = out.get(o.error_key, 0) + 1
        return dict(sorted(out.items(), key=lambda it: (-it[1], it[0])))

    def first_reasons(self) -> dict[str, str]:
        """Outcome -> the reason of its first question (a failure explained by an example)."""
        out: dict[str, str] = {}
        for o in self.outcomes:
            if o.failed and o.outcome not in out:
                out[o.outcome] = f"{o.query_id}: {o.reason}"
        return out

    def latency(self, outcome: str | None = None) -> dict:
        """``n``, ``p50_ms``, ``p95_ms``, ``p99_ms`` (and ``max_ms``) over the questions with ``outcome``
        (None: every question); NaN when there is none."""
        ms = [o.ms for o in self.outcomes if outcome is None or o.outcome == outcome]
        out = {"n": len(ms)}
        for p in PERCENTILES:
            out[f"p{p}_ms"] = float(np.percentile(ms, p)) if ms else float("nan")
        out["max_ms"] = max(ms) if ms else float("nan")
        return out

    @property
    def requests_per_s(self) -> float:
        """Requests sent per second of the run (retries included)."""
        sent = sum(o.attempts for o in self.outcomes)
        return sent / self.seconds if self.seconds > 0 else float("nan")

    def to_dict(self) -> dict:
        """JSON-ready: the endpoint, the settings, ``counts`` (all / in domain / out of domain), ``http_errors``
        by status, ``latency`` per outcome (and ``all``), ``first_reasons``, ``questions`` (one per question)."""
        return {
            "endpoint": self.endpoint, "k": self.k, "concurrency": self.concurrency, "deadline_s": self.deadline_s,
            "retries": self.retries, "total_time_s": self.total_time_s, "seconds": self.seconds,
            "max_in_flight": self.max_in_flight, "requests_per_s": self.requests_per_s,
            "counts": {"all": self.counts(), "in_domain": self.counts(True), "out_of_domain": self.counts(False)},
            "http_errors": self.http_errors(),
            "latency": {"all": self.latency(), **{o: self.latency(o) for o in OUTCOMES}},
            "first_reasons": self.first_reasons(),
            "questions": [o.to_dict() for o in self.outcomes],
        }
