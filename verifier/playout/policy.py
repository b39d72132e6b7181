"""How a playout picks its next move: uniform, or weighted per action by a policy file.

A policy file is untrusted input (YAML)::

    weights:            # relative weight of each action (default 1)
      play_gem: 3
      "end Main": 0.5   # phase-end and turn-end actions have names too (see `turnproof export`)
      discard: 0        # 0: only when nothing else is enabled
    default: 1          # weight of the actions not listed (optional)

A move is picked in two draws: an action among the enabled ones, with
probability proportional to its weight (uniformly when every enabled one
weighs 0), then one of its enabled choice values, uniformly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from verifier.diagnostics import DiagnosticSink, UsageError
from verifier.ir.model import Model
from verifier.lang.yaml_source import Node, check_keys, load_yaml, suggest

MAX_WEIGHT = 1e9


@dataclass(frozen=True)
class Policy:
    """Weights by action name; actions not named weigh `default`."""

    weights: dict[str, float] = field(default_factory=dict)
    default: float = 1.0
    name: str = "uniform"

    def weight(self, action: str) -> float:
        return self.weights.get(action, self.default)

    @property
    def is_uniform(self) -> bool:
        return all(w == self.default for w in self.weights.values()) and self.default > 0

    def to_json(self) -> dict:
        return {"name": self.name, "default": self.default, "weights": dict(self.weights)}


UNIFORM = Policy()


def load_policy(path: str, model: Model) -> Policy:
    """The policy of a weights file, checked against the model's actions (errors: exit 2)."""
    root = load_yaml(path, UsageError)
    sink = DiagnosticSink()
    check_keys(root, ("weights", "default"), "a policy file", sink, required=("weights",))
    names = tuple(a.name for a in model.actions)
    weights: dict[str, float] = {}
    node = root.get("weights")
    if node is not None and not node.is_map:
        sink.error("'weights' must be a mapping of action names to numbers", node.span,
                   hint="e.g.\n  weights:\n    play_gem: 3")
    for key, child in node.items() if node is not None else []:
        if key not in names:
            sink.error(f"unknown action '{key}'", child.key_span, hint=suggest(key, names, "actions of the model"))
            continue
        value = _weight(child, f"the weight of '{key}'", sink)
        if value is not None:
            weights[key] = value
    default = 1.0
    if root.get("default") is not None:
        default = _weight(root.child("default"), "'default'", sink) or 0.0
    sink.raise_if_errors(UsageError)
    return Policy(weights, default, path)


def _weight(node: Node, what: str, sink: DiagnosticSink) -> float | None:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        sink.error(f"{what} must be a number, not {type(value).__name__} {str(value)[:40]!r}", node.span,
                   hint="weights are relative: 1 is the default, 0 means only when nothing else is enabled")
        return None
    if not math.isfinite(value) or not 0 <= value <= MAX_WEIGHT:
        sink.error(f"{what} must be between 0 and {MAX_WEIGHT:g}, not {value}", node.span,
                   hint="weights are relative: 1 is the default")
        return None
    return float(value)
