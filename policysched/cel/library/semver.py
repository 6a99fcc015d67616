"""Kubernetes' CEL semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go, version 1
as Kubernetes 1.34 enables it): ``semver('1.2.3')``, ``isSemver(s)``, both with an optional
``normalize`` flag, and ``major()`` / ``minor()`` / ``patch()``; the comparisons are in
``comparisons``.

Parsing is blang/semver v4's ``Parse`` with its error texts: exactly ``MAJOR.MINOR.PATCH``,
no leading zeros, an optional ``-prerelease`` and ``+build`` of dot-separated
``[0-9A-Za-z-]`` identifiers, numbers up to 2^64-1 (``major()`` then returns the int64 Go's
conversion gives: 18446744073709551615 is -1). With ``normalize``, a leading ``v`` is
dropped, leading zeros are removed and a missing minor or patch is 0 (``semver('v1.2',
true)`` is 1.2.0). Versions compare by semver precedence; equality ignores build metadata
(``semver('1.0.0+a') == semver('1.0.0+b')``).

Unlike Kubernetes, which validates no semver literal when it compiles, a literal
``semver()`` refuses is a compile error here.
"""

from __future__ import annotations

from typing import Any

from ..types import BOOL, INT, STRING, Type
from ..values import CelError, TypeValue, no_such_overload, register_type
from .function import Function, Overload
from .go_text import go_quote

SEMVER_T = Type("kubernetes.Semver")

_NUMBERS = frozenset("0123456789")
_ALPHANUMERIC = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = 2**64 - 1


class Semver:
    """A CEL ``kubernetes.Semver``; prerelease identifiers are ints (numeric) or strs."""

    __slots__ = ("build", "major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[int | str, ...],
                 build: tuple[str, ...]) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build

    def compare(self, other: Semver) -> int:
        """Semver precedence (blang's ``Version.Compare``): -1, 0 or 1."""
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return 1 if a > b else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for x, y in zip(self.pre, other.pre, strict=False):
            if x != y:
                if type(x) is not type(y):
                    return -1 if type(x) is int else 1  # numeric identifiers sort first
                return 1 if x > y else -1  # type: ignore[operator]
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        return type(other) is Semver and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash(("semver", self.major, self.minor, self.patch, self.pre))

    def identity(self) -> tuple[object, ...]:
        """Equal versions differ by their build metadata."""
        return (self.major, self.minor, self.patch, self.pre, self.build)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"semver('{self}')"


register_type(Semver, TypeValue("kubernetes.Semver"), Semver.identity)


# --------------------------------------------------------------------------- parsing


def _number(s: str, what: str) -> int:
    """A major / minor / patch number (``containsOnly``, no leading zero, ``ParseUint``)."""
    if not set(s) <= _NUMBERS:
        raise CelError(f"Invalid character(s) found in {what} number {go_quote(s)}")
    if len(s) > 1 and s[0] == "0":
        raise CelError(f"{what.capitalize()} number must not contain leading zeroes "
                       f"{go_quote(s)}")
    return _parse_uint(s)


def _parse_uint(s: str) -> int:
    """Go's ``strconv.ParseUint(s, 10, 64)`` of ASCII digits."""
    if not s:
        raise CelError(f"strconv.ParseUint: parsing {go_quote(s)}: invalid syntax")
    n = int(s)
    if n > _UINT64_MAX:
        raise CelError(f"strconv.ParseUint: parsing {go_quote(s)}: value out of range")
    return n


def _prerelease(s: str) -> int | str:
    if not s:
        raise CelError("Prerelease is empty")
    if set(s) <= _NUMBERS:
        if len(s) > 1 and s[0] == "0":
            raise CelError("Numeric PreRelease version must not contain leading zeroes "
                           f"{go_quote(s)}")
        return _parse_uint(s)
    if set(s) <= _ALPHANUMERIC:
        return s
    raise CelError(f"Invalid character(s) found in prerelease {go_quote(s)}")


def parse(s: str) -> Semver:
    """blang/semver's ``Parse``; raises ``CelError`` with its message."""
    if not s:
        raise CelError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise CelError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest, plus, build_text = parts[2].partition("+")
    build = build_text.split(".") if plus else []
    patch, minus, pre_text = rest.partition("-")
    pre = pre_text.split(".") if minus else []
    patch_number = _number(patch, "patch")
    prerelease = tuple(_prerelease(p) for p in pre)
    for b in build:
        if not b:
            raise CelError("Build meta data is empty")
        if not set(b) <= _ALPHANUMERIC:
            raise CelError(f"Invalid character(s) found in build meta data {go_quote(b)}")
    return Semver(major, minor, patch_number, prerelease, tuple(build))


def parse_normalized(s: str) -> Semver:
    """Kubernetes' ``normalizeAndParse``: no ``v`` prefix, no leading zeros, a missing minor
    or patch is 0."""
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in "+-" for c in parts[-1]):
            raise CelError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


# --------------------------------------------------------------------------- functions


def _flag(name: str, s: Any, normalize: Any) -> bool:
    if type(s) is not str or type(normalize) is not bool:
        raise no_such_overload(name, s, normalize)
    return normalize


def _semver(s: Any, normalize: Any = False) -> Semver:
    return parse_normalized(s) if _flag("semver", s, normalize) else parse(s)


def _is_semver(s: Any, normalize: Any = False) -> bool:
    flag = _flag("isSemver", s, normalize)
    try:
        parse_normalized(s) if flag else parse(s)
    except CelError:
        return False
    return True


def _literal_check(s: str) -> None:
    """Refuse a literal semver() refuses with either flag (normalising accepts every
    version the strict parse does; the flag is not known here)."""
    parse_normalized(s)


def _component(name: str) -> Any:
    def impl(v: Any) -> int:
        if type(v) is not Semver:
            raise no_such_overload(name, v)
        n: int = getattr(v, name)
        return n - 2**64 if n >= 2**63 else n  # Go's int64(uint64)

    impl.__name__ = name
    return impl


def _component_fn(name: str, example: str) -> Function:
    return Function(name, (Overload(f"semver_{name}", (SEMVER_T,), INT, member=True),),
                    _component(name), doc=f"the {name} version number",
                    examples=(example,))


FUNCTIONS: list[Function] = [
    Function(
        "semver",
        (Overload("string_to_semver", (STRING,), SEMVER_T),
         Overload("string_bool_to_semver", (STRING, BOOL), SEMVER_T)),
        _semver,
        cost_per_size=True,
        doc="parse a semantic version (semver.org); with `true`, normalise it first "
            "(drop a leading v and leading zeros, fill a missing minor or patch with 0)",
        examples=("semver('1.2.3-rc.1+build.5')", "semver('v1.2', true) == semver('1.2.0')"),
        literal_check=_literal_check,
    ),
    Function(
        "isSemver",
        (Overload("is_semver_string", (STRING,), BOOL),
         Overload("is_semver_string_bool", (STRING, BOOL), BOOL)),
        _is_semver,
        cost_per_size=True,
        doc="whether semver() accepts the string (with the same optional normalize flag)",
        examples=("isSemver('1.2.3')", "isSemver('v1.2')", "isSemver('v1.2', true)"),
    ),
    _component_fn("major", "semver('1.2.3').major()"),
    _component_fn("minor", "semver('1.2.3').minor()"),
    _component_fn("patch", "semver('1.2.3').patch()"),
]
