"""Scenario files that explain themselves: every problem at once, each one sentence at its
file, line and column, in plain words, with the nearest key or strategy suggested; and the
JSON schema shipped for editors."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from costsim.cli import cli
from costsim.errors import ConfigError
from costsim.scenario import load_scenario
from costsim.scenario.files import scenario_files
from costsim.scenario.schema import scenario_schema
from tests.conftest import EXAMPLES, ROOT


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("EXAMPLES", str(EXAMPLES)))
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    return str(caught.value).splitlines()


def test_unknown_key_names_line_and_suggests(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: s\ncassetes: [EXAMPLES/*.yaml]\nvariants: {a: [caching]}\n")
    assert _problems(path) == [
        f"{path}:2:1: cassetes: unknown key 'cassetes'; did you mean 'cassettes' (required)?"
    ]


def test_parameters_that_are_not_a_mapping(tmp_path: Path) -> None:
    # was: "variants.cache.0.str: Input should be a valid string (got a mapping)"
    path = _write(
        tmp_path, "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants:\n  cache:\n    - caching: 1h\n"
    )
    assert _problems(path) == [
        f"{path}:5:7: variants.cache.0: the parameters of 'caching' must be a mapping "
        "(key: value), got '1h'"
    ]


def test_every_problem_of_a_file_at_once_in_file_order(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "name: s\n"
        "cassettes: [EXAMPLES/*.yaml]\n"
        "variants:\n"
        "  typo: [cachng]\n"
        "  two:\n"
        "    - {caching: {}, truncation: {}}\n"
        "  bad: [{caching: {ttl: 2h, rolling: x}}]\n"
        "budgets:\n"
        '  "*": {max_regression_pct: -5}\n'
        "  two: {max_cost_usd: lots, max_tokens: 5}\n",
    )
    lines = _problems(path)
    assert lines[0] == f"{path}: 6 problems"
    body = [line.strip() for line in lines[1:]]
    assert body[0].startswith(
        f"{path}:4:10: variants.typo.0: 'cachng' is not a strategy. Did you mean 'caching'?"
    )
    assert (
        body[1]
        == f"{path}:6:7: variants.two.0: one strategy per list item, got 2: caching, truncation"
    )
    assert body[2].startswith(
        f"{path}:7:9: variants.bad.0: invalid parameters for strategy 'caching': "
        "ttl='2h': expected one of '5m' or '1h'; rolling='x': expected a whole number"
    )
    assert body[3] == f"{path}:9:9: budgets.*.max_regression_pct: must be 0 or more, got -5"
    assert body[4] == f"{path}:10:9: budgets.two.max_cost_usd: expected a number, got 'lots'"
    assert body[5].startswith(
        f"{path}:10:29: budgets.two.max_tokens: unknown key 'max_tokens'; did you mean"
    )


def test_yaml_error_gives_the_reason(tmp_path: Path) -> None:
    # was: "not valid YAML (line 6)" without the reason
    path = _write(
        tmp_path,
        "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants:\n  cache:\n    - caching\n   - truncation\n",
    )
    (line,) = _problems(path)
    assert line.startswith(f"{path}:6:4: not valid YAML: expected <block end>")
    assert "check the indentation" in line


def test_cli_prints_one_sentence_per_problem_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: s\ncassetes: [EXAMPLES/*.yaml]\nvariants: {a: [caching]}\n")
    result = CliRunner().invoke(cli, ["compare", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {path}:2:1: cassetes: unknown key 'cassetes'; did you mean 'cassettes' "
        "(required)?\n"
    )
    assert "Traceback" not in result.output


def test_a_scenario_without_variants_says_so_once(tmp_path: Path) -> None:
    """Its budgets are not each said to name no variant of an empty list ('variants:  ('*'
    for all)'): the missing variants are the problem."""
    path = _write(
        tmp_path, "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants: {}\nbudgets: {x: {}}\n"
    )
    assert _problems(path) == [f"{path}:3:1: variants: must not be empty"]


def test_pattern_matching_no_file_and_budget_of_no_variant(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "name: s\ncassettes: [nowhere/*.yaml]\nvariants: {a: [caching]}\nbudgets: {b: {}}\n",
    )
    lines = [line.strip() for line in _problems(path)]
    assert lines[1] == (
        f"{path}:2:13: cassettes.0: 'nowhere/*.yaml' matches no file (relative to {tmp_path})"
    )
    assert lines[2] == f"{path}:4:11: budgets.b: no variant named 'b'; variants: a ('*' for all)"


def test_percentages_with_or_without_percent_sign(tmp_path: Path) -> None:
    for value in ("5", '"5%"', "2.5 %"):
        path = _write(
            tmp_path,
            "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants: {a: [caching]}\n"
            f'budgets: {{"*": {{max_regression_pct: {value}}}}}\n',
        )
        budget = load_scenario(path).scenario.budgets["*"]
        assert budget.max_regression_pct in (5.0, 2.5)
    path = _write(
        tmp_path,
        "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants: {a: [caching]}\n"
        'budgets: {"*": {max_regression_pct: "-5%"}}\n',
    )
    assert _problems(path)[0].endswith("budgets.*.max_regression_pct: must be 0 or more, got -5.0")


def test_a_variant_in_the_strategy_syntax(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "name: s\ncassettes: [EXAMPLES/*.yaml]\n"
        "variants:\n  both: 'truncation & caching:ttl=1h'\n  listed: [truncation, 'caching:ttl=1h']\n",
    )
    variants = {v.name: v for v in load_scenario(path).variants}
    assert variants["both"].steps == variants["listed"].steps
    assert variants["both"].describe() == "truncation & caching:ttl=1h"


# --- the schema shipped for editors -----------------------------------------------------------


def _shipped() -> dict[str, object]:
    text = resources.files("costsim").joinpath("schemas/scenario.schema.json").read_text()
    schema: dict[str, object] = json.loads(text)
    return schema


def test_shipped_schema_is_the_generated_one() -> None:
    generated = json.dumps(scenario_schema(), indent=2) + "\n"
    target = ROOT / "src" / "costsim" / "schemas" / "scenario.schema.json"
    if os.environ.get("COSTSIM_UPDATE_GOLDEN"):
        target.write_text(generated)
    assert json.dumps(_shipped(), indent=2) + "\n" == generated, (
        "scenario.schema.json is stale: python -m costsim.scenario.schema > " + str(target)
    )


class _Strings(yaml.SafeLoader):
    """YAML as an editor's schema validator sees it: dates are strings."""


_Strings.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


@pytest.mark.parametrize(
    "path",
    [
        *sorted((ROOT / "scenarios").glob("*.yaml")),
        ROOT / "tests" / "data" / "examples_scenario.yaml",
    ],
    ids=lambda p: p.name,
)
def test_bundled_scenarios_validate_against_the_schema(path: Path) -> None:
    jsonschema.validate(yaml.load(path.read_text(), Loader=_Strings), _shipped())


def test_schema_refuses_what_the_loader_refuses() -> None:
    validator = jsonschema.Draft202012Validator(_shipped())
    bad = {"name": "s", "cassetes": ["x"], "variants": {"a": [{"caching": "1h"}]}}
    messages = [error.message for error in validator.iter_errors(bad)]
    assert any("'cassetes' was unexpected" in m for m in messages)
    assert any("'cassettes' is a required property" in m for m in messages)
    assert len(messages) == 3


def test_a_cassette_named_with_brackets_is_that_file(tmp_path: Path) -> None:
    """pytest-recording names parametrised cassettes test_x[param].yaml: listed as written,
    such a file is read (as a glob, [param] would be a character class matching nothing)."""
    recorded = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    (tmp_path / "test_agent[claude-sonnet-4-5].yaml").write_text(recorded)
    (tmp_path / "test_agent[claude-haiku-4-5].yaml").write_text(recorded)
    listed = tmp_path / "listed.yaml"
    listed.write_text(
        "name: s\ncassettes: ['test_agent[claude-sonnet-4-5].yaml']\nvariants: {a: [caching]}\n"
    )
    data = json.loads(CliRunner().invoke(cli, ["compare", str(listed), "--format", "json"]).stdout)
    assert data["scenarios"][0]["baseline"]["llm_calls"] == 3
    globbed = tmp_path / "globbed.yaml"
    globbed.write_text("name: s\ncassettes: ['test_agent*.yaml']\nvariants: {a: [caching]}\n")
    data = json.loads(CliRunner().invoke(cli, ["compare", str(globbed), "--format", "json"]).stdout)
    assert data["scenarios"][0]["baseline"]["llm_calls"] == 6


@pytest.mark.parametrize("day", ["2025-13-45", "2025-02-30"])
def test_an_impossible_unquoted_date_is_a_problem_at_its_line(tmp_path: Path, day: str) -> None:
    """YAML reads an unquoted date itself; an impossible one used to be a traceback."""
    text = f"name: s\ncassettes: [EXAMPLES/*.yaml]\npricing: {{as_of: {day}}}\n"
    path = _write(tmp_path, text + "variants: {a: [caching]}\n")
    assert _problems(path) == [
        f"{path}:3:11: pricing.as_of: expected a date (YYYY-MM-DD), got '{day}'"
    ]
    fine = _write(tmp_path, text.replace(day, "2025-02-03") + "variants: {a: [caching]}\n")
    assert str(load_scenario(fine).scenario.pricing.as_of) == "2025-02-03"


def test_a_value_yaml_cannot_build_is_one_sentence(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants: !!int 12x\n")
    assert _problems(path) == [
        f"{path}: a value cannot be read (invalid literal for int() with base 10: '12x')"
    ]


def test_a_budget_of_no_variant_is_said_with_the_files_other_problems(tmp_path: Path) -> None:
    # was: said only once the other problems were mended
    path = _write(
        tmp_path,
        "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants: {a: [caching]}\nbudgets: {b: {}}\n"
        "colour: blue\n",
    )
    lines = [line.strip() for line in _problems(path)]
    assert lines[0] == f"{path}: 2 problems"
    assert lines[1] == f"{path}:4:11: budgets.b: no variant named 'b'; variants: a ('*' for all)"
    assert lines[2].startswith(f"{path}:5:1: colour: unknown key 'colour'")


def test_a_scenario_saved_as_utf16_reads_and_its_errors_keep_their_lines(tmp_path: Path) -> None:
    text = f"name: s\ncassettes: [{EXAMPLES}/*.yaml]\nvariants: {{a: [caching]}}\n"
    path = tmp_path / "s.yaml"
    path.write_bytes(text.encode("utf-16"))  # with its byte order mark, as Windows tools write
    assert list(load_scenario(path).scenario.variants) == ["a"]
    files = scenario_files(path)  # what a recalled comparison is keyed by
    assert files is not None and files.cassettes.files
    path.write_bytes(text.encode("utf-32-le"))  # no mark: told by its null bytes
    assert list(load_scenario(path).scenario.variants) == ["a"]
    assert scenario_files(path) is not None
    path.write_bytes((text + "colour: blue\n").encode("utf-16"))
    assert _problems(path)[0].startswith(f"{path}:4:1: colour: unknown key 'colour'")


def test_every_step_and_pattern_problem_comes_out_with_the_others(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "name: s\n"
        "cassettes: [nowhere/*.yaml]\n"
        "variants:\n"
        '  a: "truncation:max_char=100 & caching:ttl=2h"\n'
        '  b: [{truncation: {max_chars: "100", head: 80}}]\n'
        '  c: "routing:tiers.lite=claude-haiku-4-5"\n'
        "colour: red\n",
    )
    lines = [line.strip() for line in _problems(path)]
    assert lines[0] == f"{path}: 5 problems"
    assert lines[1].startswith(f"{path}:2:13: cassettes.0: 'nowhere/*.yaml' matches no file")
    assert "max_char='100': unknown parameter" in lines[2]
    assert "strategy 'caching:ttl=2h'" in lines[2] and "ttl='2h'" in lines[2]  # the second step
    # a rule over several parameters, said as the rule; a mapping's key, as a key
    assert "'truncation': head (80) + tail (25) must be below max_chars (100)" in lines[3]
    assert "tiers key 'lite': expected one of 'light', 'standard' or 'heavy'" in lines[4]
    assert "(parameters)=" not in " ".join(lines) and "[key]" not in " ".join(lines)
    assert lines[5].startswith(f"{path}:7:1: colour: unknown key 'colour'")


@pytest.mark.parametrize(
    "data", [b"\x00\x01binary garbage", b"name: x\nvariants:\n  c: [caching]\n\x01\n"]
)
def test_a_control_character_is_one_sentence_exit_2(tmp_path: Path, data: bytes) -> None:
    """A binary file, or a scenario holding a control character YAML refuses, among the
    scenarios of a folder: one sentence with its line and column, exit 2, no traceback."""
    (tmp_path / "bad.yaml").write_bytes(data)
    result = CliRunner().invoke(cli, ["compare", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    line = "4:1" if data.startswith(b"name") else "1:1"
    assert f"bad.yaml:{line}: not valid YAML: the control character U+0001" in result.output
    assert "Traceback" not in result.output


def test_a_scenario_beside_its_cassettes_globs_them_not_itself(tmp_path: Path) -> None:
    """``cassettes: ['*.yaml']`` beside the scenario matches the scenario too: left out, as
    any other scenario there; ``compare FOLDER`` takes the scenario, not the cassettes; and
    ``report FOLDER`` leaves the scenario out, whatever its encoding."""
    import shutil

    for name in ("anthropic_support_agent.yaml", "openai_chat_streaming.yaml"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    text = "name: beside\ncassettes: ['*.yaml']\nvariants:\n  cache: [caching]\n"
    (tmp_path / "s.yaml").write_text(text)
    (tmp_path / "t.yaml").write_bytes(b"\xff\xfe" + text.replace("beside", "t").encode("utf-16-le"))
    for target in (tmp_path / "s.yaml", tmp_path):
        result = CliRunner().invoke(cli, ["compare", str(target), "--no-cache", "--format", "json"])
        assert result.exit_code == 0, result.output
        runs = json.loads(result.stdout)["scenarios"]
        assert {run["baseline"]["llm_calls"] for run in runs} == {4}  # 3 + 1: no scenario
    report = CliRunner().invoke(cli, ["report", str(tmp_path), "--no-cache"])
    assert report.exit_code == 0, report.output
    assert "left out 2 costsim scenario file(s)" in report.stderr


def test_a_control_character_after_cr_line_ends_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cr.yaml"
    path.write_bytes(b"name: x\rvariants:\r  c: [caching]\r\x01\r")
    result = CliRunner().invoke(cli, ["compare", str(path)])
    assert result.exit_code == 2 and "cr.yaml:4:1: not valid YAML" in result.output


def test_compare_of_a_folder_of_cassettes_says_what_reads_them() -> None:
    result = CliRunner().invoke(cli, ["compare", str(EXAMPLES)])
    assert result.exit_code == 2
    assert "only vcrpy cassettes (3): costsim report and simulate read cassettes" in result.output


def test_a_routing_agent_pattern_that_is_not_a_regex(tmp_path: Path) -> None:
    """A trial's unterminated group in ``agent_patterns`` ended in a traceback and exit 1
    (the code of a failed gate); it is one sentence at its line, as ``agents.*.match`` is."""
    path = _write(
        tmp_path,
        "name: s\ncassettes: [EXAMPLES/*.yaml]\nvariants:\n  route:\n"
        "    - routing: {agent_patterns: {code: '(x'}, agent_tiers: {code: light}}\n",
    )
    (problem,) = _problems(path)
    assert problem.startswith(f"{path}:5:")
    assert "agent_patterns.code: '(x' is not a regular expression" in problem
    result = CliRunner().invoke(cli, ["compare", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
