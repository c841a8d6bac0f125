"""``nav doctor``: which language server each language would use, found or not, and how to
install what is missing (from :mod:`lsp.registry`). Nothing is started: the exact leg
(:mod:`navigator.exact`) starts servers; this only looks for them.
"""

from __future__ import annotations

from lsp.registry import SERVERS, UNAVAILABLE, Availability, definitions_for, install_command
from navigator.results import Response

DOCTOR_LANGUAGES = ("python", "typescript", "javascript", "go", "c", "cpp", "java", "rust")


def doctor_language(language: str) -> Availability:
    if language not in SERVERS:
        return Availability(
            language=language, server=None, found=False,
            reason=UNAVAILABLE.get(language, f"no language server configured for {language}"),
        )  # fmt: skip
    preferred = definitions_for(language)
    for index, definition in enumerate(preferred):
        binary = definition.locate()
        if binary is None:
            continue
        reason = definition.caveat(binary)
        if index > 0:
            reason = f"{preferred[0].name} not found; using {definition.name}" + (
                " (its references stop after 30 files)" if definition.name == "jedi-language-server" else ""
            )
        return Availability(
            language=language,
            server=definition.name,
            found=True,
            path=binary,
            version=definition.version(binary),
            reason=reason,
            install=preferred[0].install if index > 0 else None,
        )
    return Availability(
        language=language,
        server=preferred[0].name,
        found=False,
        reason=preferred[0].missing(),
        install=install_command(language),
    )


def doctor() -> Response[Availability]:
    """``nav doctor`` without a root."""
    items = tuple(doctor_language(lang) for lang in DOCTOR_LANGUAGES)
    missing = [a.language for a in items if not a.found]
    return Response(items=items, complete=not missing,
                    reason=("no server for " + ", ".join(missing)) if missing else None, source="registry")  # fmt: skip
