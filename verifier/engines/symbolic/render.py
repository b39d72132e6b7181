"""Z3 formulas back in the model's own terms: ``hand[0] <= 7 and phase != Draw``.

Symbols print as slot names (``hand[0]``, ``marked[red]``) and parameter
names; a comparison of an enum slot with a literal prints the value's name;
negations are pushed into comparisons and strict integer bounds made
non-strict, so that Spacer's ``Not(B >= 8)`` reads ``hand[0] <= 7``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

import z3

from verifier.engines.symbolic.encode import Encoding, Term, conj
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.ir.expr import Const
from verifier.ir.model import BoolType, EnumType, IntType
from verifier.resources.memory import bound_z3

_PREC = {"or": 1, "->": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "*": 6, "atom": 9}


class Renderer:
    def __init__(self, enc: Encoding, state=None):
        st = state or enc.cur
        self.names: dict[str, tuple[str, object]] = {}
        for x, slot in zip(st.slots, enc.slots):
            self.names[x.decl().name()] = (slot.name, slot.type)
        for name, p in enc.params.items():
            self.names[p.decl().name()] = (name, None)

    # ---- entry points
    def formula(self, t: Term) -> str:
        return self._r(t, False)[0]

    def linear(self, coeffs: list[tuple[int, str]], constant: int = 0) -> str:
        """``2*deck[0] - hand[1] + 3`` from (coefficient, name) pairs."""
        out = ""
        for c, name in coeffs:
            if c == 0:
                continue
            mag = abs(c)
            term = name if mag == 1 else f"{mag}*{name}"
            if not out:
                out = term if c > 0 else f"-{term}"
            else:
                out += f" + {term}" if c > 0 else f" - {term}"
        if constant or not out:
            if not out:
                return str(constant)
            out += f" + {constant}" if constant > 0 else f" - {-constant}"
        return out

    # ---- the printer: returns (text, precedence)
    def _r(self, t: Term, negated: bool) -> tuple[str, int]:
        if z3.is_true(t) or z3.is_false(t):
            return ("false" if z3.is_true(t) == negated else "true"), 9
        if z3.is_not(t):
            return self._r(t.arg(0), not negated)
        if z3.is_and(t) or z3.is_or(t):
            is_and = z3.is_and(t) != negated
            parts = sorted(self._r(c, negated) for c in t.children())   # z3's order varies between runs
            prec = 2 if is_and else 1
            return (" and " if is_and else " or ").join(self._wrap(p, prec + 1) for p in parts), prec
        if z3.is_implies(t):
            if negated:   # not (a -> b) == a and not b
                a, b = self._r(t.arg(0), False), self._r(t.arg(1), True)
                return f"{self._wrap(a, 3)} and {self._wrap(b, 3)}", 2
            a, b = self._r(t.arg(0), False), self._r(t.arg(1), False)
            return f"{self._wrap(a, 2)} -> {self._wrap(b, 1)}", 1
        if z3.is_app_of(t, z3.Z3_OP_ITE) and z3.is_bool(t):
            c, a, b = t.children()
            if negated:
                a, b = z3.Not(a), z3.Not(b)
            return f"(if {self._r(c, False)[0]} then {self._r(a, False)[0]} else {self._r(b, False)[0]})", 9
        if z3.is_eq(t) and z3.is_bool(t.arg(0)):
            a, b = self._r(t.arg(0), False), self._r(t.arg(1), False)
            return f"{self._wrap(a, 5)} {'!=' if negated else '=='} {self._wrap(b, 5)}", 4
        if z3.is_eq(t) or z3.is_distinct(t) or z3.is_le(t) or z3.is_lt(t) or z3.is_ge(t) or z3.is_gt(t):
            return self._compare(t, negated), 4
        if z3.is_const(t) and z3.is_bool(t):
            name = self._name(t)
            return (f"not {name}" if negated else name), 3 if negated else 9
        text, prec = self._term(t)
        return (f"not ({text})" if negated else text), 3 if negated else prec

    def _compare(self, t: Term, negated: bool) -> str:
        op = {z3.Z3_OP_EQ: "==", z3.Z3_OP_DISTINCT: "!=", z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<",
              z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}[t.decl().kind()]
        if negated:
            op = {"==": "!=", "!=": "==", "<=": ">", "<": ">=", ">=": "<", ">": "<="}[op]
        a, b = t.arg(0), t.arg(1)
        # literal on the right
        if z3.is_int_value(a) and not z3.is_int_value(b):
            a, b = b, a
            op = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(op, op)
        # two non-literal integer sides: compare their difference with a literal, so that
        # "allies[1] > -1 + exhausted" reads "allies[1] >= exhausted"
        if not z3.is_int_value(b) and z3.is_int(a) and not (z3.is_const(a) and z3.is_const(b)):
            a, b = a - b, z3.IntVal(0)
        if z3.is_int_value(b) and not z3.is_const(a):
            a = z3.simplify(a, som=True)
            parts = a.children() if z3.is_add(a) else [a]
            shift = sum(c.as_long() for c in parts if z3.is_int_value(c))
            rest = [c for c in parts if not z3.is_int_value(c)]
            if rest:
                a = rest[0] if len(rest) == 1 else z3.Sum(*rest)
                b = z3.IntVal(b.as_long() - shift)
        flip = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}
        if z3.is_const(a) and z3.is_const(b) and not self._is_slot(a) and self._is_slot(b):
            a, b, op = b, a, flip.get(op, op)          # the state variable on the left: pile >= DECK
        if z3.is_int_value(b) and op in ("<", ">"):
            op, b = ("<=", z3.IntVal(b.as_long() - 1)) if op == "<" else (">=", z3.IntVal(b.as_long() + 1))
        if z3.is_int_value(b) and (z3.is_add(a) or z3.is_mul(a)):
            pos: list[z3.ExprRef] = []
            neg: list[z3.ExprRef] = []
            for c in (a.children() if z3.is_add(a) else [a]):
                coeff, _ = self._coeff(c)
                (neg if coeff is not None and coeff < 0 else pos).append(c)
            if neg:                                    # pile - DECK <= 0  ->  pile <= DECK
                if not pos:                            # -x - y <= -3  ->  x + y >= 3
                    pos, neg, b, op = [-c for c in neg], [], z3.IntVal(-b.as_long()), flip.get(op, op)
                    left = pos[0] if len(pos) == 1 else z3.Sum(*pos)
                    return f"{self._wrap(self._term(z3.simplify(left, som=True)), 5)} {op} {b.as_long()}"
                left = pos[0] if len(pos) == 1 else z3.Sum(*pos)
                right = z3.simplify(neg[0] * -1 if len(neg) == 1 else z3.Sum(*[-c for c in neg]), som=True)
                k = b.as_long()
                tail = "" if k == 0 else f" + {k}" if k > 0 else f" - {-k}"
                right_text = self._term(right)[0] + tail
                return f"{self._wrap(self._term(left), 5)} {op} {right_text}"
        if z3.is_int_value(b):
            k = b.as_long()
            if op == "<":
                op, k = "<=", k - 1
            elif op == ">":
                op, k = ">=", k + 1
            kind = self._slot_type(a)
            bounds = _const_bounds(kind)
            if bounds is not None:
                lo, hi = bounds
                if (op == "<=" and k == lo) or (op == ">=" and k == hi):
                    op = "=="        # at the bound of the declared range: "active <= 0" is "active == 0"
                elif isinstance(kind, EnumType) and op == "<=" and k == hi - 1 and lo < k:
                    op, k = "!=", hi   # all but the last value
                elif isinstance(kind, EnumType) and op == ">=" and k == lo + 1 and k < hi:
                    op, k = "!=", lo   # all but the first value
            if isinstance(kind, EnumType) and 0 <= k < len(kind.values):
                return f"{self._term(a)[0]} {op} {kind.values[k]}"
            if isinstance(kind, BoolType) and (op, k) in (("==", 1), ("!=", 0), (">=", 1)):
                return self._term(a)[0]
            if isinstance(kind, BoolType) and (op, k) in (("==", 0), ("!=", 1), ("<=", 0)):
                return f"not {self._term(a)[0]}"
            return f"{self._wrap(self._term(a), 5)} {op} {k}"
        return f"{self._wrap(self._term(a), 5)} {op} {self._wrap(self._term(b), 5)}"

    def _is_slot(self, t: Term) -> bool:
        return z3.is_const(t) and self.names.get(t.decl().name(), (None, None))[1] is not None

    def _slot_type(self, t: Term):
        if z3.is_const(t) and t.decl().name() in self.names:
            return self.names[t.decl().name()][1]
        return None

    def _name(self, t: Term) -> str:
        name = t.decl().name()
        return self.names.get(name, (name.split("@")[0], None))[0]

    def _term(self, t: Term) -> tuple[str, int]:
        if z3.is_int_value(t):
            v = t.as_long()
            return str(v), (9 if v >= 0 else 5)
        if z3.is_const(t):
            return self._name(t), 9
        if z3.is_add(t):
            out = ""
            for c in t.children():
                coeff, rest = self._coeff(c)
                if coeff is not None and coeff < 0:
                    body = str(-coeff) if not rest else rest if coeff == -1 else f"{-coeff}*{rest}"
                    out += f" - {body}" if out else f"-{body}"
                else:
                    text = self._wrap(self._term(c), 5)
                    out += f" + {text}" if out else text
            return out, 5
        if z3.is_mul(t):
            coeff, rest = self._coeff(t)
            if coeff == -1:
                return f"-{rest}", 6
            if coeff is not None:
                return f"{coeff}*{rest}", 6
            return " * ".join(self._wrap(self._term(c), 6) for c in t.children()), 6
        if z3.is_sub(t):
            a, b = t.children()
            return f"{self._wrap(self._term(a), 5)} - {self._wrap(self._term(b), 6)}", 5
        if z3.is_app_of(t, z3.Z3_OP_UMINUS):
            return f"-{self._wrap(self._term(t.arg(0)), 7)}", 6
        if z3.is_app_of(t, z3.Z3_OP_IDIV) or z3.is_div(t):
            a, b = t.children()
            return f"{self._wrap(self._term(a), 6)} / {self._wrap(self._term(b), 7)}", 6
        if z3.is_app_of(t, z3.Z3_OP_MOD):
            a, b = t.children()
            return f"{self._wrap(self._term(a), 6)} % {self._wrap(self._term(b), 7)}", 6
        if z3.is_app_of(t, z3.Z3_OP_ITE):
            c, a, b = t.children()
            return f"(if {self.formula(c)} then {self._term(a)[0]} else {self._term(b)[0]})", 9
        if z3.is_bool(t):
            return self.formula(t), 1
        return str(t), 9

    @staticmethod
    def _wrap(part: tuple[str, int], need: int) -> str:
        text, prec = part
        return f"({text})" if prec < need else text

    def _coeff(self, t: Term) -> tuple[int | None, str]:
        """(-3, 'deck[0]') for ``-3*deck[0]``; (None, '') otherwise."""
        if z3.is_mul(t) and len(t.children()) == 2 and z3.is_int_value(t.arg(0)):
            return t.arg(0).as_long(), self._wrap(self._term(t.arg(1)), 6)
        if z3.is_int_value(t) and t.as_long() < 0:
            return t.as_long(), ""
        return None, ""


def _const_bounds(t) -> tuple[int, int] | None:
    if isinstance(t, EnumType):
        return 0, len(t.values) - 1
    if isinstance(t, IntType) and isinstance(t.lo, Const) and isinstance(t.hi, Const):
        return t.lo.value, t.hi.value
    return None


@dataclass
class _Seen:
    """What `render` found of one encoding's conjuncts, by Z3 AST id (equal terms share one AST; the
    term is kept, so that its id stays its own): whether the declared ranges imply it, and its text.
    The ten mined-lemma proofs of a WTactics reading render the same 200-odd lemmas each."""

    implied: dict[int, tuple[Term, bool]] = field(default_factory=dict)
    texts: dict[int, tuple[Term, tuple[str, int]]] = field(default_factory=dict)


_SEEN: WeakKeyDictionary[Encoding, _Seen] = WeakKeyDictionary()


def render(enc: Encoding, formula: Term, drop_implied: bool = True) -> str:
    """`formula` (over `enc.cur` and the parameters) in model terms, simplified; conjuncts
    that the variables' declared ranges already imply are left out."""
    f = z3.simplify(formula, arith_lhs=False)
    parts = list(f.children()) if z3.is_and(f) else [f]
    seen = _SEEN.setdefault(enc, _Seen())
    if drop_implied:
        parts = _not_implied(parts, enc, seen.implied)
    if not parts:
        return "true (the declared ranges suffice)"
    r = Renderer(enc)
    texts = []
    for p in parts:
        known = seen.texts.get(p.get_id())
        if known is None:
            known = seen.texts[p.get_id()] = p, r._r(p, False)
        texts.append(known[1])
    texts.sort()                                      # z3's order varies between runs
    if len(texts) == 1:
        return texts[0][0]
    return " and ".join(Renderer._wrap(t, 3) for t in texts)


def _not_implied(parts: list[Term], enc: Encoding, known: dict[int, tuple[Term, bool]]) -> list[Term]:
    """The `parts` that the declared ranges do not imply (that Z3 does not show implied within its
    units), each asked once per encoding (`known`): one solver holds the ranges, each part's negation
    asked under an assumption of its own (a fresh solver each, with the ranges added again, cost 4 ms
    a part: 0.8 s for the 185 mined lemmas of a WTactics proof)."""
    asked = [p for p in parts if p.get_id() not in known]
    if asked:
        bound_z3()
        s = z3.Solver()
        s.add(conj(enc.param_constraints(), enc.ranges(enc.cur)))
        for k, p in enumerate(asked):
            bound_z3()
            mark = z3.Bool(f"implied?{k}")
            s.add(z3.Implies(mark, z3.Not(p)))
            s.set("rlimit", 2 * UNITS_PER_SECOND)
            known[p.get_id()] = p, s.check(mark) == z3.unsat
    return [p for p in parts if not known[p.get_id()][1]]
