"""Passwords out of every message: URLs and conninfo strings with their secrets as ``***``.

Pure functions, no I/O beyond reading ``PGPASSWORD`` from the environment.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote

__all__ = ["redact", "redact_url", "url_has_password"]

_URL_PASSWORD = re.compile(r"([a-z][a-z0-9+.-]*://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", re.IGNORECASE)


def redact_url(url: str) -> str:
    """The text with every URL password (authority or ``password=`` parameter) as ``***``."""
    return _KV_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***\3", url))


def url_has_password(url: str) -> bool:
    return bool(_URL_PASSWORD.search(url) or _KV_PASSWORD.search(url))


def _secrets(url: str) -> list[str]:
    found: list[str] = []
    for m in _URL_PASSWORD.finditer(url):
        found += [m.group(2), unquote(m.group(2))]
    for m2 in _KV_PASSWORD.finditer(url):
        found.append(m2.group(2).strip("'"))
    env = os.environ.get("PGPASSWORD")
    if env:
        found.append(env)
    return sorted({s for s in found if len(s) >= 3}, key=len, reverse=True)


def redact(text: str, url: str) -> str:
    """``text`` with every password that ``url`` or ``PGPASSWORD`` carries replaced by ``***``."""
    out = redact_url(text)
    for secret in _secrets(url):
        out = out.replace(secret, "***")
    return out
