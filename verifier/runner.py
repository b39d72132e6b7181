"""Orchestration: load a model and its claims, run an engine per variant, collect findings.

This is the one place the CLI, reports and the CI gate go through to get
`ModelRun`s; it never prints.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace

from verifier.diagnostics import Diagnostic
from verifier.engines.base import ProgressFn, SearchOptions
from verifier.engines.ledger import Ledger
from verifier.engines.names import REDUCTIONS
from verifier.forking import Alongside, collector_paused, fork_map, forks, free_cpus, frozen_heap, in_child
from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.lang import (
    aliasing,
    default_properties_path,
    load_at_printed,
    load_properties,
    require_initial_state,
    resolve_derived,
)
from verifier.lang import check_model as load_checked
from verifier.portfolio.decide import AtDefaults, Portfolio, make_engine
from verifier.resources import Budget, Stop, StopKind
from verifier.resources.memory import OutOfMemory
from verifier.resources.memory import after_cut as memory_after_cut
from verifier.resources.signals import OutOfTime, after_cut
from verifier.result import CheckResult, Finding, ModelRun, Verdict, scale_of


@dataclass(frozen=True)
class RunOptions:
    params: dict[str, int | None] = field(default_factory=dict)   # None: left free
    variant: str | None = None        # None: every declared variant
    engine: str = "auto"
    budget: Budget = Budget()
    consistency: bool = True
    vacuity: bool = True              # warn about claims that hold vacuously (`analysis.vacuity`)
    properties: str | None = None     # None: properties/<model>.yaml when it exists
    use_properties: bool = True
    printed: bool = False             # at the model's printed values (`printed:`), falling back per claim
    reductions: frozenset[str] = frozenset(REDUCTIONS)   # the reductions allowed where a model declares them
    search: SearchOptions = SearchOptions()


def load_variants(path: str, options: RunOptions) -> tuple[list[Model], tuple[Diagnostic, ...]]:
    """The model once per variant to check (just one when a variant is named or none exist),
    at the printed values with `options.printed`, without the reductions not allowed; and what
    loading them warned of (each warning once). A reading with no initial state is an error."""
    params = options.params
    first, warnings = load_checked(path, params, options.variant)
    if options.printed and first.printed:
        first = load_at_printed(path, first, params, options.variant)
        params = {**dict(first.printed or ()), **params}
    models = [first]
    if options.variant is None and len(first.variants) >= 2:
        for v in first.variants[1:]:
            model, more = load_checked(path, params, v.name)
            models.append(model)
            warnings += [w for w in more if w not in warnings]
    for model in models:
        require_initial_state(model)
    if "symmetry" not in options.reductions:
        models = [replace(m, symmetry=None) for m in models]
    return models, tuple(aliasing.merge_readings(warnings, [v.name for v in first.variants]))


def claims_for(path: str, model: Model, options: RunOptions) -> tuple[list[Property], str | None]:
    if not options.use_properties:
        return [], None
    props_path = options.properties or default_properties_path(path)
    if props_path is None:
        return [], None
    return load_properties(props_path, model), props_path


def check_model(path: str, options: RunOptions = RunOptions(),
                progress: ProgressFn | None = None) -> list[ModelRun]:
    """Check one model file: one ModelRun per variant, results tagged with the variant.

    Each reading (variant) is checked, and analysed, on its own: in a forked child per
    reading where there are CPUs to spare (`forking.fork_map`), else one after the other
    here; no reading uses another's Z3 answers (which of them finished first depends on the
    load), only those asked here before they start (each distinct order-dependence query once,
    in the readings' order). The comparisons across readings come last, here.

    With `options.printed` the model is checked at its printed values; where that leaves a
    claim UNKNOWN (a budget), the portfolio decides it again at the default (scaled) values
    in the same budget (`Portfolio.decide`), marked as such by its `scale`. The findings are
    those at the printed values. A derived value given as a parameter (`-D DECK=20`) is read as the
    parameter it determines (`lang.derived`), once, before anything is loaded."""
    with frozen_heap():                    # what the imports made, out of the collector's passes from here
        resolved = resolve_derived(path, options.params, options.variant, options.printed)
        options = replace(options, params=resolved.params)
        models, warnings = load_variants(path, options)
        warnings = resolved.notes + warnings
        claims = [claims_for(path, m, options) for m in models]   # all inputs are parsed before any run
        at_defaults = None
        if options.printed and any(m.printed for m in models):
            defaults, _ = load_variants(path, replace(options, printed=False))
            at_defaults = [AtDefaults(m, claims_for(path, m, options)[0]) for m in defaults]
        return [replace(run, warnings=warnings + run.warnings)
                for run in check_loaded(path, models, claims, options, progress, at_defaults=at_defaults)]


def check_loaded(path: str, models: list[Model], claims: list[tuple[list[Property], str | None]],
                 options: RunOptions = RunOptions(), progress: ProgressFn | None = None,
                 memo: dict | None = None, ledger: Ledger | None = None,
                 at_defaults: Sequence[AtDefaults] | None = None) -> list[ModelRun]:
    """`check_model` on models and claims already loaded (one entry per reading); mutation
    analysis checks rewritten models of a file this way. `memo`: the analyses' Z3 answers
    to reuse (keyed by the actions and declarations they concern), to which the readings'
    order-dependence queries are added here first, each distinct one asked once in the readings'
    order (`_ask_ahead`): every reading starts from these and no reading sees what another asked
    later, so that what a reading finds never depends on which reading finished first; all of
    them are added to `memo` at the end. `ledger`: the
    ledger of the one reading, where the caller reuses its kept search (mutation); else each
    reading has its own. `at_defaults`: each reading at its default values, where the claims
    its (printed) values leave open are decided again (`--printed`)."""
    assert ledger is None or len(models) == 1, "a ledger is one reading's"
    assert at_defaults is None or len(at_defaults) == len(models), "one reading at the defaults per reading"
    memo = {} if memo is None else memo

    if options.consistency:
        _ask_ahead(models, options.budget, memo)
    given = {key: dict(answers) for key, answers in memo.items()}

    def start() -> dict:                   # what each reading starts from: the caller's answers only
        return {key: dict(answers) for key, answers in given.items()}

    # beside the claims with one reading (else the readings take the CPUs), not in a forked worker;
    # what they find is the same either way (their own search, or the claims' complete one)
    beside = len(models) == 1 and free_cpus() >= 2 and not in_child()
    if len(models) > 1 and options.engine == "auto" and _proves_for_every_value(models, claims):
        import verifier.engines.symbolic  # noqa: F401  (Z3 once here, not again in each reading's forked child)
    if len(models) > 1 and forks():
        _compiled_ahead(models, claims, options)
    # each reading its own ledger and engine: what one engine remembers of its searches (auto's stopped
    # searches) never carries over to another reading, as it would not where readings run in forked children
    with frozen_heap():                    # the models, claims and code loaded, out of the collector's passes
        readings = fork_map(lambda k: _reading(path, models[k], claims[k], options, progress, start(), beside,
                                               ledger, None if at_defaults is None else at_defaults[k]),
                            range(len(models)), fresh=True)
        return _across(models, readings, options, memo)


def _across(models: list[Model], readings: list, options: RunOptions, memo: dict) -> list[ModelRun]:
    """The readings' runs, with the analyses on completed by the comparisons across them; their Z3
    answers added to `memo`."""
    for _run, analysed in readings:        # their Z3 answers, gathered for the caller in the readings' order
        if analysed is not None:           # (not as they arrive: which arrives first depends on the load)
            for key, answers in analysed[0].memo.items():
                memo.setdefault(key, {}).update(answers)
    runs = [run for run, _ in readings]
    if options.consistency:
        from verifier.analysis import across_readings

        try:
            findings = across_readings(models, [ctx for _, (ctx, _fs) in readings],
                                       [fs for _, (_ctx, fs) in readings], [list(r.results) for r in runs])
        except CUT_SHORT as err:          # the findings are unknown, not absent: none is shown unreplayed
            why = f"the comparison and replay of the analyses' findings was {_cut_reason(err, options.budget)}"
            return [replace(r, analyses_unknown=r.analyses_unknown or why) for r in runs]
        runs = _with_findings(runs, findings)
    return runs


def _ask_ahead(models: Sequence[Model], budget: Budget, memo: dict) -> None:
    """The readings' order-dependence queries, each distinct one asked once, here, before they fork
    (`order_dependence.ask_ahead`), into `memo`; a cut leaves the rest to each reading, which says so."""
    from verifier.analysis.order_dependence import ask_ahead

    try:
        ask_ahead(models, budget, memo)
    except CUT_SHORT as err:
        _grace(err)


def _compiled_ahead(models: Sequence[Model], claims: Sequence[tuple[list[Property], str | None]],
                    options: RunOptions) -> None:
    """The compiled store's model-independent code loaded here, once, where the readings about to
    fork are expected to search in it (`portfolio.ahead`: the models, claims and options decide);
    each forked reading inherits it instead of loading it again."""
    from verifier.portfolio.ahead import compiled_ahead

    ahead = compiled_ahead(models, [props for props, _path in claims], options.budget, options.engine,
                           options.search.store, options.consistency)
    if ahead is not None:
        from verifier.engines.compiled.ahead import load_ahead

        with collector_paused():           # Numba's objects: many, long-lived, no garbage
            load_ahead(ahead.words, ahead.graphs, ahead.lasso)


def _proves_for_every_value(models: Sequence[Model], claims: Sequence[tuple[list[Property], str | None]]) -> bool:
    """Some reading leaves a parameter free (the model's or a claim's `for_every`): `auto` then
    runs the symbolic engine on it."""
    return any(not m.is_concrete or any(p.for_every for p in props) for m, (props, _path) in zip(models, claims))


def _reading(path: str, model: Model, claims: tuple[list[Property], str | None], options: RunOptions,
             progress: ProgressFn | None, memo: dict, beside: bool = False, ledger: Ledger | None = None,
             at_defaults: AtDefaults | None = None):
    """One reading: its ModelRun, and with the analyses on, their context and findings. With
    `beside` (a CPU to spare), the analyses of a model with every parameter fixed run in a
    forked child alongside the claims, on a search of their own until the claims' search of the
    model completes (the child then starts again, on that search, even where it has answered, so
    that which answer is used never depends on how fast it was: both searches have the same caps);
    else after the claims, reusing the state space the claims' search kept. A budget's backstop (`CUT_SHORT`)
    cuts it short: the claims decided by then keep their verdicts, the rest is UNKNOWN."""
    props, props_path = claims
    analyse = options.consistency
    beside = analyse and beside and model.is_concrete
    if ledger is None:
        ledger = Ledger.keeping([model.instantiate()] if model.is_concrete and (analyse or options.vacuity) else [],
                                capped=analyse and not beside)
    alongside = Alongside(lambda: _analyses(model, options, memo, props, ledger),
                          lambda: _analyses_again(model, options, memo, props, ledger)) if beside else None
    portfolio = Portfolio(make_engine(options.engine, options.search, ledger), options.budget, ledger, progress)
    try:
        return _claims_then_analyses(path, model, props, props_path, portfolio, options, memo, alongside,
                                     ledger, at_defaults)
    finally:
        if alongside is not None:
            alongside.close()


def _claims_then_analyses(path: str, model: Model, props: list[Property], props_path: str | None,
                          portfolio: Portfolio, options: RunOptions, memo: dict, alongside, ledger: Ledger,
                          at_defaults: AtDefaults | None):
    analyse = options.consistency
    start = time.perf_counter()
    by_id: dict[str, CheckResult] = {}
    cut: Stop | None = None
    try:
        if options.budget.expired():    # a reading started past the backstop (a cut worker's, again here)
            raise OutOfTime()
        _decide(model, props, portfolio, by_id, at_defaults, alongside)
        vacuous = _vacuity(model, props, options, ledger)
        if options.budget.expired():    # past the engines' backstop: the analyses are not started
            raise OutOfTime()
    except CUT_SHORT as err:
        cut, vacuous = _cut_stop(err, options.budget), ()
    results = [replace(r, variant=model.variant, scale=scale_of(r.verdict, r.params, model.printed))
               for r in (by_id.get(p.id) or _cut_result(model, p, cut) for p in props)]
    run = ModelRun(model, path, tuple(results), (), time.perf_counter() - start, props_path, vacuous=vacuous)
    if not analyse:
        return run, None
    if alongside is not None:
        ctx, findings = alongside.result()
    elif cut is not None:
        ctx, findings = _not_analysed(model, options, memo, cut.words), []
    else:
        ctx, findings = _analyses(model, options, memo, props, ledger)
    beyond = ctx.beyond.summary() if ctx.beyond is not None else ""
    stop = ctx.space.stop if ctx.space is not None and not ctx.space.complete else None
    warnings = run.warnings
    if ctx.scan_fallback:
        warnings += (Diagnostic(f"the consistency analyses scanned their {len(ctx.space.packed):,} states in Python: "
                                f"the compiled scan could not ({ctx.scan_fallback})", severity="warning"),)
    return replace(run, analyses_unknown=ctx.unknown_reason, analyses_beyond=beyond, analyses_stop=stop,
                   warnings=warnings, seconds=time.perf_counter() - start), (ctx, findings)


def _decide(model: Model, props: list[Property], portfolio: Portfolio, into: dict[str, CheckResult],
            at_defaults: AtDefaults | None, alongside: Alongside | None) -> None:
    """The portfolio's steps; the analyses beside start again after the step that left the model's
    complete search in the ledger: what they find on it is what they find on their own search
    (never a matter of time)."""
    concrete = model.instantiate() if alongside is not None else None
    with closing(portfolio.steps(model, props, into, at_defaults)) as steps:
        for _step in steps:
            if concrete is not None and _analyses_take(concrete, portfolio.budget, portfolio.ledger):
                assert alongside is not None
                alongside.restart()
                concrete = None          # once


def _analyses_take(concrete: Model, budget: Budget, ledger: Ledger) -> bool:
    """Whether the analyses read the complete search of `concrete` the ledger now holds (`context.takes`)."""
    from verifier.analysis.context import takes

    return takes(concrete, budget, ledger.complete_search_of(concrete))


def _analyses(model: Model, options: RunOptions, memo: dict, claims: Sequence[Property], ledger: Ledger):
    """The analyses of one reading: (context, findings); a budget's backstop leaves them UNKNOWN
    (also where it expired while they ran: their searches stop there). The claims' invariants
    may decide questions beyond an incomplete search (`analysis.beyond`)."""
    from verifier.analysis import analyse_model

    try:
        concrete = model.instantiate()
        analysed = analyse_model(model, options.budget, memo, claims, ledger.complete_search_of(concrete),
                                 ledger.capped_search_of(concrete), ledger.mined_of(concrete))
        if options.budget.expired():    # an exploration the backstop stopped may have sent questions elsewhere
            raise OutOfTime()
        return analysed
    except CUT_SHORT as err:
        return _not_analysed(model, options, memo, _cut_reason(err, options.budget)), []


def _analyses_again(model: Model, options: RunOptions, memo: dict, claims: Sequence[Property], ledger: Ledger):
    """The analyses here, after their process beside the claims failed; UNKNOWN when the
    --timeout has passed meanwhile."""
    if options.budget.expired():
        return _not_analysed(model, options, memo, _timeout_words(options.budget)), []
    return _analyses(model, options, memo, claims, ledger)


def _not_analysed(model: Model, options: RunOptions, memo: dict, cut: str):
    from verifier.analysis.context import Context

    ctx = Context.create(model, options.budget, memo)
    ctx.cut_short = cut
    return ctx


CUT_SHORT = (OutOfTime, OutOfMemory, MemoryError)    # a budget's backstop, in whatever step it hits


def _cut_reason(err: BaseException, budget: Budget) -> str:
    """Why a step was cut short, in words (`_cut_stop`)."""
    return _cut_stop(err, budget).words


def _cut_stop(err: BaseException, budget: Budget) -> Stop:
    """Why a step was cut short; the backstop gets one more grace for what is left."""
    _grace(err)
    if isinstance(err, OutOfTime):
        return _timeout_stop(budget)
    words = f"cut short ({err.words})" if isinstance(err, OutOfMemory) else "cut short (out of memory)"
    return Stop(StopKind.MEMORY, "the memory guard", words)


def _grace(err: BaseException) -> None:
    """One more grace from the backstop that cut a step short (`err`), for what is left."""
    if isinstance(err, OutOfTime):
        after_cut()
    else:
        memory_after_cut()


def _timeout_stop(budget: Budget) -> Stop:
    return budget.backstop.stop() if budget.backstop is not None else \
        Stop(StopKind.BACKSTOP, "--timeout", "cut short by --timeout")


def _timeout_words(budget: Budget) -> str:
    return _timeout_stop(budget).words


def _cut_result(model: Model, claim: Property, cut: Stop | None) -> CheckResult:
    assert cut is not None, "a claim without a result was cut short"
    return CheckResult(claim, Verdict.UNKNOWN, "none", reason=cut.words, params=model.param_values, stop=cut)


def _vacuity(model: Model, props: list[Property], options: RunOptions, ledger: Ledger) -> tuple:
    """The claims that hold vacuously (`analysis.vacuity`), on the claims' kept search (of any store) when there
    is one; none searched for where a search of the model stored more states than vacuity's own would."""
    if not props or not model.is_concrete or not options.vacuity:
        return ()
    from verifier.analysis.vacuity import vacuous_claims

    concrete = model.instantiate()
    return tuple(vacuous_claims(concrete, props, options.budget, ledger.complete_search_of(concrete),
                                ledger.stored.get(concrete, 0)))


def _with_findings(runs: list[ModelRun], findings: list[Finding]) -> list[ModelRun]:
    """Findings of every reading go with the first run; a reading's own with its run."""
    return [replace(r, findings=tuple(f for f in findings if f.variant in (None, r.model.variant)))
            if i == 0 else
            replace(r, findings=tuple(f for f in findings if f.variant == r.model.variant))
            for i, r in enumerate(runs)]
