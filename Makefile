# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test lint browser report-demo deploy-files conformance cel-differential parity bench bench-cel bench-engine bench-e2e bench-churn clean cluster cluster-down e2e

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

# deploy/policies-configmap.yaml and deploy/scheduler-config.yaml, generated from policies/.
deploy-files: $(STAMP)
	$(BIN)/python deploy/generate.py

# Lint, the unit tests, then the end-to-end suite (it starts a private local control plane:
# a cold ~/.cache/policysched builds it first, see deploy/local/README.md) and the parity
# sample (tests/parity/test_parity.py: a few hundred decisions against kube-scheduler's cached
# outcomes; a control plane only for scenarios not in the cache), and the bounded sample of the
# differential test against Kubernetes' CEL (tests/cel/test_kubernetes.py: its reference
# evaluator is built from the same module cache as the control plane, in seconds).
# The HTML report's browser tests (tests/commands/test_html_report.py, e2e marked) render
# pages in a headless Chromium: `browser` installs Debian's package when it is missing.
test: lint browser
	$(BIN)/pytest -m "not e2e"
	$(BIN)/pytest tests/e2e tests/parity tests/cel/test_kubernetes.py \
		tests/commands/test_html_report.py -m e2e

# Debian's chromium, for the HTML report's tests and screenshots; apt-get (through sudo when
# not root) only when no chromium is on PATH.
SUDO = $(if $(filter 0,$(shell id -u)),,sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		echo "installing chromium (apt-get install -y chromium)"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		$(SUDO) apt-get install -y -qq chromium >/dev/null; }

# The HTML report of `explain` on the demo cluster (build/report-demo.html) and its
# screenshot docs/report-demo.png (docs/reports.md).
report-demo: $(STAMP) browser
	@mkdir -p build
	$(BIN)/policysched explain --cluster examples/demo-cluster.yaml --pod default/ingress-b \
		--html build/report-demo.html >/dev/null
	$(BIN)/python -m tests.browser screenshot build/report-demo.html docs/report-demo.png \
		--width 1100 --height 1250
	@echo "open build/report-demo.html; the screenshot is docs/report-demo.png"

# The local control plane in .cluster/ (kube-apiserver + etcd + KWOK, 3 fake nodes).
cluster:
	deploy/local/cluster.sh up --nodes 3

cluster-down:
	deploy/local/cluster.sh down

# The end-to-end suite alone (it starts private clusters in temporary directories).
e2e: $(STAMP)
	$(BIN)/pytest tests/e2e -m e2e

# policysched against the real kube-scheduler v1.34 on >= 1,000 decisions (the hand-written
# cases of tests/parity/cases/ and generated scenarios); prints the per-feature table, saves
# each differing decision in .parity/failures/ and writes docs/parity.md. Decisions that
# differ are reported, not fatal (exit 1 of the harness); an oracle failure is (exit 2).
parity: $(STAMP)
	$(BIN)/python -m tests.parity --decisions 1000 --report docs/parity.md --prune-cache \
		|| [ $$? -eq 1 ]

conformance: $(STAMP)
	$(BIN)/pytest -s tests/cel/test_conformance.py

# Our CEL against Kubernetes 1.34's (cel-go + k8s.io/apiserver's CEL libraries, built by
# deploy/local/cluster.sh build cel-reference) on 20,000 generated expressions: prints the
# per-area table with the first examples of each difference and writes it into
# docs/conformance.md ("Kubernetes CEL differential").
cel-differential: $(STAMP)
	$(BIN)/python -m tests.cel.kubernetes --expressions 20000 --report docs/conformance.md

# Both benchmarks below, with shorter caps and 1,000 pods for the cluster-wide e2e workloads
# (about 25 minutes on 2 cores); writes docs/benchmarks.md and ends with the summary lines
# (engine pods/s, speed-up, e2e ratios per workload).
bench: $(STAMP)
	$(BIN)/python bench/all.py

bench-cel: $(STAMP)
	$(BIN)/python bench/cel_micro.py

# scheduler_perf's workloads on 1,000 and 5,000 nodes, tiers reference / scalar / vectorised;
# each run capped at 60 s (reference: 10 pods, 300 s). Long: about 40 minutes on 2 cores.
# Smaller: $(BIN)/python bench/engine.py --nodes 1000 --pods 300 (see its --help).
bench-engine: $(STAMP)
	$(BIN)/python bench/engine.py

# policysched and the reference kube-scheduler side by side on private local control planes
# (KWOK nodes), 1,000 and 5,000 nodes, workloads basic, pod-anti-affinity and topology-spread,
# 2,000 pods each, 5 runs of each scheduler per workload taking turns (about 32 minutes on 2
# cores: 3 runs took 19); per node count and workload: throughput, create→bind p50/p99, CPU ms/pod, peak RSS
# (median and min-max of the runs, ratios of the medians), policysched's CPU per thread; a
# cold ~/.cache/policysched builds the binaries first. Smaller: $(BIN)/python bench/e2e.py
# --nodes 1000 --pods 500 --workloads topology-spread --repeat 1 (see its --help).
bench-e2e: $(STAMP)
	$(BIN)/python bench/e2e.py

# policysched's memory over a 30-minute churn (pods created and deleted continuously) on a
# private local control plane; writes its section of docs/benchmarks.md. Shorter:
# $(BIN)/python bench/churn.py --minutes 3 (see its --help).
bench-churn: $(STAMP)
	$(BIN)/python bench/churn.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
