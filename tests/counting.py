"""A real embedder that counts what it is asked to encode (the tests' "encodes")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from semantic.embed import Embedder


class CountingEmbedder:
    """Wraps a real embedder; ``texts_embedded`` counts chunk texts, ``queries`` query encodings."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts_embedded = 0
        self.queries = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.texts_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries += 1
        return self.inner.embed_query(text)
