"""Display names: a variable's `label:` and the names of an int range's values (`values:`).

They change only what people read (traces, findings, reports; `verifier.trace.Names`): the
engines, claims and JSON keep the variable names and numbers. A label or value name is short
printable text that reads unambiguously in a trace table (`label[0]: old→new`, `name=value`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from verifier.diagnostics import DiagnosticSink, Span
from verifier.ir.expr import Const, Expr, Param, fold, map_expr
from verifier.ir.model import BoolType, EnumType, IntType, Type, Variable
from verifier.lang.yaml_source import Node

MAX_CHARS = 40
TEXT_RE = re.compile(r"[^\W_](?:[\w '.,()/+#-]*[\w'.,()/+#-])?")     # starts with a letter or digit, ends in no space
ALLOWED = "letters, digits, spaces and - ' . , ( ) / + # _"
# a label may hold any printable character but those that separate a name from its value or index in a
# trace (`name=value`, `label[0]: old→new`, `label=[5,5]`), a table's bar, and escape or code marks
LABEL_REFUSED = frozenset("=:[]{}→|\\`")
LABEL_ALLOWED = "letters, digits, spaces and any printable sign but = : [ ] { } → | \\ `"
PLAYERS_ELEMENT = re.compile(r"player \d+ is .*|.* of player \d+")     # how a player's element reads (`trace.Names`)


def read_text(node: Node, what: str, sink: DiagnosticSink, label: bool = False) -> str | None:
    """A value name (a `label`): text of 1 to MAX_CHARS characters from ALLOWED (LABEL_ALLOWED), starting
    with a letter or digit and ending in no space."""
    text = node.value
    if not isinstance(text, str):
        sink.error(f"{what} must be text, not {text!r}", node.span,
                   hint="quote it: a label is words, e.g. \"cards in hand\"")
        return None
    if not 0 < len(text) <= MAX_CHARS:
        sink.error(f"{what} has {len(text)} characters; give 1 to {MAX_CHARS}", node.span,
                   hint="a short name as the page says it, e.g. \"cards in hand\"")
        return None
    if not (_label_text(text) if label else TEXT_RE.fullmatch(text)):
        if label:
            bad = next((c for c in text if c in LABEL_REFUSED or not c.isprintable()), None)
        else:
            bad = next((c for c in text if not (c.isalnum() or c in " '.,()/+#-_")), None)
        why = f"the character {bad!a}" if bad is not None else "a space or sign at its start, or a space at its end"
        sink.error(f"{what} {text!a} has {why}, which a {'label' if label else 'value name'} may not hold",
                   node.span, hint=f"use {LABEL_ALLOWED if label else ALLOWED}; start with a letter or digit")
        return None
    return text


def _label_text(text: str) -> bool:
    return text[0].isalnum() and not text[-1].isspace() and \
        all(c.isprintable() and c not in LABEL_REFUSED for c in text)


def read_label(node: Node, what: str, sink: DiagnosticSink) -> str | None:
    """A variable's label: text as `read_text` wants it, that does not read as one player's element (traces
    write those `player 0 is <label>`, `<label> of player 0`, and a compact state groups them again)."""
    text = read_text(node, what, sink, label=True)
    if text is not None and PLAYERS_ELEMENT.fullmatch(text):
        sink.error(f"{what} {text!a} reads as one player's element ('player 0 is ...', '... of player 0')",
                   node.span, hint="name the variable alone; traces add the player (\"cards held\" reads "
                                   "\"cards held of player 0\")")
        return None
    return text


NOUN_ENDINGS = ("tion", "sion", "ment", "ness", "ance", "ence", "ity", "ship", "dom")
NOT_PLURAL = ("ss", "us", "is", "ous")


def reads_as_a_thing(label: str) -> bool:
    """Whether a bool's label is one word that names a thing rather than a state (`protection`, `shields`):
    a noun ending (-tion, -ment, -ness, -ity, ...) or a plural. Only such clear cases: a phrase (`under
    protection`, `the winner`) or a word without those endings (`ready`, `mana`) is taken as written."""
    words = label.split()
    if len(words) != 1 or not words[0].isalpha():
        return False
    word = words[0].lower()
    return len(word) > 4 and (word.endswith(NOUN_ENDINGS) or (word.endswith("s") and not word.endswith(NOT_PLURAL)))


def read_value_names(node: Node, t: Type, params: Mapping[str, int | None], what: str,
                     sink: DiagnosticSink) -> tuple[str, ...]:
    """`values: [attack, defend, pass]`: one distinct name per value of the int range `t`, lowest first."""
    if not isinstance(t, IntType):
        kind = "an enum names its values itself" if isinstance(t, EnumType) else \
            "a bool's values are false and true" if isinstance(t, BoolType) else "it has no int range"
        sink.error(f"values: names the values of an int range (lo..hi), and {what} is not one: {kind}",
                   node.span, hint="declare an enum for values that are only names")
        return ()
    lo, hi = (_fixed(e, params) for e in (t.lo, t.hi))
    if lo is None or hi is None:
        sink.error(f"values: of {what} needs a range whose bounds are known when the model loads", node.span,
                   hint="its bounds depend on a parameter left free; use constant bounds")
        return ()
    if not node.is_list:
        sink.error(f"values: of {what} must be a list of names, one per value from {lo} to {hi}", node.span,
                   hint=f"e.g. values: [{', '.join(f'v{k}' for k in range(lo, min(hi, lo + 2) + 1))}]")
        return ()
    items = node.elements()
    if len(items) != hi - lo + 1:
        sink.error(f"values: of {what} gives {len(items)} name{'s' if len(items) != 1 else ''} for the "
                   f"{hi - lo + 1} values {lo}..{hi}", node.span, hint="one name per value, lowest first")
        return ()
    names: list[str] = []
    for k, item in enumerate(items):
        name = read_text(item, f"the name of value {lo + k} of {what}", sink)
        if name is None:
            return ()
        if name in names:
            sink.error(f"value {lo + k} of {what} is named {name!r}, as value {lo + names.index(name)} is",
                       item.span, hint="each value needs its own name")
            return ()
        names.append(name)
    return tuple(names)


def check_unique(variables: list[Variable], spans: Mapping[str, Span | None],
                 error: Callable[[str, Span | None, str], None]) -> None:
    """A label names one variable: it is neither another variable's label nor another variable's name."""
    owner: dict[str, str] = {v.name: v.name for v in variables}
    for v in variables:
        if not v.label:
            continue
        other = owner.get(v.label)
        if other is not None and other != v.name:
            taken = "the name" if other == v.label else "the label"
            error(f"variable {v.name}'s label {v.label!r} is {taken} of variable {other}", spans.get(v.name),
                  "each label must name one variable in traces: choose another")
        else:
            owner[v.label] = v.name


def _fixed(e: Expr, params: Mapping[str, int | None]) -> int | None:
    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Param) and params.get(node.name) is not None:
            return Const(params[node.name])        # type: ignore[arg-type]
        return None

    out = fold(map_expr(e, fn))
    return out.value if isinstance(out, Const) and not isinstance(out.value, bool) else None
