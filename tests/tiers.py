"""The suite's tiers, and how many examples a Hypothesis test draws in each: every test names the
count CI draws (the full tier's) through `examples`.

- full: CI's suite, where the ``CI`` variable is true (CI sets it) or with ``--full``: that count;
- quick: the default elsewhere: a quarter of it, at least 2 (a count of 3 or less is kept), and the
  tests marked ``full_tier`` skipped;
- slow (``--slow``): five times it, drawn at random, and the tests marked ``slow`` run too.

Both full and quick draw the same examples in every run (derandomized). conftest chooses the tier
before the test modules are imported and names it to them (and to the workers) in ``TURNPROOF_TIER``.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping
from enum import StrEnum

TIER = "TURNPROOF_TIER"
QUICK_SHARE = 4          # the quick tier draws a quarter of CI's examples
SLOW_TIMES = 5
FALSE_WORDS = ("", "0", "false", "no", "off")


class Tier(StrEnum):
    QUICK = "quick"
    FULL = "full"
    SLOW = "slow"


def chosen(full: bool, slow: bool, environ: Mapping[str, str]) -> Tier:
    """The tier of a run with `--full` and `--slow` as given, in `environ`."""
    if slow:
        return Tier.SLOW
    if full or environ.get("CI", "").strip().lower() not in FALSE_WORDS:
        return Tier.FULL
    return Tier.QUICK


def count(full: int, tier: Tier) -> int:
    """The examples a test drawing `full` in the full tier draws in `tier`."""
    if tier is Tier.SLOW:
        return SLOW_TIMES * full
    if tier is Tier.FULL or full <= 3:
        return full
    return max(2, math.ceil(full / QUICK_SHARE))


def examples(full: int) -> int:
    """The examples a test drawing `full` in the full tier draws in this run's tier."""
    return count(full, Tier(os.environ.get(TIER, Tier.QUICK)))
