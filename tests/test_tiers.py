"""The suite's tiers (tests/tiers.py, conftest): which tier a run is in, how many examples a Hypothesis
test draws in it, and which tests it skips."""
from __future__ import annotations

import os

import conftest
import pytest
from hypothesis import settings
from tiers import TIER, Tier, chosen, count, examples

pytest_plugins = ["pytester"]


@pytest.mark.parametrize("full, slow, environ, tier", [
    (False, False, {}, Tier.QUICK),
    (False, False, {"CI": ""}, Tier.QUICK),
    (False, False, {"CI": "false"}, Tier.QUICK),
    (False, False, {"CI": "0"}, Tier.QUICK),
    (False, False, {"CI": "true"}, Tier.FULL),
    (False, False, {"CI": "1"}, Tier.FULL),
    (False, False, {"CI": "True"}, Tier.FULL),
    (True, False, {}, Tier.FULL),
    (True, False, {"CI": "false"}, Tier.FULL),
    (False, True, {}, Tier.SLOW),
    (False, True, {"CI": "true"}, Tier.SLOW),
    (True, True, {}, Tier.SLOW),
])
def test_the_tier_is_chosen_by_ci_full_and_slow(full, slow, environ, tier):
    assert chosen(full, slow, environ) is tier


@pytest.mark.parametrize("full, quick", [(1, 1), (2, 2), (3, 3), (4, 2), (6, 2), (8, 2), (9, 3), (40, 10),
                                         (60, 15), (100, 25), (150, 38), (400, 100)])
def test_each_tier_draws_its_share_of_cis_examples(full, quick):
    assert count(full, Tier.FULL) == full
    assert count(full, Tier.QUICK) == quick
    assert count(full, Tier.SLOW) == 5 * full


IDS = [f"in_{tier}" for tier in Tier]      # a parameter's id is a keyword: "slow" would mark it slow


@pytest.mark.parametrize("tier", list(Tier), ids=IDS)
def test_a_test_module_reads_the_tier_conftest_names(tier, monkeypatch):
    monkeypatch.setenv(TIER, tier)
    assert examples(60) == count(60, tier)
    monkeypatch.delenv(TIER)
    assert examples(60) == count(60, Tier.QUICK)


def test_this_run_is_in_the_tier_its_options_choose(request):
    """The wiring in conftest: this run's tier, named to the test modules, and Hypothesis's count for a
    test that names none."""
    config = request.config
    tier = chosen(config.getoption("--full"), config.getoption("--slow"), os.environ)
    assert config.stash[conftest.TIER_KEY] is tier
    assert os.environ[TIER] == tier
    if not config.getoption("hypothesis_profile", None):
        assert settings().max_examples == count(100, tier)
        assert settings().derandomize is (tier is not Tier.SLOW)


TESTS = """
import pytest

@pytest.mark.full_tier
def test_big():
    pass

@pytest.mark.full_tier(reason="loads the machine")
def test_loaded():
    pass

@pytest.mark.slow
def test_slow():
    pass

def test_plain():
    pass
"""


class Tiered:
    """The conftest's skipping in a pytest of its own, at a given tier."""

    def __init__(self, tier: Tier):
        self.tier = tier

    def pytest_collection_modifyitems(self, items):
        conftest.skip_outside_tier(items, self.tier)


@pytest.mark.parametrize("tier, ran, skipped", [
    (Tier.QUICK, {"test_plain"}, {"test_big": conftest.FULL_TIER_REASON, "test_loaded": "loads the machine",
                                  "test_slow": "slow: run with --slow"}),
    (Tier.FULL, {"test_plain", "test_big", "test_loaded"}, {"test_slow": "slow: run with --slow"}),
    (Tier.SLOW, {"test_plain", "test_big", "test_loaded", "test_slow"}, {}),
], ids=IDS)
def test_full_tier_tests_skip_in_the_quick_tier_with_the_reason(tier, ran, skipped, pytester):
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n    full_tier: full tier\n")
    pytester.makepyfile(test_marked=TESTS)
    reports = pytester.inline_run("-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:benchmark",
                                  plugins=[Tiered(tier)]).getreports()
    assert {r.nodeid.split("::")[1] for r in reports if r.when == "call" and r.passed} == ran
    assert {r.nodeid.split("::")[1]: r.longrepr[2].removeprefix("Skipped: ")
            for r in reports if r.skipped} == skipped


def test_every_tier_says_what_it_ran():
    assert set(conftest.TIER_LINES) == set(Tier)
    assert "--full" in conftest.TIER_LINES[Tier.QUICK]
