"""``python store_publisher.py ROOT URL [BRANCH]``: publish ROOT's HEAD to the team store with a
deterministic 384-dimension embedder, print the report as JSON (a subprocess for fault tests)."""

from __future__ import annotations

import sys

from navigator.api import Navigator
from navigator.results import to_json
from semantic.embed import FakeEmbedder
from storage.errors import NavError


def main(argv: list[str]) -> int:
    root, url = argv[0], argv[1]
    branch = argv[2] if len(argv) > 2 else None
    with Navigator(root, embedder=FakeEmbedder(384), store_url=url) as nav:
        try:
            report = nav.team().publish(branch=branch)
        except NavError as err:
            print(f"nav: {err}", file=sys.stderr)
            return err.exit_code
    print(to_json(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
