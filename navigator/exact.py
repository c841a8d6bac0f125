"""The exact leg: definitions, references, hover, callers, callees and implementations from
real language servers, with the symbol table turning names into positions.

- A name (``createSalesOrder``, ``Order.create``, ``pkg.module.func``) resolves through the
  symbol table to definition positions; the server is asked at each definition's name,
  the answers merged and de-duplicated, definitions marked. ``path:line:col`` asks at
  that position directly.
- Every hit carries path, 1-based line/column (code points), the enclosing symbol from
  the symbol table, the line of code and its provenance: ``lsp`` when a server said
  so, ``syntax`` for the identifier-match fallback, ``symbols`` for the symbol table.
- Every response says whether it is complete and, if not, why. When no server can
  answer (none installed, still indexing, crashed, deadline), references and callers
  fall back to syntax matches from the index, marked approximate.

The symbol table is reached through :class:`SymbolTable` (``Navigator`` implements it
through :class:`NavigatorTable`); tests pass a fake. Turning a query's text into the positions
to ask about lives in :mod:`navigator.exact_targets`; this module asks the servers, merges
their answers and completes them (possible uses, heritage, the syntax fallback).
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from lsp.pool import LanguageServers, Location, LspAnswer, Operation, Position, ServerPool
from lsp.positions import from_lsp, to_lsp
from lsp.registry import (
    SERVERS,
    Availability,
    available_definition,
)
from navigator.doctor import doctor
from navigator.exact_targets import (
    IDENT,
    Files,
    IndexedCheckout,
    NavigatorTable,
    SymbolTable,
    Target,
    enclosing_symbol,
    parse_position,
    resolve_targets,
)
from navigator.results import Hit, HoverInfo, Response
from semantic.languages import detect_language
from storage.db import SymbolRow
from storage.errors import UsageError

__all__ = [
    "DEFAULT_DEADLINE_S",
    "ExactNavigator",
    "HoverInfo",
    "IndexedCheckout",
    "NavigatorTable",
    "SymbolTable",
    "Target",
    "doctor",
    "enclosing_symbol",
    "parse_position",
    "resolve_targets",
]

_Files = Files
"""The name tests and ``bench/fault_scenarios`` import this class by."""

DEFAULT_DEADLINE_S = 30.0
"""Covers a cold start on a large repository (basedpyright on Django: ~5 s to a first
complete answer, FINDINGS.md); a warm query takes tens of milliseconds."""

_DYNAMIC_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})
"""Languages whose uses servers often cannot resolve: references, callers and
implementations get the same name's other uses in code as well, marked ``possible``
(:meth:`ExactNavigator._possible`). Python and JavaScript for untyped receivers;
TypeScript because tsserver resolves only what its projects can import: in a monorepo with
no ``node_modules`` (no ``npm install``), a package imported by its name is not found, and
uses through it are not linked to their definition (issue 17: 6 of 83 references)."""
_HERITAGE_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
_CLASS_KINDS = frozenset({"class", "interface"})


class ExactNavigator:
    """Exact navigation for one root. Synchronous; owns a :class:`ServerPool` unless given one
    (any :class:`~lsp.pool.LanguageServers`: the daemon's and ``nav lsp``'s shared pool, a test's fake)."""

    def __init__(self, root: Path, table: SymbolTable, *, pool: LanguageServers | None = None) -> None:
        self.root = Path(root).resolve()
        self.table = table
        self._own_pool = pool is None
        self.pool: LanguageServers = pool if pool is not None else ServerPool()

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()

    def __enter__(self) -> ExactNavigator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def files_changed(self, paths: Iterable[str] | None = None) -> None:
        """Files changed on disk (``paths`` relative to the root or absolute; None: any may
        have): the running servers are told now, in the background, so the next answer is
        fresh without walking the tree first. Cheap; safe to call often."""
        self.pool.files_changed(self.root, paths)

    def _rescan(self) -> bool:
        follows = getattr(self.table, "follows_changes", None)
        return not (callable(follows) and follows())

    # -- verbs ----------------------------------------------------------------------------

    def definition(self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S) -> Response[Hit]:
        """Where ``query`` (a name or ``path:line:col``) is defined, as the server sees it."""
        return self._run("definition", query, deadline_s=deadline_s, limit=None)

    def references(
        self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S, limit: int | None = None
    ) -> Response[Hit]:
        """Every reference to ``query``, definitions included and marked."""
        return self._run("references", query, deadline_s=deadline_s, limit=limit)

    def callers(self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S, limit: int | None = None) -> Response[Hit]:
        """Call sites of ``query`` (LSP incoming calls); ``symbol`` is the calling function."""
        return self._run("callers", query, deadline_s=deadline_s, limit=limit)

    def callees(self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S, limit: int | None = None) -> Response[Hit]:
        """What ``query`` calls (LSP outgoing calls), at each callee's definition."""
        return self._run("callees", query, deadline_s=deadline_s, limit=limit)

    def implementations(
        self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S, limit: int | None = None
    ) -> Response[Hit]:
        """Implementations of an interface, abstract method or base class."""
        return self._run("implementation", query, deadline_s=deadline_s, limit=limit)

    def hover(self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S) -> Response[HoverInfo]:
        """The server's hover text (signature, type, docs) at each definition of ``query``."""
        started = time.perf_counter()
        deadline = time.monotonic() + deadline_s
        targets = resolve_targets(query, self.table, self.root)
        files = Files(self.root, self.table)
        items: list[HoverInfo] = []
        complete, reasons, sources = True, [], set()
        for target in targets:
            language = target.language or ""
            positions = [self._lsp_position(files, target)]
            answer = self.pool.query(
                self.root, language, "hover", positions, deadline_s=_left(deadline), rescan=self._rescan()
            )
            if answer.server:
                sources.add(f"lsp:{answer.server}")
            if not answer.complete:
                complete = False
                reasons.append(answer.reason or "incomplete")
            if answer.text:
                enclosing = enclosing_symbol(files.symbols(target.path), target.line)
                items.append(
                    HoverInfo(target.path, target.line, target.col,
                              enclosing.definition.qualified_name if enclosing else None, answer.text)
                )  # fmt: skip
        return Response(
            items=tuple(items),
            complete=complete,
            reason=_join(reasons),
            source=",".join(sorted(sources)) or None,
            elapsed_ms=(time.perf_counter() - started) * 1e3,
        )

    def doctor(self) -> Response[Availability]:
        """Per language: the server nav would use, whether it is installed, its version,
        and the command that installs what is missing."""
        return doctor()

    # -- the engine -----------------------------------------------------------------------

    def _lsp_position(self, files: Files, target: Target) -> Position:
        line, character = to_lsp(files.line(target.path, target.line), target.line, target.col)
        if target.line == 1:
            character += files.bom_shift(target.path, 1, _bom_is_text(target.language or ""))
        return Position(str(self.root / target.path), line, character)

    def _run(self, op: Operation, query: str, *, deadline_s: float, limit: int | None) -> Response[Hit]:
        if deadline_s <= 0:
            raise UsageError(f"deadline must be positive, got {deadline_s}")
        if limit is not None and limit < 1:
            raise UsageError(f"limit must be at least 1, got {limit}")
        started = time.perf_counter()
        deadline = time.monotonic() + deadline_s
        targets = resolve_targets(query, self.table, self.root)
        files = Files(self.root, self.table)
        groups: dict[str, list[Target]] = {}
        for target in targets:
            groups.setdefault(target.language or "", []).append(target)
        hits: dict[tuple[str, int, int], Hit] = {}
        complete, reasons, sources, notes = True, [], [], []
        lsp_answered = False
        for language, group in groups.items():
            positions = [self._lsp_position(files, t) for t in group]
            answer = self.pool.query(
                self.root, language, op, positions, deadline_s=_left(deadline), rescan=self._rescan()
            )
            notes += [f"{answer.server}: {n}" for n in answer.notes]
            if _blind(op, answer, group):
                # Asked at a definition with includeDeclaration, a server that has loaded the
                # file returns at least that definition: nothing at all means it has not.
                answer = dataclasses.replace(
                    answer,
                    complete=False,
                    answered=False,
                    reason=f"{answer.server} found nothing, not even the definition: it has not loaded "
                    "the project of this file (build import failed?), or cannot resolve the name there "
                    "(its type comes from an import that does not resolve)",
                )
            if answer.answered:
                lsp_answered = True
                sources.append(f"lsp:{answer.server}")
                for hit in self._hits(files, answer.locations, op, _bom_is_text(language, answer.server)):
                    if op == "implementation" and _merged_declaration(hit, group):
                        continue  # `namespace MessageReader` beside `interface MessageReader`: the same symbol
                    hits.setdefault((hit.path, hit.line, hit.col), hit)
            if not answer.complete:
                complete = False
                reasons.append(answer.reason or "incomplete")
            if op == "callers" and answer.answered:
                checked = self._calls_among_references(files, language, positions, hits, deadline)
                if checked is not None:
                    reason, note = checked
                    if reason:
                        complete = False
                        reasons.append(reason)
                    if note:
                        notes.append(note)
            if not answer.answered:
                fallback = self._fallback(files, op, group)
                if fallback is not None:
                    kind, found = fallback
                    sources.append(kind)
                    reasons.append(f"approximate: {kind} matches from the index")
                    notes.append(
                        f"{language or 'this language'}: approximate {kind} matches, not a language server's answer"
                    )
                    for hit in found:
                        hits.setdefault((hit.path, hit.line, hit.col), hit)
        if op == "references" and lsp_answered:
            # Asked with includeDeclaration; a server may still leave the definition out
            # (typescript-language-server for a function exported with `module.exports =`).
            # The symbol table knows it: listed, marked, never missing.
            for t in targets:
                if t.qualified_name is not None and (t.path, t.line, t.col) not in hits:
                    hit = self._hit(files, t.path, t.line, t.col, t.line, t.col + len(t.name), ("symbols",), op)
                    if hit.is_definition:
                        hits[(t.path, t.line, t.col)] = hit
        items = sorted(hits.values(), key=lambda h: (h.path, h.line, h.col))
        if files.outside:
            n = files.outside
            notes.append(f"{n} location{'s' * (n != 1)} outside the root left out (nav serves only files under it)")
        if lsp_answered:
            extra, why = self._possible(files, op, targets, items)
            if why:
                complete = False  # complete means nothing is known to be missing
                reasons.append(why.split(":", 1)[0])
                notes.append(why)
                sources.append("syntax")
            items += extra  # after the server's answer, never interleaved with it
        if limit is not None and len(items) > limit:
            complete = False
            reasons.append(f"limit reached: {len(items)} hits, showing {limit}")
            items = items[:limit]
        return Response(
            items=tuple(items),
            complete=complete,
            reason=_join(reasons),
            source=",".join(dict.fromkeys(sources)) or None,
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=tuple(notes),
        )

    def _calls_among_references(
        self,
        files: Files,
        language: str,
        positions: Sequence[Position],
        hits: dict[tuple[str, int, int], Hit],
        deadline: float,
    ) -> tuple[str | None, str | None] | None:
        """The server's references at call positions that its call hierarchy left out, added
        to ``hits`` (callers) with their enclosing symbol: a callers answer must not contradict
        the references answer (tsserver's call hierarchy stays inside the project of the file
        it is asked in, its references do not: in a monorepo of several tsconfig projects it
        answered "no callers" for a function with 60 call sites). Returns (a reason the answer
        is not complete, a note), or None when there is nothing to say."""
        answer = self.pool.query(self.root, language, "references", positions, deadline_s=_left(deadline),
                                 rescan=False)  # fmt: skip
        if not answer.answered:
            return (f"could not check the call hierarchy against references ({answer.reason or 'no answer'})", None)
        lines = {(h.path, h.line) for h in hits.values()}
        added = 0
        for hit in self._hits(files, answer.locations, "callers", _bom_is_text(language, answer.server)):
            if hit.is_definition or (hit.path, hit.line) in lines:
                continue
            line_text = files.line(hit.path, hit.line)
            end_col = hit.end_col if hit.end_line == hit.line else None
            if _is_import(line_text) or not _is_call(line_text, hit.col, end_col):
                continue
            hits[(hit.path, hit.line, hit.col)] = hit
            lines.add((hit.path, hit.line))
            added += 1
        reason = None if answer.complete else f"references check: {answer.reason or 'incomplete'}"
        if not added:
            return (reason, None) if reason else None
        return reason, (
            f"{answer.server}: {added} call site{'s' * (added != 1)} from its references that its call "
            "hierarchy left out (another project of the workspace?), listed with their enclosing symbol"
        )

    def _hits(
        self, files: Files, locations: Sequence[Location], op: Operation, bom_is_text: bool = False
    ) -> Iterable[Hit]:
        for loc in locations:
            if not files.inside(loc.path):
                files.outside += 1  # nav serves only files under the root
                continue
            path = files.rel(loc.path)
            if not os.path.exists(loc.path):
                continue  # deleted since: never point at code that is gone
            start_text = files.line(path, loc.start_line + 1)
            shift = files.bom_shift(path, loc.start_line + 1, bom_is_text)
            line, col = from_lsp(start_text, loc.start_line, max(0, loc.start_character - shift))
            end_text = start_text if loc.end_line == loc.start_line else files.line(path, loc.end_line + 1)
            shift = files.bom_shift(path, loc.end_line + 1, bom_is_text)
            end_line, end_col = from_lsp(end_text, loc.end_line, max(0, loc.end_character - shift))
            yield self._hit(files, path, line, col, end_line, end_col, ("lsp",), op, loc.name)

    def _hit(
        self,
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
            (r for r in rows if (r.definition.name_span.start_line, r.definition.name_span.start_col) == (line, col)),
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

    def _possible(
        self, files: Files, op: Operation, targets: Sequence[Target], precise: Sequence[Hit]
    ) -> tuple[list[Hit], str | None]:
        """What the server may have missed, for ``references``, ``callers`` and
        ``implementation`` in dynamic languages (an untyped receiver, FINDINGS.md): every use
        of the name in code (the index's syntax references: identifiers, never strings or
        comments) that the server did not report. Provenance ``possible``; listed after the
        server's answer. A member (method, attribute) is matched at ``.name`` uses, anything
        else at bare uses (and ``.name`` when no member has that name); callers only at uses that are not definitions, imports or
        already reported lines; implementations only at other definitions of the name."""
        wanted = [t for t in targets if t.name and (t.language or "") in _DYNAMIC_LANGUAGES]
        if not wanted or op not in ("references", "callers", "implementation"):
            return [], None
        member = {t.name: _is_member(files, t) for t in wanted}
        at = {(h.path, h.line, h.col) for h in precise}
        lines = {(h.path, h.line) for h in precise}
        own = {(t.path, t.line, t.col) for t in targets}
        # A member is used as ``.name``, anything else by its bare name; ``x.name`` can still
        # be a function or class (reached through a module or object the server cannot
        # type) when no member of that name exists anywhere.
        members = {
            n: any(r.definition.kind in _MEMBER_KINDS for r in self.table.resolve(n))
            for n, m in member.items() if not m and op != "implementation"
        }  # fmt: skip
        out: list[Hit] = []
        for name, is_member in member.items():
            if op == "implementation":
                if not is_member:
                    # a class's implementations have other names: the classes that name it in
                    # their `extends`/`implements` clause (TypeScript, JavaScript)
                    for hit in self._heritage(files, name, at | own):
                        at.add((hit.path, hit.line, hit.col))
                        out.append(hit)
                    continue
                for row in self.table.resolve(name):
                    d = row.definition
                    where = (d.path, d.name_span.start_line, d.name_span.start_col)
                    if d.name != name or d.kind not in _MEMBER_KINDS or where in own or where in at:
                        continue
                    if (d.language or detect_language(d.path)) not in _DYNAMIC_LANGUAGES:
                        continue
                    at.add(where)
                    hit = self._hit(files, *where, where[1], where[2] + len(name), ("possible",), op)
                    out.append(dataclasses.replace(hit, kind="possible implementation"))
                continue
            for ref in self.table.refs_by_name(name):
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
                own_name = is_member and line_text[:start].rstrip().endswith("function") and (
                    self._language(ref.path) == "javascript"
                )
                attribute = before == "." or own_name or bool(keyed and self._language(ref.path) == "javascript")
                if attribute != is_member and (is_member or members.get(name, True)):
                    continue
                called = _is_call(line_text, ref.col, ref.end_col)  # `f(`, and `f<T>(` in TypeScript
                if op == "callers" and ((ref.path, ref.line) in lines or (not called and not is_member)):
                    continue
                hit = self._hit(files, ref.path, ref.line, ref.col, ref.line, ref.end_col, ("possible",), op)
                if hit.is_definition or (op == "callers" and _is_import(line_text)):
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

    def _language(self, path: str) -> str | None:
        return self.table.file_language(path) or detect_language(path)

    def _heritage(self, files: Files, name: str, known: set[tuple[str, int, int]]) -> list[Hit]:
        """Classes whose ``extends``/``implements`` clause names ``name``, and theirs in turn
        (a subclass implements what its base does; an interface extending it passes it on),
        found in the index's syntax references: a class of another tsconfig project, which
        tsserver's implementation search does not look into. Positions in ``known`` (the
        server's answer) are left out."""
        out: list[Hit] = []
        todo, seen = [name], {name}
        while todo:
            base = todo.pop()
            for ref in self.table.refs_by_name(base):
                if self._language(ref.path) not in _HERITAGE_LANGUAGES:
                    continue
                row = self._heritage_of(files, ref.path, ref.line, ref.col, base)
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
                hit = self._hit(files, *where, where[1], where[2] + len(d.name), ("possible",), "implementation")
                out.append(dataclasses.replace(hit, kind="possible implementation"))
        return out

    def _heritage_of(self, files: Files, path: str, line: int, col: int, name: str) -> SymbolRow | None:
        """The class or interface whose header (``class X extends A implements B``, over up
        to a few lines) holds the use of ``name`` at ``line``/``col``, or None."""
        for row in files.symbols(path):
            d = row.definition
            first = d.name_span.start_line
            if d.kind not in _CLASS_KINDS or not first <= line <= first + 5 or (line, col) <= (first, d.name_span.start_col):
                continue
            parts = [files.line(path, n) for n in range(first, line + 1)]
            parts[-1] = parts[-1][: col - 1]
            parts[0] = parts[0][d.name_span.end_col - 1 :] if len(parts) > 1 else parts[0][d.name_span.end_col - 1 : col - 1]
            header = "\n".join(parts)
            if "{" not in header and _HERITAGE.search(header) and files.line(path, line)[col - 1 :].startswith(name):
                return row
        return None

    def _fallback(self, files: Files, op: Operation, group: Sequence[Target]) -> tuple[str, list[Hit]] | None:
        """What the index can say without a server, or None when it cannot say anything."""
        if op == "definition":
            out = [
                self._hit(files, t.path, t.line, t.col, t.line, t.col + len(t.name), ("symbols",), op)
                for t in group
                if t.qualified_name is not None
            ]
            return ("symbols", out) if out else None
        if op not in ("references", "callers"):
            return None
        out = []
        for name in dict.fromkeys(t.name for t in group if t.name):
            for ref in self.table.refs_by_name(name):
                line_text = files.line(ref.path, ref.line)
                if line_text[ref.col - 1 : ref.col - 1 + len(name)] != name:
                    continue  # the file changed since it was indexed, or is gone
                hit = self._hit(files, ref.path, ref.line, ref.col, ref.line, ref.end_col, ("syntax",), op)
                if op == "callers" and hit.is_definition:
                    continue
                out.append(hit)
        return "syntax", out


def _bom_is_text(language: str, server: str | None = None) -> bool:
    """Whether the server that answers (by name; else the first installed for ``language``)
    counts a byte-order mark as a character."""
    for cls in SERVERS.get(language, ()):
        if cls.name == server:
            return cls.bom_is_text
    found = None if server else available_definition(language)
    return found[0].bom_is_text if found else False


_CALL_AFTER = re.compile(r"\s*(\?\.\s*)?(<[^;{}()]*>\s*)?[(`]")


def _is_call(line_text: str, col: int, end_col: int | None) -> bool:
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


_MERGED_KINDS = frozenset({"module", "namespace"})
_KEY_AFTER = re.compile(r"\s*\??:(?!:)")
_HERITAGE = re.compile(r"\b(extends|implements)\b")


def _merged_declaration(hit: Hit, group: Sequence[Target]) -> bool:
    """An implementation hit that is the asked symbol itself (its own declaration, or a
    namespace merged with an interface or class of the same name)."""
    for t in group:
        if (hit.path, hit.line, hit.col) == (t.path, t.line, t.col):
            return True
        merged = hit.is_definition and hit.kind in _MERGED_KINDS and hit.symbol is not None
        if merged and t.name and (hit.symbol or "").rsplit(".", 1)[-1] == t.name:
            return True
    return False


def _blind(op: Operation, answer: LspAnswer, group: Sequence[Target]) -> bool:
    """A complete, empty ``references`` answer asked at definitions (never a true answer)."""
    return (
        op == "references"
        and answer.answered
        and answer.complete
        and not answer.locations
        and all(t.qualified_name is not None for t in group)
    )


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


def _is_import(line_text: str) -> bool:
    return bool(_IMPORT.search(line_text))


def _left(deadline: float) -> float:
    return max(0.01, deadline - time.monotonic())


def _join(reasons: list[str]) -> str | None:
    return "; ".join(dict.fromkeys(reasons)) or None

