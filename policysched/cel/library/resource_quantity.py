"""``kubernetes.Quantity``: apimachinery's ``resource.Quantity`` (v0.34) as a CEL value.

A ``Quantity`` is exact: its value is ``coefficient * 10**exponent``. Besides the value it
keeps what apimachinery keeps and what its methods can tell apart:

* ``scale``, ``big`` — Go's representation: an ``int64Amount`` (``unscaled * 10**scale``,
  ``big`` false) or an ``inf.Dec`` (``big``). ``AsInt64`` (CEL ``isInteger``/``asInteger``)
  succeeds only for an int64Amount of scale >= 0, so ``quantity('1000m')`` and
  ``quantity('1.5Gi')`` are no integers there, and ``AsApproximateFloat64`` multiplies the
  unscaled value by ``10**scale`` in float64 (``quantity('12e-1')`` gives
  1.2000000000000002);
* ``format`` — the suffix family (``DecimalSI`` ``1k``, ``BinarySI`` ``1Ki``,
  ``DecimalExponent`` ``1e3``), which ``str()`` uses for the canonical form (``1.5Gi`` →
  ``1536Mi``, ``1000m`` → ``1``, ``1.5`` → ``1500m``);
* ``text`` — the parsed text where ``ParseQuantity`` caches it as canonical: ``str()`` then
  returns it as written (``+1``, ``007``, ``1.500`` print so in Kubernetes too).

Parsing follows ``ParseQuantity`` and its error texts: ``-``, ``+`` and ``.`` are zero,
values are rounded up (away from zero) to a multiple of 1n, a binary-suffixed value is
capped at 2^63-1, an exponent is an int64 truncated to int32. ``Add``/``Sub`` follow Go,
int64 fast path included (``q.sub(-9223372036854775808)`` adds, as Go's negation wraps).
apimachinery's ``String`` has no suffix for a DecimalSI exponent beyond 18 (``1000E``
prints ``1``) nor for 2^70 and more in BinarySI; so does ``str()`` here.

Where Go would compute with numbers of many thousand digits (it has no limit; it can take
minutes), this module refuses: a text longer than ``MAX_TEXT`` characters is no quantity,
and a sum needing more than ``MAX_DIGITS`` significant digits is an error.
"""

from __future__ import annotations

from functools import lru_cache

from .. import values
from ..values import INT64_MAX, INT64_MIN, CelError

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

MAX_TEXT = 4000
MAX_DIGITS = 4000

FORMAT_ERROR = ("quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
SUFFIX_ERROR = "unable to parse quantity's suffix"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
TOO_LONG_ERROR = f"quantity longer than {MAX_TEXT} characters"
TOO_PRECISE_ERROR = f"quantity with more than {MAX_DIGITS} significant digits"

_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12,
                     "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_OF = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_OF = {e // 10: s for s, e in _BINARY_SUFFIXES.items()}
_NANO = -9
_MAX_INT64_FACTORS = 18


def _int32(n: int) -> int:
    """``n`` truncated to a Go int32."""
    return (n + 2**31) % 2**32 - 2**31


def _fits(n: int) -> bool:
    return INT64_MIN <= n <= INT64_MAX


def _digits(n: int) -> int:
    return len(str(abs(n)))


def _normal(unscaled: int, exponent: int) -> tuple[int, int]:
    """``unscaled * 10**exponent`` as a coefficient without trailing zeros (zero: (0, 0))."""
    if unscaled == 0:
        return 0, 0
    while unscaled % 10 == 0:
        unscaled //= 10
        exponent += 1
    return unscaled, exponent


def _scaled_int64(base: int, scale: int) -> int | None:
    """``base * 10**scale`` (scale >= 0) when it fits int64 (Go's positiveScaleInt64)."""
    if base == 0:
        return 0
    if scale > 19:
        return None
    n = base * 10**scale
    return n if _fits(n) else None


class Quantity:
    """A CEL ``kubernetes.Quantity`` (see the module docstring)."""

    __slots__ = ("big", "coefficient", "exponent", "format", "scale", "text")

    def __init__(self, unscaled: int, exponent: int, scale: int, big: bool, format: str,
                 text: str | None = None) -> None:
        """The quantity ``unscaled * 10**exponent`` that Go holds at ``scale``."""
        self.coefficient, self.exponent = _normal(unscaled, exponent)
        if _digits(self.coefficient) > MAX_DIGITS:
            raise CelError(TOO_PRECISE_ERROR)
        self.scale = scale
        self.big = big
        self.format = format
        self.text = text

    # -- Go's representation ----------------------------------------------------------

    def _unscaled(self) -> int:
        """Go's unscaled value (small unless ``big``)."""
        if self.coefficient == 0:
            return 0
        return self.coefficient * 10 ** (self.exponent - self.scale)

    def as_int64(self) -> int | None:
        """``AsInt64()``: the value when Go holds it as an int64 of scale >= 0."""
        if self.big or self.scale < 0:
            return None
        return _scaled_int64(self._unscaled(), self.scale)

    def approximate_float(self) -> float:
        """``AsApproximateFloat64()``: Go's unscaled value times ``10**scale`` in float64."""
        if self.coefficient and _digits(self.coefficient) + self.exponent - self.scale > 400:
            base = float("inf") if self.coefficient > 0 else float("-inf")
        else:
            try:
                base = float(self._unscaled())
            except OverflowError:
                base = float("inf") if self.coefficient > 0 else float("-inf")
        if self.scale == 0:
            return base
        return base * _pow10(self.scale)

    # -- value ------------------------------------------------------------------------

    def sign(self) -> int:
        return (self.coefficient > 0) - (self.coefficient < 0)

    def compare(self, other: Quantity) -> int:
        """``Cmp``: -1, 0 or 1, exactly (no number is expanded)."""
        a, b = self.sign(), other.sign()
        if a != b or a == 0:
            return (a > b) - (a < b)
        da = _digits(self.coefficient) + self.exponent
        db = _digits(other.coefficient) + other.exponent
        if da != db:
            bigger = da > db
        else:
            shift = self.exponent - other.exponent
            x = abs(self.coefficient) * 10 ** max(0, shift)
            y = abs(other.coefficient) * 10 ** max(0, -shift)
            if x == y:
                return 0
            bigger = x > y
        return a if bigger else -a

    def add(self, other: Quantity) -> Quantity:
        """``Quantity.Add`` on a copy."""
        fmt = self.format
        if not self.big and not other.big:
            if self.coefficient == 0:
                fmt = other.format
            summed = _int64_add(self._unscaled(), self.scale, other._unscaled(), other.scale)
            if summed is not None:
                return Quantity(summed[0], summed[1], summed[1], False, fmt)
        elif self.coefficient == 0:
            fmt = other.format
        return self._dec_sum(other, 1, fmt)

    def sub(self, other: Quantity) -> Quantity:
        """``Quantity.Sub`` on a copy (Go's int64 negation wraps at -2^63)."""
        fmt = other.format if self.coefficient == 0 else self.format
        if not self.big and not other.big:
            negated = other._unscaled()
            if negated != INT64_MIN:
                negated = -negated
            summed = _int64_add(self._unscaled(), self.scale, negated, other.scale)
            if summed is not None:
                return Quantity(summed[0], summed[1], summed[1], False, fmt)
        return self._dec_sum(other, -1, fmt)

    def _dec_sum(self, other: Quantity, sign: int, fmt: str) -> Quantity:
        """The exact sum as an inf.Dec, whose scale is the finer of the two."""
        low = min(self.exponent, other.exponent)
        top = max(_digits(self.coefficient) + self.exponent,
                  _digits(other.coefficient) + other.exponent)
        if top - low > MAX_DIGITS:
            raise CelError(TOO_PRECISE_ERROR)
        total = (self.coefficient * 10 ** (self.exponent - low)
                 + sign * other.coefficient * 10 ** (other.exponent - low))
        return Quantity(total, low, min(self.scale, other.scale), True, fmt)

    # -- text -------------------------------------------------------------------------

    def __str__(self) -> str:
        """apimachinery's ``String()``: the canonical form (see the module docstring)."""
        if self.text is not None:
            return self.text
        if self.coefficient == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            if self.exponent < 0 or (self.exponent < 4
                                     and abs(self.coefficient) * 10**self.exponent < 1024):
                fmt = DECIMAL_SI  # not a whole number, or below 1024: no rounding
            else:
                n, times = abs(self.coefficient) * 10**self.exponent, 0
                while n % 1024 == 0:
                    n //= 1024
                    times += 1
                sign = "-" if self.coefficient < 0 else ""
                return f"{sign}{n}{_BINARY_SUFFIX_OF.get(times, '')}"
        e3 = self.exponent // 3 * 3
        number = self.coefficient * 10 ** (self.exponent - e3)
        if fmt == DECIMAL_SI:
            return f"{number}{_DECIMAL_SUFFIX_OF.get(e3, '')}"
        return f"{number}e{e3}" if e3 else str(number)

    def __repr__(self) -> str:
        return f"quantity('{self}')"

    # -- CEL equality -----------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (type(other) is Quantity and other.coefficient == self.coefficient
                and other.exponent == self.exponent)

    def __hash__(self) -> int:
        return hash(("quantity", self.coefficient, self.exponent))

    def identity(self) -> tuple[object, ...]:
        """What tells apart quantities CEL calls equal (``1000m`` and ``1``)."""
        return (self.coefficient, self.exponent, self.scale, self.big, self.format,
                self.text)


def _int64_add(a: int, a_scale: int, b: int, b_scale: int) -> tuple[int, int] | None:
    """Go's ``int64Amount.Add``: the sum and its scale, None where int64 overflows."""
    if b == 0:
        return a, a_scale
    if a == 0:
        return b, b_scale
    if a_scale == b_scale:
        c = a + b
        scale = a_scale
    elif a_scale > b_scale:
        shifted = _scaled_int64(a, a_scale - b_scale)
        if shifted is None:
            return None
        c, scale = shifted + b, b_scale
    else:
        shifted = _scaled_int64(b, b_scale - a_scale)
        if shifted is None:
            return None
        c, scale = a + shifted, a_scale
    return (c, scale) if _fits(c) else None


_POW10 = [float(f"1e{i}") for i in range(32)]
_POW10_POS32 = [float(f"1e{32 * i}") for i in range(10)]
_POW10_NEG32 = [float(f"1e-{32 * i}") for i in range(11)]


def _pow10(n: int) -> float:
    """Go's ``math.Pow10`` (the same table products, so the same roundings)."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG32[-n // 32] / _POW10[-n % 32]
    return float("inf") if n > 0 else 0.0


def from_int(n: int) -> Quantity:
    """``resource.NewQuantity(n, DecimalExponent)`` (the operand of ``add(int)``)."""
    return Quantity(n, 0, 0, False, DECIMAL_EXPONENT)


# --------------------------------------------------------------------------- parsing


@lru_cache(maxsize=4096)
def parse(s: str) -> Quantity:
    """``resource.ParseQuantity``; raises ``CelError`` with its message. (A Quantity is
    never changed: a parsed one is shared.)"""
    if not s:
        raise CelError(FORMAT_ERROR)
    if s == "0":
        return Quantity(0, 0, 0, False, DECIMAL_SI, "0")
    if len(s) > MAX_TEXT:
        raise CelError(TOO_LONG_ERROR)
    positive, value, num, denom, suffix = _scan(s)
    base, exponent, fmt = _interpret(suffix)

    mantissa = 1
    if fmt == BINARY_SI:
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - len(num) - len(denom)

    if precision >= 0:
        scale = _int32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            parsed = int(shifted)
            result = parsed * mantissa
            if _fits(result):
                if not positive:
                    result = -result
                if fmt == BINARY_SI:
                    canonical = parsed & 7 != 0
                else:
                    canonical = (scale % 3 == 0 and not shifted.endswith("000")
                                 and shifted[0] != "0")
                return Quantity(result, scale, scale, False, fmt, s if canonical else None)

    # inf.Dec: the number as written, then the suffix, rounded up to 1n, capped if binary
    if not any(c in _DIGITS for c in value):
        raise CelError(NUMERIC_ERROR)
    unscaled = abs(int(value.replace(".", "") or "0"))
    dec_scale = len(denom) if "." in value else 0  # inf.Dec's scale: digits after the point
    if base == 10:
        dec_scale = _int32(dec_scale + _int32(-exponent))
    else:
        unscaled <<= exponent
    exp = scale = -dec_scale
    if unscaled != 0:
        unscaled, exp = _round_up_to_nano(unscaled, exp)
        scale = _NANO
        if fmt == BINARY_SI:
            if _exceeds_int64(unscaled, exp):
                unscaled, exp, scale = INT64_MAX, 0, 0
            elif exp < 0 and _digits(unscaled) + exp <= 0:  # 0 < value < 1
                fmt = DECIMAL_SI
    if value.startswith("-"):
        unscaled = -unscaled
    return Quantity(unscaled, exp, scale, True, fmt)


def _round_up_to_nano(unscaled: int, exp: int) -> tuple[int, int]:
    """``inf.Dec.Round(x, 9, RoundUp)`` of a positive ``unscaled * 10**exp``: the value
    (as it is when already a multiple of 1n: no huge number is built)."""
    if exp >= _NANO:
        return unscaled, exp  # already a multiple of 1n
    drop = _NANO - exp
    if drop > _digits(unscaled):
        return 1, _NANO
    q, r = divmod(unscaled, 10**drop)
    return q + (r != 0), _NANO


def _exceeds_int64(unscaled: int, exp: int) -> bool:
    top = _digits(unscaled) + exp
    if top <= 18:
        return False
    if top > 20:
        return True
    return unscaled * 10**exp > INT64_MAX if exp >= 0 else unscaled > INT64_MAX * 10**-exp


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """apimachinery's ``parseQuantityString``: sign, the number as written, its whole
    digits (leading zeros stripped), its fraction digits, and the suffix."""
    end = len(s)
    pos = 0
    positive = True
    if s[0] == "-":
        positive = False
        pos = 1
    elif s[0] == "+":
        pos = 1
    while pos < end and s[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    num = s[pos:i] or "0"
    if i >= end:
        return positive, s, num, "", ""
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return positive, s, num, denom, ""
        pos = i
    value = s[:pos]
    start = pos
    while pos < end and s[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise CelError(FORMAT_ERROR)
    return positive, value, num, denom, s[start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """The base, exponent and format a suffix denotes (``quantitySuffixer.interpret``)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        body = suffix[1:]
        digits = body[1:] if body[0] in "+-" else body
        if digits and all(c in _DIGITS for c in digits):
            n = int(body)
            if _fits(n):
                return 10, _int32(n), DECIMAL_EXPONENT
    raise CelError(SUFFIX_ERROR)


values.register_type(Quantity, values.TypeValue("kubernetes.Quantity"), Quantity.identity)
