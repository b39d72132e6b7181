"""`-D NAME=VALUE` where NAME is a derived value (a model's `constants:` entry), not a parameter.

A user who knows a game by its deck size types `-D DECK=20` where the model derives DECK from
its parameters (`DECK: OPENING + DRAW_PILE`). The value is read as the one parameter it
determines (`resolve_derived`): of the parameters the derived value reads, every one but one must be
given (by -D, or by `printed:` with --printed); the derived value's formula is then solved for
that one over its declared range (each value tried), and a single solution is taken as if the
user had written `-D DRAW_PILE=13` (the note `resolve_derived` returns says so). Anything else is a
usage error (exit 2) at the derived value's declaration, whose hint gives the exact -D to write
where there is one: no solution, several, more than one parameter left open (solved with the
others at their defaults), or a value that contradicts the given ones.
"""
from __future__ import annotations

from dataclasses import dataclass

from verifier.diagnostics import Diagnostic, Span, UsageError
from verifier.ir.expr import Const, Expr, Param, fold, params_of, pretty, substitute
from verifier.ir.model import Model, ParamDecl
from verifier.lang.loader import load_model
from verifier.lang.yaml_source import load_yaml

MAX_TRIED = 100_000       # values of a parameter tried against a derived value (wider ranges: give the parameter)


@dataclass(frozen=True)
class Resolved:
    """The parameter values to load with, and what was read into them (one line a derived value)."""

    params: dict[str, int | None]
    notes: tuple[Diagnostic, ...] = ()    # each derived value read, at its declaration


def derived_names(path: str, params: dict[str, int | None]) -> list[str]:
    """The names among `params` that the model at `path` declares under `constants:` and not as
    parameters (the document's keys only: the parse is the one every load shares)."""
    root = load_yaml(path)

    def keys(section: str) -> set[str]:
        node = root.get(section)
        return {name for name, _ in node.items()} if node is not None and node.is_map else set()

    derived = keys("constants") - keys("params")
    return [name for name in params if name in derived]


def resolve_derived(path: str, params: dict[str, int | None], variant: str | None = None,
                    printed: bool = False) -> Resolved:
    """`params` with each derived value replaced by the parameter value it determines (the module
    doc); `printed`: the model's printed values count as given. Unchanged (and nothing loaded)
    where no derived value is named."""
    derived = derived_names(path, params)
    if not derived:
        return Resolved(dict(params))
    out = {k: v for k, v in params.items() if k not in derived}
    model = load_model(path, out, variant)
    given: dict[str, int | None] = dict(model.printed or ()) if printed else {}
    given.update((k, v) for k, v in out.items() if k != "PLAYERS")
    notes: list[Diagnostic] = []
    for name in derived:
        name_value = params[name]
        solved = _solve(model, name, name_value, given)
        if solved is not None:
            out[solved[0]] = given[solved[0]] = solved[1]
            notes.append(Diagnostic(f"-D {name}={name_value} read as -D {solved[0]}={solved[1]} "
                                    f"({name} = {_formula(model, name)})", _span(model, name), severity="note"))
    return Resolved(out, tuple(notes))


def _solve(model: Model, name: str, value: int | None, given: dict[str, int | None]) -> tuple[str, int] | None:
    """The parameter and value that give derived value `name` the value `value` (None where the given
    parameters already do); a UsageError at its declaration otherwise."""
    formula = dict(model.constants)[name]
    where = _span(model, name)
    decls = {d.name: d for d in model.params}
    reads = [d.name for d in model.params if d.name in params_of(formula)]

    def error(message: str, hint: str) -> UsageError:
        return UsageError(Diagnostic(message, where, hint=hint))

    shown = f"{name} = {_formula(model, name)}"
    if value is None:
        raise error(f"{name} is derived ({shown}): it cannot be left free",
                    f"leave a parameter free instead, e.g. -D {reads[-1]}=*" if reads else "give no -D for it")
    if any(given.get(p, 0) is None for p in reads):
        free = next(p for p in reads if given.get(p, 0) is None)
        raise error(f"{name} is derived ({shown}) and {free} is left free: {name}={value} cannot fix it",
                    f"give {free} a value, or drop -D {name}")
    open_ = [p for p in reads if p not in given]
    if not open_:
        actual = _value(formula, given)
        if actual == value:
            return None
        at = ", ".join(f"{p}={given[p]}" for p in reads)
        raise error(f"{name}={value} contradicts the parameters: {shown} = {actual} at {at}",
                    f"drop -D {name}, or change {' or '.join(reads)}")
    if len(open_) > 1:
        raise error(f"{name} is derived ({shown}): -D {name}={value} leaves {' and '.join(open_)} to choose",
                    _choices(model, formula, value, open_, given))
    decl = decls[open_[0]]
    found = _roots(formula, value, decl, given)
    if len(found) == 1:
        return decl.name, found[0]
    at = ", ".join(f"{p}={given[p]}" for p in reads if p in given)
    with_ = f" with {at}" if at else ""
    if not found:
        raise error(f"no {decl.name} in {decl.lo}..{decl.hi} gives {name}={value} ({shown}){with_}",
                    f"choose {name} from {_reachable(formula, decl, given)}, or set {decl.name} directly")
    listed = ", ".join(str(v) for v in found[:5]) + (", ..." if len(found) > 5 else "")
    raise error(f"several values of {decl.name} give {name}={value} ({shown}){with_}: {listed}",
                f"set {decl.name} directly, e.g. -D {decl.name}={found[0]}")


def _choices(model: Model, formula: Expr, value: int, open_: list[str], given: dict[str, int | None]) -> str:
    """The hint where several parameters are open: give all but one; the exact -D with the others at
    their defaults, solved for a parameter the page does not print where there is one, and at the
    printed values (--printed) where the page prints the others."""
    decls, printed = {d.name: d for d in model.params}, dict(model.printed or ())
    target = next((p for p in open_ if p not in printed), open_[-1])
    hints = []
    for source, values in (("as the page prints", printed), ("at the default", {p: decls[p].default for p in open_})):
        others = {p: values[p] for p in open_ if p != target and p in values}
        found = _roots(formula, value, decls[target], {**given, **others}) if len(others) == len(open_) - 1 else []
        if len(found) == 1:
            hints.append(" ".join(f"-D {p}={v}" for p, v in others.items()) + f" -D {target}={found[0]} "
                         f"({', '.join(others)} {source})")
    return "give all of them but one with -D" + (f", e.g. {' or '.join(hints)}" if hints else "")


def _roots(formula: Expr, value: int, decl: ParamDecl, given: dict[str, int | None]) -> list[int]:
    """The values of `decl` in its declared range at which `formula` is `value` (the others as given)."""
    return [v for v in _tried(decl) if _value(formula, {**given, decl.name: v}) == value]


def _reachable(formula: Expr, decl: ParamDecl, given: dict[str, int | None]) -> str:
    values = sorted({x for v in _tried(decl) if (x := _value(formula, {**given, decl.name: v})) is not None})
    return f"{values[0]}..{values[-1]}" if values else "no value (the formula does not evaluate)"


def _tried(decl: ParamDecl) -> range:
    """The declared range of `decl`, where it is narrow enough to try every value."""
    if decl.lo is None or decl.hi is None or decl.hi - decl.lo >= MAX_TRIED:
        raise UsageError(Diagnostic(f"{decl.name}'s range is too wide to solve a derived value for it",
                                    hint=f"set {decl.name} directly with -D {decl.name}=VALUE"))
    return range(decl.lo, decl.hi + 1)


def _value(formula: Expr, values: dict[str, int | None]) -> int | None:
    """`formula` at the parameter values; None where it does not evaluate (a division by zero)."""
    fixed = {k: Const(v) for k, v in values.items() if v is not None}
    folded = fold(substitute(formula, fixed, Param))
    return folded.value if isinstance(folded, Const) else None


def _span(model: Model, name: str) -> Span | None:
    return getattr(dict(model.constants)[name], "span", None)


def _formula(model: Model, name: str) -> str:
    return pretty(dict(model.constants)[name])
