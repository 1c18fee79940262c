"""What an endpoint is: the team's request (a template) and the team's response (a mapping), and the
ready mappings shipped for services people run.

An endpoint is named in ``audit.toml`` (``[endpoints.NAME]``) or in ``--endpoint-config FILE`` (the
same tables), or given as a bare URL with one of the shipped mappings (:data:`MAPPINGS`). Keys of one
table (every one but ``url`` optional; a shipped ``mapping`` fills the rest)::

    [endpoints.prod]
    url = "https://rag.internal/v1/search"     # http(s); {query}, {k}, {query_id} allowed (percent-encoded)
    mapping = "plain"                          # plain (default), qdrant, chroma, elasticsearch, opensearch,
                                               # weaviate, pinecone or vespa: the defaults below
    method = "POST"                            # GET or POST only: an audit never changes the service
    body = { query = "{query}", k = "{k}" }    # JSON body; a string that is exactly "{k}" becomes the
                                               # number k, "{vector}" the question's embedding (a list)
    params = { tenant = "ops" }                # query string (GET or POST); {query}, {k}, {query_id}
    headers = { Authorization = "env:RAG_TOKEN" }   # env:VAR (read when asking, never shown) or literal
    k = 20
    follow_redirects = false                   # never followed in shared mode
    [endpoints.prod.response]                  # JMESPath (jmespath.org), merged key by key over the mapping's
    rows = "results"                           # the list of result objects; leave it out for columnar
    id = "id"                                  # answers, where every field selects a parallel array
    score = "score"
    text = "text"                              # optional: the returned chunk's text ("" removes a field)
    doc_id = "doc_id"                          # optional: its document, and start/end (code points,
    start = "start"                            # end exclusive) of its text in that document
    end = "end"
    score_kind = "similarity"                  # similarity | ip | cosine-distance | l2, or an engine's own:
                                               # es-cosine | l2sq | closeness-angular |
                                               # closeness-prenormalized | closeness-euclidean

Placeholders are substituted as typed JSON values, never by formatting a JSON text: a question holding
``"`` or ``{k}`` stays the string it is. ``env:`` is read in header values only; every header value is
treated as a secret (never in a message, a repr, a report or a page).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping
from urllib.parse import urlsplit

from ...runset import FILE_SCORE_KINDS
from ...scores import ENGINE_SCORE_KINDS

__all__ = ["EndpointError", "EndpointSpec", "MAPPINGS", "METHODS", "PLACEHOLDERS", "ResponseMapping",
           "TABLE_KEYS", "endpoint_for_url", "endpoint_from_table", "endpoints_from_tables", "load_endpoint_config",
           "redact_url"]

#: The placeholders a template may hold.
PLACEHOLDERS = ("query", "k", "query_id", "vector")
#: The only methods sent: a search is a read (an audit never changes the team's service).
METHODS = ("GET", "POST")
#: What a mapping's score may mean: a run file's kinds, and the engines' own (converted to cosine distance,
#: :func:`audit.scores.engine_cosine_distances`).
SCORE_KINDS = (*FILE_SCORE_KINDS, *ENGINE_SCORE_KINDS)
#: Keys of an ``[endpoints.NAME]`` table.
TABLE_KEYS = ("url", "mapping", "method", "body", "params", "headers", "k", "follow_redirects", "response")
#: Keys of its ``response`` table.
RESPONSE_KEYS = ("rows", "id", "score", "text", "doc_id", "start", "end", "score_kind")
_FIELDS = ("id", "score", "text", "doc_id", "start", "end")
_PLACEHOLDER = re.compile(r"\{(query|k|query_id|vector)\}")


class EndpointError(ValueError):
    """An endpoint that cannot be used as given; the message names the key or value (never a secret)."""


@functools.lru_cache(maxsize=512)
def _compiled(expression: str):
    import jmespath

    return jmespath.compile(expression)


@dataclass(frozen=True)
class ResponseMapping:
    """Where a response holds each returned chunk's id, score, text, document and offsets (JMESPath).

    Attributes
    ----------
    rows : str or None
        The expression selecting the list of result objects; each field below is then read from each
        row. None: a columnar answer, each field selects an array over the whole response, all of the
        same length (parallel arrays, e.g. Chroma's ``ids[0]`` and ``distances[0]``).
    id, score : str
        Required in every row: the chunk id (a string or an integer) and its score (a finite number).
    text, doc_id, start, end : str or None
        Optional fields; a row may hold ``null`` there (no text, no document, no offsets). ``start`` and
        ``end`` are code points of the document's canonical text, end exclusive, both or neither.
    score_kind : str
        What the score means (:data:`SCORE_KINDS`: a run file's kinds, or an engine's own, converted to
        cosine distance by :func:`audit.scores.engine_cosine_distances`).
    """

    rows: str | None
    id: str
    score: str
    text: str | None = None
    doc_id: str | None = None
    start: str | None = None
    end: str | None = None
    score_kind: str = "similarity"

    def __post_init__(self) -> None:
        import jmespath.exceptions

        if self.score_kind not in SCORE_KINDS:
            raise EndpointError(f"response.score_kind {self.score_kind!r} is not one of {', '.join(SCORE_KINDS)}")
        for key in ("rows", *_FIELDS):
            expr = getattr(self, key)
            if expr is None:
                if key in ("id", "score"):
                    raise EndpointError(f"response.{key} is required (a JMESPath expression)")
                continue
            if not isinstance(expr, str) or not expr.strip():
                raise EndpointError(f"response.{key} must be a JMESPath expression (a string), not {expr!r}")
            try:
                _compiled(expr)
            except jmespath.exceptions.JMESPathError as e:
                raise EndpointError(f"response.{key} {expr!r} is not a JMESPath expression "
                                    f"({str(e).splitlines()[0]})") from None

    def compiled(self, key: str):
        """The compiled JMESPath expression of ``key`` (None when the field is not mapped)."""
        expr = getattr(self, key)
        return None if expr is None else _compiled(expr)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in RESPONSE_KEYS}


@dataclass(frozen=True)
class _Request:
    method: str
    body: Any
    params: Mapping[str, str] | None


#: The shipped mappings: name -> (request template, response mapping, what it fits).
MAPPINGS: dict[str, tuple[_Request, ResponseMapping, str]] = {
    "plain": (
        _Request("POST", {"query": "{query}", "k": "{k}"}, None),
        ResponseMapping("results", "id", "score", "text", "doc_id", "start", "end", "similarity"),
        'POST {"query": …, "k": …} answered by {"results": [{"id", "score", "text"[, "doc_id", "start", "end"]}]}, '
        "score a similarity",
    ),
    # Qdrant's universal query API (POST /collections/{name}/points/query, Qdrant >= 1.10): the body's "query"
    # is the question's vector; the answer is {"result": {"points": [{"id", "version", "score", "payload"}]},
    # "status", "time"}. The score is a similarity for Cosine and Dot collections (a distance for Euclid and
    # Manhattan ones: set response.score_kind = "l2"). LangChain's Qdrant store keeps the text in
    # payload.page_content and the rest in payload.metadata.
    "qdrant": (
        _Request("POST", {"query": "{vector}", "limit": "{k}", "with_payload": True}, None),
        ResponseMapping("result.points", "id", "score", "payload.text || payload.page_content",
                        "payload.doc_id || payload.metadata.doc_id", "payload.start || payload.metadata.start",
                        "payload.end || payload.metadata.end", "similarity"),
        "Qdrant's points/query API: the question's vector in, result.points[] with id, score and payload out",
    ),
    # Chroma's HTTP query (POST /api/v2/tenants/{t}/databases/{d}/collections/{id}/query): columnar, one list
    # per query embedding; distances in the collection's space (l2 by default, squared; cosine distance for
    # hnsw:space = cosine: set response.score_kind = "cosine-distance"). map() keeps nulls, so the arrays stay
    # parallel where a chunk has no metadata.
    "chroma": (
        _Request("POST", {"query_embeddings": ["{vector}"], "n_results": "{k}",
                          "include": ["documents", "metadatas", "distances"]}, None),
        ResponseMapping(None, "ids[0]", "distances[0]", "documents[0]", "metadatas[0] && map(&doc_id, metadatas[0])",
                        "metadatas[0] && map(&start, metadatas[0])",
                        "metadatas[0] && map(&end, metadatas[0])", "l2"),
        "Chroma's collection query: columnar ids[0], distances[0], documents[0], metadatas[0]",
    ),
    # Elasticsearch's kNN search (POST /{index}/_search, Elasticsearch >= 8.0): the answer is {"hits": {"hits":
    # [{"_index", "_id", "_score", "_source"}]}}. A cosine field's _score is (1 + cos) / 2 (a unit-vector
    # dot_product field's too): score kind es-cosine. The vector field's name ("embedding") is the team's; the
    # text and the document are read from _source, flat or under LangChain's metadata.
    "elasticsearch": (
        _Request("POST", {"knn": {"field": "embedding", "query_vector": "{vector}", "k": "{k}"}, "size": "{k}",
                          "_source": {"excludes": ["embedding"]}}, None),
        ResponseMapping("hits.hits", "_id", "_score", "_source.text || _source.content",
                        "_source.doc_id || _source.metadata.doc_id", "_source.start || _source.metadata.start",
                        "_source.end || _source.metadata.end", "es-cosine"),
        "Elasticsearch's kNN search: hits.hits[] with _id, _score = (1 + cos) / 2 and _source",
    ),
    # OpenSearch's k-NN query (POST /{index}/_search, the knn query clause): the same hits.hits answer; in a
    # cosinesimil space the score is (2 − (1 − cos)) / 2 = (1 + cos) / 2, Elasticsearch's.
    "opensearch": (
        _Request("POST", {"size": "{k}", "query": {"knn": {"embedding": {"vector": "{vector}", "k": "{k}"}}},
                          "_source": {"excludes": ["embedding"]}}, None),
        ResponseMapping("hits.hits", "_id", "_score", "_source.text || _source.content",
                        "_source.doc_id || _source.metadata.doc_id", "_source.start || _source.metadata.start",
                        "_source.end || _source.metadata.end", "es-cosine"),
        "OpenSearch's k-NN query: hits.hits[] with _id, _score = (1 + cos) / 2 (cosinesimil) and _source",
    ),
    # Weaviate's GraphQL Get (POST /v1/graphql) with nearVector: {"data": {"Get": {"<Class>": [{…properties,
    # "_additional": {"id", "distance"}}]}}}; distance is the class's metric (cosine: 1 − cos, Weaviate's
    # default). The class ("Chunk") and its properties are the team's: adapt the query and response.rows.
    "weaviate": (
        _Request("POST", {"query": "query ($v: [Float], $k: Int) { Get { Chunk(nearVector: {vector: $v}, limit: $k)"
                                   " { text doc_id start end _additional { id distance } } } }",
                          "variables": {"v": "{vector}", "k": "{k}"}}, None),
        ResponseMapping("data.Get.Chunk", "_additional.id", "_additional.distance", "text", "doc_id", "start", "end",
                        "cosine-distance"),
        "Weaviate's GraphQL Get with nearVector: data.Get.<Class>[] with _additional { id distance }",
    ),
    # Pinecone's query (POST https://INDEX-HOST/query): {"matches": [{"id", "score", "values", "metadata"}],
    # "namespace", "usage"}. The score is the index's metric: cosine similarity (Pinecone's default), a dot
    # product (dotproduct: set response.score_kind = "ip") or the squared Euclidean distance (euclidean: set
    # response.score_kind = "l2sq"). LangChain's Pinecone store keeps the text in metadata.text.
    "pinecone": (
        _Request("POST", {"vector": "{vector}", "topK": "{k}", "includeMetadata": True, "includeValues": False},
                 None),
        ResponseMapping("matches", "id", "score", "metadata.text || metadata.page_content", "metadata.doc_id",
                        "metadata.start", "metadata.end", "similarity"),
        "Pinecone's query: matches[] with id, score (the index's metric) and metadata",
    ),
    # Vespa's query API (POST /search/) with nearestNeighbor and a rank profile whose first phase is
    # closeness(field, embedding): {"root": {"fields": {"totalCount"}, "children": [{"id", "relevance", "source",
    # "fields"}]}}. relevance = closeness = 1 / (1 + distance), here of an angular field (θ in radians; set
    # response.score_kind = "closeness-prenormalized" or "closeness-euclidean" for those metrics; a dotproduct
    # field's closeness is q·a itself: "ip"; Vespa's schema reference, distance-metric). The
    # document id (id:NAMESPACE:TYPE::ID) is the id unless the document has a chunk_id field.
    "vespa": (
        _Request("POST", {"yql": "select * from sources * where {targetHits: 100}nearestNeighbor(embedding, q)",
                          "input.query(q)": "{vector}", "hits": "{k}", "ranking": "closeness"}, None),
        ResponseMapping("root.children", "fields.chunk_id || id", "relevance", "fields.text", "fields.doc_id",
                        "fields.start", "fields.end", "closeness-angular"),
        "Vespa's query API: root.children[] with id, relevance = closeness and fields",
    ),
}


def redact_url(url: str) -> str:
    """``url`` with any password in it replaced by ``***`` (``https://user:***@host/…``, ``password=***``)."""
    from ...secrets import redact

    return redact(url, url)


@dataclass(frozen=True)
class EndpointSpec:
    """One endpoint: the request template, the response mapping and how it is named.

    Attributes
    ----------
    name : str
        The run's name in every report and page.
    url : str
        ``http://`` or ``https://``; may hold ``{query}``, ``{k}``, ``{query_id}`` (percent-encoded).
    method : {"GET", "POST"}
    body : JSON value or None
        The JSON body template (POST only).
    params : mapping of str to str, or None
        The query-string template.
    headers : tuple of (name, value)
        Values literal or ``env:VARIABLE``; all treated as secrets (not in ``repr``, never printed).
    response : ResponseMapping
    mapping : str
        The shipped mapping it starts from (:data:`MAPPINGS`), or ``custom``.
    k : int or None
        Results asked for (None: the caller's default, 20).
    follow_redirects : bool
        Follow 3xx answers (never in shared mode); otherwise a redirect is an HTTP error by its status.
    """

    name: str
    url: str
    method: str = "POST"
    body: Any = None
    params: Mapping[str, str] | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    response: ResponseMapping = MAPPINGS["plain"][1]
    mapping: str = "plain"
    k: int | None = None
    follow_redirects: bool = False

    def __repr__(self) -> str:
        return (f"EndpointSpec(name={self.name!r}, {self.method} {self.display_url}, mapping={self.mapping!r}, "
                f"headers={[h for h, _ in self.headers]!r})")

    __str__ = __repr__

    @property
    def display_url(self) -> str:
        """The URL as shown: any password replaced by ``***``."""
        return redact_url(self.url)

    @property
    def uses_vector(self) -> bool:
        """Whether the request carries the question's embedding (``{vector}``)."""
        return "{vector}" in repr(self.body)

    def header_values(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The headers to send, ``env:VARIABLE`` values read from ``env`` (default ``os.environ``).

        Raises
        ------
        EndpointError
            A variable unset or empty (the message names the header and the variable, never a value).
        """
        env = os.environ if env is None else env
        out = {}
        for name, value in self.headers:
            if value.startswith("env:"):
                var = value[4:].strip()
                got = env.get(var, "")
                if not got.strip():
                    raise EndpointError(f"endpoint {self.name!r}: header {name!r} comes from the environment "
                                        f"variable ${var}, which is not set")
                out[name] = got
            else:
                out[name] = value
        return out

    def secrets(self, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """Every header value as sent (for redaction); unset variables are left out."""
        env = os.environ if env is None else env
        out = []
        for _, value in self.headers:
            v = env.get(value[4:].strip(), "") if value.startswith("env:") else value
            if v.strip():
                out.append(v)
        return tuple(out)

    def with_url(self, url: str, name: str | None = None) -> "EndpointSpec":
        """The same template against another URL (blue/green, before/after), optionally renamed.

        Raises
        ------
        EndpointError
            Not an http(s) URL with a host.
        """
        _check_url(url, "url")
        return replace(self, url=url, name=name or self.name)

    def to_dict(self) -> dict:
        """For provenance: name, method, the URL (password redacted), mapping, header *names*, k, response."""
        return {"name": self.name, "method": self.method, "url": self.display_url, "mapping": self.mapping,
                "headers": [h for h, _ in self.headers], "k": self.k, "follow_redirects": self.follow_redirects,
                "response": self.response.to_dict()}


def _check_url(url, key: str) -> None:
    if not isinstance(url, str) or not url.strip():
        raise EndpointError(f"{key} must be an http:// or https:// URL")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointError(f"{key} {redact_url(url)!r} is not an http:// or https:// URL with a host")
    if "env:" in url:
        raise EndpointError(f"{key}: env:VARIABLE is read in header values only (keep secrets out of the URL)")
    if "{vector}" in url:
        raise EndpointError(f"{key}: {{vector}} goes in the JSON body, not in the URL")


def _check_template(value, where: str) -> None:
    """Strings of a body or params template: ``{vector}`` only as a whole value, no ``env:``."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_template(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_template(v, f"{where}[{i}]")
    elif isinstance(value, str):
        if value.startswith("env:"):
            raise EndpointError(f"{where}: env:VARIABLE is read in header values only (keep secrets in headers)")
        if "{vector}" in value and value != "{vector}":
            raise EndpointError(f"{where}: {{vector}} must be the whole value (it becomes a JSON array)")
    elif value is not None and not isinstance(value, (bool, int, float)):
        raise EndpointError(f"{where}: {value!r} is not a JSON value")


def _response(raw, base: ResponseMapping) -> ResponseMapping:
    if raw is None:
        return base
    if not isinstance(raw, dict):
        raise EndpointError("response must be a table of rows, id, score, text, doc_id, start, end, score_kind")
    unknown = sorted(set(raw) - set(RESPONSE_KEYS))
    if unknown:
        raise EndpointError(f"response: unknown key(s) {', '.join(unknown)}; known: {', '.join(RESPONSE_KEYS)}")
    values = base.to_dict()
    for k, v in raw.items():
        if not isinstance(v, str):
            raise EndpointError(f"response.{k} must be a string, not {v!r}")
        values[k] = v.strip() or None  # "" removes a field of the base mapping
    if values["score_kind"] is None:
        values["score_kind"] = "similarity"
    return ResponseMapping(**values)


def endpoint_from_table(name: str, table: Mapping) -> EndpointSpec:
    """An ``[endpoints.NAME]`` table (see the module docstring) as an :class:`EndpointSpec`.

    Parameters
    ----------
    name : str
        The endpoint's name (the run's name).
    table : mapping
        As parsed from TOML.

    Raises
    ------
    EndpointError
        A missing ``url``, an unknown key, a value of the wrong type, an unknown mapping or score kind, an
        invalid JMESPath expression, ``env:`` outside headers, ``{vector}`` not a whole value, a
        method other than GET and POST, a body on a GET; the message names the key (the caller adds where).
    """
    if not isinstance(table, Mapping):
        raise EndpointError("must be a table of url, mapping, method, body, params, headers, k, response")
    unknown = sorted(set(table) - set(TABLE_KEYS))
    if unknown:
        raise EndpointError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(TABLE_KEYS)}")
    if not str(name).strip():
        raise EndpointError("an endpoint needs a name")
    mapping = table.get("mapping", "plain")
    if mapping not in MAPPINGS:
        raise EndpointError(f"mapping {mapping!r} is not one of {', '.join(MAPPINGS)}")
    request, base, _ = MAPPINGS[mapping]
    url = table.get("url")
    _check_url(url, "url")
    method = str(table.get("method", request.method)).upper()
    if method not in METHODS:
        raise EndpointError(f"method {table.get('method')!r}: only GET and POST are sent (an audit reads the "
                            "service, it never changes it)")
    body = table["body"] if "body" in table else (request.body if method == request.method else None)
    if method == "GET" and body is not None:
        raise EndpointError("body: a GET request has no body; put the question in params (e.g. q = \"{query}\")")
    _check_template(body, "body")
    params = table.get("params", request.params)
    if params is not None:
        if not isinstance(params, Mapping) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                                      for v in params.values()):
            raise EndpointError("params must be a table of NAME = \"value\"")
        params = {str(k): str(v) for k, v in params.items()}
        for k, v in params.items():
            _check_template(v, f"params.{k}")
            if "{vector}" in v:
                raise EndpointError(f"params.{k}: {{vector}} goes in the JSON body, not in the query string")
    headers = table.get("headers", {})
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        raise EndpointError("headers must be a table of NAME = \"value\" or NAME = \"env:VARIABLE\"")
    for h, v in headers.items():
        if _PLACEHOLDER.search(v):
            raise EndpointError(f"headers.{h}: placeholders are not substituted in headers")
        if v.strip() == "env:":
            raise EndpointError(f"headers.{h}: env: needs a variable name (env:VARIABLE)")
    k = table.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise EndpointError(f"k must be a positive integer, not {k!r}")
    follow = table.get("follow_redirects", False)
    if not isinstance(follow, bool):
        raise EndpointError(f"follow_redirects must be true or false, not {follow!r}")
    response = _response(table.get("response"), base)
    return EndpointSpec(str(name), url.strip(), method, body, params, tuple((str(h), v.strip()) for h, v in
                                                                             headers.items()),
                        response, mapping if table.get("response") is None else f"{mapping}, adapted", k, follow)


def endpoint_for_url(url: str, name: str, mapping: str = "plain") -> EndpointSpec:
    """A bare URL with one of the shipped mappings (:data:`MAPPINGS`).

    Raises
    ------
    EndpointError
        Not an http(s) URL, or an unknown mapping.
    """
    return endpoint_from_table(name, {"url": url, "mapping": mapping})


def endpoints_from_tables(raw, where: str) -> dict[str, EndpointSpec]:
    """The ``[endpoints.NAME]`` tables of a parsed TOML file (``raw`` = its ``endpoints`` value, or None).

    Raises
    ------
    EndpointError
        Not tables, or one endpoint that cannot be used: ``"<where>: [endpoints.NAME] <key>: <why>"``.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, Mapping) for v in raw.values()):
        raise EndpointError(f"{where}: [endpoints.NAME] must be tables of url, mapping, headers, response, …")
    out = {}
    for name, table in raw.items():
        try:
            out[str(name)] = endpoint_from_table(str(name), table)
        except EndpointError as e:
            raise EndpointError(f"{where}: [endpoints.{name}] {e}") from None
    return out


def load_endpoint_config(path) -> dict[str, EndpointSpec]:
    """``--endpoint-config FILE``: a TOML file of ``[endpoints.NAME]`` tables, the keys of ``audit.toml``'s.

    Raises
    ------
    EndpointError
        The file is missing, not TOML, holds other top-level keys or no endpoint, or one endpoint cannot be
        used; the message names the file and the key.
    """
    import tomllib
    from pathlib import Path

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EndpointError(f"{p}: endpoint configuration not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise EndpointError(f"{p}: cannot read the endpoint configuration ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise EndpointError(f"{p}: not valid TOML ({e})") from None
    unknown = sorted(set(data) - {"endpoints"})
    if unknown:
        raise EndpointError(f"{p}: unknown key(s) {', '.join(unknown)}; an endpoint configuration holds "
                            "[endpoints.NAME] tables only")
    out = endpoints_from_tables(data.get("endpoints"), str(p))
    if not out:
        raise EndpointError(f"{p}: no [endpoints.NAME] table")
    return out
