"""What a designer must fix in a rulebook, ranked and each listed once across readings.

One game's results (one `ModelRun` per reading) become:

- `to_fix`: the claims not as expected, the claims the rules break (`finding: problem`),
  contradictions, gaps, ambiguities and dead rules, in that order of kind; a claim or a
  finding met under several readings is one `Item` naming them ("in readings a and b"),
  and a claim whose verdict depends on the reading is one ambiguity with the readings side
  by side (the `variant-difference` finding about it folded in);
- `shown`: the behaviours the claims show on purpose (a violation expected under every
  reading and not marked a problem, or a reachable claim's witness), one line each;
- `held`: the claims shown to hold, by verdict; `open_`: the claims left UNKNOWN.

Data only: `findings_md` writes it, and the game pages can summarise it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from verifier.report.explain import shown_why
from verifier.result import CheckResult, Finding, ModelRun, Verdict
from verifier.trace import Trace

# the kinds of what to fix, most urgent first: (key, heading)
KINDS: tuple[tuple[str, str], ...] = (
    ("unexpected", "Claims not as expected"),
    ("broken", "Rules broken"),
    ("contradiction", "Contradictions"),
    ("gap", "Gaps"),
    ("ambiguity", "Ambiguities"),
    ("dead", "Dead rules"),
)
KIND_OF_FINDING = {"conflict": "contradiction", "gap": "gap", "deadlock": "gap", "nondeterministic-must": "gap",
                   "order-dependence": "ambiguity", "variant-difference": "ambiguity", "dead-rule": "dead",
                   "unreachable-phase": "dead"}
WHAT_FINDING = {"conflict": "two rules contradict each other", "gap": "the rules are silent",
                "deadlock": "play is stuck", "nondeterministic-must": "who chooses is not said",
                "order-dependence": "the order is not said", "variant-difference": "the readings part ways",
                "dead-rule": "never applies", "unreachable-phase": "never reached"}


@dataclass(frozen=True)
class Evidence:
    """Where a claim's or a finding's trace is: its reading, the trace, and the claim whose page shows it."""

    variant: str | None
    trace: Trace | None
    claim: str | None = None      # None: a consistency finding (on the game's page)


@dataclass(frozen=True)
class Item:
    kind: str                     # a key of KINDS
    title: str                    # the claim id, or the finding's kind and subject
    rule: str
    text: str                     # the finding in the page's words
    readings: tuple[str, ...] = ()           # where it is met; () under every reading (or there is one)
    side_by_side: tuple[tuple[str, str], ...] = ()   # an ambiguity: (reading, what it gives there)
    acknowledged: str | None = None          # the model's documented reason
    evidence: Evidence | None = None


@dataclass(frozen=True)
class Shown:
    """A behaviour a claim shows on purpose: a permission the page gives, with its trace."""

    claim: str
    text: str
    readings: tuple[str, ...]
    evidence: Evidence | None


@dataclass
class GameFindings:
    readings: tuple[str, ...]
    to_fix: list[Item] = field(default_factory=list)
    shown: list[Shown] = field(default_factory=list)
    held: dict[str, list[str]] = field(default_factory=dict)     # verdict -> claim ids
    open_: list[CheckResult] = field(default_factory=list)
    analyses_open: list[tuple[str | None, str]] = field(default_factory=list)   # (reading, why) cut short

    def count(self, kind: str) -> int:
        return sum(1 for i in self.to_fix if i.kind == kind)


def sentences(*parts: str) -> str:
    """Parts joined as sentences: each ends with a full stop unless it has its own, and one whose
    first word is a plain lower-case word starts with a capital (a name such as `hand[0]` stays)."""
    out = [_capital(p.strip()) for p in parts if p and p.strip()]
    return " ".join(p if p[-1] in ".!?)" else p + "." for p in out)


def _capital(part: str) -> str:
    first = part.split(" ", 1)[0]
    return part[0].upper() + part[1:] if first.isalpha() and first.islower() else part


def game_findings(runs: Sequence[ModelRun]) -> GameFindings:
    readings = tuple(run.model.variant for run in runs if run.model.variant)
    out = GameFindings(readings)
    by_claim: dict[str, list[CheckResult]] = {}
    for run in runs:
        for r in run.results:
            by_claim.setdefault(r.property.id, []).append(r)
    findings = _findings_by_key(runs)
    folded: set[str] = set()
    for cid, results in by_claim.items():
        _claim(out, cid, results, findings, folded)
    out.to_fix += _finding_items(findings, folded)
    order = {k: n for n, (k, _h) in enumerate(KINDS)}
    out.to_fix.sort(key=lambda i: (order[i.kind], i.acknowledged is not None))
    out.analyses_open = [(run.model.variant, run.analyses_unknown) for run in runs if run.analyses_unknown]
    return out


def _names(results: Sequence[CheckResult]) -> tuple[str, ...]:
    return tuple(r.variant for r in results if r.variant)


def _evidence(r: CheckResult) -> Evidence:
    return Evidence(r.variant, r.trace, r.property.id)


def _claim(out: GameFindings, cid: str, results: list[CheckResult], findings: dict[str, list[Finding]],
           folded: set[str]) -> None:
    first = results[0]
    prop = first.property
    rule = prop.rule or ""
    unexpected = [r for r in results if not r.as_expected and r.verdict is not Verdict.UNKNOWN]
    unknown = [r for r in results if r.verdict is Verdict.UNKNOWN]
    out.open_ += unknown
    if unexpected:
        r = unexpected[0]
        want = r.property.expected.value if r.property.expected else "not VIOLATED"
        known = [x for x in results if x.as_expected and shown_why(x)]
        also = f" Where its violation is expected ({', '.join(_names(known))}): {shown_why(known[0])}" if known else ""
        out.to_fix.append(Item("unexpected", cid, rule, f"{prop.statement} Expected {want}, found {r.verdict.value}.{also}",
                               _names(unexpected) if len(results) > 1 else (), evidence=_evidence(r)))
        return
    verdicts = {r.verdict for r in results if r.verdict is not Verdict.UNKNOWN}
    violated = [r for r in results if r.verdict is Verdict.VIOLATED]
    if len(verdicts) > 1 and violated:
        folded.add(f"variant-difference:{cid}")
        acks = [f.acknowledged for f in findings.get(f"variant-difference:{cid}", []) if f.acknowledged]
        why = next((shown_why(r) for r in violated if shown_why(r)), "")
        side = tuple((r.variant or "", r.verdict.value) for r in results if r.verdict is not Verdict.UNKNOWN)
        out.to_fix.append(Item("ambiguity", cid, rule, sentences(prop.statement, why), (),
                               side, acks[0] if acks else None, _evidence(violated[0])))
        return
    if violated and len(violated) == len(results) - len(unknown):
        r = violated[0]
        text = shown_why(r) or prop.statement
        if prop.problem:
            out.to_fix.append(Item("broken", cid, rule, sentences(prop.statement, text) if text != prop.statement
                                   else sentences(text),
                                   _names(violated) if len(out.readings) > 1 and len(violated) < len(out.readings)
                                   else (), evidence=_evidence(r)))
        else:
            out.shown.append(Shown(cid, text, _names(violated) if len(violated) < len(out.readings) else (),
                                   _evidence(r) if r.trace is not None else None))
        return
    held = [r for r in results if r.verdict in (Verdict.PROVED, Verdict.HOLDS, Verdict.HOLDS_TO_DEPTH)]
    if prop.kind == "reachable" and held and any(r.trace is not None for r in held):
        r = next(r for r in held if r.trace is not None)
        out.shown.append(Shown(cid, prop.statement, (), _evidence(r)))
        return
    if held:
        worst = max((r.verdict for r in held), key=lambda v: v.rank)
        out.held.setdefault(worst.value, []).append(cid)


def _findings_by_key(runs: Sequence[ModelRun]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    seen: set[int] = set()
    for run in runs:
        for f in run.findings:
            if id(f) not in seen:
                seen.add(id(f))
                out.setdefault(f.key, []).append(f)
    return out


def _finding_items(findings: dict[str, list[Finding]], folded: set[str]) -> list[Item]:
    out = []
    paired: set[str] = set()
    for key, group in findings.items():
        if key in folded or key in paired:
            continue
        f = group[0]
        readings = tuple(dict.fromkeys(g.variant for g in group if g.variant))
        ack = next((g.acknowledged for g in group if g.acknowledged), None)
        evidence = Evidence(f.variant, f.traces[0] if f.traces else None)
        if f.kind == "variant-difference" and "|" in f.subject:
            a, b = f.subject.split("|", 1)
            other = findings.get(f"variant-difference:{b}|{a}", [])
            paired.add(f"variant-difference:{b}|{a}")
            side = ((a, f.message),) + (((b, other[0].message),) if other else ())
            out.append(Item("ambiguity", f"readings {a} and {b}", "; ".join(f.rules), "", (), side,
                            ack or next((g.acknowledged for g in other if g.acknowledged), None), evidence))
            continue
        out.append(Item(KIND_OF_FINDING.get(f.kind, "gap"), f"{f.kind} {f.subject}", "; ".join(f.rules),
                        f.message, readings, (), ack, evidence))
    return out
