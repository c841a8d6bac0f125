"""Typed configuration: nested dataclasses, one loader, defaults that need no file.

nav reads ``<root>/.nav.toml`` if present, else the ``[tool.nav]`` table of
``<root>/pyproject.toml``. Unknown keys and values of the wrong type are ignored
with a visible warning (``Config.warnings``) rather than silently.

Example ``.nav.toml``::

    [index]
    max_file_bytes = 2000000
    chunk_budget = 1500
    ignore = ["generated/", "*.pb.go"]
    include_secrets = false      # true: index .env, id_rsa, *.pem, credentials.json… too

    [search]
    model = "all-MiniLM-L6-v2"   # or a path to a local sentence-transformers model

    [store]
    url = "postgresql://nav@db.example.com/nav"   # the team store; NAV_STORE overrides it
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from navigator.confine import is_inside
from storage.redact import redact, url_has_password


@dataclass(frozen=True, slots=True)
class IndexConfig:
    max_file_bytes: int = 1_000_000
    chunk_budget: int = 1500
    """Chunk size budget in non-whitespace characters (cAST)."""
    ignore: tuple[str, ...] = ()
    """Extra gitignore-style patterns, on top of .gitignore and .navignore."""
    include_secrets: bool = False
    """Index likely-secret files too (``.env``, ``id_rsa``, ``*.pem``, ``credentials.json``…;
    the list is ``navigator.walk.looks_secret``). Off by default: an index is easy to share."""


@dataclass(frozen=True, slots=True)
class SearchConfig:
    model: str = "all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class StoreConfig:
    url: str = field(default="", repr=False)
    """The team store (PostgreSQL + pgvector), ``postgresql://user@host/db``; empty: none.
    Keep the password out of this file: libpq reads ``PGPASSFILE`` / ``PGPASSWORD``."""


@dataclass(frozen=True, slots=True)
class Config:
    index: IndexConfig = field(default_factory=IndexConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    source: str | None = None
    warnings: tuple[str, ...] = ()


def _build(cls: type[Any], data: dict[str, Any], where: str, warnings: list[str]) -> Any:
    kwargs: dict[str, Any] = {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    defaults = cls()
    for key, value in data.items():
        if key not in fields:
            warnings.append(f"{where}: unknown key `{key}` ignored (known: {', '.join(fields)})")
            continue
        default = getattr(defaults, key)
        if isinstance(default, tuple):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                kwargs[key] = tuple(value)
                continue
        elif isinstance(default, bool) and isinstance(value, bool):
            kwargs[key] = value
            continue
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                kwargs[key] = type(default)(value)
                continue
        elif isinstance(default, str) and isinstance(value, str):
            kwargs[key] = value
            continue
        warnings.append(
            f"{where}.{key} = {value!r} is not a valid {type(default).__name__}; "
            f"using the default {default!r}"
        )
    return cls(**kwargs)


def load_config(root: Path) -> Config:
    warnings: list[str] = []
    table: dict[str, Any] | None = None
    source: str | None = None
    nav_toml = root / ".nav.toml"
    pyproject = root / "pyproject.toml"
    for name in (nav_toml, pyproject):
        if name.is_symlink() and not is_inside(root, name):
            warnings.append(f"{name.name} is a symlink out of the root; not read (using defaults)")
            return Config(warnings=tuple(warnings))
    try:
        if nav_toml.is_file():
            table = tomllib.loads(nav_toml.read_text(encoding="utf-8"))
            source = str(nav_toml)
        elif pyproject.is_file():
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            tool = data.get("tool", {})
            if isinstance(tool, dict) and isinstance(tool.get("nav"), dict):
                table = tool["nav"]
                source = f"{pyproject} [tool.nav]"
    except (OSError, tomllib.TOMLDecodeError) as exc:
        where = nav_toml if nav_toml.is_file() else pyproject
        warnings.append(f"cannot read {where}: {exc}; using defaults")
        table = None
    if not table:
        return Config(source=source, warnings=tuple(warnings))
    sections = {"index": IndexConfig, "search": SearchConfig, "store": StoreConfig}
    built: dict[str, Any] = {}
    for key, value in table.items():
        if key not in sections:
            warnings.append(f"{source}: unknown section `{key}` ignored (known: {', '.join(sections)})")
            continue
        if not isinstance(value, dict):
            warnings.append(f"{source}: `{key}` must be a table; ignored")
            continue
        built[key] = _build(sections[key], value, f"{source} [{key}]", warnings)
    if "store" in built:
        built["store"] = _check_store(built["store"], f"{source} [store]", warnings)
    return Config(**built, source=source, warnings=tuple(warnings))


def _check_store(store: StoreConfig, where: str, warnings: list[str]) -> StoreConfig:
    """A store URL that is not a PostgreSQL URL is ignored; a password in it is used but warned
    about (config files get committed). Warnings never repeat the password."""
    url = store.url.strip()
    if not url:
        return store
    shown = redact(url, url)[:100]
    if not re.match(r"postgres(ql)?://", url, re.IGNORECASE):
        warnings.append(f"{where}.url = {shown!r} is not a postgresql:// URL; ignored (no team store)")
        return StoreConfig()
    if url_has_password(url):
        warnings.append(
            f"{where}.url carries a password ({shown}); it is used, but keep it in PGPASSFILE or "
            "PGPASSWORD instead: config files get committed"
        )
    return StoreConfig(url=url)


ENV_STORE = "NAV_STORE"
"""The environment variable naming the team store's URL."""


def resolve_store_url(config: Config | None, override: str | None = None) -> str | None:
    """``--store`` beats ``NAV_STORE`` beats ``[store] url``; None when no store is configured."""
    for value in (override, os.environ.get(ENV_STORE), config.store.url if config else None):
        if value and value.strip():
            return value.strip()
    return None
