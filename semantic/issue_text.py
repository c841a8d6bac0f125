"""Pasted issue text, read as an issue (pure): the template's boilerplate left out
(:func:`strip_boilerplate`) and the stack frames it quotes, innermost first (:func:`frames`).

An issue template is structure, not content: headings (``### Expected outcome``), bold labels,
the template's own questions and instructions ("Is your feature request related to a problem?
Please describe."), HTML comments, ``_No response_`` placeholders, and the environment sections
(versions, operating system, installed packages) whose words are rare in any code base and so
would lead a search that weighs words by rarity. The rules below read that structure; none
names a project.

Frames: Python tracebacks (``File "x.py", line 3, in f``) and IPython's (``~/x.py in f(args)``),
JavaScript (``at f (src/x.js:3:7)``), Java/Kotlin (``at pkg.Cls.m(Cls.java:12)``) and Go
(``pkg.F(...)`` then ``/src/x.go:12 +0x1f``) stack traces. The innermost frame is where the error
was raised: :func:`frames` lists each trace's frames innermost first, the last trace (the error
the user saw) first, the traces' innermost frames before their outer ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Frame", "frames", "strip_boilerplate"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame an issue quotes: the path as written and the function, if named."""

    path: str
    function: str = ""


_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s+(.*?)\s*#*|\*\*([^*]+)\*\*:?|__([^_]+)__:?)\s*$")
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z /()&'-]{0,40}):\s*$")
"""A line that only names what follows (``Steps to reproduce:``)."""
_PROMPT = re.compile(
    r"\b(?:please|kindly)\s+(?:describe|provide|explain|include|fill|add|paste|attach|list|share|give|"
    r"tell|check|make sure|ensure|search|complete|delete|remove|replace|run)\b"
    r"|^\s*(?:a clear and concise description|if applicable|describe (?:the|your|what|how)|"
    r"steps to reproduce|what (?:did you|happened|version)|is your feature request)\b",
    re.I,
)
"""The template's own instructions and questions (GitHub's default issue templates and their kin)."""
_PLACEHOLDER = re.compile(r"^\s*(?:_no response_|n/?a|none|no|yes|-+|\.\.\.)\s*$", re.I)
_ENV_WORDS = re.compile(
    r"\b(?:versions?|environment|system|platform|operating system|os|installation|installed|"
    r"backend|dependencies|deps|packages?|setup|hardware|python|jupyter|blas|build|info|details)\b",
    re.I,
)
_VERSION_LINE = re.compile(
    r"^\s*[-*]?\s*[\w .()/-]{1,40}\s*[:=]\s*(?:v|version\s*)?\d+(?:\.\d+)+\S*(?:\s.*)?$"  # numpy: 1.19.2
    r"|^\s*[-*]?\s*[\w.-]+\s*(?:==|>=|@)\s*\S+\s*$"  # pip freeze: name==1.2.3
    r"|^\s*[-*]?\s*[\w.-]+\s+\d+(?:\.\d+)+\S*\s*$",  # conda list / pip list: name 1.2.3
    re.I,
)
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")


def _heading_text(line: str) -> str | None:
    """The words of a heading or a label line, else None."""
    m = _HEADING.match(line)
    if m:
        return next(g for g in m.groups() if g is not None)
    m = _LABEL.match(line)
    if m and len(m.group(1).split()) <= 5:
        return m.group(1)
    return None


def strip_boilerplate(text: str) -> str:
    """``text`` without its template's structure: HTML comments, headings and label lines,
    the template's instructions and questions, placeholders, and the body of environment
    sections (a heading about versions, the system or the installation, up to the next heading)
    and version lines (``numpy: 1.19.2``, ``name==1.2.3``). Fenced code and tracebacks are kept
    (an environment section's fence too is dropped). Lines are kept in order."""
    text = _COMMENT.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    out: list[str] = []
    in_env = False
    in_fence = False
    for line in text.split("\n"):
        if _FENCE_LINE.match(line):
            in_fence = not in_fence
            if not in_env:
                out.append(line)
            continue
        if in_fence:
            if not in_env:
                out.append(line)
            continue
        heading = _heading_text(line)
        if heading is not None:
            in_env = bool(_ENV_WORDS.search(heading)) and len(heading.split()) <= 5
            continue
        if in_env or _PLACEHOLDER.match(line) or _VERSION_LINE.match(line):
            continue
        if _PROMPT.search(line) and len(line.split()) <= 25:
            continue
        out.append(line)
    return "\n".join(out)


_PY_FRAME = re.compile(r'File "([^"\n]+)", line \d+(?:, in ([A-Za-z_<][\w<>.]*))?')
_IPY_FRAME = re.compile(r"^\s*((?:~|/|[A-Za-z]:\\|\.{1,2}/)?[^\s:\"'()<>]+\.py) in ([A-Za-z_][\w.]*)\(", re.M)
_JS_FRAME = re.compile(
    r"^\s*at (?:(?:async |new )?([\w$.<>]+) \()?(?:file://)?([^\s()]+\.(?:[cm]?js|jsx|tsx?)):\d+(?::\d+)?\)?\s*$", re.M
)
_JAVA_FRAME = re.compile(r"^\s*at ([\w$]+(?:\.[\w$<>]+)+)\(([\w$]+\.(?:java|kt|scala|groovy)):\d+\)", re.M)
_GO_FRAME = re.compile(r"^\s*([\w./-]+?\.(?:\(\*?\w+\)\.|\w+\.)?(\w+))\([^\n]*\)\n\s+(\S+\.go):\d+", re.M)
_TRACE_START = re.compile(r"Traceback \(most recent call last\)|^goroutine \d+|^Exception in thread|^\w*Error:", re.M)


def _java_path(qualified: str, file: str) -> str:
    """``com.acme.Orders.create`` in ``Orders.java`` -> ``com/acme/Orders.java`` (the package's folder)."""
    package = qualified.split(".")[:-2]
    return "/".join([*package, file])


def frames(text: str) -> tuple[Frame, ...]:
    """The stack frames ``text`` quotes, innermost first (see the module's doc); each once."""
    text = text.replace("\r\n", "\n")
    traces: list[list[Frame]] = []  # each innermost first
    starts = [m.start() for m in _TRACE_START.finditer(text)]
    bounds = list(zip([0, *starts], [*starts, len(text)], strict=True))
    for lo, hi in bounds:
        part = text[lo:hi]
        outer_first: list[tuple[int, Frame]] = []
        for m in _PY_FRAME.finditer(part):
            outer_first.append((m.start(), Frame(m.group(1).replace("\\", "/"), _fn(m.group(2)))))
        for m in _IPY_FRAME.finditer(part):
            outer_first.append((m.start(), Frame(m.group(1).replace("\\", "/"), _fn(m.group(2)))))
        outer_first.sort(key=lambda kv: kv[0])
        inner_first: list[tuple[int, Frame]] = []  # JS, Java and Go print the innermost first
        for m in _JS_FRAME.finditer(part):
            inner_first.append((m.start(), Frame(m.group(2), _fn((m.group(1) or "").rsplit(".", 1)[-1]))))
        for m in _JAVA_FRAME.finditer(part):
            inner_first.append((m.start(), Frame(_java_path(m.group(1), m.group(2)), _fn(m.group(1).rsplit(".", 1)[-1]))))
        for m in _GO_FRAME.finditer(part):
            inner_first.append((m.start(), Frame(m.group(3), _fn(m.group(2)))))
        inner_first.sort(key=lambda kv: kv[0])
        found = [f for _, f in reversed(outer_first)] + [f for _, f in inner_first]
        if found:
            traces.append(found)
    ordered: list[Frame] = []
    depth = max((len(t) for t in traces), default=0)
    for i in range(depth):  # the last trace's innermost frame, then the earlier traces' innermost ...
        for trace in reversed(traces):
            if i < len(trace):
                ordered.append(trace[i])
    return tuple(dict.fromkeys(f for f in ordered if not f.path.startswith("<")))


def _fn(name: str | None) -> str:
    if not name or name.startswith("<"):
        return ""
    return name
