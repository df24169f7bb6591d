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

# torch first, so that the `torch` extra below is already satisfied and pulls nothing
# more. Where no NVIDIA GPU is present (no nvidia-smi) the CPU build is asked for by
# its local version, torch==2.13.0+cpu: pip then takes PyTorch's CPU wheel (a local
# file on the project's machines) or fails with "no matching distribution" rather
# than downloading a CUDA build of several GB; point pip at PyTorch's CPU wheel index
# (PIP_EXTRA_INDEX_URL) or override, e.g. `make test TORCH=torch==2.13.0`.
TORCH ?= $(shell command -v nvidia-smi >/dev/null 2>&1 && echo torch==2.13.0 || echo torch==2.13.0+cpu)
# setuptools' editable install prints an informational "Editable installation" notice
# (about folders named like the package); it is not a problem of this project, so only
# that one message is silenced. Any other build warning still prints.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q '$(TORCH)'
	$(QUIET_EDITABLE) $(BIN)/pip install -q -e '.[torch,viz,test,hf,dist,synth]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
