"""reports/FINDINGS.md: what a designer must fix in each rulebook, ranked, each listed once.

A summary table of every game first; then per game the items to fix (`fixlist`): claims
not as expected, rules broken, contradictions, gaps, ambiguities (the verdicts per reading)
and dead rules, each with its readings and a link to its trace (on its page), short enough
that a game's list fits on a screen: findings of one kind the model documents with one
reason are one entry, and two documented readings that part ways one line (their positions
are on the game's page); then the behaviours the claims show on purpose, one line each;
what was shown to hold, by verdict; and what was left open.
"""
from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from verifier.report import trace_view
from verifier.report.escaping import markdown_text
from verifier.report.fixlist import KINDS, WHAT_FINDING, Evidence, GameFindings, Item, game_findings
from verifier.report.links import claim_page, slugify
from verifier.result import ModelRun
from verifier.trace import Trace

_cell = markdown_text       # model text in a table cell or a sentence: escaped, one line
VERDICTS = ("PROVED", "HOLDS", "HOLDS_TO_DEPTH", "VIOLATED")


def trace_markdown(trace: Trace) -> list[str]:
    """A trace as a table: the start compactly, then a row per step or run of repeated steps."""
    lines = ["| # | action | player | rule | changes |", "|---|---|---|---|---|",
             f"| 0 | (initial state) | | | {_cell(trace_view.start_text(trace))} |"]
    for row in trace_view.rows(trace):
        loop = "↻ " if row.loop_start else ""
        lines.append(f"| {row.steps} | {loop}{_cell(row.move)} | {'' if row.player is None else row.player} | "
                     f"{_cell(row.rule)} | {_cell(row.changes_text())} |")
    if trace.loop_start is not None:
        lines.append(f"\nFrom step {trace.loop_start + 1} on, the loop repeats forever.")
    return lines


def _link(slug: str, ev: Evidence) -> str:
    """The page (and anchor) of a claim's trace, or the game's findings; URL-quoted (model text)."""
    if ev.claim is None:
        return f"{quote(slug)}/index.md#findings"
    anchor = f"trace-{ev.claim}" + (f"-{ev.variant}" if ev.variant else "")
    return (f"{quote(slug)}/{quote(claim_page(ev.claim))}.md"
            + (f"#{quote(anchor, safe='-_.~')}" if ev.trace is not None else ""))


def _readings(names: Sequence[str]) -> str:
    if not names:
        return ""
    words = " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]
    return f" (in reading{'s' if len(names) > 1 else ''} {_cell(words)})"


def _item(slug: str, n: int, item: Item) -> list[str]:
    """One thing to fix: its title, rule, readings and a link to its trace on one line, its finding
    below (the readings side by side for an ambiguity), and the model's documented reason."""
    rule = f" — {_cell(item.rule)}" if item.rule else ""
    head = f"{n}. **{_cell(item.title)}**{rule}{_readings(item.readings)}"
    lines = []
    if item.side_by_side and all(v in VERDICTS for _r, v in item.side_by_side):
        head += ": " + _verdicts(item.side_by_side)
        lines.append(f"   {_cell(item.text)}")
    elif item.side_by_side and item.acknowledged:
        pass        # two documented readings parting ways: the positions are on the game's page
    elif item.side_by_side:
        lines += [f"   - *{_cell(r)}*: {_cell(text)}" for r, text in item.side_by_side]
    else:
        lines.append(f"   {_cell(item.text)}")
    if item.evidence is not None:
        head += f" ([{'trace' if item.evidence.trace is not None else 'details'}]({_link(slug, item.evidence)}))"
    if item.acknowledged:
        lines.append(f"   *Documented in the model*: {_cell(item.acknowledged)}")
    return [head + "  "] + [line + "  " for line in lines[:-1]] + lines[-1:]


def _verdicts(side: Sequence[tuple[str, str]]) -> str:
    """A claim's verdict per reading: `strict HOLDS · loose VIOLATED`; with more than two readings
    the readings named for each verdict but the most common, which holds `in the other N`."""
    if len(side) <= 2:
        return " · ".join(f"{_cell(r)} {v}" for r, v in side)
    by_verdict: dict[str, list[str]] = {}
    for reading, verdict in side:
        by_verdict.setdefault(verdict, []).append(reading)
    common = max(by_verdict, key=lambda v: len(by_verdict[v]))
    named = [f"{v} in {_cell(', '.join(rs))}" for v, rs in by_verdict.items() if v != common]
    return " · ".join(named + [f"{common} in the other {len(by_verdict[common])}"])


def _alike(items: Sequence[Item]) -> list[list[Item]]:
    """Items grouped where consecutive findings of one kind share the model's documented reason and
    their readings (the stuck states of one documented reading): one entry, each finding linked."""
    out: list[list[Item]] = []
    for item in items:
        last = out[-1][0] if out else None
        if last is not None and item.acknowledged and item.acknowledged == last.acknowledged \
                and item.readings == last.readings and not item.side_by_side and not last.side_by_side \
                and item.title.split(" ", 1)[0] == last.title.split(" ", 1)[0] and " " in item.title:
            out[-1].append(item)
        else:
            out.append([item])
    return out


def _group(slug: str, n: int, group: Sequence[Item]) -> list[str]:
    """Findings of one kind documented with one reason: their subjects on one line, each linked."""
    kind = group[0].title.split(" ", 1)[0]
    subjects = ", ".join(f"[{_cell(i.title.split(' ', 1)[1])}]({_link(slug, i.evidence)})" if i.evidence is not None
                         else _cell(i.title.split(" ", 1)[1]) for i in group)
    return [f"{n}. **{_cell(kind)}** ×{len(group)}: {subjects}{_readings(group[0].readings)}  ",
            f"   *Documented in the model*: {_cell(group[0].acknowledged or '')}"]


def _summary(games: Sequence[tuple[str, GameFindings]]) -> list[str]:
    keys = [k for k, _h in KINDS]
    out = ["| game | " + " | ".join(h.lower() for _k, h in KINDS) + " | behaviours shown | shown to hold | left open |",
           "|---|" + "---|" * (len(keys) + 3)]
    for slug, g in games:
        held = sum(len(v) for v in g.held.values())
        out.append(f"| [{_cell(slug)}](#{slug}) | " + " | ".join(str(g.count(k) or "") for k in keys)
                   + f" | {len(g.shown)} | {held} | {len({r.property.id for r in g.open_}) or ''} |")
    return out + [""]


def game_section(runs: Sequence[ModelRun], g: GameFindings | None = None) -> list[str]:
    model = runs[0].model
    slug = slugify(model.name)
    g = g or game_findings(runs)
    params = ", ".join(f"{k}={'*' if v is None else v}" for k, v in model.param_values) or "no parameters"
    printed = (f"; the page prints {', '.join(f'{k}={v}' for k, v in model.printed)}"
               if model.printed else "")
    out = [f"## <a id=\"{slug}\"></a>{_cell(model.name)}", "",
           f"Checked at {_cell(params)}{_cell(printed)}. [The game's page]({slug}/index.md).", ""]
    if model.variants:
        out += ["Readings: " + "; ".join(f"**{_cell(v.name)}**: {_cell(v.description)}" for v in model.variants), ""]
    out += ["### To fix", ""]
    if not g.to_fix:
        out += ["Nothing found" + (" in what was analysed." if g.analyses_open else "."), ""]
    n = 0
    for key, heading in KINDS:
        items = [i for i in g.to_fix if i.kind == key]
        if not items:
            continue
        out += [f"#### {heading}", ""]
        for group in _alike(items):
            n += 1
            out += _item(slug, n, group[0]) if len(group) == 1 else _group(slug, n, group)
        out.append("")
    out += [f"**UNKNOWN**{f' [{_cell(v)}]' if v else ''}: {_cell(why)}  " for v, why in g.analyses_open]
    if not any(run.findings for run in runs):
        out += ["Consistency findings: " + ("None found in what was analysed." if g.analyses_open
                                            else "None for these parameter values."), ""]
    elif g.analyses_open:
        out.append("")
    out += ["### Behaviours shown", "",
            "What the page allows, shown on purpose by a claim (a violation it expects, or a witness):", ""]
    out += [f"- [{_cell(s.claim)}]({_link(slug, s.evidence)}){_readings(s.readings)}: {_cell(s.text)}"
            if s.evidence is not None else f"- {_cell(s.claim)}{_readings(s.readings)}: {_cell(s.text)}"
            for s in g.shown] or ["None."]
    out += ["", "### Shown to hold", ""]
    words = {"PROVED": "PROVED (for every value of the parameters it leaves free)",
             "HOLDS": "HOLDS (in every reachable state at these numbers, every reading)",
             "HOLDS_TO_DEPTH": "HOLDS_TO_DEPTH (no counterexample within the depth searched)"}
    out += [f"- {words[v]}: {', '.join(_cell(c) for c in g.held[v])}" for v in words if g.held.get(v)] or ["None."]
    out.append("")
    if g.open_:
        out += ["### Left UNKNOWN", ""]
        out += [f"- {_cell(r.property.id)}{f' [{_cell(r.variant)}]' if r.variant else ''}: {_cell(r.reason)}"
                for r in g.open_]
        out.append("")
    return out


def findings_markdown(games: Sequence[Sequence[ModelRun]]) -> str:
    built = [(slugify(runs[0].model.name), game_findings(runs)) for runs in games]
    out = ["# Findings", "",
           "Generated by `turnproof report` from each game's model and claims (named on its page); do not",
           "edit by hand. Per game, what the rules need fixed, most urgent kind first, each once with the",
           "readings where it shows and a link to its evidence (a trace that replays on the model, on its page);",
           "then the behaviours the claims show on purpose, and what was shown to hold.", ""]
    out += _summary(built)
    kinds = "; ".join(f"**{k}**: {w}" for k, w in WHAT_FINDING.items())
    out += [f"Consistency findings: {kinds}.", ""]
    for runs, (_slug, g) in zip(games, built):
        out += game_section(runs, g)
    return "\n".join(out) + "\n"
