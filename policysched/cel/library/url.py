"""The Kubernetes CEL URL library: ``url('https://example.com:80/path?k=v')``, ``isURL``, and
the accessors ``getScheme``, ``getHost``, ``getHostname``, ``getPort``, ``getEscapedPath``,
``getQuery`` on a ``kubernetes.URL``.

Parsing is Go's ``net/url`` as Kubernetes (k8s.io/apiserver/pkg/cel/library/urls.go) uses
it: a string is a URL when ``url.ParseRequestURI`` accepts it (an absolute URI or an
absolute path, no fragment stripping), and the value is what ``url.Parse`` makes of it
(which does strip the fragment). The Go rules are reproduced byte for byte on the UTF-8
encoding of the string, including the texts of Go's errors (``parse "x": invalid URI for
request``), with the ``GODEBUG`` defaults of Kubernetes 1.34 (``godebug default=go1.24``:
a host with several colons is split at its last one, for every scheme).

Go strings are bytes: a component that percent-decodes to invalid UTF-8 (``?k=%ff``) is
returned with U+FFFD in place of the bad bytes.

Deliberate difference: a ``url()`` argument written as a string literal is parsed when the
expression is checked, so ``url('../x')`` fails ``validate`` (as ``ip()``/``cidr()``
literals do here). Kubernetes has no such validator: there the call fails when evaluated.
"""

from __future__ import annotations

from typing import Any

from ..types import BOOL, STRING, Type, list_of, map_of
from ..values import CelError, TypeValue, no_such_overload, register_type
from .function import Function, Overload, member_overload
from .go_text import go_bytes, go_quote

URL_TYPE = TypeValue("kubernetes.URL")
URL_T = Type("kubernetes.URL")

# --------------------------------------------------------------------------- Go helpers


def _text(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


class _ParseError(Exception):
    """An error of Go's net/url (its text is ``str(e)``)."""


# Encoding modes of net/url (which characters a component leaves unescaped).
_PATH, _PATH_SEGMENT, _HOST, _ZONE, _USER_PASSWORD, _QUERY_COMPONENT, _FRAGMENT = range(7)
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _should_escape_slow(c: int, mode: int) -> bool:
    if c in _ALNUM:
        return False
    if mode in (_HOST, _ZONE) and chr(c) in "!$&'()*+,;=:[]<>\"":
        return False
    ch = chr(c)
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        if mode == _PATH:
            return ch == "?"
        if mode == _PATH_SEGMENT:
            return ch in "/;,?"
        if mode == _USER_PASSWORD:
            return ch in "@/?:"
        if mode == _QUERY_COMPONENT:
            return True
        if mode == _FRAGMENT:
            return False
    return not (mode == _FRAGMENT and ch in "!()*")


_ESCAPE = [[_should_escape_slow(c, mode) for c in range(256)] for mode in range(7)]


def _unescape(s: bytes, mode: int) -> bytes:
    """Go's ``unescape``: percent-decoding with the checks of ``mode``."""
    n = 0
    has_plus = False
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # %
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise _ParseError("invalid URL escape " + go_quote(s[i:i + 3]))
            if mode == _HOST and int(s[i + 1:i + 2], 16) < 8 and s[i:i + 3] != b"%25":
                raise _ParseError("invalid URL escape " + go_quote(s[i:i + 3]))
            if mode == _ZONE:
                v = int(s[i + 1:i + 3], 16)
                if s[i:i + 3] != b"%25" and v != 0x20 and _ESCAPE[_HOST][v]:
                    raise _ParseError("invalid URL escape " + go_quote(s[i:i + 3]))
            i += 3
        elif c == 0x2B:  # +
            has_plus = mode == _QUERY_COMPONENT
            i += 1
        else:
            if mode in (_HOST, _ZONE) and c < 0x80 and _ESCAPE[mode][c]:
                raise _ParseError("invalid character " + go_quote(s[i:i + 1]) + " in host name")
            i += 1
    if n == 0 and not has_plus:
        return s
    plus = b" " if mode == _QUERY_COMPONENT else b"+"
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
            continue
        out += plus if c == 0x2B else bytes((c,))
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: int) -> bytes:
    table = _ESCAPE[mode]
    if not any(table[c] for c in s):
        return s
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == _QUERY_COMPONENT:
            out.append(0x2B)
        elif table[c]:
            out += b"%%%02X" % c
        else:
            out.append(c)
    return bytes(out)


def _valid_encoded(s: bytes, mode: int) -> bool:
    return all(chr(c) in "!$&'()*+,;=:@[]%" or not _ESCAPE[mode][c] for c in s)


def _valid_optional_port(port: bytes) -> bool:
    return port == b"" or (port[:1] == b":" and all(0x30 <= c <= 0x39 for c in port[1:]))


def _valid_userinfo(s: bytes) -> bool:
    return all(c in _ALNUM or chr(c) in "-._:~!$&'()*+,;=%@" for c in s)


def _split_host_port(host_port: bytes) -> tuple[bytes, bytes]:
    host, port = host_port, b""
    colon = host.rfind(b":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port


def _bracketed_address(addr: bytes) -> str | None:
    """Go's ``netip.ParseAddr`` for a host in brackets: None for an IPv6 address (with an
    optional zone), "" for IPv4, else Go's reason it is no address (``msg (at "rest")``)."""
    for c in addr:
        if c == 0x2E:  # '.'
            return _ipv4_fields(addr, 0, len(addr)) or ""
        if c == 0x3A:  # ':'
            return _ipv6_problem(addr)
        if c == 0x25:  # '%'
            return "missing IPv6 address"
    return "unable to parse IP"


def _at(msg: str, rest: bytes) -> str:
    return f"{msg} (at {go_quote(rest)})"


def _ipv4_fields(whole: bytes, off: int, end: int) -> str | None:
    """netip's ``parseIPv4Fields``: the reason ``whole[off:end]`` is no dotted quad."""
    s = whole[off:end]
    val = pos = digits = 0
    for i, c in enumerate(s):
        if 0x30 <= c <= 0x39:
            if digits == 1 and val == 0:
                return "IPv4 field has octet with leading zero"
            val = val * 10 + c - 0x30
            digits += 1
            if val > 255:
                return "IPv4 field has value >255"
        elif c == 0x2E:
            if i == 0 or i == len(s) - 1 or s[i - 1] == 0x2E:
                return _at("IPv4 field must have at least one digit", s[i:])
            if pos == 3:
                return "IPv4 address too long"
            pos += 1
            val = digits = 0
        else:
            return _at("unexpected character", s[i:])
    return "IPv4 address too short" if pos < 3 else None


def _ipv6_problem(whole: bytes) -> str | None:
    """netip's ``parseIPv6``: the reason ``whole`` is no IPv6 address, or None."""
    s, sep, zone = whole.partition(b"%")
    if sep and not zone:
        return "zone must be a non-empty string"
    ellipsis = -1
    if s[:2] == b"::":
        ellipsis, s = 0, s[2:]
        if not s:
            return None
    i = 0
    while i < 16:
        off = acc = 0
        while off < len(s) and s[off] in _HEX:
            acc = (acc << 4) + int(s[off:off + 1], 16)
            if off > 3:
                return _at("each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                return _at("IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            return _at("each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == 0x2E:
            if ellipsis < 0 and i != 12:
                return _at("embedded IPv4 address must replace the final 2 fields of the "
                           "address", s)
            if i + 4 > 16:
                return _at("too many hex fields to fit an embedded IPv4 at the end of the "
                           "address", s)
            end = len(whole) - (len(zone) + 1 if zone else 0)
            problem = _ipv4_fields(whole, end - len(s), end)
            if problem:
                return problem
            s = b""
            i += 4
            break
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != 0x3A:
            return _at("unexpected character, want colon", s)
        if len(s) == 1:
            return _at("colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == 0x3A:
            if ellipsis >= 0:
                return _at("multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        return _at("trailing garbage after address", s)
    if i < 16:
        return None if ellipsis >= 0 else "address string too short"
    if ellipsis >= 0:
        return "the :: must expand to at least one field of zeros"
    return None


# --------------------------------------------------------------------------- the URL value


class URL:
    """A parsed URL: the fields of Go's ``url.URL`` (bytes, as Go strings)."""

    __slots__ = ("force_query", "fragment", "host", "omit_host", "opaque", "path", "raw_fragment",
                 "raw_path", "raw_query", "scheme", "user")

    def __init__(self) -> None:
        self.scheme = b""
        self.opaque = b""
        self.user: tuple[bytes, bytes | None] | None = None  # (username, password or None)
        self.host = b""
        self.path = b""
        self.raw_path = b""
        self.raw_query = b""
        self.force_query = False
        self.omit_host = False
        self.fragment = b""
        self.raw_fragment = b""

    def escaped_path(self) -> bytes:
        if self.raw_path and _valid_encoded(self.raw_path, _PATH):
            try:
                if _unescape(self.raw_path, _PATH) == self.path:
                    return self.raw_path
            except _ParseError:
                pass
        if self.path == b"*":
            return b"*"
        return _escape(self.path, _PATH)

    def escaped_fragment(self) -> bytes:
        if self.raw_fragment and _valid_encoded(self.raw_fragment, _FRAGMENT):
            try:
                if _unescape(self.raw_fragment, _FRAGMENT) == self.fragment:
                    return self.raw_fragment
            except _ParseError:
                pass
        return _escape(self.fragment, _FRAGMENT)

    def hostname(self) -> bytes:
        return _split_host_port(self.host)[0]

    def port(self) -> bytes:
        return _split_host_port(self.host)[1]

    def query(self) -> dict[str, list[str]]:
        """Go's ``URL.Query()``: malformed pairs are dropped."""
        out: dict[str, list[str]] = {}
        query = self.raw_query
        if query.count(b"&") + 1 > _MAX_QUERY_PARAMS:
            return out
        for setting in query.split(b"&") if query else ():
            if b";" in setting or not setting:
                continue
            key, _, value = setting.partition(b"=")
            try:
                k, v = _unescape(key, _QUERY_COMPONENT), _unescape(value, _QUERY_COMPONENT)
            except _ParseError:
                continue
            out.setdefault(_text(k), []).append(_text(v))
        return out

    def to_bytes(self) -> bytes:
        """Go's ``URL.String()`` (what URL equality compares)."""
        buf = bytearray()
        if self.scheme:
            buf += self.scheme + b":"
        if self.opaque:
            buf += self.opaque
        else:
            if (self.scheme or self.host or self.user is not None) and not (
                    self.omit_host and not self.host and self.user is None):
                if self.host or self.path or self.user is not None:
                    buf += b"//"
                if self.user is not None:
                    name, password = self.user
                    buf += _escape(name, _USER_PASSWORD)
                    if password is not None:
                        buf += b":" + _escape(password, _USER_PASSWORD)
                    buf += b"@"
                if self.host:
                    buf += _escape(self.host, _HOST)
            path = self.escaped_path()
            if path and path[:1] != b"/" and self.host:
                buf += b"/"
            if not buf and b":" in path.partition(b"/")[0]:
                buf += b"./"
            buf += path
        if self.force_query or self.raw_query:
            buf += b"?" + self.raw_query
        if self.fragment:
            buf += b"#" + self.escaped_fragment()
        return bytes(buf)

    def __eq__(self, other: object) -> bool:
        return type(other) is URL and other.to_bytes() == self.to_bytes()

    def __hash__(self) -> int:
        return hash(("url", self.to_bytes()))

    def __str__(self) -> str:
        return _text(self.to_bytes())  # as Go's URL.String()

    def __repr__(self) -> str:
        return f"url({str(self)!r})"


register_type(URL, URL_TYPE)

_MAX_QUERY_PARAMS = 10000  # Go's urlmaxqueryparams default


# --------------------------------------------------------------------------- parsing


def _get_scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        if 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:
            if i == 0:
                raise _ParseError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    open_bracket = host.rfind(b"[")
    if open_bracket > 0:
        raise _ParseError("invalid IP-literal")
    if open_bracket == 0:
        close = host.rfind(b"]")
        if close < 0:
            raise _ParseError("missing ']' in host")
        colon_port = host[close + 1:]
        if not _valid_optional_port(colon_port):
            raise _ParseError(f"invalid port {go_quote(colon_port)} after host")
        colon_port = _unescape(colon_port, _HOST)
        hostname = host[1:close]
        zone = hostname.find(b"%25")
        if zone >= 0:
            unescaped = _unescape(hostname[:zone], _HOST) + _unescape(hostname[zone:], _ZONE)
        else:
            unescaped = _unescape(hostname, _HOST)
        problem = _bracketed_address(unescaped)
        if problem:  # Go's parseAddrError text
            raise _ParseError(f"invalid host: ParseAddr({go_quote(unescaped)}): {problem}")
        if problem == "":  # IPv4 in brackets
            raise _ParseError("invalid IP-literal")
        return b"[" + unescaped + b"]" + colon_port
    colon = host.rfind(b":")  # GODEBUG urlstrictcolons=0 (Kubernetes' go1.24 defaults)
    if colon != -1:
        colon_port = host[colon:]
        if not _valid_optional_port(colon_port):
            raise _ParseError(f"invalid port {go_quote(colon_port)} after host")
    return _unescape(host, _HOST)


def _parse_authority(scheme: bytes, authority: bytes
                     ) -> tuple[tuple[bytes, bytes | None] | None, bytes]:
    at = authority.rfind(b"@")
    host = _parse_host(scheme, authority[at + 1:] if at >= 0 else authority)
    if at < 0:
        return None, host
    userinfo = authority[:at]
    if not _valid_userinfo(userinfo):
        raise _ParseError("net/url: invalid userinfo")
    if b":" not in userinfo:
        return (_unescape(userinfo, _USER_PASSWORD), None), host
    name, _, password = userinfo.partition(b":")
    return (_unescape(name, _USER_PASSWORD), _unescape(password, _USER_PASSWORD)), host


def _parse(raw: bytes, via_request: bool) -> URL:
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise _ParseError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise _ParseError("empty url")
    url = URL()
    if raw == b"*":
        url.path = b"*"
        return url
    scheme, rest = _get_scheme(raw)
    url.scheme = scheme.lower()
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        url.force_query = True
        rest = rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if url.scheme:
            url.opaque = rest
            return url
        if via_request:
            raise _ParseError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise _ParseError("first path segment in URL cannot contain colon")
    if (url.scheme or (not via_request and not rest.startswith(b"///"))) \
            and rest.startswith(b"//"):
        authority, rest = rest[2:], b""
        slash = authority.find(b"/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        url.user, url.host = _parse_authority(url.scheme, authority)
    elif url.scheme and rest.startswith(b"/"):
        url.omit_host = True
    url.path = _unescape(rest, _PATH)
    url.raw_path = b"" if _escape(url.path, _PATH) == rest else rest
    return url


def parse_request_uri(s: str) -> URL:
    """Go's ``url.ParseRequestURI``; ``CelError`` with Go's error text."""
    raw = go_bytes(s)
    try:
        return _parse(raw, via_request=True)
    except _ParseError as e:
        raise CelError(f"parse {go_quote(raw)}: {e}") from None


def parse_url(s: str) -> URL:
    """Go's ``url.Parse`` (the fragment cut off first); ``CelError`` with Go's error text."""
    raw = go_bytes(s)
    head, sep, frag = raw.partition(b"#")
    try:
        url = _parse(head, via_request=False)
    except _ParseError as e:
        raise CelError(f"parse {go_quote(head)}: {e}") from None
    if sep and frag:
        try:
            url.fragment = _unescape(frag, _FRAGMENT)
        except _ParseError as e:
            raise CelError(f"parse {go_quote(raw)}: {e}") from None
        url.raw_fragment = b"" if _escape(url.fragment, _FRAGMENT) == frag else frag
    return url


# --------------------------------------------------------------------------- functions


def _url(s: Any) -> URL:
    if type(s) is not str:
        raise no_such_overload("url", s)
    try:
        parse_request_uri(s)
        return parse_url(s)
    except CelError as e:
        raise CelError(f"URL parse error during conversion from string: {e}") from None


def _is_url(s: Any) -> bool:
    if type(s) is not str:
        raise no_such_overload("isURL", s)
    try:
        parse_request_uri(s)
    except CelError:
        return False
    return True


def _accessor(name: str, get: Any) -> Any:
    def impl(u: Any) -> Any:
        if type(u) is not URL:
            raise no_such_overload(name, u)
        return get(u)

    impl.__name__ = name
    return impl


def _string_accessor(name: str, oid: str, get: Any, doc: str, examples: tuple[str, ...]
                     ) -> Function:
    return Function(name, (member_overload(oid, (URL_T,), STRING),),
                    _accessor(name, lambda u: _text(get(u))), doc=doc, examples=examples)


FUNCTIONS: list[Function] = [
    Function(
        "url",
        (Overload("string_to_url", (STRING,), URL_T),),
        _url,
        cost_per_size=True,
        literal_check=_url,
        doc="parse a URL: an absolute URI or an absolute path (Go's url.ParseRequestURI)",
        examples=("url('https://user:pass@example.com:80/path?query=val#fragment')",
                  "url('/absolute-path')"),
    ),
    Function(
        "isURL",
        (Overload("is_url_string", (STRING,), BOOL),),
        _is_url,
        doc="whether url() accepts the string",
        examples=("isURL('https://example.com/path')", "isURL('../relative-path')",
                  "isURL('https://a:b:c/')"),
    ),
    _string_accessor("getScheme", "url_get_scheme", lambda u: u.scheme,
                     "the scheme, lower case; '' when absent",
                     ("url('https://example.com/').getScheme()", "url('/path').getScheme()")),
    _string_accessor("getHost", "url_get_host", lambda u: u.host,
                     "host and port; an IPv6 address keeps its brackets; '' when absent",
                     ("url('https://example.com:80/').getHost()",
                      "url('https://[::1]:80/').getHost()")),
    _string_accessor("getHostname", "url_get_hostname", URL.hostname,
                     "the host without port; an IPv6 address without brackets",
                     ("url('https://example.com:80/').getHostname()",
                      "url('https://[::1]:80/').getHostname()")),
    _string_accessor("getPort", "url_get_port", URL.port, "the port; '' when absent",
                     ("url('https://example.com:80/').getPort()",
                      "url('https://example.com/').getPort()")),
    _string_accessor("getEscapedPath", "url_get_escaped_path", URL.escaped_path,
                     "the path, percent-escaped",
                     ("url('https://example.com/path with spaces/').getEscapedPath()",)),
    Function(
        "getQuery",
        (member_overload("url_get_query", (URL_T,), map_of(STRING, list_of(STRING))),),
        _accessor("getQuery", URL.query),
        doc="the query: each key (unescaped) with all its values, in order",
        examples=("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()",
                  "url('https://example.com/path').getQuery()"),
    ),
]
