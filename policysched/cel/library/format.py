"""The Kubernetes CEL format library: named string formats (``format.dns1123Label()``,
``format.named('uuid')``) and ``<Format>.validate(s)``, which is ``optional.none()`` for a
valid string and otherwise ``optional.of(messages)``.

The checks and messages are Kubernetes' own (k8s.io/apiserver/pkg/cel/library/format.go):
apimachinery's ``IsDNS1123Label`` and friends for the name formats (their length limits
count UTF-8 bytes, as Go does), Go's ``url.ParseRequestURI`` for ``uri``, and kube-openapi's
strfmt validators for ``uuid``, ``byte`` (base64), ``date`` and ``datetime``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..types import STRING, Type, list_of, optional_of
from ..values import CelError, OptionalValue, TypeValue, no_such_overload, register_type
from .function import Function, Overload, member_overload
from .go_text import go_bytes
from .url import parse_request_uri

FORMAT_TYPE = TypeValue("kubernetes.NamedFormat")
FORMAT_T = Type("kubernetes.NamedFormat")

# --------------------------------------------------------------------------- apimachinery

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"

_LABEL_RE = re.compile(_LABEL_FMT.encode())
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT.encode())
_DNS1035_RE = re.compile(_DNS1035_FMT.encode())
_QNAME_RE = re.compile(_QNAME_FMT.encode())
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT.encode())

_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
              "or '-', and must start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character")
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
              "end with an alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError``."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def _dns1123_label(v: bytes) -> list[str]:
    errs = [_max_len_error(63)] if len(v) > 63 else []
    if not _LABEL_RE.fullmatch(v):
        if _SUBDOMAIN_RE.fullmatch(v):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(v: bytes) -> list[str]:
    errs = [_max_len_error(253)] if len(v) > 253 else []
    if not _SUBDOMAIN_RE.fullmatch(v):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def _dns1035_label(v: bytes) -> list[str]:
    errs = [_max_len_error(63)] if len(v) > 63 else []
    if not _DNS1035_RE.fullmatch(v):
        errs.append(_regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def _qualified_name(v: bytes) -> list[str]:
    errs: list[str] = []
    parts = v.split(b"/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _QNAME_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name",
                                                "123-abc"))
    return errs


def _label_value(v: bytes) -> list[str]:
    errs = [_max_len_error(63)] if len(v) > 63 else []
    if not _LABEL_VALUE_RE.fullmatch(v):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value",
                                 "12345"))
    return errs


def _mask_trailing_dash(v: bytes) -> bytes:
    """apimachinery's ``maskTrailingDash`` for generated-name prefixes; it drops the dash
    *and* the character before it (Kubernetes' behaviour, kept)."""
    if len(v) > 1 and v.endswith(b"-"):
        return v[:-2] + b"a"
    return v


def _prefix(check: Callable[[bytes], list[str]]) -> Callable[[bytes], list[str]]:
    return lambda v: check(_mask_trailing_dash(v))


# --------------------------------------------------------------------------- strfmt

_UUID_RE = re.compile(
    rb"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
_BASE64_RE = re.compile(
    rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
_DATE_RE = re.compile(rb"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME_RE = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date(v: bytes) -> bool:
    """Go's ``time.Parse("2006-01-02", v)`` succeeds (month and day in range)."""
    m = _DATE_RE.fullmatch(v)
    if m is None:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _MONTH_DAYS[month - 1] + (1 if month == 2 and leap else 0)


def _is_datetime(v: bytes) -> bool:
    """strfmt's ``IsDateTime``: a date, 't' (any case) and a time matched by its pattern;
    anything after a further 't' is ignored (as strfmt does)."""
    if len(v) < 4:
        return False
    parts = v.decode("utf-8", errors="replace").lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0].encode()):
        return False
    m = _TIME_RE.fullmatch(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def _uri(v: bytes) -> list[str]:
    try:
        parse_request_uri(v.decode("utf-8", errors="replace"))
    except CelError as e:
        return [str(e)]
    return []


def _matching(test: Callable[[bytes], object], message: str) -> Callable[[bytes], list[str]]:
    return lambda v: [] if test(v) else [message]


# --------------------------------------------------------------------------- the type


class Format:
    """A ``kubernetes.NamedFormat`` (``key`` is its CEL name): equal by ``name``."""

    __slots__ = ("check", "key", "name")

    def __init__(self, key: str, name: str, check: Callable[[bytes], list[str]]) -> None:
        self.key = key
        self.name = name
        self.check = check

    def __eq__(self, other: object) -> bool:
        return type(other) is Format and other.name == self.name

    def __hash__(self) -> int:
        return hash(("format", self.name))

    def __str__(self) -> str:
        return self.name  # as Kubernetes names it (DNS1123Label, date ...)

    def __repr__(self) -> str:
        return f"format.{self.key}()"


register_type(Format, FORMAT_TYPE)

# Kubernetes' ConstantFormats: the CEL name, its Name (what equality compares), the check.
FORMATS: dict[str, Format] = {
    key: Format(key, name, check)
    for key, name, check in (
        ("dns1123Label", "DNS1123Label", _dns1123_label),
        ("dns1123Subdomain", "DNS1123Subdomain", _dns1123_subdomain),
        ("dns1035Label", "DNS1035Label", _dns1035_label),
        ("qualifiedName", "QualifiedName", _qualified_name),
        ("dns1123LabelPrefix", "DNS1123LabelPrefix", _prefix(_dns1123_label)),
        ("dns1123SubdomainPrefix", "DNS1123SubdomainPrefix", _prefix(_dns1123_subdomain)),
        ("dns1035LabelPrefix", "DNS1035LabelPrefix", _prefix(_dns1035_label)),
        ("labelValue", "LabelValue", _label_value),
        ("uri", "URI", _uri),
        ("uuid", "uuid", _matching(_UUID_RE.fullmatch, "does not match the UUID format")),
        ("byte", "byte", _matching(_BASE64_RE.fullmatch, "invalid base64")),
        ("date", "date", _matching(_is_date, "invalid date")),
        ("datetime", "datetime", _matching(_is_datetime, "invalid datetime")),
    )
}

_DOCS = {
    "dns1123Label": "an RFC 1123 label: lower case alphanumerics and '-', at most 63 characters",
    "dns1123Subdomain": "an RFC 1123 subdomain: dot-separated labels, at most 253 characters",
    "dns1035Label": "an RFC 1035 label: as dns1123Label, starting with a letter",
    "qualifiedName": "a qualified name ('example.com/MyName'): an optional subdomain prefix "
                     "and '/', a name of alphanumerics, '-', '_', '.'",
    "dns1123LabelPrefix": "a dns1123Label that may end with '-' (a generateName prefix)",
    "dns1123SubdomainPrefix": "a dns1123Subdomain that may end with '-' (a generateName prefix)",
    "dns1035LabelPrefix": "a dns1035Label that may end with '-' (a generateName prefix)",
    "labelValue": "a label value: empty, or at most 63 alphanumerics, '-', '_', '.'",
    "uri": "a URI as url() accepts it",
    "uuid": "a UUID (any case, dashes optional)",
    "byte": "standard base64 with padding",
    "date": "an RFC 3339 full-date ('2021-01-01')",
    "datetime": "an RFC 3339 date-time ('2021-01-01T00:00:00Z')",
}

_EXAMPLE_INPUT = {
    "dns1123Label": "my-label-name",
    "dns1123Subdomain": "apiextensions.k8s.io",
    "dns1035Label": "my-label-name",
    "qualifiedName": "apiextensions.k8s.io/v1beta1",
    "dns1123LabelPrefix": "my-label-prefix-",
    "dns1123SubdomainPrefix": "mysubdomain.prefix.-",
    "dns1035LabelPrefix": "my-label-prefix-",
    "labelValue": "my-cool-label-Value",
    "uri": "http://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "byte": "aGVsbG8=",
    "date": "2021-01-01",
    "datetime": "2021-01-01T00:00:00Z",
}


def _named(name: Any) -> OptionalValue:
    if type(name) is not str:
        raise no_such_overload("format.named", name)
    found = FORMATS.get(name)
    return OptionalValue.NONE if found is None else OptionalValue(found)


def _validate(f: Any, s: Any) -> OptionalValue:
    if type(f) is not Format or type(s) is not str:
        raise no_such_overload("validate", f, s)
    errors = f.check(go_bytes(s))
    return OptionalValue(errors) if errors else OptionalValue.NONE


def _constant(key: str) -> Function:
    value = FORMATS[key]

    def impl() -> Format:
        return value

    impl.__name__ = key
    return Function(f"format.{key}", (Overload(f"format.{key}", (), FORMAT_T),), impl,
                    doc=f"the format of {_DOCS[key]} (for validate)",
                    examples=(f"format.{key}().validate('{_EXAMPLE_INPUT[key]}')",))


# validate's cost per character of its input: Kubernetes charges the traversal of a regular
# expression of MaxNameFormatRegexSize (128) characters, a quarter unit per character.
VALIDATE_COST = 32

FUNCTIONS: list[Function] = [
    Function(
        "format.named",
        (Overload("format-named", (STRING,), optional_of(FORMAT_T)),),
        _named,
        doc="the format of that name (dns1123Label, dns1123Subdomain, dns1035Label, "
            "qualifiedName, dns1123LabelPrefix, dns1123SubdomainPrefix, dns1035LabelPrefix, "
            "labelValue, uri, uuid, byte, date, datetime), or optional.none()",
        examples=("format.named('dns1123Label')", "format.named('unknown')"),
    ),
    Function(
        "validate",
        (member_overload("format-validate", (FORMAT_T, STRING), optional_of(list_of(STRING))),),
        _validate,
        cost=VALIDATE_COST,
        cost_per_size=True,
        size_arg=1,
        doc="optional.none() when the string has the format, else optional.of(the reasons "
            "it has not), with Kubernetes' messages",
        examples=("format.dns1123Label().validate('contains a space')",
                  "format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000')"),
    ),
    *(_constant(key) for key in FORMATS),
]
