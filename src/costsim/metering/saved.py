"""A calibration of the token estimator saved to a file, and read back.

Every command meters changed and unrecorded calls with one estimator: the coefficients
shipped with costsim, or those ``costsim calibrate PATHS --save FILE`` fitted on the user's own
recordings and ``[tool.costsim] calibration`` (or ``--calibration FILE``) points at. So a
cassette's result never depends on which other cassettes a run reads, and the CLI and the
pytest plugin estimate alike.

The file is JSON with a format version and a kind, written atomically; a file that is not
one (another kind, another version, broken JSON, a ``--shipped`` evaluation) is refused in
one sentence naming it. So is one whose figures no fit makes (a hand-edited or damaged file):
coefficients that are not finite, not one per feature, or out of the range their feature
allows (:func:`~costsim.metering.calibration.coefficient_problem`), for every family the
estimator uses (those with :data:`~costsim.metering.evaluate.MIN_CALLS` calls in
:data:`~costsim.metering.evaluate.MIN_CASSETTES` cassettes; every other family keeps the
shipped coefficients, so only its shape is checked); and error figures that are not finite
percentages of 0 or more. An estimate never rests on them: they would give a call no tokens,
or crash, while the output still claimed the calibration's error band.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from costsim.errors import ConfigError
from costsim.io.encoding import TextEncodingError, decode_text
from costsim.io.files import write_atomic
from costsim.io.limits import MAX_TOKENS
from costsim.metering.calibration import coefficient_problem
from costsim.metering.evaluate import MIN_CALLS, MIN_CASSETTES
from costsim.metering.validation import CalibrationReport, Cell, FamilyReport

__all__ = [
    "KIND",
    "MAX_ERROR_PCT",
    "SavedCalibration",
    "read_calibration",
    "read_calibration_keyed",
    "write_calibration",
]

KIND = "costsim.calibration-fit"


class SavedCalibration(BaseModel):
    """The fitted estimator as saved (``report``: what ``costsim calibrate`` measured)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format_version: Literal[1] = 1
    kind: Literal["costsim.calibration-fit"] = "costsim.calibration-fit"
    fitted_on: str
    """What the coefficients were fitted on, in words (calls, cassettes, sources)."""
    report: CalibrationReport


def write_calibration(path: Path, report: CalibrationReport, fitted_on: str) -> None:
    """Save ``report`` (a refit, not a ``--shipped`` evaluation) to ``path`` atomically."""
    if report.mode != "refit":
        raise ConfigError("only a fit can be saved (not an evaluation of the shipped coefficients)")
    saved = SavedCalibration(fitted_on=fitted_on, report=report)
    write_atomic(path, saved.model_dump_json(indent=2) + "\n")


def read_calibration(path: Path) -> CalibrationReport:
    """The estimator saved at ``path``; a :class:`ConfigError` naming the file otherwise."""
    return read_calibration_keyed(path)[0]


def read_calibration_keyed(path: Path) -> tuple[CalibrationReport, str]:
    """The estimator saved at ``path`` and the hash of the bytes it was read from (what a
    cache key names it by: one read, so the key and the estimator are of one version)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{path}: the calibration cannot be read ({exc.strerror or exc})"
        ) from None
    return _parse(str(path), data), hashlib.sha256(data).hexdigest()


def _problem(kind: str, where: str, error: Any) -> str:
    """What is wrong with a saved calibration, in costsim's words (not pydantic's)."""
    if kind == "json_invalid":
        return "not JSON"
    if kind == "missing":
        return f"it has no {where!r}"
    if kind == "model_type":
        return "not a JSON object"
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "another value")
        return f"its {where} is {str(error.get('input'))[:60]!r}, not {expected}"
    return f"{where}: {error['msg']}" if where else str(error["msg"])


@cache
def _parse(name: str, data: bytes) -> CalibrationReport:
    refused = f"{name}: not a calibration saved by 'costsim calibrate --save'"
    try:
        saved = SavedCalibration.model_validate_json(decode_text(data))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        problem = _problem(error["type"], where, error)
        raise ConfigError(f"{refused} ({problem})") from None
    except TextEncodingError as exc:
        raise ConfigError(f"{refused} (it {exc})") from None
    except (ValueError, RecursionError):
        raise ConfigError(f"{refused} (not JSON)") from None
    if saved.report.mode != "refit":
        raise ConfigError(f"{name}: holds an evaluation of the shipped coefficients, not a fit")
    wrong = _figures_problem(saved.report)
    if wrong is not None:
        raise ConfigError(f"{name}: not a calibration a fit makes ({wrong}); fit it again")
    return saved.report


def _figures_problem(report: CalibrationReport) -> str | None:
    """What no fit writes in ``report``, in words naming the family or cell; None if nothing."""
    for family in report.families:
        used = family.calls >= MIN_CALLS and family.cassettes >= MIN_CASSETTES
        problem = coefficient_problem(family.coefficients.values, ranged=used) or (
            _errors_problem(family)
        )
        if problem is not None:
            return f"family {family.family!r}: {problem}"
    for cell in report.cells:
        problem = _errors_problem(cell)
        if problem is not None:
            return f"{cell.flavour} {cell.klass}: {problem}"
    return None


MAX_ERROR_PCT = 100.0 * MAX_TOKENS
"""The largest error a held-out figure can be, in percent: an estimate of at most
:data:`~costsim.io.limits.MAX_TOKENS` tokens (above any context window) of a prompt, or a
change, of at least one token."""


def _errors_problem(figures: FamilyReport | Cell) -> str | None:
    """A count or measured error (a percentage) that is not finite, below 0, or (an error)
    beyond :data:`MAX_ERROR_PCT`."""
    for field in dataclasses.fields(figures):
        value = getattr(figures, field.name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value) or value < 0:
            return f"its {field.name} is {value}, not a figure of 0 or more"
        if isinstance(value, float) and value > MAX_ERROR_PCT:
            limit = f"{MAX_ERROR_PCT:g}%"
            return f"its {field.name} is {value:.6g}, more than any estimate's error ({limit})"
    return None
