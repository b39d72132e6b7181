"""Random playouts: games played on the model's concrete semantics, and their statistics.

`policy.py` reads how moves are picked (uniform, or a weights file); `play.py`
plays the games on the packed generated code of the model (every playout is a
path of the semantics: its traces replay), evaluating the claims that a finite
path can refute; `result.py` holds what comes out. Nothing here prints.
"""
