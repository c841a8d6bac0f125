"""Small real git repositories for the team-store tests (no fixtures here: plain helpers)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip


def git(root: Path, *args: str) -> str:
    import os

    env = {**os.environ, **_ENV}
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"git {args} failed: {proc.stderr}")
    return proc.stdout.strip()


def _module(topic: str, n: int) -> str:
    funcs = []
    for i in range(n):
        funcs.append(
            textwrap.dedent(
                f'''
                def {topic}_step_{i}(payload: dict, attempts: int = 3) -> dict:
                    """Handle the {topic} step {i}: validate the payload, then call the backend."""
                    result = dict(payload)
                    for attempt in range(attempts):
                        result["{topic}_{i}_attempt"] = attempt
                        if result.get("ok_{i}"):
                            break
                    result["done"] = True
                    return result
                '''
            )
        )
    return "\n".join(funcs)


BASE_FILES: dict[str, str] = {
    "billing/erp.py": textwrap.dedent(
        '''
        import time


        class ErpClient:
            """Talks to the ERP over HTTP."""

            def retry_erp_call(self, request, retries=5, backoff=0.5):
                """Send a request to the ERP, retrying with exponential backoff on timeouts."""
                for attempt in range(retries):
                    try:
                        return self.send(request)
                    except TimeoutError:
                        time.sleep(backoff * 2 ** attempt)
                raise RuntimeError("ERP unreachable")

            def send(self, request):
                return {"status": 200, "request": request}
        '''
    ),
    "billing/invoices.py": textwrap.dedent(
        '''
        def parse_invoice(text: str) -> dict:
            """Parse an invoice document into its number, customer and line items."""
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            number = lines[0].removeprefix("Invoice ")
            return {"number": number, "customer": lines[1], "items": lines[2:]}


        def invoice_total(items: list[float], vat: float = 0.2) -> float:
            """Sum the line items and add value added tax."""
            return round(sum(items) * (1 + vat), 2)
        '''
    ),
    "billing/shipping.py": _module("shipping", 6),
    "billing/payments.py": _module("payments", 6),
}


def make_repo(root: Path, files: dict[str, str] | None = None, *, branch: str = "main") -> Path:
    """A git repository at ``root`` with one commit of ``files`` (default: the billing repo)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or BASE_FILES).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", branch)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


def commit_change(root: Path, files: dict[str, str], message: str = "change") -> str:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


def clone(src: Path, dest: Path, *, rev: str | None = None) -> Path:
    """A fresh clone (no .nav index), optionally checked out at ``rev``."""
    subprocess.run(["git", "clone", "-q", str(src), str(dest)], check=True, capture_output=True, timeout=60)
    if rev:
        git(dest, "checkout", "-q", rev)
        git(dest, "checkout", "-q", "-B", "main")
    return dest
