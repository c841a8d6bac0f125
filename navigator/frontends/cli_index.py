"""The ``nav`` commands that build and publish: ``index``, ``status``, ``publish``, ``store init|status``.

Owns the indexing run's edges: SIGTERM as a clean exit with what the run kept, the report as
text, and embedding or warming from the team store with a progress bar after the index run.
The commands register on :data:`navigator.frontends.cli_base.main`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import click

from navigator.frontends import display
from navigator.frontends.cli_base import (
    Ctx,
    Progress,
    echo_json,
    handle_errors,
    json_option,
    main,
    store_configured,
    store_option,
    team_nav,
)
from navigator.paths import printable

if TYPE_CHECKING:
    from navigator.api import Navigator
    from navigator.results import IndexReport
    from navigator.search import SyncReport
    from navigator.team import WarmReport


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
    team = store_configured(obj, store_url)
    nav = team_nav(obj, store_url) if team else obj.local()
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
    if report.history_added:
        click.echo(
            f"git history: {report.history_added} commits added, to {(report.history_head or '')[:12]}"
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
    team = team_nav(obj, store_url).team()
    team.pg.ensure_schema(write=True)
    click.echo(f"team store {team.safe_url}: schema version {team.pg.schema_version()}")


@store_group.command("status")
@store_option
@json_option
@click.pass_obj
@handle_errors
def store_status(obj: Ctx, store_url: str | None, as_json: bool) -> None:
    """Published branch heads and the store's size (the password is never shown)."""
    team = team_nav(obj, store_url).team()
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
@click.option(
    "--repo", default=None, help="Repository name (default: the origin remote's name, else the folder's)."
)
@click.option(
    "--branch", default=None, help="Branch (default: $NAV_BRANCH, CI's branch variables, else git's)."
)
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
    nav = team_nav(obj, store_url)
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
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_indexed_at)) if st.last_indexed_at else "?"
    )
    click.echo(f"indexed:  {st.files} files, {st.symbols} symbols, {st.chunks} chunks, {st.refs} references")
    langs = ", ".join(f"{k} {v}" for k, v in sorted(st.languages.items(), key=lambda kv: -kv[1]))
    click.echo(f"languages: {langs}")
    click.echo(f"last run: {'complete' if st.last_run_complete else 'INCOMPLETE'} at {when}")
    click.echo(f"stale:    {st.stale_files} files changed since (indexed again on the next query)")
    click.echo(f"history:  {display.history_line(st.history_commits, st.history_head)}")
    for note in st.notes:
        click.secho(f"note: {note}", fg="yellow")


def _echo_store_line(obj: Ctx) -> None:
    """The configured team store, password redacted (the store is not contacted)."""
    from navigator.config import load_config, resolve_store_url
    from navigator.public import redact

    url = resolve_store_url(load_config(obj.root))
    if url:
        click.echo(f"store:    {redact(url, url)}")


def _embed_with_progress(nav: Navigator) -> SyncReport:
    """Fill in the vectors, with a progress bar on a terminal (Ctrl-C keeps what is done)."""
    progress = Progress("embedding", delay_s=0.0)
    try:
        return nav.embed(progress=progress)
    finally:
        progress.close()
