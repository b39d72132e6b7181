"""Expression dispatch is exhaustive: `Expr` is the union of every node class, and mypy
names a `match` over it that misses a class (the `case _: assert_never(e)` arm).
No hand-written isinstance chain over the node classes is left in verifier/."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import get_args

from mypy import api as mypy_api

from verifier.ir.expr import Expr, ExprBase

ROOT = Path(__file__).resolve().parent.parent
NODES = get_args(Expr)
NAMES = sorted(cls.__name__ for cls in NODES)


def test_the_union_holds_every_node_class():
    """A node class left out of `Expr` would escape every exhaustiveness check."""
    assert set(ExprBase.__subclasses__()) == set(NODES)


def _match_function(name: str, cases: list[str]) -> str:
    arms = "".join(f"        case {c}():\n            return {c!r}\n" for c in cases)
    return f"def {name}(e: Expr) -> str:\n    match e:\n{arms}        case _:\n            assert_never(e)\n"


def test_mypy_reports_each_missing_case(tmp_path, monkeypatch):
    """One function per node class, each matching all classes but that one, and one complete
    function: mypy flags exactly the incomplete ones, each naming the class it misses."""
    functions = {"complete": _match_function("complete", NAMES)}
    for missing in NAMES:
        functions[f"without_{missing}"] = _match_function(f"without_{missing}", [n for n in NAMES if n != missing])
    header = textwrap.dedent(f"""\
        from typing import assert_never

        from verifier.ir.expr import Expr, {", ".join(NAMES)}
        """)
    module = tmp_path / "dispatch_probe.py"
    module.write_text(header + "\n\n" + "\n\n".join(functions.values()))
    first_line = {}
    lines = module.read_text().splitlines()
    for number, line in enumerate(lines, start=1):
        if line.startswith("def "):
            first_line[line[4:line.index("(")]] = number
    monkeypatch.chdir(ROOT)             # mypy finds `verifier` here
    out, err, status = mypy_api.run([str(module), "--follow-imports=silent", "--no-incremental",
                                     "--cache-dir", str(tmp_path / "cache"), "--config-file",
                                     str(ROOT / "pyproject.toml")])
    assert status == 1, out + err
    errors = [line for line in out.splitlines() if ": error:" in line]
    ends = sorted(first_line.values()) + [len(lines) + 1]

    def function_at(line_no: int) -> str:
        start = max(n for n in ends if n <= line_no)
        return next(name for name, n in first_line.items() if n == start)

    flagged: dict[str, str] = {}
    for error in errors:
        assert "assert_never" in error, error
        flagged[function_at(int(error.split(":")[1]))] = error
    assert set(flagged) == {f"without_{n}" for n in NAMES}, out
    for missing in NAMES:
        assert f'"{missing}"' in flagged[f"without_{missing}"], flagged[f"without_{missing}"]


_EXPR_CLASSES = set(NAMES)


def _isinstance_targets(fn: ast.AST) -> dict[str, set[str]]:
    """For each variable name, the expression node classes a function tests it against with
    isinstance (nested functions are their own functions)."""
    seen: dict[str, set[str]] = {}
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2 and isinstance(node.args[0], ast.Name):
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            names = {k.id for k in kinds if isinstance(k, ast.Name)} & _EXPR_CLASSES
            seen.setdefault(node.args[0].id, set()).update(names)
    return seen


def test_no_isinstance_chain_over_expression_nodes():
    """A function that tells four or more node classes of one expression apart with
    isinstance is a dispatch: it must be a `match` ending in `assert_never`. (Fewer is a
    pattern test, such as "a constant, or a variable whose type is bounded".)"""
    chains = []
    for path in sorted((ROOT / "verifier").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for var, classes in _isinstance_targets(fn).items():
                    if len(classes) >= 4:
                        chains.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}({var}): {sorted(classes)}")
    assert chains == []


def test_the_chain_finder_finds_a_chain():
    tree = ast.parse(textwrap.dedent("""\
        def f(e):
            if isinstance(e, Const):
                return 1
            if isinstance(e, (Var, Index)):
                return 2
            if isinstance(e, Quant):
                return 3
            return 4
        """))
    assert _isinstance_targets(tree.body[0]) == {"e": {"Const", "Var", "Index", "Quant"}}
