"""Limits on what an input file may ask for, checked before any work is done.

Model and property files are untrusted: each limit below turns what would be a
crash, a hang or a memory blow-up into a positioned error (exit 2). The limits
are far above what a turn structure needs; the hint of each error names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, Event, NodeEvent, ScalarEvent

from verifier.diagnostics import Diagnostic, Span, TurnproofError, quotable
from verifier.files import NotAnInput, read_input

MAX_FILE_BYTES = 1_000_000      # a model or property file (ruamel parses about 100 kB/s)
MAX_YAML_NODES = 200_000        # values in a document, every alias counted as often as it is used
MAX_YAML_DEPTH = 48             # nested mappings and lists
MAX_EXPR_DEPTH = 48             # nested operators, parentheses, `if` and quantifiers in one expression
MAX_EXPANDED_DEPTH = 2 * MAX_EXPR_DEPTH   # ... and once the definitions it uses are expanded
MAX_DEFINITION_NESTING = 32     # definitions expanded inside one another
MAX_RULE_BLOCKS = 64            # blocks of phase rules one phase applies (`use:`, the blocks they use included)
MAX_INT_DIGITS = 18             # an integer literal (YAML or expression): at most 18 digits
MAX_PLAYERS = 64
MAX_SLOTS = 20_000              # state slots: variables, array elements
MAX_ARRAY = 10_000              # elements of one array
MAX_CHOICES = 100_000           # ways one action can choose (product of its choice domains)
MAX_INITIAL_STATES = 100_000    # initial states: those the variables left without `init:` give that `initially:` keeps
MAX_INITIAL_CANDIDATES = 1_000_000   # ... the assignments of those variables they are found among (product of ranges)
MAX_RANGE_WIDTH = 2 ** 62       # hi - lo of an integer type
MAX_STEP_BOUND = 10_000         # `within:` / `at_most:` of a claim: its monitor counts up to it
MAX_CHART_NODES = 1_000         # nodes of one Mermaid flowchart (`import-mermaid`: each becomes a phase)
MAX_CHART_EDGES = 5_000         # arrows of one flowchart, each `a & b --> c & d` counted as the arrows it draws
MAX_SUBGRAPH_DEPTH = 16         # subgraphs nested in one another (nested steps: YAML nesting in the skeleton)

_FLAT = ("and_expr", "or_expr")       # n-ary in the IR
_YAML_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null", "seq", "map", "float")}
# C0 controls but tab, newline and carriage return; DEL and the C1 controls; bidirectional overrides
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff]")
_CONTROL_VALUE = re.compile(_CONTROL.pattern.replace("\x0e", "\r\x0e"))   # a value also holds no CR
_BIG_INT = re.compile(r"[-+]?(?:0[xob])?[0-9_a-fA-F]*[0-9][0-9_a-fA-F]*")


def read_input_text(path: str, error: type[TurnproofError], project: str | None = None,
                    missing_hint: str = "check the path") -> str:
    """The text of an untrusted input file, read only when it is a regular file of the project
    (`files.read_input`: no link out of it, no device, FIFO or /proc file) and checked
    (`text_problem`) before anything else looks at it; only then may an error quote its lines
    (`diagnostics.quotable`). Every refusal raises `error` naming the path, never its content."""
    quotable(path, None)
    try:
        raw = read_input(path, project, MAX_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise error(Diagnostic(f"no such file: {path}", hint=missing_hint)) from None
    except NotAnInput as refused:
        raise error(Diagnostic(str(refused), hint="inputs are regular files of the project; a symbolic link out "
                                                  "of it, a device, a FIFO or a /proc file is never read")) from None
    except OSError as err:
        raise error(Diagnostic(f"cannot read {path}: {err.strerror}", hint=missing_hint)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise error(_too_large(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(Diagnostic(f"{path} is not UTF-8 text", Span(path, 1, 1))) from None
    problem = text_problem(path, text)
    if problem is not None:
        raise error(problem)
    quotable(path, text)
    return text


def _too_large(path: str) -> Diagnostic:
    return Diagnostic(f"the file is larger than {MAX_FILE_BYTES // 1_000_000} MB", Span(path, 1, 1),
                      hint="a model or property file is a page of YAML; split or shorten it")


def text_problem(path: str, text: str) -> Diagnostic | None:
    """The first reason not to parse `text` as a model or property file at all, or None."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        return _too_large(path)
    bad = _CONTROL.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        col = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        return Diagnostic(f"control character U+{ord(bad.group()):04X} in the file", Span(path, line, col),
                          hint="remove it: files hold printable text, tabs and newlines only "
                               "(write escapes such as \\t inside double quotes)")
    return None


class OverLimit(Exception):
    """A YAML document went past one of the limits while it was read (`EventLimits`)."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass
class EventLimits:
    """The limits on a document's YAML events, checked one event at a time as the parser hands
    them on, so that nothing is built past a limit: tags, nesting, escaped control characters,
    long integers, and the values and the bytes of text the document expands to, counting what an
    alias stands for without expanding it (the expanded text is held to the file size limit)."""

    path: str
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)   # anchor -> values, bytes it stands for
    open_: list[list] = field(default_factory=list)         # [anchor, values, bytes so far] per open mapping or list

    def check(self, event: Event) -> None:
        """Raise `OverLimit` when `event` takes the document past a limit."""
        problem = self._problem(event)
        if problem is not None:
            raise OverLimit(problem)

    def _problem(self, event: Event) -> Diagnostic | None:
        here = Span(self.path, event.start_mark.line + 1, event.start_mark.column + 1)
        tag = getattr(event, "tag", None)
        if isinstance(event, NodeEvent) and tag is not None and tag not in _YAML_TAGS:
            return Diagnostic(f"YAML tag '{_short_tag(tag)}' is not allowed", here,
                              hint="write plain values, lists and mappings: files take no tags (!!...)")
        if isinstance(event, CollectionStartEvent):
            self.open_.append([event.anchor, 0, 0])
            if len(self.open_) > MAX_YAML_DEPTH:
                return Diagnostic(f"too deeply nested: more than {MAX_YAML_DEPTH} levels of lists and "
                                  "mappings", here, hint="flatten the structure")
            return None
        if isinstance(event, CollectionEndEvent):
            anchor, count, size = self.open_.pop()
            count += 1
        elif isinstance(event, ScalarEvent):
            anchor, count, size = event.anchor, 1, len(event.value) + 1
            value = event.value.replace("\a", "") if event.style == ">" else event.value   # ruamel's folds
            escaped = _CONTROL_VALUE.search(value)
            if escaped:
                return Diagnostic(f"control character U+{ord(escaped.group()):04X} in a value (written as an "
                                  "escape)", here, hint="remove the escape: values are printable text")
            if event.style is None and len(event.value) > MAX_INT_DIGITS and _BIG_INT.fullmatch(event.value):
                return _too_big(event.value, here)
        elif isinstance(event, AliasEvent):
            if any(entry[0] == event.anchor for entry in self.open_):
                return Diagnostic(f"the alias *{event.anchor} is used inside the value of its own anchor "
                                  f"&{event.anchor}: a value cannot contain itself", here,
                                  hint="repeat a value only after its anchor's value is closed")
            anchor, (count, size) = None, self.sizes.get(event.anchor, (1, 1))
        else:
            return None
        if anchor is not None:
            self.sizes[anchor] = (count, size)
        if self.open_:
            self.open_[-1][1] += count
            self.open_[-1][2] += size
        if size > MAX_FILE_BYTES or (self.open_ and self.open_[-1][2] > MAX_FILE_BYTES):
            return Diagnostic(f"the document expands to more than {MAX_FILE_BYTES // 1_000_000} MB of text (aliases "
                              "counted as often as they are used)", here,
                              hint="an alias (*name) repeats its anchor's whole value: use fewer or smaller ones")
        if count > MAX_YAML_NODES or (self.open_ and self.open_[-1][1] > MAX_YAML_NODES):
            return Diagnostic(f"the document expands to more than {MAX_YAML_NODES:,} values "
                              "(aliases counted as often as they are used)", here,
                              hint="an alias (*name) repeats its anchor's whole value: use fewer or "
                                   "smaller ones")
        return None


def _short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag[:60]


def _too_big(literal: str, where: Span | None) -> Diagnostic:
    return Diagnostic(f"integer literal {literal[:20]}... has {len(literal)} characters; at most "
                      f"{MAX_INT_DIGITS} digits are allowed", where,
                      hint="counts in a turn structure are small: use a smaller number")


def int_literal_problem(literal: str, where: Span | None) -> Diagnostic | None:
    """An integer literal of an expression that is too long to be a count."""
    return _too_big(literal, where) if len(literal.lstrip("+-")) > MAX_INT_DIGITS else None


def expr_deeper_than(e, limit: int) -> bool:
    """Whether an IR expression nests more than `limit` levels (definitions expanded). Iterative,
    and each shared subexpression (an argument used twice) is measured once."""
    from verifier.ir.expr import children

    depth: dict[int, int] = {}
    stack = [(e, False)]
    while stack:
        node, kids_done = stack.pop()
        if id(node) in depth:
            continue
        kids = children(node)
        if kids_done:
            depth[id(node)] = 1 + max((depth[id(k)] for k in kids), default=0)
            if depth[id(node)] > limit:
                return True
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in depth)
    return False


def deeper_than(tree, limit: int) -> bool:
    """Whether a parse tree (lark Tree) nests more than `limit` levels once converted: a flat
    chain `a + b + c` becomes nested operators, so each operator of a node counts as a level
    (but `and`/`or` chains, which stay flat). Iterative, so any depth is measured."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = getattr(node, "children", ())
        extra = 0 if getattr(node, "data", None) in _FLAT else len(children) // 2
        stack.extend((child, depth + 1 + extra) for child in children)
    return False


def claim_size_problems(model, claims) -> list[Diagnostic]:
    """What the claims ask for beyond the limits (checked once they are read, before any search):
    quantifier domains wider than MAX_ARRAY once the model's parameters are substituted (their
    sizes computed from the bounds, at their widest where these read the state, never
    materialised). `within:` and `at_most:` are checked
    where they are read (MAX_STEP_BOUND)."""
    from dataclasses import fields

    from verifier.ir.expr import ExprBase, Quant, walk
    from verifier.ir.props import Event
    from verifier.lang.checks import quantifier_too_wide

    concrete = model.instantiate()
    out = []
    for claim in claims:
        for fd in fields(claim):
            value = getattr(claim, fd.name)
            e = value.expr if isinstance(value, Event) else value
            if not isinstance(e, ExprBase):
                continue
            for q in walk(concrete.fix_params(e)):
                words = quantifier_too_wide(concrete, q) if isinstance(q, Quant) else None
                if words is not None:
                    out.append(Diagnostic(words, q.span or claim.span, hint="quantify over players or an array index"))
    return out
