"""The CEL compatibility version: which Kubernetes release's CEL environment expressions
are checked against (``celCompatibilityVersion`` of the SchedulerConfiguration).

Kubernetes versions its CEL environment (k8s.io/apiserver/pkg/cel/environment/base.go,
``VersionedOptions``): each library and checker option has the release that introduced it,
and an API server accepts in new expressions only what its compatibility version enables.
This module is the one table of those releases, per function and macro name and per checker
option. A name in the table is available from its release on; a name not in it is
available at every version: our own extensions (``OWN_EXTENSIONS``: functions Kubernetes
does not have, which scheduling policies use), the policy layer's functions, and names a
library declares before this table knows them.

What every version shares (base.go's 1.0 options, and cel-go behaviour no option changes):
homogeneous aggregate literals, equality only between the same static types, the UTC
default time zone, the Kubernetes URL, regex and list libraries, the string library.
Constant arguments of type conversions (``timestamp('…')``, ``int(1e19)``) and regular
expressions are evaluated when Kubernetes plans the program (``cel.OptOptimize``), so they
are compile-time errors at every version, as here.

A name is gated as a whole: where Kubernetes declares one name in two libraries of
different releases (``isGreaterThan`` for quantities in 1.28 and semantic versions in
1.33) the earlier release counts, which gives the same result since the values of the
later library cannot be built before its own constructor (``semver()``) exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_VERSION",
    "FUNCTIONS",
    "MACROS",
    "OWN_EXTENSIONS",
    "SUPPORTED_VERSIONS",
    "KubernetesVersion",
    "parse_version",
]


@dataclass(frozen=True, order=True, slots=True)
class KubernetesVersion:
    """A Kubernetes release, major.minor (``1.34``)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def has_function(self, name: str) -> bool:
        """Whether the function ``name`` exists at this version (unknown names do)."""
        introduced = FUNCTIONS.get(name)
        return introduced is None or introduced <= self

    def has_macro(self, name: str) -> bool:
        """Whether the macro ``name`` exists at this version (unknown names do)."""
        introduced = MACROS.get(name)
        return introduced is None or introduced <= self

    @property
    def cross_type_numeric_comparisons(self) -> bool:
        """``1 < 1.5``, ``2u >= 1``: ordering across int, uint and double (else a
        compile error, as cel-go without ``CrossTypeNumericComparisons``)."""
        return self >= _V1_28

    @property
    def optional_syntax(self) -> bool:
        """``a.?b``, ``m[?k]``, ``[?x]``, ``{?k: v}`` (cel-go's ``OptionalTypes``)."""
        return self >= _V1_28


def _v(minor: int) -> KubernetesVersion:
    return KubernetesVersion(1, minor)


_V1_28 = _v(28)

OLDEST_VERSION = _v(23)  # CEL arrived in Kubernetes 1.23 (CRD validation rules)
DEFAULT_VERSION = _v(34)  # the release whose behaviour we follow (k8s.io/apiserver v0.34)

SUPPORTED_VERSIONS: tuple[KubernetesVersion, ...] = tuple(
    _v(minor) for minor in range(OLDEST_VERSION.minor, DEFAULT_VERSION.minor + 1))


def _introduced(version: KubernetesVersion, *names: str) -> dict[str, KubernetesVersion]:
    return dict.fromkeys(names, version)


# Function name → the Kubernetes release that introduced it (base.go: the release of the
# library that declares it). Libraries of 1.0 predate CEL in Kubernetes (1.23): listed for
# completeness, they exist at every supported version.
FUNCTIONS: dict[str, KubernetesVersion] = {
    # ext.Strings v0 (1.0; v2 from 1.29 adds format and strings.quote)
    **_introduced(_v(0), "charAt", "indexOf", "join", "lastIndexOf", "lowerAscii",
                  "replace", "split", "substring", "trim", "upperAscii"),
    **_introduced(_v(29), "format", "strings.quote"),
    # library.URLs (1.0)
    **_introduced(_v(0), "url", "isURL", "getScheme", "getHost", "getHostname", "getPort",
                  "getEscapedPath", "getQuery"),
    # library.Regex (1.0)
    **_introduced(_v(0), "find", "findAll"),
    # library.Lists (1.0)
    **_introduced(_v(0), "isSorted", "sum", "min", "max"),
    # cel.OptionalTypes (1.28)
    **_introduced(_v(28), "optional.of", "optional.ofNonZeroValue", "optional.none",
                  "optional.unwrap", "unwrapOpt", "hasValue", "value", "or", "orValue",
                  "first", "last"),
    # library.Quantity (1.28)
    **_introduced(_v(28), "quantity", "isQuantity", "sign", "isGreaterThan", "isLessThan",
                  "compareTo", "add", "sub", "asInteger", "asApproximateFloat",
                  "isInteger"),
    # ext.Sets (1.29)
    **_introduced(_v(29), "sets.contains", "sets.equivalent", "sets.intersects"),
    # library.IP and library.CIDR (1.30)
    **_introduced(_v(30), "ip", "isIP", "ip.isCanonical", "family", "isUnspecified",
                  "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
                  "isGlobalUnicast", "cidr", "isCIDR", "containsIP", "containsCIDR",
                  "masked", "prefixLength"),
    # library.Format (1.31)
    **_introduced(_v(31), "validate", "format.named", "format.dns1123Label",
                  "format.dns1123Subdomain", "format.dns1035Label", "format.qualifiedName",
                  "format.dns1123LabelPrefix", "format.dns1123SubdomainPrefix",
                  "format.dns1035LabelPrefix", "format.labelValue", "format.uri",
                  "format.uuid", "format.byte", "format.date", "format.datetime"),
    # library.SemverLib v1 (1.33)
    **_introduced(_v(33), "semver", "isSemver", "major", "minor", "patch"),
    # ext.Lists v3 (1.34)
    **_introduced(_v(34), "slice", "flatten", "sort", "lists.range", "reverse",
                  "distinct"),
}

# Macro name → the release that introduced it (parsed everywhere, refused by the checker
# before). Two-variable forms of all/exists/existsOne count as "twoVarComprehensions".
TWO_VARIABLE_MACROS = "twoVarComprehensions"
MACROS: dict[str, KubernetesVersion] = {
    "optMap": _v(28),
    "optFlatMap": _v(28),
    TWO_VARIABLE_MACROS: _v(32),
    "transformList": _v(32),
    "transformMap": _v(32),
    "transformMapEntry": _v(32),
    "sortBy": _v(34),
}

# Functions and macros Kubernetes does not have, available at every version: cel-go
# extensions Kubernetes does not enable (ext.Math, ext.Encoders, ext.Bindings, cel.block)
# and our own (quantityMilli, includes). The policy layer's functions (labelSelector,
# count, ...) are ours as well; they are declared in policysched.policy.
OWN_EXTENSIONS: frozenset[str] = frozenset({
    "math.abs", "math.bitAnd", "math.bitNot", "math.bitOr", "math.bitShiftLeft",
    "math.bitShiftRight", "math.bitXor", "math.ceil", "math.floor", "math.greatest",
    "math.isFinite", "math.isInf", "math.isNaN", "math.least", "math.ln", "math.round",
    "math.sign", "math.sqrt", "math.trunc",
    "base64.decode", "base64.encode",
    "cel.bind", "cel.block",
    "quantityMilli", "includes",
})

UNKNOWN_VERSION = ("unknown CEL compatibility version {version!r}: use a Kubernetes version "
                   "from {oldest} to {newest}")
_VERSION = re.compile(r"^(\d+)\.(\d+)$")


def parse_version(text: str) -> KubernetesVersion:
    """``"1.34"`` → the version; ``ValueError`` (with the supported range) for anything
    else."""
    found = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if found:
        version = KubernetesVersion(int(found[1]), int(found[2]))
        if version in SUPPORTED_VERSIONS:
            return version
    raise ValueError(UNKNOWN_VERSION.format(
        version=text, oldest=SUPPORTED_VERSIONS[0], newest=SUPPORTED_VERSIONS[-1]))
