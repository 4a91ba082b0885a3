"""The openai SDK's Responses API, streamed (skipped where the openai SDK is not installed)."""

from pathlib import Path

import pytest
import vcr

openai = pytest.importorskip("openai")

CASSETTES = Path(__file__).parent / "cassettes"


def test_responses_stream() -> None:
    client = openai.OpenAI(api_key="test-key")
    with vcr.use_cassette(str(CASSETTES / "openai_responses_stream.yaml"), record_mode="none"):
        stream = client.responses.create(
            model="gpt-4.1-mini", input="Name a prime above ten.", stream=True
        )
        kinds = [event.type for event in stream]
    assert kinds[-1] == "response.completed"
