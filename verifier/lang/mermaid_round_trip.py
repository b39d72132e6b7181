"""The `%% turnproof ...` comments of turnproof's Mermaid export (`report.mermaid.round_trip_lines`),
read back by `import-mermaid`: the arrows' conditions as the model writes them, the phases'
`exit_when`, which arrows are `otherwise:`, the declarations of what the conditions read (players,
enums, parameters, variables) and each phase's `rule:` and `doc:`.

A Mermaid file is untrusted input: each line is checked here (a positioned error for one that is
not as the export writes it); the names go into the skeleton only as identifiers and every value
as a JSON (so YAML) scalar or list, so nothing read here can add a key or a line to the skeleton.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from verifier.diagnostics import Diagnostic, Span, UsageError

PREFIX = re.compile(r"^\s*%%\s*turnproof\s+(declare|exit_when|when|otherwise)\b\s*(.*?)\s*$")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ARROW = re.compile(r"([A-Za-z0-9_]+) (-->|==>) ([A-Za-z0-9_]+)")
DECLARATION_KEYS = ("type", "per", "init", "reset", "overflow", "overflow_rule", "label", "values", "doc")
PARAMETER_KEYS = ("default", "min", "max", "doc")
PHASE_KEYS = ("rule", "doc")
TOP_KEYS = ("players", "enums", "params", "variables", "phases")
MAX_CONDITION = 2000          # characters of one condition


@dataclass
class RoundTrip:
    """What the comments of one flowchart say."""

    players: int | None = None
    enums: dict[str, list[str]] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    variables: dict[str, dict[str, Any]] = field(default_factory=dict)
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)     # phase name -> its rule and doc
    exit_when: dict[str, str] = field(default_factory=dict)            # node id -> condition
    arrows: dict[str, tuple[str | None, bool]] = field(default_factory=dict)   # "A --> B" -> (when, otherwise)

    def arrow(self, src: str, dst: str, thick: bool) -> tuple[str | None, bool]:
        """The condition (None: none) of the arrow from node `src` to `dst` and whether it is `otherwise:`."""
        return self.arrows.get(f"{src} {'==>' if thick else '-->'} {dst}", (None, False))


def read_round_trip(body: str, path: str, first_line: int) -> RoundTrip:
    out = RoundTrip()
    for k, raw in enumerate(body.splitlines()):
        m = PREFIX.match(raw)
        if m is None:
            continue
        line = first_line + k
        kind, rest = m.groups()
        if kind == "declare":
            _declare(out, rest, path, line)
            continue
        key, colon, condition = rest.partition(":")
        key, condition = key.strip(), condition.strip()
        if kind == "otherwise":
            if colon or not ARROW.fullmatch(key):
                raise _error(path, line, f"'%% turnproof otherwise' names an arrow, not {rest[:60]!r}",
                             "e.g. %% turnproof otherwise Draw --> Main")
            out.arrows[key] = (None, True)
            continue
        shape = NAME if kind == "exit_when" else ARROW
        if not colon or not shape.fullmatch(key) or not condition or len(condition) > MAX_CONDITION:
            example = "exit_when Main: hand > 0" if kind == "exit_when" else "when Draw --> Main: hand > 0"
            raise _error(path, line, f"cannot read '%% turnproof {kind} {rest[:60]}'",
                         f"e.g. %% turnproof {example} (a condition of at most {MAX_CONDITION} characters)")
        if kind == "exit_when":
            out.exit_when[key] = condition
        else:
            out.arrows[key] = (condition, False)
    return out


def _declare(out: RoundTrip, text: str, path: str, line: int) -> None:
    hint = 'e.g. %% turnproof declare {"variables": {"ready": {"type": "bool", "init": false}}}'
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise _error(path, line, "'%% turnproof declare' is not followed by a JSON object", hint) from None
    if not isinstance(doc, dict) or not set(doc) <= set(TOP_KEYS):
        raise _error(path, line, f"'%% turnproof declare' takes an object of {', '.join(TOP_KEYS)}", hint)
    players = doc.get("players")
    if players is not None:
        if not isinstance(players, int) or isinstance(players, bool) or not 1 <= players <= 64:
            raise _error(path, line, f"'%% turnproof declare': players must be a number from 1 to 64, not "
                                     f"{str(players)[:40]!r}", hint)
        out.players = players
    enums = doc.get("enums", {})
    if not isinstance(enums, dict) or not all(_is_name(k) and isinstance(v, list) and v and all(map(_is_name, v))
                                              for k, v in enums.items()):
        raise _error(path, line, "'%% turnproof declare': enums maps names to lists of names", hint)
    variables = doc.get("variables", {})
    if not isinstance(variables, dict) or not all(
            _is_name(k) and isinstance(v, dict) and set(v) <= set(DECLARATION_KEYS) and "type" in v
            for k, v in variables.items()):
        raise _error(path, line, "'%% turnproof declare': variables maps names to declarations with a type and "
                                 f"only {', '.join(DECLARATION_KEYS)}", hint)
    if not _entries(doc.get("params", {}), _is_parameter):
        raise _error(path, line, "'%% turnproof declare': params maps names to objects of a whole-number default "
                                 "and only " + ", ".join(PARAMETER_KEYS), hint)
    if not _entries(doc.get("phases", {}), _is_phase):
        raise _error(path, line, "'%% turnproof declare': phases maps names to objects of only a rule "
                                 "({section, text}) and a doc", hint)
    for name, values in enums.items():
        out.enums.setdefault(name, values)
    for name, declaration in variables.items():
        out.variables.setdefault(name, declaration)
    for name, declaration in doc.get("params", {}).items():
        out.params.setdefault(name, declaration)
    for name, declaration in doc.get("phases", {}).items():
        out.phases.setdefault(name, declaration)


def _entries(entries: object, valid: Any) -> bool:
    return isinstance(entries, dict) and all(_is_name(k) and isinstance(v, dict) and valid(v)
                                             for k, v in entries.items())


def _is_number(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_parameter(p: dict[str, Any]) -> bool:
    return set(p) <= set(PARAMETER_KEYS) and "default" in p and isinstance(p.get("doc", ""), str) \
        and all(_is_number(p[k]) for k in ("default", "min", "max") if k in p)


def _is_phase(p: dict[str, Any]) -> bool:
    rule = p.get("rule", {"section": ""})
    return set(p) <= set(PHASE_KEYS) and isinstance(p.get("doc", ""), str) and isinstance(rule, dict) \
        and "section" in rule and set(rule) <= {"section", "text"} and all(isinstance(x, str) for x in rule.values())


def _is_name(x: object) -> bool:
    return isinstance(x, str) and NAME.fullmatch(x) is not None


def _error(path: str, line: int, message: str, hint: str) -> UsageError:
    return UsageError(Diagnostic(message, Span(path, line, 1), hint=hint))
