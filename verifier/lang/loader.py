"""Model files -> IR: declarations, variants and actions (the phase sugar is in `phases`,
whole-model checks in `checks`)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from verifier.diagnostics import Diagnostic, DiagnosticSink, Span, UsageError
from verifier.ir.expr import (
    FALSE,
    TRUE,
    App,
    Const,
    Expr,
    Index,
    Op,
    Var,
    conj,
    fold,
    free_locals,
    neg,
    params_of,
    pretty,
    substitute,
)
from verifier.ir.model import (
    ACTIVE_VAR,
    PHASE_ENUM,
    PHASE_VAR,
    RANDOM,
    RULES,
    UNSTATED,
    Acknowledgement,
    Action,
    Assign,
    BoolType,
    Choice,
    Citation,
    Definition,
    EnumType,
    IntType,
    Modality,
    Model,
    Overflow,
    ParamDecl,
    Reset,
    Variable,
    VariantDecl,
    type_bounds,
)
from verifier.lang import aliasing, checks, durations, labels, once, rounds, sequences, symmetry, turn_change
from verifier.lang.arrays import flat_size
from verifier.lang.effect_blocks import EffectBlocks
from verifier.lang.expressions import ExprReader, Origin
from verifier.lang.limits import MAX_ARRAY, MAX_PLAYERS, MAX_SLOTS
from verifier.lang.phase_rules import PhaseRules
from verifier.lang.phases import PhaseSpec, TurnBlocks, desugar_phases, read_phase_rules, read_phases
from verifier.lang.typecheck import BOOL, INT, Scope, mismatch_hint, phase_steps, ty_of, ty_words
from verifier.lang.yaml_source import Node, check_keys, load_yaml, shelf_keys, suggest

# Rewrites the model as written (before the phase sugar), its phase tree and its turn blocks: mutation analysis
Edit = Callable[[Model, list[PhaseSpec], TurnBlocks], tuple[Model, list[PhaseSpec], TurnBlocks]]

TOP_KEYS = ("model", "doc", "players", "params", "constants", "enums", "variables", "define", "initially", "end",
            "winner", "fairness", "progress", "ordered", "variants", "acknowledge", "phases", "actions",
            "turn_end", "round_end", "on_turn_start", "next_player", "skip", "in_round", "printed", "symmetry",
            "phase_rules")
VAR_KEYS = ("type", "per", "init", "overflow", "overflow_rule", "reset", "doc", "label", "values")
CHOICE_KEYS = ("type", "values")
ACTION_KEYS = ("name", "phase", "must", "modality", "choose", "chooser", "when", "do", "by", "rule", "variants",
               "doc")
PARAM_KEYS = ("default", "min", "max", "doc")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BUILTIN_NAMES = frozenset((        # the language's own names: a user name that took one would shadow it
    "PLAYERS", "TURN_END", "Phase", "phase", "active", "player", "len", "top", "push", "pop", "prev", "min", "max",
    "abs", "sum", "count", "next_turn_of", "forever", "forall", "exists"))
FOR_RE = re.compile(r"^\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.+?)\s*$", re.S)
TARGET_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[(.*)\])?\s*$", re.S)


PER_READING_HINT = ("a whole block is written per reading (do:, when:, turn_end:, round_end:, on_turn_start:, on_enter: "
                    "or next_player: {strict: ..., loose: ...}), not a single effect's value")

class _Sink(DiagnosticSink):
    """A sink that keeps one copy of a message (a YAML alias repeats the same text per variant)."""

    def error(self, message, span=None, hint=None, notes=()):
        if not any(d.message == message and d.span == span for d in self.diagnostics):
            super().error(message, span, hint, notes)


class Loader:
    """Reads one model file; collects every error before raising."""

    def __init__(self, path: str, params: dict[str, int | None] | None, variant: str | None,
                 edit: Edit | None = None):
        self.path, self.overrides, self.wanted_variant = path, dict(params or {}), variant
        self.edit = edit
        self.sink = _Sink()
        self.root = load_yaml(path)
        self.scope = Scope()
        self.names: dict[str, Span | None] = {}
        self.action_names: dict[str, tuple[Span | None, frozenset[str] | None]] = {}
        self.variant_names: list[str] = []
        self.variant: str | None = None
        self.lengths: dict[str, str] = {}    # a sequence's length variable -> the sequence
        self.lasting: dict[str, Span | None] = {}   # variables some effect gives a duration (until:)
        self.label_spans: dict[str, Span | None] = {}   # a variable -> where its `label:` is
        self.effect_blocks = EffectBlocks(self)          # `define:` entries that name a block of effects
        self.turn_blocks: list[aliasing.Writes] = []     # turn-change blocks as written (for `aliasing`)
        self.reading_action = False
        self.phased = False
        self.skip: Expr | None = None                    # `skip:`, the players the turn passes over

    # ---- small helpers
    def expr(self, node: Node, want: str | None, scope: Scope | None = None) -> Expr | None:
        """The expression written at `node` (a YAML number or boolean counts), of type `want` if given."""
        if isinstance(node.value, str):
            out = self.reader(node, scope).read(want)
            return None if out is None else out[0]
        if isinstance(node.value, (bool, int)):
            ty = BOOL if isinstance(node.value, bool) else INT
            if want is None or ty == want:
                return Const(int(node.value), is_bool=ty == BOOL)
            self.sink.error(f"expected {ty_words(want)}, found {str(node.value).lower()}", node.span,
                            hint=mismatch_hint(want, ty))
            return None
        self.sink.error("expected an expression", node.span, hint='write the expression as text, e.g. "x > 0"')
        return None

    def reader(self, node: Node, scope: Scope | None) -> ExprReader:
        return ExprReader(scope or self.scope, node.origin(), self.sink, str(node.value))

    def name_ok(self, name: str, span: Span | None, seen: dict[str, Span | None], what: str) -> bool:
        if not NAME_RE.match(name):
            self.sink.error(f"'{name}' is not a valid {what} name", span,
                            hint="names are letters, digits and underscores, starting with a letter")
            return False
        if self.builtin(name, span, what):
            return False
        if name in seen:
            self.sink.error(f"duplicate name '{name}'", span, notes=(("first declared here", seen[name]),),
                            hint="every variable, constant, parameter, enum value, phase and action "
                                 "needs its own name")
            return False
        seen[name] = span
        return True

    def builtin(self, name: str, span: Span | None, what: str) -> bool:
        """Whether `name` is one of the language's own names (reported: a {what} cannot take it)."""
        if name not in BUILTIN_NAMES:
            return False
        self.sink.error(f"'{name}' is a built-in name of the language; {'an' if what[0] in 'aeiou' else 'a'} {what} "
                        "cannot take it", span, hint=f"choose another name, e.g. 'my_{name}'")
        return True

    def citation(self, node: Node | None) -> Citation | None:
        if node is None:
            return None
        if isinstance(node.value, str):
            section, sep, text = node.value.partition(": ")
            return Citation(section.strip(), text.strip() if sep else "")
        if node.is_map:
            check_keys(node, ("section", "text"), "a rule citation", self.sink, ("section",))
            return Citation(str(node.value.get("section", "")), str(node.value.get("text", "")))
        self.sink.error("a rule citation is 'SECTION: paraphrase' or {section, text}", node.span,
                        hint='e.g. rule: "Discard: excess cards above seven must go"')
        return None

    # ---- the whole model
    def load(self) -> Model:
        root = self.root
        check_keys(root, TOP_KEYS + shelf_keys(root), "the model", self.sink, ("model",))
        players = self.read_players()
        params = self.read_params()
        printed = self.read_printed(params)
        self.read_constants()
        enums = self.read_enums()
        variants = self.read_variants()
        self.phase_rules = PhaseRules(self.sink, root.get("phase_rules"))
        phase_specs = read_phases(self, root.get("phases"))
        phase_enum = self.declare_phases([p.name for p in phase_specs if p.is_leaf]) if phase_specs else None
        variables = self.read_variables(phase_enum, players)
        self.scope.variables = {v.name: v for v in variables}
        self.lengths = {v.seq_length: v.name for v in variables if v.seq_length is not None}
        self.read_defines()
        self.leaves = [p.name for p in phase_specs if p.is_leaf]
        self.phase_parents = {p.name: p.children for p in phase_specs if not p.is_leaf}
        self.scope.phase_steps = phase_steps(self.phase_parents, self.leaves)
        self.phased = bool(phase_specs)
        actions = self.read_actions(root.get("actions"), bool(phase_specs))
        flags: set[str] = set()
        for a in actions:
            if a.once and a.once not in flags and self.name_ok(a.once, a.span, self.names, "variable"):
                flags.add(a.once)
                variables.append(once.flag(a))
        for name, span in self.lasting.items():
            if self.name_ok(durations.companion_name(name), span, self.names, "variable"):
                variables.append(durations.companion(self.scope.variables[name], players))
        end = self.top_expr("end", BOOL, FALSE)
        model = Model(
            name=str(root.value.get("model", "")), path=self.path, doc=str(root.value.get("doc", "") or ""),
            players=players, params=params, param_values=tuple(self.param_values.items()),
            constants=tuple(self.scope.constants.items()),
            enums=tuple(enums) + ((phase_enum,) if phase_enum else ()),
            variables=tuple(variables), actions=tuple(actions), initially=self.top_expr("initially", BOOL, TRUE),
            end=end, winner=self.top_expr("winner", INT, None), variants=tuple(variants), variant=self.variant,
            fairness=self.name_list("fairness"), progress=self.name_list("progress"),
            ordered_pairs=self.read_ordered(), acknowledged=self.read_acks(),
            definitions=tuple(self.scope.defines.values()), printed=printed, symmetry=self.read_symmetry(),
            span=root.span)
        blocks = TurnBlocks()
        if phase_specs:
            blocks = TurnBlocks(self.effects_block("turn_end"), self.effects_block("round_end"),
                                self.effects_block("on_turn_start"), self.read_turn_order())
            phase_specs = read_phase_rules(self, phase_specs)
            model = self.read_rounds(model, blocks)
        if self.edit is not None:
            model, phase_specs, blocks = self.edit(model, phase_specs, blocks)
        if phase_specs:
            model = desugar_phases(self, model, phase_specs, blocks)
        else:
            if self.root.get("phase_rules") is not None:
                self.sink.error("phase_rules are for phases: this model has none", self.root.child("phase_rules").span,
                                hint="declare phases that use: them, or remove phase_rules")
            for key in ("on_turn_start", "next_player", "skip", "in_round"):
                if self.root.get(key) is not None:
                    self.sink.error(f"{key} needs turns: this model has no phases", self.root.child(key).span,
                                    hint="declare phases, or put the effects in an action")
        self.effect_blocks.check_unused()
        model = durations.cancel_on_assignment(model)
        if end != FALSE:
            model = replace(model, actions=tuple(replace(a, guard=conj(a.guard, neg(end))) for a in model.actions))
        checks.check_names(self, model)
        symmetry.check_model(model, lambda message, span, hint: self.sink.error(message, span, hint=hint))
        self.sink.raise_if_errors()
        checks.check_sizes(self, model)
        self.sink.raise_if_errors()
        checks.check_static_ranges(self, model)
        checks.check_must_guards(self, model)
        self.sink.raise_if_errors()
        if self.edit is None:       # a mutant's load (mutation analysis) shows no warnings: not worth the search
            aliasing.check_writes(model, lambda message, span, hint: self.sink.warning(message, span, hint=hint),
                                  self.turn_blocks)
        return model

    def top_expr(self, key: str, want: str, default):
        node = self.root.get(key)
        return default if node is None else (self.expr(node, want) or default)

    def read_players(self) -> int:
        node = self.root.get("players")
        players = 1
        if node is not None:
            if not isinstance(node.value, int) or isinstance(node.value, bool) or not 1 <= node.value <= MAX_PLAYERS:
                self.sink.error(f"players must be an integer from 1 to {MAX_PLAYERS}", node.span,
                                hint="e.g. players: 2")
            else:
                players = node.value
        if "PLAYERS" in self.overrides:
            value = self.overrides.pop("PLAYERS")
            if value is None or not 1 <= value <= MAX_PLAYERS:
                raise UsageError(Diagnostic(f"PLAYERS must be an integer from 1 to {MAX_PLAYERS}",
                                            hint="e.g. --param PLAYERS=3"))
            players = value
        self.scope.players = players
        return players

    def read_params(self) -> tuple[ParamDecl, ...]:
        out = []
        node = self.root.get("params")
        for name, p in node.items() if node else []:
            if not self.name_ok(name, p.key_span, self.names, "parameter"):
                continue
            spec = p.value if p.is_map else {"default": p.value}
            if p.is_map:
                check_keys(p, PARAM_KEYS, f"parameter {name}", self.sink, ("default",))
            numbers = [spec.get(k) for k in ("default", "min", "max")]
            if not all(x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in numbers) \
                    or numbers[0] is None:
                self.sink.error(f"parameter {name} needs integer default, min and max", p.span,
                                hint="e.g. {default: 10, min: 0, max: 60}")
                self.scope.params.add(name)        # declared all the same: no follow-on "unknown name"
                continue
            out.append(ParamDecl(name, numbers[0], numbers[1], numbers[2], str(spec.get("doc", "")), p.key_span))
            self.scope.params.add(name)
        known = {d.name: d for d in out}
        for name, value in self.overrides.items():
            if name not in known:
                raise UsageError(Diagnostic(f"unknown parameter '{name}'",
                                            hint=f"this model's parameters: {', '.join(['PLAYERS', *known])}"))
            d = known[name]
            if value is not None and ((d.lo is not None and value < d.lo) or (d.hi is not None and value > d.hi)):
                raise UsageError(Diagnostic(f"parameter {name}={value} is outside {d.lo}..{d.hi}",
                                            d.span, hint="choose a value in the declared range"))
        self.param_values = {d.name: self.overrides.get(d.name, d.default) for d in out}
        return tuple(out)

    def read_printed(self, params: tuple[ParamDecl, ...]) -> tuple[tuple[str, int], ...] | None:
        """`printed: {HAND_LIMIT: 7}`: the values the rules print, for reports at printed numbers."""
        node = self.root.get("printed")
        if node is None:
            return None
        if not node.is_map:
            self.sink.error("printed must map parameters to the values the rules print", node.span,
                            hint="e.g. printed: {HAND_LIMIT: 7, OPENING: 7}")
            return ()
        known = {d.name: d for d in params}
        out = []
        for name, v in node.items():
            d = known.get(name)
            if d is None:
                self.sink.error(f"printed names an unknown parameter '{name}'", v.key_span,
                                hint=suggest(name, list(known), "parameters"))
            elif not isinstance(v.value, int) or isinstance(v.value, bool):
                self.sink.error(f"the printed value of {name} must be an integer", v.span, hint="e.g. 7")
            elif (d.lo is not None and v.value < d.lo) or (d.hi is not None and v.value > d.hi):
                self.sink.error(f"the printed value {name}={v.value} is outside the parameter's range "
                                f"{d.lo}..{d.hi}", v.span, hint="widen min/max under params: to include it")
            else:
                out.append((name, v.value))
        return tuple(out)

    def read_symmetry(self) -> str | None:
        node = self.root.get("symmetry")
        if node is None:
            return None
        if node.value != "players":
            self.sink.error(f"unknown symmetry '{node.value}'", node.span,
                            hint="the only symmetry is 'players' (states that differ by rotating the players)")
            return None
        return "players"

    def read_constants(self) -> None:
        node = self.root.get("constants")
        for name, c in node.items() if node else []:
            if self.name_ok(name, c.key_span, self.names, "constant"):
                e = self.expr(c, INT)
                if e is not None:
                    self.scope.constants[name] = fold(e)

    def read_enums(self) -> list[EnumType]:
        out = []
        node = self.root.get("enums")
        for name, e in node.items() if node else []:
            if not self.name_ok(name, e.key_span, self.names, "enum"):
                continue
            if not e.is_list or not e.value:
                self.sink.error(f"enum {name} must list its values", e.span, hint="e.g. Mode: [story, free]")
                continue
            values = []
            for i, v in enumerate(e.elements()):
                if self.name_ok(str(v.value), v.span, self.names, "enum value"):
                    self.scope.enum_values[str(v.value)] = (name, i)
                values.append(str(v.value))
            enum = EnumType(name, tuple(values), e.key_span)
            self.scope.enums[name] = enum
            out.append(enum)
        return out

    def declare_phases(self, leaves: list[str]) -> EnumType:
        enum = EnumType(PHASE_ENUM, tuple(leaves))
        for i, leaf in enumerate(leaves):
            self.scope.enum_values.setdefault(leaf, (PHASE_ENUM, i))
        self.scope.enums[PHASE_ENUM] = enum
        return enum

    # ---- definitions
    def read_defines(self) -> None:
        """`define:` entries `name: "expr"` or `name(p, q): "expr"`, in order (a body uses earlier ones)."""
        node = self.root.get("define")
        if node is None:
            return
        if not node.is_map:
            self.sink.error("define must map names to expressions", node.span,
                            hint='e.g. define: {can_cast(p): "mana[p] > 0"}')
            return
        for key, body in node.items():
            head = ExprReader(self.scope, body.key_origin(key), self.sink, key).read_define_head()
            if head is None or not self.name_ok(head[0], body.key_span, self.names, "definition") \
                    or any(self.builtin(p, body.key_span, "definition parameter") for p in head[1]):
                continue
            if body.is_map or body.is_list:        # a block of effects (`effect_blocks`)
                self.effect_blocks.declare(head[0], head[1], body)
                continue
            if not isinstance(body.value, (str, int)):
                self.sink.error(f"definition {head[0]} must be an expression or a block of effects", body.span,
                                hint='write the expression as text, e.g. "x > 0", or effects as a mapping')
                continue
            text = str(body.value).lower() if isinstance(body.value, bool) else str(body.value)
            origin = body.origin() if isinstance(body.value, str) else Origin.straight(
                body.span.file, body.span.line, body.span.col, text)
            d = Definition(head[0], head[1], text, origin.file, origin.positions, body.key_span)
            if ExprReader(self.scope, origin, self.sink, text).check_syntax():
                self.scope.defines[d.name] = d
                if not d.params:       # no parameters: its types can be checked now, used or not
                    ExprReader(self.scope.for_body(d, {}), origin, self.sink, text).read()

    # ---- variants
    def read_variants(self) -> list[VariantDecl]:
        node = self.root.get("variants")
        out = []
        for name, v in node.items() if node else []:
            if v.is_map:
                check_keys(v, ("doc", "rule"), f"variant {name}", self.sink)
            doc = str(v.value.get("doc", "")) if v.is_map else str(v.value or "")
            out.append(VariantDecl(name, doc, self.citation(v.get("rule")) if v.is_map else None, v.key_span))
        self.variant_names = [v.name for v in out]
        chosen = self.wanted_variant
        if chosen is not None and chosen not in self.variant_names:
            raise UsageError(Diagnostic(
                f"unknown variant '{chosen}'",
                hint=f"this model's variants: {', '.join(self.variant_names)}" if self.variant_names
                else "this model declares no variants"))
        self.variant = chosen if chosen is not None else (self.variant_names[0] if self.variant_names else None)
        return out

    def per_variant(self, node: Node | None, what: str) -> dict[str | None, Node]:
        """`when: {A: ..., B: ...}` -> {variant: node}; a plain value -> {None: node}."""
        if node is None:
            return {}
        if not node.is_map or not node.value or not self.variant_names or not set(node.value) <= set(self.variant_names):
            return {None: node}
        missing = [v for v in self.variant_names if v not in node.value]
        if missing:
            self.sink.error(f"{what} gives no value for variant {', '.join(missing)}", node.span,
                            hint="give one entry per variant (YAML anchors &x / *x repeat a value)")
        return dict(node.items())

    # ---- types and variables
    def read_type(self, node: Node) -> BoolType | IntType | EnumType | None:
        return self.type_of_text(str(node.value), node.origin(), node.span)

    def type_of_text(self, raw: str, origin: Origin, span: Span) -> BoolType | IntType | EnumType | None:
        text = raw.strip()
        if text == "bool":
            return BoolType()
        if text == "player":        # a player: 0..PLAYERS-1 (priority, the first player, a target)
            return IntType(Const(0), Const(self.scope.players - 1))
        if text in self.scope.enums:
            return self.scope.enums[text]
        if ".." in text:
            out = ExprReader(self.scope, origin, self.sink, raw).read_range()
            return None if out is None else IntType(*out)
        self.sink.error(f"unknown type '{text}'", span,
                        hint=f"a type is bool, player, lo..hi or an enum ({', '.join(self.scope.enums) or 'none declared'})"
                        + ("; a sequence is seq[T, 0..N]" if text.startswith("seq") else ""))
        return None

    def read_index(self, node: Node, players: int) -> IntType | EnumType | None:
        if str(node.value).strip() == "player":
            return IntType(Const(0), Const(players - 1))
        t = self.read_type(node)
        if isinstance(t, IntType):              # `per: 0..N-1` with N a constant is a fixed size
            t = IntType(fold(t.lo), fold(t.hi))
        if isinstance(t, IntType) and (params_of(t.lo) or params_of(t.hi)):
            self.sink.error("an array's size cannot depend on a parameter", node.span,
                            hint="use constants, or 'player'")
            return None
        if isinstance(t, BoolType):
            self.sink.error("arrays are indexed by player, an enum or lo..hi, not bool", node.span,
                            hint="per: player, per: SomeEnum or per: 1..4")
            return None
        return t

    def read_dims(self, node: Node, players: int) -> tuple[IntType | EnumType, ...] | None:
        """`per: [player, Zone]`: the two index domains of a 2-D array."""
        items = node.elements()
        if len(items) != 2:
            self.sink.error(f"per: lists the index domains of a 2-D array: two, found {len(items)}", node.span,
                            hint="e.g. per: [player, Zone]; one domain is written per: player")
            return None
        dims = [self.read_index(item, players) for item in items]
        if dims[0] is None or dims[1] is None:
            return None
        return dims[0], dims[1]

    def read_variables(self, phase_enum: EnumType | None, players: int) -> list[Variable]:
        out: list[Variable] = []
        if phase_enum is not None:
            out.append(Variable(PHASE_VAR, phase_enum, init=(Const(0, enum=PHASE_ENUM),), implicit=True,
                                doc="the current phase or step"))
            out.append(Variable(ACTIVE_VAR, IntType(Const(0), Const(players - 1)), init=(Const(0),),
                                implicit=True, doc="the active player"))
            self.names.update({PHASE_VAR: None, ACTIVE_VAR: None})
        node = self.root.get("variables")
        for name, v in node.items() if node else []:
            if not self.name_ok(name, v.key_span, self.names, "variable"):
                continue
            type_node = v.child("type") if v.is_map and v.get("type") is not None else v
            if isinstance(type_node.value, str) and sequences.SEQ_RE.match(type_node.value):
                out.extend(self.read_sequence(name, v, type_node, players))
                continue
            var = self.read_variable(name, v, players)
            if var is not None:
                out.append(var)
        labels.check_unique(out, self.label_spans, lambda message, span, hint: self.sink.error(message, span, hint=hint))
        return out

    def read_sequence(self, name: str, v: Node, type_node: Node, players: int) -> list[Variable]:
        """`type: seq[T, 0..N]`: the array and the length variable (`sequences.declare`)."""
        if v.is_map:
            check_keys(v, VAR_KEYS, f"variable {name}", self.sink, ("type",))
        text = str(type_node.value)
        m = sequences.SEQ_RE.match(text)
        assert m is not None
        origin = type_node.origin()
        parts = m.group(1).rsplit(",", 1)
        hint = "e.g. type: seq[Card, 0..8] (an element type and the capacity 0..N; quote it inside {...})"
        if len(parts) != 2:
            self.sink.error(f"a sequence type names its elements and its capacity: '{text.strip()}'",
                            type_node.span, hint=hint)
            return []
        elem_text, cap_text = parts[0].strip(), parts[1]
        cap_at = m.start(1) + len(parts[0]) + 1
        bounds = ExprReader(self.scope, Origin(origin.file, origin.positions[cap_at:]), self.sink,
                            cap_text).read_range()
        elem = IntType(Const(0), Const(players - 1)) if elem_text == "player" else \
            self.type_of_text(parts[0], Origin(origin.file, origin.positions[m.start(1):]), type_node.span) \
            if elem_text else None
        if bounds is None or elem is None:
            if not elem_text:
                self.sink.error("a sequence type needs an element type", type_node.span, hint=hint)
            return []
        lo, hi = fold(bounds[0]), fold(bounds[1])
        if isinstance(lo, Const) and isinstance(hi, Const) and hi.value > MAX_ARRAY:
            self.sink.error(f"sequence {name} holds up to {hi.value:,} elements; at most {MAX_ARRAY:,} are allowed",
                            type_node.span, hint="a state holds counters, not a card list: count cards instead")
            return []
        if not (isinstance(lo, Const) and isinstance(hi, Const)) or lo.value != 0 or hi.value < 1:
            self.sink.error(f"a sequence's capacity is 0..N with a constant N >= 1, not '{cap_text.strip()}'",
                            type_node.span, hint="a sequence starts empty and holds up to N elements: "
                                                 "write seq[Card, 0..8] (sizes never depend on parameters)")
            return []
        for forbidden in ("overflow", "values"):
            if v.is_map and v.get(forbidden) is not None:
                self.sink.error(f"a sequence takes no '{forbidden}:'", v.child(forbidden).span,
                                hint="pushing onto a full sequence is a model error"
                                if forbidden != "values" else "name the values of its element type: an enum")
                return []
        per, per_player = None, False
        if v.is_map and v.get("per") is not None:         # an array of sequences: one per value of `per`
            node = v.child("per")
            if node.is_list:
                self.sink.error("an array of sequences has one index domain", node.span,
                                hint=f"e.g. per: Colour (one sequence per colour: {name}[c], len({name}[c]))")
                return []
            per = self.read_index(node, players)
            if per is None:
                return []
            rows = type_bounds(per)[1] - type_bounds(per)[0] + 1
            if rows < 1:
                self.sink.error(f"the index (per:) of {name} is empty: no sequence", node.span,
                                hint="write lo..hi with lo <= hi, an enum or player")
                return []
            if rows * hi.value > MAX_ARRAY:      # checked before the rows are made
                self.sink.error(f"{name} is {rows:,} sequences of up to {hi.value:,} elements: {rows * hi.value:,} "
                                f"elements; at most {MAX_ARRAY:,} are allowed", node.span,
                                hint="a state holds counters, not a card list: count cards instead")
                return []
            per_player = str(node.value).strip() == "player"
        var = Variable(name, elem, init=(sequences.first_value(elem),), span=v.key_span,
                       holds_player=elem_text == "player")
        if v.is_map:
            var = self.read_policies(replace(var, doc=str(v.value.get("doc", "")), label=self.read_label(v, name)), v)
        items = self.read_seq_items(var, v.get("init") if v.is_map else None, hi.value)
        length = sequences.length_name(name)
        if not self.name_ok(length, v.key_span, self.names, "variable"):
            return []
        return list(sequences.declare(replace(var, init=(None,)), hi.value, items, per, per_player))

    def read_seq_items(self, var: Variable, node: Node | None, capacity: int) -> list[Expr | None]:
        """A sequence's `init`: a list of its elements, bottom first (absent: empty)."""
        if node is None:
            return []
        if not node.is_list or len(node.value) > capacity:
            self.sink.error(f"sequence {var.name} starts with a list of at most {capacity} elements", node.span,
                            hint="bottom first, e.g. init: [] or init: [fireball]")
            return []
        return [self.expr(i, ty_of(var.type)) for i in node.elements()]

    def read_variable(self, name: str, v: Node, players: int) -> Variable | None:
        if isinstance(v.value, str):      # shorthand `x: 0..3`
            t = self.read_type(v)
            return None if t is None else Variable(name, t, span=v.key_span, holds_player=v.value.strip() == "player")
        check_keys(v, VAR_KEYS, f"variable {name}", self.sink, ("type",))
        if not v.is_map or "type" not in v.value:
            return None
        t = self.read_type(v.child("type"))
        if t is None:
            return None
        index: IntType | EnumType | None = None
        dims: tuple[IntType | EnumType, ...] | None = ()
        if v.get("per") is not None and v.child("per").is_list:
            dims = self.read_dims(v.child("per"), players)
            if dims is None:
                return None
            index = IntType(Const(0), Const(flat_size(dims) - 1))
        elif v.get("per") is not None:
            index = self.read_index(v.child("per"), players)
            if index is None:
                return None
        by_player = index is not None and str(v.value["per"]).strip() == "player"
        rows_by_player = bool(dims) and str(v.child("per").elements()[0].value).strip() == "player"
        var = Variable(name, t, index, doc=str(v.value.get("doc", "")), by_player=by_player, dims=dims or (),
                       rows_by_player=rows_by_player, span=v.key_span, label=self.read_label(v, name),
                       holds_player=str(v.value["type"]).strip() == "player")
        if var.label and isinstance(t, BoolType) and (by_player or rows_by_player) and labels.reads_as_a_thing(var.label):
            self.sink.warning(f"variable {name}'s label {var.label!r} names a thing, but a bool's label names the state "
                              f"it is true in: traces would read 'player 0 is {var.label}'", self.label_spans[name],
                              hint="word it as the state, e.g. 'protected' or 'under protection' for 'protection', "
                                   "'has shields' for 'shields'")
        if v.get("values") is not None:
            var = replace(var, value_names=labels.read_value_names(v.child("values"), t, self.param_values,
                                                                   f"variable {name}", self.sink))
        var = replace(var, init=self.read_init(var, v.get("init")))
        return self.read_policies(var, v)

    def read_label(self, v: Node, name: str) -> str:
        """A variable's `label:` (its name in the page's words), "" when it has none."""
        node = v.get("label")
        if node is None:
            return ""
        self.label_spans[name] = node.span
        return labels.read_label(node, f"the label of variable {name}", self.sink) or ""

    def read_init(self, var: Variable, node: Node | None) -> tuple[Expr | None, ...]:
        size = var.size() if var.index is None or _concrete(var.index) else 1
        if not 0 < size <= MAX_ARRAY:           # reported by checks.check_sizes, never materialised
            return ()
        if node is None or node.value is None:
            return (None,) * size
        want = ty_of(var.type)
        if node.is_list and var.dims:
            return self.read_init_rows(var, node, size)
        if node.is_list:
            items = node.elements()
            if len(items) != size:
                self.sink.error(f"{var.name} has {size} elements but init lists {len(items)}", node.span,
                                hint="give one value per element, or a single value for all")
                return (None,) * size
            return tuple(self.element_init(i, want) for i in items)
        return (self.expr(node, want),) * size

    def element_init(self, node: Node, want: str) -> Expr | None:
        """One element's `init` in a list: an expression, or `null` for any value."""
        return None if node.value is None else self.expr(node, want)

    def read_init_rows(self, var: Variable, node: Node, size: int) -> tuple[Expr | None, ...]:
        """A 2-D array's init as a list of rows (one list per value of the first index)."""
        rows = node.elements()
        lo1, hi1 = type_bounds(var.dims[0])
        width = size // (hi1 - lo1 + 1)
        if len(rows) != hi1 - lo1 + 1 or any(not r.is_list or len(r.value) != width for r in rows):
            self.sink.error(f"{var.name} is {hi1 - lo1 + 1} by {width}: init lists one row of {width} values "
                            f"for each of the {hi1 - lo1 + 1} values of its first index", node.span,
                            hint="e.g. init: [[1, 0, 0], [1, 0, 0]], or a single value for all")
            return (None,) * size
        want = ty_of(var.type)
        return tuple(self.element_init(i, want) for r in rows for i in r.elements())

    def read_policies(self, var: Variable, v: Node) -> Variable:
        out = var
        if v.get("overflow") is not None:
            text = str(v.value["overflow"])
            try:
                out = replace(out, overflow=Overflow(text))
            except ValueError:
                self.sink.error(f"unknown overflow policy '{text}'", v.child("overflow").span,
                                hint="one of unspecified, clamp, forbid")
        if v.get("overflow_rule") is not None:
            out = replace(out, overflow_rule=self.citation(v.child("overflow_rule")))
        if v.get("reset") is not None:
            text = str(v.value["reset"])
            if text not in ("turn", "own_turn"):
                self.sink.error(f"unknown reset '{text}'", v.child("reset").span, hint="reset: turn or own_turn")
            elif text == "own_turn" and (not var.by_player or len(set(out.init)) != 1):
                self.sink.error("reset: own_turn needs an array per: player with one init value", v.child("reset").span,
                                hint="each player's element goes back to it when their next turn starts")
            elif any(i is None for i in out.init):
                self.sink.error(f"{var.name} resets at the end of the turn but has no init", v.child("reset").span,
                                hint="give it an init value to go back to")
            else:
                out = replace(out, reset=Reset(text))
        return out

    # ---- actions
    def read_actions(self, node: Node | None, phased: bool) -> list[Action]:
        if node is None:
            return []
        if not node.is_list:
            self.sink.error("actions must be a list", node.span, hint="each item starts with '- name: ...'")
            return []
        out = [self.read_action(a, phased) for a in node.elements()]
        return [a for a in out if a is not None]

    def read_action(self, a: Node, phased: bool) -> Action | None:
        """The action under the chosen variant (None when absent from it); every variant is checked."""
        check_keys(a, ACTION_KEYS, "an action", self.sink, ("name",))
        if not a.is_map or "name" not in a.value:
            return None
        name = str(a.value["name"])
        only = self.action_variants(a)
        if not self.action_name_ok(name, a.child("name").span, only):
            return None
        must, once_ = a.value.get("must"), ""
        group = self.once_group(a.child("must")) if isinstance(must, dict) else None
        modality = Modality.MUST if must is True or must == once.ONCE else Modality.MAY
        if must is not None and not isinstance(must, bool | dict) and must != once.ONCE:
            self.sink.error(f"must is true, false, once or {{once: group}}, not '{must}'", a.child("must").span,
                            hint="must: once: taken once in each visit of its phase, which cannot be left before; "
                                 "must: {once: G}: one action of the group G so")
        elif must == once.ONCE or group is not None:
            written = "must: once" if group is None else "must: {once: ...}"
            if a.get("phase") is None:
                self.sink.error(f"{written} needs the action's phase: it is taken once in each visit of it",
                                a.child("must").span, hint="add phase: P (or a list of phases)")
            elif a.get("modality") is not None:
                self.sink.error(f"{written} is the action's modality: it takes no modality: besides",
                                a.child("modality").span, hint="keep one of them")
            else:
                once_ = once.flag_name(name if group is None else group)
        if a.get("modality") is not None:
            try:
                modality = Modality(str(a.value["modality"]))
            except ValueError:
                self.sink.error(f"unknown modality '{a.value['modality']}'", a.child("modality").span,
                                hint="one of must, may, must-not")
        choices, local = self.read_choices(a.get("choose"))
        guards = {k: self.expr(n, BOOL, local)
                  for k, n in self.per_variant(a.get("when"), f"the guard of {name}").items()}
        self.reading_action = True
        effects = {k: self.read_effects(n, local, f"action {name}")
                   for k, n in self.per_variant(a.get("do"), f"the effects of {name}").items()}
        self.reading_action = False
        actor = self.expr(a.child("by"), INT, local) if a.get("by") is not None else \
            (Var(ACTIVE_VAR) if phased else None)
        chooser = self.read_chooser(a, local, actor)
        phase, phases = self.action_phases(a.get("phase"))
        if only is not None and self.variant not in only:
            return None
        return Action(name, guards.get(None, guards.get(self.variant)) or TRUE,
                      tuple(effects.get(None, effects.get(self.variant, []))), tuple(choices), modality,
                      phase, actor, self.citation(a.get("rule")), doc=str(a.value.get("doc", "")),
                      span=a.child("name").span, phases=phases, chooser=chooser, once=once_,
                      once_group=group if once_ and group else "")

    def once_group(self, must: Node) -> str | None:
        """The group of `must: {once: G}` (None, reported, when the mapping is not that)."""
        group = must.value.get("once")
        if set(must.value) != {"once"} or not isinstance(group, str) or not NAME_RE.match(group):
            self.sink.error("must: {once: G} names the group of actions taken once between them", must.span,
                            hint="write must: {once: play} on each action of the group (one name, a word)")
            return None
        return group

    def read_chooser(self, a: Node, local: Scope, actor: Expr | None) -> Expr | str | None:
        """`chooser: rules | random | unstated | <player expression>`; by default the actor (a written `by:`,
        else the active player) picks."""
        node = a.get("chooser")
        if node is None:
            return actor
        if node.value == RULES:
            return RULES
        if a.get("choose") is None:
            self.sink.error("chooser says who picks the values of choose:, and this action has none", node.span,
                            hint="add choose: {...}; only chooser: rules (the rules take the action) needs none")
            return None
        if node.value in (RANDOM, UNSTATED):
            return str(node.value)
        return self.expr(node, INT, local)

    def action_phases(self, node: Node | None) -> tuple[str | None, tuple[str, ...]]:
        """`phase: A` (checked with the other names later), `phase: [A, B]` or `phase: {not: [A]}`."""
        if node is None:
            return None, ()
        if not node.is_list and not node.is_map:
            return str(node.value), ()
        negated = node.is_map
        if negated:
            check_keys(node, ("not",), "a phase set", self.sink, ("not",))
            if "not" not in node.value:
                return None, ()
            node = node.child("not")
        names = []
        for item in node.elements() if node.is_list else [node]:
            name = str(item.value)
            if name in self.phase_parents:
                self.sink.error(f"phase '{name}' has steps; list its steps", item.span,
                                hint=f"its steps: {', '.join(self.phase_parents[name])}")
            elif name not in self.leaves:
                self.sink.error(f"unknown phase '{name}'", item.span, hint=suggest(name, self.leaves, "leaf phases"))
            else:
                names.append(name)
        chosen = [leaf for leaf in self.leaves if (leaf in names) != negated]
        if not chosen and names:
            self.sink.error("this phase set leaves no phase", node.span, hint="the action could never be taken")
        if len(chosen) == 1:
            return chosen[0], ()
        return None, tuple(chosen)

    def action_variants(self, a: Node) -> frozenset[str] | None:
        node = a.get("variants")
        if node is None:
            return None
        if not node.is_list:
            self.sink.error("variants must be a list of variant names", node.span, hint="e.g. variants: [strict]")
            return frozenset()
        for item in node.elements():
            if str(item.value) not in self.variant_names:
                self.sink.error(f"unknown variant '{item.value}'", item.span,
                                hint=suggest(str(item.value), self.variant_names, "declared variants"))
        return frozenset(str(x) for x in node.value)

    def action_name_ok(self, name: str, span: Span | None, only: frozenset[str] | None) -> bool:
        """Action names are unique, except between actions of disjoint variants."""
        previous = self.action_names.get(name)
        if previous is not None and (only is None or previous[1] is None or only & previous[1]):
            self.sink.error(f"duplicate action '{name}'", span, notes=(("first declared here", previous[0]),),
                            hint="rename one, or give them disjoint 'variants:' lists")
            return False
        if previous is None and not NAME_RE.match(name):
            self.sink.error(f"'{name}' is not a valid action name", span,
                            hint="names are letters, digits and underscores, starting with a letter")
            return False
        if previous is None and self.builtin(name, span, "action"):
            return False
        merged = only if previous is None or only is None or previous[1] is None else only | previous[1]
        self.action_names[name] = (span, merged)
        return True

    def read_choices(self, node: Node | None) -> tuple[list[Choice], Scope]:
        if node is None:
            return [], self.scope
        if not node.is_map:
            self.sink.error("choose must map names to domains", node.span, hint="e.g. choose: {n: 1..2}")
            return [], self.scope
        out, local = [], {}
        for name, d in node.items():
            if self.builtin(name, d.key_span, "choice"):
                continue
            named, at = (d.get("values") if d.is_map else None), d.key_span
            if d.is_map:            # the long form {type: 0..2, values: [attack, defend, pass]}
                check_keys(d, CHOICE_KEYS, f"choice {name}", self.sink, ("type",))
                if d.get("type") is None:
                    continue
                d = d.child("type")
            t = IntType(Const(0), Const(self.scope.players - 1)) if str(d.value).strip() == "player" \
                else self.read_type(d)
            if t is not None:
                names = () if named is None else \
                    labels.read_value_names(named, t, self.param_values, f"choice {name}", self.sink)
                out.append(Choice(name, t, at, value_names=names))
                local[name] = ty_of(t)
        return out, self.scope.with_locals(local)

    def read_effects(self, node: Node | None, scope: Scope, what: str) -> list[Assign]:
        if node is None:
            return []
        if isinstance(node.value, str) or node.is_list:      # blocks of effects used by name
            return self.effect_blocks.read(node, scope, what)
        if not node.is_map:
            self.sink.error(f"the effects of {what} must map targets to values", node.span,
                            hint="e.g. do: {hand[active]: hand[active] + 1}, or a block of effects by name")
            return []
        out = []
        targets: set[str] = set()
        for key, value in node.items():
            loop = FOR_RE.match(key)
            if loop is not None:
                for a in self.read_for_each(key, loop, value, scope, what):
                    written = pretty(a.target).replace(" ", "")
                    if written in targets:
                        self.sink.error(f"{what} assigns {pretty(a.target)} twice", value.key_span,
                                        hint="each element may be assigned once per effect block")
                        continue
                    targets.add(written)
                    out.append(a)
                continue
            seq, row = self.read_seq_target(key, value, scope)
            if seq is not None:
                if seq.name in targets or seq.name + "[]" in targets:
                    self.sink.error(f"{what} changes {'a sequence of ' if seq.dims else 'sequence '}{seq.name} twice",
                                    value.key_span, hint="one push, pop or element write per sequence (per array "
                                                         "of sequences) in an effect block")
                    continue
                if row is not None or not seq.dims:
                    out.extend(self.read_seq_effect(seq, value, scope, row))
                targets.add(seq.name)
                continue
            target = self.read_target(key, value, scope)
            if target is None:
                continue
            if self.scope.variables[target.name].seq_length is not None and target.name in targets:
                self.sink.error(f"{what} changes sequence {target.name} twice", value.key_span,
                                hint="one push, pop or element write per sequence in an effect block")
                continue
            if self.scope.variables[target.name].seq_length is not None:
                targets.add(target.name + "[]")
            if target.name in self.lengths:
                self.sink.error(f"{target.name} is the length of sequence {self.lengths[target.name]}: it changes "
                                f"by push and pop", value.key_span,
                                hint=f"write {self.lengths[target.name]}: push(v) or {self.lengths[target.name]}: pop")
                continue
            if key.replace(" ", "") in targets:
                self.sink.error(f"{what} assigns {key} twice", value.key_span, hint="merge the two assignments")
                continue
            targets.add(key.replace(" ", ""))
            if target.name == ACTIVE_VAR and self.scope.variables[ACTIVE_VAR].implicit:
                self.sink.error("'active' changes only when the turn passes", value.key_span,
                                hint="say who plays next with the model's next_player: expression, e.g. "
                                     "next_player: \"if skip then (active + 2) % PLAYERS else (active + 1) % PLAYERS\" "
                                     "(docs/LANGUAGE.md, \"Who plays next\"); next: [{to: TURN_END}] ends a turn early")
                continue
            if value.is_map:
                out.extend(self.read_lasting(target, value, scope, what))
                continue
            rhs = self.expr(value, ty_of(self.scope.variables[target.name].type), scope)
            if rhs is not None:
                out.append(Assign(target, rhs, span=value.key_span))
        return out

    def read_lasting(self, target: Var | Index, value: Node, scope: Scope, what: str) -> list[Assign]:
        """`x: {value: v, until: next_turn_of(p)}` (see `durations`)."""
        if self.variant_names and set(value.value) <= set(self.variant_names):
            self.sink.error("an effect's value is one expression, not one per reading", value.span,
                            hint=PER_READING_HINT)
            return []
        check_keys(value, ("value", "until"), "a lasting effect", self.sink, ("value", "until"))
        if "value" not in value.value or "until" not in value.value:
            return []
        var = self.scope.variables[target.name]
        until = value.child("until")
        text = until.value if isinstance(until.value, str) else ""
        if not durations.DURATION_RE.search(text):
            self.sink.error(f"unknown duration '{until.value}'", until.span,
                            hint="the duration is next_turn_of(p): the value lasts until player p's next turn "
                                 "starts, e.g. until: next_turn_of(active); or if c then next_turn_of(p) else "
                                 "forever")
            return []
        if not self.phased:
            self.sink.error("until: next_turn_of(p) needs turns: this model has no phases", until.span,
                            hint="declare phases, or model the duration with a variable of your own")
            return []
        if not self.reading_action:
            self.sink.error(f"until: is for the effects of actions (in {what} it is not)", until.span,
                            hint="a duration starts when an action sets it; write it in the action's do:")
            return []
        if any(i is None for i in var.init) or var.seq_length is not None or var.name in self.lengths:
            self.sink.error(f"{var.name} cannot take a duration: its value goes back to its init at the end, "
                            f"and {'it has none' if any(i is None for i in var.init) else 'it is a sequence'}",
                            until.span, hint=f"give {var.name} an init value (not a sequence)")
            return []
        player = ExprReader(scope, until.origin(), self.sink, text).read_duration()
        rhs = self.expr(value.child("value"), ty_of(var.type), scope)
        if player is None or rhs is None:
            return []
        self.lasting.setdefault(var.name, value.key_span)
        return durations.lasting(target, rhs, player, value.key_span)

    def read_seq_target(self, key: str, value: Node, scope: Scope) -> tuple[Variable | None, Expr | None]:
        """The sequence a `do:` key pushes onto or pops: `s` (row None), or `s[d]` of an array of sequences
        (row `d`; a bare `s` is an error, given with no row); (None, None) for any other key."""
        m = TARGET_RE.match(key)
        if m is None:
            return None, None
        seq = self.scope.variables.get(m.group(1))
        if seq is None or seq.seq_length is None or (m.group(2) is not None and (not seq.dims or "[" in m.group(2))):
            return None, None
        if m.group(2) is None:
            if seq.dims:
                self.sink.error(f"{seq.name} is an array of sequences: say which one changes", value.key_span,
                                hint=f"e.g. {seq.name}[d]: push(v), {seq.name}[d]: pop")
            return seq, None
        origin = value.key_origin(key)
        row = ExprReader(scope, Origin(origin.file, origin.positions[m.start(2):]), self.sink,
                         m.group(2)).read(ty_of(seq.dims[0]))
        return seq, None if row is None else row[0]

    def read_seq_effect(self, seq: Variable, value: Node, scope: Scope, row: Expr | None = None) -> list[Assign]:
        """`s: push(v)` or `s: pop`; `s[d]: push(v)` or `s[d]: pop` of an array of sequences (row `d`)
        (see `sequences`)."""
        text = value.value if isinstance(value.value, str) else ""
        origin = value.origin()
        when: Expr | None = None
        guarded = sequences.WHEN_RE.match(text)
        if guarded is not None:
            cond = ExprReader(scope, Origin(origin.file, origin.positions[guarded.start(2):]), self.sink,
                              guarded.group(2)).read(BOOL)
            if cond is None:
                return []
            text, when = guarded.group(1), cond[0]
        pushed = sequences.PUSH_RE.match(text)
        if pushed is not None:
            inner = ExprReader(scope, Origin(origin.file, origin.positions[pushed.start(1):]), self.sink,
                               pushed.group(1)).read(ty_of(seq.type))
            return [] if inner is None else sequences.push(seq, inner[0], value.key_span, when, row)
        if sequences.POP_RE.match(text):
            return sequences.pop(seq, value.key_span, when, row)
        which = f"{seq.name}[d]" if seq.dims else seq.name
        self.sink.error(f"sequence {which} changes by push(v) or pop, not '{value.value}'", value.span,
                        hint=f"e.g. {which}: push(x) puts x on top, {which}: pop takes the top off "
                             f"(`pop if c`: only where c holds); {which}[i]: v rewrites element i")
        return []

    def read_for_each(self, key: str, loop: re.Match, value: Node, scope: Scope, what: str) -> list[Assign]:
        """`for p in player: {...}` (or an enum, or lo..hi with constant bounds): the block's
        assignments once per value of p (unrolled: the engines see plain assignments)."""
        name = loop.group(1)
        if not value.is_map:
            self.sink.error(f"'{loop.group(0).strip()}' must map targets to values", value.key_span,
                            hint='e.g. for p in player: {"mana[p]": 2} (an indexed key quoted, or in block style)')
            return []
        if self.builtin(name, value.key_span, "loop variable"):
            return []
        values = self.loop_domain(key, loop, value)
        if values is None:
            return []
        inner = self.read_effects(value, scope.with_locals({name: values[1]}), what)
        if len(values[0]) * len(inner) > MAX_SLOTS:      # nested loops: each level checked before it unrolls
            self.sink.error(f"'{loop.group(0).strip()}' unrolls into {len(values[0]) * len(inner):,} assignments; at "
                            f"most {MAX_SLOTS:,} (the state's slots) are allowed", value.key_span,
                            hint="an effect block assigns each element at most once")
            return []
        out = []
        for v in values[0]:
            def fix(e: Expr, v=v) -> Expr:
                return fold(substitute(e, {name: v}))
            for a in inner:
                target = Index(a.target.name, fix(a.target.index), span=a.target.span) \
                    if isinstance(a.target, Index) else a.target
                out.append(Assign(target, fix(a.value), span=a.span))
        return out

    def loop_domain(self, key: str, loop: re.Match, value: Node) -> tuple[list[Const], str] | None:
        """The values of a `for` loop's domain (player, an enum, or lo..hi folding to constants)."""
        text = loop.group(2)
        if text == "player":
            return [Const(i) for i in range(self.scope.players)], INT
        if text in self.scope.enums:
            enum = self.scope.enums[text]
            return [Const(i, enum=text) for i in range(len(enum.values))], f"enum:{text}"
        origin = value.key_origin(key)
        inner = Origin(origin.file, origin.positions[loop.start(2):])
        bounds = ExprReader(self.scope, inner, self.sink, text).read_range() if ".." in text else None
        if bounds is not None:
            lo, hi = fold(bounds[0]), fold(bounds[1])
            if isinstance(lo, Const) and isinstance(hi, Const):
                if hi.value - lo.value >= MAX_ARRAY:       # checked before anything is unrolled
                    self.sink.error(f"a for loop over {hi.value - lo.value + 1:,} values; at most {MAX_ARRAY:,} are "
                                    "allowed", value.key_span, hint="loop over an array's index range")
                    return None
                return [Const(i) for i in range(lo.value, hi.value + 1)], INT
        self.sink.error(f"a for loop ranges over player, an enum or constant lo..hi, not '{text}'", value.key_span,
                        hint="e.g. for p in player:, for z in Zone:, for i in 0..N-1:")
        return None

    def read_target(self, key: str, value: Node, scope: Scope) -> Var | Index | None:
        """`x` or `a[i]` written as a key of `do:`."""
        span = value.key_span
        m = TARGET_RE.match(key)
        if key in self.variant_names:
            self.sink.error(f"cannot assign to '{key}': a reading, not a variable", span, hint=PER_READING_HINT)
            return None
        if not m or m.group(1) not in self.scope.variables:
            self.sink.error(f"cannot assign to '{key}': not a variable", span,
                            hint=suggest(m.group(1), list(self.scope.variables), "variables") if m else
                            "targets are variables (x) or array elements (a[i])")
            return None
        var = self.scope.variables[m.group(1)]
        if var.dims or (var.seq_length is not None and m.group(2) is not None):
            # `x[i][j]` or a sequence's `s[i]`: read as an expression, which places the index
            out = ExprReader(scope, value.key_origin(key), self.sink, key).read()
            return out[0] if out is not None and isinstance(out[0], Index) else None
        if m.group(2) is None:
            if var.index is not None:
                self.sink.error(f"'{var.name}' is an array; assign one element", span, hint=f"{var.name}[i]: ...")
                return None
            return Var(var.name, span=span)
        if var.index is None:
            self.sink.error(f"'{var.name}' is not an array", span, hint=f"write '{var.name}: ...'")
            return None
        origin = value.key_origin(key)
        inner = ExprReader(scope, Origin(origin.file, origin.positions[m.start(2):]), self.sink, m.group(2))
        out = inner.read(ty_of(var.index))
        return None if out is None else Index(var.name, out[0], span=span)

    def read_turn_order(self) -> tuple[Assign, ...]:
        """Who plays next: `next_player:` (none: the next seat), passing over the players `skip:` names."""
        named = self.read_next_player()
        self.skip = self.read_skip()
        if self.skip is None:
            return named
        players = self.scope.players
        seat = App(Op.MOD, (App(Op.ADD, (Var(ACTIVE_VAR), Const(1))), Const(players)))
        first = named[0].value if named else seat
        return (Assign(Var(ACTIVE_VAR), turn_change.skipping(players, first, self.skip, rounds.PLAYER),
                       span=self.root.child("skip").span),)

    def read_skip(self) -> Expr | None:
        """`skip: "out[p]"`: the players the turn passes over, a condition on the player `p` (or one per
        reading, `false` in a reading that passes over nobody); every reading's is read and checked."""
        read = {k: self.read_skip_condition(n, k is not None)
                for k, n in self.per_variant(self.root.get("skip"), "skip").items()}
        return read.get(None, read.get(self.variant))

    def read_skip_condition(self, node: Node, reading: bool) -> Expr | None:
        hint = 'e.g. skip: "out[p]": the turn passes over a player knocked out'
        if reading and node.value is False:
            return None                 # this reading passes over nobody
        if not isinstance(node.value, str):
            self.sink.error("skip is one condition on the player p, written as text (or one per reading, keyed by "
                            "every reading's name)", node.span, hint=hint)
            return None
        cond = self.expr(node, BOOL, self.scope.with_locals({rounds.PLAYER: INT}))
        if cond is None:
            return None
        if rounds.PLAYER not in free_locals(cond):
            self.sink.error(f"skip is a condition on the player p, and '{node.value}' does not read p", node.span,
                            hint=hint + ("; write false for a reading that passes over nobody" if reading else ""))
            return None
        return cond

    def read_next_player(self) -> tuple[Assign, ...]:
        """`next_player:`: the player whose turn `pass turn` starts, read on the state before the turn ends."""
        read = {k: self.read_player_expr(n) for k, n in self.per_variant(self.root.get("next_player"),
                                                                          "next_player").items()}
        return read.get(None, read.get(self.variant, ()))

    def read_player_expr(self, node: Node) -> tuple[Assign, ...]:
        """One reading's `next_player:` expression, as the effect active := it."""
        hint = "e.g. next_player: \"if skip then (active + 2) % PLAYERS else (active + 1) % PLAYERS\""
        if node.is_map or node.is_list:
            self.sink.error("next_player is one expression (or one per reading, keyed by every reading's name)",
                            node.span, hint=hint)
            return ()
        if isinstance(node.value, bool) or not isinstance(node.value, (int, str)):
            self.sink.error("next_player is a player: an integer expression from 0 to PLAYERS - 1", node.span, hint=hint)
            return ()
        read = self.reader(node, None).read(None) if isinstance(node.value, str) else (Const(node.value), INT)
        if read is None:
            return ()
        value, ty = read
        if ty != INT:
            self.sink.error(f"next_player is a player, found {ty_words(ty)}", node.span, hint=hint)
            return ()
        if isinstance(value, Const) and not 0 <= value.value < self.scope.players:
            self.sink.error(f"next_player is player {value.value}; the players are 0 to {self.scope.players - 1}",
                            node.span, hint=hint)
            return ()
        return (Assign(Var(ACTIVE_VAR), value, span=node.span),)

    def read_rounds(self, model: Model, blocks: TurnBlocks) -> Model:
        """Where `next_player:` changes the order of play, a model with a `round_end:` block keeps who has
        played this round (`rounds`); claims on rounds need that (`properties`). `in_round:` says which
        players a round waits for (a condition on `p`: those still in)."""
        in_round = self.root.get("in_round")
        if self.root.get("next_player") is None and self.root.get("skip") is None:     # (in every reading)
            if in_round is not None:
                self.sink.error("in_round: says which players a round waits for where next_player: or skip: changes "
                                "the order, and this model plays in seat order (a round ends with the last seat's turn)",
                                in_round.key_span, hint="say which players the turn passes over with skip: (e.g. "
                                "skip: \"out[p]\"), or drop in_round:")
            return model
        model = replace(model, order_changes=True)
        node = self.root.get("round_end")
        if node is None:
            if in_round is not None:
                self.sink.error("in_round: says which players a round waits for, and this model keeps no rounds",
                                in_round.key_span, hint="add round_end: {} (or the effects of a round's end)")
            return model
        if model.symmetry is not None:
            self.sink.error("symmetry: players does not hold: round_end: rounds tell the players apart",
                            self.root.child("round_end").span, hint="remove symmetry: players, or round_end")
            return model
        if not self.name_ok(rounds.PLAYED, node.span, self.names, "variable"):
            return model
        still_in = None if self.skip is None else neg(self.skip)     # a round waits for the players not skipped
        if in_round is not None:
            still_in = self.expr(in_round, BOOL, self.scope.with_locals({rounds.PLAYER: INT}))
            if still_in is None:
                return model
        return rounds.keep_rounds(model, still_in)

    def effects_block(self, key: str) -> tuple[Assign, ...]:
        return self.effects_per_reading(self.root.get(key), self.scope, key, judged=key)

    def effects_per_reading(self, node: Node | None, scope: Scope, what: str,
                            judged: str | None = None) -> tuple[Assign, ...]:
        """A block of effects (`turn_end`, `on_enter`, ...), or one per reading (`{strict: {...}, loose:
        {...}}`, every reading's checked): the chosen reading's. With `judged`, the block is kept under that
        name for the check of two writes naming one element (`aliasing`), once (a block of phase rules
        several phases use is one block)."""
        nodes = self.per_variant(node, f"{what}")
        read = {k: self.read_effects(n, scope, what) for k, n in nodes.items()}
        chosen = nodes.get(None, nodes.get(self.variant))
        if judged is not None and chosen is not None and all(b.span != chosen.span for b in self.turn_blocks):
            self.turn_blocks.append(aliasing.Writes(judged, tuple(read.get(None, read.get(self.variant, []))),
                                                    span=chosen.span))
        return tuple(read.get(None, read.get(self.variant, [])))

    # ---- lists
    def name_list(self, key: str) -> tuple[str, ...]:
        node = self.root.get(key)
        if node is None:
            return ()
        if not node.is_list:
            self.sink.error(f"{key} must be a list of names", node.span, hint=f"e.g. {key}: [a, b]")
            return ()
        return tuple(str(x) for x in node.value)

    def read_ordered(self) -> tuple[tuple[str, str], ...]:
        node = self.root.get("ordered")
        out = []
        for item in node.elements() if node else []:
            if not item.is_list or len(item.value) != 2:
                self.sink.error("each ordered entry is a pair [first, second]", item.span,
                                hint="e.g. ordered: [[reap, heal]]")
                continue
            out.append((str(item.value[0]), str(item.value[1])))
        return tuple(out)

    def read_acks(self) -> tuple[Acknowledgement, ...]:
        node = self.root.get("acknowledge")
        out = []
        for item in node.elements() if node else []:
            check_keys(item, ("kind", "subject", "reason"), "an acknowledgement", self.sink,
                       ("kind", "subject", "reason"))
            if item.is_map and {"kind", "subject", "reason"} <= set(item.value):
                out.append(Acknowledgement(str(item.value["kind"]), str(item.value["subject"]),
                                           str(item.value["reason"]), item.span))
        return tuple(out)


def _concrete(t) -> bool:
    return isinstance(t, EnumType) or (isinstance(t.lo, Const) and isinstance(t.hi, Const))


def check_model(path: str, params: dict[str, int | None] | None = None,
                variant: str | None = None, edit: Edit | None = None) -> tuple[Model, list[Diagnostic]]:
    """Load a model and return it with its warnings (errors raise ModelError); `edit`, when
    given, rewrites the model as written before the phase sugar is expanded."""
    loader = Loader(str(path), params, variant, edit)
    model = loader.load()
    return model, loader.sink.diagnostics


def load_model(path: str, params: dict[str, int | None] | None = None, variant: str | None = None,
               edit: Edit | None = None) -> Model:
    """Load a model file into the IR (parameters set, not yet substituted; see `Model.instantiate`)."""
    return check_model(path, params, variant, edit)[0]
