"""The promise in a product owner's words (issue: "Certified cut: none" sat beside "at 0.4833 the system abandons
an answerable question at most 10%…", which read like a certified cut, and "(each side tested at δ/2 = 0.025)" was
jargon). The bluff promise says it cannot be certified and why (N more questions needed), the abandoned-answers
promise says it holds alone at its cut, the range says no cut meets both; δ/2 only in a footnote. The same words in
the guarantee's sentences (Threshold page, text report) and the decision record; the figures and JSON keys stay."""

from __future__ import annotations

import re

from conftest import ROOT

from audit.evaluation.guarantee import certified_range, certify
from audit.report import build_report
from audit.report.record import _promise

EX = ROOT / "data" / "example"
GATE = [0.1, 0.2, 0.3, 0.4833, 0.6]
BLUFFS = [0, 0, 1, 3, 10]
ABANDONED = [40, 20, 8, 0, 0]


def test_the_sentences_say_which_promise_holds_alone_and_that_none_holds_both():
    # 20 out-of-domain questions cannot certify 5% at 95% (59 needed); 100 answerable certify 10% abandoned
    bluff = certify(GATE, BLUFFS, 20, 0.05, 0.05, "bluff")
    aband = certify(GATE[::-1], ABANDONED[::-1], 100, 0.10, 0.05, "abandoned")
    assert bluff.cut is None and aband.cut == 0.4833
    assert bluff.sentence("out-of-domain questions") == (
        "the bluff promise (the system answers an out-of-domain question at most 5% of the time) cannot be certified "
        "at 95% confidence: 20 out-of-domain questions are too few, it takes at least 59 with none bluffed (39 more "
        "needed)")
    assert aband.sentence("answerable questions").startswith(
        "the abandoned-answers promise alone holds at cut 0.4833 (and every looser cut): there the system abandons "
        "an answerable question at most 10% of the time, with 95% confidence")
    r = certified_range(GATE, GATE, BLUFFS, 20, ABANDONED, 100, 0.05, 0.10, 0.05)
    assert r.sentence() == ("No cut meets both promises together (bluffs ≤ 5% and abandoned answerable ≤ 10%, with "
                            "95% confidence on these questions): the bluff promise cannot be certified at any cut.")
    assert "δ/2" not in r.sentence() and "δ/2 = 0.025 (97.5% confidence; a union bound)" in r.footnote()


def _text(page: str) -> str:
    return re.sub(r"<[^>]+>", "", page)


def test_the_record_draws_the_same_words_and_keeps_the_figures():
    t = {"certified": {"alpha": 0.05, "delta": 0.05, "cut": None, "bound": None, "errors": 0, "n": 20,
                       "questions_needed": {"at_zero_bluffs": 59}, "bound_at_cut": 0.139, "sample": "these"},
         "certified_abandoned": {"beta": 0.10, "delta": 0.05, "cut": 0.4833, "bound": 0.03, "errors": 0, "n": 100,
                                 "questions_needed": {"at_zero_abandoned": 29}, "answerable": 100},
         "certified_range": {"delta": 0.05, "strictest": None, "loosest": None, "empty": True, "bluff_bound": None,
                             "abandoned_bound": 0.04}}
    html = _promise(t, "E/dense")
    text = _text(html)
    assert ("The bluff promise (the system answers an out-of-domain question at most 5% of the time) cannot be "
            "certified at 95% confidence: 20 out-of-domain questions are too few, it takes at least 59 with none "
            "bluffed (39 more needed).") in text
    assert "The abandoned-answers promise alone holds at cut 0.4833 (and every looser cut, to no threshold)" in text
    assert ("No cut meets both promises together (bluffs ≤ 5% and abandoned answerable ≤ 10%, with 95% confidence "
            "on these questions): the bluff promise cannot be certified at any cut.*") in text
    assert "Certified cut" not in text
    # δ/2 only in the footnote, the last muted paragraph of the promise
    foot = re.findall(r'<p class="muted"><sup>\*</sup> ([^<]*)</p>', html)
    assert len(foot) == 1 and "δ/2 = 0.025" in foot[0] and text.count("δ/2") == 1
    # the figures stay marked as before
    assert 'data-figure="certified:cut" data-run="E/dense" data-value=""' in html
    assert 'data-figure="certified:needed" data-run="E/dense" data-value="59"' in html
    assert 'data-figure="certified_abandoned:cut" data-run="E/dense" data-value="0.4833"' in html


def test_the_text_report_draws_the_same_words_with_the_footnote():
    from test_record import _system

    text = build_report(_system(), None, None).render_text()
    part = text[text.index("The promise, run before"):]
    part = part[:part.index("\n\n")]
    assert "Certified cut" not in part
    assert ("  the bluff promise (the system answers an out-of-domain question at most 5% of the time) cannot be "
            "certified at 95% confidence: 4 out-of-domain questions are too few, it takes at least 59 with none "
            "bluffed (55 more needed)") in part
    assert "): the bluff promise cannot be certified at any cut. [*]" in part
    lines = [ln for ln in part.splitlines() if "δ/2" in ln]
    assert len(lines) == 1 and lines[0].startswith("  [*] For both promises to hold together")
