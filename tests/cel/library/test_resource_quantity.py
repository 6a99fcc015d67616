"""Unit tests of policysched.cel.library.resource_quantity (apimachinery's resource.Quantity).

Expected values come from apimachinery v0.34.12's quantity_test.go where it has the case,
otherwise from running apimachinery (the comments say which behaviour is Go's quirk)."""

from __future__ import annotations

import pytest

from policysched.cel.library import resource_quantity
from policysched.cel.library.resource_quantity import (
    FORMAT_ERROR,
    NUMERIC_ERROR,
    SUFFIX_ERROR,
    Quantity,
    from_int,
    parse,
)
from policysched.cel.values import INT64_MIN, CelError


def text(s: str) -> str:
    return str(parse(s))


# TestQuantityString: the canonical form parses to itself (kept as written) ...
@pytest.mark.parametrize("canonical", [
    "1Gi", "300Mi", "6Ki", "1001Gi", "1Ti", "5", "500m", "1G", "1m", "80m", "1080m", "300M",
    "1T", "1234567M", "1234567m", "3k", "1025", "0", "1e9", "1e-3", "1e-9", "80e-3",
    "300e6", "1e12", "1e3", "3e3", "1n", "80n", "1080n", "1u", "80u", "1080u",
])
def test_canonical_text_is_kept(canonical: str) -> None:
    assert text(canonical) == canonical
    if canonical != "0":
        assert text("-" + canonical) == "-" + canonical


# ... and an alternate form prints canonically
@pytest.mark.parametrize(("alternate", "canonical"), [
    ("1024Mi", "1Gi"), ("307200Ki", "300Mi"), ("1025024Mi", "1001Gi"), ("1024Gi", "1Ti"),
    ("5000m", "5"), ("0.5", "500m"), ("1000M", "1G"), ("0.001T", "1G"), ("1000u", "1m"),
    ("1.08", "1080m"), ("1080000000n", "1080m"), (".001e12", "1e9"), ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"), ("00", "0"),
    # TestQuantityParseEmit
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    # the examples
    ("1.5Gi", "1536Mi"), ("1000m", "1"), ("1.5", "1500m"),
])
def test_alternate_forms_print_canonically(alternate: str, canonical: str) -> None:
    assert text(alternate) == canonical
    assert text("-" + alternate) == ("-" + canonical if canonical != "0" else "0")


@pytest.mark.parametrize(("written", "shown"), [
    ("+1", "+1"), ("007", "007"), ("1.500", "1.500"),  # cached as written, as Go does
    ("1000E", "1"),  # apimachinery has no DecimalSI suffix beyond E: it prints no suffix
    ("-", "0"), ("+", "0"), (".", "0"), ("k", "0"), ("Mi", "0"),  # no digits: zero in Go
    ("0.1n", "1n"), ("-0.1n", "-1n"), ("1e-400", "1e-9"),  # rounded up (away from 0) to 1n
    ("8Ei", "9223372036854775807"), ("16Ei", "9223372036854775807"),  # binary: capped
    ("1234567890123456789012", "1234567890123456789012"), ("1e99999", "1e99999"),
    ("1E", "1E"), ("1e+3", "1e+3"), ("0.5Ki", "512"), ("-.Ki", "0"),
])
def test_go_parse_quirks(written: str, shown: str) -> None:
    assert text(written) == shown


@pytest.mark.parametrize(("written", "message"), [
    ("", FORMAT_ERROR), ("1.5.3Gi", FORMAT_ERROR), ("10Mo", FORMAT_ERROR),
    ("1e3Mi", FORMAT_ERROR), ("1 ", FORMAT_ERROR), ("1KiB", FORMAT_ERROR),
    ("\u0661", FORMAT_ERROR),
    ("10Mm", SUFFIX_ERROR), ("200K", SUFFIX_ERROR), ("1e", SUFFIX_ERROR),
    ("1e99999999999999999999", SUFFIX_ERROR), ("1ee3", SUFFIX_ERROR),
    (".e-10", NUMERIC_ERROR), ("-.e-10", NUMERIC_ERROR),
])
def test_parse_errors_are_apimachinerys(written: str, message: str) -> None:
    with pytest.raises(CelError) as info:
        parse(written)
    assert info.value.message == message


def test_text_and_precision_limits_refuse_instead_of_computing_for_minutes() -> None:
    with pytest.raises(CelError, match="longer than"):
        parse("1" * (resource_quantity.MAX_TEXT + 1))
    big = parse("1e4000")
    with pytest.raises(CelError, match="significant digits"):
        big.add(parse("1"))
    assert str(big.add(parse("1e4000"))) == "20e3999"


@pytest.mark.parametrize(("written", "integer"), [
    ("50k", 50000), ("50000000G", 50000000000000000), ("50", 50), ("0", 0), ("1Ti", 2**40),
    ("1000m", None),  # int64Amount of scale -3: no integer, though it equals 1
    ("1.0", None), ("1.5Gi", None), ("1Pi", None),  # held as inf.Dec
    ("9999999999999999999999999999999999999G", None), ("1e19", None), ("1e99999", None),
])
def test_as_int64(written: str, integer: int | None) -> None:
    assert parse(written).as_int64() == integer


# TestStringQuantityAsApproximateFloat64, and Go's float64 roundings
@pytest.mark.parametrize(("written", "value"), [
    ("2Ki", 2048.0), ("1.1Ki", 1126.4), ("1Mi", 1048576.0), ("2Gi", 2147483648.0),
    ("50.703k", 50703.0), ("12e-1", 1.2000000000000002), ("1.5Gi", 1610612736.0),
    ("1e99999", float("inf")), ("-1e400", float("-inf")),
])
def test_approximate_float(written: str, value: float) -> None:
    assert parse(written).approximate_float() == value


def test_zero_with_a_huge_scale() -> None:
    f = parse("0e400").approximate_float()  # Go: 0 * Pow10(400) = 0 * +Inf
    assert f != f
    tiny = parse("0e-2000000000")  # held at scale -2e9: nothing of that size is built
    assert tiny.approximate_float() == 0.0 and tiny.as_int64() is None
    assert parse("0e2000000000").as_int64() == 0


def test_compare_sign_and_equality() -> None:
    assert parse("200M").compare(parse("0.2G")) == 0
    assert parse("50M").compare(parse("50Mi")) == -1
    assert parse("-50M").compare(parse("-50Mi")) == 1
    assert parse("1e99999").compare(parse("9e99998")) == 1
    assert parse("-1n").sign() == -1 and parse("0Ki").sign() == 0
    assert parse("1000m") == parse("1") and hash(parse("1000m")) == hash(parse("1"))
    assert parse("1000m").identity() != parse("1").identity()
    assert parse("1") != 1


# TestAdd / TestSub (values), and the format a zero takes from its operand
@pytest.mark.parametrize(("a", "op", "b", "shown"), [
    ("10", "add", "1e1", "20"), ("10", "add", "1", "11"), ("10Ki", "add", "1", "10241"),
    ("0", "add", "50", "50"), ("50", "add", "0", "50"), ("0", "add", "0", "0"),
    ("10", "sub", "1e1", "0"), ("10", "sub", "1", "9"), ("0", "sub", "50", "-50"),
    ("1.5Gi", "add", "1.5Gi", "3Gi"), ("4Ei", "add", "4Ei", "8Ei"),
    ("0Ki", "add", "2048", "2048"), ("1Ki", "sub", "1Ki", "0"),
    ("50k", "add", "20", "50020"), ("50k", "sub", "20k", "30k"),
])
def test_add_and_sub(a: str, op: str, b: str, shown: str) -> None:
    result = getattr(parse(a), op)(parse(b))
    assert str(result) == shown


def test_int_operands_are_decimal_exponent_quantities() -> None:
    assert str(parse("0").add(from_int(5000))) == "5e3"  # the zero takes the int's format
    # Go negates the int64 operand of Sub with wrap-around: -(-2^63) is -2^63, so it adds
    assert parse("5").sub(from_int(INT64_MIN)) == parse("-9223372036854775803")
    assert parse("5").add(from_int(INT64_MIN)).as_int64() == -9223372036854775803


def test_quantities_are_kept_by_the_parse_cache() -> None:
    assert parse("1Gi") is parse("1Gi")
    assert isinstance(parse("1Gi"), Quantity)
