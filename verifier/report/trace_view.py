"""A trace as people read it, shared by the terminal, plain text (JUnit), Markdown and HTML.

- The starting state is written compactly (`start_items`): an array on one item
  (`hand=[2,1]`), and the variables that are all true or all false named in two groups.
- Each later row shows only what changed, old → new.
- A rule's text is given at its first step; a later step that follows the same rule
  refers to it by its section (the text before the first ':') and that step's number.
- A run of repeated steps (the same move by the same player under the same rule,
  changing the same variables) is one row, "times n", with each variable's change over
  the whole run; a lasso's loop start always begins a row of its own.

Only the rendering is folded: the `Trace` itself (what replays) is unchanged.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verifier.ir.expr import state_vars
from verifier.ir.props import PREV_MARK, Property, StepInvariant
from verifier.trace import Step, Trace, split_element

SECTION_CHARS = 40          # a rule without a ':' is referred to by its first characters


def fmt(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Row:
    """One row of a trace table: `count` repeated steps from step number `first` on."""

    first: int
    count: int
    label: str
    player: int | None
    rule: str                       # the rule's text at its first step, else a reference to it
    changes: tuple[tuple[str, tuple[Any, Any]], ...]
    loop_start: bool = False

    @property
    def steps(self) -> str:
        """The step numbers the row stands for: `4`, or `4` to `8` joined by an en dash."""
        return str(self.first) if self.count == 1 else f"{self.first}–{self.first + self.count - 1}"

    @property
    def move(self) -> str:
        return self.label + (f" × {self.count}" if self.count > 1 else "")

    def changes_text(self, arrow: str = "→", ellipsis: str = "…") -> str:
        """`x: 1→3, y: a→b`; over a folded run a variable back at its old value reads `x: 0→…→0`."""
        return ", ".join(f"{k}: {fmt(a)}{arrow}" + (f"{ellipsis}{arrow}" if a == b and self.count > 1 else "") + fmt(b)
                         for k, (a, b) in self.changes)


def section_of(rule: str) -> str:
    head, sep, _rest = rule.partition(":")
    if sep and head.strip():
        return head.strip()
    return rule if len(rule) <= SECTION_CHARS else rule[:SECTION_CHARS - 1].rstrip() + "…"


LENGTH, COMPANION = "_len", "_until"     # the helpers `lang.sequences` and `lang.durations` add


def sequences(names: Sequence[str]) -> dict[str, tuple[str, list[str]]]:
    """The bounded sequences among a state's slots: name -> (its length slot, its element slots in order);
    an array `x[0..]` beside a scalar `x_len`, and each row `x[d]` of a 2-D array `x[d][0..]` beside an
    element `x_len[d]` of a length array (the lowerings of `lang.sequences`)."""
    present = set(names)
    out: dict[str, tuple[str, list[str]]] = {}
    for n in names:
        base, _, rest = n.partition("[")
        row, _, _ = rest.partition("]")
        if n != base and "[" not in rest and base + LENGTH in present:
            out.setdefault(base, (base + LENGTH, []))[1].append(n)
        elif n != base and rest.count("[") == 1 and f"{base}{LENGTH}[{row}]" in present:
            out.setdefault(f"{base}[{row}]", (f"{base}{LENGTH}[{row}]", []))[1].append(n)
    return out


def _sequence_of(slot: str, seqs: dict[str, tuple[str, list[str]]]) -> str | None:
    """The sequence (a key of `seqs`) whose element `slot` is, if any."""
    base, _, rest = slot.partition("[")
    row = f"{base}[{rest.partition(']')[0]}]"
    return base if base in seqs else row if row in seqs and slot != row else None


def companions(names: Sequence[str]) -> set[str]:
    """The slots of `until:` companions (`x_until`, `x_until[i]`) beside their variable `x`."""
    bases = {n.partition("[")[0] for n in names}
    return {n for n in names if (b := n.partition("[")[0]).endswith(COMPANION) and b[:-len(COMPANION)] in bases}


def readable(trace: Trace) -> Trace:
    """The trace in the page's words: a bounded sequence as one list cut at its length (a pop shows as a
    shorter list), its length variable and the `until:` companions left out, and the model's display names
    (`label:`, `values:`) in place of its variable names and numbers. Only the display changes: the states
    are rebuilt from the first one and each step's changes."""
    names = [k for k, _ in trace.initial]
    seqs, hidden = sequences(names), companions(names)
    if not seqs and not hidden and not trace.names:
        return trace
    helpers = hidden | {length for length, _ in seqs.values()}
    said = trace.names

    def view(state: dict[str, Any]) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for k, v in state.items():
            seq = _sequence_of(k, seqs)
            if seq is not None:
                if k == seqs[seq][1][0]:
                    length, elements = seqs[seq]
                    shown = (fmt(said.value(e, state[e])) for e in elements[:max(0, state[length])])
                    base, bracket, row = seq.partition("[")
                    out.append((said.slot(base) + bracket + row, "[" + ",".join(shown) + "]"))
            elif k not in helpers:
                out.append((said.slot(k), said.value(k, v)))
        return out

    state = dict(trace.initial)
    steps = []
    for step in trace.steps:
        before = dict(view(state))
        state.update({k: new for k, (_old, new) in step.changes})
        after = view(state)
        changes = tuple((k, (before[k], v)) for k, v in after if before.get(k) != v)
        steps.append(Step(step.action, step.choice, step.player, step.rule, changes, step.words))
    return Trace(tuple(view(dict(trace.initial))), tuple(steps), trace.loop_start)


def rows(trace: Trace) -> list[Row]:
    """The trace's steps as rows: repeated steps folded, each rule's text once (`readable`)."""
    trace = readable(trace)
    runs: list[list[Step]] = []
    starts: list[int] = []
    for i, step in enumerate(trace.steps):
        loop_here = trace.loop_start is not None and i == trace.loop_start
        if runs and not loop_here and _same_move(runs[-1][-1], step):
            runs[-1].append(step)
        else:
            runs.append([step])
            starts.append(i + 1)
    out: list[Row] = []
    rule_at: dict[str, int] = {}
    for first, run in zip(starts, runs):
        step = run[0]
        rule = step.rule
        if rule in rule_at:
            rule = f"{section_of(rule)} (see step {rule_at[rule]})"
        elif rule:
            rule_at[rule] = first
        out.append(Row(first, len(run), step.label, step.player, rule, _net_changes(run),
                       trace.loop_start is not None and first - 1 == trace.loop_start))
    return out


def _same_move(a: Step, b: Step) -> bool:
    return (a.label, a.player, a.rule, [k for k, _ in a.changes]) == (b.label, b.player, b.rule, [k for k, _ in b.changes])


def _net_changes(run: list[Step]) -> tuple[tuple[str, tuple[Any, Any]], ...]:
    """Each variable's value before the run and after it (the runs change the same variables)."""
    last = dict(run[-1].changes)
    return tuple((k, (old, last[k][1])) for k, (old, _new) in run[0].changes)


def step_reads(prop: Property) -> tuple[str, ...]:
    """The variables a step claim reads, before (`prev(x)`) or after its move; () for other claims."""
    if not isinstance(prop, StepInvariant):
        return ()
    return tuple(sorted({n.removeprefix(PREV_MARK) for n in state_vars(prop.expr)}))


def unchanged_read(trace: Trace, names: Sequence[str]) -> str:
    """The values after the last step of the variables `names` (a step claim reads them) that the last
    step left as they were: with its changes, what broke the claim. "" when the trace keeps no states."""
    if not trace.states or not trace.steps or not names:
        return ""
    changed = {k for k, _ in trace.steps[-1].changes}
    wanted = set(names)
    shown = [(k, v) for k, v in trace.states[-1] if k not in changed and k.partition("[")[0] in wanted]
    return ", ".join(f"{trace.names.slot(k)} = {fmt(trace.names.value(k, v))}" for k, v in shown)


def start_items(trace: Trace) -> list[str]:
    """The starting state, compact (`compact_items`), in the page's words (`readable`)."""
    return compact_items(readable(trace).initial)


def compact_items(state: Sequence[tuple[str, Any]]) -> list[str]:
    """A state (slot name, value), compact: `name=value`, an array as `name=[v0,v1]` (`[a:v0,b:v1]`
    where its index is not 0, 1, ...), then the variables whose every element is true (false)
    named in one item `true: x, y` (`false: ...`; one alone as `x=true`)."""
    scalars = {name for name, _ in state}
    grouped: dict[str, list[tuple[str, Any]]] = {}
    for name, value in state:
        base, index = split_element(name) or (name, "")
        grouped.setdefault(base, []).append((index, value))
    items: list[str] = []
    flags: dict[bool, list[str]] = {False: [], True: []}
    for name, pairs in grouped.items():
        values = [v for _, v in pairs]
        if all(isinstance(v, bool) for v in values) and len(set(values)) == 1:
            flags[values[0]].append(name)
        elif name in scalars:
            items.append(f"{name}={fmt(values[0])}")
        else:
            items.append(f"{name}={_array(pairs)}")
    for flag in (True, False):
        if len(flags[flag]) == 1:
            items.append(f"{flags[flag][0]}={fmt(flag)}")
        elif flags[flag]:
            items.append(f"{fmt(flag)}: {', '.join(flags[flag])}")
    return items


def _array(pairs: list[tuple[str, Any]]) -> str:
    """An array's elements (index as shown, value): `[v0,v1]`, `[a:v0,b:v1]` where its index is not 0, 1,
    ...; a 2-D array's (index `i][j`) row by row, `[a:[v0,v1],b:[v2,v3]]`."""
    if all("][" in i for i, _ in pairs):
        rows: dict[str, list[tuple[str, Any]]] = {}
        for index, value in pairs:
            row, _, column = index.partition("][")
            rows.setdefault(row, []).append((column, value))
        return _listed([(row, _array(cells)) for row, cells in rows.items()], str)
    return _listed(pairs, fmt)


def _listed(pairs: list[tuple[str, Any]], shown: Any) -> str:
    if [i for i, _ in pairs] == [str(k) for k in range(len(pairs))]:
        return f"[{','.join(shown(v) for _, v in pairs)}]"
    return f"[{','.join(f'{i}:{shown(v)}' for i, v in pairs)}]"


def start_text(trace: Trace) -> str:
    """`start_items` on one line: values, then `; true: ...; false: ...`."""
    items = start_items(trace)
    values = [x for x in items if not x.startswith(("true: ", "false: "))]
    groups = items[len(values):]
    return "; ".join(([", ".join(values)] if values else []) + groups)
