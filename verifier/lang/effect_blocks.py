"""Named blocks of effects: a `define:` entry whose body is a mapping of effects (or a list of blocks),
used by name wherever effects are written (`on_enter: refill_hand`, `do: [refill(active), {x: 0}]`).

A use is replaced by the block's assignments, its parameters replaced by the arguments (as a
definition's are in an expression), so the engines see plain effects. A list of uses and mappings
is one simultaneous effect block: an element assigned by two of them is an error. A block reads the
model's names and its parameters only (not the choices of the action that uses it); it may use
other blocks, but not itself, directly or through others. Blocks nest at most
MAX_DEFINITION_NESTING deep, and one use gives at most MAX_SLOTS assignments (a state has no more
elements to assign), so a hostile chain can neither recurse nor multiply without end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from verifier.ir.expr import Index, fold, pretty, substitute
from verifier.ir.model import Assign
from verifier.lang.expressions import ExprReader
from verifier.lang.limits import MAX_DEFINITION_NESTING, MAX_SLOTS
from verifier.lang.typecheck import Scope
from verifier.lang.yaml_source import Node, suggest

if TYPE_CHECKING:
    from verifier.lang.loader import Loader

HINT = "e.g. on_enter: refill_hand, or do: [refill(active), {drawn: true}] with the block under define:"


@dataclass(frozen=True)
class Block:
    name: str
    params: tuple[str, ...]
    body: Node


class EffectBlocks:
    """The model's blocks of effects, and their uses read as assignments."""

    def __init__(self, loader: Loader):
        self.loader = loader
        self.blocks: dict[str, Block] = {}
        self.reading: list[str] = []       # the blocks being read, outermost first (to find a cycle)
        # (block, argument types, read in an action: where `until:` durations are allowed) -> its assignments
        self.bodies: dict[tuple[str, tuple[str, ...], bool], list[Assign]] = {}

    def declare(self, name: str, params: tuple[str, ...], body: Node) -> None:
        self.blocks[name] = Block(name, params, body)

    def read(self, node: Node, scope: Scope, what: str) -> list[Assign]:
        """Effects written as a block's use (`name`, `name(args)`) or a list of uses and mappings."""
        out: list[Assign] = []
        where: dict[str, str] = {}
        for item in node.elements() if node.is_list else [node]:
            if item.is_map:
                got, source = self.loader.read_effects(item, scope, what), "its own effects"
            elif isinstance(item.value, str):
                got, source = self.use(item, scope, what), f"block {item.value.strip()}"
            else:
                self.loader.sink.error(f"the effects of {what} are a mapping, a block's name or a list of those",
                                       item.span, hint=HINT)
                continue
            if len(out) + len(got) > MAX_SLOTS:
                self.loader.sink.error(f"the effects of {what} come to more than {MAX_SLOTS:,} assignments",
                                       item.span, hint="an effect block assigns each element of the state at most "
                                                       "once: blocks that use others several times multiply")
                return []
            for a in got:
                key = pretty(a.target).replace(" ", "")
                if key in where:
                    self.loader.sink.error(f"{what} assigns {pretty(a.target)} twice: in {where[key]} and in "
                                           f"{source}", item.span,
                                           hint="each element may be assigned once per effect block")
                    continue
                where[key] = source
                out.append(a)
        return out

    def use(self, item: Node, scope: Scope, what: str) -> list[Assign]:
        sink = self.loader.sink
        read = ExprReader(scope, item.origin(), sink, str(item.value)).read_block_use()
        if read is None:
            return []
        name, args, span = read
        block = self.blocks.get(name)
        if block is None:
            if name in scope.defines:
                sink.error(f"'{name}' is a definition of an expression, not a block of effects", span,
                           hint=f"a block of effects is a mapping under define:, e.g. {name}: {{x: 0}}")
            else:
                sink.error(f"unknown block of effects '{name}' in {what}", span,
                           hint=suggest(name, list(self.blocks), "blocks of effects"))
            return []
        if name in self.reading:
            chain = " → ".join([*self.reading[self.reading.index(name):], name])
            sink.error(f"block of effects {name} uses itself ({chain})", span,
                       hint="a block may use other blocks, never itself")
            return []
        if len(self.reading) >= MAX_DEFINITION_NESTING:
            sink.error(f"block {name} is used inside more than {MAX_DEFINITION_NESTING} nested blocks", span,
                       hint="a chain of blocks, each using the next, is too long: shorten it")
            return []
        if len(args) != len(block.params):
            want = f"{name}({', '.join(block.params)})" if block.params else name
            sink.error(f"block {name} takes {len(block.params)} argument{'s' if len(block.params) != 1 else ''}, "
                       f"found {len(args)}", span, hint=f"write {want}")
            return []
        key = (name, tuple(ty for _, ty in args), self.loader.reading_action)
        if key not in self.bodies:        # each block is read once per argument types and place
            self.reading.append(name)
            inner = self.loader.scope.with_locals(dict(zip(block.params, key[1])))
            self.bodies[key] = self.loader.read_effects(block.body, inner, f"block {name}")
            self.reading.pop()
        body = self.bodies[key]
        given = {p: e for p, (e, _) in zip(block.params, args)}
        if not given:
            return list(body)

        def fix(e):
            return fold(substitute(e, given))

        return [Assign(Index(a.target.name, fix(a.target.index), span=a.target.span)
                       if isinstance(a.target, Index) else a.target, fix(a.value), span=a.span) for a in body]

    def check_unused(self) -> None:
        """Read each block without parameters that nothing used, so that an error in it is still reported
        (as an action's effects: the most any place allows)."""
        unused = [b for b in self.blocks.values() if not b.params and not any(k[0] == b.name for k in self.bodies)]
        self.loader.reading_action = True
        for block in unused:
            self.reading.append(block.name)
            self.bodies[(block.name, (), True)] = self.loader.read_effects(block.body, self.loader.scope,
                                                                           f"block {block.name}")
            self.reading.pop()
        self.loader.reading_action = False
