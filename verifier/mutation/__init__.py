"""Mutation analysis: single-point rule mutants checked against the model's own claims."""
from verifier.mutation.analysis import STATUSES, MutationReport, Outcome, mutate
from verifier.mutation.operators import OPERATORS, Mutant

__all__ = ["OPERATORS", "STATUSES", "Mutant", "MutationReport", "Outcome", "mutate"]
