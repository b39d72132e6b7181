"""Markdown rendering of report documents (GitHub-flavoured: tables, inline HTML anchors).

Diagrams are referenced as image files beside the page (`<stem>.svg`), with a
link to their DOT source.
"""
from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from verifier.report.doc import Bullets, Defs, Document, Figure, Heading, Inline, Note, Para, Pre, Span, Table, spans
from verifier.report.escaping import markdown_code, markdown_text
from verifier.report.pages import (
    GamePage,
    TraceView,
    claim_document,
    game_document,
    index_document,
    trace_document,
)

EXT = ".md"


_escape = markdown_text


def _href(s: Span) -> str:
    if s.href is not None:
        return s.href
    target = "" if s.page is None else s.page + EXT
    return target + (f"#{quote(s.anchor, safe='-_.~')}" if s.anchor else "")


def inline(x: Inline, in_table: bool = False) -> str:
    """Markdown for inline text; in a table cell a '|' inside a code span is escaped too (GFM)."""
    out = []
    for s in spans(x):
        if isinstance(s, str):
            out.append(_escape(s))
        elif s.kind == "b":
            out.append(f"**{_escape(s.text)}**")
        elif s.kind in ("i", "muted"):
            out.append(f"*{_escape(s.text)}*")
        elif s.kind in ("code", "verdict"):
            out.append(markdown_code(s.text, in_table))
        elif s.kind == "link":
            out.append(f"[{_escape(s.text)}]({_href(s)})")
        elif s.kind == "bad":
            out.append(f"**{_escape(s.text)}**")
        else:
            out.append(_escape(s.text))
    return "".join(out)


def _cell(x: Inline) -> str:
    return inline(x, in_table=True) or " "


def render(doc: Document) -> str:
    lines: list[str] = []
    for k, v in doc.meta.items():
        lines.append(f"<!-- {k}: {v} -->")
    if doc.meta:
        lines.append("")
    for block in doc.blocks:
        lines += _block(block)
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def _block(block) -> list[str]:
    if isinstance(block, Heading):
        anchor = f'<a id="{block.anchor}"></a>' if block.anchor else ""
        return [f"{'#' * block.level} {anchor}{inline(block.text)}"]
    if isinstance(block, Para):
        return [inline(block.text)]
    if isinstance(block, Note):
        return [f"> {inline(block.text)}"]
    if isinstance(block, Bullets):
        return [f"- {inline(item)}" for item in block.items]
    if isinstance(block, Defs):
        return [f"- {inline(term)}: {inline(desc)}" for term, desc in block.items]
    if isinstance(block, Table):
        out = ["| " + " | ".join(_escape(h) for h in block.header) + " |",
               "|" + "---|" * len(block.header)]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
        return out
    if isinstance(block, Figure):
        d = block.diagram
        caption = inline(block.caption)
        return [f"![{_escape(d.alt or d.title)}]({d.stem}.svg)", "",
                (caption + " " if caption else "") + f"([SVG]({d.stem}.svg)"
                + (f", [DOT source]({d.stem}.dot))" if d.dot else ")")]
    if isinstance(block, Pre):
        fence = "````" if "```" in block.text else "```"
        return [fence + "text", block.text, fence]
    raise TypeError(f"unknown block {block!r}")


def game_markdown(page: GamePage, timings: bool = True) -> str:
    return render(game_document(page, timings))


def index_markdown(pages: Sequence[GamePage]) -> str:
    return render(index_document(pages))


def trace_markdown(page: GamePage, view: TraceView) -> str:
    return render(trace_document(page, view))


def claim_markdown(page: GamePage, cid: str, timings: bool = True) -> str:
    return render(claim_document(page, cid, timings))
