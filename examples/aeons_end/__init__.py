"""A reference engine for the Aeon's End turn and its conformance test (see examples/README.md)."""
