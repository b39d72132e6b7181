"""`[tool.turnproof]` in the user's pyproject.toml: project defaults for common options.

The nearest pyproject.toml from the current directory upward that has a
`[tool.turnproof]` table is read. Each key is an option's long name; it becomes
that option's default in every subcommand that has the option, so the command
line still overrides it. An unknown key, a value of the wrong type or out of
range, or a file that is not TOML is an error at its `file:line:col` (exit 2).
Paths are relative to the directory of the pyproject.toml and stay inside it (no absolute
path, no '..'); the file itself, like every file a path names, is read only when it is a
regular file of that directory (`files.read_input`).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from verifier.diagnostics import Diagnostic, Span, UsageError, printable, quotable
from verifier.engines.names import ENGINES, STORES
from verifier.files import NotAnInput, read_input

FILE_NAME = "pyproject.toml"
MAX_BYTES = 1_000_000
TABLE = ("tool", "turnproof")


@dataclass(frozen=True)
class Key:
    """One key of `[tool.turnproof]`: the option it sets (`dest`), its type and what it takes."""

    dest: str
    kind: str                      # int, count (int >= 0), seconds, str, path, bool, or "choice"
    choices: tuple[str, ...] = ()


KEYS: dict[str, Key] = {
    "timeout": Key("timeout", "seconds"),
    "max-states": Key("max_states", "int"),
    "rlimit": Key("rlimit", "int"),
    "max-memory": Key("max_memory", "int"),
    "max-depth": Key("max_depth", "count"),
    "engine": Key("engine", "choice", tuple(ENGINES)),
    "store": Key("store", "choice", STORES),
    "workers": Key("workers", "int"),
    "por": Key("por", "bool"),
    "variant": Key("variant", "str"),
    "properties": Key("properties", "path"),
    "baseline": Key("baseline", "path"),
    "output-dir": Key("output", "path"),           # `report -o DIR` only (check's -o is a file)
    "gate": Key("gate", "bool"),
    "graph-limit": Key("graph_limit", "int"),
    "graph-states": Key("graph_states", "int"),
}
ONLY_IN = {"output-dir": ("report",)}               # keys whose option means something else elsewhere
NOT_IN = {"properties": ("report",)}                # report -p takes one model only

EXAMPLE = 'e.g. timeout = 120, max-states = 1000000, baseline = "baselines/"'


@dataclass(frozen=True)
class Config:
    path: Path
    values: dict[str, Any]         # key -> value, checked and converted (paths made relative to the cwd)


def find(start: Path) -> Path | None:
    """The nearest pyproject.toml from `start` upward with a `[tool.turnproof]` table."""
    for folder in (start, *start.parents):
        candidate = folder / FILE_NAME
        if candidate.exists() and _mentions_table(candidate):
            return candidate
    return None


def _text(path: Path) -> str:
    """The file's text, read only when it is a regular file of its own folder (a pull request's
    pyproject.toml linked to a secret is refused, exit 2, and never quoted)."""
    shown = _shown_path(path)
    quotable(shown, None)
    try:
        raw = read_input(shown, project=path.parent, limit=MAX_BYTES)
    except NotAnInput as refused:
        raise UsageError(Diagnostic(str(refused), hint=f"a {FILE_NAME} is a regular file of its folder; run "
                                                       "turnproof from a folder outside this project")) from None
    except OSError as err:
        raise UsageError(Diagnostic(f"cannot read {shown}: {err.strerror}")) from None
    if len(raw) > MAX_BYTES:
        raise UsageError(Diagnostic(f"{shown} is larger than {MAX_BYTES // 1_000_000} MB"))
    text = raw.decode("utf-8", errors="replace")
    if printable(text) == text:            # no control character: an error may quote its lines
        quotable(shown, text)
    return text


def _mentions_table(path: Path) -> bool:
    text = _text(path)
    return re.search(r"(?m)^\s*\[\s*\"?tool\"?\s*\.\s*\"?turnproof\"?", text) is not None \
        or re.search(r"(?m)^\s*turnproof\s*(\.|=\s*\{)", text) is not None


def load(path: Path) -> Config:
    """Read and check `[tool.turnproof]` of `path` (raises UsageError with the position)."""
    text = _text(path)
    shown = _shown_path(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"at line (\d+), column (\d+)", str(err))
        span = Span(shown, int(m.group(1)), int(m.group(2))) if m else Span(shown, 1, 1)
        raise UsageError(Diagnostic(f"{FILE_NAME} is not valid TOML: {str(err).split(' (at')[0]}", span,
                                    hint="fix the file, or run turnproof from a folder outside this project")) from None
    table: Any = doc
    for part in TABLE:
        table = table.get(part, {}) if isinstance(table, dict) else {}
    where = _Locator(shown, text)
    if not isinstance(table, dict):
        raise UsageError(Diagnostic("tool.turnproof must be a table", where.header(), hint=f"[tool.turnproof] then {EXAMPLE}"))
    values = {}
    for key, value in table.items():
        spec = KEYS.get(key)
        if spec is None:
            close = [k for k in KEYS if k.replace("-", "_") == key or k.replace("-", "") == key.replace("_", "")]
            hint = f"did you mean '{close[0]}'?" if close else f"the keys are: {', '.join(KEYS)}"
            raise UsageError(Diagnostic(f"unknown key '{key}' in [tool.turnproof]", where.key(key), hint=hint))
        values[key] = _checked(key, spec, value, where, path.parent)
    return Config(path, values)


def _checked(key: str, spec: Key, value: Any, where: _Locator, base: Path) -> Any:
    def wrong(wanted: str, example: str) -> UsageError:
        return UsageError(Diagnostic(f"[tool.turnproof] {key} must be {wanted}, not {_toml_repr(value)}",
                                     where.value(key), hint=f"e.g. {key} = {example}"))

    if spec.kind in ("int", "count"):
        least = 0 if spec.kind == "count" else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise wrong("a whole number" + (" of at least 0" if least == 0 else " of at least 1"), "100")
        return value
    if spec.kind == "seconds":
        if value == "none":                 # no limit (check, lint, report and diff have one by default)
            return None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < 1e8 \
                or not math.isfinite(value):
            raise wrong('a positive number of seconds or "none"', "60")
        return float(value)
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise wrong("true or false", "true")
        return value
    if not isinstance(value, str) or not value.strip():
        raise wrong("a non-empty string", f'"{spec.choices[0]}"' if spec.choices else '"..."')
    if spec.kind == "choice" and value not in spec.choices:
        raise wrong(f"one of {', '.join(spec.choices)}", f'"{spec.choices[0]}"')
    if spec.kind == "path":
        written = os.path.normpath(value)
        if os.path.isabs(value) or written == os.pardir or written.startswith(os.pardir + os.sep):
            raise UsageError(Diagnostic(f"[tool.turnproof] {key} must be a path inside the project (the folder of "
                                        f"{FILE_NAME}), not {_toml_repr(value)}", where.value(key),
                                        hint=f"write it relative to the folder of {FILE_NAME}, without '..'"))
        return os.path.relpath(base / value)
    return value


def _toml_repr(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= 40 else f'"{value[:37]}..."'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _shown_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


class _Locator:
    """Line and column of a key of `[tool.turnproof]` in the file's text (tomllib gives none)."""

    HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
    KEY = re.compile(r"^(\s*)(\"?)([A-Za-z0-9_-]+)\2\s*(\.\s*[^=]*)?=\s*")

    def __init__(self, file: str, text: str):
        self.file = file
        self.lines = text.splitlines()

    @staticmethod
    def _name(header: str) -> tuple[str, ...]:
        return tuple(part.strip().strip('"').strip("'") for part in header.split("."))

    def _find(self, key: str) -> tuple[int, int, int] | None:
        """(line, key column, value column) of `key` directly in the table or as a sub-table header."""
        current: tuple[str, ...] = ()
        for n, line in enumerate(self.lines, 1):
            header = self.HEADER.match(line)
            if header:
                current = self._name(header.group(1))
                if current[:3] == (*TABLE, key):
                    col = line.index(key) + 1
                    return n, col, col
                continue
            m = self.KEY.match(line)
            if m and current == TABLE and m.group(3) == key:
                return n, len(m.group(1)) + 1, m.end() + 1
        return None

    def header(self) -> Span:
        for n, line in enumerate(self.lines, 1):
            header = self.HEADER.match(line)
            if header and self._name(header.group(1))[:2] == TABLE:
                return Span(self.file, n, line.index("[") + 1)
        return Span(self.file, 1, 1)

    def key(self, key: str) -> Span:
        found = self._find(key)
        return Span(self.file, found[0], found[1], found[0], found[1] + len(key)) if found else self.header()

    def value(self, key: str) -> Span:
        found = self._find(key)
        return Span(self.file, found[0], found[2]) if found else self.header()


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that remembers the destinations of its options and its subcommands
    (argparse keeps both private); its subcommands' parsers are Parsers too."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.dests: set[str] = set()            # filled while argparse adds --help below
        self.commands: dict[str, Parser] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.dests.add(action.dest)
        return action

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        self.commands = action.choices          # filled as each subcommand registers
        return action


class Commands(Protocol):
    """What a subcommand module's `register` is given: the `add_subparsers` result of the
    `turnproof` Parser, through which it adds its own Parser."""

    def add_parser(self, name: str, **kwargs: Any) -> Parser: ...


def apply(config: Config, parser: Parser) -> None:
    """Make each key the default of its option in every subcommand that has it."""
    for name, command in parser.commands.items():
        defaults = {KEYS[k].dest: v for k, v in config.values.items()
                    if KEYS[k].dest in command.dests and _applies(k, name)}
        if defaults:
            command.set_defaults(**defaults)


def help_line(command: str, parser: Parser) -> str:
    """For a subcommand's --help: which [tool.turnproof] keys set its defaults."""
    keys = [k for k, spec in KEYS.items() if spec.dest in parser.dests and _applies(k, command)]
    if not keys:
        return ""
    return "\n\n" + textwrap.fill(f"defaults: [tool.turnproof] in the nearest pyproject.toml (from the current "
                                   f"folder up) may set {', '.join(keys)}; the command line overrides them.", 78)


def _applies(key: str, command: str) -> bool:
    return command in ONLY_IN.get(key, (command,)) and command not in NOT_IN.get(key, ())
