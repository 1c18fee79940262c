"""``[traffic]`` in audit.toml, and invariants of the traffic readers and gate on any input (hypothesis)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from audit.config import ConfigError, load_config
from audit.evaluation.threshold import kept
from audit.traffic.settings import show_questions


def _cfg(tmp_path, text: str):
    (tmp_path / "audit.toml").write_text(text, encoding="utf-8")
    return load_config(env={"AUDIT_CONFIG": str(tmp_path / "audit.toml")}, cwd=tmp_path)


def test_show_questions_defaults_follow_the_mode(tmp_path):
    assert show_questions(load_config(env={}, cwd=tmp_path)) is True  # no file: single-user
    assert show_questions(_cfg(tmp_path, "shared = true\n")) is False
    assert show_questions(_cfg(tmp_path, "shared = true\n[traffic]\nshow_questions = true\n")) is True
    assert show_questions(_cfg(tmp_path, "[traffic]\nshow_questions = false\n")) is False


def test_named_traffic_is_resolved_against_the_file(tmp_path):
    c = _cfg(tmp_path, '[traffic.yesterday]\nfiles = ["otel/traces.json", "logs"]\nscore = "cosine-distance"\n'
                       'run = "before"\n[traffic.simple]\nfiles = "q.jsonl"\n')
    y = c.traffic.sources["yesterday"]
    assert y.files == (str((tmp_path / "otel" / "traces.json").resolve()), str((tmp_path / "logs").resolve()))
    assert (y.score, y.run) == ("cosine-distance", "before")
    assert c.traffic.sources["simple"].score == "similarity" and c.traffic.show_questions is None


@pytest.mark.parametrize("text, message", [
    ("[traffic]\nshow_questions = 'no'\n", "[traffic] show_questions must be true or false"),
    ("[traffic.x]\nscore = 'l2'\n", "[traffic.x] files must be a list of paths"),
    ("[traffic.x]\nfiles = ['a']\nscore = 'loud'\n", "[traffic.x] score 'loud' is not one of"),
    ("[traffic.x]\nfiles = ['a']\nwhere = 1\n", "[traffic.x] unknown key(s) where"),
    ("[traffic]\nverbose = 1\n", "[traffic] verbose is unknown"),
])
def test_a_bad_traffic_table_names_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=None) as e:
        _cfg(tmp_path, text)
    assert message in str(e.value) and "audit.toml" in str(e.value)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=20)
_keys = st.sampled_from(["query_id", "query", "time", "results", "chunk_id", "score", "start", "end", "doc_id",
                         "resourceSpans", "scopeSpans", "spans", "attributes", "key", "value", "spanId",
                         "stringValue", "doubleValue", "intValue"])
_shaped = st.recursive(_json, lambda inner: st.dictionaries(_keys, inner, max_size=5) | st.lists(inner, max_size=3),
                       max_leaves=30)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_shaped.map(lambda o: json.dumps(o).encode()), st.binary(max_size=40)), max_size=6))
# found on a fresh clone: a first line that is the UTF-8 byte-order mark alone is the file's encoding mark, not
# a line of content (the reader removes it from the file's start, as from any first line): blank, so 1 line, 1 problem
@example(lines=[b"\xef\xbb\xbf", b"null"])
@example(lines=[b"\xef\xbb\xbf", b"\xef\xbb\xbf", b"null"])  # a BOM past the start is content: a problem
def test_any_line_is_a_record_or_a_problem_never_a_crash(tmp_path, lines):
    from audit.traffic.table import read_traffic

    path = tmp_path / "any.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    t = read_traffic([path], "similarity")  # never raises
    written = [line.replace(b"\n", b" ") for line in lines]
    assert all(p.file == str(path) and 0 <= p.line <= len(written) and p.reason for p in t.problems)
    if t.formats[str(path)] == "query log":  # a log: every non-blank line is one record or one problem
        # non-blank as the reader sees it: the file's leading BOM removed (jsontext.stream_lines), ASCII blanks
        content = [line[3:] if i == 0 and line.startswith(b"\xef\xbb\xbf") else line for i, line in enumerate(written)]
        assert len(t) + t.n_problems == sum(1 for line in content if line.strip())


@pytest.mark.slow
@given(rows=st.lists(st.lists(st.floats(0, 2, allow_nan=False), max_size=7), min_size=1, max_size=30),
       cuts=st.lists(st.floats(0, 2, allow_nan=False), min_size=2, max_size=6))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_kept_counts_are_the_gate_and_no_answer_grows_as_the_cut_tightens(tmp_path, rows, cuts):
    from audit.traffic.table import read_traffic

    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps({"query_id": str(i), "time": "2024-05-01", "results": [
        {"chunk_id": str(j), "score": s} for j, s in enumerate(r)]}) + "\n" for i, r in enumerate(rows)),
        encoding="utf-8")
    t = read_traffic([path], "cosine-distance")
    previous = None
    for cut in sorted(cuts):
        k = t.kept_counts(cut)
        assert k.tolist() == [len(kept(np.sort(np.round(np.array(r, dtype=float), 9)), cut)) for r in rows]
        no_answer = int((k == 0).sum())
        assert no_answer == int((t.gate_distance() >= cut).sum())  # the identity the no-answer curve uses
        if previous is not None:
            assert no_answer <= previous  # a looser cut never refuses more
        previous = no_answer
