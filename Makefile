# Set-up and everyday commands. Every target creates or reuses the virtual
# environment in .venv, so a fresh machine needs only Python 3.11, pip and make.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO := out/demo

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,server,compare,itemsets,ray]'
	$(BIN)/dprm warm-cache  # compile the numba kernels once, for this CPU (docs/performance.md, "Start-up cost of a run")
	touch $(STAMP)

## demo: mine the built-in example data (planted redescriptions): privately with
## AltMCMC at epsilon = 1 (secure noise), and with the non-private cartwheels
demo: $(STAMP)
	$(BIN)/dprm datasets make-planted $(DEMO)/data --rows 5000 --seed 7
	$(BIN)/dprm inspect $(DEMO)/data/left.csv $(DEMO)/data/right.csv --types $(DEMO)/data/types.json
	$(BIN)/dprm mine $(DEMO)/data/left.csv $(DEMO)/data/right.csv --types $(DEMO)/data/types.json \
		--algorithm alt-mcmc --epsilon 1 --top 5 --output $(DEMO)/private.json
	$(BIN)/dprm mine $(DEMO)/data/left.csv $(DEMO)/data/right.csv --types $(DEMO)/data/types.json \
		--algorithm cartwheels --seed 7 --top 5 --max-support 0.5 \
		--output $(DEMO)/redescriptions.json --clired $(DEMO)/redescriptions.queries
	@echo "planted queries: $(DEMO)/data/planted.json"

## test: the whole test suite (unit, doctests, command line)
test: $(STAMP)
	$(BIN)/python -m pytest -n auto

## bench: speed figures (load, index, mine) on mammals and on 115,200 x 604 planted data,
## and the start-up cost of each private miner's run on mammals (warm and cold cache)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) out
