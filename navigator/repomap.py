"""The repo map: the most important symbols' signatures, fitted to a token budget.

Importance is PageRank over the file reference graph (file A uses a name that
file B defines: an edge A -> B), pushed from each file onto the definitions its
in-edges point at. Names defined in many files (``get``, ``run``) spread their
weight thin, and very short names are ignored, so the map shows what the code is
built around rather than what it merely repeats. Pure functions over plain values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

DAMPING = 0.85
_MIN_NAME = 3
_MAX_DEFINING_FILES = 8


@dataclass(frozen=True, slots=True)
class Definition:
    key: int
    name: str
    path: str
    line: int
    signature: str
    kind: str
    qualified_name: str
    container: str | None = None


def name_weight(name: str) -> float:
    """Specific names (long snake_case or camelCase) say more than short, generic or private ones."""
    if name.startswith("_"):
        return 0.1
    specific = len(name) >= 8 and (
        "_" in name or any(a.islower() and b.isupper() for a, b in zip(name, name[1:], strict=False))
    )
    return 10.0 if specific else 1.0


def pagerank(
    nodes: Sequence[str],
    edges: Mapping[tuple[str, str], float],
    *,
    iterations: int = 50,
    tol: float = 1e-9,
) -> dict[str, float]:
    """Weighted PageRank by power iteration; dangling nodes spread evenly."""
    n = len(nodes)
    if n == 0:
        return {}
    out_weight: dict[str, float] = defaultdict(float)
    incoming: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (src, dst), w in edges.items():
        if w <= 0:
            continue
        out_weight[src] += w
        incoming[dst].append((src, w))
    rank = dict.fromkeys(nodes, 1.0 / n)
    for _ in range(iterations):
        dangling = sum(rank[v] for v in nodes if out_weight.get(v, 0.0) == 0.0)
        base = (1.0 - DAMPING) / n + DAMPING * dangling / n
        new = {}
        for v in nodes:
            s = sum(rank[u] * w / out_weight[u] for u, w in incoming.get(v, ()))
            new[v] = base + DAMPING * s
        delta = sum(abs(new[v] - rank[v]) for v in nodes)
        rank = new
        if delta < tol:
            break
    return rank


def rank_definitions(
    definitions: Iterable[Definition],
    ref_counts: Iterable[tuple[str, str, int]],
) -> list[tuple[float, Definition]]:
    """Score definitions. ``ref_counts`` holds (path, name, occurrences) from the syntax references."""
    all_defs = list(definitions)
    # Functions nested in functions are implementation detail, not part of the map.
    callables = {(d.path, d.qualified_name) for d in all_defs if d.kind in ("function", "method")}
    defs = [d for d in all_defs if not (d.container and (d.path, d.container) in callables)]
    by_name: dict[str, list[Definition]] = defaultdict(list)
    for d in defs:
        by_name[d.name].append(d)
    files_defining = {name: {d.path for d in ds} for name, ds in by_name.items()}
    files = sorted({d.path for d in defs})
    edges: dict[tuple[str, str], float] = defaultdict(float)
    uses: dict[tuple[str, str], float] = defaultdict(float)  # (src file, name) -> weight
    for path, name, count in ref_counts:
        targets = files_defining.get(name)
        if not targets or len(name) < _MIN_NAME or len(targets) > _MAX_DEFINING_FILES:
            continue
        own = sum(1 for d in by_name[name] if d.path == path)
        count -= own  # the definition's own name is not a use
        if count <= 0:
            continue
        weight = name_weight(name) * count**0.5 / len(targets)
        uses[(path, name)] += weight
        for target in targets:
            if target != path:
                edges[(path, target)] += weight
    nodes = sorted(set(files) | {p for p, _ in edges} | {t for _, t in edges})
    pr = pagerank(nodes, edges)
    score: dict[int, float] = defaultdict(float)
    for (src, name), weight in uses.items():
        named = by_name[name]
        share = pr.get(src, 0.0) * weight / len(named)
        for d in named:
            score[d.key] += share
    # a file's own top-level API outranks its members at equal references
    ranked = [(score.get(d.key, 0.0) * (1.0 if d.container is None else 0.5), d) for d in defs]
    ranked.sort(key=lambda sd: (-sd[0], sd[1].path, sd[1].line))
    return ranked


def estimate_tokens(text: str) -> int:
    """About four characters a token, as tokenizers of code average."""
    return (len(text) + 3) // 4


def render(ranked: Sequence[tuple[float, Definition]], *, tokens: int) -> tuple[str, list[Definition]]:
    """Lines ``path:`` then indented signatures (with line numbers), best files first, within budget."""
    chosen: list[Definition] = []
    used = 0
    by_file: dict[str, list[Definition]] = {}
    for score, d in ranked:
        if score <= 0 and chosen:
            break
        cost = estimate_tokens(f"  {d.line}: {d.signature}\n") + (
            0 if d.path in by_file else estimate_tokens(d.path + ":\n")
        )
        if used + cost > tokens:
            continue
        used += cost
        by_file.setdefault(d.path, []).append(d)
        chosen.append(d)
    order = list(by_file)
    lines: list[str] = []
    for path in order:
        lines.append(f"{path}:")
        for d in sorted(by_file[path], key=lambda x: x.line):
            lines.append(f"  {d.line}: {d.signature}")
    return "\n".join(lines), chosen
