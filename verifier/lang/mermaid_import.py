"""Read Mermaid flowcharts (```mermaid blocks of a Markdown file, or a bare .mmd file) and
write a model skeleton in the model language.

The skeleton keeps the flowchart as it is drawn, so that checking it shows the
flowchart's own dead ends and loops:

- every node becomes a phase (named from its label), the label kept as its
  rule citation; every arrow becomes an entry of its `next_any:` (`next:` for a lone
  arrow) with the arrow's label (less the `when: ...` line of turnproof's export);
- turnproof's export keeps its conditions: its `%% turnproof ...` comments
  (`verifier.lang.mermaid_round_trip`) give each arrow's condition (`when:`), the
  phases' `exit_when`, the `{otherwise: P}` entries (then the phase's entries are a
  `next:` list, first match) and the declarations of what the conditions read;
- a decision node (`{...}`) becomes a phase whose `next_any:` offers each answer:
  a nondeterministic choice between its arrows;
- a subgraph becomes nested steps: of the node its title names ("Expansion
  Phase Structure" -> the node "Expansion Phase"), or of a new phase; the
  last step leaves by the parent's arrows;
- a node such as "Next Player's Turn", and a thick arrow `==>`, end the turn;
- a node no arrow leaves is a dead end (`next: []`): checking reports it as a
  deadlock; a loop stays a loop (the `terminates: turn` claim written with
  `--claims` shows it as a lasso);
- nodes that nothing leads to stay in the skeleton behind an arrow that is
  never taken (`when: "false"`), so the phase is reported as never reached;
- several flowcharts become one model: the variable `chart` (no initial value,
  so every chart is explored) picks which one a turn follows.

Classes `optional` (`class A,B optional` or `A:::optional`) make phases optional,
so that `turnproof export --to mermaid` output imports back to the same structure.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from verifier.diagnostics import Diagnostic, Span, UsageError
from verifier.lang.limits import MAX_CHART_EDGES, MAX_CHART_NODES, MAX_SUBGRAPH_DEPTH, read_input_text
from verifier.lang.mermaid_round_trip import RoundTrip, read_round_trip

# ---------------------------------------------------------------- the flowchart

SHAPES = (("(((", ")))"), ("((", "))"), ("([", "])"), ("[[", "]]"), ("[(", ")]"), ("{{", "}}"), ("[/", "/]"),
          ("[\\", "\\]"), ("[/", "\\]"), ("[\\", "/]"), ("[", "]"), ("(", ")"), ("{", "}"), (">", "]"))
ID_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_]*")
LINK_RE = re.compile(r"\s*(<)?(-{2,}>|-{3,}|-\.+->|-\.+-|={2,}>|={3,}|--[ox]|-{2,}[ox])")
TEXT_LINK_RE = re.compile(r"\s*(<)?(--|-\.|==)\s+(.+?)\s+(-{2,}>|-{3,}|\.+->|\.+-|={2,}>|={3,})")
PIPE_RE = re.compile(r"\s*\|([^|]*)\|")
HEADER_RE = re.compile(r"^\s*(graph|flowchart)\b(?:\s+(TB|TD|BT|RL|LR))?\s*;?\s*$", re.I)
CONDITION_LINE = re.compile(r"(?:^|<br\s*/?>)(?:otherwise, )?when: .*$", re.S)
ENTITY_RE = re.compile(r"#(quot|amp|lt|gt|\d{1,6});")      # Mermaid's entity codes (`#35;` is `#`)
ENTITIES = {"quot": '"', "amp": "&", "lt": "<", "gt": ">"}
SKIP_RE = re.compile(r"^skip \w+(; skip \w+)*$")
TURN_RE = re.compile(r"^\s*(next\s+(player'?s?\s+)?turn|pass\s+(the\s+)?turn)\b", re.I)


@dataclass
class FNode:
    id: str
    label: str = ""
    shape: str = ""
    classes: set[str] = field(default_factory=set)
    subgraph: str | None = None
    line: int = 0

    @property
    def decision(self) -> bool:
        return self.shape in ("{", "{{")


@dataclass
class FEdge:
    src: str
    dst: str
    label: str = ""
    kind: str = "normal"      # normal | dotted | thick
    line: int = 0
    when: str | None = None   # its condition, from turnproof's `%% turnproof` comments
    otherwise: bool = False   # an `{otherwise: P}` entry


@dataclass
class FSub:
    id: str
    title: str
    parent: str | None
    members: list[str] = field(default_factory=list)
    line: int = 0
    classes: set[str] = field(default_factory=set)


@dataclass
class Flowchart:
    heading: str = ""
    line: int = 0
    nodes: dict[str, FNode] = field(default_factory=dict)
    edges: list[FEdge] = field(default_factory=list)
    subgraphs: dict[str, FSub] = field(default_factory=dict)
    round_trip: RoundTrip = field(default_factory=RoundTrip)


class MermaidError(UsageError):
    pass


def _error(path: str, line: int, message: str, hint: str = "") -> MermaidError:
    return MermaidError(Diagnostic(message, Span(path, line, 1) if line else None, hint=hint))


def extract_blocks(text: str, path: str = "<mermaid>") -> list[tuple[str, int, str]]:
    """(heading, first line number, body) of every Mermaid flowchart in a Markdown text; a text
    that is not Markdown (no fences) is read as one flowchart."""
    lines = text.splitlines()
    blocks, heading, i = [], "", 0
    fenced = any(re.match(r"^\s*(```|~~~)\s*mermaid\b", ln) for ln in lines)
    if not fenced:
        return [(Path(path).stem, 1, text)]
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", ln)
        if m:
            heading = m.group(2)
        fence = re.match(r"^\s*(```|~~~)\s*mermaid\b", ln)
        if fence:
            close = fence.group(1)
            body, start = [], i + 2
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(close):
                body.append(lines[i])
                i += 1
            first = next((b for b in body if b.strip() and not b.strip().startswith("%%")), "")
            if re.match(r"^\s*(graph|flowchart)\b", first, re.I):
                blocks.append((heading, start, "\n".join(body)))
        i += 1
    return blocks


def _split_statements(body: str, first_line: int) -> list[tuple[int, str]]:
    """Statements, split at newlines and at ';' outside brackets and quotes."""
    out = []
    for k, raw in enumerate(body.splitlines()):
        line = first_line + k
        stripped = raw.strip()
        if not stripped or stripped.startswith("%%"):
            continue
        depth, quote = 0, False
        cur: list[str] = []
        for ch in raw:
            if ch == '"':
                quote = not quote
            elif not quote and ch in "[({":
                depth += 1
            elif not quote and ch in "])}":
                depth = max(0, depth - 1)
            if ch == ";" and depth == 0 and not quote:
                out.append((line, "".join(cur).strip()))
                cur = []
                continue
            cur.append(ch)
        if "".join(cur).strip():
            out.append((line, "".join(cur).strip()))
    return [(ln, s) for ln, s in out if s]


def without_condition(label: str) -> str:
    """An arrow's label without the `when: ...` line turnproof's export adds (the condition comes
    back from its `%% turnproof` comments, as the model writes it)."""
    return CONDITION_LINE.sub("", label).strip()


def _clean_label(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    if text.startswith("`") and text.endswith("`"):
        text = text[1:-1]
    text = ENTITY_RE.sub(_entity, text)
    return text.strip()


def _entity(m: re.Match) -> str:
    """The character a Mermaid entity code stands for; a code of no printable character is kept as written."""
    named = ENTITIES.get(m.group(1))
    if named is not None:
        return named
    ch = chr(int(m.group(1))) if int(m.group(1)) <= 0x10FFFF else ""
    return ch if ch.isprintable() and ch else m.group(0)


def parse_flowchart(body: str, path: str = "<mermaid>", first_line: int = 1, heading: str = "") -> Flowchart:
    """Parse the flowchart subset of Mermaid: nodes with shapes, chains of links with labels,
    `&`, subgraphs, classes; styles and clicks are ignored."""
    chart = Flowchart(heading, first_line, round_trip=read_round_trip(body, path, first_line))
    stack: list[str] = []
    statements = _split_statements(body, first_line)
    if not statements or not HEADER_RE.match(statements[0][1]):
        line = statements[0][0] if statements else first_line
        raise _error(path, line, "a Mermaid flowchart starts with 'graph' or 'flowchart' and a direction",
                     hint="e.g. 'flowchart TD'; other diagram kinds (sequenceDiagram, stateDiagram) are not read")
    sub_count = 0

    def node_ref(s: str, pos: int, line: int) -> tuple[str, int]:
        m = ID_RE.match(s, pos)
        if not m:
            raise _error(path, line, f"expected a node id at '{s[pos:pos + 20]}'",
                         hint="node ids are letters, digits and underscores: A, B1, Draw_Step")
        nid, pos = m.group(0), m.end()
        label, shape = None, ""
        for open_, close in SHAPES:
            if s.startswith(open_, pos):
                start = pos + len(open_)
                end = _closing(s, start, open_, close)
                if end < 0:
                    raise _error(path, line, f"node {nid}: '{open_}' is never closed by '{close}'")
                label, shape, pos = s[start:end], open_, end + len(close)
                break
        classes = set()
        while s.startswith(":::", pos):
            m2 = ID_RE.match(s, pos + 3)
            if not m2:
                break
            classes.add(m2.group(0))
            pos = m2.end()
        if nid in chart.subgraphs:
            return nid, pos
        node = chart.nodes.get(nid)
        if node is None:
            if len(chart.nodes) == MAX_CHART_NODES:
                raise _error(path, line, f"the flowchart has more than {MAX_CHART_NODES:,} nodes",
                             hint="import a turn structure: split the chart, or leave out the card-level detail")
            node = chart.nodes[nid] = FNode(nid, line=line)
            if stack:
                node.subgraph = stack[-1]
                chart.subgraphs[stack[-1]].members.append(nid)
        if label is not None:
            node.label, node.shape = _clean_label(label), shape
        node.classes |= classes
        return nid, pos

    def group(s: str, pos: int, line: int) -> tuple[list[str], int]:
        ids = []
        while True:
            pos = _skip_ws(s, pos)
            nid, pos = node_ref(s, pos, line)
            ids.append(nid)
            after = _skip_ws(s, pos)
            if after < len(s) and s[after] == "&":
                pos = after + 1
                continue
            return ids, pos

    for line, stmt in statements[1:]:
        word = stmt.split(None, 1)[0].lower() if stmt.split() else ""
        if word == "subgraph":
            rest = stmt[len("subgraph"):].strip()
            m = re.match(r"^([A-Za-z0-9_]+)\s*\[(.*)\]\s*$", rest)
            if m:
                sid, title = m.group(1), _clean_label(m.group(2))
            elif ID_RE.fullmatch(rest):
                sid, title = rest, rest
            else:
                sub_count += 1
                sid, title = f"subgraph{sub_count}", _clean_label(rest)
            if sid in chart.subgraphs:      # a second declaration would replace the first and lose its nodes
                raise _error(path, line, f"subgraph '{sid}' is declared twice (first at line "
                                         f"{chart.subgraphs[sid].line})", hint="give each subgraph its own id")
            if len(stack) == MAX_SUBGRAPH_DEPTH:
                raise _error(path, line, f"subgraphs nested more than {MAX_SUBGRAPH_DEPTH} deep",
                             hint="a subgraph is a phase's steps: flatten the inner ones")
            chart.subgraphs[sid] = FSub(sid, title, stack[-1] if stack else None, line=line)
            if stack:
                chart.subgraphs[stack[-1]].members.append(sid)
            stack.append(sid)
            continue
        if word == "end" and stmt.strip().lower() == "end":
            if not stack:
                raise _error(path, line, "'end' without a 'subgraph'")
            stack.pop()
            continue
        if word in ("style", "classdef", "click", "linkstyle", "direction", "accdescr", "acctitle"):
            continue
        if word == "class":
            parts = stmt.split()
            if len(parts) >= 3:
                for nid in parts[1].split(","):
                    if nid in chart.nodes:
                        chart.nodes[nid].classes.add(parts[2])
                    elif nid in chart.subgraphs:
                        chart.subgraphs[nid].classes.add(parts[2])
            continue
        pos = 0
        left, pos = group(stmt, pos, line)
        while True:
            link = _link(stmt, pos)
            if link is None:
                break
            kind, label, pos = link
            right, pos = group(stmt, pos, line)
            if len(chart.edges) + len(left) * len(right) > MAX_CHART_EDGES:     # checked before they are drawn
                raise _error(path, line, f"the flowchart draws more than {MAX_CHART_EDGES:,} arrows (this line "
                                         f"alone {len(left) * len(right):,}: each '&' on both sides multiplies)",
                             hint="write the arrows a turn structure needs, one or a few per line")
            for a in left:
                for bnode in right:
                    chart.edges.append(FEdge(a, bnode, label, kind, line))
            left = right
        if _skip_ws(stmt, pos) < len(stmt):
            raise _error(path, line, f"cannot read '{stmt[pos:].strip()}' in '{stmt}'",
                         hint="write one link per arrow: A --> B, A -- label --> B or A -->|label| B")
    if stack:
        raise _error(path, chart.subgraphs[stack[-1]].line, f"subgraph '{stack[-1]}' has no 'end'")
    return chart


def _skip_ws(s: str, pos: int) -> int:
    while pos < len(s) and s[pos] in " \t":
        pos += 1
    return pos


def _closing(s: str, start: int, open_: str, close: str) -> int:
    """Index of the `close` matching a shape opened just before `start` (quotes and nested
    brackets of the same kind are skipped)."""
    if s.startswith('"', start):
        q = s.find('"', start + 1)
        if q >= 0 and s.startswith(close, q + 1):
            return q + 1
    depth, i = 0, start
    o, c = open_[-1], close[0]
    while i < len(s):
        if s.startswith(close, i) and depth == 0:
            return i
        if s[i] == o and o != c:
            depth += 1
        elif s[i] == c and depth > 0:
            depth -= 1
        i += 1
    return -1


def _link(s: str, pos: int) -> tuple[str, str, int] | None:
    for regex in (LINK_RE, TEXT_LINK_RE):
        m = regex.match(s, pos)
        if not m:
            continue
        if regex is LINK_RE:
            arrow, label = m.group(2), ""
        else:
            arrow, label = m.group(2) + m.group(4), _clean_label(m.group(3))
        pos = m.end()
        p = PIPE_RE.match(s, pos)
        if p:
            label, pos = _clean_label(p.group(1)), p.end()
        kind = "thick" if "=" in arrow else ("dotted" if "." in arrow else "normal")
        return kind, label, pos
    return None


# ---------------------------------------------------------------- the skeleton

class Way(NamedTuple):
    """One way on from a phase: an entry of its `next:` / `next_any:`."""

    to: str
    label: str = ""
    when: str | None = None
    otherwise: bool = False


@dataclass
class SPhase:
    name: str
    source: str                      # node id or subgraph id
    citation: tuple[str, str]        # (section, text)
    mandatory: bool = True
    steps: list[SPhase] = field(default_factory=list)
    nexts: list[Way] | None = None   # None: inherit / default
    doc: str = ""
    exit_when: str = ""


@dataclass
class Skeleton:
    name: str
    source: str
    charts: list[Flowchart]
    phases: list[SPhase]
    dead_ends: list[str]
    unreached: list[str]
    loops: list[list[str]]
    turn_end: bool
    chart_values: list[tuple[str, str, str]] = field(default_factory=list)   # (enum value, heading, first phase)
    declared: RoundTrip = field(default_factory=RoundTrip)     # what the conditions of turnproof's export read


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", text)


def name_from_label(label: str, fallback: str) -> str:
    """A phase name from a node label: the label itself when it is already a name (so that
    exported charts import back unchanged), else its first words in CamelCase."""
    first = label.split("<br")[0].strip()
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", first):
        return first
    text = re.sub(r"['’\"]", "", re.sub(r"<[^>]+>", " ", first))
    if ":" in text:
        head, tail = text.split(":", 1)
        text = head + " " + tail if len(head.strip()) <= 3 else head
    text = re.split(r"[,.;?!(]", text)[0] or text
    words = _words(text)[:6]
    if len(words) > 1 and words[-1].lower() in ("phase", "step"):
        words = words[:-1]
    name = "".join(w[0].upper() + w[1:] for w in words)
    if not name:
        name = re.sub(r"[^A-Za-z0-9_]", "_", fallback)
    if not name[0].isalpha():
        name = "N" + name
    return name


RESERVED_NAMES = {"Phase", "PLAYERS", "TURN_END", "TRUE", "FALSE", "Chart", "chart", "phase", "active"}


def build_skeleton(charts: list[Flowchart], name: str, source: str) -> Skeleton:
    used: set[str] = set(RESERVED_NAMES)
    phases: list[SPhase] = []
    dead_ends: list[str] = []
    unreached: list[str] = []
    loops: list[list[str]] = []
    any_turn_end = False
    chart_values = []
    for n, chart in enumerate(charts, 1):
        section = chart.heading or f"flowchart {n}"
        top, turn_end, firsts = _convert(chart, section, used, dead_ends, unreached, loops)
        any_turn_end = any_turn_end or turn_end
        phases += top
        if firsts:
            value = _unique(name_from_label(section, f"Chart{n}"), used)
            chart_values.append((value, section, firsts))
    if len(charts) > 1:
        dispatcher = SPhase(_unique("Flowchart", used), "", ("import", "which flowchart this turn follows"),
                            nexts=[Way(first, heading, f"chart == {value}") for value, heading, first in chart_values])
        phases.insert(0, dispatcher)
    declared = RoundTrip()
    for chart in charts:
        declared.players = declared.players or chart.round_trip.players
        for enum, values in chart.round_trip.enums.items():
            declared.enums.setdefault(enum, values)
        for var, declaration in chart.round_trip.variables.items():
            declared.variables.setdefault(var, declaration)
        for param, declaration in chart.round_trip.params.items():
            declared.params.setdefault(param, declaration)
        for phase, declaration in chart.round_trip.phases.items():
            declared.phases.setdefault(phase, declaration)
    return Skeleton(name, source, charts, phases, dead_ends, unreached, loops, any_turn_end, chart_values, declared)


def _unique(name: str, used: set[str], suffix: str = "") -> str:
    base = name
    if name in used and suffix:
        name = f"{base}_{suffix}"
    k = 2
    while name in used:
        name = f"{base}_{k}"
        k += 1
    used.add(name)
    return name


def _convert(chart: Flowchart, section: str, used: set[str], dead_ends: list[str], unreached: list[str],
             loops: list[list[str]]) -> tuple[list[SPhase], bool, str]:
    nodes, subs = chart.nodes, chart.subgraphs
    turn_nodes = {nid for nid, nd in nodes.items() if TURN_RE.match(nd.label or "")}
    # a subgraph belongs to the node its title names, or stands for a phase of its own
    owner: dict[str, str] = {}
    for sid, sub in subs.items():
        if sid in nodes:
            owner[sid] = sid
            continue
        title = _norm(sub.title)
        best = None
        for nid, nd in nodes.items():
            if nd.subgraph != sub.parent or nid in owner.values() or not nd.label:
                continue
            lab = _norm(nd.label)
            longer = best is None or len(lab) > len(_norm(nodes[best].label))
            if lab and (title == lab or title.startswith(lab + " ")) and longer:
                best = nid
        if best is not None:
            owner[sid] = best

    names: dict[str, str] = {}          # node or subgraph id -> phase name
    for nid, nd in nodes.items():
        if nid in turn_nodes:
            continue
        names[nid] = _unique(name_from_label(nd.label or nid, nid), used, nid)
    for sid, sub in subs.items():
        if sid in owner:
            names[sid] = names[owner[sid]]
        else:
            names[sid] = _unique(name_from_label(sub.title or sid, sid), used, sid)

    def cite(label: str) -> tuple[str, str]:
        return section, " ".join(re.sub(r"<br\s*/?>", " / ", label).split())

    out_edges: dict[str, list[FEdge]] = {}
    for e in chart.edges:
        src = owner_of(e.src, owner)
        dst = owner_of(e.dst, owner)
        when, otherwise = chart.round_trip.arrow(e.src, e.dst, e.kind == "thick")
        out_edges.setdefault(src, []).append(FEdge(src, dst, without_condition(e.label), e.kind, e.line, when,
                                                   otherwise))
    turn_end = False
    optional = {names[x] for x, nd in nodes.items() if "optional" in nd.classes and x in names}
    optional |= {names[x] for x, sub in subs.items() if "optional" in sub.classes}

    def implied_skip(label: str) -> bool:
        """An arrow that only skips optional phases: the loader draws those by itself."""
        m = SKIP_RE.match(label)
        return bool(m) and all(p.strip() in optional for p in label.replace("skip ", "").split(";"))

    def targets(src: str) -> list[Way]:
        nonlocal turn_end
        out: list[Way] = []
        for e in out_edges.get(src, []):
            if implied_skip(e.label):
                continue
            if e.dst in turn_nodes or e.kind == "thick":
                turn_end = True
                label = e.label or (nodes[e.dst].label if e.dst in turn_nodes else "")
                out.append(Way("TURN_END", label, e.when, e.otherwise))
            else:
                out.append(Way(names[e.dst], e.label, e.when, e.otherwise))
        return _dedupe(out)

    placed: set[str] = set()

    def make(item: str) -> SPhase:
        """The phase for a node (with the steps of the subgraph it owns) or a subgraph."""
        placed.add(item)
        sub_id = next((s for s, o in owner.items() if o == item and s != item), None) if item in nodes else None
        sub_id = item if item in subs else sub_id
        if item in nodes:
            nd = nodes[item]
            ph = SPhase(names[item], item, cite(nd.label or item), "optional" not in nd.classes,
                        exit_when=chart.round_trip.exit_when.get(item, ""))
            if nd.decision:
                ph.doc = f"decision: {nd.label}" if nd.label else "decision"
        else:
            sub = subs[item]
            ph = SPhase(names[item], item, cite(sub.title), "optional" not in sub.classes)
        if sub_id is not None:
            sub = subs[sub_id]
            if "optional" in sub.classes:
                ph.mandatory = False
            members = [m for m in sub.members if m not in turn_nodes and m != item]
            ordered = _order_members(members, chart, owner)
            for m in ordered:
                placed.add(m)
            ph.steps = [make(m) for m in ordered]
            # the last step leaves by the parent's arrows: it keeps its own, and adds the parent's
            last = _last_leaf(ph)
            parent_targets = targets(item)
            if last.nexts is not None and last.nexts:
                last.nexts = _dedupe(last.nexts + parent_targets)
                ph.nexts = None
            else:
                last.nexts = None
                ph.nexts = _dedupe(parent_targets)
                if not ph.nexts:
                    dead_ends.append(ph.name)
            return ph
        own = targets(item)
        ph.nexts = own
        return ph

    top_items: list[str] = []
    for nid, nd in nodes.items():
        if nid in turn_nodes or nd.subgraph is not None or nid in placed:
            continue
        top_items.append(nid)
    for sid, sub in subs.items():
        if sub.parent is None and sid not in owner:
            top_items.append(sid)
    # members of a subgraph owned by a node elsewhere are placed with that node
    top_items.sort(key=lambda x: nodes[x].line if x in nodes else subs[x].line)
    start = _start_item(chart, top_items, owner, turn_nodes)
    if start is not None:
        top_items.remove(start)
        top_items.insert(0, start)
    phases: list[SPhase] = []
    for item in top_items:
        if item in placed:
            continue
        phases.append(make(item))
    # dead ends: leaves with no way out that do not inherit one
    for ph in _all(phases):
        if not ph.steps and ph.nexts == [] and ph.name not in dead_ends:
            dead_ends.append(ph.name)
    # unreached: leaves the first one cannot lead to (statically); reached through a never-taken arrow
    first = phases[0] if phases else None
    if first is not None:
        graph = _leaf_graph(phases)
        first_leaf = _first_leaf(first).name
        seen = _reach(graph, first_leaf)
        for ph in _all(phases):
            if ph.steps or ph.name in seen:
                continue
            unreached.append(ph.name)
            holder = next(p for p in _all(phases) if not p.steps and p.nexts is not None) \
                if any(not p.steps and p.nexts is not None for p in _all(phases)) else _materialize(phases, graph)
            holder.nexts = (holder.nexts or []) + [Way(ph.name, "not connected in the flowchart", "false")]
            seen |= _reach(graph, ph.name)
        loops += _cycles(_leaf_graph(phases, turn_end=False))
    return phases, turn_end, (_first_leaf(first).name if first else "")


def _materialize(phases: list[SPhase], graph: dict[str, list[str]]) -> SPhase:
    """The first leaf, with the ways on it inherits written out."""
    leaf = _first_leaf(phases[0])
    leaf.nexts = [Way(to) for to in graph.get(leaf.name, [])]
    return leaf


def owner_of(item: str, owner: dict[str, str]) -> str:
    return owner.get(item, item)


def _norm(text: str) -> str:
    return " ".join(w.lower() for w in _words(text))


def _dedupe(items: list[Way]) -> list[Way]:
    seen, out = set(), []
    for t in items:
        if t[0] in seen:
            continue
        seen.add(t[0])
        out.append(t)
    return out


def _order_members(members: list[str], chart: Flowchart, owner: dict[str, str]) -> list[str]:
    """Entry steps first (no arrow from another member), exit steps last, otherwise by flow."""
    inside = set(members)
    succ: dict[str, list[str]] = {m: [] for m in members}
    has_in: set[str] = set()
    for e in chart.edges:
        a, b2 = owner_of(e.src, owner), owner_of(e.dst, owner)
        if a in inside and b2 in inside and a != b2:
            succ[a].append(b2)
            has_in.add(b2)
    order: list[str] = []
    for m in [m for m in members if m not in has_in] + members:
        if m in order:
            continue
        stack = [m]
        while stack:
            x = stack.pop(0)
            if x in order:
                continue
            order.append(x)
            stack[:0] = [y for y in succ[x] if y not in order]
    exits = [m for m in order if not succ[m]]
    if exits:
        order.remove(exits[-1])
        order.append(exits[-1])
    return order


def _start_item(chart: Flowchart, items: list[str], owner: dict[str, str], turn_nodes: set[str]) -> str | None:
    """The first item (in document order) that no arrow leads into, except arrows that end a
    turn; the first item when every one has such an arrow."""
    def inside(item: str) -> set[str]:
        out = {item}
        if item in chart.subgraphs:
            todo = [item]
            while todo:
                for m in chart.subgraphs[todo.pop()].members:
                    out.add(m)
                    if m in chart.subgraphs:
                        todo.append(m)
        for sid, nid in owner.items():
            if nid == item:
                out |= inside(sid) if sid != item else set()
        return out

    for item in items:
        members = inside(item)
        if not any(e.dst in members and e.src not in members and e.kind != "thick" and e.dst not in turn_nodes
                   for e in chart.edges):
            return item
    return items[0] if items else None


def _all(phases: list[SPhase]):
    for ph in phases:
        yield ph
        yield from _all(ph.steps)


def _first_leaf(ph: SPhase) -> SPhase:
    while ph.steps:
        ph = ph.steps[0]
    return ph


def _last_leaf(ph: SPhase) -> SPhase:
    while ph.steps:
        ph = ph.steps[-1]
    return ph


def _leaf_graph(phases: list[SPhase], turn_end: bool = True) -> dict[str, list[str]]:
    """Leaf -> leaves it may lead to, as the loader will read the skeleton (TURN_END -> first
    leaf; left out with turn_end=False)."""
    by_name = {ph.name: ph for ph in _all(phases)}
    parents: dict[str, SPhase] = {}
    for ph in _all(phases):
        for st in ph.steps:
            parents[st.name] = ph
    first = _first_leaf(phases[0]).name
    graph: dict[str, list[str]] = {}
    for ph in _all(phases):
        if ph.steps:
            continue
        node, nexts = ph, ph.nexts
        while nexts is None and node.name in parents and parents[node.name].steps[-1] is node:
            node = parents[node.name]
            nexts = node.nexts
        if nexts is None:    # default: the next leaf in document order
            leaves = [p.name for p in _all(phases) if not p.steps]
            i = leaves.index(ph.name)
            nexts = [Way(leaves[i + 1] if i + 1 < len(leaves) else "TURN_END")]
        graph[ph.name] = [first if way.to == "TURN_END" else _first_leaf(by_name[way.to]).name
                          for way in nexts if way.when != "false" and (turn_end or way.to != "TURN_END")]
    return graph


def _reach(graph: dict[str, list[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for y in graph.get(todo.pop(), []):
            if y not in seen:
                seen.add(y)
                todo.append(y)
    return seen


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The loops of the flowchart: strongly connected groups of more than one phase (or a
    phase leading to itself), in the graph where the end of the turn is not followed."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph)
    for a, bs in graph.items():
        for b2 in bs:
            g.add_edge(a, b2)
    order = list(graph)
    out = []
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1 or any(g.has_edge(x, x) for x in comp):
            out.append(sorted(comp, key=order.index))
    return sorted(out, key=lambda c: order.index(c[0]))


# ---------------------------------------------------------------- YAML

def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def skeleton_yaml(sk: Skeleton) -> str:
    lines = [f"# Model skeleton imported from {sk.source} by `turnproof import-mermaid`.",
             "# Edit it into a model: add variables, actions and conditions (`when:`) to the arrows.",
             f"model: {sk.name}"]
    doc = [f"Skeleton of the flowchart{'s' if len(sk.charts) > 1 else ''} in {sk.source}: every node is a "
           "phase (its label kept as the rule citation), every arrow a way on; decision nodes offer each "
           "answer as a choice; subgraphs are nested steps."]
    if sk.dead_ends:
        doc.append("Dead ends (no arrow leaves them): " + ", ".join(sk.dead_ends) + ".")
    if sk.loops:
        doc.append("Loops: " + "; ".join(" -> ".join(c) for c in sk.loops) + ".")
    if sk.unreached:
        doc.append("Not connected (nothing leads to them): " + ", ".join(sk.unreached) + ".")
    if len(sk.charts) > 1:
        doc.append("Several flowcharts: the variable chart (any value at the start) picks the one a turn follows.")
    lines.append("doc: |")
    for para in doc:
        for ln in _wrap(para, 96):
            lines.append("  " + ln)
    declared = sk.declared
    if declared.players is not None:
        lines.append(f"players: {declared.players}")
    elif sk.turn_end:
        lines.append("players: 2                 # assumed: the flowchart passes the turn to the next player")
    if declared.params:
        lines.append("params:")
        lines += [f"  {name}: {json.dumps(declaration, ensure_ascii=True)}"
                  for name, declaration in declared.params.items()]
    enums = {**({"Chart": [v for v, _, _ in sk.chart_values]} if len(sk.charts) > 1 else {}), **declared.enums}
    if enums:
        lines.append("enums:")
        lines += [f"  {name}: [{', '.join(values)}]" for name, values in enums.items()]
    if len(sk.charts) > 1 or declared.variables:
        lines.append("variables:")
    if len(sk.charts) > 1:
        lines.append("  chart: {type: Chart, doc: \"which flowchart this turn follows (every one is explored)\"}")
    for name, declaration in declared.variables.items():      # what the exported conditions read
        lines.append(f"  {name}: {json.dumps(declaration, ensure_ascii=True)}")
    lines.append("phases:")
    for ph in sk.phases:
        _phase_yaml(ph, lines, "  ", declared.phases)
    lines.append("actions: []               # the flowcharts name no actions: add them here")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    out, line = [], ""
    for w in text.split():
        if line and len(line) + 1 + len(w) > width:
            out.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    return out + ([line] if line else [])


def _phase_yaml(ph: SPhase, lines: list[str], indent: str, declared: dict[str, dict[str, Any]]) -> None:
    """A phase of the skeleton; its `rule:` and `doc:` those turnproof's export declares for it (`declared`),
    else its node's label as the citation."""
    lines.append(f"{indent}- name: {ph.name}")
    inner = indent + "  "
    own = declared.get(ph.name)
    if own is not None:
        if "rule" in own:
            lines.append(f"{inner}rule: {json.dumps(own['rule'], ensure_ascii=True)}")
        if "doc" in own:
            lines.append(f"{inner}doc: {json.dumps(own['doc'], ensure_ascii=True)}")
    else:
        section, text = ph.citation
        lines.append(f"{inner}rule: {{section: {_q(section)}, text: {_q(text)}}}" if text
                     else f"{inner}rule: {_q(section)}")
        if ph.doc:
            lines.append(f"{inner}doc: {_q(ph.doc)}")
    if not ph.mandatory:
        lines.append(f"{inner}mandatory: false")
    if ph.steps:
        lines.append(f"{inner}steps:")
        for st in ph.steps:
            _phase_yaml(st, lines, inner + "  ", declared)
    if ph.exit_when:
        lines.append(f"{inner}exit_when: {_q(ph.exit_when)}")
    if ph.nexts is not None:
        if not ph.nexts:
            lines.append(f"{inner}next: []              # dead end: no arrow leaves it in the flowchart")
            return
        ways = [w for w in ph.nexts if not w.otherwise] + [w for w in ph.nexts if w.otherwise][:1]
        first_match = ways[-1].otherwise        # `next:` takes the first entry whose when holds, else `otherwise`
        lines.append(f"{inner}{'next_any' if len(ways) > 1 and not first_match else 'next'}:")
        for way in ways:
            parts = [f"otherwise: {way.to}" if way.otherwise else f"to: {way.to}"]
            if way.when and not way.otherwise:
                parts.append(f"when: {_q(way.when)}")
            if way.label:
                parts.append(f"label: {_q(way.label)}")
            lines.append(f"{inner}  - {{{', '.join(parts)}}}")


def claims_yaml(sk: Skeleton) -> str:
    """Starter claims for a skeleton: nobody is stuck (the dead ends), every turn ends, and
    each loop of the flowchart can be left (a lasso through the loop when it cannot)."""
    lines = [f"# Starter claims for the skeleton of {sk.source} (turnproof import-mermaid).",
             "claims:",
             "  - id: no-dead-end",
             "    says: \"Every step of the flowchart leads somewhere: play never gets stuck\"",
             "    deadlock_free: true"]
    if sk.turn_end:
        lines += ["  - id: turn-ends",
                  "    says: \"Every turn ends: no loop of the flowchart goes on forever\"",
                  "    terminates: turn"]
    for n, loop in enumerate(sk.loops, 1):
        entry = loop[0]
        end = "the turn always ends" if sk.turn_end else "the flowchart is always left"
        lines += [f"  - id: loop-{n}-can-end",
                  f"    says: {_q(f'Once in {entry}, {end}: the loop ' + ' -> '.join(loop) + ' is not endless')}",
                  f"    ordering: {{pattern: existence, p: turn-end, scope: {{after: {{enter: {entry}}}}}}}"]
    return "\n".join(lines) + "\n"


def import_mermaid(path: str, name: str | None = None, blocks: list[int] | None = None) -> Skeleton:
    """Read the flowcharts of `path` (a Markdown file or a bare Mermaid file) as a skeleton.
    `blocks` picks flowcharts by number (1-based, in file order)."""
    text = read_input_text(path, UsageError, missing_hint="give a Markdown or Mermaid file")
    found = extract_blocks(text, path)
    if not found:
        raise _error(path, 0, "no Mermaid flowchart found",
                     hint="put the flowchart in a ```mermaid fenced block starting with 'graph TD' or 'flowchart TD'")
    if blocks:
        bad = [b for b in blocks if not 1 <= b <= len(found)]
        if bad:
            raise UsageError(Diagnostic(f"--block {bad[0]}: {path} holds {len(found)} flowchart(s)",
                                        hint=f"choose numbers from 1 to {len(found)}"))
        found = [found[b - 1] for b in blocks]
    charts = [parse_flowchart(body, path, line, heading) for heading, line, body in found]
    model_name = name or re.sub(r"[^A-Za-z0-9_]", "_", Path(path).stem).strip("_") or "imported"
    if not model_name[0].isalpha():
        model_name = "m_" + model_name
    return build_skeleton(charts, model_name, Path(path).name)
