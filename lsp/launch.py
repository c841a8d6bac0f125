"""A language server launched before multilspy is imported, and its adoption by a session.

A cold first answer waits for the server to load the workspace, and that only begins once the
server runs. Importing :mod:`lsp.pool` (multilspy, and through it requests and urllib3) takes
0.5-1 s, more on a loaded machine: a daemon that knows which servers it will need launches them
here first (:func:`prelaunch`: the standard library, not even asyncio, and :mod:`lsp.registry`),
and initializes them (:class:`lsp.handshake.EarlyHandshake`: a server loads nothing before
``initialize``), then imports the pool, which adopts each process
(:meth:`lsp.pool.ServerPool.adopt`, through :class:`lsp.adopted.AdoptedProcess`) instead of
starting one: the server loads while nav imports.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp.handshake import EarlyHandshake
from lsp.registry import ServerDefinition, available_definition

__all__ = ["SERVER_IDLE_S", "Prelaunched", "prelaunch"]

SERVER_IDLE_S = 600.0
"""A server with no query for this long is stopped (the daemon reads ``NAV_SERVER_IDLE_S``).
Here, not in :mod:`lsp.pool`, so that reading it before a launch imports no multilspy."""

log = logging.getLogger("nav.lsp")


@dataclass
class Prelaunched:
    """A server process started for ``root`` and not yet adopted by a session."""

    root: Path
    definition: ServerDefinition
    """The instance that prepared the launch (it may hold state, e.g. readiness rules)."""
    binary: str
    popen: subprocess.Popen[bytes]
    started_at: float
    notes: list[str] = field(default_factory=list)
    """What :meth:`ServerDefinition.prepare` said."""
    handshake: EarlyHandshake | None = None
    """``initialize`` sent at launch, and the client spoken for until a session adopts it."""

    def kill(self) -> None:
        """SIGKILL its process group (a prelaunched server nobody adopted) and reap it."""
        if self.handshake is not None:
            self.handshake.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5.0)
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def prelaunch(root: Path, language: str, *, open_first: Sequence[str] = ()) -> Prelaunched | None:
    """Launch the server nav would start for ``language`` under ``root``, as the pool launches
    it (same definition, preparation, command, environment, own process group). None when no
    server is installed, it cannot serve ``root``, or it fails to start: the pool then starts
    (or refuses) it as usual, and says why. ``open_first``: files (absolute) the coming question
    starts at, opened at once by a server that loads a project only once a file of it is open."""
    root = root.resolve()
    found = available_definition(language)
    if found is None:
        return None
    definition, binary = found
    if definition.unusable(root, binary) is not None:
        return None
    try:
        notes = definition.prepare(root)
        launch = definition.launch(root, binary)
        popen = subprocess.Popen(
            list(launch.cmd),
            cwd=launch.cwd,
            env={**os.environ, **launch.env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,  # own process group: the session's kill() reaches its children
        )
    except OSError as exc:
        log.warning("could not launch %s early for %s: %s", definition.name, root, exc)
        return None
    started = time.monotonic()
    try:
        # initialized now, not once the pool is imported: the server loads while nav imports
        handshake = EarlyHandshake(popen, definition, root, open_first=open_first)
    except OSError as exc:  # it died at once: the pool starts one as usual, and says why
        log.warning("%s launched early for %s did not take initialize: %s", definition.name, root, exc)
        handshake = None
    return Prelaunched(root, definition, binary, popen, started, notes, handshake)
