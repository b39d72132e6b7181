"""Mutation analysis: single-point rule mutants checked against the model's own claims.

`operators` makes and applies mutants, `analysis.mutate` checks them (through the
runner), `results` holds what it found (read by the reports without the runner),
`equivalence` proves a mutant equivalent. Import the modules themselves: this
package imports nothing, so reading results never loads the checking machinery.
"""
