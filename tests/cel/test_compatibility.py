"""The CEL compatibility version table: versions, and every function classified."""

from __future__ import annotations

import pytest

from policysched.cel.compatibility import (
    DEFAULT_VERSION,
    FUNCTIONS,
    MACROS,
    OWN_EXTENSIONS,
    SUPPORTED_VERSIONS,
    KubernetesVersion,
    parse_version,
)
from policysched.cel.library import standard_library


def test_versions() -> None:
    assert parse_version("1.34") == DEFAULT_VERSION == KubernetesVersion(1, 34)
    assert parse_version(" 1.28 ") == KubernetesVersion(1, 28)
    assert str(SUPPORTED_VERSIONS[0]) == "1.23" and SUPPORTED_VERSIONS[-1] == DEFAULT_VERSION
    assert KubernetesVersion(1, 9) < KubernetesVersion(1, 28) < KubernetesVersion(2, 0)


@pytest.mark.parametrize("text", ["1.35", "1.22", "2.0", "1", "1.34.1", "v1.34", "", "1.3"])
def test_unknown_version_says_what_is_known(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_version(text)
    assert str(info.value) == (f"unknown CEL compatibility version {text!r}: use a "
                               "Kubernetes version from 1.23 to 1.34")


def test_every_library_function_is_kubernetes_or_our_own() -> None:
    """A function added to the library must say whether Kubernetes has it (and since
    which release) or it is our extension: otherwise the version would not gate it."""
    names = set(standard_library())
    assert not OWN_EXTENSIONS & set(FUNCTIONS)
    unclassified = names - set(FUNCTIONS) - OWN_EXTENSIONS - {
        # CEL's standard definitions: every version
        "bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type",
        "uint", "size", "contains", "endsWith", "startsWith", "matches",
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear",
        "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds"}
    assert not unclassified


def test_gates_follow_kubernetes_base_environment() -> None:
    v = KubernetesVersion
    assert not v(1, 27).has_function("optional.of") and v(1, 28).has_function("optional.of")
    assert not v(1, 32).has_function("semver") and v(1, 33).has_function("semver")
    assert not v(1, 33).has_function("sort") and v(1, 34).has_function("sort")
    assert v(1, 23).has_function("math.greatest") and v(1, 23).has_function("labelSelector")
    assert not v(1, 31).has_macro("transformList") and v(1, 32).has_macro("transformList")
    assert not v(1, 33).has_macro("sortBy") and v(1, 34).has_macro("sortBy")
    assert v(1, 23).has_macro("all") and v(1, 23).has_macro("cel.bind")
    assert not v(1, 27).cross_type_numeric_comparisons and v(1, 28).optional_syntax
    assert all(version in SUPPORTED_VERSIONS or version.minor == 0
               for version in (*FUNCTIONS.values(), *MACROS.values()))
