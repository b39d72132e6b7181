"""Source positions, diagnostics and the one exception tree of turnproof.

Every user-facing error is a `TurnproofError` carrying `Diagnostic`s; the CLI
renders them as ``file:line:col: error: message`` followed by the offending
line, a caret and a hint, and exits with code 2. The offending line is quoted
only from a file whose text passed the input checks (`quotable`): a file that
failed them, or one never read as input, is named and never quoted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SHOWN_WIDTH = 120        # characters of a source line shown around the error


def printable(text: str, keep_newlines: bool = True) -> str:
    """`text` safe for a terminal: each control character (ESC, NUL, bidirectional overrides...)
    becomes one visible placeholder, so that no escape sequence reaches the terminal and columns
    stay aligned; tabs and (unless told otherwise) newlines are kept."""
    out = _CONTROL.sub(_picture, text)
    return out if keep_newlines else out.replace("\n", "\u2424")


def _picture(m: re.Match) -> str:
    code = ord(m.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7f else "\ufffd"


@dataclass(frozen=True)
class Span:
    """A region of a source file; lines and columns are 1-based."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One message about a place in a source file."""

    message: str
    span: Span | None = None
    hint: str | None = None
    severity: str = "error"
    notes: tuple[tuple[str, Span | None], ...] = ()

    def render(self, source_lines: list[str] | None = None) -> str:
        """`file:line:col: error: message`, the line (a window of it when long), a caret and the
        hint; control characters from the file are shown as placeholders, never sent raw."""
        where = f"{printable(str(self.span))}: " if self.span else ""
        out = [f"{where}{self.severity}: {printable(self.message)}"]
        if self.span and source_lines is None:
            source_lines = _QUOTABLE.get(self.span.file)
        if self.span and source_lines and 0 < self.span.line <= len(source_lines):
            text = source_lines[self.span.line - 1].rstrip("\n")
            width = 1
            if self.span.end_col and (self.span.end_line in (None, self.span.line)):
                width = max(1, self.span.end_col - self.span.col)
            start = max(0, min(self.span.col - 1 - SHOWN_WIDTH // 3, len(text) - SHOWN_WIDTH))
            shown = text[start:start + SHOWN_WIDTH]
            lead = "..." if start else ""
            out.append(f"  {self.span.line:>4} | {lead}{printable(shown, False)}"
                       + ("..." if start + SHOWN_WIDTH < len(text) else ""))
            col = len(lead) + self.span.col - 1 - start
            out.append("       | " + " " * col + "^" * min(width, max(1, len(lead) + len(shown) - col)))
        for note, span in self.notes:
            out.append(f"  note: {printable(note)}" + (f" ({span})" if span else ""))
        if self.hint:
            out.append(f"  hint: {printable(self.hint)}")
        return "\n".join(out)


_QUOTABLE: dict[str, list[str]] = {}    # file as named in spans -> its lines, once its text passed the checks
QUOTABLE_KEPT = 16


def quotable(path: str, text: str | None) -> None:
    """Let diagnostics on `path` quote its lines: call it only once `text`, as read, passed the
    input checks (a regular file of the project, size, control characters); None before it is
    read again, so that no line of an earlier reading is quoted for a file that now fails them."""
    _QUOTABLE.pop(path, None)
    if text is None:
        return
    if len(_QUOTABLE) >= QUOTABLE_KEPT:
        del _QUOTABLE[next(iter(_QUOTABLE))]
    _QUOTABLE[path] = text.splitlines()


class TurnproofError(Exception):
    """Base of every error turnproof reports to a user (exit code 2)."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("\n".join(d.message for d in self.diagnostics))

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


class ModelError(TurnproofError):
    """A model file is malformed or ill-typed."""


class PropertyError(TurnproofError):
    """A property file is malformed or ill-typed."""


class UsageError(TurnproofError):
    """A command line asks for something that does not exist."""


@dataclass
class DiagnosticSink:
    """Collects diagnostics so that a checker can report all errors at once."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, message: str, span: Span | None = None, hint: str | None = None,
              notes: tuple[tuple[str, Span | None], ...] = ()) -> None:
        self.diagnostics.append(Diagnostic(message, span, hint, "error", notes))

    def warning(self, message: str, span: Span | None = None, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(message, span, hint, "warning"))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def raise_if_errors(self, exc_type: type[TurnproofError] = ModelError) -> None:
        if self.errors:
            raise exc_type(self.errors)
