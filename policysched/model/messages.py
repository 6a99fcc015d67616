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
BAD_LABEL_KEY = "invalid label key {key!r}: {reasons}"
BAD_LABEL_VALUE = "invalid label value {value!r}: {reasons}"
UNSUPPORTED_VALUE = "Unsupported value: {value!r}: supported values: {supported}"

# --- the API server's refusal to bind a bound pod (the cache and the backends) ------
POD_ALREADY_BOUND = 'pod {key} is already assigned to node "{node}"'

# --- the clock ----------------------------------------------------------------------
CLOCK_BACKWARDS = "the simulated clock cannot go back from {now} to {target}"

# --- label selectors, node affinity, tolerations, pod affinity terms ---------------------
# (policysched.model.selectors; the texts are Kubernetes' own, from k8s.io/apimachinery's
# labels.NewRequirement, IsLabelKey / IsLabelValue and metav1.LabelSelectorAsSelector, and
# component-helpers' nodeaffinity)
SELECTOR_FIELD = "{path}: {reason}"
SELECTOR_INVALID = "{path}: Invalid value: {value}: {detail}"
SELECTOR_UNSUPPORTED = "{path}: Unsupported value: {value}: supported values: {supported}"
SELECTOR_BAD_OPERATOR = "{path}: {operator} is not a valid label selector operator"
SELECTOR_VALUES_REQUIRED = "for 'in', 'notin' operators, values set can't be empty"
SELECTOR_VALUES_FORBIDDEN = "values set must be empty for exists and does not exist"
SELECTOR_ONE_NUMBER = "for 'Gt', 'Lt' operators, exactly one value is required"
SELECTOR_NOT_INTEGER = "for 'Gt', 'Lt' operators, the value must be an integer"
SELECTOR_ONE_FIELD_VALUE = "must have one element"
SELECTOR_BAD_WEIGHT = "must be a 32-bit integer, not {value}"
LABEL_KEY_FORMAT = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character with an optional DNS subdomain prefix "
    "and '/' (e.g. 'example.com/MyName')"
)
LABEL_KEY_PREFIX = "prefix part {reason}"
LABEL_KEY_NAME = "name part {reason}"
LABEL_EMPTY = "must be non-empty"
LABEL_TOO_LONG = "must be no more than {limit} bytes"
LABEL_NAME_FORMAT = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')"
)
LABEL_DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)
LABEL_VALUE_FORMAT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or "
    "'my_value', or '12345')"
)
SELECTOR_KEY_NOT_STRING = "keys must be strings, not {actual}"
