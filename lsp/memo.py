"""Answers a language server gave twice alike, kept until anything is told to it.

A warm server still takes tens of milliseconds per request (basedpyright's references on pytest:
~45 ms; its call hierarchy ~60 ms), most of a ``nav refs`` answer; agents ask the same question
again and again (refs, then callers of the same name; the same name in another session) while the
code does not change. A server's answer depends only on what it was told — the documents opened
or changed and the files it was told changed on disk — so an answer can be given again for as
long as nothing has been told since.

Two guards against remembering a wrong answer:

- **stable twice**: an answer is served from memory only once the server gave the very same
  answer twice in a row with nothing told in between (a server still loading a project — tsserver
  on a file of a project it has not opened — can answer partially without saying so; its next
  answer differs, and nothing is kept);
- **nothing told during the request**: an answer whose request overlapped a change is dropped
  (:attr:`AnswerMemo.epoch` is read before the request and checked after).

:meth:`ServerSession <lsp.session.ServerSession>` calls :meth:`AnswerMemo.changed` at every
``didOpen``, ``didChange``, ``didClose`` and ``didChangeWatchedFiles`` it sends; a restarted
server starts with an empty memory (it is a new session).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["AnswerMemo"]

A = TypeVar("A")


class AnswerMemo(Generic[A]):
    """Per server session: request key -> answer, served once it was seen twice alike."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self.epoch = 0
        """How many changes were told to the server: read before a request, passed to :meth:`put`."""
        self._seen: dict[Hashable, tuple[A, bool]] = {}
        self.served = 0
        """Answers given from memory (for ``nav status`` and the benchmarks)."""

    def changed(self) -> None:
        """Something was told to the server: every answer it gave may be different now."""
        self.epoch += 1
        self._seen.clear()

    def get(self, key: Hashable) -> A | None:
        """The remembered answer for ``key`` if the server gave it twice alike, else None."""
        entry = self._seen.get(key)
        if entry is None or not entry[1]:
            return None
        del self._seen[key]
        self._seen[key] = entry  # the newest again: the oldest go first when full
        self.served += 1
        return entry[0]

    def put(self, key: Hashable, answer: A, epoch: int) -> None:
        """The server answered ``key`` with ``answer`` (hashable, compared by value) to a request
        sent at ``epoch``. Kept only if nothing was told since; served from the second alike."""
        if epoch != self.epoch:
            return
        old = self._seen.pop(key, None)
        self._seen[key] = (answer, old is not None and old[0] == answer)
        while len(self._seen) > self.limit:
            del self._seen[next(iter(self._seen))]  # the oldest
