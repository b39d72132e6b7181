"""turnproof: a model checker and rules-consistency verifier for game turn structures."""
__version__ = "0.1.0"
