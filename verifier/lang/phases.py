"""The phase sugar: phases and steps become the `phase` variable and ADVANCE / TURN_END actions."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from verifier.diagnostics import Span
from verifier.ir.expr import TRUE, App, Const, Expr, Op, Quant, QuantKind, Var, conj, disj, eq, neg
from verifier.ir.model import (
    ACTIVE_VAR,
    PHASE_ENUM,
    PHASE_VAR,
    Action,
    ActionKind,
    Assign,
    EnumType,
    Modality,
    Model,
    Phase,
    PhaseEdge,
    type_range,
)
from verifier.lang import once, turn_change
from verifier.lang.typecheck import BOOL
from verifier.lang.yaml_source import Node, check_keys, suggest

if TYPE_CHECKING:
    from verifier.lang.loader import Loader

TURN_END = "TURN_END"
PHASE_KEYS = ("name", "mandatory", "rule", "doc", "steps", "next", "next_any", "on_enter", "exit_when", "use")
NEXT_KEYS = ("to", "when", "label", "otherwise")


@dataclass(frozen=True)
class NextEntry:
    """One entry of a `next:` / `next_any:` list, read: where play goes (a phase or TURN_END), the
    condition (None: none written; an `otherwise` entry has none) and the label."""

    to: str
    when: Expr | None
    label: str = ""
    otherwise: bool = False
    span: Span | None = None


@dataclass
class PhaseSpec:
    name: str
    parent: str | None
    mandatory: bool          # as written; a step of an optional phase is skipped with it
    node: Node               # the phase with the rules its blocks give (`phase_rules.Applied`)
    children: list[str] = field(default_factory=list)
    on_enter: tuple[Assign, ...] = ()                # read by `read_phase_rules`
    exit_when: Expr = TRUE
    next: tuple[NextEntry, ...] | None = None         # None: no next:/next_any: (the default successor)
    alternatives: bool = False                        # the entries are alternatives (next_any:, or an old next:)
    sources: tuple[Node, ...] = ()                    # its blocks of phase rules in order, then the phase

    @property
    def is_leaf(self) -> bool:
        return not self.children


def read_phases(loader: Loader, node: Node | None) -> list[PhaseSpec]:
    """The phase tree in document order (parents before their steps)."""
    out: list[PhaseSpec] = []
    if node is None:
        return out
    if not node.is_list:
        loader.sink.error("phases must be a list", node.span, hint="each item starts with '- name: ...'")
        return out

    def visit(items: list[Node], parent: PhaseSpec | None) -> None:
        for item in items:
            check_keys(item, PHASE_KEYS, "a phase", loader.sink, ("name",))
            if not item.is_map or "name" not in item.value:
                continue
            name = str(item.value["name"])
            if not loader.name_ok(name, item.child("name").span, loader.names, "phase"):
                continue
            applied = loader.phase_rules.apply(item, name)
            spec = PhaseSpec(name, parent.name if parent else None,
                             applied.node.value.get("mandatory", True) is not False, applied.node,
                             sources=applied.sources)
            out.append(spec)
            if parent:
                parent.children.append(name)
            steps = item.get("steps")
            if steps is not None:
                visit(steps.elements(), spec)

    visit(node.elements(), None)
    return out


@dataclass(frozen=True)
class TurnBlocks:
    """The effects written for the turn passing: `turn_end`, `round_end`, `on_turn_start`, and
    `next_player` (at most one effect, active := the player whose turn starts; none: the next seat)."""

    turn_end: tuple[Assign, ...] = ()
    round_end: tuple[Assign, ...] = ()
    turn_start: tuple[Assign, ...] = ()
    next_player: tuple[Assign, ...] = ()


def read_phase_rules(loader: Loader, specs: list[PhaseSpec]) -> list[PhaseSpec]:
    """The phase tree with each phase's `on_enter`, `exit_when` and `next:`/`next_any:` read (the variables
    and definitions must be in scope)."""
    by_name = {s.name: s for s in specs}
    out = [replace(s, on_enter=tuple(turn_change.keyed(*(
               loader.effects_per_reading(source.get("on_enter"), loader.scope, f"phase {s.name}",
                                          judged=f"on_enter of phase {s.name}")
               for source in s.sources or (s.node,)))),
                   exit_when=conj(*(loader.expr(source.child("exit_when"), BOOL) or TRUE
                                    for source in s.sources or (s.node,) if source.get("exit_when") is not None)))
           for s in specs]
    for name, block in loader.phase_rules.unused():        # still checked
        loader.effects_per_reading(block.get("on_enter"), loader.scope, f"block of phase rules {name}")
        if block.get("exit_when") is not None:
            loader.expr(block.child("exit_when"), BOOL)
        for key in ("next", "next_any"):
            if block.get(key) is not None:
                _read_next(loader, block.child(key), key == "next_any", by_name)
    for spec in specs:
        if spec.node.get("next") is not None and spec.node.get("next_any") is not None:
            loader.sink.error(f"phase {spec.name} has both next: and next_any:", spec.node.child("next_any").span,
                              hint="next: takes the first entry whose condition holds; next_any: lets play take "
                                   "any of them; keep one")
    read: dict[int, tuple[tuple[NextEntry, ...], bool]] = {}       # per next: node (a YAML alias shares one)
    for i, spec in enumerate(out):
        given = [(spec.node.child(k), k == "next_any") for k in ("next", "next_any") if spec.node.get(k) is not None]
        if given:
            node, alternatives = given[0]
            if id(node.value) not in read:
                read[id(node.value)] = _read_next(loader, node, alternatives, by_name)
            entries, alternatives = read[id(node.value)]
            out[i] = replace(spec, next=entries, alternatives=alternatives)
    return out


def desugar_phases(loader: Loader, model: Model, specs: list[PhaseSpec], blocks: TurnBlocks) -> Model:
    """Guard rule actions by their phase and add the ADVANCE / TURN_END actions (`specs` as read by
    `read_phase_rules`)."""
    by_name = {s.name: s for s in specs}
    leaves = [s.name for s in specs if s.is_leaf]             # in the order play visits them
    model = replace(model, actions=tuple(once.discharged(a) if a.once else a for a in model.actions))
    phase_type = model.var(PHASE_VAR).type
    assert isinstance(phase_type, EnumType)
    values = list(phase_type.values)                          # as declared (an edit may reorder `specs`)

    def at(leaf: str) -> Expr:
        return eq(Var(PHASE_VAR), Const(values.index(leaf), enum=PHASE_ENUM))

    def first_leaf(name: str) -> str:
        while not by_name[name].is_leaf:
            name = by_name[name].children[0]
        return name

    def ancestors(name: str) -> list[str]:
        out, node = [], by_name[name].parent
        while node is not None:
            out.append(node)
            node = by_name[node].parent
        return out

    rule_actions = [replace(a, guard=conj(disj(*(at(p) for p in a.phase_names)), a.guard))
                    if set(a.phase_names) <= set(leaves) and a.phase_names else a for a in model.actions]
    on_enter = {s.name: list(s.on_enter) for s in specs}
    exit_when = {s.name: s.exit_when for s in specs}

    def must_enabled(leaf: str) -> Expr:
        options = []
        for a in model.actions:
            if leaf in a.phase_names and (a.modality is Modality.MUST or a.once_group):
                body = a.guard
                for c in reversed(a.choices):
                    lo, hi = type_range(c.type)
                    body = Quant(QuantKind.EXISTS, c.name, lo, hi, body)
                options.append(body)
        return disj(*options)

    def default_next(leaf: str) -> str:
        i = leaves.index(leaf)
        return leaves[i + 1] if i + 1 < len(leaves) else TURN_END

    def explicit_next(leaf: str) -> PhaseSpec | None:
        """The leaf, or the phase it ends (when it is that phase's last step), that has `next:`/`next_any:`."""
        name: str | None = leaf
        while name is not None:
            spec = by_name[name]
            if spec.next is not None:
                return spec
            parent = spec.parent
            if parent is None or by_name[parent].children[-1] != name:
                return None
            name = parent
        return None

    def opened_by(leaf: str) -> list[str]:
        """The leaf and each ancestor whose first leaf it is (entering the leaf enters them)."""
        out = [leaf]
        while (parent := by_name[out[-1]].parent) is not None and first_leaf(parent) == leaf:
            out.append(parent)
        return out

    def after(name: str) -> str:
        """Where play goes when the phase `name` is over (or skipped): the leaf after its last leaf."""
        while not by_name[name].is_leaf:
            name = by_name[name].children[-1]
        return default_next(name)

    def with_skips(src: str, target: str, skipped: tuple[str, ...] = ()) -> list[tuple[str, list[str]]]:
        """The target and, for each optional phase it would enter from outside, where skipping it leads."""
        out = [(target, list(skipped))]
        if target == TURN_END:
            return out
        for phase in opened_by(target):
            if not by_name[phase].mandatory and phase != src and phase not in ancestors(src):
                out += with_skips(src, after(phase), (*skipped, phase))
        return out

    edges: list[tuple[str, str, Expr, str, list[str], frozenset[str], bool]] = []  # (src, dst, when, label,
    for leaf in leaves:                                           # skipped, phases entered again, otherwise)
        nxt = explicit_next(leaf)
        targets: list[tuple[str, Expr, str, frozenset[str], bool]]
        if nxt is None:
            targets = [(default_next(leaf), TRUE, "", frozenset[str](), False)]
        else:
            targets = _next_targets(nxt, by_name, first_leaf)
        for dst, when, label, again, otherwise in targets:
            for real, skipped in with_skips(leaf, dst):
                _add_edge(edges, (leaf, real, when, label, skipped, again if real == dst else frozenset(), otherwise))

    turn_end_count = sum(1 for e in edges if e[1] == TURN_END)
    per_source: dict[str, int] = {}
    for src, *_ in edges:
        per_source[src] = per_source.get(src, 0) + 1

    implicit: list[Action] = []
    diagram: list[PhaseEdge] = []
    for src, dst, when, label, skipped, again, otherwise in edges:
        guard = conj(at(src), exit_when[src], when, neg(must_enabled(src)))
        ends_turn = dst == TURN_END
        entered = leaves[0] if ends_turn else dst
        effects = _entry_effects(model, entered, ancestors, src, on_enter, ends_turn, blocks, values, again,
                                 once.clearing(model.actions, src))
        if ends_turn:
            name = "pass turn" if turn_end_count == 1 else f"pass turn from {src}"
        else:
            name = f"end {src}" if per_source[src] == 1 else f"end {src} -> {dst}"
        words = label or ("; ".join(f"skip {s}" for s in skipped) if skipped else "")
        src_spec = by_name[src]
        implicit.append(Action(name, guard, effects, (), Modality.MAY, src, Var(ACTIVE_VAR),
                               loader.citation(src_spec.node.get("rule")),
                               ActionKind.TURN_END if ends_turn else ActionKind.ADVANCE,
                               target_phase=entered, doc=words, span=src_spec.node.child("name").span))
        diagram.append(PhaseEdge(src, entered, words or ("next turn" if ends_turn else ""),
                                 guarded=when != TRUE, turn_end=ends_turn, when=when, exit_when=exit_when[src],
                                 otherwise=otherwise))

    _check_reachable(loader, leaves, diagram, by_name)
    phases = tuple(Phase(s.name, s.parent, s.mandatory and all(by_name[a].mandatory for a in ancestors(s.name)),
                         loader.citation(s.node.get("rule")),
                         str(s.node.value.get("doc", "")), s.node.child("name").span) for s in specs)
    model = replace(model, actions=tuple(rule_actions) + tuple(implicit), phases=phases, phase_edges=tuple(diagram))
    return turn_change.first_turn(model, blocks.turn_start, _entering(leaves[0], ancestors, on_enter),
                                  lambda message, span, hint: loader.sink.error(message, span, hint=hint))


def _read_next(loader: Loader, node: Node, alternatives: bool,
               by_name: dict) -> tuple[tuple[NextEntry, ...], bool]:
    """The entries of `next:` (first match wins) or `next_any:` (alternatives), and whether they are
    alternatives (also an old `next:` that can only mean them)."""
    items = node.elements() if node.is_list else []
    if not node.is_list:
        loader.sink.error("next must be a list of entries", node.span, hint="e.g. next: [{to: Clash, when: "
                          '"clash"}, {otherwise: EndOfTurn}]')
    read: list[tuple[NextEntry, Node]] = []
    for i, item in enumerate(items):
        check_keys(item, NEXT_KEYS, "a next entry", loader.sink)
        if not item.is_map:
            continue
        v = item.value
        if ("to" in v) == ("otherwise" in v):
            loader.sink.error("a next entry needs either 'to' or 'otherwise'", item.span,
                              hint="{to: PHASE, when: \"...\"}, or {otherwise: PHASE} as the last entry")
            continue
        if "otherwise" in v and ("when" in v or i != len(items) - 1 or alternatives):
            loader.sink.error("'otherwise' is the last entry of next: and has no condition", item.span,
                              hint="put it last, without when; next_any: has no otherwise")
            continue
        to = str(v.get("to", v.get("otherwise", "")))
        if to != TURN_END and to not in by_name:
            loader.sink.error(f"next names an unknown phase '{to}'", item.span,
                              hint=suggest(to, [*by_name, TURN_END], "phases"))
            continue
        when = loader.expr(item.child("when"), BOOL) if "when" in v else None
        read.append((NextEntry(to, when, str(v.get("label", "")), "otherwise" in v, item.span), item))
    if not alternatives:
        alternatives = _old_reading(loader, node, read)
    return tuple(entry for entry, _ in read), alternatives


def _next_targets(spec: PhaseSpec, by_name: dict, first_leaf) -> list[tuple[str, Expr, str, frozenset[str], bool]]:
    """`spec`'s next entries as (leaf, condition, label, phases entered again, whether it is `otherwise:`);
    under `next:` each entry's condition excludes the earlier entries' conditions."""
    out: list[tuple[str, Expr, str, frozenset[str], bool]] = []
    earlier: list[Expr] = []
    for entry in spec.next or ():
        dst = TURN_END if entry.to == TURN_END else first_leaf(entry.to)
        again = frozenset() if entry.to == TURN_END else _entered_again(entry.to, dst, by_name)
        cond = entry.when if entry.when is not None else TRUE
        out.append((dst, cond if spec.alternatives else conj(cond, *(neg(e) for e in earlier)), entry.label, again,
                    entry.otherwise))
        earlier.append(cond)
    return out


def _old_reading(loader: Loader, node: Node, read: list) -> bool:
    """Whether a `next:` list can only mean alternatives (an entry follows one without condition): then it is
    read as `next_any:`, as before language v2, with a warning; also warn where first-match changes a reading."""
    unconditional = [i for i, (entry, _) in enumerate(read) if entry.when is None]
    if unconditional and unconditional[0] < len(read) - 1:
        loader.sink.warning("deprecated: this next: list is read as next_any: (any entry may be taken), because "
                            "an entry follows one without a condition", node.span,
                            hint="write next_any: to keep this reading; next: takes the first entry whose "
                                 "condition holds (docs/LANGUAGE.md, Phases)")
        return True
    last = read[-1] if read else None
    if last is not None and last[0].when is None and len(read) > 1 and not last[0].otherwise:
        loader.sink.warning("next: takes the first entry whose condition holds: this last entry applies only when "
                            "no earlier condition holds (before language v2 it was always an alternative)",
                            last[1].span, hint="write {otherwise: ...} to say so, or next_any: for the old reading")
    return False


def _entered_again(to: str, leaf: str, by_name: dict) -> frozenset[str]:
    """The phases an explicit `to:` enters even from inside them: `to` and those between it and its first leaf."""
    out, name = {leaf}, leaf
    while name != to:
        name = by_name[name].parent
        out.add(name)
    return frozenset(out)


def _add_edge(edges: list, edge: tuple) -> None:
    """Add a phase edge; two ways between the same phases become one with either condition (an `otherwise:`
    only where both are)."""
    for i, (src, dst, when, label, skipped, again, otherwise) in enumerate(edges):
        if (src, dst) == edge[:2]:
            edges[i] = (src, dst, disj(when, edge[2]), label or edge[3], skipped if len(skipped) <= len(edge[4])
                        else edge[4], again | edge[5], otherwise and edge[6])
            return
    edges.append(edge)


def _entry_effects(model: Model, entered: str, ancestors, src: str, on_enter: dict[str, list[Assign]],
                   ends_turn: bool, blocks: TurnBlocks, values: list[str], again: frozenset[str],
                   leaving: list[Assign]) -> tuple[Assign, ...]:
    """phase := entered, plus what leaving `src` (`leaving`), entering the phase (and, at a turn's end,
    passing the turn: `turn_change`) do."""
    phase = Assign(Var(PHASE_VAR), Const(values.index(entered), enum=PHASE_ENUM))
    if ends_turn:
        seat = Assign(Var(ACTIVE_VAR), App(Op.MOD, (App(Op.ADD, (Var(ACTIVE_VAR), Const(1))), Const(model.players))))
        passing = [phase, *(blocks.next_player or (seat,)), *leaving]
        return turn_change.pass_turn(model, blocks.turn_end, blocks.round_end, blocks.turn_start, passing,
                                     _entering(entered, ancestors, on_enter))
    out: dict[str, Assign] = {PHASE_VAR: phase, **{turn_change.target_key(a): a for a in leaving}}
    left = set(ancestors(src)) | {src}
    for name in reversed([entered] + ancestors(entered)):
        if name not in left or name in again:
            for a in on_enter.get(name, []):
                out[turn_change.target_key(a)] = a
    return tuple(out.values())


def _entering(entered: str, ancestors, on_enter: dict[str, list[Assign]]) -> list[Assign]:
    """The `on_enter` effects of a leaf and every phase around it, outermost first (an inner one wins)."""
    return turn_change.keyed(*(on_enter.get(name, []) for name in reversed([entered] + ancestors(entered))))


def _check_reachable(loader: Loader, leaves: list[str], edges: list[PhaseEdge], by_name) -> None:
    seen, todo = {leaves[0]}, [leaves[0]]
    while todo:
        here = todo.pop()
        for e in edges:
            if e.src == here and e.dst not in seen:
                seen.add(e.dst)
                todo.append(e.dst)
    for leaf in leaves:
        if leaf not in seen:
            loader.sink.error(f"phase {leaf} can never be entered: no phase leads to it",
                              by_name[leaf].node.child("name").span,
                              hint="check the 'next:' lists; by default each phase leads to the one after it")
