"""Named blocks of phase rules: `phase_rules: {NAME: {on_enter, exit_when, next, rule, ...}}`,
applied to a phase (or a step) with `use: NAME` or `use: [A, B]`.

A phase that uses blocks has each rule the blocks and the phase itself give, in the order written
(the blocks of `use:` first, each after the blocks it uses in turn, the phase's own keys last):

- `on_enter`: every source's effects, one block; where two assign one element the later wins
  (the phase's own over a block's);
- `exit_when`: every source's condition must hold;
- `mandatory`, `rule`, `doc`, and `next`/`next_any` (one slot): the last source that gives it.

A block may use other blocks, not itself (directly or through others); blocks nest at most
MAX_DEFINITION_NESTING deep and one phase applies at most MAX_RULE_BLOCKS of them, so a hostile
chain can neither recurse nor multiply without end. A block applied twice to one phase counts
once (its first place). Each value keeps its position in the file, so an error in a block points
into the block.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ruamel.yaml.comments import CommentedMap

from verifier.lang.limits import MAX_DEFINITION_NESTING, MAX_RULE_BLOCKS
from verifier.lang.yaml_source import Node, check_keys, suggest

if TYPE_CHECKING:
    from verifier.diagnostics import DiagnosticSink

RULE_KEYS = ("use", "mandatory", "rule", "doc", "next", "next_any", "on_enter", "exit_when")
COMBINED = ("on_enter", "exit_when")          # every source's applies
NEXT_SLOT = ("next", "next_any")               # one rule: the last source giving either
HINT = "e.g. phase_rules: {priority_step: {on_enter: {passes: 0}, exit_when: \"passes == PLAYERS\"}}, " \
       "and use: priority_step in a phase"


@dataclass(frozen=True)
class Applied:
    """A phase as its blocks and its own keys make it: `node` holds the rules that one source gives
    (each value at its place in the file), `sources` every source in order, the phase itself last."""

    node: Node
    sources: tuple[Node, ...]


class PhaseRules:
    """The model's named blocks of phase rules, and the phases that use them."""

    def __init__(self, sink: DiagnosticSink, node: Node | None):
        self.sink = sink
        self.blocks: dict[str, Node] = {}
        self.used: set[str] = set()
        if node is None:
            return
        if not node.is_map:
            sink.error("phase_rules must map names to blocks of phase rules", node.span, hint=HINT)
            return
        for name, body in node.items():
            check_keys(body, RULE_KEYS, f"block of phase rules {name}", sink)
            if body.is_map:
                self.blocks[name] = body

    def apply(self, phase: Node, name: str) -> Applied:
        """The phase `phase` (named `name`) with the blocks its `use:` names."""
        if not phase.is_map or phase.get("use") is None:
            return Applied(phase, (phase,))
        order: list[str] = []
        self._uses(phase.child("use"), [], order, f"phase {name}", f"phase {name}")
        sources = (*(self.blocks[b] for b in order), phase)
        return Applied(_merged(phase, sources), sources)

    def _uses(self, node: Node, chain: list[str], order: list[str], where: str, phase: str) -> None:
        """Append to `order` the blocks `node` (a name or a list of names, written in `where`) applies to
        `phase`, each after the blocks it uses; a block already applied is not read again."""
        for item in node.elements() if node.is_list else [node]:
            name = str(item.value) if isinstance(item.value, str) else ""
            if name not in self.blocks:
                self.sink.error(f"unknown block of phase rules '{item.value}' in {where}", item.span,
                                hint=suggest(name, list(self.blocks), "blocks of phase rules") if name else HINT)
                continue
            if name in chain:
                self.sink.error(f"block of phase rules {name} uses itself ({' → '.join([*chain, name])})", item.span,
                                hint="a block may use other blocks, never itself")
                continue
            if len(chain) >= MAX_DEFINITION_NESTING:
                self.sink.error(f"block of phase rules {name} is used inside more than {MAX_DEFINITION_NESTING} "
                                "nested blocks", item.span, hint="a chain of blocks, each using the next, is too "
                                                                 "long: shorten it")
                continue
            if name in order:
                continue
            self.used.add(name)
            inner = self.blocks[name].get("use")
            if inner is not None:
                self._uses(inner, [*chain, name], order, f"block of phase rules {name}", phase)
            if len(order) >= MAX_RULE_BLOCKS:
                self.sink.error(f"{phase} applies more than {MAX_RULE_BLOCKS} blocks of phase rules", item.span,
                                hint="a phase applies each block once, and the blocks those use: apply fewer")
                return
            order.append(name)

    def unused(self) -> list[tuple[str, Node]]:
        """The blocks no phase uses, their `use:` checked here (their rules are still checked by the caller)."""
        out = [(name, body) for name, body in self.blocks.items() if name not in self.used]
        for name, body in out:
            if body.get("use") is not None:
                where = f"block of phase rules {name}"
                self._uses(body.child("use"), [name], [], where, where)
        return out


def _merged(phase: Node, sources: tuple[Node, ...]) -> Node:
    """A mapping with, for each rule, the value of the last source that gives it (`next` and
    `next_any` as one), each key and value at its place in the file."""
    out = CommentedMap()
    out.lc.line, out.lc.col = phase.value.lc.line, phase.value.lc.col
    for source in sources:
        given = set(source.value)
        if given & set(NEXT_SLOT):
            for key in NEXT_SLOT:
                out.pop(key, None)
        for key in source.value:
            if key == "use":
                continue
            out.pop(key, None)
            out[key] = source.value[key]
            written = source.child(key)
            assert written.key_span is not None
            out.lc.add_kv_line_col(key, [written.key_span.line - 1, written.key_span.col - 1,
                                         written.span.line - 1, written.span.col - 1])
    return Node(out, phase.span, phase.key_span, phase.source)
