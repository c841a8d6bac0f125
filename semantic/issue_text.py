"""Stack frames quoted in pasted issue text (pure): :func:`frames`, innermost first.

Frames: Python tracebacks (``File "x.py", line 3, in f``) and IPython's (``~/x.py in f(args)``),
JavaScript (``at f (src/x.js:3:7)``), Java/Kotlin (``at pkg.Cls.m(Cls.java:12)``) and Go
(``pkg.F(...)`` then ``/src/x.go:12 +0x1f``) stack traces. The innermost frame is where the error
was raised: :func:`frames` lists each trace's frames innermost first, the last trace (the error
the user saw) first, the traces' innermost frames before their outer ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Frame", "frames"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame an issue quotes: the path as written and the function, if named."""

    path: str
    function: str = ""


_PY_FRAME = re.compile(r'File "([^"\n]+)", line \d+(?:, in ([A-Za-z_<][\w<>.]*))?')
_IPY_FRAME = re.compile(r"^\s*((?:~|/|[A-Za-z]:\\|\.{1,2}/)?[^\s:\"'()<>]+\.py) in ([A-Za-z_][\w.]*)\(", re.M)
_JS_FRAME = re.compile(
    r"^\s*at (?:(?:async |new )?([\w$.<>]+) \()?(?:file://)?([^\s()]+\.(?:[cm]?js|jsx|tsx?)):\d+(?::\d+)?\)?\s*$",
    re.M,
)
_JAVA_FRAME = re.compile(r"^\s*at ([\w$]+(?:\.[\w$<>]+)+)\(([\w$]+\.(?:java|kt|scala|groovy)):\d+\)", re.M)
_GO_FRAME = re.compile(r"^\s*([\w./-]+?\.(?:\(\*?\w+\)\.|\w+\.)?(\w+))\([^\n]*\)\n\s+(\S+\.go):\d+", re.M)
_TRACE_START = re.compile(
    r"Traceback \(most recent call last\)|^goroutine \d+|^Exception in thread|^\w*Error:", re.M
)


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
            inner_first.append(
                (m.start(), Frame(_java_path(m.group(1), m.group(2)), _fn(m.group(1).rsplit(".", 1)[-1])))
            )
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
