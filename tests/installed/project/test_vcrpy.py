"""Plain vcrpy: a cassette replayed around a call of the anthropic SDK, JSON and streamed."""

from pathlib import Path

import anthropic
import vcr

CASSETTES = Path(__file__).parent / "cassettes"


def test_message() -> None:
    client = anthropic.Anthropic(api_key="test-key")
    with vcr.use_cassette(str(CASSETTES / "anthropic_messages.yaml"), record_mode="none"):
        message = client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": "Name one prime number."}],
        )
    assert message.content[0].text == "7"


def test_stream() -> None:
    client = anthropic.Anthropic(api_key="test-key")
    with vcr.use_cassette(str(CASSETTES / "anthropic_stream.yaml"), record_mode="none"):
        stream = client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": "Name three prime numbers."}],
            stream=True,
        )
        kinds = [event.type for event in stream]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
