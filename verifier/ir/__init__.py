"""The IR: the contract between languages, engines, analyses and reports.

It imports nothing from the project except `verifier.diagnostics`.
"""
from verifier.ir.expr import *  # noqa: F403
from verifier.ir.model import *  # noqa: F403
from verifier.ir.props import *  # noqa: F403
