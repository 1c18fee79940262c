"""One line of a JSONL file read as one JSON object: the rule every JSONL reader of the package shares.

A line is accepted when it is valid JSON (:func:`json.loads`), is an object, and holds no **lone
surrogate**: JSON may write ``"\\ud83d"`` (half of the UTF-16 pair of an emoji) and Python's JSON
decoder returns it as a one-character string, but it is not a Unicode character: UTF-8 cannot encode
it, so it would fail later, far from its line, as a bare codec error (when printed, written as JSON,
hashed or tokenized). A file cut inside an emoji by a tool working on UTF-16 holds such escapes.

Readers wrap :class:`JsonLineError` into their own error naming the file and line
(:func:`audit.groundtruth.json_records`, :mod:`audit.sources.imported.readers`).
"""

from __future__ import annotations

import json
import re

__all__ = ["JsonLineError", "json_object", "lone_surrogate"]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: A JSON escape of a surrogate code unit (``\ud83d``): a line without one decodes to no surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class JsonLineError(ValueError):
    """A JSONL line that is not one JSON object of Unicode text; the message is the reason alone
    (no file, no line: the reader adds them)."""


def lone_surrogate(value, where: str = "") -> str | None:
    """Where ``value`` (a decoded JSON value) holds a lone surrogate, or None.

    Parameters
    ----------
    value : str, list, dict, number, bool or None
    where : str
        The path so far, for the message.

    Returns
    -------
    str or None
        ``"'questions'[1] holds a lone surrogate \\ud83d"``: the key path (top-level key, list
        index) and the code unit written as its JSON escape; None when every string is Unicode text.
    """
    if isinstance(value, str):
        m = _SURROGATE.search(value)
        if m:
            return f"{where or 'the value'} holds a lone surrogate \\u{ord(m.group()):04x}"
        return None
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = lone_surrogate(v, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if _SURROGATE.search(k):
                return f"a key holds a lone surrogate \\u{ord(_SURROGATE.search(k).group()):04x}"
            found = lone_surrogate(v, f"{where}[{k!r}]" if where else repr(k))
            if found:
                return found
    return None


def json_object(line: str) -> dict:
    """The JSON object on ``line``.

    Parameters
    ----------
    line : str
        One record of a JSONL file (already split on ``\\n``; not blank).

    Returns
    -------
    dict

    Raises
    ------
    JsonLineError
        ``not valid JSON (<decoder message> at column <c>)``; ``expected a JSON object, got <type>``;
        ``<where> holds a lone surrogate \\udXXX (half of a UTF-16 pair, not a character: …)``.
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise JsonLineError(f"not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(obj, dict):
        raise JsonLineError(f"expected a JSON object, got {type(obj).__name__}")
    if _SURROGATE_ESCAPE.search(line) or _SURROGATE.search(line):  # only such an escape (or a str not from UTF-8)
        found = lone_surrogate(obj)
        if found:
            raise JsonLineError(f"{found} (half of a UTF-16 pair, not a character: the text was cut inside an "
                                "emoji or another character beyond U+FFFF; write the whole character)")
    return obj
