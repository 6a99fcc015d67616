# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test lint conformance bench-cel bench-engine clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/policysched validate policies/
	$(BIN)/policysched simulate --cluster examples/demo-cluster.yaml

lint: $(STAMP)
	$(BIN)/ruff check policysched tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

conformance: $(STAMP)
	$(BIN)/pytest -s tests/cel/test_conformance.py

bench-cel: $(STAMP)
	$(BIN)/python bench/cel_micro.py

bench-engine: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
