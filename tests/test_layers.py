"""Every module imports only from its own layer or the layers below it, as ARCHITECTURE.md
lists them.

The layer table is read from ARCHITECTURE.md (so the two cannot drift), and the diagram
there must draw the layers in the same order, highest on top. The imports are read from
the source (module level and inside functions), so a lazy import that climbs a layer fails
here as well. A new top-level module or package must be given its layer in ARCHITECTURE.md.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "verifier"
ARCHITECTURE = (ROOT.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
NAME = re.compile(r"`([A-Za-z_]\w*)(?:/|\.py)`")

pytestmark = pytest.mark.xdist_group("test_layers")     # on one worker, which parses each file once


def _layers(text: str) -> dict[str, int]:
    """The `| layer | modules |` table: top-level module or package -> layer, lowest first."""
    layers: dict[str, int] = {}
    for number, modules in re.findall(r"^\| (\d+) \| (.+) \|$", text, re.MULTILINE):
        for name in NAME.findall(modules):
            assert name not in layers, f"{name} is in two layers of ARCHITECTURE.md"
            layers[name] = int(number)
    return layers


LAYERS = _layers(ARCHITECTURE)


def _diagram_lines(text: str) -> list[str]:
    start = text.index("```\n") + 4
    return text[start:text.index("```", start)].splitlines()


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "verifier" and len(parts) > 1 else None


@functools.cache
def _import_nodes(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every import statement of a file, module level and inside functions (parsed once a run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return tuple(node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


def _imports(path: Path) -> list[str]:
    out = []
    for node in _import_nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def _modules() -> list[tuple[str, Path]]:
    return [(".".join(p.relative_to(ROOT.parent).with_suffix("").parts), p) for p in sorted(ROOT.rglob("*.py"))]


def test_every_top_level_module_has_a_layer():
    tops = {_top(m) for m, _ in _modules()} - {None, "__init__"}
    assert tops <= set(LAYERS), f"give these a layer in ARCHITECTURE.md: {sorted(tops - set(LAYERS))}"


def _upward(layers: dict[str, int]) -> list[str]:
    upward = []
    for module, path in _modules():
        mine = _top(module)
        if mine in (None, "__init__"):
            continue
        for imported in _imports(path):
            theirs = _top(imported)
            if theirs is not None and layers.get(theirs, 99) > layers[mine]:
                upward.append(f"{module} imports {imported}")
    return upward


def test_no_module_imports_a_layer_above_it():
    assert _upward(LAYERS) == []


def test_an_import_against_the_table_is_found():
    """The same check with ir/ and lang/ swapped in the table finds lang/ imported from below."""
    swapped = _layers(ARCHITECTURE.replace("| 0 | `ir/`", "| 9 | `ir/`").replace("| 1 | `lang/`", "| 0 | `lang/`"))
    assert any(v.startswith("verifier.lang.") and " imports verifier.ir." in v for v in _upward(swapped))


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
        for node in _import_nodes(path):
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
            for node in _import_nodes(path):
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


def test_the_layer_table_is_read():
    assert LAYERS["ir"] == 0 and LAYERS["cli"] == max(LAYERS.values())
    assert sorted(set(LAYERS.values())) == list(range(max(LAYERS.values()) + 1))


def test_every_layer_entry_exists():
    present = {_top(m) for m, _ in _modules()} - {None}
    assert set(LAYERS) <= present, f"ARCHITECTURE.md names modules that do not exist: {sorted(set(LAYERS) - present)}"


def test_the_diagram_draws_the_layers_in_order():
    """Each top-level module is in the diagram, and a higher layer is drawn above a lower one."""
    assert _misplaced(LAYERS, _diagram_lines(ARCHITECTURE)) == []


def test_a_layer_drawn_out_of_order_is_found():
    lines = _diagram_lines(ARCHITECTURE)
    lang = next(i for i, line in enumerate(lines) if "lang/" in line)
    moved = [line for i, line in enumerate(lines) if i != lang] + [lines[lang]]      # lang/ below ir/
    assert _misplaced(LAYERS, moved) == ["lang (layer 1) is drawn below diagnostics (layer 0)",
                                         "lang (layer 1) is drawn below files (layer 0)",
                                         "lang (layer 1) is drawn below ir (layer 0)",
                                         "lang (layer 1) is drawn below resources (layer 0)"]


def _misplaced(layers: dict[str, int], lines: list[str]) -> list[str]:
    row: dict[str, int] = {}
    for name in layers:
        pattern = re.compile(rf"(?<![\w/.]){re.escape(name)}(?:/|\.py)")
        found = [i for i, line in enumerate(lines) if pattern.search(line)]
        assert found, f"the ARCHITECTURE.md diagram does not show {name}"
        row[name] = found[0]
    return sorted(f"{a} (layer {layers[a]}) is drawn below {b} (layer {layers[b]})"
                  for a in layers for b in layers if layers[a] > layers[b] and row[a] >= row[b])


def test_every_module_in_the_table_of_modules():
    """Each top-level module or package has a row in the module table ("owns")."""
    table = re.findall(r"^\| `([A-Za-z_]\w*)(?:/|\.py)[^|]*\| ", ARCHITECTURE, re.MULTILINE)
    cli_row = next(line for line in ARCHITECTURE.splitlines() if line.startswith("| `cli/`"))
    described = set(table) | set(NAME.findall(cli_row))
    assert set(LAYERS) <= described, f"no row in ARCHITECTURE.md for {sorted(set(LAYERS) - described)}"


def test_the_report_layer_never_imports_z3():
    for module, path in _modules():
        if _top(module) == "report":
            assert not [i for i in _imports(path) if i.split(".")[0] == "z3"], module


def test_diff_reports_do_not_reach_the_runner():
    loaded = _loads("verifier.report.diff")
    assert "verifier.diffing.changes" in loaded
    assert not {"verifier.runner", "verifier.diffing.compare", "verifier.engines"} & loaded


def test_diffing_does_not_import_report():
    """report/ reads what diffing/ found; diffing/ never depends on how it is written."""
    for module, path in _modules():
        if _top(module) == "diffing":
            assert not [i for i in _imports(path) if _top(i) == "report"], module
