"""AppTest of the Ground truth page on data/example's documents (no browser, fake encoder): the validation messages
as a needle is picked, the question hints, out-of-domain flags, Q/A proposals, saving and its refusals (issue 31).

Row selections are set through the tables' session state, as a click would set them (Streamlit lets a keyed
dataframe's selection be written there). Chunk ids are worked out by hand from data/example/docs (documents in
doc_id order: limits.md 470 characters, ops/backups.md 683, ops/keys.md 505):

- A (blind, 512): limits.md is chunk 0, backups.md chunks 1-2, keys.md chunk 3 (one piece under 512);
- C-F (boundaries): limits.md = preamble 0 + three one-paragraph sections 1-3; backups.md = preamble 4, Snapshots 5,
  Restore 6; keys.md = preamble 7, Rotation 8 (its two paragraphs together under 512), Lost keys 9.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow  # seconds each (dashboard runs): in make test, out of make test-fast

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGE = "app_pages/10_Ground_truth.py"
SHREDDED = "After seventy-two hours the old key is shredded and any message still sealed with it is moved to the " \
           "dead-letter shelf."


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    home = tmp_path / "home"
    for k in [k for k in os.environ if k.startswith("AUDIT_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("AUDIT_CORPUS", str(ROOT / "data" / "example" / "docs"))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_RERANKER", "none")
    monkeypatch.setenv("AUDIT_HOME", str(home))
    return home


def _page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _texts(at: AppTest, kind: str) -> list[str]:
    return [shown(e) for e in getattr(at, kind)]


def _select(at: AppTest, key: str, *rows: int) -> None:
    at.session_state[key] = {"selection": {"rows": list(rows), "columns": []}}
    at.run()
    _ok(at)


def _pick(at: AppTest, words: str, hit: int = 0, *sentences: int) -> None:
    at.text_input(key="gt_find").input(words).run()
    _ok(at)
    _select(at, "gt_hits", hit)
    _select(at, "gt_sentences", *(sentences or (0,)))


def _table(at: AppTest, *columns: str):
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise KeyError(columns)


def test_a_picked_sentence_shows_every_check_before_it_is_added():
    at = _page()
    _pick(at, "SHREDDED")  # case-folded search
    assert "Occurs exactly once: ops/keys.md › Rotation #char=256,375; overlaps no heading line." in _texts(at, "success")
    assert "Length: 119 characters." in _texts(at, "info")
    verdicts = _table(at, "verdict", "chunks holding it")
    assert list(verdicts["strategy"]) == list("ABCDEF")
    assert set(verdicts["verdict"]) == {"holds it whole"}
    assert list(verdicts["chunks holding it"]) == ["3", "3", "8", "8", "8", "8"]
    assert at.button(key="gt_add").disabled  # no question yet
    assert "Not ready to add: write at least the documentation question." in _texts(at, "caption")
    # dropping characters trims the needle and the checks follow: "the old key is shredded…" (drop "After seventy-two hours ")
    at.number_input(key="gt_drop_start").set_value(len("After seventy-two hours ")).run()
    _ok(at)
    assert "Occurs exactly once: ops/keys.md › Rotation #char=280,375; overlaps no heading line." in _texts(at, "success")
    assert "Length: 95 characters." in _texts(at, "info")


def test_a_sentence_across_the_blind_cut_names_the_cut_that_destroys_it():
    at = _page()
    # backups.md is 683 characters: blind A cuts it at 512, inside the sentence "To restore, stop the relay…" (#char=425,522);
    # B's 64-character tail starts at 448, after the sentence's start (425): both destroy it; boundaries keep it whole
    _pick(at, "larkctl drain")
    warnings = _texts(at, "warning")
    for name in "AB":
        assert any(w.startswith(f"Strategy {name} destroys it: cut at character 512: chunk 1 ends at 512 (#char=0,512), "
                                "chunk 2 starts at 512 (#char=512,") for w in warnings), (name, warnings)
    verdicts = _table(at, "verdict", "cut that destroys it")
    assert list(verdicts["verdict"]) == ["destroys it"] * 2 + ["holds it whole"] * 4
    assert list(verdicts["chunks holding it"]) == ["", "", "6", "6", "6", "6"]  # Restore is chunk 6 under C-F
    at.text_input(key="gt_q_doc").input("How do I restore a snapshot?").run()
    assert not at.button(key="gt_add").disabled  # destroyed by a strategy is what the audit measures, not a rejection
    at.selectbox(key="gt_map_strategy").set_value("A").run()  # the document drawn with A's cuts
    _ok(at)


def test_rejections_say_where_else_and_which_heading():
    at = _page()
    # "seventy-two hours" twice in keys.md: pick the sentence holding the first, trim it down to the two words
    _pick(at, "seventy-two hours", 0, 0)
    sentence = "The previous key stays readable for seventy-two hours so that in-flight messages can still be opened."
    assert _table(at, "sentence")["sentence"].iloc[0] == "Keys are rotated with `larkctl keys rotate --tenant NAME`."
    _select(at, "gt_sentences", 1)
    assert f"Length: {len(sentence)} characters." in _texts(at, "info")
    at.number_input(key="gt_drop_start").set_value(len("The previous key stays readable for "))
    at.number_input(key="gt_drop_end").set_value(len(" so that in-flight messages can still be opened.")).run()
    _ok(at)
    errors = _texts(at, "error")
    assert ("Rejected: found 2 times (must occur exactly once): ops/keys.md #char=189,206; ops/keys.md #char=262,279. "
            "Add words around it until it is unique.") in errors
    assert at.button(key="gt_add").disabled
    assert "Length: 17 characters — shorter than 20: a short needle says little and may occur by chance." in \
        _texts(at, "warning")
    at.number_input(key="gt_drop_start").set_value(60).run()  # 60 + 48 dropped of the 101 characters: nothing left
    assert "Nothing is left of the needle: drop fewer characters." in _texts(at, "error")
    at.text_input(key="gt_find").input("rotation").run()  # only the heading holds the word
    _select(at, "gt_hits", 0)
    _select(at, "gt_sentences", 0)
    assert "Rejected: overlaps a heading line in ops/keys.md: '## Rotation'." in _texts(at, "error")
    assert at.button(key="gt_add").disabled
    at.text_input(key="gt_find").input("no such words anywhere").run()
    assert "No passage holds 'no such words anywhere' (compared in the matching view, case-folded)." in _texts(at, "info")


def test_a_question_that_quotes_its_needle_gets_the_hint_and_distances_are_shown():
    at = _page()
    _pick(at, "shredded")
    # documentation tokens {what, happens, to, a, rotated, key, after, three, days}: to, key, after are the needle's
    at.text_input(key="gt_q_doc").input("What happens to a rotated key after three days?")
    # ticket tokens {after, seventy, two, hours, is, the, old, key, shredded}: every one is the needle's
    at.text_input(key="gt_q_ticket").input("After seventy-two hours is the old key shredded?").run()
    _ok(at)
    warnings = _texts(at, "warning")
    assert any(w.startswith("The ticket question shares 9 of its 9 words with the needle") for w in warnings)
    assert not any(w.startswith("The documentation question shares") for w in warnings)
    infos = [i for i in _texts(at, "info") if "cosine distance to the needle's chunk" in i]
    assert [i.split(":")[0] for i in infos] == ["Documentation question", "Ticket question"]
    assert all(i.count("(rank ") == 6 for i in infos)  # one per strategy: each holds the needle
    assert not at.button(key="gt_add").disabled  # a hint, never a refusal


def test_build_save_and_every_page_uses_it_with_stable_ids(env):
    at = _page()
    _pick(at, "shredded")
    at.text_input(key="gt_q_doc").input("What happens to the old key after seventy-two hours?").run()
    at.button(key="gt_add").click().run()
    _ok(at)
    assert "n01 added. Save it in the Save tab to use it on every page." in _texts(at, "success")
    _pick(at, "40 GB")
    at.text_input(key="gt_q_doc").input("How long does restoring a big journal take?").run()
    at.button(key="gt_add").click().run()
    for q in ("What is the capital of France?", "Lost keys"):
        at.text_input(key="gt_ood_new").input(q).run()
        at.button(key="gt_ood_add").click().run()
        _ok(at)
    flagged = [w for w in _texts(at, "warning") if "occurs in the corpus" in w]
    assert flagged == ["'Lost keys' occurs in the corpus (ops/keys.md #char=380,389): a literal match, not an "
                       "answer — kept; make sure the corpus does not answer it."]
    at.text_input(key="gt_author").input("qa@example.com")
    at.text_input(key="gt_save_name").input("relay").run()
    at.button(key="gt_save").click().run()
    _ok(at)
    assert "Saved relay.jsonl and relay.ood.txt: every page now uses it." in _texts(at, "success")
    gt = env / "groundtruth" / "relay.jsonl"
    lines = [json.loads(x) for x in gt.read_text(encoding="utf-8").splitlines()]
    assert [(x["id"], x["needle"]) for x in lines] == [
        ("n01", SHREDDED), ("n02", "A restore of a 40 GB journal takes about twenty minutes on the standard node size.")]
    assert lines[0]["authored"]["by"] == "qa@example.com"
    assert (env / "groundtruth" / "relay.ood.txt").read_text(encoding="utf-8").splitlines()[1:] == [
        "What is the capital of France?", "Lost keys"]
    assert at.session_state["gt_source"] == "file" and at.session_state["gt_path"] == str(gt)
    at.switch_page("app_pages/1_Overview.py").run()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Needles accepted"] == "2" and metrics["Queries"] == "2 / 2"
    # edit n01's ticket wording, remove nothing, add a third: ids stay n01, n02 and the new one is n03
    at.switch_page(PAGE).run()
    _select(at, "gt_table", 0)
    at.button(key="gt_edit").click().run()
    _ok(at)
    assert at.text_input(key="gt_q_doc").value == "What happens to the old key after seventy-two hours?"
    at.text_input(key="gt_q_ticket").input("old key gone after 3 days??").run()
    at.button(key="gt_add").click().run()  # "Save changes to n01"
    _ok(at)
    assert "n01 changed." in " ".join(_texts(at, "success"))
    _pick(at, "publish")
    at.text_input(key="gt_q_doc").input("How many messages per second may a tenant publish?").run()
    at.button(key="gt_add").click().run()
    at.button(key="gt_save").click().run()
    _ok(at)
    lines = [json.loads(x) for x in gt.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == ["n01", "n02", "n03"]
    assert lines[0]["questions"] == ["What happens to the old key after seventy-two hours?", "old key gone after 3 days??"]
    at.switch_page("app_pages/2_Strategies.py").run()
    _ok(at)
    scored = _table(at, "run", "note")
    scored = scored[~scored["run"].str.endswith("/rerank")]  # unavailable here (reranker none): 0 queries
    assert set(scored["queries (n)"]) == {4}  # n01 twice, n02 and n03 once


def test_saving_over_a_file_someone_changed_is_refused(env):
    at = _page()
    _pick(at, "shredded")
    at.text_input(key="gt_q_doc").input("What happens to the old key?").run()
    at.button(key="gt_add").click().run()
    at.text_input(key="gt_save_name").input("relay").run()
    at.button(key="gt_save").click().run()
    _ok(at)
    gt = env / "groundtruth" / "relay.jsonl"
    theirs = gt.read_text(encoding="utf-8") + json.dumps({"id": "x1", "needle": "A lost key cannot be recovered.",
                                                          "questions": ["q"]}) + "\n"
    gt.write_text(theirs, encoding="utf-8")  # another editor saved meanwhile
    _pick(at, "40 GB")
    at.text_input(key="gt_q_doc").input("How long does a restore take?").run()
    at.button(key="gt_add").click().run()
    at.button(key="gt_save").click().run()
    _ok(at)
    (err,) = [e for e in _texts(at, "error") if e.startswith("Not saved")]
    assert err.startswith("Not saved: relay.jsonl changed since you opened it (sha256 ")
    assert gt.read_text(encoding="utf-8") == theirs  # nothing written
    # a new draft saved under the same name is refused too: the file exists and was not opened here
    at2 = _page()
    _pick(at2, "publish")
    at2.text_input(key="gt_q_doc").input("Publish limit?").run()
    at2.button(key="gt_add").click().run()
    at2.selectbox(key="gt_target").set_value("new").run()
    at2.text_input(key="gt_save_name").input("relay").run()
    at2.button(key="gt_save").click().run()
    assert any(e.startswith("Not saved: relay.jsonl already exists and was not opened here") for e in _texts(at2, "error"))


def test_named_ground_truths_shipped_or_not_writable_are_refused_with_the_reason(tmp_path, monkeypatch):
    toml = tmp_path / "audit.toml"
    toml.write_text(f'[ground_truths.builtin]\npath = "{ROOT / "data" / "python-reference" / "groundtruth.jsonl"}"\n'
                    f'writable = true\n[ground_truths.team]\npath = "{tmp_path / "team.jsonl"}"\n', encoding="utf-8")
    monkeypatch.setenv("AUDIT_CONFIG", str(toml))
    at = _page()
    at.selectbox(key="gt_target").set_value("named:builtin").run()
    _ok(at)
    assert any("groundtruth.jsonl is a file shipped with retrieval-audit (its data/ folder): it is never written over"
               in w for w in _texts(at, "warning"))
    assert at.button(key="gt_save").disabled
    at.selectbox(key="gt_target").set_value("named:team").run()
    assert any("the operator has not marked 'team' writable ([ground_truths.team] writable = true in audit.toml)" in w
               for w in _texts(at, "warning"))
    assert at.button(key="gt_save").disabled


def test_imported_pairs_give_one_proposal_and_one_not_found_and_nothing_is_accepted_without_a_click(env):
    env.mkdir(parents=True, exist_ok=True)
    qa = env / "faq.csv"  # under $AUDIT_HOME: an allowed root (a path elsewhere is refused, nothing read)
    qa.write_text('question,answer\nHow long are undelivered messages kept?,"Undelivered messages are kept for  seven '
                  'days,\nthen moved to the dead-letter shelf"\nWhat colour is the sky?,The sky is blue on a clear day.\n',
                  encoding="utf-8")
    at = _page()
    at.text_input(key="gt_qa_path").input(str(qa)).run()
    _ok(at)
    assert "2 pairs: 1 matching view, 1 not found" in _texts(at, "caption")
    props = _table(at, "located", "proposed needle")
    assert list(props["located"]) == ["matching view", "not found"]
    assert props["proposed needle"].iloc[0] == "Undelivered messages are kept for seven days, then moved to the " \
                                              "dead-letter shelf"
    assert any(w.startswith("line 4: not found (best partial ratio ") for w in _texts(at, "warning"))
    assert "No needle yet: pick the first one below, or import question/answer pairs." in _texts(at, "caption")
    _select(at, "gt_proposals", 0, 1)
    assert at.button(key="gt_accept").label == "Accept 1 proposal"  # the not-found pair cannot be accepted
    at.button(key="gt_accept").click().run()
    _ok(at)
    draft = _table(at, "id", "needle", "status")
    assert list(draft["id"]) == ["n01"] and list(draft["status"]) == ["accepted"]
    assert _table(at, "located", "decided")["decided"].iloc[0] == "accepted as n01"


def test_opening_a_ground_truth_lists_what_the_readers_would_reject(env, monkeypatch):
    folder = env / "groundtruth"
    folder.mkdir(parents=True)
    gt = folder / "team.jsonl"
    gt.write_text(json.dumps({"id": "k1", "needle": SHREDDED, "questions": ["q"], "authored": {"by": "ann", "at": "t"}})
                  + "\n" + json.dumps({"id": "k2", "needle": "seventy-two hours", "questions": ["q"]}) + "\n",
                  encoding="utf-8")
    monkeypatch.setenv("AUDIT_GROUND_TRUTH", str(gt))  # the sidebar reads it: "files on disk"
    at = _page()
    # the one in use comes first, and the draft starts from it (issue 39 item 3: saving extends it)
    assert at.selectbox(key="gt_open_choice").options == [
        "The ground truth in use (team.jsonl)", "A new ground truth (empty)", "team ($AUDIT_HOME/groundtruth/team.jsonl)"]
    assert list(_table(at, "id", "needle", "status")["id"]) == ["k1", "k2"]
    at.selectbox(key="gt_open_choice").set_value("sidebar").run()
    at.button(key="gt_open").click().run()
    _ok(at)
    table = _table(at, "id", "needle", "status")
    assert list(table["id"]) == ["k1", "k2"] and list(table["by"]) == ["ann", ""]
    assert list(table["status"]) == ["accepted", "found 2 times (must occur exactly once): ops/keys.md"]
    assert "1 needle the readers would reject: k2. Edit it in the picker, or remove it." in _texts(at, "warning")
    assert f"2 needles · 0 out-of-domain questions · opened from team.jsonl (sha256 " in " ".join(_texts(at, "caption"))
    _select(at, "gt_table", 1)
    at.button(key="gt_edit").click().run()  # not once in the corpus: the picker searches its words instead
    _ok(at)
    assert at.text_input(key="gt_find").value == "seventy-two hours"
    assert "Editing k2: its needle is not once in this corpus; pick it again from the passages found for its first " \
           "words." in _texts(at, "info")


def test_item3_saving_extends_the_uploaded_ground_truth_and_keeps_its_out_of_domain_questions(env):
    """Issue 39 item 3: a ground truth uploaded in the sidebar (1 needle, 2 out-of-domain questions) is what the
    page opens; adding a needle and saving writes 2 needles and both out-of-domain questions, and every page then
    uses that (before: the draft started empty, so Save replaced the upload by the one new needle and no
    out-of-domain question)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="gt_source").set_value("upload").run()
    up = json.dumps({"id": "u1", "needle": SHREDDED, "questions": ["What happens to the old key?", "old key?"]})
    at.file_uploader(key="gt_file").set_value(("mine.jsonl", (up + "\n").encode(), "application/json"))
    at.file_uploader(key="ood_file").set_value(("mine_ood.txt", b"What is the capital of France?\nBest pizza?\n",
                                                "text/plain"))
    at.run()
    at.switch_page(PAGE).run()
    _ok(at)
    assert at.selectbox(key="gt_open_choice").options[0] == "The ground truth in use (mine.jsonl, mine_ood.txt, uploaded)"
    assert list(_table(at, "id", "needle", "status")["id"]) == ["u1"]
    assert "1 needle · 2 out-of-domain questions" in " ".join(_texts(at, "caption"))
    _pick(at, "40 GB")
    at.text_input(key="gt_q_doc").input("How long does restoring a big journal take?").run()
    at.button(key="gt_add").click().run()
    _ok(at)
    at.text_input(key="gt_save_name").input("extended").run()
    at.button(key="gt_save").click().run()
    _ok(at)
    lines = [json.loads(x) for x in (env / "groundtruth" / "extended.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == ["u1", "u2"]  # the new id follows the file's own (Draft.add)
    ood = (env / "groundtruth" / "extended.ood.txt").read_text(encoding="utf-8").splitlines()
    assert [q for q in ood if not q.startswith("#")] == ["What is the capital of France?", "Best pizza?"]
    at.switch_page("app_pages/1_Overview.py").run()
    _ok(at)
    assert {m.label: m.value for m in at.metric}["Needles accepted"] == "2"


def test_item54_7_a_workbook_row_offers_its_cells_and_the_cell_is_the_needle(monkeypatch):
    # data/formats/docs/oncall.xlsx, sheet Escalation, row 3: "Severity: SEV2 | Respond within: 30 minutes | Action:
    # Open an incident channel and post the first update." -- its three cells are the candidates (before issue 54's
    # item 7 the whole row was the one candidate, and "Action: " had to be trimmed by counting characters)
    monkeypatch.setenv("AUDIT_CORPUS", str(ROOT / "data" / "formats" / "docs"))
    at = _page()
    _pick(at, "post the first update", 0, 2)
    cands = _table(at, "sentence", "cell")
    assert list(cands["sentence"]) == ["SEV2", "30 minutes", "Open an incident channel and post the first update."]
    assert list(cands["cell"]) == ["Escalation!A3", "Escalation!B3", "Escalation!C3"]
    assert "Candidate cells" in " ".join(shown(m) for m in at.markdown)
    assert any(t.startswith("Occurs exactly once: oncall.xlsx › Escalation") for t in _texts(at, "success"))
    assert "Length: 51 characters." in _texts(at, "info")  # the cell alone: len("Open an … first update.") == 51
