"""Issue 9 lever (measured, not kept): what text the embedder sees for a chunk.

Runs ``semble_bench.py`` with :func:`semantic.embed.embedding_text` replaced and the model id
suffixed (``:txt-<variant>``, so the cache never mixes them): ``split`` = today's text with
identifiers split into words (``replace_file`` -> ``replace file``, camelCase too); ``bag`` =
the header in words, then each distinct identifier of the code (3+ characters) once, in words.
Paired per query against a default run with ``bench/paired_queries.py`` (bench/README.md,
"Issue 9, third round"):

    EMBTEXT=bag OMP_NUM_THREADS=1 PYTHONPATH=$PWD nice -n 10 python bench/archive/embed_text_variants.py --threads 1 \\
        --set dev --configs fused,vector --index-dir /tmp/embtext-bag --out /tmp/embtext-bag.json
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import semble_bench  # noqa: E402

import navigator.search as search_module  # noqa: E402
import semantic.embed as embed  # noqa: E402

VARIANT = os.environ.get("EMBTEXT", "")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def words(text: str) -> str:
    return _CAMEL.sub(" ", text).replace("_", " ")


def variant_text(path: str, symbol: str | None, signature: str | None, text: str) -> str:
    if VARIANT == "split":
        return words(embed.embedding_text(path, symbol, signature, text))
    seen: dict[str, None] = {}
    for m in _IDENT.finditer(text[:4000]):
        seen.setdefault(words(m.group()).lower())
    return words(embed.chunk_header(path, symbol, signature)) + "\n\n" + " ".join(seen)


def main() -> None:
    if VARIANT not in ("split", "bag"):
        raise SystemExit("set EMBTEXT=split or EMBTEXT=bag")
    search_module.embedding_text = variant_text  # type: ignore[assignment]
    model_id = embed.OnnxInt8Embedder.model_id
    embed.OnnxInt8Embedder.model_id = property(lambda self: model_id.fget(self) + ":txt-" + VARIANT)  # type: ignore[assignment,attr-defined]
    semble_bench.main()


if __name__ == "__main__":
    main()
