"""The issue-18 bench scripts against real parts: the within-file ranker's candidate rows over a
real index (every signal present, gold labelled, the quoted literal, the raised error and the
traceback frame seen where they are), and semble's export writing each blob a snapshot has while
counting the ones it lacks (``git archive`` stopped at the first)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench.within_file import FEATURES, instance_rows  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from storage.db import Store  # noqa: E402

ISSUE = """Saving an invoice with a negative total crashes

Steps: call save_invoice with total=-5.

Traceback (most recent call last):
  File "app/cli.py", line 3, in main
    save_invoice(-5)
  File "app/billing.py", line 9, in validate_total
    raise NegativeTotalError("the invoice total cannot be negative")
NegativeTotalError: the invoice total cannot be negative
"""


def test_rows_carry_every_signal_and_the_gold_label(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = make_repo(
        {
            "app/billing.py": """\
                class NegativeTotalError(ValueError):
                    pass


                def save_invoice(total):
                    validate_total(total)
                    return {"total": total}

                def validate_total(total):
                    if total < 0:
                        raise NegativeTotalError("the invoice total cannot be negative")
                    return total


                def format_receipt(lines):
                    return "\\n".join(str(line) for line in lines)
                """,
            "app/cli.py": "from app.billing import save_invoice\n\ndef main():\n    save_invoice(-5)\n",
            "docs/invoices.md": "Invoices are saved with save_invoice; a negative total is refused.\n",
        }
    )
    store = Store(tmp_path / "idx.db")
    try:
        index_root(root, store)
        gold = "app/billing.py::validate_total"
        got = instance_rows(store, {"id": "x", "repo": "o/r", "query": ISSUE, "gold_functions": [gold]}, 5)
    finally:
        store.close()
    rows = {r["name"]: r for r in got["rows"]}
    assert gold in rows and "app/billing.py::format_receipt" in rows  # every definition of a top file
    assert all(len(r["x"]) == len(FEATURES) for r in got["rows"])
    assert [n for n, r in rows.items() if r["y"]] == [gold]
    feat = {n: dict(zip(FEATURES, r["x"], strict=True)) for n, r in rows.items()}
    assert feat[gold]["literal_quoted"] == 1.0 and feat[gold]["raises_named"] == 1.0
    assert feat["app/billing.py::format_receipt"]["literal_quoted"] == 0.0
    assert feat[gold]["frame_pos"] < 100 and feat["app/billing.py::format_receipt"]["frame_pos"] == 100
    assert feat["app/billing.py::save_invoice"]["named"] == 1.0
    # the reference graph: save_invoice (named) calls validate_total; main (a frame) calls save_invoice
    assert (
        feat[gold]["callee_of_named"] == 1.0
        and feat["app/billing.py::format_receipt"]["callee_of_named"] == 0.0
    )
    assert feat["app/billing.py::save_invoice"]["callee_of_frame"] == 1.0
    assert feat["app/billing.py::format_receipt"]["callee_of_frame"] == 0.0
    assert (
        feat["app/billing.py::save_invoice"]["fan_in_log"]
        > feat["app/billing.py::format_receipt"]["fan_in_log"]
    )
    assert got["nav"] and all("::" in n for n in got["nav"])
    assert got["gold_files"] == ["app/billing.py"] and "app/billing.py" in got["files"]


def test_every_language_has_its_definitions_and_its_tests_count_as_no_source(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = make_repo(
        {
            "src/invoice.ts": "export function saveInvoice(total: number) {\n  return validateTotal(total);\n}\n"
            "export function validateTotal(total: number) {\n  if (total < 0) throw new Error('negative');\n"
            "  return total;\n}\n",
            "src/invoice.test.ts": "import { saveInvoice } from './invoice';\n"
            "export function testSaveInvoice() {\n  saveInvoice(-5);\n}\n",
        }
    )
    store = Store(tmp_path / "idx.db")
    query = "saveInvoice with a negative total should call validateTotal and throw"
    gold = "src/invoice.ts::validateTotal"
    try:
        index_root(root, store)
        inst = {"id": "x", "repo": "o/r", "query": query, "gold_functions": [gold]}
        python_only = instance_rows(store, inst, 5)
        every = instance_rows(store, inst, 5, all_languages=True)
    finally:
        store.close()
    assert {r["name"] for r in python_only["rows"]} <= {
        "src/invoice.ts::<module>",
        "src/invoice.test.ts::<module>",
    }
    feat = {r["name"]: dict(zip(FEATURES, r["x"], strict=True)) for r in every["rows"]}
    assert gold in feat and "src/invoice.ts::saveInvoice" in feat
    assert [r["name"] for r in every["rows"] if r["y"]] == [gold]
    assert feat[gold]["nonsrc"] == 0.0 and feat["src/invoice.test.ts::testSaveInvoice"]["nonsrc"] == 1.0
    assert feat[gold]["callee_of_named"] == 1.0


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_export_writes_what_the_snapshot_has_and_counts_what_it_lacks(tmp_path: Path) -> None:
    from bench.semble_corpora import write_tree

    work = tmp_path / "work"
    (work / "src" / "deep").mkdir(parents=True)
    (work / "src" / "a.py").write_text("A = 1\n")
    (work / "src" / "deep" / "b.py").write_bytes(b"B = '\xc3\xa9'\n")
    (work / "src" / "gone.bin").write_bytes(b"\0" * 100)
    (work / "outside.txt").write_text("not under src\n")
    os.symlink("/etc/passwd", work / "src" / "link")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "c")
    sha = git(work, "rev-parse", "HEAD:src/gone.bin").strip()
    (work / ".git" / "objects" / sha[:2] / sha[2:]).unlink()  # a blob the snapshot lacks
    out = tmp_path / "out"
    written, missing = write_tree(work / ".git", "HEAD", ["src"], out)
    assert (written, missing) == (2, 1)
    assert (out / "src" / "a.py").read_text() == "A = 1\n"
    assert (out / "src" / "deep" / "b.py").read_bytes() == b"B = '\xc3\xa9'\n"
    assert not (out / "outside.txt").exists() and not (out / "src" / "link").exists()
    assert not (out / "src" / "gone.bin").exists()


def test_a_dump_cut_off_mid_write_gives_the_rows_it_has(tmp_path: Path) -> None:
    import gzip

    from bench.within_file import _read

    rows = [{"id": str(n), "rows": [{"x": [n]}]} for n in range(200)]
    whole = tmp_path / "whole.jsonl.gz"
    with gzip.open(whole, "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    assert _read(whole) == rows
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])  # a writer killed part way
    got = _read(cut)
    assert 0 < len(got) < len(rows) and got == rows[: len(got)]
