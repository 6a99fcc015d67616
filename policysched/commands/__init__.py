"""The offline commands that run the engine on an in-process cluster: ``simulate``,
``explain``, ``test``, and the loading of policies, configuration and cluster files they
share (``validate`` needs only the policy layer: ``policysched.cli``)."""
