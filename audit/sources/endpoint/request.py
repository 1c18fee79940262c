"""One question as the team's request: the template's placeholders substituted as typed JSON values.

``{query}`` and ``{query_id}`` become strings, ``{k}`` an integer and ``{vector}`` a list of floats when a
string of the template is exactly the placeholder; inside a longer string (``"question: {query}"``) the
value's text takes the placeholder's place, in one pass, so a question holding ``{k}`` or ``"`` is never
substituted again or re-parsed. The body is then serialised by the HTTP client's JSON encoder; the URL's
placeholders are percent-encoded and the query string is encoded by the client.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from urllib.parse import quote

from .spec import EndpointError, EndpointSpec

__all__ = ["Question", "RequestParts", "build_request", "substitute", "vectors_for"]

_PLACEHOLDER = re.compile(r"\{(query|k|query_id|vector)\}")


@dataclass(frozen=True)
class Question:
    """One question put to the endpoint.

    Attributes
    ----------
    query_id, text : str
    in_domain : bool
        False for an out-of-domain question (an empty answer is then a refusal, not a miss).
    vector : tuple of float or None
        The question's embedding, for templates holding ``{vector}``.
    """

    query_id: str
    text: str
    in_domain: bool = True
    vector: tuple[float, ...] | None = None


@dataclass(frozen=True)
class RequestParts:
    """What is sent: method, URL, query-string parameters and the JSON body (None: no body)."""

    method: str
    url: str
    params: dict | None
    json: Any


def _values(q: Question, k: int) -> dict[str, Any]:
    return {"query": q.text, "query_id": q.query_id, "k": int(k), "vector": q.vector}


def substitute(template: Any, values: Mapping[str, Any]) -> Any:
    """``template`` with every placeholder replaced by its typed value (a new structure; the input is kept).

    Parameters
    ----------
    template : JSON value
        Dicts, lists, strings, numbers, booleans, None; keys are never substituted.
    values : mapping
        ``query`` (str), ``query_id`` (str), ``k`` (int), ``vector`` (sequence of float or None).

    Raises
    ------
    EndpointError
        ``{vector}`` asked for without a vector, or inside a longer string.
    """
    if isinstance(template, dict):
        return {k: substitute(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [substitute(v, values) for v in template]
    if not isinstance(template, str):
        return template
    whole = _PLACEHOLDER.fullmatch(template)
    if whole:
        v = values[whole.group(1)]
        if whole.group(1) == "vector":
            if v is None:
                raise EndpointError("the template takes {vector}, but the question has no vector: give --model "
                                    "or --query-vectors")
            return [float(x) for x in v]
        return v

    def one(m: re.Match) -> str:
        if m.group(1) == "vector":
            raise EndpointError("{vector} must be the whole value of a template string (it becomes a JSON array)")
        return str(values[m.group(1)])

    return _PLACEHOLDER.sub(one, template)


def _url(url: str, values: Mapping[str, Any]) -> str:
    return _PLACEHOLDER.sub(lambda m: quote(str(values[m.group(1)]), safe=""), url)


def build_request(spec: EndpointSpec, q: Question, k: int) -> RequestParts:
    """The request of question ``q`` (asking for ``k`` results).

    Raises
    ------
    EndpointError
        As :func:`substitute`; a vector holding NaN or an infinity (JSON has no such number).
    """
    if q.vector is not None and not all(math.isfinite(x) for x in q.vector):
        raise EndpointError(f"the vector of {q.query_id!r} holds a non-finite value (JSON has no NaN)")
    values = _values(q, k)
    params = {n: substitute(v, values) for n, v in spec.params.items()} if spec.params else None
    body = substitute(spec.body, values) if spec.body is not None else None
    return RequestParts(spec.method, _url(spec.url, values), params, body)


def vectors_for(questions: Sequence[Question], vectors) -> list[Question]:
    """``questions`` with their vectors set from ``vectors`` (``(n, dims)``, row i = question i)."""
    from dataclasses import replace

    return [replace(q, vector=tuple(float(x) for x in row)) for q, row in zip(questions, vectors)]
