"""What the index adds to a language server's answer, or says in its place.

:func:`hit_at` turns a position into a :class:`~navigator.results.Hit` (its enclosing symbol
and line of code from the symbol table). :func:`possible` finds the uses a server could not
resolve in dynamic languages (an untyped receiver; a TypeScript package it cannot import):
the same name's uses in code, marked ``possible``, and for a class the classes that name it
in their ``extends``/``implements`` clause. :func:`from_index` answers from the symbol table
and the index's syntax references when no server can. All of it reads one request's
:class:`~navigator.exact_targets.Files` (and the symbol table it carries); none of it talks
to a server: :mod:`navigator.exact` does.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from lsp.pool import Operation
from navigator.exact_targets import IDENT, Files, Target, enclosing_symbol
from navigator.results import Hit
from semantic.languages import detect_language
from storage.db import SymbolRow

DYNAMIC_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})
"""Languages whose uses servers often cannot resolve: references, callers and
implementations get the same name's other uses in code as well, marked ``possible``
(:func:`possible`). Python and JavaScript for untyped receivers;
TypeScript because tsserver resolves only what its projects can import: in a monorepo with
no ``node_modules`` (no ``npm install``), a package imported by its name is not found, and
uses through it are not linked to their definition (issue 17: 6 of 83 references)."""
_HERITAGE_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
_CLASS_KINDS = frozenset({"class", "interface"})


def hit_at(
    files: Files,
    path: str,
    line: int,
    col: int,
    end_line: int,
    end_col: int,
    provenance: tuple[str, ...],
    op: str,
    name: str | None = None,
) -> Hit:
    rows = files.symbols(path)
    defined = next(
        (
            r
            for r in rows
            if (r.definition.name_span.start_line, r.definition.name_span.start_col) == (line, col)
        ),
        None,
    )
    # the definition named here (`note` of `String label, note;`), else the innermost around it
    enclosing = defined or enclosing_symbol(rows, line)
    symbol = enclosing.definition.qualified_name if enclosing else None
    if op == "callers" and symbol is None and name:
        symbol = name
    kind: str | None
    if defined is not None:
        kind = defined.definition.kind
    elif op in ("callers", "callees"):
        kind = "call"
    else:
        kind = "reference" if op == "references" else None
    return Hit(
        path=path,
        line=line,
        col=col,
        end_line=end_line,
        end_col=end_col,
        code=files.line(path, line).strip(),
        symbol=symbol,
        is_definition=defined is not None,
        provenance=provenance,
        kind=kind,
    )


def possible(
    files: Files, op: Operation, targets: Sequence[Target], precise: Sequence[Hit]
) -> tuple[list[Hit], str | None]:
    """What the server may have missed, for ``references``, ``callers`` and
    ``implementation`` in dynamic languages (an untyped receiver, FINDINGS.md): every use
    of the name in code (the index's syntax references: identifiers, never strings or
    comments) that the server did not report. Provenance ``possible``; listed after the
    server's answer. A member (method, attribute) is matched at ``.name`` uses, anything
    else at bare uses (and ``.name`` when no member has that name); callers only at uses that are not definitions, imports or
    already reported lines; implementations only at other definitions of the name."""
    wanted = [t for t in targets if t.name and (t.language or "") in DYNAMIC_LANGUAGES]
    if not wanted or op not in ("references", "callers", "implementation"):
        return [], None
    member = {t.name: _is_member(files, t) for t in wanted}
    # A plain method (no property, getter or setter) is called only where it is called:
    # `x.name = v`, `x.name.attr` and `f = x.name` are no call of it (basedpyright's call
    # hierarchy counts the uses of a property, and calls, no other use).
    plain = {t.name: op == "callers" and member[t.name] and plain_method(files, t) for t in wanted}
    at = {(h.path, h.line, h.col) for h in precise}
    lines = {(h.path, h.line) for h in precise}
    own = {(t.path, t.line, t.col) for t in targets}
    # A member is used as ``.name``, anything else by its bare name; ``x.name`` can still
    # be a function or class (reached through a module or object the server cannot
    # type) when no member of that name exists anywhere.
    members = {
        n: any(r.definition.kind in _MEMBER_KINDS for r in files.table.resolve(n))
        for n, m in member.items() if not m and op != "implementation"
    }  # fmt: skip
    out: list[Hit] = []
    for name, is_member in member.items():
        if op == "implementation":
            if not is_member:
                # a class's implementations have other names: the classes that name it in
                # their `extends`/`implements` clause (TypeScript, JavaScript)
                for hit in _heritage(files, name, at | own):
                    at.add((hit.path, hit.line, hit.col))
                    out.append(hit)
                continue
            for row in files.table.resolve(name):
                d = row.definition
                where = (d.path, d.name_span.start_line, d.name_span.start_col)
                if d.name != name or d.kind not in _MEMBER_KINDS or where in own or where in at:
                    continue
                if (d.language or detect_language(d.path)) not in DYNAMIC_LANGUAGES:
                    continue
                at.add(where)
                hit = hit_at(files, *where, where[1], where[2] + len(name), ("possible",), op)
                out.append(dataclasses.replace(hit, kind="possible implementation"))
            continue
        for ref in files.table.refs_by_name(name):
            if (ref.path, ref.line, ref.col) in at:
                continue
            line_text = files.line(ref.path, ref.line)
            start = ref.col - 1
            if line_text[start : start + len(name)] != name:
                continue  # the file changed since it was indexed, or is gone
            before = line_text[:start].rstrip()[-1:]
            # `{generateColors: noop}`, `const {total: t} = obj`: the member, on an object (in
            # JavaScript only: elsewhere `name: T` is as often a parameter's annotation)
            keyed = is_member and before in ("", "{", ",") and _KEY_AFTER.match(line_text, ref.end_col - 1)
            # `Mocha.prototype.run = function run() {}`: the function's own name is the member's
            own_name = (
                is_member
                and line_text[:start].rstrip().endswith("function")
                and (_language(files, ref.path) == "javascript")
            )
            attribute = (
                before == "." or own_name or bool(keyed and _language(files, ref.path) == "javascript")
            )
            if attribute != is_member and (is_member or members.get(name, True)):
                continue
            if attribute and _module_path(line_text, start, _language(files, ref.path)):
                continue  # `from urllib.request import`: a module's name, no attribute of anything
            called = is_call(line_text, ref.col, ref.end_col)  # `f(`, and `f<T>(` in TypeScript
            if op == "callers" and ((ref.path, ref.line) in lines or (not called and not is_member)):
                continue
            if plain[name] and not called:
                continue
            hit = hit_at(files, ref.path, ref.line, ref.col, ref.line, ref.end_col, ("possible",), op)
            if hit.is_definition or (op == "callers" and is_import(line_text)):
                continue  # a definition (of something else of that name); an import is no call
            at.add((ref.path, ref.line, ref.col))
            lines.add((ref.path, ref.line))
            out.append(dataclasses.replace(hit, kind="possible call" if called else "possible reference"))
    if not out:
        return [], None
    what = {"references": "reference", "callers": "caller", "implementation": "implementation"}[op]
    what += "" if len(out) == 1 else "s"
    names = " or ".join(f"`{'.' if member[n] else ''}{n}`" for n in member)
    how = "by name in code"
    if op == "implementation" and not any(member.values()):
        how = "named in the `extends`/`implements` clause of a class (or of its base)"
    return out, (
        f"{len(out)} possible {what} the server could not resolve: {names} {how} "
        "(provenance `possible`, listed after the server's answer); some may be other things of that name"
    )


def _language(files: Files, path: str) -> str | None:
    return files.table.file_language(path) or detect_language(path)


def _heritage(files: Files, name: str, known: set[tuple[str, int, int]]) -> list[Hit]:
    """Classes whose ``extends``/``implements`` clause names ``name``, and theirs in turn
    (a subclass implements what its base does; an interface extending it passes it on),
    found in the index's syntax references: a class of another tsconfig project, which
    tsserver's implementation search does not look into. Positions in ``known`` (the
    server's answer) are left out."""
    out: list[Hit] = []
    todo, seen = [name], {name}
    while todo:
        base = todo.pop()
        for ref in files.table.refs_by_name(base):
            if _language(files, ref.path) not in _HERITAGE_LANGUAGES:
                continue
            row = _heritage_of(files, ref.path, ref.line, ref.col, base)
            if row is None:
                continue
            d = row.definition
            if d.name not in seen:
                seen.add(d.name)
                todo.append(d.name)
            where = (d.path, d.name_span.start_line, d.name_span.start_col)
            if d.kind != "class" or where in known:
                continue
            known.add(where)
            hit = hit_at(files, *where, where[1], where[2] + len(d.name), ("possible",), "implementation")
            out.append(dataclasses.replace(hit, kind="possible implementation"))
    return out


def _heritage_of(files: Files, path: str, line: int, col: int, name: str) -> SymbolRow | None:
    """The class or interface whose header (``class X extends A implements B``, over up
    to a few lines) holds the use of ``name`` at ``line``/``col``, or None."""
    for row in files.symbols(path):
        d = row.definition
        first = d.name_span.start_line
        if (
            d.kind not in _CLASS_KINDS
            or not first <= line <= first + 5
            or (line, col) <= (first, d.name_span.start_col)
        ):
            continue
        parts = [files.line(path, n) for n in range(first, line + 1)]
        parts[-1] = parts[-1][: col - 1]
        parts[0] = (
            parts[0][d.name_span.end_col - 1 :]
            if len(parts) > 1
            else parts[0][d.name_span.end_col - 1 : col - 1]
        )
        header = "\n".join(parts)
        if (
            "{" not in header
            and _HERITAGE.search(header)
            and files.line(path, line)[col - 1 :].startswith(name)
        ):
            return row
    return None


def from_index(files: Files, op: Operation, group: Sequence[Target]) -> tuple[str, list[Hit]] | None:
    """What the index can say without a server, or None when it cannot say anything."""
    if op == "definition":
        out = [
            hit_at(files, t.path, t.line, t.col, t.line, t.col + len(t.name), ("symbols",), op)
            for t in group
            if t.qualified_name is not None
        ]
        return ("symbols", out) if out else None
    if op not in ("references", "callers"):
        return None
    out = []
    for name in dict.fromkeys(t.name for t in group if t.name):
        for ref in files.table.refs_by_name(name):
            line_text = files.line(ref.path, ref.line)
            if line_text[ref.col - 1 : ref.col - 1 + len(name)] != name:
                continue  # the file changed since it was indexed, or is gone
            hit = hit_at(files, ref.path, ref.line, ref.col, ref.line, ref.end_col, ("syntax",), op)
            if op == "callers" and hit.is_definition:
                continue
            out.append(hit)
    return "syntax", out


_CALL_AFTER = re.compile(r"\s*(\?\.\s*)?(<[^;{}()]*>\s*)?[(`]")


def is_call(line_text: str, col: int, end_col: int | None) -> bool:
    """Whether the name at ``col`` (1-based; ending before ``end_col``, or where the
    identifier ends) is called there: ``name(``, ``name?.(``, ``name<T>(``, a tagged
    template, or ``new Name``."""
    start = col - 1
    if end_col is None:
        m = IDENT.match(line_text, start)
        end = m.end() if m else start
    else:
        end = end_col - 1
    if _CALL_AFTER.match(line_text, end):
        return True
    return bool(re.search(r"\bnew\s+$", line_text[:start]))


_KEY_AFTER = re.compile(r"\s*\??:(?!:)")
_HERITAGE = re.compile(r"\b(extends|implements)\b")


_MEMBER_KINDS = frozenset({"method", "property", "field", "attribute"})
_IMPORT = re.compile(r"^\s*(from\s+\S+\s+)?import\b|^\s*(import|export)\b.*\bfrom\b|\brequire\s*\(")


def _is_member(files: Files, target: Target) -> bool:
    """Whether ``target`` names a member (used as ``.name``): its kind, or, for a position,
    the symbol defined there or a ``.`` before it."""
    kind = target.kind
    if kind is None:
        row = next(
            (r for r in files.symbols(target.path)
             if (r.definition.name_span.start_line, r.definition.name_span.start_col) == (target.line, target.col)),
            None,
        )  # fmt: skip
        if row is not None:
            kind = row.definition.kind
        else:
            return files.line(target.path, target.line)[: target.col - 1].rstrip().endswith(".")
    return kind in _MEMBER_KINDS


_DEF_LINE = re.compile(r"\s*(async\s+)?def\b")
_ACCESSOR_DECORATOR = re.compile(r"@\S*(property|\.setter|\.getter|\.deleter)\b")
_ACCESSOR_LINE = re.compile(
    r"\s*(?:(?:static|public|private|protected|override|readonly)\s+)*(?:get|set)\s+[\w$#]"
)


def plain_method(files: Files, target: Target) -> bool:
    """Whether ``target`` is a method that is no property, getter or setter (whose every use,
    an assignment included, runs it): a Python ``def`` under no property decorator, a
    JavaScript or TypeScript method that is no ``get``/``set`` accessor. False when unsure."""
    if target.kind != "method":
        return False
    text = files.line(target.path, target.line)
    if _language(files, target.path) == "python":
        if not _DEF_LINE.match(text):
            return False
        above = target.line - 1
        while above >= 1 and (decorator := files.line(target.path, above).strip()).startswith("@"):
            if _ACCESSOR_DECORATOR.match(decorator):
                return False
            above -= 1
        return True
    return _language(files, target.path) in DYNAMIC_LANGUAGES and not _ACCESSOR_LINE.match(text)


_DECLARES = re.compile(r"\s*(?::(?!=)|=(?!=)|\+=|-=)")


_CLASS_HEADER = re.compile(r"^\s*class\s")
_ALIASED = re.compile(r"=\s*$|,\s*$|\(\s*$|\[\s*$")


def nothing_subclasses(files: Files, target: Target) -> bool:
    """Whether no class of the index can implement the Python class ``target``: it is no
    Protocol (whose implementations need not name it), and its name appears in no class header
    but its own, nor where it could be aliased or handed to ``type()`` (after ``=``, ``,``, ``(``
    or ``[``, unless called there). A subclass names its base (or an alias of it) in its header."""
    if target.kind != "class" or (target.language or "") != "python" or not target.name:
        return False
    name = target.name
    if "Protocol" in files.line(target.path, target.line):
        return False
    own = (target.path, target.line, target.col)
    for ref in files.table.refs_by_name(name):
        if (ref.path, ref.line, ref.col) == own:
            continue
        text = files.line(ref.path, ref.line)
        start = ref.col - 1
        if text[start : start + len(name)] != name:
            return False  # the file changed since it was indexed: ask the server
        if _CLASS_HEADER.match(text):
            return False
        if _ALIASED.search(text[:start]) and not is_call(text, ref.col, ref.col + len(name)):
            return False  # `Base = Name`, `(Name, Other)`, `type("X", (Name,), {})`: maybe a base
    return True


def nothing_overrides(files: Files, target: Target) -> bool:
    """Whether no class of the index can override the Python method ``target``: nothing else
    of its name is defined (``def``, a class or attribute), nor assigned as an attribute
    (``self.name = ...``, ``name: T`` in a class body). An override must declare the name, so
    basedpyright's implementation search (which type-checks every class of the program against
    the method's class: 85-120 ms on pytest) can only find the method itself."""
    if target.kind != "method" or (target.language or "") != "python" or not target.name:
        return False
    name = target.name
    own = (target.path, target.line, target.col)
    for row in files.table.resolve(name):
        d = row.definition
        if d.name == name and (d.path, d.name_span.start_line, d.name_span.start_col) != own:
            return False
    for ref in files.table.refs_by_name(name):
        if (ref.path, ref.line, ref.col) == own:
            continue
        text = files.line(ref.path, ref.line)
        if text[ref.col - 1 : ref.col - 1 + len(name)] != name:
            return False  # the file changed since it was indexed: ask the server
        if _DECLARES.match(text, ref.col - 1 + len(name)):
            return False  # `self.name = ...`, `name: int`, `name = ...`
    return True


_ASSIGNED = re.compile(r"\s*=(?!=)")
_RECEIVER = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\.\s*$")


def member_target(files: Files, target: Target) -> bool:
    """Whether ``target`` is a member of a class (a method, property, attribute, or a class
    nested in one): its uses as ``x.name`` on an instance run or name it."""
    if _is_member(files, target):
        return True
    qualified = target.qualified_name or ""
    if target.kind != "class" or "." not in qualified:
        return False
    outer = qualified.rsplit(".", 1)[0]
    return any(
        r.definition.qualified_name == outer and r.definition.kind == "class"
        for r in files.symbols(target.path)
    )


def call_site(files: Files, hit: Hit, *, members: bool, plain: bool = False) -> bool:
    """Whether a server's reference ``hit`` is a call site as a call hierarchy counts one: the
    name called (``f(``, ``x.f(``), or, for a member (``members``), used as ``x.name`` on an
    instance (basedpyright's incoming calls count both; ``Class.name`` and ``cls.name``, on the
    class object, neither; nor ``x.name = v`` over a plain method, ``plain``). Never a definition
    or an import."""
    if hit.is_definition:
        return False
    text = files.line(hit.path, hit.line)
    if is_import(text):
        return False
    if is_call(text, hit.col, hit.end_col if hit.end_line == hit.line else None):
        return True
    before = text[: hit.col - 1]
    if not members or not before.rstrip().endswith("."):
        return False
    if plain and _ASSIGNED.match(text, hit.end_col - 1 if hit.end_line == hit.line else len(text)):
        return False  # `x.name = ...` over a plain method: a new attribute (of a subclass), no call
    receiver = _RECEIVER.search(before)
    if receiver is None:
        return True  # `f().name`, `x[0].name`: an instance
    name = receiver.group(1)
    if name == "cls":
        return False
    # a class by its name (`Report.failed`), not a variable that a class somewhere shares a name with
    return not (name[:1].isupper() and any(r.definition.kind == "class" for r in files.table.resolve(name)))


def _module_path(line_text: str, col0: int, language: str | None) -> bool:
    """Whether the 0-based column ``col0`` of a Python line is inside an import's module path
    (``from a.b import c``: before ``import``; ``import a.b [as c]``: anywhere before ``as``)."""
    if language != "python":
        return False
    head = line_text.lstrip()
    if head.startswith("from "):
        end = line_text.find(" import", len(line_text) - len(head))
        return end < 0 or col0 < end
    if head.startswith("import "):
        alias = line_text.find(" as ", len(line_text) - len(head))
        return alias < 0 or col0 < alias
    return False


def is_import(line_text: str) -> bool:
    return bool(_IMPORT.search(line_text))
