"""What a run may spend and why it stopped: `Budget` (units that do not depend on the machine),
`Backstop` (the wall-clock outer limit), `Stop` (a typed reason), and the clocks."""
from verifier.resources.budget import DEFAULT_DEADLINE, Backstop, Budget
from verifier.resources.clock import Clock, ManualClock, MonotonicClock
from verifier.resources.stop import Stop, StopKind, model_error

__all__ = ["DEFAULT_DEADLINE", "Backstop", "Budget", "Clock", "ManualClock", "MonotonicClock", "Stop", "StopKind", "model_error"]
