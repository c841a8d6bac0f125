"""storage: nav's SQLite index (sqlite-utils) and the value types every layer shares.

Depends on nothing else of nav's.
"""
