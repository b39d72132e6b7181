"""YAML documents with the position of every key and value (ruamel.yaml round-trip)."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.parser import RoundTripParser

from verifier.diagnostics import Diagnostic, DiagnosticSink, ModelError, Span, TurnproofError
from verifier.lang.expressions import Origin
from verifier.lang.limits import EventLimits, OverLimit, read_input_text


@dataclass(frozen=True)
class Source:
    """A file's name and lines, shared by all nodes of one document (and by every load of the same
    text: `_source`), with the origins worked out so far."""

    file: str
    lines: tuple[str, ...]
    origins: dict[tuple[int, int, str], Origin] = field(default_factory=dict, compare=False, repr=False)

    def origin(self, line: int, col: int, text: str) -> Origin:
        """Where each character of the scalar `text` written at line:col lies in the file (once a scalar:
        each reading of a model, at each of its values, and its claims read them again)."""
        key = (line, col, text)
        if key not in self.origins:
            self.origins[key] = self._origin(line, col, text)
        return self.origins[key]

    def _origin(self, line: int, col: int, text: str) -> Origin:
        """`origin`, worked out.

        Handles plain (folded over lines), quoted and block (``|``, ``>``) scalars by
        aligning the text with the source; escapes and folds are skipped over. An alias
        (``*name``) points back at its anchor; anchors and tags before a value are skipped.
        """
        line, col = self._value_start(line, col)
        lead = self._char(line, col)
        quote = lead if lead in "\"'" else ""
        if lead in "|>":
            line, col = line + 1, 1
        elif quote:
            col += 1
        positions: list[tuple[int, int]] = []
        for ch in text:
            line, col = self._seek(line, col, ch, quote)
            positions.append((line, col))
            col += 2 if quote == '"' and self._char(line, col) == "\\" else 1
        positions.append((line, col))
        return Origin(self.file, tuple(positions))

    def _value_start(self, line: int, col: int) -> tuple[int, int]:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        alias = re.match(r"\*([^\s,\]}]+)", text[col - 1:])
        if alias:
            for number, other in enumerate(self.lines, 1):
                found = re.search(rf"&{re.escape(alias.group(1))}(?=\s)", other)
                if found:
                    line, col, text = number, found.start() + 1, other
                    break
        prefix = re.match(r"(?:[&!]\S*\s+)*", text[col - 1:])
        return line, col + (prefix.end() if prefix else 0)

    def _char(self, line: int, col: int) -> str:
        if 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            return text[col - 1] if 0 < col <= len(text) else "\n"
        return ""

    def _seek(self, line: int, col: int, ch: str, quote: str) -> tuple[int, int]:
        """The next source position (from line:col) that holds `ch`, skipping folding whitespace."""
        here = self._char(line, col)
        if here == ch or (ch.isspace() and here.isspace()) or (quote == '"' and here == "\\"):
            return line, col
        start = (line, col)
        while here.isspace() and here != "":
            line, col = (line + 1, 1) if here == "\n" else (line, col + 1)
            here = self._char(line, col)
            if here == ch:
                return line, col
        return start


@dataclass(frozen=True)
class Node:
    """A YAML value and where it is: `span` points at the value, `key_span` at its key."""

    value: Any
    span: Span
    key_span: Span | None
    source: Source

    @property
    def file(self) -> str:
        return self.source.file

    def get(self, key: str) -> Node | None:
        if not isinstance(self.value, CommentedMap) or key not in self.value:
            return None
        return self.child(key)

    def child(self, key: Any) -> Node:
        v, f = self.value, self.source.file
        if isinstance(v, CommentedMap):
            written = _written_in(v, key)
            if written is None:         # no position kept for it: the mapping's own
                return Node(v[key], self.span, self.span, self.source)
            kl, kc = written.lc.key(key)
            vl, vc = written.lc.value(key)
            return Node(v[key], Span(f, vl + 1, vc + 1), Span(f, kl + 1, kc + 1), self.source)
        line, col = v.lc.item(key)
        return Node(v[key], Span(f, line + 1, col + 1), None, self.source)

    def items(self) -> list[tuple[str, Node]]:
        return [(str(k), self.child(k)) for k in self.value] if self.is_map else []

    def elements(self) -> list[Node]:
        return [self.child(i) for i in range(len(self.value))] if self.is_list else []

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, CommentedMap)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, CommentedSeq)

    def origin(self) -> Origin:
        """Positions of the characters of this scalar (for expression spans)."""
        return self.source.origin(self.span.line, self.span.col, str(self.value))

    def key_origin(self, key: str) -> Origin:
        """Positions of the characters of this node's key, which reads `key`."""
        assert self.key_span is not None
        return self.source.origin(self.key_span.line, self.key_span.col, key)


def _written_in(mapping: CommentedMap, key: Any, depth: int = 0) -> CommentedMap | None:
    """The mapping whose text holds `key`: `mapping` itself, or one merged into it by a YAML merge key
    (`<<: *anchor`, `<<: [*a, *b]`), where the key keeps its position (the first merged one wins, as
    in the value)."""
    if key in (mapping.lc.data or ()):
        return mapping
    if depth < MAX_MERGE_DEPTH:
        for item in getattr(mapping, "merge", ()):
            merged = item[1] if isinstance(item, tuple) else item      # (position, map) in older ruamel
            if isinstance(merged, CommentedMap) and key in merged and \
                    (found := _written_in(merged, key, depth + 1)) is not None:
                return found
    return None


MAX_MERGE_DEPTH = 48            # as deep as YAML may nest (limits.MAX_DEPTH)
_PARSED: dict[str, tuple[str, object]] = {}   # path -> (text, data) of its last parse
PARSED_KEPT = 16


def load_yaml(path: str, error: type[TurnproofError] = ModelError) -> Node:
    """The document at `path` as a Node; a missing file or malformed YAML raises `error`.
    A file read again with the same text (each variant of a model loads it) is not parsed
    again: the loaders only read the document."""
    text = read_input_text(path, error, missing_hint="check the path; models live in models/, "
                                                     "claims in properties/")
    key = str(Path(path).resolve())
    try:
        if key in _PARSED and _PARSED[key][0] == text:
            return Node(_PARSED[key][1], Span(path, 1, 1), None, _source(path, text))
        data = _parse(path, text)
    except OverLimit as over:
        raise error(over.diagnostic) from None
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        span = Span(path, mark.line + 1, mark.column + 1) if mark else None
        duplicate = re.match(r'found duplicate key "(.*?)"', str(err.problem))
        if duplicate:
            raise error(Diagnostic(f"duplicate name '{duplicate.group(1)}'", span,
                                   hint="every key of a mapping needs its own name: rename or remove one")) from None
        if str(err.problem).endswith("but got '['") and "flow mapping" in str(err.context):
            raise error(Diagnostic("a key with [ ] inside {...}: YAML reads the '[' as the start of a list", span,
                                   hint='quote the key, {"hand[active]": 0}, or write the mapping in block style '
                                        "(one key: value a line)")) from None
        opened = err.context_mark if err.problem and err.context and err.context_mark else None
        begun = (f" ({err.context} that starts at line {opened.line + 1}, column {opened.column + 1})"
                 if opened and err.problem_mark and opened.line != err.problem_mark.line else "")
        raise error(Diagnostic(f"malformed YAML: {err.problem or err.context}{begun}", span,
                               hint=_yaml_hint(str(err.problem)))) from None
    except (YAMLError, RecursionError) as err:       # what the limits let through
        raise error(Diagnostic(f"malformed YAML: {' '.join(str(err).split())[:200]}", Span(path, 1, 1),
                               hint="check indentation, colons and quotes")) from None
    if not isinstance(data, CommentedMap):
        raise error(Diagnostic("the file must be a YAML mapping (key: value lines)", Span(path, 1, 1)))
    if len(_PARSED) >= PARSED_KEPT:
        _PARSED.clear()
    _PARSED[key] = (text, data)
    return Node(data, Span(path, 1, 1), None, _source(path, text))


@lru_cache(maxsize=PARSED_KEPT)
def _source(path: str, text: str) -> Source:
    """The Source of a file's text, one for every load of that text."""
    return Source(path, tuple(text.splitlines()))


def _yaml_hint(problem: str) -> str:
    """What to do about ruamel's `problem`."""
    if "undefined alias" in problem:
        return "an alias (*name) repeats a value anchored (&name) earlier in the file: anchor it first"
    if "for merging" in problem:
        return "<<: takes an anchored mapping (<<: *name) or a list of them (<<: [*a, *b])"
    return "check indentation, colons and quotes around expressions that contain ':' or start with a special character"


class _LimitedParser(RoundTripParser):
    """ruamel's round-trip parser, each event checked against the limits (`limits.EventLimits`)
    before the composer takes it: a hostile document stops where it goes past one, before
    anything is built from it, in the one pass that reads it."""

    def __init__(self, loader: Any, limits: EventLimits):
        super().__init__(loader)
        self.limits = limits

    def get_event(self) -> Any:
        event = super().get_event()
        self.limits.check(event)
        return event


def _parse(path: str, text: str) -> Any:
    yaml = YAML(typ="rt")
    yaml.Parser = partial(_LimitedParser, limits=EventLimits(path))
    return yaml.load(text)


def suggest(name: str, valid: list[str] | tuple[str, ...], what: str = "valid names") -> str:
    """'did you mean ...?' from the nearest valid names, or the list of all of them."""
    close = difflib.get_close_matches(name, list(valid), n=3, cutoff=0.5)
    if close:
        return f"did you mean {' or '.join(repr(c) for c in close)}?"
    return f"{what}: {', '.join(valid)}" if valid else f"no {what} are declared"


SHELF_PREFIX = "x-"     # top-level keys the loaders skip: a shelf for YAML anchors (`x-refill: &refill {...}`)


def shelf_keys(root: Node) -> tuple[str, ...]:
    """The top-level keys of a model or property file that are a shelf for anchors."""
    return tuple(str(k) for k in root.value if str(k).startswith(SHELF_PREFIX)) if root.is_map else ()


def check_keys(node: Node, allowed: tuple[str, ...], what: str, sink: DiagnosticSink,
               required: tuple[str, ...] = ()) -> None:
    """Report unknown and missing keys of a mapping."""
    if not node.is_map:
        sink.error(f"{what} must be a mapping", node.span, hint=f"fields: {', '.join(allowed)}")
        return
    for key, child in node.items():
        if key not in allowed:
            sink.error(f"unknown field '{key}' in {what}", child.key_span, hint=suggest(key, allowed, "allowed here"))
    for key in required:
        if key not in node.value:
            sink.error(f"{what} has no '{key}'", node.span, hint=f"add '{key}: ...'")
