"""Export semble's benchmark repositories from fetched mirrors into the corpora folder.

Each repository of ``../shared/bench/semble/repos.json`` is exported at its pinned revision into
``<corpora>/<name>/`` (its ``benchmark_root`` only, at the same relative path: the layout
``semble_bench.py`` reads), with ``<corpora>/<name>.revision`` saying what was exported. The rules
of the earlier exports (bench/README.md, "semble's benchmark on all 63 repositories"):

- a pinned commit the snapshot lacks: the mirror's HEAD, said so in the ``.revision`` file;
- jackson-databind: its ``3.x`` branch (HEAD is 2.x, where the labels' ``tools/jackson/`` paths do
  not exist);
- messagepack-csharp: a snapshot with the old layout, where the code lived in
  ``src/MessagePack.UnityClient/Assets/Scripts/MessagePack``, has it copied into ``src/MessagePack/``;
- zig (over the fetch size limit): ``lib/std`` of a ``ziglang`` wheel from PyPI (``--zig-wheel``).

Mirrors come from the search tool's ``fetch("github:OWNER/NAME")`` as ``<mirrors>/OWNER+NAME/repo``.
Afterwards each repository's labels are checked against its export (found / total).

    pip download --no-deps --only-binary=:all: ziglang==0.15.1 -d /tmp/zig
    python bench/semble_corpora.py --set check --zig-wheel /tmp/zig/ziglang-0.15.1-*.whl
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.data import SEMBLE, semble_queries, semble_repos  # noqa: E402
from bench.semble_bench import DEVELOPMENT  # noqa: E402

OLD_MSGPACK = "src/MessagePack.UnityClient/Assets/Scripts/MessagePack"


def git(mirror: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], capture_output=True, check=False)


def has_commit(mirror: Path, rev: str) -> bool:
    return git(mirror, "cat-file", "-e", f"{rev}^{{commit}}").returncode == 0


def write_tree(mirror: Path, commit: str, paths: list[str], into: Path) -> tuple[int, int]:
    """Write the commit's files under ``paths`` into ``into``, skipping the blobs the snapshot
    lacks (``git archive`` stops at the first one); (files written, files absent)."""
    listing = git(mirror, "ls-tree", "-r", "-z", commit, "--", *paths).stdout.decode(
        "utf-8", "surrogateescape"
    )
    entries = []
    for item in filter(None, listing.split("\0")):
        meta, path = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000":  # no symlinks: nothing outside the export
            entries.append((sha, path))
    batch = subprocess.run(
        ["git", "--git-dir", str(mirror), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in entries).encode(),
        capture_output=True,
        check=True,
    ).stdout
    written = missing = pos = 0
    for _sha, path in entries:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos : pos + size])
        pos += size + 1
        written += 1
    return written, missing


def export_git(repo: dict[str, Any], mirror: Path, into: Path) -> str:
    """Export the repository's benchmark root at the revision the rules choose; say which."""
    rev = str(repo["revision"])
    if repo["name"] == "jackson-databind":
        rev, note = "3.x", "branch 3.x (HEAD is 2.x)"
        if not has_commit(mirror, rev):
            raise SystemExit(f"jackson-databind: the mirror {mirror} has no 3.x branch; fetch it again")
    elif has_commit(mirror, rev):
        note = "pinned"
    else:
        rev, note = "HEAD", "HEAD (the pinned commit is not in the snapshot)"
    commit = git(mirror, "rev-parse", f"{rev}^{{commit}}").stdout.decode().strip()
    broot = (repo.get("benchmark_root") or "").strip("/")
    paths = [broot] if broot else []
    old_layout = (
        repo["name"] == "messagepack-csharp"
        and not git(mirror, "cat-file", "-e", f"{commit}:{OLD_MSGPACK}").returncode
    )
    if old_layout:
        paths.append(OLD_MSGPACK)
        note += f"; old layout {OLD_MSGPACK} copied into {broot}"
    written, missing = write_tree(mirror, commit, paths, into)
    if missing:
        note += f"; {missing} of {written + missing} files absent from the snapshot (4 MiB and more)"
    if old_layout:
        shutil.copytree(into / OLD_MSGPACK, into / broot, dirs_exist_ok=True)
    return f"{commit} {note}"


def export_zig(repo: dict[str, Any], wheel: Path, into: Path) -> str:
    """``lib/std`` of a ziglang wheel at the benchmark root (``lib/std``)."""
    broot = (repo.get("benchmark_root") or "lib/std").strip("/")
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory() as tmp:
        members = [m for m in zf.namelist() if "/lib/std/" in m]
        if not members:
            raise SystemExit(f"{wheel.name}: no lib/std in the wheel; pass a ziglang wheel")
        zf.extractall(tmp, members)
        std = next(Path(tmp).rglob("lib/std"))
        (into / broot).parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(std, into / broot)
    return f"{wheel.name} lib/std (the repository is over the fetch size limit)"


def coverage(repo: dict[str, Any], into: Path) -> tuple[int, int]:
    """Label paths found in the export, from the top or from the benchmark root, of all."""
    broot = (repo.get("benchmark_root") or "").strip("/")
    paths = {
        t if isinstance(t, str) else t["path"]
        for q in semble_queries(repo["name"], SEMBLE)
        for t in [*q["relevant"], *q.get("secondary", [])]
    }
    found = sum((into / p).exists() or (into / broot / p).exists() for p in paths)
    return found, len(paths)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="/work/corpora/semble")
    ap.add_argument("--mirrors", default="/work/.mirror", help="folder of OWNER+NAME/repo git dirs")
    ap.add_argument("--set", default="all", choices=("all", "dev", "check"))
    ap.add_argument("--repos", default="", help="comma-separated names (default: the whole set)")
    ap.add_argument("--zig-wheel", default="", help="a ziglang wheel (zig's corpus)")
    ap.add_argument("--force", action="store_true", help="export again over an existing corpus")
    args = ap.parse_args()
    repos = semble_repos(SEMBLE)
    if args.repos:
        wanted = set(args.repos.split(","))
        unknown = wanted - {r["name"] for r in repos}
        if unknown:
            raise SystemExit(
                f"--repos: no such repository {sorted(unknown)[:3]}; see {SEMBLE / 'repos.json'}"
            )
        repos = [r for r in repos if r["name"] in wanted]
    elif args.set != "all":
        repos = [r for r in repos if (r["name"] in DEVELOPMENT) == (args.set == "dev")]
    corpora = Path(args.corpora)
    corpora.mkdir(parents=True, exist_ok=True)
    report = []
    for repo in repos:
        name = repo["name"]
        into = corpora / name
        if into.exists() and not args.force:
            note = (
                (corpora / f"{name}.revision").read_text().strip()
                if (corpora / f"{name}.revision").exists()
                else "?"
            )
        else:
            shutil.rmtree(into, ignore_errors=True)
            into.mkdir(parents=True)
            if name == "zig":
                if not args.zig_wheel:
                    print("zig: skipped (no --zig-wheel)", file=sys.stderr)
                    shutil.rmtree(into)
                    continue
                note = export_zig(repo, Path(args.zig_wheel), into)
            else:
                owner_name = str(repo["url"]).split("github.com/")[1].removesuffix(".git")
                mirror = Path(args.mirrors) / owner_name.replace("/", "+") / "repo"
                if not mirror.exists():
                    print(f"{name}: no mirror at {mirror}; fetch github:{owner_name} first", file=sys.stderr)
                    shutil.rmtree(into)
                    continue
                note = export_git(repo, mirror, into)
            (corpora / f"{name}.revision").write_text(note + "\n")
        found, total = coverage(repo, into)
        report.append({"name": name, "revision": note, "labels_found": found, "labels": total})
        print(f"{name:22s} labels {found:3d}/{total:3d}  {note}", flush=True)
    (corpora / "exports.json").write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
