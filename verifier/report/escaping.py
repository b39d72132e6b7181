"""User text (names, rule paraphrases, messages from model files) made safe for the medium
it lands in: Markdown, Mermaid (file names: `files.file_stem`). HTML is escaped in `html`, DOT in `diagrams`,
the terminal in `text` (rich `Text`, never markup) and by `diagnostics.printable`."""
from __future__ import annotations

import re

from verifier.diagnostics import printable


def markdown_text(text: object) -> str:
    """Plain text as inline Markdown: characters with a meaning escaped (an underscore inside a
    word, as in alpha_clash, has none in GitHub Markdown and is kept), raw HTML shown as text,
    newlines folded (a newline could start a heading or a list)."""
    out = printable(str(text)).replace("\\", "\\\\")
    for ch in "*`[]<>|&~$":         # & starts an entity, ~ strikes through, $ starts math (GitHub)
        out = out.replace(ch, "\\" + ch)
    out = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", out)
    return re.sub(r"\s*\n\s*", " ", out)


def markdown_code(text: object, in_table: bool = True) -> str:
    """A Markdown code span holding `text` literally: fenced by more backticks than it contains."""
    body = re.sub(r"\s*\n\s*", " ", printable(str(text)))
    if in_table:
        body = body.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def mermaid_text(text: object) -> str:
    """Text inside a double-quoted Mermaid label or a `%%` comment: one line, no quote, no HTML, no
    entity (Mermaid reads `#name;` and `&name;` as one: `#` and `&` are written as entities themselves)."""
    out = re.sub(r"\s+", " ", printable(str(text))).replace("#", "#35;")
    return out.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;").replace("&", "#amp;")
