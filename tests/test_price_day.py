"""A cache entry of a run's result names the day its prices and caching rules took effect,
not today's date (:mod:`costsim.api.price_day`): calls recorded without a date are priced and
cached as today, but those change only on known days, so a cache made yesterday still serves
today unless a price or a rule changed at midnight."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from genai_prices.data_snapshot import get_snapshot

from costsim.analysis.groups import AgentMatcher
from costsim.api import pipeline, price_day
from costsim.cache.rules import default_rules
from costsim.cli import cli
from costsim.io.store import CacheStore
from costsim.pricing.flat import _starts
from tests.test_recall import Runs

DAYS = price_day.change_days(None)


def _quiet_pair() -> tuple[date, date]:
    """Two days in a row, the second no change day."""
    day = date(2026, 11, 10)
    while day + timedelta(days=1) in DAYS:
        day += timedelta(days=1)
    return day, day + timedelta(days=1)


def _freeze(monkeypatch: pytest.MonkeyPatch, day: date) -> None:
    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)

    monkeypatch.setattr(price_day, "datetime", Frozen)


def test_change_days_are_every_dated_price_and_rule() -> None:
    assert date(2026, 6, 1) in DAYS  # OpenAI's 24h retention (a shipped caching rule)
    assert date(2026, 6, 9) in DAYS  # Opus 4.7's shorter minimum
    checked = 0
    for provider in get_snapshot().providers:
        for model in provider.models:
            if isinstance(model.prices, list):
                starts = _starts(model.id, provider.id) or ()
                assert {start.date() for start in starts} <= set(DAYS), model.id
                checked += len(starts)
            for variant in getattr(model, "price_variants", None) or ():  # a tier's, batch's
                for conditional in variant.prices if isinstance(variant.prices, list) else ():
                    start = getattr(conditional.constraint, "start_date", None)
                    assert start is None or start in DAYS, (model.id, start)
    assert checked > 50
    assert list(DAYS) == sorted(set(DAYS))


def test_a_share_is_reused_from_day_to_day_until_a_price_or_rule_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def key(day: date, as_of: datetime | None = None) -> str | None:
        _freeze(monkeypatch, day)
        return pipeline._fingerprint(
            [], default_rules(), {}, AgentMatcher(), as_of, "c", store=None
        )

    before, after = _quiet_pair()
    assert key(before) == key(after)
    change = DAYS[-1]  # prices or a rule change that day: yesterday's share is not today's
    assert key(change - timedelta(days=1)) != key(change)
    overridden = default_rules().with_overrides([("anthropic_minimum", "claude", 9, after)])
    _freeze(monkeypatch, before)
    first = pipeline._fingerprint([], overridden, {}, AgentMatcher(), None, "c", store=None)
    _freeze(monkeypatch, after)
    second = pipeline._fingerprint([], overridden, {}, AgentMatcher(), None, "c", store=None)
    assert first != second  # the scenario's own rule changed at midnight
    fixed = datetime(2026, 1, 1, tzinfo=UTC)
    assert key(before, fixed) == key(after, fixed)
    # a review: --as-of fixes the prices, but undated calls are still cached by today's
    # rules (a scenario's override from a day on): the rules' day is in the key all the same
    _freeze(monkeypatch, before)
    first = pipeline._fingerprint([], overridden, {}, AgentMatcher(), fixed, "c", store=None)
    _freeze(monkeypatch, after)
    second = pipeline._fingerprint([], overridden, {}, AgentMatcher(), fixed, "c", store=None)
    assert first != second


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tests.conftest import EXAMPLES

    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "100")
    folder = tmp_path / "project"
    (folder / "cassettes").mkdir(parents=True)
    for cassette in sorted(EXAMPLES.glob("*.yaml"))[:3]:
        (folder / "cassettes" / cassette.name).write_bytes(cassette.read_bytes())
    scenario = folder / "scenario.yaml"
    text = "name: days\ncassettes: [cassettes/*.yaml]\nvariants:\n  cached: [caching]\n"
    scenario.write_text(text)
    return scenario


def test_a_recalled_output_serves_the_next_day(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = Runs(monkeypatch)
    before, after = _quiet_pair()

    def compare(day: date) -> str:
        _freeze(monkeypatch, day)
        result = CliRunner().invoke(cli, ["compare", str(project)])
        assert result.exit_code == 0, result.output
        return result.stdout

    first = compare(before)
    assert compare(after) == first and runs.count == 1  # recalled the next day
    compare(DAYS[-1] - timedelta(days=1))
    compare(DAYS[-1])
    assert runs.count == 3  # a change day runs it again


@pytest.mark.parametrize(
    ("since", "recalled"),
    [("1999-01-01", True), ("'{after}'", False), ("{after}", False), ("1700000000", False)],
)
def test_a_scenario_rule_starting_at_midnight_runs_it_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, since: str, recalled: bool
) -> None:
    """A scenario's own caching rule starting on a day: the output of the day before is not
    recalled on it; a start the key cannot read as a day (a number) keys by today's date."""
    runs = Runs(monkeypatch)
    before, after = _quiet_pair()
    since = since.format(after=after.isoformat())
    rule = "  - {rule: anthropic_minimum, model: claude, value: 2048, since: " + since + "}\n"
    project.write_text(project.read_text() + "model_rules:\n" + rule)
    for day in (before, after):
        _freeze(monkeypatch, day)
        from costsim.api import recall

        monkeypatch.setattr(recall, "datetime", price_day.datetime)
        result = CliRunner().invoke(cli, ["compare", str(project)])
        assert result.exit_code in (0, 2), result.output
    assert runs.count == (1 if recalled else 2)


def test_change_days_are_read_once_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CacheStore(tmp_path / "cache")
    assert price_day.change_days(store) == DAYS

    def unread() -> tuple[date, ...]:
        raise AssertionError("read again")

    monkeypatch.setattr(price_day, "_read_change_days", unread)
    assert price_day.change_days(store) == DAYS  # kept
    store.put("change-days", CacheStore.key("change-days"), b"[not json")
    monkeypatch.undo()
    assert price_day.change_days(store) == DAYS  # a corrupt entry is read again, not an error


def test_a_custom_price_snapshot_is_read_not_the_kept_days(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """genai-prices' ``UpdatePrices`` / ``set_custom_snapshot`` price with other data: the
    days kept for the bundled list are not its days."""
    from genai_prices import data_snapshot

    store = CacheStore(tmp_path / "cache")
    assert price_day.change_days(store) == DAYS  # kept
    empty = data_snapshot.DataSnapshot(providers=[], from_auto_update=True)
    monkeypatch.setattr(data_snapshot, "_custom_snapshot", empty)
    own = price_day.change_days(store)
    assert own and set(own) < set(DAYS)  # the caching rules' days alone
    assert date(2026, 6, 1) in own
