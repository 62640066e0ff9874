# Set-up and everyday commands. Every target creates or reuses the virtual
# environment in .venv, so a fresh machine needs only Python 3.11, pip and make
# (and, for the web pages' browser tests, Debian's chromium: `make test` installs it
# with apt-get when run as root, and otherwise says how).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO := out/demo
LOCK := requirements.lock
EXTRAS := test,server,compare,itemsets,ray,aot,baselines
# dpmm (the DP synthetic-data baseline of `dprm evaluate`, docs/baselines.md) pins numpy 1.26,
# pandas 2.1 and OpenDP 0.12: it gets an environment of its own, from its own hashed lock.
DPMM_VENV := .venv-dpmm
DPMM_STAMP := $(DPMM_VENV)/.installed
DPMM_LOCK := requirements-dpmm.lock
CHROMIUM := /usr/bin/chromium

.PHONY: demo test bench lock browser synthetic clean

# The exact versions of requirements.lock (hashes checked), then dprm itself without
# dependencies: CI and a fresh machine get the environment the tests were run in.
# pip prints a line per package as it goes (set-up shows what it does).
# $(call ticking,WHAT,COMMAND): run COMMAND, saying "set-up: still WHAT (N s)" every 10 s
# meanwhile (pip is silent while it unpacks and installs ~90 packages).
ticking = ( start=$$(date +%s); while sleep 10; do echo "set-up: still $(1) ($$(( $$(date +%s) - start )) s)"; \
	done ) & ticker=$$!; $(2); status=$$?; kill $$ticker 2>/dev/null; exit $$status

$(STAMP): pyproject.toml $(LOCK)
	@echo "set-up: virtual environment in $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --progress-bar off --upgrade pip
	@echo "set-up: the locked dependencies ($(LOCK))"
	@$(call ticking,installing the locked dependencies,$(BIN)/python -m pip install --progress-bar off \
		--require-hashes -r $(LOCK))
	@echo "set-up: dprm itself (editable)"
	@$(call ticking,installing dprm,$(BIN)/python -m pip install --progress-bar off --no-deps -e .)
	@echo "set-up: compiling the numba kernels for this CPU (docs/performance.md, 'Start-up')"
	$(BIN)/dprm warm-cache
	touch $(STAMP)

## synthetic: dpmm's own environment for the DP synthetic-data baseline (mst-cartwheels,
## aim-cartwheels in dprm evaluate), beside .venv, from requirements-dpmm.lock (hashes checked)
synthetic: $(DPMM_STAMP)

$(DPMM_STAMP): $(DPMM_LOCK)
	@echo "set-up: dpmm's own environment in $(DPMM_VENV) (the synthetic-data baseline, docs/baselines.md)"
	$(PYTHON) -m venv $(DPMM_VENV)
	$(DPMM_VENV)/bin/python -m pip install --progress-bar off --upgrade pip
	@$(call ticking,installing dpmm's environment,$(DPMM_VENV)/bin/python -m pip install --progress-bar off \
		--require-hashes -r $(DPMM_LOCK))
	touch $(DPMM_STAMP)

## demo: mine the built-in example data (planted redescriptions): privately with
## the default miner at epsilon = 1 (secure noise), and with the non-private cartwheels
demo: $(STAMP)
	$(BIN)/dprm datasets make-planted $(DEMO)/data --rows 5000 --seed 7
	$(BIN)/dprm inspect $(DEMO)/data/left.csv $(DEMO)/data/right.csv --types $(DEMO)/data/types.json
	$(BIN)/dprm mine $(DEMO)/data/left.csv $(DEMO)/data/right.csv --types $(DEMO)/data/types.json \
		--epsilon 1 --top 5 --output $(DEMO)/private.json
	$(BIN)/dprm mine $(DEMO)/data/left.csv $(DEMO)/data/right.csv --types $(DEMO)/data/types.json \
		--algorithm cartwheels --seed 7 --top 5 --max-support 0.5 \
		--output $(DEMO)/redescriptions.json --clired $(DEMO)/redescriptions.queries
	@echo "planted queries: $(DEMO)/data/planted.json"

## browser: Debian's chromium for the browser tests (Playwright drives it; its own
## browser download cannot work on these machines)
browser:
	@if [ -x $(CHROMIUM) ]; then \
		echo "browser: $(CHROMIUM) is there"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "browser: installing Debian's chromium with apt-get (a minute or two)"; \
		DEBIAN_FRONTEND=noninteractive apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	else \
		echo "browser: $(CHROMIUM) is missing; install Debian's chromium (sudo apt-get install chromium) and run make test again"; \
		exit 2; \
	fi

## test: the whole test suite (unit, doctests, command line, server, browser), one worker per
## core; --dist loadgroup hands out the tests one at a time to whichever worker is free, except the
## modules marked with an xdist_group (the Ray modules, the warm-cache build's, the browser's),
## each group to one worker as a whole, biggest first (pytest-xdist's default reordering)
# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set (as in this project's sessions):
# without it every xdist worker re-rewrites the asserts of all test modules and compiles dprm's
# sources (collection 15.3 -> 8.3 CPU-s a worker), and so does every dprm process a test starts.
test: $(STAMP) $(DPMM_STAMP) browser
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadgroup

## bench: speed figures (load, index, mine) on mammals and on 115,200 x 604 planted data,
## and the start-up cost of each private miner's run on mammals (warm and cold cache)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_startup.py

## lock: requirements.lock anew from pyproject.toml's ranges (the newest versions within
## them), and requirements-dpmm.lock from requirements-dpmm.in; run the tests after; with
## hashes, for CPython 3.11 on x86-64 Linux
lock:
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --progress-bar off uv
	.venv-lock/bin/uv pip compile pyproject.toml $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e)) \
		--generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
		--annotation-style line --no-header -o $(LOCK)
	.venv-lock/bin/uv pip compile requirements-dpmm.in --generate-hashes --python-version 3.11 \
		--python-platform x86_64-unknown-linux-gnu --annotation-style line --no-header -o $(DPMM_LOCK)

clean:
	rm -rf $(VENV) $(DPMM_VENV) .venv-lock out

comma := ,
