"""The runtime estimator: calibrated prompt estimates, each with its expected error.

Calibration is fitted on the traces being analysed; a family with too few calls there falls
back to the defaults shipped with costsim (fitted on the real-cassette corpus). Estimates are
anchored on what was billed: a transformed request's prompt is its recorded total plus the
calibrated difference between the new and the original request.

Every estimate carries the error the validation measured for its kind of request (API flavour
x content class, leave-one-source-out): see :meth:`Meter.expected_error` and
:meth:`Meter.delta_band`. They are wide where the estimator is weak (images, documents,
Responses with reasoning items) and zero where it is exact (OpenAI text).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from costsim.metering.calibration import Coefficients, default_coefficients, default_errors
from costsim.metering.classes import content_class, delta_class, is_recipe
from costsim.metering.error_table import (
    OUTPUT_ERRORS,
    ErrorTable,
    RelativeError,
    TokenBand,
    output_error,
)
from costsim.metering.evaluate import (
    MIN_CALLS,
    MIN_CASSETTES,
    CalibrationReport,
    FamilyReport,
    calibrate,
)
from costsim.metering.models import encoding_for, family
from costsim.metering.serialise import Features, Serialiser, block_tokens
from costsim.metering.tokenizers import counter
from costsim.model import (
    Call,
    CassetteTrace,
    ReasoningBlock,
    RedactedThinkingBlock,
    ThinkingBlock,
    Usage,
    UsageSource,
)

__all__ = ["ErrorBand", "Meter", "RelativeError", "TokenBand"]


@dataclass(frozen=True, slots=True)
class ErrorBand:
    """How far off the estimator was on recorded calls of a family (percent, held out)."""

    family: str
    calls: int
    median_ape: float | None
    p90_ape: float | None
    increment_median_error_pct: float | None
    source: str


def _only_removes(old: Features, new: Features) -> bool:
    """Whether ``new`` has no more of anything the calibration counts than ``old``."""
    return (
        new.raw <= old.raw
        and new.fixed <= old.fixed
        and new.messages <= old.messages
        and new.tool_round_trips <= old.tool_round_trips
        and new.tools <= old.tools
        and new.thinking <= old.thinking
        and new.output_schema <= old.output_schema
        and new.forced_tool <= old.forced_tool
    )


class Meter:
    """Calibrated token estimates, memoised per message; one per run.

    ``reports`` is what :func:`costsim.metering.evaluate.calibrate` measured on the traces at
    hand (a :class:`CalibrationReport`, or its family reports); without it, the shipped
    coefficients and their shipped error table are used.
    """

    def __init__(self, reports: CalibrationReport | Iterable[FamilyReport] = ()) -> None:
        self._serialiser = Serialiser()
        families = reports.families if isinstance(reports, CalibrationReport) else reports
        self.reports = {report.family: report for report in families}
        self._coefficients: dict[str, Coefficients] = {}
        for name, report in self.reports.items():
            if report.calls >= MIN_CALLS and report.cassettes >= MIN_CASSETTES:
                self._coefficients[name] = report.coefficients
        self.errors = ErrorTable.shipped()
        self.output_errors = dict(OUTPUT_ERRORS)
        """Expected output-estimate errors by (flavour, thinks); replaceable (benchmarks)."""
        if isinstance(reports, CalibrationReport) and len(reports.sources) > 1:
            self.errors = self.errors.updated(reports.cells)

    @classmethod
    def for_traces(cls, traces: Iterable[CassetteTrace]) -> Meter:
        """Fit on ``traces`` (families with too few calls use shipped defaults)."""
        return cls(calibrate(traces))

    def fresh(self) -> Meter:
        """This meter with an empty memo: the same coefficients and error tables, for the next
        batch of traces (the memo holds the messages it counted)."""
        copy = object.__new__(Meter)
        copy.__dict__.update(self.__dict__)
        copy._serialiser = Serialiser()
        return copy

    @property
    def serialiser(self) -> Serialiser:
        """The memoising serialiser this meter counts with (shared with cache prefixes)."""
        return self._serialiser

    def coefficients(self, call: Call) -> Coefficients:
        return self._coefficients_for(family(call))

    def coefficients_source(self, name: str) -> str:
        """Where a family's coefficients come from: fitted here, shipped default, ..."""
        return self._coefficients_for(name).source

    def features(self, call: Call) -> Features:
        return self._serialiser.features(call)

    def estimate_prompt(self, call: Call) -> float:
        """Calibrated estimate of a request's prompt total."""
        features = self.features(call)
        if is_recipe(call):  # OpenAI's recipe and the media rules need no calibration
            return float(features.raw + features.fixed)
        return max(0.0, self.coefficients(call).predict(features))

    def transformed_prompt(self, original: Call, transformed: Call, recorded: int) -> int:
        """Prompt total of ``transformed``, anchored on ``original``'s recorded total."""
        if transformed is original:
            return recorded
        return max(0, round(recorded + self.delta(original, transformed)))

    def delta(self, original: Call, transformed: Call) -> float:
        """Calibrated prompt difference between two versions of a request.

        Both versions are measured with the original's family coefficients, so a change of
        content is not mistaken for a change of calibration; a different model generation
        (routing) is measured with its own coefficients, since its tokenizer may differ.
        Provider rules (the tool-use system prompt, images) change exactly as documented.
        """
        old_features, new_features = self.features(original), self.features(transformed)
        if family(original) != family(transformed):
            return self.estimate_prompt(transformed) - self.estimate_prompt(original)
        coefficients = self.coefficients(original)
        old = self._estimate(original, old_features, coefficients)
        new = self._estimate(transformed, new_features, coefficients)
        delta = new - old
        if _only_removes(old_features, new_features):
            delta = min(delta, 0.0)  # a fitted negative term must not make less content cost more
        return delta

    @staticmethod
    def _estimate(call: Call, features: Features, coefficients: Coefficients) -> float:
        if is_recipe(call):
            return float(features.raw + features.fixed)
        return coefficients.predict(features)

    def expected_error(self, call: Call) -> RelativeError:
        """Expected absolute error of :meth:`estimate_prompt` for ``call``, as a percentage of
        its prompt total: the held-out median and p90 measured for the call's API flavour and
        content class (see :class:`RelativeError`)."""
        return self.errors.total(call.flavour.value, content_class(call))

    def expected_output_error(self, call: Call) -> RelativeError:
        """Expected error of :meth:`estimate_output` for ``call`` (percent of the output)."""
        thinking = (ThinkingBlock, RedactedThinkingBlock, ReasoningBlock)
        thinks = any(isinstance(block, thinking) for block in call.response)
        return output_error(call.flavour.shape.value, thinks, self.output_errors)

    def delta_band(self, original: Call, transformed: Call) -> TokenBand:
        """The estimated prompt change from ``original`` to ``transformed`` and its expected
        error in tokens (median and p90), from the per-turn increment errors measured for the
        transformed request's flavour and the content class of what changed
        (:func:`~costsim.metering.classes.delta_class`). An identical request has a zero
        band; a change the provider rules count exactly (OpenAI text) has a zero band too."""
        if transformed is original:
            return TokenBand(0.0, 0.0, 0.0)
        delta = self.delta(original, transformed)
        changed = delta_class(original, transformed)
        error = self.errors.increment(transformed.flavour.value, changed)
        size = abs(delta)
        return TokenBand(delta, size * error.median / 100, size * error.p90 / 100, changed)

    def _coefficients_for(self, name: str) -> Coefficients:
        return self._coefficients.get(name) or default_coefficients(name)

    def estimate_output(self, call: Call) -> int:
        """Tokens of the recorded response blocks (used when no usage was recorded)."""
        count = counter(encoding_for(call))
        return sum(block_tokens(block, count).tokens for block in call.response)

    def estimated_usage(self, call: Call) -> Usage:
        """Usage for a call that recorded none, flagged as estimated.

        A stream cut before its final event recorded its input counts at the start
        (``usage_hint``): those are kept, and only the output is estimated from what arrived.
        """
        output = self.estimate_output(call)
        hint = call.usage_hint
        if hint is not None and hint.prompt_total:
            return dataclasses.replace(
                hint, output=max(output, hint.output), reasoning=None, source=UsageSource.ESTIMATED
            )
        return Usage(
            uncached_input=round(self.estimate_prompt(call)),
            output=output,
            source=UsageSource.ESTIMATED,
            tier=call.service_tier,
        )

    def error_band(self, call: Call) -> ErrorBand:
        return self.band(family(call))

    def band(self, name: str) -> ErrorBand:
        report = self.reports.get(name)
        coefficients = self._coefficients_for(name)
        if report is None or name not in self._coefficients:
            shipped = default_errors(name) if coefficients.source == "default" else None
            if shipped is None:
                return ErrorBand(name, 0, None, None, None, coefficients.source)
            return ErrorBand(name, *shipped, None, coefficients.source)
        return ErrorBand(
            name,
            report.calls,
            report.calibrated_median_ape,
            report.calibrated_p90_ape,
            report.increment_median_error_pct,
            coefficients.source,
        )
