"""``pytest --costsim``: meter the LLM calls a test suite replays from cassettes, and gate them.

Hooks and options only; the state lives in :class:`costsim.plugin_session.CostsimSession`.
Inert unless ``--costsim`` is given (or ``costsim = true`` under ``[tool.costsim]``): nothing is
printed and nothing heavy is imported.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from costsim.plugin_session import CostsimSession

SESSION = pytest.StashKey["CostsimSession"]()
FAILURES = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("costsim", "LLM cost metering (costsim)")
    group.addoption(
        "--costsim", action="store_true", help="Meter the LLM calls replayed from cassettes."
    )
    group.addoption(
        "--costsim-top", type=int, default=None, metavar="N", help="Show the N costliest tests."
    )
    group.addoption(
        "--costsim-save", metavar="NAME", help="Save per-test figures to .costsim/NAME.json."
    )
    group.addoption(
        "--costsim-compare", metavar="NAME", help="Compare with the baseline .costsim/NAME.json."
    )
    group.addoption(
        "--costsim-fail",
        metavar="METRIC:PCT,...",
        default="cost:5%",
        help="Regression tolerances for --costsim-compare "
        "(metrics: cost, prompt_tokens, output_tokens, calls).",
    )
    group.addoption(
        "--costsim-report", metavar="PATH", help="Write the figures to PATH (.json or .md)."
    )
    group.addoption(
        "--costsim-strategies",
        metavar="NAME,...",
        help="Add what-if columns: each strategy's cost per test, simulated by the engine "
        "(options as name:key=value; a&b stacks two in one column).",
    )
    group.addoption(
        "--costsim-as-recorded",
        action="store_true",
        help="Meter each replayed call as recorded, even when the code now sends a different "
        "request (by default the difference is metered).",
    )
    group.addoption(
        "--costsim-lenient",
        action="store_true",
        help="Warn about LLM calls costsim cannot meter instead of failing the run.",
    )


def _enabled(config: pytest.Config) -> bool:
    if config.getoption("costsim", False):
        return True
    value = _project_settings(config).get("costsim", False)
    if not isinstance(value, bool):
        raise pytest.UsageError(
            f"costsim: [tool.costsim] costsim must be true or false, not {value!r}"
        )
    return value


def _project_settings(config: pytest.Config) -> dict[str, Any]:
    import tomllib

    inifile = config.inipath
    path = (
        inifile
        if inifile is not None and inifile.name == "pyproject.toml"
        else Path(str(config.rootpath)) / "pyproject.toml"
    )
    if not path.is_file():
        return {}
    try:
        settings = (
            tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("costsim", {})
        )
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise pytest.UsageError(f"costsim: {path} cannot be read ({exc})") from None
    return settings if isinstance(settings, dict) else {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "costsim_budget(prompt_tokens=None, output_tokens=None, cost_usd=None, "
        "cache_hit_rate_min=None): fail the costsim run when this test's LLM calls exceed it",
    )
    config.addinivalue_line(
        "markers",
        "costsim_tolerance(**metric_pct): per-test regression tolerances, e.g. cost='20%'",
    )
    if not _enabled(config):
        return
    from costsim.errors import CostsimError
    from costsim.plugin_session import Budget, CostsimSession

    session = CostsimSession(as_recorded=config.getoption("costsim_as_recorded"))
    try:
        budgets = _project_settings(config).get("budgets", [])
        if not isinstance(budgets, list):
            raise CostsimError("[tool.costsim] budgets must be a list of tables")
        for index, entry in enumerate(budgets):
            if not isinstance(entry, dict):
                raise CostsimError(
                    f"[tool.costsim] budgets[{index}] must be a table such as "
                    '{pattern = "tests/agents/*", prompt_tokens = 50000}'
                )
            if not isinstance(entry.get("pattern"), str):
                raise CostsimError(
                    f"[tool.costsim] budgets[{index}] needs a 'pattern' string (a test id glob)"
                )
            session.pattern_budgets.append(
                (entry["pattern"], Budget.parse(entry, f"[tool.costsim] budgets[{index}]"))
            )
        if config.getoption("costsim_strategies"):
            from costsim.plugin_render import parse_strategies

            parse_strategies(config.getoption("costsim_strategies"))
        from costsim.baseline import load_baseline, parse_tolerances

        parse_tolerances(config.getoption("costsim_fail"))
        top = config.getoption("costsim_top")
        if top is not None and top < 0:
            raise CostsimError(f"--costsim-top must be 0 or more, not {top}")
        if config.getoption("costsim_compare"):
            load_baseline(_baseline_path(config, config.getoption("costsim_compare")))
    except CostsimError as exc:
        raise pytest.UsageError(f"costsim: {exc}") from None
    session.install()
    config.stash[SESSION] = session


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION, None)
    if session is not None:
        session.uninstall()


def _baseline_path(config: pytest.Config, name: str) -> Path:
    return Path(str(config.rootpath)) / ".costsim" / f"{name}.json"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Read every test's budget and tolerance markers before any test runs."""
    state = config.stash.get(SESSION, None)
    if state is None:
        return
    from costsim.errors import CostsimError

    try:
        for item in items:
            _collect_marks(state, item)
    except CostsimError as exc:
        raise pytest.UsageError(f"costsim: {exc}") from None


def _marker_values(item: pytest.Item, name: str) -> dict[str, Any] | None:
    """A marker's keyword values; a closer marker (test over class over module) wins per key."""
    marks = list(item.iter_markers(name))  # closest first
    if not marks:
        return None
    from costsim.errors import ConfigError

    values: dict[str, Any] = {}
    for mark in reversed(marks):
        if mark.args:
            raise ConfigError(f"{item.nodeid}: {name} takes keyword arguments only")
        values.update(mark.kwargs)
    return values


def _collect_marks(state: CostsimSession, item: pytest.Item) -> None:
    from costsim.baseline import parse_tolerances
    from costsim.plugin_session import Budget

    budget = _marker_values(item, "costsim_budget")
    if budget is not None:
        state.budgets[item.nodeid] = Budget.parse(budget, f"{item.nodeid}: costsim_budget")
    tolerance = _marker_values(item, "costsim_tolerance")
    if tolerance is not None:
        text = ",".join(f"{metric}:{value}" for metric, value in tolerance.items())
        state.tolerances[item.nodeid] = parse_tolerances(text)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, Any, Any]:
    state = item.config.stash.get(SESSION, None)
    if state is None:
        return (yield)
    with state.attributing(item.nodeid):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: Any, request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    session = request.config.stash.get(SESSION, None)
    if session is None or fixturedef.scope == "function":
        return (yield)
    scope = (
        "<session fixtures>"
        if fixturedef.scope == "session"
        else f"<{fixturedef.scope} fixtures: {request.node.nodeid}>"
    )
    with session.attributing(scope):
        return (yield)


@pytest.fixture
def costsim(request: pytest.FixtureRequest) -> Any:
    """The current test's metered LLM calls and totals (``calls``, ``totals``)."""
    session = request.config.stash.get(SESSION, None)
    if session is None:
        pytest.skip("the costsim fixture needs pytest --costsim")
    from costsim.plugin_session import TestLedger

    return TestLedger(session, request.node.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(SESSION, None)
    if state is None:
        return
    if config.getoption("costsim_strategies"):
        from costsim.plugin_render import what_if_costs

        state.what_if.update(what_if_costs(state, config.getoption("costsim_strategies")))
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the figures to the controller
        workeroutput["costsim"] = json.dumps(
            {
                "tests": {name: cost.to_json() for name, cost in state.costs().items()},
                "what_if": state.what_if,
                "errors": state.errors,
                "budgets": {
                    name: budget.model_dump(exclude_none=True)
                    for name, budget in state.budgets.items()
                },
                "tolerances": state.tolerances,
            }
        )
        return
    failures = [*state.failures(), *_baseline_failures(config, state)]
    if state.errors and not config.getoption("costsim_lenient"):
        failures.append(
            f"costsim: {len(state.errors)} LLM call(s) could not be metered (warnings above); "
            "fix the cassettes or pass --costsim-lenient"
        )
    from costsim.errors import CostsimError

    try:
        _write_outputs(config, state, failures)
    except CostsimError as exc:
        failures.append(f"costsim: {exc}")
    config.stash[FAILURES] = failures
    if failures and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_testnodedown(node: Any, error: Any) -> None:
    state = node.config.stash.get(SESSION, None)
    output = getattr(node, "workeroutput", {}).get("costsim")
    if state is None or output is None:
        return
    from costsim.baseline import TestCost
    from costsim.plugin_session import Budget

    figures = json.loads(output)
    for name, data in figures["tests"].items():
        cost = TestCost.from_json(data)
        if name in state.merged:
            state.merged[name].merge(cost)
        else:
            state.merged[name] = cost
    for name, columns in figures["what_if"].items():
        state.merge_what_if(name, columns)
    state.errors.extend(figures["errors"])
    for name, values in figures["budgets"].items():
        state.budgets[name] = Budget.parse(values, name)
    state.tolerances.update(figures["tolerances"])


def _baseline_failures(config: pytest.Config, state: CostsimSession) -> list[str]:
    name = config.getoption("costsim_compare")
    if not name:
        return []
    from costsim.baseline import compare_baselines, load_baseline, parse_tolerances

    result = compare_baselines(
        load_baseline(_baseline_path(config, name)),
        state.costs(),
        parse_tolerances(config.getoption("costsim_fail")),
        overrides=state.tolerances,
    )
    state.notes = [
        *(f"improved: {line}" for line in result.improvements),
        *(f"new test (not in baseline {name}): {test}" for test in result.new_tests),
    ]
    if result.missing_tests:
        state.notes.append(
            f"{len(result.missing_tests)} test(s) of baseline {name} made no LLM call this run "
            f"(e.g. {result.missing_tests[0]})"
        )
    return result.regressions


def _write_outputs(config: pytest.Config, state: CostsimSession, failures: list[str]) -> None:
    from costsim.baseline import save_baseline

    if config.getoption("costsim_save"):
        save_baseline(_baseline_path(config, config.getoption("costsim_save")), state.costs())
    report = config.getoption("costsim_report")
    if report:
        from costsim.plugin_render import write_report

        write_report(
            Path(report), state, failures, strategies=config.getoption("costsim_strategies")
        )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(SESSION, None)
    if state is None or getattr(config, "workeroutput", None) is not None:
        return
    from costsim.plugin_render import summary_lines

    strategies = config.getoption("costsim_strategies")
    lines = summary_lines(state, top=config.getoption("costsim_top"), strategies=strategies)
    terminalreporter.write_sep("=", "costsim: LLM calls replayed")
    for line in lines:
        terminalreporter.write_line(line)
    failures = config.stash.get(FAILURES, [])
    if failures:
        terminalreporter.write_sep("=", "costsim: the run fails", red=True)
        for line in failures:
            terminalreporter.write_line(f"FAILED {line}", red=True)
