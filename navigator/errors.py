"""nav's one documented exception tree (defined in ``storage.errors`` so every layer can raise it).

::

    NavError                  base; ``str(err)`` is the whole message, ``exit_code`` the CLI's code
    ├── UsageError            bad input: a malformed name, position, option (exit 2)
    │   └── OutsideRootError  a path that resolves outside the root (``..``, absolute, symlink)
    ├── NotIndexedError       the root has no index yet (exit 3)
    ├── SymbolNotFoundError   no symbol by that name; ``.suggestions`` has close ones (exit 4)
    ├── FileNotInIndexError   a path that is missing or not indexed (exit 4)
    ├── UnsafeIndexDirError   ``.nav`` or the socket folder is a symlink / someone else's (exit 5)
    ├── StorageError          the index database cannot be used (exit 5)
    │   ├── IndexBusyError    another process holds the index's write lock
    │   ├── IndexDamagedError the database is corrupt; `nav index` rebuilds it
    │   ├── IndexIOError      SQLite could not read or write the file (reopened once first)
    │   ├── IndexReadOnlyError the index cannot be written (read-only); queries still read it
    │   ├── IndexSchemaError  the index lacks a table or column nav reads; `nav index` after deleting it
    │   ├── StorageFullError  the disk is full; the write was rolled back
    │   └── StoreError        the team store (PostgreSQL) refused or failed a request
    │       ├── StoreUnavailableError  cannot be reached
    │       ├── StoreAuthError         refused the credentials
    │       ├── StoreReadOnlyError     a read-only role asked to publish
    │       └── StoreSchemaError       no nav schema / no ``vector`` extension / a newer schema
    ├── ServerError           a language server failed (exit 6)
    ├── DeadlineError         a bounded operation ran out of time (exit 7)
    └── ModelError            the embedding model cannot be loaded offline (exit 8)

``shorten(value)`` is how every message quotes a bad value: at most ~100 characters, on one line,
control characters escaped. Input checks shared by every front end are in :mod:`navigator.checks`.
"""

from storage.errors import (
    DeadlineError,
    FileNotInIndexError,
    IndexBusyError,
    IndexDamagedError,
    IndexIOError,
    IndexReadOnlyError,
    IndexSchemaError,
    ModelError,
    NavError,
    NotIndexedError,
    OutsideRootError,
    ServerError,
    StorageError,
    StorageFullError,
    StoreAuthError,
    StoreError,
    StoreReadOnlyError,
    StoreSchemaError,
    StoreUnavailableError,
    SymbolNotFoundError,
    UnsafeIndexDirError,
    UsageError,
    shorten,
)

__all__ = [
    "DeadlineError",
    "FileNotInIndexError",
    "IndexBusyError",
    "IndexDamagedError",
    "IndexIOError",
    "IndexReadOnlyError",
    "IndexSchemaError",
    "ModelError",
    "NavError",
    "NotIndexedError",
    "OutsideRootError",
    "ServerError",
    "StorageError",
    "StorageFullError",
    "StoreAuthError",
    "StoreError",
    "StoreReadOnlyError",
    "StoreSchemaError",
    "StoreUnavailableError",
    "SymbolNotFoundError",
    "UnsafeIndexDirError",
    "UsageError",
    "shorten",
]
