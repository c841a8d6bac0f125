"""The ``nav`` query commands: ``def``, ``symbols``, ``outline``, ``show``, ``find``, ``search``,
``map``, ``grep``, and the language-server verbs ``refs``, ``callers``, ``callees``, ``impl``, ``hover``.

Each asks the engine one verb (through :class:`navigator.verbs.Verbs`, the daemon's or an
in-process Navigator's) and prints the answer through :mod:`navigator.frontends.display`, or
``--json``. The commands register on :data:`navigator.frontends.cli_base.main`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import click

from navigator.errors import shorten
from navigator.frontends import display
from navigator.frontends.cli_base import (
    Ctx,
    echo_incomplete,
    echo_json,
    format_source,
    format_symbol,
    handle_errors,
    json_option,
    main,
    store_for,
    store_option,
)
from navigator.results import Response

if TYPE_CHECKING:
    from navigator.results import Hit
    from navigator.verbs import Verbs


all_repos_option = click.option(
    "--all-repos", is_flag=True, help="Ask the team store: every published repository (see `nav publish`)."
)


def _team_where(item: Any) -> str:
    return f"{item.repo}@{item.commit[:8]}:" if getattr(item, "repo", "") else ""


@main.command("def")
@click.argument("name")
@all_repos_option
@store_option
@json_option
@click.pass_obj
@handle_errors
def def_(obj: Ctx, name: str, all_repos: bool, store_url: str | None, as_json: bool) -> None:
    """Where NAME is defined: `createSalesOrder`, `Order.create`, `pkg.module.func`."""
    if all_repos:
        resp = obj.nav().definitions(name, all_repos=True, store=store_for(obj, store_url))
    else:
        resp = obj.nav().definitions(name)
    if as_json:
        echo_json(resp)
        return
    for sym in resp.items:
        click.echo(_team_where(sym) + format_symbol(sym))
    if len(resp.items) > 1:
        click.secho(f"({len(resp.items)} definitions of `{shorten(name)}`)", fg="bright_black", err=True)
    echo_incomplete(resp)


@main.command()
@click.argument("pattern")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=30, show_default=True)
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (function, class, method, ...).")
@json_option
@click.pass_obj
@handle_errors
def symbols(obj: Ctx, pattern: str, limit: int, kinds: tuple[str, ...], as_json: bool) -> None:
    """Symbols matching PATTERN (substring, words or fuzzy), best first."""
    resp = obj.nav().symbols(pattern, limit=limit, kinds=kinds or None)
    if as_json:
        echo_json(resp)
        return
    if not resp.items:
        click.secho(f"no symbols match `{shorten(pattern)}`", fg="yellow", err=True)
        sys.exit(1)
    for sym in resp.items:
        click.echo(format_symbol(sym))
    echo_incomplete(resp)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@json_option
@click.pass_obj
@handle_errors
def outline(obj: Ctx, file: str, as_json: bool) -> None:
    """The symbols defined in FILE, nested."""
    resp = obj.nav().outline(file)
    if as_json:
        echo_json(resp)
        return
    for entry in resp.items:
        click.echo(format_symbol(entry.symbol, indent=entry.depth))
    echo_incomplete(resp)


@main.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
def grep(obj: Ctx, args: tuple[str, ...]) -> None:
    """Search text like rg (-F -i -w -l -c -g -t -A -B -C -m), from nav's trigram index."""
    from navigator.frontends.grep_cli import main as grep_main

    # the console script answers `nav grep` before click (ripgrep's options are read by hand);
    # this is the same command for `python -m navigator.frontends.cli` and `nav --help`
    sys.exit(grep_main(list(args), root_arg=obj._root, no_daemon=not obj.use_daemon))


@main.command()
@click.argument("target")
@click.option(
    "--max-lines", type=click.IntRange(min=1), default=200, show_default=True, help="Lines per definition."
)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Definitions shown when ambiguous.",
)
@json_option
@click.pass_obj
@handle_errors
def show(obj: Ctx, target: str, max_lines: int, limit: int, as_json: bool) -> None:
    """The source of TARGET (a name, Order.create, or path:line), trimmed to --max-lines."""
    resp = obj.nav().show(target, max_lines=max_lines, limit=limit)
    if as_json:
        echo_json(resp)
        return
    for source in resp.items:
        click.echo(format_source(source))
    echo_incomplete(resp)


@main.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--deadline", type=click.FloatRange(min=0.1), default=10.0, show_default=True, help="Seconds.")
@json_option
@click.pass_obj
@handle_errors
def find(obj: Ctx, query: tuple[str, ...], limit: int, deadline: float, as_json: bool) -> None:
    """Answer QUERY: a name, a path:line:col, or a question; legs fused with RRF."""
    resp = obj.nav().query(" ".join(query), limit=limit, deadline_s=deadline)
    if as_json:
        echo_json(resp)
        return
    for f in resp.items:
        for line in display.found_lines(f):
            click.echo(line)
    for line in display.find_tail_lines(resp):
        click.echo(line, err=True)


@main.command("map")
@click.option("--tokens", type=click.IntRange(min=16), default=1024, show_default=True, help="Token budget.")
@json_option
@click.pass_obj
@handle_errors
def map_(obj: Ctx, tokens: int, as_json: bool) -> None:
    """The most important symbols' signatures (PageRank over references), fitted to --tokens."""
    result = obj.nav().repo_map(tokens=tokens)
    if as_json:
        echo_json(result)
        return
    click.echo(result.text)
    click.secho(
        f"({len(result.entries)} of {result.total_symbols} symbols, ~{result.tokens} tokens)",
        fg="bright_black",
        err=True,
    )


@main.command()
@click.argument("text", nargs=-1, required=True)
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many results.")
@click.option(
    "--path", "paths", multiple=True, help="Only under this folder, or matching this glob (repeatable)."
)
@click.option(
    "--lang", "languages", multiple=True, help="Only this language: python, typescript, go, ... (repeatable)."
)
@click.option(
    "--code", "code_view", is_flag=True,
    help="Rank the definitions to read or edit (two of one file can both lead) instead of files.",
)  # fmt: skip
@all_repos_option
@store_option
@json_option
@click.pass_obj
@handle_errors
def search(
    obj: Ctx, text: tuple[str, ...], k: int, paths: tuple[str, ...], languages: tuple[str, ...],
    code_view: bool, all_repos: bool, store_url: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Search code by meaning and by name: `nav search "where do we retry the ERP call"`."""
    if all_repos:
        if paths:
            raise click.UsageError("--path is not supported with --all-repos (paths differ per repository)")
        resp = obj.nav().search(
            " ".join(text),
            k=k,
            languages=list(languages) or None,
            all_repos=True,
            store=store_for(obj, store_url),
        )
    else:
        resp = obj.nav().search(
            " ".join(text), k=k, paths=list(paths) or None, languages=list(languages) or None,
            view="code" if code_view else "files",
        )  # fmt: skip
    if as_json:
        echo_json(resp)
        return
    for hit in resp.items:
        for line in display.search_lines(hit):
            click.echo(line)
    echo_incomplete(resp)


# -- exact navigation: language servers (navigator/exact.py) -------------------------------

deadline_option = click.option(
    "--deadline", "deadline_s", type=click.FloatRange(min=0.01), default=30.0, show_default=True,
    help="Seconds to wait for the language server (a cold start included).",
)  # fmt: skip
limit_option = click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=None, help="At most this many hits."
)


def format_hit(hit: Any) -> str:
    return display.hit_line(hit)


SHRINK_ABOVE = display.SHRINK_ABOVE


def echo_counts_per_file(items: Any, what: str) -> None:
    for line in display.counts_per_file(items, what):
        click.echo(line)


class _HitsVerb(Protocol):
    """One of the engine's verbs that answer hits (``references``, ``callers``...)."""

    def __call__(self, target: str, *, deadline_s: float = ..., limit: int | None = ...) -> Response[Hit]: ...


def _hits_command(verb: Callable[[Verbs], _HitsVerb], name: str, doc: str) -> None:
    @main.command(name, help=doc)
    @click.argument("target")
    @deadline_option
    @limit_option
    @json_option
    @click.pass_obj
    @handle_errors
    def command(obj: Ctx, target: str, deadline_s: float, limit: int | None, as_json: bool) -> None:
        resp = verb(obj.nav())(target, deadline_s=deadline_s, limit=limit)
        if as_json:
            echo_json(resp)
            return
        if limit is None and len(resp.items) > SHRINK_ABOVE:
            echo_counts_per_file(resp.items, name)
        else:
            for hit in resp.items:
                click.echo(format_hit(hit))
        if not resp.items:
            click.secho(f"no {name} for `{shorten(target)}`", fg="yellow", err=True)
        echo_incomplete(resp)


_hits_command(
    lambda nav: nav.references,
    "refs",
    "Every reference to TARGET (a name, `Order.create`, or path:line:col).",
)
_hits_command(lambda nav: nav.callers, "callers", "Call sites of TARGET (language server call hierarchy).")
_hits_command(lambda nav: nav.callees, "callees", "What TARGET calls (language server call hierarchy).")
_hits_command(
    lambda nav: nav.implementations,
    "impl",
    "Implementations of TARGET (an interface, abstract method, base class).",
)


@main.command()
@click.argument("target")
@deadline_option
@json_option
@click.pass_obj
@handle_errors
def hover(obj: Ctx, target: str, deadline_s: float, as_json: bool) -> None:
    """The language server's signature, type and docs for TARGET."""
    resp = obj.nav().hover(target, deadline_s=deadline_s)
    if as_json:
        echo_json(resp)
        return
    for item in resp.items:
        for line in display.hover_lines(item):
            click.echo(line)
    echo_incomplete(resp)
