"""Text files read as lines, and one line of a JSONL file read as one JSON object: the rules every reader shares.

**Lines** (:func:`lines`, :func:`read_text`, :func:`text_lines`, :func:`json_records`, :func:`stream_lines`):
a file is UTF-8 (a BOM removed), split into records on ``\\n`` only, a trailing ``\\r`` removed, never with
``str.splitlines()``, which also splits on U+2028, U+2029, U+0085 and others that a JSON string may hold. A
file that cannot be read raises :class:`InputFileError` naming the file, and the line when there is one
(``FILE:LINE: reason``): ``<what> not found``, ``cannot read the <what> (<reason>)``, ``not UTF-8 text (byte
0xe9 at byte offset 24)``. Every reader of the package uses these (ground truth, a team's runs, qrels,
queries and chunks, query vectors, BEIR folders, traffic), so a file breaks the same way wherever it is read.

**A JSONL line**: 
A line is accepted when it is valid JSON (:func:`json.loads`), is an object, and holds no **lone
surrogate**: JSON may write ``"\\ud83d"`` (half of the UTF-16 pair of an emoji) and Python's JSON
decoder returns it as a one-character string, but it is not a Unicode character: UTF-8 cannot encode
it, so it would fail later, far from its line, as a bare codec error (when printed, written as JSON,
hashed or tokenized). A file cut inside an emoji by a tool working on UTF-16 holds such escapes.

A reader names the file and line around :class:`JsonLineError` (:func:`json_records` raises
:class:`InputFileError`; a reader with an error type of its own passes its ``error`` factory, as
:func:`audit.groundtruth.load_needles` does with ``GroundTruthError.at``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["InputFileError", "JsonLineError", "first_line", "int_field", "json_object", "json_records", "lines",
           "lone_surrogate", "read_text", "stream_lines", "text_lines"]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: A JSON escape of a surrogate code unit (``\ud83d``): a line without one decodes to no surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class InputFileError(ValueError):
    """A file that cannot be read as its format.

    Attributes
    ----------
    path : str
    line : int
        1-based line, 0 when the problem is the whole file.
    reason : str
    """

    def __init__(self, path: str | Path, line: int, reason: str):
        self.path, self.line, self.reason = str(path), int(line), reason
        super().__init__(f"{self.path}:{self.line}: {reason}" if line else f"{self.path}: {reason}")


#: What a reader raises for ``(path, line, reason)``: :class:`InputFileError`, or a reader's own factory.
ErrorFactory = Callable[[Path, int, str], Exception]


def lines(text: str) -> list[str]:
    """``text`` (str) split into records on ``\\n`` only, a trailing ``\\r`` removed from each: a list of str with
    the blank records kept (a caller that numbers lines must count them); ``""`` gives ``[""]``."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def read_text(path: str | Path, what: str, error: ErrorFactory = InputFileError) -> str:
    """A UTF-8 text file (a BOM removed), whole.

    Parameters
    ----------
    path : path
    what : str
        What the file is, for the message (``ground-truth file``, ``run file``).
    error : callable ``(path, line, reason) -> Exception``
        The exception raised (default :class:`InputFileError`).

    Raises
    ------
    InputFileError (or what ``error`` makes)
        ``<what> not found``; ``cannot read the <what> (<OS reason>)``; on the line of the first bad byte,
        ``not UTF-8 text (byte 0x.. at byte offset N)`` (N counted from the start of the file).
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise error(p, 0, f"{what} not found") from None
    except OSError as e:
        raise error(p, 0, f"cannot read the {what} ({e.strerror or e})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise error(p, line, f"not UTF-8 text (byte 0x{raw[e.start]:02x} at byte offset {e.start})") from None


def text_lines(path: str | Path, what: str, error: ErrorFactory = InputFileError) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file (:func:`read_text`, :func:`lines`), blank lines skipped.

    Raises
    ------
    InputFileError (or what ``error`` makes)
        As :func:`read_text`.
    """
    for no, line in enumerate(lines(read_text(path, what, error)), start=1):
        if line.strip():
            yield no, line


def first_line(path: str | Path, what: str, error: ErrorFactory = InputFileError) -> str:
    """The first non-blank line of a text file (``""`` when it has none), what a reader sniffs its format from.

    Only the bytes up to that line are read (a format is sniffed before a large file is read once); a
    file whose start is not UTF-8 text is read whole, for :func:`read_text`'s error.

    Raises
    ------
    InputFileError (or what ``error`` makes)
        As :func:`read_text`, for the bytes read.
    """
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head, whole = b"", False
            while not whole:
                more = f.read(1 << 16)
                whole = not more
                head += more
                cut = head.rfind(b"\n")
                if not whole and cut >= 0 and head[:cut].strip():
                    head = head[:cut]  # whole lines, one of them not blank
                    break
        text = head.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        text = None  # read_text names the problem
    if text is not None:
        for line in lines(text):
            if line.strip():
                return line
        if whole:
            return ""
    for _, line in text_lines(p, what, error):
        return line
    return ""


def int_field(path: str | Path, no: int, value: str, what: str, minimum: int | None = None,
              error: ErrorFactory = InputFileError) -> int:
    """A field of line ``no`` read as an integer (a rank, a relevance grade).

    Raises
    ------
    InputFileError (or what ``error`` makes)
        ``<what> '<value>' is not an integer``; ``<what> '<value>' must be >= <minimum>``.
    """
    try:
        x = int(value)
    except ValueError:
        raise error(Path(path), no, f"{what} {value!r} is not an integer") from None
    if minimum is not None and x < minimum:
        raise error(Path(path), no, f"{what} {value!r} must be >= {minimum}")
    return x


def json_records(path: str | Path, what: str, error: ErrorFactory = InputFileError) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of a JSONL file: one JSON object a line (:func:`json_object`), blank lines skipped.

    Raises
    ------
    InputFileError (or what ``error`` makes)
        As :func:`read_text`; a line that is not valid JSON, not an object or holding a lone surrogate
        (``FILE:LINE: reason``).
    """
    for no, line in text_lines(path, what, error):
        try:
            obj = json_object(line)
        except JsonLineError as e:
            raise error(Path(path), no, str(e)) from None
        yield no, obj


def stream_lines(path: str | Path, opener=None) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, raw line)`` of a file read a line at a time (memory: one line).

    The rule of :func:`lines` on bytes: split on ``\\n`` only, a trailing ``\\r`` removed, a UTF-8 BOM removed
    from the first line (its offset then points past it). Nothing is decoded: the caller says what a line
    that is not UTF-8 or not JSON is (traffic counts it as a problem of its line and reads on).

    Parameters
    ----------
    path : path
    opener : callable ``path -> binary file``, optional
        How the bytes are read (default ``open(path, "rb")``; traffic passes one that decompresses gzip, and
        the offsets are then positions in the decompressed bytes).

    Raises
    ------
    OSError
        The file cannot be opened (or, through ``opener``, decompressed).
    """
    offset = 0
    with (open(path, "rb") if opener is None else opener(path)) as f:
        for no, raw in enumerate(f, start=1):
            start, offset = offset, offset + len(raw)
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if line.endswith(b"\r"):
                line = line[:-1]
            if no == 1 and line.startswith(b"\xef\xbb\xbf"):
                line, start = line[3:], start + 3
            yield no, start, line


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
