"""A seeded generator of CEL expressions over every function and type Kubernetes 1.34
enables, grouped by area (one table row each).

``Operands`` builds sub-expressions of a given CEL type (literals, variables, calls that
return that type); each area of ``AREAS`` picks one of its templates and fills it with
operands. Every area mixes good cases with the mistakes users make: bad literals that
Kubernetes rejects at compile time, type errors, overflow, NaN, empty lists, out-of-range
timestamps and durations. The same seed gives the same cases.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .differential import Case
from .samples import (
    BAD_CIDRS,
    BAD_DURATIONS,
    BAD_IPS,
    BAD_QUANTITIES,
    BAD_REGEXES,
    BAD_SEMVERS,
    BAD_TIMESTAMPS,
    BAD_URLS,
    CIDRS,
    DURATIONS,
    FORMATS,
    IPS,
    LABEL_KEYS,
    LOOSE_SEMVERS,
    NAMES,
    QUANTITIES,
    REGEXES,
    SEMVERS,
    STRINGS,
    TIMESTAMPS,
    TIMEZONES,
    URLS,
    World,
    make_world,
    quote,
)

Template = Callable[[], str]
CASE_FUNCTIONS = ["lowerAscii", "upperAscii", "trim"]
FORMAT_CLAUSES = ["%s", "%d", "%f", "%.2f", "%x", "%X", "%o", "%b", "%e", "%s-%d", "%%", "%q",
                  "%5d"]
BAD_FORMAT_CLAUSES = ["%z", "%", "%5", "%.x", "%d %d"]
TIME_GETTERS = ["getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate",
                "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds"]
DURATION_GETTERS = ["getHours", "getMinutes", "getSeconds", "getMilliseconds"]
URL_GETTERS = ["getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"]
IP_METHODS = ["family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
              "isLinkLocalUnicast", "isGlobalUnicast"]
ALL_SEMVERS = SEMVERS + LOOSE_SEMVERS + BAD_SEMVERS
BYTES_OPERANDS = ["b'abc'", "b''", "by"]
MIXED_ELEMENTS = ["1, 2.0", "1, 'a'", "1, 1u", "i, s", "ints, strs", "null, 1", "1, dyn('a')"]


class Operands:
    """Sub-expressions by CEL type; ``depth`` bounds how deeply they nest."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def one(self, *templates: Template) -> str:
        return self.rng.choice(templates)()

    def lit(self, pool: list[str]) -> str:
        return quote(self.rng.choice(pool))

    def int_(self, depth: int = 1) -> str:
        leaves: list[Template] = [
            lambda: str(self.rng.randint(-5, 20)), lambda: "i", lambda: "j",
            lambda: self.rng.choice(["9223372036854775807", "-9223372036854775808", "0"]),
            lambda: "size(strs)", lambda: "pod.priority",
        ]
        if depth <= 0:
            return self.one(*leaves)
        return self.one(
            *leaves,
            lambda: f"({self.int_(depth - 1)} {self.rng.choice('+-*/%')} {self.int_(depth - 1)})",
            lambda: f"int({self.double(depth - 1)})",
            lambda: f"ints[{self.int_(0)}]",
            lambda: self.rng.choice(["ints.sum()", "ints.max()", "ints.min()", "empty.sum()"]),
            lambda: f"{self.string(depth - 1)}.indexOf({self.string(0)})",
            lambda: f"size({self.string(depth - 1)})",
        )

    def static_int(self) -> str:
        """An int operand of static type ``int`` (list and map literal elements: Kubernetes
        requires homogeneous literals, so a ``dyn`` there is a type error of its own)."""
        return self.one(lambda: str(self.rng.randint(-5, 20)), lambda: "i", lambda: "j",
                        lambda: "size(strs)")

    def uint(self, depth: int = 1) -> str:
        leaves: list[Template] = [
            lambda: f"{self.rng.randint(0, 9)}u", lambda: "u",
            lambda: "18446744073709551615u",
        ]
        if depth <= 0:
            return self.one(*leaves)
        return self.one(
            *leaves,
            lambda: f"uint({self.int_(depth - 1)})",
            lambda: f"({self.uint(depth - 1)} {self.rng.choice('+-*/%')} {self.uint(depth - 1)})",
        )

    def double(self, depth: int = 1) -> str:
        leaves: list[Template] = [
            lambda: self.rng.choice(["1.5", "0.0", "-0.0", "2.0", "1e308", "0.1", "-3.25"]),
            lambda: "d", lambda: "double('NaN')", lambda: "double('inf')",
        ]
        if depth <= 0:
            return self.one(*leaves)
        return self.one(
            *leaves,
            lambda: f"double({self.int_(depth - 1)})",
            lambda: self.rng.choice(["doubles.sum()", "doubles.max()", "doubles[0]"]),
            lambda: f"({self.double(depth - 1)} {self.rng.choice('+-*/')} "
                    f"{self.double(depth - 1)})",
        )

    def number(self, depth: int = 1) -> str:
        return self.one(lambda: self.int_(depth), lambda: self.uint(depth),
                        lambda: self.double(depth))

    def string(self, depth: int = 1) -> str:
        leaves: list[Template] = [
            lambda: self.lit(STRINGS), lambda: "s", lambda: "pod.name",
            lambda: f"labels[{self.lit(LABEL_KEYS)}]",
        ]
        if depth <= 0:
            return self.one(*leaves)
        return self.one(
            *leaves,
            lambda: f"{self.string(depth - 1)} + {self.string(depth - 1)}",
            lambda: f"string({self.one(self.int_, self.double, self.uint)})",
            lambda: f"strs[{self.int_(0)}]",
            lambda: f"{self.string(depth - 1)}.{self.rng.choice(CASE_FUNCTIONS)}()",
        )

    def boolean(self, depth: int = 1) -> str:
        leaves: list[Template] = [lambda: self.rng.choice(["true", "false"]), lambda: "b"]
        if depth <= 0:
            return self.one(*leaves)
        return self.one(
            *leaves,
            lambda: f"{self.int_(depth - 1)} {self.rng.choice(['<', '<=', '==', '!='])} "
                    f"{self.int_(depth - 1)}",
            lambda: f"{self.string(depth - 1)}.startsWith({self.string(0)})",
            lambda: f"{self.int_(0)} in ints",
        )

    def timestamp(self) -> str:
        return self.one(
            lambda: "ts", lambda: f"timestamp({self.lit(TIMESTAMPS)})",
            lambda: f"timestamp({self.rng.choice(['0', '1700000000', '-62135596800', 'i'])})",
            lambda: f"(ts + {self.duration()})",
        )

    def duration(self) -> str:
        return self.one(lambda: "dur", lambda: f"duration({self.lit(DURATIONS)})",
                        lambda: "(ts - timestamp('2024-01-01T00:00:00Z'))")

    def int_list(self) -> str:
        return self.one(
            lambda: "ints", lambda: "empty", lambda: "[1, 2, 3]", lambda: "[3, 1, 2, 1]",
            lambda: f"lists.range({self.rng.randint(0, 5)})",
            lambda: f"ints.filter(x, x > {self.int_(0)})", lambda: "ints.map(x, x * 2)",
            lambda: f"[{self.static_int()}, {self.static_int()}]",
        )

    def double_list(self) -> str:
        return self.one(lambda: "doubles", lambda: "[1.5, -0.5, 2.0]",
                        lambda: "[0.0, double('NaN')]", lambda: "ints.map(x, double(x))")

    def string_list(self) -> str:
        # (a map's iteration order is unspecified: lists made from one are sorted)
        return self.one(lambda: "strs", lambda: "['b', 'a', 'c']",
                        lambda: "labels.map(k, k).sort()",
                        lambda: f"{self.string(0)}.split(',')")

    def any_list(self) -> str:
        return self.one(self.int_list, self.double_list, self.string_list,
                        lambda: "[true, false]", lambda: "[duration('1s'), duration('1m')]",
                        lambda: "pod.containers", lambda: "nested")

    def string_map(self) -> str:
        return self.one(lambda: "labels", lambda: "pod.labels", lambda: "pod.annotations",
                        lambda: "{'a': 'x', 'b': 'y'}", lambda: "{}")

    def quantity(self) -> str:
        return self.one(lambda: f"quantity({self.lit(QUANTITIES)})", lambda: "quantity(qty)",
                        lambda: "quantity(pod.requests.cpu)",
                        lambda: "quantity(pod.requests.memory)")

    def ip(self) -> str:
        return self.one(lambda: f"ip({self.lit(IPS)})", lambda: "ip(addr)",
                        lambda: "ip(pod.ip)", lambda: f"cidr({self.lit(CIDRS)}).ip()")

    def cidr(self) -> str:
        return self.one(lambda: f"cidr({self.lit(CIDRS)})", lambda: "cidr(net)")

    def url(self) -> str:
        return self.one(lambda: f"url({self.lit(URLS)})", lambda: "url(link)")

    def semver(self) -> str:
        return self.one(lambda: f"semver({self.lit(SEMVERS)})", lambda: "semver(ver)",
                        lambda: f"semver({self.lit(LOOSE_SEMVERS + SEMVERS)}, true)")


# ------------------------------------------------------------------------------- areas
# Each area: operands → one expression. Keep the templates close to what policies write.


def arithmetic(o: Operands) -> str:
    return o.one(
        lambda: f"{o.int_()} {o.rng.choice('+-*/%')} {o.int_()}",
        lambda: f"{o.uint()} {o.rng.choice('+-*/%')} {o.uint()}",
        lambda: f"{o.double()} {o.rng.choice('+-*/')} {o.double()}",
        lambda: f"-{o.one(o.int_, o.double)}",
        lambda: o.rng.choice(["9223372036854775807 + 1", "-9223372036854775808 - 1",
                              "-(-9223372036854775808)", "-9223372036854775808 / -1",
                              "-9223372036854775808 % -1", "i * i", "0u - 1u", "i / 0",
                              "i % 0", "1.0 / 0.0", "0.0 / 0.0", "-i"]),
        lambda: f"{o.int_()} + {o.double()}",  # mixed types: a compile error
    )


def comparison(o: Operands) -> str:
    op = o.rng.choice(["<", "<=", ">", ">=", "==", "!="])
    return o.one(
        lambda: f"{o.number()} {op} {o.number()}",
        lambda: f"{o.double()} {op} {o.double()}",
        lambda: f"{o.string()} {op} {o.string()}",
        lambda: f"{o.rng.choice(['b', 'true', 'false'])} {op} {o.rng.choice(['b', 'true'])}",
        lambda: f"{o.timestamp()} {op} {o.timestamp()}",
        lambda: f"{o.duration()} {op} {o.duration()}",
        lambda: f"by {op} {o.rng.choice(BYTES_OPERANDS)}",
        lambda: f"{o.one(o.int_, o.string, o.double, o.boolean)} == "
                f"{o.one(o.int_, o.string, o.double, o.boolean)}",
        lambda: f"obj {op} {o.one(o.int_, o.string, o.double)}",
        lambda: f"{o.any_list()} == {o.any_list()}",
        lambda: f"{o.string_map()} == {o.string_map()}",
        lambda: "null == obj",
    )


def logic(o: Operands) -> str:
    return o.one(
        lambda: f"{o.boolean()} {o.rng.choice(['&&', '||'])} {o.boolean()}",
        lambda: f"!{o.boolean()}",
        lambda: f"{o.boolean()} ? {o.int_()} : {o.int_()}",
        lambda: f"(i / 0 == 1) {o.rng.choice(['&&', '||'])} {o.boolean(0)}",
        lambda: f"{o.boolean(0)} {o.rng.choice(['&&', '||'])} (ints[100] == 1)",
        lambda: f"{o.boolean()} ? {o.string()} : {o.int_()}",
        lambda: "obj ? 1 : 2",
    )


DOUBLE_TEXTS = ["1.5", "NaN", "-Inf", "x", "1e400"]
TYPE_NAMES = ["int", "string", "double", "dyn"]


def conversions(o: Operands) -> str:
    return o.one(
        lambda: f"int({o.one(o.double, o.uint, o.string, lambda: 'ts')})",
        lambda: f"int({o.lit(['42', '-7', 'x', '1e3', '9223372036854775808', ' 1'])})",
        lambda: f"uint({o.one(o.int_, o.double, lambda: o.lit(['7', '-1', 'x']))})",
        lambda: f"double({o.one(o.int_, o.uint, lambda: o.lit(DOUBLE_TEXTS))})",
        lambda: f"string({o.one(o.int_, o.uint, o.double, o.boolean, o.timestamp, o.duration)})",
        lambda: "string(by)",
        lambda: f"bytes({o.string()})",
        lambda: f"bool({o.lit(['true', 'false', 'TRUE', 't', '1', 'yes'])})",
        lambda: f"type({o.one(o.int_, o.uint, o.double, o.string, o.any_list, o.string_map)})",
        lambda: f"type({o.rng.choice(['obj', 'null', 'ts', 'dur'])})",
        lambda: f"dyn({o.one(o.int_, o.string)}) {o.rng.choice(['==', '<'])} {o.double()}",
        lambda: f"type({o.one(o.int_, o.string)}) == {o.rng.choice(TYPE_NAMES)}",
        lambda: f"int({o.double(0)} * 1e18)",
        lambda: f"timestamp({o.string(0)})",
    )


def strings(o: Operands) -> str:
    s = o.string
    return o.one(
        lambda: f"{s()}.{o.rng.choice(['contains', 'startsWith', 'endsWith'])}({s(0)})",
        lambda: f"{s()}.size()",
        lambda: f"{s()}.charAt({o.int_(0)})",
        lambda: f"{s()}.{o.rng.choice(['indexOf', 'lastIndexOf'])}({s(0)})",
        lambda: f"{s()}.{o.rng.choice(['indexOf', 'lastIndexOf'])}({s(0)}, {o.int_(0)})",
        lambda: f"{s()}.{o.rng.choice(['lowerAscii', 'upperAscii', 'trim', 'reverse'])}()",
        lambda: f"{s()}.replace({s(0)}, {s(0)})",
        lambda: f"{s()}.replace({s(0)}, {s(0)}, {o.int_(0)})",
        lambda: f"{s()}.split({o.lit([',', ' ', '', '-'])})",
        lambda: f"{s()}.split({o.lit([',', ''])}, {o.int_(0)})",
        lambda: f"{s()}.substring({o.int_(0)})",
        lambda: f"{s()}.substring({o.int_(0)}, {o.int_(0)})",
        lambda: f"{o.string_list()}.join({o.rng.choice(['', quote(', ')])})",
        lambda: f"strings.quote({s()})",
        lambda: f"{o.lit(FORMAT_CLAUSES)}.format([{o.one(o.int_, o.string, o.double, o.uint)}])",
        lambda: f"{o.lit(FORMAT_CLAUSES)}.format([{o.rng.choice(['null', 'ints', 'b'])}])",
        lambda: f"'%s and %s'.format([{o.any_list()}, {o.string_map()}])",
        lambda: f"{s()} + {s()}",
        lambda: f"{s()}.matches({o.lit(REGEXES)})",
        lambda: f"{s()}.matches(s)",
    )


NUMBERED = ["1, 2, 3, 4", "abc 123", "a1b22c333"]


def regex(o: Operands) -> str:
    return o.one(
        lambda: f"{o.string()}.find({o.lit(REGEXES)})",
        lambda: f"{o.string()}.findAll({o.lit(REGEXES)})",
        lambda: f"{o.string()}.findAll({o.lit(REGEXES)}, {o.int_(0)})",
        lambda: f"{o.string()}.matches({o.lit(REGEXES)})",
        lambda: f"{o.lit(NUMBERED)}.findAll('[0-9]+').map(x, int(x)).sum()",
        lambda: f"{o.string()}.find(s)",
    )


def time(o: Operands) -> str:
    getter = o.rng.choice(TIME_GETTERS)
    return o.one(
        lambda: f"{o.timestamp()}.{getter}()",
        lambda: f"{o.timestamp()}.{getter}({o.lit(TIMEZONES)})",
        lambda: f"{o.duration()}.{o.rng.choice(DURATION_GETTERS)}()",
        lambda: f"{o.timestamp()} {o.rng.choice(['+', '-'])} {o.duration()}",
        lambda: f"{o.timestamp()} - {o.timestamp()}",
        lambda: f"{o.duration()} {o.rng.choice(['+', '-'])} {o.duration()}",
        lambda: f"string({o.one(o.timestamp, o.duration)})",
        lambda: f"int({o.timestamp()})",
        lambda: f"timestamp({o.lit(TIMESTAMPS)})",
        lambda: f"duration({o.lit(DURATIONS)})",
        lambda: "timestamp('9999-12-31T23:59:59Z') + duration('1s')",
        lambda: "timestamp('0001-01-01T00:00:00Z') - duration('1ns')",
        lambda: "duration('290000h') + duration('290000h')",
        lambda: f"timestamp(pod.creationTimestamp) < {o.timestamp()}",
        lambda: f"duration({o.string(0)})",
    )


MACROS = ["all", "exists", "exists_one"]
TWO_VARIABLE_MACROS = ["all", "exists", "existsOne"]
SORT_KEYS = ["-x", "x % 3", "string(x)", "x * 1.5"]


def lists(o: Operands) -> str:
    return o.one(
        lambda: f"{o.int_(0)} in {o.int_list()}",
        lambda: f"{o.int_list()}[{o.int_(0)}]",
        lambda: f"{o.int_list()} + {o.int_list()}",
        lambda: f"size({o.any_list()})",
        lambda: f"{o.int_list()}.{o.rng.choice(MACROS)}(x, x > {o.int_(0)})",
        lambda: f"{o.int_list()}.map(x, x {o.rng.choice('+*/%')} {o.int_(0)})",
        lambda: f"{o.int_list()}.map(x, x > 0, x * 2)",
        lambda: f"{o.int_list()}.filter(x, x % 2 == 0)",
        lambda: "pod.containers.map(c, c.name)",
        lambda: "pod.containers.exists(c, c.ports.exists(p, p == 443))",
        lambda: "pod.containers.all(c, c.image.startsWith('nginx'))",
        lambda: "[1, 2, 3].exists(x, x / (x - 2) > 0)",
        lambda: "[0, 1].all(x, 1 / x > 0)",
    )


def kubernetes_lists(o: Operands) -> str:
    fn = o.rng.choice(["isSorted", "sum", "min", "max"])
    return o.one(
        lambda: f"{o.one(o.int_list, o.double_list, o.string_list)}.{fn}()",
        lambda: f"{o.any_list()}.{fn}()",
        lambda: f"[].{fn}()",
        lambda: f"{o.int_list()}.{o.rng.choice(['indexOf', 'lastIndexOf'])}({o.int_(0)})",
        lambda: f"{o.string_list()}.{o.rng.choice(['indexOf', 'lastIndexOf'])}({o.string(0)})",
        lambda: f"{o.double_list()}.{o.rng.choice(['indexOf', 'lastIndexOf'])}({o.double(0)})",
        lambda: f"[{o.rng.choice(['1, 2.0', '1u, 2', '1, 2u, 3.0'])}].{fn}()",
        lambda: "[duration('1m'), duration('1s')].sum()",
        lambda: f"[{o.timestamp()}, {o.timestamp()}].{o.rng.choice(['min', 'max', 'isSorted'])}()",
        lambda: f"pod.containers.map(c, size(c.ports)).{fn}()",
    )


def extended_lists(o: Operands) -> str:
    return o.one(
        lambda: f"{o.any_list()}.distinct()",
        lambda: "nested.flatten()",
        lambda: f"[[1, [2, [3]]], [4]].flatten({o.rng.randint(-1, 3)})",
        lambda: f"lists.range({o.rng.choice(['0', '3', '-1', 'j'])})",
        lambda: f"{o.any_list()}.reverse()",
        lambda: f"{o.int_list()}.slice({o.int_(0)}, {o.int_(0)})",
        lambda: f"{o.one(o.int_list, o.double_list, o.string_list)}.sort()",
        lambda: f"{o.any_list()}.sort()",
        lambda: f"{o.int_list()}.sortBy(x, {o.rng.choice(SORT_KEYS)})",
        lambda: "pod.containers.sortBy(c, c.name).map(c, c.name)",
        lambda: f"{o.any_list()}.{o.rng.choice(['first', 'last'])}()",
        lambda: f"{o.int_list()}.{o.rng.choice(['first', 'last'])}().orValue(-1)",
        lambda: f"[{o.rng.choice(['1, 1.0, 1u', 'ints, ints', '[1], [1]'])}].distinct()",
    )


MIXED_LISTS = ["[1, 2.0]", "[1u]", "[1.0]", "[1]", "[2u, 1]", "[1.0, 2.0]"]


def sets(o: Operands) -> str:
    fn = o.rng.choice(["contains", "equivalent", "intersects"])
    return o.one(
        lambda: f"sets.{fn}({o.int_list()}, {o.int_list()})",
        lambda: f"sets.{fn}({o.string_list()}, {o.string_list()})",
        lambda: f"sets.{fn}({o.rng.choice(MIXED_LISTS)}, {o.rng.choice(MIXED_LISTS)})",
        lambda: f"sets.{fn}({o.any_list()}, {o.any_list()})",
        lambda: f"sets.{fn}([], {o.int_list()})",
    )


def maps(o: Operands) -> str:
    key = o.lit([*LABEL_KEYS, "missing"])
    return o.one(
        lambda: f"{o.string_map()}[{key}]",
        lambda: f"{key} in {o.string_map()}",
        lambda: f"has(pod.labels.{o.rng.choice(['app', 'tier', 'missing'])})",
        lambda: f"has(pod.{o.rng.choice(['name', 'spec', 'requests'])})",
        lambda: f"size({o.string_map()})",
        lambda: f"{o.string_map()}.{o.rng.choice(MACROS)}(k, k.startsWith('a'))",
        lambda: f"{o.string_map()}.map(k, k + '=' + {o.string_map()}[k]).sort()",
        lambda: "{'a': 1, 'a': 2}",
        lambda: f"{{{key}: {o.static_int()}, 'b': {o.static_int()}}}",
        lambda: f"{{1: 'a', {o.rng.choice(['2', '1u', '2.0', 'true'])}: 'b'}}",
        lambda: "pod.requests.cpu",
        lambda: "pod.missing",
        lambda: "pod.annotations.delay",
        lambda: f"{o.string_map()}.{o.rng.choice(TWO_VARIABLE_MACROS)}(k, v, v.size() > 1)",
        lambda: f"{o.int_list()}.{o.rng.choice(TWO_VARIABLE_MACROS)}(i, v, v > i)",
        lambda: f"{o.string_map()}.transformList(k, v, k + v).sort()",
        lambda: f"{o.int_list()}.transformList(i, v, i * v)",
        lambda: f"{o.int_list()}.transformList(i, v, v > 0, v)",
        lambda: f"{o.string_map()}.transformMap(k, v, v.size())",
        lambda: f"{o.int_list()}.transformMap(i, v, v * 2)",
        lambda: f"{o.string_map()}.transformMapEntry(k, v, {{v: k}})",
        lambda: "{'a': 1}.transformMapEntry(k, v, {'x': v})",
    )


def optionals(o: Operands) -> str:
    return o.one(
        lambda: f"optional.of({o.one(o.int_, o.string)})",
        lambda: f"optional.ofNonZeroValue({o.one(o.int_, o.string, o.any_list, lambda: 'null')})",
        lambda: "optional.none()",
        lambda: f"pod.?{o.rng.choice(['labels', 'missing', 'name'])}",
        lambda: f"pod.?labels.?{o.rng.choice(['app', 'missing'])}.orValue('none')",
        lambda: f"labels[?{o.lit(LABEL_KEYS)}]",
        lambda: f"labels[?{o.lit(LABEL_KEYS)}].orValue({o.string(0)})",
        lambda: f"{o.int_list()}[?{o.int_(0)}]",
        lambda: "labels[?'app'].or(labels[?'tier']).hasValue()",
        lambda: f"optional.of({o.int_(0)}).value()",
        lambda: "optional.none().value()",
        lambda: f"{{?'a': labels[?{o.lit(LABEL_KEYS)}], 'b': 'x'}}",
        lambda: f"[?labels[?'app'], ?optional.none(), {o.lit(STRINGS)}]",
        lambda: f"optional.unwrap([optional.of(1), optional.none(), "
                f"optional.of({o.static_int()})])",
        lambda: f"optional.of({o.int_(0)}) == optional.of({o.int_(0)})",
        lambda: f"optional.ofNonZeroValue({o.int_(0)}).orValue(-1)",
    )


def quantity(o: Operands) -> str:
    q = o.quantity
    return o.one(
        lambda: q(),
        lambda: f"isQuantity({o.one(lambda: o.lit(QUANTITIES + BAD_QUANTITIES), lambda: 'qty')})",
        lambda: f"{q()}.{o.rng.choice(['isInteger', 'asInteger', 'asApproximateFloat', 'sign'])}()",
        lambda: f"{q()}.{o.rng.choice(['add', 'sub'])}({o.one(q, lambda: o.int_(0))})",
        lambda: f"{q()}.{o.rng.choice(['isGreaterThan', 'isLessThan', 'compareTo'])}({q()})",
        lambda: f"{q()} == {q()}",
        lambda: f"quantity(pod.requests.cpu).isLessThan(quantity({o.lit(QUANTITIES)}))",
        lambda: f"{q()}.add({o.int_(0)}).sub({q()}).asInteger()",
        lambda: f"type({q()})",
        lambda: f"{q()} < {q()}",
    )


def urls(o: Operands) -> str:
    return o.one(
        lambda: o.url(),
        lambda: f"isURL({o.one(lambda: o.lit(URLS + BAD_URLS), lambda: 'link')})",
        lambda: f"{o.url()}.{o.rng.choice(URL_GETTERS)}()",
        lambda: f"{o.url()}.getQuery()",
        lambda: f"{o.url()} == {o.url()}",
        lambda: f"type({o.url()})",
    )


def ips(o: Operands) -> str:
    return o.one(
        lambda: o.ip(),
        lambda: f"isIP({o.one(lambda: o.lit(IPS + BAD_IPS), lambda: 'addr')})",
        lambda: f"ip.isCanonical({o.one(lambda: o.lit(IPS + BAD_IPS), lambda: 'addr')})",
        lambda: f"{o.ip()}.{o.rng.choice(IP_METHODS)}()",
        lambda: f"string({o.ip()})",
        lambda: f"{o.ip()} == {o.ip()}",
        lambda: f"type({o.ip()})",
    )


def cidrs(o: Operands) -> str:
    return o.one(
        lambda: o.cidr(),
        lambda: f"isCIDR({o.one(lambda: o.lit(CIDRS + BAD_CIDRS), lambda: 'net')})",
        lambda: f"{o.cidr()}.containsIP({o.one(o.ip, lambda: o.lit(IPS), lambda: 'addr')})",
        lambda: f"{o.cidr()}.containsCIDR({o.one(o.cidr, lambda: o.lit(CIDRS), lambda: 'net')})",
        lambda: f"{o.cidr()}.{o.rng.choice(['ip', 'masked', 'prefixLength'])}()",
        lambda: f"string({o.cidr()})",
        lambda: f"{o.cidr()} == {o.cidr()}.masked()",
    )


def formats(o: Operands) -> str:
    name = o.rng.choice(FORMATS)
    value = o.one(lambda: o.lit(NAMES), lambda: "pod.name", lambda: "s")
    return o.one(
        lambda: f"format.{name}().validate({value})",
        lambda: f"!format.{name}().validate({value}).hasValue()",
        lambda: f"format.{name}().validate({value}).orValue([]).join('; ')",
        lambda: f"format.named({o.lit([*FORMATS, 'nope', ''])})",
        lambda: f"format.named({o.lit(FORMATS)}).value().validate({value})",
        lambda: f"format.{name}()",
    )


def semvers(o: Operands) -> str:
    v = o.semver
    return o.one(
        lambda: v(),
        lambda: f"isSemver({o.one(lambda: o.lit(ALL_SEMVERS), lambda: 'ver')})",
        lambda: f"isSemver({o.lit(ALL_SEMVERS)}, {o.rng.choice(['true', 'false'])})",
        lambda: f"{v()}.{o.rng.choice(['major', 'minor', 'patch'])}()",
        lambda: f"{v()}.{o.rng.choice(['isGreaterThan', 'isLessThan', 'compareTo'])}({v()})",
        lambda: f"{v()} == {v()}",
    )


REGEX_FUNCTIONS = ["matches", "find", "findAll"]
PARSERS = ["quantity", "ip", "cidr", "url", "semver"]


def literals(o: Operands) -> str:
    """Constant arguments Kubernetes validates when the expression is compiled."""
    return o.one(
        lambda: f"{o.string(0)}.{o.rng.choice(REGEX_FUNCTIONS)}({o.lit(BAD_REGEXES)})",
        lambda: f"timestamp({o.lit(BAD_TIMESTAMPS)})",
        lambda: f"duration({o.lit(BAD_DURATIONS)})",
        lambda: f"quantity({o.lit(BAD_QUANTITIES)})",
        lambda: f"ip({o.lit(BAD_IPS)})",
        lambda: f"cidr({o.lit(BAD_CIDRS)})",
        lambda: f"url({o.lit(BAD_URLS)})",
        lambda: f"semver({o.lit(BAD_SEMVERS + LOOSE_SEMVERS)})",
        lambda: f"{o.lit(BAD_FORMAT_CLAUSES)}.format([1])",
        lambda: f"b ? {o.rng.choice(PARSERS)}({o.lit(BAD_QUANTITIES + BAD_IPS)}) : 0",
        lambda: f"[1, 2].exists(x, {o.string(0)}.matches({o.lit(BAD_REGEXES)}))",
    )


def type_errors(o: Operands) -> str:
    """Expressions Kubernetes' checker rejects: they must fail validation here too."""
    return o.one(
        lambda: f"{o.int_(0)} + {o.string(0)}",
        lambda: f"{o.string(0)} - {o.string(0)}",
        lambda: f"size({o.int_(0)})",
        lambda: f"{o.int_list()}[{o.rng.choice(['true', quote('a'), '1.5', '1u'])}]",
        lambda: f"{o.string_map()}[{o.int_(0)}]",
        lambda: f"[{o.rng.choice(MIXED_ELEMENTS)}]",
        lambda: f"{{'a': {o.int_(0)}, 'b': {o.string(0)}}}",
        lambda: f"{{{o.rng.choice(['1', 'i'])}: 'a', 'b': 'c'}}",
        lambda: f"{o.int_(0)}.startsWith('a')",
        lambda: f"b && {o.int_(0)}",
        lambda: f"{o.int_(0)} == {o.string(0)}",
        lambda: f"{o.int_(0)} == {o.double(0)}",
        lambda: f"{o.int_(0)} < {o.string(0)}",
        lambda: "ts + ts",
        lambda: f"labels.{o.rng.choice(['all', 'map'])}(k, k + 1)",
        lambda: "ints.map(x, x + 'a')",
        lambda: "undeclared + 1",
        lambda: f"{o.rng.choice(['nosuch', 'sortby', 'sumOf'])}({o.int_list()})",
        lambda: f"pod.labels.app {o.rng.choice(['+', '-'])} 1",
        lambda: f"{o.string(0)}.{o.rng.choice(['matches', 'contains'])}({o.int_(0)})",
    )


AREAS: dict[str, tuple[float, Callable[[Operands], str]]] = {
    "arithmetic": (1.0, arithmetic),
    "comparison": (1.0, comparison),
    "logic": (0.6, logic),
    "conversions": (1.0, conversions),
    "strings (ext v2)": (1.4, strings),
    "regex": (0.6, regex),
    "time": (1.2, time),
    "lists (core, macros)": (1.0, lists),
    "lists (Kubernetes)": (1.0, kubernetes_lists),
    "lists (ext v3)": (1.0, extended_lists),
    "sets": (0.6, sets),
    "maps, two-var comprehensions": (1.2, maps),
    "optionals": (1.0, optionals),
    "quantity": (1.0, quantity),
    "url": (0.7, urls),
    "ip": (0.7, ips),
    "cidr": (0.7, cidrs),
    "format": (0.7, formats),
    "semver": (0.7, semvers),
    "compile-time literal validation": (1.0, literals),
    "type errors": (1.0, type_errors),
}

WORLDS = 12  # value sets per seed; each case picks one


def generate(seed: int, count: int) -> list[Case]:
    """``count`` cases, the same for the same seed."""
    rng = random.Random(seed)
    worlds: list[World] = [make_world(rng) for _ in range(WORLDS)]
    operands = Operands(rng)
    names = list(AREAS)
    weights = [AREAS[n][0] for n in names]
    cases = []
    for _ in range(count):
        area = rng.choices(names, weights)[0]
        expr = AREAS[area][1](operands)
        cases.append(Case(area, expr, rng.choice(worlds).variables()))
    return cases
