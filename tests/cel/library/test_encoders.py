"""Unit tests of ``base64.encode`` / ``base64.decode``."""

from __future__ import annotations

import pytest

from policysched.cel.library import encoders as E
from policysched.cel.values import CelError


def test_encode() -> None:
    assert E.base64_encode(b"hello") == "aGVsbG8="
    assert E.base64_encode(b"") == ""
    assert E.base64_encode(b"\xff\xfe") == "//4="


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("aGVsbG8=", b"hello"),
        ("aGVsbG8", b"hello"),  # unpadded (RawStdEncoding)
        ("SGVsbG8gV29ybGQh", b"Hello World!"),
        ("", b""),
        ("aGVs\nbG8=", b"hello"),  # Go ignores line breaks
        ("//4=", b"\xff\xfe"),
    ],
)
def test_decode(text: str, want: bytes) -> None:
    assert E.base64_decode(text) == want


@pytest.mark.parametrize("text", ["aGk==", "aGk=aGk=", "a", "aGVs bG8=", "a-_b", "é"])
def test_decode_errors(text: str) -> None:
    with pytest.raises(CelError, match="illegal base64 data"):
        E.base64_decode(text)


def test_round_trip_and_overloads() -> None:
    assert E.base64_decode(E.base64_encode(b"Hello World!")) == b"Hello World!"
    with pytest.raises(CelError, match="no such overload"):
        E.base64_encode("text")
    with pytest.raises(CelError, match="no such overload"):
        E.base64_decode(b"aGk=")
