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
to ask about lives in :mod:`navigator.exact_targets`; what the index adds to a server's
answer or says in its place (possible uses, heritage, the syntax fallback) in
:mod:`navigator.exact_possible`. This module asks the servers and merges their answers.
"""

from __future__ import annotations

import dataclasses
import os
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
from navigator.exact_possible import (
    call_site,
    from_index,
    hit_at,
    is_call,
    is_import,
    member_target,
    nothing_overrides,
    nothing_subclasses,
    plain_method,
    possible,
)
from navigator.exact_targets import (
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


DEFAULT_DEADLINE_S = 30.0
"""Covers a cold start on a large repository (basedpyright on Django: ~5 s to a first
complete answer, FINDINGS.md); a warm query takes tens of milliseconds."""


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

    def callers(
        self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S, limit: int | None = None
    ) -> Response[Hit]:
        """Call sites of ``query`` (LSP incoming calls); ``symbol`` is the calling function."""
        return self._run("callers", query, deadline_s=deadline_s, limit=limit)

    def callees(
        self, query: str, *, deadline_s: float = DEFAULT_DEADLINE_S, limit: int | None = None
    ) -> Response[Hit]:
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
            if op == "implementation" and all(
                nothing_overrides(files, t) or nothing_subclasses(files, t) for t in group
            ):
                sources.append("symbols")
                notes.append(
                    f"no class of the index declares {' or '.join(sorted({f'`{t.name}`' for t in group}))} "
                    "again or names it as a base: nothing can implement it (the server was not asked)"
                )
                continue
            positions = [self._lsp_position(files, t) for t in group]
            derived = op == "callers" and _callers_from_references(language)
            asked: Operation = "references" if derived else op
            answer = self.pool.query(
                self.root, language, asked, positions, deadline_s=_left(deadline), rescan=self._rescan()
            )
            notes += [f"{answer.server}: {n}" for n in answer.notes]
            if _blind(asked, answer, group):
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
                members = derived and any(member_target(files, t) for t in group)
                plain = derived and all(plain_method(files, t) for t in group)
                for hit in self._hits(files, answer.locations, op, _bom_is_text(language, answer.server)):
                    if op == "implementation" and _merged_declaration(hit, group):
                        continue  # `namespace MessageReader` beside `interface MessageReader`: the same symbol
                    if derived and not call_site(files, hit, members=members, plain=plain):
                        continue  # a reference that is no call
                    hits.setdefault((hit.path, hit.line, hit.col), hit)
            if not answer.complete:
                complete = False
                reasons.append(answer.reason or "incomplete")
            if op == "callers" and answer.answered and not derived:
                checked = self._calls_among_references(files, language, positions, hits, deadline)
                if checked is not None:
                    reason, note = checked
                    if reason:
                        complete = False
                        reasons.append(reason)
                    if note:
                        notes.append(note)
            if not answer.answered:
                fallback = from_index(files, op, group)
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
                    hit = hit_at(files, t.path, t.line, t.col, t.line, t.col + len(t.name), ("symbols",), op)
                    if hit.is_definition:
                        hits[(t.path, t.line, t.col)] = hit
        items = sorted(hits.values(), key=lambda h: (h.path, h.line, h.col))
        if files.outside:
            n = files.outside
            notes.append(
                f"{n} location{'s' * (n != 1)} outside the root left out (nav serves only files under it)"
            )
        if lsp_answered:
            extra, why = possible(files, op, targets, items)
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
            return (
                f"could not check the call hierarchy against references ({answer.reason or 'no answer'})",
                None,
            )
        lines = {(h.path, h.line) for h in hits.values()}
        added = 0
        for hit in self._hits(files, answer.locations, "callers", _bom_is_text(language, answer.server)):
            if hit.is_definition or (hit.path, hit.line) in lines:
                continue
            line_text = files.line(hit.path, hit.line)
            end_col = hit.end_col if hit.end_line == hit.line else None
            if is_import(line_text) or not is_call(line_text, hit.col, end_col):
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
            yield hit_at(files, path, line, col, end_line, end_col, ("lsp",), op, loc.name)


def _callers_from_references(language: str) -> bool:
    """Whether the server nav would ask for ``language`` gives callers as its references at
    call sites (:attr:`lsp.servers.base.ServerDefinition.callers_from_references`)."""
    found = available_definition(language) if language else None
    return bool(found and found[0].callers_from_references)


def _bom_is_text(language: str, server: str | None = None) -> bool:
    """Whether the server that answers (by name; else the first installed for ``language``)
    counts a byte-order mark as a character."""
    for cls in SERVERS.get(language, ()):
        if cls.name == server:
            return cls.bom_is_text
    found = None if server else available_definition(language)
    return found[0].bom_is_text if found else False


_MERGED_KINDS = frozenset({"module", "namespace"})


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


def _left(deadline: float) -> float:
    return max(0.01, deadline - time.monotonic())


def _join(reasons: list[str]) -> str | None:
    return "; ".join(dict.fromkeys(reasons)) or None
