"""pytest-recording's ``@pytest.mark.vcr`` (skipped where pytest-recording is not installed)."""

from pathlib import Path

import anthropic
import pytest

pytest.importorskip("pytest_recording")


@pytest.fixture
def vcr_cassette_dir() -> str:
    return str(Path(__file__).parent / "cassettes")


@pytest.fixture
def default_cassette_name() -> str:
    return "anthropic_messages"


@pytest.mark.vcr
def test_marked() -> None:
    client = anthropic.Anthropic(api_key="test-key")
    message = client.messages.create(
        model="claude-haiku-4-5",
        max_tokens=64,
        messages=[{"role": "user", "content": "Name one prime number."}],
    )
    assert message.usage.output_tokens == 5
