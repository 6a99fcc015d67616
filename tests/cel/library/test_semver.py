"""Unit tests of policysched.cel.library.semver (Kubernetes' semver library, version 1).

The cases of Kubernetes' library/semver_test.go, then blang/semver's error texts and
precedence rules as Kubernetes 1.34 (semver v4.0.0) gives them."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import CelCompileError, Environment, compile_expression
from policysched.cel.library import semver
from policysched.cel.library.semver import Semver, parse, parse_normalized
from policysched.cel.types import STRING
from policysched.cel.values import CelError

F = {f.name: f.impl for f in semver.FUNCTIONS}


def run(expr: str) -> Any:
    return compile_expression(expr, Environment()).evaluate({})


# TestSemver (k8s.io/apiserver/pkg/cel/library/semver_test.go)
@pytest.mark.parametrize(("expr", "expected"), [
    ('isSemver("1.2.3-beta.1+build.1")', True),
    ('isSemver("")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("1. 0.0")', False),
    ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False),
    ('isSemver("1")', False),
    ('isSemver("1.1")', False),
    ('isSemver("", true)', False),
    ('isSemver(" 1.0.0", true)', False),
    ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1", true)', True),
    ('isSemver("1.1", true)', True),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("1.2.3") == semver("1.2.3")', True),
    ('semver("1.2.3") == semver("1.0.0")', False),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
    ('semver("1.2.3").major()', 1),
    ('semver("1.2.3").minor()', 2),
    ('semver("1.2.3").patch()', 3),
    # the library's documentation
    ('semver("1.2.3").compareTo(semver("0.1.2"))', 1),
    ('semver("1.0", true) == semver("1.0.0") && semver("01.01.01", true) == semver("1.1.1")',
     True),
    ('type(semver("1.0.0")) == kubernetes.Semver', True),
    ('semver("18446744073709551615.0.0").major()', -1),  # Go's int64(uint64)
])
def test_kubernetes_cases(expr: str, expected: Any) -> None:
    got = run(expr)
    assert got == expected and type(got) is type(expected)


# semver.org's precedence example: 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta < ...
PRECEDENCE = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
              "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0",
              "2.0.0"]


def test_precedence() -> None:
    versions = [parse(v) for v in PRECEDENCE]
    for i, a in enumerate(versions):
        for j, b in enumerate(versions):
            assert a.compare(b) == (i > j) - (i < j), (PRECEDENCE[i], PRECEDENCE[j])


def test_build_metadata_is_shown_but_not_compared() -> None:
    a, b = parse("1.2.3-rc.1+build.5"), parse("1.2.3-rc.1+other")
    assert a == b and hash(a) == hash(b) and a.identity() != b.identity()
    assert str(a) == "1.2.3-rc.1+build.5" and repr(b) == "semver('1.2.3-rc.1+other')"
    assert str(parse_normalized("v01.02")) == "1.2.0"


@pytest.mark.parametrize(("text", "message"), [
    ("", "Version string empty"),
    ("v1.0", "No Major.Minor.Patch elements found"),
    ("1.2", "No Major.Minor.Patch elements found"),
    ("a.2.3", 'Invalid character(s) found in major number "a"'),
    ("01.2.3", 'Major number must not contain leading zeroes "01"'),
    ("1.x.3", 'Invalid character(s) found in minor number "x"'),
    ("1.02.3", 'Minor number must not contain leading zeroes "02"'),
    ("1.2.x", 'Invalid character(s) found in patch number "x"'),
    ("1.2.3.4", 'Invalid character(s) found in patch number "3.4"'),
    ("1.2.03", 'Patch number must not contain leading zeroes "03"'),
    ("1..3", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("18446744073709551616.0.0",
     'strconv.ParseUint: parsing "18446744073709551616": value out of range'),
    ("1.2.3-", "Prerelease is empty"),
    ("1.2.3-a..b", "Prerelease is empty"),
    ("1.2.3-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ('1.2.3-a"b', 'Invalid character(s) found in prerelease "a\\"b"'),
    ("1.2.3-\u00e9", 'Invalid character(s) found in prerelease "\u00e9"'),
    ("1.2.3+a.", "Build meta data is empty"),
    ("1.2.3+a_b", 'Invalid character(s) found in build meta data "a_b"'),
])
def test_parse_errors_are_blangs(text: str, message: str) -> None:
    with pytest.raises(CelError) as info:
        parse(text)
    assert info.value.message == message
    assert F["isSemver"](text) is False


@pytest.mark.parametrize(("text", "message"), [
    ("v1.2-rc", "short version cannot contain PreRelease/Build meta data"),
    (" 1.0.0", 'Invalid character(s) found in major number "0 1"'),  # "0" is prefixed
    ("", 'strconv.ParseUint: parsing "": invalid syntax'),
])
def test_normalized_parse_errors(text: str, message: str) -> None:
    with pytest.raises(CelError) as info:
        parse_normalized(text)
    assert info.value.message == message


def test_literals_no_form_accepts_are_compile_errors() -> None:
    with pytest.raises(CelCompileError, match="invalid semver argument: Prerelease is empty"):
        compile_expression("semver('1.2.3-')", Environment())
    # a leading v passes the check (normalize accepts it); strict semver() fails at run time
    program = compile_expression("semver('v1.2.3')", Environment())
    with pytest.raises(CelError, match="Invalid character"):
        program.evaluate({})


@pytest.mark.parametrize(("expr", "message"), [
    ("isSemver([1, 2, 3])", "found no matching overload for 'isSemver' applied to"),
    ("semver('1.0.0', 'yes')", "found no matching overload for 'semver'"),
    ("semver('1.0.0').isLessThan(quantity('1'))", "found no matching overload for 'isLessThan'"),
])
def test_compile_errors(expr: str, message: str) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression(expr, Environment())
    assert message in info.value.message


@pytest.mark.parametrize(("name", "args"), [
    ("semver", (1,)), ("semver", ("1.0.0", 1)), ("isSemver", (None,)),
    ("isSemver", ("1.0.0", "true")), ("major", ("1.0.0",)), ("minor", (1,)), ("patch", (None,)),
])
def test_functions_refuse_other_types_at_run_time(name: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(CelError, match="no such overload"):
        F[name](*args)


def test_values_from_variables() -> None:
    program = compile_expression("semver(v, true).isGreaterThan(semver('1.28.0'))",
                                 Environment(variables={"v": STRING}))
    assert program.evaluate({"v": "v1.30"}) is True
    assert program.evaluate({"v": "1.9.9"}) is False
    assert isinstance(F["semver"]("1.2.3"), Semver)
