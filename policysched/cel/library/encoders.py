"""cel-go's ``ext.Encoders`` library: ``base64.encode(bytes)`` and ``base64.decode(string)``.

Decoding accepts the standard alphabet with or without padding (Go's StdEncoding, then
RawStdEncoding); line breaks are ignored, anything else outside the alphabet is an error.
"""

from __future__ import annotations

import binascii
from typing import Any

from ..types import BYTES, STRING
from ..values import CelError, no_such_overload
from .function import Function, Overload


def base64_encode(b: Any) -> str:
    if type(b) is bytes:
        return binascii.b2a_base64(b, newline=False).decode("ascii")
    raise no_such_overload("base64.encode", b)


def base64_decode(s: Any) -> bytes:
    if type(s) is not str:
        raise no_such_overload("base64.decode", s)
    if "\n" in s or "\r" in s:
        s = s.replace("\n", "").replace("\r", "")
    try:
        return binascii.a2b_base64(s, strict_mode=True)
    except (binascii.Error, ValueError) as err:
        error = err
    # unpadded input (RawStdEncoding)
    if "=" not in s and len(s) % 4 != 1:
        try:
            return binascii.a2b_base64(s + "=" * (-len(s) % 4), strict_mode=True)
        except (binascii.Error, ValueError) as err:
            error = err
    raise CelError(f"base64.decode: illegal base64 data: {error}")


FUNCTIONS: list[Function] = [
    Function(
        "base64.encode",
        (Overload("base64_encode_bytes", (BYTES,), STRING),),
        base64_encode,
        cost_per_size=True,
        doc="standard base64 (with padding) of bytes",
        examples=("base64.encode(b'hello')",),
    ),
    Function(
        "base64.decode",
        (Overload("base64_decode_string", (STRING,), BYTES),),
        base64_decode,
        cost_per_size=True,
        doc="bytes of a standard base64 string, padded or not",
        examples=("base64.decode('aGVsbG8=')",),
    ),
]
