"""Property files -> IR claims."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from verifier.diagnostics import DiagnosticSink, PropertyError, Span
from verifier.files import claims_beside
from verifier.ir.expr import FALSE, TRUE, App, Const, Expr, Op
from verifier.ir.model import ActionKind, BoolType, Choice, EnumType, IntType, Model, in_phase
from verifier.ir.props import (
    BoundedResponse,
    DeadlockFree,
    Event,
    Invariant,
    Ordering,
    Property,
    Reachable,
    StepInvariant,
    Terminates,
)
from verifier.ir.verdict import Verdict
from verifier.lang import symmetry
from verifier.lang.expressions import ExprReader
from verifier.lang.limits import MAX_STEP_BOUND, claim_size_problems
from verifier.lang.typecheck import BOOL, Scope, phase_steps, ty_of
from verifier.lang.yaml_source import Node, check_keys, load_yaml, shelf_keys, suggest

KINDS = ("invariant", "deadlock_free", "reachable", "ordering", "terminates", "bounded_response", "step")
FINDING_CLASSES = ("problem", "behaviour")
CLAIM_KEYS = ("id", "says", "rule", "expected", "why", "finding", "at", "fairness", "for_every", "actions",
              "with") + KINDS
PATTERNS = ("absence", "existence", "universality", "precedence", "response", "bounded-existence")
VERDICTS = tuple(v.value for v in Verdict)
ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def default_properties_path(model_path: str) -> str | None:
    """The model's claim file found without -p (`files.claims_beside`), when there is one."""
    candidate = claims_beside(model_path)
    return str(candidate) if candidate.is_file() else None


EVENT_WORDS = ("turn-end", "round-end", "any step-end", "any turn-end")   # events that are not an action's name
ACTION_SET_RE = re.compile(r"^\s*any\s+(step-end|turn-end)(?:\s+of\s+([A-Za-z_][A-Za-z0-9_]*))?\s*$")


def model_scope(model: Model) -> Scope:
    """The names a claim may use: the model's variables, parameters, enums and phases."""
    scope = Scope(players=model.players)
    scope.variables = {v.name: v for v in model.variables}
    scope.params = {p.name for p in model.params}
    scope.constants = dict(model.constants)
    scope.defines = {d.name: d for d in model.definitions}
    for e in model.enums:
        scope.enums[e.name] = e
        for i, value in enumerate(e.values):
            scope.enum_values.setdefault(value, (e.name, i))
    children: dict[str, list[str]] = {}
    for ph in model.phases:
        if ph.parent is not None:
            children.setdefault(ph.parent, []).append(ph.name)
    scope.phase_steps = phase_steps(children, [p.name for p in model.leaf_phases()])
    return scope


class PropertyReader:
    def __init__(self, path: str, model: Model):
        self.path, self.model = path, model
        self.sink = DiagnosticSink()
        self.scope = model_scope(model)
        self.actions = {a.name for a in model.actions} | _variant_actions(model)
        self.phases = {p.name for p in model.phases}

    def expr(self, node: Node) -> Expr | None:
        if isinstance(node.value, bool):
            return TRUE if node.value else FALSE
        out = ExprReader(self.scope, node.origin(), self.sink, str(node.value)).read(BOOL)
        return None if out is None else out[0]

    def read(self) -> list[Property]:
        root = load_yaml(self.path, PropertyError)
        check_keys(root, ("model", "claims") + shelf_keys(root), "the property file", self.sink, ("claims",))
        claims = root.get("claims")
        out: list[Property] = []
        seen: dict[str, Span | None] = {}
        for item in claims.elements() if claims else []:
            claim = self.claim(item, seen)
            if claim is not None:
                out.append(claim)
        symmetry.check_claims(self.model, out, lambda message, span, hint: self.sink.error(message, span, hint=hint))
        for problem in claim_size_problems(self.model, out):
            self.sink.error(problem.message, problem.span, hint=problem.hint)
        self.sink.raise_if_errors(PropertyError)
        return out

    def claim(self, item: Node, seen: dict[str, Span | None]) -> Property | None:
        check_keys(item, CLAIM_KEYS, "a claim", self.sink, ("id", "says"))
        if not item.is_map or "id" not in item.value:
            return None
        cid = str(item.value["id"])
        id_span = item.child("id").span
        if not ID_RE.match(cid):
            self.sink.error(f"claim id '{cid}' is not lowercase words with dashes", id_span,
                            hint="e.g. hand-limit-after-discard")
        if cid in seen:
            self.sink.error(f"duplicate claim id '{cid}'", id_span, notes=(("first used here", seen[cid]),),
                            hint="every claim needs its own id")
        seen[cid] = id_span
        kinds = [k for k in KINDS if k in item.value]
        if len(kinds) != 1:
            self.sink.error(f"claim {cid} must have exactly one kind, found "
                            f"{', '.join(kinds) if kinds else 'none'}", id_span,
                            hint=f"one of: {', '.join(KINDS)}")
            return None
        written = self.expected(item)
        if written is not None and written not in VERDICTS:
            self.sink.error(f"expected '{written}' is not a verdict", item.child("expected").span,
                            hint=f"one of {', '.join(VERDICTS)}")
            written = None
        expected = None if written is None else Verdict(written)
        why = str(item.value.get("why", "") or "")
        if expected is Verdict.VIOLATED and not why:
            self.sink.error(f"claim {cid} expects VIOLATED but does not say why", item.child("expected").span,
                            hint="add why: \"...\" saying which rule breaks it and how")
        common = dict(id=cid, statement=str(item.value.get("says", "")), expected=expected,
                      rule=str(item.value["rule"]) if item.get("rule") is not None else None,
                      why=why, for_every=self.for_every(item), problem=self.problem(item), span=id_span)
        kind = kinds[0]
        if kind != "step" and item.get("actions") is not None:
            self.sink.error("actions: belongs to step claims", item.child("actions").span,
                            hint="it lists the moves a step: claim judges; drop it here")
        if kind not in ("step", "reachable") and item.get("with") is not None:
            self.sink.error("with: belongs to step claims", item.child("with").span,
                            hint="beside actions:, it gives the choice values of the moves a step: claim judges; "
                                 "a reachable move takes it inside: reachable: {action: play, with: {card: 2}}")
        if kind == "reachable" and item.get("with") is not None:
            self.sink.error("with: of a reachable move goes inside reachable:", item.child("with").span,
                            hint="reachable: {action: play, with: {card: 2}}")
        return getattr(self, f"k_{kind}")(item, item.child(kind), common)

    def problem(self, item: Node) -> bool:
        """`finding: problem` (the violation is a defect of the page) or `finding: behaviour` (the default:
        it shows what the page allows on purpose)."""
        node = item.get("finding")
        if node is None:
            return False
        if node.value not in FINDING_CLASSES:
            self.sink.error(f"finding: '{node.value}' is neither of {' and '.join(FINDING_CLASSES)}", node.span,
                            hint="finding: problem for a defect of the page, behaviour for what it allows")
        return node.value == "problem"

    def for_every(self, item: Node) -> tuple[str, ...]:
        """`for_every: [PARAM, ...]`: parameters of the model this claim leaves free."""
        node = item.get("for_every")
        if node is None:
            return ()
        names = [str(x.value) for x in node.elements()] if node.is_list else [str(node.value)]
        params = [p.name for p in self.model.params]
        for name in names:
            if name not in params:
                self.sink.error(f"for_every names '{name}', which is not a parameter of the model", node.span,
                                hint=f"this model's parameters: {', '.join(params) or 'none'}")
        return tuple(n for n in names if n in params)

    def expected(self, item: Node) -> str | None:
        """`expected: VERDICT`, or per variant: `expected: {variant: VERDICT, ...}`."""
        node = item.get("expected")
        if node is None or not node.is_map:
            return None if node is None else str(node.value)
        names = [v.name for v in self.model.variants]
        for key, child in node.items():
            if key not in names:
                self.sink.error(f"unknown variant '{key}'", child.key_span,
                                hint=f"this model's variants: {', '.join(names) or 'none'}")
        if self.model.variant not in node.value:
            self.sink.error(f"no expected verdict for variant '{self.model.variant}'", node.span,
                            hint="give one for every variant")
            return None
        return str(node.value[self.model.variant])

    # ---- kinds
    def k_invariant(self, item: Node, node: Node, common: dict) -> Property | None:
        e = self.expr(node)
        if e is None:
            return None
        if item.get("at") is None:
            return Invariant(expr=e, **common)
        at = self.phase_name(item.child("at"))
        if at is None:
            return None
        return Invariant(expr=App(Op.IMPLIES, (in_phase(self.model, at), e)), at_phase=at, **common)

    def k_step(self, item: Node, node: Node, common: dict) -> Property | None:
        """`step: "expr"`: over every transition (of `actions:`, when given; with the `with:` choice values,
        when given); prev(x) is x before it, and a choice every judged action has is read by its name."""
        names: list[str] = []
        acts = item.get("actions")
        for n in (acts.elements() if acts.is_list else [acts]) if acts is not None else []:
            names += [name for name in self.action_set(n) if name not in names]
        choice: tuple[tuple[str, int], ...] | None = ()
        if item.get("with") is not None:
            if not names:
                self.sink.error("with: gives the choice values of the moves a step claim judges: it needs actions:",
                                item.child("with").span, hint="e.g. actions: [play], with: {card: 2}")
                return None
            choice = self.move_choice(item.child("with"), names)
        if isinstance(node.value, bool):
            e: Expr | None = TRUE if node.value else FALSE
        else:
            scope = replace(self.scope, allow_prev=True).with_locals(self.shared_choices(names))
            out = ExprReader(scope, node.origin(), self.sink, str(node.value)).read(BOOL)
            e = None if out is None else out[0]
        if e is None or choice is None:
            return None
        return StepInvariant(expr=e, actions=tuple(names), choice=choice, **common)

    def shared_choices(self, names: list[str]) -> dict[str, str]:
        """The choices a step claim on `names` may read: those every action it judges has, of one type
        (none when it judges every move: the implicit ones choose nothing)."""
        judged = [a for a in self.model.actions if a.name in names or a.name.split(" -> ")[0] in names]
        if not names or not judged:
            return {}
        shared = {c.name: c.type for c in judged[0].choices}
        for a in judged[1:]:
            mine = {c.name: c.type for c in a.choices}
            shared = {name: t for name, t in shared.items() if mine.get(name) == t}
        return {name: ty_of(t) for name, t in shared.items()}

    def k_deadlock_free(self, item: Node, node: Node, common: dict) -> Property:
        return DeadlockFree(**common)

    def k_reachable(self, item: Node, node: Node, common: dict) -> Property | None:
        if node.is_map:
            check_keys(node, ("phase", "action", "state", "with"), "a reachable target", self.sink)
            if node.get("with") is not None and node.get("action") is None:
                self.sink.error("with: gives the choice values of a move: it needs action:", node.child("with").span,
                                hint="e.g. reachable: {action: play, with: {card: 2}}")
                return None
            if node.get("phase") is not None:
                name = self.phase_name(node.child("phase"))
                if name is None:
                    return None
                return Reachable(expr=in_phase(self.model, name), **common)
            if node.get("action") is not None:      # a name, a set (`any step-end of P`) or a list of those
                acts = node.child("action")
                names: list[str] = []
                for n in acts.elements() if acts.is_list else [acts]:
                    names += [name for name in self.action_set(n) if name not in names]
                if acts.is_list and not acts.value:
                    self.sink.error("reachable: {action: []} names no move", acts.span,
                                    hint="name an action, a set such as any step-end, or a list of those")
                if not names:
                    return None
                if node.get("with") is None:
                    return Reachable(action=tuple(names), **common)
                choice = self.move_choice(node.child("with"), names)
                return None if choice is None else Reachable(action=tuple(names), choice=choice, **common)
            if node.get("state") is not None:
                e = self.expr(node.child("state"))
                return None if e is None else Reachable(expr=e, **common)
            self.sink.error("reachable needs phase, action or state", node.span)
            return None
        e = self.expr(node)
        return None if e is None else Reachable(expr=e, **common)

    def k_terminates(self, item: Node, node: Node, common: dict) -> Property | None:
        scope = str(node.value)
        if scope not in ("turn", "game"):
            self.sink.error(f"terminates: '{scope}' is neither turn nor game", node.span,
                            hint="terminates: turn, or terminates: game")
            return None
        if scope == "turn" and not any(a.kind is ActionKind.TURN_END for a in self.model.actions):
            self.sink.error("terminates: turn needs a model with phases (turns)", node.span)
            return None
        weak, strong = self.fairness(item)
        return Terminates(scope=scope, fairness=weak, strong_fairness=strong, **common)

    def k_ordering(self, item: Node, node: Node, common: dict) -> Property | None:
        check_keys(node, ("pattern", "p", "s", "scope", "at_most"), "an ordering claim", self.sink,
                   ("pattern", "p"))
        if not node.is_map or "pattern" not in node.value or "p" not in node.value:
            return None
        pattern = str(node.value["pattern"])
        if pattern not in PATTERNS:
            self.sink.error(f"unknown pattern '{pattern}'", node.child("pattern").span,
                            hint=f"one of {', '.join(PATTERNS)}")
            return None
        p = self.event(node.child("p"))
        s = self.event(node.child("s")) if node.get("s") is not None else None
        if pattern in ("precedence", "response") and node.get("s") is None:
            self.sink.error(f"the {pattern} pattern needs a second event 's'", node.span)
            return None
        bound = node.value.get("at_most")
        if pattern == "bounded-existence" and not isinstance(bound, int):
            self.sink.error("bounded-existence needs at_most: N", node.span)
            return None
        if isinstance(bound, int) and not 0 <= bound <= MAX_STEP_BOUND:
            self.sink.error(f"at_most: {bound} is not a count from 0 to {MAX_STEP_BOUND:,}",
                            node.child("at_most").span, hint="its monitor counts the events up to it")
            return None
        scope, q, r = self.scope_of(node.get("scope"))
        if p is None or scope is None or (node.get("s") is not None and s is None):
            return None
        weak, strong = self.fairness(item)
        return Ordering(pattern=pattern, p=p, s=s, scope=scope, q=q, r=r, bound=bound,
                        fairness=weak, strong_fairness=strong, **common)

    def k_bounded_response(self, item: Node, node: Node, common: dict) -> Property | None:
        check_keys(node, ("after", "expect", "within"), "a bounded response", self.sink,
                   ("after", "expect", "within"))
        if not node.is_map or not {"after", "expect", "within"} <= set(node.value):
            return None
        trigger, response = self.event(node.child("after")), self.event(node.child("expect"))
        within = node.value["within"]
        if not isinstance(within, int) or within < 0:
            self.sink.error("within must be a number of steps", node.child("within").span)
            return None
        if within > MAX_STEP_BOUND:
            self.sink.error(f"within: {within} steps; at most {MAX_STEP_BOUND:,} are allowed",
                            node.child("within").span, hint="its monitor counts the steps up to it")
            return None
        if trigger is None or response is None:
            return None
        return BoundedResponse(trigger=trigger, response=response, within=within, **common)

    # ---- pieces
    def fairness(self, item: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(weakly fair, strongly fair) actions: `fairness: [a]` (weak) or `{weak: [a], strong: [b]}`."""
        node = item.get("fairness")
        if node is None:
            return (), ()
        if not node.is_map:
            return self.action_names(node), ()
        check_keys(node, ("weak", "strong"), "a fairness assumption", self.sink)
        return (self.action_names(node.get("weak")), self.action_names(node.get("strong")))

    def move_choice(self, node: Node, names: list[str]) -> tuple[tuple[str, int], ...] | None:
        """`with: {card: 2}`: a choice value of every named action, as a number (an enum's value and a
        named value by name, true/false for a bool)."""
        hint = "e.g. with: {card: 2}, with: {suit: hearts}, with: {kitten: true}"
        if not node.is_map or not node.value:
            self.sink.error("with: maps choice names to values", node.span, hint=hint)
            return None
        actions = [a for a in self.model.actions if a.name in names or a.name.split(" -> ")[0] in names]
        out: list[tuple[str, int]] = []
        for name, value in node.items():
            lacking = [a for a in actions if all(c.name != name for c in a.choices)]
            if lacking:
                known = [c.name for c in lacking[0].choices]
                self.sink.error(f"action {lacking[0].name} has no choice '{name}'", value.key_span,
                                hint=suggest(name, known, "its choices") if known else "it chooses nothing")
                return None
            read = {choice_number(c, value.value) for a in actions for c in a.choices if c.name == name}
            if None in read or len(read) != 1:
                self.sink.error(f"'{value.value}' is no value of choice {name}", value.span,
                                hint="an integer in its range, a value of its enum or of its values: list, "
                                     "or true/false" + (" (the actions it names read it differently)"
                                                        if len(read) > 1 and None not in read else ""))
                return None
            number = read.pop()
            assert number is not None, "None is refused above"
            out.append((name, number))
        return tuple(out)

    def action_names(self, node: Node | None) -> tuple[str, ...]:
        if node is None:
            return ()
        if not node.is_list:
            self.sink.error("fairness lists action names", node.span, hint="e.g. fairness: {strong: [pass_prio]}")
            return ()
        names: list[str] = []
        for n in node.elements():
            names += [name for name in self.action_set(n) if name not in names]
        return tuple(names)

    def action_set(self, node: Node) -> list[str]:
        """An action name, or a set of the implicit moves: `any step-end` (every move that leaves a
        phase: `end P`, `pass turn`), `any step-end of P` (those leaving P or one of its steps),
        `any turn-end` (the moves that pass the turn)."""
        m = ACTION_SET_RE.match(str(node.value)) if isinstance(node.value, str) else None
        if m is None:
            name = self.action_name(node)
            return [] if name is None else [name]
        kinds = (ActionKind.TURN_END,) if m.group(1) == "turn-end" else (ActionKind.ADVANCE, ActionKind.TURN_END)
        within: set[str] | None = None
        if m.group(2) is not None:
            phase = m.group(2)
            if phase not in self.phases:
                self.sink.error(f"unknown phase '{phase}'", node.span, hint=suggest(phase, sorted(self.phases),
                                                                                    "phases"))
                return []
            within = set(self.scope.phase_steps.get(phase, (phase,)))
        out = [a.name for a in self.model.actions if a.kind in kinds and (within is None or a.phase in within)]
        if not out:
            self.sink.error(f"'{node.value}' names no move of this model", node.span,
                            hint="any step-end names the implicit moves `end P` and `pass turn` of a model with "
                                 "phases")
        return out

    def action_name(self, node: Node, words: tuple[str, ...] = ()) -> str | None:
        """An action's name; `words`: the other names allowed where it stands (an event's
        `turn-end`...), offered in the hint of a name that is neither."""
        if not isinstance(node.value, str):
            self.sink.error("an action's name is expected here, not a list or a mapping", node.span,
                            hint="one name, e.g. draw; a list of moves goes where it is allowed: "
                                 "{action: [draw_deck, draw_pile]} as an event or a reachable move, actions: [a, b]")
            return None
        name = str(node.value)
        base = {a.split(" -> ")[0] for a in self.actions}
        if name not in self.actions and name not in base:
            self.sink.error(f"unknown action '{name}'", node.span,
                            hint=suggest(name, [*words, *sorted(self.actions)], "events" if words else "actions"))
            return None
        return name

    def rounds_defined(self, node: Node) -> bool:
        """Whether the model's rounds are defined: in seat order, or kept where the order changes (`lang/rounds`)."""
        if not self.model.order_changes or self.model.round_ends is not None:
            return True
        self.sink.error("this model's order of play changes (next_player:) and it keeps no rounds", node.span,
                        hint="give the model a round_end: block (round_end: {} if the end of a round changes "
                             "nothing): a round then ends once every player has had a turn in it "
                             "(docs/LANGUAGE.md, \"Who plays next\")")
        return False

    def phase_name(self, node: Node) -> str | None:
        name = str(node.value)
        if name not in self.phases:
            self.sink.error(f"unknown phase '{name}'", node.span, hint=suggest(name, sorted(self.phases), "phases"))
            return None
        return name

    def event(self, node: Node) -> Event | None:
        if isinstance(node.value, str) and not node.is_map:
            if node.value == "turn-end":
                return Event(turn_end=True)
            if node.value == "round-end":
                return Event(round_end=True) if self.rounds_defined(node) else None
            if ACTION_SET_RE.match(node.value):
                names = self.action_set(node)
                return Event(actions=tuple(names), text=node.value.strip()) if names else None
            name = self.action_name(node, EVENT_WORDS)
            return None if name is None else Event(action=name)
        if node.is_list:
            self.sink.error("an event is an action name or one of {action}, {enter}, {leave}, {state}, not a list",
                            node.span, hint="one of several actions is {action: [draw, play]}")
            return None
        check_keys(node, ("action", "enter", "leave", "state"), "an event", self.sink)
        if not node.is_map or len(node.value) != 1:
            self.sink.error("an event is an action name or one of {action}, {enter}, {leave}, {state}", node.span)
            return None
        key, child = node.items()[0]
        if key == "action" and child.is_list:      # one of several moves: {action: [draw_deck, draw_pile]}
            if not child.value:
                self.sink.error("{action: []} names no move", child.span,
                                hint="name an action, a set such as any step-end, or a list of those")
                return None
            written = self.action_names(child)
            moves = tuple(a.name for a in self.model.actions if a.name in written or a.name.split(" -> ")[0] in written)
            return Event(actions=moves, text=" or ".join(written)) if written else None
        if key == "action":
            name = self.action_name(child)
            return None if name is None else Event(action=name)
        if key in ("enter", "leave"):
            name = self.phase_name(child)
            if name is None:
                return None
            return Event(enter=name) if key == "enter" else Event(leave=name)
        e = self.expr(child)
        return None if e is None else Event(expr=e, text=str(child.value))

    def scope_of(self, node: Node | None) -> tuple[str | None, Event | None, Event | None]:
        if node is None:
            return "globally", None, None
        if isinstance(node.value, str):
            if node.value in ("globally", "turn") or (node.value == "round" and self.rounds_defined(node)):
                return node.value, None, None
            if node.value == "round":
                return None, None, None
            self.sink.error(f"unknown scope '{node.value}'", node.span,
                            hint="globally, turn, round, {phase: P}, {before: R}, {after: Q}, "
                                 "{between: Q, and: R}, {after: Q, until: R}")
            return None, None, None
        check_keys(node, ("phase", "before", "after", "between", "and", "until"), "a scope", self.sink)
        v = node.value
        if "phase" in v:
            name = self.phase_name(node.child("phase"))
            return (None, None, None) if name is None else ("phase", Event(enter=name), Event(leave=name))
        if "before" in v:
            return "before", None, self.event(node.child("before"))
        if "between" in v and "and" in v:
            return "between", self.event(node.child("between")), self.event(node.child("and"))
        if "after" in v and "until" in v:
            return "after-until", self.event(node.child("after")), self.event(node.child("until"))
        if "after" in v:
            return "after", self.event(node.child("after")), None
        self.sink.error("incomplete scope", node.span, hint="{between: Q, and: R} needs both events")
        return None, None, None


def _variant_actions(model: Model) -> set[str]:
    """Names of the model file's actions that the chosen variant leaves out (claims may name them)."""
    if not model.variants or not model.path or not Path(model.path).is_file():
        return set()
    actions = load_yaml(model.path).get("actions")
    return {str(a.value["name"]) for a in actions.elements() if a.is_map and "name" in a.value} if actions else set()


def load_properties(path: str, model: Model) -> list[Property]:
    """The claims of a property file, checked against `model` (its chosen variant)."""
    return PropertyReader(str(path), model).read()


def choice_number(choice: Choice, value: object) -> int | None:
    """The number a `with:` value stands for in `choice`'s type, None when it is no value of it."""
    t = choice.type
    if isinstance(t, BoolType):
        return int(value) if isinstance(value, bool) else None
    if isinstance(t, EnumType):
        return t.values.index(value) if isinstance(value, str) and value in t.values else None
    assert isinstance(t, IntType)
    lo, hi = t.lo, t.hi
    if isinstance(value, str) and value in choice.value_names and isinstance(lo, Const):
        return lo.value + choice.value_names.index(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if isinstance(lo, Const) and isinstance(hi, Const) and not lo.value <= value <= hi.value:
        return None
    return value
