"""A calibration of the token estimator saved to a file, and read back.

Every command meters changed and unrecorded calls with one estimator: the coefficients
shipped with costsim, or those ``costsim calibrate PATHS --save FILE`` fitted on the user's own
recordings and ``[tool.costsim] calibration`` (or ``--calibration FILE``) points at. So a
cassette's result never depends on which other cassettes a run reads, and the CLI and the
pytest plugin estimate alike.

The file is JSON with a format version and a kind, written atomically; a file that is not
one (another kind, another version, broken JSON, a ``--shipped`` evaluation) is refused in
one sentence naming it.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from costsim.errors import ConfigError
from costsim.io.files import write_atomic
from costsim.metering.validation import CalibrationReport

__all__ = [
    "KIND",
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
    try:
        saved = SavedCalibration.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        problem = _problem(error["type"], where, error)
        raise ConfigError(
            f"{name}: not a calibration saved by 'costsim calibrate --save' ({problem})"
        ) from None
    except (ValueError, RecursionError):
        raise ConfigError(
            f"{name}: not a calibration saved by 'costsim calibrate --save' (not JSON)"
        ) from None
    if saved.report.mode != "refit":
        raise ConfigError(f"{name}: holds an evaluation of the shipped coefficients, not a fit")
    return saved.report
