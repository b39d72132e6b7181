"""Which phases each rule action belongs to, and how an arrow's condition reads, for the phase
diagrams (DOT and Mermaid).

An action written with `phase:` belongs to those phases. One written without it may
still test the phase in its guard (`phase == Draw or phase == Play`, `phase != Setup`):
it is drawn in each leaf phase where its guard, with the phase fixed and everything
else unknown, does not simplify to false; only an action that no phase rules out is
drawn "in any phase".
"""
from __future__ import annotations

from verifier.ir.expr import BOOL_OPS, FALSE, TRUE, App, Const, Expr, Var, app, apply_op, map_expr
from verifier.ir.model import PHASE_VAR, Action, EnumType, Modality, Model, PhaseEdge
from verifier.trace import condition_words

ANY_PHASE = None      # the key of the actions no phase rules out
GUARD_PREFIX = "when: "      # an arrow's condition, as its label's last line


def edge_condition(model: Model, e: PhaseEdge) -> str:
    """The condition an arrow is taken under in the model's display names, simplified (`when: ...`;
    `otherwise, when: ...` for an `{otherwise: P}` entry), or ""."""
    if e.condition == TRUE and not e.otherwise:
        return ""
    return f"{'otherwise, ' if e.otherwise else ''}{GUARD_PREFIX}{condition_words(model, e.condition)}"


def actions_by_phase(model: Model) -> dict[str | None, list[Action]]:
    """Leaf phase name (or ANY_PHASE) -> the rule actions drawn there, in model order; an action
    whose guard rules out every phase is in none of them."""
    out: dict[str | None, list[Action]] = {}
    for a in model.rule_actions():
        for phase in allowed_phases(model, a):
            out.setdefault(phase, []).append(a)
    return out


MODALITY_WORDS = {Modality.MUST: "must", Modality.MAY: "may", Modality.MUST_NOT: "must not"}


def action_words(actions: list[Action]) -> list[str]:
    """How a phase's actions read in its node: `must draw`, `may pass`; the actions of a `must: {once: G}`
    group once, where the first of them is, as `one of clue / discard / play` (one of them is due each
    visit; each alone is a `may` action, which would read as if none were due)."""
    out: list[str] = []
    for a in actions:
        if not a.once_group:
            out.append(f"{MODALITY_WORDS[a.modality]} {a.name}")
        elif a is next(b for b in actions if b.once_group == a.once_group):
            out.append("one of " + " / ".join(b.name for b in actions if b.once_group == a.once_group))
    return out


def allowed_phases(model: Model, action: Action) -> tuple[str | None, ...]:
    if action.phase_names:
        return action.phase_names
    phase_var = next((v for v in model.variables if v.name == PHASE_VAR), None)
    if phase_var is None or not isinstance(phase_var.type, EnumType) or not model.phases:
        return (ANY_PHASE,)
    enum = phase_var.type
    leaves = [p.name for p in model.leaf_phases() if p.name in enum.values]
    allowed = tuple(name for name in leaves
                    if _with_phase(action.guard, Const(enum.values.index(name), enum=enum.name)) != FALSE)
    return (ANY_PHASE,) if len(allowed) == len(leaves) else allowed


def _with_phase(e: Expr, value: Const) -> Expr:
    """`e` with the phase variable replaced by `value`, operators on literals evaluated and
    `and`/`or`/`not` simplified around them (what stays unknown is kept)."""

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name == PHASE_VAR:
            return value
        if not isinstance(node, App):
            return None
        args = [_with_phase(a, value) for a in node.args]
        if all(isinstance(a, Const) for a in args):
            try:
                return Const(apply_op(node.op, [a.value for a in args if isinstance(a, Const)]),
                             is_bool=node.op in BOOL_OPS)
            except ArithmeticError:
                return None
        return app(node.op, *args)

    return map_expr(e, fn)
