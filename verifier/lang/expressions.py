"""Expression text -> IR expressions whose spans point into the YAML file.

Parsing is lark (grammar.lark, positions kept); names and types are resolved
through `typecheck.Scope`. Errors go to a DiagnosticSink, never raised here.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from verifier.diagnostics import SHOWN_WIDTH, DiagnosticSink, Span
from verifier.files import cache_dir
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Quant, QuantKind, Var, conj, disj, map_expr, substitute, walk
from verifier.ir.model import PHASE_ENUM, Definition
from verifier.ir.props import PREV_MARK
from verifier.lang import sequences
from verifier.lang.arrays import flat_index
from verifier.lang.limits import (
    MAX_DEFINITION_NESTING,
    MAX_EXPANDED_DEPTH,
    MAX_EXPR_DEPTH,
    deeper_than,
    expr_deeper_than,
    int_literal_problem,
)
from verifier.lang.typecheck import BOOL, INT, Scope, enum_ty, mismatch_hint, ty_of, ty_words


@dataclass(frozen=True)
class Origin:
    """Where each character of an expression's text lies in its file: one (line, col)
    per character, plus one for the position just after the text."""

    file: str
    positions: tuple[tuple[int, int], ...]

    @staticmethod
    def straight(file: str, line: int, col: int, text: str) -> Origin:
        """Text written on one line starting at line:col (or standing alone)."""
        pos, here = [], (line, col)
        for ch in text + " ":
            pos.append(here)
            here = (here[0] + 1, 1) if ch == "\n" else (here[0], here[1] + 1)
        return Origin(file, tuple(pos))

    def span(self, start: int, end: int | None = None) -> Span:
        """The file span of text[start:end] (character offsets)."""
        start = min(max(start, 0), len(self.positions) - 1)
        line, col = self.positions[start]
        if end is None or end <= start:
            return Span(self.file, line, col)
        end_line, end_col = self.positions[min(end, len(self.positions) - 1) - 1]
        return Span(self.file, line, col, end_line, end_col + 1)


@cache
def _parser(start: str) -> Lark:
    """The parser from rule `start`. Its tables are kept in the cache folder once built: a later
    process loads them (5 ms) instead of building them again (70 ms a rule). Lark stores them with
    a digest of the grammar, the options and its own and Python's versions, and builds them again
    where that differs or the file does not load (one half written, say)."""
    grammar = files("verifier.lang").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, start=start, maybe_placeholders=False,
                cache=_tables_file(start, grammar))


def _tables_file(start: str, grammar: str) -> str | bool:
    """The file that keeps the tables of `grammar`'s parser from rule `start` (`files.cache_dir`);
    False (none kept) where the folder cannot be made."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return False
    return str(folder / f"lark-{start}-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}.tables")


@lru_cache(maxsize=4096)
def _parsed(start: str, text: str) -> tuple[Tree, bool]:
    """The parse tree of `text` from rule `start` (never changed by its readers), and whether it nests
    deeper than MAX_EXPR_DEPTH: a file's readings, its printed and default values and its claims read
    the same texts again."""
    tree = _parser(start).parse(text)
    return tree, deeper_than(tree, MAX_EXPR_DEPTH)


EXPANSION_LIMIT = 20_000   # nodes an expanded definition may have (guards against exponential nesting)

_OPS = {"+": Op.ADD, "-": Op.SUB, "*": Op.MUL, "/": Op.DIV, "%": Op.MOD, "==": Op.EQ, "!=": Op.NE,
        "<": Op.LT, "<=": Op.LE, ">": Op.GT, ">=": Op.GE}
_TOKEN_WORDS = {   # in the order a hint lists them
    "NAME": "a name", "INT": "a number", "LPAR": "'('", "RPAR": "')'", "RSQB": "']'", "CMPOP": "a comparison",
    "ADDOP": "'+'", "MULOP": "'*'", "AND": "'and'", "OR": "'or'", "IMPLIES": "'->'", "THEN": "'then'",
    "ELSE": "'else'", "COLON": "':'", "COMMA": "','", "IN": "'in'",
    "RBRACE": "'}'"}


class ExprReader:
    """Parses and type-checks one expression text."""

    nesting = 0          # definitions being expanded around this text

    def __init__(self, scope: Scope, origin: Origin, sink: DiagnosticSink, text: str):
        self.scope, self.origin, self.sink, self.text = scope, origin, sink, text

    # ---- entry points
    def read(self, want: str | None = None) -> tuple[Expr, str] | None:
        """The expression and its type; None after reporting an error."""
        tree = self._parse("start")
        out = None if tree is None else self._expr(tree, self.scope)
        if out is None:
            return None
        if want is not None and out[1] != want:
            self.sink.error(f"expected {ty_words(want)}, found {ty_words(out[1])} in '{self.text.strip()}'",
                            self._span(tree), hint=mismatch_hint(want, out[1]))
            return None
        return out

    def read_range(self) -> tuple[Expr, Expr] | None:
        """`lo..hi` with integer bounds."""
        tree = self._parse("range", "a range is written lo..hi, e.g. 0..DECK")
        if tree is None:
            return None
        bounds = [b for t in tree.children if (b := self._need(t, self.scope, INT, "..")) is not None]
        return (bounds[0], bounds[1]) if len(bounds) == len(tree.children) == 2 else None

    def read_duration(self) -> Expr | None:
        """`next_turn_of(p)`, `forever`, or `if c then D1 else D2`: the player whose next turn ends the
        value (PLAYERS where it never ends), as one expression."""
        tree = self._parse("duration", "a duration is next_turn_of(p), forever, or if c then D1 else D2")
        return None if tree is None else self._duration(tree)

    def _duration(self, node) -> Expr | None:
        if node.data == "duration_next":
            out = self._expr(node.children[0], self.scope)
            if out is not None and out[1] != INT:
                self.sink.error(f"expected {ty_words(INT)} (a player), found {ty_words(out[1])} in next_turn_of",
                                self._span(node.children[0]), hint=mismatch_hint(INT, out[1]))
                return None
            return None if out is None else out[0]
        if node.data == "duration_forever":
            return Const(self.scope.players)
        c = self._need(node.children[0], self.scope, BOOL, "if")
        then, otherwise = self._duration(node.children[1]), self._duration(node.children[2])
        if c is None or then is None or otherwise is None:
            return None
        return App(Op.ITE, (c, then, otherwise), span=self._span(node))

    def read_define_head(self) -> tuple[str, tuple[str, ...]] | None:
        """`name` or `name(p, q)`: the head of a `define:` entry."""
        tree = self._parse("define_head", "a definition is named 'name' or 'name(p, q)'")
        if tree is None:
            return None
        names = [str(t) for t in tree.children]
        if len(set(names[1:])) != len(names) - 1:
            self.sink.error(f"definition {names[0]} repeats a parameter name", self.origin.span(0, len(self.text)),
                            hint="give each parameter its own name")
            return None
        return names[0], tuple(names[1:])

    def read_block_use(self) -> tuple[str, list[tuple[Expr, str]], Span] | None:
        """`name` or `name(e, ...)`: the use of a block of effects: its name, each argument read with its
        type, and the span of the name."""
        tree = self._parse("block_use", "a block of effects is used as 'name' or 'name(args)'")
        if tree is None:
            return None
        args = [self._expr(child, self.scope) for child in tree.children[1:]]
        if any(a is None for a in args):
            return None
        name = tree.children[0]
        assert isinstance(name, Token), "block_use starts with a NAME token"
        return str(name), [a for a in args if a is not None], self.origin.span(name.start_pos or 0, name.end_pos)

    def check_syntax(self) -> bool:
        """Whether the text parses as an expression (errors reported); types are checked where it is used."""
        return self._parse("start") is not None

    # ---- parsing and positions
    def _parse(self, start: str, hint: str | None = None) -> Tree | None:
        try:
            tree, too_deep = _parsed(start, self.text)
        except UnexpectedInput as err:
            self._syntax_error(err, hint)
            return None
        if too_deep:
            self.sink.error(f"expression too deeply nested: more than {MAX_EXPR_DEPTH} levels of operators, "
                            "'if' and quantifiers", self.origin.span(0, len(self.text.rstrip())),
                            hint="name a sub-expression under `define:` (e.g. `define: {ready: \"...\"}`) and use "
                                 "the name here, or drop repeated 'not'/'-'")
            return None
        return tree

    def _syntax_error(self, err: UnexpectedInput, hint: str | None) -> None:
        pos = getattr(err, "pos_in_stream", None)
        if isinstance(err, UnexpectedCharacters):
            char = self.text[err.pos_in_stream or 0]
            what = f"unexpected character '{char}'"
            hint = hint or ("compare with '=='" if char == "=" else self._expected(err.allowed))
        elif isinstance(err, UnexpectedToken) and err.token.type != "$END":
            what, pos = f"unexpected '{err.token}'", err.token.start_pos
            hint = hint or self._expected(err.expected)
        else:
            what, pos = "unexpected end of expression", len(self.text.rstrip())
            hint = hint or self._expected(getattr(err, "expected", ())) or \
                "the expression stops too early: something is missing at its end"
        text = self.text.strip()        # the excerpt under the message shows the rest
        shown = text if len(text) <= SHOWN_WIDTH else text[:SHOWN_WIDTH] + "..."
        self.sink.error(f"cannot parse expression '{shown}': {what}",
                        self.origin.span(pos if pos is not None and pos >= 0 else 0),
                        hint=hint or "see docs/LANGUAGE.md, section Expressions")

    @staticmethod
    def _expected(terminals) -> str | None:
        terminals = set(terminals or ())
        if "NAME" in terminals:
            return "expected a name, a number or '('"
        wanted = [words for name, words in _TOKEN_WORDS.items() if name in terminals]
        if len(wanted) > 2:
            return "expected an operator (+ - * / %, == != < <= > >=, and, or, ->) or the end of the expression"
        return f"expected {' or '.join(wanted)}" if wanted else None

    def _span(self, node) -> Span:
        if isinstance(node, Token):
            return self.origin.span(node.start_pos or 0, node.end_pos)
        meta = node.meta
        if getattr(meta, "start_pos", None) is None:
            return self.origin.span(0)
        return self.origin.span(meta.start_pos, meta.end_pos)

    # ---- conversion
    def _expr(self, node, scope: Scope) -> tuple[Expr, str] | None:
        return getattr(self, f"_n_{node.data}")(node, scope)

    def _need(self, node, scope: Scope, want: str, op: str) -> Expr | None:
        out = self._expr(node, scope)
        if out is None:
            return None
        if out[1] != want:
            self.sink.error(f"'{op}' needs {ty_words(want)}, found {ty_words(out[1])}", self._span(node),
                            hint=mismatch_hint(want, out[1]))
            return None
        return out[0]

    def _n_int_(self, node, scope):
        too_big = int_literal_problem(str(node.children[0]), self._span(node))
        if too_big is not None:
            self.sink.diagnostics.append(too_big)
            return None
        return Const(int(node.children[0]), span=self._span(node)), INT

    def _n_true(self, node, scope):
        return Const(1, is_bool=True, span=self._span(node)), BOOL

    def _n_false(self, node, scope):
        return Const(0, is_bool=True, span=self._span(node)), BOOL

    def _n_name(self, node, scope):
        name = str(node.children[0])
        if name in scope.defines and name not in scope.locals:
            return self._expand(scope.defines[name], [], node, scope)
        return scope.resolve(name, self._span(node), self.sink)

    def _n_call(self, node, scope):
        name, span = str(node.children[0]), self._span(node)
        if name == "prev":         # built-in names: no definition takes them (loader.BUILTIN_NAMES)
            return self._prev(node, scope)
        if name in ("top", "len"):
            return self._seq_call(name, node, scope)
        if name not in scope.defines:
            if name in scope.known_names():
                self.sink.error(f"'{name}' is not a definition and takes no arguments", span,
                                hint="only names under define: with parameters are called, e.g. can_cast(p)")
            else:
                scope.unknown(name, span, self.sink)
            return None
        args = [self._expr(k, scope) for k in node.children[1:]]
        return None if None in args else self._expand(scope.defines[name], args, node, scope)

    def _seq_call(self, name: str, node, scope: Scope) -> tuple[Expr, str] | None:
        """`top(s)` (the last element pushed) and `len(s)` of a sequence `s`, or of one sequence `s[d]` of
        an array of sequences."""
        span = self._span(node)
        arg = node.children[1] if len(node.children) == 2 else None
        row_node = None
        if isinstance(arg, Tree) and arg.data == "index" and len(arg.children) == 2:
            arg, row_node = Tree("name", [arg.children[0]]), arg.children[1]
        var = scope.variables.get(str(arg.children[0])) if isinstance(arg, Tree) and arg.data == "name" else None
        if var is None or var.seq_length is None or bool(var.dims) != (row_node is not None):
            seqs = [f"{v.name}[...]" if v.dims else v.name for v in scope.variables.values() if v.seq_length is not None]
            self.sink.error(f"{name}(...) takes one sequence" + (f": {var.name} is an array of sequences, say which"
                                                                 if var is not None and var.dims and var.seq_length
                                                                 else " variable"), span,
                            hint=f"e.g. {name}({seqs[0] if seqs else 'stack'}) with a variable of type seq[T, 0..N]")
            return None
        row = None
        if row_node is not None:
            read = self._need(row_node, scope, ty_of(var.dims[0]), f"{var.name}[...]")
            if read is None:
                return None
            row = read
        if name == "len":
            return sequences.length(var, row), INT
        return sequences.top(var, span, row), ty_of(var.type)

    def _prev(self, node, scope: Scope) -> tuple[Expr, str] | None:
        """`prev(e)`: `e` read in the state before the transition (its variables renamed `prev:x`)."""
        span = self._span(node)
        if not scope.allow_prev:
            self.sink.error("prev(...) is only meaningful in a step claim", span,
                            hint="a step: claim judges a transition; prev(x) is x before it")
            return None
        if len(node.children) != 2:
            self.sink.error("prev takes one argument", span, hint="e.g. prev(passes)")
            return None
        out = self._expr(node.children[1], scope)
        if out is None:
            return None
        if any(isinstance(n, (Var, Index)) and n.name.startswith(PREV_MARK) for n in walk(out[0])):
            self.sink.error("prev(...) inside prev(...)", span, hint="a step claim sees one transition: "
                                                                     "write prev(x) once")
            return None

        def mark(e: Expr) -> Expr | None:
            if isinstance(e, Var):
                return Var(PREV_MARK + e.name, span=e.span)
            if isinstance(e, Index):
                return Index(PREV_MARK + e.name, map_expr(e.index, mark), span=e.span)
            return None

        return map_expr(out[0], mark), out[1]

    def _expand(self, d: Definition, args: list, node, scope: Scope) -> tuple[Expr, str] | None:
        """The body of definition `d` with its parameters replaced by the arguments' expressions."""
        span = self._span(node)
        if len(args) != len(d.params):
            want = f"{d.name}({', '.join(d.params)})" if d.params else d.name
            self.sink.error(f"{d.name} takes {len(d.params)} argument{'s' if len(d.params) != 1 else ''}, "
                            f"found {len(args)}", span, hint=f"write {want}")
            return None
        if self.nesting >= MAX_DEFINITION_NESTING:
            self.sink.error(f"{d.name} is used inside more than {MAX_DEFINITION_NESTING} nested definitions",
                            span, hint="a chain of definitions, each using the one before, is too long: shorten it")
            return None
        key = (d.name, tuple(ty for _, ty in args))
        if key not in scope.bodies:       # each definition is read once per argument types
            inner = DiagnosticSink()
            origin = Origin(d.file, d.positions) if d.positions else Origin.straight(d.file, 1, 1, d.text)
            reader = ExprReader(scope.for_body(d, dict(zip(d.params, key[1]))), origin, inner, d.text)
            reader.nesting = self.nesting + 1
            scope.bodies[key] = reader.read()
            for diag in inner.diagnostics:
                self.sink.error(diag.message, diag.span, diag.hint,
                                (*diag.notes, (f"in this use of {d.name}", span)))
        body = scope.bodies[key]
        if body is None:
            return None
        out = _substitute_args(body[0], {p: e for p, (e, _) in zip(d.params, args)})
        if _larger_than(out, EXPANSION_LIMIT):
            self.sink.error(f"{d.name} expands to more than {EXPANSION_LIMIT} expression nodes", d.span or span,
                            hint="definitions that use other definitions several times multiply; "
                                 "simplify them or use a helper variable")
            return None
        if expr_deeper_than(out, MAX_EXPANDED_DEPTH):     # after the size check: `out` is small by then
            self.sink.error(f"{d.name} expands to an expression nested more than {MAX_EXPANDED_DEPTH} levels",
                            d.span or span, hint="a chain of definitions, each using the one before, nests "
                                                 "deeper at each step: shorten it")
            return None
        return out, body[1]

    def _n_index(self, node, scope):
        name, span = str(node.children[0]), self._span(node)
        found = scope.array(name, span, self.sink)
        if found is None:
            return None
        var, want = found
        kids = node.children[1:]
        if var.seq_length is not None and len(kids) == 1 and not var.dims:
            i = self._need(kids[0], scope, INT, f"{name}[...]")
            return None if i is None else (sequences.element(var, i, span), ty_of(var.type))
        if var.seq_length is not None and len(kids) == 2:      # `s[d][i]`: element i of sequence s[d]
            row = self._need(kids[0], scope, ty_of(var.dims[0]), f"{name}[...]")
            i = self._need(kids[1], scope, INT, f"{name}[...][...]")
            return None if row is None or i is None else (sequences.element(var, i, span, row), ty_of(var.type))
        if var.seq_length is not None:
            self.sink.error(f"'{name}' is an array of sequences: {name}[d] is one sequence; say what of it", span,
                            hint=f"len({name}[d]), top({name}[d]) or {name}[d][i] (i from 0, the bottom)")
            return None
        if var.dims:
            if len(kids) != len(var.dims):
                self.sink.error(f"'{name}' is a 2-D array: give two indices, found {len(kids)}", span,
                                hint=f"write {name}[i][j]")
                return None
            pair = [self._need(k, scope, ty_of(d), f"{name}[...]") for k, d in zip(kids, var.dims)]
            if pair[0] is None or pair[1] is None:
                return None
            return Index(name, flat_index(var, pair[0], pair[1], scope.variables), span=span), ty_of(var.type)
        if len(kids) != 1:
            self.sink.error(f"'{name}' has one index, found {len(kids)}", span, hint=f"write {name}[i]")
            return None
        idx = self._need(kids[0], scope, want, f"{name}[...]")
        return None if idx is None else (Index(name, idx, span=span), ty_of(var.type))

    def _n_index_comma(self, node, scope):
        name = str(node.children[0])
        self.sink.error(f"indices are written in brackets each: '{name}[i, j]' is not an index", self._span(node),
                        hint=f"write {name}[i][j]")
        return None

    def _n_neg(self, node, scope):
        e = self._need(node.children[0], scope, INT, "-")
        return None if e is None else (App(Op.NEG, (e,), span=self._span(node)), INT)

    def _n_not_(self, node, scope):
        e = self._need(node.children[-1], scope, BOOL, "not")
        return None if e is None else (App(Op.NOT, (e,), span=self._span(node)), BOOL)

    def _chain(self, node, scope, want: str) -> tuple[Expr, str] | None:
        """Left-associative `a op b op c` over one type."""
        kids = node.children
        acc = self._need(kids[0], scope, want, str(kids[1]))
        for i in range(1, len(kids), 2):
            rhs = self._need(kids[i + 1], scope, want, str(kids[i]))
            acc = None if acc is None or rhs is None else \
                App(_OPS[str(kids[i])], (acc, rhs), span=self._span(node))
        return None if acc is None else (acc, want)

    def _n_sum(self, node, scope):
        return self._chain(node, scope, INT)

    def _n_product(self, node, scope):
        return self._chain(node, scope, INT)

    def _flat(self, node, scope, op: Op):
        kids = [k for k in node.children if isinstance(k, Tree)]
        parts = [p for k in kids if (p := self._need(k, scope, BOOL, op.value)) is not None]
        return None if len(parts) < len(kids) else (App(op, tuple(parts), span=self._span(node)), BOOL)

    def _n_and_expr(self, node, scope):
        return self._flat(node, scope, Op.AND)

    def _n_or_expr(self, node, scope):
        return self._flat(node, scope, Op.OR)

    def _n_implies(self, node, scope):
        a = self._need(node.children[0], scope, BOOL, "->")
        b = self._need(node.children[2], scope, BOOL, "->")
        return None if a is None or b is None else (App(Op.IMPLIES, (a, b), span=self._span(node)), BOOL)

    def _n_cmp(self, node, scope):
        left, op, right = node.children
        a, b = self._expr(left, scope), self._expr(right, scope)
        if a is None or b is None:
            return None
        op = str(op)
        if op in ("==", "!=") and a[1] != b[1]:
            self.sink.error(f"cannot compare {ty_words(a[1])} with {ty_words(b[1])}", self._span(node),
                            hint=mismatch_hint(a[1], b[1]))
            return None
        bad = a[1] if a[1] != INT else b[1]
        if op not in ("==", "!=") and bad != INT:
            self.sink.error(f"'{op}' needs {ty_words(INT)}, found {ty_words(bad)}", self._span(node),
                            hint=mismatch_hint(INT, bad))
            return None
        return App(_OPS[op], (a[0], b[0]), span=self._span(node)), BOOL

    def _n_member_set(self, node, scope):
        """`x in {a, b}` is `x == a or x == b`."""
        x = self._expr(node.children[0], scope)
        items = [self._expr(k, scope) for k in node.children[1:]]
        if x is None or None in items:
            return None
        for k, item in zip(node.children[1:], items):
            if item[1] != x[1]:
                self.sink.error(f"cannot compare {ty_words(x[1])} with {ty_words(item[1])}", self._span(k),
                                hint=mismatch_hint(x[1], item[1]))
                return None
        span = self._span(node)
        return disj(*(App(Op.EQ, (x[0], item[0]), span=span) for item in items)), BOOL

    def _n_member_range(self, node, scope):
        """`x in lo..hi` is `lo <= x and x <= hi`."""
        x, lo, hi = (self._need(k, scope, INT, "in ..") for k in node.children)
        if x is None or lo is None or hi is None:
            return None
        span = self._span(node)
        return conj(App(Op.LE, (lo, x), span=span), App(Op.LE, (x, hi), span=span)), BOOL

    def _n_member_steps(self, node, scope):
        """`phase in Combat.steps`: the phase is one of Combat's leaf steps."""
        x = self._expr(node.children[0], scope)
        name = str(node.children[1])
        if x is None:
            return None
        span = self._span(node)
        if name not in scope.phase_steps:
            self.sink.error(f"'{name}' is not a phase with steps", span,
                            hint=f"phases with steps: {', '.join(scope.phase_steps)}" if scope.phase_steps
                            else "this model has no phase with steps; write phase in {A, B}")
            return None
        want = f"enum:{PHASE_ENUM}"
        if x[1] != want:
            self.sink.error(f"{name}.steps are phases: cannot compare {ty_words(x[1])} with them", span,
                            hint=f"e.g. phase in {name}.steps")
            return None
        enum = scope.enums[PHASE_ENUM]
        return disj(*(App(Op.EQ, (x[0], Const(enum.values.index(leaf), enum=PHASE_ENUM)), span=span)
                      for leaf in scope.phase_steps[name])), BOOL

    def _n_ite(self, node, scope):
        c = self._need(node.children[0], scope, BOOL, "if")
        a, b = self._expr(node.children[1], scope), self._expr(node.children[2], scope)
        if c is None or a is None or b is None:
            return None
        if a[1] != b[1]:
            self.sink.error(f"the branches of 'if' differ: {ty_words(a[1])} and {ty_words(b[1])}",
                            self._span(node), hint="both branches must have the same type")
            return None
        return App(Op.ITE, (c, a[0], b[0]), span=self._span(node)), a[1]

    def _n_func(self, node, scope):
        name = str(node.children[0])
        args = [self._need(k, scope, INT, name) for k in node.children[1:]]
        if None in args:
            return None
        if (name == "abs") != (len(args) == 1):
            self.sink.error(f"{name} takes {'one argument' if name == 'abs' else 'two or more arguments'}",
                            self._span(node), hint=f"e.g. {name}(x)" if name == "abs" else f"e.g. {name}(x, 0)")
            return None
        op = {"min": Op.MIN, "max": Op.MAX, "abs": Op.ABS}[name]
        return App(op, tuple(args), span=self._span(node)), INT

    def _domain(self, node, scope) -> tuple[Expr, Expr, str] | None:
        if node.data == "player_domain":
            return Const(0), Const(scope.players - 1), INT
        if node.data == "enum_domain":
            name = str(node.children[0])
            if name not in scope.enums:
                self.sink.error(f"unknown domain '{name}'", self._span(node),
                                hint="a domain is 'player', an enum name, or lo..hi")
                return None
            enum = scope.enums[name]
            return Const(0, enum=name), Const(len(enum.values) - 1, enum=name), enum_ty(name)
        lo = self._need(node.children[0], scope, INT, "..")
        hi = self._need(node.children[1], scope, INT, "..")
        return None if lo is None or hi is None else (lo, hi, INT)

    def _n_quant(self, node, scope):
        return self._binder(node, scope, BOOL)

    def _n_agg(self, node, scope):
        return self._binder(node, scope, BOOL if str(node.children[0]) == "count" else INT)

    def _binder(self, node, scope, body_ty: str):
        kind, var, dom, body = node.children
        kind = QuantKind(str(kind))
        d = self._domain(dom, scope)
        if d is None:
            return None
        b = self._need(body, scope.with_locals({str(var): d[2]}), body_ty, kind.value)
        if b is None:
            return None
        result_ty = BOOL if kind in (QuantKind.FORALL, QuantKind.EXISTS) else INT
        return Quant(kind, str(var), d[0], d[1], b, span=self._span(node)), result_ty


def _larger_than(e: Expr, limit: int) -> bool:
    return any(n >= limit for n, _ in enumerate(walk(e)))


def _substitute_args(body: Expr, args: dict[str, Expr]) -> Expr:
    """Replace parameters by arguments; a quantifier of the body that binds a name free in an
    argument is renamed first, so the argument keeps its meaning."""
    free = {n.name for a in args.values() for n in walk(a) if isinstance(n, Local)}
    taken = free | {n.var for n in walk(body) if isinstance(n, Quant)} | set(args)

    def fresh(name: str) -> str:
        i = 1
        while f"{name}_{i}" in taken:
            i += 1
        taken.add(f"{name}_{i}")
        return f"{name}_{i}"

    def rename(e: Expr) -> Expr | None:
        if isinstance(e, Quant) and e.var in free:
            new = fresh(e.var)
            inner = _rename_bound(e.body, e.var, new)
            return Quant(e.kind, new, map_expr(e.lo, rename), map_expr(e.hi, rename), map_expr(inner, rename),
                         span=e.span)
        return None

    return substitute(map_expr(body, rename), args)


def _rename_bound(e: Expr, old: str, new: str) -> Expr:
    return substitute(e, {old: Local(new)})


def parse_expression(text: str, scope: Scope | None = None, want: str | None = None,
                     origin: Origin | None = None, sink: DiagnosticSink | None = None) -> Expr | None:
    """Parse and check one expression (for tests and tools).

    Errors land in `sink`; without one, they raise ModelError. Positions count
    from `origin` (default: line 1, column 1 of a file named '<expr>').
    """
    own = sink is None
    sink = sink or DiagnosticSink()
    out = ExprReader(scope or Scope(), origin or Origin.straight("<expr>", 1, 1, text), sink, text).read(want)
    if own:
        sink.raise_if_errors()
    return None if out is None else out[0]
