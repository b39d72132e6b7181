"""A tiny document model: the report pages are built once as blocks, then rendered to
Markdown (`markdown.py`) or HTML (`html.py`), so both always say the same thing.

Inline text is a sequence of spans: plain strings, or `Span(kind, text, href)`
with kind one of b (bold), i (italic), code, link, verdict, ok, bad.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Span:
    kind: str                  # b | i | code | link | verdict | ok | bad | muted
    text: str
    page: str | None = None    # link: another page's slug (None: this page)
    anchor: str | None = None  # link: an anchor on that page
    href: str | None = None    # link: a file beside the page (a DOT source)


Inline = str | Span | Sequence[str | Span]


def spans(x: Inline) -> list[str | Span]:
    if isinstance(x, (str, Span)):
        return [x]
    return list(x)


def b(text: str) -> Span:
    return Span("b", text)


def i(text: str) -> Span:
    return Span("i", text)


def code(text: str) -> Span:
    return Span("code", text)


def link(text: str, page: str | None = None, anchor: str | None = None, href: str | None = None) -> Span:
    return Span("link", text, page, anchor, href)


def verdict(text: str) -> Span:
    return Span("verdict", text)


def ok(text: str) -> Span:
    return Span("ok", text)


def bad(text: str) -> Span:
    return Span("bad", text)


def muted(text: str) -> Span:
    return Span("muted", text)


@dataclass
class Heading:
    level: int
    text: Inline
    anchor: str | None = None


@dataclass
class Para:
    text: Inline


@dataclass
class Note:
    """A remark set apart (Markdown blockquote); `kind` info | warn."""

    text: Inline
    kind: str = "info"


@dataclass
class Bullets:
    items: Sequence[Inline]


@dataclass
class Defs:
    """Terms and their explanations (a legend)."""

    items: Sequence[tuple[Inline, Inline]]


@dataclass
class Table:
    header: list[str]
    rows: Sequence[Sequence[Inline]]
    anchors: list[str | None] = field(default_factory=list)   # per row, optional
    cls: str = ""


@dataclass
class Figure:
    """A diagram: `diagram` has `stem` (file name without extension), `alt`, `svg`, `dot`.
    HTML draws an `inline` one inside the page (its tooltips work there), any other one as an
    image loaded from its file when scrolled to, so that the page itself stays light."""

    diagram: Any
    caption: Inline = ""
    inline: bool = False


@dataclass
class Pre:
    text: str


Block = Heading | Para | Note | Bullets | Defs | Table | Figure | Pre


@dataclass
class Document:
    title: str
    slug: str
    blocks: list[Block] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)   # written as a comment at the top

    def add(self, *blocks: Block) -> None:
        self.blocks.extend(blocks)
