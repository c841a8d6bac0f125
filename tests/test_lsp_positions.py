"""The position codec: nav's 1-based code-point columns ↔ LSP's 0-based UTF-16 characters."""

from __future__ import annotations

import pytest

from lsp.positions import from_lsp, split_lines, to_lsp, utf16_len

EMOJI = "s = '😀'; total(x)"  # 😀 is one code point, two UTF-16 units


def test_ascii_round_trip() -> None:
    assert to_lsp("def total():", 3, 5) == (2, 4)
    assert from_lsp("def total():", 2, 4) == (3, 5)


def test_astral_code_points_count_twice_in_utf16() -> None:
    col = EMOJI.index("total") + 1  # code points, 1-based
    line, char = to_lsp(EMOJI, 1, col)
    assert char == col - 1 + 1  # one extra unit for the emoji before it
    assert from_lsp(EMOJI, line, char) == (1, col)
    assert utf16_len("😀") == 2 and utf16_len("é") == 1


def test_bmp_non_ascii_is_one_unit() -> None:
    text = "naïve = café(1)"
    col = text.index("café") + 1
    assert to_lsp(text, 7, col) == (6, col - 1)


def test_middle_of_surrogate_pair_maps_to_its_code_point() -> None:
    assert from_lsp("😀x", 0, 1) == (1, 1)
    assert from_lsp("😀x", 0, 2) == (1, 2)


def test_past_end_is_clamped() -> None:
    assert to_lsp("ab", 1, 10) == (0, 2)
    assert from_lsp("ab", 0, 10) == (1, 3)


@pytest.mark.parametrize("line,col", [(0, 1), (1, 0), (-1, 3)])
def test_rejects_non_positive_positions(line: int, col: int) -> None:
    with pytest.raises(ValueError, match="1-based"):
        to_lsp("x", line, col)


def test_round_trip_every_column() -> None:
    text = "a😀b𝔘c é"
    for col in range(1, len(text) + 2):
        assert from_lsp(text, *to_lsp(text, 4, col)[0:1], to_lsp(text, 4, col)[1]) == (4, col)


def test_split_lines_counts_lines_as_the_protocol_does() -> None:
    # LF, CRLF and a lone CR end a line; a form feed, \v, U+2028 and U+0085 do not
    assert split_lines("a\r\nb\rc\n\x0cd\x0be\u2028f\x85g\n") == ["a", "b", "c", "\x0cd\x0be\u2028f\x85g"]
    assert split_lines("\ufeffdef f():\n") == ["def f():"]  # the byte-order mark is not text
    assert split_lines("") == [] and split_lines("x") == ["x"] and split_lines("x\n\n") == ["x", ""]
    assert split_lines("a\r\r\nb") == ["a", "", "b"]
