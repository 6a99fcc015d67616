"""policysched: a Kubernetes scheduler whose plugins are declarative CEL policies."""

__version__ = "0.1.0"
