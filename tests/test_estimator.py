"""One token estimator for every command and every cassette of a run: the coefficients shipped
with costsim, or a calibration ``costsim calibrate --save`` fitted on the user's recordings.

So a cassette's result never depends on which other cassettes a run reads, a run where one
cassette changed computes only that one, and the CLI and the pytest plugin estimate alike."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.api import batches, work
from costsim.api.results import Calibration
from costsim.cli import cli
from costsim.metering.calibration import Coefficients
from costsim.metering.saved import read_calibration
from tests.conftest import said

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cassettes"
AGENT = ROOT / "scenarios" / "cassettes" / "orchestrator"
SCENARIO = """\
name: compact
cassettes: [{pattern}]
variants:
  compacted: [{{compaction: {{max_messages: 6}}}}]
  cached: [caching]
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(folder))
    return folder


def _project(tmp_path: Path, pattern: str = "cassettes/*.yaml") -> Path:
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLES, folder / "cassettes")
    shutil.copy(next(AGENT.glob("*.yaml")), folder / "cassettes")
    (folder / "s.yaml").write_text(SCENARIO.format(pattern=pattern))
    return folder


def _scaled(result: Calibration, scale: float) -> Calibration:
    """A fit on the examples made decisive (enough calls) with every coefficient scaled."""
    families = [
        dataclasses.replace(
            family,
            calls=max(family.calls, 50),
            cassettes=max(family.cassettes, 5),
            coefficients=Coefficients(
                family.family,
                tuple(value * scale for value in family.coefficients.values),
                "fitted",
                50,
            ),
        )
        for family in result.data.families
    ]
    return dataclasses.replace(result, data=dataclasses.replace(result.data, families=families))


def _compare(*args: str | Path) -> Any:
    result = CliRunner().invoke(cli, ["compare", *map(str, args)])
    assert result.exit_code in (0, 1), result.output
    return result


def _deltas(stdout: str) -> dict[str, str]:
    scenario = json.loads(stdout)["scenarios"][0]
    return {item["name"]: item["delta"]["cost_usd"] for item in scenario["variants"]}


def test_a_saved_calibration_is_used_by_every_door(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path)
    saved = _scaled(api.calibrate(folder / "cassettes"), 3.0).save(folder / "fit.json")
    assert read_calibration(saved).mode == "refit"
    scenario = folder / "s.yaml"
    shipped = _deltas(_compare(scenario, "--format", "json").stdout)
    fitted = _deltas(_compare(scenario, "--format", "json", "--calibration", saved).stdout)
    assert fitted["compacted"] != shipped["compacted"]  # the estimate of what it removed
    # [tool.costsim] calibration, relative to the pyproject.toml, is the same
    (folder / "pyproject.toml").write_text('[tool.costsim]\ncalibration = "fit.json"\n')
    monkeypatch.chdir(folder)
    assert _deltas(_compare(scenario, "--format", "json").stdout) == fitted
    with api.configured(calibration=saved):
        assert api.estimator().coefficients_source("claude") == "fitted"
    assert api.estimator().coefficients_source("claude") == "fitted"  # from the pyproject


def test_calibrate_save_writes_a_versioned_fit(tmp_path: Path) -> None:
    target = tmp_path / "fit.json"
    result = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES), "--save", str(target)])
    assert result.exit_code == 0, result.output
    document = json.loads(target.read_text())
    assert (document["format_version"], document["kind"]) == (1, "costsim.calibration-fit")
    assert "--calibration" in result.stderr
    refused = CliRunner().invoke(
        cli, ["calibrate", str(EXAMPLES), "--shipped", "--save", str(target)]
    )
    assert refused.exit_code == 2 and "--shipped" in refused.stderr


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot be read"),
        ("{not json", "not a calibration saved by"),
        ('{"format_version": 2, "kind": "costsim.calibration-fit"}', "its format_version is '2'"),
        (
            '{"format_version": 1, "kind": "costsim.baseline"}',
            "its kind is 'costsim.baseline', not 'costsim.calibration-fit'",
        ),
        ('{"format_version": 1, "kind": "costsim.calibration-fit"}', "it has no 'fitted_on'"),
    ],
)
def test_a_bad_calibration_file_is_one_sentence(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "fit.json"
    if content is not None:
        path.write_text(content)
    result = CliRunner().invoke(cli, ["report", str(EXAMPLES), "--calibration", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and problem in lines[0]


def test_a_cassette_costs_the_same_whatever_else_the_run_reads(
    tmp_path: Path, cache_dir: Path
) -> None:
    folder = _project(tmp_path)
    one = sorted((folder / "cassettes").glob("*.yaml"))[0]
    alone = folder / "alone.yaml"
    alone.write_text(SCENARIO.format(pattern=f"cassettes/{one.name}"))
    args = ("--format", "json", "--by", "cassette", "--no-cache")

    def rows(scenario: Path) -> dict[str, Any]:
        found = json.loads(_compare(scenario, *args).stdout)["scenarios"][0]
        return {
            variant["name"]: [c for c in variant["cassettes"] if c["path"].endswith(one.name)]
            for variant in found["variants"]
        }

    assert rows(alone) == rows(folder / "s.yaml")


def test_a_run_where_one_cassette_changed_computes_only_that_one(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path)
    computed: list[Path] = []
    real = work.outcome

    def counted(engine: Any, *args: Any, **kwargs: Any) -> Any:
        computed.extend(trace.path for trace in engine.traces)
        return real(engine, *args, **kwargs)

    monkeypatch.setattr(work, "outcome", counted)
    monkeypatch.setattr(batches, "SPREAD", 1)  # every cassette a batch of its own
    first = api.compare(folder / "s.yaml", jobs=1)
    assert len(computed) == 4
    changed = sorted((folder / "cassettes").glob("*.yaml"))[1]
    changed.write_bytes(changed.read_bytes() + b"\n# re-recorded\n")
    computed.clear()
    second = api.compare(folder / "s.yaml", jobs=1)
    assert computed == [changed]
    assert second.to_json() == first.to_json()  # a comment changes no number
    computed.clear()
    fresh = api.compare(folder / "s.yaml", jobs=1, cache=False)
    assert len(computed) == 4 and fresh.to_json() == second.to_json()


DRIFTED = """
import json

import pytest
import requests
import vcr
import yaml

with open("agent.yaml") as f:
    RECORDED = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]

@pytest.mark.parametrize("n", range(3))
def test_replay(n):
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in RECORDED:
            extra = {"type": "text", "text": "Always answer in English. " * 40}
            requests.post(
                "https://api.anthropic.com/v1/messages",
                json={**body, "system": body["system"] + [extra]},
            )
"""


def test_the_plugin_estimates_with_the_saved_calibration(pytester: pytest.Pytester) -> None:
    """A drifted call is metered as sent (recorded prompt plus the estimated difference): with
    the saved calibration in [tool.costsim], in the metering process as in the test process."""
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    pytester.makepyfile(test_drift=DRIFTED)

    def total(*env: str) -> str:
        with pytest.MonkeyPatch.context() as patch:
            for item in env:
                name, _, value = item.partition("=")
                patch.setenv(name, value)
            result = pytester.runpytest_subprocess("--costsim", "--costsim-report", "r.json")
        result.assert_outcomes(passed=3)
        document = json.loads((pytester.path / "r.json").read_text())
        return str(document["total"]["prompt_tokens"])

    shipped = total()
    saved = _scaled(api.calibrate(AGENT), 3.0).save(pytester.path / "fit.json")
    pytester.makepyprojecttoml('[tool.costsim]\ncalibration = "fit.json"\n')
    fitted = total("COSTSIM_METER_PROCESS=1")
    assert fitted != shipped
    assert total("COSTSIM_METER_PROCESS=0") == fitted
    saved.write_text("{broken")
    result = pytester.runpytest_subprocess("--costsim")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), "*fit.json*not a calibration saved by*")


def test_an_empty_calibration_setting_is_refused_by_both_doors(
    pytester: pytest.Pytester,
) -> None:
    """``calibration = ""`` is a mistake, not "the shipped one": the CLI and the plugin say so
    alike, naming the pyproject.toml."""
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    pytester.makepyfile(test_drift=DRIFTED)
    pytester.makepyprojecttoml('[tool.costsim]\ncalibration = ""\n')
    result = pytester.runpytest_subprocess("--costsim")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), "*pyproject.toml*calibration must be the path of a file*")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(pytester.path)
        cli_result = CliRunner().invoke(cli, ["report", "agent.yaml"])
    assert cli_result.exit_code == 2
    assert "calibration must be the path of a file" in cli_result.stderr
