"""A model at the values its page prints (`printed:`), and what to add when it does not load there."""
from __future__ import annotations

from dataclasses import replace

from verifier.diagnostics import ModelError
from verifier.ir.model import Model
from verifier.lang.loader import load_model


def load_at_printed(path: str, first: Model, params: dict[str, int | None], variant: str | None) -> Model:
    """`first` (the model as loaded with `params`) again at its printed values, `params` overriding
    them. Where the model does not load there, each error's hint names the parameters the page
    does not print, left at their defaults: the `-D NAME=VALUE` to add."""
    values = {**dict(first.printed or ()), **params}
    try:
        return load_model(path, values, variant)
    except ModelError as err:
        printed = ", ".join(f"{k}={v}" for k, v in (first.printed or ()))
        left = [(d.name, d.default) for d in first.params if d.name not in values]
        if not left:
            raise
        defaults = ", ".join(f"{k}={v}" for k, v in left)
        advice = (f"at the printed values ({printed}) the parameters the page does not print keep their "
                  f"defaults ({defaults}): add -D NAME=VALUE for the one this needs, e.g. -D {left[0][0]}=...")
        raise ModelError([replace(d, hint=f"{d.hint}; {advice}" if d.hint else advice)
                          for d in err.diagnostics]) from None
