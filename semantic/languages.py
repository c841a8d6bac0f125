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
    | {"ruby", "php", "csharp", "kotlin", "scala", "swift", "bash", "lua"}
)
"""Languages with a definitions query (``semantic/queries/<name>.scm``); the first nine
are tested on committed workspaces, the rest on snippets only."""

_CPP_HEADER_HINT = re.compile(
    r"^\s*(?:class\s+\w+|namespace\s+\w+|template\s*<|#include\s*<(?:string|vector|memory|map|iostream)>)"
    r"|\bstd::",
    re.MULTILINE,
)


def detect_language(path: str, text: str | None = None) -> str | None:
    """Return the language name for ``path``, or None when nav has no grammar for it.

    ``.h`` headers are C unless ``text`` is given and looks like C++ (classes,
    namespaces, templates, ``std::``).
    """
    p = PurePosixPath(path)
    by_name = FILENAMES.get(p.name)
    if by_name is not None:
        return by_name
    suffix = p.suffix.lower()
    if suffix == ".h" and text is not None and _CPP_HEADER_HINT.search(text[:20000]):
        return "cpp"
    return EXTENSIONS.get(suffix)
