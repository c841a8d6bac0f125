"""The ``nav`` commands that serve or set up: ``lsp``, ``mcp``, ``setup``, ``daemon start|stop|status``, ``doctor``.

Owns the ways nav runs beside something else (an editor, an agent, the root's daemon) and the
check of the language servers installed. The commands register on
:data:`navigator.frontends.cli_base.main`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from navigator.frontends.cli_base import (
    Ctx,
    echo_json,
    handle_errors,
    json_option,
    main,
)
from navigator.paths import printable

if TYPE_CHECKING:
    pass


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
@click.option(
    "--print", "show", is_flag=True, help="Show what would change, file by file, and write nothing."
)
@click.option(
    "--remove", is_flag=True, help="Take nav's entry and instructions out again, leaving the rest as it was."
)
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


@main.group()
def daemon() -> None:
    """Manage the root's warm daemon (the CLI starts it on first use)."""


@daemon.command("start")
@click.option(
    "--idle-timeout", type=click.FloatRange(min=1), default=None, help="Exit after this many idle seconds."
)
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
@click.option(
    "--all", "all_daemons", is_flag=True, help="List every live daemon of this user, not only the root's."
)
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
                embed_rate=info.get("embed_rate"),
                embed_runtime=info.get("embed_runtime"),
                vectors_eta_s=info.get("vectors_eta_s"),
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
        if row.get("embed_rate"):
            eta = row.get("vectors_eta_s")
            runtime = f" on {row['embed_runtime']}" if row.get("embed_runtime") else ""
            vectors += f", {row['embed_rate']:.1f} chunks/s{runtime} measured here" + (
                f", the rest in about {eta / 60:.0f} min"
                if eta and eta >= 90
                else f", the rest in {eta:.0f} s"
                if eta
                else ""
            )
        click.echo(
            f"  pid {row['pid']}, {row['rss_mb']:.0f} MB with its servers, idle {row['idle_s']:.0f} s"
            + (f", released: {row['released']}" if row["released"] else "")
        )
        click.echo(f"  servers: {servers}")
        click.echo(f"  embedding: {row['embedding']}{vectors}")


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
