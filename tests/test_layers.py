"""Every module imports only from its own layer or the layers below it (ARCHITECTURE.md).

The imports are read from the source (module level and inside functions), so a lazy
import that climbs a layer fails here as well. A new top-level module or package must
be given its layer below.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "verifier"

LAYERS = {                      # top-level module or package -> layer, lowest first
    "ir": 0, "diagnostics": 0, "signals": 0, "files": 0,
    "lang": 1,
    "semantics": 2, "trace": 2, "result": 2,
    "engines": 3, "props": 3, "analysis": 3,
    "playout": 4, "testgen": 4,
    "runner": 5, "forking": 5, "stategraph": 5,
    "report": 6, "baseline": 6, "diffing": 6, "mutation": 6,
    "cli": 7, "__main__": 7,
}


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "verifier" and len(parts) > 1 else None


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def _modules() -> list[tuple[str, Path]]:
    return [(".".join(p.relative_to(ROOT.parent).with_suffix("").parts), p) for p in sorted(ROOT.rglob("*.py"))]


def test_every_top_level_module_has_a_layer():
    tops = {_top(m) for m, _ in _modules()} - {None, "__init__"}
    assert tops <= set(LAYERS), f"give these a layer in LAYERS and ARCHITECTURE.md: {sorted(tops - set(LAYERS))}"


def test_no_module_imports_a_layer_above_it():
    upward = []
    for module, path in _modules():
        mine = _top(module)
        if mine in (None, "__init__"):
            continue
        for imported in _imports(path):
            theirs = _top(imported)
            if theirs is not None and LAYERS.get(theirs, 99) > LAYERS[mine]:
                upward.append(f"{module} imports {imported}")
    assert upward == []


def test_the_report_layer_runs_no_engine():
    """report/ consumes results: it never imports the engines or the analyses."""
    for module, path in _modules():
        if _top(module) == "report":
            climbed = [i for i in _imports(path) if _top(i) in ("engines", "analysis", "runner")]
            assert climbed == [], f"{module}: {climbed}"


def test_no_module_imports_a_private_name_of_another():
    """A name with a leading underscore stays in its module: what others need is public."""
    private = []
    for module, path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verifier"):
                private += [f"{module} imports {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_") and not a.name.startswith("__")]
    assert private == []


def _module_file(module: str) -> Path | None:
    base = ROOT.parent.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _loads(module: str) -> set[str]:
    """The verifier modules importing `module` loads: its imports (lazy ones too), theirs, and the
    packages above each of them (a package's `__init__` runs first)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for k in range(2, len(parts) + 1):
            prefix = ".".join(parts[:k])
            path = _module_file(prefix)
            if prefix in seen or path is None:
                continue
            seen.add(prefix)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    todo.append(node.module)
                    todo += [f"{node.module}.{a.name}" for a in node.names]     # a submodule named in the list
                elif isinstance(node, ast.Import):
                    todo += [a.name for a in node.names]
    return {m for m in seen if m.startswith("verifier.")}


def test_mutation_reports_do_not_reach_the_runner():
    # report/ and mutation/ share a layer, but reading mutation results must not load the checking machinery
    loaded = _loads("verifier.report.mutation")
    assert "verifier.mutation.results" in loaded
    assert not {"verifier.runner", "verifier.mutation.analysis", "verifier.engines"} & loaded
