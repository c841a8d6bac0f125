"""Mine (query → changed code) training pairs from public git history.

A pair is one mainline commit of a fetched mirror (``git log --first-parent``):

- query: a merge commit's pull-request title and body (GitHub's "Merge pull request #N from …"
  message), or a plain/squashed commit's subject and body, trailers and PR numbers stripped;
- positives: the non-test, non-doc source files it changed that exist in the parent tree, and the
  innermost definition around each changed line of the parent version
  (``path::Qualified.name``, or ``path::<module>``; nav's own tree-sitter parser, every language);
- ``parent``: the first parent, the tree a search for the query runs on (``hard_negatives.py``).

Dropped, each with its reason counted in the manifest: bot authors, merges carrying no PR
title, formatting/lint/typo/version-bump/revert/release/dependency commits, messages under five
words, sweeping commits (more than ``MAX_FILES`` files or ``MAX_LINES`` changed lines), commits
touching only tests/docs/non-code, duplicate queries. Every kept pair says whether it reads as a
fix (``fixlike``); fixes are preferred when a repository's cap is reached, features are kept too.

Never mines a repository on ``excluded_repos.txt`` (SWE-bench full/Lite/Verified, SWE-bench-Live,
semble's benchmark) or one with the same name as one there (a fork or mirror): it refuses.

    /work/main/.venv/bin/python bench/mining/mine_pairs.py            # every repository of repos.json

Standard library + the git CLI + ``semantic.parse`` (run with nav's tree first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EXCLUDED = HERE / "excluded_repos.txt"
REPOS = HERE / "repos.json"
MAX_FILES = 10
MAX_LINES = 300
MIN_WORDS = 5
MAX_QUERY_CHARS = 8000
DEF_KINDS = frozenset(
    {"function", "method", "class", "struct", "interface", "enum", "trait", "module", "type"}
)
CODE_LANGUAGES = frozenset(
    {"python", "typescript", "tsx", "javascript", "go", "java", "ruby", "rust", "c", "cpp", "csharp",
     "kotlin", "scala", "swift", "php", "elixir", "lua", "haskell", "zig"}
)  # fmt: skip

# ---------------------------------------------------------------- exclusion


class ExcludedRepository(ValueError):
    """The repository is one of the evaluation sets' (or has the name of one)."""


def load_excluded(path: Path = EXCLUDED) -> frozenset[str]:
    """``owner/name`` entries of the exclusion list, lower-case; comments and blanks skipped."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip().lower()
        if line:
            if line.count("/") != 1:
                raise ValueError(f"{path}: not owner/name: {line[:80]!r}")
            out.add(line)
    return frozenset(out)


def excluded_reason(repo: str, excluded: Iterable[str]) -> str | None:
    """Why ``repo`` must not be mined, or None. A repository whose name (the part after the
    owner) is that of an excluded one is taken for a fork or mirror of it and refused too."""
    low = repo.strip().lower().removesuffix(".git")
    excluded = set(excluded)
    if low in excluded:
        return f"{repo} is on the exclusion list"
    name = low.rsplit("/", 1)[-1]
    same = sorted(e for e in excluded if e.rsplit("/", 1)[-1] == name)
    if same:
        return f"{repo} has the name of {same[0]} (on the exclusion list): taken for a fork or mirror"
    return None


def check_allowed(repo: str, excluded: Iterable[str]) -> None:
    reason = excluded_reason(repo, excluded)
    if reason:
        raise ExcludedRepository(f"refusing to mine {reason}; pick another repository")


# ---------------------------------------------------------------- message filters

BOT_RE = re.compile(
    r"\[bot\]|dependabot|renovate|github-actions|pre-commit-ci|greenkeeper|snyk-bot|mergify|"
    r"allcontributors|all-contributors|imgbot|weblate|codecov|deepsource|pyup|web-flow-bot|semantic-release",
    re.I,
)
SKIP_SUBJECT_RE = re.compile(
    r"""^(?:\W*)(?:
        revert\b | reapply\b | release\b | releasing\b | prepar(?:e|ing)\s+(?:for\s+)?(?:the\s+|a\s+)?(?:[\w.]+\s+)?release | bump\b |
        v?\d+\.\d+(?:\.\d+)*\s*$ | version\s+\d | (?:update|upgrade)\s+(?:the\s+)?(?:dependenc|deps|lock|changelog|version|copyright|year) |
        chore(?:\(deps\))?:\s*(?:bump|update|release) | build\(deps | deps?: | changelog\b | (?:add|update)\s+changelog |
        (?:style|format|lint|ci|docs?|test|tests)(?:\([^)]*\))?!?: | merge\s+(?:branch|remote|tag) |
        (?:auto-?)?format | reformat | run\s+(?:black|prettier|ruff|isort|gofmt|rustfmt|rubocop|eslint) |
        apply\s+(?:black|prettier|ruff|isort|gofmt|rustfmt|code\s+style) | typo | fix(?:es|ed)?\s+(?:a\s+)?typos? |
        (?:fix|update)\s+(?:the\s+)?(?:docs|documentation|readme|lint|linting|formatting|flake8|mypy|ci)\b |
        \[(?:skip\s+ci|ci\s+skip|docs?)\] | wip\b | initial\s+commit
    )""",
    re.I | re.X,
)
RELEASE_RE = re.compile(r"^(?:release|version|v)\s*v?\d+\.\d+", re.I)
ANYWHERE_SKIP_RE = re.compile(r"\btypos?\b|\bspelling\b|\bwhitespace\b|\bre-?format", re.I)
TRAILER_RE = re.compile(
    r"^(?:signed-off-by|co-authored-by|co-developed-by|reviewed-by|acked-by|tested-by|reported-by|"
    r"suggested-by|helped-by|change-id|cc|pr-url|pr-close|reviewed-on|git-svn-id|cherry picked from)\b.*$|"
    r"^--HG--$|^branch\s*:.*$",
    re.I | re.M,
)
MERGE_PR_RE = re.compile(r"^Merge pull request #(\d+) from (\S+)\s*$")
PR_SUFFIX_RE = re.compile(r"\s*\((?:#\d+(?:,\s*)?)+\)\s*$")
FIX_RE = re.compile(
    r"\b(?:fix(?:e[sd])?|bug|bugs|regression|crash(?:es|ed)?|error|exception|broken|incorrect(?:ly)?|wrong|"
    r"fails?|failing|failure|issue|resolves?|closes?|correct(?:s|ed|ly)?|handle|prevent|avoid)\b|#\d+",
    re.I,
)
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")


def is_bot(name: str, email: str) -> bool:
    return bool(BOT_RE.search(name) or BOT_RE.search(email))


def clean_message(message: str) -> str:
    """A commit message as a query: trailers, the PR number after the subject and a squash's
    ``* commit`` bullet lists of review fixups kept only when they carry words."""
    text = TRAILER_RE.sub("", message.replace("\r\n", "\n"))
    lines = text.strip().split("\n")
    if lines:
        lines[0] = PR_SUFFIX_RE.sub("", lines[0]).strip()
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if re.fullmatch(
            r"[*-]\s*(?:wip|fixup!?.*|squash!?.*|address (?:review )?comments?|review|lint|format|typo|fix)\.?",
            stripped,
            re.I,
        ):
            continue
        out.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()[:MAX_QUERY_CHARS]


def pr_message(subject: str, body: str) -> tuple[str, str] | None:
    """(PR title, body) of a GitHub merge commit's message, or None for another kind of merge."""
    if not MERGE_PR_RE.match(subject.strip()):
        return None
    body = body.strip()
    if not body:
        return None
    title, _, rest = body.partition("\n")
    return title.strip(), rest.strip()


def message_skip_reason(subject: str, query: str) -> str | None:
    """Why a (cleaned) commit message is no training query, or None."""
    s = subject.strip()
    if SKIP_SUBJECT_RE.match(s) or RELEASE_RE.match(s) or ANYWHERE_SKIP_RE.search(s):
        return "chore_message"
    if len(WORD_RE.findall(query)) < MIN_WORDS:
        return "short_message"
    return None


def is_fixlike(query: str) -> bool:
    return bool(FIX_RE.search(query))


# ---------------------------------------------------------------- paths

TEST_DIR_RE = re.compile(
    r"(?:^|/)(?:tests?|testing|__tests__|__mocks__|spec|specs|test_?data|fixtures?|testdata|testutils?|e2e|"
    r"benchmarks?|bench|examples?|samples?|docs?|documentation|site|website|\.github|\.circleci|scripts|"
    r"vendor|vendored|third_party|thirdparty|node_modules|dist|build)(?:/|$)",
    re.I,
)
TEST_FILE_RE = re.compile(
    r"(?:^|/)(?:test_[^/]*|[^/]*_test\.[a-z]+|[^/]*_tests\.[a-z]+|[^/]*\.(?:test|spec|e2e|bench|stories)\.[a-z]+|"
    r"[^/]*Tests?\.(?:java|kt|scala|cs)|[^/]*_spec\.rb|conftest\.py|[^/]*\.min\.js|[^/]*\.d\.ts|"
    r"setup\.py|noxfile\.py|fabfile\.py|tasks\.py|[^/]*\.config\.[cm]?[jt]s|[Gg]ulpfile\.[jt]s|[Gg]runtfile\.[jt]s)$",
    re.I,
)


def source_language(path: str) -> str | None:
    """The programming language of a non-test, non-doc, non-vendored source file, else None."""
    from semantic.languages import detect_language

    if TEST_DIR_RE.search(path) or TEST_FILE_RE.search(path):
        return None
    lang = detect_language(path)
    return lang if lang in CODE_LANGUAGES else None


# ---------------------------------------------------------------- diffs

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class FileChange:
    old_path: str | None  # None: added
    new_path: str | None  # None: deleted
    removed: list[int] = field(default_factory=list)  # parent lines deleted or replaced
    inserted_after: list[int] = field(default_factory=list)  # parent lines an insertion follows (0: top)


def parse_unified_diff(text: str) -> list[FileChange]:
    """Per file, the parent-side lines a ``git diff -U0`` changes."""
    files: list[FileChange] = []
    cur: FileChange | None = None
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            cur = FileChange(None, None)
            files.append(cur)
        elif cur is None:
            continue
        elif line.startswith("--- "):
            cur.old_path = None if line[4:] == "/dev/null" else _strip_prefix(line[4:], "a/")
        elif line.startswith("+++ "):
            cur.new_path = None if line[4:] == "/dev/null" else _strip_prefix(line[4:], "b/")
        elif line.startswith("@@"):
            m = HUNK_RE.match(line)
            if not m:
                continue
            start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            if count == 0:
                cur.inserted_after.append(start)
            else:
                cur.removed.extend(range(start, start + count))
    return [f for f in files if f.old_path or f.new_path]


def _strip_prefix(path: str, prefix: str) -> str:
    path = path.strip()
    if path.startswith('"') and path.endswith('"'):
        path = (
            path[1:-1]
            .encode("latin-1", "backslashreplace")
            .decode("unicode_escape")
            .encode("latin-1")
            .decode("utf-8", "replace")
        )
    return path[len(prefix) :] if path.startswith(prefix) else path


@dataclass(frozen=True)
class Definition:
    start: int
    end: int
    qualified_name: str


def definitions(path: str, text: str, language: str) -> list[Definition]:
    """The definitions nav's parser finds in ``text`` (kinds in DEF_KINDS), by start line."""
    symbols = _symbols_only(path, text, language)
    if symbols is None:  # the parser's public entry: definitions, references and chunks
        from semantic.parse import parse_source

        symbols = list(parse_source(path, text, language).symbols)
    defs = [
        Definition(s.span.start_line, s.span.end_line, s.qualified_name)
        for s in symbols
        if s.kind in DEF_KINDS and s.span.end_line >= s.span.start_line
    ]
    return sorted(defs, key=lambda d: (d.start, -d.end))


def _symbols_only(path: str, text: str, language: str) -> list[Any] | None:
    """The definitions ``parse_source`` would give, without its references and chunks (a third of
    the cost); None where that path does not apply (no grammar, too big, parse over budget)."""
    from semantic.parse import parse_definitions

    return parse_definitions(path, text, language)


def innermost(defs: Sequence[Definition], line: int) -> Definition | None:
    """The smallest definition whose lines include ``line``."""
    best: Definition | None = None
    starts = [d.start for d in defs]
    for d in defs[: bisect.bisect_right(starts, line)]:
        if d.start <= line <= d.end and (best is None or d.end - d.start <= best.end - best.start):
            best = d
    return best


INLINE_TEST_RE = re.compile(r"(?:^|\.)(?:tests?|test_\w+|Tests?|Test[A-Z]\w*)(?:\.|$)")
"""A definition inside a file's own tests (Rust's ``mod tests``, a ``test_*`` function): no positive."""


def changed_definitions(change: FileChange, defs: Sequence[Definition]) -> list[str]:
    """Qualified names (or ``<module>``) around the change's parent-side lines, first seen first.
    An insertion belongs to the definition holding both lines around it (else the module)."""
    names: list[str] = []
    for line in change.removed:
        d = innermost(defs, line)
        names.append(d.qualified_name if d else "<module>")
    for after in change.inserted_after:
        a, b = innermost(defs, after), innermost(defs, after + 1)
        if a is not None and b is not None and a == b:
            names.append(a.qualified_name)
        else:
            # the innermost definition holding both neighbouring lines, if any
            around = [d for d in defs if d.start <= after and after + 1 <= d.end]
            names.append(min(around, key=lambda d: d.end - d.start).qualified_name if around else "<module>")
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------- git


class Git:
    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._cat: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> str:
        p = subprocess.run(["git", "--git-dir", str(self.git_dir), *args], capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)[:120]}: {p.stderr.decode('utf-8', 'replace')[-300:]}")
        return p.stdout.decode("utf-8", "replace")

    def blob(self, commit: str, path: str) -> tuple[str, str] | None:
        """The file's (blob id, text) at ``commit``, or None (absent, too large for the mirror, binary)."""
        if self._cat is None:
            self._cat = subprocess.Popen(
                ["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            )  # fmt: skip
        assert self._cat.stdin and self._cat.stdout
        self._cat.stdin.write(f"{commit}:{path}\n".encode())
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().decode().split()
        if len(header) < 3 or header[1] != "blob":
            return None
        data = self._cat.stdout.read(int(header[2]) + 1)[:-1]
        if b"\0" in data[:8000]:
            return None
        return header[0], data.decode("utf-8", "replace")

    def close(self) -> None:
        if self._cat is not None:
            assert self._cat.stdin and self._cat.stdout
            self._cat.stdin.close()
            self._cat.wait(timeout=30)
            self._cat.stdout.close()
            self._cat = None


@dataclass
class Commit:
    sha: str
    parents: list[str]
    author: str
    email: str
    date: str
    subject: str
    body: str
    numstat: list[tuple[int, int, str]] | None = field(default_factory=list)  # added, deleted, path


def mainline(git: Git, max_commits: int) -> Iterator[Commit]:
    """The mainline commits, newest first, with their first-parent numstat. A mirror lacking a
    blob (files of 4 MB and more are left out of snapshots) makes the one-call log fail: then
    each commit's numstat is asked alone, and a commit whose diff needs a missing blob is skipped
    with ``numstat=None``."""
    fmt = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s%x1f%b%x1f"
    base = ["log", "--first-parent", f"-n{max_commits}", f"--format={fmt}", "HEAD"]
    try:
        out = git.run(*base[:1], "--diff-merges=first-parent", "--numstat", "--no-renames", *base[1:])
        bulk = True
    except RuntimeError:
        out = git.run(*base)
        bulk = False
    for rec in out.split("\x1e")[1:]:
        parts = rec.split("\x1f")
        if len(parts) < 8:
            continue
        c = Commit(parts[0], parts[1].split(), parts[2], parts[3], parts[4], parts[5], parts[6])
        stat = parts[7]
        if not bulk and c.parents:
            try:
                stat = git.run("diff", "--numstat", "--no-renames", c.parents[0], c.sha)
            except RuntimeError:
                c.numstat = None
                yield c
                continue
        for line in stat.strip().split("\n"):
            cols = line.split("\t")
            if len(cols) == 3 and c.numstat is not None:
                a, d = (int(x) if x.isdigit() else 0 for x in cols[:2])
                c.numstat.append((a, d, cols[2]))
        yield c


# ---------------------------------------------------------------- mining


def norm_query(q: str) -> str:
    return " ".join(WORD_RE.findall(q.lower()))


def mine_repo(
    repo: str,
    language: str,
    git_dir: Path,
    excluded: frozenset[str],
    *,
    max_commits: int,
    max_pairs: int,
    seen_queries: set[str],
) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The pairs of one repository and its manifest entry."""
    check_allowed(repo, excluded)
    git = Git(git_dir)
    head = git.run("rev-parse", "HEAD").strip()
    reasons: Counter[str] = Counter()
    pairs: list[dict[str, object]] = []
    seen = 0
    t0 = time.monotonic()
    parsed: dict[str, list[Definition]] = {}  # blob id → definitions: a file is parsed once per version
    try:
        for c in mainline(git, max_commits):
            if len(pairs) >= 2 * max_pairs or sum(1 for p in pairs if p["fixlike"]) >= max_pairs:
                break  # enough: the cap below keeps max_pairs of these, fixes first
            seen += 1
            if not c.parents:
                reasons["root_commit"] += 1
                continue
            if is_bot(c.author, c.email):
                reasons["bot"] += 1
                continue
            if len(c.parents) > 1:
                pr = pr_message(c.subject, c.body)
                if pr is None:
                    reasons["merge_without_pr"] += 1
                    continue
                subject, query = pr[0], clean_message(pr[0] + ("\n\n" + pr[1] if pr[1] else ""))
                source = "merge-pr"
            else:
                subject, query = (
                    c.subject,
                    clean_message(c.subject + ("\n\n" + c.body if c.body.strip() else "")),
                )
                source = "commit"
            why = message_skip_reason(subject, query)
            if why:
                reasons[why] += 1
                continue
            if c.numstat is None:
                reasons["missing_blob"] += 1
                continue
            files = len(c.numstat)
            lines = sum(a + d for a, d, _ in c.numstat)
            if files > MAX_FILES or lines > MAX_LINES:
                reasons["sweeping"] += 1
                continue
            src = [p for _, _, p in c.numstat if source_language(p)]
            if not src:
                reasons["no_source_change"] += 1
                continue
            key = norm_query(query)
            if key in seen_queries:
                reasons["duplicate_query"] += 1
                continue
            parent = c.parents[0]
            try:
                diff = git.run("diff", "-U0", "--no-renames", "--no-color", parent, c.sha, "--", *src)
            except RuntimeError:  # a blob the mirror lacks
                reasons["missing_blob"] += 1
                continue
            pos_files: list[str] = []
            pos_funcs: list[str] = []
            added: list[str] = []
            langs: Counter[str] = Counter()
            for ch in parse_unified_diff(diff):
                if ch.old_path is None:
                    if ch.new_path:
                        added.append(ch.new_path)
                    continue
                lang = source_language(ch.old_path)
                if lang is None:
                    continue
                blob = git.blob(parent, ch.old_path)
                if blob is None:
                    continue
                pos_files.append(ch.old_path)
                langs[lang] += 1
                if ch.new_path is None:  # deleted: the whole file is the change
                    pos_funcs.append(f"{ch.old_path}::<module>")
                    continue
                if blob[0] not in parsed:
                    if len(parsed) > 2000:
                        parsed.clear()
                    parsed[blob[0]] = definitions(ch.old_path, blob[1], lang)
                defs = parsed[blob[0]]
                names = [n for n in changed_definitions(ch, defs) if not INLINE_TEST_RE.search(n)]
                if not names:  # only the file's inline tests changed
                    pos_files.pop()
                    langs[lang] -= 1
                    continue
                pos_funcs.extend(f"{ch.old_path}::{n}" for n in names)
            if not pos_files:
                reasons["only_new_files"] += 1
                continue
            seen_queries.add(key)
            pairs.append({
                "id": f"{repo}@{c.sha[:12]}",
                "repo": repo,
                "repo_language": language,
                "language": (+langs).most_common(1)[0][0],
                "commit": c.sha,
                "parent": parent,
                "date": c.date,
                "source": source,
                "fixlike": is_fixlike(query),
                "query": query,
                "positive_files": pos_files,
                "positive_functions": list(dict.fromkeys(pos_funcs)),
                "added_files": added,
                "files_changed": files,
                "lines_changed": lines,
            })  # fmt: skip
    finally:
        git.close()
    # the cap: fixes first (newest first within each), then the rest
    if len(pairs) > max_pairs:
        ordered = [p for p in pairs if p["fixlike"]] + [p for p in pairs if not p["fixlike"]]
        keep = {id(p) for p in ordered[:max_pairs]}
        reasons["over_cap"] += len(pairs) - max_pairs
        for p in pairs:
            if id(p) not in keep:
                seen_queries.discard(norm_query(str(p["query"])))
        pairs = [p for p in pairs if id(p) in keep]
    entry: dict[str, object] = {
        "repo": repo,
        "language": language,
        "head": head,
        "commits_seen": seen,
        "kept": len(pairs),
        "pairs": len(pairs),
        "fixlike": sum(1 for p in pairs if p["fixlike"]),
        "from_merge_prs": sum(1 for p in pairs if p["source"] == "merge-pr"),
        "positive_functions": sum(len(p["positive_functions"]) for p in pairs),  # type: ignore[arg-type]
        "dropped": dict(sorted(reasons.items())),
        "seconds": round(time.monotonic() - t0, 1),
    }
    return pairs, entry


def write_manifest(
    path: Path, args: argparse.Namespace, out: Path, entries: list[dict[str, object]], *, done: bool
) -> dict[str, object]:
    """The manifest so far (``complete: false`` until every repository is mined)."""
    by_lang: Counter[str] = Counter()
    for e in entries:
        by_lang[str(e["language"])] += int(e.get("pairs", 0))  # type: ignore[call-overload]
    manifest: dict[str, object] = {
        "command": "PYTHONPATH=$PWD python bench/mining/mine_pairs.py --mirror-root /work/.mirror",
        "complete": done,
        "settings": {
            "max_commits": args.max_commits,
            "max_pairs": args.max_pairs,
            "max_files": MAX_FILES,
            "max_lines": MAX_LINES,
            "min_words": MIN_WORDS,
        },  # fmt: skip
        "output": str(out.relative_to(ROOT)) if out.resolve().is_relative_to(ROOT) else str(out),
        "pairs": sum(by_lang.values()),
        "pairs_by_language": dict(by_lang.most_common()),
        "repositories": entries,
    }
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", default="/work/.mirror", help="folder of the OWNER+NAME/repo git dirs")
    ap.add_argument("--repos", default=str(REPOS), help="JSON list of {repo, language}")
    ap.add_argument("--only", default="", help="comma-separated owner/name subset")
    ap.add_argument(
        "--resume", action="store_true", help="keep the repositories the manifest has, mine the rest"
    )
    ap.add_argument("--out", default=str(ROOT / "bench/corpora/mining/pairs.jsonl"))
    ap.add_argument("--manifest", default=str(HERE / "manifest.json"))
    ap.add_argument(
        "--max-commits", type=int, default=3000, help="newest mainline commits read per repository"
    )
    ap.add_argument("--max-pairs", type=int, default=200, help="pairs kept per repository (fixes first)")
    args = ap.parse_args(argv)

    excluded = load_excluded()
    repos = json.loads(Path(args.repos).read_text())
    if args.only:
        wanted = {r.strip().lower() for r in args.only.split(",")}
        repos = [r for r in repos if r["repo"].lower() in wanted]
    for r in repos:  # refuse before any work
        check_allowed(r["repo"], excluded)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    seen_queries: set[str] = set()
    entries: list[dict[str, object]] = []
    mode = "w"
    if args.resume and Path(args.manifest).exists() and out.exists():
        entries = [e for e in json.loads(Path(args.manifest).read_text())["repositories"] if "error" not in e]
        done = {str(e["repo"]) for e in entries}
        kept = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        kept = [p for p in kept if p["repo"] in done]
        out.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in kept))
        seen_queries = {norm_query(str(p["query"])) for p in kept}
        repos = [r for r in repos if r["repo"] not in done]
        mode = "a"
        print(f"resuming: {len(done)} repositories done, {len(kept)} pairs", file=sys.stderr)
    with out.open(mode, encoding="utf-8") as fh:
        for r in repos:
            git_dir = Path(args.mirror_root) / r["repo"].replace("/", "+") / "repo"
            if not git_dir.is_dir():
                print(f"{r['repo']}: no mirror at {git_dir}; fetch it first", file=sys.stderr)
                entries.append({"repo": r["repo"], "language": r["language"], "error": "mirror missing"})
                continue
            try:
                pairs, entry = mine_repo(
                    r["repo"], r["language"], git_dir, excluded,
                    max_commits=args.max_commits, max_pairs=args.max_pairs, seen_queries=seen_queries,
                )  # fmt: skip
            except (RuntimeError, OSError) as exc:  # one repository's fault ends only its own mining
                print(f"{r['repo']}: {exc}", file=sys.stderr)
                entries.append({"repo": r["repo"], "language": r["language"], "error": str(exc)[:300]})
                continue
            for p in pairs:
                fh.write(json.dumps(p, ensure_ascii=False) + "\n")
            fh.flush()
            entries.append(entry)
            write_manifest(Path(args.manifest), args, out, entries, done=False)
            print(f"{r['repo']}: seen {entry['commits_seen']} kept {entry['kept']} ({entry['seconds']} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    manifest = write_manifest(Path(args.manifest), args, out, entries, done=True)
    print(
        json.dumps({"pairs": manifest["pairs"], "by_language": manifest["pairs_by_language"]}),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
