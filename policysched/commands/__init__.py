"""The offline commands: ``simulate``, ``explain``, ``test``, ``validate`` and the loading
of policies, configuration and cluster files they share."""
