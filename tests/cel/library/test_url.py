"""Unit tests of policysched.cel.library.url (the Kubernetes URL CEL library).

Expressions are Kubernetes' own (apiextensions-apiserver's CEL validation tests and the
library's documentation, k8s.io/apiserver/pkg/cel/library/urls.go); parse results and error
texts were checked against Go's net/url (go1.26, ``godebug default=go1.24`` as Kubernetes
1.34 builds it).
"""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import CelCompileError, CelError, Environment, compile_expression
from policysched.cel.library import url
from policysched.cel.values import TYPE_IDENTIFIERS, type_of

ENV = Environment(variables={})


def evaluate(expr: str, **variables: Any) -> Any:
    from policysched.cel.types import DYN

    env = Environment(variables={name: DYN for name in variables})
    return compile_expression(expr, env).evaluate(variables)


# From apiextensions-apiserver pkg/apiserver/schema/cel/validation_test.go ("URL parsing").
KUBERNETES_VALID = [
    "url('/path').getScheme() == ''",
    "url('https://example.com/').getScheme() == 'https'",
    "url('https://example.com:80/').getHost() == 'example.com:80'",
    "url('https://example.com/').getHost() == 'example.com'",
    "url('https://[::1]:80/').getHost() == '[::1]:80'",
    "url('https://[::1]/').getHost() == '[::1]'",
    "url('/path').getHost() == ''",
    "url('https://example.com:80/').getHostname() == 'example.com'",
    "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
    "url('https://[::1]/').getHostname() == '::1'",
    "url('/path').getHostname() == ''",
    "url('https://example.com:80/').getPort() == '80'",
    "url('https://example.com/').getPort() == ''",
    "url('/path').getPort() == ''",
    "url('https://example.com/path').getEscapedPath() == '/path'",
    "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
    "url('https://example.com').getEscapedPath() == ''",
    "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == "
    "{ 'k1': ['a'], 'k2': ['b', 'c']}",
    "url('https://example.com/path?key with spaces=value with spaces').getQuery() == "
    "{ 'key with spaces': ['value with spaces']}",
    "url('https://example.com/path?').getQuery() == {}",
    "url('https://example.com/path').getQuery() == {}",
    "url(self.url).getScheme() == 'https'",
    "url(self.url).getHost() == 'kubernetes.io:80'",
    "url(self.url).getHostname() == 'kubernetes.io'",
    "url(self.url).getPort() == '80'",
    "url(self.url).getEscapedPath() == '/docs/home'",
    "url(self.url).getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
    "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
    "isURL('/path') == true",
    "isURL('https://a:b:c/') == false",
    "isURL('../relative-path') == false",
    "url('https:://kubernetes.io/').getHostname() != 'test'",
    "url('https://example.com/path with spaces/').getEscapedPath() == "
    "'/path%20with%20spaces/'",
    "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
]


@pytest.mark.parametrize("expr", KUBERNETES_VALID)
def test_kubernetes_cases(expr: str) -> None:
    self = {"url": "https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor"}
    assert evaluate(expr, self=self) is True


# Go's errors (url.ParseRequestURI), as Kubernetes wraps them.
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("../relative-path", 'parse "../relative-path": invalid URI for request'),
        ("", 'parse "": empty url'),
        ("https://a:b:c/", 'parse "https://a:b:c/": invalid port ":c" after host'),
        (":x", 'parse ":x": missing protocol scheme'),
        ("http://[1.2.3.4]/", 'parse "http://[1.2.3.4]/": invalid IP-literal'),
        ("http://[::1/", 'parse "http://[::1/": missing \']\' in host'),
        ("http://x[::1]/", 'parse "http://x[::1]/": invalid IP-literal'),
        ("http://[zz]/", 'parse "http://[zz]/": invalid host: ParseAddr("zz"): unable to parse IP'),
        ("http://[1.2.3.4]]/", 'parse "http://[1.2.3.4]]/": invalid host: '
         'ParseAddr("1.2.3.4]"): unexpected character (at "]")'),
        ("http://[::1]..]/", 'parse "http://[::1]..]/": invalid host: '
         'ParseAddr("::1].."): unexpected character, want colon (at "]..")'),
        ("http://[1::2::3]/", 'parse "http://[1::2::3]/": invalid host: '
         'ParseAddr("1::2::3"): multiple :: in address (at ":3")'),
        ("http://x%zz/", 'parse "http://x%zz/": invalid URL escape "%zz"'),
        ("http://x%41/", 'parse "http://x%41/": invalid URL escape "%41"'),
        ("http://a b/", 'parse "http://a b/": invalid character " " in host name'),
        ("/a\tb", 'parse "/a\\tb": net/url: invalid control character in URL'),
        ("http://us{er@host/", 'parse "http://us{er@host/": net/url: invalid userinfo'),
        ("/p%2", 'parse "/p%2": invalid URL escape "%2"'),
        ("/é%g", 'parse "/é%g": invalid URL escape "%g"'),
    ],
)
def test_parse_errors(text: str, reason: str) -> None:
    with pytest.raises(CelError) as info:
        url.FUNCTIONS[0].impl(text)
    assert info.value.message == f"URL parse error during conversion from string: {reason}"
    assert evaluate("isURL(s)", s=text) is False


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        # scheme, host, hostname, port, escaped path
        ("HTTPS://Example.com:8080/a%2fb", ("https", "Example.com:8080", "Example.com", "8080",
                                             "/a%2fb")),
        ("mailto:user@example.com", ("mailto", "", "", "", "")),
        ("*", ("", "", "", "", "*")),
        ("http://[fe80::1%25en0]:8080/", ("http", "[fe80::1%en0]:8080", "fe80::1%en0", "8080",
                                          "/")),
        ("http://host:/", ("http", "host:", "host", "", "/")),
        ("http://h:80:90/", ("http", "h:80:90", "h:80", "90", "/")),  # last colon (go1.24)
        ("http://u:p@h/a b?x#f g", ("http", "h", "h", "", "/a%20b")),
        ("//host/path", ("", "host", "host", "", "/path")),  # url.Parse reads an authority
        ("http://h/%7e", ("http", "h", "h", "", "/%7e")),
        ("http://h/~", ("http", "h", "h", "", "/~")),
    ],
)
def test_components(text: str, parts: tuple[str, ...]) -> None:
    u = url.FUNCTIONS[0].impl(text)
    got = tuple(evaluate(f"u.{f}()", u=u) for f in
                ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"))
    assert got == parts


def test_query_keeps_all_values_and_drops_malformed_pairs() -> None:
    q = evaluate("url('/p?a=1&a=2&b&=x&c=%zz&d;e=1&f=a+b%20c').getQuery()")
    assert q == {"a": ["1", "2"], "b": [""], "": ["x"], "f": ["a b c"]}


def test_fragment_is_not_part_of_path_or_query() -> None:
    assert evaluate("url('/p?k=v#frag').getQuery()") == {"k": ["v"]}
    assert evaluate("url('/p#frag').getEscapedPath()") == "/p"


def test_equality_compares_the_canonical_form() -> None:
    assert evaluate("url('HTTPS://ab/') == url('https://ab/')") is True
    assert evaluate("url('https://ab/') == url('https://ab')") is False
    assert evaluate("url('/a b') == url('/a%20b')") is True
    assert hash(url.FUNCTIONS[0].impl("/a b")) == hash(url.FUNCTIONS[0].impl("/a%20b"))


def test_type() -> None:
    u = url.FUNCTIONS[0].impl("/x")
    assert type_of(u).name == "kubernetes.URL"
    assert TYPE_IDENTIFIERS["kubernetes.URL"] == type_of(u)
    assert evaluate("type(url('/x')) == kubernetes.URL") is True


def test_bad_literal_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression("url('../x').getHost() == ''", ENV)
    assert "invalid url argument" in str(info.value)
    assert info.value.offset == 4
    # the same text not written as a literal fails when evaluated
    with pytest.raises(CelError):
        evaluate("url(s)", s="../x")


def test_wrong_argument_types() -> None:
    with pytest.raises(CelError, match="no such overload"):
        evaluate("url(s)", s=1)
    with pytest.raises(CelError, match="no such overload"):
        evaluate("s.getHost()", s="https://example.com")
    with pytest.raises(CelCompileError, match="no matching overload"):
        compile_expression("'https://x'.getHost()", ENV)


def test_a_lone_surrogate_is_go_s_replacement_character() -> None:
    # JSON can carry one into a string; Go's JSON decoding would have made it U+FFFD
    assert evaluate("url(s).getEscapedPath()", s="/a\ud800") == "/a%EF%BF%BD"
    assert evaluate("isURL(s)", s="\ud800") is False
    assert evaluate("format.dns1123Label().validate(s).hasValue()", s="\ud800") is True


def test_cost_is_a_string_traversal() -> None:
    short = compile_expression("url('/a').getHost()", ENV).cost
    long = compile_expression("url('/" + "a" * 400 + "').getHost()", ENV).cost
    assert long - short == 40  # 0.1 per character, as Kubernetes' url cost
