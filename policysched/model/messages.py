"""Every user-visible message about API objects (their views) and the clock.

Templates use ``str.format`` fields.
"""

from __future__ import annotations

# --- object fields (policysched.model.objects) -----------------------------------------
OBJECT_NOT_MAPPING = "an object must be a mapping, not {actual}"
FIELD_REQUIRED = "required field is missing"
FIELD_EMPTY = "must not be empty"
WRONG_TYPE = "must be {expected}, not {actual}"
BAD_QUANTITY = "{reason}"  # parse_quantity_* already says "invalid quantity '1.5.3Gi': ..."
NEGATIVE_QUANTITY = "must not be negative: {value!r}"
BAD_TIMESTAMP = "invalid timestamp {value!r}: expected RFC 3339 like 2024-01-01T00:00:00Z"
BAD_PORT = "must be between 1 and 65535, not {value}"
BAD_HOST_PORT = "must be between 0 and 65535, not {value}"
BAD_PROTOCOL = "must be one of TCP, UDP, SCTP, not {value!r}"
BAD_MIN_MEMBER = "must be at least 1, not {value}"
BAD_TIMEOUT = "must be at least 0, not {value}"

# --- the API server's refusal to bind a bound pod (the cache and the backends) ------
POD_ALREADY_BOUND = 'pod {key} is already assigned to node "{node}"'

# --- the clock ----------------------------------------------------------------------
CLOCK_BACKWARDS = "the simulated clock cannot go back from {now} to {target}"
