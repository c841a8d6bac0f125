"""rg as the oracle for ``nav grep``: a generated tree with ripgrep's hard cases, generated
patterns, and ripgrep's own answer on the same tree to compare with (shared by tests/test_grep.py
and bench/grep_bench.py)."""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

RUST_META = set("\\.+*?()|[]{}^$#&-~")
WORDS = [
    "createSalesOrder", "create_sales_order", "Order", "order_id", "retry", "ERP", "self", "return",
    "def", "class", "import", "foo", "bar", "baz", "qux", "Kelvin", "skills", "STRASSE", "straße",
    "café", "naïve", "Ωmega", "日本語", "emoji🎉", "x", "ab", "abc", "abcd", "a1b2", "_private",
    "__init__", "HTTPError", "http", "kiss", "sake", "KS", "ſtop", "\u212aelvin", "résumé", "ÉCOLE",
]  # fmt: skip
PUNCT = ["(", ")", "[", "]", "{", "}", ".", "*", "+", "?", "|", "^", "$", "\\", "-", ",", ";", ":", "=", "#", "'", '"', "&", "~", "/", "<", ">", "!", "@", "%"]  # fmt: skip


GLOBS = [
    "*.py",
    "!*.md",
    "*.{js,ts}",
    "**/test*/**",
    "!**/docs/**",
    "*.rs",
    "src/**",
    "*.json",
    "!*.py",
    "*[0-9]*",
]
TYPES = ["py", "js", "ts", "rust", "md", "go", "java", "json", "c", "txt", "ruby", "yaml"]
OPTION_KEYS = {"-g": "globs", "-t": "types", "-m": "max_count"}


def rust_escape(s: str) -> str:
    return "".join("\\" + c if c in RUST_META else c for c in s)


def _line(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 9)):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(WORDS))
        elif r < 0.8:
            parts.append(rng.choice(PUNCT))
        else:
            parts.append(str(rng.randint(0, 99999)))
    sep = rng.choice([" ", "", " ", "  ", "\t", "."])
    return sep.join(parts)


def make_tree(root: Path, *, seed: int = 7, files: int = 40) -> None:
    """A small repository with every kind of file ripgrep treats specially."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(files):
        sub = root / rng.choice(["", "src", "src/pkg", "docs", "lib/deep/er"])
        sub.mkdir(parents=True, exist_ok=True)
        ext = rng.choice([".py", ".txt", ".md", ".js", ".rs", ""])
        lines = [_line(rng) for _ in range(rng.randint(1, 60))]
        (sub / f"f{i}{ext}").write_text("\n".join(lines) + rng.choice(["\n", ""]), encoding="utf-8")
    (root / ".gitignore").write_text("ignored.txt\nbuild/\n*.log\n", encoding="utf-8")
    (root / "ignored.txt").write_text("createSalesOrder ignored\n", encoding="utf-8")
    (root / "build").mkdir(exist_ok=True)
    (root / "build" / "out.py").write_text("createSalesOrder in build\n", encoding="utf-8")
    (root / "x.log").write_text("retry log\n", encoding="utf-8")
    (root / ".ignore").write_text("skipped_by_dot_ignore.txt\n", encoding="utf-8")
    (root / "skipped_by_dot_ignore.txt").write_text("retry hidden by .ignore\n", encoding="utf-8")
    (root / ".hidden.py").write_text("createSalesOrder hidden\n", encoding="utf-8")
    (root / ".hid").mkdir(exist_ok=True)
    (root / ".hid" / "a.txt").write_text("retry in a hidden folder\n", encoding="utf-8")
    (root / "empty.txt").write_bytes(b"")
    (root / "crlf.txt").write_bytes(b"createSalesOrder line one\r\nretry ERP\r\nfoo$ bar\r\n")
    (root / "latin1.txt").write_bytes(
        "caf\xe9 na\xefve retry \xff\xfe foo\n".encode("latin-1") + b"Order \x80\x81 bar\n"
    )
    (root / "long.txt").write_text(
        ("abc foo " * 2000) + "createSalesOrder\n" + ("x" * 9000) + "\n", encoding="utf-8"
    )
    (root / "minified.js").write_text("var a=1;retry;" * 15000 + "createSalesOrder()\n", encoding="utf-8")
    (root / "bin_early.dat").write_bytes(b"createSalesOrder\x00\x01\x02 retry foo\n")
    (root / "bin_late.dat").write_bytes(b"retry foo bar createSalesOrder\n" * 9000 + b"\x00 tail retry\n")
    (root / "utf16.txt").write_bytes("\ufeffcreateSalesOrder in UTF-16\nretry café\n".encode("utf-16-le"))
    (root / "bom8.txt").write_bytes(b"\xef\xbb\xbfcreateSalesOrder with a BOM\n")
    (root / "unicode.txt").write_text(
        "\u212aelvin kelvin KELVIN\nſtop stop STOP\nstraße STRASSE\nΩmega ωmega\n日本語 テキスト\nemoji🎉 party\n"
        "e\u0301cole école\n",
        encoding="utf-8",
    )
    (root / "nonl.txt").write_text("no newline at the end retry", encoding="utf-8")


def patterns(root: Path, *, count: int, seed: int = 11) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(pattern, rg flags) pairs: identifiers, literals with punctuation under -F, classes,
    alternation, anchors, repetition, escapes, Unicode; with -i, -w, -F combinations."""
    rng = random.Random(seed)
    corpus: list[str] = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".git" not in p.parts and ".nav" not in p.parts:
            with contextlib.suppress(UnicodeDecodeError, OSError), open(p, "rb") as fh:
                data = fh.read(1 << 20)  # the first 80 lines are what is kept: no need for more
                if len(data) == 1 << 20:
                    data = data[: data.rfind(b"\n") + 1]
                corpus.extend(data.decode("utf-8").splitlines()[:80])
    corpus = [c for c in corpus if c]
    tokens = sorted({t[:200] for line in corpus for t in line.split() if t}) + WORDS

    def tok() -> str:
        return rng.choice(tokens)

    def piece() -> str:
        line = rng.choice(corpus)
        a = rng.randrange(len(line))
        return line[a : a + rng.randint(1, 12)]

    makers = [
        lambda: (rust_escape(tok()), ()),
        lambda: (piece(), ("-F",)),
        lambda: (rust_escape(piece()), ()),
        lambda: (piece(), ()),  # raw: may be invalid, then both must refuse it
        lambda: (f"{rust_escape(tok())}|{rust_escape(tok())}", ()),
        lambda: (f"^{rust_escape(tok())}", ()),
        lambda: (f"{rust_escape(tok())}$", ()),
        lambda: (f"[{rng.choice(['a-c', 'xyz', 'A-Z', '0-9', 'sk', '^a-z', 'ée'])}]{rust_escape(tok())}", ()),
        lambda: (rust_escape(tok()) + "[" + rng.choice(["_.", "a-z", "ks", "\\]"]) + "]+", ()),
        lambda: (f"\\b{rust_escape(tok())}\\b", ()),
        lambda: (f"{rust_escape(tok())}\\w+", ()),
        lambda: (f"\\w+{rust_escape(tok())}", ()),
        lambda: (f"({rust_escape(tok())}){{{rng.randint(1, 3)}}}", ()),
        lambda: (f"{rust_escape(tok())}(?:{rust_escape(tok())})?", ()),
        lambda: (f"(?i){rust_escape(tok())}", ()),
        lambda: (f"{rust_escape(tok())}.{{0,{rng.randint(0, 20)}}}{rust_escape(tok())}", ()),
        lambda: (
            rng.choice(
                [
                    "\\d+",
                    "\\d{5}",
                    ".",
                    "^$",
                    "^",
                    "\\s+$",
                    "\\p{Greek}+",
                    "\\x{212A}",
                    "\\u00e9",
                    "[[:upper:]]{3}",
                    "é|ß",
                    "a+b*c?",
                    "[a-z&&[^aeiou]]{4}",
                    "\\u{1F389}",
                ]
            ),
            (),
        ),
        lambda: (tok(), ("-w",)),
        lambda: (tok(), ("-i",)),
        lambda: (tok(), ("-i", "-w")),
        lambda: (piece(), ("-F", "-i")),
        lambda: (piece(), ("-F", "-w")),
        lambda: (rust_escape(tok()).upper(), ("-i",)),
        lambda: (f"{rust_escape(tok())}|{rust_escape(tok())}", ("-i",)),
        # Unicode: classes, properties, non-ASCII tokens and their case folding
        lambda: (f"{rust_escape(tok())}\\p{{{rng.choice(['L', 'Lu', 'Greek', 'Han', 'N'])}}}", ()),
        lambda: (f"[{rng.choice(['à-ÿ', 'α-ω', 'é', 'ß-ü', 'А-я'])}]+{rust_escape(tok())}", ()),
        lambda: (
            rust_escape(rng.choice([w for w in WORDS if not w.isascii()])),
            rng.choice([(), ("-i",), ("-w",), ("-i", "-w")]),
        ),
        lambda: (rust_escape(tok()).upper(), ("-i", "-w")),
        # anchors around spacing, alternation of several, word boundaries inside
        lambda: (f"^\\s*{rust_escape(tok())}", ()),
        lambda: (f"{rust_escape(tok())}\\s*$", rng.choice([(), ("-i",)])),
        lambda: (
            "|".join(rust_escape(tok()) for _ in range(rng.randint(3, 6))),
            rng.choice([(), ("-w",), ("-i",)]),
        ),
        lambda: (f"\\b{rust_escape(tok())}\\s*[(=:]", ()),
        lambda: (rng.choice(PUNCT) + piece() + rng.choice(PUNCT), ("-F",)),
        lambda: (rng.choice(PUNCT) + piece() + rng.choice(PUNCT), ("-F", "-i", "-w")),
    ]

    def with_options(pat: str, flags: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        r = rng.random()
        if r < 0.10:
            return pat, (*flags, "-l")
        if r < 0.20:
            return pat, (*flags, "-c")
        if r < 0.28:
            return pat, (*flags, "-g", rng.choice(GLOBS))
        if r < 0.34:
            return pat, (*flags, "-t", rng.choice(TYPES))
        if r < 0.38:
            return pat, (*flags, "-m", str(rng.randint(1, 3)))
        return pat, flags

    seen: set[tuple[str, tuple[str, ...]]] = set()
    while len(seen) < count:
        pat, flags = with_options(*rng.choice(makers)())
        if not pat or "\n" in pat or "\0" in pat:
            continue
        if (pat, flags) in seen:
            continue
        seen.add((pat, flags))
        yield pat, flags


def rg_lines(root: Path, pattern: str, flags: tuple[str, ...]) -> tuple[int, set[tuple[str, int, str]]]:
    """ripgrep's own answer at the root: (exit code, {(path, line, text)})."""
    proc = subprocess.run(
        ["rg", "--no-config", "--no-heading", "--with-filename", "--null", "-n", "--color", "never",
         *flags, "-e", pattern],
        cwd=root, capture_output=True, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip  # stdin: rg searches a readable stdin instead of the tree
    out: set[tuple[str, int, str]] = set()
    if "-l" in flags:
        return proc.returncode, {(os.fsdecode(p), 0, "") for p in proc.stdout.split(b"\0") if p}
    if "-c" in flags:
        for raw in proc.stdout.split(b"\n"):
            path, sep, n = raw.partition(b"\0")
            if raw and (not sep or not n.isdigit()):
                raise AssertionError(f"unexpected rg -c line {raw[:200]!r} for {pattern!r} {flags}")
            if raw:
                out.add((os.fsdecode(path), 0, n.decode()))
        return proc.returncode, out
    for raw in proc.stdout.split(b"\n"):
        if not raw:
            continue
        path, sep, rest = raw.partition(b"\0")
        num, _, text = rest.partition(b":")
        if not sep and b"binary file" in raw:
            continue  # ripgrep's note on a binary file it stopped reading: not a line
        if not sep or not num.isdigit():
            raise AssertionError(f"unexpected rg output line {raw[:200]!r} for {pattern!r} {flags}")
        out.add((os.fsdecode(path), int(num), text.decode("utf-8", "replace")))
    return proc.returncode, out


def nav_flags(flags: tuple[str, ...]) -> dict[str, object]:
    """Navigator.grep's keywords for these rg flags."""
    kw: dict[str, object] = {
        "fixed": "-F" in flags, "ignore_case": "-i" in flags, "word": "-w" in flags,
        "files_only": "-l" in flags, "count": "-c" in flags,
    }  # fmt: skip
    for key, value in zip(flags, flags[1:], strict=False):
        if key in ("-g", "-t"):
            kw[OPTION_KEYS[key]] = (*kw.get(OPTION_KEYS[key], ()), value)  # type: ignore[misc]
        elif key == "-m":
            kw["max_count"] = int(value)
    return kw


def answer_set(items: Iterable[Any], flags: tuple[str, ...]) -> set[tuple[str, int, str]]:
    """nav's hits in :func:`rg_lines`' form: (path, line, text); (path, 0, count) under -c."""
    if "-c" in flags:
        return {(h.path, 0, str(h.count)) for h in items}
    return {(h.path, h.line, h.text) for h in items if not h.context}


def same_answer(root: Path, want: set[tuple[str, int, str]], got: set[tuple[str, int, str]]) -> bool:
    """Equal, except where ripgrep disagrees with itself: a file with a NUL byte past its first
    buffer is searched up to the NUL in some runs and skipped whole in others (rg 13, on the
    same tree: 3 of 12 runs skipped it). There either answer is ripgrep's."""
    if want == got:
        return True
    for path in {p for p, _, _ in want ^ got}:
        w = {x for x in want if x[0] == path}
        g = {x for x in got if x[0] == path}
        try:
            binary = b"\0" in (root / path).read_bytes()
        except OSError:
            binary = False
        if not (binary and (not w or not g)):
            return False
    return True
