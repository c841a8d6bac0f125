"""storage: nav's SQLite index (sqlite-utils), the PostgreSQL team store and the value types every
layer shares. The layers above read it through one query seam, :mod:`storage.query` (implemented
by :class:`storage.db.Store`, in part by :class:`storage.pg.PgStore`, and by the in-memory
:class:`storage.fake.FakeIndex` for unit tests): no SQL crosses it.

Depends on nothing else of nav's.
"""
