# Two entry points for people (see README): `make demo` and `make test`.
# Everything is rebuilt from nothing: a venv in .venv, npm peers in tests/peers/node_modules.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PEERS := tests/peers

.PHONY: setup peers demo walkthrough lab test bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

setup: $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'

peers:
	cd $(PEERS) && npm ci --no-audit --no-fund --loglevel=error
	test -x $(PEERS)/fastmcp-venv/bin/python || $(PY) -m venv $(PEERS)/fastmcp-venv
	$(PEERS)/fastmcp-venv/bin/pip install -q -r $(PEERS)/fastmcp-requirements.txt

demo: setup
	$(BIN)/python notebooks/run.py

walkthrough: setup
	$(BIN)/python -m mcp_tasks_jupyter.demo.walkthrough

lab: setup
	$(BIN)/pip install -q jupyterlab
	$(BIN)/jupyter lab --ip=127.0.0.1 notebooks/01-quickstart.ipynb

test: setup peers
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/poll_cost.py

clean:
	rm -rf $(VENV) $(PEERS)/node_modules $(PEERS)/fastmcp-venv
