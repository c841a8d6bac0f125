"""nav's one exception tree. ``navigator.errors`` re-exports it as the documented surface.

Every error carries its message (``str(err)`` is useful on its own) and the exit
code the CLI uses for it. Front ends convert at their edge: the CLI prints the
message and exits with ``exit_code``; JSON-RPC maps ``rpc_code``; the Python API
raises the exception itself.
"""

from __future__ import annotations

SHORTEN_CHARS = 100
"""How much of a bad value an error message quotes."""


def shorten(value: object, limit: int = SHORTEN_CHARS) -> str:
    """A bad value as an error message may quote it: at most ``limit`` characters, one line.

    Strings are quoted as they are, with control characters, line breaks and bytes that are not
    text escaped (so a message never moves the terminal's cursor or spans lines); anything else by
    its ``repr``. A longer value keeps its head and tail around ``…`` and says how long it was.
    """
    text = value if isinstance(value, str) else _bounded_repr(value)
    out: list[str] = []
    size = 0
    for ch in text:
        piece = ch if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF else ascii(ch)[1:-1]
        out.append(piece)
        size += len(piece)
        if size > 4 * limit:  # enough to cut from; never walk a huge value to its end
            break
    flat = "".join(out)
    if len(flat) <= limit and len(out) == len(text):
        return flat
    head = max(1, (limit * 2) // 3)
    tail_src = text[-(limit - head) * 2 :]
    tail = "".join(
        c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else ascii(c)[1:-1] for c in tail_src
    )
    return f"{flat[:head]}…{tail[-(limit - head) :]} ({len(text):,} characters)"


def _bounded_repr(value: object) -> str:
    import reprlib

    r = reprlib.Repr()
    r.maxlevel = 3
    r.maxstring = r.maxother = SHORTEN_CHARS
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = 8
    return r.repr(value)


class NavError(Exception):
    """Base class of every error nav raises on purpose."""

    exit_code: int = 1
    rpc_code: int = -32000

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(NavError):
    """Bad input from the caller: a malformed option, position or pattern."""

    exit_code = 2
    rpc_code = -32602


class OutsideRootError(UsageError):
    """A path that resolves (after ``..`` and symlinks) outside the root: nav never reads it."""


class UnsafeIndexDirError(NavError):
    """The ``.nav`` folder (or the daemon's socket folder) is a symlink, not owned by the user,
    or open to others: nav refuses to write through it."""

    exit_code = 5


class NotIndexedError(NavError):
    """The root has no index yet (run ``nav index``)."""

    exit_code = 3


class SymbolNotFoundError(NavError):
    """A name that matches no symbol; carries close matches for the message."""

    exit_code = 4

    def __init__(self, name: str, suggestions: list[str] | None = None, *, note: str | None = None) -> None:
        self.name = name
        self.suggestions = list(suggestions or [])
        self.note = note
        """Why the index may not know the name yet (an unfinished or failed index run)."""
        msg = f"no symbol named `{shorten(name)}`"
        if note:
            msg += f" in this index, but {note}"
        elif self.suggestions:
            msg += "; did you mean " + ", ".join(self.suggestions) + "?"
        else:
            msg += "; run `nav symbols <part-of-name>` to search, or `nav index` if the file is new"
        super().__init__(msg)


class FileNotInIndexError(NavError):
    """A path that is outside the root, missing, or not indexed."""

    exit_code = 4


class StorageError(NavError):
    """The index database is unreadable, locked for too long, or from a newer nav."""

    exit_code = 5
    kind = "storage"
    """What went wrong, in one word a program can branch on: ``busy``, ``damaged``, ``io``,
    ``read-only``, ``full``, ``schema``, ``unavailable``, ``auth``, or ``storage`` (anything else)."""


class IndexBusyError(StorageError):
    """Another process holds the index's write lock (a ``nav index`` running elsewhere), or
    SQLite found the database locked for longer than its busy timeout (``SQLITE_BUSY`` /
    ``SQLITE_LOCKED``)."""

    kind = "busy"


class IndexDamagedError(StorageError):
    """The index database is corrupt or not a database (SQLite ``SQLITE_CORRUPT`` / ``SQLITE_NOTADB``).

    The index is a cache of the working tree: ``nav index`` deletes and rebuilds it."""

    kind = "damaged"


class IndexIOError(StorageError):
    """SQLite could not read or write the index file (``SQLITE_IOERR`` / ``SQLITE_CANTOPEN``): the
    file may be fine; nav reopens it once before saying so."""

    kind = "io"


class IndexReadOnlyError(StorageError):
    """The index cannot be written (read-only folder or file system); queries still read it."""

    kind = "read-only"


class IndexSchemaError(StorageError):
    """The index lacks a table or column nav reads (a file changed by hand or by another tool);
    the index is a cache: deleting it and running ``nav index`` rebuilds it."""

    kind = "schema"


class StorageFullError(StorageError):
    """The disk (or a file-size limit) is full: the write was rolled back."""

    kind = "full"


class StoreError(StorageError):
    """The team store refused or failed a request (the message says which store and why)."""


class StoreUnavailableError(StoreError):
    """The team store cannot be reached (down, wrong host or port, network)."""

    kind = "unavailable"


class StoreAuthError(StoreError):
    """The team store refused the credentials."""

    kind = "auth"


class StoreReadOnlyError(StoreError):
    """The role may read the team store but this needs write access (publishing)."""

    kind = "read-only"


class StoreSchemaError(StoreError):
    """The database lacks nav's schema or the ``vector`` extension, or is from a newer nav."""

    kind = "schema"


class ServerError(NavError):
    """A language server failed to start or answer."""

    exit_code = 6


class DeadlineError(NavError):
    """A bounded operation ran out of time."""

    exit_code = 7


class ModelError(NavError):
    """The embedding model is missing or cannot be loaded offline."""

    exit_code = 8
