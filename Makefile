# Two entry points for people (see README): `make demo` and `make test`.
# Everything is rebuilt from nothing: a venv in .venv, npm peers in tests/peers/node_modules.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PEERS := tests/peers

.PHONY: setup peers browser postgres demo walkthrough lab check check-ts test bench bench-tiny soak clean

# The venv's packages are installed by uv (a fresh set-up in about 30 s where pip took 80; the editable
# install still runs labextension/build_hook.py, and [tool.uv] cache-keys rebuild it when a front-end
# source changes). pip -qq: errors only (a machine's pip.conf warnings are not ours to print).
UV := $(BIN)/uv pip install -q --python $(BIN)/python

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip

$(BIN)/uv: $(BIN)/python
	$(BIN)/pip install -qq uv

setup: $(BIN)/uv
	$(UV) -e '.[demo-http,test,check]'

peers:
	cd $(PEERS) && npm ci --no-audit --no-fund --loglevel=error
	test -x $(PEERS)/fastmcp-venv/bin/python || $(PY) -m venv $(PEERS)/fastmcp-venv
	$(PEERS)/fastmcp-venv/bin/pip install -q -r $(PEERS)/fastmcp-requirements.txt

# Debian's chromium for the browser tests (Playwright never downloads a browser here).
browser:
	@test -x /usr/bin/chromium || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's PostgreSQL for the task index tests on PostgreSQL (tests/support/postgres.py starts a server of
# its own; nothing is skipped for a missing one).
postgres:
	@command -v pg_config >/dev/null && test -x "$$(pg_config --bindir)/initdb" || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }

demo: setup
	$(BIN)/python notebooks/run.py

walkthrough: setup
	$(BIN)/python -m mcp_tasks_jupyter.demo.walkthrough

# The example notebooks are signed with this machine's key first, so they open trusted (their saved
# outputs include HTML summaries), and JupyterLab opens at the quick start.
lab: setup
	$(UV) -e '.[lab]'
	$(BIN)/jupyter trust notebooks/*.ipynb >/dev/null
	$(BIN)/jupyter lab --ip=127.0.0.1 notebooks/01-quickstart.ipynb

# The gate, before every merge (CI runs it first): lint, format, types, the TypeScript checks, then
# the unit band: tests that touch no socket, process or kernel (a guard in tests/conftest.py fails one
# that does; `pytest -m loopback|servers|kernel|peers|browser` runs the others). Its time on these
# 2-core machines is in CONTRIBUTING.md. Bytecode is written even where the environment turns it off:
# compiled once, the test modules are reused by every worker.
check: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(MAKE) check-ts
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m unit -q -n 3

test: setup peers browser postgres
	$(BIN)/python -m pytest

# The TypeScript of labextension/ (JupyterLab extension and widget front ends): tsc, eslint, prettier, vitest.
check-ts:
	cd labextension && { test -d node_modules || npm ci --no-audit --no-fund --loglevel=error; } && npm run lint && npm test

bench: setup peers
	$(BIN)/python benchmarks/run.py

bench-tiny: setup peers
	$(BIN)/python benchmarks/run.py --tiny

# The long soak (30 minutes): rounds of 200 tasks through the fault-injecting proxy; BENCHMARKS.md has a run.
soak: setup
	$(BIN)/python benchmarks/soak.py --minutes 30

clean:
	rm -rf $(VENV) $(PEERS)/node_modules $(PEERS)/fastmcp-venv
