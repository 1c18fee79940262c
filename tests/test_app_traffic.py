"""AppTest of the traffic section: data/example's synthetic traffic on the Threshold and Overview pages.

The source is "Your system (files)" on data/example (the files of tests/test_app_system.py) and the traffic
data/example/traffic.jsonl (cosine distances of run `before`). Figures are computed here from the file.
In shared mode, with the system and the traffic configured by name, no question text reaches any element.
"""

from __future__ import annotations

import json
import os

import pytest
from streamlit.testing.v1 import AppTest

from conftest import open_app, shown
from test_app_system import APP, ENV, EX, TIMEOUT

pytestmark = pytest.mark.slow

TRAFFIC = EX / "traffic.jsonl"


def _balanced_before() -> float:
    """Run before's balanced cut, as its own report proposes it (the cut the traffic is read at)."""
    from audit.evaluation.threshold import run_threshold
    from audit.sources.imported.system import load_system

    s = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                    {"before": "cosine-distance"}, qrels=EX / "qrels.trec", ood_queries=EX / "ood-queries.tsv",
                    ood_runs={"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    return run_threshold(s, "before").balanced


def _rows():
    return [json.loads(line) for line in TRAFFIC.read_text(encoding="utf-8").splitlines()]


@pytest.fixture()
def env(tmp_path, monkeypatch):
    for k, v in {**ENV, "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"),
                 "AUDIT_TRAFFIC": str(TRAFFIC), "AUDIT_TRAFFIC_SCORE": "cosine-distance"}.items():
        monkeypatch.setenv(k, v)
    return tmp_path


def _app(page: str | None = None) -> AppTest:
    return open_app(page, timeout=TIMEOUT)


def _text(at) -> str:
    parts = [shown(x) for kind in (at.markdown, at.caption, at.info, at.warning, at.error, at.success) for x in kind]
    parts += [str(m.value) + str(m.help) for m in at.metric]
    parts += [d.value.to_csv() for d in at.dataframe]
    return "\n".join(parts)


def test_threshold_page_shows_the_overlay_the_no_answer_share_and_the_estimate(env):
    at = _app("app_pages/5_Threshold.py")
    assert at.selectbox(key="focus_run").value == "before"
    m = {x.label: x.value for x in at.metric}
    rows = _rows()
    cut = [s for s in at.slider if s.label == "Cut (cosine distance)"][0].value  # the balanced cut
    no_answer = sum(1 for r in rows if not any(x["score"] < cut for x in r["results"]))
    assert m["Real questions"] == "200" and m["NO ANSWER at the cut"] == f"{100 * no_answer / 200:.1f}%"
    assert m["Out of domain (estimate)"].endswith("%")
    infos = [shown(i) for i in at.info]
    assert any(s.startswith("Estimate (assumes every real question is like either") for s in infos)
    review = [d.value for d in at.dataframe if "margin" in d.value.columns][0]
    assert "question" in review.columns and len(review) == 20  # single-user mode: questions shown
    # the overlay's three distributions on one axis
    assert not at.error


def test_another_score_kind_is_refused_on_the_page(env, monkeypatch):
    monkeypatch.setenv("AUDIT_TRAFFIC_SCORE", "similarity")
    at = _app("app_pages/5_Threshold.py")
    assert any("the traffic's scores are similarity and run before's are cosine-distance" in shown(w)
               for w in at.warning)
    assert {x.label: x.value for x in at.metric}["Out of domain (estimate)"] == "—"


def test_overview_summarises_the_traffic(env):
    at = _app()
    text = " ".join(shown(x) for x in at.markdown)
    cut = _balanced_before()
    assert "200 real questions — traffic (traffic.jsonl)" in text and f"get NO ANSWER at the cut {cut:.4g}" in text
    assert "out of domain" in text
    # issue 57: the traffic's language, told from its own questions, and how it was decided
    assert "language en (detected)" in text


def test_shared_mode_shows_no_question_text_anywhere(env, monkeypatch):
    # the example's traffic asks the labelled questions themselves (shown by design: they are the team's test set);
    # real users' questions differ, so each gets a tail of its own here and none of those may reach an element
    traffic = env / "traffic.jsonl"
    traffic.write_text("".join(json.dumps({**r, "query": f"{r['query']} (asked by user {i})"}) + "\n"
                               for i, r in enumerate(_rows())), encoding="utf-8")
    cfg = env / "audit.toml"
    cfg.write_text(f"""shared = true
[systems.example]
queries = "{EX / 'queries.tsv'}"
qrels = "{EX / 'qrels.trec'}"
chunks = "{EX / 'chunks.jsonl'}"
ood_queries = "{EX / 'ood-queries.tsv'}"
runs = {{ before = "{EX / 'before.trec'}" }}
scores = {{ before = "cosine-distance" }}
ood_runs = {{ before = "{EX / 'ood-before.trec'}" }}
[traffic.yesterday]
files = ["{traffic}"]
score = "cosine-distance"
run = "before"
""", encoding="utf-8")
    monkeypatch.setenv("AUDIT_CONFIG", str(cfg))
    for k in [k for k in os.environ if k.startswith("AUDIT_SYS_")] + ["AUDIT_TRAFFIC"]:
        monkeypatch.delenv(k)
    at = _app()
    # no typed path in shared mode
    assert at.radio(key="traffic_how").options == ["no traffic", "configured traffic", "traffic from this browser"]
    at.radio(key="traffic_how").set_value("named").run()
    questions = {json.loads(line)["query"] for line in traffic.read_text(encoding="utf-8").splitlines()}
    assert len(questions) == 200
    for page in (None, "app_pages/5_Threshold.py"):
        if page:
            at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        text = _text(at)
        assert "200 real questions" in text or "Real questions" in {m.label for m in at.metric}
        leaked = [q for q in questions if q in text]
        where = [type(x).__name__ + ":" + shown(x)[:80] for kind in (at.markdown, at.caption, at.info, at.warning)
                 for x in kind if any(q in shown(x) for q in leaked)]
        where += [str(list(d.value.columns)) for d in at.dataframe if any(q in d.value.to_csv() for q in leaked)]
        assert not leaked, (page, where)
    review = [d.value for d in at.dataframe if "margin" in d.value.columns][0]
    assert "question" not in review.columns and len(review) == 20


def test_built_in_pipelines_show_the_exact_figures_and_say_why_no_estimate(tmp_path, monkeypatch):
    """The built-in pipelines served none of this traffic: its exact figures alone, with the reason."""
    import test_app

    env = test_app._write_corpus(tmp_path)
    for k, v in {**env, "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"),
                 "AUDIT_TRAFFIC": str(TRAFFIC), "AUDIT_TRAFFIC_SCORE": "cosine-distance"}.items():
        monkeypatch.setenv(k, v)
    at = _app("app_pages/5_Threshold.py")
    m = {x.label: x.value for x in at.metric}
    cut = at.slider(key="threshold_slider:E/dense").value
    no_answer = sum(1 for r in _rows() if not any(x["score"] < cut for x in r["results"]))
    assert m["Real questions"] == "200" and m["NO ANSWER at the cut"] == f"{100 * no_answer / 200:.1f}%"
    assert m["Out of domain (estimate)"] == "—"
    assert any("which served none of this traffic" in shown(w) for w in at.warning)


def test_the_downloaded_record_carries_the_traffics_no_answer_share(env, monkeypatch):
    # AppTest cannot press a download button: the callable given to it is taken from the element call and run,
    # as Streamlit runs it when the button is pressed
    from streamlit.delta_generator import DeltaGenerator

    given = {}
    real = DeltaGenerator.download_button

    def keep(self, label, data, *a, **k):
        given[k.get("key")] = data
        return real(self, label, data, *a, **k)

    monkeypatch.setattr(DeltaGenerator, "download_button", keep)
    at = _app("app_pages/1_Overview.py")
    assert not at.exception, [e.value for e in at.exception]
    page = given["overview_record"]().decode("utf-8")
    cut = _balanced_before()
    # computed here from the file, as the test above: NO ANSWER when no returned chunk is strictly under the cut
    rows = _rows()
    n, k = len(rows), sum(1 for r in rows if not any(x["score"] < cut for x in r["results"]))
    assert f'data-figure="traffic:no_answer" data-value="{k}"' in page
    assert f'data-figure="traffic:questions" data-value="{n}"' in page


def test_issue54_item9_the_score_kind_is_the_runs_unless_the_file_says_and_the_page_shows_which(env, monkeypatch,
                                                                                                tmp_path):
    """The example's traffic holds cosine distances but was read as similarity by default: with no kind chosen it
    is the run's (before: cosine-distance), or the file's own `score_kind`, and the pages say which rule chose."""
    monkeypatch.delenv("AUDIT_TRAFFIC_SCORE")
    at = _app("app_pages/5_Threshold.py")
    assert not at.exception, [e.value for e in at.exception]
    assert not any("the traffic's scores are similarity" in shown(w) for w in at.warning)
    assert {x.label: x.value for x in at.metric}["Out of domain (estimate)"].endswith("%")
    assert "scores read as cosine-distance (the score kind of run before)" in _text(at)
    said = tmp_path / "home" / "said.jsonl"  # under $AUDIT_HOME: an allowed root
    said.parent.mkdir(parents=True, exist_ok=True)
    said.write_text("".join(json.dumps({**r, "score_kind": "similarity"}) + "\n" for r in _rows()))
    monkeypatch.setenv("AUDIT_TRAFFIC", str(said))
    at = _app()
    assert "scores read as similarity (as the file says)" in _text(at)


def test_issue54_item9_declared_kind_rule():
    from audit.traffic.kind import declared_score_kind, traffic_score_kind

    assert declared_score_kind([TRAFFIC]) is None
    assert traffic_score_kind([TRAFFIC], "cosine-distance", "before") == ("cosine-distance",
                                                                        "the score kind of run before")
    assert traffic_score_kind([TRAFFIC], "rrf", "E/hybrid")[0] == "similarity"  # not a kind a file holds
