"""A saved calibration whose figures no fit makes (hand-edited, damaged, hostile) is refused in
one sentence naming the file, exit 2: it crashed a command with a traceback and exit 1 (which
CI reads as a failed gate), or was taken silently and gave an estimated call no tokens while
the output still claimed the calibration's error band."""

from __future__ import annotations

import codecs
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.cli import cli
from costsim.metering.calibration import (
    BOUNDS,
    FEATURE_NAMES,
    coefficient_problem,
    default_coefficients,
    default_document,
)
from costsim.metering.saved import read_calibration
from tests.test_estimator import EXAMPLES, _scaled

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real fit on the examples, decisive (enough calls: the estimator uses every family)."""
    path = tmp_path_factory.mktemp("fit") / "fit.json"
    _scaled(api.calibrate(EXAMPLES), 1.0).save(path)
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def _with(document: dict[str, Any], values: Any, path: Path) -> Path:
    changed = json.loads(json.dumps(document))
    for family in changed["report"]["families"]:
        family["coefficients"]["values"] = values
    text = json.dumps(changed).replace('"NaN"', "NaN").replace('"Inf"', "Infinity")
    path.write_text(text)
    return path


BAD = {
    "1e308 each": ([1e308] * 11, "its raw coefficient 1e+308 is outside 0.25 to 4"),
    "one value": ([1.0], "1 coefficient, not one per feature (11: raw, messages"),
    "twelve values": ([1.0] * 12, "12 coefficients, not one per feature"),
    "NaN": (["NaN"] * 11, "its raw coefficient is nan, not a number"),
    "Infinity": (["Inf"] * 11, "its raw coefficient is inf, not a number"),
    "-1e6 each": ([-1e6] * 11, "its raw coefficient -1e+06 is outside 0.25 to 4"),
    "-1e6 per message": (
        [1.0, -1e6] + [0.0] * 9,
        "its messages coefficient -1e+06 is outside -804 to 804",
    ),
}


@pytest.mark.parametrize(("values", "problem"), BAD.values(), ids=BAD.keys())
def test_a_calibration_no_fit_makes_is_refused_in_one_sentence(
    saved: dict[str, Any], tmp_path: Path, values: Any, problem: str
) -> None:
    path = _with(saved, values, tmp_path / "fit.json")
    scenario = SCENARIOS / "orchestrator.yaml"
    for command in (["report", str(EXAMPLES)], ["compare", str(scenario), "--no-cache"]):
        result = CliRunner().invoke(cli, [*command, "--calibration", str(path)])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.output
        assert str(path) in lines[0] and "not a calibration a fit makes" in lines[0]
        assert problem in lines[0] and lines[0].endswith("; fit it again")


@pytest.mark.parametrize("value", [1e308, "NaN", -3.0])
def test_an_error_figure_no_fit_makes_is_refused(
    saved: dict[str, Any], tmp_path: Path, value: Any
) -> None:
    """A held-out error of 1e308% crashed the band's arithmetic (decimal.InvalidOperation)."""
    changed = json.loads(json.dumps(saved))
    changed["report"]["families"][0]["calibrated_p90_ape"] = value
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(changed).replace('"NaN"', "NaN"))
    result = CliRunner().invoke(cli, ["report", str(EXAMPLES), "--calibration", str(path)])
    assert result.exit_code == 2
    assert "its calibrated_p90_ape is" in result.stderr


def test_the_bounds_hold_every_fit_costsim_makes(saved: dict[str, Any], tmp_path: Path) -> None:
    """The shipped coefficients, and a fit on the examples, are within what their features
    allow, and a fit saved with a byte order mark (an editor's) still reads."""
    assert set(BOUNDS) == set(FEATURE_NAMES)
    for family in default_document()["families"]:
        assert coefficient_problem(default_coefficients(family).values) is None, family
        values = default_coefficients(family).values
        for name, value in zip(FEATURE_NAMES, values, strict=True):  # as the docstring says
            assert abs(value) < 150 or name in ("raw", "reasoning_chars"), (family, name)
    assert all(math.isfinite(bound) for pair in BOUNDS.values() for bound in pair)
    path = tmp_path / "fit.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(saved).encode())
    assert read_calibration(path).mode == "refit"


def test_a_family_the_estimator_does_not_use_is_only_checked_for_shape(
    saved: dict[str, Any], tmp_path: Path
) -> None:
    """A family with too few calls keeps the shipped coefficients, so a wild fit of its few
    calls (a tiny project's) does not stop the file being read; a malformed one does."""
    changed = json.loads(json.dumps(saved))
    family = changed["report"]["families"][0]
    family["calls"] = 2
    family["coefficients"]["values"] = [9.0] + [0.0] * 10
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(changed))
    assert read_calibration(path).families[0].calls == 2
    family["coefficients"]["values"] = [1.0] * 3
    path.write_text(json.dumps(changed))
    result = CliRunner().invoke(cli, ["report", str(EXAMPLES), "--calibration", str(path)])
    assert result.exit_code == 2 and "3 coefficients, not one per feature" in result.stderr
