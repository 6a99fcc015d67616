"""Unit tests of policysched.cel.library.format (the Kubernetes format CEL library).

Cases and messages are Kubernetes' (k8s.io/apiserver/pkg/cel/library/format_test.go and
apiextensions-apiserver's CEL validation tests); the edge cases were checked against
Kubernetes' own ``ConstantFormats`` validators built from the module cache.
"""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import CelError, Environment, compile_expression
from policysched.cel.library import format as fmt
from policysched.cel.values import OptionalValue, type_of

ENV = Environment()

LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
         "and must start and end with an alphanumeric character (e.g. 'my-name',  or "
         "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
           "with an alphabetic character, and end with an alphanumeric character (e.g. "
           "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
QNAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
         "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
         "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def evaluate(expr: str) -> Any:
    return compile_expression(expr, ENV).evaluate({})


# k8s.io/apiserver/pkg/cel/library/format_test.go: (expression, messages or None)
KUBERNETES_CASES = [
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("apiextensions.k8s.io")', None),
    ('format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', None),
    ('format.dns1123LabelPrefix().validate("my-label-prefix-")', None),
    ('format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', None),
    ('format.dns1035LabelPrefix().validate("my-label-prefix-")', None),
    ('format.uri().validate("http://example.com")', None),
    ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', None),
    ('format.byte().validate("aGVsbG8=")', None),
    ('format.date().validate("2021-01-01")', None),
    ('format.datetime().validate("2021-01-01T00:00:00Z")', None),
    ('format.dns1123Label().validate("contains a space")', [LABEL]),
    ('format.dns1123Subdomain().validate("contains a space")', [SUBDOMAIN]),
    ('format.dns1035Label().validate("contains a space")', [DNS1035]),
    ('format.qualifiedName().validate("contains a space")', ["name part " + QNAME]),
    ('format.dns1123LabelPrefix().validate("contains a space-")', [LABEL]),
    ('format.dns1123SubdomainPrefix().validate("contains a space-")', [SUBDOMAIN]),
    ('format.dns1035LabelPrefix().validate("contains a space-")', [DNS1035]),
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("example.com")', None),
    ('format.dns1035Label().validate("my-label-name")', None),
    ('format.qualifiedName().validate("my.name")', None),
    ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
    ('format.date().validate("2020-01-01")', None),
    ('format.date().validate("2020-01-32")', ["invalid date"]),
    ('format.datetime().validate("2020-01-01T00:00:00Z")', None),
    ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
    ('format.labelValue().validate("my-cool-label-Value")', None),
    ('format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")', [LABEL_VALUE]),
    # further edge cases (checked against Kubernetes' validators)
    ('format.dns1123Label().validate("a.b")', ["must not contain dots"]),
    ('format.dns1123Label().validate("' + "a" * 64 + '")', ["must be no more than 63 characters"]),
    ('format.dns1123Label().validate("é")', [LABEL]),
    ('format.dns1123LabelPrefix().validate("ab-")', None),
    ('format.dns1123LabelPrefix().validate("-")', [LABEL]),
    ('format.qualifiedName().validate("/a")', ["prefix part must be non-empty"]),
    ('format.qualifiedName().validate("a/")',
     ["name part must be non-empty", "name part " + QNAME]),
    ('format.qualifiedName().validate("A_/b")', ["prefix part " + SUBDOMAIN]),
    ('format.qualifiedName().validate("a/b/c")',
     ["a qualified name " + QNAME + " with an optional DNS subdomain prefix and '/' "
      "(e.g. 'example.com/MyName')"]),
    ('format.labelValue().validate("")', None),
    ('format.uuid().validate("123E4567E89B12D3A456426614174000")', None),
    ('format.uuid().validate("123e4567")', ["does not match the UUID format"]),
    ('format.byte().validate("")', ["invalid base64"]),
    ('format.date().validate("2020-02-29")', None),
    ('format.date().validate("2021-02-29")', ["invalid date"]),
    ('format.date().validate("2021-1-01")', ["invalid date"]),
    ('format.datetime().validate("2021-01-01t23:59:59.5+01:00")', None),
    ('format.datetime().validate("2021-01-01T24:00:00Z")', ["invalid datetime"]),
    ('format.datetime().validate("2021-01-01T00:00:00Ztrailing")', None),  # as strfmt
    ('format.uri().validate("../x")', ['parse "../x": invalid URI for request']),
]


@pytest.mark.parametrize(("expr", "messages"), KUBERNETES_CASES)
def test_validate(expr: str, messages: list[str] | None) -> None:
    result = evaluate(expr)
    assert result == (OptionalValue.NONE if messages is None else OptionalValue(messages))


@pytest.mark.parametrize("name", sorted(fmt.FORMATS))
def test_named_formats_and_equality(name: str) -> None:
    assert evaluate(f"format.named('{name}').hasValue()") is True
    assert evaluate(f"format.named('{name}').value() == format.{name}()") is True
    for other in fmt.FORMATS:
        if other != name:
            assert evaluate(f"format.{name}() == format.{other}()") is False


def test_unknown_name_is_none_not_an_error() -> None:
    assert evaluate("format.named('unknown')") == OptionalValue.NONE
    # so it is not rejected when compiled either
    assert compile_expression("format.named('nope').hasValue()", ENV).type.name == "bool"


def test_kubernetes_documentation_example() -> None:
    rule = "format.dns1123Label().validate(name).hasValue()"
    message = "format.dns1123Label().validate(name).value().join('\\n')"
    from policysched.cel.types import STRING

    env = Environment(variables={"name": STRING})
    assert compile_expression(rule, env).evaluate({"name": "Bad Name"}) is True
    assert compile_expression(message, env).evaluate({"name": "Bad Name"}) == LABEL


def test_types_and_overloads() -> None:
    assert type_of(fmt.FORMATS["uri"]).name == "kubernetes.NamedFormat"
    assert evaluate("type(format.uri()) == kubernetes.NamedFormat") is True
    assert compile_expression("format.named('uri')", ENV).type.name == "optional_type"
    with pytest.raises(CelError, match="no such overload"):
        compile_expression("format.named(dyn(1))", ENV).evaluate({})


def test_validate_cost_grows_with_the_string() -> None:
    short = compile_expression("format.uri().validate('a')", ENV).cost
    long = compile_expression("format.uri().validate('" + "a" * 100 + "')", ENV).cost
    assert long > short * 5
