"""A key written twice in one YAML mapping: YAML keeps the last and loses the first in
silence (a cassette's interactions, a scenario's variants). costsim refuses both, at the line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import EXAMPLES


def test_a_cassette_with_a_key_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    path = tmp_path / "twice.yaml"
    path.write_text(text.replace("version: 1", "interactions: []\nversion: 1"))
    result = CliRunner().invoke(cli, ["report", str(path), "--no-cache"])
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    line = text.count("\n")  # the second interactions key: the line before the last (version)
    assert f"line {line}: the key 'interactions' is written twice in one mapping" in said
    # in lenient mode: skipped with a warning, never an empty total in silence
    other = EXAMPLES / "openai_chat_streaming.yaml"
    lenient = CliRunner().invoke(cli, ["report", str(path), str(other), "--no-cache", "--lenient"])
    assert lenient.exit_code == 0 and f"warning: skipped {path}" in lenient.stderr
    # a scalar written twice too (a status code: the call would flip to errored)
    status = tmp_path / "status.yaml"
    status.write_text(text.replace("      code: 200\n", "      code: 500\n      code: 200\n", 1))
    result = CliRunner().invoke(cli, ["report", str(status), "--no-cache"])
    assert result.exit_code == 2 and "the key 'code' is written twice" in result.stderr


def test_a_scenario_with_a_key_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: s\ncassettes: ['{EXAMPLES}/*.yaml']\n"
        "variants:\n  a: [caching]\nvariants:\n  b: [truncation]\n"
    )
    result = CliRunner().invoke(cli, ["compare", str(scenario), "--no-cache"])
    assert result.exit_code == 2
    assert f"{scenario}:5:1: not valid YAML: the key 'variants' is written twice" in (
        " ".join(result.stderr.split())
    )


def test_a_cassette_read_by_the_full_loader_is_checked_too(tmp_path: Path) -> None:
    """Anchors (PyYAML writes them for objects a cassette shares) send a file to the full
    safe loader: a key written twice is refused there as well, at the second key's line."""
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    text = text.replace("      code: 200\n", "      code: 500\n      code: 200\n", 1)
    text = text.replace("interactions:\n", "shared: &anchor 1\nagain: *anchor\ninteractions:\n", 1)
    path = tmp_path / "anchored.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["report", str(path), "--no-cache"])
    assert result.exit_code == 2
    second = text.splitlines().index("      code: 200") + 1
    said = " ".join(result.stderr.split())
    assert f"(line {second}): unreadable YAML: the key 'code' is written twice" in said


def test_merge_keys_and_keys_of_other_types_are_not_duplicates(tmp_path: Path) -> None:
    """``<<`` brings keys a mapping may override, and ``1`` and ``'1'`` are two keys."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: s\ncassettes: ['{EXAMPLES}/*.yaml']\n"
        "base: &base {ttl: 5m, policy: static}\n"
        "longer: &longer {<<: *base, ttl: 1h}\n"
        "odd: {1: a, '1': b}\n"
        "variants:\n  a: [{caching: {<<: *longer}}]\n  b: [{caching: {<<: *base, ttl: 1h}}]\n"
    )
    result = CliRunner().invoke(cli, ["compare", str(scenario), "--no-cache"])
    assert "written twice" not in result.output
