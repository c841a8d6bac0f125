"""The ``nav`` command line: a thin shell over :class:`navigator.Navigator`.

Library errors become messages and exit codes here, at the edge. ``--json`` on
every command prints the API's own result types serialized.

Exit codes: 0 ok; 1 other nav error; 2 bad usage; 3 not indexed; 4 unknown symbol
or file; 5 index database error; 6 language server error; 7 deadline; 8 model error.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from navigator.errors import NavError, shorten
from navigator.frontends import display
from navigator.paths import find_root, printable
from navigator.results import Response, Symbol, to_json

if TYPE_CHECKING:
    from navigator.api import Navigator
    from navigator.results import Hit, IndexReport
    from navigator.search import SyncReport
    from navigator.team import WarmReport
    from navigator.verbs import Verbs

F = TypeVar("F", bound=Callable[..., Any])

MESSAGE_CHARS = 240
"""A usage message from click quotes the bad value whole; past this it keeps head and tail."""


def _short_message(message: str) -> str:
    if len(message) <= MESSAGE_CHARS:
        return message
    return f"{message[:160]}…{message[-60:]}"


class _Group(click.Group):
    """click's group, with usage errors that quote at most a shortened bad value.

    click puts an option's whole value in its message (`'aaa…' is not a valid integer`): a
    100,000-character value would fill the terminal. The message is shortened here, once,
    for every command and option.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        standalone = kwargs.pop("standalone_mode", True)
        run: Any = super().main
        if not standalone:
            return run(*args, standalone_mode=False, **kwargs)
        try:
            rv = run(*args, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            exc.message = _short_message(exc.message)  # type: ignore[misc]
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


class Ctx:
    process_entry = False
    """Set by the console script's entry (a process of its own, not a CliRunner in a test)."""
    only_talked_to_daemon = False
    """Set when a command used only the daemon client: the process may then exit fast."""
    skip_teardown = False
    """Set when a command's work is done and durable (a finished `nav index`): the process exits
    without the interpreter's teardown, which resets signal handlers (a SIGTERM in it was -15)."""

    def __init__(self, root: str | None, *, use_daemon: bool) -> None:
        self._root = root
        self.use_daemon = use_daemon
        self._nav: Verbs | None = None
        self._local: Navigator | None = None

    @property
    def root(self) -> Path:
        return Path(self._root) if self._root else find_root(Path.cwd())

    def nav(self) -> Verbs:
        """The engine: the root's daemon by default (started on first use), else in-process."""
        if self._nav is None:
            from navigator.paths import daemon_possible

            if self.use_daemon and daemon_possible(self.root):  # a read-only .nav: in-process
                from navigator.frontends.client import DaemonClient

                self._nav = DaemonClient(self.root)
            else:
                self._nav = self.local()
        return self._nav

    def local(self) -> Navigator:
        """An in-process Navigator (indexing runs here, with its progress bar)."""
        if self._local is None:
            from navigator.api import Navigator

            self._local = Navigator(self.root)
        return self._local

    def close(self) -> None:
        for obj in (self._nav, self._local):
            if obj is not None:
                obj.close()
        if self.use_daemon and self._nav is not None and self._local is None:
            Ctx.only_talked_to_daemon = True


def handle_errors(fn: F) -> F:
    """Convert NavError into a one-line message on stderr and its exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except NavError as err:
            click.secho(f"nav: {err}", fg="red", err=True)
            sys.exit(err.exit_code)
        except KeyboardInterrupt:
            click.echo("nav: interrupted", err=True)
            sys.exit(130)
        except (click.exceptions.Exit, click.ClickException, SystemExit, BrokenPipeError):
            raise
        except Exception as exc:  # a bug: one clear line and exit 1; the traceback on request
            if os.environ.get("NAV_DEBUG") == "1":
                raise
            click.secho(
                f"nav: internal error: {type(exc).__name__}: {shorten(str(exc), 300)} "
                "(run again with NAV_DEBUG=1 for the traceback, and please report it)",
                fg="red",
                err=True,
            )
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


def echo_json(obj: Any) -> None:
    click.echo(to_json(obj))


def format_symbol(sym: Symbol, *, indent: int = 0) -> str:
    return display.symbol_line(sym, indent=indent)


def format_source(source: Any) -> str:
    return display.source_block(source)


def echo_incomplete(resp: Response[Any]) -> None:
    for line in display.incomplete_lines(resp):
        click.echo(line, err=True)


class Progress:
    """A progress bar on stderr that appears only when the work takes more than a moment."""

    def __init__(self, label: str, *, delay_s: float = 0.5) -> None:
        self.label = label
        self.delay_s = delay_s
        self.started = time.monotonic()
        self.bar: Any = None
        self.shown = 0
        self.enabled = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.started < self.delay_s or done >= total:
                return
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)  # progress comes per file, or per batch of chunks
        self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-C",
    "--root",
    type=click.Path(file_okay=False),
    default=None,
    help="Repository root (default: the nearest folder above the current one with .nav or .git).",
)
@click.option(
    "--no-daemon",
    is_flag=True,
    envvar="NAV_NO_DAEMON",
    help="Run everything in this process instead of the root's warm daemon (env NAV_NO_DAEMON=1).",
)
@click.version_option(package_name="nav", prog_name="nav")
@click.pass_context
def main(ctx: click.Context, root: str | None, no_daemon: bool) -> None:
    """nav: code navigation for agents, editors and the command line."""
    c = Ctx(root, use_daemon=not no_daemon)
    ctx.obj = c
    ctx.call_on_close(c.close)


store_option = click.option(
    "--store",
    "store_url",
    default=None,
    metavar="URL",
    help="Team store, postgresql://user@host/db (default: $NAV_STORE, then [store] url in .nav.toml).",
)


def _team_nav(obj: Ctx, store_url: str | None) -> Navigator:
    """The in-process Navigator, told the team store to use (None: NAV_STORE / config)."""
    nav = obj.local()
    if store_url is not None:
        nav.store_url = store_url
    return nav


def _store_for(obj: Ctx, store_url: str | None) -> str:
    """The team store this command means (--store, else NAV_STORE in this shell, else the root's
    ``[store] url``), resolved here and passed on: the root's daemon, which answers --all-repos
    with its model already loaded, may have been started from another environment."""
    from navigator.config import load_config
    from navigator.team import require_store_url

    return require_store_url(load_config(obj.root), store_url)


def _store_configured(obj: Ctx, store_url: str | None) -> bool:
    from navigator.config import resolve_store_url

    # the Navigator checks the root (and loads its config) before anything touches the path
    return resolve_store_url(obj.local().config, store_url) is not None


@main.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Also embed the chunks for semantic search now (slow on a CPU; cached by content). "
    "On by default when a team store is configured: its vectors are taken, only the rest embedded.",
)
@store_option
@json_option
@click.pass_obj
@handle_errors
def index(obj: Ctx, path: str | None, embed: bool | None, store_url: str | None, as_json: bool) -> None:
    """Index PATH (default: the root) incrementally: symbols, chunks and references."""
    if path is not None:
        obj._root = path
    team = _store_configured(obj, store_url)
    nav = _team_nav(obj, store_url) if team else obj.local()
    progress = Progress("parsing")
    indexed = False

    def left() -> str:  # a SIGTERM after the index committed (embedding, printing) loses nothing of it
        if not indexed:
            return "finished batches are kept, run `nav index` to complete"
        return "the index run had completed; vectors embedded so far are kept (the next `nav index --embed` or the daemon goes on)"

    with _terminate_as_exit(left):
        try:
            report = nav.index(progress=progress)
            indexed = True
        finally:
            progress.close()
        _index_rest(nav, report, team=team, embed=embed, as_json=as_json)
    if Ctx.process_entry:  # the process's last instants say the same, and never hang
        _exit_on_term(f"nav: terminated; {left()}\n")
        Ctx.skip_teardown = True


def _exit_on_term(text: str) -> None:
    import signal

    def on_term(signum: int, frame: object) -> None:
        os.write(2, text.encode())
        os._exit(143)

    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGTERM, on_term)


def _index_rest(
    nav: Navigator, report: IndexReport, *, team: bool, embed: bool | None, as_json: bool
) -> None:
    """`nav index` after the index run: embedding or warming from the team store, then the report."""
    warm = None
    if team:
        warm = _warm_with_progress(nav, embed=embed is not False)
        vectors = None
    else:
        vectors = _embed_with_progress(nav) if embed else None
    if as_json:
        echo_json(report if warm is None else {"index": report, "store": warm})
        return
    for p in report.added[:20]:
        click.echo(click.style("  + ", fg="green") + printable(p))
    for p in report.updated[:20]:
        click.echo(click.style("  ~ ", fg="yellow") + printable(p))
    for p in report.removed[:20]:
        click.echo(click.style("  - ", fg="red") + printable(p))
    shown = len(report.added[:20]) + len(report.updated[:20]) + len(report.removed[:20])
    total_changed = len(report.added) + len(report.updated) + len(report.removed)
    if total_changed > shown:
        click.echo(f"  … and {total_changed - shown} more")
    for p, why in report.skipped[:10]:
        click.secho(f"  skipped {printable(p)}: {why}", fg="bright_black", err=True)
    if len(report.skipped) > 10:
        click.secho(f"  skipped {len(report.skipped) - 10} more files", fg="bright_black", err=True)
    click.echo(
        f"indexed {nav.root}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged in {report.seconds:.2f}s "
        f"({report.files} files, {report.symbols} symbols, {report.chunks} chunks)"
    )
    for note in report.notes:
        click.secho(f"note: {note}", fg="yellow", err=True)
    if vectors is not None:
        click.echo(
            f"vectors: {vectors.vectors}/{vectors.chunks} chunks ({vectors.embedded} embedded, "
            f"{vectors.from_cache} from cache) in {vectors.seconds:.1f}s"
        )
    if warm is not None:
        click.echo(
            f"vectors: {warm.vectors}/{warm.chunks} chunks ({warm.from_store} from the team store, "
            f"{warm.embedded} embedded here, {warm.pushed} pushed back) in {warm.seconds:.1f}s"
        )
        for note in warm.notes:
            click.secho(f"note: {note}", fg="yellow", err=True)


@main.group("store")
def store_group() -> None:
    """The team store (PostgreSQL + pgvector): create its schema, see what is published."""


@store_group.command("init")
@store_option
@click.pass_obj
@handle_errors
def store_init(obj: Ctx, store_url: str | None) -> None:
    """Create (or migrate) the team store's schema; needs a role that may create tables."""
    team = _team_nav(obj, store_url).team()
    team.pg.ensure_schema(write=True)
    click.echo(f"team store {team.safe_url}: schema version {team.pg.schema_version()}")


@store_group.command("status")
@store_option
@json_option
@click.pass_obj
@handle_errors
def store_status(obj: Ctx, store_url: str | None, as_json: bool) -> None:
    """Published branch heads and the store's size (the password is never shown)."""
    team = _team_nav(obj, store_url).team()
    team.pg.ensure_schema(write=False)
    heads = team.pg.heads()
    size = team.pg.size()
    if as_json:
        click.echo(json.dumps({"store": team.safe_url, "writable": team.pg.writable(),
                               "heads": [dict(zip(("repo", "branch", "commit", "updated_at"), h, strict=True))
                                         for h in heads], "size": size}))  # fmt: skip
        return
    click.echo(f"store:    {team.safe_url} ({'read-write' if team.pg.writable() else 'read-only'})")
    for repo, branch, sha, _ in heads:
        click.echo(f"  {repo}@{sha[:12]}  {branch}")
    total = sum(v for k, v in size.items() if k.startswith("bytes:"))
    click.echo(
        f"{len(heads)} branch heads; {size.get('rows:nav_chunks', 0)} chunks, "
        f"{size.get('rows:nav_embeddings', 0)} vectors, {total / 1e6:.1f} MB"
    )


def _warm_with_progress(nav: Navigator, *, embed: bool) -> WarmReport:
    progress = Progress("embedding", delay_s=0.0)
    try:
        return nav.team().warm(embed=embed, progress=progress)
    finally:
        progress.close()


@main.command()
@click.option("--repo", default=None, help="Repository name (default: the origin remote's name, else the folder's).")
@click.option("--branch", default=None, help="Branch (default: $NAV_BRANCH, CI's branch variables, else git's).")
@click.option("--allow-dirty", is_flag=True, help="Publish even if the working tree differs from HEAD.")
@click.option(
    "--threads", type=click.IntRange(min=1), default=2, show_default=True, help="Torch threads for embedding."
)
@store_option
@json_option
@click.pass_obj
@handle_errors
def publish(
    obj: Ctx, repo: str | None, branch: str | None, allow_dirty: bool, threads: int,
    store_url: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Publish the HEAD commit to the team store (what CI runs for a branch head).

    Content-addressed: files, chunks and vectors the store has are not uploaded or embedded
    again. One transaction per commit; publishing a published commit only moves the branch.
    """
    from navigator.public import set_thread_limit

    set_thread_limit(threads)  # torch or ONNX Runtime alike
    nav = _team_nav(obj, store_url)
    progress = Progress("embedding")
    try:
        report = nav.team().publish(repo=repo, branch=branch, allow_dirty=allow_dirty, progress=progress)
    finally:
        progress.close()
    if as_json:
        echo_json(report)
        return
    if report.already_published:
        click.echo(f"{report.repo}@{report.commit[:12]} was already published; {report.branch} points at it")
    else:
        click.echo(
            f"published {report.repo}@{report.commit[:12]} ({report.branch}) to {nav.team().safe_url}: "
            f"{report.files} files, {report.chunks} chunks; new: {report.new_files} file versions, "
            f"{report.new_chunks} chunks, {report.new_vectors} vectors ({report.from_store} vectors from the "
            f"store, {report.embedded} embedded here) in {report.seconds:.1f}s"
        )
    for note in report.notes:
        click.secho(f"note: {note}", fg="yellow", err=True)


@contextlib.contextmanager
def _terminate_as_exit(said: Callable[[], str] | None = None) -> Iterator[None]:
    """SIGTERM (what `timeout` and service managers send) ends an index run cleanly: the open batch
    rolls back, the parse workers are ended, and the exit code is 143 with ``said()`` (what the
    run leaves; by default: finished batches) on stderr."""
    import signal

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(143)

    try:
        previous = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    except SystemExit as exc:
        if exc.code == 143:
            text = said() if said is not None else "finished batches are kept, run `nav index` to complete"
            click.echo(f"nav: terminated; {text}", err=True)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


@main.command()
@json_option
@click.pass_obj
@handle_errors
def status(obj: Ctx, as_json: bool) -> None:
    """Show what is indexed and whether the working tree has changed since."""
    st = obj.nav().status()
    if as_json:
        echo_json(st)
        return
    click.echo(f"root:     {st.root}")
    click.echo(f"index:    {st.index_path}")
    _echo_store_line(obj)
    if not st.indexed:
        click.echo("state:    not indexed (run `nav index`)")
        return
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_indexed_at)) if st.last_indexed_at else "?"
    click.echo(f"indexed:  {st.files} files, {st.symbols} symbols, {st.chunks} chunks, {st.refs} references")
    langs = ", ".join(f"{k} {v}" for k, v in sorted(st.languages.items(), key=lambda kv: -kv[1]))
    click.echo(f"languages: {langs}")
    click.echo(f"last run: {'complete' if st.last_run_complete else 'INCOMPLETE'} at {when}")
    click.echo(f"stale:    {st.stale_files} files changed since (indexed again on the next query)")
    for note in st.notes:
        click.secho(f"note: {note}", fg="yellow")


def _echo_store_line(obj: Ctx) -> None:
    """The configured team store, password redacted (the store is not contacted)."""
    from navigator.config import load_config, resolve_store_url
    from navigator.public import redact

    url = resolve_store_url(load_config(obj.root))
    if url:
        click.echo(f"store:    {redact(url, url)}")


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
        resp = obj.nav().definitions(name, all_repos=True, store=_store_for(obj, store_url))
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
@click.option("--max-lines", type=click.IntRange(min=1), default=200, show_default=True, help="Lines per definition.")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=5, show_default=True, help="Definitions shown when ambiguous.")
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


@main.command()
@click.pass_obj
def lsp(obj: Ctx) -> None:
    """Serve nav as a language server over stdio, for editors (workspace/symbol, definition, ...)."""
    from navigator.frontends.editor import serve_stdio

    # the index and model come from the root's daemon (shared with the CLI and agents); the
    # language servers that see the editor's unsaved buffers run in this process
    serve_stdio(use_daemon=obj.use_daemon)


@main.command()
@click.pass_obj
@handle_errors
def mcp(obj: Ctx) -> None:
    """Serve nav's verbs as MCP tools over stdio (find, refs, def, callers, search, outline, map)."""
    from navigator.frontends.mcp_server import serve_stdio

    serve_stdio(obj.nav())


@main.command("setup")
@click.argument("agent", metavar="AGENT")
@click.option(
    "--scope", type=click.Choice(["project", "user"]), default=None,
    help="project: the repository's files (with -C ROOT in the entry); user: your home's, for every "
    "repository. Default: user for codex, project for the others.",
)  # fmt: skip
@click.option("--print", "show", is_flag=True, help="Show what would change, file by file, and write nothing.")
@click.option("--remove", is_flag=True, help="Take nav's entry and instructions out again, leaving the rest as it was.")
@click.pass_obj
@handle_errors
def setup(obj: Ctx, agent: str, scope: str | None, show: bool, remove: bool) -> None:
    """Add nav to AGENT (claude, codex, cursor, opencode, gemini, vscode): its MCP server entry
    and a short text telling the agent when to use nav, in the files the agent reads."""
    from navigator.errors import UsageError
    from navigator.frontends import agent_setup

    name = agent_setup.normalize_agent(agent)
    root = None
    if (scope or agent_setup.DEFAULT_SCOPE[name]) == "project":
        root = obj.root.resolve()
        if not root.is_dir():
            raise UsageError(f"no folder {printable(str(root))}; pass the repository with -C ROOT")
    plan = agent_setup.plan(
        name, scope=scope, root=str(root) if root else None, home=os.path.expanduser("~"), env=os.environ,
        command=agent_setup.nav_command(), remove=remove, read=agent_setup.read_file,
    )  # fmt: skip
    if show:  # the diff on stdout; what stays as it is, and the notes, on stderr
        click.echo(agent_setup.diff(plan), nl=False)
        for line in agent_setup.summary(plan, remove=remove, written=False):
            click.secho(line, fg="bright_black", err=True)
        return
    agent_setup.apply(plan)
    for line in agent_setup.summary(plan, remove=remove):
        click.echo(line)


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


@main.group()
def daemon() -> None:
    """Manage the root's warm daemon (the CLI starts it on first use)."""


@daemon.command("start")
@click.option("--idle-timeout", type=click.FloatRange(min=1), default=None, help="Exit after this many idle seconds.")
@click.pass_obj
@handle_errors
def daemon_start(obj: Ctx, idle_timeout: float | None) -> None:
    """Start the daemon for the root (no-op if one runs)."""
    from navigator import checks
    from navigator.frontends.client import start_daemon

    if idle_timeout is not None:
        idle_timeout = checks.seconds(idle_timeout, what="--idle-timeout", low=1, high=7 * 86400)
    word = start_daemon(obj.root.resolve(), idle_timeout_s=idle_timeout)
    click.echo("daemon started" if word == "ready" else "daemon already running")


@daemon.command("stop")
@click.pass_obj
@handle_errors
def daemon_stop(obj: Ctx) -> None:
    """Stop the root's daemon, if one runs."""
    from navigator.frontends.client import DaemonClient

    client = DaemonClient(obj.root, autostart=False)
    try:
        stopped = client.stop()
    finally:
        client.close()
    click.echo("daemon stopped" if stopped else "no daemon running")


@daemon.command("status")
@click.option("--all", "all_daemons", is_flag=True, help="List every live daemon of this user, not only the root's.")
@json_option
@click.pass_obj
@handle_errors
def daemon_status(obj: Ctx, all_daemons: bool, as_json: bool) -> None:
    """Show whether a daemon serves the root: pid, uptime, requests, memory, what servers run."""
    from navigator.errors import ServerError
    from navigator.frontends.client import DaemonClient

    if all_daemons:
        _all_daemons_status(as_json)
        return

    client = DaemonClient(obj.root, autostart=False)
    try:
        info = client.daemon_status()
    except ServerError:
        if as_json:
            click.echo("null")
        else:
            click.echo("no daemon running")
        sys.exit(1)
    finally:
        client.close()
    if as_json:
        click.echo(json.dumps(info))
        return
    for key, value in info.items():
        click.echo(f"{key + ':':<16}{value}")


def _all_daemons_status(as_json: bool) -> None:
    """Every live daemon of the user (the registry in the runtime folder; entries of dead ones
    are removed as they are seen): root, pid, memory with its servers, servers, idle, embedding."""
    from navigator.frontends.client import status_at
    from navigator.frontends.registry import live_entries

    rows: list[dict[str, Any]] = []
    for entry in live_entries():
        info = status_at(entry.socket)
        row: dict[str, Any] = {
            "root": entry.root,
            "pid": entry.pid,
            "answering": info is not None,
            "idle_s": round(max(0.0, time.time() - entry.last_used), 1),
        }
        if info is not None:
            own, servers = info.get("rss_now_mb") or 0.0, info.get("servers_rss_mb") or 0.0
            budget = info.get("budget") or {}
            row.update(
                rss_mb=round(own + servers, 1),
                daemon_rss_mb=own,
                servers_rss_mb=servers,
                servers=info.get("servers", {}),
                embedding=info.get("embedding"),
                vectors=info.get("vectors"),
                over_budget=budget.get("over"),
                released=budget.get("released"),
            )
        rows.append(row)
    if as_json:
        click.echo(json.dumps(rows))
        return
    if not rows:
        click.echo("no nav daemon running")
        return
    for row in rows:
        click.echo(printable(row["root"]))
        if not row["answering"]:
            click.echo(f"  pid {row['pid']}, not answering; idle {row['idle_s']:.0f} s")
            continue
        servers = ", ".join(f"{lang} {state}" for lang, state in row["servers"].items()) or "none"
        vectors = f" ({row['vectors']} vectors)" if row["vectors"] else ""
        click.echo(
            f"  pid {row['pid']}, {row['rss_mb']:.0f} MB with its servers, idle {row['idle_s']:.0f} s"
            + (f", released: {row['released']}" if row["released"] else "")
        )
        click.echo(f"  servers: {servers}")
        click.echo(f"  embedding: {row['embedding']}{vectors}")


def _embed_with_progress(nav: Navigator) -> SyncReport:
    """Fill in the vectors, with a progress bar on a terminal (Ctrl-C keeps what is done)."""
    progress = Progress("embedding", delay_s=0.0)
    try:
        return nav.embed(progress=progress)
    finally:
        progress.close()


@main.command()
@click.argument("text", nargs=-1, required=True)
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many results.")
@click.option("--path", "paths", multiple=True, help="Only under this folder, or matching this glob (repeatable).")
@click.option("--lang", "languages", multiple=True, help="Only this language: python, typescript, go, ... (repeatable).")
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
            " ".join(text), k=k, languages=list(languages) or None, all_repos=True, store=_store_for(obj, store_url)
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
limit_option = click.option("-n", "--limit", type=click.IntRange(min=1), default=None, help="At most this many hits.")


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


_hits_command(lambda nav: nav.references, "refs", "Every reference to TARGET (a name, `Order.create`, or path:line:col).")
_hits_command(lambda nav: nav.callers, "callers", "Call sites of TARGET (language server call hierarchy).")
_hits_command(lambda nav: nav.callees, "callees", "What TARGET calls (language server call hierarchy).")
_hits_command(lambda nav: nav.implementations, "impl", "Implementations of TARGET (an interface, abstract method, base class).")


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


@main.command()
@json_option
@click.pass_obj
@handle_errors
def doctor(obj: Ctx, as_json: bool) -> None:
    """Which language servers are installed, their versions, and how to add the missing ones."""
    from navigator.exact import doctor as run_doctor

    resp = run_doctor()
    if as_json:
        echo_json(resp)
        return
    for a in resp.items:
        status = click.style("ok     ", fg="green") if a.found else click.style("missing", fg="red")
        line = f"{a.language:<11} {status} {a.server or '-'}"
        if a.found:
            line += f"  {a.version or ''}  ({a.path})"
        click.echo(line)
        if a.reason:
            click.echo(f"            {a.reason}")
        if a.install:
            click.echo(f"            install: {a.install}")


def run() -> None:  # pragma: no cover - console-script entry
    Ctx.process_entry = True
    try:
        main(prog_name="nav")
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except SystemExit as done:
        if not (Ctx.only_talked_to_daemon or Ctx.skip_teardown):
            raise
        # Nothing of ours runs in this process (no index, no server): skip the interpreter's
        # teardown, ~15 ms of a ~110 ms `nav refs`. Output is flushed first.
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if done.code is not None and not isinstance(done.code, int):
            print(done.code, file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
