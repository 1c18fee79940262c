"""Audit the retrieval service a team runs: its HTTP endpoint, asked the ground truth's questions the way
traffic asks them, with a deadline, concurrency and counting.

- :mod:`.spec`: an endpoint (request template, JMESPath response mapping, headers from ``env:VAR``), the
  shipped mappings (:data:`MAPPINGS`: ``plain``, ``qdrant``, ``chroma``), ``[endpoints.NAME]`` tables.
- :mod:`.request`: one question as the team's request (placeholders substituted as typed JSON).
- :mod:`.response`: one answer read through the mapping (rows or columnar), or the first reason it is malformed.
- :mod:`.harness`: every question asked with ``httpx`` under ``asyncio``: concurrency, per-request deadline,
  retries with backoff on timeouts, 5xx and 429 only, a bounded total time.
- :mod:`.log`: each question's outcome (answered, timed out, HTTP error, malformed) and latency.
- :mod:`.system`: the answers as an :class:`~audit.runset.RunSet` (runs named by endpoint,
  the request logs in ``requests``), the team's citations checked against the corpus.
- :mod:`.choose`: what a user may name (a configured endpoint, a URL, ``NAME=URL``), shared mode refusing URLs.

Nothing here imports Streamlit; ``httpx`` and ``jmespath`` are imported when first needed.
"""

from .choose import EndpointRefused, resolve_endpoints
from .harness import Asked, ask_endpoint
from .log import OUTCOME_LABELS, OUTCOMES, Outcome, RequestLog
from .request import Question, build_request, substitute
from .response import Hit, Malformed, parse_answer
from .spec import MAPPINGS, EndpointError, EndpointSpec, ResponseMapping, endpoint_for_url, endpoint_from_table
from .system import check_quotes_in_documents, endpoint_system, questions_of

__all__ = ["Asked", "EndpointError", "EndpointRefused", "EndpointSpec", "Hit", "MAPPINGS", "Malformed",
           "OUTCOMES", "OUTCOME_LABELS", "Outcome", "Question", "RequestLog", "ResponseMapping", "ask_endpoint",
           "build_request", "check_quotes_in_documents", "endpoint_for_url", "endpoint_from_table",
           "endpoint_system", "parse_answer", "questions_of", "resolve_endpoints", "substitute"]
