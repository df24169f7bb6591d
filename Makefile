# The two commands of the README. Each creates .venv and installs what it needs
# the first time (and again whenever pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-all bench clean

demo: $(VENV)/.installed  ## the built-in tour: no input needed
	$(BIN)/hasse demo

test: $(VENV)/.installed  ## the test suite (slow checks excluded; `make test-all` runs them too)
	$(BIN)/python -m pytest -q -m "not slow"

test-all: $(VENV)/.installed
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed
	$(BIN)/python -m benchmarks.bench_engine

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU build of torch first (a local file on the project's machines), so the
	# `torch` extra below is already satisfied and pulls no CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[torch,viz,test]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
