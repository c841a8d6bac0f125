"""`nav search` and `nav index --embed` in-process (click's CliRunner), with the real model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from navigator.frontends.cli import main

pytestmark = pytest.mark.slow

FILES = {
    "net.py": """
        import time

        def fetch_with_attempts(url, tries=5):
            for attempt in range(tries):
                try:
                    return http_get(url)
                except TimeoutError:
                    time.sleep(2 ** attempt)
        """,
    "colors.py": """
        def rgb_to_hex(red, green, blue):
            return "#%02x%02x%02x" % (red, green, blue)
        """,
}


def nav(root: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main, ["-C", str(root), *args], env={"NAV_NO_DAEMON": "1"}, catch_exceptions=False
    )


@pytest.fixture
def root(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    return make_repo(FILES)


def test_index_embed_then_search_json(root: Path) -> None:
    res = nav(root, "index", "--embed")
    assert res.exit_code == 0, res.output
    assert "vectors: 2/2 chunks" in res.output
    res = nav(root, "search", "retry a failed download with exponential backoff", "--json", "-k", "1")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["complete"] is True
    assert len(data["items"]) == 1
    hit = data["items"][0]
    assert hit["path"] == "net.py" and hit["symbol"] == "fetch_with_attempts" and "vector" in hit["ranks"]


def test_search_text_output_and_filters(root: Path) -> None:
    assert nav(root, "index").exit_code == 0
    res = nav(root, "search", "rgbToHex")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].startswith("colors.py:")
    assert "rgb_to_hex" in res.stdout
    res = nav(root, "search", "rgbToHex", "--lang", "go", "--json")
    assert json.loads(res.stdout)["items"] == []
    res = nav(root, "search", "rgbToHex", "--path", "net.py", "--json")
    assert {h["path"] for h in json.loads(res.stdout)["items"]} <= {"net.py"}


def test_search_needs_text(root: Path) -> None:
    res = nav(root, "search")
    assert res.exit_code == 2
