"""Syntax-aware parsing, chunking and (later) semantic search."""
