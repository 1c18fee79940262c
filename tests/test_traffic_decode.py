"""A traffic line's bytes decoded (audit/traffic/read.py ``_decode``): orjson first, json for what it refuses.

The independent route is :func:`json.loads`, what the reader used before: every line must decode to an
equal object, or to the same problem.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given, strategies as st

from audit.traffic.read import _decode
from audit.traffic.records import TrafficProblem

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=20)


@given(obj=_json, ascii_only=st.booleans())
def test_lines_decode_to_what_json_decodes(obj, ascii_only):
    raw = json.dumps(obj, ensure_ascii=ascii_only).encode("utf-8")
    assert _decode(Path("t.jsonl"), 1, raw) == json.loads(raw)


def test_what_orjson_refuses_is_decoded_by_json_or_named():
    # json.loads reads NaN and a lone surrogate escape, which orjson refuses (an integer over 64 bits it reads as a
    # float: audit/traffic/read.py reads such a line again when its reading has a problem)
    got = _decode(Path("t.jsonl"), 1, b'{"s": NaN, "n": 123456789012345678901234567890, "t": "\\ud83d"}')
    assert math.isnan(got["s"]) and got["n"] == 123456789012345678901234567890 and got["t"] == "\ud83d"
    bad = _decode(Path("t.jsonl"), 3, b'{"a": 1,}')
    assert isinstance(bad, TrafficProblem) and (bad.line, bad.reason) == (3, "not valid JSON (Expecting property "
                                                                             "name enclosed in double quotes at "
                                                                             "column 9)")
    latin = _decode(Path("t.jsonl"), 2, b'{"a": "caf\xe9"}')
    assert isinstance(latin, TrafficProblem) and latin.reason == "not UTF-8 text (byte 0xe9 at column 11)"
