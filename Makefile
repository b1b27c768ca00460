# Two commands do all set-up on a fresh clone: `make repro` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test test-fast repro ui tune lint bench clean

setup: $(STAMP)

# torch first and pinned: pip takes the CPU build from this machine's disk, and the
# rest then finds torch satisfied instead of pulling a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

repro: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro

ui: setup
	$(BIN)/mlflow ui --backend-store-uri "$$($(BIN)/python -m pipeline.tracking)" --port 5000

# The tune stage is frozen, and DVC never runs a frozen stage's command (not even with --force):
# run its script. Each run adds tune.trials trials to the study (it resumes).
tune: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python stages/tune.py

lint: setup
	$(BIN)/ruff check .

bench: setup
	$(BIN)/koikoi bench engine --games 2000

clean:
	rm -rf $(VENV)
