"""State of a ``pytest --costsim`` run: which test made which LLM call, and what it cost.

vcrpy serves every replayed response through ``Cassette.play_response`` and records new ones
through ``Cassette.append``; both are wrapped for the run, so every call is seen whatever SDK
or HTTP client made it. Each call is normalised and metered by the library and attributed to
the test (or fixture scope) running at the time.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from costsim.baseline import TestCost
from costsim.bodies import decode_body
from costsim.cassette import Body, Headers, Interaction
from costsim.errors import ConfigError, CostsimError
from costsim.ledger import MeteredCall, Totals, meter
from costsim.metering.meter import Meter
from costsim.model import Call
from costsim.normalise import CassetteTrace, call_from_interaction

__all__ = ["Budget", "CostsimSession", "Observed", "TestLedger", "budget_failures"]


class Budget(BaseModel):
    """Limits on one test's LLM calls; any left unset is not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    prompt_tokens: NonNegativeInt | None = None
    output_tokens: NonNegativeInt | None = None
    cost_usd: Annotated[float, Field(ge=0)] | None = None
    cache_hit_rate_min: Annotated[float, Field(ge=0, le=1)] | None = None

    @classmethod
    def parse(cls, values: Mapping[str, Any], where: str) -> Budget:
        """Validate ``values`` (a marker's kwargs or a ``[tool.costsim]`` entry)."""
        try:
            return cls.model_validate({k: v for k, v in values.items() if k != "pattern"})
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(part) for part in error["loc"][:1]) or "budget"
            if error["type"] == "extra_forbidden":
                message = f"unknown budget key; valid: {', '.join(cls.model_fields)}"
            else:
                message = f"{error['msg']} (got {error.get('input')!r})"
            raise ConfigError(f"{where}: {key}: {message}") from None


@dataclass(frozen=True, slots=True)
class _Limit:
    """One budget key: the figure it limits and how an excess is worded."""

    key: str
    label: str
    actual: Callable[[TestCost], Decimal | int | float | None]
    shown: Callable[[Decimal | int | float], str]
    minimum: bool = False

    def fails(self, test: str, cost: TestCost, limit: float | None) -> str | None:
        if limit is None:
            return None
        actual = self.actual(cost)
        if actual is None:
            return f"{test}: {self.label} is unknown (unpriced calls), budget {self.shown(limit)}"
        bound = Decimal(str(limit)) if isinstance(actual, Decimal) else limit
        if (actual < bound) if self.minimum else (actual > bound):
            side = "under the minimum of" if self.minimum else "over the budget of"
            return f"{test}: {self.label} {self.shown(actual)} {side} {self.shown(bound)}"
        return None


_LIMITS = (
    _Limit("prompt_tokens", "prompt_tokens", lambda c: c.prompt_tokens, lambda v: f"{v:,}"),
    _Limit("output_tokens", "output_tokens", lambda c: c.output_tokens, lambda v: f"{v:,}"),
    _Limit("cost_usd", "cost_usd", lambda c: c.cost_usd, lambda v: f"${v}"),
    _Limit(
        "cache_hit_rate_min",
        "cache_hit_rate",
        lambda c: c.cache_hit_rate or 0.0,
        lambda v: f"{v:.1%}",
        minimum=True,
    ),
)


def budget_failures(test: str, cost: TestCost, budget: Budget) -> list[str]:
    """One sentence per limit the test went over: test, metric, limit, actual."""
    checked = (limit.fails(test, cost, getattr(budget, limit.key)) for limit in _LIMITS)
    return [failure for failure in checked if failure is not None]


def _interaction(
    cassette_path: str, index: int, request: Any, response: Mapping[str, Any]
) -> Interaction:
    request_headers = Headers(getattr(request, "headers", {}))
    response_headers = Headers(response.get("headers", {}))
    body = response.get("body")
    stored = body.get("string") if isinstance(body, Mapping) else body
    raw_request = request.body if isinstance(request.body, bytes | str) else None
    status = response.get("status")
    code = status.get("code") if isinstance(status, Mapping) else status
    return Interaction(
        path=Path(cassette_path),
        index=index,
        method=str(request.method).upper(),
        uri=str(request.uri),
        request_headers=request_headers,
        request_body=Body(raw=decode_body(raw_request, request_headers) if raw_request else None),
        status=int(code or 0),
        response_headers=response_headers,
        response_body=Body(raw=decode_body(stored, response_headers) if stored else None),
    )


@dataclass(frozen=True, slots=True)
class Observed:
    """One replayed or recorded LLM call: as the cassette holds it, and as the code sent it.

    ``sent`` is None when the request the code sent now equals the recorded one (or is not
    an LLM request costsim can read); otherwise the call is metered for what was sent.
    """

    recorded: Call
    sent: Call | None = None


@dataclass(slots=True)
class CostsimSession:
    """Everything a costsim-enabled pytest run collects."""

    as_recorded: bool = False
    """Meter replayed calls as recorded, ignoring how the sent requests differ."""
    current: str = "<outside tests>"
    observed: dict[str, list[Observed]] = field(default_factory=dict)
    merged: dict[str, TestCost] = field(default_factory=dict)
    """Figures from xdist workers, merged on the controller."""
    budgets: dict[str, Budget] = field(default_factory=dict)
    pattern_budgets: list[tuple[str, Budget]] = field(default_factory=list)
    tolerances: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    what_if: dict[str, dict[str, str | None]] = field(default_factory=dict)
    """Per test, each --costsim-strategies variant's simulated cost (merged from workers)."""
    _meter: Meter | None = None
    _metered: dict[str, tuple[int, list[MeteredCall]]] = field(default_factory=dict)
    _loading: threading.local = field(default_factory=threading.local)
    _unpatch: list[Any] = field(default_factory=list)

    # --- observing vcrpy -------------------------------------------------------------------

    def observe(
        self,
        cassette_path: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        *,
        recorded_request: Any = None,
    ) -> None:
        """Note one replayed or recorded interaction for the test running now.

        ``recorded_request`` is the cassette's stored request on a replay (None when
        recording); ``request`` is then what the code sent, through the record filters. A call
        that cannot be read is noted, never raised: the user's test must not fail because of
        costsim. The run fails on it afterwards unless lenient.
        """
        try:
            stored = recorded_request if recorded_request is not None else request
            recorded = call_from_interaction(_interaction(cassette_path, index, stored, response))
            if recorded is None:
                return
            sent = None
            if (
                recorded_request is not None
                and not self.as_recorded
                and _body(request) != _body(recorded_request)
            ):
                sent = _sent_call(cassette_path, index, request, response, recorded)
        except CostsimError as exc:
            self.errors.append(f"{self.current}: {exc}")
            return
        except Exception as exc:  # a costsim bug must not fail the user's test
            self.errors.append(
                f"{self.current}: {cassette_path} interaction {index}: costsim could not meter "
                f"it ({type(exc).__name__}: {exc}); please report it"
            )
            return
        self.observed.setdefault(self.current, []).append(Observed(recorded, sent))

    def install(self) -> None:
        """Wrap vcrpy's replay and record points for the run."""
        from vcr.cassette import Cassette

        session = self
        play, append, load = Cassette.play_response, Cassette.append, Cassette._load

        def play_response(cassette: Any, request: Any) -> Any:
            before = dict(cassette.play_counts)
            response = play(cassette, request)
            played = [i for i, n in cassette.play_counts.items() if before.get(i) != n]
            index = played[0] if played else -1
            stored = cassette.data[index][0] if 0 <= index < len(cassette.data) else request
            sent = _as_recorded(cassette, request)
            sent = stored if sent is None else sent
            session.observe(cassette._path, index, sent, response, recorded_request=stored)
            return response

        def record(cassette: Any, request: Any, response: Any) -> None:
            if getattr(session._loading, "active", False):
                append(cassette, request, response)
                return
            index = len(cassette.data)
            append(cassette, request, response)
            session.observe(cassette._path, index, request, response)

        def loading(cassette: Any) -> None:
            session._loading.active = True
            try:
                load(cassette)
            finally:
                session._loading.active = False

        Cassette.play_response = play_response
        Cassette.append = record
        Cassette._load = loading
        self._unpatch = [
            (Cassette, "play_response", play),
            (Cassette, "append", append),
            (Cassette, "_load", load),
        ]

    def uninstall(self) -> None:
        for owner, name, original in self._unpatch:
            setattr(owner, name, original)
        self._unpatch = []

    @contextmanager
    def attributing(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        try:
            yield
        finally:
            self.current = previous

    # --- metering --------------------------------------------------------------------------

    @property
    def meter(self) -> Meter:
        """Shipped calibration, for calls without usage and for drifted requests."""
        if self._meter is None:
            self._meter = Meter()
        return self._meter

    def calls(self, test: str) -> list[MeteredCall]:
        """``test``'s calls, metered (memoised until the test makes another call)."""
        observed = self.observed.get(test, [])
        cached = self._metered.get(test)
        if cached is None or cached[0] != len(observed):
            cached = self._metered[test] = (len(observed), self._meter_calls(test, observed))
        return cached[1]

    def _meter_calls(self, test: str, observed: list[Observed]) -> list[MeteredCall]:
        if not any(item.sent is not None for item in observed):
            return [self._meter_recorded(item.recorded) for item in observed]
        from costsim.engine import Engine, Variant

        trace = self.trace(test)
        engine = Engine([trace], meter=self.meter)
        result = engine.run(Variant("as sent"), requests={trace.path: self.sent(test)})
        return result.metered()

    def _meter_recorded(self, call: Call) -> MeteredCall:
        if call.usage is None and not call.errored:
            return meter(call, usage=self.meter.estimated_usage(call))
        return meter(call)

    def trace(self, test: str) -> CassetteTrace:
        """``test``'s recorded calls as one trace, in the order it made them.

        The trace's path is the test's position in the run (test ids are not paths).
        """
        calls = tuple(item.recorded for item in self.observed.get(test, []))
        return CassetteTrace(Path(str(list(self.observed).index(test))), calls, 0, 0)

    def sent(self, test: str) -> list[Call]:
        """The requests ``test`` sent, one per recorded call."""
        return [item.sent or item.recorded for item in self.observed.get(test, [])]

    def drifted(self, test: str) -> int:
        return sum(item.sent is not None for item in self.observed.get(test, []))

    # --- results -------------------------------------------------------------------------

    def costs(self) -> dict[str, TestCost]:
        costs = {}
        for name in self.observed:
            costs[name] = TestCost.of(self.calls(name))
            costs[name].drifted_calls = self.drifted(name)
        for name, cost in self.merged.items():
            if name in costs:
                costs[name].merge(cost)
            else:
                costs[name] = cost
        return costs

    def merge_what_if(self, test: str, columns: Mapping[str, str | None]) -> None:
        """Add a worker's what-if costs for ``test`` (a fixture scope may run on several)."""
        mine = self.what_if.setdefault(test, {})
        for name, value in columns.items():
            if name not in mine:
                mine[name] = value
            else:
                old = mine[name]
                mine[name] = (
                    None if old is None or value is None else str(Decimal(old) + Decimal(value))
                )

    def budget_for(self, test: str) -> list[Budget]:
        found = [b for pattern, b in self.pattern_budgets if fnmatch.fnmatchcase(test, pattern)]
        if test in self.budgets:
            found.append(self.budgets[test])
        return found

    def failures(self) -> list[str]:
        failures = []
        for test, cost in sorted(self.costs().items()):
            for budget in self.budget_for(test):
                failures.extend(budget_failures(test, cost, budget))
        return failures


def _as_recorded(cassette: Any, request: Any) -> Any:
    """``request`` through the cassette's record filters (scrubbed secrets, ignored hosts), so
    it compares with the stored request like for like; None when a filter drops it."""
    try:
        return cassette._before_record_request(request)
    except Exception:  # a user's filter failing here must not fail the test
        return request


def _body(request: Any) -> bytes | str | None:
    body = getattr(request, "body", None)
    return body if isinstance(body, bytes | str) else None


def _sent_call(
    cassette_path: str, index: int, request: Any, response: Mapping[str, Any], recorded: Call
) -> Call | None:
    """The call as the code sent it now, when that differs from the recorded request."""
    try:
        sent = call_from_interaction(_interaction(cassette_path, index, request, response))
    except CostsimError:
        return None  # what was sent is not a readable LLM request: meter the recording
    if sent is None or replace(sent, host=recorded.host) == recorded:
        return None  # the same request (perhaps through another host or proxy)
    if sent.model != recorded.model:  # the code asks another model now: price that one
        sent = replace(sent, response_model=None)
    return sent


@dataclass(frozen=True, slots=True)
class TestLedger:
    """What the ``costsim`` fixture gives a test: its own calls so far, and their totals."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    session: CostsimSession
    test: str

    @property
    def calls(self) -> list[MeteredCall]:
        return list(self.session.calls(self.test))

    @property
    def totals(self) -> Totals:
        return Totals.of(self.calls)
