"""Every user-visible message of the policy layer and of ``policysched validate``.

Templates use ``str.format`` fields; quoted names use double quotes, as in Kubernetes.
"""

from __future__ import annotations

# --- reading sources -------------------------------------------------------------------
CANNOT_READ = "cannot read file: {reason}"
NOT_UTF8 = "file is not valid UTF-8 text (byte {offset})"
NO_POLICIES = "no SchedulingPolicy documents found"
NO_YAML_FILES = "no .yaml or .yml files found in this directory"

# --- YAML ------------------------------------------------------------------------------
INVALID_YAML = "invalid YAML: {problem}"
DUPLICATE_KEY = 'duplicate key "{key}" (first defined at line {line})'
NON_SCALAR_KEY = "a mapping key must be a plain value, not a {kind}"
UNSUPPORTED_TAG = 'unsupported YAML tag "{tag}"'
RECURSIVE_ALIAS = "recursive YAML alias"
NUMBER_TOO_LONG = "number too long: more than {limit} characters"
INVALID_NUMBER = "invalid number: {reason}"

# --- limits on policy input (each template gets {limit} and {setting}) -----------------
CEL_VERSION_SETTING = "{key} in the SchedulerConfiguration: {problem}"
LIMIT_SETTING = "policyLimits.{key} in the SchedulerConfiguration"
TOO_MANY_BYTES = "too large to read: more than {limit} bytes ({setting})"
TOO_MANY_DOCUMENTS = "too many documents: more than {limit} ({setting})"
TOO_DEEP = "nested too deeply: more than {limit} levels of mappings and lists ({setting})"
ALIAS_EXPANSION = (
    "YAML aliases expand the text to more than {limit} times its size ({setting})"
)
EXPRESSION_TOO_LONG = (
    "{field}: expression too long: {length} characters, more than {limit} ({setting})"
)
TOO_MANY_RULES = "too many rules: {count}, more than {limit} ({setting})"
TOO_MANY_VARIABLES = "too many variables: {count}, more than {limit} ({setting})"
COMPILE_TIMEOUT = (
    "compiling the changed policies took more than {limit:g} s: stopped here ({setting})"
)

# --- documents -------------------------------------------------------------------------
DOCUMENT_NOT_MAPPING = "a document must be a mapping with apiVersion and kind, not {actual}"
DOCUMENT_NO_KIND = (
    "document has no kind: expected kind SchedulingPolicy (or a ConfigMap holding policies)"
)
DOCUMENT_WRONG_KIND = (
    'not a SchedulingPolicy: kind is "{kind}" '
    "(expected SchedulingPolicy, SchedulerConfiguration, or a ConfigMap holding policies)"
)
EMBEDDED_WRONG_KIND = (
    '{origin} holds a document of kind "{kind}": '
    "expected SchedulingPolicy or SchedulerConfiguration"
)
CONFIGMAP_VALUE_NOT_STRING = 'ConfigMap data "{key}" must be a string, not {actual}'
CONFIGMAP_DATA_NOT_MAPPING = "ConfigMap data must be a mapping of keys to policy YAML"
CONFIGMAP_ORIGIN = "{namespace}/{name}[{key}]"
# A data key the API server refuses; the reasons are IsConfigMapKey's (k8s.io/apimachinery).
CONFIGMAP_KEY_INVALID = "invalid ConfigMap data key {key}: {reasons}"
CONFIGMAP_KEY_TOO_LONG = "must be no more than {limit} characters"
CONFIGMAP_KEY_CHARACTERS = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'{pattern}')"
)
CONFIGMAP_KEY_DOTS = "must not be '{key}'"
CONFIGMAP_KEY_DOT_DOT = "must not start with '..'"
LIST_ITEMS_NOT_LIST = "items of a List must be a list"

# --- schema ----------------------------------------------------------------------------
UNKNOWN_FIELD = 'unknown field "{field}"'
UNKNOWN_FIELD_SUGGESTION = ' (did you mean "{suggestion}"?)'
UNKNOWN_FIELD_ELSEWHERE = " ({field} is a field of {points} rules)"
MISSING_FIELD = 'missing required field "{field}"'
DEPENDENT_FIELD = 'field "{field}" is required when "{given}" is set'
EXCLUDED_FIELD = 'field "{field}" cannot be set with "{given}"'
NEED_ONE_OF = "one of {fields} is required"
ONLY_ONE_OF = "only one of {fields} may be set"
WRONG_TYPE = "{subject} must be {expected}, not {actual}"
WRONG_TYPE_CEL = "{subject} must be a CEL expression in a string, not {actual} (quote it)"
NOT_ONE_OF = "{subject} must be one of {choices}, not {value}"
NOT_CONST = "{subject} must be {expected}, not {value}"
TOO_SMALL = "{subject} must be at least {limit}, not {value}"
TOO_LARGE = "{subject} must be at most {limit}, not {value}"
TOO_SHORT = "{subject} must not be empty"
TOO_LONG = "{subject} must be at most {limit} characters long"
BAD_PATTERN = "{subject} {value} {rule}"
BAD_PATTERN_GENERIC = "does not match the pattern {pattern}"
NOT_UNIQUE = "{subject} has duplicate items"
INVALID_VALUE = "{subject} is invalid: {reason}"
FIELD_SUBJECT = 'field "{field}"'
VALUE_SUBJECT = "value"
PROPERTY_NAME_SUBJECT = 'key "{name}"'

JSON_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}

# --- names -----------------------------------------------------------------------------
DUPLICATE_RULE = 'duplicate rule name "{name}" in {point} (first defined at line {line})'
DUPLICATE_VARIABLE = 'duplicate variable name "{name}" (first defined at line {line})'
DUPLICATE_POLICY = 'duplicate policy name "{name}" (first defined at {location})'

# --- CEL -------------------------------------------------------------------------------
CEL_ERROR = "{field}: {kind}: {message}"
CEL_KINDS = {
    "syntax": "syntax error",
    "reference": "reference error",
    "type": "type error",
    "cost": "cost limit exceeded",
    "argument": "compile error",
}
VARIABLE_FIELD = "variable {name}"

# --- variables not available at an extension point (after "'node' is not available ") --
WHY_NO_NODE_MATCH = "the match condition is evaluated once per pod, before any node is considered"
WHY_NO_NODE_VARIABLES = (
    "variables are computed once per pod, before any node is considered; use node in a rule"
)
WHY_NO_NODE_AGGREGATES = (
    "an aggregate is computed once per pod over every node; read it in a rule with "
    "aggregates.<name>.count(node)"
)
WHY_NO_NODE_QUEUE_SORT = "queueSort orders pods before any node is considered"
WHY_NO_NODE_PRE_ENQUEUE = "preEnqueue runs before the pod is queued, before any node is considered"
WHY_NO_NODE_PRE_FILTER = "preFilter runs once per pod before any node is considered"
WHY_NO_NODE_POST_FILTER = (
    "postFilter runs once per pod after every node failed; use node in victims"
)
WHY_NO_NODE_PRE_SCORE = "preScore runs once per pod before the nodes are scored; use node in score"
UNAVAILABLE = {
    "node": "in {where}: {why}",
    "nodePods": "in {where}: {why}",
    "pods": (
        "in {where}: the cluster-wide lists are available in preFilter, postFilter, preScore, "
        "permit and spec.variables; compute what {where} needs in a variable"
    ),
    "variables": "in {where}: variables belong to a scheduling cycle, which has not started",
    "pod": "in {where}: it compares two pods, a and b",
    "a": "in {where}: a and b exist only in queueSort less, which compares two pods",
    "b": "in {where}: a and b exist only in queueSort less, which compares two pods",
    "victim": "in {where}: victim exists only in postFilter victims",
}
UNAVAILABLE["nodes"] = UNAVAILABLE["podsWithAffinity"] = UNAVAILABLE["pods"]
UNAVAILABLE["podVolumes"] = UNAVAILABLE["volumeBinder"] = (
    "in {where}: the pod's volumes come from the cycle's snapshot: they are available from "
    "preFilter on and in spec.variables"
)
UNAVAILABLE["workloadSelector"] = UNAVAILABLE["podGroupPods"] = (
    "in {where}: like the cluster-wide lists, it is available in preFilter, postFilter, "
    "preScore, permit and spec.variables; compute what {where} needs in a variable"
)
UNAVAILABLE["aggregates"] = (
    "in {where}: aggregates are read by rules (preFilter and later points); an aggregate's "
    "fields may read variables, not the other way round"
)
UNAVAILABLE["item"] = "in {where}: item exists only in the fields of an aggregate with forEach"
UNAVAILABLE["p"] = "in {where}: p exists only in an aggregate's termsOf"
UNAVAILABLE["preFilterRan"] = (
    "in {where}: preFilterRan exists only in postFilter expressions"
)
UNAVAILABLE_VARIABLES_IN_MATCH = (
    "in {where}: variables are computed only for pods the policy matches"
)
UNAVAILABLE_DEFAULT = "in {where}"

AGGREGATE_FIELD = "aggregate {name} {field}"
DUPLICATE_AGGREGATE = "aggregate {name} is already declared on line {line}"

# --- defaults shown at run time ----------------------------------------------------------
# --- audit (enforcement: Audit) --------------------------------------------------------------
AUDIT_UNSUPPORTED = "enforcement Audit is not supported for a {point} rule: {why}"
POLICY_AUDIT_UNSUPPORTED = (
    'spec.enforcement Audit cannot apply to {point} rule "{rule}": {why} '
    "(give that rule enforcement: Enforce, or audit the policy's other rules one by one)"
)
AUDIT_UNSUPPORTED_GANG = (
    "a gang rule holds a whole group of pods, so what it would have done to one pod "
    "cannot be reported without acting on the others"
)
# Why each point without audit has none (docs/authoring.md#audit-rules)
AUDIT_UNSUPPORTED_WHY = {
    "queueSort": "it orders pods against each other: it has no verdict on one pod",
    "postFilter": "preemption evicts pods; what it would have evicted depends on evictions "
                  "that did not happen",
    "preScore": "its only effect is to skip its own policy's score rules",
    "reserve": "its counters are shared between pods: an audited counter would need its "
               "own ledger",
    "unreserve": "it only notifies: it decides nothing",
    "preBind": "it patches the pod before binding, and an audit must not write to the pod",
    "bind": "it decides how the pod is bound, which only one binder can do",
    "postBind": "it only notifies: it decides nothing",
}

DEFAULT_FILTER_REASON = "node(s) didn't satisfy policy {policy}/{rule}"

# --- validate --------------------------------------------------------------------------
SUMMARY_VALID = "{policies} valid ({files})"
SUMMARY_INVALID = "{errors} in {files}"
SUMMARY_WARNINGS = "{summary}, {warnings}"
UNGUARDED_MAP_KEY = (
    "{access} fails with 'no such key' on objects without that {noun}; guard it: "
    "`{guard} && {access} ...`, or read it with a default: `{optional}`"
)
COUNT = {
    "policy": ("policy", "policies"),
    "configuration": ("configuration", "configurations"),
    "file": ("file", "files"),
    "error": ("error", "errors"),
    "warning": ("warning", "warnings"),
}


def count(n: int, noun: str) -> str:
    singular, plural = COUNT[noun]
    return f"{n} {singular if n == 1 else plural}"

# an exception other than a CEL error while evaluating an expression (policy.model)
UNEXPECTED_ERROR = "unexpected {kind}: {error}"
LOG_UNEXPECTED_ERROR = "%s `%s` raised an unexpected exception"

# --- Kubernetes' matching functions (policy.kubernetes_functions): {reason} is the
# model's SelectorError ("matchExpressions[0].operator: ...")
INVALID_LABEL_SELECTOR = "invalid label selector: {reason}"
INVALID_NODE_AFFINITY = "invalid node affinity: {reason}"
INVALID_TOLERATION = "invalid toleration or taint: {reason}"
INVALID_POD_AFFINITY_TERM = "invalid pod affinity term: {reason}"
# resource scores (policy.resource_functions)
RESOURCE_SPECS = ("{function}: resources must be a list of {{name: string, weight: int}} "
                  "(kube-scheduler's ResourceSpec)")
RESOURCE_WEIGHT = "{function}: resource {name}: weight {weight} is not in 1..{limit}"
RESOURCE_AMOUNT = "{function}: {name}: amount {value!r} is not a non-negative int"

# --- policy sources (policy.sources): what a command loads
CONFIGURATION_COUNT = ("{path}: expected one SchedulerConfiguration document, found {count}")
OWN_NAMESPACE = "<the scheduler's namespace>"
CONFIGMAP_SOURCE_OFFLINE = (
    "ConfigMaps of namespace {namespace} are read from the cluster by `policysched run` "
    "only: offline, give their YAML with --policies (kubectl get configmap -n {namespace} "
    "-l <this selector> -o yaml > policies.yaml)")
NOT_ENABLED = (
    "policy {name} is enabled by no profile of {config}, so it does nothing: add --enable "
    "{name}[:WEIGHT] (to the first profile){label}, or enable it in a profile of a --config "
    "file")
NOT_ENABLED_LABEL = (
    ", give it the label {key}: {value} in its metadata.labels (profile {profile} selects it)")
BUILTIN_CONFIGURATION = "the built-in configuration"
NOT_VERBATIM = (
    "{key}: tabs or trailing blanks cannot be kept in a ConfigMap's YAML block: remove them")
CONFIGMAP_NOT_POLICY = (
    "{path}: holds a {kind}, not only SchedulingPolicy documents: a policy ConfigMap holds "
    "policies")
CONFIGMAP_DUPLICATE_KEY = "{path}: another file is also named {key} (ConfigMap keys are file names)"
UNKNOWN_POLICY = "profile {profile} enables unknown policy {policy}"
UNKNOWN_PARAMS = "profile {profile} sets params {params} that policy {policy} does not declare"
BAD_POLICY_SELECTOR = "profile {profile}: policies.selector: {problem}"
BAD_ENABLE = "--enable {entry!r}: expected NAME or NAME:WEIGHT (WEIGHT a whole number)"
NOT_POLICIES = (
    "{count} documents here are not policies (kinds: {kinds}): a policy source holds "
    "SchedulingPolicy and SchedulerConfiguration documents, or ConfigMaps of them; a "
    "cluster file goes with --cluster")
