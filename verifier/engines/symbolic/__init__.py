"""The symbolic engine (Z3): BMC, k-induction, PDR (Spacer) and ranking functions.

`encode` turns the IR into a transition system; `bmc`, `kinduction` and `pdr`
answer safety questions on it; `ranking` synthesises termination arguments;
`witness` turns every Z3 counterexample into a replayed `Trace`; `engine`
maps claims to these methods and results (`SymbolicEngine`).
"""
from verifier.engines.symbolic.engine import STRATEGIES, SymbolicEngine

__all__ = ["STRATEGIES", "SymbolicEngine"]
