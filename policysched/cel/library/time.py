"""Timestamp and duration accessors (``getHours`` ...), and the calendar helpers shared with
``core`` (RFC 3339 / Go duration parsing and formatting).

Timestamps are ``values.Timestamp`` (integer nanoseconds since the epoch, UTC); all calendar
arithmetic here is integer arithmetic, so every representable timestamp works, including
those that a timezone shifts just outside years 1..9999.

Getters follow the CEL spec: ``getMonth``, ``getDayOfMonth`` and ``getDayOfYear`` are
0-based, ``getDate`` is 1-based, ``getDayOfWeek`` is 0 for Sunday. The optional timezone is
an IANA name (``"Europe/Paris"``, via ``zoneinfo``), ``"UTC"``, or a fixed offset
``"[+-]HH:MM"`` (the sign may be omitted, as in cel-go).
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal
from functools import lru_cache
from typing import Any

from ..types import DURATION, INT, STRING, TIMESTAMP
from ..values import (
    INT64_MAX,
    NANOS,
    TIMESTAMP_MAX_SECONDS,
    TIMESTAMP_MIN_SECONDS,
    CelError,
    Duration,
    Timestamp,
    no_such_overload,
)
from .function import Function, Overload

_SECONDS_PER_DAY = 86400
# Days before each month in a non-leap year.
_CUMULATIVE_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


# --------------------------------------------------------------------------- calendar


def _is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month 1..12, day 1..31) of a day number (0 = 1970-01-01), proleptic Gregorian."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if m <= 2 else 0), m, d


def days_from_civil(y: int, m: int, d: int) -> int:
    """Inverse of ``civil_from_days``."""
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _day_of_year(y: int, m: int, d: int) -> int:
    """0-based day of the year."""
    return _CUMULATIVE_DAYS[m - 1] + d - 1 + (1 if m > 2 and _is_leap(y) else 0)


# --------------------------------------------------------------------------- timestamps


def _quote(s: str) -> str:
    return "'" + (s if len(s) <= 80 else s[:77] + "...") + "'"


def _bad_timestamp(s: str) -> CelError:
    return CelError(
        f"type conversion error from 'string' to 'google.protobuf.Timestamp': "
        f"{_quote(s)} is not an RFC 3339 timestamp"
    )


def _digits(s: str, start: int, end: int) -> int:
    """The ASCII decimal number in s[start:end], or -1."""
    part = s[start:end]
    if len(part) != end - start or not (part.isascii() and part.isdigit()):
        return -1
    return int(part)


def parse_timestamp(s: str) -> Timestamp:
    """RFC 3339 (``2006-01-02T15:04:05.999999999Z`` or with ``±hh:mm``), as Go parses it:
    fractional seconds of any length (truncated to nanoseconds), then range-checked to
    0001-01-01..9999-12-31 UTC."""
    n = len(s)
    dash = s.find("-")
    if dash > 4 and s[:dash].isascii() and s[:dash].isdigit():
        raise CelError(f"timestamp {_quote(s)} out of range")
    if n < 20 or s[4] != "-" or s[7] != "-" or s[10] != "T" or s[13] != ":" or s[16] != ":":
        raise _bad_timestamp(s)
    year = _digits(s, 0, 4)
    month = _digits(s, 5, 7)
    day = _digits(s, 8, 10)
    hour = _digits(s, 11, 13)
    minute = _digits(s, 14, 16)
    second = _digits(s, 17, 19)
    if min(year, month, day, hour, minute, second) < 0 or not (1 <= month <= 12):
        raise _bad_timestamp(s)
    days_in_month = _DAYS_IN_MONTH[month - 1] + (1 if month == 2 and _is_leap(year) else 0)
    if not (1 <= day <= days_in_month) or hour > 23 or minute > 59 or second > 59:
        raise _bad_timestamp(s)
    i = 19
    nanos = 0
    if s[i] == ".":
        j = i + 1
        while j < n and "0" <= s[j] <= "9":
            j += 1
        if j == i + 1:
            raise _bad_timestamp(s)
        frac = s[i + 1 : min(j, i + 10)]
        nanos = int(frac) * 10 ** (9 - len(frac))
        i = j
    rest = s[i:]
    if rest == "Z":
        offset = 0
    elif len(rest) == 6 and rest[0] in "+-" and rest[3] == ":":
        oh, om = _digits(rest, 1, 3), _digits(rest, 4, 6)
        if oh < 0 or om < 0 or oh > 23 or om > 59:
            raise _bad_timestamp(s)
        offset = (oh * 3600 + om * 60) * (-1 if rest[0] == "-" else 1)
    else:
        raise _bad_timestamp(s)
    secs = (days_from_civil(year, month, day) * _SECONDS_PER_DAY
            + hour * 3600 + minute * 60 + second - offset)
    if not (TIMESTAMP_MIN_SECONDS <= secs <= TIMESTAMP_MAX_SECONDS):
        raise CelError(f"timestamp {_quote(s)} out of range")
    return Timestamp(secs * NANOS + nanos, offset)


def format_timestamp(ts: Timestamp) -> str:
    """RFC 3339 at the timestamp's own UTC offset (``Z`` for UTC) with the fraction
    trimmed of trailing zeros: Go's RFC3339Nano, as cel-go prints a timestamp."""
    secs, nanos = divmod(ts.ns, NANOS)
    days, sod = divmod(secs + ts.offset, _SECONDS_PER_DAY)
    y, m, d = civil_from_days(days)
    text = f"{y:04d}-{m:02d}-{d:02d}T{sod // 3600:02d}:{sod // 60 % 60:02d}:{sod % 60:02d}"
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    if not ts.offset:
        return text + "Z"
    sign = "-" if ts.offset < 0 else "+"
    minutes = abs(ts.offset) // 60
    return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


# --------------------------------------------------------------------------- durations

_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": NANOS,
    "m": 60 * NANOS,
    "h": 3600 * NANOS,
}


def _bad_duration(s: str, why: str = "invalid duration") -> CelError:
    return CelError(
        f"type conversion error from 'string' to 'google.protobuf.Duration': {why} {_quote(s)}"
    )


def parse_duration(s: str) -> Duration:
    """Go's ``time.ParseDuration`` syntax: ``[-+]?([0-9]*(\\.[0-9]*)?[a-zµμ]+)+`` or ``0``,
    units ns, us/µs/μs, ms, s, m, h. Exact integer arithmetic; the range is Go's (int64
    nanoseconds, about ±292 years), which Kubernetes' cel-go has."""
    n = len(s)
    i = 0
    neg = False
    if n and s[0] in "+-":
        neg = s[0] == "-"
        i = 1
    if s[i:] == "0":
        return Duration(0)
    if i == n:
        raise _bad_duration(s)
    total = 0
    while i < n:
        start = i
        while i < n and "0" <= s[i] <= "9":
            i += 1
        whole = s[start:i]
        frac = ""
        if i < n and s[i] == ".":
            i += 1
            fstart = i
            while i < n and "0" <= s[i] <= "9":
                i += 1
            frac = s[fstart:i]
        if not whole and not frac:
            raise _bad_duration(s)
        ustart = i
        while i < n and s[i] != "." and not ("0" <= s[i] <= "9"):
            i += 1
        if i == ustart:
            raise _bad_duration(s, "missing unit in duration")
        unit = _UNITS.get(s[ustart:i])
        if unit is None:
            raise _bad_duration(s, f"unknown unit {_quote(s[ustart:i])} in duration")
        whole = whole.lstrip("0")
        if len(whole) > 24:  # far beyond the range whatever the unit
            raise CelError(f"duration {_quote(s)} out of range")
        total += int(whole or "0") * unit
        if frac:
            frac = frac[:30]  # digits past 1e-30 of an hour cannot reach a nanosecond
            total += int(frac) * unit // 10 ** len(frac)
        if total > (INT64_MAX + 1 if neg else INT64_MAX):
            raise CelError(f"duration {_quote(s)} out of range")
    return Duration(-total if neg else total)


def format_duration(d: Duration) -> str:
    """Seconds with the shortest decimal fraction and an ``s`` suffix (``"1.5s"``,
    ``"-0.001s"``), as cel-go prints a duration: Go's ``Duration.Seconds()`` (a float64, so
    ``40809282.123456789s`` prints as ``40809282.12345679s``) in ``strconv`` 'f' form."""
    secs, nanos = divmod(abs(d.ns), NANOS)
    text = shortest_fixed(float(secs) + float(nanos) / 1e9)
    return ("-" if d.ns < 0 else "") + text.removesuffix(".0") + "s"


def shortest_fixed(x: float) -> str:
    """The shortest digits that read back as ``x``, never with an exponent: ``1.5``,
    ``1.0``, ``0.0000001``, ``1000000000000000000000`` (Go's 'f' format, -1 precision,
    except for a trailing ``.0``)."""
    text = repr(x)
    return format(Decimal(text), "f") if "e" in text else text


# --------------------------------------------------------------------------- timezones

_UTC_OFFSETS = (0, None)  # (fixed offset seconds, or a tzinfo)


@lru_cache(maxsize=512)
def _resolve_tz(tz: str) -> tuple[int, tzinfo | None] | str:
    """A timezone argument → (fixed offset seconds, None) or (0, tzinfo); or an error text."""
    if tz in ("", "UTC"):
        return _UTC_OFFSETS
    colon = tz.find(":")
    if colon >= 0:
        sign = -1 if tz[0] == "-" else 1
        hours = tz[1:colon] if tz[0] in "+-" else tz[:colon]
        minutes = tz[colon + 1 :]
        if (
            1 <= len(hours) <= 2
            and len(minutes) == 2
            and hours.isascii()
            and hours.isdigit()
            and minutes.isascii()
            and minutes.isdigit()
            and int(hours) <= 23
            and int(minutes) <= 59
        ):
            return sign * (int(hours) * 3600 + int(minutes) * 60), None
        return f"invalid timezone offset {_quote(tz)}: want [+-]HH:MM with HH <= 23, MM <= 59"
    if len(tz) > 255 or not tz.isascii():
        return f"unknown timezone {_quote(tz)}"
    try:
        return 0, zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown timezone {_quote(tz)}"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _zone_offset(zone: tzinfo, secs: int) -> int:
    """UTC offset in seconds of ``zone`` at Unix time ``secs``."""
    # datetime covers years 1..9999; the two days of timestamps at either end that a zone
    # could push outside take the offset from two days inwards (no zone changes there).
    margin = 2 * _SECONDS_PER_DAY
    probe = min(max(secs, TIMESTAMP_MIN_SECONDS + margin), TIMESTAMP_MAX_SECONDS - margin)
    local = (_EPOCH + timedelta(seconds=probe)).astimezone(zone)
    off = local.utcoffset()
    return 0 if off is None else int(off.total_seconds())


def local_seconds(ts: Timestamp, tz: Any, name: str) -> int:
    """Seconds since the epoch of the wall clock of ``ts`` in timezone ``tz`` (a CEL string)."""
    secs = ts.ns // NANOS
    if type(tz) is not str:
        raise no_such_overload(name, ts, tz)
    resolved = _resolve_tz(tz)
    if isinstance(resolved, str):
        raise CelError(resolved)
    offset, zone = resolved
    if zone is not None:
        offset = _zone_offset(zone, secs)
    return secs + offset


# --------------------------------------------------------------------------- getters

_NO_TZ: Any = object()


def _trunc_div(ns: int, unit: int) -> int:
    q = abs(ns) // unit
    return -q if ns < 0 else q


def _ts_full_year(secs: int, nanos: int) -> int:
    return civil_from_days(secs // _SECONDS_PER_DAY)[0]


def _ts_month(secs: int, nanos: int) -> int:
    return civil_from_days(secs // _SECONDS_PER_DAY)[1] - 1


def _ts_date(secs: int, nanos: int) -> int:
    return civil_from_days(secs // _SECONDS_PER_DAY)[2]


def _ts_day_of_month(secs: int, nanos: int) -> int:
    return civil_from_days(secs // _SECONDS_PER_DAY)[2] - 1


def _ts_day_of_week(secs: int, nanos: int) -> int:
    return (secs // _SECONDS_PER_DAY + 4) % 7  # 1970-01-01 was a Thursday


def _ts_day_of_year(secs: int, nanos: int) -> int:
    return _day_of_year(*civil_from_days(secs // _SECONDS_PER_DAY))


def _ts_hours(secs: int, nanos: int) -> int:
    return secs % _SECONDS_PER_DAY // 3600


def _ts_minutes(secs: int, nanos: int) -> int:
    return secs % 3600 // 60


def _ts_seconds(secs: int, nanos: int) -> int:
    return secs % 60


def _ts_milliseconds(secs: int, nanos: int) -> int:
    return nanos // 1_000_000


def _dur_hours(ns: int) -> int:
    return _trunc_div(ns, 3600 * NANOS)


def _dur_minutes(ns: int) -> int:
    return _trunc_div(ns, 60 * NANOS)


def _dur_seconds(ns: int) -> int:
    return _trunc_div(ns, NANOS)


def _dur_milliseconds(ns: int) -> int:
    # The whole duration in milliseconds, as cel-go (Go's Duration.Milliseconds) and so
    # Kubernetes: the spec's conformance data still give the milliseconds *component*
    # ('123.321s' → 321, "to be deprecated"); Kubernetes' users see 123321.
    return _trunc_div(ns, 1_000_000)


def _getter(
    name: str,
    on_timestamp: Callable[[int, int], int],
    on_duration: Callable[[int], int] | None,
) -> Callable[..., int]:
    def impl(x: Any, tz: Any = _NO_TZ) -> int:
        tx = type(x)
        if tx is Timestamp:
            if tz is _NO_TZ:
                return on_timestamp(x.ns // NANOS, x.ns % NANOS)
            return on_timestamp(local_seconds(x, tz, name), x.ns % NANOS)
        if tx is Duration and on_duration is not None and tz is _NO_TZ:
            return on_duration(x.ns)
        if tz is _NO_TZ:
            raise no_such_overload(name, x)
        raise no_such_overload(name, x, tz)

    impl.__name__ = name
    return impl


def _function(
    name: str,
    ts_id: str,
    on_timestamp: Callable[[int, int], int],
    on_duration: Callable[[int], int] | None = None,
    doc: str = "",
    examples: tuple[str, ...] = (),
) -> Function:
    overloads = [
        Overload(ts_id, (TIMESTAMP,), INT, member=True),
        Overload(ts_id + "_with_tz", (TIMESTAMP, STRING), INT, member=True),
    ]
    if on_duration is not None:
        overloads.append(
            Overload("duration_to_" + ts_id.removeprefix("timestamp_to_"), (DURATION,), INT,
                     member=True)
        )
    return Function(name, tuple(overloads), _getter(name, on_timestamp, on_duration), doc=doc,
                    examples=examples)


FUNCTIONS: list[Function] = [
    _function("getFullYear", "timestamp_to_year", _ts_full_year, doc="the year, e.g. 2009",
              examples=("timestamp(now).getFullYear()",)),
    _function("getMonth", "timestamp_to_month", _ts_month, doc="month, 0-based (0 = January)",
              examples=("timestamp('2025-03-15T10:00:00Z').getMonth()",)),
    _function("getDate", "timestamp_to_day_of_month_1_based", _ts_date,
              doc="day of the month, 1-based",
              examples=("timestamp('2025-03-15T10:00:00Z').getDate()",)),
    _function("getDayOfMonth", "timestamp_to_day_of_month", _ts_day_of_month,
              doc="day of the month, 0-based",
              examples=("timestamp('2025-03-15T10:00:00Z').getDayOfMonth()",)),
    _function("getDayOfWeek", "timestamp_to_day_of_week", _ts_day_of_week,
              doc="day of the week, 0 = Sunday",
              examples=("timestamp(now).getDayOfWeek('Europe/Paris') in [0, 6]",)),
    _function("getDayOfYear", "timestamp_to_day_of_year", _ts_day_of_year,
              doc="day of the year, 0-based",
              examples=("timestamp('2025-03-15T10:00:00Z').getDayOfYear()",)),
    _function("getHours", "timestamp_to_hours", _ts_hours, _dur_hours,
              doc="hour of the day; for a duration, whole hours",
              examples=("timestamp(now).getHours('America/New_York') < 9",
                        "duration('90m').getHours()")),
    _function("getMinutes", "timestamp_to_minutes", _ts_minutes, _dur_minutes,
              doc="minute of the hour; for a duration, whole minutes",
              examples=("timestamp(now).getMinutes()", "duration('90m').getMinutes()")),
    _function("getSeconds", "timestamp_to_seconds", _ts_seconds, _dur_seconds,
              doc="second of the minute; for a duration, whole seconds",
              examples=("duration('2m30s').getSeconds()",)),
    _function("getMilliseconds", "timestamp_to_milliseconds", _ts_milliseconds,
              _dur_milliseconds,
              doc="milliseconds of the second; for a duration, all of it in milliseconds "
                  "(as Kubernetes; the CEL spec's component is deprecated)",
              examples=("duration('1.5s').getMilliseconds()",)),
]
