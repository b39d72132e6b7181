"""The unit Z3's effort is counted in: its resource units (`rlimit`), never milliseconds."""

UNITS_PER_SECOND = 2_000_000   # Z3 resource units about a second of one core buys (measured when the limits were
                               # sized: bench/README.md); only to size limits, never read against a clock
