"""The chunking sweep (issue 56): its grid points equal to strategies A-F give the report's figures; its reading
(best, indistinguishable set, cheapest) equals an independent computation with scipy; a stopped sweep resumes
without recomputing what it finished; the ``sweep`` section is null for every other source."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from conftest import ROOT

from audit.chunking import PRESETS
from audit.cli import main
from audit.evaluation.sweep import Config, SweepStore, config_grid, read_sweep
from audit.sources.sweep import run_sweep
from audit.groundtruth import load_ground_truth
from audit.ingest import load_corpus
from audit.models import load_encoder

GOLDEN = ROOT / "tests" / "golden"
GT = ["--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain", str(GOLDEN / "ood.txt")]


class Counting:
    """The hashing encoder, counting the texts it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.encoded = inner, 0

    def encode(self, texts, *args, **kw):
        self.encoded += len(texts)
        return self.inner.encode(texts, *args, **kw)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture
def docs(tmp_path, monkeypatch):
    shutil.copytree(GOLDEN / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    return tmp_path


def test_grid_points_equal_to_the_six_strategies_give_the_reports_figures(docs):
    rep = docs / "report.json"
    assert main(["report", "--corpus", "docs", *GT, "--model", "hashing", "--reranker", "none", "--retrievers",
                 "dense,bm25", "--strategies", "A,B,C,D,E,F", "--no-history", "--quiet", "--json", str(rep)]) == 0
    sw = docs / "sweep.json"
    assert main(["sweep", "--corpus", "docs", *GT, "--model", "hashing", "--target", "512", "--overlap", "0,64",
                 "--header", "off,on", "--cut", "blind,boundaries", "--retrievers", "dense,bm25", "--quiet",
                 "--json", str(sw)]) == 0
    r, s = json.loads(rep.read_text()), json.loads(sw.read_text())["sweep"]
    results = {x["name"]: x for x in r["results"]}
    tokens = {x["strategy"]: x for x in r["tokens"]["rows"]}
    needles = {x["strategy"]: x for x in r["needles"]["rows"]}
    matched = 0
    for name, st in PRESETS.items():
        for ret in ("dense", "bm25"):
            row = next(x for x in s["rows"] if (x["target"], x["overlap"], x["header"], x["cut"], x["retriever"])
                       == (st.target, st.overlap, st.header, st.cut, ret))
            res = results[f"{name}/{ret}"]
            for k in (1, 4, 8, 20):
                for suffix in ("", "_low", "_high"):
                    assert row[f"Success@{k}{suffix}"] == res[f"Success@{k}{suffix}"], (name, ret, k, suffix)
            assert row["destroyed"] == len(needles[name]["destroyed"])
            assert row["overlap_only"] == len(needles[name]["overlap_only"])
            assert row["embedded_tokens"] == tokens[name]["embedded tokens"]
            assert row["header_share"] == tokens[name]["header share"]
            assert row["chunks"] == tokens[name]["chunks"]
            assert row["index_bytes"] == r["provenance"]["dims"] * 4 * tokens[name]["chunks"]
            matched += 1
    assert matched == 12 and len(s["rows"]) == 16


def _holm(ps):
    """Holm (1979), written here from its definition: the i-th smallest p times (m - i), made monotone, capped at 1."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


@pytest.fixture(scope="module")
def reference_rows():
    corpus = load_corpus("python-reference")
    gt = load_ground_truth(corpus, None, None)
    grid = config_grid([512], [0, 64], [False, True], ["blind", "boundaries"], ["dense", "bm25"])
    return run_sweep(corpus, gt, grid, load_encoder("hashing"))


@pytest.mark.parametrize("by", ["tokens", "bytes"])
def test_the_reading_equals_binomtest_and_holm_from_the_per_question_table(reference_rows, by):
    from scipy.stats import binomtest

    k = 8
    reading = read_sweep(reference_rows, k, cheapest_by=by)
    # the per-question table, as the JSON gives it: the questions each configuration answers at k
    js = reading.to_json()
    table = [set(r["found"]) for r in js["rows"]]
    counts = [len(f) for f in table]
    best = counts.index(max(counts))
    others = [i for i in range(len(table)) if i != best]
    ps = []
    for i in others:
        w, l = len(table[best] - table[i]), len(table[i] - table[best])
        ps.append(binomtest(w, w + l, 0.5).pvalue if w + l else 1.0)
    holm = _holm(ps)
    same = sorted([best] + [i for i, q in zip(others, holm) if q >= 0.05])
    costs = ("embedded_tokens", "index_bytes") if by == "tokens" else ("index_bytes", "embedded_tokens")
    cheapest = min(same, key=lambda i: (js["rows"][i][costs[0]], js["rows"][i][costs[1]], i))
    assert js["cheapest_by"] == costs[0]
    cfg = lambda i: {c: js["rows"][i][c] for c in ("target", "overlap", "header", "cut", "retriever")}  # noqa: E731
    assert js["best"] == cfg(best)
    assert js["indistinguishable"] == [cfg(i) for i in same]
    assert js["cheapest"] == cfg(cheapest)
    for i, q in zip(others, holm):
        assert js["tests"][i]["p_holm"] == pytest.approx(q, rel=1e-9)
    # the grid read here is not trivial: some configurations are distinguishable from the best, some are not
    assert 1 < len(same) < len(table)


def test_cheapest_ties_break_by_index_bytes_then_row_order(reference_rows):
    from dataclasses import replace

    rows = [replace(r, first=reference_rows[0].first, embedded_tokens=100) for r in reference_rows[:4]]
    rows[1] = replace(rows[1], chunks=rows[1].chunks - 1)  # fewer index bytes
    assert read_sweep(rows, 8).cheapest == 1
    assert read_sweep([replace(r, chunks=10) for r in rows], 8).cheapest == 0


def test_cheapest_by_bytes_ranks_index_bytes_first_then_tokens(reference_rows):
    from dataclasses import replace

    # four rows answering the same questions (all indistinguishable): tokens and bytes disagree on the cheapest
    rows = [replace(r, first=reference_rows[0].first) for r in reference_rows[:4]]
    rows[0] = replace(rows[0], embedded_tokens=100, chunks=10)   # fewest bytes
    rows[1] = replace(rows[1], embedded_tokens=90, chunks=20)    # fewest tokens
    rows[2] = replace(rows[2], embedded_tokens=95, chunks=10)    # as few bytes as row 0, fewer tokens
    rows[3] = replace(rows[3], embedded_tokens=90, chunks=30)
    assert read_sweep(rows, 8).cheapest == 1  # tokens (the default): 90, then bytes 20 < 30
    assert read_sweep(rows, 8, cheapest_by="bytes").cheapest == 2  # bytes 10 (rows 0, 2), then tokens 95 < 100
    assert read_sweep(rows, 8, cheapest_by="bytes").to_json()["cheapest_by"] == "index_bytes"
    with pytest.raises(ValueError, match="tokens .* or bytes"):
        read_sweep(rows, 8, cheapest_by="euros")


def test_the_choice_is_read_from_the_rows_and_put_in_words(reference_rows):
    from audit.evaluation.sweep import why_configuration

    js = read_sweep(reference_rows, 8).to_json()
    ch = js["choice"]
    ident = lambda r: {c: r[c] for c in ("target", "overlap", "header", "cut", "retriever")}  # noqa: E731
    best = next(r for r in js["rows"] if ident(r) == js["best"])
    chosen = next(r for r in js["rows"] if ident(r) == js["cheapest"])
    test = next(t for t in js["tests"] if t is not None and ident(t) == js["cheapest"])
    assert ch["configuration"] == js["cheapest"] and ch["best"]["configuration"] == js["best"]
    assert not ch["is_best"]  # this grid's cheapest is not its best (so the paragraph compares the two)
    # every figure of the choice is a figure of the rows, or their difference
    assert ch["answered"] == len(chosen["found"]) and ch["best"]["answered"] == len(best["found"])
    assert ch["Success"] == chosen["Success@8"] and ch["low"] == chosen["Success@8_low"]
    assert ch["best"]["high"] == best["Success@8_high"]
    assert (ch["wins"], ch["losses"]) == (len(set(best["found"]) - set(chosen["found"])),
                                          len(set(chosen["found"]) - set(best["found"])))
    assert (ch["wins"], ch["losses"], ch["p_holm"]) == (test["wins"], test["losses"], test["p_holm"])
    assert ch["tokens_saved"] == best["embedded_tokens"] - chosen["embedded_tokens"]
    assert ch["bytes_saved"] == best["index_bytes"] - chosen["index_bytes"]
    assert ch["tokens_saved_share"] == pytest.approx(ch["tokens_saved"] / best["embedded_tokens"])
    assert ch["indistinguishable"] == len(js["indistinguishable"]) and ch["configurations"] == len(js["rows"])
    text = "".join(x if isinstance(x, str) else x.shown for x in why_configuration(ch))
    assert text.startswith(f"{chosen['cut']}{'+header' if chosen['header'] else ''} 512/{chosen['overlap']} "
                           f"{chosen['retriever']} is the cheapest by embedded tokens of the "
                           f"{len(js['indistinguishable'])} configurations (of {len(js['rows'])} swept)")
    assert f"It answers {len(chosen['found'])} of 64 questions within its first 8 chunks" in text
    saved = ch["tokens_saved"]
    assert (f"{abs(saved):,} {'fewer' if saved > 0 else 'more'} than the best" in text) if saved else \
        "as many as the best" in text


def test_why_words_for_the_best_alone_and_a_single_configuration():
    from audit.evaluation.sweep import why_configuration

    side = {"answered": 10, "Success": 1.0, "low": 0.722, "high": 1.0}
    base = {"configuration": {}, "label": "boundaries 512/0 bm25", "cheapest_by": "index_bytes", "k": 8, "n": 10,
            **side, "best": {"label": "boundaries 512/0 bm25", **side}, "is_best": True, "wins": None,
            "losses": None, "p": None, "p_holm": None, "indistinguishable": 3, "configurations": 5,
            "embedded_tokens": 364, "index_bytes": 10240}
    words = lambda ch: "".join(x if isinstance(x, str) else x.shown for x in why_configuration(ch))  # noqa: E731
    assert words(base).startswith("boundaries 512/0 bm25 is the best at k=8 and also the cheapest by index bytes of "
                                  "the 3 configurations (of 5 swept)")
    assert "the questions tell each of the other 4 configurations swept apart" in words({**base,
                                                                                         "indistinguishable": 1})
    assert words({**base, "indistinguishable": 1, "configurations": 1}).startswith(
        "boundaries 512/0 bm25 is the only configuration swept. It answers 10 of 10 questions")


def test_a_stopped_sweep_resumes_without_recomputing_finished_configurations(tmp_path):
    corpus = load_corpus(str(GOLDEN / "docs"))
    gt = load_ground_truth(corpus, str(GOLDEN / "gt.jsonl"), str(GOLDEN / "ood.txt"))
    grid = config_grid([256, 512], [0], [True], ["boundaries"], ["dense", "bm25"])
    fresh = Counting(load_encoder("hashing"))
    whole = run_sweep(corpus, gt, grid, fresh)

    class Stop(Exception):
        pass

    def stop_after_first_strategy(done, total, row, kept):
        if done == 2:
            raise Stop

    store = tmp_path / "sweep.json"
    first = Counting(load_encoder("hashing"))
    with pytest.raises(Stop):
        run_sweep(corpus, gt, grid, first, store=SweepStore(store), on_config=stop_after_first_strategy)
    assert len(json.loads(store.read_text())) == 2  # the first strategy's two configurations, kept as they finished
    resumed = Counting(load_encoder("hashing"))
    seen = []
    rows = run_sweep(corpus, gt, grid, resumed, store=SweepStore(store), on_config=lambda *a: seen.append(a[3]))
    assert seen == [True, True, False, False]
    # the resumed run embeds only the unfinished strategy: fewer texts than the whole sweep, none twice
    assert 0 < resumed.encoded < fresh.encoded
    again = Counting(load_encoder("hashing"))
    run_sweep(corpus, gt, grid, again, store=SweepStore(store))
    assert again.encoded == 0
    strip = lambda r: (r.config, r.first, r.destroyed, r.chunks, r.embedded_tokens)  # noqa: E731
    assert [strip(r) for r in rows] == [strip(r) for r in whole]


def test_the_command_resumes_and_writes_json_and_csv(docs, monkeypatch, capsys):
    import audit.models as models

    made = []

    def counting(name=None):
        made.append(Counting(load_encoder(name)))
        return made[-1]

    monkeypatch.setattr(models, "load_encoder", counting)
    args = ["sweep", "--corpus", "docs", *GT, "--model", "hashing", "--target", "256,512", "--overlap", "0",
            "--header", "on", "--cut", "boundaries", "--retrievers", "dense", "--at", "4"]
    assert main([*args, "--json", str(docs / "a.json"), "--csv", str(docs / "a.csv")]) == 0
    assert made[0].encoded > 0
    err = capsys.readouterr().err
    assert "[1/2]" in err and "[2/2]" in err
    assert main(args) == 0
    assert made[1].encoded == 0 and "kept from an earlier run" in capsys.readouterr().err
    js = json.loads((docs / "a.json").read_text())
    assert js["sweep"]["k"] == 4 and len(js["sweep"]["rows"]) == 2
    assert set(js["sweep"]["best"]) == {"target", "overlap", "header", "cut", "retriever"}
    with open(docs / "a.csv", newline="", encoding="utf-8") as f:
        grid = list(csv.DictReader(f))
    assert [int(r["target"]) for r in grid] == [256, 512] and "found" in grid[0]


def test_the_command_reads_cheapest_by_bytes_and_writes_the_record(docs, monkeypatch, capsys):
    import html
    import re

    monkeypatch.setenv("AUDIT_HISTORY", "off")
    args = ["sweep", "--corpus", "docs", *GT, "--model", "hashing", "--target", "128,512", "--overlap", "0",
            "--header", "off", "--cut", "boundaries", "--retrievers", "dense,bm25", "--at", "4", "--quiet"]
    assert main([*args, "--cheapest-by", "bytes", "--json", str(docs / "b.json"), "--html", str(docs / "b.html")]) == 0
    out = capsys.readouterr().out
    js = json.loads((docs / "b.json").read_text())["sweep"]
    assert js["cheapest_by"] == "index_bytes"
    by_bytes = min((r for r in js["rows"] if {c: r[c] for c in js["best"]} in js["indistinguishable"]),
                   key=lambda r: (r["index_bytes"], r["embedded_tokens"]))
    assert js["cheapest"] == {c: by_bytes[c] for c in js["best"]}
    assert "cheapest of those by index bytes ($)" in out and "Why this configuration: " in out
    # the record's paragraph: every figure marked, each value the JSON's choice (nothing computed a second time)
    page = (docs / "b.html").read_text(encoding="utf-8")
    assert "<h2>Why this configuration</h2>" in page
    para = re.search(r'<p data-section="why-this-configuration">(.*?)</p>', page).group(1)
    figs = dict(re.findall(r'data-figure="why:([^"]+)" data-run="[^"]*" data-value="([^"]*)"', para))
    ch = js["choice"]
    assert figs["configuration"] == ch["label"] and figs["best"] == ch["best"]["label"]
    assert int(figs["answered"]) == ch["answered"] and int(figs["best:answered"]) == ch["best"]["answered"]
    assert float(figs["Success@4"]) == ch["Success"] and int(figs["index_bytes"]) == ch["index_bytes"]
    assert int(figs["bytes_saved"]) == ch["bytes_saved"] > 0 and float(figs["p_holm"]) == ch["p_holm"]
    text = html.unescape(re.sub(r"<[^>]+>", "", para))
    assert text in out  # the record's paragraph is the text report's, word for word
    with pytest.raises(SystemExit) as e:  # argparse: the choices named, exit 2
        main([*args, "--cheapest-by", "euros"])
    assert e.value.code == 2 and "choose from 'tokens', 'bytes'" in capsys.readouterr().err


def test_bad_axes_are_refused(docs):
    assert main(["sweep", "--corpus", "docs", *GT, "--model", "hashing", "--header", "maybe"]) == 2
    assert main(["sweep", "--corpus", "docs", *GT, "--model", "hashing", "--retrievers", "rerank"]) == 2
    assert main(["sweep", "--corpus", "docs", *GT, "--model", "hashing", "--target", "64", "--overlap", "64"]) == 2
    with pytest.raises(ValueError, match="cut rule"):
        config_grid([512], [0], [False], ["sideways"], ["dense"])
    assert Config(512, 64, True, "boundaries", "dense").strategy.name == "boundaries-512-header-64"
    names = {c.strategy.name for c in config_grid([256, 512], [0, 64], [False, True], ["blind", "boundaries"], ["dense"])}
    assert len(names) == 16  # one name per strategy


def test_the_pareto_view_marks_the_reading_and_the_front(reference_rows):
    from audit.views.strategies import sweep_frame

    js = read_sweep(reference_rows, 8).to_json()
    df = sweep_frame(js)
    assert len(df) == len(js["rows"]) and df["pareto"].any()
    assert (df["reading"] == "worse").sum() == len(js["rows"]) - len(js["indistinguishable"])
    assert df["reading"].isin(["best", "best and cheapest"]).sum() == 1
    # nothing on the front is beaten on both axes
    for _, a in df[df["pareto"]].iterrows():
        assert not ((df["Success@8"] >= a["Success@8"]) & (df["embedded tokens"] < a["embedded tokens"])).any()


def test_the_pareto_view_follows_what_the_cheapest_is_ranked_by(reference_rows):
    from audit.views.strategies import sweep_cost, sweep_frame

    js = read_sweep(reference_rows, 8, cheapest_by="bytes").to_json()
    assert sweep_cost(js) == "index bytes" and sweep_cost({k: v for k, v in js.items() if k != "cheapest_by"}) \
        == "embedded tokens"  # a sweep written before cheapest_by was kept reads as tokens
    df = sweep_frame(js)
    s, b = df["Success@8"].to_numpy(), df["index bytes"].to_numpy()
    front = [not ((s >= s[i]) & (b <= b[i]) & ((s > s[i]) | (b < b[i]))).any() for i in range(len(df))]
    assert list(df["pareto"]) == front
    assert list(df["pareto"]) != list(sweep_frame({**js, "cheapest_by": "embedded_tokens"})["pareto"])


@pytest.mark.ray
def test_the_ray_path_gives_the_one_process_rows(tmp_path):
    pytest.importorskip("ray")
    corpus = load_corpus(str(GOLDEN / "docs"))
    gt = load_ground_truth(corpus, str(GOLDEN / "gt.jsonl"), str(GOLDEN / "ood.txt"))
    grid = config_grid([256, 512], [0, 64], [True], ["blind", "boundaries"], ["dense", "bm25"])
    enc = load_encoder("hashing")
    local = run_sweep(corpus, gt, grid, enc)
    seen = []
    on_ray = run_sweep(corpus, gt, grid, enc, store=SweepStore(tmp_path / "sweep.json"), engine="ray",
                       model="hashing", num_cpus=2, on_config=lambda d, n, r, kept: seen.append(d))
    figures = lambda r: {k: v for k, v in r.to_store().items() if k not in ("build_s", "query_ms")}  # noqa: E731
    assert [figures(r) for r in on_ray] == [figures(r) for r in local]
    assert seen == list(range(1, len(grid) + 1))
    assert read_sweep(on_ray, 8).to_json()["cheapest"] == read_sweep(local, 8).to_json()["cheapest"]
