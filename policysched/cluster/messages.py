"""Every user-visible message of the backends, the bind pool and cluster files.

Templates use ``str.format`` fields. Names of API objects are quoted as Kubernetes quotes
them (``pods "web-1" not found``).
"""

from __future__ import annotations

# --- backends --------------------------------------------------------------------------
POD_NOT_FOUND = 'pods "{name}" not found (namespace "{namespace}")'
POD_REPLACED = 'pod {key} was deleted and recreated (uid {expected} is now {actual})'
NODE_NOT_FOUND = 'nodes "{name}" not found'
OBJECT_NOT_FOUND = '{kind} "{name}" not found'
OBJECT_EXISTS = '{kind} "{name}" already exists'
UNSUPPORTED_OBJECT_KIND = 'unsupported kind "{kind}" (expected {expected})'
UNKNOWN_PRIORITY_CLASS = 'no PriorityClass with name "{name}" was found'
MULTIPLE_GLOBAL_DEFAULTS = 'PriorityClass "{other}" is already the global default'
PRIORITY_MISMATCH = '{priority} does not match PriorityClass "{name}" (value {value})'

# --- the bind pool (policysched.cluster.binder) ----------------------------------------
BIND_ABANDONED = ("the bind of pod {key} to node {node} was abandoned: the backend stopped "
                  "binding")
BIND_CRASHED = "the bind of pod {key} failed unexpectedly: {reason}"
BAD_PARALLEL_BINDS = "parallel binds must be at least 1, not {size}"
LOG_BIND_CRASHED = "the bind of pod %s failed unexpectedly"

# --- cluster files ---------------------------------------------------------------------
CLUSTER_FILE_HEADER = "{source}: invalid cluster file ({count} {problems}):"
PROBLEM = "problem"
PROBLEMS = "problems"
CANNOT_READ_FILE = "cannot read the file: {reason}"
DOCUMENT_WHERE = "document {number}"
DOCUMENT_ITEM_WHERE = "document {number} items[{item}]"
DOCUMENT_OBJECT = "{where} ({kind} {name})"
DOCUMENT_KIND = "{where} ({kind})"
DOCUMENT_NOT_MAPPING = "must be a mapping with apiVersion and kind, not {actual}"
DOCUMENT_NO_KIND = "kind: required field is missing (expected one of {expected})"
DOCUMENT_UNKNOWN_KIND = 'kind: unsupported kind "{kind}" (expected one of {expected})'
DOCUMENT_WRONG_API_VERSION = 'apiVersion: {kind} must have apiVersion "{expected}", not "{actual}"'
LIST_ITEMS_NOT_LIST = "items: must be a list, not {actual}"
DUPLICATE_OBJECT = "duplicate {kind} {name} (first defined in {first})"
YAML_PROBLEM = "line {line}: {message}"

# --- volume bindings (policysched.cluster.volume_writes): kube's volume binder's texts ----
VOLUME_BINDING_TIMEOUT = "binding volumes: context deadline exceeded"
CLAIM_REF_RESET = 'binding volumes: ClaimRef got reset for pv "{volume}"'
SELECTED_NODE_RESET = 'binding volumes: selectedNode annotation reset for PVC "{claim}"'
PROVISIONING_FAILED = 'binding volumes: provisioning failed for PVC "{claim}"'
VOLUME_CLAIMED_ELSEWHERE = 'Volume "{volume}" already bound to a different claim "{claim}"'
VOLUME_OBJECT_GONE = 'binding volumes: {kind} "{name}" not found'
