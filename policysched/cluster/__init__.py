"""Cluster backends, each in its module: ``memory`` (``MemoryBackend``, the in-process
cluster behind the offline commands), ``kube`` (a real API server), ``binder`` (the pool of
binding threads), ``cluster_file`` (clusters written as manifests). They implement the
engine's ``policysched.framework.backend.Backend``."""
