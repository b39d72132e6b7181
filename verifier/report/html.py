"""HTML rendering of report documents: one self-contained file per page.

The main diagrams (the phase diagram, the state graph) are inlined, the others are
images of the SVG files beside the page, loaded when scrolled to; the style sheet is
inline, nothing is fetched from the network, and no JavaScript is used: the page reads
the same in any browser, offline, and prints.
"""
from __future__ import annotations

import html
from collections.abc import Sequence

from verifier.report.diagrams import inline_svg
from verifier.report.doc import Bullets, Defs, Document, Figure, Heading, Inline, Note, Para, Pre, Span, Table, spans
from verifier.report.pages import (
    GamePage,
    TraceView,
    claim_document,
    game_document,
    index_document,
    trace_document,
)

EXT = ".html"

CSS = """
:root { color-scheme: light; --fg: #1d1d1f; --muted: #6b6b70; --line: #d9d9de; --bg2: #f6f7f9;
        --ok: #1e7d3c; --bad: #b3261e; --link: #1f5fbf; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg);
       margin: 0 auto; max-width: 1100px; padding: 1.5rem 1.25rem 4rem; }
h1 { font-size: 1.8rem; margin: 0.2rem 0 0.8rem; }
h2 { font-size: 1.35rem; margin: 2.2rem 0 0.6rem; padding-bottom: 0.2rem; border-bottom: 2px solid var(--line); }
h3 { font-size: 1.12rem; margin: 1.6rem 0 0.4rem; }
h4 { font-size: 1rem; margin: 1.2rem 0 0.3rem; }
a { color: var(--link); }
code { font: 0.88em/1.3 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--bg2);
       padding: 0.05em 0.3em; border-radius: 3px; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; width: 100%; }
th, td { border: 1px solid var(--line); padding: 0.3rem 0.55rem; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
table.stats { width: auto; }
.scroll { overflow-x: auto; max-width: 100%; }   /* a table wider than the page scrolls, the page does not */
table.results td:nth-child(-n+3) { white-space: nowrap; }
th { background: var(--bg2); font-weight: 600; }
table.trace td:nth-child(5), table.trace td:nth-child(4) { font-size: 0.9em; }
table.stats td:first-child { color: var(--muted); white-space: nowrap; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.25rem 1rem; margin: 0.5rem 0 1rem; }
dt { font-weight: 600; }
dd { margin: 0; min-width: 0; }
p, li, dd, h1, h2, h3, h4 { overflow-wrap: anywhere; }   /* long names and paths break rather than widen the page */
.verdict { font: 600 0.82em/1 ui-monospace, Menlo, Consolas, monospace; padding: 0.2em 0.45em;
           border-radius: 4px; white-space: nowrap; border: 1px solid transparent; }
.v-PROVED { background: #d4f0dc; color: #0f5323; border-color: #9fd8ae; }
.v-HOLDS { background: #e3f4e6; color: #1e6b34; border-color: #b7e0c0; }
.v-HOLDS_TO_DEPTH { background: #fff4cc; color: #7a5b00; border-color: #ecd27a; }
.v-UNKNOWN { background: #efe3f6; color: #5e2b7a; border-color: #d3b5e6; }
.v-VIOLATED { background: #fbe0dd; color: #8c1d14; border-color: #eeaaa3; }
.ok { color: var(--ok); font-weight: 600; }
.bad { color: var(--bad); font-weight: 600; }
.muted { color: var(--muted); }
.note { border-left: 4px solid var(--link); background: #eef3fb; padding: 0.5rem 0.8rem; margin: 0.8rem 0; }
.note.warn { border-color: var(--bad); background: #fdf0ee; }
figure { margin: 0.8rem 0 1.2rem; padding: 0.6rem; border: 1px solid var(--line); border-radius: 6px;
         background: #fff; overflow-x: auto; }
figure svg.diagram, figure img.diagram { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { color: var(--muted); font-size: 0.9em; margin-top: 0.4rem; }
pre { background: var(--bg2); padding: 0.6rem 0.8rem; white-space: pre-wrap; font-size: 0.88em;
      border-radius: 4px; }
nav.top { font-size: 0.9em; color: var(--muted); }
@media print { figure { break-inside: avoid; } a { color: inherit; } }
"""


def _href(s: Span) -> str:
    if s.href is not None:
        return s.href
    target = "" if s.page is None else s.page + EXT
    return target + (f"#{s.anchor}" if s.anchor else "")


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def inline(x: Inline) -> str:
    out = []
    for s in spans(x):
        if isinstance(s, str):
            out.append(esc(s))
        elif s.kind == "b":
            out.append(f"<strong>{esc(s.text)}</strong>")
        elif s.kind == "i":
            out.append(f"<em>{esc(s.text)}</em>")
        elif s.kind == "code":
            out.append(f"<code>{esc(s.text)}</code>")
        elif s.kind == "link":
            out.append(f'<a href="{esc(_href(s))}">{esc(s.text)}</a>')
        elif s.kind == "verdict":
            cls = s.text.split()[0] if s.text else ""
            out.append(f'<span class="verdict v-{esc(cls)}">{esc(s.text)}</span>')
        elif s.kind in ("ok", "bad", "muted"):
            out.append(f'<span class="{s.kind}">{esc(s.text)}</span>')
        else:
            out.append(esc(s.text))
    return "".join(out)


def render(doc: Document) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f'<meta name="generator" content="{esc(doc.meta.get("generator", "turnproof"))}">',
             f"<title>{esc(doc.title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>"]
    for k, v in doc.meta.items():
        if k != "generator":
            parts.append(f"<!-- {esc(k)}: {esc(v)} -->")
    counter = [0]
    for block in doc.blocks:
        parts.append(_block(block, doc.slug, counter))
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _block(block, slug: str, counter: list[int]) -> str:
    if isinstance(block, Heading):
        anchor = f' id="{esc(block.anchor)}"' if block.anchor else ""
        return f"<h{block.level}{anchor}>{inline(block.text)}</h{block.level}>"
    if isinstance(block, Para):
        return f"<p>{inline(block.text)}</p>"
    if isinstance(block, Note):
        cls = "note warn" if block.kind == "warn" else "note"
        return f'<div class="{cls}">{inline(block.text)}</div>'
    if isinstance(block, Bullets):
        return "<ul>" + "".join(f"<li>{inline(item)}</li>" for item in block.items) + "</ul>"
    if isinstance(block, Defs):
        return "<dl>" + "".join(f"<dt>{inline(t)}</dt><dd>{inline(d)}</dd>" for t, d in block.items) + "</dl>"
    if isinstance(block, Table):
        cls = f' class="{esc(block.cls)}"' if block.cls else ""
        head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in block.header) + "</tr>"
        body = []
        for k, row in enumerate(block.rows):
            row_anchor = block.anchors[k] if k < len(block.anchors) else None
            rid = f' id="{esc(row_anchor)}"' if row_anchor else ""
            body.append(f"<tr{rid}>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>")
        return (f'<div class="scroll"><table{cls}><thead>{head}</thead><tbody>' + "".join(body)
                + "</tbody></table></div>")
    if isinstance(block, Figure):
        counter[0] += 1
        d = block.diagram
        alt = d.alt or d.title
        svg = (inline_svg(d.svg, f"{slug}-d{counter[0]}", alt) if block.inline else
               f'<a href="{esc(d.stem)}.svg"><img class="diagram" loading="lazy" src="{esc(d.stem)}.svg" '
               f'alt="{esc(alt)}"></a>')
        caption = inline(block.caption)
        return (f'<figure id="fig-{esc(d.stem)}">{svg}<figcaption>{caption} '
                f'<a href="{esc(d.stem)}.svg">SVG</a>'
                + (f' · <a href="{esc(d.stem)}.dot">DOT source</a>' if d.dot else "")
                + "</figcaption></figure>")
    if isinstance(block, Pre):
        return f"<pre>{esc(block.text)}</pre>"
    raise TypeError(f"unknown block {block!r}")


def game_html(page: GamePage, timings: bool = True) -> str:
    return render(game_document(page, timings))


def index_html(pages: Sequence[GamePage]) -> str:
    return render(index_document(pages))


def trace_html(page: GamePage, view: TraceView) -> str:
    return render(trace_document(page, view))


def claim_html(page: GamePage, cid: str, timings: bool = True) -> str:
    return render(claim_document(page, cid, timings))
