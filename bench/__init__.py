"""Benchmarks: `python -m bench` (explicit engine) and `python -m bench.symbolic`."""
