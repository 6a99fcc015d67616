"""The Kubernetes CEL IP/CIDR library (``ip('10.0.0.1')``, ``cidr('10.0.0.0/8').containsIP(...)``).

Parsing follows Go's ``net/netip`` as Kubernetes uses it: strict dotted-quad IPv4 (no leading
zeros), RFC 4291 IPv6; zones (``fe80::1%eth0``) are rejected, and so are IPv4-mapped IPv6
addresses written with a dotted quad (``::ffff:1.2.3.4``). An IPv4-mapped address written in
hex (``::ffff:c0a8:1``) denotes the IPv4 address it maps (``== ip('192.168.0.1')``), which is
what the cel-spec conformance cases require. CIDRs keep their address as written
(``cidr('10.0.0.1/8').ip() == ip('10.0.0.1')``); ``masked()`` clears the host bits. Any
IPv4-mapped address in a CIDR is rejected.

Predicates use Go's definitions (``isGlobalUnicast`` is true for private ranges too).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ..types import BOOL, INT, STRING, Type
from ..values import CelError, TypeValue, no_such_overload, register_type
from .function import Function, Overload

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

IP_TYPE = TypeValue("net.IP")
CIDR_TYPE = TypeValue("net.CIDR")
IP_T = Type("net.IP")
CIDR_T = Type("net.CIDR")


class IP:
    """A CEL ``net.IP`` value."""

    __slots__ = ("addr",)

    def __init__(self, addr: IPAddress) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return type(other) is IP and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(("ip", self.addr))

    def __str__(self) -> str:
        return str(self.addr)

    def __repr__(self) -> str:
        return f"ip('{self.addr}')"


class CIDR:
    """A CEL ``net.CIDR`` value: an address (as written) and a prefix length."""

    __slots__ = ("_net", "_shift", "addr", "prefix")

    def __init__(self, addr: IPAddress, prefix: int) -> None:
        self.addr = addr
        self.prefix = prefix
        self._shift = (32 if addr.version == 4 else 128) - prefix
        self._net = int(addr) >> self._shift  # the network bits, for containment tests

    @property
    def version(self) -> int:
        return self.addr.version

    def contains_address(self, addr: IPAddress) -> bool:
        return addr.version == self.addr.version and int(addr) >> self._shift == self._net

    def contains_cidr(self, other: CIDR) -> bool:
        return other.prefix >= self.prefix and self.contains_address(other.addr)

    def masked(self) -> CIDR:
        net = self._net << self._shift
        addr: IPAddress = (
            ipaddress.IPv4Address(net) if self.addr.version == 4 else ipaddress.IPv6Address(net)
        )
        return CIDR(addr, self.prefix)

    def __eq__(self, other: object) -> bool:
        return type(other) is CIDR and other.prefix == self.prefix and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(("cidr", self.addr, self.prefix))

    def __str__(self) -> str:
        return f"{self.addr}/{self.prefix}"

    def __repr__(self) -> str:
        return f"cidr('{self}')"


register_type(IP, IP_TYPE)
register_type(CIDR, CIDR_TYPE)


def to_string(v: IP | CIDR) -> str:
    """``string(ip)`` / ``string(cidr)``: the canonical text (RFC 5952 for IPv6)."""
    return str(v)


# --------------------------------------------------------------------------- parsing


def _quote(s: str) -> str:
    return "'" + (s if len(s) <= 80 else s[:77] + "...") + "'"


def _plain_address(s: str) -> IPAddress | None:
    """Parse without zone or mapping rules; None if not an address."""
    if not s.isascii():
        return None
    try:
        if ":" in s:
            return ipaddress.IPv6Address(s)
        return ipaddress.IPv4Address(s)
    except ValueError:
        return None


def parse_ip(s: str) -> IPAddress:
    """An IP address as the CEL ``ip()`` function accepts it, or ``CelError``."""
    if "%" in s:
        if _plain_address(s) is not None:
            raise CelError(f"IP Address with zone value is not allowed: {_quote(s)}")
        raise CelError(f"IP Address {_quote(s)} parse error during conversion from string")
    addr = _plain_address(s)
    if addr is None:
        raise CelError(f"IP Address {_quote(s)} parse error during conversion from string")
    if isinstance(addr, ipaddress.IPv6Address):
        mapped = addr.ipv4_mapped
        if mapped is not None:
            if "." in s:
                raise CelError(f"IPv4-mapped IPv6 address is not allowed: {_quote(s)}")
            return mapped
    return addr


def parse_cidr(s: str) -> CIDR:
    """A CIDR as the CEL ``cidr()`` function accepts it, or ``CelError``."""
    slash = s.rfind("/")
    text, bits = (s[:slash], s[slash + 1 :]) if slash >= 0 else (s, "")
    if "%" in text:
        if _plain_address(text) is not None and bits:
            raise CelError(f"CIDR with zone value is not allowed: {_quote(s)}")
        raise CelError(f"network address parse error during conversion from string: {_quote(s)}")
    addr = _plain_address(text)
    if (
        addr is None
        or not bits
        or not (bits.isascii() and bits.isdigit())
        or (len(bits) > 1 and bits[0] == "0")
        or len(bits) > 3
        or int(bits) > (32 if addr.version == 4 else 128)
    ):
        raise CelError(f"network address parse error during conversion from string: {_quote(s)}")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CelError(f"IPv4-mapped IPv6 address is not allowed: {_quote(s)}")
    return CIDR(addr, int(bits))


# --------------------------------------------------------------------------- predicates


def _is_unspecified(a: IPAddress) -> bool:
    return int(a) == 0


def _is_loopback(a: IPAddress) -> bool:
    if a.version == 4:
        return int(a) >> 24 == 127
    return int(a) == 1


def _is_multicast(a: IPAddress) -> bool:
    if a.version == 4:
        return int(a) >> 28 == 0xE
    return int(a) >> 120 == 0xFF


def _is_link_local_multicast(a: IPAddress) -> bool:
    if a.version == 4:
        return int(a) >> 8 == 0xE00000  # 224.0.0.0/24
    return (int(a) >> 112) & 0xFF0F == 0xFF02  # ff02::/16, any flags


def _is_link_local_unicast(a: IPAddress) -> bool:
    if a.version == 4:
        return int(a) >> 16 == 0xA9FE  # 169.254.0.0/16
    return int(a) >> 118 == 0x3FA  # fe80::/10


def _is_global_unicast(a: IPAddress) -> bool:
    if a.version == 4 and int(a) == 0xFFFFFFFF:
        return False
    return not (
        _is_unspecified(a) or _is_loopback(a) or _is_multicast(a) or _is_link_local_unicast(a)
    )


# --------------------------------------------------------------------------- functions


def _ip(x: Any) -> IP:
    tx = type(x)
    if tx is str:
        return IP(parse_ip(x))
    if tx is CIDR:
        return IP(x.addr)
    raise no_such_overload("ip", x)


def _cidr(x: Any) -> CIDR:
    if type(x) is str:
        return parse_cidr(x)
    raise no_such_overload("cidr", x)


def _is_ip(x: Any) -> bool:
    if type(x) is not str:
        raise no_such_overload("isIP", x)
    try:
        parse_ip(x)
    except CelError:
        return False
    return True


def _is_cidr(x: Any) -> bool:
    if type(x) is not str:
        raise no_such_overload("isCIDR", x)
    try:
        parse_cidr(x)
    except CelError:
        return False
    return True


def _is_canonical(x: Any) -> bool:
    if type(x) is not str:
        raise no_such_overload("ip.isCanonical", x)
    return str(parse_ip(x)) == x


def _family(x: Any) -> int:
    if type(x) is IP:
        return int(x.addr.version)
    raise no_such_overload("family", x)


def _predicate(name: str, test: Any) -> Any:
    def impl(x: Any) -> bool:
        if type(x) is IP:
            return bool(test(x.addr))
        raise no_such_overload(name, x)

    impl.__name__ = name
    return impl


def _contains_ip(c: Any, x: Any) -> bool:
    if type(c) is CIDR:
        tx = type(x)
        if tx is IP:
            return c.contains_address(x.addr)
        if tx is str:
            return c.contains_address(parse_ip(x))
    raise no_such_overload("containsIP", c, x)


def _contains_cidr(c: Any, x: Any) -> bool:
    if type(c) is CIDR:
        tx = type(x)
        if tx is CIDR:
            return c.contains_cidr(x)
        if tx is str:
            return c.contains_cidr(parse_cidr(x))
    raise no_such_overload("containsCIDR", c, x)


def _masked(c: Any) -> CIDR:
    if type(c) is CIDR:
        return c.masked()
    raise no_such_overload("masked", c)


def _prefix_length(c: Any) -> int:
    if type(c) is CIDR:
        return int(c.prefix)
    raise no_such_overload("prefixLength", c)


def _ip_predicate_fn(name: str, overload_id: str, test: Any, doc: str, example: str
                     ) -> Function:
    return Function(
        name,
        (Overload(overload_id, (IP_T,), BOOL, member=True),),
        _predicate(name, test),
        doc=doc,
        examples=(example,),
    )


FUNCTIONS: list[Function] = [
    Function(
        "ip",
        (
            Overload("string_to_ip", (STRING,), IP_T),
            Overload("cidr_ip", (CIDR_T,), IP_T, member=True),
        ),
        _ip,
        doc="parse an IP address; on a CIDR, its address",
        examples=("ip('10.0.0.1')", "cidr('10.0.0.0/8').ip()"),
        literal_check=_ip,
    ),
    Function("cidr", (Overload("string_to_cidr", (STRING,), CIDR_T),), _cidr,
             doc="parse a CIDR ('10.0.0.0/8')", literal_check=_cidr,
             examples=("cidr('10.0.0.0/8')",)),
    Function("isIP", (Overload("is_ip", (STRING,), BOOL),), _is_ip,
             doc="whether the string is an IP address ip() accepts",
             examples=("isIP('::1')", "isIP('10.0.0.256')")),
    Function("isCIDR", (Overload("is_cidr", (STRING,), BOOL),), _is_cidr,
             doc="whether the string is a CIDR cidr() accepts",
             examples=("isCIDR('10.0.0.0/8')",)),
    Function("ip.isCanonical", (Overload("ip_is_canonical", (STRING,), BOOL),),
             _is_canonical, doc="whether the address is written in canonical form",
             examples=("ip.isCanonical('2001:db8::1')", "ip.isCanonical('2001:DB8::1')")),
    Function("family", (Overload("ip_family", (IP_T,), INT, member=True),), _family,
             doc="4 or 6", examples=("ip('::1').family()",)),
    _ip_predicate_fn("isUnspecified", "ip_is_unspecified", _is_unspecified,
                     "0.0.0.0 or ::", "ip('0.0.0.0').isUnspecified()"),
    _ip_predicate_fn("isLoopback", "ip_is_loopback", _is_loopback, "127.0.0.0/8 or ::1",
                     "ip('127.0.0.1').isLoopback()"),
    _ip_predicate_fn("isLinkLocalMulticast", "ip_is_link_local_multicast",
                     _is_link_local_multicast, "224.0.0.0/24 or ff02::/16",
                     "ip('224.0.0.1').isLinkLocalMulticast()"),
    _ip_predicate_fn("isLinkLocalUnicast", "ip_is_link_local_unicast", _is_link_local_unicast,
                     "169.254.0.0/16 or fe80::/10", "ip('169.254.1.1').isLinkLocalUnicast()"),
    _ip_predicate_fn("isGlobalUnicast", "ip_is_global_unicast", _is_global_unicast,
                     "not unspecified, broadcast, loopback, multicast or link-local",
                     "ip('10.0.0.1').isGlobalUnicast()"),
    Function(
        "containsIP",
        (
            Overload("cidr_contains_ip_ip", (CIDR_T, IP_T), BOOL, member=True),
            Overload("cidr_contains_ip_string", (CIDR_T, STRING), BOOL, member=True),
        ),
        _contains_ip,
        doc="whether the address lies in the CIDR",
        examples=("cidr('10.0.0.0/8').containsIP('10.1.2.3')",),
    ),
    Function(
        "containsCIDR",
        (
            Overload("cidr_contains_cidr", (CIDR_T, CIDR_T), BOOL, member=True),
            Overload("cidr_contains_cidr_string", (CIDR_T, STRING), BOOL, member=True),
        ),
        _contains_cidr,
        doc="whether the other CIDR lies entirely in this one",
        examples=("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",),
    ),
    Function("masked", (Overload("cidr_masked", (CIDR_T,), CIDR_T, member=True),), _masked,
             doc="the CIDR with its host bits cleared",
             examples=("cidr('10.1.2.3/8').masked()",)),
    Function("prefixLength",
             (Overload("cidr_prefix_length", (CIDR_T,), INT, member=True),),
             _prefix_length, doc="the prefix length",
             examples=("cidr('10.0.0.0/8').prefixLength()",)),
]
