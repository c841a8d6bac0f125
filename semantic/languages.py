"""Map file names to tree-sitter-language-pack language names.

Pure and cheap: no grammar is loaded here. ``detect_language`` only looks at the
path (and, for ``.h`` headers, optionally at the text) so the indexer can decide
what to do with a file before reading it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

__all__ = ["EXTENSIONS", "FILENAMES", "SUPPORTED_LANGUAGES", "QUERY_LANGUAGES", "detect_language"]

EXTENSIONS: dict[str, str] = {
    # Python
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    # JavaScript / TypeScript
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    # Go, Rust, JVM
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".sc": "scala",
    # C family
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".cs": "csharp",
    # Others
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".lua": "lua",
    ".bats": "bash",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
    # Functional and systems languages with grammars in tree-sitter-language-pack
    ".ex": "elixir",
    ".exs": "elixir",
    ".hs": "haskell",
    ".zig": "zig",
    ".zon": "zig",
}

FILENAMES: dict[str, str] = {
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".profile": "bash",
}

SUPPORTED_LANGUAGES: frozenset[str] = frozenset(EXTENSIONS.values()) | frozenset(FILENAMES.values())
"""Every language name ``detect_language`` can return."""

QUERY_LANGUAGES: frozenset[str] = frozenset(
    {"python", "typescript", "tsx", "javascript", "go", "rust", "java", "c", "cpp"}
    | {"ruby", "php", "csharp", "kotlin", "scala", "swift", "bash", "lua", "elixir", "haskell", "zig"}
)
"""Languages with a definitions query (``semantic/queries/<name>.scm``); the first nine
are tested on committed workspaces with language servers too, and every one of them on
annotated source in ``tests/syntax_cases/``."""

_CPP_HEADER_HINT = re.compile(
    r"^\s*(?:class\s+\w+|namespace\s+\w+|template\s*<|(?:public|private|protected)\s*:"
    r"|#\s*include\s*<(?:string|vector|memory|map|iostream|utility|type_traits)>)"
    r"|\bstd::|\b(?:constexpr|nullptr)\b",
    re.MULTILINE,
)
"""What makes a ``.h`` header C++ rather than C (checked on the first 20,000 characters)."""


_SHEBANG = re.compile(r"#!\s*(?:/usr/bin/env\s+(?:-S\s+)?)?(?:\S*/)?([a-z]+)")
_INTERPRETERS: dict[str, str] = {
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "dash": "bash",
    "ksh": "bash",
    "python": "python",
    "ruby": "ruby",
    "node": "javascript",
    "lua": "lua",
    "elixir": "elixir",
}
"""Interpreters named on a ``#!`` line (version digits dropped: ``python3`` is ``python``)."""


def detect_language(path: str, text: str | None = None) -> str | None:
    """Return the language name for ``path``, or None when nav has no grammar for it.

    A file with no extension is known by its ``#!`` line when ``text`` is given.
    ``.h`` headers are C unless ``text`` is given and looks like C++ (classes,
    namespaces, templates, ``std::``, C++ standard headers): callers that have the text
    should pass it.
    """
    p = PurePosixPath(path)
    by_name = FILENAMES.get(p.name)
    if by_name is not None:
        return by_name
    suffix = p.suffix.lower()
    if suffix == ".h" and text is not None and _CPP_HEADER_HINT.search(text[:20000]):
        return "cpp"
    if not suffix and text is not None and text.startswith("#!"):
        m = _SHEBANG.match(text)
        return _INTERPRETERS.get(m.group(1)) if m else None
    return EXTENSIONS.get(suffix)
