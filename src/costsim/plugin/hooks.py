"""``pytest --costsim``: meter the LLM calls a test suite replays from cassettes, and gate them.

Hooks and options only; the state lives in :class:`costsim.plugin.session.CostsimSession`.
Installing costsim registers this plugin in every pytest run of the environment, so it must
never break one: without ``--costsim`` (or ``costsim = true`` in the pytest ini settings) it
registers its options and markers and does nothing else (no file read, nothing heavy
imported); hooks of optional plugins (pytest-xdist) are optional. An error inside costsim
fails the costsim section, never the run with an INTERNALERROR that loses the test results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import pytest

from costsim.errors import CostsimError  # a small module of exception classes: cheap

if TYPE_CHECKING:
    from costsim.plugin.run import SummaryOptions
    from costsim.plugin.settings import PluginSettings
    from costsim.plugin.start import State

SESSION: pytest.StashKey[State] = pytest.StashKey()
SETTINGS: pytest.StashKey[PluginSettings | None] = pytest.StashKey()
FAILURES: pytest.StashKey[list[str]] = pytest.StashKey()
DRIFT_MODES = ("warn", "fail", "ignore")

P = ParamSpec("P")
R = TypeVar("R")


def _usage_text(config: pytest.Config, exc: Exception) -> str:
    from costsim.plugin.run import usage_text

    return usage_text(config, str(exc))  # wrapped to the terminal, as every costsim line


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("costsim", "LLM cost metering (costsim)")
    group.addoption(
        "--costsim", action="store_true", help="Meter the LLM calls replayed from cassettes."
    )
    group.addoption(
        "--costsim-top",
        type=int,
        default=None,
        metavar="N",
        help="List the N costliest tests, the others summed in one row (default: 20 of a run of "
        "more than 25; -v: every test).",
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
        "--costsim-report",
        metavar="PATH",
        action="append",
        help="Write the figures to PATH: .json, .md or .html (by the extension; repeatable).",
    )
    group.addoption(
        "--costsim-strategies",
        metavar="NAME,...",
        help="Add what-if columns: each test's cost with the strategy, its recorded cost "
        "plus what the strategy changes (options as name:key=value; a&b stacks two).",
    )
    group.addoption(
        "--costsim-drift",
        choices=DRIFT_MODES,
        default=None,
        help="A replayed call whose request the code now sends differently: warn (default: meter "
        "it as sent and list it), fail (that, and fail the run) or ignore (meter the recording).",
    )
    group.addoption(
        "--costsim-warm",
        choices=("steady", "first"),
        help="A cache a cassette found warm, for requests the code or a what-if changed: steady "
        "(default: each run once the change ships) or first (the first run after it ships).",
    )
    group.addoption(
        "--costsim-lenient",
        action="store_true",
        help="Warn about LLM calls costsim cannot meter instead of failing the run.",
    )
    parser.addini("costsim", type="bool", default=False, help="Turn on costsim (as --costsim).")


def _enabled(config: pytest.Config) -> bool:
    if config.getoption("costsim", False):
        return True
    try:
        return bool(config.getini("costsim"))
    except (ValueError, pytest.UsageError) as exc:
        raise pytest.UsageError(f"costsim: ini option costsim: {exc}") from None


def _guarded(hook: Callable[P, R]) -> Callable[P, R | None]:
    """Run a hook of an active session; costsim's own failure becomes an internal error."""

    @functools.wraps(hook)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return hook(*args, **kwargs)
        except pytest.UsageError:
            raise
        except Exception as exc:
            config = _config_of(args, kwargs)
            state = config.stash.get(SESSION, None) if config is not None else None
            if state is None:
                raise
            state.internal_errors.append(
                f"{hook.__name__}: {type(exc).__name__}: {exc} (a costsim bug; please report it)"
            )
            return None

    return wrapper


def _config_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> pytest.Config | None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, pytest.Config):
            return value
        config = getattr(value, "config", None)
        if isinstance(config, pytest.Config):
            return config
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "costsim_budget(prompt_tokens=None, output_tokens=None, cost_usd=None, "
        "cache_hit_rate_min=None, calls=None): fail the costsim run when this test's LLM calls "
        "exceed it",
    )
    config.addinivalue_line(
        "markers",
        "costsim_tolerance(**metric_pct): per-test regression tolerances, e.g. cost='20%'",
    )
    if not _enabled(config):
        return
    try:
        from costsim.plugin.start import configure

        state = configure(config, SETTINGS)
    except CostsimError as exc:
        raise pytest.UsageError(_usage_text(config, exc)) from None
    except Exception as exc:  # costsim's own bug: the tests run, the costsim part fails
        config.stash[FAILURES] = [
            f"costsim internal error: setting up: {type(exc).__name__}: {exc} "
            "(a costsim bug; please report it)"
        ]
        return
    config.stash[SESSION] = state


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(SESSION, None)
    if state is not None:
        state.uninstall()
        state.close()


def pytest_itemcollected(item: pytest.Item) -> None:
    """Note every item as collected, before any plugin keeps or drops some (``collected``)."""
    if item.config.stash.get(SESSION, None) is not None:
        from costsim.plugin.collected import COLLECTED

        item.config.stash.setdefault(COLLECTED, []).append(item.nodeid)


@_guarded
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Read every test's budget and tolerance markers before any test runs."""
    state = config.stash.get(SESSION, None)
    if state is None:
        return
    try:
        for item in items:
            _collect_marks(state, item)
    except CostsimError as exc:
        if hasattr(config, "workerinput"):  # an xdist worker: the controller fails the run
            state.usage_errors.append(str(exc))
            return
        raise pytest.UsageError(_usage_text(config, exc)) from None


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


def _collect_marks(state: State, item: pytest.Item) -> None:
    budget = _marker_values(item, "costsim_budget")
    if budget is not None:
        from costsim.api.gates import Budget  # pydantic: imported only when a test has one

        state.budgets[item.nodeid] = Budget.parse(budget, f"{item.nodeid}: costsim_budget")
    tolerance = _marker_values(item, "costsim_tolerance")
    if tolerance is not None:
        from costsim.api.gates import parse_tolerances

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
    from costsim.plugin.session import TestLedger

    return TestLedger(session, request.node.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(SESSION, None)
    if state is None:
        if config.stash.get(FAILURES, None) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # costsim failed to set up
        return
    failures = _finish(session, state) or []
    failures += [f"costsim internal error: {error}" for error in state.internal_errors]
    config.stash[FAILURES] = failures
    if failures and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Tests -k, -m or --deselect left out: their files were still collected whole."""
    if items and items[0].config.stash.get(SESSION, None) is not None:
        from costsim.plugin.collected import DESELECTED

        deselected = items[0].config.stash.setdefault(DESELECTED, set())
        deselected.update(item.nodeid for item in items)


@_guarded
def _finish(session: pytest.Session, state: State) -> list[str]:
    """Simulate, compare and write what was asked; the failures of the costsim part."""
    from costsim.plugin.collected import collection_order, deselected, whole_files
    from costsim.plugin.run import OPTIONS, Run
    from costsim.plugin.unserved import failed_in, unserved_in

    config = session.config
    # pytest 7 sets ``items`` only where it collects (not on an xdist controller)
    state.selected.update(item.nodeid for item in getattr(session, "items", ()))
    workeroutput = getattr(config, "workeroutput", None)
    run = Run(
        Path(str(config.rootpath)),
        config.stash.get(SETTINGS, None),
        session.exitstatus,
        collect_only=bool(config.getoption("collectonly", False)),
        stopped=bool(session.shouldstop or session.shouldfail),
        options={name: config.getoption(f"costsim_{name}") for name in OPTIONS},
        selected=frozenset(state.selected),
        deselected=deselected(config),
        order=collection_order(config),
        whole_files=frozenset(whole_files(config, state.selected)),
        budgets=dict(state.budgets),
        tolerances=dict(state.tolerances),
        usage_errors=tuple(state.usage_errors),
        unserved=unserved_in(config),
        failed=failed_in(config),
    )
    if workeroutput is not None:  # an xdist worker: hand the figures to the controller
        workeroutput["costsim"] = state.worker_output(run)
        state.internal_errors.clear()  # the controller reports them
        return []
    return state.finish(run, _options(config))


@pytest.hookimpl(optionalhook=True)
@_guarded
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: merge a worker's figures on the controller."""
    state = node.config.stash.get(SESSION, None)
    if state is None:
        return
    output = getattr(node, "workeroutput", {}).get("costsim")
    if output is None:
        worker = getattr(node, "gateway", None)
        name = getattr(worker, "id", "a worker")
        why = f" ({error})" if error else ""
        state.internal_errors.append(
            f"{name} sent no costsim figures{why}: its tests' LLM calls are not counted"
        )
        return
    state.merge_worker(output)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(SESSION, None)
    failures = config.stash.get(FAILURES, [])
    if getattr(config, "workeroutput", None) is not None or (state is None and not failures):
        return
    if exitstatus == pytest.ExitCode.USAGE_ERROR:
        return  # no test ran: the usage error says why, "no LLM calls" would mislead
    try:
        if state is not None:
            _summary(terminalreporter, config, state)
    except Exception as exc:  # costsim's own bug: say so, keep pytest's own summary
        from costsim.plugin.run import MeteringError

        why = (
            str(exc) if isinstance(exc, MeteringError) else f"summary: {type(exc).__name__}: {exc}"
        )
        failures = [
            *failures,
            f"costsim internal error: {why} (a costsim bug; please report it)",
        ]
    if failures:
        from costsim.plugin.finish import failure_report
        from costsim.plugin.run import failure_lines, verbosity

        width = config.get_terminal_writer().fullwidth
        terminalreporter.write_sep("=", "costsim: the run fails", red=True)
        for line in failure_lines(failures, width, every=verbosity(config) > 0):
            terminalreporter.write_line(line, red=True)
        # the last line of the run ("34 passed, 1 costsim failure in 2.1s") says so too
        noun = "costsim failure" if len(failures) == 1 else "costsim failures"
        terminalreporter.stats.setdefault(noun, []).extend(
            failure_report(line) for line in failures
        )


def _options(config: pytest.Config) -> SummaryOptions:
    from costsim.plugin.run import SummaryOptions, verbosity

    return SummaryOptions(
        top=config.getoption("costsim_top"),
        strategies=config.getoption("costsim_strategies"),
        width=config.get_terminal_writer().fullwidth,
        verbose=max(0, verbosity(config)),  # -q: as by default, not "every row"
    )


def _summary(terminalreporter: Any, config: pytest.Config, state: State) -> None:
    from costsim.plugin.unserved import unserved_lines

    terminalreporter.write_sep("=", "costsim: LLM calls replayed")
    options = _options(config)
    for line in [*state.summary(options), *unserved_lines(terminalreporter.stats, options)]:
        terminalreporter.write_line(line)
