"""The model and property languages: YAML + an expression grammar (lark) -> IR.

Never calls an engine.
"""
from importlib.resources import files

from verifier.lang.checks import require_initial_state
from verifier.lang.derived import resolve_derived
from verifier.lang.expressions import parse_expression
from verifier.lang.loader import check_model, load_model
from verifier.lang.printed import load_at_printed
from verifier.lang.properties import default_properties_path, load_properties

SCHEMA_PATH = str(files("verifier.lang").joinpath("model.schema.json"))

__all__ = [
           "SCHEMA_PATH",
           "check_model",
           "default_properties_path",
           "load_at_printed",
           "load_model",
           "load_properties",
           "parse_expression",
           "require_initial_state",
           "resolve_derived",
]
