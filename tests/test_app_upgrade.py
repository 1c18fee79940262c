"""The upgrade audit on the pages (issue 51): Upgrade diff's "another model" flow (the after index built in a worker
thread with the before side's chunking, kept, then the carried cut, both outcomes, the trade-off curves and the
bill), and a saved cut chosen under another model named as such on Threshold, Citations and Upgrade diff instead of
being applied silently. The small corpus of tests/test_app.py, the hashing encoder (256 dims) before and the
hashing encoder at 64 dims as "another model"."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import builtin_cut_key, shown
from test_app import _app, _default_db, _table, test_env  # noqa: F401  (test_env: the app's corpus)

from audit.evaluation.saved_cut import save_cut

pytestmark = pytest.mark.slow

OTHER = 0.6125  # a cut saved under hashing:64, never applied to hashing's distances


def _other_model_cut(env, strategy="E"):
    key = {**builtin_cut_key(env["AUDIT_CORPUS"], strategy, model_digest="hashing-64"), "model_name": "hashing:64"}
    path = Path(env["AUDIT_HOME"]) / "threshold.json"
    path.unlink(missing_ok=True)
    save_cut(OTHER, key, "E/dense under hashing:64", path)
    return path


def test_threshold_and_citations_name_a_cut_of_another_model(test_env):
    path = _other_model_cut(test_env)
    try:
        at = _app("app_pages/5_Threshold.py")
        assert not at.exception, [e.value for e in at.exception]
        said = [shown(c) for c in at.caption if "saved elsewhere" in shown(c)]
        assert said and "chosen under hashing:64 (weights hashing-64), not under this run's model hashing " \
                        "(weights hashing-256)" in said[0]
        at.switch_page("app_pages/7_Citations.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("the balanced cut" in shown(i) and "chosen under hashing:64 (weights hashing-64)" in shown(i)
                   for i in at.info)
    finally:
        path.unlink(missing_ok=True)


def test_upgrade_diff_builds_another_model_and_carries_the_cut(test_env):
    at = _app("app_pages/9_Upgrade_diff.py")
    assert not at.exception, [e.value for e in at.exception]
    # "Chunking after" defaults to the before index's own chunking, and the page says each side's before building
    assert at.selectbox(key="diff_build_recipe").value == "as before"
    assert any("Before: this corpus's own index E, chunking E: boundaries cut, 512 characters, header" in shown(c)
               for c in at.caption)
    at.text_input(key="diff_build_model").input("hashing:64").run()
    assert any("After: chunking E: boundaries cut, 512 characters, header, no overlap, model hashing:64" in shown(c)
               for c in at.caption)
    at.button(key="diff_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    kept = sorted((Path(test_env["AUDIT_HOME"]) / "after").glob("after-*.sqlite"))
    assert len(kept) == 1
    stamp = kept[0].stat().st_mtime_ns
    # the old cut (balanced, so chosen under hashing) meets hashing:64's distances: said
    assert any("chosen under hashing (weights hashing-256) and applied to hashing:64's distances" in shown(w)
               for w in at.warning)
    assert any("The cut was chosen under hashing" in shown(c) for c in at.caption)
    models = _table(at, "side", "model", "chunking")
    assert list(models["model"]) == ["hashing", "hashing:64"]
    assert models["chunking"].nunique() == 1  # the same chunks on both sides
    carried = _table(at, "rule", "side", "bluffs", "answered", "abandoned")
    row = carried[(carried["rule"] == "same bluffs, most answered")]
    assert row.iloc[1]["bluffs"] <= row.iloc[0]["bluffs"]  # keeps the old cut's bluffs
    curves = _table(at, "model", "cut", "bluffs", "abandoned", "answered")
    assert set(curves["model"]) == {"before: hashing", "after: hashing:64"}
    after_curve = curves[curves["model"] == "after: hashing:64"]
    best = after_curve[after_curve["bluffs"] <= row.iloc[0]["bluffs"]]["answered"].max()
    assert row.iloc[1]["answered"] == best
    bill = _table(at, "model", "ms per chunk", "index bytes")
    chunks = int(_chunks(_default_db(test_env)))
    assert list(bill["index bytes"]) == [256 * 4 * chunks, 64 * 4 * chunks]
    at.run()  # a rerun uses the kept index: no second build
    assert not at.exception
    assert kept[0].stat().st_mtime_ns == stamp
    assert _table(at, "model", "ms per chunk", "index bytes") is not None


def _chunks(db) -> int:
    from audit.index import IndexStore

    store = IndexStore.open_readonly(db)
    try:
        return store.load("E").vectors.shape[0]
    finally:
        store.close()


def test_upgrade_diff_after_index_of_another_chunking_is_named_by_it(test_env):
    """Before: with "Chunking after: F" for index E (same model), the page said "After: chunking E: …, overlap 64"
    (F's parameters under E's name), "Indexing … chunking E", "strategy E → strategy E", and the model-upgrade
    wording ("the new model", "Old cut (before model)", "before: hashing / after: hashing"). Now the after side is
    named by the chunking chosen everywhere, and with one model the sides are named by their chunking."""
    at = _app("app_pages/9_Upgrade_diff.py")
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="diff_build_index").set_value("E").run()
    at.selectbox(key="diff_build_recipe").set_value("F").run()
    assert any("After: chunking F: boundaries cut, 512 characters, header, overlap 64, model hashing" in shown(c)
               for c in at.caption), [shown(c) for c in at.caption]
    at.button(key="diff_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [shown(e) for e in at.error]
    progress = [p.proto.text for p in at.get("progress")]
    assert progress and all("chunking F" in t for t in progress), progress
    captions = [shown(c) for c in at.caption]
    assert any("strategy E → strategy F" in c for c in captions), captions
    assert not any("chunking E: boundaries cut, 512 characters, header, overlap 64" in c for c in captions), captions
    models = _table(at, "side", "model", "chunking")
    assert list(models["model"]) == ["hashing", "hashing"]
    assert [c.split(":")[0] for c in models["chunking"]] == ["E", "F"]
    labels = [m.label for m in at.metric]
    assert "Old cut (before: chunking E)" in labels and "Carried cut (after: chunking F)" in labels, labels
    assert not any("model" in label for label in labels), labels
    assert not any("new model" in c or "old model" in c for c in captions), captions
    curves = _table(at, "model", "cut", "bluffs", "abandoned", "answered")
    assert set(curves["model"]) == {"before: chunking E", "after: chunking F"}
