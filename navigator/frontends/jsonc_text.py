"""JSON and JSONC edited as text, for ``nav setup``: a scanner that keeps every member's position,
and insertions and deletions that leave everything else byte for byte (comments, key order, the
user's indentation). Pure; :mod:`navigator.frontends.agent_setup` plans its edits with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from navigator.errors import UsageError, shorten

# -- JSON and JSONC, edited as text ----------------------------------------------------------


class JsonSyntaxError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


@dataclass
class JsonMember:
    key: str
    key_start: int
    value_start: int
    value_end: int
    comma: int  # the comma after the value, -1 when none
    obj: JsonObject | None  # the value, when it is an object


@dataclass
class JsonObject:
    start: int  # the "{"
    end: int  # after the "}"
    members: list[JsonMember]


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]+|\\.)*"', re.S)
_SPACE = re.compile(r"[ \t\r\n]*")
_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


class JsonScanner:
    """A JSON scanner that keeps positions; with ``comments``, JSONC (``//`` and ``/* */``
    comments, trailing commas). ``blank`` collects the spans that are not JSON (comments,
    trailing commas), so the text can be read as JSON too."""

    def __init__(self, text: str, *, comments: bool, depth: int = 1 << 30) -> None:
        self.text = text
        self.comments = comments
        self.depth = depth  # objects nested deeper than this are skipped, their members not listed
        self.pos = 1 if text.startswith("\ufeff") else 0
        self.blank: list[tuple[int, int]] = []

    def skip(self) -> None:
        t = self.text
        while self.pos < len(t):
            self.pos = _SPACE.match(t, self.pos).end()  # type: ignore[union-attr]  # `*` always matches
            if self.comments and t.startswith("//", self.pos):
                end = t.find("\n", self.pos)
                end = len(t) if end < 0 else end
                self.blank.append((self.pos, end))
                self.pos = end
            elif self.comments and t.startswith("/*", self.pos):
                end = t.find("*/", self.pos + 2)
                if end < 0:
                    raise JsonSyntaxError("a /* comment is never closed", self.pos)
                self.blank.append((self.pos, end + 2))
                self.pos = end + 2
            else:
                return

    def document(self) -> JsonObject | None:
        self.skip()
        value = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise JsonSyntaxError("unexpected text after the top-level value", self.pos)
        return value

    def value(self, depth: int) -> JsonObject | None:
        t, p = self.text, self.pos
        if p >= len(t):
            raise JsonSyntaxError("unexpected end of file", p)
        c = t[p]
        if c in "{[" and (c == "[" or depth > self.depth):
            try:  # a value nav does not edit: skipped by json's own scanner (C), when it is plain JSON
                self.pos = _DECODER.raw_decode(t, p)[1]
                return None
            except ValueError:
                pass  # comments, trailing commas, or an error to locate: the scan below
        if c == "{":
            return self.obj(depth)
        if c == "[":
            self.array(depth)
            return None
        if c == '"':
            self.string()
            return None
        for word in ("true", "false", "null"):
            if t.startswith(word, p):
                self.pos = p + len(word)
                return None
        m = _NUMBER.match(t, p)
        if m is None or m.end() == p:
            raise JsonSyntaxError(f"unexpected {t[p]!r}", p)
        self.pos = m.end()
        return None

    def string(self, *, decode: bool = False) -> str:
        t, start = self.text, self.pos
        m = _STRING.match(t, start)
        if m is not None:
            self.pos = m.end()
            if not decode:
                return ""
            try:
                decoded: str = json.loads(m.group())
            except ValueError:
                raise JsonSyntaxError("a bad escape in a string", start) from None
            return decoded
        p = start + 1  # say what is wrong with it
        while True:
            if p >= len(t):
                raise JsonSyntaxError("a string is never closed", start)
            c = t[p]
            if c == '"':
                break
            if c == "\\":
                p += 2
                continue
            if c < " ":
                raise JsonSyntaxError("a control character inside a string", p)
            p += 1
        self.pos = p + 1
        try:
            value: str = json.loads(t[start : p + 1])
        except ValueError:
            raise JsonSyntaxError("a bad escape in a string", start) from None
        return value

    def array(self, depth: int) -> None:
        self.pos += 1
        self.skip()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return
        while True:
            self.skip()
            self.value(depth + 1)
            self.skip()
            c = self.text[self.pos : self.pos + 1]
            if c == ",":
                comma = self.pos
                self.pos += 1
                self.skip()
                if self.comments and self.text.startswith("]", self.pos):
                    self.blank.append((comma, comma + 1))
                    self.pos += 1
                    return
            elif c == "]":
                self.pos += 1
                return
            else:
                raise JsonSyntaxError("expected ',' or ']' in a list", self.pos)

    def obj(self, depth: int) -> JsonObject:
        start = self.pos
        self.pos += 1
        members: list[JsonMember] = []
        self.skip()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return JsonObject(start, self.pos, members)
        while True:
            self.skip()
            if not self.text.startswith('"', self.pos):
                raise JsonSyntaxError("expected a quoted key", self.pos)
            key_start = self.pos
            key = self.string(decode=True)
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise JsonSyntaxError("expected ':' after a key", self.pos)
            self.pos += 1
            self.skip()
            value_start = self.pos
            sub = self.value(depth + 1)
            member = JsonMember(key, key_start, value_start, self.pos, -1, sub)
            members.append(member)
            self.skip()
            c = self.text[self.pos : self.pos + 1]
            if c == ",":
                member.comma = self.pos
                self.pos += 1
                self.skip()
                if self.comments and self.text.startswith("}", self.pos):
                    self.blank.append((member.comma, member.comma + 1))
                    self.pos += 1
                    return JsonObject(start, self.pos, members)
            elif c == "}":
                self.pos += 1
                return JsonObject(start, self.pos, members)
            else:
                raise JsonSyntaxError("expected ',' or '}' in an object", self.pos)


def jsonc_value(text: str) -> Any:
    """The value of a JSONC text (comments and trailing commas read as blanks)."""
    try:
        return json.loads(text.lstrip("\ufeff"))  # most files have neither
    except ValueError:
        pass
    scanner = JsonScanner(text, comments=True)
    scanner.document()
    chars = list(text)
    for a, b in scanner.blank:
        for i in range(a, b):
            if chars[i] not in "\r\n":
                chars[i] = " "
    return json.loads("".join(chars).lstrip("\ufeff"))


def where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {col}"


def parse_object(text: str, fmt: str, path: str, depth: int) -> tuple[JsonObject, Any]:
    """The spans of the top-level object and of the objects ``depth`` levels into it, and the
    document's value; or a UsageError naming the file."""
    try:
        value = json.loads(text.lstrip("\ufeff")) if fmt == "json" else jsonc_value(text)
        top = JsonScanner(text, comments=fmt == "jsonc", depth=depth).document()
    except json.JSONDecodeError as err:
        raise UsageError(f"{path} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); "
                         "fix it and run `nav setup` again (nothing was written)") from None  # fmt: skip
    except JsonSyntaxError as err:
        raise UsageError(
            f"{path} is not valid {'JSONC' if fmt == 'jsonc' else 'JSON'} ({err.message} at {where(text, err.pos)}); "
            "fix it and run `nav setup` again (nothing was written)"
        ) from None
    if top is None or not isinstance(value, dict):
        raise UsageError(
            f"{path} does not hold a JSON object at the top; nav will not guess how to merge into it"
        )
    return top, value


def find_member(obj: JsonObject, key: str, path: str, where: str) -> JsonMember | None:
    found = [m for m in obj.members if m.key == key]
    if len(found) > 1:
        raise UsageError(
            f"{path} has {len(found)} `{shorten(key)}` keys in {where}; keep one and run `nav setup` again"
        )
    return found[0] if found else None


def line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def indent_unit(text: str, top: JsonObject) -> str:
    """The file's indentation step: its top-level members' indentation, else two spaces."""
    if top.members and "\n" in text[top.start : top.members[0].key_start]:
        ind = line_indent(text, top.members[0].key_start)
        if ind:
            return ind
    return "  "


def render(value: Any, indent: str, unit: str, nl: str, *, compact: bool) -> str:
    """``value`` as JSON text at ``indent``: an object a member a line, a list on one line."""
    if compact or not isinstance(value, dict) or not value:
        return json.dumps(value, ensure_ascii=False)
    inner = indent + unit
    items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {render(v, inner, unit, nl, compact=False)}"
             for k, v in value.items()]  # fmt: skip
    return "{" + nl + ("," + nl).join(items) + nl + indent + "}"


def insert_member(text: str, obj: JsonObject, key: str, value: Any, unit: str) -> str:
    """``key: value`` as the object's first member; :func:`delete_member` takes exactly it out again."""
    nl = newline(text)
    at = obj.start + 1
    name = json.dumps(key, ensure_ascii=False) + ": "
    if obj.members:
        first = obj.members[0]
        if "\n" in text[at : first.key_start]:
            ind = line_indent(text, first.key_start)
            piece = nl + ind + name + render(value, ind, unit, nl, compact=False) + ","
        else:
            piece = name + render(value, "", unit, nl, compact=True) + ","
    elif "\n" in text:
        outer = line_indent(text, obj.start)
        ind = outer + unit
        piece = nl + ind + name + render(value, ind, unit, nl, compact=False) + nl + outer
    else:
        piece = name + render(value, "", unit, nl, compact=True)
    return text[:at] + piece + text[at:]


def delete_member(text: str, obj: JsonObject, index: int) -> str:
    """The member taken out with the separators :func:`insert_member` put around it."""
    m = obj.members[index]
    start = m.key_start
    while start > 0 and text[start - 1] in _WS:
        start -= 1
    start = max(start, obj.start + 1)
    if index > 0 and start <= obj.members[index - 1].comma:
        start = obj.members[index - 1].comma + 1
    if m.comma >= 0:
        return text[:start] + text[m.comma + 1 :]
    if index > 0:
        prev = obj.members[index - 1].comma
        return text[:prev] + text[prev + 1 : start] + text[m.value_end :]
    tail = newline(text) + line_indent(text, obj.start)
    end = m.value_end + len(tail) if text.startswith(tail, m.value_end) else m.value_end
    return text[:start] + text[end:]
