"""Worked examples (see examples/README.md)."""
