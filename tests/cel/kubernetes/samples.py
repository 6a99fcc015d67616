"""Sample data of the generator: literals (good and bad) per library, and the variables
every generated expression may use, with scheduling-like values ("worlds").
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from policysched.cel.values import NANOS, Duration, Timestamp, UInt

QUANTITIES = ["0", "1", "500m", "1.5", "2Ki", "1Gi", "1.5Gi", "100M", "0.1", "1e3", "-2",
              "12E", "1Ei", "0.5Mi", "123456789", "9223372036854775807", "1m", "0.0001",
              "9999999999999999999999999999999999999G", "200M", "0.2G", "50k", "+3"]
BAD_QUANTITIES = ["1.5.3Gi", "abc", "", "1 Gi", "Gi", "--1", "1.5gb", "0x10"]
IPS = ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.10", "0.0.0.0", "::", "169.254.1.1",
       "fe80::1", "224.0.0.1", "ff02::1", "2001:db8::1", "2001:DB8::ABCD", "255.255.255.255",
       "8.8.8.8", "2001:0db8::0001"]
BAD_IPS = ["300.1.1.1", "1.2.3", "::ffff:1.2.3.4", "fe80::1%eth0", "01.2.3.4", "abc", ""]
CIDRS = ["10.0.0.0/8", "192.168.0.0/16", "192.168.0.1/24", "::1/128", "2001:db8::/32",
         "0.0.0.0/0", "10.1.2.0/24", "fe80::/10", "192.168.10.0/24"]
BAD_CIDRS = ["10.0.0.0/33", "::1/129", "1.2.3.4", "::ffff:1.2.3.4/24", "010.0.0.0/8", "x/8"]
URLS = ["https://example.com:80/", "https://example.com/path with spaces/",
        "http://user:pass@host.io:8443/a/b?x=1&y=2#frag", "https://[::1]:80/",
        "ftp://files.example.org/pub", "https://k8s.io", "http://x.io/a%20b?q=%20",
        "https://example.com/?a=1&a=2&b"]
BAD_URLS = ["not a url", "example.com/path", "/relative/path", "", "http://[::1", "://x"]
SEMVERS = ["1.0.0", "1.2.3", "2.0.0", "1.2.3-alpha.1", "1.2.3+build.5", "10.20.30",
           "0.0.1-rc.1+b", "1.2.3-alpha", "1.2.3-beta"]
LOOSE_SEMVERS = ["v1.0", "1", "01.2.3", "v1.2.3", "1.2"]
BAD_SEMVERS = ["1.2.3.4", "abc", "", "1.2.-3"]
TIMESTAMPS = ["2024-01-02T03:04:05Z", "2024-02-29T23:59:59.999999999Z", "1970-01-01T00:00:00Z",
              "2023-06-15T10:00:00+02:00", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
              "2024-01-02T03:04:05.5-08:00"]
BAD_TIMESTAMPS = ["2024-13-01T00:00:00Z", "yesterday", "2024-01-02", "10000-01-01T00:00:00Z",
                  "2024-01-02T03:04:05"]
DURATIONS = ["1s", "1h30m", "-2m", "1.5h", "100ms", "3us", "7ns", "0s", "300000h",
             "1h1m1s1ms", "-1.5s"]
BAD_DURATIONS = ["1x", "h", "1d", "", "99999999999h", "1.5.5s", "3000000h"]
REGEXES = ["^a", "[0-9]+", "b.*c", "(x|y)z", "^web-[0-9]+$", "\\d+", "[a-z]*", ".", "^$",
           "(?i)ABC", "[^,]+"]
BAD_REGEXES = ["[", "(a", "a**", "(?P<x", "\\"]
TIMEZONES = ["UTC", "America/New_York", "Asia/Tokyo", "+05:30", "-08:00", "Europe/Paris",
             "Bad/Zone", "02:00"]
STRINGS = ["", "a", "abc", "web-1", "Hello World", "zone-a", "  pad  ", "a,b,c", "ünïcødé",
           "日本", "x.y.z", "CamelCase", "1, 2, 3", "abc 123"]
NAMES = ["web-1", "Web_1", "a", "-bad", "my.name", "x" * 64, "1abc", "app.kubernetes.io/name",
         "", "abc-", "550e8400-e29b-41d4-a716-446655440000", "2024-01-02",
         "2024-01-02T03:04:05Z", "aGVsbG8=", "https://k8s.io/x"]
FORMATS = ["dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName",
           "dns1123LabelPrefix", "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue",
           "uri", "uuid", "byte", "date", "datetime"]
LABEL_KEYS = ["app", "tier", "zone", "topology.kubernetes.io/zone", "version"]

# Every generated expression sees these variables, declared the same way on both sides.
DECLARATIONS: dict[str, str] = {
    "i": "int", "j": "int", "u": "uint", "d": "double", "s": "string", "b": "bool",
    "by": "bytes", "ts": "timestamp", "dur": "duration", "ints": "list(int)",
    "doubles": "list(double)", "strs": "list(string)", "empty": "list(int)",
    "nested": "list(list(int))", "labels": "map(string, string)", "pod": "map(string, dyn)",
    "obj": "dyn", "qty": "string", "addr": "string", "net": "string", "link": "string",
    "ver": "string",
}


@dataclass(frozen=True)
class World:
    """One assignment of values to ``DECLARATIONS``."""

    values: dict[str, object]

    def variables(self) -> dict[str, tuple[str, object]]:
        return {name: (DECLARATIONS[name], self.values[name]) for name in DECLARATIONS}


def make_world(rng: random.Random) -> World:
    """Random, scheduling-like values for every declared variable."""
    labels = {k: rng.choice(["web", "db", "zone-a", "v1", ""]) for k in
              rng.sample(LABEL_KEYS, rng.randint(0, len(LABEL_KEYS)))}
    ints = [rng.randint(-10, 10) for _ in range(rng.randint(0, 6))]
    if rng.random() < 0.3:
        ints.sort()
    pod = {
        "name": rng.choice(["web-3", "db-0", "Web_1", "job-x"]),
        "namespace": rng.choice(["default", "kube-system"]),
        "labels": dict(labels),
        "annotations": {"delay": str(rng.randint(0, 40))} if rng.random() < 0.7 else {},
        "requests": {"cpu": rng.choice(QUANTITIES[:12]), "memory": rng.choice(["1Gi", "512Mi"])},
        "priority": rng.choice([0, 100, 1000, -5, 2000000000]),
        "containers": [{"name": f"c{k}", "image": rng.choice(["nginx:1.25", "busybox"]),
                        "ports": rng.sample([80, 443, 8080], rng.randint(0, 3))}
                       for k in range(rng.randint(0, 3))],
        "creationTimestamp": rng.choice(TIMESTAMPS[:4]),
        "ip": rng.choice(IPS),
    }
    return World({
        "i": rng.choice([0, 1, -1, 3, 7, 42, -100, 2**62, 2**63 - 1, -(2**63)]),
        "j": rng.choice([0, 2, 5, -3, 1000]),
        "u": UInt(rng.choice([0, 1, 7, 2**63, 2**64 - 1])),
        "d": rng.choice([0.0, -0.0, 1.5, -2.25, 1e300, float("nan"), float("inf"), 0.1, 3.0]),
        "s": rng.choice(STRINGS),
        "b": rng.random() < 0.5,
        "by": rng.choice([b"", b"abc", b"\xff\x00"]),
        "ts": Timestamp(rng.randint(1_577_836_800, 1_893_456_000) * NANOS
                        + rng.choice([0, 500_000_000, 123_456_789])),
        "dur": Duration(rng.choice([0, 1, 1_500_000_000, -60 * NANOS, 3600 * NANOS,
                                    90061 * NANOS])),
        "ints": ints,
        "doubles": [rng.choice([0.5, -1.0, 2.25, 1e10, float("nan"), 0.0])
                    for _ in range(rng.randint(0, 4))],
        "strs": rng.sample(STRINGS, rng.randint(0, 5)),
        "empty": [],
        "nested": [[1, 2], [3], []],
        "labels": labels,
        "pod": pod,
        "obj": rng.choice([1, "x", 1.5, [1, 2], {"a": 1}, None, True, UInt(3)]),
        "qty": rng.choice(QUANTITIES + BAD_QUANTITIES[:3]),
        "addr": rng.choice(IPS + BAD_IPS[:3]),
        "net": rng.choice(CIDRS + BAD_CIDRS[:2]),
        "link": rng.choice(URLS + BAD_URLS[:2]),
        "ver": rng.choice(SEMVERS + LOOSE_SEMVERS[:2] + BAD_SEMVERS[:1]),
    })


def quote(text: str) -> str:
    """``text`` as a CEL single-quoted string literal."""
    escaped = (text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
               .replace("\t", "\\t"))
    return f"'{escaped}'"
