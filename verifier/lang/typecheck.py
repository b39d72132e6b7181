"""Types of expressions and name resolution: what a name means, and the errors when it means nothing.

Types are the strings 'bool', 'int' or 'enum:<Name>'.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace

from verifier.diagnostics import DiagnosticSink, Span
from verifier.ir.expr import Const, Expr, Local, Param, Var
from verifier.ir.model import BoolType, Definition, EnumType, Variable

BOOL, INT = "bool", "int"


def enum_ty(name: str) -> str:
    return f"enum:{name}"


def ty_of(t) -> str:
    """The expression type of an IR type (a variable's, an index's or a choice's)."""
    if isinstance(t, BoolType):
        return BOOL
    if isinstance(t, EnumType):
        return enum_ty(t.name)
    return INT


def ty_words(ty: str) -> str:
    if ty.startswith("enum:"):
        return f"a value of enum {ty[5:]}"
    return "a boolean" if ty == BOOL else "an integer"


def mismatch_hint(want: str, got: str) -> str:
    if want == BOOL and got == INT:
        return "compare the number with something, e.g. 'x > 0'"
    if want == INT and got == BOOL:
        return "use 'if cond then 1 else 0' to turn a condition into a number"
    if want.startswith("enum:") and got.startswith("enum:"):
        return f"use a value of enum {want[5:]}"
    if want == INT and got.startswith("enum:"):
        return (f"values of enum {got[5:]} are not ordered and take no arithmetic: compare them with ==, != "
                f"or 'in {{...}}'; for an order, define a rank (rank(c): \"if c == ... then 1 else ...\") "
                "or use an int range with values: names")
    return "values of different types cannot be mixed"


@dataclass
class Scope:
    """The names an expression may use, and what each one means."""

    variables: dict[str, Variable] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)
    constants: dict[str, Expr] = field(default_factory=dict)
    enum_values: dict[str, tuple[str, int]] = field(default_factory=dict)
    enums: dict[str, EnumType] = field(default_factory=dict)
    locals: dict[str, str] = field(default_factory=dict)
    players: int = 1
    defines: dict[str, Definition] = field(default_factory=dict)
    allow_prev: bool = False        # `prev(e)` reads the state before a transition (step claims)
    bodies: dict = field(default_factory=dict)   # (definition, argument types) -> its body as read, shared
    phase_steps: dict[str, tuple[str, ...]] = field(default_factory=dict)   # a phase with steps -> its leaves

    def with_locals(self, more: dict[str, str]) -> Scope:
        return Scope(self.variables, self.params, self.constants, self.enum_values, self.enums,
                     {**self.locals, **more}, self.players, self.defines, self.allow_prev, self.bodies,
                     self.phase_steps)

    def for_body(self, d: Definition, param_types: dict[str, str]) -> Scope:
        """The scope of a definition's body: the model's names, the definitions before it, its parameters."""
        before: dict[str, Definition] = {}
        for name, other in self.defines.items():
            if name == d.name:
                break
            before[name] = other
        return Scope(self.variables, self.params, self.constants, self.enum_values, self.enums,
                     dict(param_types), self.players, before, bodies=self.bodies, phase_steps=self.phase_steps)

    def known_names(self) -> list[str]:
        return [*self.locals, *self.variables, *self.params, *self.constants, *self.enum_values, *self.defines,
                "PLAYERS"]

    def unknown(self, name: str, span: Span, sink: DiagnosticSink) -> None:
        close = difflib.get_close_matches(name, self.known_names(), n=3, cutoff=0.6)
        if close:
            hint = f"did you mean {' or '.join(repr(c) for c in close)}?"
        elif self.allow_prev:
            hint = ("a step claim reads a move's choice by its name where every action in its actions: has "
                    "that choice, of one type: name those actions (e.g. actions: [play] to read play's choice)")
        else:
            hint = "declare it under variables, params, constants or enums"
        sink.error(f"unknown name '{name}'", span, hint=hint)

    def resolve(self, name: str, span: Span, sink: DiagnosticSink) -> tuple[Expr, str] | None:
        """A bound name, a scalar variable, a constant (inlined), a parameter, an enum value, PLAYERS."""
        if name in self.locals:
            return Local(name, span=span), self.locals[name]
        if name in self.variables:
            v = self.variables[name]
            if v.seq_length is not None:
                which = f"{name}[d]" if v.dims else name
                sink.error(f"'{name}' is {'an array of sequences' if v.dims else 'a sequence'}; say what of it", span,
                           hint=f"top({which}), len({which}) or {which}[i] (i from 0, the bottom)")
                return None
            if v.index is not None:
                sink.error(f"'{name}' is an array; say which element", span,
                           hint=f"index it, e.g. {name}[active]" if v.by_player else f"index it: {name}[...]")
                return None
            return Var(name, span=span), ty_of(v.type)
        if name in self.constants:
            value = self.constants[name]
            return (replace(value, written=name) if isinstance(value, Const) else value), INT
        if name in self.params:
            return Param(name, span=span), INT
        if name in self.enum_values:
            enum, idx = self.enum_values[name]
            return Const(idx, enum=enum, span=span), enum_ty(enum)
        if name == "PLAYERS":
            return Const(self.players, span=span, written="PLAYERS"), INT
        self.unknown(name, span, sink)
        return None

    def array(self, name: str, span: Span, sink: DiagnosticSink) -> tuple[Variable, str] | None:
        """The array variable `name` and the type its index must have."""
        v = self.variables.get(name)
        if v is None:
            self.unknown(name, span, sink)
            return None
        if v.index is None:
            sink.error(f"'{name}' is not an array and cannot be indexed", span, hint=f"write just '{name}'")
            return None
        return v, ty_of(v.index)


def phase_steps(children: dict[str, list[str]], leaves: list[str]) -> dict[str, tuple[str, ...]]:
    """Each phase with steps -> its leaf steps, in the order play visits them (`phase in Combat.steps`)."""

    def under(name: str) -> list[str]:
        return [name] if name not in children else [leaf for child in children[name] for leaf in under(child)]

    return {name: tuple(leaf for leaf in leaves if leaf in under(name)) for name in children}
