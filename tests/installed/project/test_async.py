"""An async streaming client under pytest-asyncio (skipped where it is not installed)."""

from pathlib import Path

import anthropic
import pytest
import vcr

pytest.importorskip("pytest_asyncio")

CASSETTES = Path(__file__).parent / "cassettes"


@pytest.mark.asyncio
async def test_async_stream() -> None:
    client = anthropic.AsyncAnthropic(api_key="test-key")
    with vcr.use_cassette(str(CASSETTES / "anthropic_stream.yaml"), record_mode="none"):
        stream = await client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": "Name three prime numbers."}],
            stream=True,
        )
        text = [
            event.delta.text
            async for event in stream
            if event.type == "content_block_delta" and event.delta.type == "text_delta"
        ]
    assert "".join(text) == "Two, three and five."
