# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test lint conformance bench-cel bench-engine clean cluster cluster-down e2e

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

# Lint, the unit tests, then the end-to-end suite (it starts a private local control plane:
# a cold ~/.cache/policysched builds it first, see deploy/local/README.md).
test: lint
	$(BIN)/pytest -m "not e2e"
	$(BIN)/pytest tests/e2e -m e2e

# The local control plane in .cluster/ (kube-apiserver + etcd + KWOK, 3 fake nodes).
cluster:
	deploy/local/cluster.sh up --nodes 3

cluster-down:
	deploy/local/cluster.sh down

# The end-to-end suite alone (it starts private clusters in temporary directories).
e2e: $(STAMP)
	$(BIN)/pytest tests/e2e -m e2e

conformance: $(STAMP)
	$(BIN)/pytest -s tests/cel/test_conformance.py

bench-cel: $(STAMP)
	$(BIN)/python bench/cel_micro.py

bench-engine: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
