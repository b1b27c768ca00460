# Two commands do all set-up on a fresh clone: `make repro` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# mkdocs-material prints an end-of-life banner on every build unless told not to
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

.PHONY: setup system-packages test test-durations test-fast repro readme pull push ui tune lint bench docs docs-serve clean

setup: $(STAMP)

# torch first and pinned, so the rest finds it satisfied instead of pulling another build. TORCH picks
# the build (docs/scaling.md); one asked for replaces the one installed:
#   (unset)  keep the installed build; a new .venv gets cuda when nvidia-smi sees an NVIDIA GPU, else cpu
#   cpu      the CPU build, from PyTorch's CPU index (download.pytorch.org/whl/cpu); never PyPI's torch, which is
#            the CUDA build
#   cuda     PyPI's own Linux wheel, built for CUDA 13.0 (NVIDIA driver >= 580)
#   cuXYZ    PyTorch's build for CUDA X.Y from download.pytorch.org/whl/cuXYZ (cu126: driver >= 525)
# A +cpu wheel satisfies torch==2.13.0, hence the local labels and PyPI's exact === below. The install says
# which build it put in (torch's version, its CUDA, whether a GPU is usable).
# Where pip is configured with sources of its own (pip.conf, PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS,
# PIP_NO_INDEX: what `pip config list` shows), every package comes from those alone, torch included (its build
# must be among them) and the requirements by pip, not uv, which reads none of pip's configuration.
# -qq: errors only (one -q still prints the build backend's warnings and pip's notices).
PIP_INSTALL := $(BIN)/pip install -qq --disable-pip-version-check
PIP_SOURCES = $(BIN)/pip config list 2>/dev/null | grep -Eq '^[^=]*[.](index-url|extra-index-url|find-links|no-index)='
TORCH ?=
TORCH_VERSION := 2.13.0
ifneq ($(filter-out cpu cuda cu%,$(TORCH)),)
$(error TORCH must be cpu, cuda or cuXYZ (e.g. cu126), got '$(TORCH)'; see docs/scaling.md)
endif
GPU_SEEN = $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo yes)
TORCH_STAMP := $(if $(TORCH),$(VENV)/.torch-$(TORCH),$(firstword $(wildcard $(VENV)/.torch-*) \
  $(VENV)/.torch-$(if $(GPU_SEEN),cuda,cpu)))
# default: the stamp of a .venv made before the GPU check (PyPI's torch)
torch_pin = $(strip $(if $(filter default,$(1)),torch==$(TORCH_VERSION),$(if $(filter cuda,$(1)),\
  torch===$(TORCH_VERSION),torch==$(TORCH_VERSION)+$(1))))
torch_req = $(call torch_pin,$(1))$(if $(filter default cuda,$(1)),, --extra-index-url https://download.pytorch.org/whl/$(1))

$(VENV)/.torch-%:
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip
	if $(PIP_SOURCES); then $(PIP_INSTALL) '$(call torch_pin,$*)' || { \
	  echo "make setup: $(call torch_pin,$*) is not among the sources pip is configured with (pip config list)"; \
	  exit 1; }; else $(PIP_INSTALL) $(call torch_req,$*); fi
	$(BIN)/python -c $(TORCH_CHECK)
	rm -f $(VENV)/.torch-*
	touch $@

# what the install put in, in one line
TORCH_CHECK := 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "GPU usable:", torch.cuda.is_available())'

# The requirements go in by uv (42 s where pip took 117 on 2 cores: it downloads and compiles in parallel), byte-compiled:
# where PYTHONDONTWRITEBYTECODE is set (this project's machines and CI) every process would otherwise compile each
# module it imports again (make test: 410 -> 603 s). It keeps the torch installed above, which satisfies the pin.
# By pip (which byte-compiles too) where pip is configured with sources of its own (PIP_SOURCES above).
$(STAMP): pyproject.toml $(TORCH_STAMP)
	if $(PIP_SOURCES); then $(PIP_INSTALL) -e '.[dev]'; else $(PIP_INSTALL) 'uv>=0.5' && \
	  $(BIN)/uv pip install -q --python $(BIN)/python --compile-bytecode -e '.[dev]'; fi
	touch $(STAMP)

# Debian packages some tests need: a real browser for the play page, a real PostgreSQL for shared
# Optuna studies. Needs root (CI and the dev machines run as root); tests skip with a reason without them.
SYSTEM_PACKAGES := chromium chromium-driver postgresql
system-packages:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The suite runs in TEST_WORKERS processes (pytest-xdist), a test file to each at a time, the longest files first
# (tests/durations.json; --no-loadscope-reorder keeps that order): on a 2-core Intel Xeon (Sapphire Rapids), idle,
# two workers take 415-419 s (911 tests, 2026-11-29; 349 s for 902 on 2026-11-28), `make test` 8.6 min on a fresh clone
# (venv included; 9-11 when the machine runs slow): a new test file must be fast, or replace time elsewhere.
TEST_WORKERS ?= 2
PYTEST = $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: setup
	$(BIN)/ruff check .
	$(BIN)/vulture
	$(MKDOCS) build --strict --quiet
	$(PYTEST)

# The files' measured seconds, longest first in the next runs (tests/conftest.py): rerun after adding a slow file.
test-durations: setup
	$(PYTEST) --record-durations tests/durations.json

test-fast: setup
	$(PYTEST) -m "not slow"

# DVC sees the records' params, not records that change inside a folder outside the project (or
# $KOIKOI_RECORDS): the records stage's --changed check does (exit 3: changed, 0: not), and forces that stage
# first (docs/sl.md); any other exit is an error, which it has said, and stops here.
DVC_PATH := PATH="$(CURDIR)/$(BIN):$$PATH"
repro: setup
	@$(DVC_PATH) $(BIN)/python -m stages.records data/records results/records/source.json --changed; \
	  case $$? in 0) ;; 3) $(DVC_PATH) $(BIN)/dvc repro --force --single-item records ;; *) exit 1 ;; esac
	$(DVC_PATH) $(BIN)/dvc repro
	$(MAKE) --no-print-directory readme

# The README's results table, generated from results/ (docs/hooks.py); make repro runs it after the stages.
readme: setup
	$(BIN)/python -m docs.hooks

# Models and datasets a team shares through a DVC remote (docs/development.md, "Sharing models"): set one up
# once with `dvc remote add -d shared /path/to/shared/folder`; REMOTE=name picks another.
pull: setup
	$(BIN)/dvc pull $(if $(REMOTE),-r $(REMOTE))

push: setup
	$(BIN)/dvc push $(if $(REMOTE),-r $(REMOTE))

ui: setup
	$(BIN)/mlflow ui --backend-store-uri "$$($(BIN)/python -m pipeline.tracking.store)" --port 5000

# The tune stage is frozen, and DVC never runs a frozen stage's command (not even with --force):
# run its script. Each run adds tune.trials trials to the study (it resumes).
tune: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m stages.tune results/tune

# ruff, and vulture for dead code ([tool.vulture] in pyproject.toml; what frameworks call: vulture_whitelist.py)
lint: setup
	$(BIN)/ruff check .
	$(BIN)/vulture

# The docs site (MkDocs, Material theme) from docs/*.md into site/; the CLI and params references are
# generated from the argparse parsers and the pydantic models at build time (docs/hooks.py).
# --strict: a broken link or a page missing from the nav fails the build (make test runs it too).
docs: setup
	$(MKDOCS) build --strict

docs-serve: setup
	$(MKDOCS) serve --dev-addr 127.0.0.1:8008

bench: setup
	$(BIN)/koikoi bench engine --games 2000

clean:
	rm -rf $(VENV)
