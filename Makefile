# Two commands do all the set-up: `make demo` (run the demo pipeline) and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: setup demo test lint bench clean

setup: $(VENV)/.installed

# torch goes in first: pip then keeps it instead of pulling another build for deepspeed.
$(VENV)/.installed: requirements.txt constraints.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

# Rules call `python`: the venv's bin goes first on PATH, as `. .venv/bin/activate` would do.
RUN := PATH="$(abspath $(BIN)):$$PATH"

demo: setup
	$(RUN) snakemake --cores $(CORES)

test: setup
	$(RUN) python -m pytest -q tests

lint: setup
	$(RUN) snakefmt --check Snakefile rules
	$(RUN) snakemake --lint

# Prints every benchmark table (benchmarks/README.md); pyfaidx only for one comparison row.
bench: setup
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt || echo "bench: no pyfaidx; its row is skipped"
	$(RUN) python -m benchmarks.run_all

clean:
	rm -rf results logs .snakemake report.html
