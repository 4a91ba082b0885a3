"""The runtime estimator: calibrated prompt estimates for the traces at hand.

Calibration is fitted on the traces being analysed; a family with too few calls there falls
back to the defaults shipped with costsim (fitted on the real-cassette corpus). Estimates are
anchored on what was billed: a transformed request's prompt is its recorded total plus the
calibrated difference between the new and the original request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from costsim.metering.calibration import Coefficients, default_coefficients
from costsim.metering.evaluate import MIN_CALLS, MIN_CASSETTES, FamilyReport, calibrate
from costsim.metering.models import encoding_for, family
from costsim.metering.serialise import Features, Serialiser, block_tokens
from costsim.metering.tokenizers import counter
from costsim.model import Call, Usage, UsageSource
from costsim.normalise import CassetteTrace

__all__ = ["ErrorBand", "Meter"]


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
        and new.messages <= old.messages
        and new.tool_round_trips <= old.tool_round_trips
        and new.tools <= old.tools
        and new.thinking <= old.thinking
        and new.output_schema <= old.output_schema
        and new.forced_tool <= old.forced_tool
    )


class Meter:
    """Calibrated token estimates, memoised per message; one per run."""

    def __init__(self, reports: Iterable[FamilyReport] = ()) -> None:
        self._serialiser = Serialiser()
        self.reports = {report.family: report for report in reports}
        self._coefficients: dict[str, Coefficients] = {}
        for name, report in self.reports.items():
            if report.calls >= MIN_CALLS and report.cassettes >= MIN_CASSETTES:
                self._coefficients[name] = report.coefficients

    @classmethod
    def for_traces(cls, traces: Iterable[CassetteTrace]) -> Meter:
        """Fit on ``traces`` (families with too few calls use shipped defaults)."""
        return cls(calibrate(traces))

    @property
    def serialiser(self) -> Serialiser:
        """The memoising serialiser this meter counts with (shared with cache prefixes)."""
        return self._serialiser

    def coefficients(self, call: Call) -> Coefficients:
        name = family(call)
        return self._coefficients.get(name) or default_coefficients(name)

    def coefficients_source(self, name: str) -> str:
        """Where a family's coefficients come from: fitted here, shipped default, ..."""
        return (self._coefficients.get(name) or default_coefficients(name)).source

    def features(self, call: Call) -> Features:
        return self._serialiser.features(call)

    def estimate_prompt(self, call: Call) -> float:
        """Calibrated estimate of a request's prompt total."""
        return max(0.0, self.coefficients(call).predict(self.features(call)))

    def transformed_prompt(self, original: Call, transformed: Call, recorded: int) -> int:
        """Prompt total of ``transformed``, anchored on ``original``'s recorded total."""
        if transformed is original:
            return recorded
        return max(0, round(recorded + self.delta(original, transformed)))

    def delta(self, original: Call, transformed: Call) -> float:
        """Calibrated prompt difference between two versions of a request.

        Both versions are measured with the original's family coefficients, so a change of
        content is not mistaken for a change of calibration. Two exceptions: a different model
        generation (routing) is measured with its own coefficients, since its tokenizer may
        differ; and dropping every tool also drops the tool-use system prompt, the difference
        between the family's with- and without-tools intercepts.
        """
        old_family, new_family = family(original), family(transformed)
        base_old, base_new = old_family.removesuffix("+tools"), new_family.removesuffix("+tools")
        old_features, new_features = self.features(original), self.features(transformed)
        if base_old != base_new:
            return self.coefficients(transformed).predict(new_features) - self.coefficients(
                original
            ).predict(old_features)
        coefficients = self.coefficients(original)
        delta = coefficients.predict(new_features) - coefficients.predict(old_features)
        if original.tools and not transformed.tools:
            overhead = coefficients.intercept - self._coefficients_for(base_old).intercept
            delta -= max(0.0, overhead)
        if _only_removes(old_features, new_features):
            delta = min(delta, 0.0)  # a fitted negative term must not make less content cost more
        return delta

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
        )

    def error_band(self, call: Call) -> ErrorBand:
        return self.band(family(call))

    def band(self, name: str) -> ErrorBand:
        report = self.reports.get(name)
        coefficients = self._coefficients.get(name) or default_coefficients(name)
        if report is None or name not in self._coefficients:
            return ErrorBand(name, 0, None, None, None, coefficients.source)
        return ErrorBand(
            name,
            report.calls,
            report.calibrated_median_ape,
            report.calibrated_p90_ape,
            report.increment_median_error_pct,
            coefficients.source,
        )
