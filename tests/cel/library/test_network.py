"""Unit tests of policysched.cel.library.network (the Kubernetes IP/CIDR CEL library)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import Environment, compile_expression
from policysched.cel.library import network
from policysched.cel.values import TYPE_IDENTIFIERS, CelError, cel_equals, type_of

F = {f.name: f.impl for f in network.FUNCTIONS}


def ip(s: str) -> network.IP:
    return F["ip"](s)


def cidr(s: str) -> network.CIDR:
    return F["cidr"](s)


def error_of(name: str, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        F[name](*args)
    return info.value.message


def test_types_are_registered() -> None:
    assert type_of(ip("1.2.3.4")).name == "net.IP"
    assert type_of(cidr("1.2.3.0/24")).name == "net.CIDR"
    assert TYPE_IDENTIFIERS["net.IP"] == type_of(ip("::1"))
    assert TYPE_IDENTIFIERS["net.CIDR"] == type_of(cidr("::/0"))


# --------------------------------------------------------------------------- ip()


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("192.168.0.1", "192.168.0.1"),
        ("2001:db8::68", "2001:db8::68"),
        ("2001:DB8::68", "2001:db8::68"),
        ("::", "::"),
        ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),  # a single zero group is not compressed
        ("1:0:0:1:0:0:0:1", "1:0:0:1::1"),  # the longest zero run is compressed
        ("1:0:0:0:1:0:0:1", "1::1:0:0:1"),  # the first of equal runs
        ("::1.2.3.4", "::102:304"),
    ],
)
def test_ip_parse_and_string(text: str, canonical: str) -> None:
    assert str(ip(text)) == canonical
    assert network.to_string(ip(text)) == canonical
    assert F["ip.isCanonical"](text) is (text == canonical)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("192.168.0.1.0", "IP Address '192.168.0.1.0' parse error during conversion from string"),
        ("2001:db8:::68", "IP Address '2001:db8:::68' parse error"),
        ("01.2.3.4", "parse error"),
        ("1.2.3", "parse error"),
        (" 1.2.3.4", "parse error"),
        ("1.2.3.256", "parse error"),
        ("[::1]", "parse error"),
        ("\uff11.2.3.4", "parse error"),
        ("", "parse error"),
        ("1.2.3.4%eth0", "parse error"),
        ("fe80::1%en0", "IP Address with zone value is not allowed"),
        ("::ffff:192.168.0.1", "IPv4-mapped IPv6 address is not allowed"),
    ],
)
def test_ip_errors(text: str, message: str) -> None:
    assert message in error_of("ip", text)
    assert F["isIP"](text) is False


def test_hex_ipv4_mapped_addresses_are_their_ipv4_address() -> None:
    assert ip("::ffff:c0a8:1") == ip("192.168.0.1")
    assert ip("::ffff:c0a8:1") != ip("192.168.10.1")
    assert F["family"](ip("::ffff:c0a8:1")) == 4


def test_ip_equality_and_hash() -> None:
    assert ip("2001:db8::1") == ip("2001:DB8::1")
    assert hash(ip("2001:db8::1")) == hash(ip("2001:DB8::1"))
    assert ip("::") != ip("::ffff")
    assert ip("0.0.0.0") != ip("::")
    assert not cel_equals(ip("1.2.3.4"), "1.2.3.4")
    assert len({ip("10.0.0.1"), ip("10.0.0.1"), ip("10.0.0.2")}) == 2


def test_is_ip_and_is_canonical_types() -> None:
    assert F["isIP"]("192.168.0.1") is True
    assert F["isIP"]("2001:db8::68") is True
    assert "no such overload" in error_of("isIP", cidr("192.168.0.0/24"))
    assert "no such overload" in error_of("ip.isCanonical", 1)
    assert "parse error" in error_of("ip.isCanonical", "127.0.0.1.0")


# --------------------------------------------------------------------------- predicates

PREDICATES = ["isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
              "isGlobalUnicast"]


# Expected values from Go's net/netip (unspecified, loopback, llm, llu, global unicast).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.0.0.0", (True, False, False, False, False)),
        ("127.0.0.1", (False, True, False, False, False)),
        ("1.2.3.4", (False, False, False, False, True)),
        ("192.168.0.1", (False, False, False, False, True)),  # private is still global
        ("255.255.255.255", (False, False, False, False, False)),
        ("224.0.0.1", (False, False, True, False, False)),
        ("224.0.1.1", (False, False, False, False, False)),
        ("169.254.169.254", (False, False, False, True, False)),
        ("::", (True, False, False, False, False)),
        ("::1", (False, True, False, False, False)),
        ("2001:db8::abcd", (False, False, False, False, True)),
        ("ff00::1", (False, False, False, False, False)),
        ("ff02::1", (False, False, True, False, False)),
        ("ff12::1", (False, False, True, False, False)),
        ("fd00::1", (False, False, False, False, True)),
        ("fe80::1", (False, False, False, True, False)),
        ("febf::1", (False, False, False, True, False)),
        ("fec0::1", (False, False, False, False, True)),
    ],
)
def test_predicates(text: str, expected: tuple[bool, ...]) -> None:
    assert tuple(F[p](ip(text)) for p in PREDICATES) == expected


def test_family() -> None:
    assert F["family"](ip("192.168.0.1")) == 4
    assert F["family"](ip("2001:db8::68")) == 6
    assert "no such overload" in error_of("family", "1.2.3.4")
    for p in PREDICATES:
        assert "no such overload" in error_of(p, cidr("10.0.0.0/8"))


# --------------------------------------------------------------------------- cidr()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("192.168.0.0/", "network address parse error during conversion from string"),
        ("192.168.0.0", "parse error"),
        ("10.0.0.0/08", "parse error"),
        ("10.0.0.0/33", "parse error"),
        ("10.0.0.0/-1", "parse error"),
        ("10.0.0.0/+8", "parse error"),
        ("10.0.0.0/ 8", "parse error"),
        ("10.0.0.0/8/8", "parse error"),
        ("10.0.0.0/255.0.0.0", "parse error"),
        ("::/129", "parse error"),
        ("fe80::1%en0/24", "CIDR with zone value is not allowed"),
        ("::ffff:192.168.0.1/24", "IPv4-mapped IPv6 address is not allowed"),
        ("::ffff:c0a8:0/120", "IPv4-mapped IPv6 address is not allowed"),
    ],
)
def test_cidr_errors(text: str, message: str) -> None:
    assert message in error_of("cidr", text)
    assert F["isCIDR"](text) is False


def test_cidr_accessors() -> None:
    c = cidr("192.168.0.1/24")
    assert str(c) == "192.168.0.1/24"  # the address is kept as written
    assert F["ip"](c) == ip("192.168.0.1")
    assert F["masked"](c) == cidr("192.168.0.0/24")
    assert F["prefixLength"](c) == 24
    assert str(cidr("2001:db8::/32")) == "2001:db8::/32"
    assert F["ip"](cidr("2001:db8::/32")) == ip("2001:db8::")
    assert F["masked"](cidr("2001:db8::1/64")) == cidr("2001:db8::/64")
    assert F["masked"](cidr("1.2.3.4/0")) == cidr("0.0.0.0/0")
    assert F["isCIDR"]("::/0") is True


def test_cidr_equality() -> None:
    assert cidr("127.0.0.1/24") == cidr("127.0.0.1/24")
    assert cidr("127.0.0.1/24") != cidr("127.0.0.0/24")
    assert cidr("192.0.0.1/32") != cidr("10.0.0.1/8")
    assert cidr("2001:db8::/32") != cidr("10.0.0.1/32")
    assert hash(cidr("10.0.0.0/8")) == hash(cidr("10.0.0.0/8"))


@pytest.mark.parametrize(
    ("net", "addr", "expected"),
    [
        ("192.168.0.0/24", "192.168.0.1", True),
        ("192.168.0.0/24", "192.168.1.1", False),
        ("192.168.0.1/24", "192.168.0.200", True),
        ("2001:db8::/32", "192.168.1.1", False),
        ("192.168.1.1/32", "2001:db8::1", False),
        ("2001:db8::/32", "2001:db8::1", True),
        ("0.0.0.0/0", "255.255.255.255", True),
        ("::/0", "1.2.3.4", False),
    ],
)
def test_contains_ip(net: str, addr: str, expected: bool) -> None:
    assert F["containsIP"](cidr(net), ip(addr)) is expected
    assert F["containsIP"](cidr(net), addr) is expected


@pytest.mark.parametrize(
    ("net", "other", "expected"),
    [
        ("192.168.0.0/24", "192.168.0.0/25", True),
        ("192.168.0.0/24", "192.168.0.1/32", True),
        ("192.168.0.0/24", "192.168.0.0/23", False),
        ("10.0.0.0/8", "10.0.0.0/8", True),
        ("10.0.0.0/8", "11.0.0.0/16", False),
        ("2001:db8::/32", "2001:db8::/33", True),
        ("2001:db8::/32", "10.0.0.0/8", False),
    ],
)
def test_contains_cidr(net: str, other: str, expected: bool) -> None:
    assert F["containsCIDR"](cidr(net), cidr(other)) is expected
    assert F["containsCIDR"](cidr(net), other) is expected


def test_contains_bad_arguments() -> None:
    assert "parse error" in error_of("containsIP", cidr("10.0.0.0/8"), "10.0.0")
    assert "parse error" in error_of("containsCIDR", cidr("10.0.0.0/8"), "10.0.0.0")
    assert "no such overload" in error_of("containsIP", ip("10.0.0.1"), "10.0.0.1")
    assert "no such overload" in error_of("containsCIDR", cidr("10.0.0.0/8"), ip("10.0.0.1"))
    assert "no such overload" in error_of("masked", ip("10.0.0.1"))
    assert "no such overload" in error_of("prefixLength", "10.0.0.0/8")
    assert "no such overload" in error_of("ip", 1)
    assert "no such overload" in error_of("cidr", ip("10.0.0.1"))


def test_long_inputs_are_shortened_in_messages() -> None:
    assert len(error_of("ip", "1" * 10_000)) < 200


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("type(ip('192.168.0.1')) == net.IP", True),
        ("type(cidr('192.168.0.0/24')) == net.CIDR", True),
        ("string(cidr('192.168.0.0/24').masked())", "192.168.0.0/24"),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3') && ip('::1').isLoopback()", True),
        ("ip('::ffff:c0a8:1') == ip('192.168.0.1')", True),
    ],
)
def test_through_the_compiler(expr: str, expected: Any) -> None:
    assert compile_expression(expr, Environment(), check=False).evaluate({}) == expected
