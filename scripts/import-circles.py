#!/usr/bin/env python3
"""List the import circles in `src/` that span folders.

A room is a top-level module of the library (`src/NAME.rs` with `src/NAME/`), except the host,
whose rooms are its wings (`src/host/WING/`) and its loose files (`api` with the `events` it
carries, `core`, `task`). A file's imports are every `crate::…` path it names, in `use` lines or inline, and every
`super::…` path resolved from where the file sits. Tests count as code: a test that reaches
upward is a circle too.

Prints the rooms of each circle and every import between them (each lies on a circle), with
one place that makes it, and exits 1 when there is any; prints "no import circles across folders" and exits 0 otherwise.

    python3 scripts/import-circles.py [SRC]
"""

import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super(?:::super)*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super(?:::super)*)::\{([^;]*?)\}", re.S)
COMMENT = re.compile(r"//[^\n]*")


def module_path(src: Path, file: Path) -> list[str]:
    """The module path of a file: src/host/gate/names.rs is ["host", "gate", "names"]."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    if parts in (["lib"], ["main"]):
        return []
    if parts and parts[0] == "bin":
        return []
    return parts


def room(path: list[str]) -> str | None:
    """The room a module path belongs to, or None for the crate root."""
    if not path:
        return None
    if path[0] == "host" and len(path) >= 2:
        # The host's face is one floor: `api` and the `events` it carries.
        return "host/api" if path[1] == "events" else "host/" + path[1]
    return path[0]


def targets(text: str, here: list[str]):
    """Every module path (as a list) a file's text names, with the line it is on."""
    text = COMMENT.sub("", text)
    found = []

    def resolve(head: str, rest: list[str]) -> list[str]:
        if head == "crate":
            return rest
        ups = head.count("super")
        # A file's own module is `here`; `super` is its parent.
        base = here[: len(here) - ups] if ups <= len(here) else []
        return base + rest

    for m in GROUP.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        for item in re.split(r",(?![^{]*\})", m.group(2)):
            item = item.strip()
            if not item:
                continue
            first = re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*", item)
            if first:
                found.append((resolve(m.group(1), first.group(0).split("::")), line))
    for m in PATH.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        rest = [p for p in m.group(2).split("::") if p]
        found.append((resolve(m.group(1), rest), line))
    return found


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    edges: dict[tuple[str, str], str] = {}
    for file in sorted(src.rglob("*.rs")):
        here = module_path(src, file)
        if not here and file.name not in ("lib.rs",):
            continue
        mine = room(here)
        for target, line in targets(file.read_text(), here):
            theirs = room(target)
            if mine and theirs and theirs != mine:
                edges.setdefault((mine, theirs), f"{file}:{line}")
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())

    # Tarjan's strongly connected components; each one of more than one room holds circles.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)

    if not comps:
        print("no import circles across folders")
        return 0
    for comp in comps:
        members = set(comp)
        print(f"circle among {', '.join(comp)}; each of these imports is on one:")
        for a in comp:
            for b in sorted(graph[a] & members):
                print(f"  {a} -> {b}  ({edges[(a, b)]})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
