"""What every ``nav`` command hangs on: the click group, its per-invocation context, errors as exit codes.

Owns :data:`main` (the group the command modules register on), :class:`Ctx` (the root, and the
engine a command talks to: the root's daemon or an in-process Navigator), :func:`handle_errors`
(a :class:`~navigator.errors.NavError` becomes one line on stderr and its exit code), the options
and output helpers shared by several commands, and the progress bar.

Exit codes: 0 ok; 1 other nav error; 2 bad usage; 3 not indexed; 4 unknown symbol
or file; 5 index database error; 6 language server error; 7 deadline; 8 model error.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from navigator.errors import NavError, shorten
from navigator.frontends import display
from navigator.paths import find_root
from navigator.results import Response, Symbol, to_json

if TYPE_CHECKING:
    from navigator.api import Navigator
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


def team_nav(obj: Ctx, store_url: str | None) -> Navigator:
    """The in-process Navigator, told the team store to use (None: NAV_STORE / config)."""
    nav = obj.local()
    if store_url is not None:
        nav.store_url = store_url
    return nav


def store_for(obj: Ctx, store_url: str | None) -> str:
    """The team store this command means (--store, else NAV_STORE in this shell, else the root's
    ``[store] url``), resolved here and passed on: the root's daemon, which answers --all-repos
    with its model already loaded, may have been started from another environment."""
    from navigator.config import load_config
    from navigator.team import require_store_url

    return require_store_url(load_config(obj.root), store_url)


def store_configured(obj: Ctx, store_url: str | None) -> bool:
    from navigator.config import resolve_store_url

    # the Navigator checks the root (and loads its config) before anything touches the path
    return resolve_store_url(obj.local().config, store_url) is not None
