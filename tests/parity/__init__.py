"""The differential parity harness: policysched against the real kube-scheduler v1.34.

Scenarios (``scenario``: a cluster and pending pods created one at a time) come from a seeded
generator (``generator``) and hand-written edge cases (``cases/*.yaml``). The oracle
(``oracle``) runs them on a private local control plane with the reference kube-scheduler
and KWOK nodes (``control_plane``), its outcomes cached by scenario hash in
``kube-results.json`` (``results_cache``); ``replay`` runs policysched's engine on the state
kube had for each decision; ``compare`` and ``report`` say where the two agree.
``python -m tests.parity --help`` runs it; ``test_parity.py`` is the bounded sample of
``make test``.
"""
