"""The differential test against Kubernetes' CEL: the same expressions, the same variables,
our compiler on one side and cel-go with Kubernetes 1.34's CEL environment on the other
(``deploy/local/kube/cmd/cel-reference``, built by ``deploy/local/cluster.sh``).

Modules: ``values`` (declared types and the typed, canonical value encoding both sides
share), ``reference`` (the Go evaluator as a subprocess), ``generator`` (seeded expressions
over every library Kubernetes enables), ``differential`` (run both sides, classify, tally,
render the table). ``python -m tests.cel.kubernetes`` is ``make cel-differential``.
"""
