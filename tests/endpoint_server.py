"""A real retrieval service for the endpoint tests: uvicorn on a loopback port, an ASGI app answering with the
product's own dense retrieval (the hashing encoder, :func:`audit.retrieval.dense.dense_ranking`) over
``data/example``'s chunks, with faults injected by question.

Three APIs, each the shape of a shipped mapping:

- ``POST /search`` (plain): ``{"query", "k"}`` → ``{"results": [{"id", "score", "text", "doc_id", "start",
  "end"}]}``, score = cosine similarity; ``GET /search?q=…&k=…`` answers the same;
- ``POST /collections/{name}/points/query`` (Qdrant's query API): ``{"query": [vector], "limit",
  "with_payload"}`` → ``{"result": {"points": [{"id", "version", "score", "payload"}]}, "status", "time"}``,
  integer point ids (chunk i is point i + 1), the text in ``payload.page_content`` and the document in
  ``payload.metadata`` as LangChain's Qdrant store writes them;
- ``POST /api/v2/tenants/{t}/databases/{d}/collections/{id}/query`` (Chroma): ``{"query_embeddings": [[…]],
  "n_results", "include"}`` → columnar ``ids``, ``distances`` (squared L2, Chroma's default space),
  ``documents``, ``metadatas``, one list per query embedding;
- ``POST /{index}/_search`` (Elasticsearch's top-level ``knn``, or OpenSearch's ``query.knn`` clause) →
  ``hits.hits[]`` with ``_id``, ``_score`` = (1 + cos) / 2 and ``_source`` (LangChain's ``metadata``);
- ``POST /v1/graphql`` (Weaviate's ``Get`` with ``nearVector``, the vector and k as GraphQL variables) →
  ``data.Get.Chunk[]`` with ``_additional { id distance }``, distance = 1 − cos;
- ``POST /query`` (Pinecone, a euclidean index) → ``matches[]`` with ``id``, ``score`` = ‖a − b‖² and
  ``metadata``;
- ``POST /search/`` (Vespa, an angular field) → ``root.children[]`` with ``id`` (``id:rag:chunk::ID``),
  ``relevance`` = closeness = 1 / (1 + θ) and ``fields``.

A vector question is recognised by its vector (the server embeds the test's questions with the same
encoder), so every fault applies to every API. Faults by question text: ``slow`` (answered ten times later
than the deadline, or when the client goes away), ``500`` (the body echoes the API key it was sent),
``malformed`` (a 200 that is not JSON), ``empty`` (no result), ``503-once`` / ``429-once`` (that status on the
first request for the question, then an answer), ``429-date-once`` (a 429 whose ``Retry-After`` is an HTTP date
3 s ahead of the server's clock, then an answer). Faults that send the caller's credential back, bare (the
``Authorization`` value without its scheme, or the API key): ``401-token`` (a 401 whose body says
``token … has expired``), ``403-echo`` (a 403 with the credential in a ``WWW-Authenticate`` header and the whole
``Authorization`` header in the body), ``redirect-token`` (a 307 to ``/login?token=…``, percent-encoded). The first ``slow_start`` requests are delayed by 0.3 ×
the deadline (a cold start, still within it). ``GET /moved`` answers 307 to ``/search``.

With ``uuid_ids`` the plain API names each chunk by a hyphenated UUID (:func:`chunk_uuid`), as Qdrant answers
point ids upserted as 32 hex digits. The server counts the requests, the most in flight at once and the requests without the expected API key.
It listens on 127.0.0.1 only, on a port the system picks, and stops within seconds (``stop``), dropping
handlers still asleep.

:class:`ClosingServer` is a bare HTTP/1.1 server (asyncio streams, no framework) that answers the plain API's
``POST /search`` and keeps the connection alive; a question's first request that arrives on a connection already
used is read and the connection closed without an answer, as by a service whose keep-alive timeout fired: the
client sees ``RemoteProtocolError: Server disconnected``. A question is dropped so at most once.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "data" / "example"


def chunk_uuid(chunk_id: str):
    """The UUID a service keys chunk ``chunk_id`` by (UUID 5 of the id; printed hyphenated, ``.hex`` 32 digits)."""
    import uuid

    return uuid.uuid5(uuid.NAMESPACE_URL, f"chunk:{chunk_id}")


class Service:
    """The ASGI app and what it saw (see the module docstring)."""

    def __init__(self, deadline: float, faults: dict[str, str] | None = None, questions=(), api_key: str | None = None,
                 slow_start: int = 0, bearer: str | None = None, uuid_ids: bool = False):
        from audit.models import load_encoder
        from audit.sources.imported import read_chunks

        self.deadline, self.faults, self.api_key, self.slow_start = deadline, dict(faults or {}), api_key, slow_start
        self.enc = load_encoder("hashing")
        self.chunks = read_chunks(EXAMPLE / "chunks.jsonl")
        self.vectors = self.enc.encode([c.text for c in self.chunks])
        qs = list(questions)
        self.by_vector = {v.astype(np.float32).tobytes(): t for t, v in zip(qs, self.enc.encode(qs))} if qs else {}
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.unauthorized = 0
        self.seen: dict[str, int] = {}
        self.bearer = bearer  # the whole Authorization value expected ("Bearer tok-…"), when given
        self.uuid_ids = uuid_ids  # the plain API answers chunk_uuid(id), hyphenated, as Qdrant spells point ids
        self.retry_at = self.retried_at = 0.0  # 429-date-once: the date it gave, when the retry came (epoch s)

    # ------------------------------------------------------------------ retrieval (the reference)
    def rank(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(chunk index, cosine distance) of the top k: the product's own exact scan."""
        from audit.retrieval.dense import dense_ranking

        r = dense_ranking(self.vectors, np.asarray(vector, dtype=np.float32))
        return r.top(k)

    def rank_text(self, text: str, k: int) -> list[tuple[int, float]]:
        return self.rank(self.enc.encode([text])[0], k)

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        self.requests += 1
        n = self.requests
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self._handle(scope, receive, send, n)
        finally:
            self.in_flight -= 1

    async def _body(self, receive) -> bytes:
        chunks = []
        while True:
            m = await receive()
            chunks.append(m.get("body", b""))
            if not m.get("more_body"):
                return b"".join(chunks)

    async def _send(self, send, status: int, body: bytes, headers=()) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), *headers]})
        await send({"type": "http.response.body", "body": body})

    async def _sleep_or_gone(self, receive, seconds: float) -> bool:
        """Sleep ``seconds``; False when the client went away first."""
        sleep = asyncio.ensure_future(asyncio.sleep(seconds))
        gone = asyncio.ensure_future(receive())
        done, _ = await asyncio.wait({sleep, gone}, return_when=asyncio.FIRST_COMPLETED)
        for t in (sleep, gone):
            t.cancel()
        return sleep in done

    async def _handle(self, scope, receive, send, n: int) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        raw = await self._body(receive)
        path, method = scope["path"], scope["method"]
        if self.api_key is not None and headers.get("x-api-key") != self.api_key:
            self.unauthorized += 1
            return await self._send(send, 401, b'{"error": "bad api key"}')
        if self.bearer is not None and headers.get("authorization") != self.bearer:
            self.unauthorized += 1
            return await self._send(send, 401, b'{"error": "no credential"}')
        if path == "/moved":
            return await self._send(send, 307, b"", [(b"location", b"/search")])
        if method == "GET" and path == "/search":
            from urllib.parse import parse_qs

            qs = parse_qs(scope["query_string"].decode())
            api, text, k, vector = "plain", qs["q"][0], int(qs["k"][0]), None
        else:
            body = json.loads(raw)
            if path == "/search":
                api, text, k, vector = "plain", body["query"], int(body["k"]), None
            elif path.endswith("/_search"):  # Elasticsearch's top-level knn, or OpenSearch's knn query clause
                if "knn" in body:
                    api, vector, k = "elasticsearch", body["knn"]["query_vector"], int(body["knn"]["k"])
                else:
                    (clause,) = body["query"]["knn"].values()
                    api, vector, k = "opensearch", clause["vector"], int(clause["k"])
                vector = np.asarray(vector, dtype=np.float32)
                text = self.by_vector.get(vector.tobytes(), "")
            elif path == "/v1/graphql":
                api, vector = "weaviate", np.asarray(body["variables"]["v"], dtype=np.float32)
                k, text = int(body["variables"]["k"]), self.by_vector.get(vector.tobytes(), "")
            elif path == "/query":
                api, vector, k = "pinecone", np.asarray(body["vector"], dtype=np.float32), int(body["topK"])
                text = self.by_vector.get(vector.tobytes(), "")
            elif path == "/search/":
                api, vector, k = "vespa", np.asarray(body["input.query(q)"], dtype=np.float32), int(body["hits"])
                text = self.by_vector.get(vector.tobytes(), "")
            elif path.endswith("/points/query"):
                api, vector, k = "qdrant", np.asarray(body["query"], dtype=np.float32), int(body["limit"])
                text = self.by_vector.get(vector.tobytes(), "")
            elif path.endswith("/query"):
                api, vector, k = "chroma", np.asarray(body["query_embeddings"][0], np.float32), int(body["n_results"])
                text = self.by_vector.get(vector.tobytes(), "")
            else:
                return await self._send(send, 404, b'{"error": "no such route"}')
        self.seen[text] = self.seen.get(text, 0) + 1
        fault = self.faults.get(text)
        if n <= self.slow_start:
            await asyncio.sleep(0.3 * self.deadline)
        if fault == "slow":
            if not await self._sleep_or_gone(receive, 10 * self.deadline):
                return
        if fault == "500":
            return await self._send(send, 500, json.dumps({"error": f"index shard down (key {headers.get('x-api-key')})"})
                                    .encode())
        if fault in ("401-token", "403-echo", "redirect-token"):
            auth = headers.get("authorization", "")
            bare = auth.split(" ", 1)[1] if " " in auth else headers.get("x-api-key", "")
            if fault == "401-token":
                return await self._send(send, 401, json.dumps({"error": f"token {bare} has expired"}).encode())
            if fault == "403-echo":
                return await self._send(send, 403, json.dumps({"detail": "forbidden", "you_sent": auth}).encode(),
                                        [(b"www-authenticate", f'Bearer error="invalid_token", token="{bare}"'.encode())])
            from urllib.parse import quote

            return await self._send(send, 307, b"", [(b"location", f"/login?token={quote(bare, safe='')}".encode())])
        if fault == "429-date-once" and self.seen[text] == 1:
            from email.utils import formatdate

            self.retry_at = time.time() + 3.0
            return await self._send(send, 429, b'{"error": "slow down"}',
                                    [(b"retry-after", formatdate(self.retry_at, usegmt=True).encode())])
        if fault == "429-date-once":
            self.retried_at = time.time()
        if fault in ("503-once", "429-once") and self.seen[text] == 1:
            status = int(fault[:3])
            return await self._send(send, status, b'{"error": "busy"}', [(b"retry-after", b"0")] if status == 429 else [])
        if fault == "malformed":
            return await self._send(send, 200, b"<html>upstream timeout</html>")
        top = [] if fault == "empty" else (self.rank(vector, k) if vector is not None else self.rank_text(text, k))
        await self._send(send, 200, json.dumps(self.answer(api, top)).encode())

    def answer(self, api: str, top: list[tuple[int, float]]) -> dict:
        cs = [self.chunks[i] for i, _ in top]
        if api == "plain":
            return {"results": [{"id": str(chunk_uuid(c.chunk_id)) if self.uuid_ids else c.chunk_id, "score": 1.0 - d, "text": c.content, "doc_id": c.doc_id,
                                 "start": c.start, "end": c.end} for c, (_, d) in zip(cs, top)]}
        if api == "qdrant":
            return {"result": {"points": [{"id": i + 1, "version": 3, "score": 1.0 - d,
                                           "payload": {"page_content": c.content,
                                                       "metadata": {"doc_id": c.doc_id, "start": c.start,
                                                                    "end": c.end}}}
                                          for c, (i, d) in zip(cs, top)]},
                    "status": "ok", "time": 0.0004}
        if api in ("elasticsearch", "opensearch"):  # a cosine field: _score = (1 + cos) / 2 = 1 − d / 2
            return {"took": 3, "timed_out": False, "hits": {"total": {"value": len(cs), "relation": "eq"},
                    "max_score": None, "hits": [{"_index": "chunks", "_id": c.chunk_id, "_score": 1.0 - d / 2.0,
                                                 "_source": {"text": c.content, "metadata": {
                                                     "doc_id": c.doc_id, "start": c.start, "end": c.end}}}
                                                for c, (_, d) in zip(cs, top)]}}
        if api == "weaviate":  # _additional.distance of a cosine class: 1 − cos
            return {"data": {"Get": {"Chunk": [{"text": c.content, "doc_id": c.doc_id, "start": c.start, "end": c.end,
                                                "_additional": {"id": c.chunk_id, "distance": d}}
                                               for c, (_, d) in zip(cs, top)]}}}
        if api == "pinecone":  # a euclidean index: score = ‖a − b‖² = 2d for unit vectors
            return {"matches": [{"id": c.chunk_id, "score": 2.0 * d, "values": [],
                                 "metadata": {"text": c.content, "doc_id": c.doc_id, "start": c.start, "end": c.end}}
                                for c, (_, d) in zip(cs, top)], "namespace": "", "usage": {"readUnits": 5}}
        if api == "vespa":  # an angular field: relevance = closeness = 1 / (1 + θ), θ = acos(1 − d)
            return {"root": {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount": len(cs)},
                             "coverage": {"coverage": 100, "documents": len(self.chunks), "full": True},
                             "children": [{"id": f"id:rag:chunk::{c.chunk_id}",
                                           "relevance": 1.0 / (1.0 + math.acos(max(-1.0, min(1.0, 1.0 - d)))),
                                           "source": "content", "fields": {"chunk_id": c.chunk_id, "text": c.content, "doc_id": c.doc_id,
                                                                           "start": c.start, "end": c.end}}
                                          for c, (_, d) in zip(cs, top)]}}
        return {"ids": [[c.chunk_id for c in cs]], "distances": [[2.0 * d for _, d in top]],  # ‖a−b‖² = 2 − 2cos
                "documents": [[c.content for c in cs]],
                "metadatas": [[{"doc_id": c.doc_id, "start": c.start, "end": c.end} for c in cs]],
                "embeddings": None, "uris": None, "data": None, "included": ["documents", "metadatas", "distances"]}


class LoopbackServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread; ``url`` once started; ``stop`` within seconds."""

    def __init__(self, app):
        import uvicorn

        self.config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off",
                                     access_log=False, timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, name="endpoint-test-server", daemon=True)
        self.url = ""

    def start(self, timeout: float = 20.0) -> "LoopbackServer":
        self.thread.start()
        t0 = time.monotonic()
        while not self.server.started:  # bounded: the server starts or the test fails
            if time.monotonic() - t0 > timeout or not self.thread.is_alive():
                raise RuntimeError("the loopback test server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def need_uvicorn():
    """uvicorn, or skip (fail under CI=true) with the reason."""
    import os

    import pytest

    try:
        import uvicorn  # noqa: F401
    except ImportError:
        msg = "uvicorn is not installed (pip install -r requirements-dev.txt): the endpoint tests need a real server"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)


class ClosingServer:
    """The plain API on 127.0.0.1, one answer per connection, then the connection closed on its next request
    without an answer (see the module docstring); ``url`` once started, ``stop`` within seconds."""

    def __init__(self, service: Service):
        self.service = service
        self.requests = 0
        self.dropped_questions: set[str] = set()
        self.connections = 0
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._server = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="closing-test-server", daemon=True)

    async def _connection(self, reader, writer) -> None:
        import re

        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
                body = await reader.readexactly(int(m.group(1))) if m else b""
                self.requests += 1
                q = json.loads(body)
                if served and q["query"] not in self.dropped_questions:
                    # the keep-alive timeout fired while the request was on its way (once per question)
                    self.dropped_questions.add(q["query"])
                    return
                out = json.dumps(self.service.answer("plain", self.service.rank_text(q["query"], int(q["k"])))).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\n"
                             b"content-length: %d\r\n\r\n" % len(out) + out)
                await writer.drain()
                served += 1
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            return
        finally:
            writer.close()

    def start(self) -> "ClosingServer":
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._connection, "127.0.0.1", 0), self._loop)
        self._server = fut.result(10)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    def stop(self) -> None:
        async def close():
            self._server.close()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
