"""Every user-visible message of the cache."""

from __future__ import annotations

# --- the cache -----------------------------------------------------------------------
POD_ALREADY_ASSUMED = 'pod {key} is already assumed on node "{node}"'
POD_NOT_ASSUMED = "pod {key} is not assumed"
POD_UNKNOWN = "pod {key} is not in the cache"
UNSUPPORTED_EVENT = "unsupported event {kind} {resource}"
