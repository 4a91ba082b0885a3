"""A request whose JSON escapes a lone surrogate (``\\ud800``: valid JSON, not valid UTF-8) is
read, metered and cached like any other: the cache simulator's digests used to raise
UnicodeEncodeError with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import EXAMPLES


def test_a_lone_surrogate_in_a_request_is_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    assert "You are a support agent" in text
    path = tmp_path / "surrogate.yaml"
    path.write_text(text.replace("You are a support agent", "You are a \\ud800 support agent"))
    runner = CliRunner()
    for args in (["simulate", str(path), "-s", "caching"], ["advise", "caching", str(path)]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
