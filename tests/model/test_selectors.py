"""Kubernetes' matching functions (``model.selectors``) against Kubernetes' own test cases:
k8s.io/apimachinery's ``TestLabelSelectorAsSelector``, ``TestRequirementConstructor``,
``TestSelectorMatches``, ``TestRequirementSelectorMatching``, ``TestIsLabelKey`` /
``TestIsLabelValue``; component-helpers' ``TestPodMatchesNodeSelectorAndAffinityTerms``,
``TestNodeSelectorMatch``, ``TestPreferredSchedulingTermsScore`` and
``TestFindMatchingUntoleratedTaint``; k8s.io/api's ``TestTolerationToleratesTaint`` (with the
alpha comparison operators off); kube-scheduler's affinity terms. Then malformed input of
every shape: nothing but ``SelectorError`` may come out.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import pytest

from policysched.cel.values import UInt
from policysched.model import selectors as s
from policysched.model.selectors import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    Requirement,
    SelectorError,
)


@pytest.fixture(autouse=True)
def fresh_caches() -> None:
    s.clear_caches()


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def selector(*expressions: dict[str, Any], **labels: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if labels:
        out["matchLabels"] = labels
    if expressions:
        out["matchExpressions"] = list(expressions)
    return out


def error_of(fn: Any, *args: Any) -> str:
    with pytest.raises(SelectorError) as e:
        fn(*args)
    return str(e.value)


# --------------------------------------------------------------------------- label selectors


@pytest.mark.parametrize(("obj", "want"), [
    (None, NOTHING),
    ({}, EVERYTHING),
    ({"matchLabels": {}, "matchExpressions": []}, EVERYTHING),
    ({"matchLabels": None, "matchExpressions": None}, EVERYTHING),
    (selector(foo="bar"), LabelSelector((Requirement("foo", "In", ("bar",)),))),
    (selector(expr("baz", "In", "qux", "norf")),
     LabelSelector((Requirement("baz", "In", ("norf", "qux")),))),
    (selector(expr("baz", "In", "qux", "norf"), foo="bar"),
     LabelSelector((Requirement("baz", "In", ("norf", "qux")),
                    Requirement("foo", "In", ("bar",))))),
])
def test_label_selector_as_selector(obj: Any, want: LabelSelector) -> None:
    """TestLabelSelectorAsSelector: nil selects nothing, empty everything."""
    before = copy.deepcopy(obj)
    assert s.label_selector(obj) == want
    assert obj == before  # the input is not modified


def test_nothing_and_everything() -> None:
    assert not NOTHING.matches({}) and not NOTHING.matches({"x": "y"})
    assert EVERYTHING.matches({}) and EVERYTHING.matches({"x": "y"})
    assert NOTHING.key != EVERYTHING.key


# TestRequirementConstructor, as label selector expressions (and matchLabels for Equals)
VALID_REQUIREMENTS = [
    expr("x3", "In", "foo"), expr("x4", "NotIn", "foo"), expr("x6", "Exists"),
    expr("x7", "DoesNotExist"), expr("x9", "In", "bar"), expr("x10", "In", ""),
    expr("this-is-a-dns.domain.com/key-with-dash", "Exists"),
]
INVALID_REQUIREMENTS = [
    (expr("x1", "In"), "matchExpressions[0].values: Invalid value: []: for 'in', 'notin' "
     "operators, values set can't be empty"),
    (expr("x2", "NotIn"), "values set can't be empty"),
    (expr("x8", "Exists", "foo"), 'matchExpressions[0].values: Invalid value: ["foo"]: '
     "values set must be empty for exists and does not exist"),
    (expr("x8", "DoesNotExist", "foo"), "values set must be empty"),
    (expr("a" * 254, "Exists"), "matchExpressions[0].key: Invalid value: "),
    (expr("x16", "In", "a" * 254), "matchExpressions[0].values[0]: Invalid value: "),
    (expr("x17", "In", "a b"), 'matchExpressions[0].values[0]: Invalid value: "a b": a valid '
     "label must be an empty string or consist of alphanumeric characters"),
    (expr("x18", "unsupportedOp"), 'matchExpressions[0].operator: "unsupportedOp" is not a '
     "valid label selector operator"),
    (expr("x19", "Gt", "1"), '"Gt" is not a valid label selector operator'),
    (expr("x20", ""), '"" is not a valid label selector operator'),
    ({"operator": "Exists"}, 'matchExpressions[0].key: Invalid value: "": name part must be '
     "non-empty"),
    (expr("a/b/c", "Exists"), "a valid label key must consist of alphanumeric characters"),
]


@pytest.mark.parametrize("requirement", VALID_REQUIREMENTS, ids=lambda r: r["key"][:20])
def test_valid_requirements(requirement: dict[str, Any]) -> None:
    s.label_selector(selector(requirement))


@pytest.mark.parametrize(("requirement", "message"), INVALID_REQUIREMENTS,
                         ids=[r.get("key", "")[:20] for r, _ in INVALID_REQUIREMENTS])
def test_invalid_requirements_say_what_is_wrong(requirement: dict[str, Any],
                                                message: str) -> None:
    assert message in error_of(s.label_selector, selector(requirement))


def test_match_labels_are_validated_as_requirements() -> None:
    assert error_of(s.label_selector, {"matchLabels": {"x16": "a" * 254}}).startswith(
        'matchLabels.x16: Invalid value: "aaaa')
    assert "name part must consist" in error_of(s.label_selector,
                                                {"matchLabels": {"bad key": "v"}})
    assert s.label_selector({"matchLabels": {"k": ""}}).matches({"k": ""})


# TestSelectorMatches / TestRequirementSelectorMatching: (selector, labels, match)
MATCHING = [
    (selector(), {"x": "y"}, True),
    (selector(x="y"), {"x": "y"}, True),
    (selector(x="y", z="w"), {"x": "y", "z": "w"}, True),
    (selector(expr("x", "NotIn", "y"), expr("z", "NotIn", "w")), {"x": "z", "z": "a"}, True),
    (selector(notin="in"), {"notin": "in"}, True),
    (selector(expr("x", "Exists")), {"x": "z"}, True),
    (selector(expr("x", "DoesNotExist")), {"y": "z"}, True),
    (selector(x="z"), {}, False),
    (selector(x="y"), {"x": "z"}, False),
    (selector(x="y", z="w"), {"x": "w", "z": "w"}, False),
    (selector(expr("x", "NotIn", "y"), expr("z", "NotIn", "w")), {"x": "z", "z": "w"}, False),
    (selector(expr("x", "Exists")), {"y": "z"}, False),
    (selector(expr("x", "DoesNotExist")), {"x": "z"}, False),
    (selector(foo="bar", baz="blah"), {"foo": "bar", "baz": "blah"}, True),
    (selector(foo="blah"), {"foo": "bar", "baz": "blah"}, False),
    (selector(foo="bar", foobar="bar", baz="blah"), {"foo": "bar", "baz": "blah"}, False),
    (selector(expr("x", "In", "foo"), expr("y", "NotIn", "alpha")), {"x": "foo", "y": "baz"},
     True),
    (selector(expr("x", "In", "foo"), expr("y", "In", "alpha")), {"x": "foo", "y": "baz"},
     False),
    (selector(expr("x", "NotIn", ""), expr("y", "Exists")), {"y": ""}, True),
    (selector(expr("x", "DoesNotExist"), expr("y", "Exists")), {"y": ""}, True),
    (selector(expr("x", "NotIn", ""), expr("y", "DoesNotExist")), {"y": ""}, False),
    (selector(expr("x", "In", "")), {"y": "baz"}, False),
    (selector(expr("x", "In", "")), {"x": ""}, True),
]


@pytest.mark.parametrize(("obj", "labels", "want"), MATCHING)
def test_selector_matches(obj: dict[str, Any], labels: dict[str, str], want: bool) -> None:
    assert s.label_selector(obj).matches(labels) is want


def test_the_key_is_canonical() -> None:
    same = [selector(a="x", b="y"), selector(expr("b", "In", "y"), expr("a", "In", "x")),
            selector(expr("a", "In", "x", "x"), b="y"),
            selector(expr("b", "In", "y"), expr("a", "In", "x"), a="x")]
    keys = {s.label_selector(o).key for o in same}
    assert len(keys) == 1
    assert s.label_selector(selector(expr("a", "In", "x", "y"))) == s.label_selector(
        selector(expr("a", "In", "y", "x")))
    assert s.label_selector(selector(a="x")).key != s.label_selector(
        selector(expr("a", "NotIn", "x"))).key
    assert hash(s.label_selector(same[0])) == hash(s.label_selector(same[1]))


@pytest.mark.parametrize("key", [
    "simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple",
    "now-with-dashes/simple", "now.with.dots/simple", "1-num.2-num/3-num", "1.2.3.4/5678",
    "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123", "requests.storage-foo",
    "a" * 63, "a" * 253 + "/" + "b" * 63])
def test_label_keys_kube_accepts(key: str) -> None:
    assert s.label_key_errors(key) == []


@pytest.mark.parametrize("key", [
    "nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash",
    "Example.com/abc", "example_com/abc", "example.com/", "/simple", "a" * 64,
    "a" * 254 + "/abc", "", "a..b/c", "é"])
def test_label_keys_kube_refuses(key: str) -> None:
    assert s.label_key_errors(key)


@pytest.mark.parametrize(("value", "valid"), [
    ("simple", True), ("now-with-dashes", True), ("1-starts-with-num", True),
    ("end-with-num-1", True), ("1234", True), ("a" * 63, True), ("", True),
    ("nospecialchars%^=@", False), ("Tama-nui-te-rā.is.Māori.sun", False),
    ("\\backslashes\\are\\bad", False), ("-starts-with-dash", False),
    ("ends-with-dash-", False), (".starts.with.dot", False), ("ends.with.dot.", False),
    ("a" * 64, False)])
def test_label_values(value: str, valid: bool) -> None:
    assert (s.label_value_errors(value) == []) is valid


@pytest.mark.parametrize(("text", "want"), [
    ("0", 0), ("5", 5), ("+5", 5), ("-5", -5), ("0206", 206), ("0" * 30 + "1", 1),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
    ("9223372036854775808", None), ("-9223372036854775809", None), ("", None), ("+", None),
    ("5_0", None), (" 5", None), ("5 ", None), ("0x10", None), ("1e3", None), ("٣", None),
    ("1" * 5000, None)])
def test_parse_int64_is_strconv_parse_int(text: str, want: int | None) -> None:
    assert s.parse_int64(text) == want


# --------------------------------------------------------------------------- merging


def test_merged_label_selector_adds_the_pods_values() -> None:
    labels = {"app": "web", "rev": "7", "team": "a"}
    merged = s.merged_label_selector(selector(app="web"), ["rev", "absent"], ["team"], labels)
    assert merged == s.label_selector(selector(expr("team", "NotIn", "a"), app="web", rev="7"))
    assert merged.matches({"app": "web", "rev": "7", "team": "b"})
    assert not merged.matches({"app": "web", "rev": "8", "team": "b"})
    assert not merged.matches({"app": "web", "rev": "7", "team": "a"})


def test_merged_label_selector_keeps_nil_and_empty_keys() -> None:
    labels = {"rev": "7"}
    assert s.merged_label_selector(None, ["rev"], [], labels) is NOTHING
    assert s.merged_label_selector({}, ["rev"], None, labels) == s.label_selector(
        selector(rev="7"))
    assert s.merged_label_selector({}, None, None, labels) is EVERYTHING
    assert s.merged_label_selector({}, ["other"], [], labels) is EVERYTHING
    # the same key merged twice (kube-apiserver, then kube-scheduler) changes nothing
    twice = s.merged_label_selector(selector(rev="7"), ["rev"], [], labels)
    assert twice == s.label_selector(selector(rev="7"))


# --------------------------------------------------------------------------- node affinity


def required(*terms: dict[str, Any] | None) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": list(terms)}}}


def term(*expressions: dict[str, Any], fields: list[dict[str, Any]] | None = None
         ) -> dict[str, Any]:
    out: dict[str, Any] = {"matchExpressions": list(expressions)}
    if fields is not None:
        out["matchFields"] = fields
    return out


NAME_IN_NODE_1 = [expr("metadata.name", "In", "node_1")]

# TestPodMatchesNodeSelectorAndAffinityTerms: (nodeSelector, affinity, labels, name, match)
NODE_AFFINITY = [
    ({}, None, {}, "", True),
    ({"foo": "bar"}, None, {}, "", False),
    ({"foo": "bar"}, None, {"foo": "bar"}, "", True),
    ({"foo": "bar"}, None, {"foo": "bar", "baz": "blah"}, "", True),
    ({"foo": "bar", "baz": "blah"}, None, {"foo": "bar"}, "", False),
    ({}, required(term(expr("foo", "In", "bar", "value2"))), {"foo": "bar"}, "", True),
    ({}, required(term(expr("kernel-version", "Gt", "0204"))), {"kernel-version": "0206"}, "",
     True),
    ({}, required(term(expr("mem-type", "NotIn", "DDR", "DDR2"))), {"mem-type": "DDR3"}, "",
     True),
    ({}, required(term(expr("GPU", "Exists"))), {"GPU": "NVIDIA-GRID-K1"}, "", True),
    ({}, required(term(expr("foo", "In", "value1", "value2"))), {"foo": "bar"}, "", False),
    ({}, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": None}}}, {"foo": "bar"}, "", False),
    ({}, required(), {"foo": "bar"}, "", False),
    ({}, required(term()), {"foo": "bar"}, "", False),
    ({}, {}, {"foo": "bar"}, "", True),
    ({}, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}},
     {"foo": "bar"}, "", True),
    ({}, required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))),
     {"GPU": "NVIDIA-GRID-K1"}, "", True),
    ({}, required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER"))),
     {"GPU": "NVIDIA-GRID-K1"}, "", False),
    ({}, required(term(expr("foo", "In", "bar", "value2")),
                  term(expr("diffkey", "In", "wrong", "value2"))), {"foo": "bar"}, "", True),
    ({"foo": "bar"}, required(term(expr("foo", "Exists"))), {"foo": "bar"}, "", True),
    ({"foo": "bar"}, required(term(expr("foo", "Exists"))), {"foo": "barrrrrr"}, "", False),
    ({}, required(term(expr("foo", "NotIn", "invalid value: ___@#$%^"))), {"foo": "bar"}, "",
     False),
    ({}, required(term(fields=NAME_IN_NODE_1)), {}, "node_1", True),
    ({}, required(term(fields=NAME_IN_NODE_1)), {}, "node_2", False),
    ({}, required(term(fields=NAME_IN_NODE_1), term(expr("foo", "In", "bar"))),
     {"foo": "bar"}, "node_2", True),
    ({}, required(term(expr("foo", "In", "bar"), fields=NAME_IN_NODE_1)), {"foo": "bar"},
     "node_2", False),
    ({}, required(term(expr("foo", "In", "bar"), fields=NAME_IN_NODE_1)), {"foo": "bar"},
     "node_1", True),
    ({}, required(term(fields=NAME_IN_NODE_1), term(expr("foo", "In", "not-match-to-bar"))),
     {"foo": "bar"}, "node_2", False),
    # TestNodeSelectorMatch: a term with an invalid requirement matches nothing, the others
    # still count
    ({}, required(term(fields=[expr("metadata.name", "In", "host_1", "host_2")]),
                  term(expr("label_1", "In", "label_1_val"),
                       fields=[expr("metadata.name", "In", "host_1")]),
                  term(expr("invalid key", "In", "label_value"))),
     {"label_1": "label_1_val"}, "host_1", True),
    ({}, required(term(expr("label_1", "In", "label_1_val"),
                       fields=[expr("metadata.name", "In", "host_1")])), {}, "host_1", False),
]


@pytest.mark.parametrize(("node_selector", "affinity", "labels", "name", "want"), NODE_AFFINITY)
def test_required_node_affinity(node_selector: dict[str, str], affinity: Any,
                                labels: dict[str, str], name: str, want: bool) -> None:
    assert s.required_node_affinity(node_selector, affinity).matches(labels, name) is want


@pytest.mark.parametrize(("requirement", "labels", "want"), [
    (expr("n", "Gt", "5"), {"n": "6"}, True),
    (expr("n", "Gt", "5"), {"n": "5"}, False),
    (expr("n", "Lt", "5"), {"n": "-7"}, True),
    (expr("n", "Lt", "5"), {"n": "+4"}, True),
    (expr("n", "Gt", "5"), {"n": "1e3"}, False),  # not an integer: no match
    (expr("n", "Gt", "5"), {"n": "9223372036854775808"}, False),  # beyond int64
    (expr("n", "Gt", "5"), {}, False),
    (expr("n", "Lt", "5"), {}, False),
    (expr("n", "Gt", "-5"), {"n": "0"}, False),  # "-5" is no label value: the term is invalid
    (expr("n", "Gt", "5", "6"), {"n": "9"}, False),  # exactly one value
    (expr("n", "Gt", "five"), {"n": "9"}, False),
    (expr("n", "Gt"), {"n": "9"}, False),
    (expr("n", "In"), {"n": "9"}, False),
    (expr("n", "Exists", "9"), {"n": "9"}, False),
    (expr("n", "Bogus", "9"), {"n": "9"}, False),
])
def test_node_selector_requirements(requirement: dict[str, Any], labels: dict[str, str],
                                    want: bool) -> None:
    affinity = required(term(requirement))
    assert s.required_node_affinity({}, affinity).matches(labels, "node") is want


@pytest.mark.parametrize(("field", "name", "want"), [
    (expr("metadata.name", "NotIn", "node_1"), "node_2", True),
    (expr("metadata.name", "NotIn", "node_1"), "node_1", False),
    # other fields read as "" (a fields.Set lookup)
    (expr("metadata.uid", "In", ""), "node_1", True),
    (expr("metadata.uid", "NotIn", "x"), "node_1", True),
    (expr("metadata.uid", "In", "x"), "node_1", False),
    # a node without a name: matchFields are not looked at
    (expr("metadata.name", "In", "node_1"), "", True),
    # invalid field requirements: the term matches nothing
    (expr("metadata.name", "In", "node_1", "node_2"), "node_1", False),
    (expr("metadata.name", "In"), "node_1", False),
    (expr("metadata.name", "Exists"), "node_1", False),
])
def test_match_fields(field: dict[str, Any], name: str, want: bool) -> None:
    affinity = required(term(fields=[field]))
    assert s.required_node_affinity({}, affinity).matches({}, name) is want


@pytest.mark.parametrize(("affinity", "want"), [
    # kube's nodeaffinity plugin tests (TestNodeAffinity, wantPreFilterResult)
    (required(term(fields=NAME_IN_NODE_1)), {"node_1"}),
    (required(term(fields=[expr("metadata.name", "In", "node1")]),
              term(fields=[expr("metadata.name", "In", "node2")])), {"node1", "node2"}),
    # a term that names no node: every node (the terms are ORed)
    (required(term(fields=NAME_IN_NODE_1), term(expr("foo", "In", "bar"))), None),
    (required(term(expr("foo", "In", "bar"), fields=NAME_IN_NODE_1)), {"node_1"}),
    # requirements of a term are ANDed: "Pod with two conflicting mach field requirements"
    (required(term(fields=[expr("metadata.name", "In", "node1"),
                           expr("metadata.name", "In", "node2")])), set()),
    (required(term(fields=[expr("metadata.name", "In", "a", "b"),
                           expr("metadata.name", "In", "b", "c")])), {"b"}),
    # NotIn names no node; values are read as given, even where the term is invalid
    (required(term(fields=[expr("metadata.name", "NotIn", "node1")])), None),
    (required(term(expr("bad key", "Exists"), fields=NAME_IN_NODE_1)), {"node_1"}),
    (required(), None),
    (None, None),
])
def test_node_names_of_the_required_terms(affinity: Any, want: set[str] | None) -> None:
    names = s.required_node_affinity({}, affinity).node_names
    assert names == (None if want is None else frozenset(want))


def test_equivalent_node_affinities_have_one_key() -> None:
    a = s.required_node_affinity({"b": "2", "a": "1"}, required(
        term(expr("x", "In", "1", "2")), term(fields=NAME_IN_NODE_1),
        term(expr("bad key", "Exists"))))
    b = s.required_node_affinity({"a": "1", "b": "2"}, required(
        term(fields=NAME_IN_NODE_1), term(expr("x", "In", "2", "1")), term()))
    assert a == b and a.key == b.key and hash(a) == hash(b)
    assert s.required_node_affinity({}, None).key != s.required_node_affinity(
        {}, required()).key


def preferred(*items: tuple[Any, dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": p} for w, p in items]}}


def test_preferred_scheduling_terms_score() -> None:
    """TestPreferredSchedulingTermsScore: first and third term match."""
    affinity = preferred((5, term(fields=[expr("metadata.name", "In", "host_1")])),
                         (7, term(expr("unknown_label", "In", "unknown_label_val"))),
                         (11, term(expr("label_1", "In", "label_1_val"))))
    assert s.preferred_node_affinity(affinity).score({"label_1": "label_1_val"}, "host_1") == 16
    assert s.preferred_node_affinity(affinity).score({}, "host_2") == 0
    assert s.preferred_node_affinity(None).score({}, "host_2") == 0
    assert s.preferred_node_affinity({}).score({}, "host_2") == 0


def test_preferred_terms_kube_cannot_parse_are_an_error() -> None:
    affinity = preferred((1, term(fields=[expr("metadata.name", "In", "host_1", "host_2")])),
                         (1, term(expr("label_1", "In", "label_1_val"),
                                  fields=[expr("metadata.name", "In", "host_1")])),
                         (1, term(expr("invalid key", "In", "label_value"))))
    message = error_of(s.preferred_node_affinity, affinity)
    prefix = "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    assert message == (
        f'{prefix}[0].preference.matchFields[0].values: Invalid value: ["host_1", "host_2"]: '
        f"must have one element; {prefix}[2].preference.matchExpressions[0].key: Invalid "
        "value: \"invalid key\": name part must consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or "
        "'my.name', or '123-abc')")
    assert "Unsupported value: \"Bogus\": supported values: \"In\", \"NotIn\", \"Exists\"" in \
        error_of(s.preferred_node_affinity, preferred((1, term(expr("a", "Bogus")))))


def test_preferred_terms_of_weight_zero_or_without_requirements_are_skipped() -> None:
    """An invalid term of weight 0 is no error (TestPreferredSchedulingTermsScore)."""
    affinity = preferred(
        (0, term(fields=[expr("metadata.name", "In", "host_1", "host_2")])),
        (None, term(expr("bad key", "Exists"))), (3, term()), (4, {}), (5, None))
    assert s.preferred_node_affinity(affinity).terms == ()
    assert s.preferred_node_affinity(affinity).score({}, "host_1") == 0


def test_preferred_weights_add_up_even_when_terms_repeat() -> None:
    affinity = preferred((2, term(expr("a", "Exists"))), (2, term(expr("a", "Exists"))),
                         (-1, term(expr("b", "Exists"))))
    assert s.preferred_node_affinity(affinity).score({"a": "", "b": ""}, "n") == 3


@pytest.mark.parametrize("weight", [1.5, "3", True, 2**31, -(2**31) - 1, UInt(3)])
def test_a_preferred_weight_must_be_an_int32(weight: Any) -> None:
    assert "weight: must be a 32-bit integer" in error_of(
        s.preferred_node_affinity, preferred((weight, term(expr("a", "Exists")))))


# --------------------------------------------------------------------------- tolerations

NO_SCHEDULE = "NoSchedule"

# TestTolerationToleratesTaint (comparison operators off) and the rules of ToleratesTaint
TOLERATIONS = [
    ({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
     {"key": "foo", "effect": NO_SCHEDULE}, True),
    ({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),
    ({"key": "", "operator": "Exists", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),
    ({"key": "foo", "operator": "Equal", "value": "value1", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "value2", "effect": NO_SCHEDULE}, False),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": "NoExecute"}, False),
    ({"key": "node.kubernetes.io/sla", "operator": "Gt", "value": "750",
      "effect": NO_SCHEDULE},
     {"key": "node.kubernetes.io/sla", "value": "950", "effect": NO_SCHEDULE}, False),
    ({"key": "node.kubernetes.io/sla", "operator": "Lt", "value": "950",
      "effect": NO_SCHEDULE},
     {"key": "node.kubernetes.io/sla", "value": "800", "effect": NO_SCHEDULE}, False),
    # an empty effect tolerates every effect; an operator "" is Equal
    ({"key": "foo", "operator": "Exists"}, {"key": "foo", "effect": "NoExecute"}, True),
    ({"key": "foo", "value": "bar"}, {"key": "foo", "value": "bar", "effect": "X"}, True),
    ({"key": "foo", "operator": "", "value": "bar"}, {"key": "foo", "value": "baz"}, False),
    ({"operator": "Exists"}, {"key": "anything", "value": "v", "effect": "NoExecute"}, True),
    # an empty key with Equal (the API refuses it, ToleratesTaint does not): values compared
    ({"key": "", "operator": "Equal"}, {"key": "foo", "effect": NO_SCHEDULE}, True),
    ({"key": "", "operator": "Equal"}, {"key": "foo", "value": "v"}, False),
    ({"key": "foo", "operator": "exists"}, {"key": "foo"}, False),  # operators are exact
    ({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE}, {"key": "bar",
                                                                  "effect": NO_SCHEDULE}, False),
]


@pytest.mark.parametrize(("toleration", "taint", "want"), TOLERATIONS)
def test_tolerates(toleration: dict[str, Any], taint: dict[str, Any], want: bool) -> None:
    assert s.tolerates(toleration, taint) is want


EXISTS_FOO = {"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE}


@pytest.mark.parametrize(("tolerations", "taints", "effects", "want"), [
    ([], [], (NO_SCHEDULE,), None),
    ([EXISTS_FOO], [], (NO_SCHEDULE,), None),
    ([EXISTS_FOO], [{"key": "foo", "effect": NO_SCHEDULE}], (NO_SCHEDULE,), None),
    ([EXISTS_FOO], [{"key": "bar", "effect": NO_SCHEDULE}], (), None),
    ([EXISTS_FOO], [{"key": "bar", "effect": NO_SCHEDULE}], (NO_SCHEDULE,),
     {"key": "bar", "effect": NO_SCHEDULE}),
    ([{"key": "foo", "operator": "Exists", "effect": "NoExecute"}],
     [{"key": "foo", "effect": "NoExecute"}, {"key": "bar", "effect": NO_SCHEDULE}],
     ("NoExecute",), None),
    ([], [{"key": "a", "effect": "PreferNoSchedule"}, {"key": "b", "effect": "NoExecute"},
          {"key": "c", "effect": NO_SCHEDULE}], (NO_SCHEDULE, "NoExecute"),
     {"key": "b", "effect": "NoExecute"}),
])
def test_untolerated_taint(tolerations: list[Any], taints: list[Any], effects: tuple[str, ...],
                           want: Any) -> None:
    """TestFindMatchingUntoleratedTaint: the first taint of these effects not tolerated."""
    assert s.untolerated_taint(tolerations, taints, effects) == want


# --------------------------------------------------------------------------- pod affinity


def test_a_term_without_namespaces_is_about_its_owners_namespace() -> None:
    t = s.pod_affinity_term({"labelSelector": selector(app="web"), "topologyKey": "zone"},
                            "prod", {})
    assert t.namespaces == frozenset({"prod"}) and t.namespace_selector is NOTHING
    assert t.topology_key == "zone"
    assert t.selects({"app": "web"}, "prod")
    assert not t.selects({"app": "web"}, "dev")
    assert not t.selects({"app": "db"}, "prod")


@pytest.mark.parametrize(("term", "namespace", "namespace_labels", "want"), [
    ({"namespaces": ["a", "b"]}, "b", None, True),
    ({"namespaces": ["a", "b"]}, "own", None, False),  # listed namespaces replace the owner's
    ({"namespaces": []}, "own", None, True),  # an empty list is no list
    # namespaceSelector {} selects every namespace, known or not
    ({"namespaceSelector": {}}, "x", None, True),
    ({"namespaceSelector": {}}, "own", {"env": "prod"}, True),
    # a non-empty one needs the namespace's labels: unknown namespace, only `namespaces`
    ({"namespaceSelector": selector(env="prod")}, "x", {"env": "prod"}, True),
    ({"namespaceSelector": selector(env="prod")}, "x", {"env": "dev"}, False),
    ({"namespaceSelector": selector(env="prod")}, "x", None, False),
    ({"namespaceSelector": selector(env="prod")}, "own", None, False),  # not the owner's
    ({"namespaceSelector": selector(expr("env", "DoesNotExist"))}, "x", {}, True),
    ({"namespaceSelector": selector(expr("env", "DoesNotExist"))}, "x", None, False),
    ({"namespaceSelector": selector(env="prod"), "namespaces": ["a"]}, "a", None, True),
    ({"namespaceSelector": selector(env="prod"), "namespaces": ["a"]}, "b", {"env": "prod"},
     True),
    # namespaceSelector null is absent
    ({"namespaceSelector": None}, "own", None, True),
])
def test_namespaces_and_namespace_selector(term: dict[str, Any], namespace: str,
                                           namespace_labels: dict[str, str] | None,
                                           want: bool) -> None:
    """kube-scheduler's AffinityTerm.Matches: the union of namespaces and the namespaces the
    selector selects; then the label selector."""
    t = s.pod_affinity_term({**term, "labelSelector": {}}, "own", {})
    assert t.selects({"app": "web"}, namespace, namespace_labels) is want


def test_a_term_without_label_selector_selects_no_pod() -> None:
    for labels in (None, {"app": "web"}):
        t = s.pod_affinity_term({"topologyKey": "zone", "matchLabelKeys": ["app"]}, "ns",
                                labels)
        assert t.selector is NOTHING
        assert not t.selects({"app": "web"}, "ns")


def test_a_term_is_read_as_stored() -> None:
    """kube-scheduler reads a pod affinity term's selector as the API server stored it
    (with matchLabelKeys / mismatchLabelKeys merged at creation)."""
    t = s.pod_affinity_term({"labelSelector": selector(app="web"), "topologyKey": "zone",
                             "matchLabelKeys": ["rev"], "mismatchLabelKeys": ["team"]}, "ns")
    assert t.selector == s.label_selector(selector(app="web"))


def test_match_label_keys_are_merged_with_the_owners_labels() -> None:
    owner = {"app": "web", "rev": "7", "team": "a"}
    t = s.pod_affinity_term({"labelSelector": selector(app="web"), "topologyKey": "zone",
                             "matchLabelKeys": ["rev", "missing"],
                             "mismatchLabelKeys": ["team"]}, "ns", owner)
    assert t.selector == s.label_selector(selector(expr("team", "NotIn", "a"), app="web",
                                                   rev="7"))
    assert t.selects({"app": "web", "rev": "7", "team": "b"}, "ns")
    assert t.selects({"app": "web", "rev": "7"}, "ns")
    assert not t.selects({"app": "web", "rev": "6", "team": "b"}, "ns")
    assert not t.selects({"app": "web", "rev": "7", "team": "a"}, "ns")


def test_merging_again_ands_with_what_the_api_server_merged() -> None:
    """kube-scheduler merges a spread constraint's matchLabelKeys at every attempt, on top of
    the API server's merge (mergeLabelSetWithSelector): the same labels change nothing, a
    label changed since creation leaves no pod selected."""
    merged = {"labelSelector": selector(expr("rev", "In", "7"), app="web"),
              "matchLabelKeys": ["rev"], "topologyKey": "zone"}
    same = s.pod_affinity_term(merged, "ns", {"app": "web", "rev": "7"})
    assert same.selector == s.pod_affinity_term(merged, "ns").selector
    changed = s.pod_affinity_term(merged, "ns", {"app": "web", "rev": "8"})
    assert not changed.selects({"app": "web", "rev": "7"}, "ns")
    assert not changed.selects({"app": "web", "rev": "8"}, "ns")


def test_terms_of_a_workload_share_one_value() -> None:
    term = {"labelSelector": selector(app="web"), "topologyKey": "zone",
            "matchLabelKeys": ["rev"]}
    a = s.pod_affinity_term(term, "ns", {"app": "web", "rev": "7", "pod": "a"})
    b = s.pod_affinity_term(copy.deepcopy(term), "ns", {"app": "web", "rev": "7", "pod": "b"})
    assert a is b
    c = s.pod_affinity_term(term, "other", {"app": "web", "rev": "7"})
    assert c != a and c.key != a.key
    listed = {**term, "namespaces": ["ns"]}
    assert s.pod_affinity_term(listed, "x", {"rev": "7"}) is s.pod_affinity_term(
        listed, "y", {"rev": "7"})
    assert s.pod_affinity_term(listed, "x", {"rev": "7"}).key == a.key


def test_invalid_terms_say_where() -> None:
    assert error_of(s.pod_affinity_term, {"labelSelector": selector(expr("a", "Foo"))}, "ns",
                    {}) == ('labelSelector.matchExpressions[0].operator: "Foo" is not a valid '
                            "label selector operator")
    assert error_of(s.pod_affinity_term, {"namespaceSelector": {"matchLabels": {"a": 1}}},
                    "ns", {}) == "namespaceSelector.matchLabels.a: must be a string, not an " \
                                 "integer"
    assert error_of(s.pod_affinity_term, {"namespaces": "ns"}, "ns", {}) == (
        "namespaces: must be a list, not a string")
    # a merged requirement is validated like the others
    assert "matchLabelKeys[0]: Invalid value" in error_of(
        s.pod_affinity_term, {"labelSelector": {}, "matchLabelKeys": ["k"]}, "ns",
        {"k": "not a label value"})


# --------------------------------------------------------------------------- caching


def test_a_parse_is_cached_by_content() -> None:
    obj = selector(expr("a", "In", "x"), b="y")
    first = s.label_selector(obj)
    assert s.label_selector(copy.deepcopy(obj)) is first
    obj["matchLabels"]["b"] = "z"  # a changed object is parsed again
    assert s.label_selector(obj) != first
    affinity = required(term(expr("x", "Exists")))
    assert s.required_node_affinity({}, affinity) is s.required_node_affinity(
        {}, copy.deepcopy(affinity))


def test_a_cached_error_is_raised_every_time() -> None:
    bad = selector(expr("a", "Foo"))
    messages = {error_of(s.label_selector, bad) for _ in range(3)}
    assert len(messages) == 1


def test_values_json_cannot_tell_apart_are_not_confused() -> None:
    """1 and UInt(1), a str subclass and its str: cached apart or not at all."""
    assert s.preferred_node_affinity(preferred((1, term(expr("a", "Exists"))))).score(
        {"a": ""}, "n") == 1
    with pytest.raises(SelectorError):
        s.preferred_node_affinity(preferred((UInt(1), term(expr("a", "Exists")))))
    assert s.preferred_node_affinity(preferred((1, term(expr("a", "Exists"))))).score(
        {"a": ""}, "n") == 1


def test_a_result_depends_on_the_content_not_on_what_was_cached_first() -> None:
    """JSON has no NaN: a NaN weight reads as null (absent) whether cached or not."""
    nan, null = (preferred((w, term(expr("a", "Exists")))) for w in (math.nan, None))
    first = s.preferred_node_affinity(nan)
    s.clear_caches()
    s.preferred_node_affinity(null)
    assert s.preferred_node_affinity(nan) == first == s.preferred_node_affinity(null)


def test_the_cache_is_bounded() -> None:
    memo = s._Memo(size=3)
    for i in range(10):
        assert memo.get(i, lambda i=i: i * 2) == i * 2
    assert list(memo._entries) == [7, 8, 9]
    memo.get(7, lambda: -1)  # a hit: most recently used now
    memo.get(10, lambda: 20)
    assert list(memo._entries) == [9, 7, 10]


# --------------------------------------------------------------------------- hostile input

BAD_VALUES: list[Any] = [
    None, 0, -1, 2**70, 1.5, math.nan, math.inf, True, "", "x" * 10_000, "\ud800", [], {},
    [None], [1], {"": None}, {1: "a"}, {(1, 2): "a"}, object(), {"a"}, b"bytes", UInt(3),
    [[[]]], {"key": {"key": {}}},
]


def mutations(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` with some part replaced by something of another shape."""
    if rng.random() < 0.25 or depth > 6:
        return rng.choice(BAD_VALUES)
    if isinstance(value, dict) and value:
        out = dict(value)
        key = rng.choice(list(out))
        out[key] = mutations(rng, out[key], depth + 1)
        return out
    if isinstance(value, list) and value:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        out_list[i] = mutations(rng, out_list[i], depth + 1)
        return out_list
    return rng.choice(BAD_VALUES)


VALID_TERM = {"labelSelector": selector(expr("a", "In", "x"), b="y"),
              "namespaceSelector": selector(expr("env", "Exists")), "namespaces": ["n"],
              "topologyKey": "zone", "matchLabelKeys": ["rev"], "mismatchLabelKeys": ["t"]}
VALID_AFFINITY = {"nodeAffinity": {
    **required(term(expr("a", "Gt", "1"), fields=NAME_IN_NODE_1))["nodeAffinity"],
    **preferred((3, term(expr("b", "In", "x"))))["nodeAffinity"]}}
VALID_TOLERATION = {"key": "k", "operator": "Equal", "value": "v", "effect": NO_SCHEDULE}
VALID_TAINT = {"key": "k", "value": "v", "effect": NO_SCHEDULE}
LABELS = {"a": "x", "b": "y", "rev": "1", "t": "2"}

# each function with valid arguments; a call also uses the result
CALLS: dict[str, tuple[Any, list[Any]]] = {
    "label_selector": (lambda o: s.label_selector(o).matches(LABELS),
                       [VALID_TERM["labelSelector"]]),
    "merged_label_selector": (
        lambda *a: s.merged_label_selector(*a).matches(LABELS),
        [VALID_TERM["labelSelector"], ["rev"], ["t"], LABELS]),
    "required_node_affinity": (lambda *a: s.required_node_affinity(*a).matches(LABELS, "n"),
                               [{"a": "x"}, VALID_AFFINITY]),
    "preferred_node_affinity_score": (
        lambda affinity, labels, name: s.preferred_node_affinity(affinity).score(labels, name),
        [VALID_AFFINITY, LABELS, "n"]),
    "tolerates": (s.tolerates, [VALID_TOLERATION, VALID_TAINT]),
    "untolerated_taint": (s.untolerated_taint, [[VALID_TOLERATION], [VALID_TAINT],
                                                [NO_SCHEDULE]]),
    "pod_affinity_term": (lambda *a: s.pod_affinity_term(*a).selects(LABELS, "n", {}),
                          [VALID_TERM, "ns", LABELS]),
}
# arguments the Python API takes on trust (labels and names the engine gives, typed)
TRUSTED = {("preferred_node_affinity_score", 1), ("preferred_node_affinity_score", 2),
           ("untolerated_taint", 2)}


def outcome(call: Any, args: list[Any]) -> None:
    try:
        call(*args)
    except SelectorError as e:
        assert str(e)


@pytest.mark.parametrize("name", list(CALLS))
def test_malformed_input_raises_only_selector_errors(name: str) -> None:
    call, valid = CALLS[name]
    call(*valid)  # the valid input works
    rng = random.Random(name)
    failures = 0
    for _ in range(400):
        i = rng.randrange(len(valid))
        if (name, i) in TRUSTED:
            continue
        args = list(valid)
        args[i] = mutations(rng, args[i])
        try:
            call(*args)
        except SelectorError:
            failures += 1
    assert failures > 50  # the garbage was noticed


@pytest.mark.parametrize("value", BAD_VALUES, ids=lambda v: repr(v)[:20])
def test_any_value_as_any_argument(value: Any) -> None:
    for name, (call, valid) in CALLS.items():
        for i in range(len(valid)):
            if (name, i) not in TRUSTED:
                outcome(call, [*valid[:i], value, *valid[i + 1:]])


def test_huge_input_is_reported_briefly() -> None:
    message = error_of(s.label_selector, selector(expr("k", "Foo" * 100_000)))
    assert len(message) < 300
    values = [str(i) for i in range(100_000)]
    big = s.label_selector(selector(expr("k", "In", *values)))
    assert big.matches({"k": "99999"}) and not big.matches({"k": "x"})
