"""Unit tests of policysched.cel.library.time (timestamp/duration getters, calendar helpers)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from policysched.cel import Environment, compile_expression
from policysched.cel.library import time as cel_time
from policysched.cel.values import (
    NANOS,
    TIMESTAMP_MAX_SECONDS,
    TIMESTAMP_MIN_SECONDS,
    CelError,
    Duration,
    Timestamp,
)

F = {f.name: f.impl for f in cel_time.FUNCTIONS}
GETTERS = ["getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek",
           "getDayOfYear", "getHours", "getMinutes", "getSeconds", "getMilliseconds"]

T_2009 = Timestamp(1234567890 * NANOS)  # 2009-02-13T23:31:30Z, a Friday


def fields(ts: Timestamp, tz: str | None = None) -> list[int]:
    return [F[n](ts) if tz is None else F[n](ts, tz) for n in GETTERS]


def test_declarations() -> None:
    assert [f.name for f in cel_time.FUNCTIONS] == GETTERS
    for f in cel_time.FUNCTIONS:
        assert all(o.member for o in f.overloads)
        with_duration = any(o.params[0].name == "google.protobuf.Duration" for o in f.overloads)
        assert with_duration == (f.name in {"getHours", "getMinutes", "getSeconds",
                                            "getMilliseconds"})


def test_utc_getters_conformance_values() -> None:
    assert fields(T_2009) == [2009, 1, 13, 12, 5, 43, 23, 31, 30, 0]
    assert F["getMilliseconds"](Timestamp(1234567880 * NANOS + 123456789)) == 123


@pytest.mark.parametrize(
    ("tz", "name", "expected"),
    [
        ("Australia/Sydney", "getDate", 14),
        ("US/Central", "getDayOfMonth", 12),
        ("+11:00", "getDayOfMonth", 13),
        ("UTC", "getDayOfWeek", 5),
        ("US/Central", "getDayOfYear", 43),
        ("-09:30", "getFullYear", 2009),
        ("02:00", "getHours", 1),  # the sign may be omitted
        ("Asia/Kathmandu", "getMinutes", 16),
        ("UTC", "getMonth", 1),
        ("-00:00", "getSeconds", 30),
    ],
)
def test_timezone_getters_conformance_values(tz: str, name: str, expected: int) -> None:
    assert F[name](T_2009, tz) == expected


def test_negative_offsets_and_names_before_utc_midnight() -> None:
    early = Timestamp(1234490400 * NANOS)  # 2009-02-13T02:00:00Z
    assert F["getDayOfMonth"](early, "-02:30") == 11
    assert F["getDayOfMonth"](early, "America/St_Johns") == 11
    assert F["getHours"](early, "-00:30") == 1
    assert F["getMinutes"](early, "-00:30") == 30


# Expected fields computed with Go's time package (what cel-go uses).
GO_FIELDS = [
    (1711846800, 123000000, "Europe/London", [2024, 2, 31, 30, 0, 90, 2, 0, 0, 123]),
    (1711839599, 0, "Europe/London", [2024, 2, 30, 29, 6, 89, 22, 59, 59, 0]),
    (1234567890, 0, "Pacific/Chatham", [2009, 1, 14, 13, 6, 44, 13, 16, 30, 0]),
    (-62135596800, 0, "America/New_York", [0, 11, 31, 30, 0, 365, 19, 3, 58, 0]),
    (253402300799, 999999999, "Asia/Kolkata", [10000, 0, 1, 0, 6, 0, 5, 29, 59, 999]),
    (1234567890, 0, "-02:30", [2009, 1, 13, 12, 5, 43, 21, 1, 30, 0]),
    (951782400, 0, "UTC", [2000, 1, 29, 28, 2, 59, 0, 0, 0, 0]),
    (-1, 999000000, "UTC", [1969, 11, 31, 30, 3, 364, 23, 59, 59, 999]),
]


@pytest.mark.parametrize(("secs", "nanos", "tz", "expected"), GO_FIELDS)
def test_fields_match_go(secs: int, nanos: int, tz: str, expected: list[int]) -> None:
    assert fields(Timestamp(secs * NANOS + nanos), tz) == expected


def test_fields_agree_with_datetime_on_random_instants() -> None:
    rng = random.Random(1)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for _ in range(2000):
        secs = rng.randint(TIMESTAMP_MIN_SECONDS, TIMESTAMP_MAX_SECONDS)
        ns = rng.randrange(NANOS)
        dt = epoch + timedelta(seconds=secs, microseconds=ns // 1000)
        want = [dt.year, dt.month - 1, dt.day, dt.day - 1, (dt.weekday() + 1) % 7,
                dt.timetuple().tm_yday - 1, dt.hour, dt.minute, dt.second, ns // 1_000_000]
        assert fields(Timestamp(secs * NANOS + ns)) == want


def test_civil_round_trip() -> None:
    for days in [*range(-800_000, 800_000, 997), -719162, 0, 2932896]:
        y, m, d = cel_time.civil_from_days(days)
        assert cel_time.days_from_civil(y, m, d) == days
    assert cel_time.civil_from_days(0) == (1970, 1, 1)
    assert cel_time.civil_from_days(11016) == (2000, 2, 29)


@pytest.mark.parametrize("tz", ["Mars/Olympus", "", "+25:00", "+01:60", "1:2", "+:00",
                                "../etc/passwd", "/etc/localtime", "Europe/Paris\x00",
                                "\u00dcn\u00efcode"])
def test_bad_timezones(tz: str) -> None:
    if tz == "":  # the empty name is UTC in Go's LoadLocation
        assert F["getHours"](T_2009, tz) == 23
        return
    with pytest.raises(CelError, match="timezone"):
        F["getHours"](T_2009, tz)


def test_timezone_must_be_a_string() -> None:
    with pytest.raises(CelError, match="no such overload"):
        F["getHours"](T_2009, 1)


@pytest.mark.parametrize(
    ("name", "ns", "expected"),
    [
        ("getHours", 10000 * NANOS, 2),
        ("getMinutes", 3730 * NANOS, 62),
        ("getSeconds", 3730 * NANOS, 3730),
        ("getMilliseconds", 123 * NANOS + 321456789, 123321),  # whole, as cel-go (not spec)
        ("getHours", -10000 * NANOS, -2),  # truncation toward zero
        ("getMinutes", -3730 * NANOS, -62),
        ("getSeconds", -1_500_000_000, -1),
        ("getMilliseconds", -1_500_000_000, -1500),
        ("getMilliseconds", 999_999, 0),
    ],
)
def test_duration_getters(name: str, ns: int, expected: int) -> None:
    assert F[name](Duration(ns)) == expected


@pytest.mark.parametrize("name", ["getFullYear", "getMonth", "getDate", "getDayOfMonth",
                                  "getDayOfWeek", "getDayOfYear"])
def test_calendar_getters_reject_durations(name: str) -> None:
    with pytest.raises(CelError, match="no such overload"):
        F[name](Duration(1))


@pytest.mark.parametrize("arg", [1, "2009-02-13T23:31:30Z", None])
def test_getters_reject_other_types(arg: Any) -> None:
    with pytest.raises(CelError, match="no such overload"):
        F["getHours"](arg)


def test_duration_getters_take_no_timezone() -> None:
    with pytest.raises(CelError, match="no such overload"):
        F["getHours"](Duration(1), "UTC")


# --------------------------------------------------------------------------- helpers


def test_format_and_parse_round_trip() -> None:
    rng = random.Random(2)
    for _ in range(500):
        ts = Timestamp(rng.randint(TIMESTAMP_MIN_SECONDS, TIMESTAMP_MAX_SECONDS) * NANOS
                       + rng.choice([0, rng.randrange(NANOS)]))
        assert cel_time.parse_timestamp(cel_time.format_timestamp(ts)) == ts
        # a duration prints as its float64 seconds (cel-go): it reads back as a duration
        # with the same float64 seconds, not always the same nanoseconds
        d = Duration(rng.randint(-(2**63), 2**63 - 1))
        back = cel_time.parse_duration(cel_time.format_duration(d))
        assert _float_seconds(back) == _float_seconds(d)


def _float_seconds(d: Duration) -> float:
    """Go's Duration.Seconds()."""
    secs, nanos = divmod(abs(d.ns), NANOS)
    return math.copysign(float(secs) + float(nanos) / 1e9, d.ns)


@pytest.mark.parametrize(
    ("ns", "want"),
    [  # Kubernetes 1.34 (cel-go): string(duration(...))
        (40809282_123456789, "40809282.12345679s"),
        (-1_000000001, "-1.000000001s"),
        (100_000_000, "0.1s"),
        (-1, "-0.000000001s"),
        (0, "0s"),
        (6347 * NANOS, "6347s"),
        (2**63 - 1, "9223372036.854776s"),
    ],
)
def test_format_duration_as_cel_go(ns: int, want: str) -> None:
    assert cel_time.format_duration(Duration(ns)) == want


def test_through_the_compiler() -> None:
    expr = ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek('Australia/Sydney') == 6 && "
            "duration('3730s').getMinutes() == 62")
    assert compile_expression(expr, Environment(), check=False).evaluate({}) is True


@pytest.mark.parametrize(("text", "want"), [
    # cel-go keeps the offset a timestamp was written with, and prints it
    ("string(timestamp('2024-01-01T10:00:00+02:00'))", "2024-01-01T10:00:00+02:00"),
    ("string(timestamp('2024-01-01T10:00:00.5-05:30'))", "2024-01-01T10:00:00.5-05:30"),
    ("string(timestamp('2024-01-01T10:00:00+00:00'))", "2024-01-01T10:00:00Z"),
    ("string(timestamp('0001-01-01T00:30:00+00:30'))", "0001-01-01T00:30:00+00:30"),
    ("string(timestamp('2024-01-01T10:00:00+02:00') - duration('11h'))",
     "2023-12-31T23:00:00+02:00"),                                  # kept through arithmetic
    ("string(duration('1h') + timestamp('2024-01-01T10:00:00+02:00'))",
     "2024-01-01T11:00:00+02:00"),
    ("string([timestamp('2024-01-01T10:00:00+02:00')].max())", "2024-01-01T10:00:00+02:00"),
    ("'%s'.format([timestamp('2024-01-01T10:00:00+02:00')])", "2024-01-01T10:00:00+02:00"),
    ("string(timestamp(1700000000))", "2023-11-14T22:13:20Z"),
])
def test_a_timestamp_prints_at_its_own_offset(text: str, want: str) -> None:
    assert compile_expression(text, Environment()).evaluate({}) == want


def test_the_offset_changes_nothing_else() -> None:
    expr = ("timestamp('2024-01-01T10:00:00+02:00') == timestamp('2024-01-01T08:00:00Z') && "
            "timestamp('2024-01-01T10:00:00+02:00').getHours() == 8 && "  # UTC by default
            "timestamp('2024-01-01T10:00:00+02:00').getHours('+02:00') == 10 && "
            "int(timestamp('1970-01-01T01:00:00+01:00')) == 0 && "
            "timestamp('2024-01-01T10:00:00+02:00') - timestamp('2024-01-01T08:00:00Z') "
            "== duration('0s')")
    assert compile_expression(expr, Environment()).evaluate({}) is True
    assert len({Timestamp(0, 3600), Timestamp(0)}) == 1
