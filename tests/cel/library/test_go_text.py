"""Go's forms of text: ``go_quote`` prints what Go's ``strconv.Quote`` prints (checked with
Go), ``go_bytes`` makes a lone surrogate U+FFFD."""

from __future__ import annotations

from policysched.cel.library.go_text import go_bytes, go_quote


def test_go_quote() -> None:
    assert go_quote('a"b\\c\n\x7f\u00ad\U0001f600\u200b') == (
        '"a\\"b\\\\c\\n\\x7f\\u00ad😀\\u200b"')
    assert go_quote('a"b\\c\n\x01\u00a0\u00e9') == '"a\\"b\\\\c\\n\\x01\\u00a0\u00e9"'
    assert go_quote("a\"b\\c\n") == '"a\\"b\\\\c\\n"'
    assert go_quote("é\u00ad\U0001f600\x7f") == '"é\\u00ad\U0001f600\\x7f"'
    assert go_quote(b"\xff") == '"\\xff"'


def test_a_lone_surrogate_is_the_replacement_character() -> None:
    assert go_bytes("a\ud800") == "a\ufffd".encode()
    assert go_quote("a\ud800") == '"a\ufffd"'
