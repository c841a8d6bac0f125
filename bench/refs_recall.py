"""Recall and precision of ``nav refs`` against a lexical oracle, precise and precise+possible.

    python bench/refs_recall.py --repo /work/corpora/pytest-dev-pytest-8.3.4 --n 35 --seed 0

The oracle (issue 8): for a name defined exactly once in the tree, every identifier token
with that name in code (outside strings and comments) is a true reference. It does not
share nav's blind spot: nav's possible references come from tree-sitter identifiers in its
index, the oracle from an independent tokenizer:

- Python: the standard library's ``tokenize`` (NAME tokens that are not keywords), and
  ``ast`` to find the names defined exactly once: a ``def``/``class`` name bound nowhere else
  in the tree (no other def/class, assignment, parameter, import alias, attribute store,
  ``global``/loop/with/except target).
- JavaScript/TypeScript: a small lexer of its own below (comments, '' "" strings, template
  literals with their ``${...}`` code, regex literals), and, for "defined once", nav's symbol
  table (a name with exactly one definition row) cross-checked by the lexer (no
  ``var``/``let``/``const``/``function``/``class`` declaration of the name elsewhere, no
  parameter of that name (of a function, an arrow, a method or a ``catch``), no import alias
  (``add as addChangeset``), in TypeScript no ``name:`` key, property signature or
  annotated parameter (each declares a thing of that name, as a Python keyword argument
  names a parameter), and no declaration of it in TypeScript's standard library
  ``lib.*.d.ts`` (``Object.keys``, ``Promise.then``: JavaScript's builtins).

Per name: nav's answer split by provenance (``lsp`` precise, plus a definition the server
left out that the symbol table supplied, ``symbols``; and ``possible``, with the ``syntax``
matches of an answer the server gave nothing for), compared at
(path, line, column) with the oracle's tokens. Reported: recall and precision of precise
and of precise+possible (micro over tokens and mean per name), and the answers marked
``complete`` that miss a true reference (must be 0). Files the tokenizer cannot read
(Python 2 syntax in Django's tests, ...) and files nav does not index (build output such as
``dist/``, ignored files) are left out of both sides.

``--verbs refs,callers,impl`` (JavaScript/TypeScript; issue 17) checks the other two verbs
against the same lexer, at (path, line):

- callers: the name's tokens that are called there (``name(``, ``name?.(``, ``name<T>(``,
  a tagged template, ``new Name``), other than its definition and a method or function
  header (``name(...) {``); names whose one definition is a function or method.
- impl: for a class or interface, every class whose header (``class X extends A
  implements B {``, type arguments left out) names it, and the classes naming those in
  turn (an interface extending it passes it on).

Files are read as the servers read them: a UTF-8 byte-order mark dropped, a lone CR a
line break.

The index goes to a scratch folder (``--index-dir``), never into the corpus.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import io
import json
import keyword
import os
import random
import re
import statistics
import sys
import time
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.run import write_json  # noqa: E402
from navigator.api import Navigator  # noqa: E402
from navigator.results import Hit  # noqa: E402

SKIP_DIRS = {".git", ".nav", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"}
PY_EXT = {".py", ".pyi"}
JS_EXT = {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}

Token = tuple[str, int, int]
"""(root-relative path, 1-based line, 1-based column in code points)."""


def read_source(path: Path) -> str:
    """The text as servers see it: no byte-order mark, a lone CR a line break (same length)."""
    return re.sub(r"\r(?!\n)", "\n", path.read_text(encoding="utf-8-sig"))


def source_files(root: Path, exts: set[str]) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if os.path.splitext(name)[1] in exts:
                out.append(Path(dirpath) / name)
    return out


# -- Python oracle -----------------------------------------------------------------------


def python_tokens(text: str) -> list[tuple[str, int, int]]:
    """(name, line, 1-based col) of every identifier token in code, including the code in
    f-string replacement fields (Python 3.11's tokenize returns an f-string as one STRING)."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
            out.append((tok.string, tok.start[0], tok.start[1] + 1))
        elif tok.type == tokenize.STRING and "f" in tok.string[: tok.string.find(tok.string[-1])].lower():
            out += _fstring_names(tok.string, tok.start[0], tok.start[1])
    return out


def _fstring_names(s: str, line0: int, col0: int) -> list[tuple[str, int, int]]:
    """Names in the replacement fields of the f-string token ``s`` (at ``line0``/``col0``)."""
    quote_at = min(i for i in (s.find("'"), s.find('"')) if i >= 0)
    quote = s[quote_at : quote_at + 3] if s[quote_at : quote_at + 3] in ('"""', "'''") else s[quote_at]

    def where(index: int) -> tuple[int, int]:
        nl = s.count("\n", 0, index)
        if nl == 0:
            return line0, col0 + index + 1
        return line0 + nl, index - s.rfind("\n", 0, index)

    out: list[tuple[str, int, int]] = []

    def fields(i: int, end: int) -> None:
        while i < end:
            c = s[i]
            if c in "{}" and i + 1 < end and s[i + 1] == c:
                i += 2
                continue
            if c != "{":
                i += 1
                continue
            j, depth, split, in_str = i + 1, 0, -1, ""
            while j < end:
                d = s[j]
                if in_str:
                    if d == in_str:
                        in_str = ""
                elif d in "'\"":
                    in_str = d
                elif d in "([{":
                    depth += 1
                elif d in ")]" or (d == "}" and depth > 0):
                    depth -= 1
                elif d == "}":
                    break
                elif depth == 0 and split < 0 and (d == ":" or (d == "!" and s[j + 1 : j + 2] != "=")):
                    split = j
                j += 1
            expr_end = split if split >= 0 else j
            expr = s[i + 1 : expr_end].rstrip()
            if expr.endswith("="):
                expr = expr[:-1]
            try:
                for tok in tokenize.generate_tokens(io.StringIO("(" + expr + ")").readline):
                    if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
                        lines = expr.split("\n")
                        rel = sum(len(x) + 1 for x in lines[: tok.start[0] - 1]) + tok.start[1]
                        rel -= 1 if tok.start[0] == 1 else 0  # the "(" we added
                        out.append((tok.string, *where(i + 1 + rel)))
                    elif tok.type == tokenize.STRING and tok.string[:1] in "fF":
                        pass  # a nested f-string: rare; left out
            except (tokenize.TokenError, SyntaxError, IndentationError):
                pass
            if split >= 0 and s[split] == ":":
                fields(split + 1, j)  # nested fields in the format spec
            elif split >= 0:
                colon = s.find(":", split, j)
                if colon >= 0:
                    fields(colon + 1, j)
            i = j + 1

    fields(quote_at + len(quote), len(s) - len(quote))
    return out


def python_bindings(tree: ast.AST) -> tuple[list[str], list[str]]:
    """(names defined by def/class, every other name bound anywhere)."""
    defs: list[str] = []
    other: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.append(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            other.append(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            other.append(node.attr)
        elif isinstance(node, ast.arg):
            other.append(node.arg)
        elif isinstance(node, ast.alias):
            other.append((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            other.extend(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.append(node.name)
        elif isinstance(node, ast.keyword) and node.arg:
            other.append(node.arg)  # a keyword argument names a parameter, not the function
    return defs, other


def python_oracle(root: Path) -> tuple[dict[str, list[Token]], set[str], set[str]]:
    tokens: dict[str, list[Token]] = defaultdict(list)
    def_count: dict[str, int] = defaultdict(int)
    bound: set[str] = set()
    readable: set[str] = set()
    for path in source_files(root, PY_EXT):
        rel = path.relative_to(root).as_posix()
        try:
            text = read_source(path)
            toks = python_tokens(text)
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, tokenize.TokenError, ValueError):
            continue
        readable.add(rel)
        for name, line, col in toks:
            tokens[name].append((rel, line, col))
        defs, other = python_bindings(tree)
        for d in defs:
            def_count[d] += 1
        bound.update(other)
    once = {n for n, c in def_count.items() if c == 1 and n not in bound}
    return tokens, once, readable


# -- JavaScript / TypeScript oracle --------------------------------------------------------

_IDENT_START = re.compile(r"[A-Za-z_$]")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_REGEX_AFTER_WORDS = {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
                      "else", "yield", "await"}  # fmt: skip


def js_tokens(text: str, blanks: list[tuple[int, int]] | None = None) -> list[tuple[str, int, int]]:
    """Identifier tokens in code: skips comments, strings, template text and regex literals,
    and lexes the code inside template ``${...}``. Columns are 1-based code points.
    ``blanks`` (if given) receives the (start, end) offsets of what is not code."""
    out: list[tuple[str, int, int]] = []
    skipped = blanks if blanks is not None else []
    i, n, line, line_start = 0, len(text), 1, 0
    prev = ""  # the last significant token, to tell a regex from a division
    stack: list[int] = []  # brace depth per open template substitution

    def newline_count(a: int, b: int) -> None:
        nonlocal line, line_start
        k = text.find("\n", a, b)
        while k != -1:
            line += 1
            line_start = k + 1
            k = text.find("\n", k + 1, b)

    def template(j: int) -> int:
        """Scan template text from ``j`` (after ` or }); returns the index after the closing
        backtick, or after ``${`` (pushing a substitution)."""
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
            elif c == "`":
                return j + 1
            elif c == "$" and j + 1 < n and text[j + 1] == "{":
                stack.append(0)
                return j + 2
            else:
                j += 1
        return n

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            line_start = i + 1
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            skipped.append((i, n if j == -1 else j))
            i = n if j == -1 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            skipped.append((i, j))
            newline_count(i, j)
            i = j
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            skipped.append((i, j + 1))
            i = j + 1
            prev = "str"
        elif c == "`":
            j = template(i + 1)
            skipped.append((i, j))
            newline_count(i, j)
            i = j
            prev = "str"
        elif c == "}" and stack and stack[-1] == 0:
            stack.pop()
            j = template(i + 1)
            skipped.append((i, j))
            newline_count(i, j)
            i = j
            prev = "str"
        elif c == "/" and (prev == "" or (prev in _REGEX_AFTER_WORDS) or (not prev[0].isalnum() and prev not in (")", "]", "}", "str", "$", "_"))):
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "[":
                    in_class = True
                elif text[j] == "]":
                    in_class = False
                elif text[j] == "/" and not in_class:
                    break
                j += 1
            j += 1
            while j < n and (text[j].isalnum()):
                j += 1  # flags
            skipped.append((i, j))
            i = j
            prev = "str"
        elif _IDENT_START.match(c):
            m = _IDENT.match(text, i)
            assert m is not None
            word = m.group()
            out.append((word, line, i - line_start + 1))
            i = m.end()
            prev = word
        elif c.isdigit():
            m = re.compile(r"[\w.]+").match(text, i)
            i = m.end() if m else i + 1
            prev = "num"
        else:
            if stack:
                if c == "{":
                    stack[-1] += 1
                elif c == "}":
                    stack[-1] -= 1
            prev = c
            i += 1
    return out


_JS_DECL = re.compile(r"\b(?:var|let|const|function\*?|class)\s+([A-Za-z_$][\w$]*)")


_CALLED = re.compile(r"\s*(\?\.\s*)?(<[^;{}()]*>\s*)?[(`]")


def _closing_paren(line: str, start: int) -> int:
    """Index after the ``)`` closing the ``(`` at ``start`` on ``line``, or -1."""
    depth = 0
    for i in range(start, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _is_called(lines: list[str], name: str, line: int, col: int, prev: str) -> bool:
    text = lines[line - 1]
    end = col - 1 + len(name)
    m = _CALLED.match(text, end)
    if prev == "new":
        return True
    if not m or prev == "function":
        return False
    if text[m.end() - 1] == "(":
        close = _closing_paren(text, m.end() - 1)
        if close >= 0 and re.match(r"\s*(\{|:\s*[\w$<>\[\]|., ]+\{)", text[close:]):
            return False  # `name(args) {`: a method or function header, not a call
    return True


def _drop_type_arguments(header: str) -> str:
    out, depth = [], 0
    for c in header:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


@dataclass
class JsOracle:
    tokens: dict[str, list[Token]]
    decls: dict[str, int]
    readable: set[str]
    calls: dict[str, set[tuple[str, int]]]
    """name -> (path, line) where it is called (callers' truth, before the definition is left out)."""
    heirs: dict[str, list[tuple[str, str, str, int]]]
    """base name -> (kind ``class``/``interface``, name, path, line) naming it in its header."""
    decl_lines: dict[str, set[tuple[str, int]]]
    """name -> (path, line) of its ``var``/``let``/``const``/``function``/``class`` declarations."""

    def defined_once_at(self, name: str, path: str, line: int) -> bool:
        """No declaration of ``name`` but (at most) the one on nav's definition line."""
        return self.decls.get(name, 0) == 0 or (
            self.decls[name] == 1 and self.decl_lines.get(name, set()) <= {(path, line)}
        )

    def implementations(self, name: str) -> set[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        todo, seen = [name], {name}
        while todo:
            for kind, heir, path, line in self.heirs.get(todo.pop(), ()):
                if kind == "class" and heir != name:  # a cycle by name (`class A implements RAL.B`, `class B extends A`)
                    out.add((path, line))
                if heir not in seen:
                    seen.add(heir)
                    todo.append(heir)
        return out


def code_only(text: str, blanks: list[tuple[int, int]]) -> str:
    """``text`` with what is not code (strings, comments, regexes) blanked, newlines kept."""
    parts, at = [], 0
    for a, b in blanks:
        parts.append(text[at:a])
        parts.append(re.sub(r"[^\n]", " ", text[a:b]))
        at = b
    parts.append(text[at:])
    return "".join(parts)


_PARAMS = [
    re.compile(r"\bfunction\b\s*\*?\s*[\w$]*\s*(?:<[^>]*>)?\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)"),
    re.compile(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?::[^=;{}]*)?=>"),
    re.compile(r"\bcatch\s*\(([^()]*)\)"),
    # a method header: `name(params) {`, `async name(params): T {`
    re.compile(r"^[ \t]*(?:(?:async|static|get|set|public|private|protected|readonly|override)\s+)*\*?[\w$]+\s*"
               r"(?:<[^>]*>)?\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?::[^{;=]*)?\{", re.MULTILINE),
]
_ONE_PARAM = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*=>")
_BINDING = re.compile(r"(?:^|[(,{\[]|\.\.\.)\s*([A-Za-z_$][\w$]*)")


def parameter_names(code: str) -> set[str]:
    """Names bound as parameters (functions, arrows, methods, catch clauses), lexically:
    another binding of a name, so the name is not "defined once"."""
    out: set[str] = set()
    for pattern in _PARAMS:
        for m in pattern.finditer(code):
            region = re.sub(r"<[^<>]*>", " ", m.group(1))  # type arguments are no bindings
            out.update(b.group(1) for b in _BINDING.finditer(region))
    out.update(m.group(1) for m in _ONE_PARAM.finditer(code))
    return out


_ALIAS = re.compile(r"\b(?:import|export)\s*(?:type\s+)?\{([^}]*)\}|\*\s*as\s+([A-Za-z_$][\w$]*)")
_LIB_MEMBER = re.compile(
    r"^\s*(?:(?:readonly|declare|static|get|set)\s+)*(?:var|let|const|function|class|interface|type|namespace\s+)?"
    r"\s*([A-Za-z_$][\w$]*)\??\s*[:(<=]",
    re.MULTILINE,
)


_TS_KEY = re.compile(
    r"(?:^|[{,(])\s*(?:(?:readonly|public|private|protected)\s+)*([A-Za-z_$][\w$]*)\s*\??\s*:(?!:)", re.MULTILINE
)
TS_EXT = {".ts", ".tsx", ".mts", ".cts"}


def typed_keys(code: str) -> set[str]:
    """TypeScript names followed by ``:`` at a key's place: an object key, a property
    signature, a parameter's annotation. Each declares a thing of that name (of another type
    as often as not), so the name is not "defined once" (as a Python keyword argument is)."""
    return set(_TS_KEY.findall(code))


def alias_names(code: str) -> set[str]:
    """Names an import or export binds to something of another name (``add as addChangeset``,
    ``* as path``): another binding, so the name is not "defined once"."""
    out: set[str] = set()
    for m in _ALIAS.finditer(code):
        if m.group(2):
            out.add(m.group(2))
        else:
            out.update(re.findall(r"\bas\s+([A-Za-z_$][\w$]*)", m.group(1)))
    return out


def platform_names() -> set[str]:
    """Names the TypeScript standard library declares (``Object.keys``, ``RequestInit.duplex``,
    ``Promise.then``): JavaScript's builtins, used for the platform's thing as well as the
    repository's, so not "defined once" (as Python's builtins are not). Read from the
    ``lib.*.d.ts`` of the TypeScript beside the installed typescript-language-server."""
    from lsp.registry import TypeScriptLanguageServer

    tsserver = TypeScriptLanguageServer()._tsserver()
    if tsserver is None:
        print("no typescript lib found: platform names are not left out", file=sys.stderr)
        return set()
    out: set[str] = set()
    for lib in sorted(Path(tsserver).parent.glob("lib*.d.ts")):
        out.update(_LIB_MEMBER.findall(lib.read_text(encoding="utf-8")))
    return out


def js_oracle(root: Path) -> JsOracle:
    tokens: dict[str, list[Token]] = defaultdict(list)
    decls: dict[str, int] = defaultdict(int)
    decl_lines: dict[str, set[tuple[str, int]]] = defaultdict(set)
    calls: dict[str, set[tuple[str, int]]] = defaultdict(set)
    heirs: dict[str, list[tuple[str, str, str, int]]] = defaultdict(list)
    readable: set[str] = set()
    for path in source_files(root, JS_EXT):
        rel = path.relative_to(root).as_posix()
        try:
            text = read_source(path)
        except UnicodeDecodeError:
            continue
        readable.add(rel)
        blanks: list[tuple[int, int]] = []
        toks = js_tokens(text, blanks)
        code = code_only(text, blanks)
        keys = typed_keys(code) if path.suffix in TS_EXT else set()
        for name in parameter_names(code) | alias_names(code) | keys:
            decls[name] += 2  # bound again: never "defined once"
        lines = text.split("\n")
        for k, (name, line, col) in enumerate(toks):
            tokens[name].append((rel, line, col))
            prev = toks[k - 1][0] if k else ""
            if _is_called(lines, name, line, col, prev):
                calls[name].add((rel, line))
        # declarations, from the token stream (so never inside strings or comments)
        for (a, _, _), (b, bl, bc) in zip(toks, toks[1:], strict=False):
            if a in ("var", "let", "const", "function", "class"):
                decls[b] += 1
                decl_lines[b].add((rel, bl))
            if a in ("class", "interface") and b not in ("extends", "implements"):
                # the header: from the name to the first `{` (type arguments left out)
                rest = "\n".join([lines[bl - 1][bc - 1 + len(b) :], *lines[bl : bl + 6]])
                header = _drop_type_arguments(rest.split("{", 1)[0])
                clause = re.split(r"\b(?:extends|implements)\b", header, maxsplit=1)
                if len(clause) == 2:
                    for base in set(re.findall(r"[A-Za-z_$][\w$]*", clause[1])) - {"extends", "implements"}:
                        heirs[base].append((a, b, rel, bl))
    return JsOracle(tokens, decls, readable, calls, heirs, decl_lines)


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    truth: int
    precise: int
    possible: int
    precise_true: int
    all_true: int
    complete: bool
    reason: str | None
    ms: float
    missed: list[Token]
    extra: list[Token]


VERBS = ("refs", "callers", "impl")
_CONTEXTUAL = {"is", "as", "of", "get", "set", "type", "declare", "readonly", "keyof", "infer", "satisfies", "from",
               "async", "await", "yield", "static", "abstract", "override", "namespace", "module", "asserts",
               "unique", "accessor", "out", "in", "global", "require", "exports"}  # fmt: skip
_CALLABLE_KINDS = ("function", "method")
_CLASS_KINDS = ("class", "interface")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--lang", choices=("python", "js"), default="python")
    ap.add_argument("--verbs", default="refs", help="comma-separated: refs, callers, impl (callers/impl: --lang js)")
    ap.add_argument("--n", type=int, default=35, help="names sampled per verb")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--deadline", type=float, default=120.0)
    ap.add_argument("--index-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    verbs = [v.strip() for v in args.verbs.split(",") if v.strip()]
    bad = [v for v in verbs if v not in VERBS]
    if bad or not verbs:
        ap.error(f"--verbs takes {', '.join(VERBS)}; got {args.verbs!r}")
    if args.lang == "python" and verbs != ["refs"]:
        ap.error("the callers and impl oracles are JavaScript/TypeScript only: use --lang js, or --verbs refs")
    root = args.repo.resolve()
    index_dir = args.index_dir or Path("/tmp") / f"nav-recall-{root.name}"

    t0 = time.perf_counter()
    js: JsOracle | None = None
    if args.lang == "python":
        tokens, once, readable = python_oracle(root)
        languages: tuple[str, ...] = ("python",)
    else:
        js = js_oracle(root)
        tokens, readable = js.tokens, js.readable
        languages = ("javascript", "typescript", "tsx")
    oracle_s = time.perf_counter() - t0

    nav = Navigator(root, index_dir=index_dir)
    t0 = time.perf_counter()
    nav.index()
    index_s = time.perf_counter() - t0
    marks = ",".join("?" * len(languages))
    rows = nav.store.conn.execute(
        "SELECT s.name, COUNT(*), MIN(s.kind), MIN(f.path), MIN(s.name_line) FROM symbols s "
        f"JOIN files f ON f.id = s.file_id WHERE f.language IN ({marks}) GROUP BY s.name",
        languages,
    ).fetchall()
    nav_once = {name: (kind, path, line) for name, count, kind, path, line in rows if count == 1}
    # what nav leaves out of its index (build output such as dist/, ignored files) it does
    # not answer for: out of the comparison, like the files the tokenizer cannot read
    served = readable & {path for (path,) in nav.store.conn.execute("SELECT path FROM files")}
    if js is None:
        candidates = sorted(n for n in once if n in nav_once)
    else:
        candidates = sorted(n for n, (_, p, ln) in nav_once.items() if js.defined_once_at(n, p, ln) and n in tokens)
    # a builtin's name (``set``, ``filter``) is used for the builtin too: not "defined once";
    # nor is a contextual keyword (``value is T``, ``x as T``), which the lexer cannot tell
    # from a name
    reserved = set(vars(builtins)) | (_CONTEXTUAL | platform_names() if js is not None else set())
    candidates = [
        n for n in candidates
        if not n.startswith("__") and n not in reserved and sum(t[0] in served for t in tokens.get(n, ())) >= 2
        and all(t[0] in readable for t in tokens[n])
    ]  # fmt: skip

    def truth_of(verb: str, name: str) -> set[tuple[str, int, int]] | set[tuple[str, int]]:
        if verb == "refs":
            return {t for t in tokens[name] if t[0] in served}
        assert js is not None
        _, path, line = nav_once[name]
        if verb == "callers":
            return {c for c in js.calls.get(name, ()) if c != (path, line) and c[0] in served}
        return {c for c in js.implementations(name) if c[0] in served}

    pools = {
        "refs": candidates,
        "callers": [n for n in candidates if nav_once[n][0] in _CALLABLE_KINDS],
        "impl": [n for n in candidates if nav_once[n][0] in _CLASS_KINDS],
    }
    print(f"{root.name}: {len(candidates)} names defined once; oracle {oracle_s:.1f}s, index {index_s:.1f}s",
          file=sys.stderr, flush=True)  # fmt: skip

    summaries = []
    all_rows: dict[str, list[dict[str, object]]] = {}
    for verb in verbs:
        pool = [n for n in pools[verb] if truth_of(verb, n)]  # a name nothing calls or implements: nothing to miss
        rng = random.Random(args.seed)
        sample = sorted(rng.sample(pool, min(args.n, len(pool))))
        print(f"{verb}: {len(pool)} candidates, sampled {len(sample)} (seed {args.seed})", file=sys.stderr, flush=True)
        results: list[Row] = []
        ask = {"refs": nav.references, "callers": nav.callers, "impl": nav.implementations}[verb]
        for k, name in enumerate(sample, 1):
            truth = truth_of(verb, name)
            t = time.perf_counter()
            resp = ask(name, deadline_s=args.deadline)
            ms = (time.perf_counter() - t) * 1e3
            # refs at the token; callers and impl at the line (a server may point at the call's
            # or the class's start rather than at the name)
            precise = {_where(h, verb) for h in resp.items if "lsp" in h.provenance or "symbols" in h.provenance}
            # the rest of the answer: possible hits, or, where the server found nothing at all,
            # the syntax matches nav answered with instead (marked approximate, never complete)
            possible = {_where(h, verb) for h in resp.items if {"possible", "syntax"} & set(h.provenance)} - precise
            # positions outside the readable files are out of the comparison on both sides
            precise = {p for p in precise if p[0] in served}
            possible = {p for p in possible if p[0] in served}
            found = precise | possible
            row = Row(name, len(truth), len(precise), len(possible), len(precise & truth), len(found & truth),
                      resp.complete, resp.reason, round(ms, 1), sorted(truth - found)[:10],  # type: ignore[arg-type]
                      sorted(found - truth)[:10])  # type: ignore[arg-type]  # fmt: skip
            results.append(row)
            flag = "  COMPLETE-BUT-MISSING" if resp.complete and row.all_true < row.truth else ""
            print(f"{verb} {k:3d} {name}: truth {row.truth} precise {row.precise_true}/{row.precise} "
                  f"+possible {row.all_true}/{row.precise + row.possible} {ms:.0f} ms "
                  f"{'complete' if resp.complete else resp.reason}{flag}", file=sys.stderr, flush=True)  # fmt: skip
        summary = _summary(root.name, args, verb, results, len(pool))
        summaries.append(summary)
        all_rows[verb] = [r.__dict__ for r in results]
    nav.close()

    out = args.out or HERE / "results" / f"refs_recall-{root.name}-seed{args.seed}.json"
    if verbs == ["refs"]:  # the file's old shape
        write_json(out, {"summary": summaries[0], "rows": all_rows["refs"]})
    else:
        write_json(out, {"summaries": summaries, "rows": all_rows})
    print(json.dumps(summaries if len(summaries) > 1 else summaries[0], indent=1))
    print("| project | verb | names | true refs | precise recall | precise+possible recall | complete but missing |")
    for sm in summaries:
        print(f"| {sm['repo']} | {sm['verb']} | {sm['names']} of {sm['candidates']} | {sm['true_refs']} | "
              f"{sm['precise_recall']:.3f} | {sm['all_recall']:.3f} | {sm['complete_but_missing']} |")  # fmt: skip
    return 0


def _where(hit: Hit, verb: str) -> tuple[str, int, int] | tuple[str, int]:
    return (hit.path, hit.line, hit.col) if verb == "refs" else (hit.path, hit.line)


def _summary(repo: str, args: argparse.Namespace, verb: str, results: list[Row], pool: int) -> dict[str, object]:
    def ratio(a: int, b: int) -> float:
        return a / b if b else 1.0

    truth_n = sum(r.truth for r in results)
    return {
        "repo": repo,
        "lang": args.lang,
        "verb": verb,
        "seed": args.seed,
        "names": len(results),
        "candidates": pool,
        "true_refs": truth_n,
        "precise_recall": ratio(sum(r.precise_true for r in results), truth_n),
        "precise_precision": ratio(sum(r.precise_true for r in results), sum(r.precise for r in results)),
        "all_recall": ratio(sum(r.all_true for r in results), truth_n),
        "all_precision": ratio(sum(r.all_true for r in results), sum(r.precise + r.possible for r in results)),
        "mean_precise_recall": statistics.fmean(ratio(r.precise_true, r.truth) for r in results) if results else 1.0,
        "mean_all_recall": statistics.fmean(ratio(r.all_true, r.truth) for r in results) if results else 1.0,
        "complete_answers": sum(r.complete for r in results),
        "complete_but_missing": sum(r.complete and r.all_true < r.truth for r in results),
        "precise_short_names": sum(r.precise_true < r.truth for r in results),
        "median_ms": statistics.median(r.ms for r in results) if results else 0.0,
    }


if __name__ == "__main__":
    raise SystemExit(main())
