"""Conformance tests for game engines, generated from a model (`turnproof testgen`).

`writer.py` writes a Hypothesis `RuleBasedStateMachine` module from a model:
one rule that takes a legal move of the model. The generated module imports `runtime.py`
(turnproof is a run-time dependency: it evaluates the model with the reference
semantics) and the user's engine adapter. Nothing here prints.
"""
