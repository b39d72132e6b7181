"""What a run may spend and why it stopped: `Budget` (units that do not depend on the machine),
`Backstop` (the outer limit: --timeout, or the default deadline in CPU seconds), `Stop` (a typed reason), and the clocks."""
from verifier.resources.budget import Backstop, Budget, UnitsSpent, default_cpu_owner
from verifier.resources.clock import Clock, CpuDeadlineClock, ManualClock, MonotonicClock, TreeCpuClock
from verifier.resources.stop import Stop, StopKind, model_error

__all__ = ["Backstop", "Budget", "Clock", "CpuDeadlineClock", "ManualClock", "MonotonicClock", "Stop", "StopKind",
           "TreeCpuClock", "UnitsSpent", "default_cpu_owner", "model_error"]
