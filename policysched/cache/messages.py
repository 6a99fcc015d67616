"""Every user-visible message of the cache."""

from __future__ import annotations

# --- the cache -----------------------------------------------------------------------
POD_ALREADY_ASSUMED = 'pod {key} is already assumed on node "{node}"'
POD_NOT_ASSUMED = "pod {key} is not assumed"
POD_UNKNOWN = "pod {key} is not in the cache"
UNSUPPORTED_EVENT = "unsupported event {kind} {resource}"
VOLUME_GONE = "cannot assume the binding of claim {claim} to volume {volume}: one of them is gone"
VOLUME_TAKEN = "volume {volume} was taken by claim {claim} meanwhile"
CLAIM_GONE = "cannot assume the provisioning of claim {claim}: it is gone"
CLAIM_SELECTED = "claim {claim} is being provisioned for node {node} already"
