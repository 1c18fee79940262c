"""Put every question to one endpoint the way traffic asks it: concurrent requests with a deadline, retries
and a bounded total time, each question counted as one outcome (:mod:`.log`).

- **Concurrency**: at most ``concurrency`` requests in flight (an ``asyncio`` semaphore and as many pooled
  connections of one ``httpx.AsyncClient``); the harness counts the most it saw in flight at once.
- **Deadline**: each request gets ``deadline`` seconds for everything (connect, send, wait, read the body);
  past it the request is abandoned and counts as timed out.
- **Retries**: only after a timeout, a 5xx, a 429 or a kept-alive connection the service had closed
  (``RemoteProtocolError``: the service went away before answering; the retry goes out on a fresh connection),
  at most ``retries`` more requests, after ``backoff · 2^(attempt − 1)`` seconds (capped at 10 s; a 429's
  ``Retry-After``, seconds or an HTTP date, is honoured up to the cap and the run's total time). A search
  request changes nothing on the service, so it is safe to resend. No jitter: the waits are the same on every
  run. Anything else is final: a 2xx is answered or malformed, a 4xx or an unfollowed 3xx an HTTP error, a
  refused or reset connection an HTTP error without status.
- **Total time**: the whole run is bounded by ``total_time`` seconds; a question not answered by then is
  timed out with that reason. Nothing of one question's failure stops the others.
- **Secrets**: header values are sent and never shown; every reason is redacted before it is kept: each header
  value in each shape it may come back in (the bare credential of ``Bearer …``, percent-encoded …:
  :func:`audit.secrets.forms`) and any password in a URL.

Only GET and POST are ever sent (:data:`~.spec.METHODS`); redirects are followed only when the endpoint
says so and never in shared mode.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ...secrets import Redactor
from .log import Outcome, RequestLog
from .request import Question, build_request
from .response import Hit, Malformed, parse_answer
from .spec import EndpointError, EndpointSpec

__all__ = ["Asked", "ask_endpoint", "check_settings"]

#: The longest wait between two attempts, seconds.
MAX_BACKOFF_S = 10.0


@dataclass(frozen=True)
class Asked:
    """One endpoint's answers.

    Attributes
    ----------
    log : RequestLog
        Every question's outcome and latency.
    hits : dict of str to tuple of Hit
        Query id -> the chunks returned, in the order returned, for the answered questions only.
    """

    log: RequestLog
    hits: dict


def check_settings(k: int, concurrency: int, deadline: float, retries: int, total_time: float) -> None:
    """Raise :class:`~.spec.EndpointError` naming the first setting out of range (the CLI option's name)."""
    for name, v, ok in (("--k", k, isinstance(k, int) and k >= 1),
                        ("--concurrency", concurrency, isinstance(concurrency, int) and 1 <= concurrency <= 1024),
                        ("--deadline", deadline, isinstance(deadline, (int, float)) and math.isfinite(deadline)
                         and deadline > 0),
                        ("--retries", retries, isinstance(retries, int) and 0 <= retries <= 10),
                        ("--total-time", total_time, isinstance(total_time, (int, float)) and
                         math.isfinite(total_time) and total_time > 0)):
        if isinstance(v, bool) or not ok:
            raise EndpointError(f"{name} {v!r} is out of range (k >= 1, 1 <= concurrency <= 1024, deadline and "
                                "total time positive seconds, 0 <= retries <= 10)")


def _redactor(secrets: Sequence[str]) -> Callable[[str], str]:
    """The redaction of every reason: each secret in each of its shapes (:class:`audit.secrets.Redactor`)."""
    return Redactor(secrets)


def _snippet(body: bytes) -> str:
    text = re.sub(r"\s+", " ", body[:200].decode("utf-8", "replace")).strip()
    return text if len(text) <= 100 else text[:97] + "..."


def _retry_after(headers, now: float | None = None) -> float | None:
    """A 429's ``Retry-After`` in seconds from now: delay-seconds or an HTTP date (RFC 9110 §10.2.3), or None.

    An HTTP date (``Wed, 21 Oct 2026 07:28:00 GMT``, or the obsolete RFC 850 and asctime forms) is read against
    this machine's clock (``now``, seconds since the epoch; default ``time.time()``); a date in the past is 0.
    The caller bounds the wait (:data:`MAX_BACKOFF_S`, the run's total time).
    """
    v = headers.get("retry-after")
    if v is None:
        return None
    v = v.strip()
    if v.isdigit():
        return float(v)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None  # neither form: the harness's own backoff applies
    if when.tzinfo is None:  # RFC 9110: an HTTP date is always GMT
        from datetime import timezone

        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


async def _ask(spec: EndpointSpec, questions: Sequence[Question], parts: list, headers: dict, *, k: int,
               concurrency: int, deadline: float, retries: int, total_time: float, backoff: float,
               shared: bool, need_text: bool, redact, progress, transport) -> Asked:
    import httpx2 as httpx  # the maintained continuation of httpx (same API), see docs/endpoint.md

    sem = asyncio.Semaphore(concurrency)
    state = {"in_flight": 0, "max": 0, "done": 0}
    results: list[Outcome | None] = [None] * len(questions)
    attempts = [0] * len(questions)
    hits: dict[str, tuple[Hit, ...]] = {}
    started = time.perf_counter()

    async def one(i: int, client) -> None:
        q, req = questions[i], parts[i]
        while True:
            retry_after = None
            async with sem:
                attempts[i] += 1
                state["in_flight"] += 1
                state["max"] = max(state["max"], state["in_flight"])
                t0 = time.perf_counter()
                response = error = None
                try:
                    async with asyncio.timeout(deadline):
                        response = await client.request(req.method, req.url, params=req.params, json=req.json)
                except (TimeoutError, httpx.TimeoutException):
                    error = "timeout"
                except httpx.RemoteProtocolError as e:  # a kept-alive connection the service had closed
                    error = f"disconnected ({type(e).__name__}: {e})"
                except httpx.HTTPError as e:
                    error = f"no response ({type(e).__name__}: {e})"
                finally:
                    state["in_flight"] -= 1
                ms = (time.perf_counter() - t0) * 1000.0
            retryable = False
            if error == "timeout":
                out = Outcome(q.query_id, q.in_domain, "timed_out", None,
                              f"no complete response within the deadline of {deadline:g} s", ms, attempts[i])
                retryable = True
            elif error is not None:
                out = Outcome(q.query_id, q.in_domain, "http_error", None, redact(error)[:300], ms, attempts[i])
                # the pool drops a connection that failed, so the retry goes out on a fresh one
                retryable = error.startswith("disconnected")
            elif 200 <= response.status_code < 300:
                try:
                    got = parse_answer(response.content, spec.response, need_text)
                    hits[q.query_id] = tuple(got)
                    out = Outcome(q.query_id, q.in_domain, "answered", response.status_code, "", ms, attempts[i],
                                  len(got))
                except Malformed as e:
                    out = Outcome(q.query_id, q.in_domain, "malformed", response.status_code, redact(str(e))[:300],
                                  ms, attempts[i])
            else:
                s = response.status_code
                what = (f"redirect to {redact(response.headers.get('location', '?'))} not followed"
                        if 300 <= s < 400 else _snippet(response.content))
                out = Outcome(q.query_id, q.in_domain, "http_error", s, redact(f"HTTP {s}: {what}")[:300], ms,
                              attempts[i])
                retryable = s >= 500 or s == 429
                retry_after = _retry_after(response.headers) if s == 429 else None
            if retryable and attempts[i] <= retries:
                wait = min(backoff * 2 ** (attempts[i] - 1), MAX_BACKOFF_S)
                if retry_after is not None:
                    wait = min(max(wait, retry_after), MAX_BACKOFF_S)
                if time.perf_counter() - started + wait + deadline <= total_time:
                    await asyncio.sleep(wait)
                    continue
            results[i] = out
            state["done"] += 1
            if progress is not None:
                progress(state["done"], len(questions))
            return

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(deadline), limits=limits,
                                 follow_redirects=spec.follow_redirects and not shared, transport=transport) as client:
        tasks = [asyncio.create_task(one(i, client)) for i in range(len(questions))]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=total_time)
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
    seconds = time.perf_counter() - started
    outcomes = []
    for i, q in enumerate(questions):
        o = results[i]
        if o is None:
            o = Outcome(q.query_id, q.in_domain, "timed_out", None,
                        f"the run's total time of {total_time:g} s ran out before it was answered",
                        0.0, attempts[i])
        outcomes.append(o)
    log = RequestLog(spec.to_dict(), tuple(outcomes), k, concurrency, float(deadline), retries, float(total_time),
                     seconds, state["max"])
    return Asked(log, hits)


def _run(factory):
    """Run the coroutine ``factory()`` makes: in this thread, or in a worker thread when a loop runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as ex:
        return ex.submit(lambda: asyncio.run(factory())).result()


def ask_endpoint(spec: EndpointSpec, questions: Sequence[Question], *, k: int = 20, concurrency: int = 4,
                 deadline: float = 10.0, retries: int = 2, total_time: float = 600.0, backoff: float = 0.25,
                 shared: bool = False, need_text: bool = False, env: Mapping[str, str] | None = None,
                 progress: Callable[[int, int], None] | None = None, transport=None) -> Asked:
    """Ask ``spec`` every question (see the module docstring); each ends as one outcome.

    Parameters
    ----------
    spec : EndpointSpec
    questions : sequence of Question
        In-domain then out-of-domain, in the order the log keeps; vectors set when the template takes
        ``{vector}``.
    k : int
        Results asked for (``{k}``).
    concurrency : int
        Requests in flight at most.
    deadline : float
        Seconds per request, everything included.
    retries : int
        Extra requests after a timeout, a 5xx, a 429 or a closed kept-alive connection.
    total_time : float
        Seconds for the whole run.
    backoff : float
        Seconds before the first retry (doubled at each retry, capped at :data:`MAX_BACKOFF_S`).
    shared : bool
        Shared mode: redirects are never followed.
    need_text : bool
        Every returned chunk must carry its text (needle judgments): otherwise the answer is malformed.
    env : mapping, optional
        Where ``env:VARIABLE`` header values are read (default ``os.environ``).
    progress : callable ``(done, total)``, optional
        Called in this thread after each question ends.
    transport : httpx transport, optional
        For tests (``httpx.MockTransport``); default the network.

    Returns
    -------
    Asked

    Raises
    ------
    EndpointError
        A setting out of range, a header variable unset, a template that cannot be filled (``{vector}`` without
        vectors): raised before any request is sent.
    """
    check_settings(k, concurrency, deadline, retries, total_time)
    headers = spec.header_values(env)
    parts = [build_request(spec, q, k) for q in questions]
    redact = _redactor(list(headers.values()))
    return _run(lambda: _ask(spec, questions, parts, headers, k=k, concurrency=concurrency, deadline=deadline,
                             retries=retries, total_time=total_time, backoff=backoff, shared=shared,
                             need_text=need_text, redact=redact, progress=progress, transport=transport))
