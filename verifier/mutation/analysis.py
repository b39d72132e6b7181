"""Mutation analysis of a model's claims: which single-point rule changes they notice.

`mutate` reads one reading (variant) of a model file, makes every mutant of its
rules (`operators.generate`), checks each like `turnproof check` (its claims and
the consistency analyses, same engine, parameters and claims as the original)
in forked workers, and classifies it against the original's run:

  killed      some claim has a definite verdict (VIOLATED versus HOLDS or PROVED)
              that differs from the original's, or the set of consistency findings
              (kind and subject, acknowledged or not) differs;
  invalid     the mutant is not a well-formed model (a model error on loading) or
              raises a model error when run: reported apart, never killed;
  equivalent  no difference, and proved to have the original's reachable
              behaviour (`equivalence.behaviour`);
  survived    no difference and not proved equivalent: a rule change no claim notices;
  unknown     a budget (--timeout, --max-states) left the answer open: neither killed
              nor survived.

Kill score = killed / (mutants checked - invalid - equivalent - unknown).
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from verifier.analysis import analyse_model
from verifier.diagnostics import Diagnostic, ModelError, TurnproofError, UsageError
from verifier.engines.ledger import Ledger
from verifier.files import read_input
from verifier.forking import fork_map
from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.lang import load_model
from verifier.lang.limits import MAX_FILE_BYTES
from verifier.lang.phases import PhaseSpec, TurnBlocks
from verifier.mutation.equivalence import behaviour
from verifier.mutation.journal import Journal, RunKey
from verifier.mutation.operators import Mutant, apply, generate
from verifier.mutation.results import METHOD, MutationReport, Outcome
from verifier.resources import Backstop, Budget, StopKind
from verifier.resources.signals import OutOfTime, after_cut
from verifier.result import ModelRun, Verdict
from verifier.runner import RunOptions, check_loaded, claims_for

STATE_GROWTH, STATE_FLOOR = 10, 100_000     # default state cap of a mutant: 10 x the original's search


@dataclass
class _Reference:
    verdicts: dict[str, Verdict]
    findings: frozenset[str] | None      # None: the original's analyses were cut short
    digest: bytes | None = None


def mutate(path: str, options: RunOptions | None = None, max_mutants: int | None = None,
           progress: Callable[[Outcome, int, int], None] | None = None,
           only: frozenset[str] | None = None, jobs: int | None = None,
           journal_path: str | None = None) -> MutationReport:
    """Mutation analysis of one reading of the model file at `path` (`options.variant`, else
    its first). The budget's backstop bounds the whole run: when it cuts, the mutants decided by
    then keep their outcomes and the rest are UNKNOWN, not checked; `max_mutants` checks an
    evenly spread selection of that many mutants; `only` names the mutants to check (their
    ids, `m12`: stable while the model file is unchanged). `progress(outcome, done, total)` is
    called as each mutant is decided; `jobs` mutants are checked at once (default: one per
    free CPU). With `journal_path` each decided mutant is appended to that journal as it is
    decided, and the mutants an earlier run of the same question decided there are not checked
    again (`journal.Journal`).

    On a concrete model `--engine auto` means the explicit search for the original and every
    mutant alike: exact at these parameter values, where a proof for every value adds nothing
    to the comparison; and each mutant's claims search is kept for its analyses and its
    equivalence digest (its `Ledger`), so a mutant is searched once."""
    start = time.perf_counter()
    options = options or RunOptions()
    consistency = options.consistency
    backstop = options.budget.backstop
    captured: list[tuple[Model, list[PhaseSpec], TurnBlocks]] = []

    def capture(model: Model, specs: list[PhaseSpec], blocks: TurnBlocks) -> tuple[Model, list[PhaseSpec], TurnBlocks]:
        captured.append((model, specs, blocks))
        return model, specs, blocks

    original = load_model(path, options.params, options.variant, edit=capture)
    as_loaded = _digest(path)
    options = replace(options, variant=original.variant)
    if options.engine == "auto" and original.is_concrete:
        options = replace(options, engine="explicit")
    props, props_path = claims_for(path, original, options)
    # claims proved for every parameter value are checked at these values: a mutant is compared
    # with the original on the same parameters, and one search decides them all
    claims = ([replace(p, for_every=()) for p in props], props_path)
    mutants = generate(*captured[0])
    if only is not None:
        unknown = sorted(only - {m.id for m in mutants})
        if unknown:
            raise UsageError(Diagnostic(f"no mutant {unknown[0]} in this model ({len(mutants)} mutants: "
                                        f"m1..m{len(mutants)})", hint="ids come from an earlier run of mutate"))
    chosen = _spread([m for m in mutants if only is None or m.id in only], max_mutants)
    params = original.instantiate().param_values
    journal = None if journal_path is None else Journal(
        journal_path, RunKey.of(path, claims[1], original.variant, params, consistency), mutants)
    earlier = {} if journal is None else {m.id: journal.earlier[m.id] for m in chosen if m.id in journal.earlier}
    options = replace(options, consistency=False, vacuity=False)     # the analyses run apart, below
    memo: dict = {}                 # the analyses' Z3 answers: forked workers start from the original's
    ledger = Ledger.keeping([original.instantiate()] if original.is_concrete else [])
    ref_run = check_loaded(path, [original], [claims], options, ledger=ledger)[0]
    errors = list(ref_run.model_errors)
    findings = _findings(original, options.budget, memo, ledger, errors) if consistency else frozenset()
    if errors:
        raise ModelError(Diagnostic(f"the model itself meets a model error: {errors[0]}",
                                    notes=tuple((e, None) for e in errors[1:4]),
                                    hint="mutants are compared with a model that runs: fix this first "
                                         "(turnproof check shows its trace)"))
    reference = _Reference({r.property.id: r.verdict for r in ref_run.results}, findings)
    if original.is_concrete:
        reference.digest = behaviour(original, options.budget, ledger)
    if options.budget.max_states is None:     # a mutant whose state space explodes is left open, not waited for
        largest = max((r.stats.states or 0 for r in ref_run.results), default=0)
        options = replace(options, budget=replace(options.budget, max_states=max(STATE_FLOOR, STATE_GROWTH * largest)))
    done = [0]
    decided: dict[str, Outcome] = {}

    def arrived(outcome: Outcome) -> None:
        decided[outcome.mutant.id] = outcome
        done[0] += 1
        if journal is not None:
            journal.add(outcome)
        if progress is not None:
            progress(outcome, done[0], len(chosen))
        if backstop is not None and backstop.expired():
            raise OutOfTime()           # no more mutants are started, even to say they were not checked

    for outcome in earlier.values():
        done[0] += 1
        if progress is not None:
            progress(outcome, done[0], len(chosen))
    job = partial(_check_mutant, path=path, options=options, claims=claims, reference=reference,
                  backstop=backstop, memo=memo if consistency else None, as_loaded=as_loaded)
    cut = ""
    try:
        fork_map(job, [m for m in chosen if m.id not in earlier], workers=jobs, arrived=arrived)
    except OutOfTime:                  # the backstop: the mutants decided so far are kept, the rest not checked
        after_cut()
        cut = backstop.stop().words if backstop is not None else OutOfTime.words
    finally:
        if journal is not None:
            journal.close()
    by_id = decided | earlier
    return MutationReport(original.name, path, original.variant, params, claims[1], len(claims[0]), len(mutants),
                          tuple(by_id.get(m.id) or Outcome(m, "unknown", f"not checked: {cut}", 0.0) for m in chosen),
                          seconds=time.perf_counter() - start)


def _check_mutant(mutant: Mutant, path: str, options: RunOptions, claims: tuple[list[Property], str | None],
                  reference: _Reference, backstop: Backstop | None, memo: dict | None, as_loaded: str) -> Outcome:
    """Claims first (most mutants that are killed are killed there), then, when they agree, the
    consistency analyses (`memo` None: none), then the proof of equivalence."""
    start = time.perf_counter()

    def outcome(status: str, reason: str = "") -> Outcome:
        return Outcome(mutant, status, reason, time.perf_counter() - start)

    if backstop is not None and backstop.expired():
        return outcome("unknown", f"not checked: {backstop.cut_by()} ran out first")
    if _digest(path) != as_loaded:     # each mutant is the file read again: it must be the file the run began with
        raise UsageError(Diagnostic(f"{path} changed while mutate ran", hint="run mutate again on the file as it is now"))
    try:
        model = load_model(path, options.params, options.variant, edit=partial(apply, mutant))
    except TurnproofError as err:
        return outcome("invalid", _first_line(err))
    return _decide(model, path, options, claims, reference, memo, outcome,
                   Ledger.keeping([model.instantiate()] if model.is_concrete else []))


def _decide(model: Model, path: str, options: RunOptions, claims: tuple[list[Property], str | None],
            reference: _Reference, memo: dict | None,
            outcome: Callable[..., Outcome], ledger: Ledger) -> Outcome:
    try:
        run = check_loaded(path, [model], [claims], options, ledger=ledger)[0]
        status, reason = _compare_claims(reference, run)
        if status in ("killed", "invalid"):
            return outcome(status, reason)
        if memo is not None:
            errors: list[str] = []
            findings = _findings(model, options.budget, memo, ledger, errors)
            if errors:
                return outcome("invalid", errors[0])
            if findings is None or reference.findings is None:
                return outcome("unknown", "the consistency analyses were cut short by the budget")
            if findings != reference.findings:
                new, gone = sorted(findings - reference.findings), sorted(reference.findings - findings)
                return outcome("killed", "finding " + (f"{new[0]} appears" if new else f"{gone[0]} disappears"))
    except TurnproofError as err:
        return outcome("invalid", _first_line(err))
    if status != "same":
        return outcome(status, reason)
    if reference.digest is None:
        return outcome("survived", "not proved equivalent: the original's state space was not explored completely")
    try:
        digest = behaviour(model, options.budget, ledger)
    except ModelError as err:           # the mutant fails where no claim or analysis looked
        return outcome("invalid", _first_line(err))
    if digest == reference.digest:
        return outcome("equivalent", METHOD)
    if digest is None:
        return outcome("survived", "not proved equivalent: a budget cut the mutant's search short")
    return outcome("survived", "reachable behaviour differs, and no claim or finding notices")


def _compare_claims(reference: _Reference, run: ModelRun) -> tuple[str, str]:
    """("killed" | "invalid" | "unknown" | "same", the first difference or why)."""
    for r in run.results:
        if r.model_error:
            return "invalid", f"claim {r.property.id}: {r.reason}"
    for r in run.results:
        before, after = _definite(reference.verdicts.get(r.property.id)), _definite(r.verdict)
        if before is not None and after is not None and before != after:
            return "killed", f"claim {r.property.id}: {reference.verdicts[r.property.id].value} -> {r.verdict.value}"
    open_claims = [r.property.id for r in run.results
                   if _definite(r.verdict) is None and _definite(reference.verdicts.get(r.property.id)) is not None]
    if open_claims:
        return "unknown", f"claim {open_claims[0]} left open: {_why(run, open_claims[0])}"
    return "same", ""


def _findings(model: Model, budget: Budget, memo: dict, ledger: Ledger, errors: list[str]) -> frozenset[str] | None:
    """The consistency findings' keys (kind and subject), or None when a budget or a model error
    cut the analyses short (the model error's words then added to `errors`)."""
    ctx, findings = analyse_model(model, budget, memo, kept=ledger.search_of(model.instantiate()))
    stop = ctx.space.stop if ctx.space is not None and not ctx.space.complete else None
    if stop is not None and stop.kind is StopKind.MODEL_ERROR:
        errors.append(f"the consistency analyses: {stop.words}")
    return None if ctx.unknown_reason else frozenset(f.key for f in findings)


def _definite(verdict: Verdict | None) -> str | None:
    if verdict in (Verdict.PROVED, Verdict.HOLDS):
        return "holds"
    return "violated" if verdict is Verdict.VIOLATED else None


def _why(run: ModelRun, claim: str) -> str:
    return next((r.reason or r.verdict.value for r in run.results if r.property.id == claim), "")




def _spread(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    """All mutants, or `limit` of them spread evenly over the list (every operator stays represented)."""
    if limit is None or limit >= len(mutants):
        return mutants
    if limit <= 0:
        return []
    step = len(mutants) / limit
    return [mutants[int(k * step)] for k in range(limit)]


def _first_line(err: TurnproofError) -> str:
    first = err.diagnostics[0] if err.diagnostics else None
    if first is None:
        return type(err).__name__
    return f"{first.span}: {first.message}" if first.span else first.message


def _digest(path: str) -> str:
    """The SHA-256 of the model file as it is now (read as the loader reads an input)."""
    return hashlib.sha256(read_input(path, None, MAX_FILE_BYTES)).hexdigest()
